//! Coverage of a file (or each member of a wheel) for a list of devices
//! (`clangoffload::coverage`): the C side of `clangoffload coverage`.

use alloc::vec::Vec;

use clangoffload::bundler::Decoding;
use clangoffload::coverage::{cover, Covered};
use clangoffload::select::Device;

use crate::ffi::{
    array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg,
    str_arg,
};
use crate::status::clangoffload_status;

/// `clangoffload_cover` flag: decode every compressed bundle whole
/// through MD5 and report those whose hash does not verify.
pub const CLANGOFFLOAD_COVERAGE_VERIFY: u32 = 1;

/// What `clangoffload_cover` found: the files of device code, each with
/// a verdict per device, its targets and findings (texts owned here).
pub struct clangoffload_coverage {
    files: Vec<File>,
}

struct File {
    covered: Covered,
    /// Per device: the chosen IDs joined by ", ".
    entries: Vec<Vec<u8>>,
    findings: Vec<Vec<u8>>,
}

/// One file of device code.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_covered_file {
    /// Its name: the name given, or `<name>!<member>` inside a ZIP archive.
    pub name: clangoffload_bytes,
    /// Whether it could be read; if not, `error` says why and it has no
    /// verdicts, targets or findings.
    pub readable: bool,
    /// Why it could not be read (empty otherwise).
    pub error: clangoffload_bytes,
    /// How many devices its code targets.
    pub target_count: usize,
    /// How many findings it has.
    pub finding_count: usize,
}

/// A file's verdict for one device.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_coverage_cell {
    /// Whether the file holds code of the device's vendor at all.
    pub applies: bool,
    /// Whether every container of the device's vendor gives it code.
    pub loads: bool,
    /// The least direct way the chosen code runs (`CLANGOFFLOAD_SELECT_*`;
    /// 0 when nothing loads).
    pub how: u32,
    /// The chosen code's IDs, joined by ", " (empty when nothing loads).
    pub entries: clangoffload_bytes,
    /// Why: the first container giving nothing, or the choice's reason.
    pub reason: clangoffload_bytes,
}

/// A device a file's code is built for.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_coverage_target {
    /// An AMD target ID or `sm_XX`.
    pub target: clangoffload_bytes,
    /// The bytes of code for it.
    pub bytes: u64,
}

