//! The one mechanism behind every handle: a list's count, its records by
//! index (the out-parameter written only on success), the first fault a
//! lenient parse kept, what every `*_parse` takes, and what a bundler job
//! that reads one input makes ([`ReadHandle`]). The exported functions say
//! which list (`list`) and how a record looks in C (`view`); the checks are
//! here once.

use alloc::string::String;

use clangoffload::bundler::BundlerError;
use clangoffload::Error;

use crate::ffi::{handle_arg, out_arg, report_fault};
use crate::status::{clangoffload_error, clangoffload_status};

/// Flag for `clangoffload_bundle_parse` (and every other `*_parse` that
/// takes `flags`): keep the entries in front of the first bad descriptor
/// instead of failing; the fault is then kept in the handle
/// (`clangoffload_bundle_fault`).
pub const CLANGOFFLOAD_PARSE_LENIENT: u32 = 1;

/// The number of records in `list(handle)`; 0 for a NULL handle.
///
/// # Safety
/// `handle` is NULL or a live handle.
pub(crate) unsafe fn count<H, T>(handle: *const H, list: impl FnOnce(&H) -> &[T]) -> usize {
    // SAFETY: forwarded to the caller.
    unsafe { count_with(handle, |h| list(h).len()) }
}

/// `count(handle)`, for a handle whose records are numbered by its own
/// methods rather than held in a slice; 0 for a NULL handle.
///
/// # Safety
/// `handle` is NULL or a live handle.
pub(crate) unsafe fn count_with<H>(handle: *const H, count: impl FnOnce(&H) -> usize) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(handle) }.map_or(0, count)
}

/// Writes `view(handle, record)` for record `index` of `list(handle)` into
/// `*out`: `IndexOutOfRange` past the last (reported before a NULL `out`).
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or writable.
pub(crate) unsafe fn get<H, T, R>(
    handle: *const H,
    list: impl FnOnce(&H) -> &[T],
    index: usize,
    out: *mut R,
    view: impl FnOnce(&H, &T) -> R,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(handle) }?;
        let record = list(handle)
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = view(handle, record);
        Ok(())
    })
}

/// Writes `find(handle)` into `*out`, for a handle that finds its records
/// itself (by methods, or by more than one index) rather than in one slice:
/// `out` is checked before the lookup, and a record `find` does not find is
/// `IndexOutOfRange`.
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or writable.
pub(crate) unsafe fn record<H, R>(
    handle: *const H,
    out: *mut R,
    find: impl FnOnce(&H) -> Option<R>,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(handle) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = find(handle).ok_or(clangoffload_status::IndexOutOfRange)?;
        Ok(())
    })
}

/// The status of the fault `handle` kept (`fault(handle)`), with details in
/// `*err`; `Ok` if none.
///
/// # Safety
/// `handle` is NULL or a live handle; `err` is NULL or writable.
pub(crate) unsafe fn fault<H>(
    handle: *const H,
    fault: impl FnOnce(&H) -> Option<&Error>,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(handle) }?;
        // SAFETY: NULL or writable, as the caller promises.
        unsafe { report_fault(fault(handle), err) }
    })
}

/// What every `*_parse` of a handle takes first, checked once: `flags` (only
/// `CLANGOFFLOAD_PARSE_LENIENT` known), the input (borrowed until the handle
/// is freed) and the handle's out-pointer. Returns the input, the
/// out-pointer and whether the parse is lenient.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes that outlive the handle; `out`
/// is NULL or writable.
pub(crate) unsafe fn parse_args<'a, H>(
    data: *const u8,
    len: usize,
    flags: u32,
    out: *mut *mut H,
) -> Result<(&'static [u8], &'a mut *mut H, bool), clangoffload_status> {
    if flags & !CLANGOFFLOAD_PARSE_LENIENT != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: the caller promises `len` readable bytes that outlive the handle.
    let data: &'static [u8] = unsafe { crate::ffi::slice_arg(data, len) }?;
    // SAFETY: the caller promises a writable pointer.
    let out = unsafe { out_arg(out) }?;
    Ok((data, out, flags & CLANGOFFLOAD_PARSE_LENIENT != 0))
}

/// What a job that reads one input makes (a `clangoffload_job`, a
/// `clangoffload_extraction`): the bundler's `read_job` reports its failures
/// to the caller's `notify` and then hands it the input's name.
pub(crate) trait ReadHandle {
    /// The errors to report once what could be read is written.
    fn failures(&self) -> &[BundlerError];
    /// The input's name, for those errors' messages.
    fn set_input_name(&mut self, name: String);
}
