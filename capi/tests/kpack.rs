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
        // SAFETY: all zeros is a valid `clangoffload_kpack_info` (integers
        // and views whose NULL pointers are not read).
        let mut info: clangoffload_kpack_info = unsafe { std::mem::zeroed() };
        // SAFETY: live handle, writable record.
        let status = unsafe { clangoffload_kpack_get_info(kpack, &mut info) };
        assert_eq!(status, S::Ok);
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
        // SAFETY: live handle; `arch` is a writable view.
        let status = unsafe { clangoffload_kpack_get_arch(kpack, 0, &mut arch) };
        assert_eq!(status, S::Ok);
        assert_eq!(bytes(arch), lines[0][2].as_bytes());
        // SAFETY: live handle; `arch` is a writable view.
        let status = unsafe { clangoffload_kpack_get_arch(kpack, 1, &mut arch) };
        assert_eq!(status, S::IndexOutOfRange);
        for (i, line) in lines.iter().enumerate() {
            // SAFETY: all zeros is a valid `clangoffload_kpack_entry`
            // (integers and views whose NULL pointers are not read).
            let mut entry: clangoffload_kpack_entry = unsafe { std::mem::zeroed() };
            // SAFETY: live handle; `entry` is a writable record.
            let status = unsafe { clangoffload_kpack_get_entry(kpack, i, &mut entry) };
            assert_eq!(status, S::Ok);
            assert_eq!(bytes(entry.key), line[1].as_bytes());
            assert_eq!(bytes(entry.arch), line[2].as_bytes());
            assert_eq!(entry.ordinal, line[3].parse::<u64>().unwrap());
            assert_eq!(entry.original_size, line[4].parse::<u64>().unwrap());
            let mut id = clangoffload_capi::clangoffload_bytes {
                ptr: std::ptr::null(),
                len: 0,
            };
            // SAFETY: live handle; `id` is a writable view.
            let status = unsafe { clangoffload_kpack_entry_id(kpack, i, &mut id) };
            assert_eq!(status, S::Ok);
            assert_eq!(
                bytes(id),
                bytes(entry.target),
                "the ID is the target where stated"
            );
            let mut buf = vec![0u8; entry.original_size as usize];
            let mut written = 0usize;
            // SAFETY: live handle; `buf` writable for its length; `written`
            // and `err` writable locals.
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
            // SAFETY: live handle; `buf` writable for more than the length
            // given; `written` and `err` writable locals.
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
        // SAFETY: all zeros is a valid `clangoffload_kpack_entry` (integers
        // and views whose NULL pointers are not read).
        let mut entry: clangoffload_kpack_entry = unsafe { std::mem::zeroed() };
        // SAFETY: live handle; `entry` is a writable record.
        let status = unsafe { clangoffload_kpack_get_entry(kpack, lines.len(), &mut entry) };
        assert_eq!(status, S::IndexOutOfRange);
        // SAFETY: live handle; the NULL record is refused, not written.
        let status = unsafe { clangoffload_kpack_get_entry(kpack, 0, std::ptr::null_mut()) };
        assert_eq!(status, S::NullArgument);
        // SAFETY: the handle from the parse above, freed once.
        unsafe { clangoffload_kpack_free(kpack) };
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
    // SAFETY: the input is live for the call; nothing is kept on failure.
    let status = unsafe { clangoffload_kpack_parse(b"ELF".as_ptr(), 3, &mut kpack, &mut err) };
    assert_eq!(status, S::NotKpack);
    // SAFETY: the NULL output is refused before anything is read; `err`
    // is writable.
    let status = unsafe {
        clangoffload_kpack_parse(data.as_ptr(), data.len(), std::ptr::null_mut(), &mut err)
    };
    assert_eq!(status, S::NullArgument);
    // SAFETY: the NULL input is refused before anything is read; `kpack`
    // and `err` are writable.
    let status = unsafe { clangoffload_kpack_parse(std::ptr::null(), 1, &mut kpack, &mut err) };
    assert_eq!(status, S::NullArgument);
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_kpack_free(std::ptr::null_mut()) };
}

fn parse(path: &str, data: &[u8]) -> *mut clangoffload_kpack {
    let mut kpack = std::ptr::null_mut();
    let mut err = error();
    // SAFETY: the caller keeps `data` alive until the handle is freed.
    let status =
        unsafe { clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, &mut err) };
    assert_eq!(status, S::Ok, "{path}");
    kpack
}

