//! Registration code (core's `registration`): the C11 translation unit that
//! embeds an image and registers it with the OpenMP, HIP or CUDA runtime, as
//! llvm-offload-wrapper 22's output does. It comes in three parts so that a
//! large image is never held as text: the head and the tail
//! (`clangoffload_wrap_c_source`), and between them the image as the body of
//! a C array initializer, formatted piece by piece into the caller's buffer
//! (`clangoffload_wrap_hex`).

use core::ffi::c_char;

use clangoffload::offload_binary::OffloadKind;
use clangoffload::registration::{
    self, check_host_triple, hex_len, write_hex, RegistrationError, WrapOptions,
};

use crate::ffi::{clangoffload_bytes, out_arg, slice_arg, str_arg};
use crate::object_bundle::clangoffload_buffer;
use crate::status::{clangoffload_error, clangoffload_status};

/// Input bytes on one line of `clangoffload_wrap_hex`'s text: pieces of an
/// image that are multiples of this, formatted one after the other, give the
/// text of the whole image.
pub const CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE: usize = 16;

const _: () = assert!(CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE == registration::HEX_BYTES_PER_LINE);

/// What `clangoffload_wrap_c_source` wraps, and how the translation unit
/// describes it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_wrap_options {
    /// The runtime to register with, as an offload kind:
    /// `CLANGOFFLOAD_ENTRY_KIND_OPENMP`, `_HIP` or `_CUDA`.
    pub kind: u16,
    /// The host triple (UTF-8); only ELF hosts are supported.
    pub triple: clangoffload_bytes,
    /// The input's name (UTF-8, may be empty), for the unit's leading
    /// comment.
    pub input_name: clangoffload_bytes,
}

/// Checks that the host triple in the `len` bytes at `triple` (UTF-8) names
/// an ELF host, the only hosts whose registration code the library writes:
/// Mach-O (Apple) and COFF (Windows, MinGW, Cygwin, UEFI) hosts, and an empty
/// triple, give `CLANGOFFLOAD_STATUS_NOT_ELF_HOST`, with the object format in
/// `err->message`.
///
/// Ownership: nothing is allocated and nothing to free. Pure.
///
/// NULL: `triple` may be NULL only when `len` is 0 (an empty triple); `err`
/// may be NULL (no details).
///
/// # Safety
/// `triple` is NULL or readable for `len` bytes; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_wrap_check_triple(
    triple: *const c_char,
    len: usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for `len` bytes, as the caller promises.
        let triple = unsafe { str_arg(triple, len) }?;
        // SAFETY: NULL or writable, as the caller promises.
        check_host_triple(triple).map_err(|e| unsafe { report_registration(&e, err) })
    })
}

