//! Coverage of a file (or each member of a wheel) for a list of devices
//! (`clangoffload::coverage`): the C side of `clangoffload coverage`.

use alloc::vec::Vec;

use clangoffload::bundler::Decoding;
use clangoffload::coverage::{Covered, Tree};

use crate::ffi::{
    array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg,
    str_arg,
};
use crate::status::clangoffload_status;

/// `clangoffload_cover` and `clangoffload_coverage_new` flag: decode
/// every compressed bundle whole through MD5 and report those whose hash
/// does not verify.
pub const CLANGOFFLOAD_COVERAGE_VERIFY: u32 = 1;

/// `clangoffload_coverage_new` flag: no devices are given; ask about the
/// current GPUs (`clangoffload_coverage_current_gpu`) and every device
/// some file's code targets, the list growing as inputs are added.
pub const CLANGOFFLOAD_COVERAGE_CURRENT_GPUS: u32 = 2;

/// What coverage found: the files of device code, each with a verdict per
/// device, its targets and findings (texts owned here), and the devices.
pub struct clangoffload_coverage {
    tree: Tree,
    /// Per file, in the tree's order.
    texts: Vec<Texts>,
}

/// The texts a file's views show.
struct Texts {
    /// Per device: the chosen IDs joined by ", ".
    entries: Vec<Vec<u8>>,
    findings: Vec<Vec<u8>>,
}

impl clangoffload_coverage {
    /// Makes the texts of the files added since the last call, and, when
    /// verdicts of files added before may have changed (`pending`,
    /// `add_again`: `all`), every file's chosen IDs anew; a file's findings
    /// never change, and `add` changes no earlier file.
    fn refresh(&mut self, all: bool) {
        let first = if all { 0 } else { self.texts.len() };
        for index in self.texts.len()..self.tree.file_count() {
            let Some((_, covered)) = self.tree.file(index) else {
                break;
            };
            self.texts.push(Texts {
                entries: Vec::new(),
                findings: covered
                    .findings
                    .iter()
                    .map(|f| alloc::format!("{f}").into_bytes())
                    .collect(),
            });
        }
        for (index, texts) in self.texts.iter_mut().enumerate().skip(first) {
            let Some((_, covered)) = self.tree.file(index) else {
                break;
            };
            texts.entries.clear();
            texts.entries.extend(
                covered
                    .verdicts
                    .iter()
                    .map(|v| v.entries.join(", ").into_bytes()),
            );
        }
    }

    /// Covers one input, as `clangoffload_coverage_add` or (`again`)
    /// `clangoffload_coverage_add_again` says; its number.
    fn add(&mut self, again: Option<usize>, input: &Input<'_>) -> usize {
        let tell = |part: &[u8]| {
            if let Some(done_with) = input.done_with {
                // SAFETY: callable with `context` during the call, as the
                // caller promises; the part is live during the call.
                unsafe { done_with(input.context, part.as_ptr(), part.len()) }
            }
        };
        let number = match again {
            Some(number) => {
                self.tree.add_again(number, input.data, input.name, &tell);
                number
            }
            None => self.tree.add(input.data, input.name, &tell),
        };
        self.refresh(again.is_some());
        number
    }
}

/// One input's arguments, checked.
struct Input<'a> {
    data: &'a [u8],
    name: &'a str,
    done_with: crate::inspect::clangoffload_done_with_fn,
    context: *mut core::ffi::c_void,
}

