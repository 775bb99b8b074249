#!/usr/bin/env bash
# Times LLVM's clang-offload-bundler against clangoffload (invoked through a
# `clang-offload-bundler` symlink) on the same generated inputs, after
# checking that both tools produce byte-identical outputs.
#
#   benches/compare-llvm.sh                      # 256 MiB of payloads
#   SIZE_MB=1024 RUNS=5 benches/compare-llvm.sh
#
# Environment:
#   SIZE_MB   total payload size (host + 4 devices), MiB      [256]
#   RUNS      timed runs per command                          [10]
#   LLVM_BIN  directory holding LLVM's clang-offload-bundler  [/usr/lib/llvm-22/bin]
#   WORKDIR   parent of the temporary directory               [${TMPDIR:-/tmp}]
#   KEEP=1    keep the temporary directory
#   NO_INSTALL=1  do not try to apt-get install hyperfine
#   TIMER     hyperfine | loop | auto                         [auto]
#   WARMUP    untimed warm-up runs per command                [2]
#
# Timings use hyperfine when available (installed with apt-get if missing and
# possible), otherwise a bash loop with `date +%s%N` keeping the best run.
# Every file is read once before timing and every command gets warm-up runs,
# so both tools see a hot page cache.
set -euo pipefail

SIZE_MB=${SIZE_MB:-256}
RUNS=${RUNS:-10}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
WARMUP=${WARMUP:-2}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

llvm_tool="$LLVM_BIN/clang-offload-bundler"
[[ -x $llvm_tool ]] || { echo "error: $llvm_tool not found (set LLVM_BIN)" >&2; exit 1; }
[[ $SIZE_MB =~ ^[0-9]+$ && $SIZE_MB -ge 1 ]] || { echo "error: SIZE_MB must be a positive integer" >&2; exit 1; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || { echo "error: RUNS must be a positive integer" >&2; exit 1; }

# --- build ------------------------------------------------------------------
echo "== building clangoffload (release)" >&2
(cd "$root" && cargo build --release -p clangoffload-cli --quiet)
target_dir=${CARGO_TARGET_DIR:-$root/target}
ours_bin="$target_dir/release/clangoffload"
[[ -x $ours_bin ]] || { echo "error: $ours_bin was not built" >&2; exit 1; }

# --- timing backend ---------------------------------------------------------
TIMER=${TIMER:-auto}
if [[ $TIMER != loop ]] && ! command -v hyperfine >/dev/null 2>&1 && [[ -z ${NO_INSTALL:-} ]] \
    && command -v apt-get >/dev/null 2>&1; then
    echo "== installing hyperfine" >&2
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo -n)
    if ! "${sudo_cmd[@]}" apt-get install -y -qq hyperfine >/dev/null 2>&1; then
        "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 || true
        "${sudo_cmd[@]}" apt-get install -y -qq hyperfine >/dev/null 2>&1 || true
    fi
fi
if [[ $TIMER != loop ]] && command -v hyperfine >/dev/null 2>&1; then
    backend=hyperfine
else
    [[ $TIMER == hyperfine ]] && { echo "error: TIMER=hyperfine but hyperfine is unavailable" >&2; exit 1; }
    backend=loop
    echo "== hyperfine unavailable: timing with a bash loop (best of $RUNS)" >&2
fi

