//! OffloadBinaries (clang-offload-packager images, `.llvm.offloading`
//! sections): read every binary in a buffer, their entries and strings;
//! write them; and split `--image` arguments the way LLVM's packager does.

use alloc::{boxed::Box, vec::Vec};
use core::ffi::c_char;

use clangoffload::offload_binary::image_args::{image_arguments, ImageArgument};
use clangoffload::offload_binary::{
    binaries, write_offload_binary, ImageKind, NewImage, OffloadEntry, OffloadKind, WriteOptions,
};
use clangoffload::{CompressionMethod, DecompressOptions, Error, OffloadBinary};

use crate::compressed::{limits, CLANGOFFLOAD_DEFAULT_LEVEL};
use crate::ffi::{
    array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg,
};
use crate::object_bundle::clangoffload_buffer;
use crate::status::{clangoffload_error, clangoffload_status, report};

/// Write uncompressed binaries (`clangoffload_offload_binary_write`).
pub const CLANGOFFLOAD_COMPRESSION_NONE: u32 = 0;
/// Compress a version 3 binary with zlib.
pub const CLANGOFFLOAD_COMPRESSION_ZLIB: u32 = 1;
/// Compress a version 3 binary with zstd.
pub const CLANGOFFLOAD_COMPRESSION_ZSTD: u32 = 2;

/// The OffloadBinaries found back to back in a buffer (a raw file, or the
/// contents of a `.llvm.offloading` section), and their entries. Borrows the
/// buffer; compressed (version 3) binaries are decompressed into the handle.
pub struct clangoffload_offload_binaries {
    entries: Vec<Located>,
    /// Decompressed binaries; entries of compressed ones borrow these.
    inflated: Vec<Box<[u8]>>,
    fault: Option<Error>,
}

struct Located {
    entry: OffloadEntry<'static>,
    binary_index: usize,
    binary_offset: u64,
    version: u32,
    compressed: bool,
}

/// One entry: an image and its metadata. The views borrow the parsed buffer
/// (or, for an entry of a compressed binary, the handle).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_offload_entry {
    /// Which binary of the buffer (file order) the entry is in.
    pub binary_index: usize,
    /// Offset of that binary in the buffer.
    pub binary_offset: u64,
    /// The binary's format version (1, 2 or 3).
    pub version: u32,
    /// 1 if the binary was compressed; the views then borrow the handle.
    pub compressed: u32,
    /// Image kind as stored (0 none, 1 object, 2 bitcode, 3 cubin,
    /// 4 fatbinary, 5 PTX, 6 SPIR-V; others kept).
    pub image_kind: u16,
    /// Offload kind as stored (1 OpenMP, 2 CUDA, 4 HIP, 8 SYCL; others kept).
    pub offload_kind: u16,
    /// Entry flags as stored (1: metadata only, version 2+).
    pub flags: u32,
    /// The image bytes.
    pub image: clangoffload_bytes,
    /// Offset of the image from the start of its binary.
    pub image_offset: u64,
    /// Number of key-value strings.
    pub string_count: u64,
    /// The `triple` string (empty if absent).
    pub triple: clangoffload_bytes,
    /// The `arch` string (empty if absent).
    pub arch: clangoffload_bytes,
}

/// One key-value string of an entry; views as in the entry.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_string_pair {
    /// The key (not NUL-terminated).
    pub key: clangoffload_bytes,
    /// The value (version 1: up to its NUL; versions 2, 3: its stored size,
    /// NULs included).
    pub value: clangoffload_bytes,
}

/// Parses every OffloadBinary in `len` bytes at `data` (back to back, zero
/// padding between and after them skipped) and stores a handle in `*out`. Every
/// field of every binary is checked. Compressed binaries are decompressed,
/// refusing a declared size over `max_size` (`CLANGOFFLOAD_DEFAULT_LIMIT`: 1
/// GiB). With `CLANGOFFLOAD_PARSE_LENIENT`, the binaries before a damaged one
/// are kept and the fault is available from
/// `clangoffload_offload_binaries_fault`; otherwise it is the status. Any other
/// flag bit gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_offload_binaries_free` (exactly once); it owns the
/// decompressed bytes of compressed binaries. On failure `*out` is untouched,
/// nothing is kept, and `*err` (if not NULL) says what and where.
///
/// Lifetime: the handle borrows the `len` bytes at `data`: they must stay alive
/// and unchanged until the handle is freed. Views taken from it borrow `data`
/// or (entries of compressed binaries) the handle.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` NULL gives
/// `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no details).
///
/// # Safety
/// `data` is NULL or readable for `len` bytes; `out` is NULL or a writable
/// handle pointer; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_parse(
    data: *const u8,
    len: usize,
    max_size: u64,
    flags: u32,
    out: *mut *mut clangoffload_offload_binaries,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: as the caller promises.
        let (data, out, lenient) = unsafe { crate::handle::parse_args(data, len, flags, out) }?;
        let options = DecompressOptions {
            limits: limits(max_size),
            ..DecompressOptions::default()
        };
        let mut handle = clangoffload_offload_binaries {
            entries: Vec::new(),
            inflated: Vec::new(),
            fault: None,
        };
        if let Err(e) = handle.collect(data, &options)? {
            if !lenient {
                // SAFETY: `err` is NULL or writable, as the caller promises.
                return Err(unsafe { report(&e, err) });
            }
            handle.fault = Some(e);
        }
        *out = into_handle(handle);
        Ok(())
    })
}

