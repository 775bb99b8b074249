//! An inspection read by index: files, containers (with their compressed
//! headers), entries, OffloadBinary images and their strings, notes and
//! errors, each as a C record of views.

use alloc::string::String;

use clangoffload::inspect::{InspectedContainer, Note as InspectedNote, NoteKind, Place};
use clangoffload::Container;

use super::inspection::clangoffload_inspection;
use crate::compressed::{clangoffload_compressed_header, clangoffload_container_kind};
use crate::ffi::clangoffload_bytes;
use crate::handle;
use crate::locate::clangoffload_fatbin_wrapper_record;
use crate::offload_binary::clangoffload_string_pair;
use crate::status::clangoffload_status;

/// Where something was found.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspection_place {
    /// The file: an index for `clangoffload_inspection_get_file` (0: the
    /// input).
    pub file: usize,
    /// Whether it is in an ELF section.
    pub has_section: bool,
    /// The section's name (not NUL-terminated).
    pub section: clangoffload_bytes,
}

/// The input (file 0) or an archive member.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspected_file {
    /// Whether it is an archive member (with a name and a parent).
    pub has_name: bool,
    /// The member's name: bytes from the file, never a path.
    pub name: clangoffload_bytes,
    /// The archive it is a member of (a file index, less than its own; 0
    /// for the input).
    pub parent: usize,
    /// Whether it is an object file: ELF, or COFF (object or PE image), the
    /// files whose sections are walked and that `llvm-objdump` names.
    pub is_elf: bool,
    /// For an object file, the format name `llvm-objdump` prints
    /// (`elf64-x86-64`, `coff-x86-64`, ...); else empty.
    pub objdump_format: clangoffload_bytes,
}

/// One container.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspected_container {
    /// Where it is.
    pub place: clangoffload_inspection_place,
    /// Its offset in its file.
    pub offset: u64,
    /// What it is.
    pub kind: clangoffload_container_kind,
    /// Its bytes, cut to its extent.
    pub data: clangoffload_bytes,
    /// `COMPRESSED` only: the header (zeros and empty views otherwise).
    pub compressed: clangoffload_compressed_header,
    /// `COMPRESSED` only: the method's name (`zlib`, `zstd`, `unknown`).
    pub method_name: clangoffload_bytes,
    /// `COMPRESSED` only: uncompressed over compressed size (0 for an empty
    /// stream).
    pub ratio: f64,
    /// Whether it decoded, and so `computed_hash` is set.
    pub has_computed_hash: bool,
    /// The hash of what it decoded to.
    pub computed_hash: u64,
    /// How many entries (a bundle's or a compressed bundle's).
    pub entry_count: usize,
    /// How many images (an OffloadBinary's).
    pub image_count: usize,
    /// `CLANGOFFLOAD_STATUS_OK` if it was read whole; else why not (for a
    /// wrong hash, `CLANGOFFLOAD_STATUS_HASH_MISMATCH`).
    pub error_status: u32,
    /// The message of that error (empty if none; not NUL-terminated).
    pub error: clangoffload_bytes,
}

/// One entry of a bundle.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspected_entry {
    /// The entry ID.
    pub id: clangoffload_bytes,
    /// The payload's offset: in the file for a plain bundle, in the decoded
    /// bundle for a compressed one.
    pub offset: u64,
    /// The payload's size.
    pub size: u64,
    /// Whether the payload is an AMDGPU code object with a known target.
    pub is_code_object: bool,
    /// The target ID its header names (empty if none).
    pub code_object_target: clangoffload_bytes,
    /// Whether the entry ID ends with `-` and that target ID.
    pub target_matches: bool,
}

/// One image of an OffloadBinary.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspected_image {
    /// Its binary's format version (of the decompressed binary for a
    /// compressed one).
    pub version: u32,
    /// The image kind as stored.
    pub image_kind: u16,
    /// The offload kind as stored.
    pub offload_kind: u16,
    /// The image kind as `llvm-objdump` names it (`elf`, `llvm ir`, ...).
    pub image_kind_name: clangoffload_bytes,
    /// The offload kind's name (`openmp`, `hip`, ...; `none`).
    pub offload_kind_name: clangoffload_bytes,
    /// The image's size.
    pub size: u64,
    /// How many key-value strings.
    pub string_count: usize,
}

/// What a note is about.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_inspection_note_kind {
    /// A section holding one entry of an object-flavour bundle.
    BundleEntry = 1,
    /// An NVIDIA fat binary (`.nv_fatbin`), not read further.
    NvFatbin = 2,
    /// A HIP or CUDA fat-binary wrapper record.
    Wrapper = 3,
}

/// What an offload section holds besides containers.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspection_note {
    /// What it is about.
    pub kind: clangoffload_inspection_note_kind,
    /// The section.
    pub place: clangoffload_inspection_place,
    /// `BUNDLE_ENTRY`, `NV_FATBIN`: where the section's contents start in
    /// the file.
    pub offset: u64,
    /// `BUNDLE_ENTRY`, `NV_FATBIN`: their size.
    pub size: u64,
    /// `BUNDLE_ENTRY`: the entry ID.
    pub id: clangoffload_bytes,
    /// `WRAPPER`: the record's index in its section.
    pub wrapper_index: usize,
    /// `WRAPPER`: the record and where it leads.
    pub wrapper: clangoffload_fatbin_wrapper_record,
    /// `WRAPPER`: the magic as text (`HIPF`, `HIPK`, `CUDA`, `unknown magic`).
    pub wrapper_name: clangoffload_bytes,
}

