//! kpack archives (`.kpack`, ROCm 7's split device code): the archive's
//! facts, its architectures and entries, and each entry's code object
//! copied or decoded into the caller's buffer.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use clangoffload::kpack::{Archive, Entry, Scheme};
use clangoffload::DecompressOptions;

use crate::compressed::limits;
use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Code objects stored as they are (`compression_scheme` `none`).
pub const CLANGOFFLOAD_KPACK_STORED: u32 = 0;
/// One zstd frame per code object (`zstd-per-kernel`).
pub const CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL: u32 = 1;

/// A kpack archive read in place, its entries listed. Borrows the buffer.
pub struct clangoffload_kpack {
    pub(crate) archive: Archive<'static>,
    arches: Vec<&'static [u8]>,
    entries: Vec<Entry<'static>>,
}

/// What a kpack archive says of itself; views borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_info {
    /// `CLANGOFFLOAD_KPACK_STORED` or `CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL`.
    pub scheme: u32,
    /// `format_version` (0 if the table does not state it).
    pub format_version: u64,
    /// `group_name` (empty if absent).
    pub group_name: clangoffload_bytes,
    /// `gfx_arch_family` (empty if absent).
    pub arch_family: clangoffload_bytes,
    /// File offset of the table of contents.
    pub toc_offset: u64,
    /// How many architectures `gfx_arches` lists.
    pub arch_count: usize,
    /// How many (binary key, architecture) entries the table holds.
    pub entry_count: usize,
}

/// One entry of a kpack archive's table; views borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_entry {
    /// The binary key, `<kernel_name>#<index>`.
    pub key: clangoffload_bytes,
    /// The architecture (`gfx90a:xnack+`), as the runtime matches it.
    pub arch: clangoffload_bytes,
    /// `metadata.target`, the bundle entry ID it came from (empty if absent).
    pub target: clangoffload_bytes,
    /// Its place among the stored code objects.
    pub ordinal: u64,
    /// Its size decoded: the buffer `clangoffload_kpack_read` needs.
    pub original_size: u64,
    /// File offset of its map in the table of contents.
    pub toc_offset: u64,
}