impl clangoffload_offload_binaries {
    /// Collects the entries of every binary up to the first damaged one,
    /// which is the inner error; the outer one is a failed allocation.
    fn collect(
        &mut self,
        data: &'static [u8],
        options: &DecompressOptions,
    ) -> Result<Result<(), Error>, clangoffload_status> {
        for (binary_index, found) in binaries(data).enumerate() {
            let (offset, binary) = match found {
                Ok(found) => found,
                Err(e) => return Ok(Err(e)),
            };
            let (binary, compressed) = if binary.is_compressed() {
                let inflated = match binary.decompress(options) {
                    Ok(bytes) => bytes.into_boxed_slice(),
                    Err(e) => return Ok(Err(e.shifted(offset))),
                };
                // SAFETY: the box is kept in `self.inflated` for as long as
                // the handle lives and is never moved out or changed, so the
                // bytes it points to outlive every view taken from them.
                let bytes: &'static [u8] =
                    unsafe { core::slice::from_raw_parts(inflated.as_ptr(), inflated.len()) };
                self.inflated
                    .try_reserve(1)
                    .map_err(|_| clangoffload_status::OutOfMemory)?;
                self.inflated.push(inflated);
                match OffloadBinary::parse(bytes) {
                    Ok(binary) => (binary, true),
                    Err(e) => return Ok(Err(e.shifted(offset))),
                }
            } else {
                (binary, false)
            };
            for entry in binary.entries() {
                self.entries
                    .try_reserve(1)
                    .map_err(|_| clangoffload_status::OutOfMemory)?;
                self.entries.push(Located {
                    entry,
                    binary_index,
                    binary_offset: offset,
                    version: binary.version(),
                    compressed,
                });
            }
        }
        Ok(Ok(()))
    }
}

/// Releases a handle from `clangoffload_offload_binaries_parse`, with
/// everything it owns; views taken from it become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `binaries` does nothing.
///
/// Thread safety: must not run concurrently with any other use of the same
/// handle; the handle must not be used afterwards.
///
/// # Safety
/// `binaries` is NULL or a live handle from
/// `clangoffload_offload_binaries_parse` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_free(
    binaries: *mut clangoffload_offload_binaries,
) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(binaries) }
}

/// Number of entries over all binaries (file order).
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `binaries` gives 0.
///
/// # Safety
/// `binaries` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_entry_count(
    binaries: *const clangoffload_offload_binaries,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(binaries, |h| &h.entries) }
}

/// Stores entry `index` (file order over all binaries) in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `out->image`, `out->triple` and `out->arch` borrow `data`, or, for
/// an entry of a compressed binary, the handle (`compressed` is 1): they stay
/// valid until the handle is freed, while `data` stays alive and unchanged.
///
/// NULL: `binaries` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `binaries` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_get_entry(
    binaries: *const clangoffload_offload_binaries,
    index: usize,
    out: *mut clangoffload_offload_entry,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::get(binaries, |h| &h.entries, index, out, |_, l| entry_record(l)) }
}

fn entry_record(located: &Located) -> clangoffload_offload_entry {
    let entry = &located.entry;
    clangoffload_offload_entry {
        binary_index: located.binary_index,
        binary_offset: located.binary_offset,
        version: located.version,
        compressed: located.compressed.into(),
        image_kind: entry.image_kind().raw(),
        offload_kind: entry.offload_kind().raw(),
        flags: entry.flags(),
        image: clangoffload_bytes::of(entry.image()),
        image_offset: entry.image_offset(),
        string_count: entry.string_count(),
        triple: clangoffload_bytes::of(entry.triple().unwrap_or_default()),
        arch: clangoffload_bytes::of(entry.arch().unwrap_or_default()),
    }
}

