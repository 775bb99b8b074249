//! A job's result (`clangoffload_job`): outputs made of pieces, or listed
//! IDs, and the failure to report once the outputs are written; read by
//! index, released with `clangoffload_job_free`.

use alloc::string::String;
use core::ffi::c_char;

use clangoffload::bundler::{BundlerError, Listed, Piece, Plan};

use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, out_arg, write_display};
use crate::handle::{self, ReadHandle};
use crate::status::{clangoffload_error, clangoffload_status, report_bundler};

/// A job's result: outputs made of pieces, or listed IDs, and the error to
/// report once the outputs are written.
pub struct clangoffload_job {
    pub(super) plan: Plan<'static>,
    pub(super) listed: Listed<'static>,
    /// For the failure's message.
    pub(super) input_name: String,
}

impl ReadHandle for clangoffload_job {
    fn failures(&self) -> &[BundlerError] {
        self.plan.failure().map_or(&[], core::slice::from_ref)
    }

    fn set_input_name(&mut self, name: String) {
        self.input_name = name;
    }
}

impl clangoffload_job {
    /// A job of `plan`'s outputs (other modules' jobs: the packager's).
    pub(crate) fn from_plan(plan: Plan<'static>, input_name: String) -> Self {
        clangoffload_job {
            plan,
            listed: Listed::default(),
            input_name,
        }
    }
}

/// What a piece of an output is.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_piece_kind {
    /// Bytes of input `input` at `input_offset` (a view of the caller's
    /// buffer).
    Input = 0,
    /// Bytes the job made (a view of the job's memory).
    Made = 1,
    /// `zeros` zero bytes.
    Zeros = 2,
}

/// One piece of an output.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_piece {
    /// What it is.
    pub kind: clangoffload_piece_kind,
    /// `Input`: which input (0 for jobs with one).
    pub input: usize,
    /// `Input`: where the bytes start in it.
    pub input_offset: u64,
    /// `Input`, `Made`: the bytes.
    pub bytes: clangoffload_bytes,
    /// `Zeros`: how many.
    pub zeros: u64,
}

/// One output of a job (`clangoffload_job_get_output`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_job_output {
    /// The name the job chose for it (an extraction's file name; empty for
    /// other jobs).
    pub name: clangoffload_bytes,
    /// Its size in bytes.
    pub size: u64,
    /// Whether to write it: LLVM creates every output unless the job fails
    /// (`clangoffload_job_failure`), and then only those it found something
    /// for.
    pub written: bool,
}

/// How many outputs a job has (0 for a listing, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_output_count(job: *const clangoffload_job) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { handle::count_with(job, |job| job.plan.output_count()) }
}

/// How many pieces output `output` has (0 past the end, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_piece_count(
    job: *const clangoffload_job,
    output: usize,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { handle::count(job, |job| job.plan.output(output)) }
}

/// Stores piece `index` of output `output` in `*out`.
///
/// Ownership: nothing to free.
///
/// Lifetime: `Input` views borrow the caller's input; `Made` views borrow
/// the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_piece(
    job: *const clangoffload_job,
    output: usize,
    index: usize,
    out: *mut clangoffload_piece,
) -> clangoffload_status {
    // SAFETY: live and writable, as the caller promises.
    unsafe {
        handle::record(job, out, |job| {
            let piece = job.plan.output(output).get(index)?;
            Some(piece_record(&job.plan, piece))
        })
    }
}

/// A piece of a plan's output as C sees it.
fn piece_record(plan: &Plan<'_>, piece: &Piece<'_>) -> clangoffload_piece {
    let bytes = clangoffload_bytes::of(plan.bytes(piece).unwrap_or_default());
    match piece {
        Piece::Input { input, offset, .. } => clangoffload_piece {
            kind: clangoffload_piece_kind::Input,
            input: *input,
            input_offset: *offset,
            bytes,
            zeros: 0,
        },
        Piece::Made { .. } => clangoffload_piece {
            kind: clangoffload_piece_kind::Made,
            input: 0,
            input_offset: 0,
            bytes,
            zeros: 0,
        },
        Piece::Zeros(n) => clangoffload_piece {
            kind: clangoffload_piece_kind::Zeros,
            input: 0,
            input_offset: 0,
            bytes,
            zeros: *n,
        },
    }
}

