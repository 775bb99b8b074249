//! Finding containers: the offload sections of ELF and COFF host files and the
//! wrapper records pointing at them, every container anywhere in a buffer
//! (scan), the extent of a container known only by its start, and the target
//! ID an AMDGPU code object was built for.

use core::ffi::c_char;

use clangoffload::container::{declared_extent, parse_container, Extent};
use clangoffload::elf::{AmdgpuTarget, ElfFile};
#[cfg(feature = "alloc")]
use clangoffload::locate::wrapper_targets;
use clangoffload::locate::{wrapper_at, wrapper_target, SectionKind, Wrapper};
use clangoffload::object::{ObjectFile, Section};
use clangoffload::scan::{scan_from, Found, ScanCursor};
use clangoffload::FileKind;

use crate::compressed::clangoffload_container_kind;
#[cfg(feature = "alloc")]
use crate::ffi::fill_array;
use crate::ffi::{clangoffload_bytes, len_u64, out_arg, slice_arg, write_display};
use crate::status::{clangoffload_error, clangoffload_status, report};

/// What an offload section of an ELF or COFF file holds.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_section_kind {
    /// OffloadBinaries (`SHT_LLVM_OFFLOADING`, `.llvm.offloading`).
    OffloadBinaries = 1,
    /// Bundles or compressed bundles (`.hip_fatbin`).
    HipFatbin = 2,
    /// NVIDIA fat binaries back to back (`.nv_fatbin`).
    NvFatbin = 3,
    /// One entry of an object-flavour bundle (`__CLANG_OFFLOAD_BUNDLE__<id>`).
    BundleEntry = 4,
    /// HIP fat-binary wrapper records (`.hipFatBinSegment`).
    HipWrappers = 5,
    /// CUDA fat-binary wrapper records (`.nvFatBinSegment`).
    CudaWrappers = 6,
    /// NVIDIA fat binaries of old-style relocatable device code (`__nv_relfatbin`).
    NvRelFatbin = 7,
}

impl From<SectionKind> for clangoffload_section_kind {
    fn from(kind: SectionKind) -> Self {
        match kind {
            SectionKind::OffloadBinaries => Self::OffloadBinaries,
            SectionKind::HipFatbin => Self::HipFatbin,
            SectionKind::NvFatbin => Self::NvFatbin,
            SectionKind::BundleEntry => Self::BundleEntry,
            SectionKind::HipWrappers => Self::HipWrappers,
            SectionKind::CudaWrappers => Self::CudaWrappers,
            SectionKind::NvRelFatbin => Self::NvRelFatbin,
        }
    }
}

/// An ELF or COFF section holding offload data; views borrow the file's
/// buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_offload_section {
    /// What it holds.
    pub kind: clangoffload_section_kind,
    /// The section's index (COFF sections are numbered from 1).
    pub section_index: u32,
    /// The section's name (not NUL-terminated).
    pub name: clangoffload_bytes,
    /// The section's contents.
    pub data: clangoffload_bytes,
    /// Where the contents start in the file.
    pub offset: u64,
}

/// Finds the next section holding offload data in the ELF file (relocatable
/// object, executable or shared library) or COFF file (object, PE DLL or
/// executable, whose section names may be cut to eight bytes: `.hip_fat`,
/// `.hipFatB`) in `len` bytes at `data`, starting at
/// section index `*index` (start with 0), stores it in `*out` and sets `*index`
/// past it. `CLANGOFFLOAD_STATUS_END` when there are no more. A damaged section
/// header is reported (status, `*err`) with `*index` set past it, so the caller
/// can go on with the next. An error about the whole file (neither ELF nor
/// COFF: `CLANGOFFLOAD_STATUS_NOT_ELF`; damaged
/// section table) sets `*index` to `UINT32_MAX`, where the walk gives `END`:
/// a caller that goes on after every error still stops.
///
/// Ownership: nothing is allocated and nothing to free. Unlike most functions,
/// `*index` is also written on `END` and on errors.
///
/// Lifetime: `out->name` and `out->data` borrow `data`: valid while `data`
/// stays alive and unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `index` or `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `index` is NULL or readable and
/// writable; `out` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_elf_offload_section_next(
    data: *const u8,
    len: usize,
    index: *mut u32,
    out: *mut clangoffload_offload_section,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `index` is NULL or writable, as the caller promises.
        let index = unsafe { out_arg(index) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e| unsafe { report(&e, err) };
        if *index == u32::MAX {
            return Err(clangoffload_status::End);
        }
        let object = ObjectFile::parse(data).map_err(|e| {
            *index = u32::MAX;
            fail(e)
        })?;
        let first = (*index).max(1);
        for i in first..object.section_end() {
            *index = i.saturating_add(1);
            let section = object.section(i).map_err(fail)?;
            if let Some(kind) = SectionKind::of(&section) {
                *out = clangoffload_offload_section {
                    kind: kind.into(),
                    section_index: i,
                    name: clangoffload_bytes::of(section.name()),
                    data: clangoffload_bytes::of(section.data()),
                    offset: section.offset(),
                };
                return Ok(());
            }
        }
        *index = object.section_end();
        Err(clangoffload_status::End)
    })
}

