//! kpack's split through the library (`clangoffload_kpack_split_*`,
//! `clangoffload_kpack_writer_*`): a host's rewrite, its code objects, and
//! archives written one code object at a time, as safe Rust values.

use super::{blank_error, bytes_out, c, check as check_status, slice, view, Bytes, Handle};

/// How code objects are keyed (the library's rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// By record where rocm-kpack's counter agrees; refused where not.
    Strict,
    /// By record, as the runtime looks up.
    Record,
    /// rocm-kpack's per-architecture counter.
    PerArch,
}

/// A host's split, made by the library; borrows the host's bytes.
pub struct Split<'data> {
    handle: Handle<'data, c::clangoffload_kpack_split>,
}

/// One code object of a split.
pub struct CodeObject {
    pub record: u64,
    pub id: Vec<u8>,
    pub arch: Vec<u8>,
    pub key: Vec<u8>,
    /// Where its bundle lies in the host (to let its pages go).
    pub unit_offset: u64,
    pub unit_size: u64,
}

impl<'data> Split<'data> {
    /// The split of the host in `data`, or the library's located error.
    pub fn new(
        data: &'data [u8],
        kernel_name: &[u8],
        search_paths: &[Vec<u8>],
        keys: Keys,
    ) -> Result<Self, String> {
        let paths: Vec<Bytes> = search_paths.iter().map(|p| view(p)).collect();
        let options = c::clangoffload_kpack_split_options {
            kernel_name: view(kernel_name),
            search_paths: paths.as_ptr(),
            search_path_count: paths.len(),
            keys: match keys {
                Keys::Strict => c::CLANGOFFLOAD_KPACK_KEYS_STRICT,
                Keys::Record => c::CLANGOFFLOAD_KPACK_KEYS_RECORD,
                Keys::PerArch => c::CLANGOFFLOAD_KPACK_KEYS_PER_ARCH,
            },
            max_size: c::CLANGOFFLOAD_DEFAULT_LIMIT,
        };
        let handle = Handle::make(c::clangoffload_kpack_split_free, |out| {
            let mut err = blank_error();
            // SAFETY: data outlives the handle (`'data`); options and what
            // it views live for the call; out and err are writable.
            let status = unsafe {
                c::clangoffload_kpack_split_host(data.as_ptr(), data.len(), &options, out, &mut err)
            };
            check_status(status, &err)
        })?;
        Ok(Split { handle })
    }

    /// The rewritten host.
    pub fn host(&self) -> &[u8] {
        let mut out = view(&[]);
        // SAFETY: the handle is live; out is writable.
        let status = unsafe { c::clangoffload_kpack_split_get_host(self.handle.ptr(), &mut out) };
        if status != c::clangoffload_status::Ok {
            return &[];
        }
        self.handle.bytes(out)
    }

    /// Every code object, in the order rocm-kpack stores them.
    pub fn code_objects(&self) -> Vec<CodeObject> {
        self.handle
            .list(
                c::clangoffload_kpack_split_code_object_count,
                c::clangoffload_kpack_split_get_code_object,
            )
            .into_iter()
            .map(|o| CodeObject {
                record: o.record,
                id: self.handle.bytes(o.id).to_vec(),
                arch: self.handle.bytes(o.arch).to_vec(),
                key: self.handle.bytes(o.key).to_vec(),
                unit_offset: o.unit_offset,
                unit_size: o.unit_size,
            })
            .collect()
    }

    /// Code object `index`'s bytes (a compressed bundle decoded, one at a
    /// time), until the next call.
    pub fn code(&mut self, index: usize) -> Result<&[u8], String> {
        let (mut out, mut err) = (view(&[]), blank_error());
        // SAFETY: the handle is live and used by this call only; out and err
        // are writable.
        let status = unsafe {
            c::clangoffload_kpack_split_code(self.handle.ptr_mut(), index, &mut out, &mut err)
        };
        check_status(status, &err)?;
        // SAFETY: the view names the input or the handle, live until the
        // next call on it (`&mut self`).
        Ok(unsafe { slice(out) })
    }
}

