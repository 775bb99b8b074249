//! NVIDIA CUDA fat binaries: every fat binary in a file (raw, a host's
//! `.nv_fatbin` and `__nv_relfatbin` sections, OffloadBinary `fatbinary`
//! images for nvptx64), every entry with every header field (a `--concat`
//! entry's members as entries of their own), the image `cuobjdump` extracts
//! and the name it gives it, and the code the CUDA driver chooses for a
//! device; writing fat binaries as `fatbinary` does and pruning them (or a
//! host's sections, in place) as `nvprune` does.

use core::ffi::c_char;

use alloc::string::String;
use alloc::vec::Vec;

use clangoffload::cuda_fatbin::select::{select_for_device, CudaMatch};
use clangoffload::cuda_fatbin::{
    prune_fatbins, write_fatbin, CodeName, CompressMode, EntryKind, Fatbin, FatbinEntry, NewEntry,
    Sm, SmVariant, WriteOptions,
};
use clangoffload::cuda_host::{host_fatbins, prune_file_in_place, CuobjdumpCounter, FatbinSource};
use clangoffload::{DecompressOptions, Error};

use crate::compressed::limits;
use crate::ffi::{
    array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, mut_slice_arg, out_arg,
    slice_arg, str_arg, write_bytes, write_made,
};
use crate::handle;
use crate::object_bundle::clangoffload_buffer;
use crate::status::{clangoffload_error, clangoffload_status, report};

/// The fat binaries of a file and their entries. Borrows the file's bytes;
/// owns the names it gives the entries.
pub struct clangoffload_cuda_fatbins {
    fatbins: Vec<Found>,
    entries: Vec<Located>,
    fault: Option<Error>,
}

/// A fat binary and where it is.
struct Found {
    source: FatbinSource<'static>,
    member: Option<&'static [u8]>,
    offset: u64,
    fatbin: Fatbin<'static>,
}

struct Located {
    fatbin: usize,
    entry: FatbinEntry<'static>,
    /// The member of a concat entry.
    member: Option<u64>,
    kind: EntryKind,
    sm: Sm,
    /// The header of the member, or of the entry.
    identifier: Option<&'static [u8]>,
    /// Offset of the entry in the file.
    offset: u64,
    /// cuobjdump's name for the extracted image (empty if it extracts none).
    name: Vec<u8>,
}

/// Where a fat binary is: the input is fat binaries back to back.
pub const CLANGOFFLOAD_CUDA_SOURCE_RAW: u32 = 0;
/// In a host section (`.nv_fatbin`, `__nv_relfatbin`).
pub const CLANGOFFLOAD_CUDA_SOURCE_SECTION: u32 = 1;
/// In a `fatbinary` image of an OffloadBinary.
pub const CLANGOFFLOAD_CUDA_SOURCE_OFFLOAD_IMAGE: u32 = 2;

/// One fat binary; views borrow the parsed buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_cuda_fatbin {
    /// `CLANGOFFLOAD_CUDA_SOURCE_*`.
    pub source: u32,
    /// The section's name (empty for a raw fat binary).
    pub section: clangoffload_bytes,
    /// Offset in the file.
    pub offset: u64,
    /// The fat binary's bytes, header included.
    pub data: clangoffload_bytes,
    /// Header version (1).
    pub version: u16,
    /// Header size (16).
    pub header_size: u16,
    /// The bytes of entries after the header.
    pub fat_size: u64,
}

/// One entry (or member of the `--concat` entry before it), every header field as
/// stored; views borrow the parsed buffer, `name` the handle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_cuda_entry {
    /// The fat binary it is in (index of `clangoffload_cuda_fatbins_get`).
    pub fatbin: usize,
    /// Offset of the entry header in the file (a member's: of its
    /// concat entry).
    pub offset: u64,
    /// 0 for an entry; for a member of a concat entry, its index plus 1.
    pub member: u64,
    /// Kind (1 PTX, 2 ELF, 8 LTO-IR, 0x100 concat; others kept).
    pub kind: u16,
    /// Header version (0x0101).
    pub version: u16,
    /// Header size, extension included (a member: its offset in the
    /// decoded concat payload).
    pub header_size: u32,
    /// Payload size (padded to 8).
    pub payload_size: u64,
    /// Compressed size (0: stored).
    pub compressed_size: u32,
    /// Offset of the options record (0: none).
    pub options_offset: u32,
    /// Code version, major.
    pub major: u16,
    /// Code version, minor.
    pub minor: u16,
    /// SM number.
    pub arch: u32,
    /// 0 plain, 1 `f` (family), 2 `a` (arch-specific).
    pub variant: u32,
    /// Flags, unknown bits included.
    pub flags: u64,
    /// The reserved field at 0x30.
    pub reserved: u64,
    /// Uncompressed size (0: stored).
    pub uncompressed_size: u64,
    /// Identifier offset as stored.
    pub identifier_offset: u32,
    /// Identifier length as stored.
    pub identifier_length: u32,
    /// The identifier (empty if none).
    pub identifier: clangoffload_bytes,
    /// The options (empty if none).
    pub options: clangoffload_bytes,
    /// The payload as stored (a member: its concat entry's).
    pub payload: clangoffload_bytes,
    /// The name `cuobjdump -xelf all`/`-xptx all` writes the image to
    /// (empty for kinds it does not extract).
    pub name: clangoffload_bytes,
}