/// A new coverage for the devices at `devices`, or (`CURRENT_GPUS`) the
/// growing default list.
///
/// # Safety
/// `devices` is NULL or readable for `device_count` views of readable
/// bytes.
unsafe fn new_coverage(
    devices: *const clangoffload_bytes,
    device_count: usize,
    flags: u32,
    max_size: u64,
) -> Result<clangoffload_coverage, clangoffload_status> {
    if flags & !(CLANGOFFLOAD_COVERAGE_VERIFY | CLANGOFFLOAD_COVERAGE_CURRENT_GPUS) != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: readable for `device_count` views, as the caller promises.
    let views = unsafe { array_arg(devices, device_count) }?;
    let default = flags & CLANGOFFLOAD_COVERAGE_CURRENT_GPUS != 0;
    if default && !views.is_empty() {
        return Err(clangoffload_status::InvalidArgument);
    }
    let mut names = Vec::new();
    for view in views {
        // SAFETY: each view readable, as the caller promises.
        let text = unsafe { view.as_slice() }?;
        names.push(core::str::from_utf8(text).map_err(|_| clangoffload_status::NotFound)?);
    }
    let decoding = Decoding {
        max_size: crate::compressed::limits(max_size).max_uncompressed_size,
        verify_hash: false,
        verbose: false,
    };
    let verify = flags & CLANGOFFLOAD_COVERAGE_VERIFY != 0;
    let tree =
        Tree::new((!default).then_some(&names[..]), decoding, verify).map_err(|(_, error)| {
            match error {
                clangoffload::IdError::UnknownProcessor => clangoffload_status::NotFound,
                other => other.into(),
            }
        })?;
    Ok(clangoffload_coverage {
        tree,
        texts: Vec::new(),
    })
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
        if flags & CLANGOFFLOAD_COVERAGE_CURRENT_GPUS != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: as the caller promises.
        let mut coverage = unsafe { new_coverage(devices, device_count, flags, max_size) }?;
        // SAFETY: as the caller promises.
        let input = unsafe { input_args(data, len, name, name_len, done_with, context) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        coverage.add(None, &input);
        *out = into_handle(coverage);
        Ok(())
    })
}

/// Checks one input's arguments.
///
/// # Safety
/// `data` and `name` are NULL or readable for their lengths.
unsafe fn input_args<'a>(
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    done_with: crate::inspect::clangoffload_done_with_fn,
    context: *mut core::ffi::c_void,
) -> Result<Input<'a>, clangoffload_status> {
    Ok(Input {
        // SAFETY: NULL or readable for `len` bytes, as the caller promises.
        data: unsafe { slice_arg(data, len) }?,
        // SAFETY: NULL or readable for `name_len` bytes, as the caller promises.
        name: unsafe { str_arg(name, name_len) }?,
        done_with,
        context,
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

/// A coverage of many inputs for one list of devices: those at `devices`,
/// or, with `CLANGOFFLOAD_COVERAGE_CURRENT_GPUS` (then `device_count` is
/// 0), the current GPUs and every device some file's code targets, the
/// list growing as inputs are added. Add each input with
/// `clangoffload_coverage_add`; then, while `clangoffload_coverage_pending`
/// names one, give it again with `clangoffload_coverage_add_again` (a file
/// read before a later one brought a device of its vendor is read again,
/// only the members that need it). The devices are
/// `clangoffload_coverage_get_device`'s, the verdicts complete once no
/// input is pending. `max_size` and the flags as for `clangoffload_cover`.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` for a device no rule knows,
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT` for an unknown flag or devices
/// given with `CLANGOFFLOAD_COVERAGE_CURRENT_GPUS`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_coverage_free`.
///
/// Lifetime: the handle owns everything it holds; `devices` is used
/// during the call only.
///
/// NULL: `devices` may be NULL only when `device_count` is 0; `out` must
/// not be NULL.
///
/// # Safety
/// `devices` is NULL or readable for `device_count` views of readable
/// bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_new(
    devices: *const clangoffload_bytes,
    device_count: usize,
    flags: u32,
    max_size: u64,
    out: *mut *mut clangoffload_coverage,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let coverage = unsafe { new_coverage(devices, device_count, flags, max_size) }?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = into_handle(coverage);
        Ok(())
    })
}