/// A HIP or CUDA fat-binary wrapper record and the fat binary it points at.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_fatbin_wrapper_record {
    /// The record's magic (HIPF 0x48495046, HIPK 0x4B504948, CUDA 0x466243B1).
    pub magic: u32,
    /// The record's version (1).
    pub version: u32,
    /// The pointer stored in the record (0 when a relocation fills it).
    pub binary_address: u64,
    /// 1 if the fat binary was found (through the pointer or its
    /// relocation); the fields below are then set.
    pub resolved: u32,
    /// The section holding the fat binary.
    pub target_section: u32,
    /// Offset of the fat binary in that section.
    pub target_offset: u64,
    /// The container there (bundle or compressed bundle) cut to its extent,
    /// or, when none parses, the rest of the section.
    pub target: clangoffload_bytes,
}

/// Stores record `record` of the wrapper section `section_index`
/// (`.hipFatBinSegment` / `.nvFatBinSegment`, `.hipFatB` in a PE image) of the
/// ELF or COFF file in `len` bytes at `data` in `*out`, following its pointer
/// (an address; in a PE image, image base plus relative address) or the
/// relocation that fills it to
/// the fat binary. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last
/// record. To read every record, `clangoffload_fatbin_wrappers` is linear where
/// calling this for each record is not.
///
/// Ownership: nothing to free; `*out` is a plain record the caller owns. On
/// failure `*err` (if not NULL) says what and where.
///
/// Lifetime: `out->target` borrows `data`: valid while `data` stays alive and
/// unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` and `err` are NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_fatbin_wrapper_get(
    data: *const u8,
    len: usize,
    section_index: u32,
    record: usize,
    out: *mut clangoffload_fatbin_wrapper_record,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e| unsafe { report(&e, err) };
        let object = ObjectFile::parse(data).map_err(fail)?;
        let segment = object.section(section_index).map_err(fail)?;
        let wrapper = wrapper_at(segment.data(), object.class(), record)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let result = record_of(&wrapper, wrapper_target(&object, &segment, &wrapper));
        *out = result;
        Ok(())
    })
}

/// Every record of the wrapper section `section_index` of the ELF or COFF file in `len`
/// bytes at `data`, as `clangoffload_fatbin_wrapper_get` gives each, into the
/// caller's array `out` of `capacity` records; their number goes to `*count`.
/// Reads the relocations once, so it stays linear in the file for any number of
/// records. Too small an array: `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`, nothing
/// written to `out`, and the number needed in `*count` (NULL and 0 ask for the
/// number).
///
/// Ownership: the records are copied into the caller's array; nothing to free.
/// Working memory is freed before returning. On failure `*err` (if not NULL)
/// says what and where.
///
/// Lifetime: each record's `target` borrows `data`: valid while `data` stays
/// alive and unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` may be NULL only when
/// `capacity` is 0; `count` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or writable for
/// `capacity` records; `count` and `err` are NULL or writable.
#[cfg(feature = "alloc")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_fatbin_wrappers(
    data: *const u8,
    len: usize,
    section_index: u32,
    out: *mut clangoffload_fatbin_wrapper_record,
    capacity: usize,
    count: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let fail = |e| unsafe { report(&e, err) };
        let object = ObjectFile::parse(data).map_err(fail)?;
        let segment = object.section(section_index).map_err(fail)?;
        let records: alloc::vec::Vec<clangoffload_fatbin_wrapper_record> =
            wrapper_targets(&object, &segment)
                .iter()
                .map(|(wrapper, target)| record_of(wrapper, *target))
                .collect();
        // SAFETY: `out` and `count` are as the caller promises.
        unsafe { fill_array(&records, out, capacity, count) }
    })
}

