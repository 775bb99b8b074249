//! `clangoffload_coverage_*`: many inputs for one device list, the default
//! list growing with each file's targets, files read again where a later
//! one brought a device of their vendor; and its argument checks.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::mem::MaybeUninit;
use std::ptr::{null, null_mut};

use clangoffload_capi::*;
use common::{fixture, open_archive, Opened};

const INPUTS: [&str; 3] = [
    "cuda/clang-sm80.o",
    "llvm22/clang-hip.fatbin",
    "cuda/clang-sm70-sm80.o",
];

fn new(devices: &[&str], flags: u32) -> (clangoffload_status, *mut clangoffload_coverage) {
    let views: Vec<clangoffload_bytes> = devices.iter().map(|d| view(d.as_bytes())).collect();
    let mut handle = null_mut();
    // SAFETY: the views are live; `handle` writable.
    let status =
        unsafe { clangoffload_coverage_new(views.as_ptr(), views.len(), flags, 0, &mut handle) };
    (status, handle)
}

fn view(bytes: &[u8]) -> clangoffload_bytes {
    clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

fn text(v: clangoffload_bytes) -> String {
    // SAFETY: a view of the live handle.
    String::from_utf8(unsafe { std::slice::from_raw_parts(v.ptr, v.len) }.to_vec()).unwrap()
}

/// Adds input `name` (again: `Some(number)`).
fn add(
    handle: *mut clangoffload_coverage,
    again: Option<usize>,
    name: &str,
) -> clangoffload_status {
    let data = fixture(name);
    match again {
        // SAFETY: a live handle; data and name live for the call.
        Some(n) => unsafe {
            clangoffload_coverage_add_again(
                handle,
                n,
                data.as_ptr(),
                data.len(),
                name.as_ptr().cast(),
                name.len(),
                None,
                null_mut(),
            )
        },
        None => {
            let mut number = usize::MAX;
            // SAFETY: as above; `number` writable.
            let status = unsafe {
                clangoffload_coverage_add(
                    handle,
                    data.as_ptr(),
                    data.len(),
                    name.as_ptr().cast(),
                    name.len(),
                    None,
                    null_mut(),
                    &mut number,
                )
            };
            assert_ne!(number, usize::MAX);
            status
        }
    }
}

fn pending(handle: *mut clangoffload_coverage) -> Option<usize> {
    let mut input = 0;
    // SAFETY: a live handle; `input` writable.
    match unsafe { clangoffload_coverage_pending(handle, &mut input) } {
        clangoffload_status::Ok => Some(input),
        clangoffload_status::NotFound => None,
        other => panic!("{other:?}"),
    }
}

fn devices(handle: *const clangoffload_coverage) -> Vec<String> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_coverage_device_count(handle) };
    (0..count)
        .map(|i| {
            let mut out = MaybeUninit::uninit();
            // SAFETY: a live handle; `out` writable.
            let status = unsafe { clangoffload_coverage_get_device(handle, i, out.as_mut_ptr()) };
            assert_eq!(status, clangoffload_status::Ok);
            // SAFETY: written on OK.
            text(unsafe { out.assume_init() })
        })
        .collect()
}

fn cell(
    handle: *const clangoffload_coverage,
    file: usize,
    device: usize,
) -> (bool, String, String) {
    let mut out = MaybeUninit::uninit();
    // SAFETY: a live handle; `out` writable.
    let status = unsafe { clangoffload_coverage_get_cell(handle, file, device, out.as_mut_ptr()) };
    assert_eq!(status, clangoffload_status::Ok, "{file} {device}");
    // SAFETY: written on OK.
    let cell = unsafe { out.assume_init() };
    (cell.loads, text(cell.entries), text(cell.reason))
}

#[test]
fn the_default_list_grows_and_earlier_files_of_the_vendor_are_read_again() {
    let (status, handle) = new(&[], CLANGOFFLOAD_COVERAGE_CURRENT_GPUS);
    assert_eq!(status, clangoffload_status::Ok);
    for name in INPUTS {
        assert_eq!(add(handle, None, name), clangoffload_status::Ok);
    }
    let listed = devices(handle);
    assert_eq!(listed.last().unwrap(), "sm_70");
    assert!(listed.iter().any(|d| d == "gfx90a:xnack+"));
    // Only the sm_80 file holds NVIDIA code and lacks sm_70.
    assert_eq!(pending(handle), Some(0));
    assert_eq!(add(handle, Some(0), INPUTS[0]), clangoffload_status::Ok);
    assert_eq!(pending(handle), None);
    // SAFETY: a live handle.
    assert_eq!(unsafe { clangoffload_coverage_file_count(handle) }, 3);
    let sm70 = listed.len() - 1;
    // sm_80 code does not run on sm_70; the HIP file holds no NVIDIA code;
    // the last file's sm_70 cubin loads.
    let (loads, _, reason) = cell(handle, 0, sm70);
    assert!(!loads && !reason.is_empty());
    assert_eq!(cell(handle, 1, sm70).2, "no NVIDIA code in the file");
    let (loads, entries, _) = cell(handle, 2, sm70);
    assert!(loads && entries.contains("sm_70"), "{entries}");
    // SAFETY: releases the handle once.
    unsafe { clangoffload_coverage_free(handle) };
}