/// # Safety
/// `binaries` is NULL or a live handle.
unsafe fn entry_arg<'a>(
    binaries: *const clangoffload_offload_binaries,
    index: usize,
) -> Result<&'a Located, clangoffload_status> {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { handle_arg(binaries) }?
        .entries
        .get(index)
        .ok_or(clangoffload_status::IndexOutOfRange)
}

/// Stores string `string` (table order) of entry `entry` in `*out`.
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` when either index is past the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `out->key` and `out->value` borrow `data`, or, for an entry of a
/// compressed binary, the handle (`compressed` is 1): they stay valid until the
/// handle is freed, while `data` stays alive and unchanged.
///
/// NULL: `binaries` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT` (an
/// index out of range is reported first).
///
/// # Safety
/// `binaries` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_get_string(
    binaries: *const clangoffload_offload_binaries,
    entry: usize,
    string: u64,
    out: *mut clangoffload_string_pair,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let located = unsafe { entry_arg(binaries, entry) }?;
        let pair = located
            .entry
            .string_at(string)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(out) }? = clangoffload_string_pair {
            key: clangoffload_bytes::of(pair.key),
            value: clangoffload_bytes::of(pair.value),
        };
        Ok(())
    })
}

/// Stores in `*value` the value of the first string of entry `entry` whose key
/// is the `key_len` bytes at `key`; `CLANGOFFLOAD_STATUS_NOT_FOUND` if none,
/// `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past the last entry.
///
/// Ownership: nothing to free; `*value` is a plain view the caller owns.
///
/// Lifetime: `*value` borrows `data`, or, for an entry of a compressed binary,
/// the handle (`compressed` is 1): they stay valid until the handle is freed,
/// while `data` stays alive and unchanged. It does not borrow `key`.
///
/// NULL: `binaries` or `value` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`
/// (`NOT_FOUND` is reported first); `key` may be NULL only when `key_len` is 0.
///
/// # Safety
/// `binaries` is NULL or a live handle; `key` is NULL or readable for `key_len`
/// bytes; `value` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_find_string(
    binaries: *const clangoffload_offload_binaries,
    entry: usize,
    key: *const u8,
    key_len: usize,
    value: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or a live handle, as the caller promises.
        let located = unsafe { entry_arg(binaries, entry) }?;
        // SAFETY: readable for key_len bytes, as the caller promises.
        let key = unsafe { slice_arg(key, key_len) }?;
        let found = located
            .entry
            .string(key)
            .ok_or(clangoffload_status::NotFound)?;
        // SAFETY: writable, as the caller promises.
        *unsafe { out_arg(value) }? = clangoffload_bytes::of(found);
        Ok(())
    })
}

/// For a leniently parsed buffer: the status of the damaged binary that ended
/// the walk, with details in `*err`; `CLANGOFFLOAD_STATUS_OK` if none.
///
/// Ownership: nothing to free; `*err` is a plain record the caller owns.
///
/// NULL: `binaries` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may
/// be NULL (no details).
///
/// # Safety
/// `binaries` is NULL or a live handle; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binaries_fault(
    binaries: *const clangoffload_offload_binaries,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe { crate::handle::fault(binaries, |h| h.fault.as_ref(), err) }
}

/// An image to write, with its metadata; every view is borrowed for the
/// duration of the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_image_input {
    /// Image kind to store.
    pub image_kind: u16,
    /// Offload kind to store.
    pub offload_kind: u16,
    /// Entry flags to store.
    pub flags: u32,
    /// Key-value strings, written in this order (keys without NUL; in
    /// version 1, values without NUL too).
    pub strings: *const clangoffload_string_pair,
    /// Number of strings.
    pub string_count: usize,
    /// The image bytes.
    pub image: clangoffload_bytes,
}

