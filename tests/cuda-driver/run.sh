#!/bin/sh
# The CUDA driver check, on a machine with an NVIDIA GPU (sm_90 here: H100
# or H200): every fat binary prepare.sh made is loaded with
# cuModuleLoadData and runs its kernel (or, pruned of every image this GPU
# can use, is refused with CUDA_ERROR_NO_BINARY_FOR_GPU); every CUDA program
# registers its fat binary through NVIDIA's runtime and launches from it
# (one built by clang's new offload driver, -fgpu-rdc, our fatbinary run
# by clang-linker-wrapper).
# usage: run.sh (in the directory prepare.sh filled). Exit 0: all as expected.
cd "$(dirname "$0")" || exit 2
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
set --
for f in f-*.fatbin n-*.fatbin p-sm90*.fatbin p-ptx80.fatbin; do set -- "$@" run "$f"; done
for f in p-sm80.fatbin p-sm100.fatbin; do set -- "$@" nobinary "$f"; done
./driver_check "$@"
status=$?
for app in app-multi:0 app-pruned-sm_90:0 app-pruned-compute_80:0 app-pruned-sm_80:3 \
  app-newdriver:0; do
  exe=${app%:*} want=${app#*:}
  got=$(timeout 60 "./$exe" 2>&1)
  rc=$?
  if [ "$rc" = "$want" ]; then mark="ok  "; else mark=FAIL; status=1; fi
  echo "$mark  $exe: exit $rc (expected $want): $got"
done
echo "run.sh: exit $status"
exit $status
