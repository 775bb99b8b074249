#!/bin/sh
# Builds, on a machine without a GPU, everything the CUDA driver check runs
# (run.sh, on a machine with one): fat binaries written by our `fatbinary`
# and pruned by our `nvprune`, NVIDIA's own for control, CUDA programs clang
# 22 compiled with our `fatbinary` (objects pruned in place by our `nvprune`)
# and linked with NVIDIA's static CUDA runtime (one through the new offload
# driver: nvlink, then our fatbinary at link time), and driver_check.
#
# usage: NVIDIA_CUDA=DIR [NVIDIA_CUDA12=DIR] prepare.sh OUTDIR
#   NVIDIA_CUDA: a CUDA 13 tree from the wheels (bin/ptxas, bin/fatbinary,
#   lib/libcudart_static.a): the nvidia-cuda-nvcc and nvidia-cuda-runtime
#   wheels unpacked together. NVIDIA_CUDA12 (optional): ptxas 12.9 (the
#   nvidia-cuda-nvcc-cu12 wheel's cuda_nvcc), for cubins an older driver
#   loads. CLANGOFFLOAD: our binary (default target/release/clangoffload).
set -eu
out=${1:?usage: prepare.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
cu=${NVIDIA_CUDA:?set NVIDIA_CUDA}
ours=$(realpath "${CLANGOFFLOAD:-$here/../../target/release/clangoffload}")
llvm=/usr/lib/llvm-22/bin
mkdir -p "$out/work" "$out/ours/bin" "$out/ours/include"
out=$(realpath "$out")
w=$out/work
CL="$llvm/clang -x cuda -nocudainc -nocudalib -Wno-unknown-cuda-version"

# A CUDA tree whose fatbinary is ours (clang runs it by that path; the
# new driver's clang-nvlink-wrapper finds nvlink on PATH).
ln -sf "$cu/bin/ptxas" "$out/ours/bin/ptxas"
ln -sf "$cu/bin/nvlink" "$out/ours/bin/nvlink"
ln -sf "$ours" "$out/ours/bin/fatbinary"
echo '#define CUDA_VERSION 13050' > "$out/ours/include/cuda.h"

# PTX from clang, cubins from NVIDIA's ptxas.
for sm in 80 90 100; do
  $CL --cuda-path="$out/ours" --cuda-gpu-arch=sm_$sm --cuda-device-only -S \
    "$here/kernel.cu" -o "$w/k$sm.ptx"
  "$cu/bin/ptxas" -arch=sm_$sm "$w/k$sm.ptx" -o "$w/k$sm.cubin"
done
# PTX ISA 7.8 (CUDA 12.0) for sm_90: JIT-compiled by any CUDA 12 or 13 driver.
sed 's/^\.version .*/.version 7.8/' "$w/k90.ptx" > "$w/k90-isa78.ptx"

fb() { # fb NAME TOOL ARGS...: a fat binary written by TOOL
  name=$1 tool=$2
  shift 2
  $tool -64 --create "$out/$name" "$@"
}
img() { echo "--image3=kind=$1,sm=$2,file=$w/$3"; }
F="$ours fatbinary"
fb f-sm90.fatbin "$F" $(img elf 90 k90.cubin)
fb f-sm90-zstd.fatbin "$F" --compress-all $(img elf 90 k90.cubin)
fb f-sm90-lz4.fatbin "$F" --compress-all --compress-mode=speed $(img elf 90 k90.cubin)
fb f-ptx90.fatbin "$F" $(img ptx 90 k90.ptx)
fb f-ptx90-lz4.fatbin "$F" --compress-mode=speed $(img ptx 90 k90.ptx)
fb f-ptx90-stored.fatbin "$F" --compress=false $(img ptx 90 k90.ptx)
fb f-ptx90-isa78.fatbin "$F" $(img ptx 90 k90-isa78.ptx)
multi="$(img elf 80 k80.cubin) $(img elf 90 k90.cubin) $(img elf 100 k100.cubin) $(img ptx 80 k80.ptx)"
fb f-multi-zstd.fatbin "$F" --compress-all $multi
fb f-multi-lz4.fatbin "$F" --compress-all --compress-mode=speed $multi
fb n-multi-zstd.fatbin "$cu/bin/fatbinary" --compress-all $multi
cmp "$out/f-multi-zstd.fatbin" "$out/n-multi-zstd.fatbin"
if [ -n "${NVIDIA_CUDA12:-}" ]; then
  "$NVIDIA_CUDA12/bin/ptxas" -arch=sm_90 "$w/k90-isa78.ptx" -o "$w/k90-cu12.cubin"
  fb f-sm90-cu12.fatbin "$F" --compress-all $(img elf 90 k90-cu12.cubin)
fi
P="$ours nvprune"
$P -arch sm_90 -o "$out/p-sm90.fatbin" "$out/f-multi-zstd.fatbin"
$P -arch sm_90 -o "$out/p-sm90-lz4.fatbin" "$out/f-multi-lz4.fatbin"
$P -arch compute_80 -o "$out/p-ptx80.fatbin" "$out/f-multi-zstd.fatbin"
$P -gencode arch=compute_80,code=sm_100 -o "$out/p-sm100.fatbin" "$out/f-multi-zstd.fatbin"
$P -arch sm_80 -o "$out/p-sm80.fatbin" "$out/f-multi-lz4.fatbin"

# CUDA programs: clang's pipeline running our fatbinary; objects pruned in
# place by our nvprune; NVIDIA's static runtime.
$CL --cuda-path="$out/ours" --offload-arch=sm_80 --offload-arch=sm_90 \
  --cuda-include-ptx=sm_80 -Xcuda-fatbinary --compress-all -O2 \
  -c "$here/app.cu" -o "$w/app.o"
link() { $llvm/clang++ -fuse-ld=lld "$1" -L"$cu/lib" -lcudart_static -lpthread -ldl -lrt -o "$2"; }
link "$w/app.o" "$out/app-multi"
for keep in sm_90 compute_80 sm_80; do
  $P -arch $keep -o "$w/app-$keep.o" "$w/app.o"
  link "$w/app-$keep.o" "$out/app-pruned-$keep"
done
# The new offload driver with relocatable device code: clang-linker-wrapper
# links the device code with nvlink and runs our fatbinary at link time.
$CL --cuda-path="$out/ours" --offload-new-driver -fgpu-rdc --offload-arch=sm_80 \
  --offload-arch=sm_90 -O2 -c "$here/app.cu" -o "$w/app-rdc.o"
PATH="$out/ours/bin:$PATH" $llvm/clang++ -fuse-ld=lld --offload-new-driver -fgpu-rdc \
  --cuda-path="$out/ours" --offload-arch=sm_80 --offload-arch=sm_90 "$w/app-rdc.o" \
  -L"$cu/lib" -lcudart_static -lpthread -ldl -lrt -o "$out/app-newdriver"
cc -O2 -o "$out/driver_check" "$here/driver_check.c" -ldl
cp "$here/run.sh" "$out/"
rm -rf "$w" "$out/ours"
ls -l "$out"
