//! Binary bundles: parse, list, select, validate, write.

use std::ffi::c_char;

use core_lib::bundle::{BundleDiagnostic, BundleLayout};
use core_lib::id::{self, BundleEntryId, DeviceMatch, TargetId};
use core_lib::{Bundle, BundleEntry, Error};

use crate::ffi::{
    array_arg, clangoffload_bytes, collect_checked, free_handle, handle_arg, into_handle, out_arg,
    report_fault, slice_arg, str_arg,
};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Flag for `clangoffload_bundle_parse`: keep the entries in front of the first
/// bad descriptor instead of failing; the fault is then kept in the handle
/// (`clangoffload_bundle_fault`).
pub const CLANGOFFLOAD_PARSE_LENIENT: u32 = 1;
/// Flag for the compatibility functions: `hip*` and `openmp` kinds match.
pub const CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE: u32 = 1;

/// A parsed binary bundle. Borrows the buffer it was parsed from.
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

/// Parses a binary bundle from `len` bytes at `data` and stores a new handle
/// in `*out`. Every descriptor is checked unless `flags` has
/// `CLANGOFFLOAD_PARSE_LENIENT`. Payload bytes are not read.
///
/// Ownership: the handle is the caller's, released with
/// `clangoffload_bundle_free`. It borrows `data`, which must stay alive and
/// unchanged until then. On failure `*out` is untouched and, if `err` is not
/// NULL, `*err` says what is wrong and where.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_parse(
    data: *const u8,
    len: usize,
    flags: u32,
    out: *mut *mut clangoffload_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        if flags & !CLANGOFFLOAD_PARSE_LENIENT != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: the caller promises `len` readable bytes that outlive the handle.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises a writable pointer.
        let out = unsafe { out_arg(out) }?;
        let parsed = if flags & CLANGOFFLOAD_PARSE_LENIENT != 0 {
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

/// Releases a handle from `clangoffload_bundle_parse`. NULL is allowed.
///
/// # Safety
/// `bundle` is NULL or a handle from `clangoffload_bundle_parse` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_free(bundle: *mut clangoffload_bundle) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(bundle) }
}

/// Number of (good) entries; 0 for NULL.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_entry_count(
    bundle: *const clangoffload_bundle,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(bundle) }.map_or(0, |b| b.entries.len())
}

/// Size of the bundle header (magic, count, descriptors) for a strictly
/// parsed bundle, or 0 for a lenient one or NULL.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_header_len(bundle: *const clangoffload_bundle) -> u64 {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(bundle) }.map_or(0, |b| b.bundle.header_len().unwrap_or(0))
}

/// Stores entry `index` (file order) in `*out`. The views borrow the parsed
/// buffer. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last entry.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_get_entry(
    bundle: *const clangoffload_bundle,
    index: usize,
    out: *mut clangoffload_bundle_entry,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        let entry = bundle
            .entries
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_bundle_entry {
            id: clangoffload_bytes::of(entry.id()),
            payload: clangoffload_bytes::of(entry.payload()),
            offset: entry.offset(),
            descriptor_offset: entry.descriptor_offset(),
        };
        Ok(())
    })
}

/// For a leniently parsed bundle: the status of the first bad descriptor,
/// with details in `*err` (may be NULL); `CLANGOFFLOAD_STATUS_OK` if there
/// was none.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundle_fault(
    bundle: *const clangoffload_bundle,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let bundle = unsafe { handle_arg(bundle) }?;
        // SAFETY: NULL or writable, as the caller promises.
        unsafe { report_fault(bundle.fault.as_ref(), err) }
    })
}

/// Index of the first entry (file order) whose code object is compatible
/// with the bundle entry ID `target` (`target_len` bytes of UTF-8), by the
/// bundler's rules; `flags` may hold `CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE`.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` if none is.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
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
        let requested = BundleEntryId::parse(unsafe { str_arg(target, target_len) }?)?;
        let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
        let index = bundle
            .entries
            .iter()
            .position(|e| {
                e.id_str()
                    .and_then(|id| BundleEntryId::parse(id).ok())
                    .is_some_and(|id| id.is_compatible_with(&requested, hip_openmp))
            })
            .ok_or(clangoffload_status::NotFound)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out_index) }? = index;
        Ok(())
    })
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

/// The entry the HIP runtime would load on a device with AMDGPU target ID
/// `device` (e.g. `gfx90a:sramecc+:xnack-`): native, then generic, then
/// SPIR-V; first compatible in file order within each. Stores its index and
/// how it matched. `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing fits.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
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
        let device = TargetId::parse(unsafe { str_arg(device, device_len) }?)?;
        let (how, entry) =
            id::select_for_device(&bundle.bundle, &device).ok_or(clangoffload_status::NotFound)?;
        let index = bundle
            .entries
            .iter()
            .position(|e| e.index() == entry.index())
            .ok_or(clangoffload_status::NotFound)?;
        // SAFETY: writable, as the caller promises.
        let (out_index, out_match) = unsafe { (out_arg(out_index)?, out_arg(out_match)?) };
        *out_index = index;
        *out_match = match how {
            DeviceMatch::Native => clangoffload_device_match::Native,
            DeviceMatch::Generic => clangoffload_device_match::Generic,
            DeviceMatch::SpirV => clangoffload_device_match::Spirv,
        };
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
/// the header and trailing bytes. Stores up to `cap` findings in `out` (may be
/// NULL when `cap` is 0) and their total number in `*out_count`.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
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
            if out.is_null() || !out.is_aligned() {
                return Err(clangoffload_status::NullArgument);
            }
            // SAFETY: non-NULL, aligned, writable for cap records as promised.
            let slots = unsafe { std::slice::from_raw_parts_mut(out, cap) };
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
/// and the bundle's total size into `*total_size`. The caller then writes
/// each payload at its offset, zeros in the gaps. If the header does not fit,
/// returns `BUFFER_TOO_SMALL` with the needed length in `*header_len`.
///
/// # Safety
/// Every pointer is NULL (reported, not dereferenced) or valid for the length
/// given with it; handles are live; out-parameters are writable.
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
        // SAFETY: arrays of `count` readable records, as the caller promises.
        let (ids, sizes) = unsafe { (array_arg(ids, count)?, array_arg(sizes, count)?) };
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
        if count > 0 && (offsets.is_null() || !offsets.is_aligned()) {
            return Err(clangoffload_status::NullArgument);
        }
        // SAFETY: writable, as the caller promises.
        let total_size = unsafe { out_arg(total_size) }?;
        // SAFETY: header is writable for header_cap >= bytes.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), header, bytes.len()) };
        if count > 0 {
            // SAFETY: offsets is non-NULL, aligned and writable for count values.
            let slots = unsafe { std::slice::from_raw_parts_mut(offsets, count) };
            slots.copy_from_slice(layout.offsets());
        }
        *header_len = bytes.len();
        *total_size = layout.total_size();
        Ok(())
    })
}
