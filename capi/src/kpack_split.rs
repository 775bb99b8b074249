//! kpack's split as a job: a host's rewrite and its code objects
//! (`clangoffload_kpack_split_host`), and archives written one code object
//! at a time (`clangoffload_kpack_writer_*`), byte for byte as rocm-kpack
//! writes them. The caller writes the files.

use alloc::vec::Vec;

use clangoffload::kpack::{
    split_host, ArchiveOptions, ArchiveWriter, HostSplit, KeyRule, NewEntry, Scheme, SplitOptions,
};
use clangoffload::DecompressOptions;

use crate::compressed::limits;
use crate::ffi::{
    array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, job_args, len_u64, out_arg,
};
use crate::kpack::{CLANGOFFLOAD_KPACK_STORED, CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Keys by record index where rocm-kpack's per-architecture counter agrees;
/// a host where they differ is refused (`CLANGOFFLOAD_STATUS_KPACK_SPLIT_REFUSED`).
pub const CLANGOFFLOAD_KPACK_KEYS_STRICT: u32 = 0;
/// Keys by the record index the runtime looks up.
pub const CLANGOFFLOAD_KPACK_KEYS_RECORD: u32 = 1;
/// Keys by rocm-kpack's per-architecture counter (wrong where translation
/// units hold different architectures).
pub const CLANGOFFLOAD_KPACK_KEYS_PER_ARCH: u32 = 2;

/// What the split writes into the host.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_split_options {
    /// The marker's `kernel_name` (the binary's name in the archive keys).
    pub kernel_name: clangoffload_bytes,
    /// The marker's `kpack_search_paths`: `search_path_count` views.
    pub search_paths: *const clangoffload_bytes,
    /// How many search paths.
    pub search_path_count: usize,
    /// `CLANGOFFLOAD_KPACK_KEYS_*`.
    pub keys: u32,
    /// The most bytes a compressed bundle may decode to
    /// (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1 GiB).
    pub max_size: u64,
}

/// A host's split: the rewritten host and its code objects. Borrows the
/// input buffer; owns the rewritten host and one decoded bundle.
pub struct clangoffload_kpack_split {
    split: HostSplit<'static>,
    options: DecompressOptions,
    /// The unit decoded last, and its bytes.
    decoded: Option<usize>,
    scratch: Vec<u8>,
}

/// One code object of a split; views borrow the handle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_split_code_object {
    /// The record (and bundle) it belongs to.
    pub record: u64,
    /// The bundle entry ID.
    pub id: clangoffload_bytes,
    /// The architecture (the ID after its last `--`): its archive's.
    pub arch: clangoffload_bytes,
    /// Its key in that archive, `<kernel_name>#<n>`.
    pub key: clangoffload_bytes,
    /// Its size.
    pub size: u64,
    /// File offset of its bundle in the input.
    pub unit_offset: u64,
    /// Size of its bundle in the input (compressed, if it is).
    pub unit_size: u64,
}