/// The decoded-size limit used by `clangoffload_cuda_entry_image`'s
/// `max_size` of 0 is the library's default (as for compressed bundles).
fn options(max_size: u64) -> DecompressOptions {
    DecompressOptions {
        limits: limits(max_size),
        ..DecompressOptions::default()
    }
}

/// Finds every fat binary in the `len` bytes at `data` and checks every
/// entry header: a raw fat binary (several back to back), an ELF or COFF/PE
/// host's `.nv_fatbin` then `__nv_relfatbin` sections, the `fatbinary`
/// images of OffloadBinaries for nvptx64. `base` is the input's file name
/// without directory and extension, which `cuobjdump` names extracted
/// files after (may be empty). With `CLANGOFFLOAD_PARSE_LENIENT` a damaged
/// fat binary is kept as the handle's fault and the rest is read; without,
/// it is the error. A file with none gives a handle with no fat binary.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_cuda_fatbins_free`. On failure `*out` is
/// untouched and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: they must stay
/// alive and unchanged until it is freed.
///
/// NULL: `data` may be NULL only when `len` is 0, `base.ptr` only when
/// `base.len` is 0; `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes, `base` readable for the
/// call; `out` is NULL or writable; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_parse(
    data: *const u8,
    len: usize,
    base: clangoffload_bytes,
    flags: u32,
    out: *mut *mut clangoffload_cuda_fatbins,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let base = unsafe { base.as_slice() }?;
        let base = String::from_utf8_lossy(base);
        // SAFETY: as the caller promises.
        let (data, out, lenient) = unsafe { crate::handle::parse_args(data, len, flags, out) }?;
        let mut handle = clangoffload_cuda_fatbins {
            fatbins: Vec::new(),
            entries: Vec::new(),
            fault: None,
        };
        let mut counter = CuobjdumpCounter::default();
        for found in host_fatbins(data) {
            match found.fatbin {
                Ok(fatbin) => {
                    let at = Found {
                        source: found.source,
                        member: found.member,
                        offset: found.offset,
                        fatbin,
                    };
                    handle.add(at, &base, &mut counter);
                }
                // SAFETY: `err` is NULL or writable, as the caller promises.
                Err(e) if !lenient => return Err(unsafe { report(&e, err) }),
                Err(e) => {
                    handle.fault.get_or_insert(e);
                }
            }
        }
        *out = into_handle(handle);
        Ok(())
    })
}

impl clangoffload_cuda_fatbins {
    fn add(&mut self, found: Found, base: &str, counter: &mut CuobjdumpCounter) {
        let index = self.fatbins.len();
        let (offset, fatbin) = (found.offset, found.fatbin);
        self.fatbins.push(found);
        for listed in counter.list(&fatbin, base) {
            self.entries.push(Located {
                fatbin: index,
                entry: listed.entry,
                member: listed.member.map(|m| m.index),
                kind: listed.kind,
                sm: listed.sm,
                identifier: listed.identifier,
                offset: offset.saturating_add(listed.entry.offset()),
                name: listed.name.map(String::into_bytes).unwrap_or_default(),
            });
        }
    }
}

/// Releases a handle from `clangoffload_cuda_fatbins_parse`; views taken
/// from it become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `handle` does nothing.
///
/// # Safety
/// `handle` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_free(handle: *mut clangoffload_cuda_fatbins) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(handle) }
}

/// Number of fat binaries (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `handle` gives 0.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_count(
    handle: *const clangoffload_cuda_fatbins,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(handle, |h| &h.fatbins) }
}

