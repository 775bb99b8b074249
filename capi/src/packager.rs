//! llvm-offload-binary's (clang-offload-packager's) jobs, whole (core's
//! `packager`): which files an `--image` argument names, packaging them,
//! listing the images of a file, and extracting them with LLVM 22's rules
//! into a `clangoffload_job` whose outputs are named (write them where the
//! names say, or with `clangoffload_job_write_fd` / `_write_path`).

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;

use clangoffload::packager::{self, Format, Image, Images, PackageImage, PackagerError};

use crate::bundler::{clangoffload_job, clangoffload_notify_fn, Notifier, CLANGOFFLOAD_NOTE_ERROR};
use crate::ffi::{array_arg, clangoffload_bytes, fill_array, free_handle, handle_arg};
use crate::ffi::{into_handle, job_args, out_arg, slice_arg};
use crate::object_bundle::clangoffload_buffer;
use crate::offload_binary::clangoffload_string_pair;
use crate::status::{clangoffload_error, clangoffload_status};

/// `clangoffload_packager_options.flags`: `--archive` (extracting: each
/// filter's images go to one archive named by its `file`).
pub const CLANGOFFLOAD_PACKAGER_ARCHIVE: u32 = 1;

/// How a packager job reads its input (`clangoffload_packager_extract`,
/// `clangoffload_packager_list`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_packager_options {
    /// The input's name as given: for messages, and when extracting for the
    /// automatic output names (its stem) and the names of archive members
    /// (may be empty).
    pub input_name: clangoffload_bytes,
    /// The `--image` filters (extracting only): `filter_count` views.
    pub filters: *const clangoffload_bytes,
    /// How many filters.
    pub filter_count: usize,
    /// `CLANGOFFLOAD_PACKAGER_ARCHIVE` (extracting only).
    pub flags: u32,
    /// Receives warnings and the full error message; may be NULL.
    pub notify: clangoffload_notify_fn,
    /// Passed to `notify`.
    pub context: *mut c_void,
}

/// How `clangoffload_packager_package` writes: llvm-offload-binary's
/// `--format-version`, `--compress`, `--compression-format` and
/// `--compression-level`, each with whether it was given.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_packager_format {
    /// The version, if `has_format_version` (else 1).
    pub format_version: u32,
    /// Whether `format_version` is set.
    pub has_format_version: bool,
    /// Write one compressed version 3 binary.
    pub compress: bool,
    /// `zlib` or `zstd`, if `has_compression_format` (else `zstd`).
    pub compression_format: clangoffload_bytes,
    /// Whether `compression_format` is set.
    pub has_compression_format: bool,
    /// The level, if `has_compression_level` (else the method's default).
    pub compression_level: i32,
    /// Whether `compression_level` is set.
    pub has_compression_level: bool,
}

/// A file to package.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_package_image {
    /// The whole `--image` argument that names it.
    pub argument: clangoffload_bytes,
    /// The file's name as given (its extension gives the image kind).
    pub file: clangoffload_bytes,
    /// The file's bytes.
    pub data: clangoffload_bytes,
}

/// The images of an input (`clangoffload_packager_list`).
pub struct clangoffload_packager_images {
    /// Borrow the input and `listing`'s buffers (declared first, so dropped
    /// first).
    images: Vec<Image<'static>>,
    /// Holds the decompressed binaries; never changed while `images` lives.
    _listing: Images<'static>,
}

/// One image of an input.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_packager_image {
    /// The (innermost) archive member it was found in; empty when it is in
    /// the input itself (LLVM names it after the input then).
    pub member: clangoffload_bytes,
    /// Its binary's version (3 for a compressed one).
    pub version: u32,
    /// Whether its binary was compressed.
    pub compressed: bool,
    /// The image kind, as stored.
    pub image_kind: u16,
    /// The offload kind, as stored.
    pub offload_kind: u16,
    /// The entry flags.
    pub flags: u32,
    /// The image bytes.
    pub image: clangoffload_bytes,
    /// How many key-value strings (`clangoffload_packager_get_string`).
    pub string_count: u64,
}