/// Parses the kpack archive in `len` bytes at `data` (header and the whole
/// table of contents, every type checked; no code object touched) and
/// stores a handle in `*out`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_free` (exactly once). On failure `*out`
/// is untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: they must stay
/// alive and unchanged until it is freed; views taken from it borrow them.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` must not be NULL;
/// `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or writable;
/// `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_parse(
    data: *const u8,
    len: usize,
    out: *mut *mut clangoffload_kpack,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes that outlive the
        // handle.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable pointer.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let archive = Archive::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        let mut entries = Vec::new();
        for entry in archive.entries() {
            // SAFETY: `err` is NULL or writable, as the caller promises.
            let entry = entry.map_err(|e| unsafe { report(&e, err) })?;
            entries
                .try_reserve(1)
                .map_err(|_| clangoffload_status::OutOfMemory)?;
            entries.push(entry);
        }
        let mut arches = Vec::new();
        for arch in archive.arches() {
            arches
                .try_reserve(1)
                .map_err(|_| clangoffload_status::OutOfMemory)?;
            arches.push(arch);
        }
        *out = into_handle(clangoffload_kpack {
            archive,
            arches,
            entries,
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_kpack_parse`; views taken from it
/// stay views of the caller's buffer.
///
/// Ownership: the handle is released; the buffer stays the caller's.
///
/// NULL: a NULL `kpack` does nothing.
///
/// # Safety
/// `kpack` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_free(kpack: *mut clangoffload_kpack) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(kpack) }
}

/// Stores what the archive says of itself in `*out`.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the views borrow the parsed buffer.
///
/// NULL: `kpack` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `kpack` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_get_info(
    kpack: *const clangoffload_kpack,
    out: *mut clangoffload_kpack_info,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let kpack = unsafe { handle_arg(kpack) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let archive = &kpack.archive;
        *out = clangoffload_kpack_info {
            scheme: match archive.scheme() {
                Scheme::Stored => CLANGOFFLOAD_KPACK_STORED,
                Scheme::ZstdPerKernel => CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL,
            },
            format_version: archive.format_version().unwrap_or(0),
            group_name: clangoffload_bytes::of(archive.group_name().unwrap_or_default()),
            arch_family: clangoffload_bytes::of(archive.arch_family().unwrap_or_default()),
            toc_offset: archive.toc_offset(),
            arch_count: kpack.arches.len(),
            entry_count: kpack.entries.len(),
        };
        Ok(())
    })
}

/// How many architectures `gfx_arches` lists.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `kpack` gives 0.
///
/// # Safety
/// `kpack` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_arch_count(kpack: *const clangoffload_kpack) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(kpack, |k| &k.arches) }
}

/// How many entries the table of contents holds.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `kpack` gives 0.
///
/// # Safety
/// `kpack` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_entry_count(kpack: *const clangoffload_kpack) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(kpack, |k| &k.entries) }
}

/// Stores architecture `index` of `gfx_arches` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: `*out` borrows the parsed buffer.
///
/// NULL: `kpack` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `kpack` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_get_arch(
    kpack: *const clangoffload_kpack,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            kpack,
            |k| &k.arches,
            index,
            out,
            |_, a| clangoffload_bytes::of(a),
        )
    }
}

/// Stores entry `index` (table order) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the parsed buffer.
///
/// NULL: `kpack` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `kpack` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_get_entry(
    kpack: *const clangoffload_kpack,
    index: usize,
    out: *mut clangoffload_kpack_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            kpack,
            |k| &k.entries,
            index,
            out,
            |_, e| clangoffload_kpack_entry {
                key: clangoffload_bytes::of(e.key),
                arch: clangoffload_bytes::of(e.arch),
                target: clangoffload_bytes::of(e.target.unwrap_or_default()),
                ordinal: e.ordinal,
                original_size: e.original_size,
                toc_offset: e.at,
            },
        )
    }
}

/// Writes the file name `clangoffload extract` gives entry `index`'s code
/// object, for an input named `stem` (`<stem>.<index>.<key>.<ID>`, each part
/// made safe as a file name), into the `cap` bytes at `buf` (no NUL);
/// `*len` gets its length, and when it does not fit (or `buf` is NULL, a
/// question for the length) the call fails with
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// Ownership: nothing to free; the bytes are the caller's.
///
/// NULL: `kpack` and `len` must not be NULL; `stem.ptr` may be NULL only
/// when `stem.len` is 0; `buf` may be NULL (a question for the length).
///
/// # Safety
/// `kpack` is NULL or a live handle; `stem` views readable bytes; `buf`
/// writable for `cap` bytes; `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_output_name(
    kpack: *const clangoffload_kpack,
    index: usize,
    stem: clangoffload_bytes,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let kpack = unsafe { handle_arg(kpack) }?;
        let entry = kpack
            .entries
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: readable, as the caller promises.
        let stem = unsafe { stem.as_slice() }?;
        let stem = core::str::from_utf8(stem).map_err(|_| clangoffload_status::InvalidArgument)?;
        let name = clangoffload::kpack::output_name(stem, index, entry);
        // SAFETY: `buf` writable for `cap` bytes, `len` NULL or writable, as
        // the caller promises.
        unsafe { crate::ffi::write_bytes(name.as_bytes(), buf, cap, len) }
    })
}

/// Stores in `*out` the ID entry `index` is listed and named under: the
/// bundle entry ID it came from (`metadata.target`), or its architecture
/// where the table does not say. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: `*out` borrows the parsed buffer.
///
/// NULL: `kpack` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `kpack` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_entry_id(
    kpack: *const clangoffload_kpack,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            kpack,
            |k| &k.entries,
            index,
            out,
            |_, e| clangoffload_bytes::of(e.id()),
        )
    }
}

/// Copies (stored) or decodes (zstd) entry `index`'s code object into the
/// `len` bytes at `buf`, which must hold its `original_size`; `*written`
/// gets how many bytes it wrote. A zstd frame must decode to exactly
/// `original_size` bytes, at most `max_size` (`CLANGOFFLOAD_DEFAULT_LIMIT`:
/// 1 GiB). A damaged entry is an error for itself only.
///
/// Ownership: nothing to free; the bytes are the caller's.
///
/// NULL: `kpack` and `written` must not be NULL; `buf` may be NULL only
/// when `len` is 0; `err` may be NULL.
///
/// # Safety
/// `kpack` is NULL or a live handle; `buf` writable for `len` bytes;
/// `written` and `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_read(
    kpack: *const clangoffload_kpack,
    index: usize,
    max_size: u64,
    buf: *mut u8,
    len: usize,
    written: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let kpack = unsafe { handle_arg(kpack) }?;
        let entry = kpack
            .entries
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: NULL or writable, as the caller promises.
        let written = unsafe { out_arg(written) }?;
        // SAFETY: writable for `len` bytes, as the caller promises.
        let buf = unsafe { crate::ffi::mut_slice_arg(buf, len) }?;
        let options = DecompressOptions {
            limits: limits(max_size),
            ..DecompressOptions::default()
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        *written = kpack
            .archive
            .read_into(entry, buf, &options)
            .map_err(|e| unsafe { report(&e, err) })?;
        Ok(())
    })
}

