//! `clangoffload_fatbin_select_for_device`: a runtime's one call for the code
//! object to load from any fat binary — a bundle, a compressed bundle (the
//! chosen code object alone decoded into the caller's buffer, whose size it
//! says first), an OffloadBinary — giving what selecting in the plain bundle
//! gives.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::ptr::null_mut;

use clangoffload::compressed::{compress, CompressOptions};
use clangoffload::{CompressedBundle, CompressionMethod, DecompressOptions};
use clangoffload_capi as c;
use common::root;

/// A selected code object: its bytes, offset and ID.
type Found = (Vec<u8>, u64, String);

/// Runs the call with a scratch buffer of `cap` bytes; the status, the needed
/// size, and (on OK) what it found.
fn select(data: &[u8], device: &str, cap: usize) -> (c::clangoffload_status, usize, Option<Found>) {
    select_with(data, device, 0, cap)
}

/// [`select`] with `flags`; on OK, also checks that a compressed bundle's
/// code object starts the scratch buffer and its ID follows it.
fn select_with(
    data: &[u8],
    device: &str,
    flags: u32,
    cap: usize,
) -> (c::clangoffload_status, usize, Option<Found>) {
    let mut scratch = vec![0u8; cap];
    let mut needed = 0usize;
    let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
    let mut how = std::mem::MaybeUninit::<c::clangoffload_device_match>::uninit();
    // SAFETY: every buffer is live and writable for the call (`scratch`
    // for `cap` bytes, NULL when there are none).
    let status = unsafe {
        c::clangoffload_fatbin_select_for_device(
            data.as_ptr(),
            data.len(),
            device.as_ptr().cast(),
            device.len(),
            flags,
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
        )
    };
    if status != c::clangoffload_status::Ok {
        return (status, needed, None);
    }
    // SAFETY: written whole on OK.
    let entry = unsafe { entry.assume_init() };
    // SAFETY: the payload view borrows `data` or `scratch`, both alive.
    let code = unsafe { std::slice::from_raw_parts(entry.payload.ptr, entry.payload.len) }.to_vec();
    // SAFETY: the ID view borrows `data` or `scratch`, both alive.
    let id = unsafe { std::slice::from_raw_parts(entry.id.ptr, entry.id.len) };
    if CompressedBundle::is_compressed(data) && cap > 0 {
        assert_eq!(entry.payload.ptr, scratch.as_ptr());
        // SAFETY: the payload, `code.len()` bytes, is at the start of
        // `scratch`, so the offset stays inside it.
        let after_code = unsafe { scratch.as_ptr().add(code.len()) };
        assert_eq!(entry.id.ptr, after_code);
        assert_eq!(needed, code.len() + id.len());
    }
    (
        status,
        needed,
        Some((code, entry.offset, String::from_utf8_lossy(id).into_owned())),
    )
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
        let from_plain = select(&plain, device, 0);
        let (code, offset, id) = from_plain.2.clone().unwrap();
        assert_eq!(&plain[offset as usize..][..code.len()], &code[..]);
        assert!(id.starts_with("hipv4-amdgcn-amd-amdhsa--gfx"), "{id}");
        // The size of the chosen code object and its ID, not the bundle's.
        let (status, needed, none) = select(&compressed, device, 0);
        assert_eq!(status, c::clangoffload_status::BufferTooSmall, "{device}");
        assert_eq!(needed, code.len() + id.len());
        assert!(none.is_none());
        assert_eq!(
            select(&compressed, device, needed - 1).0,
            c::clangoffload_status::BufferTooSmall
        );
        let from_compressed = select(&compressed, device, needed);
        assert_eq!(from_compressed.0, c::clangoffload_status::Ok, "{device}");
        assert_eq!(from_compressed.1, needed);
        assert_eq!(from_compressed.2, from_plain.2, "{device}");
    }
    assert_eq!(
        select(&plain, "gfx803", 0).0,
        c::clangoffload_status::NotFound
    );
    // Nothing fits: said by the first call, from the table alone.
    assert_eq!(
        select(&compressed, "gfx803", 0).0,
        c::clangoffload_status::NotFound
    );
    assert_ne!(
        select(&plain, "not a device!", 0).0,
        c::clangoffload_status::Ok
    );
    // A damaged hash is an error, not code, unless the check is off.
    let mut damaged = compressed.clone();
    let hash_at = if damaged[4] == 3 { 24 } else { 16 };
    damaged[hash_at] ^= 1;
    let needed = select(&damaged, "gfx906", 0).1;
    assert_eq!(
        select(&damaged, "gfx906", needed).0,
        c::clangoffload_status::HashMismatch
    );
    assert_eq!(
        select_with(&damaged, "gfx906", c::CLANGOFFLOAD_SKIP_HASH_CHECK, needed).2,
        select(&plain, "gfx906", 0).2
    );
}