/// The C record of a wrapper and where it leads.
fn record_of(
    wrapper: &Wrapper,
    target: Option<(Section<'_>, u64)>,
) -> clangoffload_fatbin_wrapper_record {
    let mut result = clangoffload_fatbin_wrapper_record {
        magic: wrapper.kind.magic(),
        version: wrapper.version,
        binary_address: wrapper.binary,
        resolved: 0,
        target_section: 0,
        target_offset: 0,
        target: clangoffload_bytes::of(&[]),
    };
    if let Some((section, offset)) = target {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|at| section.data().get(at..))
            .unwrap_or_default();
        let container = parse_container(rest).map_or(rest, |c| c.data());
        result.resolved = 1;
        result.target_section = section.index();
        result.target_offset = offset;
        result.target = clangoffload_bytes::of(container);
    }
    result
}

/// Report magics that start no valid container too
/// (`clangoffload_scan_next`).
pub const CLANGOFFLOAD_SCAN_REJECTED: u32 = 1;

/// What `clangoffload_scan_next` found.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_scan_hit {
    /// The container's kind; for a rejected magic, the kind it would have been.
    pub kind: clangoffload_container_kind,
    /// `CLANGOFFLOAD_STATUS_OK` for a valid container; otherwise why the
    /// magic at `offset` starts none (only with `CLANGOFFLOAD_SCAN_REJECTED`).
    pub status: u32,
    /// Offset of the magic in the buffer.
    pub offset: u64,
    /// The container cut to its extent (empty when rejected).
    pub data: clangoffload_bytes,
}

/// Where `clangoffload_scan_cursor_next` stands: zero it to scan from the
/// start, or set `offset` (and zero the rest) to scan from there.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct clangoffload_scan_cursor {
    /// Where the search resumes: past the last hit, `len` at the end.
    pub offset: u64,
    /// The scan's own state, to be kept as it is between calls: the end of
    /// the compressed bundle (or compressed part of a fat binary) whose bytes
    /// are not searched...
    pub skip_until: u64,
    /// ...and the end of the last container found outside every other one
    /// (a container inside it owns no bytes past it).
    pub outer_end: u64,
}

impl From<clangoffload_scan_cursor> for ScanCursor {
    fn from(c: clangoffload_scan_cursor) -> Self {
        ScanCursor {
            offset: c.offset,
            skip_until: c.skip_until,
            outer_end: c.outer_end,
        }
    }
}

impl From<ScanCursor> for clangoffload_scan_cursor {
    fn from(c: ScanCursor) -> Self {
        clangoffload_scan_cursor {
            offset: c.offset,
            skip_until: c.skip_until,
            outer_end: c.outer_end,
        }
    }
}

