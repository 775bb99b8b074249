//! The C ABI for CUDA fat binaries: every fat binary and entry of a host
//! file, the image cuobjdump extracts, the driver's choice for a device,
//! lenient and strict parsing of damaged input, and NULL arguments.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::ptr::{null, null_mut};

use clangoffload_capi as c;
use common::root;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures/cuda").join(name)).unwrap()
}

fn bytes(b: &[u8]) -> c::clangoffload_bytes {
    c::clangoffload_bytes {
        ptr: b.as_ptr(),
        len: b.len(),
    }
}

/// # Safety
/// `v` views live memory.
unsafe fn view<'a>(v: c::clangoffload_bytes) -> &'a [u8] {
    if v.len == 0 {
        return &[];
    }
    // SAFETY: as the caller promises, `v` views `v.len` live bytes (not none: checked above).
    unsafe { std::slice::from_raw_parts(v.ptr, v.len) }
}

fn parse(data: &[u8], base: &str, flags: u32) -> Result<*mut c::clangoffload_cuda_fatbins, u32> {
    let mut handle = null_mut();
    // SAFETY: `data` and `base` are live for the call, `data` until the caller frees the handle;
    // `handle` is writable.
    let status = unsafe {
        c::clangoffload_cuda_fatbins_parse(
            data.as_ptr(),
            data.len(),
            bytes(base.as_bytes()),
            flags,
            &mut handle,
            null_mut(),
        )
    };
    match status {
        c::clangoffload_status::Ok => Ok(handle),
        s => Err(s as u32),
    }
}

fn entries(h: *const c::clangoffload_cuda_fatbins) -> Vec<c::clangoffload_cuda_entry> {
    // SAFETY: `h` is a live handle, as every caller passes it.
    let n = unsafe { c::clangoffload_cuda_fatbins_entry_count(h) };
    (0..n)
        .map(|i| {
            let mut e = std::mem::MaybeUninit::uninit();
            // SAFETY: `h` is live; `e` is a writable record.
            let s = unsafe { c::clangoffload_cuda_fatbins_get_entry(h, i, e.as_mut_ptr()) };
            assert_eq!(s, c::clangoffload_status::Ok);
            // SAFETY: written whole on OK, asserted just above.
            unsafe { e.assume_init() }
        })
        .collect()
}

#[test]
fn a_linked_library_lists_relfatbin_after_nv_fatbin() {
    let data = fixture("nvcc-rdc-linked.so");
    let h = parse(&data, "nvcc-rdc-linked", 0).unwrap();
    // SAFETY: `h` is live until freed below.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(h) }, 3);
    let mut f = std::mem::MaybeUninit::uninit();
    // SAFETY: `h` is live; `f` is a writable record.
    let s = unsafe { c::clangoffload_cuda_fatbins_get(h, 0, f.as_mut_ptr()) };
    assert_eq!(s, c::clangoffload_status::Ok);
    // SAFETY: written whole on OK, asserted just above.
    let f = unsafe { f.assume_init() };
    // SAFETY: the view names bytes of `data`, which the handle borrows, live here.
    assert_eq!(unsafe { view(f.section) }, b".nv_fatbin");
    let names: Vec<String> = entries(h)
        .iter()
        // SAFETY: the entry's name is the handle's bytes, live until it is freed below.
        .map(|e| String::from_utf8_lossy(unsafe { view(e.name) }).into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "nvcc-rdc-linked.1.sm_80.cubin",
            "nvcc-rdc-linked.2.sm_80.cubin",
            "nvcc-rdc-linked.1.sm_80.ptx",
            "nvcc-rdc-linked.3.sm_80.cubin",
            "nvcc-rdc-linked.2.sm_80.ptx"
        ]
    );
    // The compressed cubin decodes to an ELF of its declared size.
    let mut out = c::clangoffload_buffer {
        ptr: null_mut(),
        len: 0,
    };
    // SAFETY: `h` is live; `out` is a writable buffer record; no error record (NULL is allowed).
    let s = unsafe { c::clangoffload_cuda_entry_image(h, 1, 0, &mut out, null_mut()) };
    assert_eq!(s, c::clangoffload_status::Ok);
    assert_eq!(out.len, 3456);
    // SAFETY: on OK `out` is the library's buffer of `out.len` (3456, asserted) bytes, live until
    // freed below.
    assert!(unsafe { std::slice::from_raw_parts(out.ptr, 4) } == b"\x7fELF");
    // SAFETY: `out` is the library's buffer, freed once; nothing read from it is used after.
    unsafe { c::clangoffload_buffer_free(&mut out) };
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
}

