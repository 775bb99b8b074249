#!/usr/bin/env bash
# Runs fuzz targets one after the other, each for SECONDS, with the flags
# README.md documents, and appends one row per target to its runs table.
#
#   fuzz/run.sh SECONDS [TARGET...]      (default: every target)
#
# Environment: JOBS=N runs N libFuzzer jobs per target (default 1; the row
# then counts SECONDS x N CPU-seconds); NOTE=text goes into the result column.
# A crash stops that target (its artifact is under artifacts/<target>/) and
# the script goes on with the next; the exit status is 1 if any crashed,
# 2 if the targets do not build, 3 if another run.sh is running.
set -uo pipefail
cd "$(dirname "$0")"

# libFuzzer's -jobs write fuzz-<n>.log here, and each run reads and deletes
# them: two runs at once would take each other's statistics.
mkdir -p target
exec 9>target/run.lock
if ! flock -n 9; then
  echo "fuzz/run.sh: another run.sh is running in $(pwd); no rows written" >&2
  exit 3
fi

seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
if [ $# -eq 0 ]; then
  set -- $(ls fuzz_targets | sed 's/\.rs$//')
fi
jobs=${JOBS:-1}
core=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- ../core fuzz_targets checks; then
  core="$core + uncommitted"
fi

# A number with a comma between groups of three digits.
commas() { printf "%s" "$1" | rev | sed 's/[0-9]\{3\}/&,/g; s/,$//' | rev; }

# A missing cargo-fuzz or a failed build is not a fuzzing result: stop
# before any row is written.
if ! cargo +nightly fuzz build --debug-assertions >&2; then
  echo "fuzz/run.sh: the targets do not build; no rows written" >&2
  exit 2
fi

failed=0
for target in "$@"; do
  mkdir -p "corpus/$target"
  log=$(mktemp)
  start=$(date -u +"%Y-%m-%d %H:%M")
  began=$(date +%s)
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  cargo +nightly fuzz run --debug-assertions "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=3072 -malloc_limit_mb=1200 -timeout=10 \
    -print_final_stats=1 "${parallel[@]}" >"$log" 2>&1
  status=$?
  # With -jobs, libFuzzer writes each job's output to fuzz-<n>.log.
  cat fuzz-*.log >>"$log" 2>/dev/null
  rm -f fuzz-*.log
  # -a: a log may hold bytes that are no text (a target's output), and
  # grep then prints "binary file matches" instead of the lines.
  sum() { grep -ao "stat::$1: *[0-9]*" "$log" | awk '{ s += $2 } END { print s + 0 }'; }
  max() { grep -ao "stat::$1: *[0-9]*" "$log" | awk '$2 > m { m = $2 } END { print m + 0 }'; }
  execs=$(sum number_of_executed_units)
  rate=$(sum average_exec_per_sec)
  rss=$(max peak_rss_mb)
  last=$(grep -aE "^#[0-9]+.*cov: " "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$last")
  if [ "$status" -eq 0 ]; then
    result="no crash"
  else
    failed=1
    artifact=$(grep -ao "artifacts/$target/[^ ]*" "$log" | head -1)
    result="CRASH (exit $status)${artifact:+: \`$artifact\`}"
    echo "== $target: see $log" >&2
  fi
  [ -n "${NOTE:-}" ] && result="$result; $NOTE"
  duration="$seconds s"
  [ "$jobs" -gt 1 ] && duration="$jobs × $seconds s"
  # A crash ends the run early: say how long it ran, not what it was given.
  [ "$status" -ne 0 ] && duration="$(($(date +%s) - began)) s of $duration"
  row="| $start | \`$target\` | \`$core\` | $duration | $(commas "$execs") | $(commas "$rate") | $(commas "${cov:-0}") | $(commas "${ft:-0}") | $(commas "${corp:-0}") units | $rss MB | $result |"
  # The row goes after the runs table's last row (before "### Findings").
  at=$(awk '/^### Findings/ { exit } /^\| [0-9][0-9][0-9][0-9]-/ { n = NR } END { print n }' README.md)
  awk -v n="$at" -v row="$row" '{ print } NR == n { print row }' README.md >README.md.new &&
    mv README.md.new README.md
  echo "$row"
  [ "$status" -eq 0 ] && rm -f "$log"
done
exit "$failed"
