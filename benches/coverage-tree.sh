#!/usr/bin/env bash
# `clangoffload coverage` of a tree of real libraries against what a user
# runs today to learn the same: `llvm-readobj --offloading` and
# `cuobjdump -lelf -lptx` over every file (each file's device code listed by
# both, errors ignored). Wall time of both sides in one run, and our peak RSS
# (the issue's targets: >= 20x faster, <= 64 MiB).
#
#   benches/coverage-tree.sh
#
# The tree (assembled under WORK from downloads cached in REAL_CACHE, never
# committed): bitsandbytes 0.50.2's wheel unpacked (CUDA), nvidia-cublas
# 13.10 (CUDA, 551 MB libcublasLt), Debian's librocrand1 and librocsparse0
# (ROCm, uncompressed bundles), the wheels themselves (read in place), and
# rocm-kpack's split of rocSPARSE where /tmp/kpack-probe/out-sparse has it.
#
# Environment: OURS [target/release/clangoffload], LLVM_BIN
# [/usr/lib/llvm-22/bin], REAL_CACHE, WORK, DEVICES (--device list)
# [gfx906:sramecc+:xnack- gfx90a:sramecc+:xnack- gfx1100 sm_80 sm_90].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OURS=${OURS:-target/release/clangoffload}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
cache=${REAL_CACHE:-${TMPDIR:-/tmp}/clangoffload-real-cache}
work=${WORK:-$(mktemp -d)}
DEVICES=${DEVICES:-gfx906:sramecc+:xnack- gfx90a:sramecc+:xnack- gfx1100 sm_80 sm_90}
mkdir -p "$cache" "$work"
[[ -x $OURS ]] || cargo build -q --release -p clangoffload-cli
OURS=$(realpath "$OURS")
# shellcheck source=lib/downloads.sh
source benches/lib/downloads.sh
cuobjdump=$(find "$(wheel nvidia-cuda-cuobjdump==13.5.37)" -name cuobjdump -type f | head -1)
chmod +x "$cuobjdump"

tree=$work/tree
rm -rf "$tree" && mkdir -p "$tree"
for spec in bitsandbytes==0.50.2 nvidia-cublas==13.10.0.20; do
    dir=$(wheel "$spec")
    cp -a "$dir" "$tree/$(basename "$(dirname "$dir")")"
    cp "$(dirname "$dir")"/*.whl "$tree/"
done
for deb in librocrand1 librocsparse0; do
    cp -a "$(debian "$deb")" "$tree/$deb"
done
[[ -d /tmp/kpack-probe/out-sparse ]] && cp -a /tmp/kpack-probe/install-sparse "$tree/kpack-split" 2>/dev/null || true
bytes=$(du -sb "$tree" | cut -f1)
files=$(find "$tree" -type f | wc -l)
echo "tree: $files files, $((bytes / 1048576)) MiB"

args=()
for d in $DEVICES; do args+=(--device "$d"); done
sync
/usr/bin/time -f '%e %M' -o "$work/ours.time" "$OURS" coverage "$tree" "${args[@]}" --json >"$work/ours.json"
read -r ours_s ours_kib <"$work/ours.time"
start=$(date +%s.%N)
find "$tree" -type f -print0 | while IFS= read -r -d '' f; do
    "$LLVM_BIN/llvm-readobj" --offloading "$f" >/dev/null 2>&1 || true
    "$cuobjdump" -lelf -lptx "$f" >/dev/null 2>&1 || true
done
theirs_s=$(echo "$(date +%s.%N) - $start" | bc)
cells=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(len(r['files']), len(r['cells']))" "$work/ours.json")
echo "coverage: $ours_s s, $((ours_kib / 1024)) MiB peak; files with device code, cells: $cells"
echo "llvm-readobj --offloading + cuobjdump -lelf -lptx per file: $theirs_s s"
echo "ratio: $(echo "scale=1; $theirs_s / $ours_s" | bc)x"
