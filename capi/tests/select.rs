//! `clangoffload_select` and its handle: the runtime's choice from each
//! container of a file, its code read (a compressed bundle's entry decoded),
//! nothing for another vendor's device, and bad arguments refused.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use clangoffload_capi::status::{clangoffload_error, clangoffload_status as S};
use clangoffload_capi::*;
use common::root;

fn bytes(view: clangoffload_bytes) -> Vec<u8> {
    if view.len == 0 {
        return Vec::new();
    }
    // SAFETY: the library's view, live while its handle is.
    unsafe { std::slice::from_raw_parts(view.ptr, view.len) }.to_vec()
}

fn error() -> clangoffload_error {
    // SAFETY: an all-zero record is a valid one to be written.
    unsafe { std::mem::zeroed() }
}

/// The selection of `data` for `device`, or the status and error.
fn select(data: &[u8], device: &str) -> Result<*mut clangoffload_selection, (S, String)> {
    let (mut out, mut err) = (std::ptr::null_mut(), error());
    let name = "dir/libtwoz.so";
    // SAFETY: every pointer is live for its length; `data` outlives the
    // handle, freed by the caller.
    let status = unsafe {
        clangoffload_select(
            data.as_ptr(),
            data.len(),
            name.as_ptr().cast(),
            name.len(),
            device.as_ptr().cast(),
            device.len(),
            0,
            &mut out,
            &mut err,
        )
    };
    if status == S::Ok {
        Ok(out)
    } else {
        let message = err
            .message
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Err((status, String::from_utf8(message).unwrap()))
    }
}

fn get(selection: *const clangoffload_selection, index: usize) -> clangoffload_selected {
    let mut out = std::mem::MaybeUninit::uninit();
    // SAFETY: the handle is live; `out` is writable.
    let status = unsafe { clangoffload_selection_get(selection, index, out.as_mut_ptr()) };
    assert_eq!(status, S::Ok);
    // SAFETY: written on success.
    unsafe { out.assume_init() }
}

#[test]
fn a_compressed_bundles_chosen_entry_is_decoded_alone_and_named_as_extract_names_it() {
    let data = std::fs::read(root().join("tests/fixtures/kpack/inputs/libtwoz.so")).unwrap();
    let selection = select(&data, "gfx906:xnack-").unwrap();
    // SAFETY: a live handle.
    assert_eq!(unsafe { clangoffload_selection_count(selection) }, 2);
    // SAFETY: a live handle.
    let failures = unsafe { clangoffload_selection_failure_count(selection) };
    assert_eq!(failures, 0);
    for index in 0..2 {
        let chosen = get(selection, index);
        assert_eq!(chosen.kind, clangoffload_container_kind::Compressed);
        assert_eq!(bytes(chosen.kind_name), b"compressed bundle");
        assert!(chosen.loads);
        assert_eq!(chosen.how, CLANGOFFLOAD_SELECT_NATIVE);
        assert_eq!(bytes(chosen.id), b"hipv4-amdgcn-amd-amdhsa--gfx906");
        let name = String::from_utf8(bytes(chosen.output_name)).unwrap();
        // Entry 1 of each (host, gfx906, gfx90a), counted across the file.
        assert_eq!(
            name,
            format!(
                "libtwoz.so.{}.hipv4-amdgcn-amd-amdhsa--gfx906",
                index * 3 + 1
            )
        );
        let mut code = clangoffload_buffer {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        let mut err = error();
        // SAFETY: a live handle; writable outputs.
        let status =
            unsafe { clangoffload_selection_read(selection, index, 0, 0, &mut code, &mut err) };
        assert_eq!(status, S::Ok);
        // SAFETY: the library's buffer, freed below.
        let code_bytes = unsafe { std::slice::from_raw_parts(code.ptr, code.len) };
        assert_eq!(&code_bytes[..4], b"\x7fELF");
        // SAFETY: released once.
        unsafe { clangoffload_buffer_free(&mut code) };
    }
    let mut out = std::mem::MaybeUninit::uninit();
    // SAFETY: a live handle; `out` is a writable record (not written: the
    // index is past the end).
    let status = unsafe { clangoffload_selection_get(selection, 2, out.as_mut_ptr()) };
    assert_eq!(status, S::IndexOutOfRange);
    // SAFETY: a live handle; the NULL record is refused, not written.
    let status = unsafe { clangoffload_selection_get(selection, 0, std::ptr::null_mut()) };
    assert_eq!(status, S::NullArgument);
    // SAFETY: released once.
    unsafe { clangoffload_selection_free(selection) };
}

#[test]
fn another_vendors_device_gets_nothing_and_a_reason() {
    let data = std::fs::read(root().join("tests/fixtures/kpack/inputs/libtwoz.so")).unwrap();
    let selection = select(&data, "sm_90").unwrap();
    let nothing = get(selection, 0);
    assert!(!nothing.loads);
    assert_eq!(nothing.how, 0);
    assert!(String::from_utf8(bytes(nothing.reason))
        .unwrap()
        .contains("NVIDIA"));
    let mut code = clangoffload_buffer {
        ptr: std::ptr::null_mut(),
        len: 0,
    };
    // SAFETY: a live handle; writable outputs.
    let status =
        unsafe { clangoffload_selection_read(selection, 0, 0, 0, &mut code, std::ptr::null_mut()) };
    assert_eq!(status, S::NotFound);
    // SAFETY: released once.
    unsafe { clangoffload_selection_free(selection) };
}

#[test]
fn bad_devices_inputs_and_arguments_are_refused() {
    let data = std::fs::read(root().join("tests/fixtures/kpack/inputs/libtwoz.so")).unwrap();
    assert_eq!(select(&data, "gfx9999").unwrap_err().0, S::NotFound);
    assert_eq!(select(&data, "sm_x").unwrap_err().0, S::NotFound);
    let (status, err) = select(b"not a container at all", "gfx906").unwrap_err();
    assert_ne!(status, S::Ok);
    assert!(!err.is_empty());
    let device = "gfx906";
    // SAFETY: NULL out with valid inputs.
    let status = unsafe {
        clangoffload_select(
            data.as_ptr(),
            data.len(),
            std::ptr::null(),
            0,
            device.as_ptr().cast(),
            device.len(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, S::NullArgument);
    // SAFETY: NULL handles are answered, not read.
    assert_eq!(unsafe { clangoffload_selection_count(std::ptr::null()) }, 0);
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_selection_free(std::ptr::null_mut()) };
}
