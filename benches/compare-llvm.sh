#!/usr/bin/env bash
# Times LLVM's clang-offload-bundler against clangoffload (invoked through a
# `clang-offload-bundler` symlink) on uncompressed bundles, after checking
# that both tools write byte-identical outputs; `cp` of the same bytes is the
# copy limit.
#
#   benches/compare-llvm.sh                      # 256 MiB of payloads
#   SIZE_MB=1024 RUNS=5 benches/compare-llvm.sh
#
# Environment: SIZE_MB, the total payload size in MiB (a host file of 1/8 and
# 4 device files sharing the rest; sizes are not multiples of 4096, so there
# is padding to write) [256]; the rest as in benches/common.sh (RUNS, WARMUP,
# LLVM_BIN, OURS, TIMER, WORKDIR, DISK, KEEP, NO_INSTALL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SIZE_MB=${SIZE_MB:-256}
need_counts SIZE_MB
need_tools "$LLVM_BIN/clang-offload-bundler"
# Outputs: two bundles, and one and all entries unbundled by each tool.
bench_start bundle $((SIZE_MB * 5))

total=$((SIZE_MB * 1024 * 1024))
host_size=$((total / 8 - 123))
names=(host gfx900 gfx906 gfx90a gfx942)
targets=(host-x86_64-unknown-linux-gnu
         hipv4-amdgcn-amd-amdhsa--gfx900
         hipv4-amdgcn-amd-amdhsa--gfx906
         hipv4-amdgcn-amd-amdhsa--gfx90a
         hipv4-amdgcn-amd-amdhsa--gfx942)
sizes=("$host_size")
rest=$((total - host_size))
for i in 1 2 3; do sizes+=($((rest / 4 - 17 * i))); done
sizes+=($((total - sizes[0] - sizes[1] - sizes[2] - sizes[3])))

echo "== generating ${SIZE_MB} MiB of inputs in $work" >&2
inputs=()
for i in "${!names[@]}"; do
    f="$work/${names[$i]}.bin"
    head -c "${sizes[$i]}" /dev/urandom >"$f"
    inputs+=("$f")
done
targets_csv=$(IFS=,; echo "${targets[*]}")
one_target=${targets[3]}  # gfx90a: an entry in the middle of the file
mkdir -p "$out/llvm" "$out/ours" "$out/ref"

# Arguments per operation; $1 = output directory (llvm|ours). Both tools
# list and unbundle the same bundle (LLVM's), so any difference is in the
# reading side only.
args_bundle() {
    printf '%s\n' -type=bc "-targets=$targets_csv" -bundle-align=4096 "-output=$out/$1/bundle.bc"
    printf -- '-input=%s\n' "${inputs[@]}"
}
args_list() { printf '%s\n' -list -type=bc "-input=$out/llvm/bundle.bc"; }
args_one() {
    printf '%s\n' -unbundle -type=bc "-targets=$one_target" "-input=$out/llvm/bundle.bc" \
        "-output=$out/$1/one.bin"
}
args_all() {
    printf '%s\n' -unbundle -type=bc "-targets=$targets_csv" "-input=$out/llvm/bundle.bc"
    for n in "${names[@]}"; do printf '%s\n' "-output=$out/$1/all.$n.bin"; done
}
run_tool() { # who op
    local tool=$llvm_tool a
    [[ $1 == ours ]] && tool=$ours_tool
    mapfile -t a < <("args_$2" "$1")
    "$tool" "${a[@]}"
}

# --- verify -----------------------------------------------------------------
echo "== verifying outputs are byte-identical" >&2
for who in llvm ours; do
    run_tool "$who" bundle
    run_tool "$who" list >"$out/$who/list.txt"
    run_tool "$who" one
    run_tool "$who" all
done
same_bytes "$out/llvm/bundle.bc" "$out/ours/bundle.bc" "bundle"
# LLVM prints IDs in StringMap hash order, we print file order (a documented
# difference): compare as sets.
same_bytes <(sort "$out/llvm/list.txt") <(sort "$out/ours/list.txt") "-list"
same_bytes "$out/llvm/one.bin" "$out/ours/one.bin" "unbundle one"
same_bytes "$out/llvm/one.bin" "${inputs[3]}" "unbundle one against its input"
for i in "${!names[@]}"; do
    same_bytes "$out/llvm/all.${names[$i]}.bin" "$out/ours/all.${names[$i]}.bin" "unbundle all"
    same_bytes "$out/llvm/all.${names[$i]}.bin" "${inputs[$i]}" "unbundle all against the inputs"
done
echo "   bundle, unbundle one, unbundle all: identical; -list: same IDs" >&2

# --- time -------------------------------------------------------------------
cat "${inputs[@]}" "$out/llvm/bundle.bc" >/dev/null
ops=(bundle list one all)
declare -A label=(
    [bundle]="bundle (host+4, align 4096)"
    [list]="-list"
    [one]="unbundle one target"
    [all]="unbundle all 5 targets"
)
for op in "${ops[@]}"; do
    for who in llvm ours; do
        tool=$llvm_tool
        [[ $who == ours ]] && tool=$ours_tool
        mapfile -t a < <("args_$op" "$who")
        timed "$who.$op" "$tool" "${a[@]}"
    done
done
timed cp.one cp "${inputs[3]}" "$out/ref/one.bin"
timed cp.all cp "${inputs[@]}" "$out/ref/"
timed cp.bundle cp "$out/llvm/bundle.bc" "$out/ref/bundle.bc"

# --- report -----------------------------------------------------------------
report_head "clangoffload vs LLVM clang-offload-bundler: ${SIZE_MB} MiB of payloads (host ${sizes[0]} B + 4 devices)"
compare_table LLVM ours
for op in "${ops[@]}"; do compare_row "${label[$op]}" "llvm.$op" "ours.$op"; done
echo
echo "Against the copy limit (cp of the bytes each operation writes):"
echo
compare_table ours cp
compare_row "bundle vs cp of the bundle" ours.bundle cp.bundle
compare_row "unbundle one vs cp of its payload" ours.one cp.one
compare_row "unbundle all vs cp of the 5 payloads" ours.all cp.all