/// Writes `count` images as OffloadBinaries into `*out`. Version 1: one binary
/// per image, back to back, byte-identical to llvm-offload-binary 22 given the
/// strings in the order `clangoffload_image_arguments_parse` gives. Versions 2
/// and 3: one binary holding every image, as upstream LLVM writes it; version 3
/// may be compressed (`CLANGOFFLOAD_COMPRESSION_ZLIB`/`_ZSTD`) at `level`
/// (`CLANGOFFLOAD_DEFAULT_LEVEL`: zlib 6, zstd 5). An unknown `compression`, or
/// compression with another version, gives
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: on success `*out` is a new buffer owned by the caller, released
/// with `clangoffload_buffer_free`; it borrows none of the inputs, which are
/// only read during the call. On failure `*out` is untouched and `*err` (if not
/// NULL) says what and where.
///
/// Lifetime: `out->ptr` stays valid until `clangoffload_buffer_free`.
///
/// NULL: `images` may be NULL only when `count` is 0, an image's `strings` only
/// when its `string_count` is 0, and a view's `ptr` only when its `len` is 0;
/// `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `err` may be NULL (no
/// details).
///
/// # Safety
/// `images` is NULL or readable for `count` records whose arrays and views are
/// readable; `out` is NULL or writable; `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_binary_write(
    images: *const clangoffload_image_input,
    count: usize,
    version: u32,
    compression: u32,
    level: i32,
    out: *mut clangoffload_buffer,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: valid for `count` records, as the caller promises.
        let inputs = unsafe { array_arg(images, count) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let method = match compression {
            CLANGOFFLOAD_COMPRESSION_NONE => None,
            CLANGOFFLOAD_COMPRESSION_ZLIB => Some(CompressionMethod::Zlib),
            CLANGOFFLOAD_COMPRESSION_ZSTD => Some(CompressionMethod::Zstd),
            _ => return Err(clangoffload_status::InvalidArgument),
        };
        if method.is_some() && version != 3 {
            return Err(clangoffload_status::InvalidArgument);
        }
        let level = (level != CLANGOFFLOAD_DEFAULT_LEVEL).then_some(level);
        let mut strings: Vec<Vec<(&[u8], &[u8])>> = Vec::new();
        for input in inputs {
            // SAFETY: valid for string_count pairs, as the caller promises.
            let pairs = unsafe { array_arg(input.strings, input.string_count) }?;
            let mut list = Vec::new();
            list.try_reserve_exact(pairs.len())
                .map_err(|_| clangoffload_status::OutOfMemory)?;
            for pair in pairs {
                // SAFETY: `pair.key` is a view readable for the call, as the caller promises.
                let key = unsafe { pair.key.as_slice() }?;
                // SAFETY: `pair.value` is a view readable for the call, as the caller promises.
                let value = unsafe { pair.value.as_slice() }?;
                list.push((key, value));
            }
            strings.push(list);
        }
        let mut new = Vec::new();
        for (input, list) in inputs.iter().zip(&strings) {
            new.push(NewImage {
                image_kind: ImageKind::from_raw(input.image_kind),
                offload_kind: OffloadKind::from_raw(input.offload_kind),
                flags: input.flags,
                strings: list,
                // SAFETY: a valid view, as the caller promises.
                image: unsafe { input.image.as_slice() }?,
            });
        }
        let options = WriteOptions {
            version,
            compression: method.map(|m| (m, level)),
        };
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let bytes = write_offload_binary(&new, &options).map_err(|e| unsafe { report(&e, err) })?;
        *out = clangoffload_buffer::from_vec(bytes);
        Ok(())
    })
}

/// The key-value pairs of one `--image=` argument, in the order LLVM 22's
/// packager stores them (a repeated key's values joined with `,`).
pub struct clangoffload_image_arguments {
    pairs: Vec<ImageArgument<'static>>,
}

/// Splits the `len` bytes at `argument` (`key=value,key=value,...`) as
/// clang-offload-packager 22 does and stores a handle in `*out`. `file` and
/// `kind` are among the pairs; the caller decides what they mean.
///
/// Ownership: on success `*out` is a new handle owned by the caller, released
/// with `clangoffload_image_arguments_free` (exactly once); it owns the joined
/// values of repeated keys. On failure `*out` is untouched.
///
/// Lifetime: the handle borrows `argument`, which must stay alive and unchanged
/// until the handle is freed.
///
/// NULL: `argument` may be NULL only when `len` is 0 (no pairs); `out` NULL
/// gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `argument` is NULL or readable for `len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_image_arguments_parse(
    argument: *const u8,
    len: usize,
    out: *mut *mut clangoffload_image_arguments,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for len bytes that outlive the handle, as the
        // caller promises.
        let argument: &'static [u8] = unsafe { slice_arg(argument, len) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = into_handle(clangoffload_image_arguments {
            pairs: image_arguments(argument),
        });
        Ok(())
    })
}

/// Number of pairs.
///
/// Ownership: nothing to free; returns a plain number.
///
/// NULL: a NULL `arguments` gives 0.
///
/// # Safety
/// `arguments` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_image_arguments_count(
    arguments: *const clangoffload_image_arguments,
) -> usize {
    // SAFETY: NULL or a live handle, as the caller promises.
    unsafe { crate::handle::count(arguments, |h| &h.pairs) }
}

