//! kpack archives (`.kpack`): ROCm 7's device code split out of host
//! libraries, one archive per target ID, as rocm-kpack writes them.
//!
//! ```text
//! 0      "KPAK"
//! 4      u32 version (1)
//! 8      u64 toc_offset: absolute, the table of contents runs to the end
//! 16     zeros up to 64
//! 64     the blob area:
//!          "none":            code objects back to back, placed by `blobs`
//!          "zstd-per-kernel": u32 N, then N x (u32 size, one zstd frame)
//! toc    one MessagePack map: format_version, group_name, gfx_arch_family,
//!        gfx_arches [str], toc {binary key: {arch: {type, ordinal,
//!        original_size, metadata}}}, compression_scheme, and blobs
//!        [{offset, size}] or zstd_offset, zstd_size
//! ```
//!
//! All little-endian. [`Archive::parse`] reads the header and walks the
//! table of contents once, checking every type the runtime relies on; it
//! touches no code object. An entry's bytes are placed (and their bounds
//! checked) when asked for: a damaged entry costs only itself.

#[cfg(feature = "alloc")]
mod check;
mod host;
#[cfg(feature = "alloc")]
mod resolve;
mod split;
mod toc;
#[cfg(feature = "alloc")]
mod writer;

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::to_u64;
use crate::compressed::decompress::Stream;
use crate::compressed::{CompressionMethod, DecompressOptions};
use crate::{Error, ErrorKind, Field, Result};

pub use crate::error::{KpackFault, MAX_FRAMES};

#[cfg(feature = "alloc")]
pub use check::{check, Finding, Named};
#[cfg(feature = "alloc")]
pub use host::{binary_key, records, KpackRecord, MarkerProblem};
pub use host::{moved_fatbin, Marker, SearchPath, SearchPaths, GFXARCH, MAX_MARKER_LEN};
#[cfg(feature = "alloc")]
pub use resolve::{
    arch_list, candidates, chose_generic, clr_generic, feature_subsets, place, resolve,
    Environment, KpackError, Loader, Resolved, MAX_FEATURES,
};
#[cfg(feature = "alloc")]
pub use split::{
    marker_bytes, search_path, split_host, HostSplit, KeyRule, SplitCodeObject, SplitOptions,
    SplitUnit, MARKER_SECTION,
};
pub use split::{ShortName, SplitFault};
pub use toc::{Arches, Entries, Entry};
use toc::{Blobs, Toc};
#[cfg(feature = "alloc")]
pub use writer::{write_archive, ArchiveOptions, ArchiveWriter, NewEntry};

/// The magic that starts every kpack archive.
pub const KPACK_MAGIC: &[u8; 4] = b"KPAK";

/// The only version rocm-kpack writes and reads.
pub const KPACK_VERSION: u32 = 1;

/// Where the blob area starts: the header is padded to this.
pub const BLOB_ALIGNMENT: u64 = 64;

/// The fixed fields of a kpack archive's header.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct KpackHeader {
    /// [`KPACK_MAGIC`].
    pub magic: [u8; 4],
    /// [`KPACK_VERSION`].
    pub version: U32,
    /// File offset of the table of contents.
    pub toc_offset: U64,
}

/// How the code objects are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// As they are (`none`, or no `compression_scheme`).
    Stored,
    /// One zstd frame each (`zstd-per-kernel`).
    ZstdPerKernel,
}

impl Scheme {
    /// The name in the table of contents.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Stored => "none",
            Scheme::ZstdPerKernel => "zstd-per-kernel",
        }
    }
}

/// A kpack archive, read in place.
#[derive(Debug, Clone)]
pub struct Archive<'data> {
    data: &'data [u8],
    toc_offset: u64,
    toc: Toc<'data>,
}

/// Where a code object's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'data> {
    /// Stored as they are.
    Stored(&'data [u8]),
    /// One zstd frame that decodes to `original_size` bytes.
    Zstd {
        /// The frame.
        frame: &'data [u8],
        /// Its offset in the archive.
        offset: u64,
    },
}

/// An archive file of `size` bytes read as [`Archive::parse`] reads it:
/// its header and its table of contents (the file from the table on),
/// through `read` (fills a buffer from a file offset; false when it
/// cannot), the code objects before the table left zero (pages never
/// written, so never resident: a split's archives are hundreds of MB). A
/// file that starts no archive is read whole, for the parse to say why.
/// `None` when the memory cannot be had or a read fails.
#[cfg(feature = "alloc")]
pub fn read_for_resolution(
    size: u64,
    read: &mut dyn FnMut(u64, &mut [u8]) -> bool,
) -> Option<alloc::vec::Vec<u8>> {
    let mut bytes = crate::bytes::zeroed(size).ok()?;
    let head = bytes.get_mut(..bytes_len(size.min(64)))?;
    if !read(0, head) {
        return None;
    }
    let toc = KpackHeader::ref_from_prefix(head)
        .ok()
        .filter(|(header, _)| header.magic == *KPACK_MAGIC)
        .map(|(header, _)| header.toc_offset.get())
        .filter(|&at| at < size);
    let (at, rest) = match toc {
        Some(at) => (at, bytes.get_mut(bytes_len(at)..)?),
        None => (0, &mut bytes[..]),
    };
    read(at, rest).then_some(bytes)
}