/// Writes the C11 translation unit that embeds the image in the `len` bytes at
/// `data` and registers it with the runtime `options->kind` names, as
/// llvm-offload-wrapper 22's output does, into `*head` and `*tail`: the unit
/// is `head`, then the image as `clangoffload_wrap_hex` formats it, then
/// `tail` (for an empty image, nothing between them).
///
/// OpenMP: the whole input in `.llvm.offloading`, one `__tgt_device_image`
/// bounding the first device image of the OffloadBinary the input starts with
/// (the whole input if it starts with none), a `__tgt_bin_desc`, and a
/// constructor calling `__tgt_register_lib`. HIP / CUDA: the input in
/// `.hip_fatbin` / `.nv_fatbin`, the fat binary wrapper record, and a
/// constructor registering it and every offload entry of its kind. Compile the
/// unit as C11 for an ELF host and link it into the program.
///
/// Failures: a host triple that is not ELF (`NOT_ELF_HOST`), a kind other
/// than OpenMP, HIP and CUDA (`UNSUPPORTED_OFFLOAD_KIND`); for OpenMP, an input
/// with the OffloadBinary magic that is no valid OffloadBinary (the
/// OffloadBinary's status), is compressed (`COMPRESSED_OFFLOAD_BINARY`) or has
/// no device image (`NO_DEVICE_IMAGE`).
///
/// Ownership: on success `*head` and `*tail` are new buffers owned by the
/// caller, each released with `clangoffload_buffer_free`. On failure both are
/// untouched and `*err` (if not NULL) says what.
///
/// Lifetime: the buffers borrow nothing: they stay valid until
/// `clangoffload_buffer_free`. The inputs are only read during the call.
///
/// NULL: `options` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; a view's
/// `ptr` may be NULL only when its `len` is 0; `data` may be NULL only when
/// `len` is 0; `head` or `tail` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `options` is NULL or readable, with readable views; `data` is NULL (only
/// with `len` 0) or readable for `len` bytes; `head`, `tail` and `err` are
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_wrap_c_source(
    options: *const clangoffload_wrap_options,
    data: *const u8,
    len: usize,
    head: *mut clangoffload_buffer,
    tail: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        if !options.is_aligned() {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: NULL or readable, as the caller promises.
        let options = unsafe { options.as_ref() }.ok_or(clangoffload_status::NullArgument)?;
        // SAFETY: `options.triple` is a view readable for the call, as the
        // caller promises.
        let triple = unsafe { str_arg(options.triple.ptr.cast(), options.triple.len) }?;
        // SAFETY: `options.input_name` is a view readable for the call, as
        // the caller promises.
        let input_name = unsafe { str_arg(options.input_name.ptr.cast(), options.input_name.len) }?;
        // SAFETY: readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `head` is NULL or writable, as the caller promises.
        let head = unsafe { out_arg(head) }?;
        // SAFETY: `tail` is NULL or writable, as the caller promises.
        let tail = unsafe { out_arg(tail) }?;
        let wrap = WrapOptions {
            kind: OffloadKind::from_raw(options.kind),
            triple,
            input_name,
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let source = registration::c_source(&wrap, data)
            .map_err(|e| unsafe { report_registration(&e, err) })?;
        *head = clangoffload_buffer::from_vec(source.head.into_bytes());
        *tail = clangoffload_buffer::from_vec(source.tail.into_bytes());
        Ok(())
    })
}

/// Formats the `len` bytes at `data` as (part of) the body of a C array
/// initializer, 16 bytes (`CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE`) a line
/// (`  0x7f, 0x45, ...,\n`), into the caller's buffer `buf` of `cap` bytes,
/// and stores the text's length in `*out_len`: 6 bytes per input byte and 2
/// per line. The text is not NUL-terminated. Pieces of an image that are
/// multiples of 16 bytes, formatted one after the other, give the text of the
/// whole: a caller streams a large image through one buffer. An empty input
/// gives an empty text.
///
/// When the text does not fit, nothing is written, `*out_len` gets the length
/// needed and the status is `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL` (call with
/// `buf` NULL and `cap` 0 to ask for it).
///
/// Ownership: the text is written into the caller's buffer; nothing is
/// allocated and nothing to free. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0; `buf` may be NULL only when
/// `cap` is 0; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `buf` is NULL or writable for
/// `cap` bytes and does not overlap `data`; `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_wrap_hex(
    data: *const u8,
    len: usize,
    buf: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let out_len = unsafe { out_arg(out_len) }?;
        if buf.is_null() && cap != 0 {
            return Err(clangoffload_status::NullArgument);
        }
        let needed = hex_len(data.len()).ok_or(clangoffload_status::InvalidArgument)?;
        *out_len = needed;
        if needed > cap {
            return Err(clangoffload_status::BufferTooSmall);
        }
        if needed == 0 {
            return Ok(());
        }
        if isize::try_from(cap).is_err() {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: non-NULL (needed > 0 and cap >= needed), writable for `cap`
        // bytes and not overlapping `data`, as the caller promises.
        let out = unsafe { core::slice::from_raw_parts_mut(buf, cap) };
        write_hex(data, out).ok_or(clangoffload_status::BufferTooSmall)?;
        Ok(())
    })
}

