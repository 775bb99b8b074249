//! Compressed bundles (`CCOB`) and the walker over containers laid back to
//! back. Nothing here allocates the output: decompression and compression
//! write into the caller's buffer.

use clangoffload::compressed::truncated_md5;
#[cfg(feature = "alloc")]
use clangoffload::compressed::{compress, CompressOptions};
#[cfg(feature = "alloc")]
use clangoffload::CompressionMethod;
use clangoffload::{
    CompressedBundle, Container, Containers, DecompressOptions, ErrorKind, FileKind, Limits,
};

#[cfg(feature = "alloc")]
use crate::ffi::write_made;
use crate::ffi::{clangoffload_bytes, len_u64, out_arg, slice_arg};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Compression method 0: zlib.
pub const CLANGOFFLOAD_METHOD_ZLIB: u16 = 0;
/// Compression method 1: zstd.
pub const CLANGOFFLOAD_METHOD_ZSTD: u16 = 1;
/// `clangoffload_compressed_decompress` flag: do not verify the stored hash
/// (only for callers that verify the bytes some other way).
pub const CLANGOFFLOAD_SKIP_HASH_CHECK: u32 = 1;
/// `max_size` value meaning the default limit,
/// `CLANGOFFLOAD_DEFAULT_MAX_DECOMPRESSED_SIZE`.
pub const CLANGOFFLOAD_DEFAULT_LIMIT: u64 = 0;
/// The default limit on a decompressed size: 1 GiB.
pub const CLANGOFFLOAD_DEFAULT_MAX_DECOMPRESSED_SIZE: u64 = 1 << 30;
const _: () =
    assert!(CLANGOFFLOAD_DEFAULT_MAX_DECOMPRESSED_SIZE == Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE);
/// `level` value meaning the method's default (zstd 3, zlib 6), as
/// clang-offload-bundler uses.
pub const CLANGOFFLOAD_DEFAULT_LEVEL: i32 = i32::MIN;

/// The header of a compressed bundle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_compressed_header {
    /// 1, 2 or 3.
    pub version: u16,
    /// `CLANGOFFLOAD_METHOD_ZLIB`, `CLANGOFFLOAD_METHOD_ZSTD`, or another
    /// value as stored (decompressing it then fails).
    pub method: u16,
    /// 20, 24 or 32.
    pub header_len: u32,
    /// Whether the header has a total size (versions 2 and 3).
    pub has_total_size: bool,
    /// Header plus compressed bytes (0 for version 1).
    pub total_size: u64,
    /// The size the bundle decompresses to, as declared.
    pub uncompressed_size: u64,
    /// The stored truncated MD5 of the uncompressed bundle.
    pub hash: u64,
    /// The container: the header and compressed bytes, up to the total size
    /// (version 1: to the end of the input).
    pub container: clangoffload_bytes,
    /// The compressed bytes after the header.
    pub compressed: clangoffload_bytes,
}

impl From<&CompressedBundle<'_>> for clangoffload_compressed_header {
    fn from(c: &CompressedBundle<'_>) -> Self {
        clangoffload_compressed_header {
            version: c.version(),
            method: c.method().raw(),
            header_len: u32::try_from(c.header_len()).unwrap_or(u32::MAX),
            has_total_size: c.total_size().is_some(),
            total_size: c.total_size().unwrap_or(0),
            uncompressed_size: c.uncompressed_size(),
            hash: c.hash(),
            container: clangoffload_bytes::of(c.data()),
            compressed: clangoffload_bytes::of(c.compressed()),
        }
    }
}

/// What `clangoffload_containers_next` or a scan found.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_container_kind {
    /// An uncompressed binary bundle (`__CLANG_OFFLOAD_BUNDLE__`).
    Bundle = 1,
    /// A compressed bundle (`CCOB`).
    Compressed = 2,
    /// An OffloadBinary (`10 FF 10 AD`).
    OffloadBinary = 3,
    /// An NVIDIA CUDA fat binary (`50 ED 55 BA`): found by a scan only
    /// (`clangoffload_scan_cursor_next`, `clangoffload_scan_next`); its
    /// bytes are a raw fat binary for `clangoffload_cuda_fatbins_parse`.
    CudaFatbin = 4,
}