/// nvcc `-dlto`'s LTO-IR entry is flagged zstd but holds no zstd frame
/// (flag 0x10000): its image is its bytes as stored, not a decoding error.
#[test]
fn an_opaque_lto_ir_entry_gives_its_stored_bytes() {
    let data = fixture("nvcc-dlto.o");
    let h = parse(&data, "nvcc-dlto", 0).unwrap();
    let all = entries(h);
    assert_eq!(all.iter().map(|e| e.kind).collect::<Vec<_>>(), [1, 8]);
    let mut out = c::clangoffload_buffer {
        ptr: null_mut(),
        len: 0,
    };
    // SAFETY: `h` is live; `out` is a writable buffer record; no error record (NULL is allowed).
    let s = unsafe { c::clangoffload_cuda_entry_image(h, 1, 0, &mut out, null_mut()) };
    assert_eq!(s, c::clangoffload_status::Ok);
    // SAFETY: on OK `out` is the library's buffer of `out.len` bytes, live until freed below.
    let image = unsafe { std::slice::from_raw_parts(out.ptr, out.len) };
    let at = usize::try_from(all[1].offset).unwrap() + usize::try_from(all[1].header_size).unwrap();
    assert_eq!(out.len, usize::try_from(all[1].compressed_size).unwrap());
    assert!(image == &data[at..at + out.len]);
    // SAFETY: `out` is the library's buffer, freed once; nothing read from it is used after.
    unsafe { c::clangoffload_buffer_free(&mut out) };
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
}

#[test]
fn selection_through_the_c_abi() {
    let data = fixture("raw-concat-zstd.fatbin");
    let h = parse(&data, "x", 0).unwrap();
    let all = entries(h);
    let select = |device: u32| {
        let (mut index, mut how) = (usize::MAX, 0u32);
        // SAFETY: `h` is live while the closure is used (freed after its last use); `index` and
        // `how` are writable locals.
        let s = unsafe { c::clangoffload_cuda_select(h, 0, device, &mut index, &mut how) };
        (s, index, how)
    };
    let (s, index, how) = select(90);
    assert_eq!(
        (s, how),
        (c::clangoffload_status::Ok, c::CLANGOFFLOAD_CUDA_MATCH_CUBIN)
    );
    assert_eq!(
        (all[index].arch, all[index].variant, all[index].member),
        (90, 2, 2)
    );
    // sm_75: no cubin of major 7, and the PTX is for sm_80: nothing runs.
    assert_eq!(select(75).0, c::clangoffload_status::NotFound);
    // sm_110: no cubin; the sm_80 PTX is JIT-compiled.
    let (s, index, how) = select(110);
    assert_eq!(
        (s, how),
        (c::clangoffload_status::Ok, c::CLANGOFFLOAD_CUDA_MATCH_PTX)
    );
    assert_eq!((all[index].kind, all[index].arch), (1, 80));
    assert_eq!(
        // SAFETY: `h` is live; NULL outputs are refused, never written.
        unsafe { c::clangoffload_cuda_select(h, 1, 90, null_mut(), null_mut()) },
        c::clangoffload_status::IndexOutOfRange
    );
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
}

#[test]
fn damaged_input_strict_and_lenient() {
    let mut data = fixture("raw-three-concatenated.fatbin");
    data.extend_from_slice(b"junk");
    assert_eq!(
        parse(&data, "", 0).unwrap_err(),
        c::clangoffload_status::NotFatbin as u32
    );
    let h = parse(&data, "", c::CLANGOFFLOAD_PARSE_LENIENT).unwrap();
    // SAFETY: `h` is live until freed below.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(h) }, 3);
    let mut err = c::clangoffload_error {
        status: 0,
        offset: 0,
        entry: 0,
        message: [0; 256],
    };
    // SAFETY: `h` is live; `err` is a writable record.
    let s = unsafe { c::clangoffload_cuda_fatbins_fault(h, &mut err) };
    assert_eq!(s, c::clangoffload_status::NotFatbin);
    assert_eq!(err.offset, (data.len() - 4) as u64);
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
    // A file with no fat binary: an empty handle.
    let h = parse(b"plain bytes", "", 0).unwrap();
    // SAFETY: `h` is live until freed below.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(h) }, 0);
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
}