# --- inputs -----------------------------------------------------------------
work=$(mktemp -d "${WORKDIR:-${TMPDIR:-/tmp}}/clangoffload-bench.XXXXXX")
cleanup() { [[ -n ${KEEP:-} ]] && echo "kept $work" >&2 || rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/llvm" "$work/ours"
ln -s "$ours_bin" "$work/clang-offload-bundler"
ours_tool="$work/clang-offload-bundler"

total=$((SIZE_MB * 1024 * 1024))
# The host gets 1/8; four devices share the rest. Sizes are deliberately not
# multiples of 4096 so -bundle-align=4096 has padding to write.
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

avail_kb=$(df -Pk "$work" | awk 'NR==2 {print $4}')
need_kb=$((total / 1024 * 7))   # inputs, 2 bundles, 2x (one + all) outputs
if ((avail_kb < need_kb)); then
    echo "error: need ~$((need_kb / 1024)) MiB free in $work, have $((avail_kb / 1024)) MiB" >&2
    exit 1
fi

echo "== generating ${SIZE_MB} MiB of inputs in $work" >&2
inputs=()
for i in "${!names[@]}"; do
    f="$work/${names[$i]}.bin"
    head -c "${sizes[$i]}" /dev/urandom >"$f"
    inputs+=("$f")
done
targets_csv=$(IFS=,; echo "${targets[*]}")
one_target=${targets[3]}  # gfx90a: an entry in the middle of the file

# Arguments per operation; $1 = output directory (llvm|ours).
args_bundle() {
    local a=(-type=bc "-targets=$targets_csv" -bundle-align=4096 "-output=$work/$1/bundle.bc")
    for f in "${inputs[@]}"; do a+=("-input=$f"); done
    printf '%s\n' "${a[@]}"
}
# Both tools list and unbundle the *same* bundle (LLVM's), so any difference
# is in the reading side only.
args_list() { printf '%s\n' -list -type=bc "-input=$work/llvm/bundle.bc"; }
args_one() {
    printf '%s\n' -unbundle -type=bc "-targets=$one_target" \
        "-input=$work/llvm/bundle.bc" "-output=$work/$1/one.bin"
}
args_all() {
    printf '%s\n' -unbundle -type=bc "-targets=$targets_csv" "-input=$work/llvm/bundle.bc"
    for n in "${names[@]}"; do printf '%s\n' "-output=$work/$1/all.$n.bin"; done
}

run_tool() { # tool op outdir
    local tool=$1 op=$2 dir=$3 a
    mapfile -t a < <("args_$op" "$dir")
    "$tool" "${a[@]}"
}

# --- verify -----------------------------------------------------------------
echo "== verifying outputs are byte-identical" >&2
for who in llvm ours; do
    tool=$llvm_tool; [[ $who == ours ]] && tool=$ours_tool
    run_tool "$tool" bundle "$who"
    run_tool "$tool" list "$who" >"$work/$who/list.txt"
    run_tool "$tool" one "$who"
    run_tool "$tool" all "$who"
done
cmp "$work/llvm/bundle.bc" "$work/ours/bundle.bc"
# LLVM prints IDs in StringMap hash order, we print file order (a documented
# difference, see the top-level README): compare as sets.
cmp <(sort "$work/llvm/list.txt") <(sort "$work/ours/list.txt")
cmp "$work/llvm/one.bin" "$work/ours/one.bin"
cmp "$work/llvm/one.bin" "${inputs[3]}"
for i in "${!names[@]}"; do
    cmp "$work/llvm/all.${names[$i]}.bin" "$work/ours/all.${names[$i]}.bin"
    cmp "$work/llvm/all.${names[$i]}.bin" "${inputs[$i]}"
done
echo "   bundle, unbundle one, unbundle all: identical; -list: same IDs" >&2

# --- time -------------------------------------------------------------------
# Warm the page cache: read everything once (the warm-up runs below do the rest).
cat "${inputs[@]}" "$work/llvm/bundle.bc" >/dev/null

# Prints "best median" in seconds for one command line.
time_cmd() { # name tool op outdir
    local name=$1 tool=$2 op=$3 dir=$4 a
    mapfile -t a < <("args_$op" "$dir")
    if [[ $backend == hyperfine ]]; then
        local quoted csv="$work/$name.csv"
        quoted=$(printf '%q ' "$tool" "${a[@]}")
        hyperfine --style none --shell=none --warmup "$WARMUP" --runs "$RUNS" \
            --export-csv "$csv" --command-name "$name" "$quoted" >/dev/null 2>&1 \
            || hyperfine --style none --warmup "$WARMUP" --runs "$RUNS" \
                --export-csv "$csv" --command-name "$name" "$quoted >/dev/null" >/dev/null
        # command,mean,stddev,median,user,system,min,max
        awk -F, 'NR==2 {print $7, $4}' "$csv"
    else
        local i start end t best= all=()
        for ((i = 0; i < WARMUP; i++)); do "$tool" "${a[@]}" >/dev/null; done
        for ((i = 0; i < RUNS; i++)); do
            start=$(date +%s%N)
            "$tool" "${a[@]}" >/dev/null
            end=$(date +%s%N)
            t=$((end - start))
            all+=("$t")
            [[ -z $best || $t -lt $best ]] && best=$t
        done
        local median
        median=$(printf '%s\n' "${all[@]}" | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}')
        awk -v b="$best" -v m="$median" 'BEGIN {printf "%.9f %.9f\n", b/1e9, m/1e9}'
    fi
}

ops=(bundle list one all)
declare -A label=(
    [bundle]="bundle (host+4, align 4096)"
    [list]="-list"
    [one]="unbundle one target"
    [all]="unbundle all 5 targets"
)
declare -A res
for op in "${ops[@]}"; do
    echo "== timing $op" >&2
    res[llvm.$op]=$(time_cmd "llvm-$op" "$llvm_tool" "$op" llvm)
    res[ours.$op]=$(time_cmd "ours-$op" "$ours_tool" "$op" ours)
done

# --- report -----------------------------------------------------------------
fmt() { awk -v s="$1" 'BEGIN { if (s < 0.001) printf "%.0f us", s*1e6; else if (s < 1) printf "%.2f ms", s*1e3; else printf "%.3f s", s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a/b }'; }

echo
echo "clangoffload vs LLVM clang-offload-bundler: ${SIZE_MB} MiB of payloads (host $(( sizes[0] )) B + 4 devices), $RUNS runs, warm cache"
echo "LLVM: $llvm_tool ($("$llvm_tool" --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1))"
echo "ours: $ours_bin"
echo "timer: $backend; best = fastest run, median = median run; ratio = LLVM / ours (>1: ours faster)"
echo
printf '| %-28s | %10s | %10s | %7s | %10s | %10s | %7s |\n' operation "LLVM best" "ours best" ratio "LLVM med" "ours med" ratio
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..30})" "$(printf -- '-%.0s' {1..12})" \
    "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..12})" \
    "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})"
for op in "${ops[@]}"; do
    read -r lb lm <<<"${res[llvm.$op]}"
    read -r ob om <<<"${res[ours.$op]}"
    printf '| %-28s | %10s | %10s | %7s | %10s | %10s | %7s |\n' "${label[$op]}" \
        "$(fmt "$lb")" "$(fmt "$ob")" "$(ratio "$lb" "$ob")" \
        "$(fmt "$lm")" "$(fmt "$om")" "$(ratio "$lm" "$om")"
done
