//! Text bundles (`-type` i, ii, cui, hipi, d, ll, s): read entries between
//! comment markers, write them.

use alloc::vec::Vec;
use clangoffload::text_bundle::{write_text_bundle, Comment, TextBundle, TextEntry};
use clangoffload::Error;

use crate::ffi::{
    array_arg, clangoffload_bytes, collect_checked, free_handle, into_handle, out_arg, slice_arg,
};
use crate::object_bundle::{clangoffload_buffer, clangoffload_entry_input};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Markers start with `//` (`-type` i, ii, cui, hipi).
pub const CLANGOFFLOAD_COMMENT_DOUBLE_SLASH: u32 = 1;
/// Markers start with `#` (`-type` d, s).
pub const CLANGOFFLOAD_COMMENT_HASH: u32 = 2;
/// Markers start with `;` (`-type` ll).
pub const CLANGOFFLOAD_COMMENT_SEMICOLON: u32 = 3;

fn comment(value: u32) -> Result<Comment, clangoffload_status> {
    match value {
        CLANGOFFLOAD_COMMENT_DOUBLE_SLASH => Ok(Comment::DoubleSlash),
        CLANGOFFLOAD_COMMENT_HASH => Ok(Comment::Hash),
        CLANGOFFLOAD_COMMENT_SEMICOLON => Ok(Comment::Semicolon),
        _ => Err(clangoffload_status::InvalidArgument),
    }
}

/// A parsed text bundle. Borrows the buffer it was parsed from.
pub struct clangoffload_text_bundle {
    entries: Vec<TextEntry<'static>>,
    fault: Option<Error>,
}

/// One entry of a text bundle; the views borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_text_bundle_entry {
    /// The ID: the rest of the start marker's line (not NUL-terminated).
    pub id: clangoffload_bytes,
    /// The payload: from after the start line to the `\n` of the end marker.
    pub payload: clangoffload_bytes,
    /// Where the payload starts in the file.
    pub offset: u64,
    /// Where the start marker (its leading `\n`) is.
    pub start_offset: u64,
    /// Where the end marker's line ends.
    pub end_offset: u64,
}

impl From<&TextEntry<'_>> for clangoffload_text_bundle_entry {
    fn from(entry: &TextEntry<'_>) -> Self {
        clangoffload_text_bundle_entry {
            id: clangoffload_bytes::of(entry.id()),
            payload: clangoffload_bytes::of(entry.payload()),
            offset: entry.offset(),
            start_offset: entry.start_offset(),
            end_offset: entry.end_offset(),
        }
    }
}

/// The comment (`CLANGOFFLOAD_COMMENT_*`) the bundler uses for `-type`
/// `type_name` (`len` bytes, e.g. "ll"), in `*out`;
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` if that type is not a text type.
///
/// Ownership: nothing to free; `*out` is a plain value. Pure.
///
/// NULL: `type_name` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (`NOT_FOUND` is reported first).
///
/// # Safety
/// `type_name` is NULL or readable for `len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_text_comment_for_type(
    type_name: *const u8,
    len: usize,
    out: *mut u32,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let name = unsafe { slice_arg(type_name, len) }?;
        let name = core::str::from_utf8(name).map_err(|_| clangoffload_status::InvalidUtf8)?;
        let found = Comment::for_file_type(name).ok_or(clangoffload_status::NotFound)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = match found {
            Comment::DoubleSlash => CLANGOFFLOAD_COMMENT_DOUBLE_SLASH,
            Comment::Hash => CLANGOFFLOAD_COMMENT_HASH,
            Comment::Semicolon => CLANGOFFLOAD_COMMENT_SEMICOLON,
        };
        Ok(())
    })
}

/// Parses the text bundle in `len` bytes at `data`, whose markers use
/// `comment_kind` (`CLANGOFFLOAD_COMMENT_*`; any other value gives
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`), and stores a handle in `*out`. The
/// whole file is checked unless `flags` has `CLANGOFFLOAD_PARSE_LENIENT`, which
/// keeps the entries before the first fault (`clangoffload_text_bundle_fault`).
/// A file with no marker has no entries (the bundler takes it for the host's
/// own file).
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_text_bundle_free` (exactly once). On failure `*out` is
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
pub unsafe extern "C" fn clangoffload_text_bundle_parse(
    data: *const u8,
    len: usize,
    comment_kind: u32,
    flags: u32,
    out: *mut *mut clangoffload_text_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        let comment = comment(comment_kind)?;
        // SAFETY: as the caller promises.
        let (data, out, lenient) = unsafe { crate::handle::parse_args(data, len, flags, out) }?;
        let entries = TextBundle::parse_lenient(data, comment).entries();
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let (entries, fault) = unsafe { collect_checked(entries, lenient, err) }?;
        *out = into_handle(clangoffload_text_bundle { entries, fault });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_text_bundle_parse`, with everything it
/// owns; views taken from it become invalid.
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
/// `bundle` is NULL or a live handle from `clangoffload_text_bundle_parse` not
/// yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_text_bundle_free(bundle: *mut clangoffload_text_bundle) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(bundle) }
}

/// Number of entries (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `bundle` gives 0.
///
/// # Safety
/// `bundle` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_text_bundle_entry_count(
    bundle: *const clangoffload_text_bundle,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(bundle, |h| &h.entries) }
}

/// Stores entry `index` (file order) in `*out`.
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
pub unsafe extern "C" fn clangoffload_text_bundle_get_entry(
    bundle: *const clangoffload_text_bundle,
    index: usize,
    out: *mut clangoffload_text_bundle_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::get(bundle, |h| &h.entries, index, out, |_, entry| entry.into()) }
}

/// For a leniently parsed bundle: the status of the first fault, with details
/// in `*err`; `CLANGOFFLOAD_STATUS_OK` if there was none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `bundle` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `bundle` is NULL or a live handle; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_text_bundle_fault(
    bundle: *const clangoffload_text_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::fault(bundle, |h| h.fault.as_ref(), err) }
}

/// Writes a text bundle of `count` entries, in order, with the markers of
/// `comment_kind` (`CLANGOFFLOAD_COMMENT_*`), into `*out`: byte-identical to
/// clang-offload-bundler 22. An entry that could not be read back as itself (an
/// empty ID, a newline in the ID, a marker line in the payload) is an error.
///
/// Ownership: on success `*out` is a new buffer owned by the caller, released
/// with `clangoffload_buffer_free`; it borrows none of the inputs, which are
/// only read during the call. On failure `*out` is untouched and `*err` (if not
/// NULL) says what and where.
///
/// Lifetime: `out->ptr` stays valid until `clangoffload_buffer_free`.
///
/// NULL: `entries` may be NULL only when `count` is 0, and a view's `ptr` only
/// when its `len` is 0; `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `entries` is NULL or readable for `count` records whose views are readable;
/// `out` is NULL or writable; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_text_bundle_write(
    comment_kind: u32,
    entries: *const clangoffload_entry_input,
    count: usize,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        let comment = comment(comment_kind)?;
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
        let bytes = write_text_bundle(comment, &pairs).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}
