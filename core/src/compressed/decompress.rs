//! Bounded decoding: every check that needs no output runs before a byte is
//! written or allocated, the output is exactly the declared size, and the
//! hash is verified unless the caller opts out.

use super::zstd::ZstdDecoder;
use super::zstd_frame::{self, ZstdFrameHeader};
use super::{zlib, zstd, CompressedBundle, CompressionMethod, StreamFault, COMPRESSED_MAGIC};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

/// How large a decompressed bundle may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest uncompressed size accepted, in bytes. A header declaring
    /// more is refused before anything is allocated or decoded, and no zstd
    /// window larger than this (rounded up to a power of two) is accepted.
    pub max_uncompressed_size: u64,
}

impl Limits {
    /// The default limit: 1 GiB. Real HIP bundles are far smaller per
    /// compressed bundle, while a hostile one declaring many GiB is refused
    /// cheaply. Raise it for the rare multi-GiB bundle.
    pub const DEFAULT_MAX_UNCOMPRESSED_SIZE: u64 = 1 << 30;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_uncompressed_size: Self::DEFAULT_MAX_UNCOMPRESSED_SIZE,
        }
    }
}

/// How to decompress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecompressOptions {
    /// Size limits.
    pub limits: Limits,
    /// Whether to check the stored truncated MD5 against the output (on by
    /// default: LLVM's zstd frames carry no checksum, so this is the only
    /// integrity check there is). Turn it off only if the caller verifies the
    /// bytes some other way: without it, a damaged zstd stream can decode
    /// without error, and libzstd and ruzstd do not always give the same
    /// bytes for it (their Huffman checks differ).
    pub verify_hash: bool,
    /// The zstd decoder; the default is the fastest this build has.
    pub zstd_decoder: ZstdDecoder,
}

impl Default for DecompressOptions {
    fn default() -> Self {
        DecompressOptions {
            limits: Limits::default(),
            verify_hash: true,
            zstd_decoder: ZstdDecoder::default(),
        }
    }
}

/// How decoding into a buffer of the declared size ended.
pub(crate) enum Decoded {
    /// The stream ended after filling the buffer exactly.
    Exact,
    /// The stream ended after this many bytes, fewer than the buffer holds.
    Short(u64),
    /// The stream has more to give than the buffer holds.
    Long,
}

/// The largest zstd window accepted: the size limit rounded up to a power of
/// two (zstd windows are at least 1 KiB). Smaller caps would refuse frames a
/// streaming compressor wrote for small bundles; decoders keep at most the
/// output they have produced, so memory follows the declared size regardless.
fn max_window(limits: &Limits) -> u64 {
    limits
        .max_uncompressed_size
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
        .max(1 << 10)
}

/// The hash a compressed bundle stores: the first 8 bytes of the MD5 of the
/// uncompressed bundle, read as a little-endian integer.
pub fn truncated_md5(data: &[u8]) -> u64 {
    let digest = md5::compute(data).0;
    let mut low = [0u8; 8];
    low.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    u64::from_le_bytes(low)
}

