"""Threads: Files, containers and entries are immutable and shared;
decoding releases the GIL and gives every thread the same bytes."""

from __future__ import annotations

import mmap
import os
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

import clangoffload as co
from conftest import fixture, read


def test_threads_share_one_file() -> None:
    expected = {e.id: bytes(e.data) for e in co.parse(read("compressed/llvm22/hip.bundle")).containers()[0].entries()}
    with co.open(fixture("compressed/concat/hip.hip_fatbin")) as f:
        containers = f.containers()
        barrier = threading.Barrier(8)

        def work(i: int) -> list[str]:
            barrier.wait()
            c = containers[i % len(containers)]
            return [e.id for e in c.entries() if len(e.data) == e.size]

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(work, range(32)))
        assert all(results)
        first = containers[0].entries()
        assert {e.id: bytes(e.data) for e in first} == expected
        del first, containers


def test_decompress_in_threads() -> None:
    ccob = read("compressed/llvm22/big.v3.ccob")
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: co.decompress(ccob), range(16)))
    assert all(o == read("compressed/llvm22/big.bundle") for o in outs)


def test_decoding_releases_the_gil() -> None:
    """While one thread decodes (and hashes) a compressed bundle, another
    runs Python code. With a switch interval longer than the call, the
    interpreter never takes the GIL from the decoding thread: the counter
    can move during the call only if the call releases the GIL. (A call
    that holds it, such as `bytes.count` over 100 MB, leaves it at 0.)"""
    import os
    import sys

    payload = os.urandom(1 << 20) * 8
    ccob = co.bundle([("host-x86_64-unknown-linux-gnu", b""), ("hip-amdgcn-amd-amdhsa--gfx906", payload)], compress=True)
    ticks = 0
    running = True

    def count() -> None:
        nonlocal ticks
        while running:
            ticks += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    counter = threading.Thread(target=count)
    counter.start()
    try:
        during = []
        for _ in range(3):
            before = ticks
            co.decompress(ccob)
            during.append(ticks - before)
    finally:
        running = False
        sys.setswitchinterval(interval)
        counter.join()
    assert min(during) > 0, during


HOST = ("host-x86_64-unknown-linux-gnu", b"")
GFX906 = "hip-amdgcn-amd-amdhsa--gfx906"
CCOB_V3_HEADER = 32  # the zstd frame follows it


def _same_length_payloads() -> tuple[bytes, bytes]:
    """Two random payloads whose compressed bundles have one length (zstd
    stores random bytes in raw blocks, so the frames differ only there)."""
    while True:
        a, b = os.urandom(1 << 20), os.urandom(1 << 20)
        if len(co.bundle([HOST, (GFX906, a)], compress=True)) == len(co.bundle([HOST, (GFX906, b)], compress=True)):
            return a, b


def _compressed(payload: bytes) -> bytes:
    return co.bundle([HOST, (GFX906, payload)], compress=True)


def _cuda_fatbin(frame: bytes, size: int) -> bytes:
    """A CUDA fat binary of one zstd-compressed LTO-IR entry (whose image is
    its decoded bytes, not cut) with `frame` as its payload."""
    padded = frame + bytes(-len(frame) % 8)
    flags = 0x1 | 0x10 | 0x8000  # 64-bit, Linux host, zstd
    entry = struct.pack("<HHIQIIHHIIIQQQ", 8, 0x0101, 64, len(padded), len(frame), 0, 0, 0, 80, 0, 0, flags, 0, size)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry) + len(padded)) + entry + padded


# How the buffer written by another thread is handed to clangoffload: as
# itself, or as a read-only view whose memory is still written (through the
# bytearray), or as a writable anonymous mmap.
SOURCES = ["bytearray", "readonly-view", "mmap"]


