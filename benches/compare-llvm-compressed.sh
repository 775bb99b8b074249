#!/usr/bin/env bash
# Times LLVM's clang-offload-bundler against clangoffload (invoked through a
# `clang-offload-bundler` symlink) on compressed bundles ("CCOB"), after
# checking that both write byte-identical compressed bundles and unbundle the
# same bytes. References: `zstd -d` of the raw frame (the decoder alone),
# `md5sum` (the hash alone), `dd` and `cp` (the copy limits).
#
#   benches/compare-llvm-compressed.sh
#   RUNS=20 benches/compare-llvm-compressed.sh
#
# The input is a HIP fat binary as `clang -x hip --offload-compress` makes it:
# `-type=o -bundle-align=4096`, an empty host input (/dev/null) and four device
# inputs, each a 9 MiB slice of real machine code cut from LLVM's shared
# library (the same slices as benches/src/lib.rs: 37.75 MB uncompressed,
# about 3.5:1 under zstd level 3).
#
# Environment:
#   RUNS      timed runs per command                          [10]
#   WARMUP    untimed warm-up runs per command                [2]
#   LLVM_BIN  directory holding LLVM's clang-offload-bundler  [/usr/lib/llvm-22/bin]
#   CLANGOFFLOAD_BENCH_SOURCE  file the payloads are cut from (at least 113 MiB)
#             [/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 or /usr/lib/llvm-22/lib/libLLVM.so.22.1]
#   WORKDIR   parent of the temporary directory               [${TMPDIR:-/tmp}]
#   KEEP=1    keep the temporary directory
#   TIMER     hyperfine | loop | auto                         [auto]
#
# Timings use hyperfine when available, otherwise a bash loop with
# `date +%s%N`. Every file is read once before timing and every command gets
# warm-up runs, so all tools see a hot page cache.
set -euo pipefail

RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

