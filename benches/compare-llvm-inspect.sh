#!/usr/bin/env bash
# Times `clangoffload inspect FILE --objdump` against `llvm-objdump
# --offloading FILE` on a large shared library holding many containers,
# after checking that both print the same OffloadBinary lines.
#
#   benches/compare-llvm-inspect.sh
#   PACKAGES=256 IMAGE_KIB=1024 RUNS=5 benches/compare-llvm-inspect.sh
#
# The library is linked by clang + lld from one assembly file that
# `.incbin`s:
#   * PACKAGES OffloadBinary packages into `.llvm.offloading` (type
#     SHT_LLVM_OFFLOADING). Each package is what `llvm-offload-binary -o`
#     writes for IMAGES images of about IMAGE_KIB KiB; VARIANTS distinct
#     packages (different kinds, producers, triples, arches) are used in
#     turn. clang's `-fembed-offload-object` cannot be used here: it marks the
#     section SHF_EXCLUDE, so the linker drops it from a shared library.
#   * BUNDLES copies of `tests/fixtures/offload/hip.o`'s `.hip_fatbin` (an
#     uncompressed HIP bundle with 3 entries) into `.hip_fatbin`, 4096-aligned,
#     as lld lays out several HIP objects. llvm-objdump extracts every entry of
#     these to a file (it runs in a scratch directory); `--objdump` prints
#     only the OffloadBinaries, so its "Extracting offload bundle" lines are
#     left out of the comparison and counted instead.
# The default is 128 packages x 4 images x 512 KiB (256 MiB of images, 512
# OffloadBinaries) plus 16 bundles.
#
# Environment:
#   PACKAGES   packages in .llvm.offloading                   [128]
#   IMAGES     images per package (1-4)                       [4]
#   IMAGE_KIB  size of each image, KiB (the images differ by
#              a few bytes so no size is a round number)      [512]
#   VARIANTS   distinct packages, used in turn                [8]
#   BUNDLES    HIP bundles in .hip_fatbin                     [16]
#   and the rest as in benches/common.sh (RUNS, WARMUP, LLVM_BIN: clang,
#   lld, llvm-objdump, llvm-objcopy and llvm-offload-binary; OURS, TIMER,
#   WORKDIR, DISK, KEEP, NO_INSTALL). llvm-objdump writes the bundle entries
#   it extracts next to the library, so the library is among the outputs.
set -euo pipefail

PACKAGES=${PACKAGES:-128}
IMAGES=${IMAGES:-4}
IMAGE_KIB=${IMAGE_KIB:-512}
VARIANTS=${VARIANTS:-8}
BUNDLES=${BUNDLES:-16}
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fixtures="$bench_root/tests/fixtures/offload"

need_counts PACKAGES IMAGES IMAGE_KIB VARIANTS
[[ $BUNDLES =~ ^[0-9]+$ ]] || die "BUNDLES must be a non-negative integer"
((IMAGES <= 4)) || die "IMAGES must be at most 4"
for tool in clang ld.lld llvm-objdump llvm-objcopy llvm-offload-binary; do
    need_tools "$LLVM_BIN/$tool"
done
objdump="$LLVM_BIN/llvm-objdump"

bench_start inspect $((PACKAGES * IMAGES * IMAGE_KIB / 1024 + 64))
mkdir -p "$work/img" "$work/pkg" "$out/scratch"

# --- the library ------------------------------------------------------------
need_kb=$((PACKAGES * IMAGES * IMAGE_KIB * 2 + VARIANTS * IMAGES * IMAGE_KIB + 65536))
avail_kb=$(df -Pk "$work" | awk 'NR==2 {print $4}')
((avail_kb >= need_kb)) || die "need ~$((need_kb / 1024)) MiB free in $work"

echo "== making $VARIANTS packages of $IMAGES images of ~$IMAGE_KIB KiB" >&2
# One image per slot; the extension sets the image kind llvm-offload-binary
# records (elf, llvm ir, cubin, fatbinary).
exts=(o bc cubin fatbin)
for ((s = 0; s < IMAGES; s++)); do
    head -c $((IMAGE_KIB * 1024 - 8 * s - 5)) /dev/urandom >"$work/img/slot$s.${exts[$s]}"
done
# (producer, triple, arch) for each variant and slot, cycling.
amd=(gfx90a gfx942 "gfx908:sramecc+:xnack-" gfx1100 gfx906 "gfx90a:xnack+" gfx1030 gfx950)
nv=(sm_70 sm_80 sm_90 sm_75)
for ((v = 0; v < VARIANTS; v++)); do
    args=()
    for ((s = 0; s < IMAGES; s++)); do
        file="$work/img/slot$s.${exts[$s]}"
        case $(((v + s) % 3)) in
            0) spec="kind=openmp,triple=amdgcn-amd-amdhsa,arch=${amd[$(((v + s) % 8))]}" ;;
            1) spec="kind=hip,triple=amdgcn-amd-amdhsa,arch=${amd[$(((v * 3 + s) % 8))]}" ;;
            2) spec="kind=cuda,triple=nvptx64-nvidia-cuda,arch=${nv[$(((v + s) % 4))]}" ;;
        esac
        args+=("--image=file=$file,$spec")
    done
    "$LLVM_BIN/llvm-offload-binary" -o "$work/pkg/p$v.offbin" "${args[@]}"