@contextmanager
def _written(source: str, original: bytes, other: bytes) -> Iterator[memoryview | bytearray | mmap.mmap]:
    """A buffer of `original`'s bytes that another thread, until the block
    ends, overwrites with `other`'s and back again in a tight loop."""
    target: bytearray | mmap.mmap = bytearray(original)
    if source == "mmap":
        target = mmap.mmap(-1, len(original))
        target[:] = original
    given = memoryview(target).toreadonly() if source == "readonly-view" else target
    changed = [i for i, (x, y) in enumerate(zip(original, other)) if x != y]
    span = slice(changed[0], changed[-1] + 1)
    chunks = (other[span], original[span])
    running = True
    writes = 0

    def write() -> None:
        nonlocal writes
        while running:
            target[span] = chunks[writes % 2]
            writes += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield given
    finally:
        running = False
        writer.join()
        if isinstance(given, memoryview):
            given.release()
        if isinstance(target, mmap.mmap):
            target.close()
    assert writes > 0


def _reading(read: Callable[[co.File], object], data: bytes | memoryview | bytearray | mmap.mmap) -> object:
    """What `read` gives for the bytes of `data`, or the error it raises."""
    f = co.parse(data)
    try:
        return read(f)
    except co.Error as e:
        return repr(e)
    finally:
        f.close()


def _check_reads_are_whole(source: str, original: bytes, other: bytes, read: Callable[[co.File], object]) -> None:
    """Each read of a buffer written meanwhile gives what one of the two
    whole buffers gives: decoding reads a copy taken when the call began,
    never the memory the writer changes (a mixture: a failed hash, or bytes
    of both)."""
    allowed = [_reading(read, original), _reading(read, other)]
    assert allowed[0] != allowed[1]
    with _written(source, original, other) as data:
        for _ in range(20):
            assert _reading(read, data) in allowed


def _bundle_entries(f: co.File) -> object:
    return [bytes(e.data) for e in f.containers()[0].entries()]


def _bundle_selected(f: co.File) -> object:
    chosen = f.containers()[0].select_for_device("gfx906")
    return chosen and bytes(chosen.data)


def _cuda_entries(f: co.File) -> object:
    return [bytes(e.data) for e in f.cuda_fatbins()[0].entries()]


@pytest.fixture(scope="module")
def payloads() -> tuple[bytes, bytes]:
    return _same_length_payloads()


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("read", [_bundle_entries, _bundle_selected])
def test_a_compressed_bundle_written_while_it_decodes(
    payloads: tuple[bytes, bytes], source: str, read: Callable[[co.File], object]
) -> None:
    a, b = payloads
    _check_reads_are_whole(source, _compressed(a), _compressed(b), read)


@pytest.mark.parametrize("source", SOURCES)
def test_decompress_of_a_buffer_written_meanwhile(payloads: tuple[bytes, bytes], source: str) -> None:
    a, b = (_compressed(p) for p in payloads)
    allowed = [co.decompress(a), co.decompress(b)]
    with _written(source, a, b) as data:
        for _ in range(20):
            assert co.decompress(data) in allowed


@pytest.mark.parametrize("source", SOURCES)
def test_a_cuda_fat_binary_written_while_its_entries_decode(payloads: tuple[bytes, bytes], source: str) -> None:
    """The same for a CUDA fat binary's zstd entry, whose frame has no
    checksum: a torn read would decode to bytes of both."""
    a, b = (_compressed(p) for p in payloads)
    size = len(co.decompress(a))
    fa, fb = (_cuda_fatbin(x[CCOB_V3_HEADER:], size) for x in (a, b))
    _check_reads_are_whole(source, fa, fb, _cuda_entries)


@pytest.mark.parametrize("source", SOURCES)
def test_bundling_a_payload_written_meanwhile(payloads: tuple[bytes, bytes], source: str) -> None:
    """Compressing a payload another thread writes gives the bundle of one
    of its two states (its memory is not read with the GIL released)."""
    a, b = payloads
    allowed = [_compressed(a), _compressed(b)]
    with _written(source, a, b) as data:
        for _ in range(10):
            assert co.bundle([HOST, (GFX906, data)], compress=True) in allowed
