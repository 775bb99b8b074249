//! Object-flavour bundles: list the bundle sections of a host ELF or COFF object,
//! extract the host object without them, and add them to a host object.

use alloc::{boxed::Box, vec::Vec};
use clangoffload::object_bundle::{write_object_bundle, ObjectBundle, ObjectBundleEntry};
use clangoffload::Error;

use crate::ffi::{
    array_arg, clangoffload_bytes, collect_checked, free_handle, handle_arg, into_handle, out_arg,
    slice_arg,
};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// A parsed object-flavour bundle. Borrows the buffer it was parsed from.
pub struct clangoffload_object_bundle {
    bundle: ObjectBundle<'static>,
    entries: Vec<ObjectBundleEntry<'static>>,
    fault: Option<Error>,
}

/// One entry: a section named `__CLANG_OFFLOAD_BUNDLE__<id>`. The views
/// borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_object_bundle_entry {
    /// The entry ID: the section name after the prefix (not NUL-terminated).
    pub id: clangoffload_bytes,
    /// The section's contents.
    pub payload: clangoffload_bytes,
    /// Where the contents start in the object.
    pub offset: u64,
    /// The section's index.
    pub section_index: u32,
    /// 1 if the contents are the host marker (one zero byte): the host's
    /// payload is then the object without its bundle sections
    /// (`clangoffload_object_bundle_host_object`).
    pub host_marker: u32,
}

impl From<&ObjectBundleEntry<'_>> for clangoffload_object_bundle_entry {
    fn from(entry: &ObjectBundleEntry<'_>) -> Self {
        clangoffload_object_bundle_entry {
            id: clangoffload_bytes::of(entry.id()),
            payload: clangoffload_bytes::of(entry.payload()),
            offset: entry.offset(),
            section_index: entry.section().index(),
            host_marker: entry.is_host_marker().into(),
        }
    }
}

/// A buffer the library allocated, released with `clangoffload_buffer_free`.
#[repr(C)]
#[derive(Debug)]
pub struct clangoffload_buffer {
    /// First byte (NULL when `len` is 0).
    pub ptr: *mut u8,
    /// Number of bytes.
    pub len: usize,
}

/// An entry to write (into an object or a text bundle): its ID and payload,
/// both borrowed for the duration of the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_entry_input {
    /// The entry ID bytes (no NUL inside).
    pub id: clangoffload_bytes,
    /// The payload; in an object, the host entry's is the one-byte host
    /// marker `{0}`.
    pub payload: clangoffload_bytes,
}

/// Parses the ELF or COFF object in `len` bytes at `data` and stores a handle in
/// `*out`. Every section is checked unless `flags` has
/// `CLANGOFFLOAD_PARSE_LENIENT`, which keeps the entries of the good sections
/// and the first fault (`clangoffload_object_bundle_fault`); any other flag bit
/// gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`. An object with no bundle
/// section has no entries.
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_object_bundle_free` (exactly once). On failure `*out` is
/// untouched, nothing is allocated, and `*err` (if not NULL) says what is wrong
/// and where.
///
/// Lifetime: the handle, and every view taken from it, borrows the `len` bytes
/// at `data`: they must stay alive and unchanged until the handle is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or a writable
/// handle pointer; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_parse(
    data: *const u8,
    len: usize,
    flags: u32,
    out: *mut *mut clangoffload_object_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (data, out, lenient) = unsafe { crate::handle::parse_args(data, len, flags, out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bundle = ObjectBundle::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let (entries, fault) = unsafe { collect_checked(bundle.entries(), lenient, err) }?;
        *out = into_handle(clangoffload_object_bundle {
            bundle,
            entries,
            fault,
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_object_bundle_parse`, with everything
/// it owns; views taken from it become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `bundle` does nothing.
///
/// Thread safety: must not run concurrently with any other use of the same
/// handle; the handle must not be used afterwards.
///
/// # Safety
/// `bundle` is NULL or a live handle from `clangoffload_object_bundle_parse`
/// not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_free(bundle: *mut clangoffload_object_bundle) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(bundle) }
}

/// Number of entries (in section order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `bundle` gives 0.
///
/// # Safety
/// `bundle` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_entry_count(
    bundle: *const clangoffload_object_bundle,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(bundle, |h| &h.entries) }
}

/// Stores entry `index` (section order) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `out->id` and `out->payload` borrow the parsed buffer, valid until
/// the handle is freed.
///
/// NULL: `bundle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `bundle` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_get_entry(
    bundle: *const clangoffload_object_bundle,
    index: usize,
    out: *mut clangoffload_object_bundle_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::get(bundle, |h| &h.entries, index, out, |_, entry| entry.into()) }
}

