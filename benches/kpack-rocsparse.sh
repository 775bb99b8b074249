#!/usr/bin/env bash
# Debian's rocSPARSE (librocsparse0 5.3: 111 bundles x 7 device entries,
# 1.3 GB) split by rocm-kpack's own splitter (zstd-per-kernel, as
# rocm-systems splits), then read through by clangoffload:
#   - every code object `extract` gets from the split host through its 7
#     archives must be the bytes of the original library's entry the
#     splitter keyed it by (record k, architecture a: the k-th code object
#     for a in file order): 777 of 777;
#   - `list` and `extract` of the split host timed against rocm-kpack's own
#     Python reader doing the same work (PackedKernelArchive.read of the 7
#     archives, every key `<kernel_name>#<k>` looked up; get_kernel of each
#     and a file written), best of RUNS, with peak RSS.
#
#   benches/kpack-rocsparse.sh
#
# Needs the /tmp/kpack-probe setup of ../shared/kpack (kpack.md §6: a git
# archive of ROCm/rocm-kpack, a Python >= 3.12 venv with msgpack and
# zstandard); runs ../shared/kpack/run_rocsparse.sh first when its output is
# missing (about 6 min and 3.8 GB here). Nothing is committed.
#
# Environment: OURS [target/release/clangoffload], RUNS [3], SHARED
# [../shared/kpack], P [/tmp/kpack-probe].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OURS=${OURS:-target/release/clangoffload}
RUNS=${RUNS:-3}
SHARED=${SHARED:-$(pwd)/../shared/kpack}
P=${P:-/tmp/kpack-probe}
[[ -x $OURS ]] || cargo build -q --release -p clangoffload-cli
OURS=$(realpath "$OURS")
[[ -d $P/out-sparse ]] || bash "$SHARED/run_rocsparse.sh"
orig=$P/deb/x/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
tree=$P/install-sparse
rm -rf "$tree" && mkdir -p "$tree"
for d in "$P"/out-sparse/*/; do cp -a "$d". "$tree/"; done
host=$tree/rocsparse/stage/lib/librocsparse.so.0.1
work=$(mktemp -d /dev/shm/kpack-rocsparse.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== the original's code objects (clangoffload extract)" >&2
"$OURS" extract "$orig" -o "$work/orig" > "$work/orig.txt"
echo "== the split host read through its archives" >&2
"$OURS" extract "$host" -o "$work/split" > "$work/split.txt"
checked=$(python3 - "$work/orig.txt" "$work/split.txt" <<'PY'
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
echo "code objects: $checked (same bytes, of the original's device entries)"

cat > "$work/reader.py" <<'PY'
import sys, pathlib
from rocm_kpack.kpack import PackedKernelArchive
mode, kpack_dir, name, count, out = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), pathlib.Path(sys.argv[5])
archives = [PackedKernelArchive.read(p) for p in sorted(kpack_dir.glob("*.kpack"))]
n = 0
for k in range(count):
    key = f"{name}#{k}"
    for a in archives:
        for arch in a.toc.get(key, {}):
            if mode == "list":
                print(key, arch)
            else:
                (out / f"{n}.co").write_bytes(a.get_kernel(key, arch))
            n += 1
PY
kernel_name=rocsparse/stage/lib/librocsparse.so.0.1
py=(env "PYTHONPATH=$P/rocm-kpack/python" "$P/venv/bin/python" "$work/reader.py")
best() { # command... : best wall seconds of RUNS, and the largest peak RSS (KiB)
    local start end m best_t=999999 max_m=0
    for _ in $(seq "$RUNS"); do
        start=$(date +%s%N)
        m=$( { /usr/bin/time -f "%M" "$@" > /dev/null; } 2>&1 | tail -1)
        end=$(date +%s%N)
        best_t=$(python3 -c "print(round(min($best_t, ($end - $start) / 1e9), 4))")
        ((m > max_m)) && max_m=$m
    done
    echo "$best_t $max_m"
}
mkdir -p "$work/py-out" "$work/ours-out"
read -r ours_list ours_list_rss < <(best "$OURS" list "$host")
read -r py_list py_list_rss < <(best "${py[@]}" list "$tree/rocsparse/stage/.kpack" "$kernel_name" 111 "$work/py-out")
read -r ours_x ours_x_rss < <(best "$OURS" extract "$host" -o "$work/ours-out" --force)
read -r py_x py_x_rss < <(best "${py[@]}" extract "$tree/rocsparse/stage/.kpack" "$kernel_name" 111 "$work/py-out")
ratio() { python3 -c "print(f'{$1 / $2:.1f}x')"; }
printf '| %-34s | %9s | %9s | %7s | %12s | %12s |\n' operation ours rocm-kpack ratio "ours RSS" "theirs RSS"
printf '| %-34s | %8ss | %8ss | %7s | %9s MiB | %9s MiB |\n' "list the split host (777 objects)" "$ours_list" "$py_list" "$(ratio "$py_list" "$ours_list")" $((ours_list_rss / 1024)) $((py_list_rss / 1024))
printf '| %-34s | %8ss | %8ss | %7s | %9s MiB | %9s MiB |\n' "extract every code object" "$ours_x" "$py_x" "$(ratio "$py_x" "$ours_x")" $((ours_x_rss / 1024)) $((py_x_rss / 1024))
read -r same total <<<"$checked"
[[ $same == 777 && $total == 777 ]] || { echo "FAIL: $same of $total code objects the same" >&2; exit 1; }