impl clangoffload_container_kind {
    /// Every kind, with its number and the file kind core names it by.
    const ALL: [(Self, u32, FileKind); 4] = [
        (Self::Bundle, 1, FileKind::Bundle),
        (Self::Compressed, 2, FileKind::CompressedBundle),
        (Self::OffloadBinary, 3, FileKind::OffloadBinary),
        (Self::CudaFatbin, 4, FileKind::CudaFatbin),
    ];

    /// The kind of a container core found.
    pub(crate) fn of(container: &Container<'_>) -> Self {
        Self::of_file(container.file_kind()).unwrap_or(clangoffload_container_kind::Bundle)
    }

    /// The kind of bytes core's detection names, if they start a container.
    pub(crate) fn of_file(kind: FileKind) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, _, k)| *k == kind)
            .map(|(c, _, _)| *c)
    }

    /// The file kind a `clangoffload_container_kind` number names.
    fn file_kind(raw: u32) -> Option<FileKind> {
        Self::ALL
            .iter()
            .find(|(_, n, _)| *n == raw)
            .map(|(_, _, k)| *k)
    }
}

impl From<clangoffload_container_kind> for u32 {
    fn from(kind: clangoffload_container_kind) -> u32 {
        let found = clangoffload_container_kind::ALL
            .iter()
            .find(|(k, _, _)| *k == kind);
        found.map_or(0, |(_, n, _)| *n)
    }
}

/// The tag of a `clangoffload_container_kind` number (`bundle`,
/// `compressed`, `offload_binary`, `cuda_fatbin`): the stable identifier
/// `clangoffload inspect --json` and the Python package give the kind; empty
/// for any other number.
///
/// Ownership: returns a view of static storage; never free it.
///
/// NULL: never NULL with a non-zero length. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_container_kind_tag(kind: u32) -> clangoffload_bytes {
    let tag = clangoffload_container_kind::file_kind(kind).and_then(FileKind::container_tag);
    clangoffload_bytes::of(tag.unwrap_or_default().as_bytes())
}

/// The name reports print for a `clangoffload_container_kind` number
/// (`bundle`, `compressed bundle`, `offload binary`, `CUDA fat binary`);
/// empty for any other number.
///
/// Ownership: returns a view of static storage; never free it.
///
/// NULL: never NULL with a non-zero length. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_container_kind_name(kind: u32) -> clangoffload_bytes {
    let name = clangoffload_container_kind::file_kind(kind).map(FileKind::name);
    clangoffload_bytes::of(name.unwrap_or_default().as_bytes())
}

/// One container in a sequence.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_container {
    /// Which kind of container.
    pub kind: clangoffload_container_kind,
    /// Its offset in the buffer walked.
    pub offset: u64,
    /// Its bytes, from its magic to its end: pass them to
    /// `clangoffload_bundle_parse` or the `clangoffload_compressed_*` functions.
    pub data: clangoffload_bytes,
}

/// Reads the header of the compressed bundle in `len` bytes at `data` into
/// `*out`. Reads nothing past the header.
///
/// Ownership: nothing is allocated and nothing to free; `*out` is a plain
/// record the caller owns. On failure `*out` is untouched and `*err` (if not
/// NULL) says what and where.
///
/// Lifetime: `out->container` and `out->compressed` borrow `data`: valid while
/// `data` stays alive and unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` and `err` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_compressed_parse(
    data: *const u8,
    len: usize,
    out: *mut clangoffload_compressed_header,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable record.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let c = CompressedBundle::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_compressed_header::from(&c);
        Ok(())
    })
}

pub(crate) fn limits(max_size: u64) -> Limits {
    Limits {
        max_uncompressed_size: if max_size == CLANGOFFLOAD_DEFAULT_LIMIT {
            CLANGOFFLOAD_DEFAULT_MAX_DECOMPRESSED_SIZE
        } else {
            max_size
        },
    }
}

