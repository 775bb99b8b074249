"""Zero-copy readers and writers for LLVM/Clang offloading containers.

Offload bundles (``__CLANG_OFFLOAD_BUNDLE__``), compressed bundles (``CCOB``,
zlib or zstd, versions 1-3) and OffloadBinaries, alone, back to back, in
ELF/COFF/PE sections and in archives: found, listed, selected, extracted and
written in process, with the rules of clang-offload-bundler 22 and the HIP
runtime. The native module holds every rule (it is the Rust library
``clangoffload`` underneath); this layer only opens files.

    import clangoffload
    with clangoffload.open("libfoo.so") as f:
        for container in f.containers():
            for entry in container.entries():
                print(container.kind, container.offset, entry.id, len(entry.data))

See docs/python.md for the lifetime rules and recipes.
"""

from __future__ import annotations

import mmap as _mmap
import os as _os
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    import sys

    if sys.version_info >= (3, 12):
        from collections.abc import Buffer
    else:
        from typing_extensions import Buffer

from ._native import (
    BadMagicError,
    BundlerFailure,
    Container,
    CoverageCell,
    CoveredFile,
    Entry,
    EntryId,
    Error,
    File,
    HashMismatchError,
    InvalidIdError,
    KpackArchive,
    KpackEntry,
    KpackResolution,
    LimitExceededError,
    TargetId,
    TruncatedError,
    UnsupportedError,
    Wrapper,
    bundle,
    coverage,
    decompress,
    kpack_arch_list,
    kpack_resolve,
    list_ids,
    normalize_entry_id,
    unbundle,
)
from ._native import _open_mapped
from ._native import parse as _parse

__all__ = [
    "BadMagicError",
    "BundlerFailure",
    "Container",
    "CoverageCell",
    "CoveredFile",
    "Entry",
    "EntryId",
    "Error",
    "File",
    "HashMismatchError",
    "InvalidIdError",
    "KpackArchive",
    "KpackEntry",
    "KpackResolution",
    "LimitExceededError",
    "TargetId",
    "TruncatedError",
    "UnsupportedError",
    "Wrapper",
    "bundle",
    "coverage",
    "decompress",
    "kpack_arch_list",
    "kpack_resolve",
    "list_ids",
    "normalize_entry_id",
    "open",
    "parse",
    "scan",
    "unbundle",
]


def open(path: Union[str, "_os.PathLike[str]"], *, verify_hash: bool = True) -> File:  # noqa: A001
    """Maps the file at ``path`` read-only and returns its :class:`File`.

    Nothing is read until asked for. ``close()`` (or leaving a ``with``
    block) unmaps it; it raises ``BufferError`` while a ``memoryview`` of the
    file's bytes (an entry's ``.data``) is alive, so no view can outlive the
    mapping. ``verify_hash=False`` decodes compressed bundles without
    checking their MD5 (LLVM's bundler and the runtimes check none; the
    check costs more than decoding).
    """
    name = _os.fspath(path)
    with _os.fdopen(_os.open(name, _os.O_RDONLY | getattr(_os, "O_BINARY", 0)), "rb") as handle:
        if _os.fstat(handle.fileno()).st_size == 0:
            # mmap cannot map an empty file.
            return _open_mapped(_EmptyMapping(), name, verify_hash=verify_hash)
        mapping = _mmap.mmap(handle.fileno(), 0, access=_mmap.ACCESS_READ)
    return _open_mapped(mapping, name, verify_hash=verify_hash)


class _EmptyMapping(bytes):
    """An empty file's bytes, closable like the mmap of any other file."""

    def close(self) -> None:
        pass


def parse(data: Buffer, *, verify_hash: bool = True) -> File:
    """Returns the :class:`File` for any buffer-protocol object (``bytes``,
    ``bytearray``, ``memoryview``, ``mmap``, ...), holding its buffer export
    until ``close()``: a ``bytearray`` cannot be resized and an ``mmap``
    cannot be closed meanwhile. Entries' ``.data`` are views of ``data``.

    A ``memoryview`` that no object owns (``.obj is None``, as LIEF hands
    out) is copied first: nothing would keep its memory alive.
    """
    if isinstance(data, memoryview) and data.obj is None:
        data = data.tobytes()
    return _parse(data, verify_hash=verify_hash)


def scan(data: Buffer) -> list[Container]:
    """Every container anywhere in ``data`` (a memory image, an unknown
    file), CUDA fat binaries included, validated; magics that start no valid
    container are skipped."""
    return parse(data).scan()
