//! What each container of a file gives a device, by its runtime's rule,
//! and why (`clangoffload::select`): the C side of `clangoffload select`.

use alloc::boxed::Box;
use alloc::vec::Vec;

use clangoffload::bundler::{BundlerError, Decoding};
use clangoffload::select::{self, Device, Outcome, Selection};
use clangoffload::FileKind;

use crate::compressed::clangoffload_container_kind;
use crate::ffi::{
    clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg, str_arg,
};
use crate::object_bundle::clangoffload_buffer;
use crate::status::{clangoffload_error, clangoffload_status, report, status_of};

/// `clangoffload_selected::how`: AMD code for the device's own processor.
pub const CLANGOFFLOAD_SELECT_NATIVE: u32 = 1;
/// `clangoffload_selected::how`: AMD code for its generic family.
pub const CLANGOFFLOAD_SELECT_GENERIC: u32 = 2;
/// `clangoffload_selected::how`: SPIR-V, compiled when loaded.
pub const CLANGOFFLOAD_SELECT_SPIRV: u32 = 3;
/// `clangoffload_selected::how`: an NVIDIA cubin.
pub const CLANGOFFLOAD_SELECT_CUBIN: u32 = 4;
/// `clangoffload_selected::how`: NVIDIA PTX, JIT-compiled.
pub const CLANGOFFLOAD_SELECT_PTX: u32 = 5;

/// What `clangoffload_select` found, read by index; owns its texts and
/// borrows the input.
pub struct clangoffload_selection {
    selection: Selection<'static>,
    /// Per container: the reason, or the error's message.
    texts: Vec<Box<[u8]>>,
    /// Per failure: its message.
    failures: Vec<Box<[u8]>>,
}

/// One container and what it gives the device. Views borrow the handle,
/// or (`id`) the input.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_selected {
    /// What the container is.
    pub kind: clangoffload_container_kind,
    /// Its kind's name (`bundle`, `compressed bundle`, `OffloadBinary`,
    /// `CUDA fat binary`; static storage).
    pub kind_name: clangoffload_bytes,
    /// Its offset in the file.
    pub offset: u64,
    /// Whether the device loads code from it.
    pub loads: bool,
    /// How (`CLANGOFFLOAD_SELECT_*`); 0 when nothing loads.
    pub how: u32,
    /// The code's ID: the bundle entry ID, an OffloadBinary image's target
    /// ID, or a fat binary entry's `sm_XX` / `compute_XX` (empty if none).
    pub id: clangoffload_bytes,
    /// The name `clangoffload extract` gives that code's file (empty if
    /// none).
    pub output_name: clangoffload_bytes,
    /// Why this code, why none, or (`error_status` not OK) the error.
    pub reason: clangoffload_bytes,
    /// `CLANGOFFLOAD_STATUS_OK` unless the container could not be read.
    pub error_status: u32,
}

/// Finds every container of the file in `len` bytes at `data` (named
/// `name`, whose last component, made safe, starts the output names) and
/// what each gives the device `device`: an AMD target ID or HSA ISA name
/// (`gfx90a:xnack+`), by the HIP runtime's rule, or an NVIDIA SM (`sm_89`),
/// by the CUDA driver's. A container for the other vendor gives nothing.
/// Compressed bundles are decoded only as far as their entry tables, each
/// to at most `max_size` bytes (0: 1 GiB). `CLANGOFFLOAD_STATUS_NOT_FOUND`
/// for a device no rule knows; the file's error when it holds no
/// container at all.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_selection_free`; on failure `*out` is
/// untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data`; keep them alive
/// and unchanged until it is freed. `name` and `device` are read during the
/// call only.
///
/// NULL: `data`, `name` and `device` may be NULL only when their lengths
/// are 0; `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `data`, `name` and `device` are NULL or readable for their lengths;
/// `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_select(
    data: *const u8,
    len: usize,
    name: *const core::ffi::c_char,
    name_len: usize,
    device: *const core::ffi::c_char,
    device_len: usize,
    max_size: u64,
    out: *mut *mut clangoffload_selection,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes that outlive the
        // handle.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: `name` is NULL or readable for `name_len` bytes, as the caller promises.
        let name = unsafe { str_arg(name, name_len) }?;
        // SAFETY: `device` is NULL or readable for `device_len` bytes, as the caller promises.
        let device = unsafe { str_arg(device, device_len) }?;
        // SAFETY: the caller promises a writable pointer.
        let out = unsafe { out_arg(out) }?;
        let device = match Device::parse(device) {
            Err(clangoffload::IdError::UnknownProcessor) => Err(clangoffload_status::NotFound),
            other => Ok(other?),
        }?;
        let stem = name.rsplit('/').next().unwrap_or(name);
        let decoding = Decoding {
            max_size: crate::compressed::limits(max_size).max_uncompressed_size,
            verify_hash: false,
            verbose: false,
        };
        let selection = select::select(data, stem.as_bytes(), &device, decoding, &mut ())
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { crate::status::report_bundler(&e, name, err) })?;
        let message = |e: &BundlerError| alloc::format!("{}", e.message(name)).into_bytes();
        let texts = selection
            .containers
            .iter()
            .map(|c| match &c.outcome {
                Outcome::Loads(chosen) => chosen.reason.as_bytes().into(),
                Outcome::Nothing(why) => why.as_bytes().into(),
                Outcome::Failed(e) => message(e).into(),
            })
            .collect();
        let failures = selection
            .failures
            .iter()
            .map(|e| message(e).into())
            .collect();
        *out = into_handle(clangoffload_selection {
            selection,
            texts,
            failures,
        });
        Ok(())
    })
}

