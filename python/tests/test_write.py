"""Writing: `bundle()` gives the bytes LLVM 22's clang-offload-bundler
writes, plain and compressed; checked against the fixtures it wrote and,
where it is installed, against the tool itself on fresh inputs."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

import clangoffload as co
from conftest import read

HIP3 = [
    "host-x86_64-unknown-linux-gnu",
    "hipv4-amdgcn-amd-amdhsa--gfx906",
    "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
    "hipv4-amdgcn-amd-amdhsa--gfx1100",
]


def tu_inputs(tu: int, gfx1100: bool) -> list[bytes]:
    """The regeneration script's `tu_inputs`: /dev/null for the host, then
    the translation unit's code objects."""
    names = [f"tu{tu}-gfx906.o", f"tu{tu}-gfx90a-xnack.o"] + ([f"tu{tu}-gfx1100.o"] if gfx1100 else [])
    return [b""] + [read(f"compressed/inputs/{n}") for n in names]


@pytest.mark.parametrize(
    "align, kwargs, fixture",
    [
        (1, {}, "compressed/llvm22/hip.bundle"),
        (4096, {}, "compressed/llvm22/hip-align4096.bundle"),
        (1, {"compress": True}, "compressed/llvm22/hip.v3.ccob"),
        (1, {"compress": "zstd", "version": 2}, "compressed/llvm22/hip.v2.ccob"),
        (1, {"compress": True, "level": 19}, "compressed/llvm22/hip.v3-level19.ccob"),
        (4096, {"compress": True}, "compressed/llvm22/hip-align4096.v3.ccob"),
    ],
)
def test_bundle_is_byte_identical_to_llvm_22(align: int, kwargs: dict, fixture: str) -> None:
    entries = list(zip(HIP3, tu_inputs(1, gfx1100=True)))
    assert co.bundle(entries, align, **kwargs) == read(fixture)


def test_bundle_takes_any_buffer_and_normalises_ids() -> None:
    payload = bytearray(b"code object")
    out = co.bundle(
        [("host-x86_64-unknown-linux-gnu", b""), ("hip-amdgcn-amd-amdhsa-unknown-gfx906", memoryview(payload))]
    )
    (c,) = co.parse(out).containers()
    ids = [e.id for e in c.entries()]
    assert ids == ["host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx906"]
    assert bytes(c.entries()[1].data) == payload
    assert c.entries()[1].offset == 4096


def test_zlib_round_trip() -> None:
    entries = list(zip(HIP3, tu_inputs(1, gfx1100=True)))
    ccob = co.bundle(entries, 1, compress="zlib")
    (c,) = co.parse(ccob).containers()
    assert c.method == "zlib"
    assert co.decompress(ccob) == co.bundle(entries, 1)


def test_bundle_refuses_what_the_bundler_refuses() -> None:
    with pytest.raises(co.BundlerFailure) as e:
        co.bundle([("hip-amdgcn-amd-amdhsa--gfx906", b"a"), ("hip-amdgcn-amd-amdhsa--gfx906", b"b")])
    assert e.value.kind == "DuplicateTargets"
    with pytest.raises(co.BundlerFailure):
        co.bundle([("openmp-amdgcn-amd-amdhsa--gfx906", b"a")])  # no host target
    with pytest.raises(co.BundlerFailure):
        co.bundle([("hip-amdgcn-amd-amdhsa--gfx906", b"a")], align=0)
    with pytest.raises(ValueError):
        co.bundle([("hip-amdgcn-amd-amdhsa--gfx906", b"a")], compress="lz4")


# Against the tool itself, on inputs made here.

GFX = ["gfx906", "gfx908", "gfx90a:xnack+", "gfx90a:xnack-", "gfx942", "gfx1030", "gfx1100", "gfx1201"]