fn view(bytes: &[u8]) -> clangoffload_capi::clangoffload_bytes {
    clangoffload_capi::clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

/// Resolution through the C ABI: the xnack variant's archive shadows the
/// base one under the shipped loader (error 5), the fall-through loader
/// finds the base one's entry; disabled gives 8, no archive 13; CLR's
/// generic targets.
#[test]
fn resolution_through_the_c_abi_is_the_runtimes() {
    let dir = root().join("tests/fixtures/kpack/zstd/.kpack");
    let names = ["test_lib_gfx90a_xnack-.kpack", "test_lib_gfx90a.kpack"];
    let data: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(dir.join(n)).unwrap())
        .collect();
    let handles: Vec<*const clangoffload_kpack> = names
        .iter()
        .zip(&data)
        .map(|(n, d)| parse(n, d).cast_const())
        .collect();
    let arches = [view(b"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-")];
    let key = b"pkg/stage/lib/libtwo.so#0";
    let resolve = |handles: &[*const clangoffload_kpack], flags| {
        // SAFETY: all zeros is a valid `clangoffload_kpack_resolution`
        // (integers only).
        let mut out: clangoffload_kpack_resolution = unsafe { std::mem::zeroed() };
        // SAFETY: live handles, views and record.
        let status = unsafe {
            clangoffload_kpack_resolve(
                handles.as_ptr(),
                handles.len(),
                view(key),
                arches.as_ptr(),
                arches.len(),
                flags,
                &mut out,
            )
        };
        (status, out)
    };
    let (status, first) = resolve(&handles, CLANGOFFLOAD_KPACK_FIRST_CANDIDATE);
    assert_eq!((status, first.kpack_error), (S::Ok, 5));
    let (status, fall) = resolve(&handles, 0);
    assert_eq!((status, fall.kpack_error, fall.archive), (S::Ok, 0, 1));
    // SAFETY: all zeros is a valid `clangoffload_kpack_entry` (integers and
    // views whose NULL pointers are not read).
    let mut entry: clangoffload_kpack_entry = unsafe { std::mem::zeroed() };
    // SAFETY: live handle, writable record.
    let status = unsafe { clangoffload_kpack_get_entry(handles[1], fall.entry, &mut entry) };
    assert_eq!(status, S::Ok);
    assert_eq!(
        (bytes(entry.key), bytes(entry.arch)),
        (key.to_vec(), b"gfx90a".to_vec())
    );
    assert_eq!(
        resolve(&handles, CLANGOFFLOAD_KPACK_DISABLED).1.kpack_error,
        8
    );
    assert_eq!(resolve(&[], 0).1.kpack_error, 13);
    assert_eq!(resolve(&handles, 4).0, S::InvalidArgument);
    let generic = |isa: &[u8]| {
        let mut buf = [0u8; 64];
        let mut len = 0usize;
        // SAFETY: the view is live; buf writable for its length.
        let status = unsafe {
            clangoffload_kpack_generic_target(view(isa), buf.as_mut_ptr(), buf.len(), &mut len)
        };
        (status, buf[..len.min(64)].to_vec())
    };
    assert_eq!(
        generic(b"gfx906:xnack-"),
        (S::Ok, b"gfx9-generic:xnack-".to_vec())
    );
    assert_eq!(generic(b"gfx90a").0, S::NotFound);
    for handle in handles {
        // SAFETY: each made above, freed once.
        unsafe { clangoffload_kpack_free(handle.cast_mut()) };
    }
}

#[test]
fn a_choice_is_generic_by_the_librarys_rule() {
    let of = |b: &'static [u8]| clangoffload_bytes {
        ptr: b.as_ptr(),
        len: b.len(),
    };
    let chose = |isa: &'static [u8], arch: &'static [u8]| {
        let mut generic = false;
        // SAFETY: views of static bytes; `generic` writable.
        let status = unsafe { clangoffload_kpack_chose_generic(of(isa), of(arch), &mut generic) };
        assert_eq!(status, S::Ok);
        generic
    };
    assert!(chose(b"gfx1031", b"gfx10-3-generic"));
    assert!(!chose(b"gfx1031", b"gfx1031"));
    assert!(!chose(b"gfx90a:xnack+", b"gfx90a:xnack+"));
    // SAFETY: a NULL `out`.
    let status =
        unsafe { clangoffload_kpack_chose_generic(of(b"gfx1031"), of(b"x"), std::ptr::null_mut()) };
    assert_eq!(status, S::NullArgument);
}
