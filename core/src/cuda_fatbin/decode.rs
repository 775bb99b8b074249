//! Decoding an entry's payload into the caller's buffer, bounded as
//! compressed bundles are: the declared size checked against the limits
//! (and, for LZ4, against the most the block could give) before a byte is
//! written, and exactly the declared size required. zstd frames go through
//! the compressed bundles' decoder ([`crate::compressed`]); LZ4 blocks
//! through [`super::lz4`].
//!
//! What `cuobjdump -xelf/-xptx` writes is [`FatbinEntry::image`] of the
//! decoded bytes: a cubin cut to the length its own ELF headers give (the
//! payload is padded to 8 and the unpadded size is not recorded), PTX cut
//! before its NUL.

use super::lz4::{self, max_decoded_len};
use super::{elf_extent, EntryKind, FatbinEntry, FLAG_LZ4, FLAG_ZSTD};
use crate::compressed::decompress::{Decoded, Stream};
use crate::compressed::{CompressionMethod, DecompressOptions};
use crate::{Error, ErrorKind, Result};

/// How an entry's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// As is.
    None,
    /// One LZ4 block, no frame (flag 0x2000).
    Lz4,
    /// One zstd frame (flag 0x8000).
    Zstd,
    /// Both flags: no known writer sets them together.
    Ambiguous,
}

impl Compression {
    /// The compression the flags name.
    pub fn from_flags(flags: u64) -> Self {
        match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
            (false, false) => Compression::None,
            (true, false) => Compression::Lz4,
            (false, true) => Compression::Zstd,
            (true, true) => Compression::Ambiguous,
        }
    }

    /// `none`, `lz4`, `zstd` or `lz4+zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Ambiguous => "lz4+zstd",
        }
    }
}

/// Offsets of header fields, from the entry start, that errors point at.
const FLAGS_AT: u64 = 0x28;
const UNCOMPRESSED_SIZE_AT: u64 = 0x38;

impl<'data> FatbinEntry<'data> {
    /// How the payload is stored.
    pub fn compression(&self) -> Compression {
        Compression::from_flags(self.flags())
    }