/// Finds the next bundle, compressed bundle, OffloadBinary or CUDA fat binary
/// (`CLANGOFFLOAD_CONTAINER_KIND_CUDA_FATBIN`) at or after `cursor->offset` of
/// the `len` bytes at `data` (an in-memory image, a core dump, any file),
/// validated before it is reported, stores it in `*out` and moves `*cursor`
/// on, one byte past the hit: containers inside payloads are found too, but
/// not the bytes of a compressed bundle (which can hold a magic by chance), nor
/// those of a fat binary up to the end of its last compressed entry, as far as
/// the container holding it, if any, reaches. Scanned
/// from the start, this finds every container that `clangoffload_containers_next`
/// walks to. Start with a zeroed cursor; `CLANGOFFLOAD_STATUS_END` at the end.
/// With `CLANGOFFLOAD_SCAN_REJECTED` in `flags`, magics that start no valid
/// container are reported too (`out->status` says why); any other flag bit, or
/// `cursor->offset` past `len`, gives `INVALID_ARGUMENT`. Runs at near memory
/// speed.
///
/// Ownership: nothing is allocated and nothing to free. Unlike most functions,
/// `*cursor` is also written on `END` (`offset` moved to `len`).
///
/// Lifetime: `out->data` borrows `data`: valid while `data` stays alive and
/// unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `cursor` or `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// Thread safety: the cursor is the whole state of the scan; give each thread
/// its own (several threads may scan disjoint ranges of one buffer).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `cursor` is NULL or readable and
/// writable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_scan_cursor_next(
    data: *const u8,
    len: usize,
    flags: u32,
    cursor: *mut clangoffload_scan_cursor,
    out: *mut clangoffload_scan_hit,
) -> clangoffload_status {
    ffi_guard!({
        check_scan_flags(flags)?;
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `cursor` is NULL or writable, as the caller promises.
        let cursor = unsafe { out_arg(cursor) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let (next, hit) = scan_step(data, flags, (*cursor).into());
        *cursor = next.into();
        *out = hit?;
        Ok(())
    })
}

/// Finds the next container at or after offset `*cursor`, as
/// `clangoffload_scan_cursor_next` does, with a cursor of one number: it moves
/// past a compressed bundle found (its compressed bytes are not searched) and
/// past the compressed entries of a fat binary found, one byte past anything
/// else. Keeping no more than an offset, it cannot know
/// which container holds a compressed bundle it finds: a damaged one nested in
/// an image, whose size runs past the image, hides what follows the image. Use
/// `clangoffload_scan_cursor_next`, which remembers.
/// Start with `*cursor` = 0; `CLANGOFFLOAD_STATUS_END` at the end. Flags and
/// `INVALID_ARGUMENT` as there.
///
/// Ownership: nothing is allocated and nothing to free. Unlike most functions,
/// `*cursor` is also written on `END` (moved to `len`).
///
/// Lifetime: `out->data` borrows `data`: valid while `data` stays alive and
/// unchanged.
///
/// NULL: `data` may be NULL only when `len` is 0; `cursor` or `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `cursor` is NULL or readable and
/// writable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_scan_next(
    data: *const u8,
    len: usize,
    flags: u32,
    cursor: *mut u64,
    out: *mut clangoffload_scan_hit,
) -> clangoffload_status {
    ffi_guard!({
        check_scan_flags(flags)?;
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `cursor` is NULL or writable, as the caller promises.
        let cursor = unsafe { out_arg(cursor) }?;
        // SAFETY: `out` is NULL or writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let from = ScanCursor {
            offset: *cursor,
            ..ScanCursor::default()
        };
        let (next, hit) = scan_step(data, flags, from);
        *cursor = next.offset.max(next.skip_until);
        *out = hit?;
        Ok(())
    })
}

/// Flags the scan knows, checked before any pointer (so a bad flag is
/// `INVALID_ARGUMENT` whatever the other arguments).
fn check_scan_flags(flags: u32) -> Result<(), clangoffload_status> {
    if flags & !CLANGOFFLOAD_SCAN_REJECTED != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    Ok(())
}

/// The next hit `flags` asks for, from `from`, and where the scan then stands
/// (the cursor is left alone when it starts past the buffer).
fn scan_step(
    data: &[u8],
    flags: u32,
    from: ScanCursor,
) -> (
    ScanCursor,
    Result<clangoffload_scan_hit, clangoffload_status>,
) {
    if from.offset > len_u64(data.len()) {
        return (from, Err(clangoffload_status::InvalidArgument));
    }
    let mut hits = scan_from(data, from);
    while let Some(found) = hits.next() {
        let hit = match found {
            Found::Container(offset, container) => clangoffload_scan_hit {
                kind: clangoffload_container_kind::of(&container),
                status: clangoffload_status::Ok.code(),
                offset,
                data: clangoffload_bytes::of(container.data()),
            },
            Found::CudaFatbin(offset, fatbin) => clangoffload_scan_hit {
                kind: clangoffload_container_kind::CudaFatbin,
                status: clangoffload_status::Ok.code(),
                offset,
                data: clangoffload_bytes::of(fatbin.data()),
            },
            Found::Rejected(offset, error) if flags & CLANGOFFLOAD_SCAN_REJECTED != 0 => {
                let magic = usize::try_from(offset)
                    .ok()
                    .and_then(|at| data.get(at..))
                    .unwrap_or_default();
                clangoffload_scan_hit {
                    // A rejected container starts with its magic.
                    kind: clangoffload_container_kind::of_file(FileKind::detect(magic))
                        .unwrap_or(clangoffload_container_kind::OffloadBinary),
                    status: clangoffload_status::from(error.kind()).code(),
                    offset,
                    data: clangoffload_bytes::of(&[]),
                }
            }
            Found::Rejected(..) => continue,
        };
        return (hits.cursor(), Ok(hit));
    }
    (hits.cursor(), Err(clangoffload_status::End))
}