#[test]
fn devices_given_are_the_list() {
    let (status, handle) = new(&["sm_70", "gfx90a"], CLANGOFFLOAD_COVERAGE_VERIFY);
    assert_eq!(status, clangoffload_status::Ok);
    for name in INPUTS {
        assert_eq!(add(handle, None, name), clangoffload_status::Ok);
    }
    assert_eq!(devices(handle), ["sm_70", "gfx90a"]);
    assert_eq!(pending(handle), None);
    // The sm_70 cubin loads on sm_70; gfx90a:xnack+ code does not on a
    // gfx90a whose XNACK mode is not known to be on.
    assert!(cell(handle, 2, 0).0);
    assert!(!cell(handle, 1, 1).0);
    // SAFETY: releases the handle once.
    unsafe { clangoffload_coverage_free(handle) };
}

#[test]
fn arguments_are_checked() {
    // Devices with the default list, an unknown flag, an unknown device.
    assert_eq!(
        new(&["sm_80"], CLANGOFFLOAD_COVERAGE_CURRENT_GPUS).0,
        clangoffload_status::InvalidArgument
    );
    assert_eq!(new(&[], 8).0, clangoffload_status::InvalidArgument);
    assert_eq!(new(&["gfx9999"], 0).0, clangoffload_status::NotFound);
    // SAFETY: NULL `out`.
    let status = unsafe { clangoffload_coverage_new(null(), 0, 0, 0, null_mut()) };
    assert_eq!(status, clangoffload_status::NullArgument);
    // SAFETY: a NULL handle.
    assert_eq!(unsafe { clangoffload_coverage_device_count(null()) }, 0);
    let mut input = 0;
    // SAFETY: a NULL handle; `input` writable.
    let status = unsafe { clangoffload_coverage_pending(null_mut(), &mut input) };
    assert_eq!(status, clangoffload_status::NullArgument);
    // SAFETY: a NULL handle and empty input.
    let status = unsafe {
        clangoffload_coverage_add(
            null_mut(),
            null(),
            0,
            null(),
            0,
            None,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(status, clangoffload_status::NullArgument);
    let (_, handle) = new(&[], CLANGOFFLOAD_COVERAGE_CURRENT_GPUS);
    // An input never added; a misaligned number; a device past the last.
    assert_eq!(
        add(handle, Some(0), INPUTS[0]),
        clangoffload_status::IndexOutOfRange
    );
    let mut numbers = [0usize; 2];
    let misaligned = numbers
        .as_mut_ptr()
        .cast::<u8>()
        .wrapping_add(1)
        .cast::<usize>();
    // SAFETY: a live handle; the number's pointer is checked, not written.
    let status = unsafe {
        clangoffload_coverage_add(handle, null(), 0, null(), 0, None, null_mut(), misaligned)
    };
    assert_eq!(status, clangoffload_status::InvalidArgument);
    // SAFETY: a live handle.
    assert_eq!(unsafe { clangoffload_coverage_file_count(handle) }, 0);
    let mut out = MaybeUninit::uninit();
    let past = devices(handle).len();
    // SAFETY: a live handle; `out` writable.
    let status = unsafe { clangoffload_coverage_get_device(handle, past, out.as_mut_ptr()) };
    assert_eq!(status, clangoffload_status::IndexOutOfRange);
    // SAFETY: releases the handle once.
    unsafe { clangoffload_coverage_free(handle) };
}

#[test]
fn a_split_host_is_covered_through_its_archives() {
    let dir = common::root().join("tests/fixtures/kpack/zstd/lib");
    let dir = std::fs::canonicalize(dir).unwrap();
    let host = std::fs::read(dir.join("libtwo.so")).unwrap();
    let name = "libtwo.so";
    let (status, handle) = new(&["gfx906", "gfx1100", "sm_80"], 0);
    assert_eq!(status, clangoffload_status::Ok);
    let mut opened = Opened::new();
    let dir_text = dir.to_str().unwrap();
    let add = |data: &[u8], opened: &mut Opened, flags: u32| {
        let mut input = usize::MAX;
        // SAFETY: a live handle; every view live for the call; the context
        // is the list `open_archive` fills.
        let status = unsafe {
            clangoffload_coverage_add_split_host(
                handle,
                data.as_ptr(),
                data.len(),
                name.as_ptr().cast(),
                name.len(),
                view(dir_text.as_bytes()),
                null(),
                flags,
                Some(open_archive),
                std::ptr::from_mut(opened).cast(),
                &mut input,
            )
        };
        (status, input)
    };
    assert_eq!(add(&host, &mut opened, 0), (clangoffload_status::Ok, 0));
    assert!(!opened.is_empty());
    assert_eq!(pending(handle), None);
    let (loads, entries, reason) = cell(handle, 0, 0);
    assert!(
        loads && entries == "hipv4-amdgcn-amd-amdhsa--gfx906",
        "{entries}"
    );
    assert!(reason.contains("test_lib_gfx906.kpack"), "{reason}");
    let (loads, _, reason) = cell(handle, 0, 1);
    assert!(!loads && reason.starts_with("error 13:"), "{reason}");
    assert_eq!(cell(handle, 0, 2).2, "no NVIDIA code in the file");
    // Not a split host: nothing added; an unknown flag; no reader.
    let plain = fixture("kpack/inputs/libone.so");
    assert_eq!(add(&plain, &mut opened, 0).0, clangoffload_status::NotFound);
    assert_eq!(
        add(&host, &mut opened, 4).0,
        clangoffload_status::InvalidArgument
    );
    // SAFETY: a live handle; no reader.
    let status = unsafe {
        clangoffload_coverage_add_split_host(
            handle,
            host.as_ptr(),
            host.len(),
            null(),
            0,
            view(b""),
            null(),
            0,
            None,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(status, clangoffload_status::NullArgument);
    // SAFETY: a live handle.
    assert_eq!(unsafe { clangoffload_coverage_file_count(handle) }, 1);
    // SAFETY: releases the handle once.
    unsafe { clangoffload_coverage_free(handle) };
}
