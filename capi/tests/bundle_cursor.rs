//! The allocator-free bundle functions against the handle-based ones: same
//! entries, same choices, same errors at the same place.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::ptr::{null, null_mut};

use clangoffload_capi::*;

mod common;

use common::fixture;

fn empty_entry() -> clangoffload_bundle_entry {
    let none = clangoffload_bytes {
        ptr: null(),
        len: 0,
    };
    clangoffload_bundle_entry {
        id: none,
        payload: none,
        offset: 0,
        descriptor_offset: 0,
    }
}

/// Every entry by the cursor, then the final status and error, and what a
/// call after that returns.
fn walk(
    data: &[u8],
) -> (
    Vec<(u64, u64, usize)>,
    clangoffload_status,
    clangoffload_error,
    clangoffload_status,
) {
    let mut cursor = clangoffload_bundle_cursor::default();
    let (mut entry, mut err, mut seen) = (empty_entry(), clangoffload_error::default(), Vec::new());
    loop {
        // SAFETY: `data` is live for the call; `cursor`, `entry` and `err`
        // are writable locals.
        let s = unsafe {
            clangoffload_bundle_next_entry(
                data.as_ptr(),
                data.len(),
                &mut cursor,
                &mut entry,
                &mut err,
            )
        };
        if s != clangoffload_status::Ok {
            // SAFETY: as above, with no error record (NULL is allowed).
            let again = unsafe {
                clangoffload_bundle_next_entry(
                    data.as_ptr(),
                    data.len(),
                    &mut cursor,
                    &mut entry,
                    null_mut(),
                )
            };
            return (seen, s, err, again);
        }
        seen.push((entry.descriptor_offset, entry.offset, entry.payload.len));
    }
}

fn handle_entries(data: &[u8], flags: u32) -> Vec<(u64, u64, usize)> {
    let mut bundle = null_mut();
    // SAFETY: `data` outlives the handle, freed below; `bundle` is writable.
    let s = unsafe {
        clangoffload_bundle_parse(data.as_ptr(), data.len(), flags, &mut bundle, null_mut())
    };
    assert_eq!(s, clangoffload_status::Ok);
    let mut out = Vec::new();
    // SAFETY: the handle is live until freed below.
    let count = unsafe { clangoffload_bundle_entry_count(bundle) };
    for i in 0..count {
        let mut e = empty_entry();
        // SAFETY: the handle is live; `e` is a writable record.
        let status = unsafe { clangoffload_bundle_get_entry(bundle, i, &mut e) };
        assert_eq!(status, clangoffload_status::Ok);
        out.push((e.descriptor_offset, e.offset, e.payload.len));
    }
    // SAFETY: the handle from the parse above, freed once.
    unsafe { clangoffload_bundle_free(bundle) };
    out
}

#[test]
fn the_cursor_walks_what_the_handle_holds() {
    for name in [
        "llvm22/hip-4096.bundle",
        "llvm22/openmp.bundle",
        "llvm16/align3.bundle",
    ] {
        let data = fixture(name);
        let (seen, status, _, again) = walk(&data);
        assert_eq!(
            (status, again),
            (clangoffload_status::End, clangoffload_status::End),
            "{name}"
        );
        assert_eq!(seen, handle_entries(&data, 0), "{name}");
    }
}

