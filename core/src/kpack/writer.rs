//! kpack archives written as rocm-kpack's `PackedKernelArchive.write`
//! writes them: the 16-byte header, zeros to 64, the blob (code objects
//! back to back, or a count and sized zstd frames at level 3), then the
//! table of contents in its key order (`format_version`, `group_name`,
//! `gfx_arch_family`, `gfx_arches`, `toc`, `compression_scheme`, then
//! `blobs` or `zstd_offset` and `zstd_size`), each entry `type`, `ordinal`,
//! `original_size` and (when given) `metadata`, in MessagePack as Python's
//! writes it; the table's offset patched into the header.
//!
//! [`ArchiveWriter`] writes the same bytes one code object at a time, so
//! that a caller holds one code object and the table, never the archive:
//! the blob bytes of each entry as it comes, then the table, then the
//! prefix (header and, for zstd, the frame count) written over the
//! placeholder it started with.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{Scheme, BLOB_ALIGNMENT, KPACK_MAGIC, KPACK_VERSION};
use crate::bytes::to_u64;
use crate::msgpack::write;
use crate::{Error, ErrorKind, Result};

/// One code object to store.
#[derive(Debug, Clone, Copy)]
pub struct NewEntry<'a> {
    /// The binary key, `<kernel_name>#<index>`.
    pub key: &'a [u8],
    /// The architecture it is for.
    pub arch: &'a [u8],
    /// The code object.
    pub code: &'a [u8],
    /// `metadata`'s string pairs, in order (none: no `metadata` key).
    pub metadata: &'a [(&'a [u8], &'a [u8])],
}

/// What the archive says of itself.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveOptions<'a> {
    /// `group_name`.
    pub group_name: &'a [u8],
    /// `gfx_arch_family`.
    pub arch_family: &'a [u8],
    /// `gfx_arches`.
    pub arches: &'a [&'a [u8]],
    /// How the code objects are stored.
    pub scheme: Scheme,
    /// The zstd level (rocm-kpack's default: 3).
    pub level: i32,
}

