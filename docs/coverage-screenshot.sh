#!/usr/bin/env bash
# Makes docs/coverage.png: `clangoffload coverage --html` of a small tree of
# the fixtures (HIP libraries, CUDA objects, a wheel read in place), rendered
# by headless Chromium (`apt-get install -y chromium`), which must report no
# console message (the page has no script; an error would be one).
#
#   docs/coverage-screenshot.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OURS=${OURS:-target/release/clangoffload}
[[ -x $OURS ]] || cargo build -q --release -p clangoffload-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/site-packages
mkdir -p "$tree/hip" "$tree/cuda"
cp tests/fixtures/kpack/inputs/{libone,libtwoz,libskew,libxnack}.so "$tree/hip/"
cp tests/fixtures/cuda/{clang-multi-ptx,nvcc-a-sm80}.o "$tree/cuda/"
cp tests/fixtures/coverage/sample-0.1-py3-none-linux_x86_64.whl "$tree/"
"$OURS" coverage "$tree" --device gfx906:sramecc+:xnack- --device gfx90a:sramecc+:xnack- \
    --device gfx90a:xnack+ --device gfx942:sramecc+:xnack- --device gfx1100 \
    --device sm_75 --device sm_80 --device sm_90 --device sm_120 --html "$work/coverage.html" >/dev/null
chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
    --window-size=1100,760 --screenshot="$work/coverage.png" "file://$work/coverage.html" \
    2>"$work/chromium.log"
if grep -i 'CONSOLE' "$work/chromium.log"; then
    echo "the page logged to the console (above)" >&2
    exit 1
fi
cp "$work/coverage.png" docs/coverage.png
echo "docs/coverage.png written; no console message"