/// Covers the input in `len` bytes at `data`, named `name` (a file, or a
/// ZIP archive member by member, as `clangoffload_cover` says), for every
/// device of the coverage's list, and stores its number (0 for the first
/// input added, and so on) in `*out_input` if that is not NULL.
///
/// Ownership: the handle keeps what it found; nothing to free.
///
/// Lifetime: views taken from the handle before the call are no longer
/// valid; the inputs, `done_with` and `context` are used during the call
/// only.
///
/// NULL: `data` and `name` may be NULL only when their lengths are 0;
/// `coverage` must not be NULL.
///
/// # Safety
/// `coverage` is NULL or a live handle; `data` and `name` NULL or readable
/// for their lengths; `out_input` NULL or writable; `done_with`, if set,
/// callable with `context` during the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_add(
    coverage: *mut clangoffload_coverage,
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    done_with: crate::inspect::clangoffload_done_with_fn,
    context: *mut core::ffi::c_void,
    out_input: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or live and not shared during the call, as promised.
        let coverage = unsafe { coverage.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        // SAFETY: as the caller promises.
        let input = unsafe { input_args(data, len, name, name_len, done_with, context) }?;
        let out = match out_input.is_null() {
            true => None,
            // SAFETY: writable, as the caller promises.
            false => Some(unsafe { out_arg(out_input) }?),
        };
        let number = coverage.add(None, &input);
        if let Some(out) = out {
            *out = number;
        }
        Ok(())
    })
}

/// Stores in `*out_input` the number of the first input to give again
/// with `clangoffload_coverage_add_again`: a device joined the list after
/// it was read, of a vendor whose code it holds. Verdicts that need no
/// reading are settled here. `CLANGOFFLOAD_STATUS_NOT_FOUND` when none is
/// pending: every verdict is known.
///
/// Ownership: nothing to free.
///
/// Lifetime: views taken from the handle before the call are no longer
/// valid.
///
/// NULL: `coverage` or `out_input` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out_input` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_pending(
    coverage: *mut clangoffload_coverage,
    out_input: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or live and not shared during the call, as promised.
        let coverage = unsafe { coverage.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out_input) }?;
        let pending = coverage.tree.pending();
        coverage.refresh(true);
        *out = pending.ok_or(clangoffload_status::NotFound)?;
        Ok(())
    })
}

/// Covers the host ROCm's kpack split in `len` bytes at `data`, named
/// `name`, for every device of the coverage's list, as one more input: a
/// device gets code when each of its `HIPK` records resolves for it as the
/// HIP runtime resolves it (an NVIDIA device gets nothing). The archives
/// are looked for from `host_dir` (the host's real directory, symlinks
/// resolved) as the markers and `environment` (NULL: no `ROCM_KPACK_*`
/// set) say, each path once through `open`; `CLANGOFFLOAD_KPACK_FIRST_CANDIDATE`
/// in `flags` takes rocm-kpack's shipped loader's rule. Stores the input's
/// number in `*out_input` if that is not NULL. Its code targets no device
/// of its own: add it once every other input is added and none is pending.
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` when the data is no split host (nothing
/// is added).
///
/// Ownership: the handle keeps what it found; nothing to free.
///
/// Lifetime: views taken from the handle before the call are no longer
/// valid; the inputs, `environment`, `open`'s bytes and `context` are used
/// during the call only.
///
/// NULL: `data`, `name` and `host_dir` may be NULL only when their
/// lengths are 0; `coverage` and `open` must not be NULL.
///
/// # Safety
/// `coverage` is NULL or a live handle; `data`, `name` and `host_dir` NULL
/// or readable for their lengths; `environment` NULL or readable, its views
/// readable where set; `out_input` NULL or writable; `open` callable with
/// `context` during the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_add_split_host(
    coverage: *mut clangoffload_coverage,
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    host_dir: clangoffload_bytes,
    environment: *const crate::kpack::clangoffload_kpack_environment,
    flags: u32,
    open: crate::kpack::clangoffload_kpack_open_fn,
    context: *mut core::ffi::c_void,
    out_input: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        let loader = crate::kpack::loader(flags)?;
        // SAFETY: NULL or live and not shared during the call, as promised.
        let coverage = unsafe { coverage.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        // SAFETY: as the caller promises.
        let input = unsafe { input_args(data, len, name, name_len, None, core::ptr::null_mut()) }?;
        // SAFETY: readable, as the caller promises.
        let dir = unsafe { host_dir.as_slice() }?;
        // SAFETY: NULL or readable, as the caller promises.
        let environment = unsafe { crate::kpack::environment_arg(environment) }?;
        // SAFETY: `open` callable with `context` during the call, as the
        // caller promises.
        let mut reader = unsafe { crate::kpack::archive_reader(open, context) }?;
        let out = match out_input.is_null() {
            true => None,
            // SAFETY: writable, as the caller promises.
            false => Some(unsafe { out_arg(out_input) }?),
        };
        let lookup = clangoffload::select::Lookup {
            environment: &environment,
            dir,
            loader,
            open: &mut reader,
        };
        let number = coverage
            .tree
            .add_split_host(input.data, input.name, lookup)
            .ok_or(clangoffload_status::NotFound)?;
        coverage.refresh(false);
        if let Some(out) = out {
            *out = number;
        }
        Ok(())
    })
}

/// Gives input `input` again (the bytes and name first added; empty
/// bytes if it can no longer be read) for the verdicts
/// `clangoffload_coverage_pending` says it lacks; only the members that
/// lack some are decoded. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` for an
/// input never added.
///
/// Ownership: the handle keeps what it found; nothing to free.
///
/// Lifetime: views taken from the handle before the call are no longer
/// valid; the inputs, `done_with` and `context` are used during the call
/// only.
///
/// NULL: `data` and `name` may be NULL only when their lengths are 0;
/// `coverage` must not be NULL.
///
/// # Safety
/// `coverage` is NULL or a live handle; `data` and `name` NULL or readable
/// for their lengths; `done_with`, if set, callable with `context` during
/// the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_add_again(
    coverage: *mut clangoffload_coverage,
    input: usize,
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    done_with: crate::inspect::clangoffload_done_with_fn,
    context: *mut core::ffi::c_void,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or live and not shared during the call, as promised.
        let coverage = unsafe { coverage.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        if input >= coverage.tree.inputs() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        // SAFETY: as the caller promises.
        let args = unsafe { input_args(data, len, name, name_len, done_with, context) }?;
        coverage.add(Some(input), &args);
        Ok(())
    })
}

