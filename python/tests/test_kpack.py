"""kpack archives from Python: rocm-kpack's own archives (both schemes) read
as its own reader lists them, and the runtime's rule for choosing a code
object (the xnack variant shadowing the base archive in the shipped
loader, not in the fall-through one)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import clangoffload

ROOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "kpack"


def truncated_md5(data: bytes) -> str:
    return "%016x" % int.from_bytes(hashlib.md5(data).digest()[:8], "little")


def test_every_entry_reads_as_rocm_kpack_reads_it() -> None:
    lines = [line.split(" ") for line in (ROOT / "listing.txt").read_text().splitlines()]
    archives = sorted({line[0] for line in lines})
    assert len(archives) == 8
    for name in archives:
        archive = clangoffload.KpackArchive((ROOT / name).read_bytes())
        assert archive.scheme == ("zstd-per-kernel" if name.startswith("zstd") else "none")
        assert archive.group_name == "test_lib"
        want = [line[1:] for line in lines if line[0] == name]
        got = archive.entries()
        assert [[e.key, e.arch, str(e.ordinal), str(e.original_size)] for e in got] == [w[:4] for w in want]
        for entry, w in zip(got, want):
            assert entry.target == f"hipv4-amdgcn-amd-amdhsa--{entry.arch}"
            assert truncated_md5(archive.read(entry.key, entry.arch)) == w[4]
        with pytest.raises(KeyError):
            archive.read("nothing#0", archive.arches[0])


def test_a_damaged_archive_raises_a_located_error() -> None:
    data = bytearray((ROOT / "none/.kpack/test_lib_gfx906.kpack").read_bytes())
    data[4] = 7
    with pytest.raises(clangoffload.Error) as raised:
        clangoffload.KpackArchive(bytes(data))
    assert raised.value.offset == 4


def test_resolution_is_the_runtimes() -> None:
    kpack = ROOT / "zstd" / ".kpack"
    archives = [
        clangoffload.KpackArchive((kpack / "test_lib_gfx90a_xnack-.kpack").read_bytes()),
        clangoffload.KpackArchive((kpack / "test_lib_gfx90a.kpack").read_bytes()),
    ]
    arches = clangoffload.kpack_arch_list("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-")
    assert arches == ["gfx90a:sramecc+:xnack-"]
    assert clangoffload.kpack_arch_list("gfx906:xnack-") == ["gfx906:xnack-", "gfx9-generic:xnack-"]
    key = "pkg/stage/lib/libtwo.so#0"
    shipped = clangoffload.kpack_resolve(archives, key, arches, first_candidate=True)
    assert (shipped.kpack_error, shipped.entry) == (5, None)
    assert shipped.reason is not None and "KERNEL_NOT_FOUND" in shipped.reason
    fixed = clangoffload.kpack_resolve(archives, key, arches)
    assert fixed.kpack_error == 0 and fixed.archive == 1
    assert fixed.entry is not None and (fixed.entry.key, fixed.entry.arch) == (key, "gfx90a")
    assert clangoffload.kpack_resolve(archives, key, arches, disabled=True).kpack_error == 8
    assert clangoffload.kpack_resolve([], key, arches).kpack_error == 13
