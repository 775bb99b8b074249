//! Binary bundles: parse, list, select, validate, write.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::ffi::c_char;

#[cfg(feature = "alloc")]
use clangoffload::bundle::{BundleDiagnostic, BundleLayout};
use clangoffload::id::{self, BundleEntryId, DeviceMatch, IdError};
#[cfg(feature = "alloc")]
use clangoffload::Error;
use clangoffload::{Bundle, BundleEntry, EntryPosition};

#[cfg(feature = "alloc")]
use crate::ffi::{array_arg, collect_checked, free_handle, handle_arg, into_handle};
use crate::ffi::{clangoffload_bytes, out_arg, slice_arg, str_arg};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Flag for the compatibility functions: `hip*` and `openmp` kinds match.
pub const CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE: u32 = 1;
/// Flag for `clangoffload_entry_id_is_compatible`: read both IDs as
/// clang-offload-bundler 22 does when unbundling (triple components as LLVM's
/// parsed values, so an unknown environment is none and `cudafoo` is `cuda`;
/// a target ID whose processor is not a known offload architecture ignored).
/// Needs an allocator: the embedded build without one gives
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
pub const CLANGOFFLOAD_AS_BUNDLER: u32 = 2;

/// A parsed binary bundle. Borrows the buffer it was parsed from.
#[cfg(feature = "alloc")]
pub struct clangoffload_bundle {
    bundle: Bundle<'static>,
    entries: Vec<BundleEntry<'static>>,
    fault: Option<Error>,
}

/// One bundle entry. `id` and `payload` borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundle_entry {
    /// The entry ID bytes as stored (not NUL-terminated, not necessarily UTF-8).
    pub id: clangoffload_bytes,
    /// The payload.
    pub payload: clangoffload_bytes,
    /// Absolute offset of the payload in the bundle.
    pub offset: u64,
    /// Offset of the entry's descriptor in the bundle header.
    pub descriptor_offset: u64,
}

impl From<&BundleEntry<'_>> for clangoffload_bundle_entry {
    fn from(entry: &BundleEntry<'_>) -> Self {
        clangoffload_bundle_entry {
            id: clangoffload_bytes::of(entry.id()),
            payload: clangoffload_bytes::of(entry.payload()),
            offset: entry.offset(),
            descriptor_offset: entry.descriptor_offset(),
        }
    }
}

/// Where a walk with `clangoffload_bundle_next_entry` stands. Zero it to
/// start; each call moves it on. It is plain data: a copy resumes the walk
/// from the same place.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct clangoffload_bundle_cursor {
    /// Index of the next entry.
    pub index: u64,
    /// Offset of the next entry's descriptor (0 before the first).
    pub offset: u64,
}

/// Walks the entries of the binary bundle in `len` bytes at `data` with no
/// handle and no allocation (this function, `_find_compatible_entry` and
/// `_select_entry_for_device` are the bundle API of the allocator-free
/// embedded build). Start with a zeroed `*cursor`; each call stores the next
/// entry in file order in `*out` and moves `*cursor` past it, and
/// `CLANGOFFLOAD_STATUS_END` follows the last. Every call checks the magic and
/// that the entry count fits in the input (constant time), then the entry's
/// descriptor as `clangoffload_bundle_parse` does; payload bytes are not read.
/// A bad header is reported by every call. The entries in front of a bad
/// descriptor are walked before its error is returned (with details in
/// `*err`), after which `*cursor` is at the end.
///
/// Ownership: nothing to free; `*out` and `*cursor` are plain records the
/// caller owns.
///
/// Lifetime: `out->id` and `out->payload` borrow `data`.
///
/// NULL: `data` may be NULL only when `len` is 0; `cursor` or `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// Thread safety: reentrant; a cursor must not be shared between threads
/// without synchronisation.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `cursor` is NULL or readable
/// and writable; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_next_entry(
    data: *const u8,
    len: usize,
    cursor: *mut clangoffload_bundle_cursor,
    out: *mut clangoffload_bundle_entry,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `cursor` is NULL or writable, as the caller promises.
        let cursor = unsafe { out_arg(cursor) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e| unsafe { report(&e, err) };
        let bundle = Bundle::parse_lenient(data)
            .and_then(|b| b.check_entry_count().map(|()| b))
            .map_err(fail)?;
        let mut walk = bundle.entries_from(EntryPosition {
            index: cursor.index,
            descriptor_offset: cursor.offset,
        });
        let next = walk.next();
        let position = walk.position();
        (cursor.index, cursor.offset) = (position.index, position.descriptor_offset);
        match next {
            None => Err(clangoffload_status::End),
            Some(entry) => {
                *out = (&entry.map_err(fail)?).into();
                Ok(())
            }
        }
    })
}

