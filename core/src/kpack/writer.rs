//! kpack archives written as rocm-kpack's `PackedKernelArchive.write`
//! writes them: the 16-byte header, zeros to 64, the blob (code objects
//! back to back, or a count and sized zstd frames at level 3), then the
//! table of contents in its key order (`format_version`, `group_name`,
//! `gfx_arch_family`, `gfx_arches`, `toc`, `compression_scheme`, then
//! `blobs` or `zstd_offset` and `zstd_size`), each entry `type`, `ordinal`,
//! `original_size` and (when given) `metadata`, in MessagePack as Python's
//! writes it; the table's offset patched into the header.

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
    let mut out = Vec::new();
    out.extend_from_slice(KPACK_MAGIC);
    out.extend_from_slice(&KPACK_VERSION.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.resize(usize::try_from(BLOB_ALIGNMENT).unwrap_or(64), 0);
    let blob_start = to_u64(out.len());
    let mut blobs = Vec::new();
    match options.scheme {
        Scheme::Stored => {
            for entry in entries {
                blobs.push((to_u64(out.len()), to_u64(entry.code.len())));
                out.extend_from_slice(entry.code);
            }
        }
        Scheme::ZstdPerKernel => {
            let count = u32::try_from(entries.len()).map_err(|_| too_many(entries.len()))?;
            out.extend_from_slice(&count.to_le_bytes());
            for entry in entries {
                let frame = frame(entry.code, options.level)?;
                let len = u32::try_from(frame.len()).map_err(|_| too_many(frame.len()))?;
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&frame);
            }
        }
    }
    let blob_size = to_u64(out.len()).saturating_sub(blob_start);
    let toc_offset = to_u64(out.len());
    toc(&mut out, entries, options, &blobs, (blob_start, blob_size))?;
    if let Some(field) = out.get_mut(8..16) {
        field.copy_from_slice(&toc_offset.to_le_bytes());
    }
    Ok(out)
}

fn too_many(n: usize) -> Error {
    Error::new(
        ErrorKind::SizeLimitExceeded {
            size: to_u64(n),
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

/// The table of contents, appended to `out`.
fn toc(
    out: &mut Vec<u8>,
    entries: &[NewEntry<'_>],
    options: &ArchiveOptions<'_>,
    blobs: &[(u64, u64)],
    (zstd_offset, zstd_size): (u64, u64),
) -> Result<()> {
    let zstd = options.scheme == Scheme::ZstdPerKernel;
    write::map(out, if zstd { 8 } else { 7 });
    write::str(out, b"format_version");
    write::uint(out, u64::from(KPACK_VERSION));
    write::str(out, b"group_name");
    write::str(out, options.group_name);
    write::str(out, b"gfx_arch_family");
    write::str(out, options.arch_family);
    write::str(out, b"gfx_arches");
    write::array(out, options.arches.len());
    for arch in options.arches {
        write::str(out, arch);
    }
    write::str(out, b"toc");
    // Keys in the order they first come, each with its architectures.
    let mut keys: Vec<&[u8]> = Vec::new();
    for entry in entries {
        if !keys.contains(&entry.key) {
            keys.push(entry.key);
        }
    }
    write::map(out, keys.len());
    for key in keys {
        write::str(out, key);
        let of_key: Vec<(usize, &NewEntry<'_>)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.key == key)
            .collect();
        for (i, (_, a)) in of_key.iter().enumerate() {
            if of_key
                .get(..i)
                .unwrap_or_default()
                .iter()
                .any(|(_, b)| b.arch == a.arch)
            {
                let fault = super::KpackFault::DuplicateEntry;
                return Err(Error::new(ErrorKind::MalformedKpack { fault }, 0));
            }
        }
        write::map(out, of_key.len());
        for (ordinal, entry) in of_key {
            write::str(out, entry.arch);
            write::map(out, if entry.metadata.is_empty() { 3 } else { 4 });
            write::str(out, b"type");
            write::str(out, b"hsaco");
            write::str(out, b"ordinal");
            write::uint(out, to_u64(ordinal));
            write::str(out, b"original_size");
            write::uint(out, to_u64(entry.code.len()));
            if !entry.metadata.is_empty() {
                write::str(out, b"metadata");
                write::map(out, entry.metadata.len());
                for (name, value) in entry.metadata {
                    write::str(out, name);
                    write::str(out, value);
                }
            }
        }
    }
    write::str(out, b"compression_scheme");
    write::str(out, options.scheme.name().as_bytes());
    if zstd {
        write::str(out, b"zstd_offset");
        write::uint(out, zstd_offset);
        write::str(out, b"zstd_size");
        write::uint(out, zstd_size);
    } else {
        write::str(out, b"blobs");
        write::array(out, blobs.len());
        for (offset, size) in blobs {
            write::map(out, 2);
            write::str(out, b"offset");
            write::uint(out, *offset);
            write::str(out, b"size");
            write::uint(out, *size);
        }
    }
    Ok(())
}