/// A host after kpack's split: its `HIPK` records and their markers.
/// Borrows the buffer.
pub struct clangoffload_kpack_host {
    records: Vec<clangoffload::kpack::KpackRecord<'static>>,
    paths: Vec<Vec<&'static [u8]>>,
    moved: Option<(u64, u64)>,
}

/// What a host says of its split.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_host_info {
    /// 1 if `.hip_fatbin` has no bytes in the file (`SHT_NOBITS`): its code
    /// objects moved to kpack archives.
    pub fatbin_moved: u32,
    /// That section's address and size, as kept.
    pub fatbin_address: u64,
    pub fatbin_size: u64,
    /// How many `HIPK` records the host has.
    pub record_count: usize,
}

/// One `HIPK` record; views borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_record {
    /// Its place in its wrapper section.
    pub index: usize,
    /// The code object index it carries.
    pub co_index: u32,
    /// OK when its marker was read; else why not
    /// (`CLANGOFFLOAD_STATUS_KPACK_NULL_POINTER`: a zeroed pointer, as in an
    /// executable that is not position-independent;
    /// `_KPACK_UNRESOLVED_POINTER`; or the marker's own error status).
    pub marker_status: u32,
    /// File offset of the record.
    pub offset: u64,
    /// File offset of its marker (0 if none).
    pub marker_offset: u64,
    /// The marker's `kernel_name` (empty if none).
    pub kernel_name: clangoffload_bytes,
    /// How many search paths the marker holds.
    pub search_path_count: usize,
}

/// Reads the `HIPK` records of the ELF or COFF host in `len` bytes at
/// `data`, each with its marker (found through the pointer, or the
/// relocation that fills it), and stores a handle in `*out`. A host with no
/// such record gives a handle with none.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_host_free`. On failure `*out` is
/// untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data`; keep them alive
/// and unchanged until it is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` must not be NULL;
/// `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` and `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_parse(
    data: *const u8,
    len: usize,
    out: *mut *mut clangoffload_kpack_host,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes that outlive the
        // handle.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable pointer.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let file = clangoffload::object::ObjectFile::parse(data)
            .map_err(|e| unsafe { report(&e, err) })?;
        let records = clangoffload::kpack::records(&file);
        let paths = records
            .iter()
            .map(|r| match &r.marker {
                Ok((_, marker)) => marker.search_paths().map(|p| p.path).collect(),
                Err(_) => Vec::new(),
            })
            .collect();
        *out = into_handle(clangoffload_kpack_host {
            records,
            paths,
            moved: clangoffload::kpack::moved_fatbin(&file),
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_kpack_host_parse`.
///
/// Ownership: the handle is released; the buffer stays the caller's.
///
/// NULL: a NULL `host` does nothing.
///
/// # Safety
/// `host` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_free(host: *mut clangoffload_kpack_host) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(host) }
}

/// Stores what the host says of its split in `*out`.
///
/// Ownership: nothing to free.
///
/// NULL: `host` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `host` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_get_info(
    host: *const clangoffload_kpack_host,
    out: *mut clangoffload_kpack_host_info,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let host = unsafe { handle_arg(host) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let (address, size) = host.moved.unwrap_or_default();
        *out = clangoffload_kpack_host_info {
            fatbin_moved: host.moved.is_some().into(),
            fatbin_address: address,
            fatbin_size: size,
            record_count: host.records.len(),
        };
        Ok(())
    })
}

/// How many `HIPK` records the host has.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `host` gives 0.
///
/// # Safety
/// `host` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_record_count(
    host: *const clangoffload_kpack_host,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(host, |h| &h.records) }
}

/// Stores `HIPK` record `index` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the parsed buffer.
///
/// NULL: `host` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `host` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_get_record(
    host: *const clangoffload_kpack_host,
    index: usize,
    out: *mut clangoffload_kpack_record,
) -> clangoffload_status {
    use clangoffload::kpack::MarkerProblem;
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            host,
            |h| &h.records,
            index,
            out,
            |h, r| {
                let (marker_status, marker_offset, kernel_name) = match &r.marker {
                    Ok((offset, marker)) => (clangoffload_status::Ok, *offset, marker.kernel_name),
                    Err(MarkerProblem::NullPointer) => {
                        (clangoffload_status::KpackNullPointer, 0, &[][..])
                    }
                    Err(MarkerProblem::Unresolved { .. }) => {
                        (clangoffload_status::KpackUnresolvedPointer, 0, &[][..])
                    }
                    Err(MarkerProblem::Damaged(e)) => {
                        (clangoffload_status::from(e.kind()), 0, &[][..])
                    }
                };
                clangoffload_kpack_record {
                    index: r.index,
                    co_index: r.co_index,
                    marker_status: marker_status.code(),
                    offset: r.offset,
                    marker_offset,
                    kernel_name: clangoffload_bytes::of(kernel_name),
                    search_path_count: h.paths.get(index).map_or(0, Vec::len),
                }
            },
        )
    }
}

/// Stores search path `path` of record `record`'s marker in `*out`, as the
/// marker holds it (`@GFXARCH@` unexpanded).
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: `*out` borrows the parsed buffer.
///
/// NULL: `host` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `host` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_host_get_search_path(
    host: *const clangoffload_kpack_host,
    record: usize,
    path: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let host = unsafe { handle_arg(host) }?;
        let found = host
            .paths
            .get(record)
            .and_then(|paths| paths.get(path))
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: NULL or writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_bytes::of(found);
        Ok(())
    })
}

/// Whether `name` is the name of an archive the search path `path` names
/// (its file name, `@GFXARCH@` standing for any architecture).
///
/// Ownership: nothing to free.
///
/// NULL: views with a NULL pointer and a length give false.
///
/// # Safety
/// `path` and `name` view readable bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_search_path_names(
    path: clangoffload_bytes,
    name: clangoffload_bytes,
) -> bool {
    // SAFETY: readable, as the caller promises.
    let (Ok(path), Ok(name)) = (unsafe { path.as_slice() }, unsafe { name.as_slice() }) else {
        return false;
    };
    clangoffload::kpack::SearchPath { path }.names(name)
}

/// Writes the key the runtime looks a record's code object up by,
/// `<kernel_name>#<co_index>`, into the `cap` bytes at `buf` (no NUL);
/// `*len` gets its length, and when it does not fit (or `buf` is NULL) the
/// call fails with `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// Ownership: nothing to free.
///
/// NULL: `len` must not be NULL; `buf` may be NULL (a question for the
/// length).
///
/// # Safety
/// `kernel_name` views readable bytes; `buf` writable for `cap` bytes;
/// `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_binary_key(
    kernel_name: clangoffload_bytes,
    co_index: u32,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let name = unsafe { kernel_name.as_slice() }?;
        let key = clangoffload::kpack::binary_key(name, co_index);
        // SAFETY: as the caller promises.
        unsafe { crate::ffi::write_bytes(&key, buf, cap, len) }
    })
}

