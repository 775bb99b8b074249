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
# Environment: CLANGOFFLOAD_BENCH_SOURCE, the file the payloads are cut from
# (at least 113 MiB) [/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 or
# /usr/lib/llvm-22/lib/libLLVM.so.22.1]; the rest as in benches/common.sh
# (RUNS, WARMUP, LLVM_BIN, OURS, TIMER, WORKDIR, DISK, KEEP, NO_INSTALL).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_tools "$LLVM_BIN/clang-offload-bundler" zstd md5sum

source_file=${CLANGOFFLOAD_BENCH_SOURCE:-}
if [[ -z $source_file ]]; then
    for candidate in /usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 /usr/lib/llvm-22/lib/libLLVM.so.22.1; do
        [[ -f $candidate ]] && { source_file=$candidate; break; }
    done
fi
[[ -n $source_file && -f $source_file ]] \
    || die "no payload source (set CLANGOFFLOAD_BENCH_SOURCE to a file of 113 MiB or more)"
mib=$((1024 * 1024))
(($(stat -c %s "$source_file") >= 113 * mib)) \
    || die "$source_file is under 113 MiB (set CLANGOFFLOAD_BENCH_SOURCE)"

bench_start ccob 256
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
mkdir -p "$out/llvm" "$out/ours" "$out/ref"
compress_args=(-type=o -bundle-align=4096 -compress "-targets=$targets_csv" "${inputs[@]}")
# Both tools read the *same* compressed bundle, the one LLVM wrote.
one_args=(-type=o -unbundle "-targets=$one_target" "-input=$out/llvm/bundle.ccob")
list_args=(-type=o -list "-input=$out/llvm/bundle.ccob")

# --- verify -----------------------------------------------------------------
echo "== verifying outputs" >&2
for who in llvm ours; do
    tool=$llvm_tool
    [[ $who == ours ]] && tool=$ours_tool
    "$tool" "${compress_args[@]}" "-output=$out/$who/bundle.ccob"
done
tail -c +33 "$out/llvm/bundle.ccob" >"$work/raw.zst"   # past the 32-byte v3 header
if cmp -s "$out/llvm/bundle.ccob" "$out/ours/bundle.ccob"; then
    identical="byte-identical"
else
    identical="DIFFERENT (cmp: $(cmp "$out/llvm/bundle.ccob" "$out/ours/bundle.ccob" 2>&1 || true))"
fi
echo "   compressed bundles: $identical" >&2
for who in llvm ours; do
    tool=$llvm_tool
    [[ $who == ours ]] && tool=$ours_tool
    "$tool" "${one_args[@]}" "-output=$out/$who/one.o"
    "$tool" "${list_args[@]}" >"$out/$who/list.txt"
done
same_bytes "$out/llvm/one.o" "$out/ours/one.o" "unbundle one"
same_bytes "$out/llvm/one.o" "$one_input" "unbundle one against its input"
# LLVM prints IDs in StringMap hash order, we print file order: compare as sets.
same_bytes <(sort "$out/llvm/list.txt") <(sort "$out/ours/list.txt") "-list"
zstd -d -q -f -o "$out/ref/raw.out" "$work/raw.zst"
same_bytes "$out/ref/raw.out" "$work/bundle.o" "zstd -d of LLVM's frame against the bundle"
echo "   unbundle one: identical to the input; -list: same IDs; zstd -d: the uncompressed bundle" >&2

