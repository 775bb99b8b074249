//! `clangoffload_select_split_host` and `clangoffload_select_kpack`: each
//! `HIPK` record of a split host, or each key of an archive alone, and the
//! code object the runtime's resolution gives a device (the archive it is
//! in, named by path, and its entry there, read back through the archive
//! calls); errors as the runtime's codes; each path opened once; and the
//! argument checks.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::ptr::{null, null_mut};

use clangoffload_capi::status::clangoffload_status as S;
use clangoffload_capi::*;
use common::{open_archive, root, Opened};

fn view(bytes: &[u8]) -> clangoffload_bytes {
    clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

fn bytes(v: clangoffload_bytes) -> Vec<u8> {
    if v.len == 0 {
        return Vec::new();
    }
    // SAFETY: a view of a live handle or input.
    unsafe { std::slice::from_raw_parts(v.ptr, v.len) }.to_vec()
}

fn text(v: clangoffload_bytes) -> String {
    String::from_utf8(bytes(v)).unwrap()
}

/// A choice copied out of its handle.
struct Choice {
    has_offset: bool,
    loads: bool,
    how: u32,
    entry: usize,
    kpack_error: u32,
    unreadable: bool,
    key: String,
    id: Vec<u8>,
    path: String,
    reason: String,
}

/// Every choice of a selection handle, which is then freed.
fn choices(handle: *mut clangoffload_kpack_selection) -> Vec<Choice> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_kpack_selection_count(handle) };
    let mut out = Vec::new();
    for i in 0..count {
        let mut choice = std::mem::MaybeUninit::uninit();
        // SAFETY: a live handle; `choice` writable.
        let status = unsafe { clangoffload_kpack_selection_get(handle, i, choice.as_mut_ptr()) };
        assert_eq!(status, S::Ok);
        // SAFETY: written on OK.
        let c = unsafe { choice.assume_init() };
        out.push(Choice {
            has_offset: c.has_offset,
            loads: c.loads,
            how: c.how,
            entry: c.entry,
            kpack_error: c.kpack_error,
            unreadable: c.unreadable,
            key: text(c.key),
            id: bytes(c.id),
            path: text(c.path),
            reason: text(c.reason),
        });
    }
    let mut past = std::mem::MaybeUninit::uninit();
    // SAFETY: a live handle; `past` writable.
    let status = unsafe { clangoffload_kpack_selection_get(handle, count, past.as_mut_ptr()) };
    assert_eq!(status, S::IndexOutOfRange);
    // SAFETY: a live handle, freed once (its views are copied above).
    unsafe { clangoffload_kpack_selection_free(handle) };
    out
}

/// The split host `libtwo.so` selected for `device` with `flags`.
fn split_host(
    host: &[u8],
    dir: &str,
    device: &str,
    flags: u32,
    opened: &mut Opened,
) -> (S, *mut clangoffload_kpack_selection) {
    let mut handle = null_mut();
    // SAFETY: every view live for the call; the context is the list
    // `open_archive` fills; `handle` writable.
    let status = unsafe {
        clangoffload_select_split_host(
            host.as_ptr(),
            host.len(),
            device.as_ptr().cast(),
            device.len(),
            view(dir.as_bytes()),
            null(),
            flags,
            Some(open_archive),
            std::ptr::from_mut(opened).cast(),
            &mut handle,
        )
    };
    (status, handle)
}

/// Entry `entry` of the archive in `data`: its ID.
fn entry_id(data: &[u8], entry: usize) -> Vec<u8> {
    let mut kpack = null_mut();
    // SAFETY: `data` outlives the handle; `kpack` writable; no error record.
    let status =
        unsafe { clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, null_mut()) };
    assert_eq!(status, S::Ok);
    let mut id = view(b"");
    // SAFETY: a live handle; `id` writable.
    let status = unsafe { clangoffload_kpack_entry_id(kpack, entry, &mut id) };
    assert_eq!(status, S::Ok);
    let id = bytes(id);
    // SAFETY: made above, freed once.
    unsafe { clangoffload_kpack_free(kpack) };
    id
}

#[test]
fn each_record_of_a_split_host_names_the_code_object_it_loads() {
    let dir = std::fs::canonicalize(root().join("tests/fixtures/kpack/zstd/lib")).unwrap();
    let host = std::fs::read(dir.join("libtwo.so")).unwrap();
    let dir = dir.to_str().unwrap();
    let mut opened = Opened::new();
    let (status, handle) = split_host(&host, dir, "gfx906", 0, &mut opened);
    assert_eq!(status, S::Ok);
    let got = choices(handle);
    assert!(got.len() >= 2, "{}", got.len());
    for (k, choice) in got.iter().enumerate() {
        let reason = &choice.reason;
        assert!(choice.loads && choice.has_offset, "{reason}");
        assert_eq!(choice.how, CLANGOFFLOAD_SELECT_NATIVE);
        assert!(choice.key.ends_with(&format!("#{k}")));
        let path = &choice.path;
        assert!(path.ends_with("/.kpack/test_lib_gfx906.kpack"), "{path}");
        assert!(
            reason.starts_with("native: the gfx906 code object of '"),
            "{reason}"
        );
        // The entry named is the code object's, in the bytes the path gave.
        let (_, data) = opened.iter().find(|(p, _)| p == path).unwrap();
        assert_eq!(entry_id(data, choice.entry), choice.id);
        assert_eq!(choice.id, b"hipv4-amdgcn-amd-amdhsa--gfx906");
    }
    // Each path once, whatever the records asking.
    let mut paths: Vec<&String> = opened.iter().map(|(p, _)| p).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), opened.len());
    // No archive for gfx1100: the runtime's error 13, for every record.
    let (status, handle) = split_host(&host, dir, "gfx1100", 0, &mut Opened::new());
    assert_eq!(status, S::Ok);
    for choice in choices(handle) {
        assert!(!choice.loads && !choice.unreadable);
        assert_eq!(choice.kpack_error, 13);
        assert!(choice.reason.starts_with("error 13:"), "{}", choice.reason);
        assert!(choice.path.is_empty() && choice.id.is_empty());
    }
    // The fixtures' variant archives are named with `_` for `:`: an xnack+
    // device finds only the base archive, under either loader.
    for flags in [0, CLANGOFFLOAD_KPACK_FIRST_CANDIDATE] {
        let (status, handle) = split_host(&host, dir, "gfx90a:xnack+", flags, &mut Opened::new());
        assert_eq!(status, S::Ok);
        for choice in choices(handle) {
            assert!(choice.loads, "{}", choice.reason);
            assert_eq!(choice.id, b"hipv4-amdgcn-amd-amdhsa--gfx90a");
            assert!(choice.path.ends_with("/test_lib_gfx90a.kpack"));
        }
    }
}