/// Stores in `*out` the name the job chose for output `output` (an
/// extraction's file names; empty for other jobs).
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_output_name(
    job: *const clangoffload_job,
    output: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: live and writable, as the caller promises.
    unsafe {
        handle::record(job, out, |job| {
            (output < job.plan.output_count())
                .then(|| clangoffload_bytes::of(job.plan.output_name(output)))
        })
    }
}

/// Stores in `*out` what output `output` is: its name, size, and whether to
/// write it.
///
/// Ownership: nothing to free.
///
/// Lifetime: the name borrows the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_output(
    job: *const clangoffload_job,
    output: usize,
    out: *mut clangoffload_job_output,
) -> clangoffload_status {
    // SAFETY: live and writable, as the caller promises.
    unsafe {
        handle::record(job, out, |job| {
            (output < job.plan.output_count()).then(|| clangoffload_job_output {
                name: clangoffload_bytes::of(job.plan.output_name(output)),
                size: job.plan.output_size(output),
                written: job.plan.writes(output),
            })
        })
    }
}

/// The error to report once the outputs are written (LLVM writes the
/// outputs it found, then fails): `CLANGOFFLOAD_STATUS_OK` if none; else its
/// status, with `*err` (if not NULL) filled. When there is one, write only
/// the outputs `clangoffload_job_get_output` marks `written`.
/// `clangoffload_job_failure_message` gives the whole message (and the
/// job's `notify` got it as `CLANGOFFLOAD_NOTE_FAILURE`).
///
/// Ownership: nothing to free.
///
/// NULL: `job` must not be NULL; `err` may be.
///
/// # Safety
/// `job` must be a live job; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_failure(
    job: *const clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        match job.plan.failure() {
            // SAFETY: NULL or writable, as the caller promises.
            Some(e) => Err(unsafe { report_bundler(e, &job.input_name, err) }),
            None => Ok(()),
        }
    })
}

/// Writes the whole message of the job's failure (see
/// `clangoffload_job_failure`; empty if none) into `buf` as a NUL-terminated
/// string and its length (without the NUL) in `*out_len`; if `cap` is too
/// small, stores the length and returns `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// Ownership: nothing to free.
///
/// NULL: `job`, `out_len` must not be NULL;
/// `buf` may be NULL only with `cap` 0.
///
/// # Safety
/// `job` must be a live job; `buf` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_failure_message(
    job: *const clangoffload_job,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        let message = job
            .plan
            .failure()
            .map(|e| alloc::format!("{}", e.message(&job.input_name)))
            .unwrap_or_default();
        // SAFETY: buffers as the caller promises.
        unsafe { write_display(&message, buf, cap, out_len) }
    })
}

/// How many IDs a listing job holds (0 for other jobs, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_listed_count(job: *const clangoffload_job) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { handle::count_with(job, |job| job.listed.len()) }
}

/// Stores listed ID `index` in `*id` and the archive member it is in (empty
/// if none) in `*member`.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the input or the job, until
/// `clangoffload_job_free`.
///
/// NULL: no argument may be NULL.
///
/// # Safety
/// `job` must be a live job; `member` and `id` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_listed(
    job: *const clangoffload_job,
    index: usize,
    member: *mut clangoffload_bytes,
    id: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: `member` is NULL or writable, as the caller promises.
        let member = unsafe { out_arg(member) }?;
        // SAFETY: `id` is NULL or writable, as the caller promises.
        let id = unsafe { out_arg(id) }?;
        let (in_member, listed) = job
            .listed
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *member = clangoffload_bytes::of(in_member.unwrap_or_default());
        *id = clangoffload_bytes::of(listed);
        Ok(())
    })
}

/// Releases a job. NULL is accepted and ignored.
///
/// Ownership: takes the job back; it must not be used again.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_free(job: *mut clangoffload_job) {
    // SAFETY: NULL or a live job, as the caller promises.
    unsafe { free_handle(job) }
}