/// Runs every check that needs no decoding (method, size against `max_size`,
/// zstd frame header and extent) and stores the size the bundle decompresses to
/// in `*out_size`: the buffer to give `clangoffload_compressed_decompress`.
/// `max_size` is `CLANGOFFLOAD_DEFAULT_LIMIT` or a limit in bytes.
///
/// Ownership: nothing is allocated and nothing to free; `*out_size` is a plain
/// number. On failure `*err` (if not NULL) says what and where.
///
/// NULL: `data` may be NULL only when `len` is 0; `out_size` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out_size` and `err` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_compressed_decompressed_size(
    data: *const u8,
    len: usize,
    max_size: u64,
    out_size: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable value.
        let out_size = unsafe { out_arg(out_size) }?;
        let size = CompressedBundle::parse(data)
            .and_then(|c| c.check(&limits(max_size)))
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { report(&e, err) })?;
        *out_size = size;
        Ok(())
    })
}

/// Decompresses the compressed bundle in `len` bytes at `data` into `out` (room
/// for `out_cap` bytes) and stores the decompressed size in `*out_len`. The
/// output is exactly the declared size (else an error), is never a compressed
/// bundle itself, and its truncated MD5 must match the stored one unless
/// `flags` has `CLANGOFFLOAD_SKIP_HASH_CHECK` (any other flag bit:
/// `INVALID_ARGUMENT`). A declared size over `max_size`
/// (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1 GiB) is refused before anything is decoded.
/// `out` too small: `BUFFER_TOO_SMALL` with the needed size in `*out_len`.
///
/// Ownership: the output goes into the caller's `out`; nothing to free. The
/// library allocates nothing for zlib and only its bounded decoder state for
/// zstd, freed before returning. On failure `out` may hold partial output and
/// `*err` (if not NULL) says what and where.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL is taken as no
/// room (`BUFFER_TOO_SMALL` with the size needed); `out_len` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or writable for
/// `out_cap` bytes and does not overlap `data`; `out_len` and `err` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_compressed_decompress(
    data: *const u8,
    len: usize,
    max_size: u64,
    flags: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        if flags & !CLANGOFFLOAD_SKIP_HASH_CHECK != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable value.
        let out_len = unsafe { out_arg(out_len) }?;
        let options = DecompressOptions {
            limits: limits(max_size),
            verify_hash: flags & CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
            ..DecompressOptions::default()
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e| unsafe { report(&e, err) };
        let c = CompressedBundle::parse(data).map_err(fail)?;
        if isize::try_from(out_cap).is_err() {
            return Err(clangoffload_status::InvalidArgument);
        }
        let dest: &mut [u8] = if out.is_null() {
            &mut []
        } else {
            // SAFETY: non-NULL, writable for out_cap bytes and not aliasing
            // `data`, as the caller promises.
            unsafe { core::slice::from_raw_parts_mut(out, out_cap) }
        };
        match c.decompress_into(dest, &options) {
            Ok(size) => *out_len = size,
            // Reported like every other caller buffer: the size needed, in
            // `*out_len`.
            Err(e) => {
                if let ErrorKind::OutputTooSmall { needed, .. } = e.kind() {
                    *out_len = usize::try_from(needed).unwrap_or(usize::MAX);
                    return Err(clangoffload_status::BufferTooSmall);
                }
                return Err(fail(e));
            }
        }
        Ok(())
    })
}

/// Stores in `*out_hash` the truncated MD5 compressed bundles carry: the first
/// 8 bytes of the MD5 of `len` bytes at `data`, as a little-endian integer.
///
/// Ownership: nothing to free; `*out_hash` is a plain number. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0 (the hash of nothing);
/// `out_hash` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out_hash` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_truncated_md5(
    data: *const u8,
    len: usize,
    out_hash: *mut u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable value.
        *unsafe { out_arg(out_hash) }? = truncated_md5(data);
        Ok(())
    })
}

