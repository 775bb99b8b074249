//! The kpack calls on rocm-kpack's own archives (tests/fixtures/kpack):
//! every entry as its own reader lists it (listing.txt), each code object
//! read into the caller's buffer, and bad arguments and inputs refused.
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

fn bytes(view: clangoffload_capi::clangoffload_bytes) -> Vec<u8> {
    if view.len == 0 {
        return Vec::new();
    }
    // SAFETY: the library's view of the live input.
    unsafe { std::slice::from_raw_parts(view.ptr, view.len) }.to_vec()
}

fn error() -> clangoffload_error {
    // SAFETY: an all-zero record is a valid one to be written.
    unsafe { std::mem::zeroed() }
}

#[test]
fn every_entry_of_every_archive_reads_as_rocm_kpack_reads_it() {
    let dir = root().join("tests/fixtures/kpack");
    let listing = std::fs::read_to_string(dir.join("listing.txt")).unwrap();
    let mut archives: Vec<(&str, Vec<Vec<&str>>)> = Vec::new();
    for line in listing.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match archives.last_mut() {
            Some((path, lines)) if *path == fields[0] => lines.push(fields),
            _ => archives.push((fields[0], vec![fields])),
        }
    }
    assert_eq!(archives.len(), 8);
    for (path, lines) in archives {
        let data = std::fs::read(dir.join(path)).unwrap();
        let mut kpack = std::ptr::null_mut();
        let mut err = error();
        // SAFETY: the input outlives the handle, freed below.
        let status =
            unsafe { clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, &mut err) };
        assert_eq!(status, S::Ok, "{path}");
        let mut info: clangoffload_kpack_info = unsafe { std::mem::zeroed() };
        // SAFETY: live handle, writable record.
        assert_eq!(
            unsafe { clangoffload_kpack_get_info(kpack, &mut info) },
            S::Ok
        );
        let scheme = if path.starts_with("zstd") {
            CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL
        } else {
            CLANGOFFLOAD_KPACK_STORED
        };
        assert_eq!(info.scheme, scheme);
        assert_eq!(bytes(info.group_name), b"test_lib");
        assert_eq!((info.arch_count, info.entry_count), (1, lines.len()));
        let mut arch = clangoffload_capi::clangoffload_bytes {
            ptr: std::ptr::null(),
            len: 0,
        };
        // SAFETY: as above.
        assert_eq!(
            unsafe { clangoffload_kpack_get_arch(kpack, 0, &mut arch) },
            S::Ok
        );
        assert_eq!(bytes(arch), lines[0][2].as_bytes());
        assert_eq!(
            unsafe { clangoffload_kpack_get_arch(kpack, 1, &mut arch) },
            S::IndexOutOfRange
        );
        for (i, line) in lines.iter().enumerate() {
            let mut entry: clangoffload_kpack_entry = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            assert_eq!(
                unsafe { clangoffload_kpack_get_entry(kpack, i, &mut entry) },
                S::Ok
            );
            assert_eq!(bytes(entry.key), line[1].as_bytes());
            assert_eq!(bytes(entry.arch), line[2].as_bytes());
            assert_eq!(entry.ordinal, line[3].parse::<u64>().unwrap());
            assert_eq!(entry.original_size, line[4].parse::<u64>().unwrap());
            let mut buf = vec![0u8; entry.original_size as usize];
            let mut written = 0usize;
            // SAFETY: as above; `buf` writable for its length.
            let status = unsafe {
                clangoffload_kpack_read(
                    kpack,
                    i,
                    0,
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut written,
                    &mut err,
                )
            };
            assert_eq!(status, S::Ok, "{path} {i}");
            assert_eq!(written, buf.len());
            let md5 = clangoffload::compressed::truncated_md5(&buf);
            assert_eq!(format!("{md5:016x}"), line[5], "{path} {i}");
            // One byte short: refused, nothing written past the buffer.
            // SAFETY: as above.
            let status = unsafe {
                clangoffload_kpack_read(
                    kpack,
                    i,
                    0,
                    buf.as_mut_ptr(),
                    buf.len() - 1,
                    &mut written,
                    &mut err,
                )
            };
            assert_eq!(status, S::BufferTooSmall);
        }
        let mut entry: clangoffload_kpack_entry = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe {
            assert_eq!(
                clangoffload_kpack_get_entry(kpack, lines.len(), &mut entry),
                S::IndexOutOfRange
            );
            assert_eq!(
                clangoffload_kpack_get_entry(kpack, 0, std::ptr::null_mut()),
                S::NullArgument
            );
            clangoffload_kpack_free(kpack);
        }
    }
}

#[test]
fn what_is_no_archive_is_refused_where_it_fails() {
    let mut data =
        std::fs::read(root().join("tests/fixtures/kpack/none/.kpack/test_lib_gfx90a_xnack+.kpack"))
            .unwrap();
    let mut kpack = std::ptr::null_mut();
    let mut err = error();
    data[4] = 9;
    // SAFETY: the input is live for the call; nothing is kept on failure.
    let status =
        unsafe { clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, &mut err) };
    assert_eq!(status, S::UnsupportedKpackVersion);
    assert_eq!(err.offset, 4);
    assert!(kpack.is_null());
    // SAFETY: as above.
    let status = unsafe { clangoffload_kpack_parse(b"ELF".as_ptr(), 3, &mut kpack, &mut err) };
    assert_eq!(status, S::NotKpack);
    // SAFETY: NULL arguments only.
    unsafe {
        assert_eq!(
            clangoffload_kpack_parse(data.as_ptr(), data.len(), std::ptr::null_mut(), &mut err),
            S::NullArgument
        );
        assert_eq!(
            clangoffload_kpack_parse(std::ptr::null(), 1, &mut kpack, &mut err),
            S::NullArgument
        );
        clangoffload_kpack_free(std::ptr::null_mut());
    }
}
