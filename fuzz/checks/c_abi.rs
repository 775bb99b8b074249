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
//!   it, or `TRUNCATED` with the extent needed beyond it, or another error;
//! - an extraction (`bundler_extraction`) says where each container is
//!   within the input and numbers its outputs within the count;
//!   `extraction_stream` hands each container it was given to `done`
//!   exactly once, each output's bytes in order from its start (the
//!   offsets it passes), only for outputs of containers handed out, and a
//!   container streams successfully exactly when its plan
//!   (`extraction_plan`) succeeds, with the plan's bytes;
//! - CUDA fat binaries (`cuda_fatbins_parse`, lenient): every fat binary,
//!   entry and member view lies inside the input, indices past the counts
//!   are refused, `cuda_select` names an entry of the handle, an image
//!   (`cuda_entry_image`) is freed as the caller frees it; `cuda_fatbin_prune`
//!   asked for its size then given exactly that size succeeds with that
//!   length and one byte less is `BUFFER_TOO_SMALL`; pruning in place keeps
//!   the file's length and, on an error, its bytes;
//! - kpack choices (`select_split_host`, every archive path it asks for
//!   opened as the input from its last `KPAK` on, by both loaders;
//!   `select_kpack` on the input parsed as an archive): each path asked
//!   for once, each choice read by index and none past the count, its
//!   texts readable, a choice loads exactly when it has a way (`how`) and
//!   no runtime error, and a chosen code object is the entry its index
//!   names in the archive its path gave, under the choice's key and ID.

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
    extraction(data);
    cuda(data);
    prune(data);
    kpack(data);
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

/// An empty view (or one of `bytes`).
fn bytes(bytes: &[u8]) -> c::clangoffload_bytes {
    c::clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

/// What `extraction_stream` told the sink.
struct Streamed {
    /// Containers in the order they are handed out.
    order: Vec<usize>,
    handed: usize,
    /// Each output's bytes so far.
    outputs: Vec<Vec<u8>>,
    /// Which container each output belongs to.
    owner: Vec<usize>,
    /// Each container's `done` status, as told.
    done: Vec<Option<Status>>,
    /// The first broken rule seen in a callback (a callback must not
    /// unwind into the library).
    wrong: Option<String>,
}

unsafe extern "C" fn stream_next(context: *mut std::ffi::c_void, container: *mut usize) -> bool {
    // SAFETY: the context is the `Streamed` the check passed for the call.
    let streamed = unsafe { &mut *context.cast::<Streamed>() };
    let Some(&next) = streamed.order.get(streamed.handed) else {
        return false;
    };
    streamed.handed += 1;
    // SAFETY: the library passes a writable slot.
    unsafe { container.write(next) };
    true
}

unsafe extern "C" fn stream_write(
    context: *mut std::ffi::c_void,
    output: usize,
    offset: u64,
    data: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: as in `stream_next`.
    let streamed = unsafe { &mut *context.cast::<Streamed>() };
    let Some(&owner) = streamed.owner.get(output) else {
        streamed
            .wrong
            .get_or_insert(format!("a write to output {output}, past the count"));
        return 1;
    };
    let wrong = if !streamed.order[..streamed.handed].contains(&owner) {
        Some("bytes of a container not handed out")
    } else if streamed.done[owner].is_some() {
        Some("bytes after the container's done")
    } else if offset != streamed.outputs[output].len() as u64 {
        Some("an output's bytes out of order")
    } else if len == 0 {
        Some("a write of no bytes")
    } else {
        None
    };
    if let Some(wrong) = wrong {
        streamed
            .wrong
            .get_or_insert(format!("output {output}: {wrong}"));
        return 1;
    }
    // SAFETY: the library passes `len` readable bytes for the call.
    streamed.outputs[output].extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) });
    0
}

