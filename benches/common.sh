# shellcheck shell=bash
# The setup every compare-*.sh script shares (they source this file):
# building our binary, the timer, where inputs and outputs go, byte-identity
# checks and the report table.
#
# Environment, for every script:
#   RUNS      timed runs per command                            [10]
#   WARMUP    untimed runs per command before timing            [2]
#   LLVM_BIN  directory holding LLVM's tools                    [/usr/lib/llvm-22/bin]
#   OURS      our binary; when set, nothing is built
#             [${CARGO_TARGET_DIR:-<repo>/target}/release/clangoffload]
#   TIMER     hyperfine | loop | auto                           [auto]
#   WORKDIR   parent of the directory holding the inputs        [${TMPDIR:-/tmp}]
#   DISK=1    write outputs next to the inputs, on the disk, instead of on
#             tmpfs (/dev/shm): the timings then include write-back
#   KEEP=1    keep the temporary directories
#   NO_INSTALL=1  do not try `apt-get install hyperfine`
#
# Inputs stay on the disk (read from a warm page cache); outputs go to tmpfs
# where there is one with room, so that a run measures the tools and not the
# disk's write-back. Every script checks that both tools write the same bytes
# before it times anything.

RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
TIMER=${TIMER:-auto}
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
declare -A res=()

die() {
    echo "error: $*" >&2
    exit 1
}

# Each named variable must hold an integer of at least 1 (0 for WARMUP).
need_counts() { # name...
    local n
    for n in "$@"; do
        [[ ${!n} =~ ^[0-9]+$ ]] || die "$n must be a non-negative integer"
        [[ $n == WARMUP || ${!n} -ge 1 ]] || die "$n must be at least 1"
    done
}

need_tools() { # path-or-command...
    local t
    for t in "$@"; do
        [[ -x $t ]] || command -v "$t" >/dev/null 2>&1 || die "$t not found (set LLVM_BIN?)"
    done
}

# Sets ours_bin: the binary in OURS, or a release build of the CLI in the
# target directory cargo uses (CARGO_TARGET_DIR honoured).
build_ours() {
    if [[ -n ${OURS:-} ]]; then
        ours_bin=$(realpath -e -- "$OURS") || die "$OURS not found"
    else
        echo "== building clangoffload (release)" >&2
        (cd "$bench_root" && cargo build --release -p clangoffload-cli --quiet)
        ours_bin="${CARGO_TARGET_DIR:-$bench_root/target}/release/clangoffload"
    fi
    [[ -x $ours_bin ]] || die "$ours_bin was not built"
}

