#!/usr/bin/env bash
# Times `-type=a -unbundle` of a large heterogeneous device archive: LLVM's
# clang-offload-bundler against clangoffload (through a `clang-offload-bundler`
# symlink), after checking that both write byte-identical per-target archives.
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
# Environment: MEMBERS [64], SLICE_KIB [1024], RUNS [5], LLVM_BIN
# [/usr/lib/llvm-22/bin], CLANGOFFLOAD_BENCH_SOURCE [libLLVM.so.22.1], KEEP=1.
set -euo pipefail

MEMBERS=${MEMBERS:-64}
SLICE_KIB=${SLICE_KIB:-1024}
RUNS=${RUNS:-5}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
llvm_tool="$LLVM_BIN/clang-offload-bundler"
[[ -x $llvm_tool && -x $LLVM_BIN/llvm-ar ]] || { echo "error: LLVM tools not found in $LLVM_BIN" >&2; exit 1; }
source_file=${CLANGOFFLOAD_BENCH_SOURCE:-}
for candidate in /usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 /usr/lib/llvm-22/lib/libLLVM.so.22.1; do
    [[ -z $source_file && -f $candidate ]] && source_file=$candidate
done
[[ -n $source_file ]] || { echo "error: set CLANGOFFLOAD_BENCH_SOURCE" >&2; exit 1; }

echo "== building clangoffload (release)" >&2
(cd "$root" && cargo build --release -p clangoffload-cli --quiet)
work=$(mktemp -d "${TMPDIR:-/tmp}/clangoffload-archive-bench.XXXXXX")
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/members"
ln -s "$root/target/release/clangoffload" "$work/bin/clang-offload-bundler"
ours_tool="$work/bin/clang-offload-bundler"

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
size=$(stat -c %s "$work/lib.a")

unbundle() { # tool outdir
    mkdir -p "$2"
    "$1" -unbundle -type=a -targets=hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ \
        -input="$work/lib.a" -output="$2/gfx906.a" -output="$2/gfx90a.a"
}
unbundle "$llvm_tool" "$work/llvm"
unbundle "$ours_tool" "$work/ours"
for out in gfx906.a gfx90a.a; do
    cmp -s "$work/llvm/$out" "$work/ours/$out" || { echo "error: $out differs from LLVM's" >&2; exit 1; }
done
echo "== outputs byte-identical to LLVM's" >&2

time_ms() { # command...: best of RUNS, in ms
    local best=0 t0 t1 ms
    for ((r = 0; r < RUNS; r++)); do
        t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
        ms=$(((t1 - t0) / 1000000))
        ((best == 0 || ms < best)) && best=$ms
    done
    echo "$best"
}
cat "$work/lib.a" >/dev/null
llvm_ms=$(time_ms unbundle "$llvm_tool" "$work/llvm")
ours_ms=$(time_ms unbundle "$ours_tool" "$work/ours")
cp_ms=$(time_ms cp "$work/lib.a" "$work/copy.a")
printf 'archive: %d members, %.1f MB; best of %d runs\n' "$MEMBERS" "$(echo "$size / 1000000" | bc -l)" "$RUNS"
printf '  llvm  -type=a -unbundle  %6d ms\n' "$llvm_ms"
printf '  ours  -type=a -unbundle  %6d ms   (%.2fx faster than LLVM)\n' "$ours_ms" "$(echo "$llvm_ms / $ours_ms" | bc -l)"
printf '  cp of the archive        %6d ms   (the outputs together are as large)\n' "$cp_ms"