/// How many devices the coverage asks about (the list grows as inputs are
/// added when it was made with `CLANGOFFLOAD_COVERAGE_CURRENT_GPUS`).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `coverage` gives 0.
///
/// # Safety
/// `coverage` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_device_count(
    coverage: *const clangoffload_coverage,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(coverage, |h| h.tree.devices()) }
}

/// Stores the name of device `index` (as given, or as its files' code
/// names it) in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the
/// last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the handle until its next change.
///
/// NULL: `coverage` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `coverage` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_coverage_get_device(
    coverage: *const clangoffload_coverage,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            coverage,
            |h| h.tree.devices(),
            index,
            out,
            |_, d| clangoffload_bytes::of(d.as_bytes()),
        )
    }
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
    unsafe { crate::handle::count(coverage, |h| &h.texts) }
}

/// Stores file `index` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the handle until its next change.
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
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (covered, texts) = unsafe { self::file(coverage, index) }?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_covered_file {
            name: clangoffload_bytes::of(covered.name.as_bytes()),
            readable: covered.error.is_none(),
            error: clangoffload_bytes::of(covered.error.as_deref().unwrap_or_default().as_bytes()),
            target_count: covered.targets.len(),
            finding_count: texts.findings.len(),
        };
        Ok(())
    })
}

/// The file of `index` and its texts, or the status saying why none.
///
/// # Safety
/// `coverage` is NULL or a live handle.
unsafe fn file<'a>(
    coverage: *const clangoffload_coverage,
    index: usize,
) -> Result<(&'a Covered, &'a Texts), clangoffload_status> {
    // SAFETY: NULL or a live handle, as the caller promises.
    let handle = unsafe { handle_arg(coverage) }?;
    let covered = handle.tree.file(index).map(|(_, c)| c);
    covered
        .zip(handle.texts.get(index))
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
        let (covered, texts) = unsafe { self::file(coverage, file) }?;
        let verdict = covered
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
                texts.entries.get(device).map_or(&[][..], Vec::as_slice),
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
        let (covered, _) = unsafe { self::file(coverage, file) }?;
        let target = covered
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
        let (_, texts) = unsafe { self::file(coverage, file) }?;
        let text = texts
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