/// The entry of the binary bundle in `len` bytes at `data` whose ID is
/// exactly `target`, else the first (file order) whose code object is
/// compatible with the bundle entry ID `target`
/// (`target_len` bytes of UTF-8), by the bundler's rules; `flags` may hold
/// `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE`. Like
/// `clangoffload_bundle_find_compatible`, but with no handle and no
/// allocation: the bundle is checked as `clangoffload_bundle_parse` checks it
/// (an error is returned with details in `*err`), then the entry is stored in
/// `*out`. `CLANGOFFLOAD_STATUS_NOT_FOUND` if none is compatible.
///
/// Ownership: nothing to free; `*out` is a plain record the caller owns.
///
/// Lifetime: `out->id` and `out->payload` borrow `data`.
///
/// NULL: `data` may be NULL only when `len` is 0, `target` only when
/// `target_len` is 0 (an empty ID, which does not parse); `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `target` is NULL or readable for
/// `target_len` bytes; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_find_compatible_entry(
    data: *const u8,
    len: usize,
    target: *const c_char,
    target_len: usize,
    flags: u32,
    out: *mut clangoffload_bundle_entry,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: readable for target_len bytes, as the caller promises.
        let requested = requested_id(unsafe { str_arg(target, target_len) }?)?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bundle = Bundle::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
        let entry = id::first_compatible(&bundle, &requested, hip_openmp)
            .ok_or(clangoffload_status::NotFound)?;
        *out = (&entry).into();
        Ok(())
    })
}

/// The entry the HIP runtime would load on a device with AMDGPU target ID
/// `device` (or its HSA ISA name, `amdgcn-amd-amdhsa--gfx90a:xnack+`), as
/// `clangoffload_bundle_select_for_device` chooses it, from the
/// binary bundle in `len` bytes at `data` with no handle and no allocation:
/// the bundle is checked as `clangoffload_bundle_parse` checks it (an error is
/// returned with details in `*err`), then the entry is stored in `*out` and
/// how it matched in `*out_match`. `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing
/// fits.
///
/// Ownership: nothing to free; the outputs are plain values.
///
/// Lifetime: `out->id` and `out->payload` borrow `data`.
///
/// NULL: `data` may be NULL only when `len` is 0, `device` only when
/// `device_len` is 0; `out` or `out_match` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `device` is NULL or readable for
/// `device_len` bytes; `out`, `out_match` (in C, a `uint32_t`) and `err` are
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_select_entry_for_device(
    data: *const u8,
    len: usize,
    device: *const c_char,
    device_len: usize,
    out: *mut clangoffload_bundle_entry,
    out_match: *mut clangoffload_device_match,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: readable for device_len bytes, as the caller promises.
        let device = device_id(unsafe { str_arg(device, device_len) }?)?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `out_match` is NULL or writable, as the caller promises.
        let out_match = unsafe { out_arg(out_match) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bundle = Bundle::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        let (how, entry) =
            id::select_for_device(&bundle, &device).ok_or(clangoffload_status::NotFound)?;
        *out = (&entry).into();
        *out_match = how.into();
        Ok(())
    })
}