/// `clangoffload_kpack_resolve` flag: the loader rocm-kpack shipped, whose
/// first archive listing a candidate architecture decides (without it: the
/// fall-through loader of rocm-systems#9953, every candidate in turn).
pub const CLANGOFFLOAD_KPACK_FIRST_CANDIDATE: u32 = 1;
/// `clangoffload_kpack_resolve` flag: `ROCM_KPACK_DISABLE` is in force.
pub const CLANGOFFLOAD_KPACK_DISABLED: u32 = 2;

/// What `clangoffload_kpack_resolve` found.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_resolution {
    /// 0 when a code object was found; else the runtime's `kpack_error_t`
    /// (5 kernel not found, 8 disabled, 13 no archive, 14 no architecture).
    pub kpack_error: u32,
    /// Which of the archives given holds it.
    pub archive: usize,
    /// Its entry in that archive (for `clangoffload_kpack_read`).
    pub entry: usize,
}

/// Resolves binary `key` (`<kernel_name>#<co_index>`) for a device whose
/// architecture list is `arches` (the ISA name, then its generic target, as
/// CLR passes them) among `archives` (the candidates that opened, in the
/// runtime's order), by the HIP runtime's rule (feature subsets in
/// librocm_kpack's order, arch-first search, the loader `flags` names):
/// in place of `kpack_load_code_object` for an embedded loader. `*out`
/// gets the archive and entry, or the runtime's error code.
///
/// Ownership: nothing to free.
///
/// NULL: `out` must not be NULL; `archives` and `arches` may be NULL only
/// when their counts are 0, and no archive in the array may be NULL.
///
/// # Safety
/// `archives` readable for `archive_count` live handles; `arches` readable
/// for `arch_count` views of readable bytes; `key` views readable bytes;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_resolve(
    archives: *const *const clangoffload_kpack,
    archive_count: usize,
    key: clangoffload_bytes,
    arches: *const clangoffload_bytes,
    arch_count: usize,
    flags: u32,
    out: *mut clangoffload_kpack_resolution,
) -> clangoffload_status {
    use clangoffload::kpack::{resolve, Environment};
    ffi_guard!({
        if flags & !(CLANGOFFLOAD_KPACK_FIRST_CANDIDATE | CLANGOFFLOAD_KPACK_DISABLED) != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: readable for the counts, as the caller promises.
        let handles = unsafe { crate::ffi::array_arg(archives, archive_count) }?;
        // SAFETY: as above.
        let views = unsafe { crate::ffi::array_arg(arches, arch_count) }?;
        // SAFETY: readable, as the caller promises.
        let key = unsafe { key.as_slice() }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let mut kpacks = Vec::new();
        for &handle in handles {
            // SAFETY: each a live handle, as the caller promises.
            kpacks.push(unsafe { handle_arg(handle) }?);
        }
        let mut list = Vec::new();
        for view in views {
            // SAFETY: readable, as the caller promises.
            list.push(unsafe { view.as_slice() }?.to_vec());
        }
        let parsed: Vec<_> = kpacks.iter().map(|k| k.archive.clone()).collect();
        let environment = Environment {
            disabled: flags & CLANGOFFLOAD_KPACK_DISABLED != 0,
            ..Environment::default()
        };
        let loader = loader(flags & !CLANGOFFLOAD_KPACK_DISABLED)?;
        *out = match resolve(&environment, key, &list, &parsed, loader) {
            Ok(found) => clangoffload_kpack_resolution {
                kpack_error: 0,
                archive: found.archive,
                entry: kpacks
                    .get(found.archive)
                    .and_then(|k| k.entries.iter().position(|e| *e == found.entry))
                    .unwrap_or(0),
            },
            Err(e) => clangoffload_kpack_resolution {
                kpack_error: e.code(),
                archive: 0,
                entry: 0,
            },
        };
        Ok(())
    })
}

