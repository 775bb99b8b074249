//! What a device loads from kpack archives, by the HIP runtime's rule
//! (`clangoffload::select::select_split_host` and `select_archive`): the C
//! side of `clangoffload select` on a split host or an archive alone.

use alloc::vec::Vec;

use clangoffload::select::{select_archive, select_split_host, KpackChoice, KpackOutcome, Lookup};

use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg};
use crate::kpack::{
    archive_reader, clangoffload_kpack, clangoffload_kpack_environment, clangoffload_kpack_open_fn,
    environment_arg, loader,
};
use crate::status::clangoffload_status;

/// What `clangoffload_select_split_host` or `clangoffload_select_kpack`
/// found, read by index; owns its texts.
pub struct clangoffload_kpack_selection {
    choices: Vec<KpackChoice>,
}

/// One `HIPK` record, or one binary key of an archive, and what it gives
/// the device. Views borrow the selection handle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_kpack_choice {
    /// Whether `offset` is a record's file offset (a key of an archive
    /// alone has none).
    pub has_offset: bool,
    /// The record's file offset.
    pub offset: u64,
    /// The binary key (`<kernel_name>#<co_index>`).
    pub key: clangoffload_bytes,
    /// Whether the device loads a code object for it.
    pub loads: bool,
    /// How (`CLANGOFFLOAD_SELECT_NATIVE` or `_GENERIC`); 0 when nothing
    /// loads.
    pub how: u32,
    /// The code object's ID (empty if none).
    pub id: clangoffload_bytes,
    /// The path of the archive that holds it, as opened (empty if none).
    pub path: clangoffload_bytes,
    /// Its entry in that archive (`clangoffload_kpack_get_entry`,
    /// `clangoffload_kpack_read` on the archive parsed from those bytes).
    pub entry: usize,
    /// The runtime's `kpack_error_t` when nothing loads (5 kernel not
    /// found, 8 disabled, 13 no archive, 14 no architecture); 0 otherwise.
    pub kpack_error: u32,
    /// Whether the record itself cannot be read (it has no marker).
    pub unreadable: bool,
    /// Why this code, or why none.
    pub reason: clangoffload_bytes,
}