impl CompressedBundle<'_> {
    /// Offset of the uncompressed-size field in this version's header.
    fn uncompressed_size_offset(&self) -> u64 {
        match self.version {
            1 => 8,
            2 => 12,
            _ => 16,
        }
    }

    /// Offset of the hash field in this version's header.
    fn hash_offset(&self) -> u64 {
        self.header_len.saturating_sub(8)
    }

    /// Every check that needs no decoding: the method is known and usable, the
    /// declared size is within `limits`, and (zstd) the frame header agrees
    /// with the declared size, its window is within the limit and the frame
    /// ends exactly at the end of the container. Returns the declared size.
    pub fn check(&self, limits: &Limits) -> Result<usize> {
        let declared = self.uncompressed_size;
        if declared > limits.max_uncompressed_size {
            return Err(Error::new(
                ErrorKind::SizeLimitExceeded {
                    size: declared,
                    limit: limits.max_uncompressed_size,
                },
                self.uncompressed_size_offset(),
            ));
        }
        let size = usize::try_from(declared).map_err(|_| {
            Error::new(
                ErrorKind::SizeLimitExceeded {
                    size: declared,
                    limit: to_u64(usize::MAX),
                },
                self.uncompressed_size_offset(),
            )
        })?;
        match self.method {
            CompressionMethod::Zlib => Ok(size),
            CompressionMethod::Zstd => {
                self.check_zstd_frame(limits)?;
                Ok(size)
            }
            CompressionMethod::Unknown(method) => {
                Err(Error::new(ErrorKind::UnknownMethod { method }, 6))
            }
        }
    }

    fn check_zstd_frame(&self, limits: &Limits) -> Result<()> {
        let frame = self.compressed();
        let header =
            ZstdFrameHeader::parse(frame).map_err(|(fault, at)| self.stream_error(fault, at))?;
        if let Some(content) = header.content_size() {
            if content != self.uncompressed_size {
                return Err(Error::new(
                    ErrorKind::ContentSizeMismatch {
                        declared: self.uncompressed_size,
                        frame: content,
                    },
                    self.header_len,
                ));
            }
        }
        let max = max_window(limits);
        if header.window_size() > max {
            let fault = StreamFault::WindowTooLarge {
                window: header.window_size(),
                max,
            };
            return Err(self.stream_error(fault, 4));
        }
        let len =
            zstd_frame::frame_len(frame).map_err(|(fault, at)| self.stream_error(fault, at))?;
        let trailing = to_u64(frame.len()).saturating_sub(len);
        if trailing != 0 {
            return Err(self.stream_error(StreamFault::TrailingBytes { len: trailing }, len));
        }
        Ok(())
    }

    /// Decompresses into the start of `out`, which must hold at least the
    /// declared size, and returns the declared size. Allocates nothing for
    /// zlib; zstd needs the `alloc` feature (ruzstd keeps its window on the
    /// heap) or the `zstd` feature (libzstd's decoder state).
    pub fn decompress_into(&self, out: &mut [u8], options: &DecompressOptions) -> Result<usize> {
        let size = self.check(&options.limits)?;
        let available = to_u64(out.len());
        let out = out.get_mut(..size).ok_or_else(|| {
            Error::new(
                ErrorKind::OutputTooSmall {
                    needed: self.uncompressed_size,
                    available,
                },
                self.uncompressed_size_offset(),
            )
        })?;
        self.decode_checked(out, options)?;
        Ok(size)
    }

    /// Decompresses into a new buffer of exactly the declared size, reserved
    /// with `try_reserve_exact` after the size passed `options.limits`.
    #[cfg(feature = "alloc")]
    pub fn decompress(&self, options: &DecompressOptions) -> Result<alloc::vec::Vec<u8>> {
        let size = self.check(&options.limits)?;
        let mut out = crate::bytes::reserve(to_u64(size))?;
        out.resize(size, 0);
        self.decode_checked(&mut out, options)?;
        Ok(out)
    }

    /// Decodes into `out`, which [`CompressedBundle::check`] has sized, then
    /// refuses a nested compressed bundle and (if asked) a wrong hash.
    fn decode_checked(&self, out: &mut [u8], options: &DecompressOptions) -> Result<()> {
        self.decode(out, options)?;
        if out.starts_with(COMPRESSED_MAGIC) {
            return Err(Error::new(
                ErrorKind::NestedCompressedBundle,
                self.header_len,
            ));
        }
        if options.verify_hash {
            let computed = truncated_md5(out);
            if computed != self.hash {
                return Err(Error::new(
                    ErrorKind::HashMismatch {
                        stored: self.hash,
                        computed,
                    },
                    self.hash_offset(),
                ));
            }
        }
        Ok(())
    }

    fn decode(&self, out: &mut [u8], options: &DecompressOptions) -> Result<()> {
        let frame = self.compressed();
        let decoded = match self.method {
            CompressionMethod::Zlib => zlib::inflate(frame, out),
            CompressionMethod::Zstd => zstd::decode(
                options.zstd_decoder,
                frame,
                out,
                max_window(&options.limits),
            )
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::MethodUnavailable {
                        method: self.method,
                    },
                    6,
                )
            })?,
            CompressionMethod::Unknown(method) => {
                return Err(Error::new(ErrorKind::UnknownMethod { method }, 6));
            }
        }
        .map_err(|(fault, at)| self.stream_error(fault, at))?;
        let declared = self.uncompressed_size;
        match decoded {
            Decoded::Exact => Ok(()),
            Decoded::Long => Err(Error::new(
                ErrorKind::DecompressedTooLarge { declared },
                self.uncompressed_size_offset(),
            )),
            Decoded::Short(actual) => Err(Error::new(
                ErrorKind::DecompressedTooSmall { declared, actual },
                self.uncompressed_size_offset(),
            )),
        }
    }
}