/// The archive of `entries`, their ordinals in the order given. A key
/// given twice for one architecture is an error, as it is rocm-kpack's.
pub fn write_archive(entries: &[NewEntry<'_>], options: &ArchiveOptions<'_>) -> Result<Vec<u8>> {
    let mut writer = ArchiveWriter::new(options);
    let mut out = writer.placeholder();
    for entry in entries {
        writer.add(entry, &mut out)?;
    }
    let (prefix, toc) = writer.finish()?;
    out.extend_from_slice(&toc);
    if let Some(head) = out.get_mut(..prefix.len()) {
        head.copy_from_slice(&prefix);
    }
    Ok(out)
}

/// What the table keeps of one stored code object.
#[derive(Debug, Clone)]
struct Stored {
    arch: Vec<u8>,
    ordinal: u64,
    size: u64,
    metadata: Vec<(Vec<u8>, Vec<u8>)>,
}

/// An archive written one code object at a time:
/// [`placeholder`](Self::placeholder) first, then each [`add`](Self::add)'s bytes in
/// turn, then [`finish`](Self::finish)'s table after them and its prefix
/// over the placeholder. The bytes are [`write_archive`]'s for the same
/// entries. It keeps the table (keys, architectures, sizes, metadata),
/// never a code object.
#[derive(Debug, Clone)]
pub struct ArchiveWriter {
    group_name: Vec<u8>,
    arch_family: Vec<u8>,
    arches: Vec<Vec<u8>>,
    scheme: Scheme,
    level: i32,
    /// Keys in the order they first came, each with its entries.
    keys: Vec<(Vec<u8>, Vec<Stored>)>,
    places: BTreeMap<Vec<u8>, usize>,
    /// `none`: each code object's offset and size.
    blobs: Vec<(u64, u64)>,
    /// Bytes written so far (placeholder included).
    written: u64,
    count: u64,
}

impl ArchiveWriter {
    /// A writer of an archive with `options`.
    pub fn new(options: &ArchiveOptions<'_>) -> ArchiveWriter {
        ArchiveWriter {
            group_name: options.group_name.to_vec(),
            arch_family: options.arch_family.to_vec(),
            arches: options.arches.iter().map(|a| a.to_vec()).collect(),
            scheme: options.scheme,
            level: options.level,
            keys: Vec::new(),
            places: BTreeMap::new(),
            blobs: Vec::new(),
            written: 0,
            count: 0,
        }
    }

    /// How long the prefix is: the header and its padding, and for
    /// `zstd-per-kernel` the frame count after them.
    pub fn prefix_len(&self) -> u64 {
        match self.scheme {
            Scheme::Stored => BLOB_ALIGNMENT,
            Scheme::ZstdPerKernel => BLOB_ALIGNMENT.saturating_add(4),
        }
    }

    /// The archive's first bytes until [`finish`](Self::finish) gives
    /// them: zeros of [`prefix_len`](Self::prefix_len).
    pub fn placeholder(&mut self) -> Vec<u8> {
        self.written = self.prefix_len();
        alloc::vec![0; usize::try_from(self.prefix_len()).unwrap_or(68)]
    }

    /// Stores `entry`: its blob bytes (the code object, or its size and
    /// zstd frame) appended to `out`, its table entry kept. A key given
    /// twice for one architecture is an error and appends nothing.
    pub fn add(&mut self, entry: &NewEntry<'_>, out: &mut Vec<u8>) -> Result<()> {
        if self.written == 0 {
            self.written = self.prefix_len();
        }
        let place = self.places.get(entry.key).copied();
        if let Some(place) = place {
            let taken = self
                .keys
                .get(place)
                .is_some_and(|(_, stored)| stored.iter().any(|s| s.arch == entry.arch));
            if taken {
                let fault = super::KpackFault::DuplicateEntry;
                return Err(Error::new(ErrorKind::MalformedKpack { fault }, 0));
            }
        }
        let before = out.len();
        match self.scheme {
            Scheme::Stored => {
                self.blobs.push((self.written, to_u64(entry.code.len())));
                crate::bytes::extend(out, entry.code)?;
            }
            Scheme::ZstdPerKernel => {
                let frame = frame(entry.code, self.level)?;
                let len = u32::try_from(frame.len()).map_err(|_| too_many(frame.len()))?;
                out.extend_from_slice(&len.to_le_bytes());
                crate::bytes::extend(out, &frame)?;
            }
        }
        self.written = self
            .written
            .saturating_add(to_u64(out.len().saturating_sub(before)));
        let stored = Stored {
            arch: entry.arch.to_vec(),
            ordinal: self.count,
            size: to_u64(entry.code.len()),
            metadata: entry
                .metadata
                .iter()
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect(),
        };
        self.count = self.count.saturating_add(1);
        match place {
            Some(place) => {
                if let Some((_, list)) = self.keys.get_mut(place) {
                    list.push(stored);
                }
            }
            None => {
                self.places.insert(entry.key.to_vec(), self.keys.len());
                self.keys.push((entry.key.to_vec(), alloc::vec![stored]));
            }
        }
        Ok(())
    }

    /// How many code objects are stored.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The prefix (to write over the placeholder at offset 0) and the
    /// table of contents (to append after the last entry's bytes).
    pub fn finish(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let toc_offset = self.written.max(self.prefix_len());
        let mut prefix = Vec::new();
        prefix.extend_from_slice(KPACK_MAGIC);
        prefix.extend_from_slice(&KPACK_VERSION.to_le_bytes());
        prefix.extend_from_slice(&toc_offset.to_le_bytes());
        prefix.resize(usize::try_from(BLOB_ALIGNMENT).unwrap_or(64), 0);
        if self.scheme == Scheme::ZstdPerKernel {
            let count = u32::try_from(self.count).map_err(|_| too_many_u64(self.count))?;
            prefix.extend_from_slice(&count.to_le_bytes());
        }
        let mut toc = Vec::new();
        self.toc(
            &mut toc,
            (BLOB_ALIGNMENT, toc_offset.saturating_sub(BLOB_ALIGNMENT)),
        );
        Ok((prefix, toc))
    }

    /// The table of contents, appended to `out`.
    fn toc(&self, out: &mut Vec<u8>, (zstd_offset, zstd_size): (u64, u64)) {
        let zstd = self.scheme == Scheme::ZstdPerKernel;
        write::map(out, if zstd { 8 } else { 7 });
        write::str(out, b"format_version");
        write::uint(out, u64::from(KPACK_VERSION));
        write::str(out, b"group_name");
        write::str(out, &self.group_name);
        write::str(out, b"gfx_arch_family");
        write::str(out, &self.arch_family);
        write::str(out, b"gfx_arches");
        write::array(out, self.arches.len());
        for arch in &self.arches {
            write::str(out, arch);
        }
        write::str(out, b"toc");
        write::map(out, self.keys.len());
        for (key, stored) in &self.keys {
            write::str(out, key);
            write::map(out, stored.len());
            for entry in stored {
                write::str(out, &entry.arch);
                write::map(out, if entry.metadata.is_empty() { 3 } else { 4 });
                write::str(out, b"type");
                write::str(out, b"hsaco");
                write::str(out, b"ordinal");
                write::uint(out, entry.ordinal);
                write::str(out, b"original_size");
                write::uint(out, entry.size);
                if !entry.metadata.is_empty() {
                    write::str(out, b"metadata");
                    write::map(out, entry.metadata.len());
                    for (name, value) in &entry.metadata {
                        write::str(out, name);
                        write::str(out, value);
                    }
                }
            }
        }
        write::str(out, b"compression_scheme");
        write::str(out, self.scheme.name().as_bytes());
        if zstd {
            write::str(out, b"zstd_offset");
            write::uint(out, zstd_offset);
            write::str(out, b"zstd_size");
            write::uint(out, zstd_size);
        } else {
            write::str(out, b"blobs");
            write::array(out, self.blobs.len());
            for (offset, size) in &self.blobs {
                write::map(out, 2);
                write::str(out, b"offset");
                write::uint(out, *offset);
                write::str(out, b"size");
                write::uint(out, *size);
            }
        }
    }
}

fn too_many(n: usize) -> Error {
    too_many_u64(to_u64(n))
}

fn too_many_u64(n: u64) -> Error {
    Error::new(
        ErrorKind::SizeLimitExceeded {
            size: n,
            limit: u64::from(u32::MAX),
        },
        0,
    )
}

/// One zstd frame of `code` at `level`, its content size recorded.
#[cfg(feature = "zstd")]
fn frame(code: &[u8], level: i32) -> Result<Vec<u8>> {
    crate::compressed::zstd::libzstd::compress(code, level, false)
}

/// Without libzstd nothing is compressed.
#[cfg(not(feature = "zstd"))]
fn frame(_: &[u8], _: i32) -> Result<Vec<u8>> {
    Err(Error::new(
        ErrorKind::MethodUnavailable {
            method: crate::CompressionMethod::Zstd,
        },
        0,
    ))
}
