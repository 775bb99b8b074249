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

/// An SM as `fatbinary` writes it (`90a`, `sm_100f`, `compute_80`): its
/// number and variant (0 plain, 1 `f`, 2 `a`).
pub fn parse_sm(text: &str) -> Option<(u32, u32)> {
    let (mut arch, mut variant) = (0, 0);
    // SAFETY: `text` is live for the call; the outputs are writable.
    let status = unsafe {
        c::clangoffload_cuda_sm_parse(text.as_ptr().cast(), text.len(), &mut arch, &mut variant)
    };
    (status == super::Status::Ok).then_some((arch, variant))
}

/// A code name as `nvprune` and `nvcc` write it (`sm_90a` a cubin,
/// `compute_80` PTX, `lto_90` LTO IR): its entry kind, number and variant.
pub fn parse_code(text: &str) -> Option<Target> {
    let (mut kind, mut arch, mut variant) = (0, 0, 0);
    // SAFETY: `text` is live for the call; the outputs are writable.
    let status = unsafe {
        c::clangoffload_cuda_code_parse(
            text.as_ptr().cast(),
            text.len(),
            &mut kind,
            &mut arch,
            &mut variant,
        )
    };
    (status == super::Status::Ok).then_some(Target {
        kind,
        arch,
        variant,
    })
}

/// The name of code of `kind` for SM `arch` with `variant`, as NVIDIA's
/// tools write it (`sm_90a`, `compute_80`).
pub fn code_name(kind: u16, arch: u32, variant: u32) -> String {
    let name = bytes_out(|buf, cap, len, _| {
        // SAFETY: `buf` is NULL or writable for `cap` bytes; `len` writable.
        unsafe { c::clangoffload_cuda_code_name(kind, arch, variant, buf, cap, len) }
    });
    String::from_utf8_lossy(&name.unwrap_or_default()).into_owned()
}

/// A fat binary of a file, with the bytes its record views.
pub struct CudaFatbin<'a> {
    /// The record: place, offset, version, sizes.
    pub record: Fatbin,
    /// The section it is in (empty if none).
    pub section: &'a [u8],
    /// Its bytes.
    pub data: &'a [u8],
}

/// An entry of a fat binary (or a member of a concat entry), with the bytes
/// its record views and the library's names for it.
pub struct CudaEntry<'a> {
    /// The record: every header field.
    pub record: Entry,
    /// The file cuobjdump extracts it to (empty if it extracts none).
    pub name: &'a [u8],
    /// Its stored payload.
    pub payload: &'a [u8],
    pub identifier: &'a [u8],
    pub options: &'a [u8],
    /// `ptx`, `elf`, `ltoir`, `concat`, `unknown`.
    pub kind_name: &'static str,
    /// `none`, `lz4`, `zstd`, `lz4+zstd`.
    pub compression: &'static str,
    /// Its SM as cuobjdump shows it (`sm_90a`).
    pub sm: String,
}

impl CudaEntry<'_> {
    /// Whether it is a `--concat` entry (its members follow it).
    pub fn is_concat(&self) -> bool {
        self.record.kind == c::CLANGOFFLOAD_CUDA_KIND_CONCAT
    }
}

/// The library's names of an entry kind and of its flags' compression.
fn entry_names(kind: u16, flags: u64) -> (&'static str, &'static str) {
    let names = record(|out| {
        // SAFETY: `out` is writable.
        unsafe { c::clangoffload_cuda_entry_names(kind, flags, out) }
    });
    let text = |v: c::clangoffload_bytes| {
        // SAFETY: a view of the library's static storage.
        std::str::from_utf8(unsafe { slice(v) }).unwrap_or_default()
    };
    names.map_or(("unknown", "none"), |n| (text(n.kind), text(n.compression)))
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
    /// the fault, see [`CudaFatbins::fault`]), the file at `path`, whose name
    /// names extracted files as cuobjdump names them.
    pub fn parse(data: &'data [u8], path: &str) -> Result<Self, String> {
        let base = bytes_out(|buf, cap, len, _| {
            // SAFETY: `path` is live for the call; `buf` is NULL or writable
            // for `cap` bytes; `len` writable.
            unsafe {
                c::clangoffload_cuda_base_name(path.as_ptr().cast(), path.len(), buf, cap, len)
            }
        })?;
        let base = String::from_utf8_lossy(&base);
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
    pub fn fatbins(&self) -> Vec<CudaFatbin<'data>> {
        // SAFETY: a live handle.
        let count = unsafe { c::clangoffload_cuda_fatbins_count(self.handle) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: `self.handle` is live while `self` is; `out` is a
                // writable record `record` owns; `i` is below the count.
                record(|out| unsafe { c::clangoffload_cuda_fatbins_get(self.handle, i, out) })
            })
            .map(|record| CudaFatbin {
                // SAFETY: views of the parsed buffer, which outlives 'data.
                section: unsafe { slice(record.section) },
                // SAFETY: as above.
                data: unsafe { slice(record.data) },
                record,
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
    pub fn entries(&self) -> Vec<CudaEntry<'_>> {
        // SAFETY: a live handle.
        let count = unsafe { c::clangoffload_cuda_fatbins_entry_count(self.handle) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: a live handle and a writable record.
                record(|out| unsafe { c::clangoffload_cuda_fatbins_get_entry(self.handle, i, out) })
            })
            .map(|e| {
                let (kind_name, compression) = entry_names(e.kind, e.flags);
                CudaEntry {
                    // SAFETY: views of the handle or the parsed buffer, both
                    // live while `self` is borrowed.
                    name: unsafe { slice(e.name) },
                    // SAFETY: as above.
                    payload: unsafe { slice(e.payload) },
                    // SAFETY: as above.
                    identifier: unsafe { slice(e.identifier) },
                    // SAFETY: as above.
                    options: unsafe { slice(e.options) },
                    kind_name,
                    compression,
                    sm: code_name(c::CLANGOFFLOAD_CUDA_KIND_ELF, e.arch, e.variant),
                    record: e,
                }
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
