//! The CCOB container: its three header versions on disk, and
//! [`CompressedBundle`], the checked header over a borrowed buffer (the
//! decoding that starts from it is in `decompress`).

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::stream::{CompressionMethod, Stream};
use super::{zlib, zstd_frame};
use crate::bytes::{range, to_u64};
use crate::{Error, ErrorKind, Field, Result};

/// The magic that starts every compressed bundle.
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";

/// Header of a version 1 compressed bundle.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompressedHeaderV1 {
    /// [`COMPRESSED_MAGIC`].
    pub magic: [u8; 4],
    /// 1.
    pub version: U16,
    /// [`CompressionMethod`] as stored.
    pub method: U16,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: U32,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: U64,
}
const _: () = assert!(core::mem::size_of::<CompressedHeaderV1>() == 20);

/// Header of a version 2 compressed bundle.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompressedHeaderV2 {
    /// [`COMPRESSED_MAGIC`].
    pub magic: [u8; 4],
    /// 2.
    pub version: U16,
    /// [`CompressionMethod`] as stored.
    pub method: U16,
    /// Header plus compressed bytes.
    pub total_size: U32,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: U32,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: U64,
}
const _: () = assert!(core::mem::size_of::<CompressedHeaderV2>() == 24);

/// Header of a version 3 compressed bundle.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompressedHeaderV3 {
    /// [`COMPRESSED_MAGIC`].
    pub magic: [u8; 4],
    /// 3.
    pub version: U16,
    /// [`CompressionMethod`] as stored.
    pub method: U16,
    /// Header plus compressed bytes.
    pub total_size: U64,
    /// Size of the uncompressed bundle.
    pub uncompressed_size: U64,
    /// Truncated MD5 of the uncompressed bundle.
    pub hash: U64,
}
const _: () = assert!(core::mem::size_of::<CompressedHeaderV3>() == 32);

/// A compressed bundle: its checked header over a borrowed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedBundle<'data> {
    pub(super) data: &'data [u8],
    pub(super) version: u16,
    pub(super) method: CompressionMethod,
    pub(super) total_size: Option<u64>,
    pub(super) uncompressed_size: u64,
    pub(super) hash: u64,
    pub(super) header_len: u64,
}

impl<'data> CompressedBundle<'data> {
    /// Whether `data` starts with the compressed-bundle magic.
    pub fn is_compressed(data: &[u8]) -> bool {
        data.starts_with(COMPRESSED_MAGIC)
    }

