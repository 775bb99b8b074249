"""The Python package against the subprocess recipe its users run today.

Two measurements, in one run (benches/compare-python.sh builds the package
in release and runs this; see benches/README.md):

1. Extracting every target of a many-target, many-container file (a linked
   `.hip_fatbin`: CONTAINERS bundles back to back, 4096-aligned, every other
   one compressed (COMPRESSED=half; or none, all), TARGETS device targets
   each) to files:
   - the recipe of Tensile and (before it wrote its own parser) kpack: for
     each container, `clang-offload-bundler -list`, then `-unbundle` of every
     listed target (`per-target`: one process per target, as Tensile does;
     `all-targets`: one process for all of them, as kpack did). The bundler
     reads only the first container of a file, so the recipe is handed each
     container as a file of its own, cut beforehand and not timed: it gets
     the container offsets for free, which it cannot find by itself;
   - the package: `open()`, `containers()`, every entry's `data` written to
     a file of its own (and, as a second row, only taken as a view).
   Before timing, both write every output once and the bytes are compared.
2. Touching every entry's data of a plain bundle of BUNDLE_MB (entries and
   their `memoryview`s, the first and last byte of each read) against
   reading the file (`read()` into `bytes`, from the page cache).

Environment: CONTAINERS [8], TARGETS [16], COMPRESSED [half], ENTRY_KB [256], BUNDLE_MB [150],
RUNS [5], LLVM_BIN [/usr/lib/llvm-22/bin], WORKDIR [/dev/shm if present,
else $TMPDIR].
"""

from __future__ import annotations

import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import clangoffload as co

CONTAINERS = int(os.environ.get("CONTAINERS", 8))
TARGETS = int(os.environ.get("TARGETS", 16))
COMPRESSED = os.environ.get("COMPRESSED", "half")  # none | half | all
ENTRY_KB = int(os.environ.get("ENTRY_KB", 256))
BUNDLE_MB = int(os.environ.get("BUNDLE_MB", 150))
RUNS = int(os.environ.get("RUNS", 5))
BUNDLER = str(Path(os.environ.get("LLVM_BIN", "/usr/lib/llvm-22/bin")) / "clang-offload-bundler")

# Processors LLVM 22 knows (gfx940/gfx941 are gone: their IDs would lose
# the target ID and collide).
PROCESSORS = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030",
    "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201", "gfx1103",
]


def bundler_version() -> str:
    out = subprocess.run([BUNDLER, "--version"], capture_output=True, text=True).stdout
    return next((line.strip() for line in out.splitlines() if "version" in line), BUNDLER)


def timed(work, runs: int = RUNS) -> tuple[float, float]:
    """(fastest, median) seconds of `runs` runs, after one untimed run."""
    work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def make_fatbin(rng: random.Random) -> tuple[bytes, list[int]]:
    """CONTAINERS bundles back to back at 4096-byte boundaries (written by
    the package, byte-identical to LLVM 22's bundler), every other one
    compressed; and their offsets."""
    targets = ["host-x86_64-unknown-linux-gnu"] + [
        f"hipv4-amdgcn-amd-amdhsa--{p}" for p in PROCESSORS[:TARGETS]
    ]
    out = bytearray()
    offsets = []
    for i in range(CONTAINERS):
        payloads = [b""] + [
            # Half random, half zeros: compressible, like code objects.
            rng.randbytes(ENTRY_KB * 512) + bytes(ENTRY_KB * 512 - 123 * j)
            for j in range(TARGETS)
        ]
        compress = {"none": False, "half": i % 2 == 1, "all": True}[COMPRESSED]
        container = co.bundle(list(zip(targets, payloads)), 4096, compress=compress)
        out += bytes(-len(out) % 4096)
        offsets.append(len(out))
        out += container
    return bytes(out), offsets


def recipe(parts: list[Path], outdir: Path, per_target: bool) -> None:
    """The subprocess recipe: -list, then -unbundle, per container."""
    for n, part in enumerate(parts):
        listed = subprocess.run(
            [BUNDLER, "-type=o", "-list", f"-input={part}"], check=True, capture_output=True, text=True
        ).stdout.split()
        outputs = [outdir / f"{n}.{t.replace(':', '_')}" for t in listed]
        if per_target:
            for target, output in zip(listed, outputs):
                subprocess.run(
                    [BUNDLER, "-type=o", "-unbundle", f"-input={part}", f"-targets={target}", f"-output={output}"],
                    check=True,
                )
        else:
            subprocess.run(
                [BUNDLER, "-type=o", "-unbundle", f"-input={part}", f"-targets={','.join(listed)}"]
                + [f"-output={o}" for o in outputs],
                check=True,
            )


def package(path: Path, outdir: Path | None, verify_hash: bool = True) -> int:
    """Every entry of every container: written to a file of its own, or
    (outdir None) only taken as a view and its ends read."""
    touched = 0
    with co.open(path, verify_hash=verify_hash) as f:
        for n, container in enumerate(f.containers()):
            for entry in container.entries():
                data = entry.data
                if outdir is None:
                    if len(data):
                        touched += data[0] + data[-1]
                else:
                    with open(outdir / f"{n}.{entry.id.replace(':', '_')}", "wb") as out:
                        out.write(data)
                del data, entry
            del container
    return touched