/// Splits the host in `len` bytes at `data` (an x86-64 ELF shared object or
/// executable whose `.hip_fatbin` holds one bundle per `HIPF` record): the
/// host rewritten as rocm-kpack rewrites it (a non-PIE executable's
/// pointers kept at the marker, which rocm-kpack zeroes), and its code
/// objects keyed as `options->keys` says. `data` is never written. Stores
/// a handle in `*out`. Compressed bundles' entry tables are decoded here;
/// their code objects one bundle at a time by
/// `clangoffload_kpack_split_code`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_split_free`. On failure `*out` is
/// untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data` (they must stay
/// alive and unchanged until it is freed); `options` and what it views are
/// read during the call only.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `options` is NULL or points
/// to a readable record whose views are readable; `out` and `err` are NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_host(
    data: *const u8,
    len: usize,
    options: *const clangoffload_kpack_split_options,
    out: *mut *mut clangoffload_kpack_split,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the pointers are as the caller promises.
        let (data, options, out) = unsafe { job_args(data, len, options, out) }?;
        // SAFETY: readable, as the caller promises.
        let kernel_name = unsafe { options.kernel_name.as_slice() }?;
        // SAFETY: readable, as the caller promises.
        let views = unsafe { array_arg(options.search_paths, options.search_path_count) }?;
        let mut paths = Vec::new();
        paths
            .try_reserve_exact(views.len())
            .map_err(|_| clangoffload_status::OutOfMemory)?;
        for view in views {
            // SAFETY: readable, as the caller promises.
            paths.push(unsafe { view.as_slice() }?);
        }
        let keys = match options.keys {
            CLANGOFFLOAD_KPACK_KEYS_STRICT => KeyRule::Strict,
            CLANGOFFLOAD_KPACK_KEYS_RECORD => KeyRule::Record,
            CLANGOFFLOAD_KPACK_KEYS_PER_ARCH => KeyRule::PerArch,
            _ => return Err(clangoffload_status::InvalidArgument),
        };
        let decompress = DecompressOptions {
            limits: limits(options.max_size),
            ..DecompressOptions::default()
        };
        let split = split_host(
            data,
            &SplitOptions {
                kernel_name,
                search_paths: &paths,
                keys,
            },
            &decompress,
        )
        // SAFETY: `err` is NULL or writable, as the caller promises.
        .map_err(|e| unsafe { report(&e, err) })?;
        *out = into_handle(clangoffload_kpack_split {
            split,
            options: decompress,
            decoded: None,
            scratch: Vec::new(),
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_kpack_split_host`, with the
/// rewritten host and the decoded bundle it holds.
///
/// Ownership: the handle and what it owns are released; the input stays
/// the caller's.
///
/// NULL: a NULL `split` does nothing.
///
/// # Safety
/// `split` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_free(split: *mut clangoffload_kpack_split) {
    // SAFETY: NULL or a handle from split_host released once, as the caller
    // promises.
    unsafe { free_handle(split) }
}

/// Stores the rewritten host's bytes in `*out`.
///
/// Ownership: nothing to free; the bytes are the handle's.
///
/// Lifetime: `*out` lives as long as the handle.
///
/// NULL: `split` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `split` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_get_host(
    split: *const clangoffload_kpack_split,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let split = unsafe { handle_arg(split) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = clangoffload_bytes::of(&split.split.host);
        Ok(())
    })
}

/// How many code objects the split stores (host entries left out), in the
/// order rocm-kpack stores them: bundle order, then entry order.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `split` gives 0.
///
/// # Safety
/// `split` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_code_object_count(
    split: *const clangoffload_kpack_split,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(split, |s| &s.split.code_objects) }
}

/// Stores code object `index` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views live as long as the handle.
///
/// NULL: `split` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `split` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_get_code_object(
    split: *const clangoffload_kpack_split,
    index: usize,
    out: *mut clangoffload_kpack_split_code_object,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let split = unsafe { handle_arg(split) }?;
        let object = split
            .split
            .code_objects
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let unit = usize::try_from(object.record)
            .ok()
            .and_then(|i| split.split.units.get(i))
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *out = clangoffload_kpack_split_code_object {
            record: object.record,
            id: clangoffload_bytes::of(&object.id),
            arch: clangoffload_bytes::of(object.arch()),
            key: clangoffload_bytes::of(&object.key),
            size: object.size,
            unit_offset: unit.offset,
            unit_size: len_u64(unit.data().len()),
        };
        Ok(())
    })
}

/// Stores code object `index`'s bytes in `*out`: a view of the input for a
/// plain bundle; for a compressed one, of its bundle decoded into the
/// handle (one bundle at a time: asking for a code object of another
/// compressed bundle decodes that one in its place).
///
/// Ownership: nothing to free.
///
/// Lifetime: `*out` lives until the next call of this function on the
/// handle, or its release.
///
/// NULL: `split` and `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `split` is NULL or a live handle not used by another thread meanwhile;
/// `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_split_code(
    split: *mut clangoffload_kpack_split,
    index: usize,
    out: *mut clangoffload_bytes,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle used by this call only, as the
        // caller promises.
        let split = unsafe { out_arg(split) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let object = split
            .split
            .code_objects
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let unit =
            usize::try_from(object.record).map_err(|_| clangoffload_status::IndexOutOfRange)?;
        let held = split
            .split
            .units
            .get(unit)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let bundle: &[u8] = if held.is_compressed() {
            if split.decoded != Some(unit) {
                split.decoded = None;
                let mut scratch = core::mem::take(&mut split.scratch);
                let result = split
                    .split
                    .bundle(unit, &mut scratch, &split.options)
                    .map(|_| ());
                split.scratch = scratch;
                // SAFETY: `err` is NULL or writable, as the caller promises.
                result.map_err(|e| unsafe { report(&e, err) })?;
                split.decoded = Some(unit);
            }
            &split.scratch
        } else {
            held.data()
        };
        let bytes = object
            .bytes(bundle)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_bytes::of(bytes);
        Ok(())
    })
}