    /// Reads the header of a version 1, 2 or 3 compressed bundle. For versions
    /// 2 and 3 the container ends at the total size, which must lie inside
    /// `data`; bytes after it are not part of the bundle. Version 1 has no
    /// total size: its compressed bytes run to the end of `data` (see
    /// [`CompressedBundle::stream_len`] to find where they really end). An
    /// unknown method is not an error here; decoding reports it.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        if !Self::is_compressed(data) {
            return Err(if COMPRESSED_MAGIC.starts_with(data) && !data.is_empty() {
                Error::truncated(Field::CompressedMagic, 4, to_u64(data.len()), 0)
            } else {
                Error::new(ErrorKind::BadMagic, 0)
            });
        }
        let Some((version, _)) = U16::read_from_prefix(data.get(4..).unwrap_or_default()).ok()
        else {
            let available = to_u64(data.len()).saturating_sub(4);
            return Err(Error::truncated(Field::Version, 2, available, 4));
        };
        let bundle = match version.get() {
            1 => Self::from_v1(data)?,
            2 => Self::from_v2(data)?,
            3 => Self::from_v3(data)?,
            version => {
                return Err(Error::new(ErrorKind::UnsupportedVersion { version }, 4));
            }
        };
        bundle.bounded()
    }

    fn from_v1(data: &'data [u8]) -> Result<Self> {
        let h = header::<CompressedHeaderV1>(data, &[(8, Field::UncompressedSize, 4)])?;
        Ok(CompressedBundle {
            data,
            version: 1,
            method: CompressionMethod::from_raw(h.method.get()),
            total_size: None,
            uncompressed_size: h.uncompressed_size.get().into(),
            hash: h.hash.get(),
            header_len: 20,
        })
    }

    fn from_v2(data: &'data [u8]) -> Result<Self> {
        let h = header::<CompressedHeaderV2>(
            data,
            &[(8, Field::TotalSize, 4), (12, Field::UncompressedSize, 4)],
        )?;
        Ok(CompressedBundle {
            data,
            version: 2,
            method: CompressionMethod::from_raw(h.method.get()),
            total_size: Some(h.total_size.get().into()),
            uncompressed_size: h.uncompressed_size.get().into(),
            hash: h.hash.get(),
            header_len: 24,
        })
    }

    fn from_v3(data: &'data [u8]) -> Result<Self> {
        let h = header::<CompressedHeaderV3>(
            data,
            &[(8, Field::TotalSize, 8), (16, Field::UncompressedSize, 8)],
        )?;
        Ok(CompressedBundle {
            data,
            version: 3,
            method: CompressionMethod::from_raw(h.method.get()),
            total_size: Some(h.total_size.get()),
            uncompressed_size: h.uncompressed_size.get(),
            hash: h.hash.get(),
            header_len: 32,
        })
    }

    /// Cuts `data` at the total size after checking it.
    fn bounded(mut self) -> Result<Self> {
        let Some(total) = self.total_size else {
            return Ok(self);
        };
        if total < self.header_len {
            return Err(Error::new(
                ErrorKind::BadTotalSize {
                    total,
                    header_len: self.header_len,
                },
                8,
            ));
        }
        let header_len = self.header_len;
        self.data = range(self.data, 0, total).ok_or_else(|| {
            Error::truncated(
                Field::CompressedData,
                total.saturating_sub(header_len),
                to_u64(self.data.len()).saturating_sub(header_len),
                header_len,
            )
        })?;
        Ok(self)
    }

    /// The header version: 1, 2 or 3.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The compression method.
    pub fn method(&self) -> CompressionMethod {
        self.method
    }

    /// The total size (header plus compressed bytes) for versions 2 and 3.
    pub fn total_size(&self) -> Option<u64> {
        self.total_size
    }

    /// The size the bundle decompresses to, as declared.
    pub fn uncompressed_size(&self) -> u64 {
        self.uncompressed_size
    }

    /// The stored truncated MD5 of the uncompressed bundle.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Size of the header: 20, 24 or 32 bytes.
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// The container: header and compressed bytes (for version 1, everything
    /// to the end of the input).
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The compressed bytes after the header.
    pub fn compressed(&self) -> &'data [u8] {
        let start = usize::try_from(self.header_len).unwrap_or(usize::MAX);
        self.data.get(start..).unwrap_or_default()
    }

    /// Uncompressed size divided by compressed size (0 for an empty stream).
    pub fn ratio(&self) -> f64 {
        let compressed = self.compressed().len();
        if compressed == 0 {
            return 0.0;
        }
        u64_to_f64(self.uncompressed_size) / u64_to_f64(to_u64(compressed))
    }

    /// Where the compressed stream really ends, counted from the start of the
    /// container. For zstd this walks the frame's block headers without
    /// decoding; for zlib (which has no length fields) it inflates into a
    /// 32 KiB window on the stack. Needed for version 1, whose header has no
    /// total size, when several containers lie back to back.
    pub fn stream_len(&self) -> Result<u64> {
        let compressed = self.compressed();
        let len = match self.method {
            CompressionMethod::Zstd => zstd_frame::frame_len(compressed)
                .map_err(|(fault, at)| self.stream().error(fault, at))?,
            CompressionMethod::Zlib => zlib::stream_len(compressed)
                .map_err(|(fault, at)| self.stream().error(fault, at))?,
            CompressionMethod::Unknown(method) => {
                return Err(Error::new(ErrorKind::UnknownMethod { method }, 6));
            }
        };
        Ok(self.header_len.saturating_add(len))
    }

    /// The compressed stream and where its header fields are.
    pub(crate) fn stream(&self) -> Stream<'data> {
        Stream {
            method: self.method,
            bytes: self.compressed(),
            declared: self.uncompressed_size,
            base: self.header_len,
            declared_at: match self.version {
                1 => 8,
                2 => 12,
                _ => 16,
            },
            method_at: 6,
        }
    }

    /// Parses the bundle at the start of `data`, cut where it ends: at its
    /// total size, or for version 1 at the end of its stream
    /// ([`stream_len`](Self::stream_len)).
    pub(crate) fn parse_to_extent(data: &'data [u8]) -> Result<Self> {
        let compressed = Self::parse(data)?;
        if compressed.total_size().is_some() {
            return Ok(compressed);
        }
        Ok(compressed.cut_at(compressed.stream_len()?))
    }

    /// The same bundle ending `len` bytes after its start (for version 1,
    /// once [`CompressedBundle::stream_len`] has found its end).
    pub(crate) fn cut_at(mut self, len: u64) -> Self {
        self.data = range(self.data, 0, len).unwrap_or(self.data);
        self
    }
}

/// Reads the fixed header `H`, or says which field the input ends in.
/// `fields` lists the version-specific fields after the method as
/// (offset, field, size); the hash follows them.
fn header<'a, H>(data: &'a [u8], fields: &[(usize, Field, u64)]) -> Result<&'a H>
where
    H: FromBytes + KnownLayout + Immutable + Unaligned,
{
    if let Ok((h, _)) = H::ref_from_prefix(data) {
        return Ok(h);
    }
    let hash_at = core::mem::size_of::<H>().saturating_sub(8);
    let (method, hash) = ([(6, Field::Method, 2)], [(hash_at, Field::Hash, 8)]);
    let all = method.iter().chain(fields).chain(&hash);
    for &(at, field, size) in all {
        let end = at.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
        if data.len() < end {
            let available = data.len().saturating_sub(at);
            return Err(Error::truncated(field, size, to_u64(available), to_u64(at)));
        }
    }
    // Every field fits, so the header does: unreachable, but not worth a panic.
    Err(Error::truncated(Field::Hash, 8, 0, to_u64(hash_at)))
}

/// Sizes up to 2^53 convert exactly; beyond that the ratio is an estimate anyway.
#[allow(clippy::as_conversions)]
fn u64_to_f64(n: u64) -> f64 {
    n as f64
}
