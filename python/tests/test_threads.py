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
