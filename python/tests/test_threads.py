"""Threads: Files, containers and entries are immutable and shared;
decoding releases the GIL and gives every thread the same bytes."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

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


def _same_length_bundles() -> tuple[bytes, bytes]:
    """Two compressed bundles of one length and different payloads (random
    bytes: zstd stores them, so their frames have the same size)."""
    import os

    host = ("host-x86_64-unknown-linux-gnu", b"")
    while True:
        a, b = (
            co.bundle([host, ("hip-amdgcn-amd-amdhsa--gfx906", os.urandom(4 << 20))], compress=True)
            for _ in range(2)
        )
        if len(a) == len(b):
            return a, b


def test_a_writable_buffer_written_while_its_entries_decode() -> None:
    """A `bytearray` swapped between two valid compressed bundles by another
    thread while its entries decode with the GIL released: every decode
    gives one of the two whole, never a mixture (which would fail its hash
    or its stream), because a writable buffer is copied before the GIL is
    released."""
    a, b = _same_length_bundles()
    wanted = {bytes(e.data) for x in (a, b) for e in co.parse(x).containers()[0].entries() if e.size}
    buf = bytearray(a)
    running = True
    swaps = 0

    def swap() -> None:
        nonlocal swaps
        while running:
            buf[:] = b if swaps % 2 == 0 else a
            swaps += 1

    writer = threading.Thread(target=swap)
    writer.start()
    try:
        for _ in range(40):
            f = co.parse(buf)
            got = [bytes(e.data) for e in f.containers()[0].entries() if e.size]
            f.close()
            assert len(got) == 1 and got[0] in wanted
    finally:
        running = False
        writer.join()
    assert swaps > 0


def test_a_writable_cuda_fat_binary_written_while_its_entries_decode() -> None:
    """The same for a CUDA fat binary's zstd entries: a byte of the first
    entry's stream flipped and flipped back by another thread; each decode
    is of the bytes as they were when the call began, flipped or not: one
    of the two readings (images, or a clean error), never a third."""

    def reading(data: bytes | bytearray) -> object:
        f = co.parse(data)
        try:
            return [bytes(e.data) for e in f.cuda_fatbins()[0].entries()]
        except co.Error as e:
            return type(e)
        finally:
            f.close()

    original = read("cuda/raw-zstd.fatbin")
    at = 16 + 64 + 200  # inside the first entry's compressed payload
    flipped = bytearray(original)
    flipped[at] ^= 0x5A
    allowed = [reading(original), reading(flipped)]
    buf = bytearray(original)
    running = True

    def flip() -> None:
        while running:
            buf[at] ^= 0x5A

    writer = threading.Thread(target=flip)
    writer.start()
    try:
        for _ in range(200):
            assert reading(buf) in allowed
    finally:
        running = False
        writer.join()
