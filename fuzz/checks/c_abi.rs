//! The C ABI's entry points that take untrusted bytes, called as a C program
//! calls them (the `extern "C"` functions of `clangoffload_capi`), with the
//! protocols their documentation gives: cursors walked until `END`, sizes
//! asked for first and then given exactly, buffers one byte short. The
//! core's targets check what these calls compute; this one checks the layer
//! between C and the core: pointers, lengths, cursors, buffer sizes and
//! statuses.
//!
//! Invariants checked, on the input as a whole:
//! - no call returns `CLANGOFFLOAD_STATUS_PANIC` (a panic caught at the
//!   boundary), and every walk ends (`scan_next`, `scan_cursor_next`,
//!   `containers_next`, `elf_offload_section_next`) with its cursor moving
//!   forward and within the input;
//! - every view a call returns lies inside the input, or inside the caller's
//!   buffer it wrote into;
//! - a size asked for is the size that works: `amdgpu_target_id`'s text,
//!   `compressed_decompress`'s output and `fatbin_select_for_device`'s
//!   scratch, each given exactly that size succeeds (the scratch at least
//!   gets past the size check), and one byte less is `BUFFER_TOO_SMALL`;
//! - `container_extent` with the whole input as `max` gives an extent within
//!   it, or `TRUNCATED` with the extent needed beyond it, or another error.

use std::mem::MaybeUninit;

use clangoffload_capi::{self as c, clangoffload_status as Status};

/// Decoded outputs larger than this are not asked for (the fuzzer's memory
/// limit); the size calls are still made.
const MAX_OUTPUT: usize = 1 << 20;

/// Devices asked for by `fatbin_select_for_device`.
const DEVICES: [&str; 3] = ["gfx90a:xnack+", "gfx906", "amdgcn-amd-amdhsa--gfx1100"];

/// The checks, on one input.
pub fn check(data: &[u8]) {
    scan(data);
    containers(data);
    offload_sections(data);
    extent(data);
    target_id(data);
    decompress(data);
    for device in DEVICES {
        select(data, device);
    }
}

/// Fails on a panic caught at the boundary.
fn no_panic(status: Status, call: &str) -> Status {
    assert_ne!(status, Status::Panic, "{call} panicked");
    status
}

/// Asserts that a view returned by the library lies inside `within`.
fn inside(view: c::clangoffload_bytes, within: &[u8], what: &str) {
    if view.len == 0 {
        return;
    }
    let start = within.as_ptr() as usize;
    let at = view.ptr as usize;
    assert!(
        at >= start && at - start <= within.len() && view.len <= within.len() - (at - start),
        "{what} lies outside its buffer"
    );
}

/// A blank error record for the calls that fill one.
fn error() -> c::clangoffload_error {
    c::clangoffload_error::default()
}

fn scan(data: &[u8]) {
    let mut offset = 0u64;
    walk_scan(data, "scan_next", |hit| {
        // SAFETY: `data` is readable for its length, `offset` and `hit` are
        // writable.
        let status = unsafe {
            c::clangoffload_scan_next(
                data.as_ptr(),
                data.len(),
                c::CLANGOFFLOAD_SCAN_REJECTED,
                &mut offset,
                hit,
            )
        };
        (status, offset)
    });
    let mut cursor = c::clangoffload_scan_cursor::default();
    walk_scan(data, "scan_cursor_next", |hit| {
        // SAFETY: as above, with the cursor record.
        let status = unsafe {
            c::clangoffload_scan_cursor_next(
                data.as_ptr(),
                data.len(),
                c::CLANGOFFLOAD_SCAN_REJECTED,
                &mut cursor,
                hit,
            )
        };
        (status, cursor.offset)
    });
}

