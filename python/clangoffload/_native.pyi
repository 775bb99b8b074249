# Hand-written stubs of the native module (python/src/*.rs), checked against
# it by python/tests/test_stubs.py: every public name here exists there with
# the same kind (class, function, property), and the other way round.
import os
import sys
from typing import Literal, Self, final

if sys.version_info >= (3, 12):
    from collections.abc import Buffer
else:
    from typing_extensions import Buffer

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
    "_open_mapped",
    "bundle",
    "coverage",
    "decompress",
    "kpack_arch_list",
    "kpack_resolve",
    "list_ids",
    "normalize_entry_id",
    "parse",
    "unbundle",
]

_ContainerKind = Literal["bundle", "compressed", "offload_binary", "cuda_fatbin"]
_DeviceMatch = Literal["native", "generic", "spirv", "cubin", "ptx"]
_FeatureSetting = Literal["on", "off", "any"]

class Error(ValueError):
    """What is wrong with an input. ``str()`` is the core's message."""

    kind: str
    """The core's error kind, e.g. ``"Truncated"``, ``"HashMismatch"``."""
    offset: int | None
    """The byte offset of the field at fault (in the caller's buffer; in the
    decoded bundle for a compressed bundle's contents), or None."""
    entry: int | None
    """The index of the entry at fault, or None."""

class TruncatedError(Error):
    """The input ends inside a field, or a field points past its end."""

class BadMagicError(Error):
    """The bytes are not the container or file they were read as."""

class HashMismatchError(Error):
    """A compressed bundle decoded to bytes whose hash is not the stored one."""

class LimitExceededError(Error):
    """Decoding would exceed a size limit, or memory could not be reserved."""

class UnsupportedError(Error):
    """A version, method or file variant this library does not read."""

class InvalidIdError(Error):
    """An entry ID or target ID that does not parse (``offset``: where in it)."""

class BundlerFailure(Error):
    """A bundler job refused its request (targets, alignment, missing entries)."""

@final
class File:
    """The bytes of one file or buffer (see ``clangoffload.open``/``parse``)."""

    @property
    def closed(self) -> bool: ...
    @property
    def name(self) -> str | None: ...
    @property
    def data(self) -> memoryview:
        """All the bytes, as a view."""
    def containers(self) -> list[Container]:
        """Every container, in file order, as ``clangoffload inspect`` finds them."""
    def scan(self) -> list[Container]:
        """Every container anywhere in the bytes, found by magic and validated,
        CUDA fat binaries (kind ``"cuda_fatbin"``) included."""
    def cuda_fatbins(self) -> list[Container]:
        """Every NVIDIA CUDA fat binary, in the order ``cuobjdump -all`` reads
        them; a damaged one raises."""
    def extract(self, *, target: str | None = None, arch: str | None = None) -> list[Entry]:
        """Every entry whose code the bundler gives to ``target`` and/or whose
        processor is ``arch``, in file order."""
    def wrappers(self) -> list[Wrapper]:
        """The HIP/CUDA fat-binary wrapper records, with file offsets."""
    def close(self) -> None:
        """Releases the buffer (unmaps a file from ``open``); ``BufferError``
        while views of its bytes are alive."""
    def __len__(self) -> int: ...
    def __enter__(self) -> File: ...
    def __exit__(self, *exc: object) -> None: ...

