"""Malformed inputs: a located exception of the right class, never a crash."""

from __future__ import annotations

import random

import pytest

import clangoffload as co
from conftest import read


def test_truncated_bundle_is_located() -> None:
    data = read("llvm22/hip-4096.bundle")[:40]
    f = co.parse(data)
    with pytest.raises(co.Error) as e:
        f.containers()
    assert isinstance(e.value, ValueError)
    assert e.value.kind == "CountTooLarge"
    assert e.value.offset == 24
    assert e.value.entry is None


def test_payload_past_the_end_names_the_entry() -> None:
    data = read("llvm22/hip-4096.bundle")
    cut = data[: len(data) - 10]
    with pytest.raises(co.Error) as e:
        co.parse(cut).containers()
    assert e.value.kind == "PayloadOutOfBounds"
    assert isinstance(e.value, co.TruncatedError)
    assert e.value.entry == 2


def test_hash_mismatch() -> None:
    ccob = bytearray(read("compressed/llvm22/hip.v3.ccob"))
    ccob[24] ^= 1  # the stored hash
    (c,) = co.parse(bytes(ccob)).containers()
    with pytest.raises(co.HashMismatchError) as e:
        c.entries()
    assert e.value.kind == "HashMismatch"
    assert co.decompress(bytes(ccob), verify_hash=False) == read("compressed/llvm22/hip.bundle")
    # As LLVM's bundler reads it: no hash check.
    (unchecked,) = co.parse(bytes(ccob), verify_hash=False).containers()
    assert [e.id for e in unchecked.entries()] == [e.id for e in co.parse(read("compressed/llvm22/hip.bundle")).containers()[0].entries()]
    assert unchecked.select_for_device("gfx906") is not None
    with pytest.raises(co.HashMismatchError):
        c.select_for_device("gfx906")


def test_size_limit() -> None:
    with pytest.raises(co.LimitExceededError):
        co.decompress(read("compressed/llvm22/hip.v3.ccob"), max_size=100)


def test_not_a_compressed_bundle() -> None:
    with pytest.raises(co.BadMagicError):
        co.decompress(b"__CLANG_OFFLOAD_BUNDLE__")


def test_unknown_container_bytes() -> None:
    with pytest.raises(co.Error):
        co.parse(b"\x01" * 64).containers()
    assert co.scan(b"\x01" * 64) == []
    assert co.parse(b"").containers() == []


def test_bad_buffers() -> None:
    with pytest.raises(TypeError):
        co.parse("not bytes")  # type: ignore[arg-type]
    with pytest.raises(BufferError):
        co.parse(memoryview(b"abcdef")[::2])  # not contiguous


def damaged(seed: int) -> bytes:
    rng = random.Random(seed)
    base = rng.choice(
        [
            read("llvm22/hip-4096.bundle"),
            read("compressed/llvm22/hip.v3.ccob"),
            read("compressed/concat/hip.hip_fatbin"),
            read("offload/multi.offbin"),
            read("multi/libhip-mixed3.so"),
        ]
    )
    data = bytearray(base)
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data[: rng.randint(0, len(data))])


@pytest.mark.parametrize("seed", range(200))
def test_damaged_inputs_raise_errors_never_crash(seed: int) -> None:
    data = damaged(seed)
    f = co.parse(data)
    for walk in (f.containers, f.scan):
        try:
            containers = walk()
        except co.Error:
            continue
        for c in containers:
            try:
                for e in c.entries():
                    assert len(e.data) == e.size
            except co.Error:
                pass
            try:
                chosen = c.select_for_device("gfx90a")
                assert chosen is None or len(chosen.data) == chosen.size
            except co.Error:
                pass
    try:
        f.wrappers()
        co.list_ids(data)
    except co.Error:
        pass