/// Resolves each `HIPK` record of the host ROCm's kpack split in `len`
/// bytes at `data` for the device `device` (an ISA name or target ID,
/// `gfx90a:xnack+`) as the HIP runtime resolves it: its archives looked
/// for from `host_dir` (the host's real directory, symlinks resolved) as
/// its marker and `environment` (NULL: no `ROCM_KPACK_*` set) say, each
/// path opened once through `open`, the loader `flags` names
/// (`CLANGOFFLOAD_KPACK_FIRST_CANDIDATE`: rocm-kpack's shipped one).
/// Stores the records' choices, in record order, in a handle in `*out`.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` when the data is no split host.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_selection_free`; on failure `*out` is
/// untouched.
///
/// Lifetime: the handle owns its texts; the inputs, `environment`,
/// `open`'s bytes and `context` are used during the call only (a choice
/// names its archive by path: read its code object from the bytes that
/// path gives).
///
/// NULL: `data`, `device` and `host_dir` may be NULL only when their
/// lengths are 0; `open` and `out` must not be NULL.
///
/// # Safety
/// `data` and `device` NULL or readable for their lengths; `host_dir`
/// views readable bytes; `environment` NULL or readable, its views
/// readable where set; `open` callable with `context` during the call;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_select_split_host(
    data: *const u8,
    len: usize,
    device: *const core::ffi::c_char,
    device_len: usize,
    host_dir: clangoffload_bytes,
    environment: *const clangoffload_kpack_environment,
    flags: u32,
    open: clangoffload_kpack_open_fn,
    context: *mut core::ffi::c_void,
    out: *mut *mut clangoffload_kpack_selection,
) -> clangoffload_status {
    ffi_guard!({
        let loader = loader(flags)?;
        // SAFETY: NULL or readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: NULL or readable for `device_len` bytes, as the caller promises.
        let device = unsafe { crate::ffi::str_arg(device, device_len) }?;
        // SAFETY: readable, as the caller promises.
        let dir = unsafe { host_dir.as_slice() }?;
        // SAFETY: NULL or readable, as the caller promises.
        let environment = unsafe { environment_arg(environment) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `open` callable with `context` during the call, as the
        // caller promises.
        let mut reader = unsafe { archive_reader(open, context) }?;
        let lookup = Lookup {
            environment: &environment,
            dir,
            loader,
            open: &mut reader,
        };
        let mut chosen =
            select_split_host(data, &[device], lookup).ok_or(clangoffload_status::NotFound)?;
        let choices = chosen.pop().unwrap_or_default();
        *out = into_handle(clangoffload_kpack_selection { choices });
        Ok(())
    })
}

/// Resolves each binary key of `kpack` (the archive file at `path`) for
/// the device `device` in that archive alone, as the runtime would (each
/// key once, in the order its table first lists it), in `environment`
/// (NULL: no `ROCM_KPACK_*` set) by the loader `flags` names. Stores the
/// keys' choices in a handle in `*out`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_kpack_selection_free`.
///
/// Lifetime: the handle owns its texts; `kpack` and the views are read
/// during the call only.
///
/// NULL: `device` may be NULL only when `device_len` is 0; `kpack` and
/// `out` must not be NULL.
///
/// # Safety
/// `kpack` NULL or a live handle; `path` views readable bytes; `device`
/// NULL or readable for `device_len` bytes; `environment` NULL or
/// readable, its views readable where set; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_select_kpack(
    kpack: *const clangoffload_kpack,
    path: clangoffload_bytes,
    device: *const core::ffi::c_char,
    device_len: usize,
    environment: *const clangoffload_kpack_environment,
    flags: u32,
    out: *mut *mut clangoffload_kpack_selection,
) -> clangoffload_status {
    ffi_guard!({
        let loader = loader(flags)?;
        // SAFETY: NULL or a live handle, as the caller promises.
        let kpack = unsafe { handle_arg(kpack) }?;
        // SAFETY: readable, as the caller promises.
        let path = unsafe { path.as_slice() }?;
        // SAFETY: NULL or readable for `device_len` bytes, as the caller promises.
        let device = unsafe { crate::ffi::str_arg(device, device_len) }?;
        // SAFETY: NULL or readable, as the caller promises.
        let environment = unsafe { environment_arg(environment) }?;
        // SAFETY: NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let choices = select_archive(&kpack.archive, path, device, &environment, loader);
        *out = into_handle(clangoffload_kpack_selection { choices });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_select_split_host` or
/// `clangoffload_select_kpack`.
///
/// Ownership: the handle is released with the texts its choices name.
///
/// NULL: a NULL `selection` does nothing.
///
/// # Safety
/// `selection` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_selection_free(
    selection: *mut clangoffload_kpack_selection,
) {
    // SAFETY: NULL or a handle released once, as the caller promises.
    unsafe { free_handle(selection) }
}

/// How many records or keys.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `selection` gives 0.
///
/// # Safety
/// `selection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_selection_count(
    selection: *const clangoffload_kpack_selection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(selection, |s| &s.choices) }
}

/// Stores choice `index` in `*out`; `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: `out`'s views borrow the handle.
///
/// NULL: `selection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `selection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_kpack_selection_get(
    selection: *const clangoffload_kpack_selection,
    index: usize,
    out: *mut clangoffload_kpack_choice,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::get(selection, |s| &s.choices, index, out, |_, c| view(c)) }
}

/// `choice` as C reads it, borrowing it.
fn view(choice: &KpackChoice) -> clangoffload_kpack_choice {
    let none = clangoffload_bytes::of(&[]);
    let mut out = clangoffload_kpack_choice {
        has_offset: choice.offset.is_some(),
        offset: choice.offset.unwrap_or(0),
        key: clangoffload_bytes::of(&choice.key),
        loads: false,
        how: 0,
        id: none,
        path: none,
        entry: 0,
        kpack_error: 0,
        unreadable: false,
        reason: clangoffload_bytes::of(choice.outcome.reason().as_bytes()),
    };
    match &choice.outcome {
        KpackOutcome::Loads(load) => {
            out.loads = true;
            out.how = crate::select::how_of(load.how);
            out.id = clangoffload_bytes::of(&load.id);
            out.path = clangoffload_bytes::of(&load.path);
            out.entry = load.entry;
        }
        KpackOutcome::Fails { error, .. } => out.kpack_error = error.code(),
        KpackOutcome::Unreadable(_) => out.unreadable = true,
    }
    out
}