/// The code object the HIP runtime loads on `device` (a target ID, or the
/// HSA ISA name `amdgcn-amd-amdhsa--gfx90a:xnack+`) from the fat binary in
/// `len` bytes at `data`, whatever it is, by the runtime's rule (see
/// `clangoffload_bundle_select_for_device`): a binary bundle; a compressed
/// bundle (below); or an OffloadBinary (an `amdgcn-amd-amdhsa` image of
/// exactly the device's target ID, else the first compatible one;
/// `out_match` is then native). Stores the code object in `*out` (`id` the
/// bundle entry ID, or the image's target ID; `payload` the code; `offset`
/// where the code starts in `data` or, for a compressed bundle, in the
/// decompressed bundle; `descriptor_offset` 0) and how it matched in
/// `*out_match`. `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing fits.
///
/// A compressed bundle is decoded into the caller's `scratch`
/// (`scratch_cap` bytes), in two calls: first with `scratch` NULL and
/// `scratch_cap` 0, which decodes only the bundle's header and entry table
/// to choose the entry and gives `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`
/// with the size needed in `*out_needed` (or `NOT_FOUND`, or the table's
/// error); then with a `scratch` of at least that size, which decodes the
/// chosen code object into it. `*out_needed` is the chosen code object's
/// size plus its ID's length: the code is stored at the start of `scratch`
/// (`out->payload.ptr == scratch`) and the ID right after it, so `scratch`
/// need never hold the whole decompressed bundle. Without
/// `CLANGOFFLOAD_SKIP_HASH_CHECK` in `flags`, the rest of the bundle is
/// decoded through MD5 without being kept and the hash is checked
/// (`CLANGOFFLOAD_STATUS_HASH_MISMATCH`); with it, as the HIP runtime and
/// LLVM's loaders do, decoding stops at the end of the chosen code object,
/// and damage after it goes unseen. Decoding is limited to 1 GiB.
///
/// The embedded build without an allocator decodes the whole bundle instead:
/// `*out_needed` is its declared size (known without decoding), and `id`
/// and `payload` point where the bundle has them inside `scratch`.
///
/// `*out_needed` is written for a compressed bundle only, on success too.
///
/// Ownership: nothing to free; the outputs are plain values.
///
/// Lifetime: `out->id` and `out->payload` borrow `data`, or `scratch` for a
/// compressed bundle.
///
/// NULL: `data` may be NULL only when `len` is 0, `device` only when
/// `device_len` is 0, `scratch` only when `scratch_cap` is 0; `out`,
/// `out_match` and `out_needed` NULL give `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `device` is NULL or readable
/// for `device_len` bytes; `scratch` NULL or writable for `scratch_cap` bytes
/// and not overlapping `data`; `out`, `out_match` (in C, a `uint32_t`),
/// `out_needed` and `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_fatbin_select_for_device(
    data: *const u8,
    len: usize,
    device: *const c_char,
    device_len: usize,
    flags: u32,
    scratch: *mut u8,
    scratch_cap: usize,
    out_needed: *mut usize,
    out: *mut clangoffload_bundle_entry,
    out_match: *mut clangoffload_device_match,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        if flags & !crate::compressed::CLANGOFFLOAD_SKIP_HASH_CHECK != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: readable for device_len bytes, as the caller promises.
        let device = device_id(unsafe { str_arg(device, device_len) }?)?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `out_match` is NULL or writable, as the caller promises.
        let out_match = unsafe { out_arg(out_match) }?;
        // SAFETY: `out_needed` is NULL or writable, as the caller promises.
        let out_needed = unsafe { out_arg(out_needed) }?;
        let options = clangoffload::DecompressOptions {
            verify_hash: flags & crate::compressed::CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
            ..clangoffload::DecompressOptions::default()
        };
        if scratch.is_null() && scratch_cap != 0 {
            return Err(clangoffload_status::NullArgument);
        }
        let scratch: &mut [u8] = if scratch_cap == 0 {
            &mut []
        } else {
            // SAFETY: non-NULL, writable for `scratch_cap` bytes and not
            // overlapping `data`, as the caller promises.
            unsafe { core::slice::from_raw_parts_mut(scratch, scratch_cap) }
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let reported = |e: clangoffload::Error| unsafe { report(&e, err) };
        let found = if clangoffload::CompressedBundle::is_compressed(data) {
            let compressed = clangoffload::CompressedBundle::parse(data).map_err(reported)?;
            // Choose from the entry table, then decode the code object alone.
            #[cfg(feature = "alloc")]
            let found = {
                let chosen = id::select_in_compressed(&compressed, &device, &options)
                    .map_err(reported)?
                    .ok_or(clangoffload_status::NotFound)?;
                *out_needed = chosen.needed();
                if chosen.needed() > scratch_cap {
                    return Err(clangoffload_status::BufferTooSmall);
                }
                chosen
                    .decompress_into(scratch, &options)
                    .map_err(reported)?
            };
            // Without an allocator: the whole bundle into `scratch`.
            #[cfg(not(feature = "alloc"))]
            let found = {
                *out_needed = compressed.check(&options.limits).map_err(reported)?;
                if *out_needed > scratch_cap {
                    return Err(clangoffload_status::BufferTooSmall);
                }
                clangoffload::select::select_in_fatbin(data, &device, scratch, &options)
                    .map_err(reported)?
                    .ok_or(clangoffload_status::NotFound)?
            };
            found
        } else {
            clangoffload::select::select_in_fatbin(data, &device, scratch, &options)
                .map_err(reported)?
                .ok_or(clangoffload_status::NotFound)?
        };
        *out = clangoffload_bundle_entry {
            id: clangoffload_bytes::of(found.id),
            payload: clangoffload_bytes::of(found.code),
            offset: found.offset,
            descriptor_offset: 0,
        };
        *out_match = found.how.into();
        Ok(())
    })
}