/// Stores fat binary `index` in `*out`; `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: the views borrow the parsed buffer, valid until the handle is
/// freed.
///
/// NULL: `handle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_get(
    handle: *const clangoffload_cuda_fatbins,
    index: usize,
    out: *mut clangoffload_cuda_fatbin,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            handle,
            |h| &h.fatbins,
            index,
            out,
            |_, found| {
                let f = &found.fatbin;
                let (source, section) = match &found.source {
                    FatbinSource::Raw => (CLANGOFFLOAD_CUDA_SOURCE_RAW, &[][..]),
                    FatbinSource::Section(name) => (CLANGOFFLOAD_CUDA_SOURCE_SECTION, *name),
                    FatbinSource::OffloadImage(name) => (
                        CLANGOFFLOAD_CUDA_SOURCE_OFFLOAD_IMAGE,
                        name.unwrap_or_default(),
                    ),
                };
                clangoffload_cuda_fatbin {
                    source,
                    section: clangoffload_bytes::of(section),
                    offset: found.offset,
                    data: clangoffload_bytes::of(f.data()),
                    version: f.version(),
                    header_size: f.header_size(),
                    fat_size: f.fat_size(),
                }
            },
        )
    }
}

/// Stores in `*out` the name of the archive member fat binary `index` is
/// in (empty when the file is not an archive: `nvcc -lib`'s static
/// libraries hold one object per translation unit);
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last fat binary.
///
/// Ownership: nothing to free; `*out` is a view.
///
/// Lifetime: the view borrows the parsed buffer, valid until the handle is
/// freed.
///
/// NULL: `handle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_member(
    handle: *const clangoffload_cuda_fatbins,
    index: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            handle,
            |h| &h.fatbins,
            index,
            out,
            |_, found| clangoffload_bytes::of(found.member.unwrap_or_default()),
        )
    }
}

/// Number of entries over all fat binaries (file order), each `--concat`
/// entry followed by its members.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `handle` gives 0.
///
/// # Safety
/// `handle` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_entry_count(
    handle: *const clangoffload_cuda_fatbins,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(handle, |h| &h.entries) }
}

/// Stores entry `index` in `*out`; `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `name` borrows the handle, the other views the parsed buffer:
/// all valid until the handle is freed.
///
/// NULL: `handle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_get_entry(
    handle: *const clangoffload_cuda_fatbins,
    index: usize,
    out: *mut clangoffload_cuda_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { handle::get(handle, |h| &h.entries, index, out, |_, l| entry_record(l)) }
}

fn entry_record(l: &Located) -> clangoffload_cuda_entry {
    let e = &l.entry;
    let h = match l.member.and_then(|m| e.members().find(|x| x.index == m)) {
        Some(member) => member.header,
        None => e.raw_header(),
    };
    let options = match l.member {
        None => e.options().unwrap_or_default(),
        Some(_) => &[],
    };
    clangoffload_cuda_entry {
        fatbin: l.fatbin,
        offset: l.offset,
        member: l.member.map_or(0, |m| m.saturating_add(1)),
        kind: l.kind.raw(),
        version: h.version.get(),
        header_size: h.header_size.get(),
        payload_size: h.payload_size.get(),
        compressed_size: h.compressed_size.get(),
        options_offset: h.options_offset.get(),
        major: h.major.get(),
        minor: h.minor.get(),
        arch: l.sm.number,
        variant: variant_number(l.sm.variant),
        flags: h.flags.get(),
        reserved: h.reserved.get(),
        uncompressed_size: h.uncompressed_size.get(),
        identifier_offset: h.identifier_offset.get(),
        identifier_length: h.identifier_length.get(),
        identifier: clangoffload_bytes::of(l.identifier.unwrap_or_default()),
        options: clangoffload_bytes::of(options),
        payload: clangoffload_bytes::of(e.payload()),
        name: clangoffload_bytes::of(&l.name),
    }
}

/// For a leniently parsed file: the status of the first damaged fat binary,
/// with details in `*err`; `CLANGOFFLOAD_STATUS_OK` if none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `handle` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `handle` is NULL or a live handle; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbins_fault(
    handle: *const clangoffload_cuda_fatbins,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { handle::fault(handle, |h| h.fault.as_ref(), err) }
}

