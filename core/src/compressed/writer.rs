//! Writing compressed bundles (versions 2 and 3) that clang-offload-bundler
//! reads.

use alloc::vec::Vec;

use zerocopy::IntoBytes;

use super::header::{CompressedHeaderV2, CompressedHeaderV3, COMPRESSED_MAGIC};
use super::md5::truncated_md5;
use super::stream::CompressionMethod;
use super::zlib;
use crate::bytes::{reserve, to_u64};
use crate::{Error, ErrorKind, Result};

/// How to compress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressOptions {
    /// Header version: 2 or 3 (LLVM 22's default).
    pub version: u16,
    /// zlib or zstd.
    pub method: CompressionMethod,
    /// Compression level; `None` is clang-offload-bundler's default for the
    /// method (zstd 3, zlib 6).
    pub level: Option<i32>,
}

impl CompressOptions {
    /// clang-offload-bundler's default version.
    pub const DEFAULT_VERSION: u16 = 3;

    /// The level used for `method` when none is given.
    pub fn default_level(method: CompressionMethod) -> i32 {
        match method {
            CompressionMethod::Zstd => 3,
            _ => 6,
        }
    }
}

impl Default for CompressOptions {
    /// Version 3, zstd where this build can write it (feature `zstd`), else
    /// zlib, at the default level: what clang-offload-bundler 22 writes.
    fn default() -> Self {
        CompressOptions {
            version: Self::DEFAULT_VERSION,
            method: if cfg!(feature = "zstd") {
                CompressionMethod::Zstd
            } else {
                CompressionMethod::Zlib
            },
            level: None,
        }
    }
}

/// One zlib stream or zstd frame of `data` at `level`: the stream every
/// compressed container holds.
pub(crate) fn compress_stream(
    data: &[u8],
    method: CompressionMethod,
    level: i32,
) -> Result<Vec<u8>> {
    match method {
        CompressionMethod::Zlib => zlib::deflate(data, level),
        // LLVM compresses with long-distance matching.
        CompressionMethod::Zstd => zstd_frame(data, level, true, 6),
        CompressionMethod::Unknown(method) => {
            Err(Error::new(ErrorKind::UnknownMethod { method }, 6))
        }
    }
}

/// One zstd frame of `data` at `level`, content size recorded, no checksum,
/// with long-distance matching or without; in a build without libzstd
/// (feature `zstd`), `MethodUnavailable` located at `offset`.
pub(crate) fn zstd_frame(
    data: &[u8],
    level: i32,
    long_distance: bool,
    offset: u64,
) -> Result<Vec<u8>> {
    #[cfg(feature = "zstd")]
    {
        let _ = offset;
        super::zstd::libzstd::compress(data, level, long_distance)
    }
    #[cfg(not(feature = "zstd"))]
    {
        let _ = (data, level, long_distance);
        let method = CompressionMethod::Zstd;
        Err(Error::new(ErrorKind::MethodUnavailable { method }, offset))
    }
}

/// Compresses a whole (uncompressed) bundle into a compressed bundle.
pub fn compress(bundle: &[u8], options: &CompressOptions) -> Result<Vec<u8>> {
    let header_len: usize = match options.version {
        2 => 24,
        3 => 32,
        version => return Err(Error::new(ErrorKind::UnsupportedVersion { version }, 4)),
    };
    let level = options
        .level
        .unwrap_or_else(|| CompressOptions::default_level(options.method));
    let stream = compress_stream(bundle, options.method, level)?;
    let total = header_len
        .checked_add(stream.len())
        .ok_or(Error::new(ErrorKind::LayoutOverflow, 0))?;
    let (uncompressed, total64) = (to_u64(bundle.len()), to_u64(total));
    let hash = truncated_md5(bundle);
    let mut out = reserve(to_u64(total))?;
    let magic = *COMPRESSED_MAGIC;
    let method = options.method.raw().into();
    if options.version == 2 {
        let too_large =
            |size, offset| Error::new(ErrorKind::TooLargeForVersion { size, version: 2 }, offset);
        let uncompressed_size =
            u32::try_from(uncompressed).map_err(|_| too_large(uncompressed, 12))?;
        let total_size = u32::try_from(total64).map_err(|_| too_large(total64, 8))?;
        let header = CompressedHeaderV2 {
            magic,
            version: 2.into(),
            method,
            total_size: total_size.into(),
            uncompressed_size: uncompressed_size.into(),
            hash: hash.into(),
        };
        out.extend_from_slice(header.as_bytes());
    } else {
        let header = CompressedHeaderV3 {
            magic,
            version: 3.into(),
            method,
            total_size: total64.into(),
            uncompressed_size: uncompressed.into(),
            hash: hash.into(),
        };
        out.extend_from_slice(header.as_bytes());
    }
    out.extend_from_slice(&stream);
    Ok(out)
}