/// rocm-kpack's search path for a binary `depth` directories below its
/// prefix.
pub fn search_path(group: &[u8], depth: usize) -> Result<Vec<u8>, String> {
    bytes_out(|buf, cap, len, _| {
        // SAFETY: group lives for the call; buf is writable for cap bytes;
        // len is writable.
        unsafe { c::clangoffload_kpack_search_path(view(group), depth, buf, cap, len) }
    })
}

/// An archive being written by the library, one code object at a time.
pub struct Writer {
    handle: Handle<'static, c::clangoffload_kpack_writer>,
    /// How many zero bytes start the file, replaced by `finish`'s prefix.
    pub prefix_len: u64,
}

impl Writer {
    /// An archive of `group` for the one architecture `arch`, as
    /// rocm-kpack's splitter writes them.
    pub fn new(group: &[u8], arch: &[u8], zstd: bool) -> Result<Writer, String> {
        let arches = [view(arch)];
        let options = c::clangoffload_kpack_archive_options {
            group_name: view(group),
            arch_family: view(arch),
            arches: arches.as_ptr(),
            arch_count: arches.len(),
            scheme: if zstd {
                c::CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL
            } else {
                c::CLANGOFFLOAD_KPACK_STORED
            },
            level: 3,
        };
        let mut prefix_len = 0;
        let handle = Handle::make(c::clangoffload_kpack_writer_free, |out| {
            // SAFETY: options and what it views live for the call; out and
            // prefix_len are writable.
            let status =
                unsafe { c::clangoffload_kpack_writer_new(&options, out, &mut prefix_len) };
            check_status(status, &blank_error())
        })?;
        Ok(Writer { handle, prefix_len })
    }

    /// Stores a code object: the bytes to append to the file.
    pub fn add(
        &mut self,
        key: &[u8],
        arch: &[u8],
        code: &[u8],
        metadata: &[(&[u8], &[u8])],
    ) -> Result<&[u8], String> {
        let pairs: Vec<c::clangoffload_kpack_metadata_pair> = metadata
            .iter()
            .map(|(name, value)| c::clangoffload_kpack_metadata_pair {
                name: view(name),
                value: view(value),
            })
            .collect();
        let entry = c::clangoffload_kpack_new_entry {
            key: view(key),
            arch: view(arch),
            code: view(code),
            metadata: pairs.as_ptr(),
            metadata_count: pairs.len(),
        };
        let (mut out, mut err) = (view(&[]), blank_error());
        // SAFETY: the handle is live and used by this call only; entry and
        // what it views live for the call; out and err are writable.
        let status = unsafe {
            c::clangoffload_kpack_writer_add(self.handle.ptr_mut(), &entry, &mut out, &mut err)
        };
        check_status(status, &err)?;
        // SAFETY: the view names the handle's bytes, live until its next
        // call (`&mut self`).
        Ok(unsafe { slice(out) })
    }

    /// The prefix (to write at offset 0) and the table of contents (to
    /// append).
    pub fn finish(&mut self) -> Result<(Vec<u8>, Vec<u8>), String> {
        let (mut prefix, mut toc, mut err) = (view(&[]), view(&[]), blank_error());
        // SAFETY: the handle is live and used by this call only; the
        // outputs are writable.
        let status = unsafe {
            c::clangoffload_kpack_writer_finish(
                self.handle.ptr_mut(),
                &mut prefix,
                &mut toc,
                &mut err,
            )
        };
        check_status(status, &err)?;
        // SAFETY: `prefix` names the handle's bytes, live until its next
        // call; copied at once.
        let prefix = unsafe { slice(prefix) }.to_vec();
        // SAFETY: `toc` names the handle's bytes, live until its next call;
        // copied at once.
        let toc = unsafe { slice(toc) }.to_vec();
        Ok((prefix, toc))
    }
}