# Sets backend: hyperfine (installed with apt-get when missing and allowed)
# or a bash loop.
pick_timer() {
    if [[ $TIMER != loop ]] && ! command -v hyperfine >/dev/null 2>&1 && [[ -z ${NO_INSTALL:-} ]] \
        && command -v apt-get >/dev/null 2>&1; then
        local sudo_cmd=()
        [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo -n)
        echo "== installing hyperfine" >&2
        "${sudo_cmd[@]}" apt-get install -y -qq hyperfine >/dev/null 2>&1 \
            || { "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 \
                && "${sudo_cmd[@]}" apt-get install -y -qq hyperfine >/dev/null 2>&1; } || true
    fi
    if [[ $TIMER != loop ]] && command -v hyperfine >/dev/null 2>&1; then
        backend=hyperfine
    else
        [[ $TIMER == hyperfine ]] && die "TIMER=hyperfine but hyperfine is unavailable"
        backend=loop
        echo "== hyperfine unavailable: timing with a bash loop" >&2
    fi
}

bench_cleanup() {
    if [[ -n ${KEEP:-} ]]; then
        echo "kept $work${out_tmpfs:+ and $out}" >&2
    else
        rm -rf "$work" ${out_tmpfs:+"$out"}
    fi
}

# bench_start NAME OUT_MIB: builds our binary, picks the timer, makes $work
# (inputs) and $out (outputs: tmpfs when it has OUT_MIB free, unless DISK=1),
# links $ours_tool (a `clang-offload-bundler` symlink to our binary) and
# sets $llvm_tool.
bench_start() { # name out-mib
    local name=$1 out_mib=${2:-0}
    need_counts RUNS WARMUP
    build_ours
    pick_timer
    work=$(mktemp -d "${WORKDIR:-${TMPDIR:-/tmp}}/clangoffload-$name.XXXXXX")
    out_tmpfs=
    local free_mib=0
    [[ -d /dev/shm && -w /dev/shm ]] && free_mib=$(($(df -Pk /dev/shm | awk 'NR==2 {print $4}') / 1024))
    if [[ -z ${DISK:-} ]] && ((free_mib > out_mib + 64)); then
        out=$(mktemp -d "/dev/shm/clangoffload-$name-out.XXXXXX")
        out_tmpfs=1
        out_where="tmpfs"
    else
        out="$work/out"
        mkdir -p "$out"
        out_where="disk"
    fi
    trap bench_cleanup EXIT
    mkdir -p "$work/bin"
    ln -s "$ours_bin" "$work/bin/clang-offload-bundler"
    ours_tool="$work/bin/clang-offload-bundler"
    llvm_tool="$LLVM_BIN/clang-offload-bundler"
}

# Fails unless two files hold the same bytes.
same_bytes() { # a b what
    cmp -s "$1" "$2" || die "$3: $1 and $2 differ ($(cmp "$1" "$2" 2>&1 | head -1))"
}

# timed NAME COMMAND...: times the command and stores "best median" (seconds)
# in res[NAME].
timed() {
    local name=$1
    shift
    echo "== timing $name" >&2
    if [[ $backend == hyperfine ]]; then
        local csv="$work/$name.csv"
        hyperfine --style none --shell=none --warmup "$WARMUP" --runs "$RUNS" \
            --export-csv "$csv" --command-name "$name" "$(printf '%q ' "$@")" >/dev/null
        # command,mean,stddev,median,user,system,min,max
        res[$name]=$(awk -F, 'NR==2 {print $7, $4}' "$csv")
    else
        local i start end all=()
        for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null; done
        for ((i = 0; i < RUNS; i++)); do
            start=$(date +%s%N)
            "$@" >/dev/null
            end=$(date +%s%N)
            all+=($((end - start)))
        done
        res[$name]=$(printf '%s\n' "${all[@]}" | sort -n | awk '{v[NR]=$1} END {
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.9f %.9f\n", v[1] / 1e9, m / 1e9 }')
    fi
}

fmt_time() { awk -v s="$1" 'BEGIN { if (s < 0.001) printf "%.0f us", s*1e6; else if (s < 1) printf "%.2f ms", s*1e3; else printf "%.3f s", s }'; }
fmt_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a/b }'; }
fmt_rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f MB/s", n/s/1e6 }'; }

# The run's header: what was compared, on what, how.
report_head() { # title
    echo
    echo "$1"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "LLVM: $LLVM_BIN ($("$llvm_tool" --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1)); ours: $ours_bin"
    echo "timer: $backend, $RUNS runs after $WARMUP warm-up, warm page cache; outputs on $out_where"
    echo "best = fastest run, median = median run; ratio = first / second (>1: the second is faster)"
    echo
}

# A table comparing two commands per row.
compare_table() { # first-name second-name
    printf '| %-44s | %10s | %10s | %7s | %10s | %10s | %7s |\n' operation "$1 best" "$2 best" ratio "$1 med" "$2 med" ratio
    printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..12})" \
        "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..12})" \
        "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})"
}

compare_row() { # label first-result second-result
    local ab am bb bm
    read -r ab am <<<"${res[$2]}"
    read -r bb bm <<<"${res[$3]}"
    printf '| %-44s | %10s | %10s | %7s | %10s | %10s | %7s |\n' "$1" \
        "$(fmt_time "$ab")" "$(fmt_time "$bb")" "$(fmt_ratio "$ab" "$bb")" \
        "$(fmt_time "$am")" "$(fmt_time "$bm")" "$(fmt_ratio "$am" "$bm")"
}

# A table of single commands with a throughput for a given byte count.
rate_table() {
    printf '| %-44s | %10s | %10s | %12s |\n' command best median "best rate"
    printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..12})" \
        "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..14})"
}

rate_row() { # label result bytes
    local b m
    read -r b m <<<"${res[$2]}"
    printf '| %-44s | %10s | %10s | %12s |\n' "$1" "$(fmt_time "$b")" "$(fmt_time "$m")" "$(fmt_rate "$3" "$b")"
}