/// The extent of the container (bundle, compressed bundle or OffloadBinary)
/// starting at `data`, for an image given by pointer alone (as
/// `hipModuleLoadData` receives one): the header is read first, a few bytes at
/// a time, never more than `max` bytes and never past the container. The extent
/// is stored in `*extent`; parse `*extent` bytes at `data` next. A version 1
/// compressed bundle does not record its size:
/// `CLANGOFFLOAD_STATUS_UNKNOWN_EXTENT`. An extent over `max` (or a header
/// longer than `max`): `CLANGOFFLOAD_STATUS_TRUNCATED`, with the extent (or the
/// bytes needed) still stored in `*extent`.
///
/// Ownership: nothing is kept or allocated; nothing to free. On failure `*err`
/// (if not NULL) says what and where.
///
/// NULL: `data` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` unless `max` is
/// 0; `extent` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be
/// NULL (no details).
///
/// # Safety
/// `data` is readable up to the container's end or `max` bytes, whichever is
/// less; `extent` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_container_extent(
    data: *const u8,
    max: usize,
    extent: *mut u64,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: writable, as the caller promises.
        let extent = unsafe { out_arg(extent) }?;
        // Start with the longest fixed header and double while the header
        // goes on: reading the prefix again costs no more than twice the
        // header in all.
        let mut want: usize = 64;
        loop {
            let len = want.min(max);
            // SAFETY: `len` <= `max` and no more than the header asked for,
            // which the caller promises is readable.
            let prefix = unsafe { slice_arg(data, len) }?;
            // SAFETY: `err` is NULL or writable, as the caller promises.
            let found = declared_extent(prefix).map_err(|e| unsafe { report(&e, err) })?;
            match found {
                Extent::Known(size) => {
                    *extent = size;
                    return if size > len_u64(max) {
                        Err(clangoffload_status::Truncated)
                    } else {
                        Ok(())
                    };
                }
                Extent::Unknown => return Err(clangoffload_status::UnknownExtent),
                Extent::NeedAtLeast(need) => {
                    if len == max {
                        *extent = need;
                        return Err(clangoffload_status::Truncated);
                    }
                    let need = usize::try_from(need).unwrap_or(usize::MAX);
                    want = need.max(want.saturating_mul(2));
                }
            }
        }
    })
}

