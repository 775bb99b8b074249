#!/usr/bin/env bash
# Times clangoffload against LLVM 22's tools on a host shared object whose
# `.hip_fatbin` holds many compressed bundles back to back, the shape of a
# large HIP library built with `--offload-compress` for many GPUs: CONTAINERS
# zstd version 3 compressed bundles ("CCOB") of ENTRIES entries each, about
# TOTAL_MB MB once decompressed, each 4096-aligned as lld lays out the
# `.hip_fatbin` input sections (alignment 4096) of several objects.
#
#   benches/compare-llvm-fatbin.sh                            # 45 x 28, ~2.3 GB
#   CONTAINERS=3 TOTAL_MB=150 RUNS=3 benches/compare-llvm-fatbin.sh   # quick
#
# Rows (LLVM first, ours second; ratio >1: ours is faster):
#   list SO                          vs llvm-readobj --offloading SO
#   inspect --json SO                vs llvm-objdump --offloading SO (which
#                                       extracts every entry to a file)
#   extract SO -o DIR --force (MD5)  vs LLVM's bundler -unbundle of all
#                                       ENTRIES targets, over each container
#   -unbundle of DEVICE, per container (ours through a `clang-offload-bundler`
#                                       symlink), both CONTAINERS calls
#   the C ABI, first container: clangoffload_fatbin_select_for_device for
#   DEVICE (CLANGOFFLOAD_SKIP_HASH_CHECK), and for the device whose entry
#   holds the bundle's middle byte, against a full
#   clangoffload_compressed_decompress (benches/select-device.c)
# and every command's peak RSS (GNU time's %M). Loops over containers run
# from a generated bash script (one process per container, as a user would).
#
# Generation (once per parameter set, cached under FATBIN_CACHE): device
# payloads are slices of the largest shared library in LLVM_LIB (real
# machine code; offsets move on through the library so that no container
# holds the same bytes twice), sizes varied around TOTAL_MB / (CONTAINERS *
# (ENTRIES - 1)), never a multiple of 4096. Each container is what clang's
# HIP driver asks for: `clang-offload-bundler -type=o -bundle-align=4096
# -compress` (no -compression-level: zstd 3, format version 3), an empty host
# input (/dev/null) first. The library is linked by clang + lld from an
# assembly file that `.incbin`s each container after `.p2align 12`.
#
# Checks before timing: every container is CCOB version 3, zstd; LLVM's
# unbundled payloads equal the slices they were cut from; `list` prints
# CONTAINERS*ENTRIES IDs, the same as LLVM's bundler -list of each container;
# `extract` writes the same bytes as LLVM's bundler -unbundle; each
# `-unbundle` of DEVICE matches LLVM's; select-device (both modes) returns
# the bytes LLVM unbundles for DEVICE from the first container. A command of
# ours that fails or differs is reported as a FAIL row (with its message),
# the other rows still run, and the script exits 1 at the end.
#
# Environment:
#   CONTAINERS  compressed bundles in .hip_fatbin                [45]
#   ENTRIES     entries per bundle: the host + ENTRIES-1 devices
#               (gfx900 ... gfx1250, in that order; 2 to 28)     [28]
#   TOTAL_MB    device payload bytes in all, MB (10^6)          [2300]
#   SPREAD=1    containers of different sizes, 45% to 145% of the mean (as
#               JAX's ROCm 7 plugin: CONTAINERS=45 TOTAL_MB=3150 SPREAD=1
#               gives decoded bundles of ~32 to ~101 MB, median ~70 MB)
#   DEVICE      device for -unbundle and the C ABI rows          [gfx1100]
#   LLVM_LIB    where the payload source is picked (the largest .so*)
#               [/usr/lib/llvm-22/lib]; CLANGOFFLOAD_BENCH_SOURCE: that file
#   FATBIN_CACHE  where generated files are kept between runs
#               [${WORKDIR:-${TMPDIR:-/tmp}}/clangoffload-fatbin-cache]
#   FRESH=1     generate again even if cached
#   CAPI_LIB    libclangoffload_capi.a (or libclangoffload.a) for the C rows
#               [built with `cargo build --release -p clangoffload-capi`
#               unless OURS is set; then target/release's, if there]
#   RUNS [5], WARMUP [1], and the rest as in benches/common.sh (LLVM_BIN,
#   OURS, TIMER, WORKDIR, DISK, KEEP, NO_INSTALL: also for `time`).
# Disk: about 2 x the compressed size (~1.3 GB at the default) in the cache;
# tmpfs (or disk with DISK=1): about 3 x TOTAL_MB while the outputs are checked.
set -euo pipefail

