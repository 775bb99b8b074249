//! The compression method and what can be wrong with a compressed stream:
//! words the error type carries, re-exported by `compressed`, whose every
//! layer builds on them.

use core::fmt;

/// The compression method field; values other than zlib and zstd are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionMethod {
    /// 0: a zlib (RFC 1950) stream.
    Zlib,
    /// 1: one zstd frame.
    Zstd,
    /// Any other value.
    Unknown(u16),
}

impl CompressionMethod {
    /// The method a header value names.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            0 => CompressionMethod::Zlib,
            1 => CompressionMethod::Zstd,
            other => CompressionMethod::Unknown(other),
        }
    }

    /// The value stored in a header.
    pub fn raw(self) -> u16 {
        match self {
            CompressionMethod::Zlib => 0,
            CompressionMethod::Zstd => 1,
            CompressionMethod::Unknown(raw) => raw,
        }
    }

    /// The name LLVM prints for the method (`zlib`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            CompressionMethod::Zlib => "zlib",
            CompressionMethod::Zstd => "zstd",
            CompressionMethod::Unknown(_) => "unknown",
        }
    }
}

impl fmt::Display for CompressionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressionMethod::Unknown(raw) => write!(f, "method {raw}"),
            known => f.write_str(known.name()),
        }
    }
}

/// What is wrong with a compressed stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamFault {
    /// The decoder rejected the bytes.
    Malformed,
    /// The stream ends before its last block.
    Truncated,
    /// Bytes follow the end of the stream inside the container.
    TrailingBytes {
        /// How many.
        len: u64,
    },
    /// The stream's own checksum (zstd content checksum, zlib Adler-32) fails.
    ChecksumMismatch,
    /// The zstd frame asks for a larger window than allowed.
    WindowTooLarge {
        /// The window the frame declares.
        window: u64,
        /// The largest window allowed.
        max: u64,
    },
    /// The zstd frame needs a dictionary, or is a skippable frame.
    Unsupported,
}

impl fmt::Display for StreamFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StreamFault::Malformed => f.write_str("malformed data"),
            StreamFault::Truncated => f.write_str("stream ends early"),
            StreamFault::TrailingBytes { len } => {
                write!(f, "{len} bytes after the end of the stream")
            }
            StreamFault::ChecksumMismatch => f.write_str("checksum mismatch"),
            StreamFault::WindowTooLarge { window, max } => {
                write!(f, "window of {window} bytes exceeds {max}")
            }
            StreamFault::Unsupported => f.write_str("dictionary or skippable frame"),
        }
    }
}