/// Parses a binary bundle from `len` bytes at `data` and stores a new handle in
/// `*out`. Every descriptor is checked unless `flags` has
/// `CLANGOFFLOAD_PARSE_LENIENT`, which keeps the entries in front of the first
/// bad descriptor (`clangoffload_bundle_fault`). Payload bytes are not read.
/// Any other flag bit gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_bundle_free` (exactly once). On failure `*out` is
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
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_parse(
    data: *const u8,
    len: usize,
    flags: u32,
    out: *mut *mut clangoffload_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (data, out, lenient) = unsafe { crate::handle::parse_args(data, len, flags, out) }?;
        let parsed = if lenient {
            Bundle::parse_lenient(data)
        } else {
            Bundle::parse(data)
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bundle = parsed.map_err(|e| unsafe { report(&e, err) })?;
        // A strict parse has checked every descriptor already.
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let (entries, fault) = unsafe { collect_checked(bundle.entries(), true, err) }?;
        *out = into_handle(clangoffload_bundle {
            bundle,
            entries,
            fault,
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_bundle_parse`, with everything it owns;
/// views taken from it become invalid.
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
/// `bundle` is NULL or a live handle from `clangoffload_bundle_parse` not yet
/// freed.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_free(bundle: *mut clangoffload_bundle) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(bundle) }
}

/// Number of (good) entries, in file order.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `bundle` gives 0.
///
/// # Safety
/// `bundle` is NULL or a live handle.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_entry_count(
    bundle: *const clangoffload_bundle,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(bundle, |h| &h.entries) }
}

/// Size of the bundle header (magic, count, descriptors) for a strictly parsed
/// bundle, or 0 for a lenient one.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `bundle` gives 0.
///
/// # Safety
/// `bundle` is NULL or a live handle.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_header_len(bundle: *const clangoffload_bundle) -> u64 {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(bundle) }.map_or(0, |b| b.bundle.header_len().unwrap_or(0))
}

/// Stores entry `index` (file order) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last entry.
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
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_get_entry(
    bundle: *const clangoffload_bundle,
    index: usize,
    out: *mut clangoffload_bundle_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::get(bundle, |h| &h.entries, index, out, |_, entry| entry.into()) }
}

/// For a leniently parsed bundle: the status of the first bad descriptor, with
/// details in `*err`; `CLANGOFFLOAD_STATUS_OK` if there was none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `bundle` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `bundle` is NULL or a live handle; `err` is NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_fault(
    bundle: *const clangoffload_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::fault(bundle, |h| h.fault.as_ref(), err) }
}

/// Index of the entry whose ID is exactly `target` (`target_len` bytes of
/// UTF-8) if there is one, else of the first entry (file order) whose code
/// object is compatible with it, by the bundler's rules; `flags` may hold
/// `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE`.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` if none is. Entries whose ID does not parse
/// never match.
///
/// Ownership: nothing to free; `*out_index` is a plain number.
///
/// NULL: `bundle` or `out_index` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `target` may be NULL only when
/// `target_len` is 0 (an empty ID, which does not parse).
///
/// # Safety
/// `bundle` is NULL or a live handle; `target` is NULL or readable for
/// `target_len` bytes; `out_index` is NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_find_compatible(
    bundle: *const clangoffload_bundle,
    target: *const c_char,
    target_len: usize,
    flags: u32,
    out_index: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        // SAFETY: readable for target_len bytes, as the caller promises.
        let requested = requested_id(unsafe { str_arg(target, target_len) }?)?;
        let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
        let entry = id::first_compatible_of(bundle.entries.iter().copied(), &requested, hip_openmp)
            .ok_or(clangoffload_status::NotFound)?;
        let index = usize::try_from(entry.index()).map_err(|_| clangoffload_status::NotFound)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out_index) }? = index;
        Ok(())
    })
}