/// What a wrapper of offload kind `kind` embeds for the `len` bytes at
/// `data` (`clangoffload_wrap_c_source` refuses a bare OpenMP device image):
/// for HIP and CUDA, and when `data` is an OffloadBinary (or empty), `*out`
/// is left empty (`ptr` NULL, `len` 0) — embed `data` itself; for OpenMP,
/// when it is a bare device image whose ELF header
/// names its device (x86-64, AArch64, little-endian PowerPC 64 as
/// `<cpu>-unknown-linux-gnu` with arch `generic`; an AMDGPU code object as
/// `amdgcn-amd-amdhsa` and its target ID), `*out` is a version 1
/// OffloadBinary holding it as an object image of `kind`, as
/// clang-linker-wrapper packages the images it links. Any other input is
/// `CLANGOFFLOAD_STATUS_NOT_OFFLOAD_BINARY`, with `*err`'s message saying how
/// to package it.
///
/// Ownership: on success `*out` (if not empty) is owned by the caller,
/// released with `clangoffload_buffer_free`.
///
/// Lifetime: `*out` borrows nothing; it lives until freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` must not be NULL;
/// `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` writable; `err` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_wrap_device_binary(
    kind: u16,
    data: *const u8,
    len: usize,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let binary = registration::device_binary(data, OffloadKind::from_raw(kind))
            .map_err(|e| unsafe { report_registration(&e, err) })?;
        *out = match binary {
            alloc::borrow::Cow::Borrowed(_) => clangoffload_buffer {
                ptr: core::ptr::null_mut(),
                len: 0,
            },
            alloc::borrow::Cow::Owned(bytes) => clangoffload_buffer::from_vec(bytes),
        };
        Ok(())
    })
}

/// The status of a registration failure: that of the OffloadBinary error
/// behind it where there is one, else registration's own. Every variant is
/// named, so a new one does not compile until it has a status.
fn status_of(e: &RegistrationError) -> clangoffload_status {
    use clangoffload_status as S;
    match e {
        RegistrationError::NotElfHost(_) => S::NotElfHost,
        RegistrationError::UnsupportedKind(_) => S::UnsupportedOffloadKind,
        RegistrationError::InvalidOffloadBinary(e) => S::from(e.kind()),
        RegistrationError::CompressedOffloadBinary => S::CompressedOffloadBinary,
        RegistrationError::NoImage => S::NoDeviceImage,
        RegistrationError::BareImage => S::NotOffloadBinary,
        RegistrationError::Writer(e) => S::from(e.kind()),
    }
}