/// Stores pair `index` in `*out`. `CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE` past
/// the last.
///
/// Ownership: nothing to free; `*out` is a plain record of views the caller
/// owns.
///
/// Lifetime: `out->key` borrows the argument; `out->value` borrows the argument
/// or (a repeated key's joined values) the handle: both valid until the handle
/// is freed, while the argument stays alive and unchanged.
///
/// NULL: `arguments` or `out` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`
/// (an index out of range is reported first).
///
/// # Safety
/// `arguments` is NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_image_arguments_get(
    arguments: *const clangoffload_image_arguments,
    index: usize,
    out: *mut clangoffload_string_pair,
) -> clangoffload_status {
    // SAFETY: as the caller promises.
    unsafe {
        crate::handle::get(
            arguments,
            |h| &h.pairs,
            index,
            out,
            |_, pair| clangoffload_string_pair {
                key: clangoffload_bytes::of(pair.key),
                value: clangoffload_bytes::of(&pair.value),
            },
        )
    }
}

/// Releases a handle from `clangoffload_image_arguments_parse`, with everything
/// it owns; views taken from it become invalid.
///
/// Ownership: the handle is released; the buffer it borrowed stays the
/// caller's.
///
/// NULL: a NULL `arguments` does nothing.
///
/// Thread safety: must not run concurrently with any other use of the same
/// handle; the handle must not be used afterwards.
///
/// # Safety
/// `arguments` is NULL or a live handle from
/// `clangoffload_image_arguments_parse` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_image_arguments_free(
    arguments: *mut clangoffload_image_arguments,
) {
    // SAFETY: NULL or a handle from parse released once, as the caller promises.
    unsafe { free_handle(arguments) }
}

/// The image kind LLVM 22 gives a file extension (`o`, `bc`, `cubin`, `fatbin`,
/// `s`; anything else is 0). Returns the kind itself, not a status.
///
/// Ownership: nothing to free; returns a plain value. Pure.
///
/// NULL: `extension` may be NULL only when `len` is 0; NULL with a non-zero
/// `len` gives 0.
///
/// # Safety
/// `extension` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_image_kind_from_extension(
    extension: *const u8,
    len: usize,
) -> u16 {
    // SAFETY: readable for len bytes, as the caller promises.
    unsafe { slice_arg(extension, len) }.map_or(0, |e| ImageKind::from_extension(e).raw())
}

/// The offload kind a `kind=` value names (`openmp`, `cuda`, `hip`, `sycl`;
/// anything else is 0). Returns the kind itself, not a status.
///
/// Ownership: nothing to free; returns a plain value. Pure.
///
/// NULL: `name` may be NULL only when `len` is 0; NULL with a non-zero `len`
/// gives 0.
///
/// # Safety
/// `name` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_offload_kind_from_name(name: *const u8, len: usize) -> u16 {
    // SAFETY: readable for len bytes, as the caller promises.
    unsafe { slice_arg(name, len) }.map_or(0, |n| OffloadKind::from_name(n).raw())
}

/// Names of an image kind: the extension LLVM 22 gives extracted images
/// (`style` 0: "o", "bc", ..., "" for unnamed kinds) or what `llvm-objdump
/// --offloading` prints (`style` 1, and any other non-zero value: "elf", "llvm
/// ir", ..., `"<none>"`).
///
/// Ownership: returns static storage; never free it.
///
/// Lifetime: the string lives as long as the library is loaded.
///
/// NULL: never returns NULL. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_image_kind_name(kind: u16, style: u32) -> *const c_char {
    let kind = ImageKind::from_raw(kind);
    let name = if style == 0 {
        kind.extension()
    } else {
        kind.objdump_name()
    };
    static_name(name)
}

/// The name of an offload kind as `llvm-objdump --offloading` prints it
/// ("openmp", "cuda", "hip", "sycl", "none").
///
/// Ownership: returns static storage; never free it.
///
/// Lifetime: the NUL-terminated string lives as long as the library is loaded.
///
/// NULL: never returns NULL. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_offload_kind_name(kind: u16) -> *const c_char {
    static_name(OffloadKind::from_raw(kind).name())
}

/// The NUL-terminated copy of one of the kind names above.
fn static_name(name: &str) -> *const c_char {
    const NAMES: &[&str] = &[
        "o\0",
        "bc\0",
        "cubin\0",
        "fatbin\0",
        "s\0",
        "\0",
        "elf\0",
        "llvm ir\0",
        "fatbinary\0",
        "ptx\0",
        "<none>\0",
        "openmp\0",
        "cuda\0",
        "hip\0",
        "sycl\0",
        "none\0",
    ];
    NAMES
        .iter()
        .find(|n| n.strip_suffix('\0') == Some(name))
        .unwrap_or(&"\0")
        .as_ptr()
        .cast()
}