/// The runtime's environment for `clangoffload_kpack_candidates`: each
/// variable's value, if set.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_environment {
    /// Whether `ROCM_KPACK_DISABLE` is set.
    pub has_disable: bool,
    /// Its value.
    pub disable: clangoffload_bytes,
    /// Whether `ROCM_KPACK_PATH` is set.
    pub has_path: bool,
    /// Its value (archive files split on `:`).
    pub path: clangoffload_bytes,
    /// Whether `ROCM_KPACK_PATH_PREFIX` is set.
    pub has_prefix: bool,
    /// Its value (the same form).
    pub prefix: clangoffload_bytes,
}

/// Called by `clangoffload_coverage_add_split_host` and
/// `clangoffload_select_split_host` with `context` and an archive path
/// (`path_len` bytes, no NUL): stores in `*out` the bytes of that file,
/// which must stay readable until the call that asked returns, and returns
/// true; false where no file opens.
pub type clangoffload_kpack_open_fn = Option<
    unsafe extern "C" fn(
        context: *mut core::ffi::c_void,
        path: *const u8,
        path_len: usize,
        out: *mut clangoffload_bytes,
    ) -> bool,
>;

/// An archive file's bytes, or `None` where none opens.
type Opened<'a> = Option<Cow<'a, [u8]>>;

/// The caller's `open` as the reader core's lookup takes.
///
/// # Safety
/// `open` is callable with `context` while the reader lives, and the bytes
/// it gives stay readable that long.
pub(crate) unsafe fn archive_reader<'a>(
    open: clangoffload_kpack_open_fn,
    context: *mut core::ffi::c_void,
) -> Result<impl FnMut(&[u8]) -> Opened<'a>, clangoffload_status> {
    let open = open.ok_or(clangoffload_status::NullArgument)?;
    Ok(move |path: &[u8]| {
        let mut view = clangoffload_bytes::of(&[]);
        // SAFETY: callable with `context` while the reader lives, as the
        // caller promises; the path is live for the call and `view`
        // writable.
        let found = unsafe { open(context, path.as_ptr(), path.len(), &mut view) };
        // SAFETY: the bytes stay readable while the reader lives, as the
        // caller promises.
        let bytes = found.then(|| unsafe { view.as_slice() }.ok()).flatten();
        bytes.map(Cow::Borrowed)
    })
}

/// The loader `flags` names: `CLANGOFFLOAD_KPACK_FIRST_CANDIDATE`
/// (rocm-kpack's shipped one) or none (every candidate in turn); any other
/// flag is `InvalidArgument`.
pub(crate) fn loader(flags: u32) -> Result<clangoffload::kpack::Loader, clangoffload_status> {
    use clangoffload::kpack::Loader;
    match flags {
        0 => Ok(Loader::FallThrough),
        CLANGOFFLOAD_KPACK_FIRST_CANDIDATE => Ok(Loader::FirstCandidate),
        _ => Err(clangoffload_status::InvalidArgument),
    }
}