#[test]
fn split_host_arguments_are_checked() {
    let dir = root().join("tests/fixtures/kpack/zstd/lib");
    let host = std::fs::read(dir.join("libtwo.so")).unwrap();
    let dir = dir.to_str().unwrap();
    let plain = std::fs::read(root().join("tests/fixtures/kpack/inputs/libone.so")).unwrap();
    let mut opened = Opened::new();
    assert_eq!(
        split_host(&plain, dir, "gfx906", 0, &mut opened).0,
        S::NotFound
    );
    assert_eq!(
        split_host(&host, dir, "gfx906", 4, &mut opened).0,
        S::InvalidArgument
    );
    let call = |open: clangoffload_kpack_open_fn, out: *mut *mut clangoffload_kpack_selection| {
        // SAFETY: live views; a NULL reader or out is what is checked.
        unsafe {
            clangoffload_select_split_host(
                host.as_ptr(),
                host.len(),
                b"gfx906".as_ptr().cast(),
                6,
                view(dir.as_bytes()),
                null(),
                0,
                open,
                null_mut(),
                out,
            )
        }
    };
    let mut handle = null_mut();
    assert_eq!(call(None, &mut handle), S::NullArgument);
    assert_eq!(call(Some(open_archive), null_mut()), S::NullArgument);
    assert!(handle.is_null());
    // SAFETY: NULL handles: a count of 0, a NULL record, a free that does
    // nothing.
    unsafe {
        assert_eq!(clangoffload_kpack_selection_count(null()), 0);
    }
    let mut out = std::mem::MaybeUninit::uninit();
    // SAFETY: a NULL handle is what is checked; `out` writable.
    let status = unsafe { clangoffload_kpack_selection_get(null(), 0, out.as_mut_ptr()) };
    assert_eq!(status, S::NullArgument);
    // SAFETY: freeing NULL does nothing.
    unsafe { clangoffload_kpack_selection_free(null_mut()) };
}

#[test]
fn each_key_of_an_archive_alone_is_resolved_in_it() {
    let path = root().join("tests/fixtures/kpack/none/.kpack/test_lib_gfx906.kpack");
    let data = std::fs::read(&path).unwrap();
    let path = path.to_str().unwrap();
    let mut kpack = null_mut();
    // SAFETY: `data` outlives the handle; `kpack` writable.
    let status =
        unsafe { clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, null_mut()) };
    assert_eq!(status, S::Ok);
    let select = |device: &str, environment: *const clangoffload_kpack_environment, flags| {
        let mut handle = null_mut();
        // SAFETY: a live archive handle and views; `handle` writable.
        let status = unsafe {
            clangoffload_select_kpack(
                kpack,
                view(path.as_bytes()),
                device.as_ptr().cast(),
                device.len(),
                environment,
                flags,
                &mut handle,
            )
        };
        (status, handle)
    };
    let (status, handle) = select("gfx906:xnack-", null(), 0);
    assert_eq!(status, S::Ok);
    let got = choices(handle);
    assert_eq!(got.len(), 9);
    for choice in &got {
        assert!(choice.loads && !choice.has_offset);
        assert_eq!(choice.id, b"hipv4-amdgcn-amd-amdhsa--gfx906");
        assert_eq!(choice.path, path);
        assert_eq!(entry_id(&data, choice.entry), choice.id);
        let reason = &choice.reason;
        assert!(reason.ends_with(&format!("'{path}'")), "{reason}");
    }
    let keys: std::collections::BTreeSet<&String> = got.iter().map(|c| &c.key).collect();
    assert_eq!(keys.len(), 9);
    let (_, handle) = select("gfx1100", null(), 0);
    assert!(choices(handle).iter().all(|c| c.kpack_error == 14));
    // ROCM_KPACK_DISABLE turns the loader off: error 8.
    let disabled = clangoffload_kpack_environment {
        has_disable: true,
        disable: view(b"1"),
        has_path: false,
        path: view(b""),
        has_prefix: false,
        prefix: view(b""),
    };
    let (_, handle) = select("gfx906", &disabled, 0);
    assert!(choices(handle).iter().all(|c| c.kpack_error == 8));
    assert_eq!(select("gfx906", null(), 2).0, S::InvalidArgument);
    let mut handle = null_mut();
    // SAFETY: a NULL archive handle is what is checked.
    let status =
        unsafe { clangoffload_select_kpack(null(), view(b""), null(), 0, null(), 0, &mut handle) };
    assert_eq!(status, S::NullArgument);
    // SAFETY: made above, freed once.
    unsafe { clangoffload_kpack_free(kpack) };
}