def compare_outputs(ours: Path, theirs: Path) -> int:
    names = sorted(os.listdir(theirs))
    assert names == sorted(os.listdir(ours)), "different outputs"
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    return len(names)


def ratio(a: float, b: float) -> str:
    r = a / b
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2f}x"


def row(name: str, t: tuple[float, float], base: tuple[float, float]) -> str:
    return f"| {name} | {t[0] * 1e3:,.2f} | {t[1] * 1e3:,.2f} | {ratio(base[1], t[1])} |"


def main() -> None:
    workdir = Path(os.environ.get("WORKDIR", "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()))
    tmp = Path(tempfile.mkdtemp(prefix="clangoffload-python-", dir=workdir))
    try:
        print(f"# clangoffload (Python) against the subprocess recipe, {time.strftime('%Y-%m-%d %H:%M %Z')}")
        print(f"# {platform.node()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
              f"Python {platform.python_version()}; {bundler_version()}")
        print(f"# files in {workdir}; RUNS={RUNS}; times in ms (fastest, median); ratio of medians\n")
        rng = random.Random(38)

        fatbin, offsets = make_fatbin(rng)
        path = tmp / "lib.hip_fatbin"
        path.write_bytes(fatbin)
        parts = []
        for i, container in enumerate(co.parse(fatbin).containers()):
            assert container.offset == offsets[i]
            part = tmp / f"part{i}"
            part.write_bytes(fatbin[container.offset : container.offset + container.size])
            parts.append(part)
        entries = CONTAINERS * (TARGETS + 1)
        print(f"## Extracting every target: {CONTAINERS} containers ({COMPRESSED} compressed) x "
              f"{TARGETS + 1} entries ({entries} outputs), {len(fatbin) / 1e6:.1f} MB file\n")
        theirs, ours = tmp / "theirs", tmp / "ours"
        for d in (theirs, ours):
            d.mkdir()
        recipe(parts, theirs, per_target=False)
        package(path, ours)
        checked = compare_outputs(ours, theirs)
        assert checked == entries, f"{checked} files for {entries} entries"
        print(f"Identity: the package and LLVM's bundler wrote the same {checked} files.\n")

        def fresh(d: Path):
            def run(work):
                shutil.rmtree(d)
                d.mkdir()
                work()
            return run

        per_target = timed(lambda: fresh(theirs)(lambda: recipe(parts, theirs, True)), max(1, RUNS // 2))
        all_targets = timed(lambda: fresh(theirs)(lambda: recipe(parts, theirs, False)))
        to_files = timed(lambda: fresh(ours)(lambda: package(path, ours)))
        to_files_unchecked = timed(lambda: fresh(ours)(lambda: package(path, ours, verify_hash=False)))
        views = timed(lambda: package(path, None))
        views_unchecked = timed(lambda: package(path, None, verify_hash=False))
        print("| command | fastest | median | recipe (per target) / this | recipe (all targets) / this |")
        print("|---|---:|---:|---:|---:|")
        rows = [
            ("recipe: -list + -unbundle per target (Tensile)", per_target),
            ("recipe: -list + one -unbundle of all targets (kpack)", all_targets),
            ("package: every entry to its own file, hash checked", to_files),
            ("package: every entry to its own file, no hash check (as LLVM)", to_files_unchecked),
            ("package: every entry as a view, hash checked", views),
            ("package: every entry as a view, no hash check (as LLVM)", views_unchecked),
        ]
        for name, t in rows:
            print(f"{row(name, t, per_target)} {ratio(all_targets[1], t[1])} |")
        print()

        # 2. A large plain bundle.
        size = BUNDLE_MB * 1_000_000
        per = size // 16
        big = co.bundle(
            [("host-x86_64-unknown-linux-gnu", b"")]
            + [(f"hipv4-amdgcn-amd-amdhsa--{p}", rng.randbytes(1 << 16) * (per >> 16)) for p in PROCESSORS],
            4096,
        )
        big_path = tmp / "big.bundle"
        big_path.write_bytes(big)
        del big

        def read_file() -> None:
            with open(big_path, "rb") as handle:
                handle.read()

        read = timed(read_file)
        touch = timed(lambda: package(big_path, None))
        print(f"## Touching every entry of a {big_path.stat().st_size / 1e6:.0f} MB plain bundle (17 entries)\n")
        print("| command | fastest | median | share of reading the file |")
        print("|---|---:|---:|---:|")
        print(f"| read the file into bytes | {read[0] * 1e3:,.2f} | {read[1] * 1e3:,.2f} | 100% |")
        print(f"| open + containers + every entry's data (view, both ends read) | {touch[0] * 1e3:,.3f} | "
              f"{touch[1] * 1e3:,.3f} | {100 * touch[1] / read[1]:.2f}% |")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
