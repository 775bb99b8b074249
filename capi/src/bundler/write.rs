//! A job's outputs written to files: to a descriptor (input bytes copied
//! file to file from the inputs' descriptors where given) or to a path.

use alloc::vec::Vec;
use core::ffi::c_char;

use clangoffload::bundler::{Piece, Plan};

use super::job::clangoffload_job;
use crate::ffi::{array_arg, handle_arg};
use crate::status::{clangoffload_error, clangoffload_status};

/// Writes output `output` to the open file descriptor `fd` (from its
/// current position; the descriptor stays open), from memory: what
/// `clangoffload_job_write_fd_from` does with no input descriptors.
///
/// Ownership: nothing to free; `fd` stays the caller's.
///
/// NULL: `job` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `fd` an open descriptor the caller may write.
#[cfg(unix)]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_fd(
    job: *const clangoffload_job,
    output: usize,
    fd: core::ffi::c_int,
) -> clangoffload_status {
    // SAFETY: as the caller promises; no input descriptors, no record.
    unsafe {
        clangoffload_job_write_fd_from(job, output, fd, core::ptr::null(), 0, core::ptr::null_mut())
    }
}

/// Writes output `output` to the open file descriptor `fd` (from its
/// current position; the descriptor stays open). Where `input_fds` (NULL,
/// or `input_count` descriptors, -1 for none) holds input `i` open for
/// reading, that input's bytes are copied file to file in the kernel
/// (`copy_file_range` where the system has it) instead of from memory; that
/// descriptor's file position moves. The descriptors must be of the very
/// bytes the job was made from.
///
/// Ownership: nothing to free; the descriptors stay the caller's.
///
/// NULL: `job` must not be NULL; `input_fds` may be NULL only when
/// `input_count` is 0; `err` may be NULL.
///
/// Errors: `CLANGOFFLOAD_STATUS_IO_ERROR` with the system's message in
/// `*err` when writing or reading fails.
///
/// # Safety
/// `job` must be a live job; `fd` an open descriptor the caller may write;
/// `input_fds` readable for `input_count` descriptors.
#[cfg(unix)]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_fd_from(
    job: *const clangoffload_job,
    output: usize,
    fd: core::ffi::c_int,
    input_fds: *const core::ffi::c_int,
    input_count: usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    use std::mem::ManuallyDrop;
    use std::os::fd::FromRawFd;
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: readable, as the caller promises.
        let input_fds = unsafe { array_arg(input_fds, input_count) }?;
        if fd < 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: open descriptors the caller lends for the call; they are
        // never closed (ManuallyDrop).
        let open = |fd| ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let inputs: Vec<_> = input_fds
            .iter()
            .map(|&fd| (fd >= 0).then(|| open(fd)))
            .collect();
        let inputs: Vec<Option<&std::fs::File>> = inputs.iter().map(|f| f.as_deref()).collect();
        // SAFETY: NULL or writable, as the caller promises.
        write_output(&job.plan, output, &open(fd), &inputs)
            .map_err(|e| unsafe { io_error(&e, err) })
    })
}

/// Creates (or truncates) the file at `path` (NUL-terminated) and writes
/// output `output` to it.
///
/// Ownership: nothing to free.
///
/// NULL: `job`, `path` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `path` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_path(
    job: *const clangoffload_job,
    output: usize,
    path: *const c_char,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        if path.is_null() {
            return Err(clangoffload_status::NullArgument);
        }
        // SAFETY: NUL-terminated, as the caller promises.
        let path = unsafe { core::ffi::CStr::from_ptr(path) };
        let path = path
            .to_str()
            .map_err(|_| clangoffload_status::InvalidUtf8)?;
        let file = std::fs::File::create(path).map_err(|_| clangoffload_status::IoError)?;
        write_output(&job.plan, output, &file, &[]).map_err(|_| clangoffload_status::IoError)
    })
}

/// Writes output `output` to `out`, copying input `i`'s bytes from
/// `inputs[i]` where it is given.
fn write_output(
    plan: &Plan<'_>,
    output: usize,
    mut out: &std::fs::File,
    inputs: &[Option<&std::fs::File>],
) -> std::io::Result<()> {
    use std::io::{Read, Seek, Write};
    const ZEROS: [u8; 4096] = [0; 4096];
    for piece in plan.output(output) {
        match (piece, plan.bytes(piece)) {
            (
                Piece::Input {
                    input,
                    offset,
                    bytes,
                },
                _,
            ) if inputs.get(*input).is_some_and(Option::is_some) => {
                let mut from = inputs
                    .get(*input)
                    .copied()
                    .flatten()
                    .ok_or(std::io::ErrorKind::NotFound)?;
                from.seek(std::io::SeekFrom::Start(*offset))?;
                let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
                if std::io::copy(&mut from.take(len), &mut out)? != len {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
            }
            (_, Some(bytes)) => out.write_all(bytes)?,
            (Piece::Zeros(mut n), None) => {
                while n > 0 {
                    let chunk = usize::try_from(n).unwrap_or(ZEROS.len()).min(ZEROS.len());
                    out.write_all(ZEROS.get(..chunk).unwrap_or_default())?;
                    n = n.saturating_sub(u64::try_from(chunk).unwrap_or(n));
                }
            }
            _ => {}
        }
    }
    out.flush()
}

/// Reports an I/O error: its status, with the system's message (without
/// Rust's " (os error N)") in the caller's optional record.
///
/// # Safety
/// `err` must be NULL or writable.
unsafe fn io_error(e: &std::io::Error, err: *mut clangoffload_error) -> clangoffload_status {
    let text = alloc::string::ToString::to_string(e);
    let text = text.find(" (os error").map_or(&*text, |end| &text[..end]);
    let record = || clangoffload_error::new(clangoffload_status::IoError, 0, None, text);
    // SAFETY: NULL or writable, as the caller promises.
    unsafe { clangoffload_error::store(err, record) };
    clangoffload_status::IoError
}