#[test]
fn a_static_library_names_the_member_of_each_fat_binary() {
    let data = fixture("nvcc-lib.a");
    let h = parse(&data, "nvcc-lib", 0).unwrap();
    // SAFETY: `h` is live until freed below.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(h) }, 2);
    let member = |index| {
        let mut out = bytes(b"");
        // SAFETY: `h` is live while the closure is used (freed after its last use); `out` is a
        // writable view.
        let s = unsafe { c::clangoffload_cuda_fatbins_member(h, index, &mut out) };
        // SAFETY: `out` is still the empty view it was given or, on OK, views the
        // handle's or the input's bytes, live here.
        (s, unsafe { view(out) }.to_vec())
    };
    assert_eq!(
        member(0),
        (
            c::clangoffload_status::Ok,
            b"tmpxft_00002ba0_00000000-16_a.o".to_vec()
        )
    );
    assert_eq!(member(1).1, b"tmpxft_00002ba0_00000000-20_b.o");
    assert_eq!(member(2).0, c::clangoffload_status::IndexOutOfRange);
    // SAFETY: `h` is live; the NULL output is refused, not written.
    let s = unsafe { c::clangoffload_cuda_fatbins_member(h, 0, null_mut()) };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // Numbered on across members, as cuobjdump numbers them.
    let names: Vec<String> = entries(h)
        .iter()
        // SAFETY: the entry's name is the handle's bytes, live until it is freed below.
        .map(|e| String::from_utf8_lossy(unsafe { view(e.name) }).into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "nvcc-lib.1.sm_80.cubin",
            "nvcc-lib.1.sm_90.ptx",
            "nvcc-lib.2.sm_80.cubin",
            "nvcc-lib.2.sm_90.ptx"
        ]
    );
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
    // Not an archive: no member.
    let data = fixture("clang-sm80.o");
    let h = parse(&data, "clang-sm80", 0).unwrap();
    assert_eq!(member_of(h, 0), b"");
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
}

fn member_of(h: *const c::clangoffload_cuda_fatbins, index: usize) -> Vec<u8> {
    let mut out = bytes(b"x");
    // SAFETY: `h` is live, as the caller passes it; `out` is a writable view.
    let s = unsafe { c::clangoffload_cuda_fatbins_member(h, index, &mut out) };
    assert_eq!(s, c::clangoffload_status::Ok);
    // SAFETY: on OK (asserted just above) `out` views the handle's or the
    // input's bytes, live here.
    unsafe { view(out) }.to_vec()
}

#[test]
fn null_arguments() {
    let empty = c::clangoffload_bytes {
        ptr: null(),
        len: 0,
    };
    let s =
        // SAFETY: a NULL input of length 0 and a NULL output: refused before anything is read or
        // written.
        unsafe { c::clangoffload_cuda_fatbins_parse(null(), 0, empty, 0, null_mut(), null_mut()) };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // SAFETY: a NULL handle is answered, not read.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(null()) }, 0);
    assert_eq!(
        // SAFETY: a NULL handle is answered, not read.
        unsafe { c::clangoffload_cuda_fatbins_entry_count(null()) },
        0
    );
    // SAFETY: a NULL handle is refused, not read.
    let s = unsafe { c::clangoffload_cuda_fatbins_fault(null(), null_mut()) };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // SAFETY: freeing NULL is allowed and does nothing.
    unsafe { c::clangoffload_cuda_fatbins_free(null_mut()) };
}

fn none() -> c::clangoffload_bytes {
    c::clangoffload_bytes {
        ptr: null(),
        len: 0,
    }
}

fn new_entry(kind: u16, arch: u32, data: &[u8]) -> c::clangoffload_cuda_new_entry {
    c::clangoffload_cuda_new_entry {
        kind,
        arch,
        variant: 0,
        data: bytes(data),
        identifier: none(),
        options: none(),
        debug: false,
    }
}

/// The bytes of a call that writes into a caller's buffer: asked for the
/// length first, then given one byte less (refused), then exactly that.
fn sized(call: impl Fn(*mut u8, usize, &mut usize) -> c::clangoffload_status) -> Vec<u8> {
    let mut len = 0;
    assert_eq!(
        call(null_mut(), 0, &mut len),
        c::clangoffload_status::BufferTooSmall
    );
    let mut out = vec![0u8; len];
    assert_eq!(
        call(out.as_mut_ptr(), len - 1, &mut len),
        c::clangoffload_status::BufferTooSmall
    );
    assert_eq!(
        call(out.as_mut_ptr(), out.len(), &mut len),
        c::clangoffload_status::Ok
    );
    assert_eq!(len, out.len());
    out
}