/// A length known to fit memory (it is within a buffer already had).
#[cfg(feature = "alloc")]
fn bytes_len(len: u64) -> usize {
    usize::try_from(len).unwrap_or(usize::MAX)
}

impl<'data> Archive<'data> {
    /// Reads the header and walks the table of contents, checking it as
    /// the runtime reads it (and every type it relies on). No code object
    /// is touched.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        if !data.starts_with(KPACK_MAGIC) {
            return Err(Error::new(ErrorKind::NotKpack, 0));
        }
        let (header, _) = KpackHeader::ref_from_prefix(data).map_err(|_| {
            Error::truncated(
                Field::KpackHeader,
                to_u64(core::mem::size_of::<KpackHeader>()),
                to_u64(data.len()),
                0,
            )
        })?;
        let version = header.version.get();
        if version != KPACK_VERSION {
            return Err(Error::new(
                ErrorKind::UnsupportedKpackVersion { version },
                4,
            ));
        }
        let toc_offset = header.toc_offset.get();
        let len = to_u64(data.len());
        let toc = usize::try_from(toc_offset)
            .ok()
            .filter(|_| toc_offset < len)
            .and_then(|at| data.get(at..))
            .ok_or_else(|| {
                Error::out_of_bounds(
                    Field::KpackToc,
                    toc_offset,
                    len.saturating_sub(toc_offset),
                    len,
                    8,
                )
            })?;
        let toc = Toc::parse(data, toc, toc_offset)?;
        Ok(Archive {
            data,
            toc_offset,
            toc,
        })
    }

    /// Where the table of contents starts.
    pub fn toc_offset(&self) -> u64 {
        self.toc_offset
    }

    /// `format_version`, if the table states it.
    pub fn format_version(&self) -> Option<u64> {
        self.toc.format_version
    }

    /// `group_name` (`sparse_lib`, `torch`), if stated.
    pub fn group_name(&self) -> Option<&'data [u8]> {
        self.toc.group_name
    }

    /// `gfx_arch_family`, if stated (the splitters write the one
    /// architecture).
    pub fn arch_family(&self) -> Option<&'data [u8]> {
        self.toc.arch_family
    }

    /// How the code objects are stored.
    pub fn scheme(&self) -> Scheme {
        self.toc.scheme
    }

    /// `gfx_arches`: the architectures the runtime takes this archive for.
    pub fn arches(&self) -> Arches<'data> {
        self.toc.arches()
    }

    /// Whether `arch` (exactly, as the runtime compares) is one of
    /// [`Archive::arches`].
    pub fn has_arch(&self, arch: &[u8]) -> bool {
        self.arches().any(|a| a == arch)
    }

    /// How many (binary key, architecture) entries the table holds.
    pub fn entry_count(&self) -> u64 {
        self.toc.entry_count
    }

    /// Every entry, in table order.
    pub fn entries(&self) -> Entries<'data> {
        self.toc.entries()
    }

    /// The entry for binary `key` (`<kernel_name>#<index>`) and `arch`, as
    /// the runtime looks it up (exact strings).
    pub fn entry(&self, key: &[u8], arch: &[u8]) -> Result<Option<Entry<'data>>> {
        for entry in self.entries() {
            let entry = entry?;
            if entry.key == key && entry.arch == arch {
                return Ok(Some(entry));
            }
        }
        Ok(None)
    }

    /// Where `entry`'s code object is, its bounds checked.
    pub fn payload(&self, entry: &Entry<'data>) -> Result<Payload<'data>> {
        match self.toc.blobs {
            Blobs::Stored { blobs } => self.stored(blobs, entry).map(Payload::Stored),
            Blobs::Zstd {
                offset,
                size,
                count,
            } => self.frame(entry, offset, offset.saturating_add(size), count),
        }
    }

    /// Decodes (or copies) `entry`'s code object into `out`, which must
    /// hold its `original_size`; returns how many bytes it wrote. A zstd
    /// frame must decode to exactly `original_size` bytes, under `options`'
    /// limits.
    pub fn read_into(
        &self,
        entry: &Entry<'data>,
        out: &mut [u8],
        options: &DecompressOptions,
    ) -> Result<usize> {
        match self.payload(entry)? {
            Payload::Stored(bytes) => {
                let available = to_u64(out.len());
                let into = out.get_mut(..bytes.len()).ok_or_else(|| {
                    Error::new(
                        ErrorKind::OutputTooSmall {
                            needed: to_u64(bytes.len()),
                            available,
                        },
                        entry.at,
                    )
                })?;
                into.copy_from_slice(bytes);
                Ok(bytes.len())
            }
            Payload::Zstd { frame, offset } => {
                let options = DecompressOptions {
                    verify_hash: false,
                    ..*options
                };
                let (size, _) =
                    zstd_stream(frame, offset, entry).decode_into(out, &options, false)?;
                Ok(size)
            }
        }
    }

    /// `entry`'s code object: borrowed where stored, decoded where not.
    #[cfg(feature = "alloc")]
    pub fn contents(
        &self,
        entry: &Entry<'data>,
        options: &DecompressOptions,
    ) -> Result<alloc::borrow::Cow<'data, [u8]>> {
        match self.payload(entry)? {
            Payload::Stored(bytes) => Ok(alloc::borrow::Cow::Borrowed(bytes)),
            Payload::Zstd { frame, offset } => {
                let options = DecompressOptions {
                    verify_hash: false,
                    ..*options
                };
                let (bytes, _) =
                    zstd_stream(frame, offset, entry).decode_to_vec(&options, false)?;
                Ok(alloc::borrow::Cow::Owned(bytes))
            }
        }
    }

    /// `blobs[ordinal]` of a stored archive, within the file.
    fn stored(&self, blobs: toc::Items, entry: &Entry<'data>) -> Result<&'data [u8]> {
        let (offset, size) = self.toc.blob(blobs, entry)?;
        let len = to_u64(self.data.len());
        crate::bytes::range(self.data, offset, size)
            .ok_or_else(|| Error::out_of_bounds(Field::KpackBlob, offset, size, len, entry.at))
    }

    /// Frame `ordinal` of the zstd blob at `offset..end` of `count`
    /// frames: the frames before it walked by their sizes, each within the
    /// blob.
    fn frame(
        &self,
        entry: &Entry<'data>,
        offset: u64,
        end: u64,
        count: u64,
    ) -> Result<Payload<'data>> {
        if entry.ordinal >= count {
            let fault = KpackFault::OrdinalOutOfRange {
                ordinal: entry.ordinal,
                count,
            };
            return Err(Error::new(ErrorKind::MalformedKpack { fault }, entry.at));
        }
        let mut at = offset.saturating_add(4);
        let mut index = 0u64;
        loop {
            let out_of_blob =
                |field, from: u64, len: u64| Error::out_of_bounds(field, from, len, end, from);
            let frame_len = crate::bytes::range(self.data, at, 4)
                .filter(|_| at.saturating_add(4) <= end)
                .and_then(|r| r.try_into().ok())
                .map(|b: [u8; 4]| u64::from(u32::from_le_bytes(b)))
                .ok_or_else(|| out_of_blob(Field::KpackFrames, at, 4))?;
            let start = at.saturating_add(4);
            let frame = crate::bytes::range(self.data, start, frame_len)
                .filter(|_| start.saturating_add(frame_len) <= end)
                .ok_or_else(|| out_of_blob(Field::KpackFrame, start, frame_len))?;
            if index == entry.ordinal {
                return Ok(Payload::Zstd {
                    frame,
                    offset: start,
                });
            }
            index = index.saturating_add(1);
            at = start.saturating_add(frame_len);
        }
    }
}

/// The file `extract` writes entry `index` (table order) of an archive to:
/// `<stem>.<index>.<key>.<ID>`, the ID the bundle entry ID it came from
/// (`metadata.target`) or else its architecture, each part made safe as a
/// file name as bundle entries' names are
/// ([`crate::naming::safe_name`]).
#[cfg(feature = "alloc")]
pub fn output_name(stem: &str, index: usize, entry: &Entry<'_>) -> alloc::string::String {
    use crate::naming::safe_name;
    alloc::format!(
        "{stem}.{index}.{}.{}",
        safe_name(entry.key),
        safe_name(entry.id())
    )
}

/// `entry`'s frame as a stream of the one bounded decoder: its errors at
/// file offsets, its declared size the entry's `original_size`.
fn zstd_stream<'d>(frame: &'d [u8], offset: u64, entry: &Entry<'_>) -> Stream<'d> {
    Stream {
        method: CompressionMethod::Zstd,
        bytes: frame,
        declared: entry.original_size,
        base: offset,
        declared_at: entry.at,
        method_at: entry.at,
    }
}

#[cfg(all(test, feature = "std"))]
mod tests;