/// Writes into `*out` entry `index`'s image as `cuobjdump` extracts it: the
/// payload decoded (LZ4 or zstd, at most `max_size` bytes; 0 for the
/// default limit), a cubin cut to its ELF length, PTX without its NUL; for
/// other kinds the decoded payload (an opaque one, flag 0x10000 as on nvcc
/// `-dlto`'s LTO-IR, as stored: it holds no frame to decode). Errors are
/// located in the input (`err->offset` from its start; `err->entry` the
/// entry's index in its fat binary).
///
/// Ownership: on success `*out` is a new buffer owned by the caller,
/// released with `clangoffload_buffer_free`; on failure it is untouched and
/// `*err` (if not NULL) says what and where.
///
/// Lifetime: `out->ptr` borrows neither the handle nor the parsed buffer: it
/// stays valid until `clangoffload_buffer_free`.
///
/// NULL: `handle` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first); `err` may be NULL.
///
/// # Safety
/// `handle` is NULL or a live handle; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_entry_image(
    handle: *const clangoffload_cuda_fatbins,
    index: usize,
    max_size: u64,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(handle) }?;
        let l = handle
            .entries
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // Errors are located in the fat binary: the record says where in
        // the input.
        let base = handle.fatbins.get(l.fatbin).map_or(0, |f| f.offset);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e: Error| unsafe { report(&e.shifted(base), err) };
        // A stored payload is read in place (one copy, into the buffer);
        // a compressed one is decoded first.
        let decoded = l.entry.contents(&options(max_size)).map_err(fail)?;
        let member = l
            .member
            .and_then(|m| l.entry.members().find(|x| x.index == m));
        let image = match member {
            Some(member) => l.entry.member_image(&member, &decoded),
            None => l.entry.image(&decoded),
        };
        let image = image.map_err(fail)?;
        *out = clangoffload_buffer::from_vec(image.to_vec());
        Ok(())
    })
}

/// Cubin: the code chosen runs as it is.
pub const CLANGOFFLOAD_CUDA_MATCH_CUBIN: u32 = 1;
/// PTX: the code chosen is JIT-compiled.
pub const CLANGOFFLOAD_CUDA_MATCH_PTX: u32 = 2;

/// The code the CUDA driver loads from fat binary `fatbin` on a device of
/// SM `device` (86 for sm_86): the closest cubin that runs there, else the
/// closest PTX, by the rule in docs/architecture.md. Stores the entry index
/// (as `clangoffload_cuda_fatbins_get_entry` numbers entries) in
/// `*out_entry` and `CLANGOFFLOAD_CUDA_MATCH_*` in `*out_match`;
/// `CLANGOFFLOAD_STATUS_NOT_FOUND` if nothing runs there.
///
/// Ownership: nothing to free; the outputs are plain numbers, written only
/// on success.
///
/// NULL: `handle`, `out_entry` or `out_match` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `handle` is NULL or a live handle; `out_entry` and `out_match` are NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_select(
    handle: *const clangoffload_cuda_fatbins,
    fatbin: usize,
    device: u32,
    out_entry: *mut usize,
    out_match: *mut u32,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let handle = unsafe { handle_arg(handle) }?;
        let found = handle
            .fatbins
            .get(fatbin)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let chosen =
            select_for_device(&found.fatbin, device).ok_or(clangoffload_status::NotFound)?;
        let index = handle
            .entries
            .iter()
            .position(|l| {
                l.fatbin == fatbin
                    && l.entry.offset() == chosen.entry.offset()
                    && l.member == chosen.member
            })
            .ok_or(clangoffload_status::NotFound)?;
        // SAFETY: `out_entry` is NULL or writable, as the caller promises.
        let out_entry = unsafe { out_arg(out_entry) }?;
        // SAFETY: `out_match` is NULL or writable, as the caller promises.
        let out_match = unsafe { out_arg(out_match) }?;
        *out_entry = index;
        *out_match = match chosen.kind {
            CudaMatch::Cubin => CLANGOFFLOAD_CUDA_MATCH_CUBIN,
            CudaMatch::Ptx => CLANGOFFLOAD_CUDA_MATCH_PTX,
        };
        Ok(())
    })
}

/// `clangoffload_cuda_fatbin_write` flag: `--compress=false` (nothing is
/// compressed).
pub const CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS: u32 = 1;
/// `clangoffload_cuda_fatbin_write` flag: `--compress-all` (cubins are
/// compressed too).
pub const CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL: u32 = 2;
/// `clangoffload_cuda_fatbin_write` flag: `-c` (relocatable device code,
/// whose cubins are compressed).
pub const CLANGOFFLOAD_CUDA_WRITE_DEVICE_C: u32 = 4;
/// `clangoffload_cuda_fatbin_write` flag: `-32` (entries not flagged 64-bit).
pub const CLANGOFFLOAD_CUDA_WRITE_32BIT: u32 = 8;
/// `clangoffload_cuda_fatbin_write` flag: store PTX as given, not rewritten
/// as `fatbinary` stores it (comments and some white space removed).
pub const CLANGOFFLOAD_CUDA_WRITE_PTX_AS_GIVEN: u32 = 16;

