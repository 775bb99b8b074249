#!/usr/bin/env bash
# Production libraries nobody here built, against the reference tools: every
# image `clangoffload extract` writes from a CUDA library is compared with
# what `cuobjdump -all -xelf all -xptx all` 13.5 writes (names and bytes),
# and every entry it writes from a ROCm library with what LLVM 22's
# clang-offload-bundler unbundles from the same container, one target at a
# time (asked for all at once, LLVM 22 fails on LLVM 15/16's host IDs:
# docs/differences.md). Times and peak RSS of both sides are printed.
#
#   benches/real-libraries.sh                     # bitsandbytes + Debian ROCm
#   EXTRA_WHEELS="nvidia-cublas==13.10.0.20" benches/real-libraries.sh
#
# Downloads (never committed; cached in REAL_CACHE): bitsandbytes 0.50.2's
# wheel (7 CUDA libraries, relocatable cubins whose memory reservations hold
# no file bytes), NVIDIA's cuobjdump wheel, EXTRA_WHEELS (pip specs, every
# CUDA library in them), and Debian's librocrand1 and librocsparse0
# (apt-get download; ROCM_DEBS to change them).
#
# Environment:
#   OURS         the tool [target/release/clangoffload, built if missing]
#   LLVM_BIN     [/usr/lib/llvm-22/bin]
#   REAL_CACHE   downloads [${TMPDIR:-/tmp}/clangoffload-real-cache]
#   WORK         scratch for the outputs [a new directory under TMPDIR]
#   EXTRA_WHEELS more wheels (pip specs, space-separated)
#   ROCM_DEBS    Debian packages [librocrand1 librocsparse0]
# Exits 1 if any library differs (each difference is printed), 0 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OURS=${OURS:-target/release/clangoffload}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
cache=${REAL_CACHE:-${TMPDIR:-/tmp}/clangoffload-real-cache}
work=${WORK:-$(mktemp -d)}
ROCM_DEBS=${ROCM_DEBS:-librocrand1 librocsparse0}
mkdir -p "$cache" "$work"
[[ -x $OURS ]] || cargo build -q --release -p clangoffload-cli
OURS=$(realpath "$OURS")
status=0
fail() {
    echo "FAIL $*"
    status=1
}
# Seconds and peak RSS (MiB) of a command: "<s> <MiB>" on fd 3.
measure() {
    /usr/bin/time -f '%e %M' -o "$work/time" "$@"
    local rc=$?
    # GNU time's last line (a failing command adds one before it).
    tail -1 "$work/time" | awk '{printf "%s s, %.0f MiB", $1, $2 / 1024}' >&3
    return $rc
}

# --- downloads ------------------------------------------------------------------
# shellcheck source=lib/downloads.sh
source benches/lib/downloads.sh
cuobjdump=$(find "$(wheel nvidia-cuda-cuobjdump==13.5.37)" -name cuobjdump -type f | head -1)
chmod +x "$cuobjdump"
# Each library goes where its device code is: CUDA fat binaries to the
# cuobjdump comparison, offload bundles to LLVM's (both, if it has both).
cuda_libs=() rocm_libs=()
classify() {
    local lib=$1 json
    json=$("$OURS" inspect --json "$lib" 2>/dev/null) || true
    [[ $json == *'"cuda_fatbins":[{'* ]] && cuda_libs+=("$lib")
    [[ $json == *'"containers":[{'* ]] && rocm_libs+=("$lib")
    return 0
}
for spec in bitsandbytes==0.50.2 ${EXTRA_WHEELS:-}; do
    while IFS= read -r lib; do classify "$lib"; done < <(find "$(wheel "$spec")" -name '*.so*' -type f | sort)
done
for deb in $ROCM_DEBS; do
    while IFS= read -r lib; do classify "$lib"; done < <(find "$(debian "$deb")" -name '*.so*' -type f | sort)
done

