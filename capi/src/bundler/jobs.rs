//! The bundler's jobs, whole: `-list`, `-unbundle` (also straight to
//! files), extraction of every entry, bundling, and the `-targets` checks.

use alloc::string::String;
use alloc::vec::Vec;
#[cfg(feature = "std")]
use core::ffi::c_char;
use core::ffi::c_void;

use clangoffload::bundler::UnbundleRequest;
use clangoffload::bundler::{self, BundleRequest, Compression, FileType, Listed, Plan};
use clangoffload::CompressionMethod;

use super::job::clangoffload_job;
#[cfg(feature = "std")]
use super::job::{clangoffload_job_failure, clangoffload_job_free, clangoffload_job_output_count};
use super::notify::{clangoffload_notify_fn, Notifier, CLANGOFFLOAD_VERBOSE};
use super::options::{
    clangoffload_bundle_request, clangoffload_bundler_options, fail, read_job, stem, strings,
    CLANGOFFLOAD_ALLOW_MISSING_BUNDLES, CLANGOFFLOAD_CHECK_INPUT_ARCHIVE, CLANGOFFLOAD_HIP_OPENMP,
};
#[cfg(feature = "std")]
use super::write::clangoffload_job_write_path;
use crate::ffi::{array_arg, clangoffload_bytes, handle_arg, into_handle, out_arg};
use crate::status::{clangoffload_error, clangoffload_status};

/// Lists entry IDs as `clang-offload-bundler -list -type=<file_type>` does
/// (a repeated ID of a binary bundle once), or with an empty `file_type`
/// every ID of any file this library reads as bundles, repeats included,
/// with the archive member each is in. Read them with
/// `clangoffload_job_listed_count` / `_get_listed`.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// Pointers as above; `notify`, if set, must be callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_list(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let listed = match read.file_type {
                Some(file_type) => FileType::from_name(file_type)
                    .and_then(|t| bundler::list(data, t, read.decoding, notifier)),
                None => bundler::list_all(data, read.decoding, notifier),
            }?;
            Ok(clangoffload_job {
                plan: Plan::default(),
                listed,
                input_name: String::new(),
            })
        })
    }
}

/// Plans `clang-offload-bundler -unbundle -type=<file_type>
/// -targets=<targets>` of the `len` bytes at `data`: output `i` of the job
/// is what target `i` gets (the entry chosen by the bundler's rules, the
/// host fallback, or for `-type=a` an archive of the matching members).
/// When the job succeeds, check `clangoffload_job_failure` after writing its
/// outputs: LLVM writes the outputs it found before it reports missing
/// bundles. Entries are matched as LLVM 22's bundler reads them.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`; the target views must be readable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_unbundle(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let flag = |bit| read.flags & bit != 0;
            let request = UnbundleRequest {
                file_type: FileType::from_name(read.file_type.unwrap_or_default())?,
                targets: &read.targets,
                allow_missing: flag(CLANGOFFLOAD_ALLOW_MISSING_BUNDLES),
                hip_openmp_compatible: flag(CLANGOFFLOAD_HIP_OPENMP),
                check_input_archive: flag(CLANGOFFLOAD_CHECK_INPUT_ARCHIVE),
                decoding: read.decoding,
            };
            let plan = bundler::unbundle(data, &request, notifier)?;
            Ok(clangoffload_job::from_plan(plan, String::new()))
        })
    }
}

/// `clang-offload-bundler -unbundle` in one call: plans as
/// `clangoffload_bundler_unbundle` does, writes output `i` to `paths[i]`
/// (`options->target_count` NUL-terminated paths; an output LLVM would not
/// write is not created), and returns the job's final status: OK, the
/// planning error, an I/O error, or the failure LLVM reports after writing
/// what it found (missing bundles).
///
/// Ownership: nothing to free; the files are the caller's.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `paths`
/// must not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_unbundle`; `paths` readable for
/// `options->target_count` NUL-terminated strings.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_unbundle_files(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    paths: *const *const c_char,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    let mut job = core::ptr::null_mut();
    // SAFETY: forwarded to the caller.
    let status = unsafe { clangoffload_bundler_unbundle(data, len, options, &mut job, err) };
    if status != clangoffload_status::Ok {
        return status;
    }
    // SAFETY: the job is live until freed below; `paths` as the caller promises.
    let status = unsafe { write_files(job, paths, err) };
    // SAFETY: the job came from above and is freed once.
    unsafe { clangoffload_job_free(job) };
    status
}

/// Writes each output of a live job to its path, then gives its failure.
///
/// # Safety
/// `job` live; `paths` readable for one NUL-terminated path per output.
#[cfg(feature = "std")]
unsafe fn write_files(
    job: *mut clangoffload_job,
    paths: *const *const c_char,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: the job is live, as the caller promises.
    let count = unsafe { clangoffload_job_output_count(job) };
    // SAFETY: readable for one path per output, as the caller promises.
    let paths = match unsafe { array_arg(paths, count) } {
        Ok(paths) => paths,
        Err(status) => return status,
    };
    // SAFETY: the job is live; `err` NULL or writable.
    let failure = unsafe { clangoffload_job_failure(job, err) };
    // SAFETY: the job is live.
    let plan = &unsafe { &*job }.plan;
    for (output, &path) in paths.iter().enumerate() {
        if !plan.writes(output) {
            continue;
        }
        // SAFETY: the job is live; the path NUL-terminated, as promised.
        let status = unsafe { clangoffload_job_write_path(job, output, path) };
        if status != clangoffload_status::Ok {
            return status;
        }
    }
    failure
}

