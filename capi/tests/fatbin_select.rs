//! `clangoffload_fatbin_select_for_device`: a runtime's one call for the code
//! object to load from any fat binary — a bundle, a compressed bundle
//! (decompressed into the caller's buffer, whose size it says first), an
//! OffloadBinary — giving what selecting in the plain bundle gives.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::ptr::null_mut;

use clangoffload::{CompressedBundle, DecompressOptions};
use clangoffload_capi as c;
use common::root;

/// A selected code object: its bytes, offset and ID.
type Found = (Vec<u8>, u64, String);

/// Runs the call with a scratch buffer of `cap` bytes; the status, the needed
/// size, and (on OK) what it found.
fn select(data: &[u8], device: &str, cap: usize) -> (c::clangoffload_status, usize, Option<Found>) {
    let mut scratch = vec![0u8; cap];
    let mut needed = 0usize;
    let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
    let mut how = std::mem::MaybeUninit::<c::clangoffload_device_match>::uninit();
    // SAFETY: every buffer is live and writable for the call; the views
    // read below borrow `data` or `scratch`, both alive.
    unsafe {
        let status = c::clangoffload_fatbin_select_for_device(
            data.as_ptr(),
            data.len(),
            device.as_ptr().cast(),
            device.len(),
            0,
            if cap == 0 {
                null_mut()
            } else {
                scratch.as_mut_ptr()
            },
            cap,
            &mut needed,
            entry.as_mut_ptr(),
            how.as_mut_ptr(),
            null_mut(),
        );
        if status != c::clangoffload_status::Ok {
            return (status, needed, None);
        }
        let entry = entry.assume_init();
        let code = std::slice::from_raw_parts(entry.payload.ptr, entry.payload.len).to_vec();
        let id = std::slice::from_raw_parts(entry.id.ptr, entry.id.len);
        (
            status,
            needed,
            Some((code, entry.offset, String::from_utf8_lossy(id).into_owned())),
        )
    }
}

#[test]
fn a_compressed_bundle_gives_what_its_plain_bundle_gives() {
    let fixtures = root().join("tests/fixtures");
    let compressed = std::fs::read(fixtures.join("compressed/llvm22/hip.v3.ccob")).unwrap();
    let plain = CompressedBundle::parse(&compressed)
        .unwrap()
        .decompress(&DecompressOptions::default())
        .unwrap();
    for device in ["gfx906", "amdgcn-amd-amdhsa--gfx90a:xnack+", "gfx1100"] {
        let (status, needed, none) = select(&compressed, device, 0);
        assert_eq!(status, c::clangoffload_status::BufferTooSmall, "{device}");
        assert_eq!(needed, plain.len());
        assert!(none.is_none());
        let from_compressed = select(&compressed, device, needed);
        let from_plain = select(&plain, device, 0);
        assert_eq!(from_compressed.0, c::clangoffload_status::Ok, "{device}");
        assert_eq!(from_compressed.2, from_plain.2, "{device}");
        let (code, offset, id) = from_plain.2.unwrap();
        assert_eq!(&plain[offset as usize..][..code.len()], &code[..]);
        assert!(id.starts_with("hipv4-amdgcn-amd-amdhsa--gfx"), "{id}");
    }
    assert_eq!(
        select(&plain, "gfx803", 0).0,
        c::clangoffload_status::NotFound
    );
    assert_ne!(
        select(&plain, "not a device!", 0).0,
        c::clangoffload_status::Ok
    );
    // A damaged hash is an error, not code.
    let mut damaged = compressed.clone();
    let hash_at = if damaged[4] == 3 { 24 } else { 16 };
    damaged[hash_at] ^= 1;
    let needed = plain.len();
    assert_eq!(
        select(&damaged, "gfx906", needed).0,
        c::clangoffload_status::HashMismatch
    );
}

#[test]
fn an_offload_binary_gives_its_image_for_the_device() {
    let data = std::fs::read(root().join("tests/fixtures/offload/multi.offbin")).unwrap();
    let binary = clangoffload::OffloadBinary::parse(&data).unwrap();
    let image = binary
        .entries()
        .find(|e| e.triple() == Some(&b"amdgcn-amd-amdhsa"[..]))
        .unwrap();
    let arch = String::from_utf8_lossy(image.arch().unwrap()).into_owned();
    let (status, _, found) = select(&data, &arch, 0);
    assert_eq!(status, c::clangoffload_status::Ok, "{arch}");
    let (code, offset, id) = found.unwrap();
    assert_eq!(code, image.image());
    assert_eq!(offset, image.image_offset());
    assert_eq!(id, arch);
}

/// The same bad input gives the same status from the bundler's and the
/// runtime's selection calls: a malformed target ID its own status, a
/// processor nobody knows NOT_FOUND.
#[test]
fn bad_targets_give_one_status_across_find_and_select() {
    let data = std::fs::read(root().join("tests/fixtures/llvm22/hip-4096.bundle")).unwrap();
    let find = |target: &str| {
        let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
        // SAFETY: the buffers are live and writable for the call.
        unsafe {
            c::clangoffload_bundle_find_compatible_entry(
                data.as_ptr(),
                data.len(),
                target.as_ptr().cast(),
                target.len(),
                0,
                entry.as_mut_ptr(),
                null_mut(),
            )
        }
    };
    for (device, status) in [
        ("gfx9999", c::clangoffload_status::NotFound),
        ("gfx906:xnack", c::clangoffload_status::TargetIdMissingSign),
        (
            "gfx906:foo+",
            c::clangoffload_status::TargetIdUnknownFeature,
        ),
    ] {
        assert_eq!(select(&data, device, 0).0, status, "select {device}");
        assert_eq!(
            find(&format!("hipv4-amdgcn-amd-amdhsa--{device}")),
            status,
            "find {device}"
        );
    }
    // The host entry has no target ID to check.
    assert_eq!(
        find("host-x86_64-unknown-linux-gnu"),
        c::clangoffload_status::Ok
    );
}