/// For a leniently parsed object: the status of the first bad section, with
/// details in `*err`; `CLANGOFFLOAD_STATUS_OK` if none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `bundle` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `bundle` is NULL or a live handle; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_fault(
    bundle: *const clangoffload_object_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::fault(bundle, |h| h.fault.as_ref(), err) }
}

/// Writes into `*out` the object without its bundle sections: what extracting
/// the host entry gives, laid out as llvm-objcopy lays it out.
///
/// Ownership: on success `*out` is a new buffer owned by the caller, released
/// with `clangoffload_buffer_free`. On failure `*out` is untouched and `*err`
/// (if not NULL) says what and where.
///
/// Lifetime: `out->ptr` borrows neither the handle nor the parsed buffer: it
/// stays valid until `clangoffload_buffer_free`, even after the handle is
/// freed.
///
/// NULL: `bundle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `bundle` is NULL or a live handle; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_host_object(
    bundle: *const clangoffload_object_bundle,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bytes = (bundle.bundle.host_object()).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}

/// Writes into `*out` the ELF or COFF object in `host_len` bytes at `host` with one
/// bundle section per entry of `entries` (`count` of them), in order, flagged
/// as clang-offload-bundler flags them. The output is byte-identical to
/// `clang-offload-bundler -type=o` (which runs llvm-objcopy). A PE image is
/// refused (`CLANGOFFLOAD_STATUS_UNSUPPORTED_COFF`).
///
/// Ownership: on success `*out` is a new buffer owned by the caller, released
/// with `clangoffload_buffer_free`; it borrows none of the inputs, which are
/// only read during the call. On failure `*out` is untouched and `*err` (if not
/// NULL) says what and where.
///
/// Lifetime: `out->ptr` stays valid until `clangoffload_buffer_free`.
///
/// NULL: `host` may be NULL only when `host_len` is 0 (neither ELF nor
/// COFF: an error); `entries` may be NULL only when `count` is 0, and a view's `ptr`
/// only when its `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `host` is NULL or readable for `host_len` bytes; `entries` is NULL or
/// readable for `count` records whose views are readable; `out` is NULL or
/// writable; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_object_bundle_write(
    host: *const u8,
    host_len: usize,
    entries: *const clangoffload_entry_input,
    count: usize,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let host = unsafe { slice_arg(host, host_len) }?;
        // SAFETY: readable for the call, as the caller promises.
        let inputs = unsafe { array_arg(entries, count) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let mut pairs = Vec::new();
        pairs
            .try_reserve_exact(inputs.len())
            .map_err(|_| clangoffload_status::OutOfMemory)?;
        for input in inputs {
            // SAFETY: `input.id` is a view readable for the call, as the caller promises.
            let id = unsafe { input.id.as_slice() }?;
            // SAFETY: `input.payload` is a view readable for the call, as the caller promises.
            let payload = unsafe { input.payload.as_slice() }?;
            pairs.push((id, payload));
        }
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let object = clangoffload::object::ObjectFile::parse(host)
            .map_err(|e| unsafe { report(&e, err) })?;
        // SAFETY: as above.
        let bytes = write_object_bundle(&object, &pairs).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}

impl clangoffload_buffer {
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        let ptr = if len == 0 {
            core::ptr::null_mut()
        } else {
            Box::into_raw(bytes.into_boxed_slice()).cast::<u8>()
        };
        clangoffload_buffer { ptr, len }
    }
}

/// Releases a buffer the library allocated (`ptr` and `len` as the library set
/// them) and sets it to `{NULL, 0}`.
///
/// Ownership: the bytes at `buffer->ptr` are released; the
/// `clangoffload_buffer` record itself is the caller's (it is not freed).
///
/// Lifetime: any pointer into the buffer becomes invalid.
///
/// NULL: a NULL `buffer`, and a buffer whose `ptr` is NULL (empty, already
/// freed through this record, or zero-initialised), do nothing.
///
/// Thread safety: must not run concurrently with any other use of the same
/// buffer.
///
/// # Safety
/// `buffer` is NULL or points to a record filled by this library (or `{NULL,
/// 0}`) whose bytes were not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_buffer_free(buffer: *mut clangoffload_buffer) {
    // SAFETY: NULL or a live buffer record, as the caller promises.
    let Some(buffer) = (unsafe { buffer.as_mut() }) else {
        return;
    };
    if !buffer.ptr.is_null() {
        let slice = core::ptr::slice_from_raw_parts_mut(buffer.ptr, buffer.len);
        // SAFETY: ptr/len came from Box::into_raw of a boxed slice of exactly
        // this length in from_vec, and are released once.
        drop(unsafe { Box::from_raw(slice) });
    }
    buffer.ptr = core::ptr::null_mut();
    buffer.len = 0;
}