/// Releases a handle from `clangoffload_select`.
///
/// Ownership: the handle is released; the input stays the caller's.
///
/// NULL: a NULL `selection` does nothing.
///
/// # Safety
/// `selection` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_free(selection: *mut clangoffload_selection) {
    // SAFETY: NULL or a handle from `clangoffload_select` released once, as
    // the caller promises.
    unsafe { free_handle(selection) }
}

/// How many containers the selection holds.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `selection` gives 0.
///
/// # Safety
/// `selection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_count(
    selection: *const clangoffload_selection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(selection, |h| &h.selection.containers) }
}

/// Stores container `index` and what it gives the device in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the handle.
///
/// NULL: `selection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `selection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_get(
    selection: *const clangoffload_selection,
    index: usize,
    out: *mut clangoffload_selected,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(selection) }?;
        let container = handle
            .selection
            .containers
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let text = handle.texts.get(index).map_or(&[][..], |t| &t[..]);
        let empty = clangoffload_bytes::of(&[]);
        let (loads, how, id, output_name, error_status) = match &container.outcome {
            Outcome::Loads(chosen) => (
                true,
                how_of(chosen.how),
                clangoffload_bytes::of(&chosen.id),
                clangoffload_bytes::of(&chosen.output_name),
                0,
            ),
            Outcome::Nothing(_) => (false, 0, empty, empty, 0),
            Outcome::Failed(e) => (false, 0, empty, empty, status_of(e).code()),
        };
        *out = clangoffload_selected {
            kind: kind_of(container.kind),
            kind_name: clangoffload_bytes::of(
                container
                    .kind
                    .container_name()
                    .unwrap_or_default()
                    .as_bytes(),
            ),
            offset: container.offset,
            loads,
            how,
            id,
            output_name,
            reason: clangoffload_bytes::of(text),
            error_status,
        };
        Ok(())
    })
}

/// Reads the code container `index` gives the device into a new buffer:
/// stored code copied, a compressed bundle's entry decoded only as far as
/// it reaches (its hash then unchecked, as the runtimes leave it) unless
/// `flags` is 0, which decodes and checks the whole bundle
/// (`CLANGOFFLOAD_SKIP_HASH_CHECK` skips it); each decoding limited to
/// `max_size` bytes (0: 1 GiB). `CLANGOFFLOAD_STATUS_NOT_FOUND` if the
/// container gives the device nothing.
///
/// Ownership: on success `*out` is a buffer owned by the caller, released
/// with `clangoffload_buffer_free`; on failure it is untouched.
///
/// Lifetime: the buffer is the caller's until freed, independent of the
/// handle and the input.
///
/// NULL: `selection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL.
///
/// # Safety
/// `selection` is NULL or a live handle; `out` and `err` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_read(
    selection: *const clangoffload_selection,
    index: usize,
    flags: u32,
    max_size: u64,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    use crate::compressed::CLANGOFFLOAD_SKIP_HASH_CHECK;
    ffi_guard!({
        if flags & !CLANGOFFLOAD_SKIP_HASH_CHECK != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(selection) }?;
        let container = handle
            .selection
            .containers
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let Outcome::Loads(chosen) = &container.outcome else {
            return Err(clangoffload_status::NotFound);
        };
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let options = clangoffload::DecompressOptions {
            limits: crate::compressed::limits(max_size),
            verify_hash: flags & CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
            ..clangoffload::DecompressOptions::default()
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let code = chosen
            .code(&options)
            .map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(code.into_owned());
        Ok(())
    })
}

/// How many pieces of damage the selection found between containers (none
/// of them a container it could name).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `selection` gives 0.
///
/// # Safety
/// `selection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_failure_count(
    selection: *const clangoffload_selection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(selection, |h| &h.failures) }
}

/// Stores failure `index`'s message in `*out` (a view borrowing the
/// handle). `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the handle.
///
/// NULL: `selection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `selection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_selection_get_failure(
    selection: *const clangoffload_selection,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            selection,
            |h| &h.failures,
            index,
            out,
            |_, text| clangoffload_bytes::of(text),
        )
    }
}

/// Every way chosen code runs, with its number.
const HOWS: [(select::How, u32); 5] = [
    (select::How::Native, CLANGOFFLOAD_SELECT_NATIVE),
    (select::How::Generic, CLANGOFFLOAD_SELECT_GENERIC),
    (select::How::SpirV, CLANGOFFLOAD_SELECT_SPIRV),
    (select::How::Cubin, CLANGOFFLOAD_SELECT_CUBIN),
    (select::How::Ptx, CLANGOFFLOAD_SELECT_PTX),
];

pub(crate) fn how_of(how: select::How) -> u32 {
    HOWS.iter().find(|(h, _)| *h == how).map_or(0, |(_, n)| *n)
}

/// The name of a `CLANGOFFLOAD_SELECT_*` number (`native`, `generic`,
/// `spirv`, `cubin`, `ptx`), as `clangoffload select` prints it; empty for
/// any other number.
///
/// Ownership: returns a view of static storage; never free it.
///
/// NULL: never NULL with a non-zero length. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_select_how_name(how: u32) -> clangoffload_bytes {
    let name = HOWS
        .iter()
        .find(|(_, n)| *n == how)
        .map_or("", |(h, _)| h.name());
    clangoffload_bytes::of(name.as_bytes())
}

fn kind_of(kind: FileKind) -> clangoffload_container_kind {
    match kind {
        FileKind::CompressedBundle => clangoffload_container_kind::Compressed,
        FileKind::OffloadBinary => clangoffload_container_kind::OffloadBinary,
        FileKind::CudaFatbin => clangoffload_container_kind::CudaFatbin,
        _ => clangoffload_container_kind::Bundle,
    }
}
