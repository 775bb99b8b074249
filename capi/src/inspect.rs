//! Inspection of any file, whole (core's `inspect`): every archive member,
//! ELF offload section and container, each container with its header, its
//! entries (AMDGPU code objects checked against their IDs) or its
//! OffloadBinary images, the wrapper records and other notes, and what is
//! damaged, reported as data while the walk goes on. What
//! `clangoffload inspect` prints, for a C program to read.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;

use clangoffload::bundler::Decoding;
#[cfg(feature = "std")]
use clangoffload::inspect::inspect_parallel;
use clangoffload::inspect::{inspect_to, Depth, InspectedContainer, Inspection, NoteKind, Place};
use clangoffload::Container;

use crate::compressed::{
    clangoffload_compressed_header, clangoffload_container_kind, limits,
    CLANGOFFLOAD_SKIP_HASH_CHECK,
};
use crate::ffi::slice_arg;
use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg};
use crate::locate::clangoffload_fatbin_wrapper_record;
use crate::offload_binary::clangoffload_string_pair;
use crate::status::clangoffload_status;

/// What `clangoffload_inspect` found in a file. Borrows the file's bytes.
pub struct clangoffload_inspection {
    found: Inspection<'static>,
    /// Each container's error message (empty if it was read whole).
    container_errors: Vec<String>,
    /// Each error's message.
    error_messages: Vec<String>,
    /// The target ID of each code object, by (container, entry).
    targets: BTreeMap<(usize, usize), String>,
}

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

/// `clangoffload_inspect`'s flags: decode each compressed bundle only as far
/// as its header and entry table (a few KiB of its stream): entries' IDs,
/// offsets and sizes, but no hash (`has_computed_hash` false) and no
/// code-object check of payloads past the table.
pub const CLANGOFFLOAD_INSPECT_TABLES_ONLY: u32 = 2;

/// Inspects the `len` bytes at `data` (any file: an archive, an ELF file, or
/// containers back to back) and stores what it found in `*out`. Compressed
/// bundles and OffloadBinaries are decoded under `max_decompressed_size`
/// each (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1 GiB), one at a time, and a
/// compressed bundle's hash computed (unless `flags` has
/// `CLANGOFFLOAD_INSPECT_TABLES_ONLY`); a wrong hash is a container error
/// unless `flags` has `CLANGOFFLOAD_SKIP_HASH_CHECK`. Damage in the input is no failure: it is
/// in the inspection (containers' errors, `clangoffload_inspection_get_error`).
/// Any other flag bit gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_inspection_free` (exactly once). On failure
/// `*out` is untouched.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: keep them alive
/// and unchanged until it is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or a writable
/// handle pointer.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspect(
    data: *const u8,
    len: usize,
    flags: u32,
    max_decompressed_size: u64,
    out: *mut *mut clangoffload_inspection,
) -> clangoffload_status {
    ffi_guard!({
        let allowed = CLANGOFFLOAD_SKIP_HASH_CHECK | CLANGOFFLOAD_INSPECT_TABLES_ONLY;
        // SAFETY: as the caller promises.
        let (data, out, decoding) =
            unsafe { arguments(data, len, flags, allowed, max_decompressed_size, out) }?;
        let depth = if flags & CLANGOFFLOAD_INSPECT_TABLES_ONLY != 0 {
            Depth::Tables
        } else {
            Depth::Whole
        };
        *out = into_handle(clangoffload_inspection::new(inspect_to(
            data, decoding, depth,
        )));
        Ok(())
    })
}

/// Told of a part of the input a job is done with (`data`, `len` bytes of
/// it), with the caller's `context`; may be called from several threads at
/// once.
pub type clangoffload_done_with_fn =
    Option<unsafe extern "C" fn(context: *mut c_void, data: *const u8, len: usize)>;

