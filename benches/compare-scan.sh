#!/usr/bin/env bash
# Times `clangoffload scan FILE` (every container anywhere in a file of any
# format) against reading the file: `dd if=FILE of=/dev/null bs=1M`, warm
# page cache. LLVM has no such tool; reading the file is the limit.
#
#   benches/compare-scan.sh
#   SIZE_MB=1024 benches/compare-scan.sh
#
# The file is SIZE_MB of random bytes with 28 containers from the fixtures
# planted at scattered (some odd) offsets: an OffloadBinary, a bundle, a
# compressed bundle and a CUDA fat binary (with LZ4 entries), 7 of each.
# Before timing, the script checks that `scan` reports exactly the planted
# containers.
#
# Environment: SIZE_MB [256]; the rest as in benches/common.sh (RUNS,
# WARMUP, OURS, TIMER, WORKDIR, KEEP, NO_INSTALL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SIZE_MB=${SIZE_MB:-256}
need_counts SIZE_MB
need_tools "$LLVM_BIN/clang-offload-bundler"
bench_start scan 0
fixtures="$bench_root/tests/fixtures"
planted=("$fixtures/offload/single.offbin" "$fixtures/llvm22/hip-4096.bundle"
         "$fixtures/compressed/llvm22/hip.v3.ccob" "$fixtures/cuda/raw-lz4.fatbin")
kinds=("offload binary" bundle "compressed bundle" "CUDA fat binary")
count=28

size=$((SIZE_MB * 1024 * 1024))
file="$work/image.bin"
echo "== writing $SIZE_MB MiB with $count planted containers to $file" >&2
head -c "$size" /dev/urandom >"$file"
stride=$((size / count))
: >"$work/expected.txt"
for ((i = 0; i < count; i++)); do
    src=${planted[$((i % 4))]}
    at=$((i * stride + (i * 7919 * 4099) % (stride - 65536) + (i & 1)))
    dd "if=$src" "of=$file" bs=64K seek="$at" oflag=seek_bytes conv=notrunc status=none
    printf '0x%x\t%s\t%s bytes\n' "$at" "${kinds[$((i % 4))]}" \
        "$(stat -c %s "$src" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" >>"$work/expected.txt"
done
"$ours_bin" scan "$file" >"$work/found.txt"
# Random bytes may hold a magic by chance; only containers that parse count.
same_bytes <(grep -v rejected "$work/found.txt") "$work/expected.txt" "scan's containers against the planted ones"
echo "   scan reports exactly the $count planted containers" >&2

cat "$file" >/dev/null
timed ours.scan "$ours_bin" scan "$file"
timed dd.read dd "if=$file" of=/dev/null bs=1M status=none

report_head "clangoffload scan of a $SIZE_MB MiB file against reading it"
compare_table ours dd
compare_row "scan FILE vs dd FILE of=/dev/null bs=1M" ours.scan dd.read
echo
rate_table
rate_row "clangoffload scan FILE" ours.scan "$size"
rate_row "dd if=FILE of=/dev/null bs=1M" dd.read "$size"