/// Something that could not be read outside any one container.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_inspection_error {
    /// Where.
    pub place: clangoffload_inspection_place,
    /// Whether `offset` is set: for bytes that start no readable container,
    /// where the walk of that section or file stopped.
    pub has_offset: bool,
    /// That offset in the file.
    pub offset: u64,
    /// The status of the error.
    pub status: u32,
    /// Its message (not NUL-terminated).
    pub message: clangoffload_bytes,
}

fn place_of(place: &Place<'_>) -> clangoffload_inspection_place {
    clangoffload_inspection_place {
        file: place.file,
        has_section: place.section.is_some(),
        section: clangoffload_bytes::of(place.section.unwrap_or_default()),
    }
}

/// How many files were read: the input, then every archive member.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_file_count(
    inspection: *const clangoffload_inspection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| &i.found.files) }
}

/// Stores file `index` (0: the input) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: `out->name` borrows the inspected buffer; `objdump_format` is
/// static.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_file(
    inspection: *const clangoffload_inspection,
    index: usize,
    out: *mut clangoffload_inspected_file,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| &i.found.files,
            index,
            out,
            |_, file| {
                let format = file.objdump_format();
                clangoffload_inspected_file {
                    has_name: file.name.is_some(),
                    name: clangoffload_bytes::of(file.name.unwrap_or_default()),
                    parent: file.parent.unwrap_or(0),
                    is_elf: format.is_some(),
                    objdump_format: clangoffload_bytes::of(format.unwrap_or_default().as_bytes()),
                }
            },
        )
    }
}

/// How many containers were read, damaged ones included (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_container_count(
    inspection: *const clangoffload_inspection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| &i.found.containers) }
}

/// Stores container `index` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: `out->data`, the section name and the header's views borrow
/// the inspected buffer; `out->error` borrows the handle; both until the
/// handle is freed.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_container(
    inspection: *const clangoffload_inspection,
    index: usize,
    out: *mut clangoffload_inspected_container,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| &i.found.containers,
            index,
            out,
            |i, c| container_record(i, index, c),
        )
    }
}

/// Container `index` of an inspection as C sees it.
fn container_record(
    inspection: &clangoffload_inspection,
    index: usize,
    c: &InspectedContainer<'static>,
) -> clangoffload_inspected_container {
    let error = inspection
        .container_errors
        .get(index)
        .map_or("", String::as_str);
    let empty = clangoffload_bytes::of(&[]);
    let mut record = clangoffload_inspected_container {
        place: place_of(&c.place),
        offset: c.offset,
        kind: clangoffload_container_kind::Bundle,
        data: clangoffload_bytes::of(c.container.data()),
        compressed: clangoffload_compressed_header {
            version: 0,
            method: 0,
            header_len: 0,
            has_total_size: false,
            total_size: 0,
            uncompressed_size: 0,
            hash: 0,
            container: empty,
            compressed: empty,
        },
        method_name: empty,
        ratio: 0.0,
        has_computed_hash: c.computed_hash.is_some(),
        computed_hash: c.computed_hash.unwrap_or(0),
        entry_count: c.entries.len(),
        image_count: c.images.len(),
        error_status: c.error.as_ref().map_or(0, |e| {
            e.core_error()
                .map_or(clangoffload_status::HashMismatch, |e| e.kind().into())
                .code()
        }),
        error: clangoffload_bytes::of(error.as_bytes()),
    };
    match &c.container {
        Container::Bundle(_) => {}
        Container::Compressed(header) => {
            record.kind = clangoffload_container_kind::Compressed;
            record.compressed = header.into();
            record.method_name = clangoffload_bytes::of(header.method().name().as_bytes());
            record.ratio = header.ratio();
        }
        Container::OffloadBinary(_) => {
            record.kind = clangoffload_container_kind::OffloadBinary;
        }
    }
    record
}

/// How many entries container `container` has (0 past the last container,
/// or for NULL).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_entry_count(
    inspection: *const clangoffload_inspection,
    container: usize,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| i.entries(container)) }
}

/// Stores entry `index` of container `container` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` when either index is past the
/// last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the views borrow the inspected buffer or (IDs of decoded
/// bundles, target IDs) the handle, until the handle is freed.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_entry(
    inspection: *const clangoffload_inspection,
    container: usize,
    index: usize,
    out: *mut clangoffload_inspected_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| i.entries(container),
            index,
            out,
            |i, entry| {
                let target = i
                    .targets
                    .get(&(container, index))
                    .map_or("", String::as_str);
                clangoffload_inspected_entry {
                    id: clangoffload_bytes::of(&entry.id),
                    offset: entry.offset,
                    size: entry.size,
                    is_code_object: entry.code_object.is_some(),
                    code_object_target: clangoffload_bytes::of(target.as_bytes()),
                    target_matches: entry.code_object.is_some_and(|c| c.id_agrees),
                }
            },
        )
    }
}