/// The loader's environment `environment` gives (`NULL`: none set).
///
/// # Safety
/// `environment` is NULL or readable, its views readable where set.
pub(crate) unsafe fn environment_arg<'a>(
    environment: *const clangoffload_kpack_environment,
) -> Result<clangoffload::kpack::Environment<'a>, clangoffload_status> {
    // SAFETY: NULL or readable, as the caller promises.
    let given = unsafe { environment.as_ref() };
    let value = |set: bool, view: clangoffload_bytes| {
        // SAFETY: readable where set, as the caller promises.
        set.then(|| unsafe { view.as_slice() }).transpose()
    };
    Ok(match given {
        Some(e) => clangoffload::kpack::Environment::from_values(
            value(e.has_disable, e.disable)?,
            value(e.has_path, e.path)?,
            value(e.has_prefix, e.prefix)?,
        ),
        None => clangoffload::kpack::Environment::default(),
    })
}

/// The archive paths the runtime tries for record `record` of `host` on a
/// device of ISA name `isa` (`gfx90a:sramecc+:xnack-`, with or without
/// `amdgcn-amd-amdhsa--`), in its order: `ROCM_KPACK_PATH`'s alone when it
/// names any; else `ROCM_KPACK_PATH_PREFIX`'s, then each search path of the
/// record's marker placed from `host_dir` (the host's real directory,
/// symlinks resolved: an absolute path as it is, a relative one joined and
/// its `..` applied) with `@GFXARCH@` replaced by each architecture of
/// CLR's list (the ISA, then its generic target) and each feature subset.
/// The caller opens those that exist, once each (by canonical path), in
/// this order, for `clangoffload_kpack_resolve`. Stores the paths in
/// `*out`, each followed by a NUL byte. `*out_disabled` says whether
/// `ROCM_KPACK_DISABLE` turns the loader off (pass
/// `CLANGOFFLOAD_KPACK_DISABLED` to the resolution then).
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` for a record with no marker.
///
/// Ownership: on success `*out` is a buffer owned by the caller, released
/// with `clangoffload_buffer_free`.
///
/// Lifetime: the buffer is the caller's until freed, independent of the
/// handle; the views given are read during the call only.
///
/// NULL: `host`, `out` or `out_disabled` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `environment` NULL: no variable
/// set.
///
/// # Safety
/// `host` NULL or a live handle; `isa`, `host_dir` and the environment's
/// views view readable bytes; `environment` NULL or readable; `out` and
/// `out_disabled` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_candidates(
    host: *const clangoffload_kpack_host,
    record: usize,
    isa: clangoffload_bytes,
    environment: *const clangoffload_kpack_environment,
    host_dir: clangoffload_bytes,
    out: *mut crate::object_bundle::clangoffload_buffer,
    out_disabled: *mut bool,
) -> clangoffload_status {
    use clangoffload::kpack::{arch_list, candidates, place};
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let host = unsafe { handle_arg(host) }?;
        let found = host
            .records
            .get(record)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let (_, marker) = found
            .marker
            .as_ref()
            .map_err(|_| clangoffload_status::NotFound)?;
        // SAFETY: `isa` is a view readable for the call, as the caller promises.
        let isa = unsafe { isa.as_slice() }?;
        // SAFETY: `host_dir` is a view readable for the call, as the caller promises.
        let dir = unsafe { host_dir.as_slice() }?;
        // SAFETY: NULL or readable, as the caller promises.
        let environment = unsafe { environment_arg(environment) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `out_disabled` is NULL or writable, as the caller promises.
        let out_disabled = unsafe { out_arg(out_disabled) }?;
        let paths: Vec<_> = marker.search_paths().collect();
        let list = candidates(&environment, &paths, &arch_list(isa), &|rel| {
            place(dir, rel)
        });
        let mut joined = Vec::new();
        for path in list {
            joined.extend_from_slice(&path);
            joined.push(0);
        }
        *out = crate::object_bundle::clangoffload_buffer::from_vec(joined);
        *out_disabled = environment.disabled;
        Ok(())
    })
}

/// Stores in `*out` whether the code object resolution chose for a device
/// of ISA name `isa` (`gfx1031`, features allowed), one of architecture
/// `arch` (its entry's), is the generic target's: the runtime tries the
/// ISA's feature subsets first, then the generic target CLR's table gives.
///
/// Ownership: nothing to free.
///
/// NULL: `out` must not be NULL.
///
/// # Safety
/// `isa` and `arch` view readable bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_chose_generic(
    isa: clangoffload_bytes,
    arch: clangoffload_bytes,
    out: *mut bool,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let isa = unsafe { isa.as_slice() }?;
        // SAFETY: as above.
        let arch = unsafe { arch.as_slice() }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = clangoffload::kpack::chose_generic(&clangoffload::kpack::arch_list(isa), arch);
        Ok(())
    })
}

/// Why resolution failed with the runtime's `kpack_error_t` `code` (5, 8,
/// 13, 14), in a sentence naming the runtime's constant; empty for any
/// other code.
///
/// Ownership: returns a view of static storage; never free it.
///
/// NULL: never NULL with a non-zero length. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_kpack_error_reason(code: u32) -> clangoffload_bytes {
    let reason = clangoffload::kpack::KpackError::from_code(code).map_or("", |e| e.reason());
    clangoffload_bytes::of(reason.as_bytes())
}

/// Writes CLR's generic target for the device ISA name `isa` (features
/// kept: `gfx906:xnack-` gives `gfx9-generic:xnack-`) into the `cap` bytes
/// at `buf` (no NUL); `*len` gets its length.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` where CLR's table has none (gfx908,
/// gfx90a, gfx940 ...), `_BUFFER_TOO_SMALL` when it does not fit (or `buf`
/// is NULL, a question for the length).
///
/// Ownership: nothing to free.
///
/// NULL: `len` must not be NULL; `buf` may be NULL.
///
/// # Safety
/// `isa` views readable bytes; `buf` writable for `cap` bytes; `len` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_generic_target(
    isa: clangoffload_bytes,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let isa = unsafe { isa.as_slice() }?;
        let generic = clangoffload::kpack::clr_generic(isa).ok_or(clangoffload_status::NotFound)?;
        // SAFETY: as the caller promises.
        unsafe { crate::ffi::write_bytes(&generic, buf, cap, len) }
    })
}