/// Reports a packager job's error `e`: the whole message to `notes`'
/// `notify`, the record into `*err`.
///
/// # Safety
/// `err` must be NULL or writable.
unsafe fn fail(
    notes: &Notifier,
    e: &PackagerError,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    let message = alloc::format!("{}", e.message(&notes.input_name));
    notes.send(CLANGOFFLOAD_NOTE_ERROR, &message);
    let status = status_of(e);
    // SAFETY: forwarded to the caller; NULL means "not wanted".
    unsafe { clangoffload_error::store_failure(err, status, e.core_error(), &message) };
    status
}

/// The status of a packager job's failure: that of the core error behind it
/// where there is one, else the packager's own.
fn status_of(e: &PackagerError) -> clangoffload_status {
    use clangoffload_status as S;
    use PackagerError as E;
    match e {
        E::MissingFile => S::MissingImageFile,
        E::ArchiveWithoutFile => S::ArchiveWithoutFile,
        E::Bitcode => S::BitcodeInput,
        E::FormatVersion(_) => S::UnsupportedBinaryVersion,
        E::CompressionFormat(_) => S::UnknownMethod,
        E::CompressionLevel { .. } => S::InvalidCompressionLevel,
        E::Container(e) | E::Binary(e) | E::Writer(e) | E::Unindexable { error: e, .. } => {
            S::from(e.kind())
        }
        E::OverlappingImages { .. } => S::ExtractionTooLarge,
    }
}

/// Reads the options' input name and notes.
///
/// # Safety
/// The name's view must be readable for the job's life.
unsafe fn read_options(
    options: &clangoffload_packager_options,
) -> Result<(&'static [u8], Notifier), clangoffload_status> {
    // SAFETY: readable, as the caller promises.
    let name: &'static [u8] = unsafe { options.input_name.as_slice() }?;
    let input_name = String::from_utf8_lossy(name).into_owned();
    let notes = Notifier::new(options.notify, options.context, input_name, 0);
    Ok((name, notes))
}

/// Plans what `llvm-offload-binary <input> --image=<filter>...` (LLVM 22)
/// writes for the `len` bytes at `data`: the images of every OffloadBinary
/// of the input (a raw binary, an ELF file's `SHT_LLVM_OFFLOADING`
/// sections, the members of an archive, recursively; LLVM bitcode is
/// refused with `CLANGOFFLOAD_STATUS_BITCODE_INPUT`) that each filter
/// matches (every `key=value` holds; `file` is not compared, `kind` compares
/// the offload kind, a missing key reads as empty). Per filter that matches:
/// with `CLANGOFFLOAD_PACKAGER_ARCHIVE`, an archive of them named by the
/// filter's `file` (without one: `CLANGOFFLOAD_STATUS_ARCHIVE_WITHOUT_FILE`);
/// else with a `file`, the last one, named so (and LLVM's warning "Multiple
/// inputs match to a single file" if there are several); else each one,
/// named `<input stem>-<triple>-<arch>.<i>.<kind extension>` with `/` and NUL
/// replaced by `_`. `clangoffload_job_output_name` gives each output's name.
/// LLVM writes each filter's files before it reads the next filter: call
/// once per filter to fail where it does. With no filter the job is empty,
/// but the input is read and its errors reported.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong, and `options->notify` gets the whole
/// message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed. The options are read during the call.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// Pointers as above; every view in `options` readable; `notify`, if set,
/// callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_extract(
    data: *const u8,
    len: usize,
    options: *const clangoffload_packager_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the pointers are as the caller promises.
        let (data, options, out) = unsafe { job_args(data, len, options, out) }?;
        if options.flags & !CLANGOFFLOAD_PACKAGER_ARCHIVE != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: the options' views are readable, as the caller promises.
        let (name, mut notes) = unsafe { read_options(options) }?;
        // SAFETY: as above.
        let filters = unsafe { array_arg(options.filters, options.filter_count) }?
            .iter()
            // SAFETY: as above.
            .map(|f| unsafe { f.as_slice() })
            .collect::<Result<Vec<&[u8]>, _>>()?;
        let archive = options.flags & CLANGOFFLOAD_PACKAGER_ARCHIVE != 0;
        let plan = packager::extract(data, name, &filters, archive, &mut notes);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let plan = plan.map_err(|e| unsafe { fail(&notes, &e, err) })?;
        *out = into_handle(clangoffload_job::from_plan(plan, notes.input_name));
        Ok(())
    })
}