/// `clangoffload_cuda_fatbin_write`'s bytes, through [`sized`].
fn write(entries: &[c::clangoffload_cuda_new_entry], mode: u32, flags: u32) -> Vec<u8> {
    // SAFETY: `entries` and their views are live for the call; `out`, `cap` and `len` are as
    // `sized` passes them: NULL and 0, or a buffer writable for `cap` bytes, and a writable length.
    sized(|out, cap, len| unsafe {
        c::clangoffload_cuda_fatbin_write(
            entries.as_ptr(),
            entries.len(),
            mode,
            flags,
            out,
            cap,
            len,
            null_mut(),
        )
    })
}

/// What `fatbinary` wrote from k80.cubin and k80.ptx, each way: the same
/// bytes from the C ABI.
#[test]
fn write_is_byte_identical_to_fatbinary() {
    let cubin = fixture("inputs/k80.cubin");
    let ptx = fixture("inputs/k80.ptx");
    let entries = [new_entry(2, 80, &cubin), new_entry(1, 80, &ptx)];
    let cases = [
        ("raw-stored.fatbin", c::CLANGOFFLOAD_CUDA_COMPRESS_NONE, 0),
        (
            "raw-default.fatbin",
            c::CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT,
            0,
        ),
        (
            "raw-zstd.fatbin",
            c::CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT,
            c::CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL,
        ),
        (
            "raw-lz4.fatbin",
            c::CLANGOFFLOAD_CUDA_COMPRESS_SPEED,
            c::CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL,
        ),
        (
            "raw-stored.fatbin",
            c::CLANGOFFLOAD_CUDA_COMPRESS_SPEED,
            c::CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS | c::CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL,
        ),
    ];
    for (fixture_name, mode, flags) in cases {
        assert!(
            write(&entries, mode, flags) == fixture(fixture_name),
            "{fixture_name}"
        );
    }
    // The identifier, options and debug flag of raw-ident-opts-debug.
    let mut with = entries;
    for e in &mut with {
        e.identifier = bytes(b"myident.cu");
        e.debug = true;
    }
    with[1].options = bytes(b"-O3 -v");
    assert!(
        write(&with, 0, c::CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS)
            == fixture("raw-ident-opts-debug.fatbin")
    );
}

#[test]
fn write_refuses_bad_arguments() {
    let cubin = fixture("inputs/k80.cubin");
    let mut e = new_entry(2, 80, &cubin);
    let mut len = 0;
    // SAFETY: `e` is one live entry whose views are live or NULL (checked); a NULL output with
    // capacity 0 asks only for the length; `len` is writable.
    let call = |e: &c::clangoffload_cuda_new_entry, mode, flags, len: &mut usize| unsafe {
        c::clangoffload_cuda_fatbin_write(e, 1, mode, flags, null_mut(), 0, len, null_mut())
    };
    assert_eq!(
        call(&e, 9, 0, &mut len),
        c::clangoffload_status::InvalidArgument
    );
    assert_eq!(
        call(&e, 0, 1 << 20, &mut len),
        c::clangoffload_status::InvalidArgument
    );
    e.variant = 7;
    assert_eq!(
        call(&e, 0, 0, &mut len),
        c::clangoffload_status::InvalidArgument
    );
    e.variant = 0;
    e.data.ptr = null();
    assert_eq!(
        call(&e, 0, 0, &mut len),
        c::clangoffload_status::NullArgument
    );
    // SAFETY: NULL entries with a count of 1 are refused before anything is read; `len` is
    // writable.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_write(null(), 1, 0, 0, null_mut(), 0, &mut len, null_mut())
    };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // SAFETY: no entry is read (count 0); the NULL length is refused, not written.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_write(null(), 0, 0, 0, null_mut(), 0, null_mut(), null_mut())
    };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // No entries: an empty fat binary (16 bytes).
    assert_eq!(write(&[], 0, 0).len(), 16);
}

fn target(kind: u16, arch: u32) -> c::clangoffload_cuda_target {
    c::clangoffload_cuda_target {
        kind,
        arch,
        variant: 0,
    }
}