CONTAINERS=${CONTAINERS:-45}
ENTRIES=${ENTRIES:-28}
TOTAL_MB=${TOTAL_MB:-2300}
SPREAD=${SPREAD:-0}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
LLVM_LIB=${LLVM_LIB:-/usr/lib/llvm-22/lib}
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

need_counts CONTAINERS ENTRIES TOTAL_MB
((ENTRIES >= 2 && ENTRIES <= 28)) || die "ENTRIES must be 2 to 28"
for tool in clang-offload-bundler clang llvm-readobj llvm-objdump llvm-readelf; do
    need_tools "$LLVM_BIN/$tool"
done
need_tools cc od cmp

# --- the payload source: the largest shared library in LLVM_LIB --------------
source_file=${CLANGOFFLOAD_BENCH_SOURCE:-}
if [[ -z $source_file ]]; then
    source_file=$(find -L "$LLVM_LIB" -maxdepth 1 -name '*.so*' -type f -printf '%s %p\n' 2>/dev/null \
        | sort -rn | head -1 | cut -d' ' -f2-)
    [[ -n $source_file ]] || die "no .so in $LLVM_LIB (set CLANGOFFLOAD_BENCH_SOURCE)"
    source_file=$(realpath -e -- "$source_file")
fi
[[ -f $source_file ]] || die "$source_file not found"
source_size=$(stat -c %s "$source_file")

all_devices=(gfx900 gfx906 gfx908 gfx90a gfx942 gfx950 gfx1010 gfx1011 gfx1012 gfx1030 gfx1031
    gfx1032 gfx1033 gfx1034 gfx1035 gfx1036 gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151
    gfx1152 gfx1153 gfx1200 gfx1201 gfx1250)
