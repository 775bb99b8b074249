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