#[test]
fn prune_keeps_the_targets_given() {
    let three = fixture("raw-three-concatenated.fatbin");
    let keep = [target(2, 80)];
    // SAFETY: `three` and `keep` are live for the call; `out`, `cap` and `len` are as `sized`
    // passes them: NULL and 0, or a buffer writable for `cap` bytes, and a writable length.
    let mut out = sized(|out, cap, len| unsafe {
        c::clangoffload_cuda_fatbin_prune(
            three.as_ptr(),
            three.len(),
            keep.as_ptr(),
            keep.len(),
            0,
            out,
            cap,
            len,
            null_mut(),
        )
    });
    let h = parse(&out, "x", 0).unwrap();
    // SAFETY: `h` is live until freed below.
    assert_eq!(unsafe { c::clangoffload_cuda_fatbins_count(h) }, 3);
    assert!(entries(h).iter().all(|e| e.kind == 2 && e.arch == 80));
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
    // Kind 0 is any kind: the PTX is kept too.
    let keep = [target(0, 80)];
    let mut len = 0;
    // SAFETY: `three` and `keep` are live for the call; capacity 0 writes nothing to `out`; `len`
    // is writable.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_prune(
            three.as_ptr(),
            three.len(),
            keep.as_ptr(),
            keep.len(),
            0,
            out.as_mut_ptr(),
            0,
            &mut len,
            null_mut(),
        )
    };
    assert_eq!(s, c::clangoffload_status::BufferTooSmall);
    assert_eq!(len, three.len());
    // Not a fat binary: a located error.
    let mut err = std::mem::MaybeUninit::<c::clangoffload_error>::zeroed();
    // SAFETY: the input and `keep` are live for the call; a NULL output with capacity 0; `len` and
    // `err` are writable.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_prune(
            b"junk".as_ptr(),
            4,
            keep.as_ptr(),
            1,
            0,
            null_mut(),
            0,
            &mut len,
            err.as_mut_ptr(),
        )
    };
    assert_ne!(s, c::clangoffload_status::Ok);
    assert_ne!(s, c::clangoffload_status::BufferTooSmall);
}

#[test]
fn prune_in_place_keeps_the_host_file_whole() {
    let mut object = fixture("clang-multi-ptx.o");
    let before = object.clone();
    let keep = [target(2, 90), target(1, 80)];
    let mut changed = 0;
    // SAFETY: `object` is live and writable for its length, and used by this call only; `keep` is
    // live; `changed` is writable.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_prune_in_place(
            object.as_mut_ptr(),
            object.len(),
            keep.as_ptr(),
            keep.len(),
            0,
            &mut changed,
            null_mut(),
        )
    };
    assert_eq!(s, c::clangoffload_status::Ok);
    assert_eq!(changed, 1);
    assert_eq!(object.len(), before.len());
    let h = parse(&object, "clang-multi-ptx", 0).unwrap();
    let kept: Vec<_> = entries(h).iter().map(|e| (e.kind, e.arch)).collect();
    assert_eq!(kept, [(1, 80), (2, 90)]);
    // SAFETY: `h` came from `parse` and is freed once; nothing read from it is used after.
    unsafe { c::clangoffload_cuda_fatbins_free(h) };
    // SAFETY: as above, but the NULL `changed` is refused before anything is written.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_prune_in_place(
            object.as_mut_ptr(),
            object.len(),
            keep.as_ptr(),
            keep.len(),
            0,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(s, c::clangoffload_status::NullArgument);
    // SAFETY: the NULL input is refused before anything is read; `keep` is live and `changed`
    // writable.
    let s = unsafe {
        c::clangoffload_cuda_fatbin_prune_in_place(
            null_mut(),
            4,
            keep.as_ptr(),
            keep.len(),
            0,
            &mut changed,
            null_mut(),
        )
    };
    assert_eq!(s, c::clangoffload_status::NullArgument);
}

#[test]
fn sm_parse_reads_every_spelling() {
    let parse = |text: &str| {
        let (mut arch, mut variant) = (0, 0);
        // SAFETY: `text` is live for the call; `arch` and `variant` are writable locals.
        let s = unsafe {
            c::clangoffload_cuda_sm_parse(text.as_ptr().cast(), text.len(), &mut arch, &mut variant)
        };
        (s == c::clangoffload_status::Ok).then_some((arch, variant))
    };
    assert_eq!(parse("sm_90a"), Some((90, 2)));
    assert_eq!(parse("compute_100f"), Some((100, 1)));
    assert_eq!(parse("86"), Some((86, 0)));
    assert_eq!(parse("gfx90a"), None);
    assert_eq!(parse(""), None);
    // SAFETY: NULL arguments are refused, not followed.
    let s = unsafe { c::clangoffload_cuda_sm_parse(null(), 0, null_mut(), null_mut()) };
    assert_ne!(s, c::clangoffload_status::Ok);
}
