//! Compressed offload bundles ("CCOB"): a header, then one zlib stream or
//! zstd frame holding a whole uncompressed bundle.
//!
//! ```text
//!          v1 (20 B)        v2 (24 B)        v3 (32 B)
//! 0        "CCOB"           "CCOB"           "CCOB"
//! 4        u16 version      u16 version      u16 version
//! 6        u16 method       u16 method       u16 method
//! 8        u32 uncompressed u32 total size   u64 total size
//! 12/16    u64 hash         u32 uncompressed u64 uncompressed   (v1 / v2, v3)
//! 16/24                     u64 hash         u64 hash           (v2 / v3)
//! 20/24/32 compressed bytes, up to the end of the input (v1) or the total size
//! ```
//! Method 0 is zlib, 1 is zstd. The hash is the first 8 bytes of the MD5 of
//! the uncompressed bundle, read as a little-endian integer.
//!
//! [`CompressedBundle::parse`] reads only the header: it never touches the
//! compressed bytes, so inspecting a bundle of any size is instant. Decoding
//! ([`CompressedBundle::decompress_into`]) checks the declared size against
//! [`Limits`] first, writes exactly that many bytes, and verifies the hash
//! unless told not to.

// In layers, each importing only from those above it in this list:
// `stream` (the shared words and limits) and the independent `md5` and
// `budget`; the codecs `zstd_frame`, `zlib`, `zstd`; the container view
// `header`; the strategies `whole` (one thread, the reference), `overlap`
// (hashing on a second thread) and `many` (several bundles on one thread);
// `decompress`, which chooses among them; `later` and `writer` beside it.
#[cfg(feature = "std")]
mod budget;
pub(crate) mod decompress;
mod header;
#[cfg(feature = "zstd")]
pub(crate) mod later;
#[cfg(feature = "zstd")]
pub(crate) mod many;
pub(crate) mod md5;
#[cfg(feature = "std")]
mod overlap;
mod stream;
mod whole;
#[cfg(feature = "alloc")]
pub(crate) mod writer;
mod zlib;
pub(crate) mod zstd;
mod zstd_frame;

#[cfg(feature = "std")]
pub use budget::MemoryBudget;
pub use header::{
    CompressedBundle, CompressedHeaderV1, CompressedHeaderV2, CompressedHeaderV3, COMPRESSED_MAGIC,
};
pub use md5::truncated_md5;
#[cfg(feature = "zstd")]
pub use md5::truncated_md5s;
pub use stream::{
    CompressionMethod, Decoding, DecompressOptions, Limits, StreamFault, ZstdDecoder,
};
#[cfg(feature = "alloc")]
pub use writer::{compress, CompressOptions};
pub use zstd_frame::ZstdFrameHeader;