/// `clangoffload_kpack_finding.kind`: a record whose pointer the split
/// zeroed (`record`, `offset`).
pub const CLANGOFFLOAD_KPACK_NULL_POINTER: u32 = 1;
/// A record (`record`: its code object index) with no code object for
/// `text`, an architecture other records have.
pub const CLANGOFFLOAD_KPACK_RECORD_WITHOUT_ARCH: u32 = 2;
/// On device `text`, the shipped loader stops at archive `archive` and fails
/// where the fall-through loader finds record `record` in `base`.
pub const CLANGOFFLOAD_KPACK_SHADOWED_BY_VARIANT: u32 = 3;
/// Archive `archive`'s name holds `:`: `ROCM_KPACK_PATH` cannot name it.
pub const CLANGOFFLOAD_KPACK_NAME_NOT_NAMEABLE: u32 = 4;
/// Archive `archive` stores its code objects uncompressed.
pub const CLANGOFFLOAD_KPACK_UNCOMPRESSED: u32 = 5;
/// Entry `entry` of archive `archive` cannot be read (`status`, `offset`).
pub const CLANGOFFLOAD_KPACK_DAMAGED_ENTRY: u32 = 6;
/// A container left in the host's bytes at `offset`, not live.
pub const CLANGOFFLOAD_KPACK_STALE_CONTAINER: u32 = 7;

/// One finding of `clangoffload_kpack_check`; fields a kind does not use
/// are 0 (or empty).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_finding {
    /// `CLANGOFFLOAD_KPACK_NULL_POINTER` ... `_STALE_CONTAINER`.
    pub kind: u32,
    /// A record's index (null pointer) or code object index.
    pub record: usize,
    /// The archive at fault (an index into those given).
    pub archive: usize,
    /// The archive that holds the code (shadowing).
    pub base: usize,
    /// An entry's index in its archive's table.
    pub entry: usize,
    /// A file offset (record, damage, stale container).
    pub offset: u64,
    /// The error's status (damaged entry).
    pub status: u32,
    /// The device (shadowing) or architecture (record without it); borrows
    /// the findings handle.
    pub text: clangoffload_bytes,
}

/// What `clangoffload_kpack_check` found.
pub struct clangoffload_kpack_findings {
    findings: Vec<(clangoffload_kpack_finding, Vec<u8>)>,
}