@final
class Container:
    """A bundle, compressed bundle or OffloadBinary in a :class:`File`, or
    (from ``scan`` or ``cuda_fatbins``) a CUDA fat binary."""

    @property
    def kind(self) -> _ContainerKind: ...
    @property
    def offset(self) -> int:
        """Where it starts in the file."""
    @property
    def size(self) -> int: ...
    @property
    def section(self) -> str | None:
        """The ELF/COFF section it is in."""
    @property
    def member(self) -> str | None:
        """The archive member it is in."""
    @property
    def version(self) -> int | None:
        """A compressed bundle's header version."""
    @property
    def method(self) -> Literal["zlib", "zstd", "unknown"] | None: ...
    @property
    def method_id(self) -> int | None:
        """The method field as stored (0 zlib, 1 zstd)."""
    @property
    def total_size(self) -> int | None: ...
    @property
    def compressed_size(self) -> int | None:
        """The stream's size, after the header."""
    @property
    def ratio(self) -> float | None:
        """Uncompressed over compressed size."""
    @property
    def uncompressed_size(self) -> int | None: ...
    @property
    def hash(self) -> int | None:
        """A compressed bundle's stored hash (low 64 bits of MD5)."""
    @property
    def data(self) -> memoryview:
        """The container's bytes in the file."""
    def bundle(self) -> memoryview | bytes | None:
        """The bundle's bytes: a view for a plain bundle, the decoded bytes
        (hash checked) for a compressed one, None for an OffloadBinary or a
        CUDA fat binary."""
    def entries(self) -> list[Entry]:
        """The entries (an OffloadBinary's images; a CUDA fat binary's, each
        ``--concat`` entry followed by its members), in file order."""
    def select_for_device(self, device: str) -> Entry | None:
        """The code object the HIP runtime loads on ``device``; None if none
        fits. For a CUDA fat binary (``device``: ``"sm_86"`` or ``"86"``), the
        code the CUDA driver loads: the closest cubin, else PTX."""

@final
class Entry:
    """A bundle entry, an OffloadBinary image, or a CUDA fat binary entry
    (``id`` ``sm_90``, ``compute_90`` or ``lto_90``; ``data`` its image as
    cuobjdump extracts it)."""

    @property
    def id(self) -> str:
        """The entry ID (an image's target ID)."""
    @property
    def index(self) -> int | None:
        """Its index in its container; None for a chosen code object."""
    @property
    def offset(self) -> int:
        """In the file; in the decoded bundle for a compressed one."""
    @property
    def size(self) -> int: ...
    @property
    def data(self) -> memoryview:
        """The bytes: a view of the file, or of the decoded bundle."""
    @property
    def code_object_target(self) -> str | None: ...
    @property
    def target_matches(self) -> bool | None: ...
    @property
    def how(self) -> _DeviceMatch | None:
        """How ``select_for_device`` chose it."""
    @property
    def processor(self) -> str | None:
        """The processor its code is for, aliases resolved, features dropped."""
    def matches(self, target: str, hip_openmp_compatible: bool = False) -> bool:
        """Whether the bundler gives this entry to ``-targets=target``."""
    @property
    def triple(self) -> str | None: ...
    @property
    def arch(self) -> str | None: ...
    @property
    def image_kind(self) -> str | None:
        """An OffloadBinary image's kind; a CUDA entry's (``elf``, ``ptx``, ...)."""
    @property
    def sm(self) -> str | None:
        """A CUDA entry's SM (``sm_90a``)."""
    @property
    def compression(self) -> Literal["none", "lz4", "zstd", "lz4+zstd", "opaque"] | None:
        """How a CUDA entry is stored."""
    @property
    def cuobjdump_name(self) -> str | None:
        """The file cuobjdump extracts a CUDA entry's image to."""
    @property
    def offload_kind(self) -> str | None: ...
    @property
    def strings(self) -> list[tuple[str, str]] | None: ...

@final
class Wrapper:
    """A HIP/CUDA fat-binary wrapper record, with file offsets."""

    offset: int
    section: str
    kind: Literal["HIPF", "HIPK", "CUDA", "unknown magic"]
    magic: int
    version: int
    binary_address: int
    target_offset: int | None