/// How many images container `container` has (0 past the last container,
/// or for NULL).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_image_count(
    inspection: *const clangoffload_inspection,
    container: usize,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| i.images(container)) }
}

/// Stores image `index` of container `container` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` when either index is past the
/// last.
///
/// Ownership: nothing to free; `*out` is a plain record.
///
/// Lifetime: the names are static.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_image(
    inspection: *const clangoffload_inspection,
    container: usize,
    index: usize,
    out: *mut clangoffload_inspected_image,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| i.images(container),
            index,
            out,
            |_, image| clangoffload_inspected_image {
                version: image.version,
                image_kind: image.image_kind.raw(),
                offload_kind: image.offload_kind.raw(),
                image_kind_name: clangoffload_bytes::of(image.image_kind.objdump_name().as_bytes()),
                offload_kind_name: clangoffload_bytes::of(image.offload_kind.name().as_bytes()),
                size: image.size,
                string_count: image.strings.len(),
            },
        )
    }
}

/// How many strings image `image` of container `container` has (0 past
/// the last, or for NULL).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_string_count(
    inspection: *const clangoffload_inspection,
    container: usize,
    image: usize,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| i.strings(container, image)) }
}

/// Stores string `index` (table order) of image `image` of container
/// `container` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` when any
/// index is past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the views borrow the inspected buffer or (strings of
/// compressed binaries) the handle, until the handle is freed.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_string(
    inspection: *const clangoffload_inspection,
    container: usize,
    image: usize,
    index: usize,
    out: *mut clangoffload_string_pair,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| i.strings(container, image),
            index,
            out,
            |_, (key, value)| clangoffload_string_pair {
                key: clangoffload_bytes::of(key),
                value: clangoffload_bytes::of(value),
            },
        )
    }
}

/// How many notes there are (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_note_count(
    inspection: *const clangoffload_inspection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| &i.found.notes) }
}

/// Stores note `index` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the section name, `id` and `wrapper.target` borrow the
/// inspected buffer; `wrapper_name` is static.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_note(
    inspection: *const clangoffload_inspection,
    index: usize,
    out: *mut clangoffload_inspection_note,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| &i.found.notes,
            index,
            out,
            |_, note| note_record(note),
        )
    }
}

/// A note of an inspection as C sees it.
fn note_record(note: &InspectedNote<'static>) -> clangoffload_inspection_note {
    use clangoffload_inspection_note_kind as K;
    let empty = clangoffload_bytes::of(&[]);
    let mut record = clangoffload_inspection_note {
        kind: K::NvFatbin,
        place: place_of(&note.place),
        offset: 0,
        size: 0,
        id: empty,
        wrapper_index: 0,
        wrapper: clangoffload_fatbin_wrapper_record {
            magic: 0,
            version: 0,
            binary_address: 0,
            resolved: 0,
            target_section: 0,
            target_offset: 0,
            target: empty,
        },
        wrapper_name: empty,
    };
    match note.kind {
        NoteKind::BundleEntry { id, offset, size } => {
            record.kind = K::BundleEntry;
            (record.id, record.offset, record.size) = (clangoffload_bytes::of(id), offset, size);
        }
        NoteKind::NvFatbin { offset, size } => (record.offset, record.size) = (offset, size),
        NoteKind::Wrapper {
            index,
            wrapper,
            target,
        } => {
            record.kind = K::Wrapper;
            record.wrapper_index = index;
            record.wrapper_name = clangoffload_bytes::of(wrapper.kind.name().as_bytes());
            let w = &mut record.wrapper;
            (w.magic, w.version, w.binary_address) =
                (wrapper.kind.magic(), wrapper.version, wrapper.binary);
            if let Some(target) = target {
                w.resolved = 1;
                w.target_section = target.section;
                w.target_offset = target.offset;
                w.target = clangoffload_bytes::of(target.container);
            }
        }
    }
    record
}

/// How many errors there are outside any one container (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `inspection` gives 0.
///
/// # Safety
/// `inspection` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_error_count(
    inspection: *const clangoffload_inspection,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle::count(inspection, |i| &i.found.errors) }
}

/// Stores error `index` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE`
/// past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views.
///
/// Lifetime: the section name borrows the inspected buffer, `message` the
/// handle, until the handle is freed.
///
/// NULL: `inspection` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `inspection` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_get_error(
    inspection: *const clangoffload_inspection,
    index: usize,
    out: *mut clangoffload_inspection_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        handle::get(
            inspection,
            |i| &i.found.errors,
            index,
            out,
            |i, error| {
                // One message per error, made with the handle.
                let message = i.error_messages.get(index).map_or("", String::as_str);
                clangoffload_inspection_error {
                    place: place_of(&error.place),
                    has_offset: error.offset.is_some(),
                    offset: error.offset.unwrap_or(0),
                    status: clangoffload_status::from(error.error.kind()).code(),
                    message: clangoffload_bytes::of(message.as_bytes()),
                }
            },
        )
    }
}
