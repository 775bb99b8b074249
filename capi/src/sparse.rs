//! A large ELF file read for coverage range by range (core's
//! `coverage::SparseElf`): the library says which bytes it needs, the caller
//! reads them (`pread`) and gives them, and `clangoffload_cover` then reads
//! the image, which holds only those bytes in memory. A 551 MB CUDA library
//! is covered so in a few MiB, where a mapped file keeps every page its
//! headers touch.

use alloc::vec::Vec;

use clangoffload::coverage::SparseElf;

use crate::ffi::{clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg, slice_arg};
use crate::status::clangoffload_status;

/// Files larger than this are worth reading with `clangoffload_sparse_elf_*`
/// rather than mapping (core's `coverage::SPARSE_ABOVE`, the size above
/// which a wheel's members are read so too).
pub const CLANGOFFLOAD_COVERAGE_SPARSE_ABOVE: u64 = 16 << 20;

/// A file being read for coverage: its image, once every range asked for
/// is given.
pub struct clangoffload_sparse_elf {
    reading: Option<SparseElf>,
    image: Option<Vec<u8>>,
}

/// Starts reading a file of `size` bytes; `*out` gets the handle. The
/// image (`size` bytes of zero pages: only what is given takes memory) is
/// taken once the section table is given; without the memory for it,
/// `clangoffload_sparse_elf_image` says `CLANGOFFLOAD_STATUS_NOT_ELF`.
///
/// Ownership: on success `*out` is a new handle owned by the caller,
/// released with `clangoffload_sparse_elf_free`.
///
/// Lifetime: the handle borrows nothing.
///
/// NULL: `out` must not be NULL.
///
/// # Safety
/// `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_sparse_elf_new(
    size: u64,
    out: *mut *mut clangoffload_sparse_elf,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = into_handle(clangoffload_sparse_elf {
            reading: Some(SparseElf::new(size)),
            image: None,
        });
        Ok(())
    })
}

/// The next bytes to read: `*offset` and `*len` (give them from `*offset`
/// on, in pieces of any size); `CLANGOFFLOAD_STATUS_END` once the reading
/// is done.
///
/// Ownership: nothing to free; writes two numbers.
///
/// Lifetime: nothing is handed out.
///
/// NULL: no argument may be NULL.
///
/// # Safety
/// `sparse` a live handle; `offset` and `len` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_sparse_elf_missing(
    sparse: *const clangoffload_sparse_elf,
    offset: *mut u64,
    len: *mut u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let sparse = unsafe { handle_arg(sparse) }?;
        // SAFETY: writable, as the caller promises.
        let offset = unsafe { out_arg(offset) }?;
        // SAFETY: writable, as the caller promises.
        let len = unsafe { out_arg(len) }?;
        let range = sparse.reading.as_ref().and_then(SparseElf::missing);
        let range = range.ok_or(clangoffload_status::End)?;
        *offset = range.start;
        *len = range.end.saturating_sub(range.start);
        Ok(())
    })
}

/// Gives the `len` bytes at `data`, the file's bytes from `offset`.
///
/// Ownership: the bytes are copied where the image keeps them.
///
/// Lifetime: `data` is read during the call only.
///
/// NULL: `sparse` must not be NULL; `data` may be NULL only when `len` is 0.
///
/// # Safety
/// `sparse` a live handle; `data` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_sparse_elf_give(
    sparse: *mut clangoffload_sparse_elf,
    offset: u64,
    data: *const u8,
    len: usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live and not shared during the call, as the caller promises.
        let sparse = unsafe { out_arg(sparse) }?;
        // SAFETY: readable, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        if let Some(reading) = &mut sparse.reading {
            reading.give(offset, data);
        }
        Ok(())
    })
}

/// The image, to cover with `clangoffload_cover` as the file itself: its
/// size is the file's, and it holds every byte coverage reads.
/// `CLANGOFFLOAD_STATUS_NOT_ELF` if the file is no ELF64 little-endian file
/// whose section table lies inside it, or there is no memory for its image
/// (cover the file itself);
/// `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT` while bytes are still missing.
///
/// Ownership: the view is owned by the handle; do not free it.
///
/// Lifetime: the view lives until the handle is freed.
///
/// NULL: no argument may be NULL.
///
/// # Safety
/// `sparse` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_sparse_elf_image(
    sparse: *mut clangoffload_sparse_elf,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live and not shared during the call, as the caller promises.
        let sparse = unsafe { out_arg(sparse) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if sparse
            .reading
            .as_ref()
            .is_some_and(|r| r.missing().is_some())
        {
            return Err(clangoffload_status::InvalidArgument);
        }
        if let Some(reading) = sparse.reading.take() {
            sparse.image = reading.image();
        }
        let image = sparse.image.as_deref().ok_or(clangoffload_status::NotElf)?;
        *out = clangoffload_bytes::of(image);
        Ok(())
    })
}

/// Releases a handle from `clangoffload_sparse_elf_new`.
///
/// Ownership: the handle, and its image, are released.
///
/// NULL: a NULL `sparse` does nothing.
///
/// # Safety
/// `sparse` is NULL or a live handle not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_sparse_elf_free(sparse: *mut clangoffload_sparse_elf) {
    // SAFETY: NULL or a handle from `clangoffload_sparse_elf_new` released once.
    unsafe { free_handle(sparse) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_threshold_is_cores() {
        assert_eq!(
            super::CLANGOFFLOAD_COVERAGE_SPARSE_ABOVE,
            clangoffload::coverage::SPARSE_ABOVE
        );
    }
}