done

"$LLVM_BIN/llvm-objcopy" --dump-section .hip_fatbin="$work/hip.bundle" "$fixtures/hip.o" "$work/hip.tmp.o"
rm -f "$work/hip.tmp.o"

echo "== linking libbig.so ($PACKAGES packages, $BUNDLES bundles)" >&2
{
    echo '.section .llvm.offloading,"",@llvm_offloading'
    for ((p = 0; p < PACKAGES; p++)); do
        echo '.p2align 3'
        echo ".incbin \"$work/pkg/p$((p % VARIANTS)).offbin\""
    done
    if ((BUNDLES > 0)); then
        echo '.section .hip_fatbin,"a",@progbits'
        for ((b = 0; b < BUNDLES; b++)); do
            echo '.p2align 12'
            echo ".incbin \"$work/hip.bundle\""
        done
    fi
    # A little code, so the library is not only containers.
    echo '.text'
    echo '.globl bench_entry'
    echo 'bench_entry: ret'
} >"$work/big.s"
"$LLVM_BIN/clang" -c "$work/big.s" -o "$work/big.o"
"$LLVM_BIN/clang" -fuse-ld=lld -shared -nostdlib "$work/big.o" -o "$out/scratch/libbig.so"
rm -f "$work/big.o" "$work/pkg"/*.offbin "$work/img"/*
file=libbig.so
size=$(stat -c %s "$out/scratch/$file")
binaries=$((PACKAGES * IMAGES))

# --- verify -----------------------------------------------------------------
# Both run in the scratch directory on the bare name: llvm-objdump writes
# each bundle entry to <name>.<bundle>.<entry ID> next to it, and both print
# the name in their header line.
cd "$out/scratch"
echo "== checking outputs" >&2
"$objdump" --offloading "$file" >"$work/llvm.txt"
"$ours_bin" inspect "$file" --objdump >"$work/ours.txt"
grep -v '^Extracting offload bundle: ' "$work/llvm.txt" >"$work/llvm-images.txt" || true
if ! cmp -s "$work/llvm-images.txt" "$work/ours.txt"; then
    echo "error: OffloadBinary lines differ (< llvm-objdump, > ours):" >&2
    diff "$work/llvm-images.txt" "$work/ours.txt" | head -20 >&2
    exit 1
fi
llvm_images=$(grep -c '^OFFLOADING IMAGE' "$work/llvm.txt" || true)
llvm_extracted=$(grep -c '^Extracting offload bundle: ' "$work/llvm.txt" || true)
[[ $llvm_images -eq $binaries ]] \
    || { echo "error: llvm-objdump printed $llvm_images images, expected $binaries" >&2; exit 1; }
[[ $llvm_extracted -eq $((BUNDLES * 3)) ]] \
    || { echo "error: llvm-objdump extracted $llvm_extracted bundle entries, expected $((BUNDLES * 3))" >&2; exit 1; }
"$ours_bin" inspect "$file" >"$work/ours-text.txt"
"$ours_bin" inspect "$file" --json >"$work/ours.json"
ours_bundles=$({ grep -o '"kind":"bundle"' "$work/ours.json" || true; } | wc -l)
ours_binaries=$({ grep -o '"kind":"offload_binary"' "$work/ours.json" || true; } | wc -l)
[[ $ours_bundles -eq $BUNDLES && $ours_binaries -eq $binaries ]] \
    || { echo "error: inspect --json found $ours_bundles bundles and $ours_binaries OffloadBinaries, expected $BUNDLES and $binaries" >&2; exit 1; }
rm -f "$file".*
echo "   same $binaries OffloadBinary images; llvm-objdump extracted $llvm_extracted bundle entries; inspect found $ours_bundles bundles" >&2

# --- time -------------------------------------------------------------------
cat "$file" >/dev/null

timed llvm.objdump "$objdump" --offloading "$file"
rm -f "$file".*
timed ours.objdump "$ours_bin" inspect "$file" --objdump
timed ours.text "$ours_bin" inspect "$file"
timed cat.file cat "$file"
rm -f "$file".*

# --- report -----------------------------------------------------------------
report_head "libbig.so: $size bytes ($(awk -v s="$size" 'BEGIN {printf "%.1f MB", s/1e6}')): $binaries OffloadBinaries ($PACKAGES packages x $IMAGES images of ~$IMAGE_KIB KiB) in .llvm.offloading, $BUNDLES bundles (3 entries each) in .hip_fatbin"
compare_table LLVM ours
compare_row "--offloading / inspect --objdump" llvm.objdump ours.objdump
compare_row "--offloading / inspect (text, all kinds)" llvm.objdump ours.text
echo
compare_table ours cat
compare_row "inspect --objdump vs cat FILE" ours.objdump cat.file
