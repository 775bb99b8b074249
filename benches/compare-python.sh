#!/usr/bin/env bash
# The Python package against the subprocess recipe (clang-offload-bundler
# -list / -unbundle per container and target) and against reading the file:
# builds the package in release into a venv under the target directory, then
# runs compare-python.py (its docstring and benches/README.md say what is
# measured). Environment: see compare-python.py; PYTHON [python3].
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/bench-pyenv
[[ -x /usr/lib/llvm-22/bin/clang-offload-bundler || -n ${LLVM_BIN:-} ]] ||
  { echo "error: LLVM 22's clang-offload-bundler not found (set LLVM_BIN)" >&2; exit 1; }
if [[ ! -x $venv/bin/maturin ]]; then
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install -q 'maturin==1.16.*'
fi
echo "== building the package (release)" >&2
(cd "$root" && VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH maturin develop --release -q) >&2
exec "$venv/bin/python" "$root/benches/compare-python.py"