/// Lists the images of the `len` bytes at `data`, found as
/// `clangoffload_packager_extract` finds them, in file order: read them with
/// `clangoffload_packager_image_count`, `_get_image` and `_get_string`. Only
/// `options->input_name` (for messages), `notify` and `context` apply.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_packager_images_free`; it owns the
/// decompressed bytes of compressed binaries. On failure `*out` is
/// untouched, `*err` (if not NULL) says what is wrong, and
/// `options->notify` gets the whole message.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: keep them alive
/// and unchanged until it is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_packager_extract`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_list(
    data: *const u8,
    len: usize,
    options: *const clangoffload_packager_options,
    out: *mut *mut clangoffload_packager_images,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the pointers are as the caller promises.
        let (data, options, out) = unsafe { job_args(data, len, options, out) }?;
        // SAFETY: the options' views are readable, as the caller promises.
        let (_, notes) = unsafe { read_options(options) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let listing = packager::list(data).map_err(|e| unsafe { fail(&notes, &e, err) })?;
        let mut images = Vec::new();
        images
            .try_reserve_exact(listing.iter().count())
            .map_err(|_| clangoffload_status::OutOfMemory)?;
        images.extend(listing.iter());
        // SAFETY: the images borrow `data` (alive until the handle is freed,
        // as the caller promises) and the heap buffers of `listing`, which
        // the handle keeps, never changes, and drops after them; moving
        // `listing` does not move those buffers.
        let images = unsafe { core::mem::transmute::<Vec<Image<'_>>, Vec<Image<'static>>>(images) };
        *out = into_handle(clangoffload_packager_images {
            images,
            _listing: listing,
        });
        Ok(())
    })
}

/// How many images a listing holds (0 for NULL).
///
/// Ownership: nothing to free; returns a plain number.
///
/// Lifetime: nothing is handed out.
///
/// NULL: `images` may be NULL.
///
/// # Safety
/// `images` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_image_count(
    images: *const clangoffload_packager_images,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { images.as_ref() }.map_or(0, |images| images.images.len())
}

/// Stores image `index` of a listing in `*out`
/// (`CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the end).
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the views borrow the input or the handle, until
/// `clangoffload_packager_images_free`.
///
/// NULL: `images` and `out` must not be NULL.
///
/// # Safety
/// `images` must be a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_get_image(
    images: *const clangoffload_packager_images,
    index: usize,
    out: *mut clangoffload_packager_image,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let images = unsafe { handle_arg(images) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let image = images
            .images
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *out = clangoffload_packager_image {
            member: clangoffload_bytes::of(image.member.unwrap_or_default()),
            version: image.version,
            compressed: image.compressed,
            image_kind: image.entry.image_kind().raw(),
            offload_kind: image.entry.offload_kind().raw(),
            flags: image.entry.flags(),
            image: clangoffload_bytes::of(image.entry.image()),
            string_count: image.entry.string_count(),
        };
        Ok(())
    })
}

/// Stores string `string` (in table order) of image `index` in `*out`
/// (`CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the end of either).
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the views borrow the input or the handle, until
/// `clangoffload_packager_images_free`.
///
/// NULL: `images` and `out` must not be NULL.
///
/// # Safety
/// `images` must be a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_get_string(
    images: *const clangoffload_packager_images,
    index: usize,
    string: u64,
    out: *mut clangoffload_string_pair,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let images = unsafe { handle_arg(images) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let pair = images
            .images
            .get(index)
            .and_then(|image| image.entry.string_at(string))
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *out = clangoffload_string_pair {
            key: clangoffload_bytes::of(pair.key),
            value: clangoffload_bytes::of(pair.value),
        };
        Ok(())
    })
}

/// Releases a listing. NULL is accepted and ignored.
///
/// Ownership: takes the handle back; it must not be used again, nor any
/// view taken from it.
///
/// Lifetime: every view taken from the handle ends here.
///
/// NULL: `images` may be NULL.
///
/// # Safety
/// `images` must be NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_images_free(
    images: *mut clangoffload_packager_images,
) {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { free_handle(images) }
}