/// Writes the target ID an AMDGPU code object (ELF, code object v4 to v6) in
/// `len` bytes at `data` was built for, from its header (`e_flags`), e.g.
/// `gfx90a:sramecc+:xnack-`. `CLANGOFFLOAD_STATUS_NOT_FOUND` for any other ELF
/// file; a file that is not ELF is an error reported in `*err`.
///
/// Ownership: the text is copied into the caller's `buf`; nothing to free. On
/// success `buf` holds the text and a NUL, and `*out_len` its length without
/// the NUL. When `cap` is too small (or `buf` is NULL), nothing is copied,
/// `*out_len` gets the length needed and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`: allocate `*out_len + 1` bytes and
/// call again.
///
/// NULL: `data` may be NULL only when `len` is 0; `buf` NULL asks for the
/// length; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may
/// be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `buf` is NULL or writable for
/// `cap` bytes; `out_len` and `err` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_amdgpu_target_id(
    data: *const u8,
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: the caller promises `len` readable bytes.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let elf = ElfFile::parse(data).map_err(|e| unsafe { report(&e, err) })?;
        let target =
            AmdgpuTarget::from_header(elf.header()).ok_or(clangoffload_status::NotFound)?;
        // SAFETY: `buf` is writable for `cap` bytes and `out_len` writable,
        // as the caller promises.
        unsafe { write_display(&target, buf, cap, out_len) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> Vec<u8> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        std::fs::read(root.join(path)).unwrap()
    }

    #[test]
    fn extent_of_an_image_known_by_pointer_alone() {
        let bundle = fixture("llvm22/hip-4096.bundle");
        let mut extent = 0u64;
        let null = std::ptr::null_mut();
        // SAFETY: the buffer is readable for its length, the largest `max`.
        let status = unsafe {
            clangoffload_container_extent(bundle.as_ptr(), bundle.len(), &mut extent, null)
        };
        assert_eq!(status, clangoffload_status::Ok);
        assert_eq!(extent, len_u64(bundle.len()));
        // A bound below the extent: refused, with the extent still told.
        // SAFETY: as above, with a smaller bound.
        let status =
            unsafe { clangoffload_container_extent(bundle.as_ptr(), 100, &mut extent, null) };
        assert_eq!(status, clangoffload_status::Truncated);
        let not_a_container = [0u8; 64];
        // SAFETY: 64 readable bytes.
        let status = unsafe {
            clangoffload_container_extent(not_a_container.as_ptr(), 64, &mut extent, null)
        };
        assert_eq!(status, clangoffload_status::UnknownContainer);
    }

    /// An OffloadBinary header: magic, `version`, `size`, no entries.
    fn offload_binary_header(version: u8, size: u64) -> [u8; 40] {
        let mut header = [0u8; 40];
        header[..4].copy_from_slice(&[0x10, 0xff, 0x10, 0xad]);
        header[4] = version;
        header[8..16].copy_from_slice(&size.to_le_bytes());
        header
    }

    #[test]
    fn extent_of_an_offload_binary_whose_header_is_all_of_it() {
        let mut extent = 0u64;
        let null = std::ptr::null_mut();
        // A version 2 binary of no entries is its 32-byte header: its end
        // as the bound is enough (found by fuzzing: it asked for 40).
        let v2 = offload_binary_header(2, 32);
        // SAFETY: 32 readable bytes.
        let status = unsafe { clangoffload_container_extent(v2.as_ptr(), 32, &mut extent, null) };
        assert_eq!((status, extent), (clangoffload_status::Ok, 32));
        // A version 3 header is 40 bytes: 32 of them are not enough, and
        // the bytes needed are told.
        let v3 = offload_binary_header(3, 40);
        // SAFETY: 32 of its 40 readable bytes.
        let status = unsafe { clangoffload_container_extent(v3.as_ptr(), 32, &mut extent, null) };
        assert_eq!((status, extent), (clangoffload_status::Truncated, 40));
        // SAFETY: its 40 readable bytes.
        let status = unsafe { clangoffload_container_extent(v3.as_ptr(), 40, &mut extent, null) };
        assert_eq!((status, extent), (clangoffload_status::Ok, 40));
    }

    #[test]
    fn a_walk_over_a_file_that_is_not_elf_ends_after_its_error() {
        let data = fixture("llvm22/hip-4096.bundle");
        let mut index = 0u32;
        let mut out = core::mem::MaybeUninit::<clangoffload_offload_section>::zeroed();
        // SAFETY: `data` is live for the call, `index` and `out` writable;
        // a NULL error record is allowed.
        let next = |index: &mut u32, out: &mut core::mem::MaybeUninit<_>| unsafe {
            clangoffload_elf_offload_section_next(
                data.as_ptr(),
                data.len(),
                index,
                out.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(next(&mut index, &mut out), clangoffload_status::NotElf);
        assert_eq!(index, u32::MAX);
        assert_eq!(next(&mut index, &mut out), clangoffload_status::End);
    }

    #[test]
    fn coff_objects_and_pe_images_are_walked_and_their_wrappers_followed() {
        for name in ["coff/hip.o", "coff/hip.dll", "coff/hip.exe"] {
            let data = fixture(name);
            let mut index = 0u32;
            let mut out = core::mem::MaybeUninit::<clangoffload_offload_section>::zeroed();
            let mut found = Vec::new();
            loop {
                // SAFETY: the buffer is readable for its length; `out` is writable.
                let status = unsafe {
                    clangoffload_elf_offload_section_next(
                        data.as_ptr(),
                        data.len(),
                        &mut index,
                        out.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                if status == clangoffload_status::End {
                    break;
                }
                assert_eq!(status, clangoffload_status::Ok, "{name}");
                // SAFETY: written on success.
                let section = unsafe { out.assume_init() };
                found.push((section.kind, section.section_index));
            }
            assert_eq!(found.len(), 2, "{name}");
            let of = |kind| found.iter().find(|(k, _)| *k == kind).unwrap().1;
            let fatbin = of(clangoffload_section_kind::HipFatbin);
            let segment = of(clangoffload_section_kind::HipWrappers);
            let mut record = core::mem::MaybeUninit::<clangoffload_fatbin_wrapper_record>::zeroed();
            // SAFETY: as above.
            let status = unsafe {
                clangoffload_fatbin_wrapper_get(
                    data.as_ptr(),
                    data.len(),
                    segment,
                    0,
                    record.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(status, clangoffload_status::Ok, "{name}");
            // SAFETY: written on success.
            let record = unsafe { record.assume_init() };
            assert_eq!(
                (record.resolved, record.target_section),
                (1, fatbin),
                "{name}"
            );
            assert_eq!(record.magic, 0x4849_5046);
        }
    }

    #[test]
    fn scan_walks_every_container_by_cursor() {
        let binary = fixture("offload/single.offbin");
        let bundle = fixture("llvm22/hip-4096.bundle");
        let mut data = vec![0x5au8; 10_000];
        data.extend_from_slice(&binary);
        data.extend_from_slice(b"CCOB junk");
        data.extend_from_slice(&bundle);
        let (mut cursor, mut found) = (clangoffload_scan_cursor::default(), Vec::new());
        let mut hit = clangoffload_scan_hit {
            kind: clangoffload_container_kind::Bundle,
            status: 0,
            offset: 0,
            data: clangoffload_bytes::of(&[]),
        };
        loop {
            // SAFETY: the buffer is readable for its length.
            let status = unsafe {
                clangoffload_scan_cursor_next(
                    data.as_ptr(),
                    data.len(),
                    CLANGOFFLOAD_SCAN_REJECTED,
                    &mut cursor,
                    &mut hit,
                )
            };
            if status == clangoffload_status::End {
                break;
            }
            assert_eq!(status, clangoffload_status::Ok);
            found.push((hit.offset, hit.kind, hit.status, hit.data.len));
        }
        let ok = clangoffload_status::Ok.code();
        assert_eq!(
            found,
            [
                (
                    10_000,
                    clangoffload_container_kind::OffloadBinary,
                    ok,
                    binary.len()
                ),
                (
                    10_000 + len_u64(binary.len()),
                    clangoffload_container_kind::Compressed,
                    clangoffload_status::UnsupportedVersion.code(),
                    0
                ),
                (
                    10_009 + len_u64(binary.len()),
                    clangoffload_container_kind::Bundle,
                    ok,
                    bundle.len()
                ),
            ]
        );
    }

    #[test]
    fn scan_reports_cuda_fat_binaries_and_their_damage() {
        let fatbin = fixture("cuda/raw-lz4.fatbin");
        let mut bad = fixture("cuda/raw-default.fatbin");
        bad[6] = 17; // header size
        let mut data = vec![0x5au8; 4097];
        data.extend_from_slice(&fatbin);
        data.extend_from_slice(&bad);
        let (mut cursor, mut hit, mut found) =
            (clangoffload_scan_cursor::default(), blank_hit(), Vec::new());
        // SAFETY: the buffer is readable for its length; cursor and hit are
        // writable locals.
        while unsafe {
            clangoffload_scan_cursor_next(
                data.as_ptr(),
                data.len(),
                CLANGOFFLOAD_SCAN_REJECTED,
                &mut cursor,
                &mut hit,
            )
        } == clangoffload_status::Ok
        {
            found.push((hit.offset, hit.kind, hit.status, hit.data.len));
        }
        let kind = clangoffload_container_kind::CudaFatbin;
        assert_eq!(
            found,
            [
                (4097, kind, clangoffload_status::Ok.code(), fatbin.len()),
                (
                    4097 + len_u64(fatbin.len()),
                    kind,
                    clangoffload_status::BadHeaderSize.code(),
                    0
                ),
            ]
        );
    }

    fn blank_hit() -> clangoffload_scan_hit {
        clangoffload_scan_hit {
            kind: clangoffload_container_kind::Bundle,
            status: 0,
            offset: 0,
            data: clangoffload_bytes::of(&[]),
        }
    }

    /// The offsets of the valid containers `step` walks to, and its status
    /// at the end.
    fn walk(
        mut step: impl FnMut(&mut clangoffload_scan_hit) -> clangoffload_status,
    ) -> (Vec<u64>, clangoffload_status) {
        let (mut hit, mut found) = (blank_hit(), Vec::new());
        loop {
            match step(&mut hit) {
                clangoffload_status::Ok => found.push(hit.offset),
                end => return (found, end),
            }
        }
    }

    #[test]
    fn the_cursor_record_finds_what_a_one_number_cursor_hides() {
        // An OffloadBinary at 0 whose image holds a compressed bundle header
        // (0x8f) sized past the binary, over the real one at 0x1e7.
        let data = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fuzz/artifacts-found/scan/nested-compressed-overrun"),
        )
        .unwrap();
        let mut cursor = clangoffload_scan_cursor::default();
        // SAFETY: the buffer is readable for its length; cursor and hit are
        // writable locals.
        let record = walk(|hit| unsafe {
            clangoffload_scan_cursor_next(data.as_ptr(), data.len(), 0, &mut cursor, hit)
        });
        assert_eq!(record, (vec![0, 0x8f, 0x1e7], clangoffload_status::End));
        assert_eq!(cursor.offset, len_u64(data.len()));
        let core: Vec<u64> = clangoffload::scan::scan(&data)
            .containers()
            .map(|(at, _)| at)
            .collect();
        assert_eq!(record.0, core);
        // The documented limit of the one-number cursor.
        let mut offset = 0u64;
        // SAFETY: as above.
        let plain = walk(|hit| unsafe {
            clangoffload_scan_next(data.as_ptr(), data.len(), 0, &mut offset, hit)
        });
        assert_eq!(plain, (vec![0, 0x8f], clangoffload_status::End));
        assert_eq!(offset, len_u64(data.len()));
    }

    #[test]
    fn scan_cursors_from_the_caller_are_checked_not_trusted() {
        let data = fixture("llvm22/hip-4096.bundle");
        let len = len_u64(data.len());
        let scan = |cursor: &mut clangoffload_scan_cursor| {
            let mut hit = blank_hit();
            // SAFETY: the buffer is readable for its length; cursor and hit
            // are writable.
            let status = unsafe {
                clangoffload_scan_cursor_next(data.as_ptr(), data.len(), 0, cursor, &mut hit)
            };
            (status, *cursor)
        };
        // Past the end: refused, the cursor left as it was.
        for offset in [len + 1, u64::MAX] {
            let mut past = clangoffload_scan_cursor {
                offset,
                ..Default::default()
            };
            let (status, after) = scan(&mut past);
            assert_eq!(status, clangoffload_status::InvalidArgument);
            assert_eq!(after.offset, offset);
        }
        // Any state: no hit outside the buffer, and the walk ends.
        for (skip_until, outer_end) in [(u64::MAX, 0), (0, u64::MAX), (u64::MAX, u64::MAX)] {
            let mut cursor = clangoffload_scan_cursor {
                offset: 0,
                skip_until,
                outer_end,
            };
            let mut calls = 0;
            loop {
                let (status, after) = scan(&mut cursor);
                calls += 1;
                assert!(after.offset <= len && calls <= data.len() + 1);
                if status != clangoffload_status::Ok {
                    assert_eq!(status, clangoffload_status::End);
                    break;
                }
            }
        }
        // A bad flag is reported before any pointer is looked at.
        use std::ptr::null_mut as null;
        // SAFETY: no pointer is read: the flags are refused first.
        let status =
            unsafe { clangoffload_scan_cursor_next(data.as_ptr(), data.len(), 2, null(), null()) };
        assert_eq!(status, clangoffload_status::InvalidArgument);
        // SAFETY: as above.
        let status =
            unsafe { clangoffload_scan_next(data.as_ptr(), data.len(), 2, null(), null()) };
        assert_eq!(status, clangoffload_status::InvalidArgument);
    }
}