# --- CUDA: every image against cuobjdump ----------------------------------------
echo "| CUDA library | images (ours / cuobjdump) | identical | ours | cuobjdump |"
echo "|---|---|---|---|---|"
for lib in "${cuda_libs[@]}"; do
    name=$(basename "$lib")
    ours_dir="$work/ours-$name" theirs_dir="$work/cuobjdump-$name"
    rm -rf "$ours_dir" "$theirs_dir"
    mkdir -p "$ours_dir" "$theirs_dir"
    ours_time=$( { measure "$OURS" extract "$lib" -o "$ours_dir" >/dev/null 2>"$work/ours-err"; } 3>&1) ||
        fail "$name: ours: $(head -c 300 "$work/ours-err")"
    their_time=$( { (cd "$theirs_dir" && measure "$cuobjdump" -all -xelf all -xptx all "$lib" >/dev/null 2>"$work/their-err"); } 3>&1) || true
    ours_n=$(find "$ours_dir" -type f | wc -l)
    their_n=$(find "$theirs_dir" -type f | wc -l)
    same=0
    while IFS= read -r f; do
        if [[ -f $ours_dir/$f ]] && cmp -s "$ours_dir/$f" "$theirs_dir/$f"; then
            same=$((same + 1))
        else
            fail "$name: $f differs from cuobjdump's"
        fi
    done < <(cd "$theirs_dir" && find . -type f -printf '%P\n')
    note=""
    if grep -q 'Invalid ELF' "$work/their-err"; then
        note=" (cuobjdump: Invalid ELF after $their_n; differences.md)"
    elif ((ours_n != their_n)); then
        fail "$name: $ours_n images, cuobjdump $their_n"
    fi
    echo "| $name | $ours_n / $their_n$note | $same | $ours_time | $their_time |"
    rm -rf "$ours_dir" "$theirs_dir"
done

# --- ROCm: every entry against LLVM 22, container by container ------------------
# LLVM 22 is asked for each entry alone; where it refuses ("invalid bundle id
# read from the bundle": it met LLVM 15/16's 3-dash host ID first, in hash
# order), an independent reader of the bundle header (here, in Python) says
# which bytes the entry holds.
echo
echo "| ROCm library | containers | entries | = LLVM 22 | = header reader (LLVM refuses) | ours extract |"
echo "|---|---|---|---|---|---|"
for lib in "${rocm_libs[@]}"; do
    name=$(basename "$lib")
    ours_dir="$work/ours-$name"
    rm -rf "$ours_dir"
    mkdir -p "$ours_dir"
    ours_time=$( { measure "$OURS" extract "$lib" -o "$ours_dir" >"$work/paths" 2>"$work/ours-err"; } 3>&1) ||
        fail "$name: ours: $(head -c 300 "$work/ours-err")"
    "$OURS" inspect --json "$lib" >"$work/inspect.json"
    result=$(python3 - "$lib" "$work/inspect.json" "$ours_dir" "$LLVM_BIN/clang-offload-bundler" "$work" <<'PY'
import json, os, struct, subprocess, sys
lib, report, ours, bundler, work = sys.argv[1:6]
report = json.load(open(report))
name = os.path.basename(lib)
data = open(lib, "rb").read()
index = llvm = reader = 0
failures = []
for c in report["containers"]:
    bundle = data[c["offset"]:c["offset"] + c["size"]]
    # The header, read independently: magic, count, then offset, size, ID.
    payloads, at = {}, 24
    if c["kind"] == "bundle":
        (count,) = struct.unpack_from("<Q", bundle, at); at += 8
        for _ in range(count):
            offset, size, idlen = struct.unpack_from("<QQQ", bundle, at); at += 24
            payloads[bundle[at:at + idlen].decode()] = bundle[offset:offset + size]; at += idlen
    path = os.path.join(work, "container")
    open(path, "wb").write(bundle)
    for e in c["entries"]:
        mine = open(os.path.join(ours, f"{name}.{index}.{e['id']}"), "rb").read()
        index += 1
        out = os.path.join(work, "llvm-entry")
        run = subprocess.run([bundler, "-type=o", "-unbundle", "-input=" + path,
                              "-targets=" + e["id"], "-output=" + out],
                             capture_output=True, text=True)
        if run.returncode == 0 and open(out, "rb").read() == mine:
            llvm += 1
        elif (run.returncode != 0 and e["id"] in payloads and payloads[e["id"]] == mine
              and ("invalid bundle id" in run.stderr or "Targets need to follow" in run.stderr)):
            reader += 1
        else:
            failures.append(f"entry {index - 1} ({e['id']}) at {c['offset']}: {run.stderr.strip()[:120]}")
print(len(report["containers"]), index, llvm, reader)
for f in failures[:20]:
    print("FAIL", f)
PY
)
    read -r containers entries llvm reader <<<"$(head -1 <<<"$result")"
    if grep -q '^FAIL' <<<"$result"; then
        status=1
        grep '^FAIL' <<<"$result" | sed "s/^FAIL /FAIL $name: /"
    fi
    [[ $(wc -l <"$work/paths") -eq $entries ]] || fail "$name: $(wc -l <"$work/paths") paths printed, $entries entries"
    echo "| $name | $containers | $entries | $llvm | $reader | $ours_time |"
    rm -rf "$ours_dir"
done
exit $status
