//! The kpack split calls (`clangoffload_kpack_split_*`,
//! `clangoffload_kpack_writer_*`, `clangoffload_kpack_search_path`) on the
//! fixture hosts: the rewritten host rocm-kpack's, an archive written
//! through the writer rocm-kpack's byte for byte, the refusal's status and
//! message, and NULL arguments refused.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions,
    clippy::result_large_err
)]

mod common;

use clangoffload_capi::status::{clangoffload_error, clangoffload_status as S};
use clangoffload_capi::*;
use common::root;

fn bytes(view: clangoffload_bytes) -> Vec<u8> {
    if view.len == 0 {
        return Vec::new();
    }
    // SAFETY: a view the library gave of live memory.
    unsafe { std::slice::from_raw_parts(view.ptr, view.len) }.to_vec()
}

fn view(b: &[u8]) -> clangoffload_bytes {
    clangoffload_bytes {
        ptr: b.as_ptr(),
        len: b.len(),
    }
}

fn error() -> clangoffload_error {
    // SAFETY: an all-zero record is a valid one to be written.
    unsafe { std::mem::zeroed() }
}

fn message(err: &clangoffload_error) -> String {
    let bytes: Vec<u8> = err
        .message
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn search_path(group: &[u8], depth: usize) -> Vec<u8> {
    let mut len = 0;
    // SAFETY: a question for the length.
    let status = unsafe {
        clangoffload_kpack_search_path(view(group), depth, std::ptr::null_mut(), 0, &mut len)
    };
    assert_eq!(status, S::BufferTooSmall);
    let mut buf = vec![0u8; len];
    // SAFETY: buf is writable for its length.
    let status = unsafe {
        clangoffload_kpack_search_path(view(group), depth, buf.as_mut_ptr(), buf.len(), &mut len)
    };
    assert_eq!(status, S::Ok);
    buf
}

/// Splits `data` with keys `keys`: the handle, or the status and error.
fn split(
    data: &[u8],
    kernel_name: &[u8],
    keys: u32,
) -> Result<*mut clangoffload_kpack_split, (S, clangoffload_error)> {
    let path = search_path(b"test_lib", 1);
    let paths = [view(&path)];
    let options = clangoffload_kpack_split_options {
        kernel_name: view(kernel_name),
        search_paths: paths.as_ptr(),
        search_path_count: 1,
        keys,
        max_size: CLANGOFFLOAD_DEFAULT_LIMIT,
    };
    let (mut out, mut err) = (std::ptr::null_mut(), error());
    // SAFETY: every pointer is live for the call; data outlives the handle.
    let status = unsafe {
        clangoffload_kpack_split_host(data.as_ptr(), data.len(), &options, &mut out, &mut err)
    };
    if status == S::Ok {
        Ok(out)
    } else {
        Err((status, err))
    }
}

#[test]
fn a_host_split_and_its_archive_written_through_the_c_abi() {
    let dir = root().join("tests/fixtures/kpack");
    assert_eq!(
        search_path(b"test_lib", 1),
        b"../.kpack/test_lib_@GFXARCH@.kpack"
    );
    // libtwoz: two compressed bundles, decoded one at a time.
    let input = std::fs::read(dir.join("inputs/libtwoz.so")).unwrap();
    let handle = split(
        &input,
        b"pkg/stage/lib/libtwoz.so",
        CLANGOFFLOAD_KPACK_KEYS_STRICT,
    )
    .unwrap();
    let mut host = clangoffload_bytes {
        ptr: std::ptr::null(),
        len: 0,
    };
    // SAFETY: a live handle; out is writable.
    let status = unsafe { clangoffload_kpack_split_get_host(handle, &mut host) };
    assert_eq!(status, S::Ok);
    assert!(bytes(host) == std::fs::read(dir.join("none/lib/libtwoz.so")).unwrap());
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_kpack_split_code_object_count(handle) };
    assert_eq!(count, 4);
    // The gfx90a archive of libtwoz alone, through the writer.
    let arches = [view(b"gfx90a")];
    let options = clangoffload_kpack_archive_options {
        group_name: view(b"test_lib"),
        arch_family: view(b"gfx90a"),
        arches: arches.as_ptr(),
        arch_count: 1,
        scheme: CLANGOFFLOAD_KPACK_STORED,
        level: 3,
    };
    let (mut writer, mut prefix_len) = (std::ptr::null_mut(), 0u64);
    // SAFETY: every pointer is live for the call.
    let status = unsafe { clangoffload_kpack_writer_new(&options, &mut writer, &mut prefix_len) };
    assert_eq!(status, S::Ok);
    let mut archive = vec![0u8; prefix_len as usize];
    let mut entries = Vec::new();
    for i in 0..count {
        // SAFETY: a zeroed record is written by the call.
        let mut object: clangoffload_kpack_split_code_object = unsafe { std::mem::zeroed() };
        // SAFETY: a live handle; out is writable.
        let status = unsafe { clangoffload_kpack_split_get_code_object(handle, i, &mut object) };
        assert_eq!(status, S::Ok);
        let (mut code, mut err) = (view(&[]), error());
        // SAFETY: a live handle used by this call only.
        let status = unsafe { clangoffload_kpack_split_code(handle, i, &mut code, &mut err) };
        assert_eq!(status, S::Ok);
        assert_eq!(code.len as u64, object.size);
        if bytes(object.arch) != b"gfx90a" {
            continue;
        }
        let (id, prefix) = (bytes(object.id), b"pkg/stage".to_vec());
        let pairs = [
            clangoffload_kpack_metadata_pair {
                name: view(b"target"),
                value: view(&id),
            },
            clangoffload_kpack_metadata_pair {
                name: view(b"source_prefix"),
                value: view(&prefix),
            },
        ];
        let entry = clangoffload_kpack_new_entry {
            key: object.key,
            arch: object.arch,
            code,
            metadata: pairs.as_ptr(),
            metadata_count: 2,
        };
        let mut out = view(&[]);
        // SAFETY: a live writer; the entry's views are live.
        let status = unsafe { clangoffload_kpack_writer_add(writer, &entry, &mut out, &mut err) };
        assert_eq!(status, S::Ok);
        archive.extend_from_slice(&bytes(out));
        entries.push(bytes(object.key));
        // The same key and architecture again: refused.
        // SAFETY: as above.
        let status = unsafe { clangoffload_kpack_writer_add(writer, &entry, &mut out, &mut err) };
        assert_eq!(status, S::MalformedKpack);
    }
    assert_eq!(
        entries,
        [b"pkg/stage/lib/libtwoz.so#0", b"pkg/stage/lib/libtwoz.so#1"]
    );
    let (mut prefix, mut toc, mut err) = (view(&[]), view(&[]), error());
    // SAFETY: a live writer; outputs writable.
    let status =
        unsafe { clangoffload_kpack_writer_finish(writer, &mut prefix, &mut toc, &mut err) };
    assert_eq!(status, S::Ok);
    archive.extend_from_slice(&bytes(toc));
    let prefix = bytes(prefix);
    archive[..prefix.len()].copy_from_slice(&prefix);
    // SAFETY: a live writer, freed once.
    unsafe { clangoffload_kpack_writer_free(writer) };
    // What the archive holds: libtwoz's two gfx90a code objects, readable.
    let (mut kpack, mut err) = (std::ptr::null_mut(), error());
    // SAFETY: archive outlives the handle.
    let status =
        unsafe { clangoffload_kpack_parse(archive.as_ptr(), archive.len(), &mut kpack, &mut err) };
    assert_eq!(status, S::Ok);
    // SAFETY: a live handle.
    assert_eq!(unsafe { clangoffload_kpack_entry_count(kpack) }, 2);
    // SAFETY: the archive's handle, from the parse above, freed once.
    unsafe { clangoffload_kpack_free(kpack) };
    // SAFETY: the split's handle, freed once; nothing read from it is used
    // after.
    unsafe { clangoffload_kpack_split_free(handle) };
}