/// A HIP fat binary of code-like payloads, 2 MB a device: the host, gfx906,
/// gfx908, gfx90a, gfx942, gfx1100; gfx90a lies mid-bundle.
fn device_bundle() -> Vec<u8> {
    let ids = [
        "host-x86_64-unknown-linux-gnu-",
        "hipv4-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx908",
        "hipv4-amdgcn-amd-amdhsa--gfx90a",
        "hipv4-amdgcn-amd-amdhsa--gfx942",
        "hipv4-amdgcn-amd-amdhsa--gfx1100",
    ];
    let payloads: Vec<Vec<u8>> = (0..ids.len() as u32)
        .map(|i| {
            let n = if i == 0 { 0 } else { 500_000u32 };
            (0..n)
                .flat_map(|j| ((j / 7) ^ (i * 31) ^ (j >> 9)).to_le_bytes())
                .collect()
        })
        .collect();
    let entries: Vec<(&[u8], &[u8])> = ids
        .iter()
        .map(|id| id.as_bytes())
        .zip(payloads.iter().map(|p| &p[..]))
        .collect();
    clangoffload::bundle::write_bundle(&entries, 4096).unwrap()
}

/// Bytes this thread has allocated and not freed, and the most it held:
/// the Rust allocations a call makes (libzstd's own, in C, are not seen).
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static NOW: Cell<usize> = const { Cell::new(0) };
        static PEAK: Cell<usize> = const { Cell::new(0) };
    }

    pub struct Counting;

    // SAFETY: every call is forwarded to the system allocator unchanged.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let now = NOW.with(|n| {
                n.set(n.get() + layout.size());
                n.get()
            });
            PEAK.with(|p| p.set(p.get().max(now)));
            // SAFETY: forwarded.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            NOW.with(|n| n.set(n.get().saturating_sub(layout.size())));
            // SAFETY: forwarded.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    /// The peak of this thread's allocations while `f` runs, above what it
    /// held before.
    pub fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
        let before = NOW.with(Cell::get);
        PEAK.with(|p| p.set(before));
        let out = f();
        (out, PEAK.with(Cell::get) - before)
    }
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// The most the library allocates, over what it holds before, during one
/// successful call with a scratch buffer of `cap` bytes.
fn allocated_by_call(data: &[u8], device: &str, flags: u32, cap: usize) -> usize {
    let mut scratch = vec![0u8; cap];
    let mut needed = 0usize;
    let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
    let mut how = std::mem::MaybeUninit::<c::clangoffload_device_match>::uninit();
    let (status, peak) = counting::peak(|| {
        // SAFETY: every buffer is live and writable for the call.
        unsafe {
            c::clangoffload_fatbin_select_for_device(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                flags,
                scratch.as_mut_ptr(),
                cap,
                &mut needed,
                entry.as_mut_ptr(),
                how.as_mut_ptr(),
                null_mut(),
            )
        }
    });
    assert_eq!(status, c::clangoffload_status::Ok);
    peak
}

/// The runtime's path: for an entry mid-bundle the caller's buffer holds the
/// code object and its ID alone; without the hash check decoding stops at
/// the end of the code object (damage after it goes unseen), with it the
/// rest is decoded through MD5 and the damage found; the library's own
/// allocations stay below 1 MiB, half the code object's size.
#[test]
fn a_compressed_bundle_is_decoded_only_as_far_as_the_chosen_entry() {
    let bundle = device_bundle();
    let plain = select(&bundle, "gfx90a", 0).2.unwrap();
    let (code, offset, id) = plain.clone();
    assert!(offset > bundle.len() as u64 / 3);
    assert!(offset + (code.len() as u64) < bundle.len() as u64 * 2 / 3);
    let skip = c::CLANGOFFLOAD_SKIP_HASH_CHECK;
    for method in [CompressionMethod::Zlib, CompressionMethod::Zstd] {
        let data = compress(
            &bundle,
            &CompressOptions {
                version: 3,
                method,
                level: None,
            },
        )
        .unwrap();
        let (status, needed, _) = select_with(&data, "gfx90a", skip, 0);
        assert_eq!(status, c::clangoffload_status::BufferTooSmall);
        assert_eq!(needed, code.len() + id.len());
        for flags in [0, skip] {
            let found = select_with(&data, "gfx90a", flags, needed);
            assert_eq!(found.2.as_ref(), Some(&plain), "{method} {flags}");
            // What the library allocates, whatever the bundle's size: the
            // first stretch (holding the table) and the next, 256 KiB each,
            // two more for the hashing thread, zlib's window (libzstd's, in
            // C, is not counted).
            let peak = allocated_by_call(&data, "gfx90a", flags, needed);
            assert!(
                peak <= 1 << 20 && peak < code.len() / 2,
                "{method} {flags}: {peak} bytes allocated"
            );
        }
        // Damage near the end of the stream, 2 MB of output after gfx90a.
        let mut damaged = data.clone();
        let at = damaged.len() - 10;
        damaged[at] ^= 0xff;
        assert!(CompressedBundle::parse(&damaged)
            .unwrap()
            .decompress(&DecompressOptions {
                verify_hash: false,
                ..DecompressOptions::default()
            })
            .is_err());
        let (status, _, found) = select_with(&damaged, "gfx90a", skip, needed);
        assert_eq!(status, c::clangoffload_status::Ok, "{method}");
        assert_eq!(found.as_ref(), Some(&plain));
        // With the check the stream is read to its end and the damage
        // found (zlib: a stream running long; zstd: a corrupt block).
        let (status, _, _) = select_with(&damaged, "gfx90a", 0, needed);
        assert!(
            matches!(
                status,
                c::clangoffload_status::CorruptStream | c::clangoffload_status::SizeMismatch
            ),
            "{method}: {status:?}"
        );
    }
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
