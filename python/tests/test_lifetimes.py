"""Views never outlive the bytes they show: the buffer export is held while
a File is open, `close()` refuses while views are alive, and views keep
what they view alive."""

from __future__ import annotations

import gc
import mmap

import pytest

import clangoffload as co
from conftest import fixture, read


def test_close_refuses_while_a_view_of_the_mapping_is_alive() -> None:
    f = co.open(fixture("llvm22/hip-4096.bundle"))
    view = f.containers()[0].entries()[1].data
    with pytest.raises(BufferError):
        f.close()
    assert not f.closed
    assert view[:4] == read("llvm22/hip-4096.bundle")[4096:4100]  # still mapped, still valid
    del view
    gc.collect()
    f.close()
    assert f.closed
    f.close()  # twice is fine


def test_a_closed_file_gives_no_views_and_no_entries() -> None:
    f = co.open(fixture("llvm22/hip-4096.bundle"))
    (c,) = f.containers()
    entry = c.entries()[1]
    f.close()
    with pytest.raises(ValueError, match="closed"):
        entry.data
    with pytest.raises(ValueError, match="closed"):
        c.entries()
    with pytest.raises(ValueError, match="closed"):
        f.containers()
    assert "closed" in repr(f)


def test_with_block_closes() -> None:
    with co.open(fixture("llvm22/hip-4096.bundle")) as f:
        ids = [e.id for e in f.containers()[0].entries()]
    assert f.closed and len(ids) == 3


def test_a_parsed_bytearray_cannot_be_resized_until_closed() -> None:
    data = bytearray(read("llvm22/hip-4096.bundle"))
    f = co.parse(data)
    with pytest.raises(BufferError):
        data.extend(b"x")
    f.close()
    data.extend(b"x")  # the export is released


def test_a_parsed_mmap_cannot_be_closed_under_the_file() -> None:
    with open(fixture("llvm22/hip-4096.bundle"), "rb") as handle:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    f = co.parse(mapping)
    with pytest.raises(BufferError):
        mapping.close()
    f.close()
    mapping.close()


def test_views_outlive_the_file_object() -> None:
    data = read("llvm22/hip-4096.bundle")
    view = co.parse(data).containers()[0].entries()[2].data
    gc.collect()
    assert view.obj is data and len(view) > 0


def test_decoded_views_keep_the_decoded_bytes() -> None:
    view = co.parse(read("compressed/llvm22/hip.v3.ccob")).containers()[0].entries()[1].data
    gc.collect()
    plain = co.parse(read("compressed/llvm22/hip.bundle")).containers()[0].entries()[1]
    assert bytes(view) == bytes(plain.data)


def test_an_unowned_memoryview_is_copied() -> None:
    # What LIEF hands out: a memoryview with no owner (memoryview.obj None).
    # ctypes makes one here the same way.
    import ctypes

    raw = read("llvm22/hip-4096.bundle")
    buffer = (ctypes.c_char * len(raw)).from_buffer_copy(raw)
    unowned = memoryview(buffer).cast("B")
    f = co.parse(unowned)
    entry = f.containers()[0].entries()[1]
    assert bytes(entry.data) == raw[entry.offset : entry.offset + entry.size]


def test_a_writable_source_is_viewed_in_place_and_decoded_whole() -> None:
    plain = bytearray(read("llvm22/hip-4096.bundle"))
    entry = co.parse(plain).containers()[0].entries()[1]
    view = entry.data
    assert view.obj is plain and not view.readonly  # the caller's own bytes
    ccob = bytearray(read("compressed/llvm22/hip.v3.ccob"))
    f = co.parse(ccob)
    decoded = f.containers()[0].bundle()
    assert bytes(decoded) == read("compressed/llvm22/hip.bundle")
    assert co.decompress(ccob) == bytes(decoded)


def test_an_empty_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # mmap cannot map an empty file; open() still gives a File, and close().
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with co.open(empty) as f:
        assert (len(f), f.containers(), f.scan(), f.wrappers()) == (0, [], [], [])
    assert f.closed