/// `--compress-mode=default`: zstd level 5.
pub const CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT: u32 = 0;
/// `--compress-mode=balance` (the same as `default` in `fatbinary` 13.5).
pub const CLANGOFFLOAD_CUDA_COMPRESS_BALANCE: u32 = 1;
/// `--compress-mode=speed`: LZ4.
pub const CLANGOFFLOAD_CUDA_COMPRESS_SPEED: u32 = 2;
/// `--compress-mode=size`: zstd at its maximum level, cubins compressed too.
pub const CLANGOFFLOAD_CUDA_COMPRESS_SIZE: u32 = 3;
/// `--compress-mode=none`: nothing compressed.
pub const CLANGOFFLOAD_CUDA_COMPRESS_NONE: u32 = 4;

/// One image for `clangoffload_cuda_fatbin_write` (`--image3=kind=…,sm=…,
/// file=…`). Views are read during the call only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_cuda_new_entry {
    /// Kind: 1 PTX, 2 ELF (a cubin); other kinds are stored as given with
    /// code version 0.0.
    pub kind: u16,
    /// SM number (80 for sm_80).
    pub arch: u32,
    /// 0 plain, 1 `f` (family), 2 `a` (arch-specific), as in
    /// `clangoffload_cuda_entry`.
    pub variant: u32,
    /// The cubin, or the PTX text without a NUL.
    pub data: clangoffload_bytes,
    /// `--ident`: the identifier (`ptr` NULL: none).
    pub identifier: clangoffload_bytes,
    /// `--cmdline`: ptxas options of a PTX entry (`ptr` NULL: none).
    pub options: clangoffload_bytes,
    /// Debug code (`-g`).
    pub debug: bool,
}

/// Code to keep in `clangoffload_cuda_fatbin_prune`: entries of this kind
/// (0: any; 1 PTX, 2 ELF) for exactly this SM and variant.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_cuda_target {
    /// 0 any kind, 1 PTX, 2 ELF.
    pub kind: u16,
    /// SM number.
    pub arch: u32,
    /// 0 plain, 1 `f`, 2 `a`.
    pub variant: u32,
}

/// A variant as the C ABI numbers it: 0 plain, 1 `f`, 2 `a`.
fn variant_number(variant: SmVariant) -> u32 {
    match variant {
        SmVariant::Plain => 0,
        SmVariant::Family => 1,
        SmVariant::Arch => 2,
    }
}

/// The variant a C ABI number names ([`variant_number`]'s inverse).
fn variant_of(raw: u32) -> Result<SmVariant, clangoffload_status> {
    match raw {
        0 => Ok(SmVariant::Plain),
        1 => Ok(SmVariant::Family),
        2 => Ok(SmVariant::Arch),
        _ => Err(clangoffload_status::InvalidArgument),
    }
}

/// An optional view: `ptr` NULL is none.
///
/// # Safety
/// `view` describes readable memory for the call, as the caller promises.
unsafe fn optional(view: &clangoffload_bytes) -> Result<Option<&[u8]>, clangoffload_status> {
    if view.ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded to the caller.
    unsafe { view.as_slice() }.map(Some)
}

/// The write options `mode` and `flags` stand for.
fn write_options(mode: u32, flags: u32) -> Result<WriteOptions, clangoffload_status> {
    let known = CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS
        | CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL
        | CLANGOFFLOAD_CUDA_WRITE_DEVICE_C
        | CLANGOFFLOAD_CUDA_WRITE_32BIT
        | CLANGOFFLOAD_CUDA_WRITE_PTX_AS_GIVEN;
    if flags & !known != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    let mode = match mode {
        CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT => CompressMode::Default,
        CLANGOFFLOAD_CUDA_COMPRESS_BALANCE => CompressMode::Balance,
        CLANGOFFLOAD_CUDA_COMPRESS_SPEED => CompressMode::Speed,
        CLANGOFFLOAD_CUDA_COMPRESS_SIZE => CompressMode::Size,
        CLANGOFFLOAD_CUDA_COMPRESS_NONE => CompressMode::None,
        _ => return Err(clangoffload_status::InvalidArgument),
    };
    let on = |flag: u32| flags & flag != 0;
    Ok(WriteOptions {
        compress: !on(CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS),
        compress_all: on(CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL),
        mode,
        relocatable: on(CLANGOFFLOAD_CUDA_WRITE_DEVICE_C),
        bits64: !on(CLANGOFFLOAD_CUDA_WRITE_32BIT),
        rewrite_ptx: !on(CLANGOFFLOAD_CUDA_WRITE_PTX_AS_GIVEN),
    })
}

