//! Making an inspection: `clangoffload_inspect` (one thread) and
//! `clangoffload_inspect_parallel` (compressed bundles decoded on every
//! core), their arguments checked once; and releasing it.

use core::ffi::c_void;

use clangoffload::bundler::Decoding;
#[cfg(feature = "std")]
use clangoffload::inspect::inspect_parallel;
use clangoffload::inspect::{inspect_to, Depth};

use super::inspection::clangoffload_inspection;
use crate::compressed::{limits, CLANGOFFLOAD_SKIP_HASH_CHECK};
use crate::ffi::{free_handle, into_handle, out_arg, slice_arg};
use crate::status::clangoffload_status;

/// `clangoffload_inspect`'s flags: decode each compressed bundle only as far
/// as its header and entry table (a few KiB of its stream): entries' IDs,
/// offsets and sizes, but no hash (`has_computed_hash` false) and no
/// code-object check of payloads past the table.
pub const CLANGOFFLOAD_INSPECT_TABLES_ONLY: u32 = 2;

/// Inspects the `len` bytes at `data` (any file: an archive, an ELF file, or
/// containers back to back) and stores what it found in `*out`. Compressed
/// bundles and OffloadBinaries are decoded under `max_decompressed_size`
/// each (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1 GiB), one at a time, and a
/// compressed bundle's hash computed (unless `flags` has
/// `CLANGOFFLOAD_INSPECT_TABLES_ONLY`); a wrong hash is a container error
/// unless `flags` has `CLANGOFFLOAD_SKIP_HASH_CHECK`. Damage in the input is no failure: it is
/// in the inspection (containers' errors, `clangoffload_inspection_get_error`).
/// Any other flag bit gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_inspection_free` (exactly once). On failure
/// `*out` is untouched.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: keep them alive
/// and unchanged until it is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or a writable
/// handle pointer.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspect(
    data: *const u8,
    len: usize,
    flags: u32,
    max_decompressed_size: u64,
    out: *mut *mut clangoffload_inspection,
) -> clangoffload_status {
    ffi_guard!({
        let allowed = CLANGOFFLOAD_SKIP_HASH_CHECK | CLANGOFFLOAD_INSPECT_TABLES_ONLY;
        // SAFETY: as the caller promises.
        let (data, out, decoding) =
            unsafe { arguments(data, len, flags, allowed, max_decompressed_size, out) }?;
        let depth = if flags & CLANGOFFLOAD_INSPECT_TABLES_ONLY != 0 {
            Depth::Tables
        } else {
            Depth::Whole
        };
        *out = into_handle(clangoffload_inspection::new(inspect_to(
            data, decoding, depth,
        )));
        Ok(())
    })
}

/// Told of a part of the input a job is done with (`data`, `len` bytes of
/// it), with the caller's `context`; may be called from several threads at
/// once.
pub type clangoffload_done_with_fn =
    Option<unsafe extern "C" fn(context: *mut c_void, data: *const u8, len: usize)>;

/// `clangoffload_inspect` with every compressed bundle decoded whole (as
/// without `CLANGOFFLOAD_INSPECT_TABLES_ONLY`: the same inspection) on up to
/// `threads` threads (0: one), each bundle admitted by its declared
/// decompressed size under a memory budget of `memory_budget` bytes across
/// those threads (0: 256 MiB, or the largest bundle's buffer when that is
/// more; one larger than the budget is decoded alone), and `done_with` (if
/// set) told of each compressed bundle's input bytes once it is decoded, so
/// that a caller who mapped the file can let go of their pages. `flags`:
/// `CLANGOFFLOAD_SKIP_HASH_CHECK` only.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_inspection_free` (exactly once). On failure
/// `*out` is untouched.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: keep them alive
/// and unchanged until it is freed. `done_with` and `context` are used
/// during the call only.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `done_with` may be NULL.
///
/// # Safety
/// As `clangoffload_inspect`; `done_with`, if set, must be callable with
/// `context` from any thread, several at once, during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspect_parallel(
    data: *const u8,
    len: usize,
    flags: u32,
    max_decompressed_size: u64,
    threads: usize,
    memory_budget: u64,
    done_with: clangoffload_done_with_fn,
    context: *mut c_void,
    out: *mut *mut clangoffload_inspection,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (data, out, decoding) = unsafe {
            arguments(
                data,
                len,
                flags,
                CLANGOFFLOAD_SKIP_HASH_CHECK,
                max_decompressed_size,
                out,
            )
        }?;
        // The context crosses threads as an address: the caller promises
        // the callback may be called with it from any of them.
        let context = context.expose_provenance();
        let tell = |part: &[u8]| {
            if let Some(done_with) = done_with {
                let context = core::ptr::with_exposed_provenance_mut(context);
                // SAFETY: callable with `context` from any thread, as the
                // caller promises; the part is live during the call.
                unsafe { done_with(context, part.as_ptr(), part.len()) }
            }
        };
        let budget = (memory_budget != 0).then_some(memory_budget);
        let found = inspect_parallel(data, decoding, threads.max(1), budget, &tell);
        *out = into_handle(clangoffload_inspection::new(found));
        Ok(())
    })
}

/// The inspection calls' arguments, checked: the input, the output slot
/// and how to decode (`flags` may hold only `allowed` bits).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes that outlive the handle made;
/// `out` is NULL or writable.
unsafe fn arguments<'o>(
    data: *const u8,
    len: usize,
    flags: u32,
    allowed: u32,
    max_decompressed_size: u64,
    out: *mut *mut clangoffload_inspection,
) -> Result<
    (
        &'static [u8],
        &'o mut *mut clangoffload_inspection,
        Decoding,
    ),
    clangoffload_status,
> {
    if flags & !allowed != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: the caller promises `len` readable bytes that outlive the handle.
    let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
    // SAFETY: the caller promises a writable pointer.
    let out = unsafe { out_arg(out) }?;
    let decoding = Decoding {
        max_size: limits(max_decompressed_size).max_uncompressed_size,
        verify_hash: flags & CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
        verbose: false,
    };
    Ok((data, out, decoding))
}

/// Releases a handle from `clangoffload_inspect`; views taken from it
/// become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `inspection` does nothing.
///
/// # Safety
/// `inspection` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_free(inspection: *mut clangoffload_inspection) {
    // SAFETY: NULL or a handle from clangoffload_inspect released once, as
    // the caller promises.
    unsafe { free_handle(inspection) }
}