/// Stores in `files` the names of the files the `--image` argument in `len`
/// bytes at `argument` names, in order (the values of its `file` keys), and
/// their number in `*count`. When they do not fit in `capacity` views,
/// nothing is copied, `*count` still gets their number and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`. An argument without a `file` is
/// `CLANGOFFLOAD_STATUS_MISSING_IMAGE_FILE`, with LLVM's message in `*err`.
///
/// Ownership: nothing to free; the views are copied into the caller's array.
///
/// Lifetime: the views borrow `argument`.
///
/// NULL: `argument` may be NULL only when `len` is 0; `files` only when
/// `capacity` is 0; `count` must not be NULL; `err` may be NULL.
///
/// # Safety
/// `argument` readable for `len` bytes; `files` writable for `capacity`
/// views; `count` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_image_files(
    argument: *const u8,
    len: usize,
    files: *mut clangoffload_bytes,
    capacity: usize,
    count: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let argument = unsafe { slice_arg(argument, len) }?;
        let notes = Notifier::new(None, core::ptr::null_mut(), String::new(), 0);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let names =
            packager::image_files(argument).map_err(|e| unsafe { fail(&notes, &e, err) })?;
        let views: Vec<clangoffload_bytes> =
            names.iter().map(|n| clangoffload_bytes::of(n)).collect();
        // SAFETY: writable for `capacity` views and `count`, as the caller promises.
        unsafe { fill_array(&views, files, capacity, count) }
    })
}

/// Writes into `*out` the package `llvm-offload-binary -o <file>
/// --image=...` writes for `count` files (in order), as `format` says
/// (checked first, with LLVM's messages): each image with its argument's
/// offload kind (`kind`), its other keys but `file` as strings (in LLVM 22's
/// order), and an image kind from the bytes when they are LLVM bitcode, else
/// from the file name's extension. The default format is byte-identical to
/// LLVM 22's output.
///
/// Ownership: on success `*out` holds a new buffer, released with
/// `clangoffload_buffer_free`. On failure `*out` is untouched, `*err` (if not
/// NULL) says what is wrong, and `notify` (if set) gets the whole message.
///
/// Lifetime: the buffer is the caller's; it borrows nothing.
///
/// NULL: `images` may be NULL only when `count` is 0; `format` and `out`
/// must not be NULL; `notify` and `err` may be NULL.
///
/// # Safety
/// `images` readable for `count` records whose views are readable; `format`
/// readable with its view; `out` writable; `err` NULL or writable; `notify`,
/// if set, callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_packager_package(
    images: *const clangoffload_package_image,
    count: usize,
    format: *const clangoffload_packager_format,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let records = unsafe { array_arg(images, count) }?;
        // SAFETY: readable, as the caller promises.
        let format = unsafe { handle_arg(format) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let mut images = Vec::new();
        images
            .try_reserve_exact(records.len())
            .map_err(|_| clangoffload_status::OutOfMemory)?;
        for record in records {
            // SAFETY: `record.argument` is a view readable for the call, as the caller promises.
            let argument = unsafe { record.argument.as_slice() }?;
            // SAFETY: `record.file` is a view readable for the call, as the caller promises.
            let file = unsafe { record.file.as_slice() }?;
            // SAFETY: `record.data` is a view readable for the call, as the caller promises.
            let data = unsafe { record.data.as_slice() }?;
            images.push(PackageImage {
                argument,
                file,
                data,
            });
        }
        let format = Format {
            version: format.has_format_version.then_some(format.format_version),
            compress: format.compress,
            compression_format: if format.has_compression_format {
                // SAFETY: readable for the call, as the caller promises.
                Some(unsafe { format.compression_format.as_slice() }?)
            } else {
                None
            },
            compression_level: format
                .has_compression_level
                .then_some(format.compression_level),
        };
        let notes = Notifier::new(notify, context, String::new(), 0);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bytes =
            packager::package(&images, &format).map_err(|e| unsafe { fail(&notes, &e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}
