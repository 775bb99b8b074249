//! `clangoffload_sparse_elf_*`: a file read range by range as the library
//! asks. A small file keeps every section whole, so its image is the file.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::ptr::null_mut;

use clangoffload_capi::*;

mod common;

use common::fixture;

/// Reads `file` through the C calls, `chunk` bytes a piece; the image's
/// status and bytes.
fn read(file: &[u8], chunk: usize) -> (clangoffload_status, Vec<u8>) {
    let mut handle = null_mut();
    // SAFETY: `handle` is writable.
    let status = unsafe { clangoffload_sparse_elf_new(file.len() as u64, &mut handle) };
    assert_eq!(status, clangoffload_status::Ok);
    let mut asked = 0;
    loop {
        let (mut offset, mut len) = (0u64, 0u64);
        // SAFETY: a live handle; both numbers writable.
        match unsafe { clangoffload_sparse_elf_missing(handle, &mut offset, &mut len) } {
            clangoffload_status::Ok => {}
            clangoffload_status::End => break,
            other => panic!("{other:?}"),
        }
        assert!(len > 0 && offset + len <= file.len() as u64);
        if asked == 0 {
            // The image is not made while bytes are missing.
            let mut view = clangoffload_bytes {
                ptr: std::ptr::null(),
                len: 0,
            };
            // SAFETY: a live handle; `view` writable.
            let early = unsafe { clangoffload_sparse_elf_image(handle, &mut view) };
            assert_eq!(early, clangoffload_status::InvalidArgument);
        }
        let end = (offset as usize + chunk).min((offset + len) as usize);
        let piece = &file[offset as usize..end];
        // SAFETY: a live handle; the piece readable.
        let status =
            unsafe { clangoffload_sparse_elf_give(handle, offset, piece.as_ptr(), piece.len()) };
        assert_eq!(status, clangoffload_status::Ok);
        asked += 1;
        assert!(asked < 1 << 20, "the reading does not end");
    }
    let mut view = clangoffload_bytes {
        ptr: std::ptr::null(),
        len: 0,
    };
    // SAFETY: a live handle; `view` writable.
    let status = unsafe { clangoffload_sparse_elf_image(handle, &mut view) };
    let image = if status == clangoffload_status::Ok {
        // SAFETY: the view lives until the handle is freed, below.
        unsafe { std::slice::from_raw_parts(view.ptr, view.len) }.to_vec()
    } else {
        Vec::new()
    };
    // SAFETY: the handle, freed once.
    unsafe { clangoffload_sparse_elf_free(handle) };
    (status, image)
}

#[test]
fn small_elf_files_read_range_by_range_are_themselves() {
    for path in [
        "cuda/nvcc-two-tu.so",
        "cuda/clang-multi-ptx.o",
        "multi/libhip-compressed3.so",
        "offload/hip-rdc-new-driver.o",
        "kpack/inputs/libxnack.so",
    ] {
        let file = fixture(path);
        for chunk in [7, 4096, 1 << 20] {
            let (status, image) = read(&file, chunk);
            assert_eq!(status, clangoffload_status::Ok, "{path}");
            // Every section is small: kept whole. Bytes in no section
            // (padding between them) are not asked for.
            assert_eq!(image.len(), file.len());
            let differ = image.iter().zip(&file).filter(|(a, b)| a != b).count();
            assert!(differ * 20 < file.len(), "{path}: {differ} bytes differ");
        }
    }
}

#[test]
fn other_files_are_refused_after_their_header() {
    let bundle = fixture("offload/cuda-ptx.offbin");
    let (status, image) = read(&bundle, 4096);
    assert_eq!(status, clangoffload_status::NotElf);
    assert!(image.is_empty());
    // The threshold the CLI reads large files by.
    assert_eq!(CLANGOFFLOAD_COVERAGE_SPARSE_ABOVE, 16 << 20);
    // NULL arguments.
    // SAFETY: NULL is refused before any use.
    let status = unsafe { clangoffload_sparse_elf_new(1, null_mut()) };
    assert_eq!(status, clangoffload_status::NullArgument);
    // SAFETY: freeing NULL does nothing.
    unsafe { clangoffload_sparse_elf_free(null_mut()) };
}
