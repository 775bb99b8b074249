//! An extraction a container at a time (`clangoffload_extraction`): every
//! output named up front, each container decoded and planned as a job on
//! demand, from any thread.

use alloc::string::String;
use core::ffi::c_void;

use clangoffload::bundler::BundlerError;
use clangoffload::extract::Extraction;

use super::job::clangoffload_job;
use super::notify::{clangoffload_notify_fn, Notifier};
use super::options::{clangoffload_bundler_options, fail, read_job, stem};
use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg};
use crate::handle::{self, ReadHandle};
use crate::status::{clangoffload_error, clangoffload_status};

/// Every container of one input, found and named, each decoded and planned
/// on demand by `clangoffload_extraction_plan`: extraction that holds one
/// container at a time (or one per thread).
pub struct clangoffload_extraction {
    pub(super) extraction: Extraction<'static>,
    /// For the failure's message and the jobs' notes.
    pub(super) input_name: String,
    /// The options' flags (`_VERBOSE`), for the jobs' notes.
    pub(super) flags: u32,
}

impl ReadHandle for clangoffload_extraction {
    fn failures(&self) -> &[BundlerError] {
        self.extraction.failures()
    }

    fn set_input_name(&mut self, name: String) {
        self.input_name = name;
    }
}

/// A container of an extraction: where it is and which outputs it gives.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct clangoffload_extraction_container {
    /// Its offset in the input.
    pub offset: u64,
    /// How many bytes of the input it takes (a caller that mapped the input
    /// may release them once the container is written).
    pub size: u64,
    /// The index of its first output (outputs are numbered across the whole
    /// input).
    pub first_output: usize,
    /// How many outputs it gives.
    pub output_count: usize,
}

/// Finds every container `clangoffload_bundler_extract` extracts from the
/// `len` bytes at `data` and names every output the same way, decoding a
/// compressed bundle only as far as its entry table; nothing is decoded
/// whole. Then `clangoffload_extraction_plan` decodes one container and
/// plans its outputs: a caller holds one container at a time, or one per
/// thread. Damage that leaves other containers readable is reported, each
/// piece of it (one `CLANGOFFLOAD_NOTE_FAILURE` each to `options->notify`
/// now, in file order): write what can be read, then report them. Only `options->flags`'
/// `_SKIP_HASH_CHECK` and `_VERBOSE` apply (to the plans).
///
/// Ownership: on success `*out` is a new extraction owned by the caller,
/// released with `clangoffload_extraction_free`. On failure `*out` is
/// untouched, `*err` (if not NULL) says what is wrong and where, and
/// `options->notify` gets the whole message.
///
/// Lifetime: the extraction, and every job planned from it, borrows the
/// `len` bytes at `data`: keep them alive and unchanged until those are
/// freed. `options` is read during the call only.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_extraction(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_extraction,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let extraction = Extraction::new(data, stem(read.name), read.decoding, notifier)?;
            Ok(clangoffload_extraction {
                extraction,
                input_name: String::new(),
                flags: read.flags,
            })
        })
    }
}

/// Sets the bytes `clangoffload_extraction_stream` may hold at once for
/// decoding compressed bundles, across every thread that streams
/// `extraction`: each bundle is admitted by its declared decoded size (its
/// buffer: that and an eighth), and one that does not fit waits for others
/// to end; one larger than the whole budget is decoded alone. 0 sets the
/// default: 256 MiB, or the largest single bundle's buffer when that is
/// more (what `clangoffload_bundler_extraction` sets). Call it before
/// streaming, not while a stream runs.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `extraction` must be NULL or a live extraction that no other thread uses
/// during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_set_memory_budget(
    extraction: *mut clangoffload_extraction,
    bytes: u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or live and not shared during the call, as promised.
        let extraction = unsafe { extraction.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        extraction
            .extraction
            .set_memory_budget((bytes != 0).then_some(bytes));
        Ok(())
    })
}

/// The bytes `clangoffload_extraction_stream` may hold at once for decoding
/// (see `clangoffload_extraction_set_memory_budget`; 0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_memory_budget(
    extraction: *const clangoffload_extraction,
) -> u64 {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { extraction.as_ref() }.map_or(0, |e| e.extraction.memory_budget())
}

/// How many containers an extraction found (0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_container_count(
    extraction: *const clangoffload_extraction,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { handle::count_with(extraction, |e| e.extraction.container_count()) }
}

/// How many outputs all of an extraction's containers give (0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_output_count(
    extraction: *const clangoffload_extraction,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { handle::count_with(extraction, |e| e.extraction.output_count()) }
}

/// Stores in `*out` where container `index` is and which outputs it gives.
///
/// Ownership: the record is copied into `*out`; nothing to free.
///
/// NULL: `extraction` and `out` must not be NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_get_container(
    extraction: *const clangoffload_extraction,
    index: usize,
    out: *mut clangoffload_extraction_container,
) -> clangoffload_status {
    // SAFETY: live and writable, as the caller promises.
    unsafe {
        handle::record(extraction, out, |e| {
            let container = e.extraction.container(index)?;
            Some(clangoffload_extraction_container {
                offset: container.offset,
                size: container.size,
                first_output: container.outputs.start,
                output_count: container.outputs.len(),
            })
        })
    }
}

/// Stores in `*out` the name of output `output` (numbered across the whole
/// input): the name `clangoffload_bundler_extract` gives it, and the job
/// `clangoffload_extraction_plan` makes gives it again.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the extraction, until
/// `clangoffload_extraction_free`.
///
/// NULL: `extraction` and `out` must not be NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_output_name(
    extraction: *const clangoffload_extraction,
    output: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: live and writable, as the caller promises.
    unsafe {
        handle::record(extraction, out, |e| {
            (output < e.extraction.output_count())
                .then(|| clangoffload_bytes::of(e.extraction.output_name(output)))
        })
    }
}

/// Decodes container `index` of an extraction (a compressed bundle whole,
/// its hash checked unless the extraction's options had
/// `_SKIP_HASH_CHECK`) and plans its outputs as a job: output `i` of the job
/// is output `first_output + i` of the input, with the same name. The job
/// holds that container's decoded bytes and nothing else; free it once its
/// outputs are written, and a caller holds one container at a time.
/// Warnings and `-verbose` reports for this container go to `notify`.
///
/// Threads: calls for one extraction may run at once on several threads
/// (the extraction is only read), each with its own `notify` and `context`:
/// decode containers in parallel, write them in order.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `notify` gets the whole
/// message: none of this container's outputs can be written, and the others
/// are not affected.
///
/// Lifetime: the job borrows the extraction's input (not the extraction).
///
/// NULL: `extraction` and `out` must not be NULL; `notify` and `err` may be
/// NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable; `err` NULL or
/// writable; `notify`, if set, callable with `context` during the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_plan(
    extraction: *const clangoffload_extraction,
    index: usize,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if index >= extraction.extraction.container_count() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        let name = extraction.input_name.clone();
        let mut notifier = Notifier::new(notify, context, name, extraction.flags);
        let plan = extraction
            .extraction
            .plan(index, &mut notifier)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        *out = into_handle(clangoffload_job::from_plan(plan, notifier.input_name));
        Ok(())
    })
}

/// Releases an extraction. NULL is accepted and ignored. Jobs planned from
/// it stay valid.
///
/// Ownership: takes the extraction back; it must not be used again.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction not yet freed, with no
/// call on it running.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_free(extraction: *mut clangoffload_extraction) {
    // SAFETY: NULL or a live extraction, as the caller promises.
    unsafe { free_handle(extraction) }
}
