use core::mem::MaybeUninit;

use super::*;
use crate::compressed::{clangoffload_container_kind, CLANGOFFLOAD_SKIP_HASH_CHECK};
use crate::ffi::{clangoffload_bytes, slice_arg};
use crate::status::clangoffload_status;

fn fixture(path: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    std::fs::read(root.join(path)).unwrap()
}

/// Inspects `data` and hands the live handle to `check`.
fn with_inspection(data: &[u8], flags: u32, check: impl FnOnce(*const clangoffload_inspection)) {
    let mut handle = core::ptr::null_mut();
    // SAFETY: the buffer outlives the handle, freed below.
    let status = unsafe { clangoffload_inspect(data.as_ptr(), data.len(), flags, 0, &mut handle) };
    assert_eq!(status, clangoffload_status::Ok);
    check(handle);
    // SAFETY: from clangoffload_inspect, freed once.
    unsafe { clangoffload_inspection_free(handle) };
}

fn get<T>(call: impl FnOnce(*mut T) -> clangoffload_status) -> Result<T, clangoffload_status> {
    let mut out = MaybeUninit::uninit();
    match call(out.as_mut_ptr()) {
        // SAFETY: written on success.
        clangoffload_status::Ok => Ok(unsafe { out.assume_init() }),
        status => Err(status),
    }
}

fn view(bytes: clangoffload_bytes) -> Vec<u8> {
    // SAFETY: views from a live handle over a live buffer.
    unsafe { slice_arg(bytes.ptr, bytes.len) }.unwrap().to_vec()
}

#[test]
fn a_damaged_compressed_bundle_is_reported_with_both_hashes() {
    let mut fatbin = fixture("compressed/concat/hip.hip_fatbin");
    fatbin[8192 + 16] ^= 0xff;
    with_inspection(&fatbin, 0, |h| {
        // SAFETY: `h` is live during the check.
        assert_eq!(unsafe { clangoffload_inspection_container_count(h) }, 4);
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let c = get(|out| unsafe { clangoffload_inspection_get_container(h, 1, out) }).unwrap();
        assert_eq!(c.kind, clangoffload_container_kind::Compressed);
        assert_eq!(c.offset, 8192);
        assert!(c.has_computed_hash && c.computed_hash != c.compressed.hash);
        assert_eq!(c.error_status, clangoffload_status::HashMismatch.code());
        assert!(view(c.error).starts_with(b"hash mismatch"));
        assert_eq!(view(c.method_name), b"zstd");
        // SAFETY: `h` is live during the check.
        let entries = unsafe { clangoffload_inspection_entry_count(h, 1) };
        assert_eq!(entries, c.entry_count);
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let e = get(|out| unsafe { clangoffload_inspection_get_entry(h, 1, 0, out) }).unwrap();
        assert_eq!(view(e.id), b"host-x86_64-unknown-linux-gnu-");
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let past =
            get(|out| unsafe { clangoffload_inspection_get_entry(h, 1, c.entry_count, out) });
        assert_eq!(past.unwrap_err(), clangoffload_status::IndexOutOfRange);
        // SAFETY: `h` is live during the check.
        assert_eq!(unsafe { clangoffload_inspection_error_count(h) }, 0);
    });
    // The hash not checked: no error.
    with_inspection(&fatbin, CLANGOFFLOAD_SKIP_HASH_CHECK, |h| {
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let c = get(|out| unsafe { clangoffload_inspection_get_container(h, 1, out) }).unwrap();
        assert_eq!(c.error_status, 0);
    });
}

#[test]
fn host_objects_give_code_objects_notes_and_files() {
    let object = fixture("offload/hip.o");
    with_inspection(&object, 0, |h| {
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let file = get(|out| unsafe { clangoffload_inspection_get_file(h, 0, out) }).unwrap();
        assert!(!file.has_name && file.is_elf);
        assert_eq!(file.parent, 0);
        assert_eq!(view(file.objdump_format), b"elf64-x86-64");
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let c = get(|out| unsafe { clangoffload_inspection_get_container(h, 0, out) }).unwrap();
        assert_eq!(view(c.place.section), b".hip_fatbin");
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let e = get(|out| unsafe { clangoffload_inspection_get_entry(h, 0, 2, out) }).unwrap();
        assert!(e.is_code_object && e.target_matches);
        assert_eq!(view(e.code_object_target), b"gfx90a");
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let n = get(|out| unsafe { clangoffload_inspection_get_note(h, 0, out) }).unwrap();
        assert_eq!(n.kind, clangoffload_inspection_note_kind::Wrapper);
        assert_eq!(view(n.wrapper_name), b"HIPF");
        assert_eq!((n.wrapper.resolved, n.wrapper.target.len), (1, 18_160));
    });
}

#[test]
fn images_and_their_strings() {
    let archive = fixture("offload/offload.a");
    with_inspection(&archive, 0, |h| {
        // SAFETY: `h` is live during the check.
        assert!(unsafe { clangoffload_inspection_file_count(h) } > 1);
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let image = get(|out| unsafe { clangoffload_inspection_get_image(h, 0, 0, out) }).unwrap();
        assert_eq!(view(image.image_kind_name), b"elf");
        assert_eq!(view(image.offload_kind_name), b"openmp");
        assert_eq!(
            // SAFETY: `h` is live during the check.
            unsafe { clangoffload_inspection_string_count(h, 0, 0) },
            image.string_count
        );
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let pair =
            get(|out| unsafe { clangoffload_inspection_get_string(h, 0, 0, 0, out) }).unwrap();
        assert_eq!(view(pair.key), b"arch");
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let c = get(|out| unsafe { clangoffload_inspection_get_container(h, 0, out) }).unwrap();
        // SAFETY: `h` is live during the check; `out` is a writable record.
        let file =
            get(|out| unsafe { clangoffload_inspection_get_file(h, c.place.file, out) }).unwrap();
        assert_eq!((view(file.name), file.parent), (b"embed.o".to_vec(), 0));
    });
}

#[test]
fn null_and_unknown_flags_are_refused() {
    let mut handle = core::ptr::null_mut();
    // SAFETY: NULL with length 0 is allowed; `handle` is writable.
    let status = unsafe { clangoffload_inspect(core::ptr::null(), 0, 4, 0, &mut handle) };
    assert_eq!(status, clangoffload_status::InvalidArgument);
    // SAFETY: NULL with length 1 is refused before anything is read;
    // `handle` is writable.
    let status = unsafe { clangoffload_inspect(core::ptr::null(), 1, 0, 0, &mut handle) };
    assert_eq!(status, clangoffload_status::NullArgument);
    // SAFETY: a NULL handle is allowed (it has no containers).
    let count = unsafe { clangoffload_inspection_container_count(core::ptr::null()) };
    assert_eq!(count, 0);
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { clangoffload_inspection_free(core::ptr::null_mut()) };
    with_inspection(&[], 0, |h| {
        // SAFETY: `h` is live during the check.
        assert_eq!(unsafe { clangoffload_inspection_file_count(h) }, 1);
        // SAFETY: `h` is live during the check.
        assert_eq!(unsafe { clangoffload_inspection_container_count(h) }, 0);
        let out = core::ptr::null_mut();
        // SAFETY: `h` is live during the check; a NULL record is refused
        // before anything is written.
        let status = unsafe { clangoffload_inspection_get_file(h, 0, out) };
        assert_eq!(status, clangoffload_status::NullArgument);
    });
}