/// Plans extracting every entry of every container in the `len` bytes at
/// `data`, in file order, repeats included: bundles and compressed bundles
/// (back to back, in ELF sections, in archive members) and every image of
/// every OffloadBinary (alone, in `.llvm.offloading`, in archives, nested
/// ones opened; each the bytes llvm-offload-binary writes for it). Output
/// `i` is named (`clangoffload_job_output_name`)
/// `<file name>[.<member>].<i>.<entry ID>` for a bundle entry and
/// `<file name>[.<member>].<i>.<triple>[-<arch>][.<ext>]` for an image, the
/// file name being `input_name` without its directory (`bundle` if empty),
/// every part made safe as a file name (only `[A-Za-z0-9._+:-]`, never
/// starting with `.`). A bundle whose payloads overlap so that extracting
/// them all would write more than it holds is refused
/// (`CLANGOFFLOAD_STATUS_EXTRACTION_TOO_LARGE`). Damage found after readable
/// containers is the job's failure (`clangoffload_job_failure`): write the
/// outputs, then report it. Only `options->flags`' `_SKIP_HASH_CHECK` and
/// `_VERBOSE` apply.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_extract(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            // Outputs are named after the input's file name, without its
            // directory.
            let plan =
                clangoffload::extract::extract(data, stem(read.name), read.decoding, notifier)?;
            Ok(clangoffload_job::from_plan(plan, String::new()))
        })
    }
}

/// Plans the file `clang-offload-bundler -type=<file_type> -targets=...
/// -inputs=...` writes: output 0 of the job. With `-type=o` and a host input
/// that is an object file, the object with one section per target; else a
/// text bundle for text types or a binary bundle (payloads are views of the
/// inputs, not copies), compressed if asked.
///
/// Ownership: as `clangoffload_bundler_list`.
///
/// Lifetime: the job borrows every input: keep them alive and unchanged
/// until the job is freed.
///
/// NULL: `request`, `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`; every view in `request` readable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_bundle(
    request: *const clangoffload_bundle_request,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let request = unsafe { handle_arg(request) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `request.file_type` is a view readable for the call, as the caller promises.
        let file_type = unsafe { request.file_type.as_slice() }?;
        // SAFETY: `request.input_name` is a view readable for the call, as the caller promises.
        let name = unsafe { request.input_name.as_slice() }?;
        let file_type =
            core::str::from_utf8(file_type).map_err(|_| clangoffload_status::InvalidUtf8)?;
        // SAFETY: as above.
        let targets = unsafe { strings(request.targets, request.count) }?;
        // SAFETY: as above; the inputs outlive the job, as the caller promises.
        let inputs: Vec<&'static [u8]> = unsafe { array_arg(request.inputs, request.count) }?
            .iter()
            // SAFETY: as above.
            .map(|v| unsafe { v.as_slice() })
            .collect::<Result<_, _>>()?;
        if request.flags & !CLANGOFFLOAD_VERBOSE != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        let method = match request.compression_method {
            crate::CLANGOFFLOAD_COMPRESSION_ZLIB => CompressionMethod::Zlib,
            crate::CLANGOFFLOAD_COMPRESSION_ZSTD => CompressionMethod::Zstd,
            _ if !request.compress => CompressionMethod::Zstd,
            _ => return Err(clangoffload_status::InvalidArgument),
        };
        let compression = request.compress.then_some(Compression {
            method,
            version: request.compression_version,
            level: request
                .has_compression_level
                .then_some(request.compression_level),
        });
        let mut notifier = Notifier::new(
            request.notify,
            request.context,
            String::from_utf8_lossy(name).into_owned(),
            request.flags,
        );
        let plan = FileType::from_name(file_type).and_then(|file_type| {
            let request = BundleRequest {
                file_type,
                targets: &targets,
                inputs: &inputs,
                align: request.align,
                compression,
            };
            bundler::bundle(&request, &mut notifier)
        });
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let plan = plan.map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        *out = into_handle(clangoffload_job {
            plan,
            listed: Listed::default(),
            input_name: notifier.input_name,
        });
        Ok(())
    })
}

/// Checks `-targets` as clang-offload-bundler 22 does before it opens a
/// file, in its order: duplicates, the `<kind>-<triple>` format, known kinds
/// and triples, conflicting target IDs, the number of host targets (exactly
/// one when bundling, unless every target is HIP; at most one when
/// unbundling: `unbundle` true).
///
/// Ownership: nothing to free. On failure `*err` (if not NULL) and `notify`
/// (if set) get the message.
///
/// NULL: `targets` may be NULL only when `count` is 0; `err` may be NULL.
///
/// # Safety
/// `targets` readable for `count` views, each readable; `notify`, if set,
/// callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_check_targets(
    targets: *const clangoffload_bytes,
    count: usize,
    unbundle: bool,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let targets = unsafe { strings(targets, count) }?;
        let mode = if unbundle {
            bundler::Mode::Unbundle
        } else {
            bundler::Mode::Bundle
        };
        let notifier = Notifier::new(notify, context, String::new(), 0);
        bundler::check_targets(&targets, mode)
            .map(drop)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { fail(&e, &notifier, err) })
    })
}
