//! `ar` archives: iterate members, write GNU archives as LLVM writes them,
//! and name the members of heterogeneous device archives.

use alloc::vec::Vec;
use clangoffload::archive::{device_member_name, write_archive_indexed, Archive, Member};
use clangoffload::Error;

use core::ffi::c_char;

use crate::ffi::{
    array_arg, clangoffload_bytes, collect_checked, free_handle, handle_arg, into_handle, out_arg,
    report_fault, slice_arg, str_arg, write_text,
};
use crate::object_bundle::{clangoffload_buffer, clangoffload_entry_input};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// A parsed archive. Borrows the buffer it was parsed from.
pub struct clangoffload_archive {
    members: Vec<Member<'static>>,
    fault: Option<Error>,
}

/// One archive member (symbol and long-name tables are not members here).
/// The views borrow the parsed buffer. The name is bytes from the file: never
/// use it as a path.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_archive_member {
    /// The resolved name (long names looked up, GNU `/` and BSD prefix removed).
    pub name: clangoffload_bytes,
    /// The member's data.
    pub data: clangoffload_bytes,
    /// Where the member's header starts in the archive.
    pub header_offset: u64,
    /// Where the member's data starts in the archive.
    pub data_offset: u64,
}

/// Parses the archive (GNU or BSD) in `len` bytes at `data` and stores a handle
/// in `*out`. Members are read up to the first damaged header; its fault is
/// kept (`clangoffload_archive_fault`) and the members before it are still
/// available. A thin archive and a file that is not an archive are errors.
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_archive_free` (exactly once). On failure `*out` is
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
pub unsafe extern "C" fn clangoffload_archive_parse(
    data: *const u8,
    len: usize,
    out: *mut *mut clangoffload_archive,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes that outlive the handle.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable pointer.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let archive = Archive::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let (members, fault) = unsafe { collect_checked(archive.members(), true, err) }?;
        *out = into_handle(clangoffload_archive { members, fault });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_archive_parse`, with everything it
/// owns; views taken from it become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `archive` does nothing.
///
/// Thread safety: must not run concurrently with any other use of the same
/// handle; the handle must not be used afterwards.
///
/// # Safety
/// `archive` is NULL or a live handle from `clangoffload_archive_parse` not yet
/// freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_archive_free(archive: *mut clangoffload_archive) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(archive) }
}

/// Number of members read (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `archive` gives 0.
///
/// # Safety
/// `archive` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_archive_member_count(
    archive: *const clangoffload_archive,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(archive) }.map_or(0, |a| a.members.len())
}

/// Stores member `index` (file order) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `out->name` and `out->data` borrow the parsed buffer, valid until
/// the handle is freed. The name is bytes from the file: never use it as a
/// path.
///
/// NULL: `archive` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `archive` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_archive_get_member(
    archive: *const clangoffload_archive,
    index: usize,
    out: *mut clangoffload_archive_member,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let archive = unsafe { handle_arg(archive) }?;
        let member = archive
            .members
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_archive_member {
            name: clangoffload_bytes::of(member.name()),
            data: clangoffload_bytes::of(member.data()),
            header_offset: member.header_offset(),
            data_offset: member.data_offset(),
        };
        Ok(())
    })
}

/// The status of the damaged member header that ended the walk, with details in
/// `*err`; `CLANGOFFLOAD_STATUS_OK` if there was none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `archive` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `archive` is NULL or a live handle; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_archive_fault(
    archive: *const clangoffload_archive,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let archive = unsafe { handle_arg(archive) }?;
        // SAFETY: NULL or writable, as the caller promises.
        unsafe { report_fault(archive.fault.as_ref(), err) }
    })
}

/// Writes a GNU archive of `count` members (`id` = member name, `payload` =
/// data), in order, into `*out`, as LLVM 22 writes it (mtime, uid, gid 0, mode
/// 644, `//` long-name table), with the library's one indexing rule (the one
/// `-type=a -unbundle` uses): members that are ELF files or COFF objects get
/// their defined global symbols in the archive's symbol table, LLVM bitcode
/// the symbols of the table clang stores beside its IR (when LLVM 22 would
/// use it as it is); other members get none.
///
/// Ownership: on success `*out` is a new buffer owned by the caller, released
/// with `clangoffload_buffer_free`; it borrows none of the inputs, which are
/// only read during the call. On failure `*out` is untouched and `*err` (if not
/// NULL) says what and where.
///
/// Lifetime: `out->ptr` stays valid until `clangoffload_buffer_free`.
///
/// NULL: `members` may be NULL only when `count` is 0, and a view's `ptr` only
/// when its `len` is 0; `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `members` is NULL or readable for `count` records whose views are readable;
/// `out` is NULL or writable; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_archive_write(
    members: *const clangoffload_entry_input,
    count: usize,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let inputs = unsafe { array_arg(members, count) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let mut named = Vec::new();
        for input in inputs {
            // SAFETY: `input.id` is a view readable for the call, as the caller promises.
            let id = unsafe { input.id.as_slice() }?;
            // SAFETY: `input.payload` is a view readable for the call, as the caller promises.
            let payload = unsafe { input.payload.as_slice() }?;
            named.push((id, payload));
        }
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bytes = write_archive_indexed(&named).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}

/// The name clang-offload-bundler 22 gives, in the per-target archive of
/// `-type=a -unbundle`, to bundle entry `entry_id` (`entry_id_len` bytes of
/// UTF-8) of member `member_name` (`name_len` bytes): `<stem>-<entry id><stem>
/// <ext>` with `:` replaced by `_`. The result is a member name, never a path.
///
/// Ownership: the text is copied into the caller's `buf`; nothing to free. On
/// success `buf` holds the text and a NUL, and `*out_len` its length without
/// the NUL. When `cap` is too small (or `buf` is NULL), nothing is copied,
/// `*out_len` gets the length needed and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`: allocate `*out_len + 1` bytes and
/// call again.
///
/// NULL: `member_name` and `entry_id` may be NULL only when their length is 0;
/// `buf` NULL asks for the length (`BUFFER_TOO_SMALL`); `out_len` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// Pure: depends only on its arguments.
///
/// # Safety
/// `member_name` and `entry_id` are NULL or readable for their lengths; `buf`
/// is NULL or writable for `cap` bytes; `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_device_member_name(
    member_name: *const u8,
    name_len: usize,
    entry_id: *const c_char,
    entry_id_len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let member_name = unsafe { slice_arg(member_name, name_len) }?;
        // SAFETY: readable for the call, as the caller promises.
        let entry_id = unsafe { str_arg(entry_id, entry_id_len) }?;
        let name = device_member_name(member_name, entry_id);
        // SAFETY: buf is NULL or writable for cap bytes; out_len writable.
        unsafe { write_text(&name, buf, cap, out_len) }
    })
}