/// Writes the search path rocm-kpack's artifact splitter gives a binary
/// `depth` directories below its prefix (`../` that many times, then
/// `.kpack/<group>_@GFXARCH@.kpack`) into the `cap` bytes at `buf` (no
/// NUL); `*len` gets its length, and when it does not fit (or `buf` is
/// NULL, a question for the length) the call fails with
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// Ownership: nothing to free; the bytes are the caller's.
///
/// Lifetime: `group` is read during the call only.
///
/// NULL: `len` must not be NULL; `group.ptr` may be NULL only when
/// `group.len` is 0; `buf` may be NULL (a question for the length).
///
/// # Safety
/// `group` views readable bytes; `buf` is writable for `cap` bytes; `len`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_search_path(
    group: clangoffload_bytes,
    depth: usize,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let group = unsafe { group.as_slice() }?;
        let path = clangoffload::kpack::search_path(group, depth);
        // SAFETY: `buf` writable for `cap` bytes, `len` NULL or writable, as
        // the caller promises.
        unsafe { crate::ffi::write_bytes(&path, buf, cap, len) }
    })
}

/// What an archive says of itself.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_archive_options {
    /// `group_name`.
    pub group_name: clangoffload_bytes,
    /// `gfx_arch_family` (rocm-kpack's splitter: the one architecture).
    pub arch_family: clangoffload_bytes,
    /// `gfx_arches`: `arch_count` views.
    pub arches: *const clangoffload_bytes,
    /// How many architectures.
    pub arch_count: usize,
    /// `CLANGOFFLOAD_KPACK_STORED` or `CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL`.
    pub scheme: u32,
    /// The zstd level (rocm-kpack's: 3).
    pub level: i32,
}

/// One `metadata` pair of an entry (both strings).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_metadata_pair {
    /// The name (`target`, `source_prefix`).
    pub name: clangoffload_bytes,
    /// The value.
    pub value: clangoffload_bytes,
}

/// One code object to store.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_new_entry {
    /// The binary key, `<kernel_name>#<index>`.
    pub key: clangoffload_bytes,
    /// Its architecture.
    pub arch: clangoffload_bytes,
    /// The code object.
    pub code: clangoffload_bytes,
    /// `metadata`'s pairs, in order (none: no `metadata` key).
    pub metadata: *const clangoffload_kpack_metadata_pair,
    /// How many pairs.
    pub metadata_count: usize,
}

/// An archive being written one code object at a time.
pub struct clangoffload_kpack_writer {
    writer: ArchiveWriter,
    out: Vec<u8>,
    prefix: Vec<u8>,
    toc: Vec<u8>,
}

/// Starts an archive: `*out` gets a writer handle, `*prefix_len` how many
/// zero bytes to write first (the placeholder that
/// `clangoffload_kpack_writer_finish`'s prefix later replaces at offset
/// 0). The archive's bytes are the placeholder, then each
/// `clangoffload_kpack_writer_add`'s bytes in turn, then the table of
/// contents: rocm-kpack's archive of the same entries, byte for byte where
/// code objects are stored (zstd frames are libzstd's at `level`).
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_writer_free`.
///
/// Lifetime: `options` and what it views are copied during the call.
///
/// NULL: `options`, `out` and `prefix_len` must not be NULL.
///
/// # Safety
/// `options` is NULL or a readable record whose views are readable; `out`
/// and `prefix_len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_writer_new(
    options: *const clangoffload_kpack_archive_options,
    out: *mut *mut clangoffload_kpack_writer,
    prefix_len: *mut u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or readable, as the caller promises.
        let options = unsafe { handle_arg(options) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let prefix_len = unsafe { out_arg(prefix_len) }?;
        // SAFETY: readable, as the caller promises.
        let views = unsafe { array_arg(options.arches, options.arch_count) }?;
        let mut arches = Vec::new();
        for view in views {
            // SAFETY: readable, as the caller promises.
            arches.push(unsafe { view.as_slice() }?);
        }
        let scheme = match options.scheme {
            CLANGOFFLOAD_KPACK_STORED => Scheme::Stored,
            CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL => Scheme::ZstdPerKernel,
            _ => return Err(clangoffload_status::InvalidArgument),
        };
        // SAFETY: `options.group_name` is a view readable for the call, as
        // the caller promises.
        let group_name = unsafe { options.group_name.as_slice() }?;
        // SAFETY: `options.arch_family` is a view readable for the call, as
        // the caller promises.
        let arch_family = unsafe { options.arch_family.as_slice() }?;
        let mut writer = ArchiveWriter::new(&ArchiveOptions {
            group_name,
            arch_family,
            arches: &arches,
            scheme,
            level: options.level,
        });
        let placeholder = writer.placeholder();
        *prefix_len = len_u64(placeholder.len());
        *out = into_handle(clangoffload_kpack_writer {
            writer,
            out: Vec::new(),
            prefix: Vec::new(),
            toc: Vec::new(),
        });
        Ok(())
    })
}

