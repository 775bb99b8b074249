//! How a job reads its input (`clangoffload_bundler_options`) and what to
//! bundle (`clangoffload_bundle_request`), checked once; and `read_job`, the
//! one shell of every job that reads one input (list, unbundle, extract, the
//! extraction).

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;

use clangoffload::bundler::{BundlerError, Decoding};

use super::notify::{clangoffload_notify_fn, Notifier, CLANGOFFLOAD_NOTE_FAILURE};
use super::notify::{CLANGOFFLOAD_NOTIFY_DONE_WITH, CLANGOFFLOAD_VERBOSE};
use crate::ffi::{array_arg, clangoffload_bytes, into_handle, job_args};
use crate::handle::ReadHandle;
use crate::status::{clangoffload_error, clangoffload_status, report_bundler};

/// `clangoffload_bundler_options.flags`: `-allow-missing-bundles`.
pub const CLANGOFFLOAD_ALLOW_MISSING_BUNDLES: u32 = 1;
/// `-hip-openmp-compatible`.
pub const CLANGOFFLOAD_HIP_OPENMP: u32 = 2;
/// `-check-input-archive`.
pub const CLANGOFFLOAD_CHECK_INPUT_ARCHIVE: u32 = 4;
/// Accept a compressed bundle whose hash is wrong (LLVM never checks it).
pub const CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK: u32 = 8;

/// How a job reads its input (for `clangoffload_bundler_list` and
/// `clangoffload_bundler_unbundle`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundler_options {
    /// `-type`: `o`, `bc`, `a`, `i`, `ll`, ... (for listing, empty means
    /// "any file": every bundle, object, text bundle or archive member).
    pub file_type: clangoffload_bytes,
    /// `-targets` as given (unbundling only): `target_count` views.
    pub targets: *const clangoffload_bytes,
    /// How many targets.
    pub target_count: usize,
    /// `CLANGOFFLOAD_ALLOW_MISSING_BUNDLES`, `_HIP_OPENMP`,
    /// `_CHECK_INPUT_ARCHIVE`, `_SKIP_HASH_CHECK`, `_VERBOSE`.
    pub flags: u32,
    /// The most each compressed bundle of the input may decompress to; 0
    /// for the default (1 GiB).
    pub max_decompressed_size: u64,
    /// The input's name, for messages (may be empty).
    pub input_name: clangoffload_bytes,
    /// Receives warnings, verbose reports and the full error message; may be
    /// NULL.
    pub notify: clangoffload_notify_fn,
    /// Passed to `notify`.
    pub context: *mut c_void,
}

/// What to bundle (`clangoffload_bundler_bundle`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundle_request {
    /// `-type`.
    pub file_type: clangoffload_bytes,
    /// `-targets` as given: `count` views.
    pub targets: *const clangoffload_bytes,
    /// The input of each target: `count` views.
    pub inputs: *const clangoffload_bytes,
    /// How many targets and inputs.
    pub count: usize,
    /// `-bundle-align` (at least 1).
    pub align: u64,
    /// Whether to compress (`-compress`).
    pub compress: bool,
    /// `CLANGOFFLOAD_COMPRESSION_ZLIB` or `_ZSTD`.
    pub compression_method: u32,
    /// The compressed bundle's header version: 2 or 3.
    pub compression_version: u16,
    /// The level, if `has_compression_level`.
    pub compression_level: i32,
    /// Whether `compression_level` is set (else the method's default).
    pub has_compression_level: bool,
    /// `CLANGOFFLOAD_VERBOSE` (the other flags do not apply).
    pub flags: u32,
    /// The host input's name, for messages about it (may be empty).
    pub input_name: clangoffload_bytes,
    /// As in `clangoffload_bundler_options`.
    pub notify: clangoffload_notify_fn,
    /// Passed to `notify`.
    pub context: *mut c_void,
}