/// Writes a fat binary holding the `count` images at `entries`, in that
/// order, as NVIDIA's `fatbinary` 13.5 writes it: `mode` is a
/// `CLANGOFFLOAD_CUDA_COMPRESS_*` (`--compress-mode`), `flags` any of
/// `CLANGOFFLOAD_CUDA_WRITE_*` (0: `fatbinary -64` with no other option:
/// PTX and debug code zstd-compressed, cubins stored, PTX rewritten as
/// `fatbinary` stores it). Byte-identical to `fatbinary`'s output except
/// for mode `SIZE` (docs/differences.md). Writes into `out` (room for
/// `out_cap` bytes) and stores the length in `*out_len`; when it does not
/// fit, or `out` is NULL, `BUFFER_TOO_SMALL` with the length needed (ask
/// with `out` NULL, then call again with a buffer of that length: the
/// output is the same each time). zstd needs a library built with it
/// (`METHOD_UNAVAILABLE` otherwise).
///
/// Ownership: the output goes into the caller's `out`; nothing to free.
/// The inputs are read during the call only. On failure `*err` (if not
/// NULL) says what and where.
///
/// NULL: `entries` may be NULL only when `count` is 0; a view's `ptr` only
/// when its `len` is 0 (`identifier` and `options`: NULL is none);
/// `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL. An unknown flag, mode or variant is `INVALID_ARGUMENT`.
///
/// # Safety
/// `entries` is NULL or readable for `count` records whose views are
/// readable; `out` is NULL or writable for `out_cap` bytes; `out_len` and
/// `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbin_write(
    entries: *const clangoffload_cuda_new_entry,
    count: usize,
    mode: u32,
    flags: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        let options = write_options(mode, flags)?;
        // SAFETY: the caller promises `count` readable records.
        let raw = unsafe { array_arg(entries, count) }?;
        let mut new = Vec::new();
        new.try_reserve_exact(raw.len())
            .map_err(|_| clangoffload_status::OutOfMemory)?;
        for e in raw {
            new.push(NewEntry {
                kind: EntryKind::from_raw(e.kind),
                sm: Sm {
                    number: e.arch,
                    variant: variant_of(e.variant)?,
                },
                // SAFETY: the caller promises readable views.
                data: unsafe { e.data.as_slice() }?,
                // SAFETY: as above.
                identifier: unsafe { optional(&e.identifier) }?,
                // SAFETY: as above.
                options: unsafe { optional(&e.options) }?,
                debug: e.debug,
            });
        }
        // SAFETY: out is NULL or writable for out_cap bytes, out_len and
        // err as the caller promises.
        unsafe { write_made(write_fatbin(&new, &options), out, out_cap, out_len, err) }
    })
}

/// The predicate `keep` stands for: an entry is kept when some target has
/// its kind (or 0) and exactly its SM and variant.
fn keeper(keep: &[clangoffload_cuda_target]) -> Result<Vec<(u16, Sm)>, clangoffload_status> {
    keep.iter()
        .map(|t| {
            Ok((
                t.kind,
                Sm {
                    number: t.arch,
                    variant: variant_of(t.variant)?,
                },
            ))
        })
        .collect()
}

fn kept(targets: &[(u16, Sm)], kind: EntryKind, sm: Sm) -> bool {
    targets
        .iter()
        .any(|&(k, s)| (k == 0 || k == kind.raw()) && s == sm)
}

/// Keeps only the code for the `keep_count` targets at `keep` in the fat
/// binaries (one, or several back to back) in the `len` bytes at `data`, as
/// NVIDIA's `nvprune` does: each fat binary rewritten with the ELF and PTX
/// entries one of the targets names (compressed ones copied as they are;
/// a `--concat` entry kept whole, dropped, or replaced by stored entries
/// of the members kept), other kinds (LTO-IR) kept. The fat binaries are
/// written back to back into `out` (room for `out_cap` bytes), their length
/// in `*out_len`; `BUFFER_TOO_SMALL` with the length needed when they do not
/// fit or `out` is NULL. A concat entry is decoded under `max_size` (0: the
/// default limit). For a host object, see
/// `clangoffload_cuda_fatbin_prune_in_place`.
///
/// Ownership: the output goes into the caller's `out`; nothing to free. On
/// failure `*err` (if not NULL) says what and where.
///
/// NULL: `data` may be NULL only when `len` is 0, `keep` only when
/// `keep_count` is 0 (nothing is kept); `out_len` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `keep` NULL or readable for
/// `keep_count` records; `out` is NULL or writable for `out_cap` bytes and
/// does not overlap `data`; `out_len` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbin_prune(
    data: *const u8,
    len: usize,
    keep: *const clangoffload_cuda_target,
    keep_count: usize,
    max_size: u64,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: the caller promises `keep_count` readable records.
        let targets = keeper(unsafe { array_arg(keep, keep_count) }?)?;
        let keep = |kind, sm| kept(&targets, kind, sm);
        let pruned = prune_fatbins(data, &keep, &options(max_size));
        // SAFETY: out is NULL or writable for out_cap bytes, out_len and
        // err as the caller promises.
        unsafe { write_made(pruned, out, out_cap, out_len, err) }
    })
}