/// Calls `step` (one scan call, giving its status and the cursor's offset
/// after it) until the end, checking that each hit lies in `data` and that
/// the cursor moves on.
fn walk_scan(
    data: &[u8],
    what: &str,
    mut step: impl FnMut(*mut c::clangoffload_scan_hit) -> (c::clangoffload_status, u64),
) {
    let mut cursor = 0u64;
    let mut calls = 0usize;
    loop {
        let mut hit = MaybeUninit::<c::clangoffload_scan_hit>::uninit();
        let before = cursor;
        let status;
        (status, cursor) = step(hit.as_mut_ptr());
        calls += 1;
        assert!(calls <= data.len() + 1, "{what} does not end");
        assert!(
            cursor <= data.len() as u64,
            "the {what} cursor left the input"
        );
        match no_panic(status, what) {
            Status::End => return,
            Status::Ok => {
                // SAFETY: written on OK.
                let hit = unsafe { hit.assume_init() };
                assert!(cursor > before, "the {what} cursor did not move");
                assert!(hit.offset >= before && hit.offset < cursor.max(hit.offset + 1));
                inside(hit.data, data, "a scan hit");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

fn containers(data: &[u8]) {
    let mut cursor = 0u64;
    let mut calls = 0usize;
    loop {
        let mut found = MaybeUninit::<c::clangoffload_container>::uninit();
        let mut err = error();
        let before = cursor;
        // SAFETY: as in `scan`; `err` is a writable local.
        let status = unsafe {
            c::clangoffload_containers_next(
                data.as_ptr(),
                data.len(),
                &mut cursor,
                found.as_mut_ptr(),
                &mut err,
            )
        };
        calls += 1;
        assert!(calls <= data.len() + 1, "containers_next does not end");
        assert!(
            cursor <= data.len() as u64,
            "the walk's cursor left the input"
        );
        match no_panic(status, "containers_next") {
            Status::End => return,
            Status::Ok => {
                // SAFETY: written on OK.
                let found = unsafe { found.assume_init() };
                assert!(cursor > before, "the walk's cursor did not move");
                inside(found.data, data, "a container");
            }
            _ => {
                assert!(err.offset <= data.len() as u64 + 32, "error offset");
                return;
            }
        }
    }
}

fn offload_sections(data: &[u8]) {
    let mut index = 0u32;
    let mut calls = 0usize;
    loop {
        let mut section = MaybeUninit::<c::clangoffload_offload_section>::uninit();
        let mut err = error();
        let before = index;
        // SAFETY: as in `scan`.
        let status = unsafe {
            c::clangoffload_elf_offload_section_next(
                data.as_ptr(),
                data.len(),
                &mut index,
                section.as_mut_ptr(),
                &mut err,
            )
        };
        calls += 1;
        assert!(
            calls <= data.len() + 2,
            "elf_offload_section_next does not end"
        );
        match no_panic(status, "elf_offload_section_next") {
            Status::End => return,
            Status::Ok => {
                // SAFETY: written on OK.
                let section = unsafe { section.assume_init() };
                inside(section.name, data, "a section name");
                inside(section.data, data, "a section's contents");
            }
            _ => {}
        }
        assert!(index > before, "the section index did not move");
    }
}

fn extent(data: &[u8]) {
    let mut extent = 0u64;
    let mut err = error();
    // SAFETY: `data` is readable for `data.len()` bytes, the `max` given.
    let status = unsafe {
        c::clangoffload_container_extent(data.as_ptr(), data.len(), &mut extent, &mut err)
    };
    match no_panic(status, "container_extent") {
        Status::Ok => assert!(extent <= data.len() as u64, "an extent past max"),
        Status::Truncated => assert!(extent > data.len() as u64, "TRUNCATED within max"),
        _ => {}
    }
}

fn target_id(data: &[u8]) {
    let mut needed = 0usize;
    let mut err = error();
    // SAFETY: a NULL buffer asks for the length; `needed`, `err` are locals.
    let status = unsafe {
        c::clangoffload_amdgpu_target_id(
            data.as_ptr(),
            data.len(),
            std::ptr::null_mut(),
            0,
            &mut needed,
            &mut err,
        )
    };
    if no_panic(status, "amdgpu_target_id") != Status::BufferTooSmall {
        return;
    }
    for cap in [needed, needed + 1] {
        let mut buf = vec![0x7f_u8; cap];
        let mut len = 0usize;
        // SAFETY: `buf` is writable for `cap` bytes.
        let status = unsafe {
            c::clangoffload_amdgpu_target_id(
                data.as_ptr(),
                data.len(),
                buf.as_mut_ptr().cast(),
                cap,
                &mut len,
                &mut err,
            )
        };
        let fits = cap > needed;
        let expected = if fits {
            Status::Ok
        } else {
            Status::BufferTooSmall
        };
        assert_eq!(no_panic(status, "amdgpu_target_id"), expected, "cap {cap}");
        if fits {
            assert_eq!((len, buf[len]), (needed, 0), "the text and its NUL");
        }
    }
}

fn decompress(data: &[u8]) {
    let mut size = 0usize;
    let mut err = error();
    let max = MAX_OUTPUT as u64;
    // SAFETY: `data` is readable; `size` and `err` are locals.
    let status = unsafe {
        c::clangoffload_compressed_decompressed_size(
            data.as_ptr(),
            data.len(),
            max,
            &mut size,
            &mut err,
        )
    };
    if no_panic(status, "compressed_decompressed_size") != Status::Ok {
        return;
    }
    assert!(size <= MAX_OUTPUT);
    let mut out = vec![0u8; size];
    let mut len = 0usize;
    let decode = |out: &mut [u8], len: &mut usize, err: &mut c::clangoffload_error| {
        // SAFETY: `out` is writable for its length.
        unsafe {
            c::clangoffload_compressed_decompress(
                data.as_ptr(),
                data.len(),
                max,
                0,
                out.as_mut_ptr(),
                out.len(),
                len,
                err,
            )
        }
    };
    let status = no_panic(
        decode(&mut out, &mut len, &mut err),
        "compressed_decompress",
    );
    if status == Status::Ok {
        assert_eq!(len, size, "decompressed to another size than announced");
    }
    if size > 0 {
        let short = no_panic(
            decode(&mut out[..size - 1], &mut len, &mut err),
            "compressed_decompress",
        );
        assert_ne!(short, Status::Ok, "one byte short succeeded");
    }
}

fn select(data: &[u8], device: &str) {
    let select = |scratch: &mut [u8], needed: &mut usize| {
        let mut entry = MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
        let mut how = MaybeUninit::<c::clangoffload_device_match>::uninit();
        let mut err = error();
        let scratch_ptr = if scratch.is_empty() {
            std::ptr::null_mut()
        } else {
            scratch.as_mut_ptr()
        };
        // SAFETY: `data` and `device` are readable for their lengths,
        // `scratch` writable for its length and separate from `data`, the
        // outputs are locals.
        let status = unsafe {
            c::clangoffload_fatbin_select_for_device(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                0,
                scratch_ptr,
                scratch.len(),
                needed,
                entry.as_mut_ptr(),
                how.as_mut_ptr(),
                &mut err,
            )
        };
        // SAFETY: written on OK.
        let entry = (status == Status::Ok).then(|| unsafe { entry.assume_init() });
        (no_panic(status, "fatbin_select_for_device"), entry)
    };
    let mut needed = 0usize;
    let (status, entry) = select(&mut [], &mut needed);
    if let Some(entry) = entry {
        inside(entry.id, data, "a selected entry's ID");
        inside(entry.payload, data, "a selected code object");
    }
    if status != Status::BufferTooSmall || needed > MAX_OUTPUT {
        return;
    }
    let mut scratch = vec![0u8; needed];
    let mut again = 0usize;
    let (status, entry) = select(&mut scratch, &mut again);
    assert_ne!(
        status,
        Status::BufferTooSmall,
        "the size asked for is too small"
    );
    assert_eq!(again, needed, "a different size asked for the second time");
    if let Some(entry) = entry {
        inside(entry.id, &scratch, "a selected entry's ID");
        inside(entry.payload, &scratch, "a selected code object");
    }
    if needed > 0 {
        let (short, _) = select(&mut scratch[..needed - 1], &mut again);
        assert_eq!(short, Status::BufferTooSmall, "one byte short");
    }
}
