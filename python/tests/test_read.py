"""Reading what LLVM made: every container and entry of the fixtures, with
the bytes LLVM's own bundler unbundles from them."""

from __future__ import annotations

import hashlib

import pytest

import clangoffload as co
from conftest import fixture, read

MULTI = ["libhip-mixed3.so", "libhip-compressed3.so", "hip-mixed3.dll", "hip-compressed3.dll"]


def expected_entries(name: str) -> list[tuple[int, str, str]]:
    """`<container offset in the section>|<entry ID>|<sha256>` per line,
    what LLVM 22's bundler unbundled from each container."""
    lines = fixture(f"multi/{name}.entries").read_text().splitlines()
    return [(int(o), i, h) for o, i, h in (line.split("|") for line in lines)]


@pytest.mark.parametrize("name", MULTI)
def test_every_entry_of_every_container_is_what_llvm_unbundles(name: str) -> None:
    with co.open(fixture(f"multi/{name}")) as f:
        containers = f.containers()
        assert len(containers) == 3
        section_start = containers[0].offset
        found = []
        for c in containers:
            assert c.section in (".hip_fatbin", ".hip_fat")
            for e in c.entries():
                digest = hashlib.sha256(e.data).hexdigest()
                found.append((c.offset - section_start, e.id, digest))
                del e
        del c, containers
        assert sorted(found) == sorted(expected_entries(name))


def test_plain_entries_are_views_of_the_callers_bytes() -> None:
    data = read("llvm22/hip-4096.bundle")
    f = co.parse(data)
    (c,) = f.containers()
    assert (c.kind, c.offset, c.size) == ("bundle", 0, len(data))
    entries = c.entries()
    assert [e.id for e in entries] == [
        "host-x86_64-unknown-linux-gnu-",
        "hipv4-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
    ]
    device = entries[1]
    view = device.data
    assert view.obj is data  # a view of the caller's object: no copy
    assert view.readonly
    assert bytes(view) == data[device.offset : device.offset + device.size]
    assert device.offset % 4096 == 0


def test_compressed_entries_are_the_decoded_bundles_entries() -> None:
    plain = co.parse(read("compressed/llvm22/hip.bundle")).containers()[0]
    (ccob,) = co.parse(read("compressed/llvm22/hip.v3.ccob")).containers()
    assert (ccob.kind, ccob.version, ccob.method, ccob.method_id) == ("compressed", 3, "zstd", 1)
    assert ccob.compressed_size == ccob.size - 32  # the version 3 header
    assert ccob.total_size == ccob.size
    assert ccob.ratio == pytest.approx(ccob.uncompressed_size / ccob.compressed_size)
    assert plain.version is None and plain.ratio is None
    assert ccob.uncompressed_size == plain.size
    assert bytes(ccob.bundle()) == read("compressed/llvm22/hip.bundle")
    got = [(e.id, e.offset, bytes(e.data)) for e in ccob.entries()]
    assert got == [(e.id, e.offset, bytes(e.data)) for e in plain.entries()]
    # Decoded once: the entries view one `bytes`.
    assert ccob.entries()[1].data.obj is ccob.bundle()


@pytest.mark.parametrize(
    "ccob", [line.split("|")[0] for line in fixture("compressed/MANIFEST").read_text().splitlines()[1:]]
)
def test_every_compressed_fixture_decompresses_to_its_bundle(ccob: str) -> None:
    manifest = {l.split("|")[0]: l.split("|") for l in fixture("compressed/MANIFEST").read_text().splitlines()[1:]}
    _, _, version, method, _, bundle, listed = manifest[ccob]
    data = read(f"compressed/{ccob}")
    assert co.decompress(data) == read(f"compressed/{bundle}")
    (c,) = co.parse(data).containers()
    assert (c.version, c.method) == (int(version), method)
    expected = sorted(fixture(f"compressed/{listed}").read_text().split())
    file_type = "s" if ccob.startswith("llvm22/asm") else "o"  # a text bundle
    assert sorted(co.list_ids(data, file_type=file_type)) == expected


@pytest.mark.parametrize("name", ["hip-4096", "align3", "hip-only", "normalized", "openmp", "duplicate-ids"])
def test_list_ids_is_the_bundlers_list(name: str) -> None:
    expected = fixture(f"llvm22/{name}.list").read_text().split()
    assert sorted(co.list_ids(read(f"llvm22/{name}.bundle"))) == sorted(expected)


def test_containers_back_to_back() -> None:
    f = co.parse(read("compressed/concat/hip.hip_fatbin"))
    assert [(c.offset, c.kind) for c in f.containers()] == [
        (0, "compressed"),
        (8192, "compressed"),
        (16384, "compressed"),
        (24576, "bundle"),
    ]


def test_offload_binary_images() -> None:
    f = co.parse(read("offload/multi.offbin"))
    images = [e for c in f.containers() for e in c.entries()]
    assert len(images) == 9
    assert (images[0].triple, images[0].arch, images[0].id) == ("amdgcn-amd-amdhsa", "gfx908", "gfx908")
    assert (images[5].triple, images[5].arch) == ("nvptx64-nvidia-cuda", "sm_75")
    assert all(isinstance(e.strings, list) for e in images)
    assert images[0].processor == "gfx908"
    for e in images:
        assert e.data.obj is f.data.obj


def test_archive_members_are_named() -> None:
    f = co.parse(read("archive/gnu-bundles.a"))
    members = {c.member for c in f.containers()}
    assert None not in members and len(members) >= 1


