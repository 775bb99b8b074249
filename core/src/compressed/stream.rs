//! The words every layer of decoding shares, and nothing else: the method,
//! what can be wrong with a stream, how decoding into a buffer ended, the
//! limits and options, and [`Stream`], one compressed stream with the facts
//! that place its errors. It imports nothing from the rest of `compressed`:
//! the codecs, the strategies and the orchestrator all build on it.

use crate::{Error, ErrorKind};

pub use crate::error::{CompressionMethod, StreamFault};

/// A fault and its offset from the start of the frame.
pub(crate) type FrameError = (StreamFault, u64);

/// How compressed bundles are decoded while a job reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoding {
    /// The most bytes each compressed bundle of an input may decompress to:
    /// a bundle over it is refused before it is inflated. Jobs hold only
    /// what they write from (`extract`: the bundles in flight), so a file
    /// whose bundles add up to more is still read.
    pub max_size: u64,
    /// Whether a wrong hash fails the job (LLVM never checks it).
    pub verify_hash: bool,
    /// Whether the job reports what LLVM's `-verbose` prints: each plain
    /// bundle, and each compressed bundle with its hash (computed even when
    /// not verified).
    pub verbose: bool,
}

impl Decoding {
    /// The decompression options of this decoding's limit, the hash checked
    /// when `verify_hash` says (whatever `self.verify_hash` is).
    pub fn options(&self, verify_hash: bool) -> DecompressOptions {
        DecompressOptions {
            limits: Limits {
                max_uncompressed_size: self.max_size,
            },
            verify_hash,
            ..DecompressOptions::default()
        }
    }
}

impl Default for Decoding {
    fn default() -> Self {
        Decoding {
            max_size: Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE,
            verify_hash: true,
            verbose: false,
        }
    }
}

/// Which zstd decoder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZstdDecoder {
    /// libzstd through the `zstd` crate (feature `zstd`): decodes straight
    /// into the output, several times faster than ruzstd on large bundles.
    Libzstd,
    /// ruzstd (feature `alloc`): pure Rust, for builds without a C library.
    Ruzstd,
}

impl Default for ZstdDecoder {
    /// The faster decoder this build has.
    fn default() -> Self {
        if cfg!(feature = "zstd") {
            ZstdDecoder::Libzstd
        } else {
            ZstdDecoder::Ruzstd
        }
    }
}

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
#[derive(Debug, PartialEq, Eq)]
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
pub(crate) fn max_window(limits: &Limits) -> u64 {
    limits
        .max_uncompressed_size
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
        .max(1 << 10)
}

/// One compressed stream inside a container, with the facts needed to check
/// and decode it and to place its errors: shared by compressed bundles and
/// compressed OffloadBinaries, so there is one bounded decoder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stream<'data> {
    /// zlib or zstd.
    pub(crate) method: CompressionMethod,
    /// The stream, which must end exactly at the end of this slice.
    pub(crate) bytes: &'data [u8],
    /// The size the container declares for the decoded bytes.
    pub(crate) declared: u64,
    /// Offset in the container of the first stream byte.
    pub(crate) base: u64,
    /// Offset in the container of the declared-size field.
    pub(crate) declared_at: u64,
    /// Offset in the container of the method field.
    pub(crate) method_at: u64,
}

impl Stream<'_> {
    /// More output than the declared size.
    pub(crate) fn too_long(&self) -> Error {
        Error::new(
            ErrorKind::DecompressedTooLarge {
                declared: self.declared,
            },
            self.declared_at,
        )
    }

    /// Why the method cannot decode: unknown, or not in this build.
    pub(super) fn method_error(&self) -> Error {
        let kind = match self.method {
            CompressionMethod::Unknown(method) => ErrorKind::UnknownMethod { method },
            method => ErrorKind::MethodUnavailable { method },
        };
        Error::new(kind, self.method_at)
    }

    /// An error in the stream, at `at` bytes into it.
    pub(crate) fn error(&self, fault: StreamFault, at: u64) -> Error {
        Error::new(
            ErrorKind::CorruptStream {
                method: self.method,
                fault,
            },
            self.base.saturating_add(at),
        )
    }
}