unsafe extern "C" fn stream_done(
    context: *mut std::ffi::c_void,
    container: usize,
    status: Status,
    error: *const c::clangoffload_error,
) {
    // SAFETY: as in `stream_next`.
    let streamed = unsafe { &mut *context.cast::<Streamed>() };
    let wrong = if !streamed.order[..streamed.handed].contains(&container) {
        Some("done for a container not handed out")
    } else if streamed.done[container].is_some() {
        Some("done twice")
    } else if error.is_null() {
        Some("done without an error record")
    } else {
        None
    };
    match wrong {
        Some(wrong) => {
            streamed
                .wrong
                .get_or_insert(format!("container {container}: {wrong}"));
        }
        None => streamed.done[container] = Some(status),
    }
}

/// A job's output `output`, its pieces joined.
fn planned(job: *const c::clangoffload_job, output: usize, data: &[u8]) -> Vec<u8> {
    let mut bytes_out = Vec::new();
    // SAFETY: `job` is live for these calls.
    let pieces = unsafe { c::clangoffload_job_piece_count(job, output) };
    for index in 0..pieces {
        let mut piece = MaybeUninit::<c::clangoffload_piece>::uninit();
        // SAFETY: as above; `piece` is writable.
        let status =
            unsafe { c::clangoffload_job_get_piece(job, output, index, piece.as_mut_ptr()) };
        assert_eq!(no_panic(status, "job_get_piece"), Status::Ok);
        // SAFETY: written on OK.
        let piece = unsafe { piece.assume_init() };
        match piece.kind {
            c::clangoffload_piece_kind::Zeros => {
                bytes_out.resize(bytes_out.len() + piece.zeros as usize, 0);
            }
            kind => {
                if kind == c::clangoffload_piece_kind::Input {
                    inside(piece.bytes, data, "an input piece");
                }
                if piece.bytes.len > 0 {
                    // SAFETY: the view is live while the job is.
                    bytes_out.extend_from_slice(unsafe {
                        std::slice::from_raw_parts(piece.bytes.ptr, piece.bytes.len)
                    });
                }
            }
        }
    }
    bytes_out
}

fn extraction(data: &[u8]) {
    let options = c::clangoffload_bundler_options {
        file_type: bytes(&[]),
        targets: std::ptr::null(),
        target_count: 0,
        flags: 0,
        max_decompressed_size: MAX_OUTPUT as u64,
        input_name: bytes(b"fuzz"),
        notify: None,
        context: std::ptr::null_mut(),
    };
    let mut handle = std::ptr::null_mut();
    let mut err = error();
    // SAFETY: `data` is readable, the options and outputs are locals.
    let status = unsafe {
        c::clangoffload_bundler_extraction(
            data.as_ptr(),
            data.len(),
            &options,
            &mut handle,
            &mut err,
        )
    };
    if no_panic(status, "bundler_extraction") != Status::Ok {
        return;
    }
    // SAFETY: `handle` is live until freed below.
    let count = unsafe { c::clangoffload_extraction_container_count(handle) };
    // SAFETY: `handle` is live until freed below.
    let outputs = unsafe { c::clangoffload_extraction_output_count(handle) };
    let mut owner = vec![usize::MAX; outputs];
    let mut plans = Vec::new();
    for index in 0..count {
        let mut container = MaybeUninit::<c::clangoffload_extraction_container>::uninit();
        // SAFETY: live; `container` writable.
        let status = unsafe {
            c::clangoffload_extraction_get_container(handle, index, container.as_mut_ptr())
        };
        assert_eq!(no_panic(status, "extraction_get_container"), Status::Ok);
        // SAFETY: written on OK.
        let container = unsafe { container.assume_init() };
        assert!(
            container.offset <= data.len() as u64
                && container.size <= data.len() as u64 - container.offset,
            "a container outside the input"
        );
        let outs = container.first_output..container.first_output + container.output_count;
        assert!(outs.end <= outputs, "a container's outputs past the count");
        for o in outs.clone() {
            assert_eq!(owner[o], usize::MAX, "an output of two containers");
            owner[o] = index;
        }
        let mut job = std::ptr::null_mut();
        // SAFETY: live; `job` and `err` writable.
        let status = unsafe {
            c::clangoffload_extraction_plan(
                handle,
                index,
                None,
                std::ptr::null_mut(),
                &mut job,
                &mut err,
            )
        };
        let planned = (no_panic(status, "extraction_plan") == Status::Ok).then(|| {
            let bytes_out: Vec<Vec<u8>> = (0..container.output_count)
                .map(|o| planned(job, o, data))
                .collect();
            // SAFETY: `job` is the live job just made.
            unsafe { c::clangoffload_job_free(job) };
            bytes_out
        });
        plans.push((outs, planned));
    }
    let mut get = MaybeUninit::<c::clangoffload_extraction_container>::uninit();
    // SAFETY: live; `get` writable.
    let past = unsafe { c::clangoffload_extraction_get_container(handle, count, get.as_mut_ptr()) };
    assert_ne!(no_panic(past, "extraction_get_container"), Status::Ok);
    // Containers handed out last first, so that the order differs from the
    // plan's; one or two lanes, as the input's length says.
    let mut streamed = Streamed {
        order: (0..count).rev().collect(),
        handed: 0,
        outputs: vec![Vec::new(); outputs],
        owner,
        done: vec![None; count],
        wrong: None,
    };
    let sink = c::clangoffload_extraction_sink {
        next: Some(stream_next),
        write: Some(stream_write),
        done: Some(stream_done),
        context: std::ptr::from_mut(&mut streamed).cast(),
    };
    let lanes = 1 + data.len() % 2;
    // SAFETY: live; the sink and its context live through the call.
    let status = unsafe {
        c::clangoffload_extraction_stream(handle, lanes, &sink, None, std::ptr::null_mut())
    };
    assert_eq!(no_panic(status, "extraction_stream"), Status::Ok);
    // SAFETY: live, freed once.
    unsafe { c::clangoffload_extraction_free(handle) };
    if let Some(wrong) = streamed.wrong {
        panic!("extraction_stream: {wrong}");
    }
    for (index, (outs, plan)) in plans.into_iter().enumerate() {
        let done = streamed.done[index].expect("a container never done");
        let done = no_panic(done, "extraction_stream (done)");
        assert_eq!(
            done == Status::Ok,
            plan.is_some(),
            "container {index}: the stream and the plan disagree ({done:?})"
        );
        if let Some(plan) = plan {
            for (o, bytes_out) in outs.zip(plan) {
                assert!(streamed.outputs[o] == bytes_out, "output {o}: other bytes");
            }
        }
    }
}

