//! CUDA fat binaries through the library's C ABI: the fat binaries of a
//! file, their entries with every header field, what `cuobjdump` extracts
//! and the names it gives.

use std::marker::PhantomData;

use super::{blank_error, check, record, slice, view, Buffer};
use crate::ffi::c;

pub use c::{clangoffload_cuda_entry as Entry, clangoffload_cuda_fatbin as Fatbin};

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