def llvm_bundle(bundler: str, tmp: Path, targets: list[str], payloads: list[bytes], *args: str) -> bytes:
    inputs = []
    for i, payload in enumerate(payloads):
        path = tmp / f"in{i}"
        path.write_bytes(payload)
        inputs.append(f"-input={path}")
    out = tmp / "out"
    subprocess.run(
        [bundler, "-type=o", f"-targets={','.join(targets)}", *inputs, f"-output={out}", *args],
        check=True,
        env={**os.environ, "COMPRESSED_BUNDLE_FORMAT_VERSION": "3"},
    )
    return out.read_bytes()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("compress", [False, True])
def test_bundle_matches_the_installed_bundler(bundler: str, tmp_path: Path, seed: int, compress: bool) -> None:
    rng = random.Random(seed)
    gfx = rng.sample(GFX[:2] + GFX[4:], k=rng.randint(1, 6))
    targets = ["host-x86_64-unknown-linux-gnu"] + [f"hipv4-amdgcn-amd-amdhsa--{g}" for g in gfx]
    payloads = [b""] + [rng.randbytes(rng.randint(0, 20000)) for _ in gfx]
    align = rng.choice([1, 8, 4096])
    args = [f"-bundle-align={align}"] + (["-compress"] if compress else [])
    expected = llvm_bundle(bundler, tmp_path, targets, payloads, *args)
    assert co.bundle(list(zip(targets, payloads)), align, compress=compress) == expected


def test_unbundle_matches_the_installed_bundler(bundler: str, tmp_path: Path) -> None:
    targets = ["host-x86_64-unknown-linux-gnu"] + [f"hipv4-amdgcn-amd-amdhsa--{g}" for g in GFX if g != "gfx90a:xnack-"]
    payloads = [b""] + [bytes([i]) * (1000 + i) for i in range(1, len(targets))]
    data = llvm_bundle(bundler, tmp_path, targets, payloads, "-compress")
    (tmp_path / "b").write_bytes(data)
    requested = ["hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx942"]
    outs = [tmp_path / f"o{i}" for i in range(len(requested))]
    subprocess.run(
        [bundler, "-type=o", "-unbundle", f"-input={tmp_path / 'b'}", f"-targets={','.join(requested)}"]
        + [f"-output={o}" for o in outs],
        check=True,
    )
    assert co.unbundle(data, requested) == [o.read_bytes() for o in outs]
    listed = subprocess.run(
        [bundler, "-type=o", "-list", f"-input={tmp_path / 'b'}"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert sorted(co.list_ids(data)) == sorted(listed)  # LLVM lists in its hash order


@pytest.mark.parametrize("seed", range(40))
def test_written_bundles_read_back(seed: int) -> None:
    """Any targets, payloads, alignment and compression: what bundle() writes
    reads back as the same entries, and a compressed one decodes to the
    plain one."""
    rng = random.Random(seed)
    gfx = rng.sample(GFX, k=rng.randint(1, len(GFX)))
    if "gfx90a:xnack+" in gfx and "gfx90a:xnack-" in gfx:
        gfx.remove("gfx90a:xnack-")  # the two may not share a bundle (bundle() refuses)
    targets = ["host-x86_64-unknown-linux-gnu"] + [f"hip-amdgcn-amd-amdhsa--{g}" for g in gfx]
    payloads = [rng.randbytes(rng.choice([0, 1, 4095, 4096, 10000])) for _ in targets]
    align = rng.choice([1, 2, 8, 4096, 65536])
    compress = rng.choice([None, True, "zlib"])
    version = rng.choice([2, 3])
    written = co.bundle(list(zip(targets, payloads)), align, compress, version=version)
    (c,) = co.parse(written).containers()
    assert c.kind == ("bundle" if compress is None else "compressed")
    if compress is not None:
        assert c.version == version
        assert co.decompress(written) == co.bundle(list(zip(targets, payloads)), align)
    entries = c.entries()
    assert [e.id for e in entries] == [co.normalize_entry_id(t) for t in targets]
    assert [bytes(e.data) for e in entries] == payloads
    assert all(e.offset % align == 0 for e in entries if e.size)