devices=("${all_devices[@]:0:ENTRIES-1}")
n_dev=${#devices[@]}
host_target=host-x86_64-unknown-linux-gnu # as clang's HIP driver passes it
targets_csv=$host_target
for d in "${devices[@]}"; do targets_csv+=",hipv4-amdgcn-amd-amdhsa--$d"; done
if [[ -z ${DEVICE:-} ]]; then
    DEVICE=${devices[n_dev / 2]}
    for d in "${devices[@]}"; do [[ $d == gfx1100 ]] && DEVICE=gfx1100; done
fi
one_target=hipv4-amdgcn-amd-amdhsa--$DEVICE
dev_pos=0
for ((e = 0; e < n_dev; e++)); do [[ ${devices[e]} == "$DEVICE" ]] && dev_pos=$((e + 2)); done
[[ ",$targets_csv," == *",$one_target,"* ]] || die "DEVICE=$DEVICE is not among the bundles' targets"
# Every processor must be one LLVM 22's AMDGPU backend knows (the bundler
# itself accepts any name).
if [[ -x $LLVM_BIN/llc ]]; then
    known=$("$LLVM_BIN/llc" -mtriple=amdgcn-amd-amdhsa -mcpu=help 2>&1 | awk '{print $1}')
    for d in "${devices[@]}"; do
        grep -qx -- "$d" <<<"$known" || die "$d is not an AMDGPU processor LLVM 22 knows"
    done
fi

base=$((TOTAL_MB * 1000000 / (CONTAINERS * n_dev)))
((base >= 65536)) || die "TOTAL_MB too small for CONTAINERS x ENTRIES (slices under 64 KiB)"
max_slice=$((base * 116 / 100 * (SPREAD ? 146 : 100) / 100))
((max_slice * n_dev * (SPREAD ? 1 : 2) < source_size)) \
    || die "$source_file ($source_size B) is too small for containers of $((max_slice * n_dev)) B (lower TOTAL_MB or raise CONTAINERS)"

# Entry e (0 = host) of container c: its size (never a multiple of 4096,
# 85% to 115% of base, mean about base; with SPREAD, times the container's
# own 45% to 145%).
slice_size() { # c e
    local scale=$((SPREAD ? 45 + ($1 * 37) % 101 : 100))
    echo $((base * scale / 100 * (85 + ($1 * 7 + $2 * 11) % 31) / 100 - ($1 * 131 + $2 * 17) % 4093 - 1))
}

# --- generation (cached) ------------------------------------------------------
cache_root=${FATBIN_CACHE:-${WORKDIR:-${TMPDIR:-/tmp}}/clangoffload-fatbin-cache}
key="c$CONTAINERS-e$ENTRIES-t$TOTAL_MB-s$SPREAD-$(basename "$source_file")-$source_size-v1"
cache="$cache_root/$key"
so_name=libfatbin.so
so="$cache/$so_name"

generate() {
    local start c e off size gap pos=$((3 * 1048576 + 4099)) wraps=0 f ins magic
    start=$(date +%s)
    rm -rf "$cache"
    mkdir -p "$cache/slices"
    local need_kb=$((TOTAL_MB * 1000 * 2 / 3 + 65536)) avail_kb
    avail_kb=$(df -Pk "$cache" | awk 'NR==2 {print $4}')
    ((avail_kb >= need_kb)) || die "need about $((need_kb / 1024)) MiB free in $cache_root"
    echo "== generating $CONTAINERS containers x $ENTRIES entries (~$TOTAL_MB MB) from $source_file into $cache" >&2
    : >"$cache/manifest" # c e offset size
    for ((c = 0; c < CONTAINERS; c++)); do
        ins=(-input=/dev/null)
        for ((e = 1; e <= n_dev; e++)); do
            size=$(slice_size "$c" "$e")
            gap=$((((c + e) % 5) * 65536 + 12345))
            if ((pos + size > source_size)); then
                wraps=$((wraps + 1))
                pos=$(((wraps * 1048576 + wraps * 4099) % (source_size / 4)))
            fi
            off=$pos
            pos=$((pos + size + gap))
            f="$cache/slices/$e"
            dd "if=$source_file" "of=$f" bs=1M iflag=skip_bytes,count_bytes skip="$off" count="$size" status=none
            ins+=("-input=$f")
            echo "$c $e $off $size" >>"$cache/manifest"
        done
        "$llvm_tool" -type=o -bundle-align=4096 -compress "-targets=$targets_csv" "${ins[@]}" \
            "-output=$cache/c$c.ccob"
        # CCOB, version 3, method 1 (zstd), little-endian.
        magic=$(head -c 4 "$cache/c$c.ccob")
        read -r ver method < <(od -An -tu2 -j4 -N4 "$cache/c$c.ccob")
        [[ $magic == CCOB && $ver == 3 && $method == 1 ]] \
            || die "c$c.ccob: magic '$magic', version $ver, method $method (expected CCOB, 3, 1 = zstd)"
        if ((c % 5 == 4 || c == CONTAINERS - 1)); then echo "   $((c + 1)) / $CONTAINERS containers" >&2; fi
    done
    rm -rf "$cache/slices"
    {
        echo '.section .hip_fatbin,"a",@progbits'
        for ((c = 0; c < CONTAINERS; c++)); do
            echo '.p2align 12'
            echo ".incbin \"$cache/c$c.ccob\""
        done
        echo '.text'
        echo '.globl fatbin_bench_entry'
        echo 'fatbin_bench_entry: ret'
    } >"$cache/fatbin.s"
    echo "== linking $so_name (clang + lld)" >&2
    "$LLVM_BIN/clang" -c "$cache/fatbin.s" -o "$cache/fatbin.o"
    "$LLVM_BIN/clang" -fuse-ld=lld -shared -nostdlib "$cache/fatbin.o" -o "$so"
    rm -f "$cache/fatbin.o"
    echo $(($(date +%s) - start)) >"$cache/gen_seconds"
    touch "$cache/done"
}

bench_start fatbin $((TOTAL_MB * 3))
[[ -n ${FRESH:-} || ! -f $cache/done ]] && generate
gen_seconds=$(cat "$cache/gen_seconds")

# The section must be the containers back to back, each padded with zeros
# to 4096 bytes, as lld lays them out.
expect=0
for ((c = 0; c < CONTAINERS; c++)); do
    ((c == 0)) || expect=$(((expect + 4095) / 4096 * 4096))
    expect=$((expect + $(stat -c %s "$cache/c$c.ccob")))
done
# (Name, Type, Address, Off, Size: the index may be split in two fields.)
read -r sec_off sec_size < <("$LLVM_BIN/llvm-readelf" -S --wide "$so" \
    | awk '{for (i = 1; i < NF; i++) if ($i == ".hip_fatbin") print $(i + 3), $(i + 4)}')
[[ -n ${sec_size:-} && $((16#$sec_size)) -eq $expect ]] || die ".hip_fatbin is ${sec_size:-?} (hex) bytes, expected $expect"
sec_off=$((16#$sec_off)) sec_size=$((16#$sec_size))
so_size=$(stat -c %s "$so")
ccob_total=$(cat "$cache"/c*.ccob | wc -c)
decomp_total=0
for ((c = 0; c < CONTAINERS; c++)); do
    decomp_total=$((decomp_total + $(od -An -tu8 -j16 -N8 "$cache/c$c.ccob")))
done
payload_total=$(awk '{s += $4} END {printf "%.0f", s}' "$cache/manifest")

# --- our C ABI program --------------------------------------------------------
capi_lib=${CAPI_LIB:-}
if [[ -z $capi_lib ]]; then
    tdir="${CARGO_TARGET_DIR:-$bench_root/target}/release"
    if [[ -z ${OURS:-} ]]; then
        echo "== building clangoffload-capi (release)" >&2
        (cd "$bench_root" && cargo build --release -p clangoffload-capi --quiet)
    fi
    for f in "$tdir/libclangoffload_capi.a" "$tdir/libclangoffload.a"; do
        [[ -z $capi_lib && -f $f ]] && capi_lib=$f
    done
fi
select_bin=
if [[ -n $capi_lib && -f $capi_lib ]]; then
    select_bin="$work/bin/select-device"
    cc -O2 -I"$bench_root/include" "$bench_root/benches/select-device.c" "$capi_lib" \
        -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$select_bin" \
        || die "could not build select-device.c against $capi_lib"
else
    echo "== no libclangoffload_capi.a (set CAPI_LIB): the C ABI rows are left out" >&2
fi

# GNU time, for peak RSS.
if [[ ! -x /usr/bin/time && -z ${NO_INSTALL:-} ]] && command -v apt-get >/dev/null 2>&1; then
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo -n)
    echo "== installing time" >&2
    "${sudo_cmd[@]}" apt-get install -y -qq time >/dev/null 2>&1 \
        || { "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 \
            && "${sudo_cmd[@]}" apt-get install -y -qq time >/dev/null 2>&1; } || true
fi

# --- helpers ------------------------------------------------------------------
declare -A failed=() rss=()
fail_row() { # name message
    failed[$1]=$2
    echo "FAIL $1: $2" >&2
}
# Runs a command, its stdout to $2 and stderr to $work/err; on failure
# records FAIL for NAME with the first error line.
attempt() { # name stdout-file command...
    local name=$1 stdout=$2
    shift 2
    local rc=0
    "$@" >"$stdout" 2>"$work/err" || rc=$?
    ((rc)) || return 0
    local msg
    if ((rc > 128)); then
        # A crash: the first frame of LLVM's stack dump outside its signal handler.
        msg=$(awk '/#[0-9]+ 0x/ && /::/ && !/llvm::sys::/ {sub(/^ *#[0-9]+ 0x[0-9a-f]+ /, ""); print "in " $0; exit}' "$work/err")
        fail_row "$name" "killed by SIG$(kill -l $((rc - 128)))${msg:+ $msg}"
    else
        msg=$(grep -m1 . "$work/err" || echo '(no message)')
        fail_row "$name" "exit $rc: $msg"
    fi
    return 1
}
peak_rss() { # name command...
    local name=$1
    shift
    [[ -x /usr/bin/time ]] || return 0
    rss[$name]=$(/usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 && tail -1 "$work/rss") || true
}
mkdir -p "$out/scratch" "$out/llvm-x" "$out/ours-x" "$out/llvm-one" "$out/ours-one" "$out/capi"
ln -s "$so" "$out/scratch/$so_name"
cat "$so" >/dev/null

# The loops, as scripts: one process per container.
{
    echo 'set -e'
    for ((c = 0; c < CONTAINERS; c++)); do
        printf '%q -type=o -unbundle %q %q' "$llvm_tool" "-targets=$targets_csv" "-input=$cache/c$c.ccob"
        for ((e = 0; e <= n_dev; e++)); do printf ' %q' "-output=$out/llvm-x/c$c.e$e"; done
        echo
    done
} >"$work/llvm-unbundle-all.sh"
one_loop() { # tool outdir
    echo 'set -e'
    for ((c = 0; c < CONTAINERS; c++)); do
        printf '%q -type=o -unbundle %q %q %q\n' "$1" "-targets=$one_target" \
            "-input=$cache/c$c.ccob" "-output=$2/c$c.o"
    done
}
one_loop "$llvm_tool" "$out/llvm-one" >"$work/llvm-one.sh"
one_loop "$ours_tool" "$out/ours-one" >"$work/ours-one.sh"
total_ids=$((CONTAINERS * ENTRIES))
# Entry ID -> entry number in the names of LLVM's outputs (llvm-x/c<c>.e<e>).
declare -A entry_of=([$host_target-]=0 [$host_target]=0)
for ((e = 1; e <= n_dev; e++)); do entry_of[hipv4-amdgcn-amd-amdhsa--${devices[e - 1]}]=$e; done

# --- verify -------------------------------------------------------------------
echo "== checking outputs" >&2
# LLVM's unbundling of every container, checked against the slices.
bash "$work/llvm-unbundle-all.sh"
while read -r c e off size; do
    f="$out/llvm-x/c$c.e$e"
    if [[ $(stat -c %s "$f") -ne $size ]] || ! cmp -s -i "0:$off" -n "$size" "$f" "$source_file"; then
        die "LLVM's -unbundle of c$c entry $e is not the slice it was made from"
    fi
done <"$cache/manifest"
for ((c = 0; c < CONTAINERS; c++)); do
    [[ ! -s $out/llvm-x/c$c.e0 ]] || die "c$c: the host entry is not empty"
    "$llvm_tool" -type=o -list "-input=$cache/c$c.ccob"
done | sort >"$work/llvm-list.txt"
[[ $(wc -l <"$work/llvm-list.txt") -eq $total_ids ]] || die "LLVM's -list gave $(wc -l <"$work/llvm-list.txt") IDs"
echo "   LLVM: -unbundle of all $total_ids entries equals the slices; -list: $total_ids IDs" >&2

# llvm-readobj --offloading and llvm-objdump --offloading: what they print.
llvm_ok_readobj=0 llvm_ok_objdump=0
if attempt llvm.readobj "$work/readobj.txt" "$LLVM_BIN/llvm-readobj" --offloading "$so"; then
    llvm_ok_readobj=1
    readobj_ids=$(grep -c 'file://' "$work/readobj.txt" || true)
fi
cd "$out/scratch"
attempt llvm.objdump "$work/objdump.txt" "$LLVM_BIN/llvm-objdump" --offloading "$so_name" && llvm_ok_objdump=1
# What it extracted (<name>.<bundle>.<entry ID>), against LLVM's bundler.
objdump_ids=0 objdump_wrong=0
for f in "$so_name".*; do
    [[ -f $f ]] || continue
    objdump_ids=$((objdump_ids + 1))
    rest=${f#"$so_name".}
    c=${rest%%.*} id=${rest#*.}
    e=${entry_of[$id]:-x}
    cmp -s "$f" "$out/llvm-x/c$c.e$e" || objdump_wrong=$((objdump_wrong + 1))
done
rm -f "$out/scratch/$so_name".*
cd - >/dev/null

# list
ok_list=0
if attempt ours.list "$work/ours-list.txt" "$ours_bin" list "$so"; then
    n=$(wc -l <"$work/ours-list.txt")
    if [[ $n -ne $total_ids ]]; then
        fail_row ours.list "printed $n lines, expected $total_ids"
    elif ! cmp -s <(sort "$work/ours-list.txt") "$work/llvm-list.txt"; then
        fail_row ours.list "IDs differ from LLVM's -list of each container"
    else
        ok_list=1
    fi
fi

# inspect --json
ok_inspect=0
if attempt ours.inspect "$work/ours.json" "$ours_bin" inspect --json "$so"; then
    ok_inspect=1
    json_compressed=$({ grep -o '"kind":"compressed[a-z_]*"' "$work/ours.json" || true; } | wc -l)
fi

# extract (MD5 checked): every output against LLVM's, mapped by container
# (file order) and entry ID (the name's end).
ok_extract=0
if attempt ours.extract "$work/ours-extract.txt" "$ours_bin" extract "$so" -o "$out/ours-x"; then
    n=$(wc -l <"$work/ours-extract.txt")
    if [[ $n -ne $total_ids ]]; then
        fail_row ours.extract "wrote $n files, expected $total_ids"
    else
        i=0 bad=
        while read -r path; do
            c=$((i / ENTRIES))
            rest=${path##*/}
            rest=${rest#"$so_name".}
            id=${rest#*.}
            e=${entry_of[$id]:-}
            if [[ -z $e ]]; then bad="unexpected output name $path"; break; fi
            if ! cmp -s "$path" "$out/llvm-x/c$c.e$e"; then bad="$path differs from LLVM's c$c entry $id"; break; fi
            i=$((i + 1))
        done <"$work/ours-extract.txt"
        if [[ -n $bad ]]; then fail_row ours.extract "$bad"; else ok_extract=1; fi
    fi
fi
rm -rf "${out:?}/ours-x"/*

# -unbundle of DEVICE per container, ours through the symlink.
bash "$work/llvm-one.sh"
ok_one=0
if attempt ours.one "$work/ours-one.txt" bash "$work/ours-one.sh"; then
    ok_one=1
    for ((c = 0; c < CONTAINERS; c++)); do
        cmp -s "$out/llvm-one/c$c.o" "$out/ours-one/c$c.o" \
            || { fail_row ours.one "c$c: -unbundle $one_target differs from LLVM's"; ok_one=0; break; }
    done
fi
# What our bundler does with the whole library as -type=o input (LLVM's
# looks for __CLANG_OFFLOAD_BUNDLE__ sections and finds none).
so_unbundle="exit 0"
"$ours_tool" -type=o -unbundle "-targets=$one_target" "-input=$so" "-output=$out/ours-one/so.o" \
    >"$work/so-one.txt" 2>&1 || so_unbundle="exit $?: $(grep -m1 . "$work/so-one.txt" || true)"
if [[ $so_unbundle == "exit 0" ]]; then
    if cmp -s "$out/ours-one/so.o" "$out/llvm-one/c0.o"; then
        so_unbundle+=", the first container's $DEVICE entry"
    else
        so_unbundle+=", $(stat -c %s "$out/ours-one/so.o") bytes, not the first container's $DEVICE entry"
    fi
fi
llvm_so_unbundle="exit 0"
"$llvm_tool" -type=o -unbundle "-targets=$one_target" "-input=$so" "-output=$out/llvm-one/so.o" \
    >"$work/so-one.txt" 2>&1 || llvm_so_unbundle="exit $?: $(grep -m1 . "$work/so-one.txt" || true)"
rm -f "$out/ours-one/so.o" "$out/llvm-one/so.o"

# The C ABI: both modes must give the bytes LLVM unbundles from container 0.
ok_capi=0
if [[ -n $select_bin ]]; then
    ok_capi=1
    for mode in select full full-hash; do
        if attempt "capi.$mode" "$work/capi-$mode.txt" "$select_bin" "$so" "$mode" "$DEVICE" "$out/capi/$mode.o"; then
            read -r cid csize <"$work/capi-$mode.txt"
            if [[ $cid != "$one_target" ]] || ! cmp -s "$out/capi/$mode.o" "$out/llvm-one/c0.o"; then
                fail_row "capi.$mode" "chose $cid ($csize B), not LLVM's $one_target of the first container"
            fi
        fi
        [[ -n ${failed[capi.$mode]:-} ]] && ok_capi=0
    done
    capi_line=$(cat "$work/capi-select.txt" 2>/dev/null || true)
    # The device whose entry holds the middle byte of the first container's
    # decompressed bundle: the issue's "entry mid-bundle" (DEVICE is
    # gfx1100, whose entry ends about 63% of the way in). Checked against
    # LLVM's bundler on that container.
    mid_device=$("$ours_bin" inspect --json "$cache/c0.ccob" |
        grep -o '"uncompressed_size":[0-9]*\|"id":"[^"]*","offset":[0-9]*,"size":[0-9]*' |
        awk -F'[:,"]+' '/uncompressed_size/ {half = $3 / 2; next}
            $4 == "offset" && $5 <= half && half < $5 + $7 {sub(/.*--/, "", $3); print $3}')
    mid_target=hipv4-amdgcn-amd-amdhsa--$mid_device
    if [[ -n $mid_device ]] &&
        "$llvm_tool" -type=o -unbundle "-targets=$mid_target" "-input=$cache/c0.ccob" \
            "-output=$out/capi/llvm-mid.o" >/dev/null 2>&1 &&
        attempt capi.select_mid "$work/capi-select-mid.txt" "$select_bin" "$so" select "$mid_device" "$out/capi/select-mid.o"; then
        read -r cid csize <"$work/capi-select-mid.txt"
        if [[ $cid != "$mid_target" ]] || ! cmp -s "$out/capi/select-mid.o" "$out/capi/llvm-mid.o"; then
            fail_row capi.select_mid "chose $cid ($csize B), not LLVM's $mid_target of the first container"
        fi
    else
        [[ -n ${failed[capi.select_mid]:-} ]] ||
            fail_row capi.select_mid "no mid-bundle device found, or LLVM could not unbundle it"
    fi
    [[ -n ${failed[capi.select_mid]:-} ]] && ok_capi=0
    capi_mid_line=$(cat "$work/capi-select-mid.txt" 2>/dev/null || true)
fi
echo "   checks done: ${#failed[@]} FAIL" >&2

# --- time ---------------------------------------------------------------------
((llvm_ok_readobj)) && timed llvm.readobj "$LLVM_BIN/llvm-readobj" --offloading "$so"
((ok_list)) && timed ours.list "$ours_bin" list "$so"
if ((llvm_ok_objdump)); then
    cd "$out/scratch"
    timed llvm.objdump "$LLVM_BIN/llvm-objdump" --offloading "$so_name"
    rm -f "$so_name".*
    cd - >/dev/null
fi
((ok_inspect)) && timed ours.inspect "$ours_bin" inspect --json "$so"
timed llvm.extract bash "$work/llvm-unbundle-all.sh"
rm -rf "${out:?}/llvm-x"/*
if ((ok_extract)); then
    # --force: overwrite the last run's files, as LLVM's bundler does.
    timed ours.extract "$ours_bin" extract "$so" -o "$out/ours-x" --force
    timed ours_nohash.extract env CLANGOFFLOAD_SKIP_HASH_CHECK=1 "$ours_bin" extract "$so" -o "$out/ours-x" --force
    rm -rf "${out:?}/ours-x"/*
fi
timed llvm.one bash "$work/llvm-one.sh"
((ok_one)) && timed ours.one bash "$work/ours-one.sh"
if ((ok_capi)); then
    timed capi.select "$select_bin" "$so" select "$DEVICE"
    timed capi.select_mid "$select_bin" "$so" select "$mid_device"
    timed capi.full "$select_bin" "$so" full "$DEVICE"
    timed capi.full_hash "$select_bin" "$so" full-hash "$DEVICE"
fi

# Peak RSS, one run each (a loop: the largest of its processes).
echo "== peak RSS" >&2
((llvm_ok_readobj)) && peak_rss llvm.readobj "$LLVM_BIN/llvm-readobj" --offloading "$so"
peak_rss ours.list "$ours_bin" list "$so"
if ((llvm_ok_objdump)); then
    cd "$out/scratch"
    peak_rss llvm.objdump "$LLVM_BIN/llvm-objdump" --offloading "$so_name"
    rm -f "$so_name".*
    cd - >/dev/null
fi
peak_rss ours.inspect "$ours_bin" inspect --json "$so"
peak_rss ours.verify "$ours_bin" inspect --verify "$so"
peak_rss llvm.extract bash "$work/llvm-unbundle-all.sh"
rm -rf "${out:?}/llvm-x"/*
peak_rss ours.extract "$ours_bin" extract "$so" -o "$out/ours-x"
rm -rf "${out:?}/ours-x"/*
peak_rss llvm.one bash "$work/llvm-one.sh"
peak_rss ours.one bash "$work/ours-one.sh"
if [[ -n $select_bin ]]; then
    peak_rss capi.select "$select_bin" "$so" select "$DEVICE"
    peak_rss capi.full "$select_bin" "$so" full "$DEVICE"
    peak_rss capi.full_hash "$select_bin" "$so" full-hash "$DEVICE"
fi

# --- report -------------------------------------------------------------------
row() { # label first second: compare_row, or the side that failed
    if [[ -n ${res[$2]:-} && -n ${res[$3]:-} ]]; then
        compare_row "$@"
        return
    fi
    local side ab am bb bm
    read -r ab am <<<"${res[$2]:-FAIL FAIL}"
    read -r bb bm <<<"${res[$3]:-FAIL FAIL}"
    for side in ab am bb bm; do [[ ${!side} == FAIL ]] || printf -v "$side" '%s' "$(fmt_time "${!side}")"; done
    printf '| %-44s | %10s | %10s | %7s | %10s | %10s | %7s |\n' "$1" "$ab" "$bb" - "$am" "$bm" -
}
mib() { [[ -n ${rss[$1]:-} ]] && awk -v k="${rss[$1]}" 'BEGIN {printf "%.0f MiB", k/1024}' || echo "-"; }

report_head "A HIP library's .hip_fatbin: $CONTAINERS compressed bundles x $ENTRIES entries, LLVM 22 vs clangoffload"
echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "file: $so_name $so_size B ($(awk -v s="$so_size" 'BEGIN {printf "%.1f MB", s/1e6}')); .hip_fatbin $sec_size B at $sec_off: $CONTAINERS CCOB v3 zstd 3 bundles ($ccob_total B), 4096-aligned"
echo "decompressed: $decomp_total B ($(awk -v s="$decomp_total" 'BEGIN {printf "%.2f GB", s/1e9}'), $(awk -v a="$decomp_total" -v b="$ccob_total" 'BEGIN {printf "%.2f:1", a/b}')); $total_ids entries, $((CONTAINERS * n_dev)) device payloads of $payload_total B cut from $(basename "$source_file")"
echo "generation: $gen_seconds s (cached in $cache); DEVICE=$DEVICE (entry $dev_pos of $ENTRIES)"
echo
compare_table LLVM ours
row "readobj --offloading / list" llvm.readobj ours.list
row "objdump --offloading / inspect --json" llvm.objdump ours.inspect
row "${CONTAINERS}x -unbundle all / extract (MD5)" llvm.extract ours.extract
row "${CONTAINERS}x -unbundle all / extract, no MD5" llvm.extract ours_nohash.extract
row "${CONTAINERS}x -unbundle $DEVICE (ours: MD5)" llvm.one ours.one
if [[ -n $select_bin ]]; then
    echo
    echo "C ABI, first container ($(awk -v s="$(od -An -tu8 -j16 -N8 "$cache/c0.ccob")" 'BEGIN {printf "%.1f MB", s/1e6}') decompressed), $DEVICE: ${capi_line:-FAIL}"
    echo
    compare_table full sel
    row "decompress all, no MD5 / select, no MD5" capi.full capi.select
    row "decompress all + MD5 / select, no MD5" capi.full_hash capi.select
    echo
    echo "The same container, the entry holding its middle byte ($mid_device): ${capi_mid_line:-FAIL}"
    echo
    compare_table full sel
    row "decompress all, no MD5 / select $mid_device" capi.full capi.select_mid
fi
echo
echo "Peak RSS (GNU time %M; a loop: its largest process):"
echo
printf '| %-40s | %10s | %-36s | %10s |\n' LLVM "peak RSS" ours "peak RSS"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..38})" "$(printf -- '-%.0s' {1..12})"
printf '| %-40s | %10s | %-36s | %10s |\n' "llvm-readobj --offloading" "$(mib llvm.readobj)" "list" "$(mib ours.list)"
printf '| %-40s | %10s | %-36s | %10s |\n' "llvm-objdump --offloading" "$(mib llvm.objdump)" "inspect --json" "$(mib ours.inspect)"
printf '| %-40s | %10s | %-36s | %10s |\n' "bundler -unbundle all, per container" "$(mib llvm.extract)" "extract" "$(mib ours.extract)"
printf '| %-40s | %10s | %-36s | %10s |\n' "(none: LLVM checks no hash)" "-" "inspect --verify" "$(mib ours.verify)"
printf '| %-40s | %10s | %-36s | %10s |\n' "bundler -unbundle $DEVICE, per container" "$(mib llvm.one)" "-unbundle $DEVICE, per container" "$(mib ours.one)"
if [[ -n $select_bin ]]; then
    printf '| %-40s | %10s | %-36s | %10s |\n' "C ABI: decompress all (no MD5 / MD5)" "$(mib capi.full) / $(mib capi.full_hash)" "C ABI: select" "$(mib capi.select)"
fi
echo
echo "LLVM's tools on the library: llvm-readobj --offloading printed ${readobj_ids:-?} entry lines of $total_ids; llvm-objdump --offloading wrote $objdump_ids files of $total_ids, $objdump_wrong of them not the bytes LLVM's bundler unbundles${json_compressed:+; inspect --json: $json_compressed compressed bundles}"
echo "-unbundle -type=o -input=$so_name -targets=$one_target: ours $so_unbundle; LLVM $llvm_so_unbundle"
# A failure of LLVM's tools is reported; one of ours also fails the script.
if ((${#failed[@]})); then
    echo
    status=0
    for name in "${!failed[@]}"; do
        echo "FAIL $name: ${failed[$name]}"
    done | sort
    for name in "${!failed[@]}"; do [[ $name == llvm.* ]] || status=1; done
    exit "$status"
fi