/// `clangoffload_inspect` with every compressed bundle decoded whole (as
/// without `CLANGOFFLOAD_INSPECT_TABLES_ONLY`: the same inspection) on up to
/// `threads` threads (0: one), each bundle admitted by its declared
/// decompressed size under a memory budget of `memory_budget` bytes across
/// those threads (0: 256 MiB, or the largest bundle's buffer when that is
/// more; one larger than the budget is decoded alone), and `done_with` (if
/// set) told of each compressed bundle's input bytes once it is decoded, so
/// that a caller who mapped the file can let go of their pages. `flags`:
/// `CLANGOFFLOAD_SKIP_HASH_CHECK` only.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_inspection_free` (exactly once). On failure
/// `*out` is untouched.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: keep them alive
/// and unchanged until it is freed. `done_with` and `context` are used
/// during the call only.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `done_with` may be NULL.
///
/// # Safety
/// As `clangoffload_inspect`; `done_with`, if set, must be callable with
/// `context` from any thread, several at once, during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspect_parallel(
    data: *const u8,
    len: usize,
    flags: u32,
    max_decompressed_size: u64,
    threads: usize,
    memory_budget: u64,
    done_with: clangoffload_done_with_fn,
    context: *mut c_void,
    out: *mut *mut clangoffload_inspection,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (data, out, decoding) = unsafe {
            arguments(
                data,
                len,
                flags,
                CLANGOFFLOAD_SKIP_HASH_CHECK,
                max_decompressed_size,
                out,
            )
        }?;
        // The context crosses threads as an address: the caller promises
        // the callback may be called with it from any of them.
        let context = context.expose_provenance();
        let tell = |part: &[u8]| {
            if let Some(done_with) = done_with {
                let context = core::ptr::with_exposed_provenance_mut(context);
                // SAFETY: callable with `context` from any thread, as the
                // caller promises; the part is live during the call.
                unsafe { done_with(context, part.as_ptr(), part.len()) }
            }
        };
        let budget = (memory_budget != 0).then_some(memory_budget);
        let found = inspect_parallel(data, decoding, threads.max(1), budget, &tell);
        *out = into_handle(clangoffload_inspection::new(found));
        Ok(())
    })
}

/// The inspection calls' arguments, checked: the input, the output slot
/// and how to decode (`flags` may hold only `allowed` bits).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes that outlive the handle made;
/// `out` is NULL or writable.
unsafe fn arguments<'o>(
    data: *const u8,
    len: usize,
    flags: u32,
    allowed: u32,
    max_decompressed_size: u64,
    out: *mut *mut clangoffload_inspection,
) -> Result<
    (
        &'static [u8],
        &'o mut *mut clangoffload_inspection,
        Decoding,
    ),
    clangoffload_status,
> {
    if flags & !allowed != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: the caller promises `len` readable bytes that outlive the handle.
    let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
    // SAFETY: the caller promises a writable pointer.
    let out = unsafe { out_arg(out) }?;
    let decoding = Decoding {
        max_size: limits(max_decompressed_size).max_uncompressed_size,
        verify_hash: flags & CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
        verbose: false,
    };
    Ok((data, out, decoding))
}

impl clangoffload_inspection {
    /// Keeps the texts the records point at: messages and target IDs.
    fn new(found: Inspection<'static>) -> Self {
        let container_errors = found
            .containers
            .iter()
            .map(|c| {
                c.error
                    .as_ref()
                    .map(|e| alloc::format!("{e}"))
                    .unwrap_or_default()
            })
            .collect();
        let error_messages = found
            .errors
            .iter()
            .map(|e| alloc::format!("{}", e.error))
            .collect();
        let targets = found
            .containers
            .iter()
            .enumerate()
            .flat_map(|(c, container)| {
                container
                    .entries
                    .iter()
                    .enumerate()
                    .filter_map(move |(e, entry)| {
                        let target = entry.code_object?.target;
                        Some(((c, e), alloc::format!("{target}")))
                    })
            })
            .collect();
        clangoffload_inspection {
            found,
            container_errors,
            error_messages,
            targets,
        }
    }

    fn container(&self, index: usize) -> Result<&InspectedContainer<'static>, clangoffload_status> {
        self.found
            .containers
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)
    }
}

fn place_of(place: &Place<'_>) -> clangoffload_inspection_place {
    clangoffload_inspection_place {
        file: place.file,
        has_section: place.section.is_some(),
        section: clangoffload_bytes::of(place.section.unwrap_or_default()),
    }
}

