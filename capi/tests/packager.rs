//! The packager's C calls (`clangoffload_packager_*`), called directly, give
//! what core's `packager` gives: the same images (views into the input or
//! the handle), the same outputs and names, LLVM's warning through `notify`,
//! and errors with their status, record and whole message.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use clangoffload::packager::{self, Format, PackageImage};
use clangoffload_capi::*;

fn fixture(name: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/offload");
    std::fs::read(root.join(name)).unwrap()
}

fn view(bytes: &[u8]) -> clangoffload_bytes {
    clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

fn slice<'a>(v: clangoffload_bytes) -> &'a [u8] {
    if v.len == 0 {
        return &[];
    }
    // SAFETY: the library's views are live while the test holds the handle.
    unsafe { std::slice::from_raw_parts(v.ptr, v.len) }
}

/// The notes a call sent: (kind, text).
type Notes = Vec<(u32, String)>;

/// The (name, bytes) of every output of a job.
type Outputs = Vec<(Vec<u8>, Vec<u8>)>;

/// A change to the default format, the status it gives and its message.
type FormatCase = (
    fn(&mut clangoffload_packager_format),
    clangoffload_status,
    &'static str,
);

unsafe extern "C" fn collect(context: *mut c_void, kind: u32, message: *const u8, len: usize) {
    // SAFETY: the context is the `Notes` the test passed with the call,
    // reached by nothing else during this callback.
    let notes = unsafe { &mut *context.cast::<Notes>() };
    // SAFETY: the library passes a view of `len` bytes live during the call.
    let text = unsafe { std::slice::from_raw_parts(message, len) };
    notes.push((kind, String::from_utf8(text.to_vec()).unwrap()));
}

fn options(
    name: &str,
    filters: &[clangoffload_bytes],
    flags: u32,
    notes: &mut Notes,
) -> clangoffload_packager_options {
    clangoffload_packager_options {
        input_name: view(name.as_bytes()),
        filters: filters.as_ptr(),
        filter_count: filters.len(),
        flags,
        notify: Some(collect),
        context: (notes as *mut Notes).cast(),
    }
}

fn record_message(err: &clangoffload_error) -> String {
    let bytes: Vec<u8> = err
        .message
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// Extracts through the C ABI: (name, bytes) of every output, and notes.
fn extract(
    data: &[u8],
    name: &str,
    filters: &[&str],
    flags: u32,
) -> (Outputs, Notes, clangoffload_status) {
    let filters: Vec<_> = filters.iter().map(|f| view(f.as_bytes())).collect();
    let mut notes = Notes::new();
    let options = options(name, &filters, flags, &mut notes);
    let mut job = null_mut();
    // SAFETY: every pointer is live for the call; data for the job.
    let status = unsafe {
        clangoffload_packager_extract(data.as_ptr(), data.len(), &options, &mut job, null_mut())
    };
    let mut outputs = Vec::new();
    // SAFETY: the job is live until freed below.
    let output_count = unsafe { clangoffload_job_output_count(job) };
    for output in 0..output_count {
        let mut name = view(&[]);
        // SAFETY: the job is live; `name` is a writable view.
        let status = unsafe { clangoffload_job_output_name(job, output, &mut name) };
        assert_eq!(status, clangoffload_status::Ok);
        let mut bytes = Vec::new();
        // SAFETY: the job is live until freed below.
        let piece_count = unsafe { clangoffload_job_piece_count(job, output) };
        for i in 0..piece_count {
            let mut piece = clangoffload_piece {
                kind: clangoffload_piece_kind::Zeros,
                input: 0,
                input_offset: 0,
                bytes: view(&[]),
                zeros: 0,
            };
            // SAFETY: the job is live; `piece` is a writable record.
            let status = unsafe { clangoffload_job_get_piece(job, output, i, &mut piece) };
            assert_eq!(status, clangoffload_status::Ok);
            if piece.kind == clangoffload_piece_kind::Input {
                let at = piece.input_offset as usize;
                assert_eq!(&data[at..at + piece.bytes.len], slice(piece.bytes));
            }
            bytes.extend_from_slice(slice(piece.bytes));
        }
        outputs.push((slice(name).to_vec(), bytes));
    }
    // SAFETY: the job from the extraction above, freed once; the views
    // into it are copied.
    unsafe { clangoffload_job_free(job) };
    (outputs, notes, status)
}

#[test]
fn extraction_jobs_are_cores_plans() {
    let data = fixture("multi.offbin");
    let (outputs, notes, status) = extract(&data, "dir/multi.offbin", &["kind=openmp"], 0);
    assert_eq!(status, clangoffload_status::Ok);
    assert!(notes.is_empty());
    let filters: &[&[u8]] = &[b"kind=openmp"];
    let plan = packager::extract(&data, b"dir/multi.offbin", filters, false, &mut ()).unwrap();
    assert_eq!(outputs.len(), plan.output_count());
    for (i, (name, bytes)) in outputs.iter().enumerate() {
        assert_eq!(name, plan.output_name(i));
        assert_eq!(bytes, &plan.output_bytes(i).unwrap());
    }
    assert_eq!(outputs[0].0, b"multi-amdgcn-amd-amdhsa-gfx908.0.o");
    // LLVM's warning, through notify.
    let (outputs, notes, _) = extract(
        &fixture("sizes.offbin"),
        "s",
        &["file=out,triple=amdgcn-amd-amdhsa"],
        0,
    );
    assert_eq!(outputs.len(), 1);
    assert_eq!(
        notes,
        [(
            CLANGOFFLOAD_NOTE_WARNING,
            "Multiple inputs match to a single file, 'out'".into()
        )]
    );
    // An archive: one output, named by the filter's file.
    let (outputs, _, status) = extract(
        &data,
        "m",
        &["file=lib.a,kind=hip"],
        CLANGOFFLOAD_PACKAGER_ARCHIVE,
    );
    assert_eq!(status, clangoffload_status::Ok);
    assert_eq!(outputs.len(), 1);
    assert!(outputs[0].1.starts_with(b"!<arch>\n"));
    // The sm_70 cubin is ELF's magic and noise, which LLVM's archive writer
    // cannot index: the job fails, with the ELF error's status.
    let (outputs, _, status) = extract(
        &data,
        "m",
        &["file=lib.a,arch=sm_70"],
        CLANGOFFLOAD_PACKAGER_ARCHIVE,
    );
    assert_eq!(status, clangoffload_status::UnsupportedElf);
    assert!(outputs.is_empty());
}

#[test]
fn extraction_errors_carry_status_record_and_message() {
    let data = fixture("multi.offbin");
    let (_, notes, status) = extract(&data, "m", &["arch=sm_70"], CLANGOFFLOAD_PACKAGER_ARCHIVE);
    assert_eq!(status, clangoffload_status::ArchiveWithoutFile);
    assert_eq!(
        notes,
        [(
            CLANGOFFLOAD_NOTE_ERROR,
            "Image must have a 'file' argument.".into()
        )]
    );
    let (_, _, status) = extract(&fixture("embed.bc"), "e.bc", &[], 0);
    assert_eq!(status, clangoffload_status::BitcodeInput);
    let (_, _, status) = extract(&data, "m", &[], 2);
    assert_eq!(status, clangoffload_status::InvalidArgument);
    // A damaged binary: the core error's status, offset and message, after
    // LLVM's words and the input's name.
    let bad = b"\x10\xff\x10\xad\x0a";
    let mut notes = Notes::new();
    let options = options("bad", &[], 0, &mut notes);
    let (mut job, mut err) = (null_mut(), clangoffload_error::default());
    // SAFETY: every pointer is live for the call.
    let status = unsafe {
        clangoffload_packager_extract(bad.as_ptr(), bad.len(), &options, &mut job, &mut err)
    };
    assert_eq!(status, clangoffload_status::Truncated);
    assert!(job.is_null());
    let message = "Invalid data was encountered while parsing the file: 'bad': truncated \
                   OffloadBinary header: needs 32 bytes, 5 left (at offset 0x0)";
    assert_eq!(record_message(&err), message);
    assert_eq!(err.status, status as u32);
    assert_eq!(notes, [(CLANGOFFLOAD_NOTE_ERROR, message.into())]);
}

#[test]
fn listings_hold_every_image_with_its_strings() {
    // A compressed package: images live in the handle's buffers.
    let single = fixture("inputs/single.o");
    let image = PackageImage {
        argument: b"file=a.o,kind=hip,triple=x-y-z,arch=abc",
        file: b"a.o",
        data: &single,
    };
    let format = Format {
        compress: true,
        compression_format: Some(b"zlib"),
        ..Format::default()
    };
    let data = packager::package(&[image, image], &format).unwrap();
    let mut notes = Notes::new();
    let options = options("p", &[], 0, &mut notes);
    let mut images = null_mut();
    // SAFETY: every pointer is live for the call; data for the handle.
    let status = unsafe {
        clangoffload_packager_list(data.as_ptr(), data.len(), &options, &mut images, null_mut())
    };
    assert_eq!(status, clangoffload_status::Ok);
    // SAFETY: the handle is live until freed below.
    assert_eq!(unsafe { clangoffload_packager_image_count(images) }, 2);
    // SAFETY: all zeros is a valid image record (integers, bools, and views
    // whose NULL pointers are not read).
    let mut out = unsafe { std::mem::zeroed::<clangoffload_packager_image>() };
    // SAFETY: the handle is live; `out` is a writable record.
    let status = unsafe { clangoffload_packager_get_image(images, 1, &mut out) };
    assert_eq!(status, clangoffload_status::Ok);
    assert!(out.compressed);
    assert_eq!((out.version, out.offload_kind, out.image_kind), (3, 4, 1));
    assert_eq!(slice(out.image), single.as_slice());
    assert!(slice(out.member).is_empty());
    let mut strings = Vec::new();
    for s in 0..out.string_count {
        let mut pair = clangoffload_string_pair {
            key: view(&[]),
            value: view(&[]),
        };
        // SAFETY: the handle is live; `pair` is a writable record.
        let status = unsafe { clangoffload_packager_get_string(images, 1, s, &mut pair) };
        assert_eq!(status, clangoffload_status::Ok);
        strings.push((slice(pair.key).to_vec(), slice(pair.value).to_vec()));
    }
    assert!(
        strings.contains(&(b"arch".to_vec(), b"abc".to_vec())),
        "{strings:?}"
    );
    let mut pair = clangoffload_string_pair {
        key: view(&[]),
        value: view(&[]),
    };
    // SAFETY: the handle is live; `pair` is a writable record.
    let status =
        unsafe { clangoffload_packager_get_string(images, 1, out.string_count, &mut pair) };
    assert_eq!(status, clangoffload_status::IndexOutOfRange);
    // SAFETY: the handle is live; `out` is a writable record.
    let status = unsafe { clangoffload_packager_get_image(images, 2, &mut out) };
    assert_eq!(status, clangoffload_status::IndexOutOfRange);
    // SAFETY: the handle from the listing above, freed once; `out`'s views
    // into it are not read again.
    unsafe { clangoffload_packager_images_free(images) };
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_packager_images_free(null_mut()) };
    // SAFETY: a NULL handle is answered, not read.
    assert_eq!(unsafe { clangoffload_packager_image_count(null()) }, 0);
    // Archive members are named.
    let data = fixture("offload.a");
    let mut images = null_mut();
    // SAFETY: `data` outlives the handle, freed below; `options` is live
    // for the call; `images` is writable.
    let status = unsafe {
        clangoffload_packager_list(data.as_ptr(), data.len(), &options, &mut images, null_mut())
    };
    assert_eq!(status, clangoffload_status::Ok);
    // SAFETY: all zeros is a valid image record (integers, bools, and views
    // whose NULL pointers are not read).
    let mut out = unsafe { std::mem::zeroed::<clangoffload_packager_image>() };
    // SAFETY: the handle is live; `out` is a writable record.
    let status = unsafe { clangoffload_packager_get_image(images, 0, &mut out) };
    assert_eq!(status, clangoffload_status::Ok);
    assert!(!slice(out.member).is_empty());
    // SAFETY: the handle from the listing above, freed once.
    unsafe { clangoffload_packager_images_free(images) };
}

#[test]
fn image_files_and_packages() {
    let argument = b"file=a.o,triple=t,file=b.bc";
    let mut files = [view(&[]); 2];
    let mut count = 0;
    // SAFETY: `argument` is live for the call; NULL with capacity 0 asks
    // for the count, written to the local `count`.
    let status = unsafe {
        clangoffload_packager_image_files(
            argument.as_ptr(),
            argument.len(),
            null_mut(),
            0,
            &mut count,
            null_mut(),
        )
    };
    assert_eq!(status, clangoffload_status::BufferTooSmall);
    assert_eq!(count, 2);
    // SAFETY: `argument` is live for the call; `files` is writable for 2
    // views; `count` is a writable local.
    let status = unsafe {
        clangoffload_packager_image_files(
            argument.as_ptr(),
            argument.len(),
            files.as_mut_ptr(),
            2,
            &mut count,
            null_mut(),
        )
    };
    assert_eq!(status, clangoffload_status::Ok);
    assert_eq!([slice(files[0]), slice(files[1])], [&b"a.o"[..], b"b.bc"]);
    let mut err = clangoffload_error::default();
    // SAFETY: as above.
    let status = unsafe {
        clangoffload_packager_image_files(
            b"x=1".as_ptr(),
            3,
            files.as_mut_ptr(),
            2,
            &mut count,
            &mut err,
        )
    };
    assert_eq!(status, clangoffload_status::MissingImageFile);
    assert_eq!(record_message(&err), "'file' is a required image arguments");

    // The default format: LLVM 22's bytes.
    let single = fixture("inputs/single.o");
    let argument = "file=inputs/single.o,kind=openmp,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+";
    let image = clangoffload_package_image {
        argument: view(argument.as_bytes()),
        file: view(b"inputs/single.o"),
        data: view(&single),
    };
    let format = clangoffload_packager_format {
        format_version: 0,
        has_format_version: false,
        compress: false,
        compression_format: view(&[]),
        has_compression_format: false,
        compression_level: 0,
        has_compression_level: false,
    };
    let mut buffer = clangoffload_buffer {
        ptr: null_mut(),
        len: 0,
    };
    // SAFETY: `image` (one record) and `format` are live for the call;
    // `buffer` is writable.
    let status = unsafe {
        clangoffload_packager_package(
            &image,
            1,
            &format,
            None,
            null_mut(),
            &mut buffer,
            null_mut(),
        )
    };
    assert_eq!(status, clangoffload_status::Ok);
    // SAFETY: on OK, `buffer` is the library's, `len` initialized bytes at
    // `ptr`, live until freed below.
    let packaged = unsafe { std::slice::from_raw_parts(buffer.ptr, buffer.len) };
    assert_eq!(packaged, fixture("single.offbin"));
    // SAFETY: the library's buffer, freed once; `packaged` is not used again.
    unsafe { clangoffload_buffer_free(&mut buffer) };
    // Option checks, with LLVM's words, to notify and the record.
    let cases: [FormatCase; 3] = [
        (
            |f| {
                f.has_format_version = true;
                f.format_version = 0;
            },
            clangoffload_status::UnsupportedBinaryVersion,
            "invalid format version 0; expected 1, 2 or 3",
        ),
        (
            |f| {
                f.compress = true;
                f.has_compression_format = true;
                f.compression_format = view(b"lz4");
            },
            clangoffload_status::UnknownMethod,
            "invalid compression format 'lz4'; expected 'zlib' or 'zstd'",
        ),
        (
            |f| {
                f.compress = true;
                f.has_compression_level = true;
                f.compression_level = 23;
            },
            clangoffload_status::InvalidCompressionLevel,
            "invalid zstd compression level 23; expected a value in [-131072, 22]",
        ),
    ];
    for (change, want, message) in cases {
        let mut f = format;
        change(&mut f);
        let mut notes = Notes::new();
        let mut err = clangoffload_error::default();
        // SAFETY: as above.
        let status = unsafe {
            clangoffload_packager_package(
                &image,
                1,
                &f,
                Some(collect),
                (&mut notes as *mut Notes).cast(),
                &mut buffer,
                &mut err,
            )
        };
        assert_eq!(status, want);
        assert_eq!(record_message(&err), message);
        assert_eq!(notes, [(CLANGOFFLOAD_NOTE_ERROR, message.to_string())]);
        assert!(buffer.ptr.is_null());
    }
}