/// An upper bound on what `clangoffload_compress` writes for `len` input bytes,
/// stored in `*out_bound`. `INVALID_ARGUMENT` if it would overflow.
///
/// Ownership: nothing to free; `*out_bound` is a plain number. Pure.
///
/// NULL: `out_bound` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `out_bound` is NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_compress_bound(
    len: usize,
    out_bound: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises a writable value.
        let out_bound = unsafe { out_arg(out_bound) }?;
        // zstd's own bound exceeds zlib's stored-block overhead (5 bytes per
        // 64 KiB); 32 for the header, 64 for stream headers and trailers.
        let bound = len
            .checked_add(len / 256)
            .and_then(|n| n.checked_add((128 << 10) >> 11))
            .and_then(|n| n.checked_add(32 + 64))
            .ok_or(clangoffload_status::InvalidArgument)?;
        *out_bound = bound;
        Ok(())
    })
}

/// Compresses the (uncompressed) bundle in `len` bytes at `data` into a
/// compressed bundle that clang-offload-bundler reads: header `version` 2 or 3,
/// `method` `CLANGOFFLOAD_METHOD_ZSTD` (LLVM's choice; level 3 with
/// long-distance matching by default) or `CLANGOFFLOAD_METHOD_ZLIB` (level 6),
/// at `level` or `CLANGOFFLOAD_DEFAULT_LEVEL`. Writes into `out` (room for
/// `out_cap` bytes; `clangoffload_compress_bound` gives enough) and stores the
/// length in `*out_len`; when it does not fit, `BUFFER_TOO_SMALL` with the
/// length needed.
///
/// Ownership: the output goes into the caller's `out`; nothing to free. The
/// library's working memory (including a full-size copy of the output) is freed
/// before returning. On failure `*err` (if not NULL) says what and where.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL asks for the
/// length (`BUFFER_TOO_SMALL`, after compressing); `out_len` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or writable for
/// `out_cap` bytes and does not overlap `data`; `out_len` and `err` are NULL or
/// writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_compress(
    data: *const u8,
    len: usize,
    version: u16,
    method: u16,
    level: i32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        let options = CompressOptions {
            version,
            method: CompressionMethod::from_raw(method),
            level: (level != CLANGOFFLOAD_DEFAULT_LEVEL).then_some(level),
        };
        // SAFETY: out is NULL or writable for out_cap bytes, out_len and
        // err as the caller promises.
        unsafe { write_made(compress(data, &options), out, out_cap, out_len, err) }
    })
}

/// Walks containers laid back to back (a linked `.hip_fatbin`: bundles,
/// compressed bundles and OffloadBinaries, with zero padding between them).
/// Start with `*cursor = 0`; each call stores the next container at or after
/// `*cursor` in `*out` and moves `*cursor` past it. Returns
/// `CLANGOFFLOAD_STATUS_END` when only zero bytes are left. Containers are
/// delimited by their own sizes, never by searching for a magic. After an error
/// (with its absolute offset in `*err`) the walk cannot continue. A cursor past
/// `len` gives `INVALID_ARGUMENT`.
///
/// Ownership: nothing is allocated and nothing to free. Unlike most functions,
/// `*cursor` is also written on `END` and on errors (moved to `len`).
///
/// Lifetime: `out->data` borrows `data`: valid while `data` stays alive and
/// unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `cursor` or `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// Thread safety: the cursor is the whole state of the walk; give each thread
/// its own.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `cursor` is NULL or readable and
/// writable; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_containers_next(
    data: *const u8,
    len: usize,
    cursor: *mut u64,
    out: *mut clangoffload_container,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `cursor` is NULL or writable, as the caller promises.
        let cursor = unsafe { out_arg(cursor) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if *cursor > len_u64(len) {
            return Err(clangoffload_status::InvalidArgument);
        }
        let Some(found) = Containers::at(data, *cursor).next() else {
            *cursor = len_u64(len);
            return Err(clangoffload_status::End);
        };
        let (offset, container) = found.map_err(|e| {
            *cursor = len_u64(len);
            // SAFETY: `err` is NULL or writable, as the caller promises.
            unsafe { report(&e, err) }
        })?;
        *out = clangoffload_container {
            kind: clangoffload_container_kind::of(&container),
            offset,
            data: clangoffload_bytes::of(container.data()),
        };
        *cursor = offset.saturating_add(len_u64(container.data().len()));
        Ok(())
    })
}