/// Covers the file in `len` bytes at `data`, named `name`, for the
/// `device_count` devices at `devices` (AMD target IDs or ISA names,
/// NVIDIA `sm_XX`): a ZIP archive (a wheel) member by member, decoded one
/// at a time; any other file as it is. Files without device code are left
/// out; one that cannot be read is kept with its error. Each compressed
/// bundle or member is decoded to at most `max_size` bytes (0: 1 GiB);
/// `CLANGOFFLOAD_COVERAGE_VERIFY` checks compressed bundles' hashes.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` for a device no rule knows.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_coverage_free`.
///
/// `done_with`, if set, is told (with `context`) of each ZIP member's
/// stored bytes once they are decoded, so that a caller reading a mapped
/// file may let those pages go.
///
/// Lifetime: the handle owns everything it holds; the inputs, `done_with`
/// and `context` are used during the call only.
///
/// NULL: `data`, `name` and `devices` may be NULL only when their lengths
/// are 0; `out` must not be NULL; `done_with` may be NULL.
///
/// # Safety
/// `data` and `name` are NULL or readable for their lengths; `devices`
/// readable for `device_count` views of readable bytes; `out` NULL or
/// writable; `done_with`, if set, callable with `context` during the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cover(
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    devices: *const clangoffload_bytes,
    device_count: usize,
    flags: u32,
    max_size: u64,
    done_with: crate::inspect::clangoffload_done_with_fn,
    context: *mut core::ffi::c_void,
    out: *mut *mut clangoffload_coverage,
) -> clangoffload_status {
    ffi_guard!({
        if flags & !CLANGOFFLOAD_COVERAGE_VERIFY != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: `data` is NULL or readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `name` is NULL or readable for `name_len` bytes, as the caller promises.
        let name = unsafe { str_arg(name, name_len) }?;
        // SAFETY: readable for `device_count` views, as the caller promises.
        let views = unsafe { array_arg(devices, device_count) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let mut texts = Vec::new();
        for view in views {
            // SAFETY: each view readable, as the caller promises.
            let text = unsafe { view.as_slice() }?;
            texts.push(core::str::from_utf8(text).map_err(|_| clangoffload_status::NotFound)?);
        }
        let mut parsed = Vec::new();
        for text in &texts {
            parsed.push(match Device::parse(text) {
                Err(clangoffload::IdError::UnknownProcessor) => Err(clangoffload_status::NotFound),
                other => Ok(other?),
            }?);
        }
        let decoding = Decoding {
            max_size: crate::compressed::limits(max_size).max_uncompressed_size,
            verify_hash: false,
            verbose: false,
        };
        let verify = flags & CLANGOFFLOAD_COVERAGE_VERIFY != 0;
        let tell = |part: &[u8]| {
            if let Some(done_with) = done_with {
                // SAFETY: callable with `context` during the call, as the
                // caller promises; the part is live during the call.
                unsafe { done_with(context, part.as_ptr(), part.len()) }
            }
        };
        let files = cover(data, name, &parsed, decoding, verify, &tell)
            .into_iter()
            .map(|covered| File {
                entries: covered
                    .verdicts
                    .iter()
                    .map(|v| v.entries.join(", ").into_bytes())
                    .collect(),
                findings: covered
                    .findings
                    .iter()
                    .map(|f| alloc::format!("{f}").into_bytes())
                    .collect(),
                covered,
            })
            .collect();
        *out = into_handle(clangoffload_coverage { files });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_cover`.
///
/// Ownership: the handle is released.
///
/// NULL: a NULL `coverage` does nothing.
///
/// # Safety
/// `coverage` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_free(coverage: *mut clangoffload_coverage) {
    // SAFETY: NULL or a handle from `clangoffload_cover` released once.
    unsafe { free_handle(coverage) }
}

/// How many files of device code the coverage holds.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `coverage` gives 0.
///
/// # Safety
/// `coverage` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_file_count(
    coverage: *const clangoffload_coverage,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(coverage, |h| &h.files) }
}

/// Stores file `index` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the handle.
///
/// NULL: `coverage` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_get_file(
    coverage: *const clangoffload_coverage,
    index: usize,
    out: *mut clangoffload_covered_file,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            coverage,
            |h| &h.files,
            index,
            out,
            |_, f| clangoffload_covered_file {
                name: clangoffload_bytes::of(f.covered.name.as_bytes()),
                readable: f.covered.error.is_none(),
                error: clangoffload_bytes::of(
                    f.covered.error.as_deref().unwrap_or_default().as_bytes(),
                ),
                target_count: f.covered.targets.len(),
                finding_count: f.findings.len(),
            },
        )
    }
}

/// The file of `index`, or the status saying why none.
///
/// # Safety
/// `coverage` is NULL or a live handle.
unsafe fn file<'a>(
    coverage: *const clangoffload_coverage,
    index: usize,
) -> Result<&'a File, clangoffload_status> {
    // SAFETY: NULL or a live handle, as the caller promises.
    let handle = unsafe { handle_arg(coverage) }?;
    handle
        .files
        .get(index)
        .ok_or(clangoffload_status::IndexOutOfRange)
}

/// Stores file `file`'s verdict for device `device` (its place in the list
/// given) in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last
/// file or device (an unreadable file has none).
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the handle.
///
/// NULL: `coverage` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_get_cell(
    coverage: *const clangoffload_coverage,
    file: usize,
    device: usize,
    out: *mut clangoffload_coverage_cell,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let found = unsafe { self::file(coverage, file) }?;
        let verdict = found
            .covered
            .verdicts
            .get(device)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = clangoffload_coverage_cell {
            applies: verdict.applies,
            loads: verdict.loads,
            how: verdict.how.map_or(0, crate::select::how_of),
            entries: clangoffload_bytes::of(
                found.entries.get(device).map_or(&[][..], Vec::as_slice),
            ),
            reason: clangoffload_bytes::of(verdict.reason.as_bytes()),
        };
        Ok(())
    })
}

/// Stores target `index` of file `file` (a device its code is built for:
/// an AMD target ID, an `sm_XX`, with its bytes of code) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the handle.
///
/// NULL: `coverage` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_get_target(
    coverage: *const clangoffload_coverage,
    file: usize,
    index: usize,
    out: *mut clangoffload_coverage_target,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let found = unsafe { self::file(coverage, file) }?;
        let target = found
            .covered
            .targets
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_coverage_target {
            target: clangoffload_bytes::of(target.0.as_bytes()),
            bytes: target.1,
        };
        Ok(())
    })
}

/// Stores finding `index` of file `file`, a sentence, in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the handle.
///
/// NULL: `coverage` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_get_finding(
    coverage: *const clangoffload_coverage,
    file: usize,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let found = unsafe { self::file(coverage, file) }?;
        let text = found
            .findings
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_bytes::of(text);
        Ok(())
    })
}

/// Stores the name of current GPU `index` (an AMD target ID as HSA reports
/// it, or `sm_XX`), of those `clangoffload coverage` asks about by default,
/// in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; the view is of static storage.
///
/// Lifetime: the view lives as long as the library is loaded.
///
/// NULL: `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_current_gpu(
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        let name = clangoffload::coverage::CURRENT_GPUS
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_bytes::of(name.as_bytes());
        Ok(())
    })
}