/// Releases a handle from `clangoffload_inspect`; views taken from it
/// become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `inspection` does nothing.
///
/// # Safety
/// `inspection` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_inspection_free(inspection: *mut clangoffload_inspection) {
    // SAFETY: NULL or a handle from clangoffload_inspect released once, as
    // the caller promises.
    unsafe { free_handle(inspection) }
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
    unsafe { handle_arg(inspection) }.map_or(0, |i| i.found.files.len())
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let file = inspection
            .found
            .files
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let format = file.objdump_format();
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_inspected_file {
            has_name: file.name.is_some(),
            name: clangoffload_bytes::of(file.name.unwrap_or_default()),
            parent: file.parent.unwrap_or(0),
            is_elf: format.is_some(),
            objdump_format: clangoffload_bytes::of(format.unwrap_or_default().as_bytes()),
        };
        Ok(())
    })
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
    unsafe { handle_arg(inspection) }.map_or(0, |i| i.found.containers.len())
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let c = inspection.container(index)?;
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
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = record;
        Ok(())
    })
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
    let inspection = unsafe { handle_arg(inspection) };
    inspection.map_or(0, |i| i.container(container).map_or(0, |c| c.entries.len()))
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let entry = inspection
            .container(container)?
            .entries
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let target = inspection
            .targets
            .get(&(container, index))
            .map_or("", String::as_str);
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_inspected_entry {
            id: clangoffload_bytes::of(&entry.id),
            offset: entry.offset,
            size: entry.size,
            is_code_object: entry.code_object.is_some(),
            code_object_target: clangoffload_bytes::of(target.as_bytes()),
            target_matches: entry.code_object.is_some_and(|c| c.id_agrees),
        };
        Ok(())
    })
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
    let inspection = unsafe { handle_arg(inspection) };
    inspection.map_or(0, |i| i.container(container).map_or(0, |c| c.images.len()))
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let image = inspection
            .container(container)?
            .images
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_inspected_image {
            version: image.version,
            image_kind: image.image_kind.raw(),
            offload_kind: image.offload_kind.raw(),
            image_kind_name: clangoffload_bytes::of(image.image_kind.objdump_name().as_bytes()),
            offload_kind_name: clangoffload_bytes::of(image.offload_kind.name().as_bytes()),
            size: image.size,
            string_count: image.strings.len(),
        };
        Ok(())
    })
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
    let inspection = unsafe { handle_arg(inspection) };
    inspection.map_or(0, |i| {
        i.container(container)
            .ok()
            .and_then(|c| c.images.get(image))
            .map_or(0, |image| image.strings.len())
    })
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let (key, value) = inspection
            .container(container)?
            .images
            .get(image)
            .and_then(|image| image.strings.get(index))
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_string_pair {
            key: clangoffload_bytes::of(key),
            value: clangoffload_bytes::of(value),
        };
        Ok(())
    })
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
    unsafe { handle_arg(inspection) }.map_or(0, |i| i.found.notes.len())
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
    use clangoffload_inspection_note_kind as K;
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let note = inspection
            .found
            .notes
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
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
                (record.id, record.offset, record.size) =
                    (clangoffload_bytes::of(id), offset, size);
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
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = record;
        Ok(())
    })
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
    unsafe { handle_arg(inspection) }.map_or(0, |i| i.found.errors.len())
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
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let inspection = unsafe { handle_arg(inspection) }?;
        let (error, message) = inspection
            .found
            .errors
            .get(index)
            .zip(inspection.error_messages.get(index))
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_inspection_error {
            place: place_of(&error.place),
            has_offset: error.offset.is_some(),
            offset: error.offset.unwrap_or(0),
            status: clangoffload_status::from(error.error.kind()).code(),
            message: clangoffload_bytes::of(message.as_bytes()),
        };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;

    fn fixture(path: &str) -> Vec<u8> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        std::fs::read(root.join(path)).unwrap()
    }

    /// Inspects `data` and hands the live handle to `check`.
    fn with_inspection(
        data: &[u8],
        flags: u32,
        check: impl FnOnce(*const clangoffload_inspection),
    ) {
        let mut handle = core::ptr::null_mut();
        // SAFETY: the buffer outlives the handle, freed below.
        let status =
            unsafe { clangoffload_inspect(data.as_ptr(), data.len(), flags, 0, &mut handle) };
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
        with_inspection(&fatbin, 0, |h| unsafe {
            assert_eq!(clangoffload_inspection_container_count(h), 4);
            let c = get(|out| clangoffload_inspection_get_container(h, 1, out)).unwrap();
            assert_eq!(c.kind, clangoffload_container_kind::Compressed);
            assert_eq!(c.offset, 8192);
            assert!(c.has_computed_hash && c.computed_hash != c.compressed.hash);
            assert_eq!(c.error_status, clangoffload_status::HashMismatch.code());
            assert!(view(c.error).starts_with(b"hash mismatch"));
            assert_eq!(view(c.method_name), b"zstd");
            assert_eq!(clangoffload_inspection_entry_count(h, 1), c.entry_count);
            let e = get(|out| clangoffload_inspection_get_entry(h, 1, 0, out)).unwrap();
            assert_eq!(view(e.id), b"host-x86_64-unknown-linux-gnu-");
            let past = get(|out| clangoffload_inspection_get_entry(h, 1, c.entry_count, out));
            assert_eq!(past.unwrap_err(), clangoffload_status::IndexOutOfRange);
            assert_eq!(clangoffload_inspection_error_count(h), 0);
        });
        // The hash not checked: no error.
        with_inspection(&fatbin, CLANGOFFLOAD_SKIP_HASH_CHECK, |h| unsafe {
            let c = get(|out| clangoffload_inspection_get_container(h, 1, out)).unwrap();
            assert_eq!(c.error_status, 0);
        });
    }

    #[test]
    fn host_objects_give_code_objects_notes_and_files() {
        let object = fixture("offload/hip.o");
        with_inspection(&object, 0, |h| unsafe {
            let file = get(|out| clangoffload_inspection_get_file(h, 0, out)).unwrap();
            assert!(!file.has_name && file.is_elf);
            assert_eq!(file.parent, 0);
            assert_eq!(view(file.objdump_format), b"elf64-x86-64");
            let c = get(|out| clangoffload_inspection_get_container(h, 0, out)).unwrap();
            assert_eq!(view(c.place.section), b".hip_fatbin");
            let e = get(|out| clangoffload_inspection_get_entry(h, 0, 2, out)).unwrap();
            assert!(e.is_code_object && e.target_matches);
            assert_eq!(view(e.code_object_target), b"gfx90a");
            let n = get(|out| clangoffload_inspection_get_note(h, 0, out)).unwrap();
            assert_eq!(n.kind, clangoffload_inspection_note_kind::Wrapper);
            assert_eq!(view(n.wrapper_name), b"HIPF");
            assert_eq!((n.wrapper.resolved, n.wrapper.target.len), (1, 18_160));
        });
    }

    #[test]
    fn images_and_their_strings() {
        let archive = fixture("offload/offload.a");
        with_inspection(&archive, 0, |h| unsafe {
            assert!(clangoffload_inspection_file_count(h) > 1);
            let image = get(|out| clangoffload_inspection_get_image(h, 0, 0, out)).unwrap();
            assert_eq!(view(image.image_kind_name), b"elf");
            assert_eq!(view(image.offload_kind_name), b"openmp");
            assert_eq!(
                clangoffload_inspection_string_count(h, 0, 0),
                image.string_count
            );
            let pair = get(|out| clangoffload_inspection_get_string(h, 0, 0, 0, out)).unwrap();
            assert_eq!(view(pair.key), b"arch");
            let c = get(|out| clangoffload_inspection_get_container(h, 0, out)).unwrap();
            let file = get(|out| clangoffload_inspection_get_file(h, c.place.file, out)).unwrap();
            assert_eq!((view(file.name), file.parent), (b"embed.o".to_vec(), 0));
        });
    }

    #[test]
    fn null_and_unknown_flags_are_refused() {
        let mut handle = core::ptr::null_mut();
        // SAFETY: NULL with length 0 is allowed; `handle` is writable.
        let status = unsafe { clangoffload_inspect(core::ptr::null(), 0, 4, 0, &mut handle) };
        assert_eq!(status, clangoffload_status::InvalidArgument);
        // SAFETY: as above.
        let status = unsafe { clangoffload_inspect(core::ptr::null(), 1, 0, 0, &mut handle) };
        assert_eq!(status, clangoffload_status::NullArgument);
        // SAFETY: NULL handles are allowed.
        unsafe {
            assert_eq!(
                clangoffload_inspection_container_count(core::ptr::null()),
                0
            );
            clangoffload_inspection_free(core::ptr::null_mut());
        }
        with_inspection(&[], 0, |h| unsafe {
            assert_eq!(clangoffload_inspection_file_count(h), 1);
            assert_eq!(clangoffload_inspection_container_count(h), 0);
            let out = core::ptr::null_mut();
            let status = clangoffload_inspection_get_file(h, 0, out);
            assert_eq!(status, clangoffload_status::NullArgument);
        });
    }
}