/// Prunes in place, as `clangoffload_cuda_fatbin_prune` chooses, the fat
/// binaries of the file in the `len` bytes at `data`: a raw fat binary
/// (several back to back), or the `.nv_fatbin` and `__nv_relfatbin`
/// sections of an ELF or COFF/PE host. Every fat binary keeps its offset
/// (so the wrapper records pointing at it stay right) and the bytes it no
/// longer needs become zeros, which cuobjdump and this library skip; the
/// file keeps its length, and nothing outside those sections changes.
/// Stores in `*out_changed` how many fat binaries changed (0: the file is
/// as it was; a file holding no fat binary gives 0). All or nothing: on an
/// error (a damaged fat binary, a partly kept `--concat` entry that would
/// grow when stored) the bytes are left as they were.
///
/// Ownership: the caller's buffer is changed in place; nothing to free.
/// On failure `*err` (if not NULL) says what and where.
///
/// NULL: `data` may be NULL only when `len` is 0, `keep` only when
/// `keep_count` is 0; `out_changed` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL.
///
/// # Safety
/// `data` is NULL or readable and writable for `len` bytes, and nothing
/// else uses them during the call; `keep` NULL or readable for `keep_count`
/// records; `out_changed` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_fatbin_prune_in_place(
    data: *mut u8,
    len: usize,
    keep: *const clangoffload_cuda_target,
    keep_count: usize,
    max_size: u64,
    out_changed: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` writable bytes used by nothing
        // else during the call.
        let file = unsafe { mut_slice_arg(data, len) }?;
        // SAFETY: the caller promises `keep_count` readable records.
        let targets = keeper(unsafe { array_arg(keep, keep_count) }?)?;
        // SAFETY: the caller promises a writable value.
        let out_changed = unsafe { out_arg(out_changed) }?;
        let keep = |kind, sm| kept(&targets, kind, sm);
        let changed = prune_file_in_place(file, &keep, &options(max_size))
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { report(&e, err) })?;
        *out_changed = changed;
        Ok(())
    })
}

/// Reads an SM as `fatbinary`, `nvcc` and `nvprune` write it: `sm_90a`,
/// `compute_100f` or a bare `86`, into its number (`*out_arch`) and variant
/// (`*out_variant`: 0 plain, 1 `f`, 2 `a`, as in `clangoffload_cuda_entry`).
/// `INVALID_ARGUMENT` for anything else (both outputs then untouched).
///
/// Ownership: nothing to free; the outputs are plain numbers.
///
/// NULL: `text` may be NULL only when `len` is 0; `out_arch` or
/// `out_variant` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; `out_arch` and
/// `out_variant` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_sm_parse(
    text: *const c_char,
    len: usize,
    out_arch: *mut u32,
    out_variant: *mut u32,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let text = unsafe { str_arg(text, len) }?;
        let sm = Sm::parse(text).ok_or(clangoffload_status::InvalidArgument)?;
        // SAFETY: `out_arch` is NULL or writable, as the caller promises.
        let out_arch = unsafe { out_arg(out_arch) }?;
        // SAFETY: `out_variant` is NULL or writable, as the caller promises.
        let out_variant = unsafe { out_arg(out_variant) }?;
        *out_arch = sm.number;
        *out_variant = variant_number(sm.variant);
        Ok(())
    })
}

/// `clangoffload_cuda_entry::kind`: PTX text.
pub const CLANGOFFLOAD_CUDA_KIND_PTX: u16 = 1;
/// `clangoffload_cuda_entry::kind`: a cubin (ELF).
pub const CLANGOFFLOAD_CUDA_KIND_ELF: u16 = 2;
/// `clangoffload_cuda_entry::kind`: NVVM IR / LTO IR.
pub const CLANGOFFLOAD_CUDA_KIND_LTOIR: u16 = 8;
/// `clangoffload_cuda_entry::kind`: several images in one payload
/// (`--concat`).
pub const CLANGOFFLOAD_CUDA_KIND_CONCAT: u16 = 0x100;

/// The names of an entry's kind and compression, as reports print them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_cuda_names {
    /// `ptx`, `elf`, `ltoir`, `concat` or `unknown` (static storage).
    pub kind: clangoffload_bytes,
    /// `none`, `lz4`, `zstd` or `lz4+zstd` (static storage).
    pub compression: clangoffload_bytes,
}

/// The names of entry kind `kind` and of the compression its `flags` name.
///
/// Ownership: nothing to free; the views are of static storage.
///
/// Lifetime: the views live as long as the library is loaded.
///
/// NULL: `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_entry_names(
    kind: u16,
    flags: u64,
    out: *mut clangoffload_cuda_names,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = clangoffload_cuda_names {
            kind: clangoffload_bytes::of(EntryKind::from_raw(kind).name().as_bytes()),
            compression: clangoffload_bytes::of(
                clangoffload::cuda_fatbin::Compression::from_flags(flags)
                    .name()
                    .as_bytes(),
            ),
        };
        Ok(())
    })
}