/// SMs `cuda_select` is asked for.
const SMS: [u32; 3] = [75, 90, 120];

fn cuda(data: &[u8]) {
    let mut handle = std::ptr::null_mut();
    let mut err = error();
    // SAFETY: `data` and the base name are readable; outputs are locals.
    let status = unsafe {
        c::clangoffload_cuda_fatbins_parse(
            data.as_ptr(),
            data.len(),
            bytes(b"k"),
            c::CLANGOFFLOAD_PARSE_LENIENT,
            &mut handle,
            &mut err,
        )
    };
    if no_panic(status, "cuda_fatbins_parse") != Status::Ok {
        return;
    }
    // SAFETY: `handle` is live until freed below.
    let fatbins = unsafe { c::clangoffload_cuda_fatbins_count(handle) };
    for index in 0..=fatbins {
        let mut fatbin = MaybeUninit::<c::clangoffload_cuda_fatbin>::uninit();
        // SAFETY: `handle` is live; `fatbin` is a writable local (the index
        // one past the end is refused, not written through).
        let status =
            unsafe { c::clangoffload_cuda_fatbins_get(handle, index, fatbin.as_mut_ptr()) };
        if index == fatbins {
            assert_ne!(
                no_panic(status, "cuda_fatbins_get"),
                Status::Ok,
                "past the end"
            );
            continue;
        }
        assert_eq!(no_panic(status, "cuda_fatbins_get"), Status::Ok);
        // SAFETY: written whole on OK, asserted just above.
        let fatbin = unsafe { fatbin.assume_init() };
        inside(fatbin.data, data, "a fat binary");
        inside(fatbin.section, data, "a fat binary's section name");
        for sm in SMS {
            let (mut entry, mut how) = (0usize, 0u32);
            // SAFETY: `handle` is live; `entry` and `how` are writable locals.
            let status =
                unsafe { c::clangoffload_cuda_select(handle, index, sm, &mut entry, &mut how) };
            if no_panic(status, "cuda_select") == Status::Ok {
                // SAFETY: `handle` is live until freed below.
                assert!(entry < unsafe { c::clangoffload_cuda_fatbins_entry_count(handle) });
            }
        }
    }
    // SAFETY: `handle` is live until freed below.
    let entries = unsafe { c::clangoffload_cuda_fatbins_entry_count(handle) };
    for index in 0..=entries.min(64) {
        let mut entry = MaybeUninit::<c::clangoffload_cuda_entry>::uninit();
        // SAFETY: `handle` is live; `entry` is a writable local.
        let status =
            unsafe { c::clangoffload_cuda_fatbins_get_entry(handle, index, entry.as_mut_ptr()) };
        if index == entries {
            assert_ne!(
                no_panic(status, "cuda_fatbins_get_entry"),
                Status::Ok,
                "past the end"
            );
            break;
        }
        assert_eq!(no_panic(status, "cuda_fatbins_get_entry"), Status::Ok);
        // SAFETY: written whole on OK, asserted just above.
        let entry = unsafe { entry.assume_init() };
        assert!(entry.fatbin < fatbins, "an entry of no fat binary");
        inside(entry.identifier, data, "an entry's identifier");
        let mut member = bytes(&[]);
        // SAFETY: `handle` is live; `member` is a writable local.
        let status = unsafe { c::clangoffload_cuda_fatbins_member(handle, index, &mut member) };
        if no_panic(status, "cuda_fatbins_member") == Status::Ok {
            inside(member, data, "an archive member's name");
        }
        let mut image = c::clangoffload_buffer {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        // SAFETY: `handle` is live; `image` and `err` are writable locals.
        let status = unsafe {
            c::clangoffload_cuda_entry_image(handle, index, MAX_OUTPUT as u64, &mut image, &mut err)
        };
        if no_panic(status, "cuda_entry_image") == Status::Ok {
            assert!(image.len <= MAX_OUTPUT, "an image over the limit");
            // SAFETY: `image` is the library's buffer, written on OK and
            // freed once.
            unsafe { c::clangoffload_buffer_free(&mut image) };
        }
    }
    // SAFETY: `handle` is live; `err` is a writable local.
    let status = unsafe { c::clangoffload_cuda_fatbins_fault(handle, &mut err) };
    let _ = no_panic(status, "cuda_fatbins_fault");
    // SAFETY: `handle` came from the parse above and is freed once, here.
    unsafe { c::clangoffload_cuda_fatbins_free(handle) };
}

/// What `prune` keeps: sm_90's cubin and any compute_80 code.
const KEEP: [c::clangoffload_cuda_target; 2] = [
    c::clangoffload_cuda_target {
        kind: 2,
        arch: 90,
        variant: 0,
    },
    c::clangoffload_cuda_target {
        kind: 1,
        arch: 80,
        variant: 0,
    },
];

fn prune(data: &[u8]) {
    // `None` asks for the size (a NULL `out`); an empty buffer is a
    // non-NULL pointer with no room, which an empty result fits.
    let prune = |out: Option<&mut [u8]>, len: &mut usize| {
        let mut err = error();
        let (ptr, cap) = match out {
            Some(out) => (out.as_mut_ptr(), out.len()),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: `data` and `KEEP` readable, `ptr` NULL or writable for
        // `cap` bytes and apart from `data`, the rest locals.
        let status = unsafe {
            c::clangoffload_cuda_fatbin_prune(
                data.as_ptr(),
                data.len(),
                KEEP.as_ptr(),
                KEEP.len(),
                MAX_OUTPUT as u64,
                ptr,
                cap,
                len,
                &mut err,
            )
        };
        no_panic(status, "cuda_fatbin_prune")
    };
    let mut needed = 0usize;
    if prune(None, &mut needed) == Status::BufferTooSmall && needed <= 4 * MAX_OUTPUT {
        let mut out = vec![0u8; needed];
        let mut len = 0usize;
        assert_eq!(
            prune(Some(&mut out), &mut len),
            Status::Ok,
            "the size asked for"
        );
        assert_eq!(len, needed, "another length than announced");
        if needed > 0 {
            let short = prune(Some(&mut out[..needed - 1]), &mut len);
            assert_eq!(short, Status::BufferTooSmall, "one byte short");
        }
    }
    let mut copy = data.to_vec();
    let mut changed = 0usize;
    let mut err = error();
    // SAFETY: `copy` is ours, readable and writable for its length.
    let status = unsafe {
        c::clangoffload_cuda_fatbin_prune_in_place(
            copy.as_mut_ptr(),
            copy.len(),
            KEEP.as_ptr(),
            KEEP.len(),
            MAX_OUTPUT as u64,
            &mut changed,
            &mut err,
        )
    };
    assert_eq!(copy.len(), data.len());
    match no_panic(status, "cuda_fatbin_prune_in_place") {
        Status::Ok => assert!(changed > 0 || copy == data, "changed bytes, said none"),
        _ => assert!(copy == data, "an error that changed the bytes"),
    }
}

/// The archive bytes of the kpack checks: the input from its last `KPAK`
/// on (a split host followed by its archive), else the input.
fn kpack_archive(data: &[u8]) -> &[u8] {
    let from = data.windows(4).rposition(|w| w == b"KPAK").unwrap_or(0);
    &data[from..]
}

/// What `open_archive` was asked for.
struct Asked<'a> {
    archive: &'a [u8],
    paths: Vec<Vec<u8>>,
}

/// A `clangoffload_kpack_open_fn` giving `Asked::archive` for every path.
///
/// # Safety
/// `context` points to a live `Asked` used by nothing else during the
/// call; `path` readable for `path_len` bytes; `out` writable.
unsafe extern "C" fn open_archive(
    context: *mut std::ffi::c_void,
    path: *const u8,
    path_len: usize,
    out: *mut c::clangoffload_bytes,
) -> bool {
    // SAFETY: the check's record, unchanged by the library.
    let asked = unsafe { &mut *context.cast::<Asked>() };
    // SAFETY: readable for `path_len` bytes, as the library promises.
    let path = unsafe { std::slice::from_raw_parts(path, path_len) };
    // A path asked twice fails later, in `kpack`, not across the boundary.
    asked.paths.push(path.to_vec());
    // SAFETY: writable, as the library promises; the bytes are the input's,
    // alive for the whole check.
    unsafe { out.write(bytes(asked.archive)) };
    true
}

fn kpack(data: &[u8]) {
    let archive = kpack_archive(data);
    for flags in [0, c::CLANGOFFLOAD_KPACK_FIRST_CANDIDATE] {
        let mut asked = Asked {
            archive,
            paths: Vec::new(),
        };
        let dir = b"/pkg/lib";
        let device = DEVICES[0];
        let mut selection = std::ptr::null_mut();
        // SAFETY: `data`, `device` and `dir` readable for their lengths,
        // `open_archive` callable with `asked` during the call, `selection`
        // a local.
        let status = unsafe {
            c::clangoffload_select_split_host(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                bytes(dir),
                std::ptr::null(),
                flags,
                Some(open_archive),
                (&mut asked as *mut Asked).cast(),
                &mut selection,
            )
        };
        for (i, path) in asked.paths.iter().enumerate() {
            assert!(!asked.paths[..i].contains(path), "a path asked twice");
        }
        if no_panic(status, "select_split_host") == Status::Ok {
            choices(selection, archive, &asked.paths, true);
        }
    }
    let mut kpack = std::ptr::null_mut();
    let mut err = error();
    // SAFETY: `data` readable for its length, the outputs locals.
    let status =
        unsafe { c::clangoffload_kpack_parse(data.as_ptr(), data.len(), &mut kpack, &mut err) };
    if no_panic(status, "kpack_parse") != Status::Ok {
        return;
    }
    let path = b"a.kpack";
    // An ISA name as the runtime has it (its feature subsets tried), a
    // target ID, a device whose code is the generic target's.
    for device in ["gfx90a:sramecc+:xnack-", DEVICES[0], DEVICES[1]] {
        let mut selection = std::ptr::null_mut();
        // SAFETY: `kpack` a live handle, `path` and `device` readable, the
        // output a local.
        let status = unsafe {
            c::clangoffload_select_kpack(
                kpack,
                bytes(path),
                device.as_ptr().cast(),
                device.len(),
                std::ptr::null(),
                0,
                &mut selection,
            )
        };
        if no_panic(status, "select_kpack") == Status::Ok {
            choices(selection, data, &[path.to_vec()], false);
        }
    }
    // SAFETY: parsed above, freed once.
    unsafe { c::clangoffload_kpack_free(kpack) };
}

/// Reads every choice of `selection` (then frees it): a record's choice
/// has its offset, a key of an archive alone none and is listed once; a
/// code object chosen is the entry its index names in `archive` (what
/// every path gave), under the choice's key and ID.
fn choices(
    selection: *mut c::clangoffload_kpack_selection,
    archive: &[u8],
    paths: &[Vec<u8>],
    records: bool,
) {
    let mut kpack = std::ptr::null_mut();
    let mut err = error();
    // SAFETY: `archive` readable for its length, the outputs locals.
    let parsed = unsafe {
        c::clangoffload_kpack_parse(archive.as_ptr(), archive.len(), &mut kpack, &mut err)
    };
    // SAFETY: a live handle until freed below.
    let count = unsafe { c::clangoffload_kpack_selection_count(selection) };
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for index in 0..=count {
        let mut choice = MaybeUninit::<c::clangoffload_kpack_choice>::uninit();
        // SAFETY: a live handle, `choice` a local.
        let status =
            unsafe { c::clangoffload_kpack_selection_get(selection, index, choice.as_mut_ptr()) };
        if index == count {
            assert_eq!(status, Status::IndexOutOfRange, "a choice past the count");
            break;
        }
        assert_eq!(status, Status::Ok, "choice {index} of {count}");
        // SAFETY: written on OK.
        let choice = unsafe { choice.assume_init() };
        let [key, id, path, reason] =
            [choice.key, choice.id, choice.path, choice.reason].map(|v| view(v).to_vec());
        assert!(!reason.is_empty(), "a choice without a reason");
        assert_eq!(choice.has_offset, records);
        assert_eq!(
            choice.loads,
            choice.how != 0 && choice.kpack_error == 0 && !choice.unreadable,
            "loads, how and error disagree: {choice:?}"
        );
        if !records {
            assert!(!keys.contains(&key), "a key twice");
            keys.push(key.clone());
        }
        eprintln!(
            "DBG records={records} loads={} how={} err={} key={}",
            choice.loads,
            choice.how,
            choice.kpack_error,
            String::from_utf8_lossy(&key)
        );
        if !choice.loads {
            continue;
        }
        assert!(paths.contains(&path), "a path never opened");
        assert_eq!(
            parsed,
            Status::Ok,
            "chosen from an archive that does not parse"
        );
        let mut entry = MaybeUninit::<c::clangoffload_kpack_entry>::uninit();
        // SAFETY: `kpack` live (parsed), `entry` a local.
        let status =
            unsafe { c::clangoffload_kpack_get_entry(kpack, choice.entry, entry.as_mut_ptr()) };
        assert_eq!(status, Status::Ok, "the chosen entry's index");
        // SAFETY: written on OK.
        let entry = unsafe { entry.assume_init() };
        let named = if entry.target.len > 0 {
            entry.target
        } else {
            entry.arch
        };
        assert_eq!((view(entry.key), view(named)), (&key[..], &id[..]));
    }
    // SAFETY: a live handle, freed once.
    unsafe { c::clangoffload_kpack_selection_free(selection) };
    // SAFETY: NULL (does nothing) or a live handle, freed once.
    unsafe { c::clangoffload_kpack_free(kpack) };
}

/// The bytes a view of the library's names (empty for an empty view).
fn view<'a>(view: c::clangoffload_bytes) -> &'a [u8] {
    if view.len == 0 {
        return &[];
    }
    assert!(!view.ptr.is_null(), "a NULL view with a length");
    // SAFETY: the library's views are readable for their length while
    // their handle lives; callers copy or compare them before freeing it.
    unsafe { std::slice::from_raw_parts(view.ptr, view.len) }
}