/// A requested entry ID, with the statuses every selection call gives for
/// the same bad input: its target ID's own status when that is malformed,
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` (later) for an unknown processor.
fn requested_id(text: &str) -> Result<BundleEntryId<'_>, clangoffload_status> {
    let requested = BundleEntryId::parse(text)?;
    if !requested.target_id().is_empty() {
        match requested.parsed_target_id() {
            Ok(_) | Err(IdError::UnknownProcessor) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(requested)
}

/// A device (target ID or HSA ISA name), with the statuses of
/// [`requested_id`]: no code object is for a processor nobody knows.
fn device_id(text: &str) -> Result<id::TargetId<'_>, clangoffload_status> {
    match id::parse_device(text) {
        Err(IdError::UnknownProcessor) => Err(clangoffload_status::NotFound),
        other => Ok(other?),
    }
}

/// How `clangoffload_bundle_select_for_device` matched.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_device_match {
    /// Code for the device's own processor.
    Native = 1,
    /// Code for its generic family (e.g. `gfx9-generic`).
    Generic = 2,
    /// SPIR-V (`amdgcnspirv`).
    Spirv = 3,
}

impl From<DeviceMatch> for clangoffload_device_match {
    fn from(how: DeviceMatch) -> Self {
        match how {
            DeviceMatch::Native => clangoffload_device_match::Native,
            DeviceMatch::Generic => clangoffload_device_match::Generic,
            DeviceMatch::SpirV => clangoffload_device_match::Spirv,
        }
    }
}

/// The entry the HIP runtime would load on a device with AMDGPU target ID
/// `device` (e.g. `gfx90a:sramecc+:xnack-`, or the HSA ISA name
/// `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`): native, then generic, then
/// SPIR-V; within each, by the runtime's rule (AMD comgr's
/// `amd_comgr_lookup_code_object`), not the bundler's: an entry of kind
/// `hip`, `hipv4` or `hcc` for exactly `amdgcn-amd-amdhsa` (never another
/// environment such as `unknown`), compatible with the device; the one of
/// exactly the device's target ID, else the first in file order. Stores its
/// index and how it matched. A device string that is no target ID gives its
/// target-ID status; `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing fits.
/// (`clangoffload_bundle_find_compatible` follows the bundler's rules.)
///
/// Ownership: nothing to free; the outputs are plain values.
///
/// NULL: `bundle`, `out_index` or `out_match` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (`NOT_FOUND` is reported first);
/// `device` may be NULL only when `device_len` is 0.
///
/// # Safety
/// `bundle` is NULL or a live handle; `device` is NULL or readable for
/// `device_len` bytes; `out_index` and `out_match` are NULL or writable (in C,
/// `out_match` points to a `uint32_t`).
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_select_for_device(
    bundle: *const clangoffload_bundle,
    device: *const c_char,
    device_len: usize,
    out_index: *mut usize,
    out_match: *mut clangoffload_device_match,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        // SAFETY: readable for device_len bytes, as the caller promises.
        let device = device_id(unsafe { str_arg(device, device_len) }?)?;
        let (how, entry) =
            id::select_for_device(&bundle.bundle, &device).ok_or(clangoffload_status::NotFound)?;
        let index = bundle
            .entries
            .iter()
            .position(|e| e.index() == entry.index())
            .ok_or(clangoffload_status::NotFound)?;
        // SAFETY: `out_index` is NULL or writable, as the caller promises.
        let out_index = unsafe { out_arg(out_index) }?;
        // SAFETY: `out_match` is NULL or writable, as the caller promises.
        let out_match = unsafe { out_arg(out_match) }?;
        *out_index = index;
        *out_match = how.into();
        Ok(())
    })
}