/// Stores `entry`: `*out` gets the bytes to append to the archive (the
/// code object, or its size and zstd frame). A key given twice for one
/// architecture is `CLANGOFFLOAD_STATUS_MALFORMED_KPACK`, and nothing is
/// stored.
///
/// Ownership: nothing to free; the bytes are the handle's.
///
/// Lifetime: `*out` lives until the next call on the handle or its
/// release; `entry` and what it views are read during the call only.
///
/// NULL: `writer`, `entry` and `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `writer` is NULL or a live handle not used by another thread meanwhile;
/// `entry` is NULL or readable with readable views; `out` and `err` are
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_writer_add(
    writer: *mut clangoffload_kpack_writer,
    entry: *const clangoffload_kpack_new_entry,
    out: *mut clangoffload_bytes,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle used by this call only, as the
        // caller promises.
        let writer = unsafe { out_arg(writer) }?;
        // SAFETY: NULL or readable, as the caller promises.
        let entry = unsafe { handle_arg(entry) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: readable, as the caller promises.
        let pairs = unsafe { array_arg(entry.metadata, entry.metadata_count) }?;
        let mut metadata = Vec::new();
        for pair in pairs {
            // SAFETY: `pair.name` is a view readable for the call, as the
            // caller promises.
            let name = unsafe { pair.name.as_slice() }?;
            // SAFETY: `pair.value` is a view readable for the call, as the
            // caller promises.
            let value = unsafe { pair.value.as_slice() }?;
            metadata.push((name, value));
        }
        writer.out.clear();
        // SAFETY: `entry.key` is a view readable for the call, as the caller
        // promises.
        let key = unsafe { entry.key.as_slice() }?;
        // SAFETY: `entry.arch` is a view readable for the call, as the
        // caller promises.
        let arch = unsafe { entry.arch.as_slice() }?;
        // SAFETY: `entry.code` is a view readable for the call, as the
        // caller promises.
        let code = unsafe { entry.code.as_slice() }?;
        let new = NewEntry {
            key,
            arch,
            code,
            metadata: &metadata,
        };
        writer
            .writer
            .add(&new, &mut writer.out)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_bytes::of(&writer.out);
        Ok(())
    })
}

/// Ends the archive: `*prefix` gets the bytes to write at offset 0 over
/// the placeholder, `*toc` the table of contents to append after the last
/// entry's bytes.
///
/// Ownership: nothing to free; the bytes are the handle's.
///
/// Lifetime: the views live until the next call on the handle or its
/// release.
///
/// NULL: `writer`, `prefix` and `toc` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `writer` is NULL or a live handle not used by another thread meanwhile;
/// `prefix`, `toc` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_writer_finish(
    writer: *mut clangoffload_kpack_writer,
    prefix: *mut clangoffload_bytes,
    toc: *mut clangoffload_bytes,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle used by this call only, as the
        // caller promises.
        let writer = unsafe { out_arg(writer) }?;
        // SAFETY: `prefix` is NULL or writable, as the caller promises.
        let prefix = unsafe { out_arg(prefix) }?;
        // SAFETY: `toc` is NULL or writable, as the caller promises.
        let toc = unsafe { out_arg(toc) }?;
        let (head, table) = writer
            .writer
            .finish()
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { report(&e, err) })?;
        writer.prefix = head;
        writer.toc = table;
        *prefix = clangoffload_bytes::of(&writer.prefix);
        *toc = clangoffload_bytes::of(&writer.toc);
        Ok(())
    })
}

/// Releases a writer handle and the bytes it holds.
///
/// Ownership: the handle is released.
///
/// NULL: a NULL `writer` does nothing.
///
/// # Safety
/// `writer` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_writer_free(writer: *mut clangoffload_kpack_writer) {
    // SAFETY: NULL or a handle from writer_new released once, as the caller
    // promises.
    unsafe { free_handle(writer) }
}