llvm_tool="$LLVM_BIN/clang-offload-bundler"
[[ -x $llvm_tool ]] || { echo "error: $llvm_tool not found (set LLVM_BIN)" >&2; exit 1; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || { echo "error: RUNS must be a positive integer" >&2; exit 1; }
for tool in zstd md5sum; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found" >&2; exit 1; }
done

source_file=${CLANGOFFLOAD_BENCH_SOURCE:-}
if [[ -z $source_file ]]; then
    for candidate in /usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 /usr/lib/llvm-22/lib/libLLVM.so.22.1; do
        [[ -f $candidate ]] && { source_file=$candidate; break; }
    done
fi
[[ -n $source_file && -f $source_file ]] \
    || { echo "error: no payload source (set CLANGOFFLOAD_BENCH_SOURCE to a file of 113 MiB or more)" >&2; exit 1; }
mib=$((1024 * 1024))
(($(stat -c %s "$source_file") >= 113 * mib)) \
    || { echo "error: $source_file is under 113 MiB (set CLANGOFFLOAD_BENCH_SOURCE)" >&2; exit 1; }

# --- build ------------------------------------------------------------------
echo "== building clangoffload (release)" >&2
(cd "$root" && cargo build --release -p clangoffload-cli --quiet)
target_dir=${CARGO_TARGET_DIR:-$root/target}
ours_bin="$target_dir/release/clangoffload"
[[ -x $ours_bin ]] || { echo "error: $ours_bin was not built" >&2; exit 1; }

# --- timing backend ---------------------------------------------------------
TIMER=${TIMER:-auto}
if [[ $TIMER != loop ]] && command -v hyperfine >/dev/null 2>&1; then
    backend=hyperfine
else
    [[ $TIMER == hyperfine ]] && { echo "error: TIMER=hyperfine but hyperfine is unavailable" >&2; exit 1; }
    backend=loop
    echo "== hyperfine unavailable: timing with a bash loop" >&2
fi

# --- inputs -----------------------------------------------------------------
work=$(mktemp -d "${WORKDIR:-${TMPDIR:-/tmp}}/clangoffload-ccob-bench.XXXXXX")
cleanup() { [[ -n ${KEEP:-} ]] && echo "kept $work" >&2 || rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/llvm" "$work/ours" "$work/ref"
ln -s "$ours_bin" "$work/clang-offload-bundler"
ours_tool="$work/clang-offload-bundler"

names=(gfx906 gfx90a gfx942 gfx1100)
targets_csv=host-x86_64-unknown-linux-gnu
inputs=(-input=/dev/null)
echo "== cutting 4 device payloads from $source_file" >&2
for i in "${!names[@]}"; do
    # benches/src/lib.rs DEVICE_SLICES: 9 MiB - 123*(i+1) bytes from (8 + 32*i) MiB.
    offset=$(((8 + 32 * i) * mib))
    size=$((9 * mib - 123 * (i + 1)))
    f="$work/${names[$i]}.o"
    dd "if=$source_file" "of=$f" bs=1M iflag=skip_bytes,count_bytes skip="$offset" count="$size" status=none
    targets_csv+=",hipv4-amdgcn-amd-amdhsa--${names[$i]}"
    inputs+=("-input=$f")
done
one_name=gfx90a
one_target=hipv4-amdgcn-amd-amdhsa--$one_name
one_input="$work/$one_name.o"

# The uncompressed bundle (LLVM's), for the references and the checks.
"$llvm_tool" -type=o -bundle-align=4096 "-targets=$targets_csv" "${inputs[@]}" \
    "-output=$work/bundle.o"
raw_size=$(stat -c %s "$work/bundle.o")

# --- commands ---------------------------------------------------------------
# Each prints one argument per line; $1 = output directory (llvm|ours).
args_compress() {
    printf '%s\n' -type=o -bundle-align=4096 -compress "-targets=$targets_csv" "${inputs[@]}" \
        "-output=$work/$1/bundle.ccob"
}
# Both tools read the *same* compressed bundle, the one LLVM wrote.
args_one() {
    printf '%s\n' -type=o -unbundle "-targets=$one_target" "-input=$work/llvm/bundle.ccob" \
        "-output=$work/$1/one.o"
}
args_list() { printf '%s\n' -type=o -list "-input=$work/llvm/bundle.ccob"; }
args_version() { printf '%s\n' --version; }

# Every timed command: its name, in order, and its argv joined by \x1f.
declare -a cmd_names=()
declare -A cmd_argv=()
add_cmd() { # name argv...
    local name=$1; shift
    cmd_names+=("$name")
    cmd_argv[$name]=$(printf '%s\x1f' "$@")
}
add_tool_cmd() { # name tool op dir [env...]
    local name=$1 tool=$2 op=$3 dir=$4 a; shift 4
    mapfile -t a < <("args_$op" "$dir")
    if (($#)); then add_cmd "$name" env "$@" "$tool" "${a[@]}"; else add_cmd "$name" "$tool" "${a[@]}"; fi
}
add_tool_cmd llvm.compress "$llvm_tool" compress llvm
add_tool_cmd ours.compress "$ours_tool" compress ours
add_tool_cmd llvm.one "$llvm_tool" one llvm
add_tool_cmd ours.one "$ours_tool" one ours
add_tool_cmd ours_nohash.one "$ours_tool" one ours CLANGOFFLOAD_SKIP_HASH_CHECK=1
# -verbose makes LLVM compute and check the MD5 (it skips the hash otherwise).
mapfile -t verbose_args < <(args_one llvm)
add_cmd llvm_verbose.one "$llvm_tool" -verbose "${verbose_args[@]}"
add_tool_cmd llvm.list "$llvm_tool" list llvm
add_tool_cmd ours.list "$ours_tool" list ours
add_tool_cmd ours_nohash.list "$ours_tool" list ours CLANGOFFLOAD_SKIP_HASH_CHECK=1
add_tool_cmd llvm.version "$llvm_tool" version llvm
add_tool_cmd ours.version "$ours_tool" version ours
add_cmd ref.zstd_null zstd -d -q -f -o /dev/null "$work/raw.zst"
add_cmd ref.zstd_file zstd -d -q -f -o "$work/ref/raw.out" "$work/raw.zst"
add_cmd ref.md5 md5sum "$work/bundle.o"
add_cmd ref.dd_read dd "if=$work/bundle.o" of=/dev/null bs=1M status=none
add_cmd ref.cp_one cp "$one_input" "$work/ref/one.o"

run_cmd() { # name
    local a; IFS=$'\x1f' read -r -a a <<<"${cmd_argv[$1]}"
    "${a[@]}"
}

# --- verify -----------------------------------------------------------------
echo "== verifying outputs" >&2
run_cmd llvm.compress
run_cmd ours.compress
tail -c +33 "$work/llvm/bundle.ccob" >"$work/raw.zst"   # past the 32-byte v3 header
if cmp -s "$work/llvm/bundle.ccob" "$work/ours/bundle.ccob"; then
    identical="byte-identical"
else
    identical="DIFFERENT (cmp: $(cmp "$work/llvm/bundle.ccob" "$work/ours/bundle.ccob" 2>&1 || true))"
fi
echo "   compressed bundles: $identical" >&2
run_cmd llvm.one
run_cmd ours.one
cmp "$work/llvm/one.o" "$work/ours/one.o"
cmp "$work/llvm/one.o" "$one_input"
run_cmd llvm.list >"$work/llvm/list.txt"
run_cmd ours.list >"$work/ours/list.txt"
# LLVM prints IDs in StringMap hash order, we print file order: compare as sets.
cmp <(sort "$work/llvm/list.txt") <(sort "$work/ours/list.txt")
run_cmd ref.zstd_file
cmp "$work/ref/raw.out" "$work/bundle.o"
echo "   unbundle one: identical to the input; -list: same IDs; zstd -d: the uncompressed bundle" >&2

# --- time -------------------------------------------------------------------
cat "$work"/*.o "$work/raw.zst" "$work/llvm/bundle.ccob" >/dev/null

# Prints "best median" in seconds for one command.
time_cmd() { # name
    local name=$1 a
    IFS=$'\x1f' read -r -a a <<<"${cmd_argv[$name]}"
    if [[ $backend == hyperfine ]]; then
        local csv="$work/$name.csv"
        hyperfine --style none --shell=none --warmup "$WARMUP" --runs "$RUNS" \
            --export-csv "$csv" --command-name "$name" "$(printf '%q ' "${a[@]}")" >/dev/null
        # command,mean,stddev,median,user,system,min,max
        awk -F, 'NR==2 {print $7, $4}' "$csv"
    else
        local i start end t best= all=()
        for ((i = 0; i < WARMUP; i++)); do "${a[@]}" >/dev/null 2>&1; done
        for ((i = 0; i < RUNS; i++)); do
            start=$(date +%s%N)
            "${a[@]}" >/dev/null 2>&1
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

# The decoder alone, in process: the system libzstd's one-shot
# ZSTD_decompress of the raw frame into a touched buffer (what both bundlers
# call), timed inside a small C program. Skipped without a C compiler. The
# libzstd-dev headers are not needed: the three prototypes are declared here.
inproc=""
if command -v cc >/dev/null 2>&1; then
    cat >"$work/zstd_inproc.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
size_t ZSTD_decompress(void *, size_t, const void *, size_t);
unsigned ZSTD_isError(size_t);
unsigned long long ZSTD_getFrameContentSize(const void *, size_t);
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int warmup = atoi(argv[2]), runs = atoi(argv[3]);
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END)) return 1;
    long n = ftell(f);
    rewind(f);
    char *in = malloc(n);
    if (!in || fread(in, 1, n, f) != (size_t)n) return 1;
    unsigned long long size = ZSTD_getFrameContentSize(in, n);
    char *out = malloc(size);
    double *t = calloc(runs, sizeof *t);
    if (!out || !t) return 1;
    memset(out, 1, size);
    for (int i = 0; i < warmup + runs; i++) {
        double start = now();
        size_t r = ZSTD_decompress(out, size, in, n);
        double took = now() - start;
        if (ZSTD_isError(r) || r != size) return 1;
        if (i >= warmup) t[i - warmup] = took;
    }
    qsort(t, runs, sizeof *t, cmp);
    printf("%.9f %.9f\n", t[0], runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2);
    return 0;
}
EOF
    if cc -O2 -o "$work/zstd_inproc" "$work/zstd_inproc.c" -l:libzstd.so.1 2>/dev/null; then
        echo "== timing libzstd in process" >&2
        inproc=$("$work/zstd_inproc" "$work/raw.zst" "$WARMUP" "$RUNS")
    fi
fi

# Peak RSS of one unbundle, when GNU time is there.
rss() { # name
    local a; IFS=$'\x1f' read -r -a a <<<"${cmd_argv[$1]}"
    /usr/bin/time -f %M "${a[@]}" 2>&1 >/dev/null | tail -1
}
if [[ -x /usr/bin/time ]]; then
    rss_llvm=$(rss llvm.one)
    rss_ours=$(rss ours.one)
fi

declare -A res
for name in "${cmd_names[@]}"; do
    echo "== timing $name" >&2
    res[$name]=$(time_cmd "$name")
done

# --- report -----------------------------------------------------------------
fmt() { awk -v s="$1" 'BEGIN { if (s < 0.001) printf "%.0f us", s*1e6; else if (s < 1) printf "%.2f ms", s*1e3; else printf "%.3f s", s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a/b }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f MB/s", n/s/1e6 }'; }
line() { printf '|%s' "$@"; printf '|\n'; }
dashes() { printf -- '-%.0s' $(seq 1 "$1"); }

ccob_size=$(stat -c %s "$work/llvm/bundle.ccob")
ours_size=$(stat -c %s "$work/ours/bundle.ccob")
echo
echo "Compressed bundles, clangoffload vs LLVM clang-offload-bundler; $RUNS runs, warm cache"
echo "LLVM: $llvm_tool ($("$llvm_tool" --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1)); zstd CLI $(zstd -V | grep -o 'v[0-9.]*' | head -1)"
echo "ours: $ours_bin"
echo "input: $raw_size B uncompressed (empty host + 4 x 9 MiB from $(basename "$source_file")); -compress: LLVM $ccob_size B, ours $ours_size B, $(awk -v a="$raw_size" -v b="$ccob_size" 'BEGIN {printf "%.2f:1", a/b}'); $identical"
echo "timer: $backend; best = fastest run, median = median run; ratio = LLVM / ours (>1: ours faster)"
echo
printf '| %-40s | %10s | %10s | %7s | %10s | %10s | %7s |\n' operation "LLVM best" "ours best" ratio "LLVM med" "ours med" ratio
line "$(dashes 42)" "$(dashes 12)" "$(dashes 12)" "$(dashes 9)" "$(dashes 12)" "$(dashes 12)" "$(dashes 9)"
row() { # label llvm-name ours-name
    local lb lm ob om
    read -r lb lm <<<"${res[$2]}"
    read -r ob om <<<"${res[$3]}"
    printf '| %-40s | %10s | %10s | %7s | %10s | %10s | %7s |\n' "$1" \
        "$(fmt "$lb")" "$(fmt "$ob")" "$(ratio "$lb" "$ob")" \
        "$(fmt "$lm")" "$(fmt "$om")" "$(ratio "$lm" "$om")"
}
row "-compress (zstd 3)" llvm.compress ours.compress
row "-unbundle one (ours checks MD5)" llvm.one ours.one
row "-unbundle one (no MD5 either side)" llvm.one ours_nohash.one
row "-unbundle one (MD5 both: LLVM -verbose)" llvm_verbose.one ours.one
row "-list (ours checks MD5)" llvm.list ours.list
row "-list (no MD5 either side)" llvm.list ours_nohash.list
row "--version (process start-up)" llvm.version ours.version
echo
echo "References (throughput in MB of the $raw_size-byte uncompressed bundle per second, except cp):"
echo
printf '| %-44s | %10s | %10s | %12s |\n' command best median "best rate"
line "$(dashes 46)" "$(dashes 12)" "$(dashes 12)" "$(dashes 14)"
ref_row() { # label name bytes
    local b m
    read -r b m <<<"${res[$2]}"
    printf '| %-44s | %10s | %10s | %12s |\n' "$1" "$(fmt "$b")" "$(fmt "$m")" "$(rate "$3" "$b")"
}
if [[ -n $inproc ]]; then
    res[ref.inproc]=$inproc
    ref_row "libzstd ZSTD_decompress in process (no exec)" ref.inproc "$raw_size"
fi
ref_row "zstd -d raw frame -o /dev/null" ref.zstd_null "$raw_size"
ref_row "zstd -d raw frame -o file" ref.zstd_file "$raw_size"
ref_row "md5sum uncompressed bundle" ref.md5 "$raw_size"
ref_row "dd uncompressed bundle of=/dev/null bs=1M" ref.dd_read "$raw_size"
ref_row "cp one 9 MiB payload (unbundle's write)" ref.cp_one "$(stat -c %s "$one_input")"
ref_row "ours -unbundle one, no MD5" ours_nohash.one "$raw_size"
ref_row "LLVM -unbundle one" llvm.one "$raw_size"
if [[ -n ${rss_llvm:-} ]]; then
    echo
    echo "Peak RSS of -unbundle one: LLVM $((rss_llvm / 1024)) MiB, ours $((rss_ours / 1024)) MiB"
fi