/// Kinds of `clangoffload_bundle_diagnostic`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_diagnostic_kind {
    /// Entries `a` and `b` have the same ID.
    DuplicateId = 1,
    /// The payloads of entries `a` and `b` overlap.
    OverlappingPayloads = 2,
    /// Entry `a`'s payload starts inside the header, which ends at `b`.
    PayloadOverlapsHeader = 3,
    /// `b` bytes follow the bundle's end at offset `a`.
    TrailingBytes = 4,
}

/// Something questionable in a readable bundle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundle_diagnostic {
    /// What it is.
    pub kind: clangoffload_diagnostic_kind,
    /// First value, as `kind` says.
    pub a: u64,
    /// Second value, as `kind` says.
    pub b: u64,
}

#[cfg(feature = "alloc")]
impl From<BundleDiagnostic> for clangoffload_bundle_diagnostic {
    fn from(d: BundleDiagnostic) -> Self {
        use clangoffload_diagnostic_kind as K;
        let (kind, a, b) = match d {
            BundleDiagnostic::DuplicateId { first, second } => (K::DuplicateId, first, second),
            BundleDiagnostic::OverlappingPayloads { first, second } => {
                (K::OverlappingPayloads, first, second)
            }
            BundleDiagnostic::PayloadOverlapsHeader { entry, header_len } => {
                (K::PayloadOverlapsHeader, entry, header_len)
            }
            BundleDiagnostic::TrailingBytes { offset, len } => (K::TrailingBytes, offset, len),
            _ => (K::TrailingBytes, 0, 0),
        };
        clangoffload_bundle_diagnostic { kind, a, b }
    }
}