/// # Safety
/// `views` must be NULL (only with `count` 0) or readable for `count`
/// views, each readable for the job's duration.
pub(super) unsafe fn strings<'a>(
    views: *const clangoffload_bytes,
    count: usize,
) -> Result<Vec<&'a str>, clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let views = unsafe { array_arg(views, count) }?;
    views
        .iter()
        .map(|v| {
            // SAFETY: readable, as the caller promises.
            let bytes = unsafe { v.as_slice() }?;
            core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
        })
        .collect()
}

/// What a job that reads one input takes from its options.
pub(super) struct ReadOptions<'a> {
    /// `-type`; `None` when empty.
    pub(super) file_type: Option<&'a str>,
    /// `-targets`.
    pub(super) targets: Vec<&'a str>,
    /// The input's name, for messages.
    pub(super) name: &'a str,
    pub(super) flags: u32,
    pub(super) decoding: Decoding,
}

/// Reads and checks the options.
///
/// # Safety
/// The views in `options` must be readable for the call.
unsafe fn read_options(
    options: &clangoffload_bundler_options,
) -> Result<ReadOptions<'_>, clangoffload_status> {
    let known = CLANGOFFLOAD_ALLOW_MISSING_BUNDLES
        | CLANGOFFLOAD_HIP_OPENMP
        | CLANGOFFLOAD_CHECK_INPUT_ARCHIVE
        | CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK
        | CLANGOFFLOAD_VERBOSE
        | CLANGOFFLOAD_NOTIFY_DONE_WITH;
    if options.flags & !known != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    let text = |v: &clangoffload_bytes| {
        // SAFETY: readable, as the caller promises.
        let bytes = unsafe { v.as_slice() }?;
        core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
    };
    let file_type = text(&options.file_type)?;
    Ok(ReadOptions {
        file_type: (!file_type.is_empty()).then_some(file_type),
        // SAFETY: as above.
        targets: unsafe { strings(options.targets, options.target_count) }?,
        name: text(&options.input_name)?,
        flags: options.flags,
        decoding: Decoding {
            max_size: match options.max_decompressed_size {
                0 => Decoding::default().max_size,
                max => max,
            },
            verify_hash: options.flags & CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK == 0,
            verbose: options.flags & CLANGOFFLOAD_VERBOSE != 0,
        },
    })
}

/// The shell of every job that reads one input: checks the pointers, reads
/// the options, runs `job` with the caller's notes, and stores the job in
/// `*out` or reports its error (to `*err` and, whole, to `notify`).
///
/// # Safety
/// As the exported job functions: `data` readable for `len` bytes for the
/// job's life, `options` and its views readable, `out` writable, `err` NULL
/// or writable.
pub(super) unsafe fn read_job<T: ReadHandle>(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut T,
    err: *mut clangoffload_error,
    job: impl FnOnce(&'static [u8], &ReadOptions<'_>, &mut Notifier) -> Result<T, BundlerError>,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the pointers are as the caller promises.
        let (data, options, out) = unsafe { job_args(data, len, options, out) }?;
        // SAFETY: the options' views are readable, as the caller promises.
        let read = unsafe { read_options(options) }?;
        let name = String::from_utf8_lossy(read.name.as_bytes()).into_owned();
        let mut notifier = Notifier::new(options.notify, options.context, name, options.flags);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let mut made =
            job(data, &read, &mut notifier).map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        for failure in made.failures() {
            let message = failure.message(&notifier.input_name);
            notifier.send(CLANGOFFLOAD_NOTE_FAILURE, &alloc::format!("{message}"));
        }
        made.set_input_name(notifier.input_name);
        *out = into_handle(made);
        Ok(())
    })
}

/// Reports a job's error: the record, and the whole message to `notify`.
///
/// # Safety
/// `err` must be NULL or writable.
pub(super) unsafe fn fail(
    e: &BundlerError,
    notifier: &Notifier,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    notifier.error(e);
    // SAFETY: forwarded to the caller.
    unsafe { report_bundler(e, &notifier.input_name, err) }
}

/// Outputs are named after the input's file name, without its directory
/// (`bundle` if it has none).
pub(super) fn stem(name: &str) -> &[u8] {
    name.rsplit(['/', '\\'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("bundle")
        .as_bytes()
}
