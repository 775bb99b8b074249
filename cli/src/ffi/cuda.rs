//! CUDA fat binaries through the library's C ABI: the fat binaries of a
//! file, their entries with every header field, what `cuobjdump` extracts
//! and the names it gives; writing them as `fatbinary` does, pruning them
//! as `nvprune` does.

use std::marker::PhantomData;

use super::{blank_error, bytes_out, check, record, slice, view, Buffer};
use crate::ffi::c;

pub use c::{
    clangoffload_cuda_entry as Entry, clangoffload_cuda_fatbin as Fatbin,
    clangoffload_cuda_new_entry as NewEntry, clangoffload_cuda_target as Target,
};

/// An SM as `fatbinary` and `nvprune` write it (`90a`, `sm_100f`,
/// `compute_80`): its number and variant (0 plain, 1 `f`, 2 `a`).
pub fn parse_sm(text: &str) -> Option<(u32, u32)> {
    let (mut arch, mut variant) = (0, 0);
    // SAFETY: `text` is live for the call; the outputs are writable.
    let status = unsafe {
        c::clangoffload_cuda_sm_parse(text.as_ptr().cast(), text.len(), &mut arch, &mut variant)
    };
    (status == super::Status::Ok).then_some((arch, variant))
}

/// A fat binary of `entries` as `fatbinary` writes it (`mode` a
/// `CLANGOFFLOAD_CUDA_COMPRESS_*`, `flags` `CLANGOFFLOAD_CUDA_WRITE_*`).
/// The entries' views must be live for the call.
pub fn write(entries: &[NewEntry], mode: u32, flags: u32) -> Result<Vec<u8>, String> {
    bytes_out(|buf, cap, len, err| {
        // SAFETY: `entries` and their views are live for the call; `buf` is
        // NULL or writable for `cap` bytes; `len` and `err` are writable.
        unsafe {
            c::clangoffload_cuda_fatbin_write(
                entries.as_ptr(),
                entries.len(),
                mode,
                flags,
                buf,
                cap,
                len,
                err,
            )
        }
    })
}

/// The fat binaries back to back in `data`, with only the code `keep`
/// names.
pub fn prune(data: &[u8], keep: &[Target], max_size: u64) -> Result<Vec<u8>, String> {
    bytes_out(|buf, cap, len, err| {
        // SAFETY: live slices; `buf` is NULL or writable for `cap` bytes and
        // does not overlap `data`; `len` and `err` are writable.
        unsafe {
            c::clangoffload_cuda_fatbin_prune(
                data.as_ptr(),
                data.len(),
                keep.as_ptr(),
                keep.len(),
                max_size,
                buf,
                cap,
                len,
                err,
            )
        }
    })
}

/// Prunes the fat binaries of `file` (raw, or a host's sections) in place;
/// how many changed.
pub fn prune_in_place(file: &mut [u8], keep: &[Target], max_size: u64) -> Result<usize, String> {
    let (mut changed, mut err) = (0, blank_error());
    // SAFETY: `file` is a live, exclusively borrowed slice; `keep` live;
    // the out-pointers are writable.
    let status = unsafe {
        c::clangoffload_cuda_fatbin_prune_in_place(
            file.as_mut_ptr(),
            file.len(),
            keep.as_ptr(),
            keep.len(),
            max_size,
            &mut changed,
            &mut err,
        )
    };
    check(status, &err).map(|()| changed)
}

/// The fat binaries of one input, which the handle borrows.
pub struct CudaFatbins<'data> {
    handle: *mut c::clangoffload_cuda_fatbins,
    data: PhantomData<&'data [u8]>,
}

impl<'data> CudaFatbins<'data> {
    /// Reads every fat binary in `data` (leniently: a damaged one is kept as
    /// the fault, see [`CudaFatbins::fault`]); `base` names extracted files.
    pub fn parse(data: &'data [u8], base: &str) -> Result<Self, String> {
        let mut handle = std::ptr::null_mut();
        let mut err = blank_error();
        // SAFETY: `data` and `base` are live slices; `data` outlives the
        // handle (the lifetime says so); the out-pointers are writable.
        let status = unsafe {
            c::clangoffload_cuda_fatbins_parse(
                data.as_ptr(),
                data.len(),
                view(base.as_bytes()),
                c::CLANGOFFLOAD_PARSE_LENIENT,
                &mut handle,
                &mut err,
            )
        };
        check(status, &err)?;
        Ok(CudaFatbins {
            handle,
            data: PhantomData,
        })
    }

    /// The fat binaries, in file order.
    pub fn fatbins(&self) -> Vec<Fatbin> {
        // SAFETY: a live handle.
        let count = unsafe { c::clangoffload_cuda_fatbins_count(self.handle) };
        (0..count)
            // SAFETY: a live handle and a writable record.
            .filter_map(|i| {
                record(|out| unsafe { c::clangoffload_cuda_fatbins_get(self.handle, i, out) })
            })
            .collect()
    }

    /// The archive member fat binary `index` is in (empty outside archives).
    pub fn member(&self, index: usize) -> &'data [u8] {
        record(|out| {
            // SAFETY: a live handle and a writable record.
            unsafe { c::clangoffload_cuda_fatbins_member(self.handle, index, out) }
        })
        // SAFETY: a view of the parsed buffer, which outlives `'data`.
        .map(|member| unsafe { slice(member) })
        .unwrap_or_default()
    }

    /// The entries (concat members one by one), in file order.
    pub fn entries(&self) -> Vec<Entry> {
        // SAFETY: a live handle.
        let count = unsafe { c::clangoffload_cuda_fatbins_entry_count(self.handle) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: a live handle and a writable record.
                record(|out| unsafe { c::clangoffload_cuda_fatbins_get_entry(self.handle, i, out) })
            })
            .collect()
    }

    /// Why a fat binary could not be read, if one could not.
    pub fn fault(&self) -> Option<String> {
        let mut err = blank_error();
        // SAFETY: a live handle and a writable record.
        let status = unsafe { c::clangoffload_cuda_fatbins_fault(self.handle, &mut err) };
        check(status, &err).err()
    }

    /// Entry `index`'s image as cuobjdump extracts it.
    pub fn image(&self, index: usize, max_size: u64) -> Result<Buffer, String> {
        let mut out = Buffer::empty();
        let mut err = blank_error();
        // SAFETY: a live handle; writable records.
        let status = unsafe {
            c::clangoffload_cuda_entry_image(self.handle, index, max_size, &mut out.0, &mut err)
        };
        check(status, &err)?;
        Ok(out)
    }
}

// SAFETY: the library's handles are read-only after creation and may be
// used from several threads at once (docs/c-api.md); only `Drop` frees it,
// which needs ownership.
unsafe impl Sync for CudaFatbins<'_> {}

impl Drop for CudaFatbins<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from parse and is released once.
        unsafe { c::clangoffload_cuda_fatbins_free(self.handle) }
    }
}

/// The bytes of a view the entry or fat binary records hold.
///
/// # Safety
/// The view must come from a live [`CudaFatbins`].
pub unsafe fn bytes<'a>(v: c::clangoffload_bytes) -> &'a [u8] {
    // SAFETY: forwarded to the caller.
    unsafe { slice(v) }
}