@final
class EntryId:
    """A bundle entry ID, ``<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]``."""

    def __new__(cls, text: str) -> Self: ...
    @property
    def kind(self) -> str: ...
    @property
    def triple(self) -> str: ...
    @property
    def arch(self) -> str: ...
    @property
    def target_id(self) -> str: ...
    @property
    def target(self) -> TargetId | None: ...
    @property
    def processor(self) -> str | None: ...
    @property
    def is_host(self) -> bool: ...
    def normalized(self) -> str: ...
    def is_compatible_with(self, requested: EntryId, hip_openmp_compatible: bool = False) -> bool: ...
    def bundler_matches(self, requested: EntryId, hip_openmp_compatible: bool = False) -> bool: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TargetId:
    """An AMDGPU target ID, ``<processor>(:<feature>(+|-))*``."""

    def __new__(cls, text: str) -> Self: ...
    @property
    def processor(self) -> str: ...
    @property
    def canonical(self) -> str: ...
    @property
    def xnack(self) -> _FeatureSetting: ...
    @property
    def sramecc(self) -> _FeatureSetting: ...
    def is_compatible_with(self, requested: TargetId) -> bool: ...
    def conflicts_with(self, other: TargetId) -> bool: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class KpackArchive:
    """A kpack archive (``.kpack``, ROCm 7's split device code), read in place."""

    def __new__(cls, buffer: Buffer) -> Self: ...
    @property
    def scheme(self) -> Literal["none", "zstd-per-kernel"]: ...
    @property
    def group_name(self) -> str | None: ...
    @property
    def arches(self) -> list[str]: ...
    def entries(self) -> list[KpackEntry]: ...
    def read(self, key: str, arch: str) -> bytes: ...

@final
class KpackEntry:
    """An entry of a kpack archive's table of contents."""

    @property
    def key(self) -> str: ...
    @property
    def arch(self) -> str: ...
    @property
    def target(self) -> str | None: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def original_size(self) -> int: ...

@final
class KpackResolution:
    """What the HIP runtime loads for a record, or its error code."""

    @property
    def kpack_error(self) -> int: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def archive(self) -> int | None: ...
    @property
    def entry(self) -> KpackEntry | None: ...

def kpack_arch_list(isa: str) -> list[str]: ...
def kpack_resolve(
    archives: list[KpackArchive],
    key: str,
    arches: list[str],
    *,
    first_candidate: bool = False,
    disabled: bool = False,
) -> KpackResolution: ...
def parse(data: Buffer, *, verify_hash: bool = True) -> File: ...
def _open_mapped(mapping: Buffer, name: str, *, verify_hash: bool = True) -> File: ...
def bundle(
    entries: list[tuple[str, Buffer]],
    align: int = 4096,
    compress: bool | Literal["zstd", "zlib"] | None = None,
    *,
    version: Literal[2, 3] = 3,
    level: int | None = None,
) -> bytes: ...
def unbundle(
    data: Buffer,
    targets: list[str],
    *,
    file_type: str = "o",
    allow_missing: bool = False,
    hip_openmp_compatible: bool = False,
) -> list[bytes]: ...
def list_ids(data: Buffer, *, file_type: str = "o") -> list[str]: ...
def decompress(data: Buffer, *, verify_hash: bool = True, max_size: int | None = None) -> bytes: ...
def normalize_entry_id(text: str) -> str: ...

@final
class CoverageCell:
    """A file's verdict for one device."""

    @property
    def device(self) -> str: ...
    @property
    def applies(self) -> bool: ...
    @property
    def loads(self) -> bool: ...
    @property
    def entry(self) -> str | None: ...
    @property
    def how(self) -> str | None: ...
    @property
    def reason(self) -> str: ...

@final
class CoveredFile:
    """One file of device code (a wheel member: ``<wheel>!<member>``)."""

    @property
    def file(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def targets(self) -> list[tuple[str, int]]: ...
    @property
    def findings(self) -> list[str]: ...
    @property
    def cells(self) -> list[CoverageCell]: ...

def coverage(
    paths: list[str | os.PathLike[str]],
    devices: list[str] | None = None,
    *,
    verify: bool = False,
) -> list[CoveredFile]: ...