/// Writes the name NVIDIA's tools give code of kind `kind` for SM `arch`
/// with variant `variant` (0 plain, 1 `f`, 2 `a`): `sm_90a` for a cubin,
/// `compute_90a` for PTX, `lto_90a` for LTO IR, `sm_90a` for other kinds;
/// into the `cap` bytes at `buf` (no NUL), its length in `*len`;
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL` when it does not fit (or `buf`
/// is NULL, a question for the length), `INVALID_ARGUMENT` for another
/// variant.
///
/// Ownership: nothing to free.
///
/// NULL: `len` must not be NULL; `buf` may be NULL.
///
/// # Safety
/// `buf` is NULL or writable for `cap` bytes; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_code_name(
    kind: u16,
    arch: u32,
    variant: u32,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        let name = CodeName {
            kind: EntryKind::from_raw(kind),
            sm: Sm {
                number: arch,
                variant: variant_of(variant)?,
            },
        };
        // SAFETY: as the caller promises.
        unsafe { write_bytes(alloc::format!("{name}").as_bytes(), buf, cap, len) }
    })
}

/// Reads a code name, `sm_XX`, `compute_XX` or `lto_XX` with an optional
/// `a` or `f` suffix: its entry kind (`CLANGOFFLOAD_CUDA_KIND_ELF`,
/// `_PTX`, `_LTOIR`) in `*out_kind`, its SM number and variant (0 plain,
/// 1 `f`, 2 `a`). `INVALID_ARGUMENT` for anything else (a bare number
/// names no kind; the outputs are then untouched).
///
/// Ownership: nothing to free; the outputs are plain numbers.
///
/// NULL: `text` may be NULL only when `len` is 0; an output NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `text` is NULL or readable for `len` bytes; the outputs are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_code_parse(
    text: *const c_char,
    len: usize,
    out_kind: *mut u16,
    out_arch: *mut u32,
    out_variant: *mut u32,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let text = unsafe { str_arg(text, len) }?;
        let name = CodeName::parse(text).ok_or(clangoffload_status::InvalidArgument)?;
        // SAFETY: `out_kind` is NULL or writable, as the caller promises.
        let out_kind = unsafe { out_arg(out_kind) }?;
        // SAFETY: `out_arch` is NULL or writable, as the caller promises.
        let out_arch = unsafe { out_arg(out_arch) }?;
        // SAFETY: `out_variant` is NULL or writable, as the caller promises.
        let out_variant = unsafe { out_arg(out_variant) }?;
        *out_kind = name.kind.raw();
        *out_arch = name.sm.number;
        *out_variant = variant_number(name.sm.variant);
        Ok(())
    })
}

/// Writes the name `cuobjdump` extracts files after for an input at
/// `path`: its last component without its extension (`lib/libfoo.so` gives
/// `libfoo`), for `clangoffload_cuda_fatbins_parse`'s `base`; into the
/// `cap` bytes at `buf` (no NUL), its length in `*len`;
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL` when it does not fit (or `buf` is
/// NULL, a question for the length).
///
/// Ownership: nothing to free.
///
/// NULL: `path` may be NULL only when `path_len` is 0; `len` must not be
/// NULL; `buf` may be NULL.
///
/// # Safety
/// `path` is NULL or readable for `path_len` bytes; `buf` is NULL or
/// writable for `cap` bytes; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_cuda_base_name(
    path: *const c_char,
    path_len: usize,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `path_len` readable bytes.
        let path = unsafe { str_arg(path, path_len) }?;
        let base = clangoffload::cuda_host::cuobjdump_base(path);
        // SAFETY: as the caller promises.
        unsafe { write_bytes(base.as_bytes(), buf, cap, len) }
    })
}