# --- time -------------------------------------------------------------------
cat "$work"/*.o "$work/raw.zst" "$out/llvm/bundle.ccob" >/dev/null
timed llvm.compress "$llvm_tool" "${compress_args[@]}" "-output=$out/llvm/bundle.ccob"
timed ours.compress "$ours_tool" "${compress_args[@]}" "-output=$out/ours/bundle.ccob"
timed llvm.one "$llvm_tool" "${one_args[@]}" "-output=$out/llvm/one.o"
timed ours.one "$ours_tool" "${one_args[@]}" "-output=$out/ours/one.o"
timed ours_nohash.one env CLANGOFFLOAD_SKIP_HASH_CHECK=1 "$ours_tool" "${one_args[@]}" "-output=$out/ours/one.o"
# -verbose makes LLVM compute and check the MD5 (it skips the hash otherwise).
timed llvm_verbose.one "$llvm_tool" -verbose "${one_args[@]}" "-output=$out/llvm/one.o"
timed llvm.list "$llvm_tool" "${list_args[@]}"
timed ours.list "$ours_tool" "${list_args[@]}"
timed ours_nohash.list env CLANGOFFLOAD_SKIP_HASH_CHECK=1 "$ours_tool" "${list_args[@]}"
timed llvm.version "$llvm_tool" --version
timed ours.version "$ours_tool" --version
timed ref.zstd_null zstd -d -q -f -o /dev/null "$work/raw.zst"
timed ref.zstd_file zstd -d -q -f -o "$out/ref/raw.out" "$work/raw.zst"
timed ref.md5 md5sum "$work/bundle.o"
timed ref.dd_read dd "if=$work/bundle.o" of=/dev/null bs=1M status=none
timed ref.cp_one cp "$one_input" "$out/ref/one.o"

# The decoder alone, in process: the system libzstd's one-shot
# ZSTD_decompress of the raw frame into a touched buffer (what both bundlers
# call), timed inside a small C program. Skipped without a C compiler. The
# libzstd-dev headers are not needed: the three prototypes are declared here.
if command -v cc >/dev/null 2>&1; then
    cat >"$work/zstd_inproc.c" <<'CEOF'
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
CEOF
    if cc -O2 -o "$work/zstd_inproc" "$work/zstd_inproc.c" -l:libzstd.so.1 2>/dev/null; then
        echo "== timing libzstd in process" >&2
        res[ref.inproc]=$("$work/zstd_inproc" "$work/raw.zst" "$WARMUP" "$RUNS")
    fi
fi

# Peak RSS of one unbundle, when GNU time is there.
if [[ -x /usr/bin/time ]]; then
    rss_llvm=$(/usr/bin/time -f %M "$llvm_tool" "${one_args[@]}" "-output=$out/llvm/one.o" 2>&1 >/dev/null | tail -1)
    rss_ours=$(/usr/bin/time -f %M "$ours_tool" "${one_args[@]}" "-output=$out/ours/one.o" 2>&1 >/dev/null | tail -1)
fi

# --- report -----------------------------------------------------------------
ccob_size=$(stat -c %s "$out/llvm/bundle.ccob")
ours_size=$(stat -c %s "$out/ours/bundle.ccob")
report_head "Compressed bundles, LLVM clang-offload-bundler vs clangoffload"
echo "input: $raw_size B uncompressed (empty host + 4 x 9 MiB from $(basename "$source_file")); -compress: LLVM $ccob_size B, ours $ours_size B, $(awk -v a="$raw_size" -v b="$ccob_size" 'BEGIN {printf "%.2f:1", a/b}'); $identical; zstd CLI $(zstd -V | grep -o 'v[0-9.]*' | head -1)"
echo
compare_table LLVM ours
compare_row "-compress (zstd 3)" llvm.compress ours.compress
compare_row "-unbundle one (ours checks MD5)" llvm.one ours.one
compare_row "-unbundle one (no MD5 either side)" llvm.one ours_nohash.one
compare_row "-unbundle one (MD5 both: LLVM -verbose)" llvm_verbose.one ours.one
compare_row "-list (ours checks MD5)" llvm.list ours.list
compare_row "-list (no MD5 either side)" llvm.list ours_nohash.list
compare_row "--version (process start-up)" llvm.version ours.version
echo
echo "References (throughput in MB of the $raw_size-byte uncompressed bundle per second, except cp):"
echo
rate_table
[[ -n ${res[ref.inproc]:-} ]] && rate_row "libzstd ZSTD_decompress in process (no exec)" ref.inproc "$raw_size"
rate_row "zstd -d raw frame -o /dev/null" ref.zstd_null "$raw_size"
rate_row "zstd -d raw frame -o file" ref.zstd_file "$raw_size"
rate_row "md5sum uncompressed bundle" ref.md5 "$raw_size"
rate_row "dd uncompressed bundle of=/dev/null bs=1M" ref.dd_read "$raw_size"
rate_row "cp one 9 MiB payload (unbundle's write)" ref.cp_one "$(stat -c %s "$one_input")"
rate_row "ours -unbundle one, MD5 checked" ours.one "$raw_size"
rate_row "ours -unbundle one, no MD5" ours_nohash.one "$raw_size"
rate_row "LLVM -unbundle one" llvm.one "$raw_size"
if [[ -n ${rss_llvm:-} ]]; then
    echo
    echo "Peak RSS of -unbundle one: LLVM $((rss_llvm / 1024)) MiB, ours $((rss_ours / 1024)) MiB"
fi
