"""NVIDIA CUDA fat binaries: every image `File.cuda_fatbins()` gives is
the file cuobjdump 13.5 extracted from the fixture (tests/fixtures/cuda:
MANIFEST.sha256 holds the SHA-256 of each file `cuobjdump -xelf all
-xptx all` wrote, regenerate.sh), under cuobjdump's name; the CUDA
driver's choice of code for a device; fat binaries found by scan."""

from __future__ import annotations

import hashlib
from collections import defaultdict

import pytest

import clangoffload as co
from conftest import fixture, read


def manifest() -> dict[str, set[tuple[str, str]]]:
    """Per fixture file, the (name, SHA-256) of every image cuobjdump
    extracted from it."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for line in fixture("cuda/MANIFEST.sha256").read_text().splitlines():
        digest, rest = line.split("  ", 1)
        source, name = rest.split(": ", 1)
        found[source].add((name, digest))
    return found


MANIFEST = manifest()


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_every_image_is_what_cuobjdump_extracts(name: str) -> None:
    with co.open(str(fixture(f"cuda/{name}"))) as f:
        images = set()
        for fatbin in f.cuda_fatbins():
            assert fatbin.kind == "cuda_fatbin"
            for e in fatbin.entries():
                if e.cuobjdump_name is not None:
                    images.add((e.cuobjdump_name, hashlib.sha256(e.data).hexdigest()))
                del e
            del fatbin
    assert images == MANIFEST[name]


def test_entries_say_what_each_is() -> None:
    with co.open(str(fixture("cuda/nvcc-b-sm75-sm90.o"))) as f:
        (fatbin,) = f.cuda_fatbins()
        assert (fatbin.section, fatbin.member, fatbin.offset) == (".nv_fatbin", None, 0x4A8)
        entries = fatbin.entries()
        assert [(e.id, e.image_kind, e.sm, e.compression, e.cuobjdump_name) for e in entries] == [
            ("sm_75", "elf", "sm_75", "none", "nvcc-b-sm75-sm90.1.sm_75.cubin"),
            ("sm_90", "elf", "sm_90", "none", "nvcc-b-sm75-sm90.2.sm_90.cubin"),
            ("compute_90", "ptx", "sm_90", "zstd", "nvcc-b-sm75-sm90.1.sm_90.ptx"),
        ]
        cubin, ptx = entries[0], entries[2]
        # A stored image is a view of the file; a compressed one is decoded.
        assert cubin.data.obj is f.data.obj and bytes(cubin.data[:4]) == b"\x7fELF"
        assert b".version" in bytes(ptx.data) and not bytes(ptx.data).endswith(b"\x00")
        assert entries[0].processor is None and entries[0].index == 0
        del entries, cubin, ptx, fatbin


def test_archive_members_are_read_each_in_turn() -> None:
    with co.open(str(fixture("cuda/nvcc-lib.a"))) as f:
        members = [c.member for c in f.cuda_fatbins()]
    assert len(members) == 2 and all(m is not None for m in members)
    assert members[0] != members[1]


@pytest.mark.parametrize(
    ("device", "expected"),
    [
        ("sm_75", ("sm_75", "cubin")),
        ("75", ("sm_75", "cubin")),
        ("sm_90", ("sm_90", "cubin")),
        # A cubin runs only within its major version, PTX on any later SM.
        ("sm_86", None),
        ("sm_100", ("compute_90", "ptx")),
        ("sm_120", ("compute_90", "ptx")),
    ],
)
def test_select_for_device_is_the_cuda_drivers_choice(
    device: str, expected: tuple[str, str] | None
) -> None:
    with co.open(str(fixture("cuda/nvcc-b-sm75-sm90.o"))) as f:
        (fatbin,) = f.cuda_fatbins()
        chosen = fatbin.select_for_device(device)
        got = None if chosen is None else (chosen.id, chosen.how)
        assert got == expected
        if chosen is not None:
            same = [e for e in fatbin.entries() if e.id == chosen.id]
            assert bytes(chosen.data) == bytes(same[0].data)
        del chosen, fatbin


def test_an_arch_specific_cubin_runs_on_its_sm_only() -> None:
    f = co.parse(read("cuda/raw-arch-variants.fatbin"))
    fatbins = f.cuda_fatbins()
    picks = {}
    for device in ("sm_90", "sm_100", "sm_103", "sm_121"):
        chosen = [c.select_for_device(device) for c in fatbins]
        picks[device] = [(e.id, e.how) for e in chosen if e is not None]
        del chosen
    assert ("sm_90a", "cubin") in picks["sm_90"]
    # cuobjdump names it sm_103 (it drops an ELF's `f`); the entry is sm_103f.
    assert ("sm_103f", "cubin") in picks["sm_103"]
    assert ("sm_121a", "cubin") in picks["sm_121"]
    del fatbins
    f.close()


def test_a_device_that_is_no_sm_is_an_invalid_id() -> None:
    f = co.parse(read("cuda/raw-lz4.fatbin"))
    (fatbin,) = f.cuda_fatbins()
    with pytest.raises(co.InvalidIdError) as raised:
        fatbin.select_for_device("gfx90a")
    assert raised.value.kind == "InvalidSm"
    del fatbin
    f.close()


def test_fat_binaries_found_by_scan_read_too_without_cuobjdump_names() -> None:
    lz4 = read("cuda/raw-lz4.fatbin")
    memory = b"\xa5" * 4097 + lz4
    (found,) = co.scan(memory)
    (listed,) = co.parse(lz4).cuda_fatbins()
    scanned = found.entries()
    direct = listed.entries()
    assert [bytes(e.data) for e in scanned] == [bytes(e.data) for e in direct]
    assert all(e.compression == "lz4" for e in scanned)
    # Names need the file's name and cuobjdump's numbering of the file.
    assert all(e.cuobjdump_name is None for e in scanned + direct)
    del scanned, direct, found, listed


def test_a_damaged_fat_binary_raises_located() -> None:
    data = bytearray(read("cuda/raw-stored.fatbin"))
    data[8:16] = (len(data) * 4).to_bytes(8, "little")
    with pytest.raises(co.Error) as raised:
        co.parse(bytes(data)).cuda_fatbins()
    assert raised.value.offset is not None


def test_an_opaque_lto_ir_entry_is_given_as_stored() -> None:
    with co.open(str(fixture("cuda/nvcc-dlto.o"))) as f:
        (fatbin,) = f.cuda_fatbins()
        ptx, lto = fatbin.entries()
        assert (ptx.id, ptx.compression) == ("compute_80", "zstd")
        assert (lto.id, lto.image_kind, lto.compression) == ("lto_80", "ltoir", "opaque")
        # nvcc's -dlto entry: flagged zstd, no zstd frame (flag 0x10000).
        assert lto.size == 2183 and lto.cuobjdump_name is None
        assert lto.data.obj is f.data.obj and bytes(lto.data[:4]) != b"\x28\xb5\x2f\xfd"
        del ptx, lto, fatbin