/// Checks a host kpack split (the ELF or COFF file in `len` bytes at
/// `data`) and the archives its markers name (`archives`, `count` of them
/// in the runtime's candidate order, each with its file name in `names`)
/// for what the runtime hides: zeroed pointers, records without code for an
/// architecture others have, variant archives shadowing the base one under
/// the shipped loader, names `ROCM_KPACK_PATH` cannot give, uncompressed
/// archives, damaged entries, stale containers left in the host. Stores the
/// findings in a handle in `*out` (none for a clean input).
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_findings_free`. On failure `*out` is
/// untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the findings own what they name (their texts live until the
/// handle is freed); `data`, the archives and the names are only read
/// during the call.
///
/// NULL: `data` may be NULL only when `len` is 0, `archives` and `names`
/// only when `count` is 0; `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `data` readable for `len` bytes; `archives` readable for `count` live
/// handles and `names` for `count` views of readable bytes; `out` and
/// `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_check(
    data: *const u8,
    len: usize,
    archives: *const *const clangoffload_kpack,
    names: *const clangoffload_bytes,
    count: usize,
    out: *mut *mut clangoffload_kpack_findings,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    use clangoffload::kpack::{check, Finding, Named};
    ffi_guard!({
        // SAFETY: as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: as the caller promises.
        let handles = unsafe { crate::ffi::array_arg(archives, count) }?;
        // SAFETY: as the caller promises.
        let views = unsafe { crate::ffi::array_arg(names, count) }?;
        // SAFETY: as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let file = clangoffload::object::ObjectFile::parse(data)
            .map_err(|e| unsafe { report(&e, err) })?;
        let mut named = Vec::new();
        for (&handle, view) in handles.iter().zip(views) {
            // SAFETY: `handle` is NULL or a live handle, as the caller promises.
            let kpack = unsafe { handle_arg(handle) }?;
            // SAFETY: `view` is a view readable for the call, as the caller promises.
            let name = unsafe { view.as_slice() }?;
            named.push(Named {
                name,
                archive: &kpack.archive,
            });
        }
        let records = clangoffload::kpack::records(&file);
        let blank = clangoffload_kpack_finding {
            kind: 0,
            record: 0,
            archive: 0,
            base: 0,
            entry: 0,
            offset: 0,
            status: 0,
            text: clangoffload_bytes::of(&[]),
        };
        let mut findings = Vec::new();
        for finding in check(data, &records, &named) {
            match finding {
                Finding::NullPointer { record, offset } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_NULL_POINTER,
                        record,
                        offset,
                        ..blank
                    },
                    Vec::new(),
                )),
                Finding::RecordWithoutArch { arch, records } => {
                    for record in records {
                        findings.push((
                            clangoffload_kpack_finding {
                                kind: CLANGOFFLOAD_KPACK_RECORD_WITHOUT_ARCH,
                                record: usize::try_from(record).unwrap_or(usize::MAX),
                                ..blank
                            },
                            arch.clone(),
                        ));
                    }
                }
                Finding::ShadowedByVariant {
                    record,
                    device,
                    variant,
                    base,
                } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_SHADOWED_BY_VARIANT,
                        record: usize::try_from(record).unwrap_or(usize::MAX),
                        archive: variant,
                        base,
                        ..blank
                    },
                    device,
                )),
                Finding::NameNotNameable { archive } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_NAME_NOT_NAMEABLE,
                        archive,
                        ..blank
                    },
                    Vec::new(),
                )),
                Finding::Uncompressed { archive } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_UNCOMPRESSED,
                        archive,
                        ..blank
                    },
                    Vec::new(),
                )),
                Finding::DamagedEntry {
                    archive,
                    entry,
                    error,
                } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_DAMAGED_ENTRY,
                        archive,
                        entry,
                        offset: error.offset(),
                        status: clangoffload_status::from(error.kind()).code(),
                        ..blank
                    },
                    Vec::new(),
                )),
                Finding::StaleContainer { offset } => findings.push((
                    clangoffload_kpack_finding {
                        kind: CLANGOFFLOAD_KPACK_STALE_CONTAINER,
                        offset,
                        ..blank
                    },
                    Vec::new(),
                )),
            }
        }
        *out = into_handle(clangoffload_kpack_findings { findings });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_kpack_check`.
///
/// Ownership: the handle is released with the texts its findings name.
///
/// NULL: a NULL `findings` does nothing.
///
/// # Safety
/// `findings` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_findings_free(
    findings: *mut clangoffload_kpack_findings,
) {
    // SAFETY: NULL or a handle released once, as the caller promises.
    unsafe { free_handle(findings) }
}

/// How many findings.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `findings` gives 0.
///
/// # Safety
/// `findings` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_findings_count(
    findings: *const clangoffload_kpack_findings,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(findings, |f| &f.findings) }
}

/// Stores finding `index` in `*out`; `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: `out->text` borrows the handle.
///
/// NULL: `findings` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `findings` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_findings_get(
    findings: *const clangoffload_kpack_findings,
    index: usize,
    out: *mut clangoffload_kpack_finding,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            findings,
            |f| &f.findings,
            index,
            out,
            |_, (finding, text)| clangoffload_kpack_finding {
                text: clangoffload_bytes::of(text),
                ..*finding
            },
        )
    }
}
