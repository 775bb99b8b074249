#!/usr/bin/env bash
# Times `-type=a -unbundle` of a large heterogeneous device archive: LLVM's
# clang-offload-bundler against clangoffload (through a `clang-offload-bundler`
# symlink), after checking that both write byte-identical per-target archives;
# `cp` of the archive is the copy limit (the two outputs together are as
# large).
#
#   benches/compare-llvm-archive.sh
#   MEMBERS=128 SLICE_KIB=2048 RUNS=5 benches/compare-llvm-archive.sh
#
# The archive holds MEMBERS bundles as the HIP driver writes them (`-type=o
# -bundle-align=4096`, empty host, two device entries: gfx906 and
# gfx90a:xnack+), each device payload a SLICE_KIB slice of LLVM's shared
# library (real machine code). The device payloads are data to the archive
# writer, so neither tool writes a symbol index and the outputs must be equal.
#
# Environment: MEMBERS [64], SLICE_KIB [1024], CLANGOFFLOAD_BENCH_SOURCE
# [libLLVM.so.22.1]; the rest as in benches/common.sh (RUNS, WARMUP,
# LLVM_BIN, OURS, TIMER, WORKDIR, DISK, KEEP, NO_INSTALL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MEMBERS=${MEMBERS:-64}
SLICE_KIB=${SLICE_KIB:-1024}
need_counts MEMBERS SLICE_KIB
need_tools "$LLVM_BIN/clang-offload-bundler" "$LLVM_BIN/llvm-ar"
source_file=${CLANGOFFLOAD_BENCH_SOURCE:-}
for candidate in /usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 /usr/lib/llvm-22/lib/libLLVM.so.22.1; do
    [[ -z $source_file && -f $candidate ]] && source_file=$candidate
done
[[ -n $source_file ]] || die "set CLANGOFFLOAD_BENCH_SOURCE"
bench_start archive $((MEMBERS * SLICE_KIB * 2 * 3 / 1024))
mkdir -p "$work/members"

echo "== making $MEMBERS members with two ${SLICE_KIB} KiB device entries each" >&2
targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+
for ((i = 0; i < MEMBERS; i++)); do
    # A fixed head, so that no slice starts with bytes LLVM's archive writer
    # takes for an object file's magic (it then writes an empty index).
    { printf 'bench payload a%06d\n' "$i"; dd if="$source_file" bs=1024 skip=$(((i * 2 + 1) * SLICE_KIB)) count="$SLICE_KIB" status=none; } >"$work/a"
    { printf 'bench payload b%06d\n' "$i"; dd if="$source_file" bs=1024 skip=$(((i * 2 + 2) * SLICE_KIB)) count="$SLICE_KIB" status=none; } >"$work/b"
    "$llvm_tool" -type=o -bundle-align=4096 -targets=$targets -input=/dev/null \
        -input="$work/a" -input="$work/b" -output="$work/members/kernel$i.o"
done
(cd "$work/members" && "$LLVM_BIN/llvm-ar" cr ../lib.a kernel*.o)
rm -rf "$work/members" "$work/a" "$work/b"
size=$(stat -c %s "$work/lib.a")

unbundle_args() { # who
    printf '%s\n' -unbundle -type=a \
        -targets=hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ \
        "-input=$work/lib.a" "-output=$out/$1/gfx906.a" "-output=$out/$1/gfx90a.a"
}
mkdir -p "$out/llvm" "$out/ours" "$out/ref"
mapfile -t llvm_args < <(unbundle_args llvm)
mapfile -t ours_args < <(unbundle_args ours)
"$llvm_tool" "${llvm_args[@]}"
"$ours_tool" "${ours_args[@]}"
for f in gfx906.a gfx90a.a; do
    same_bytes "$out/llvm/$f" "$out/ours/$f" "-type=a -unbundle $f"
done
echo "== outputs byte-identical to LLVM's" >&2

cat "$work/lib.a" >/dev/null
timed llvm.unbundle "$llvm_tool" "${llvm_args[@]}"
timed ours.unbundle "$ours_tool" "${ours_args[@]}"
timed cp.archive cp "$work/lib.a" "$out/ref/copy.a"

report_head "Device archive -type=a -unbundle: $MEMBERS members, $(awk -v s="$size" 'BEGIN {printf "%.1f MB", s/1e6}'), two device targets"
compare_table LLVM ours
compare_row "-type=a -unbundle (2 targets)" llvm.unbundle ours.unbundle
echo
compare_table ours cp
compare_row "-type=a -unbundle vs cp of the archive" ours.unbundle cp.archive