    /// The compressed stream: the payload's first compressed-size bytes
    /// (the rest is padding); the whole payload when stored.
    pub fn compressed(&self) -> &'data [u8] {
        match self.compression() {
            Compression::None => self.payload,
            _ => {
                let len = usize::try_from(self.compressed_size()).unwrap_or(usize::MAX);
                self.payload.get(..len).unwrap_or(self.payload)
            }
        }
    }

    /// Offset, in the fat binary, of the payload's first byte.
    fn payload_offset(&self) -> u64 {
        self.offset
            .saturating_add(crate::bytes::to_u64(self.header_bytes.len()))
    }

    /// Decodes a compressed payload into the start of `out`, which must hold
    /// at least [`FatbinEntry::uncompressed_size`] bytes; returns that size.
    /// Every check that needs no decoding runs first (the limit, the most an
    /// LZ4 block of this size can give, the zstd frame's header and extent);
    /// a stream that decodes to more or fewer bytes than declared is an
    /// error. Errors are located in the fat binary and name the entry.
    /// A stored payload is [`ErrorKind::NotCompressed`]: read
    /// [`FatbinEntry::payload`] instead.
    pub fn decompress_into(&self, out: &mut [u8], options: &DecompressOptions) -> Result<usize> {
        self.decompress_located(out, options)
            .map_err(|e| e.in_entry(self.index))
    }

    fn decompress_located(&self, out: &mut [u8], options: &DecompressOptions) -> Result<usize> {
        let at = |field: u64| self.offset.saturating_add(field);
        match self.compression() {
            Compression::None => Err(Error::new(ErrorKind::NotCompressed, at(FLAGS_AT))),
            Compression::Ambiguous => Err(Error::new(
                ErrorKind::AmbiguousCompression {
                    flags: self.flags(),
                },
                at(FLAGS_AT),
            )),
            Compression::Zstd => self
                .zstd_stream()
                .decode_into(out, options, false)
                .map(|(size, _)| size),
            Compression::Lz4 => self.decode_lz4(out, options),
        }
    }

    /// The zstd payload as the compressed bundles' bounded decoder takes it.
    fn zstd_stream(&self) -> Stream<'data> {
        Stream {
            method: CompressionMethod::Zstd,
            bytes: self.compressed(),
            declared: self.uncompressed_size(),
            base: self.payload_offset(),
            declared_at: self.offset.saturating_add(UNCOMPRESSED_SIZE_AT),
            method_at: self.offset.saturating_add(FLAGS_AT),
        }
    }

    /// Every check on an LZ4 entry that needs no decoding: the declared
    /// size within the limit and within what the block could ever give (a
    /// bomb is refused here). Returns the declared size.
    fn check_lz4(&self, options: &DecompressOptions) -> Result<usize> {
        let declared = self.uncompressed_size();
        let declared_at = self.offset.saturating_add(UNCOMPRESSED_SIZE_AT);
        let block_len = crate::bytes::to_u64(self.compressed().len());
        let limit = options
            .limits
            .max_uncompressed_size
            .min(max_decoded_len(block_len))
            .min(crate::bytes::to_u64(usize::MAX));
        if declared > limit {
            return Err(Error::new(
                ErrorKind::SizeLimitExceeded {
                    size: declared,
                    limit,
                },
                declared_at,
            ));
        }
        usize::try_from(declared).map_err(|_| {
            Error::new(
                ErrorKind::SizeLimitExceeded {
                    size: declared,
                    limit,
                },
                declared_at,
            )
        })
    }

    fn decode_lz4(&self, out: &mut [u8], options: &DecompressOptions) -> Result<usize> {
        let size = self.check_lz4(options)?;
        let declared = self.uncompressed_size();
        let declared_at = self.offset.saturating_add(UNCOMPRESSED_SIZE_AT);
        let block = self.compressed();
        let available = crate::bytes::to_u64(out.len());
        let out = out.get_mut(..size).ok_or(Error::new(
            ErrorKind::OutputTooSmall {
                needed: declared,
                available,
            },
            declared_at,
        ))?;
        let decoded = lz4::decode(block, out).map_err(|(fault, at)| {
            Error::new(
                ErrorKind::CorruptLz4 { fault },
                self.payload_offset().saturating_add(at),
            )
        })?;
        match decoded {
            Decoded::Exact => Ok(size),
            Decoded::Long => Err(Error::new(
                ErrorKind::DecompressedTooLarge { declared },
                declared_at,
            )),
            Decoded::Short(actual) => Err(Error::new(
                ErrorKind::DecompressedTooSmall { declared, actual },
                declared_at,
            )),
        }
    }

    /// The entry's bytes, from which [`FatbinEntry::image`] (or a member's)
    /// is cut: the payload when stored, the stored bytes of an opaque entry
    /// ([`FatbinEntry::is_opaque`]: no frame to decode), else decoded
    /// ([`FatbinEntry::decompress`]).
    #[cfg(feature = "alloc")]
    pub fn contents(&self, options: &DecompressOptions) -> Result<alloc::borrow::Cow<'data, [u8]>> {
        use alloc::borrow::Cow;
        match self.compression() {
            _ if self.is_opaque() => Ok(Cow::Borrowed(self.compressed())),
            Compression::None => Ok(Cow::Borrowed(self.payload)),
            _ => self.decompress(options).map(Cow::Owned),
        }
    }

    /// Decodes a compressed payload into a new buffer of exactly the
    /// declared size (reserved after the checks, so a refused size
    /// allocates nothing); a stored payload is copied.
    #[cfg(feature = "alloc")]
    pub fn decompress(&self, options: &DecompressOptions) -> Result<alloc::vec::Vec<u8>> {
        if self.compression() == Compression::None {
            let mut out = crate::bytes::reserve(crate::bytes::to_u64(self.payload.len()))?;
            out.extend_from_slice(self.payload);
            return Ok(out);
        }
        if self.compression() == Compression::Zstd {
            return self
                .zstd_stream()
                .decode_to_vec(options, false)
                .map(|(out, _)| out)
                .map_err(|e| e.in_entry(self.index));
        }
        // LZ4 (or both flags, refused by the decoding): the size passes the
        // checks before memory is asked for.
        let size = match self.compression() {
            Compression::Lz4 => self
                .check_lz4(options)
                .map_err(|e| e.in_entry(self.index))?,
            _ => 0,
        };
        let mut out = crate::bytes::zeroed(crate::bytes::to_u64(size))?;
        self.decompress_into(&mut out, options)?;
        Ok(out)
    }

    /// The image `cuobjdump -xelf`/`-xptx` writes, from the entry's
    /// decoded bytes (its payload when stored): a cubin cut to the length
    /// its ELF headers give, PTX cut before its first NUL; other kinds
    /// unchanged. An ELF entry whose bytes are not an ELF file whose
    /// headers place everything inside them is [`ErrorKind::NotElf`], as
    /// cuobjdump refuses it ("Invalid ELF"), located at the payload.
    pub fn image<'d>(&self, decoded: &'d [u8]) -> Result<&'d [u8]> {
        self.located_image(self.kind(), decoded)
    }

    /// [`FatbinEntry::image`] of a member of this concat entry, from the
    /// entry's decoded bytes.
    pub fn member_image<'d>(
        &self,
        member: &super::ConcatMember<'_>,
        decoded: &'d [u8],
    ) -> Result<&'d [u8]> {
        let bytes = member.data(decoded).ok_or_else(|| {
            Error::out_of_bounds(
                crate::Field::ConcatMember,
                member.offset(),
                member.size(),
                crate::bytes::to_u64(decoded.len()),
                self.payload_offset(),
            )
            .in_entry(self.index)
        })?;
        self.located_image(member.kind(), bytes)
    }

    /// The image of `decoded` bytes of `kind`, with the fault located at
    /// the payload. A compressed entry's decoded size is exact, and so is
    /// a concat member's.
    fn located_image<'d>(&self, kind: EntryKind, decoded: &'d [u8]) -> Result<&'d [u8]> {
        let exact = self.compression() != Compression::None || self.kind() == EntryKind::Concat;
        image_cut(kind, decoded, exact).map_err(|fault| {
            let at = self.payload_offset();
            match fault {
                elf_extent::Fault::NotElf => Error::new(ErrorKind::NotElf, at),
                elf_extent::Fault::PastEnd { end } => Error::out_of_bounds(
                    crate::Field::ElfImage,
                    0,
                    end,
                    crate::bytes::to_u64(decoded.len()),
                    at,
                ),
            }
            .in_entry(self.index)
        })
    }
}

/// The extracted image of `decoded` bytes of this kind (see
/// [`FatbinEntry::image`]); `exact` when their size is declared (decoded
/// from a compressed entry, a concat member), not padded. `None` for an ELF
/// kind whose bytes are no ELF file, or, not `exact`, one whose headers
/// place bytes past them.
pub fn image_of(kind: EntryKind, decoded: &[u8], exact: bool) -> Option<&[u8]> {
    image_cut(kind, decoded, exact).ok()
}

fn image_cut(kind: EntryKind, decoded: &[u8], exact: bool) -> Result<&[u8], elf_extent::Fault> {
    match kind {
        EntryKind::Elf => elf_extent::cut(decoded, exact),
        EntryKind::Ptx => {
            let end = memchr::memchr(0, decoded).unwrap_or(decoded.len());
            Ok(decoded.get(..end).unwrap_or(decoded))
        }
        _ => Ok(decoded),
    }
}
