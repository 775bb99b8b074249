//! llvm-offload-binary's jobs through the C ABI (`clangoffload_packager_*`):
//! a safe layer that turns views into slices and notes into stderr lines.
//! Every rule is the library's.

use std::ffi::c_void;

use super::job::Job;
use super::{blank_error, c, check, slice, view, with_notes, Buffer, Bytes, Handle};

/// The images of an input, borrowing it.
pub struct Listing<'data>(Handle<'data, c::clangoffload_packager_images>);

/// One listed image.
pub struct Image<'a> {
    /// The archive member it is in (empty: the input itself).
    pub member: &'a [u8],
    pub version: u32,
    pub compressed: bool,
    pub image_kind: u16,
    pub offload_kind: u16,
    pub size: usize,
    pub strings: Vec<(&'a [u8], &'a [u8])>,
}

/// How to write a package (`None`: not given).
pub struct Format<'a> {
    pub version: Option<u32>,
    pub compress: bool,
    pub compression_format: Option<&'a str>,
    pub compression_level: Option<i32>,
}

fn options(
    input_name: &str,
    filters: &[Bytes],
    flags: u32,
    notify: c::clangoffload_notify_fn,
    context: *mut c_void,
) -> c::clangoffload_packager_options {
    c::clangoffload_packager_options {
        input_name: view(input_name.as_bytes()),
        filters: filters.as_ptr(),
        filter_count: filters.len(),
        flags,
        notify,
        context,
    }
}

impl<'data> Job<'data> {
    /// What `<input> --image=<filter>...` writes for `data`: one named
    /// output per file.
    pub fn extract_images(
        program: &str,
        data: &'data [u8],
        input_name: &str,
        filters: &[&str],
        archive: bool,
    ) -> Result<Self, String> {
        let filters: Vec<_> = filters.iter().map(|f| view(f.as_bytes())).collect();
        let flags = if archive {
            c::CLANGOFFLOAD_PACKAGER_ARCHIVE
        } else {
            0
        };
        Job::make(program, |notify, context, out| {
            let options = options(input_name, &filters, flags, notify, context);
            // SAFETY: data, the options and their views are live for the
            // call, and data for the job ('data).
            unsafe {
                c::clangoffload_packager_extract(
                    data.as_ptr(),
                    data.len(),
                    &options,
                    out,
                    std::ptr::null_mut(),
                )
            }
        })
    }
}

impl<'data> Listing<'data> {
    /// The images of `data`.
    pub fn new(program: &str, data: &'data [u8], input_name: &str) -> Result<Self, String> {
        Handle::make(c::clangoffload_packager_images_free, |out| {
            with_notes(program, |notify, context| {
                let options = options(input_name, &[], 0, notify, context);
                // SAFETY: as in `Job::extract_images`.
                unsafe {
                    c::clangoffload_packager_list(
                        data.as_ptr(),
                        data.len(),
                        &options,
                        out,
                        std::ptr::null_mut(),
                    )
                }
            })
            .map(drop)
        })
        .map(Listing)
    }

    /// Every image, in file order.
    pub fn images(&self) -> Vec<Image<'_>> {
        let list = &self.0;
        list.list(
            c::clangoffload_packager_image_count,
            c::clangoffload_packager_get_image,
        )
        .into_iter()
        .enumerate()
        .map(|(i, image)| Image {
            member: list.bytes(image.member),
            version: image.version,
            compressed: image.compressed,
            image_kind: image.image_kind,
            offload_kind: image.offload_kind,
            size: image.image.len,
            strings: list
                .nested(
                    i,
                    usize::try_from(image.string_count).unwrap_or(0),
                    c::clangoffload_packager_get_string,
                )
                .into_iter()
                .map(|pair| (list.bytes(pair.key), list.bytes(pair.value)))
                .collect(),
        })
        .collect()
    }
}

/// The files an `--image` argument names.
pub fn image_files(argument: &str) -> Result<Vec<&str>, String> {
    let mut count = 0usize;
    // Each file is one of the `,`-separated parts.
    let mut files = vec![view(&[]); argument.len().saturating_add(1)];
    let mut err = blank_error();
    // SAFETY: argument is live; files writable for its length; count and
    // err writable.
    let status = unsafe {
        c::clangoffload_packager_image_files(
            argument.as_ptr(),
            argument.len(),
            files.as_mut_ptr(),
            files.len(),
            &mut count,
            &mut err,
        )
    };
    check(status, &err)?;
    files.truncate(count);
    // SAFETY: the views borrow `argument`, cut at ASCII `,` and `=`.
    Ok(files
        .iter()
        .map(|&f| std::str::from_utf8(unsafe { slice(f) }).unwrap_or_default())
        .collect())
}

/// The package of `images` (argument, file name, bytes), as `format` says.
pub fn package(
    program: &str,
    images: &[(&str, &str, &[u8])],
    format: &Format,
) -> Result<Vec<u8>, String> {
    let records: Vec<_> = images
        .iter()
        .map(|(argument, file, data)| c::clangoffload_package_image {
            argument: view(argument.as_bytes()),
            file: view(file.as_bytes()),
            data: view(data),
        })
        .collect();
    let compression_format = format.compression_format.unwrap_or_default();
    let format = c::clangoffload_packager_format {
        format_version: format.version.unwrap_or(0),
        has_format_version: format.version.is_some(),
        compress: format.compress,
        compression_format: view(compression_format.as_bytes()),
        has_compression_format: format.compression_format.is_some(),
        compression_level: format.compression_level.unwrap_or(0),
        has_compression_level: format.compression_level.is_some(),
    };
    let mut buffer = Buffer::empty();
    with_notes(program, |notify, context| {
        // SAFETY: the records, the format and their views are live for the
        // call; buffer is a valid record.
        unsafe {
            c::clangoffload_packager_package(
                records.as_ptr(),
                records.len(),
                &format,
                notify,
                context,
                &mut buffer.0,
                std::ptr::null_mut(),
            )
        }
    })?;
    Ok(buffer.bytes().to_vec())
}