def test_code_object_fields_as_inspect_shows_them() -> None:
    (c,) = co.parse(read("llvm22/clang-hip.fatbin")).containers()
    by_id = {e.id: e for e in c.entries()}
    gfx906 = by_id["hipv4-amdgcn-amd-amdhsa--gfx906"]
    assert gfx906.code_object_target == "gfx906" and gfx906.target_matches is True
    host = by_id["host-x86_64-unknown-linux-gnu-"]
    assert host.code_object_target is None and host.target_matches is None


@pytest.mark.parametrize(
    "name",
    # A linked ELF library, PE DLLs, and relocatable objects (ELF, COFF)
    # whose records a relocation fills.
    ["multi/libhip-mixed3.so", "multi/hip-mixed3.dll", "multi/hip-compressed3.dll", "offload/hip.o", "coff/hip.o"],
)
def test_wrappers_point_at_the_containers(name: str) -> None:
    data = read(name)
    f = co.parse(data)
    wrappers = f.wrappers()
    assert wrappers and all(w.kind == "HIPF" and w.magic == 0x48495046 for w in wrappers)
    assert [w.target_offset for w in wrappers] == [c.offset for c in f.containers()]
    for w in wrappers:
        # The file offset of the record's magic, where kpack writes HIPK.
        assert data[w.offset : w.offset + 4] == (0x48495046).to_bytes(4, "little")


def test_no_wrappers_outside_host_files() -> None:
    assert co.parse(read("llvm22/hip-4096.bundle")).wrappers() == []


def test_select_for_device_as_the_runtime_does() -> None:
    f = co.parse(read("llvm22/hip-4096.bundle"))
    (c,) = f.containers()
    chosen = c.select_for_device("gfx90a:sramecc+:xnack+")
    assert chosen is not None and chosen.how == "native"
    assert chosen.id == "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
    assert chosen.data.obj is f.data.obj
    assert c.select_for_device("gfx90a:xnack-") is None  # xnack+ code, xnack- device
    assert c.select_for_device("amdgcn-amd-amdhsa--gfx906").id.endswith("gfx906")
    with pytest.raises(co.InvalidIdError):
        c.select_for_device("gfx90a:bogus+")


def test_select_for_device_in_a_compressed_bundle_decodes_only_the_chosen_code() -> None:
    plain = {e.id: bytes(e.data) for e in co.parse(read("compressed/llvm22/hip.bundle")).containers()[0].entries()}
    (c,) = co.parse(read("compressed/llvm22/hip.v3.ccob")).containers()
    chosen = c.select_for_device("gfx1100")
    assert chosen is not None and chosen.how == "native"
    assert bytes(chosen.data) == plain[chosen.id]
    assert c.select_for_device("gfx1030") is None


def test_extract_by_target_and_by_arch() -> None:
    f = co.open(fixture("multi/libhip-compressed3.so"))
    by_arch = f.extract(arch="gfx90a")
    assert [e.id for e in by_arch] == ["hipv4-amdgcn-amd-amdhsa--gfx90a"] * 3
    by_target = f.extract(target="hip-amdgcn-amd-amdhsa--gfx906")
    assert [e.id for e in by_target] == ["hipv4-amdgcn-amd-amdhsa--gfx906"] * 3
    assert f.extract(arch="gfx1100") == []
    del by_arch, by_target
    f.close()


def test_unbundle_as_the_bundler_does() -> None:
    data = read("llvm22/hip-4096.bundle")
    entries = {e.id: bytes(e.data) for e in co.parse(data).containers()[0].entries()}
    gfx906, host = co.unbundle(
        data, ["hip-amdgcn-amd-amdhsa--gfx906", "host-x86_64-unknown-linux-gnu"]
    )
    assert gfx906 == entries["hipv4-amdgcn-amd-amdhsa--gfx906"]
    assert host == b""
    with pytest.raises(co.BundlerFailure):
        co.unbundle(data, ["hip-amdgcn-amd-amdhsa--gfx1100"])
    assert co.unbundle(data, ["hip-amdgcn-amd-amdhsa--gfx1100"], allow_missing=True) == [b""]


def test_scan_finds_containers_anywhere() -> None:
    bundle = read("llvm22/hip-4096.bundle")
    memory = b"\xa5" * 100 + bundle + b"\x00" * 7
    (c,) = co.scan(memory)
    assert (c.offset, c.kind, c.size) == (100, "bundle", len(bundle))


def test_scan_finds_cuda_fat_binaries() -> None:
    lz4 = read("cuda/raw-lz4.fatbin")
    zstd = read("cuda/raw-zstd.fatbin")
    bundle = read("llvm22/hip-4096.bundle")
    memory = b"\xa5" * 4097 + lz4 + zstd + b"\x5a" * 3 + bundle
    found = co.scan(memory)
    assert [(c.offset, c.kind, c.size) for c in found] == [
        (4097, "cuda_fatbin", len(lz4)),
        (4097 + len(lz4), "cuda_fatbin", len(zstd)),
        (4100 + len(lz4) + len(zstd), "bundle", len(bundle)),
    ]
    fatbin = found[0]
    assert bytes(fatbin.data) == lz4
    assert fatbin.bundle() is None and fatbin.version is None
    assert "cuda_fatbin at 0x1001" in repr(fatbin)
    assert [e.image_kind for e in fatbin.entries()] == ["elf", "ptx"]
    assert fatbin.select_for_device("sm_80") is not None
    # An OffloadBinary whose image is a fat binary: both found; inspect's
    # containers() keeps to bundles, compressed bundles and OffloadBinaries.
    f = co.open(str(fixture("cuda/offload-cubin-fatbin-ptx.offbin")))
    kinds = [c.kind for c in f.scan()]
    assert kinds == ["offload_binary", "offload_binary", "cuda_fatbin", "offload_binary"]
    assert all(c.kind == "offload_binary" for c in f.containers())
    del fatbin, found
    f.close()