#[test]
fn a_damaged_bundle_gives_its_good_entries_then_the_handles_fault() {
    let mut data = fixture("llvm22/hip-4096.bundle");
    // The third descriptor's payload offset now points past the end.
    let good = handle_entries(&data, 0);
    let third = usize::try_from(good[2].0).unwrap();
    data[third..third + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let (seen, status, err, again) = walk(&data);
    assert_eq!(seen, good[..2]);
    // After a bad descriptor the walk is over.
    assert_eq!(again, clangoffload_status::End);
    let mut bundle = null_mut();
    let mut expected = clangoffload_error::default();
    // SAFETY: `data` is live for the call; the parse fails, so no handle
    // is kept; `bundle` and `expected` are writable locals.
    let strict = unsafe {
        clangoffload_bundle_parse(data.as_ptr(), data.len(), 0, &mut bundle, &mut expected)
    };
    assert_eq!(status, strict);
    assert_eq!((err.offset, err.entry), (expected.offset, expected.entry));
    assert_eq!(err.entry, 2);

    // A count that cannot fit is refused by every call, before any entry.
    let mut data = fixture("llvm22/hip-4096.bundle");
    data[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    let (seen, status, err, again) = walk(&data);
    assert!(seen.is_empty());
    assert_eq!(status, clangoffload_status::CountTooLarge);
    assert_eq!(again, clangoffload_status::CountTooLarge);
    assert_eq!(err.offset, 24);
}

#[test]
fn finding_without_a_handle_agrees_with_the_handle() {
    let data = fixture("llvm22/hip-4096.bundle");
    let mut bundle = null_mut();
    // SAFETY: `data` outlives the handle, freed below; `bundle` is writable.
    unsafe { clangoffload_bundle_parse(data.as_ptr(), data.len(), 0, &mut bundle, null_mut()) };
    for target in [
        "hipv4-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
        "openmp-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx1100",
    ] {
        for flags in [0, CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE] {
            let mut index = 0usize;
            // SAFETY: the handle is live; `target` is live for the call;
            // `index` is a writable local.
            let by_handle = unsafe {
                clangoffload_bundle_find_compatible(
                    bundle,
                    target.as_ptr().cast(),
                    target.len(),
                    flags,
                    &mut index,
                )
            };
            let mut entry = empty_entry();
            // SAFETY: `data` and `target` are live for the call; `entry` is
            // a writable record.
            let direct = unsafe {
                clangoffload_bundle_find_compatible_entry(
                    data.as_ptr(),
                    data.len(),
                    target.as_ptr().cast(),
                    target.len(),
                    flags,
                    &mut entry,
                    null_mut(),
                )
            };
            assert_eq!(direct, by_handle, "{target} {flags}");
            if direct == clangoffload_status::Ok {
                let mut e = empty_entry();
                // SAFETY: the handle is live; `e` is a writable record.
                unsafe { clangoffload_bundle_get_entry(bundle, index, &mut e) };
                assert_eq!(entry.descriptor_offset, e.descriptor_offset);
            }
        }
    }
    for device in [
        "gfx906",
        "gfx90a:xnack+",
        "gfx90a:xnack-",
        "gfx1100",
        "gfx9-generic",
    ] {
        let (mut index, mut how) = (0usize, clangoffload_device_match::Native);
        // SAFETY: the handle is live; `device` is live for the call; `index`
        // and `how` are writable locals.
        let by_handle = unsafe {
            clangoffload_bundle_select_for_device(
                bundle,
                device.as_ptr().cast(),
                device.len(),
                &mut index,
                &mut how,
            )
        };
        let (mut entry, mut how2) = (empty_entry(), clangoffload_device_match::Spirv);
        // SAFETY: `data` and `device` are live for the call; `entry` and
        // `how2` are writable locals.
        let direct = unsafe {
            clangoffload_bundle_select_entry_for_device(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                &mut entry,
                &mut how2,
                null_mut(),
            )
        };
        assert_eq!(direct, by_handle, "{device}");
        if direct == clangoffload_status::Ok {
            assert_eq!(how2, how);
        }
    }
    // SAFETY: the handle from the parse above, freed once.
    unsafe { clangoffload_bundle_free(bundle) };

    // NULL pointers are reported, never followed.
    let mut entry = empty_entry();
    let t = "hipv4-amdgcn-amd-amdhsa--gfx906";
    // SAFETY: the NULL input is refused before anything is read; `t` is
    // live and `entry` writable.
    let s = unsafe {
        clangoffload_bundle_find_compatible_entry(
            null(),
            5,
            t.as_ptr().cast(),
            t.len(),
            0,
            &mut entry,
            null_mut(),
        )
    };
    assert_eq!(s, clangoffload_status::NullArgument);
    // SAFETY: the NULL cursor is refused before anything is written;
    // `data` is live and `entry` writable.
    let s = unsafe {
        clangoffload_bundle_next_entry(
            data.as_ptr(),
            data.len(),
            null_mut(),
            &mut entry,
            null_mut(),
        )
    };
    assert_eq!(s, clangoffload_status::NullArgument);
}

#[test]
fn a_cursor_from_elsewhere_is_checked_not_trusted() {
    let data = fixture("llvm22/hip-4096.bundle");
    for (index, offset) in [
        (1, u64::MAX),
        (u64::MAX, 0),
        (0, 5),
        (1, 33),
        (2, data.len() as u64 - 1),
    ] {
        let mut cursor = clangoffload_bundle_cursor { index, offset };
        let (mut entry, mut read) = (empty_entry(), 0);
        for _ in 0..8 {
            // SAFETY: `data` is live for the call; `cursor` (whatever it
            // holds: the call checks it) and `entry` are writable locals.
            let s = unsafe {
                clangoffload_bundle_next_entry(
                    data.as_ptr(),
                    data.len(),
                    &mut cursor,
                    &mut entry,
                    null_mut(),
                )
            };
            if s != clangoffload_status::Ok {
                break;
            }
            read += 1;
            // Whatever a bogus cursor reads lies inside the buffer.
            let end = entry.offset + entry.payload.len as u64;
            assert!(end <= data.len() as u64, "{index} {offset}");
        }
        // The header's count bounds the walk, wherever it starts.
        assert!(read <= 3, "{index} {offset}: {read} entries");
    }
}