#[test]
fn refusals_and_null_arguments() {
    let dir = root().join("tests/fixtures/kpack");
    let input = std::fs::read(dir.join("inputs/libskew.so")).unwrap();
    let (status, err) =
        split(&input, b"lib/libskew.so", CLANGOFFLOAD_KPACK_KEYS_STRICT).unwrap_err();
    assert_eq!(status, S::KpackSplitRefused);
    assert_eq!(err.status, S::KpackSplitRefused as u32);
    let text = message(&err);
    assert!(text.contains("record 1's gfx906 code object"), "{text}");
    assert!(err.offset > 0);
    let handle = split(&input, b"lib/libskew.so", CLANGOFFLOAD_KPACK_KEYS_RECORD).unwrap();
    // SAFETY: a live handle, freed once.
    unsafe { clangoffload_kpack_split_free(handle) };
    assert_eq!(split(&input, b"x", 7).unwrap_err().0, S::InvalidArgument);
    let mut out = std::ptr::null_mut();
    // SAFETY: `input` is live for the call; the NULL options are refused
    // before anything is written to `out`.
    let status = unsafe {
        clangoffload_kpack_split_host(
            input.as_ptr(),
            input.len(),
            std::ptr::null(),
            &mut out,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, S::NullArgument);
    // SAFETY: a NULL handle is answered, not read.
    let count = unsafe { clangoffload_kpack_split_code_object_count(std::ptr::null()) };
    assert_eq!(count, 0);
    // SAFETY: a NULL handle is refused, not read.
    let status =
        unsafe { clangoffload_kpack_split_get_host(std::ptr::null(), std::ptr::null_mut()) };
    assert_eq!(status, S::NullArgument);
    let mut v = view(&[]);
    // SAFETY: a NULL handle is refused, not read; `v` is not written.
    let status = unsafe {
        clangoffload_kpack_split_code(std::ptr::null_mut(), 0, &mut v, std::ptr::null_mut())
    };
    assert_eq!(status, S::NullArgument);
    // SAFETY: NULL options are refused, not read; nothing is written.
    let status = unsafe {
        clangoffload_kpack_writer_new(
            std::ptr::null(),
            &mut std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, S::NullArgument);
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_kpack_split_free(std::ptr::null_mut()) };
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_kpack_writer_free(std::ptr::null_mut()) };
}