/// Checks the bundle for duplicate IDs, overlapping payloads, payloads inside
/// the header and trailing bytes. Stores the first `cap` findings (at most) in
/// `out` and their total number in `*out_count`; unlike the other array
/// outputs, a short array is not an error: compare `*out_count` with `cap`.
///
/// Ownership: the findings are copied into the caller's array; nothing to free.
///
/// NULL: `out` may be NULL only when `cap` is 0 (a NULL `out` with `cap` > 0
/// gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`, a misaligned one
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`); `bundle` or
/// `out_count` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `bundle` is NULL or a live handle; `out` is NULL or writable for `cap`
/// records; `out_count` is NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_validate(
    bundle: *const clangoffload_bundle,
    out: *mut clangoffload_bundle_diagnostic,
    cap: usize,
    out_count: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        // SAFETY: writable, as the caller promises.
        let out_count = unsafe { out_arg(out_count) }?;
        let found = bundle.bundle.validate();
        if cap > 0 {
            if out.is_null() {
                return Err(clangoffload_status::NullArgument);
            }
            if !out.is_aligned() {
                return Err(clangoffload_status::InvalidArgument);
            }
            // SAFETY: non-NULL, aligned, writable for cap records as promised.
            let slots = unsafe { core::slice::from_raw_parts_mut(out, cap) };
            for (slot, d) in slots.iter_mut().zip(&found) {
                *slot = (*d).into();
            }
        }
        *out_count = found.len();
        Ok(())
    })
}

/// Lays out a bundle of `count` entries with IDs `ids[i]` and payload sizes
/// `sizes[i]`, each payload aligned to `align` (not 0; need not be a power of
/// two), exactly as clang-offload-bundler does. Writes the header (magic,
/// count, descriptors) into `header` (`header_cap` bytes) and its length into
/// `*header_len`; each payload's offset into `offsets[i]` (room for `count`),
/// and the bundle's total size into `*total_size`. The caller then writes each
/// payload at its offset, zeros in the gaps.
///
/// Ownership: everything is written into the caller's memory; nothing to free.
/// If the header does not fit (or `header` is NULL), only `*header_len` is
/// written, with the length needed, and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// NULL: `ids`, `sizes` and `offsets` may be NULL only when `count` is 0, and
/// an ID view's `ptr` only when its `len` is 0; `header` NULL asks for the
/// length; `header_len` or `total_size` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// Pure: depends only on its arguments.
///
/// # Safety
/// `ids` and `sizes` are NULL or readable for `count` records (each ID view
/// readable); `header` is NULL or writable for `header_cap` bytes; `offsets` is
/// NULL or writable for `count` values; `header_len` and `total_size` are NULL
/// or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_layout(
    ids: *const clangoffload_bytes,
    sizes: *const u64,
    count: usize,
    align: u64,
    header: *mut u8,
    header_cap: usize,
    header_len: *mut usize,
    offsets: *mut u64,
    total_size: *mut u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: `ids` is NULL or readable for `count` records, as the caller promises.
        let ids = unsafe { array_arg(ids, count) }?;
        // SAFETY: `sizes` is NULL or readable for `count` records, as the caller promises.
        let sizes = unsafe { array_arg(sizes, count) }?;
        let ids = ids
            .iter()
            // SAFETY: each view is readable, as the caller promises.
            .map(|b| unsafe { b.as_slice() })
            .collect::<Result<Vec<_>, _>>()?;
        let layout = BundleLayout::new(ids.iter().copied().zip(sizes.iter().copied()), align)
            .map_err(|e| clangoffload_status::from(e.kind()))?;
        // SAFETY: writable, as the caller promises.
        let header_len = unsafe { out_arg(header_len) }?;
        let bytes = layout.header();
        if bytes.len() > header_cap || header.is_null() {
            *header_len = bytes.len();
            return Err(clangoffload_status::BufferTooSmall);
        }
        if count > 0 && offsets.is_null() {
            return Err(clangoffload_status::NullArgument);
        }
        if !offsets.is_aligned() {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: writable, as the caller promises.
        let total_size = unsafe { out_arg(total_size) }?;
        // SAFETY: header is writable for header_cap >= bytes.len() bytes.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), header, bytes.len()) };
        if count > 0 {
            // SAFETY: offsets is non-NULL, aligned and writable for count values.
            let slots = unsafe { core::slice::from_raw_parts_mut(offsets, count) };
            slots.copy_from_slice(layout.offsets());
        }
        *header_len = bytes.len();
        *total_size = layout.total_size();
        Ok(())
    })
}