/// Stores `e` (its status, where the OffloadBinary error behind it lies, and
/// its whole message) into the caller's optional error record.
///
/// # Safety
/// `out` must be NULL or point to a writable `clangoffload_error`.
unsafe fn report_registration(
    e: &RegistrationError,
    out: *mut clangoffload_error,
) -> clangoffload_status {
    let status = status_of(e);
    let behind = match e {
        RegistrationError::InvalidOffloadBinary(error) | RegistrationError::Writer(error) => {
            Some(error)
        }
        _ => None,
    };
    // SAFETY: forwarded to the caller; NULL means "not wanted".
    unsafe { clangoffload_error::store_failure(out, status, behind, e) };
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wrapper::{
        CLANGOFFLOAD_ENTRY_KIND_CUDA, CLANGOFFLOAD_ENTRY_KIND_HIP, CLANGOFFLOAD_ENTRY_KIND_OPENMP,
        CLANGOFFLOAD_ENTRY_KIND_SYCL,
    };
    use crate::{clangoffload_buffer_free, clangoffload_status as S};
    use std::ffi::CStr;

    fn message(err: &clangoffload_error) -> &str {
        // SAFETY: NUL-terminated (the last byte stays 0).
        unsafe { CStr::from_ptr(err.message.as_ptr()) }
            .to_str()
            .unwrap()
    }

    fn view(text: &str) -> clangoffload_bytes {
        clangoffload_bytes::of(text.as_bytes())
    }

    /// The whole unit through the C ABI, or the status and message.
    fn unit(kind: u16, triple: &str, data: &[u8]) -> Result<String, (S, String)> {
        let options = clangoffload_wrap_options {
            kind,
            triple: view(triple),
            input_name: view("in.bin"),
        };
        let empty = || clangoffload_buffer {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        let (mut head, mut tail, mut err) = (empty(), empty(), clangoffload_error::default());
        // SAFETY: `options`, its views and `data` are live for the call;
        // `head`, `tail` and `err` are writable locals.
        let status = unsafe {
            clangoffload_wrap_c_source(
                &options,
                data.as_ptr(),
                data.len(),
                &mut head,
                &mut tail,
                &mut err,
            )
        };
        if status != S::Ok {
            assert_eq!(err.status, status.code());
            return Err((status, message(&err).to_owned()));
        }
        // SAFETY: on OK, `head` and `tail` are buffers the library made,
        // `len` initialized bytes at `ptr`, live until freed below.
        let part = |b: &clangoffload_buffer| unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
        let mut text = part(&head).to_vec();
        // In pieces of three lines, to show that they join.
        for piece in data.chunks(3 * CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE) {
            text.extend_from_slice(&hex(piece));
        }
        text.extend_from_slice(part(&tail));
        // SAFETY: `head` is the library's buffer, freed once; `part`'s
        // slices of it are no longer used.
        unsafe { clangoffload_buffer_free(&mut head) };
        // SAFETY: `tail` likewise.
        unsafe { clangoffload_buffer_free(&mut tail) };
        Ok(String::from_utf8(text).unwrap())
    }

    fn hex(data: &[u8]) -> Vec<u8> {
        let mut needed = 0;
        // SAFETY: `data` is live for the call; NULL with capacity 0 asks
        // for the length, written to the local `needed`.
        let status = unsafe {
            clangoffload_wrap_hex(
                data.as_ptr(),
                data.len(),
                std::ptr::null_mut(),
                0,
                &mut needed,
            )
        };
        let expected = if data.is_empty() {
            S::Ok
        } else {
            S::BufferTooSmall
        };
        assert_eq!(status, expected);
        let mut out = vec![0u8; needed];
        let mut len = 0;
        // SAFETY: `data` is live for the call; `out` is writable for
        // `out.len()` bytes and `len` is a writable local.
        let status = unsafe {
            clangoffload_wrap_hex(
                data.as_ptr(),
                data.len(),
                out.as_mut_ptr(),
                out.len(),
                &mut len,
            )
        };
        assert_eq!((status, len), (S::Ok, needed));
        out
    }

    #[test]
    fn entry_kinds_are_offload_kinds() {
        assert_eq!(CLANGOFFLOAD_ENTRY_KIND_OPENMP, OffloadKind::OpenMp.raw());
        assert_eq!(CLANGOFFLOAD_ENTRY_KIND_CUDA, OffloadKind::Cuda.raw());
        assert_eq!(CLANGOFFLOAD_ENTRY_KIND_HIP, OffloadKind::Hip.raw());
        assert_eq!(CLANGOFFLOAD_ENTRY_KIND_SYCL, OffloadKind::Sycl.raw());
    }

    #[test]
    fn units_are_the_cores() {
        let bytes: Vec<u8> = (0..=99).collect();
        let package = include_bytes!("../../tests/fixtures/offload/single.offbin");
        for (kind, data) in [
            (CLANGOFFLOAD_ENTRY_KIND_HIP, &bytes[..]),
            (CLANGOFFLOAD_ENTRY_KIND_OPENMP, &package[..]),
        ] {
            let core = registration::c_source(
                &WrapOptions {
                    kind: OffloadKind::from_raw(kind),
                    triple: "x86_64-pc-linux-gnu",
                    input_name: "in.bin",
                },
                data,
            )
            .unwrap();
            let ours = unit(kind, "x86_64-pc-linux-gnu", data).unwrap();
            let mut hex_text = vec![0; hex_len(data.len()).unwrap()];
            write_hex(data, &mut hex_text).unwrap();
            let whole = [core.head.as_bytes(), &hex_text, core.tail.as_bytes()].concat();
            assert_eq!(ours.as_bytes(), whole);
        }
        let empty = unit(CLANGOFFLOAD_ENTRY_KIND_CUDA, "x86_64-pc-linux-gnu", b"").unwrap();
        assert!(empty.contains("= {\n  0\n};\n"));
    }

    #[test]
    fn refusals_carry_their_status_and_message() {
        let (status, text) =
            unit(CLANGOFFLOAD_ENTRY_KIND_HIP, "arm64-apple-macos", b"x").unwrap_err();
        assert_eq!(status, S::NotElfHost);
        assert_eq!(text, "Mach-O object format; only ELF hosts are supported");
        let (status, _) =
            unit(CLANGOFFLOAD_ENTRY_KIND_SYCL, "x86_64-pc-linux-gnu", b"x").unwrap_err();
        assert_eq!(status, S::UnsupportedOffloadKind);
        // A bare image: no tool could read its section again.
        let (status, text) = unit(
            CLANGOFFLOAD_ENTRY_KIND_OPENMP,
            "x86_64-pc-linux-gnu",
            b"\x7fELF",
        )
        .unwrap_err();
        assert_eq!(status, S::NotOffloadBinary);
        assert!(text.contains("package it first"), "{text}");
        let magic_only = [0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0];
        let (status, text) = unit(
            CLANGOFFLOAD_ENTRY_KIND_OPENMP,
            "x86_64-pc-linux-gnu",
            &magic_only,
        )
        .unwrap_err();
        assert_eq!(status, S::Truncated);
        assert!(
            text.starts_with("the input starts with the OffloadBinary magic"),
            "{text}"
        );
        // The fat binary kinds embed anything.
        assert!(unit(
            CLANGOFFLOAD_ENTRY_KIND_CUDA,
            "x86_64-pc-linux-gnu",
            &magic_only
        )
        .is_ok());

        let mut err = clangoffload_error::default();
        let triple = "x86_64-pc-windows-msvc";
        // SAFETY: `triple` is live for the call; `err` is a writable local.
        let status = unsafe {
            clangoffload_wrap_check_triple(triple.as_ptr().cast(), triple.len(), &mut err)
        };
        assert_eq!(status, S::NotElfHost);
        assert_eq!(
            message(&err),
            "COFF object format; only ELF hosts are supported"
        );
        let triple = "x86_64-unknown-linux-gnu";
        // SAFETY: `triple` is live for the call; NULL asks for no error
        // record.
        let status = unsafe {
            clangoffload_wrap_check_triple(
                triple.as_ptr().cast(),
                triple.len(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, S::Ok);
    }

    #[test]
    fn pointer_checks() {
        let mut len = 0;
        // SAFETY: the input is 2 live bytes; the NULL output with capacity
        // 4 is refused before anything is written; `len` is a writable local.
        let status =
            unsafe { clangoffload_wrap_hex(b"ab".as_ptr(), 2, std::ptr::null_mut(), 4, &mut len) };
        assert_eq!(status, S::NullArgument);
        let mut small = [0u8; 13];
        // SAFETY: the input is 2 live bytes; `small` is writable for its
        // length; `len` is a writable local.
        let status = unsafe {
            clangoffload_wrap_hex(b"ab".as_ptr(), 2, small.as_mut_ptr(), small.len(), &mut len)
        };
        assert_eq!((status, len, small), (S::BufferTooSmall, 14, [0; 13]));
        // SAFETY: as above, but a NULL length, refused before anything is
        // written.
        let status = unsafe {
            clangoffload_wrap_hex(
                b"ab".as_ptr(),
                2,
                small.as_mut_ptr(),
                13,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, S::NullArgument);
        // SAFETY: NULL options are refused before any other argument is
        // read or written.
        let status = unsafe {
            clangoffload_wrap_c_source(
                std::ptr::null(),
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, S::NullArgument);
    }
}
