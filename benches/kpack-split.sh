#!/usr/bin/env bash
# `clangoffload kpack split` of Debian's rocSPARSE (librocsparse0 5.3: 111
# bundles x 7 device entries, 1.3 GB) against rocm-kpack's own splitter
# (zstd-per-kernel, as rocm-systems splits; ../shared/kpack/run_rocsparse.sh,
# its output in /tmp/kpack-probe/out-sparse):
#   - wall time and peak RSS of our split (`/usr/bin/time -f '%e s %M KiB'`,
#     niced, run once);
#   - our split host byte for byte rocm-kpack's;
#   - our 7 archives: the same tables as rocm-kpack's (key, architecture,
#     ID, ordinal, size of every entry, in order);
#   - our split host read back through our archives (`clangoffload
#     extract`): every code object the bytes of the original's entry for
#     that record and architecture, 777 of 777.
# rocm-kpack's figures are those run_rocsparse.sh measured (kpack.md §6;
# THEIRS_SECS, THEIRS_KIB to give others; RERUN=1 runs it again first).
#
#   benches/kpack-split.sh
#
# Needs the /tmp/kpack-probe setup of ../shared/kpack (kpack.md §6).
# Nothing is committed; the outputs go to a temporary directory.
#
# Environment: OURS [target/release/clangoffload], SHARED [../shared/kpack],
# P [/tmp/kpack-probe], RERUN [0], THEIRS_SECS [368], THEIRS_KIB [3843100].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OURS=${OURS:-target/release/clangoffload}
SHARED=${SHARED:-$(pwd)/../shared/kpack}
P=${P:-/tmp/kpack-probe}
[[ -x $OURS ]] || cargo build -q --release -p clangoffload-cli
OURS=$(realpath "$OURS")
if [[ ${RERUN:-0} == 1 || ! -d $P/out-sparse ]]; then
    bash "$SHARED/run_rocsparse.sh"
fi
orig=$P/deb/x/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
theirs=$P/out-sparse
work=$(mktemp -d /tmp/kpack-split.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The splitter's layout: the library under its prefix, one level down.
mkdir -p "$work/art/lib"
ln -s "$orig" "$work/art/lib/librocsparse.so.0.1"

echo "== clangoffload kpack split (zstd-per-kernel)" >&2
/usr/bin/time -f '%e s %M KiB' -o "$work/time.txt" nice -n 10 "$OURS" kpack split \
    "$work/art/lib/librocsparse.so.0.1" --group sparse_lib --prefix rocsparse/stage \
    --root "$work/art" -o "$work/out" > "$work/written.txt"
read -r secs _ kib _ < "$work/time.txt"
cat "$work/written.txt" >&2

host=$work/out/lib/librocsparse.so.0.1
their_host=$theirs/sparse_lib_generic/rocsparse/stage/lib/librocsparse.so.0.1
if cmp -s "$host" "$their_host"; then host_same=yes; else host_same=NO; fi

tables=0
for archive in "$work"/out/.kpack/*.kpack; do
    name=$(basename "$archive")
    arch=${name#sparse_lib_}; arch=${arch%.kpack}
    other=$theirs/sparse_lib_$arch/rocsparse/stage/.kpack/$name
    if python3 - "$archive" "$other" "$OURS" <<'PY'
import json, subprocess, sys
def table(path):
    out = subprocess.run([sys.argv[3], "inspect", "--json", path], check=True, capture_output=True).stdout
    k = json.loads(out)["kpack"]
    return [k["scheme"], k["group_name"], k["arch_family"], k["arches"],
            [(e["key"], e["arch"], e["id"], e["ordinal"], e["original_size"]) for e in k["entries"]]]
sys.exit(0 if table(sys.argv[1]) == table(sys.argv[2]) else 1)
PY
    then tables=$((tables + 1)); else echo "DIFFERENT table: $name" >&2; fi
done

echo "== the original's code objects, and the split host read back" >&2
"$OURS" extract "$orig" -o "$work/orig" > "$work/orig.txt"
"$OURS" extract "$host" -o "$work/split" > "$work/split.txt"
read -r same total < <(python3 - "$work/orig.txt" "$work/split.txt" <<'PY'
import sys, os, collections
by_arch = collections.defaultdict(list)
for path in open(sys.argv[1]).read().split():
    name = os.path.basename(path)
    if ".host-" in name or "--" not in name:
        continue
    by_arch[name.rsplit("--", 1)[1]].append(path)
same = 0
for path in open(sys.argv[2]).read().split():
    name = os.path.basename(path)
    left, arch = name.rsplit("--", 1)
    k = int(left.split(".hipv4-")[0].rsplit("_", 1)[1])
    if open(path, "rb").read() == open(by_arch[arch][k], "rb").read():
        same += 1
    else:
        print(f"DIFFERENT {name}", file=sys.stderr)
print(same, sum(len(v) for v in by_arch.values()))
PY
)
# rocm-kpack's splitter on the same file, niced on these 2 shared cores
# (kpack.md §6): 6 min 08 s, 3.84 GB peak (3,843,100 KiB).
theirs_secs=${THEIRS_SECS:-368} theirs_kib=${THEIRS_KIB:-3843100}
printf '| %-30s | %10s | %12s |\n' "split of rocSPARSE (1.3 GB)" "wall" "peak RSS"
printf '| %-30s | %9ss | %8s MiB |\n' "clangoffload kpack split" "$secs" $((kib / 1024))
printf '| %-30s | %9ss | %8s MiB |\n' "rocm-kpack split_artifacts" "$theirs_secs" $((theirs_kib / 1024))
echo "ratio: $(python3 -c "print(f'{$theirs_secs / $secs:.1f}x')") faster"
echo "host byte for byte rocm-kpack's: $host_same"
echo "archive tables as rocm-kpack's: $tables of 7"
echo "read back: $same of $total code objects the original's bytes"
[[ $host_same == yes && $tables == 7 && $same == 777 && $total == 777 ]] || { echo FAIL >&2; exit 1; }
