"""``clangoffload.coverage``: a tree of fixtures (HIP libraries, CUDA
objects, a wheel read in place) covered for AMD and NVIDIA devices, each
cell what the runtime's rule gives (the same as the CLI's select and
coverage decide, through core's one rule)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import clangoffload

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    hip = tmp_path / "hip"
    hip.mkdir()
    for lib in ("libxnack.so", "libtwoz.so", "libskew.so"):
        shutil.copy(FIXTURES / "kpack" / "inputs" / lib, hip / lib)
    shutil.copy(FIXTURES / "cuda" / "clang-multi-ptx.o", tmp_path / "clang-multi-ptx.o")
    shutil.copy(FIXTURES / "coverage" / "sample-0.1-py3-none-linux_x86_64.whl", tmp_path)
    (tmp_path / "notes.txt").write_text("no device code\n")
    return tmp_path


def cell(files: list[clangoffload.CoveredFile], name: str, device: str) -> clangoffload.CoverageCell:
    """The cell of the file called ``name`` (a path, or ``<wheel>!<member>``)."""
    (file,) = [f for f in files if f.file == name]
    (found,) = [c for c in file.cells if c.device == device]
    return found


def test_cells_are_the_runtimes_choice(tree: Path) -> None:
    devices = ["gfx90a:xnack+", "gfx906:xnack-", "gfx1100", "sm_86", "sm_120"]
    files = clangoffload.coverage([tree], devices)
    names = sorted(f.file.rsplit("/", 1)[-1] for f in files)
    # Three libraries, the CUDA object, the wheel's three members.
    assert len(files) == 7, names
    hip, ptx = str(tree / "hip"), str(tree / "clang-multi-ptx.o")
    wheel = str(tree / "sample-0.1-py3-none-linux_x86_64.whl")
    xnack = cell(files, f"{hip}/libxnack.so", "gfx90a:xnack+")
    assert (xnack.loads, xnack.entry, xnack.how) == (True, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "native")
    assert not cell(files, f"{hip}/libskew.so", "gfx906:xnack-").loads
    none = cell(files, f"{hip}/libxnack.so", "gfx1100")
    assert not none.loads and "runs on gfx1100" in none.reason
    assert cell(files, ptx, "sm_86").entry == "sm_80"
    assert cell(files, ptx, "sm_120").how == "ptx"
    other = cell(files, ptx, "gfx1100")
    assert (other.applies, other.loads) == (False, False)
    member = cell(files, f"{wheel}!sample/lib/libtwoz.so", "gfx906:xnack-")
    assert member.loads
    for f in files:
        assert [c.device for c in f.cells] == devices


def test_default_devices_add_the_targets(tree: Path) -> None:
    files = clangoffload.coverage([tree / "hip"])
    devices = [c.device for c in files[0].cells]
    assert "sm_90" in devices and "gfx1100" in devices
    assert "gfx90a:xnack+" in devices
    (xnack,) = [f for f in files if f.file.endswith("libxnack.so")]
    assert ("gfx90a:xnack+", 4592) in xnack.targets
    assert any("stored uncompressed" in finding for finding in xnack.findings)


def test_the_default_list_gives_what_asking_for_its_devices_gives(tree: Path) -> None:
    # Each file is read once, and again only where a later one brought a
    # device of its vendor: the same cells as the final list asked outright.
    default = clangoffload.coverage([tree])
    devices = [c.device for c in default[0].cells]
    given = clangoffload.coverage([tree], devices)

    def plain(files: list[clangoffload.CoveredFile]) -> list[tuple]:
        return [
            (f.file, f.error, f.targets, f.findings,
             [(c.device, c.applies, c.loads, c.entry, c.how, c.reason) for c in f.cells])
            for f in files
        ]

    assert plain(default) == plain(given)
    assert len(default) >= 6 and all(len(f.cells) == len(devices) for f in default)


def test_a_split_host_is_resolved_through_its_archives(tmp_path: Path) -> None:
    # Its code is in kpack archives (../.kpack beside its lib/): each
    # device's verdict is what resolving its records gives, in walk order.
    stage = tmp_path / "stage"
    shutil.copytree(FIXTURES / "kpack" / "zstd" / ".kpack", stage / ".kpack")
    (stage / "lib").mkdir()
    shutil.copy(FIXTURES / "kpack" / "zstd" / "lib" / "libtwo.so", stage / "lib" / "libtwo.so")
    shutil.copy(FIXTURES / "kpack" / "inputs" / "libone.so", stage / "lib" / "libzzz.so")
    files = clangoffload.coverage([stage / "lib"], ["gfx906", "gfx1100", "sm_80"])
    assert [Path(f.file).name for f in files] == ["libtwo.so", "libzzz.so"]
    split = files[0]
    assert split.error is None and split.targets == []
    gfx906, gfx1100, sm80 = split.cells
    assert gfx906.loads and gfx906.how == "native"
    assert gfx906.entry == "hipv4-amdgcn-amd-amdhsa--gfx906"
    assert "test_lib_gfx906.kpack" in gfx906.reason
    assert not gfx1100.loads and gfx1100.reason.startswith("error 13:")
    assert not sm80.applies and sm80.reason == "no NVIDIA code in the file"
    # The library beside it is covered as ever.
    assert files[1].error is None and len(files[1].cells) == 3


def test_bad_devices_and_paths_raise() -> None:
    with pytest.raises(ValueError):
        clangoffload.coverage([FIXTURES / "kpack" / "inputs"], ["gfx9999"])
    with pytest.raises(OSError):
        clangoffload.coverage([FIXTURES / "no-such-dir"])
