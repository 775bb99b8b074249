//! NVIDIA CUDA fat binaries (magic `50 ED 55 BA`): what `fatbinary` writes,
//! clang and nvcc embed in `.nv_fatbin` (and `__nv_relfatbin` for
//! relocatable device code), and `__cudaRegisterFatBinary` loads.
//!
//! ```text
//! fat binary header (16 B)
//! 0x00  u32 magic 0xBA55ED50        0x04  u16 version (1)
//! 0x06  u16 header size (16)        0x08  u64 fat size: the bytes of entries after it
//!
//! entry header (64 B, then an extension up to its header size)
//! 0x00  u16 kind (1 PTX, 2 ELF, 8 LTO-IR, 0x100 concat)
//! 0x02  u16 version (0x0101)        0x04  u32 header size
//! 0x08  u64 payload size (padded to 8; stored right after the header)
//! 0x10  u32 compressed size (0: stored)
//! 0x14  u32 options offset (from the entry start; 0: none)
//! 0x18  u16 minor  0x1A u16 major   0x1C  u32 arch (SM number, e.g. 90)
//! 0x20  u32 identifier offset       0x24  u32 identifier length
//! 0x28  u64 flags                   0x30  u64 reserved
//! 0x38  u64 uncompressed size (0: stored)
//! options record at the options offset: u32 offset, u32 length (of the
//! options bytes, from the entry start, NUL-terminated); in a concat entry
//! instead: u32 member count, u32 record length, then the members' headers.
//! ```
//!
//! NVIDIA documents only the 16-byte header; the rest was worked out against
//! bytes from `fatbinary`, `nvcc` and clang 22 and checked against
//! `cuobjdump` 13.5 (docs/architecture.md, docs/differences.md). Several
//! fat binaries lie back to back in a linked `.nv_fatbin` (one per
//! translation unit), possibly with zero padding between them: [`fatbins`]
//! walks them.
//!
//! [`Fatbin::parse`] checks the header and every entry header once (ranges
//! with checked arithmetic, identifier, options and concat member tables
//! inside their headers) without touching a payload byte, so listing costs
//! the same whatever the payloads weigh. Unknown kinds and flags are kept.

use core::fmt;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::back_to_back::BackToBack;
use crate::bytes::{range, to_u64};
use crate::{Error, ErrorKind, Field, Result};

mod decode;
mod elf_extent;
mod lz4;
#[cfg(feature = "alloc")]
mod lz4hc;
mod name;
#[cfg(feature = "alloc")]
pub mod ptx;
pub mod select;
#[cfg(feature = "alloc")]
mod writer;

pub use decode::{image_of, Compression};
pub use name::CodeName;
pub use select::{select_for_device, CudaMatch};
#[cfg(feature = "alloc")]
pub(crate) use writer::layout_overflow;
#[cfg(feature = "alloc")]
pub use writer::{
    prune, prune_fatbins, prune_in_place, write_fatbin, CompressMode, NewEntry, WriteOptions,
};

/// The magic that starts every fat binary, as a little-endian `u32`.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// The magic as it is stored.
pub const FATBIN_MAGIC_BYTES: &[u8; 4] = &FATBIN_MAGIC.to_le_bytes();

/// The size of the fat binary header, the only one `cuobjdump` accepts.
pub const FATBIN_HEADER_SIZE: u64 = 16;

/// The size of an entry header without its extension.
pub const ENTRY_HEADER_SIZE: u64 = 64;

/// Flag 0x1: 64-bit device code.
pub const FLAG_64BIT: u64 = 0x1;
/// Flag 0x2: debug code (`-g`, `nvcc -G`).
pub const FLAG_DEBUG: u64 = 0x2;
/// Flag 0x10: built on a Linux host.
pub const FLAG_HOST_LINUX: u64 = 0x10;
/// Flag 0x20: built on a macOS host.
pub const FLAG_HOST_MAC: u64 = 0x20;
/// Flag 0x40: built on a Windows host.
pub const FLAG_HOST_WINDOWS: u64 = 0x40;
/// Flag 0x2000: the payload is an LZ4 block.
pub const FLAG_LZ4: u64 = 0x2000;
/// Flag 0x8000: the payload is a zstd frame.
pub const FLAG_ZSTD: u64 = 0x8000;
/// Flag 0x10000: seen on nvcc `-dlto` LTO-IR entries, whose payload is opaque.
pub const FLAG_OPAQUE_LTO: u64 = 0x1_0000;
/// Flag 0x100000: arch-specific code (`sm_90a`), runs on that SM only.
pub const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
/// Flag 0x200000: family-specific code (`sm_100f`).
pub const FLAG_FAMILY_SPECIFIC: u64 = 0x20_0000;
/// Flag 0x1000000: an sm_100+ ELF entry with a binary options blob.
pub const FLAG_BINARY_OPTIONS: u64 = 0x100_0000;

/// The fat binary header.
#[derive(Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FatbinHeader {
    /// [`FATBIN_MAGIC`].
    pub magic: U32,
    /// 1 (`cuobjdump` also reads 2).
    pub version: U16,
    /// 16.
    pub header_size: U16,
    /// The bytes of entries after the header.
    pub fat_size: U64,
}
const _: () = assert!(core::mem::size_of::<FatbinHeader>() == 16);

/// The fixed part of an entry header (also a `--concat` member's header).
#[derive(Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct EntryHeader {
    /// [`EntryKind`] as stored.
    pub kind: U16,
    /// 0x0101.
    pub version: U16,
    /// The header's size, extension included (a concat member: its offset
    /// in the entry's decoded bytes).
    pub header_size: U32,
    /// The bytes after the header, padded to 8.
    pub payload_size: U64,
    /// The compressed stream's exact size; 0 when stored.
    pub compressed_size: U32,
    /// The options record's offset from the entry start; 0 when none.
    pub options_offset: U32,
    /// Minor version of the code (PTX ISA, cubin ABI).
    pub minor: U16,
    /// Major version of the code.
    pub major: U16,
    /// The SM number (`a`/`f` variants are flags).
    pub arch: U32,
    /// The identifier's offset from the entry start; 0 when none.
    pub identifier_offset: U32,
    /// The identifier's length, without its NUL.
    pub identifier_length: U32,
    /// Flags (`FLAG_*`; unknown bits kept).
    pub flags: U64,
    /// 0, except on nvcc `-dlto` LTO-IR entries.
    pub reserved: U64,
    /// The decoded size; 0 when stored.
    pub uncompressed_size: U64,
}
const _: () = assert!(core::mem::size_of::<EntryHeader>() == 64);

/// The record an options offset points at.
#[derive(Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct OptionsRecord {
    /// The options' offset from the entry start (a concat entry: the
    /// member count).
    pub offset: U32,
    /// The options' length without the NUL (a concat entry: the record's
    /// length, these 8 bytes included).
    pub length: U32,
}
const _: () = assert!(core::mem::size_of::<OptionsRecord>() == 8);

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// 1: PTX text, NUL-terminated.
    Ptx,
    /// 2: a cubin (ELF).
    Elf,
    /// 8: NVVM IR / LTO-IR.
    LtoIr,
    /// 0x100: several images in one (compressed) payload (`--concat`).
    Concat,
    /// Any other value, kept as stored.
    Unknown(u16),
}

impl EntryKind {
    /// The kind a stored value names.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            1 => EntryKind::Ptx,
            2 => EntryKind::Elf,
            8 => EntryKind::LtoIr,
            0x100 => EntryKind::Concat,
            other => EntryKind::Unknown(other),
        }
    }

    /// The stored value.
    pub fn raw(self) -> u16 {
        match self {
            EntryKind::Ptx => 1,
            EntryKind::Elf => 2,
            EntryKind::LtoIr => 8,
            EntryKind::Concat => 0x100,
            EntryKind::Unknown(raw) => raw,
        }
    }

    /// A short name: `ptx`, `elf`, `ltoir`, `concat`, `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Ptx => "ptx",
            EntryKind::Elf => "elf",
            EntryKind::LtoIr => "ltoir",
            EntryKind::Concat => "concat",
            EntryKind::Unknown(_) => "unknown",
        }
    }
}

/// Which devices code for an SM is specific to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SmVariant {
    /// Plain (`sm_90`).
    Plain,
    /// Family-specific (`sm_100f`, flag 0x200000).
    Family,
    /// Arch-specific (`sm_90a`, flag 0x100000).
    Arch,
}

/// An SM as a fat binary names it: the number and the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sm {
    /// The SM number: major × 10 + minor (`90`, `100`, `121`).
    pub number: u32,
    /// Plain, `a` or `f`.
    pub variant: SmVariant,
}

impl Sm {
    /// The SM of an entry with this arch and these flags (`a` wins if both
    /// flags are set).
    pub fn from_entry(arch: u32, flags: u64) -> Self {
        let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
            SmVariant::Arch
        } else if flags & FLAG_FAMILY_SPECIFIC != 0 {
            SmVariant::Family
        } else {
            SmVariant::Plain
        };
        Sm {
            number: arch,
            variant,
        }
    }

    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_80` or a bare number
    /// (`86`).
    pub fn parse(text: &str) -> Option<Self> {
        let digits = text
            .strip_prefix("sm_")
            .or_else(|| text.strip_prefix("compute_"))
            .unwrap_or(text);
        let (digits, variant) = match digits.as_bytes().last() {
            Some(b'a') => (digits.strip_suffix('a')?, SmVariant::Arch),
            Some(b'f') => (digits.strip_suffix('f')?, SmVariant::Family),
            _ => (digits, SmVariant::Plain),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Sm {
            number: digits.parse().ok()?,
            variant,
        })
    }

    /// The major compute capability (`9` for sm_90, `12` for sm_121).
    pub fn major(self) -> u32 {
        self.number.checked_div(10).unwrap_or(0)
    }

    /// The minor compute capability.
    pub fn minor(self) -> u32 {
        self.number.checked_rem(10).unwrap_or(0)
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            SmVariant::Plain => "",
            SmVariant::Family => "f",
            SmVariant::Arch => "a",
        };
        write!(f, "sm_{}{suffix}", self.number)
    }
}

/// A parsed fat binary over a borrowed buffer, cut to its own extent
/// (header plus fat size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fatbin<'data> {
    data: &'data [u8],
    header: &'data FatbinHeader,
}

/// One entry of a fat binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatbinEntry<'data> {
    header: &'data EntryHeader,
    /// The whole header, extension included.
    header_bytes: &'data [u8],
    payload: &'data [u8],
    offset: u64,
    index: u64,
}

impl<'data> Fatbin<'data> {
    /// Whether `data` starts with the fat binary magic.
    pub fn is_fatbin(data: &[u8]) -> bool {
        data.starts_with(FATBIN_MAGIC_BYTES)
    }

    /// The extent a fat binary at the start of `data` declares (header plus
    /// fat size), from its header alone; `data` may end before it.
    pub fn declared_size(data: &[u8]) -> Result<u64> {
        let header = Self::header(data)?;
        FATBIN_HEADER_SIZE
            .checked_add(header.fat_size.get())
            .ok_or_else(|| out_of_bounds(Field::FatbinHeader, 8, header.fat_size.get(), data))
    }

    fn header(data: &[u8]) -> Result<&FatbinHeader> {
        if !Self::is_fatbin(data) {
            return Err(Error::new(ErrorKind::NotFatbin, 0));
        }
        let header = FatbinHeader::ref_from_prefix(data)
            .map_err(|_| truncated(Field::FatbinHeader, FATBIN_HEADER_SIZE, data.len(), 0))?
            .0;
        let size = u64::from(header.header_size.get());
        if size != FATBIN_HEADER_SIZE {
            return Err(Error::new(
                ErrorKind::BadHeaderSize {
                    size,
                    expected: FATBIN_HEADER_SIZE,
                },
                6,
            ));
        }
        Ok(header)
    }

    /// Parses the fat binary at the start of `data` and checks every entry
    /// header. Bytes after its extent are not part of it ([`fatbins`] walks
    /// several back to back). Errors are located from the start of `data`.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let header = Self::header(data)?;
        let fat_size = header.fat_size.get();
        let extent = FATBIN_HEADER_SIZE.checked_add(fat_size);
        let data = extent
            .and_then(|extent| range(data, 0, extent))
            .ok_or_else(|| {
                out_of_bounds(Field::FatbinHeader, FATBIN_HEADER_SIZE, fat_size, data)
            })?;
        let fatbin = Fatbin { data, header };
        let mut offset = FATBIN_HEADER_SIZE;
        let mut index = 0u64;
        while offset < to_u64(data.len()) {
            let entry = fatbin.entry_at(offset, index)?;
            offset = entry.end();
            index = index.saturating_add(1);
        }
        Ok(fatbin)
    }

    /// Reads and checks the entry at `offset` (of the container).
    fn entry_at(&self, offset: u64, index: u64) -> Result<FatbinEntry<'data>> {
        let locate = |e: Error| e.in_entry(index);
        let rest = self
            .data
            .get(usize::try_from(offset).unwrap_or(usize::MAX)..);
        let rest = rest.unwrap_or_default();
        let header = EntryHeader::ref_from_prefix(rest)
            .map_err(|_| {
                locate(truncated(
                    Field::FatbinEntryHeader,
                    ENTRY_HEADER_SIZE,
                    rest.len(),
                    offset,
                ))
            })?
            .0;
        let header_size = u64::from(header.header_size.get());
        if header_size < ENTRY_HEADER_SIZE {
            return Err(locate(Error::new(
                ErrorKind::BadHeaderSize {
                    size: header_size,
                    expected: ENTRY_HEADER_SIZE,
                },
                offset.saturating_add(4),
            )));
        }
        let header_bytes = range(rest, 0, header_size).ok_or_else(|| {
            locate(out_of_bounds(Field::FatbinEntryExtension, 0, header_size, rest).shifted(offset))
        })?;
        let payload_size = header.payload_size.get();
        let payload = range(rest, header_size, payload_size).ok_or_else(|| {
            locate(
                out_of_bounds(Field::FatbinPayload, header_size, payload_size, rest)
                    .shifted(offset),
            )
        })?;
        let entry = FatbinEntry {
            header,
            header_bytes,
            payload,
            offset,
            index,
        };
        entry.check().map_err(|e| locate(e.shifted(offset)))?;
        Ok(entry)
    }

    /// The fat binary's bytes, header included.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The header as stored.
    pub fn raw_header(&self) -> &'data FatbinHeader {
        self.header
    }

    /// The header's version (1).
    pub fn version(&self) -> u16 {
        self.header.version.get()
    }

    /// The header's size (16).
    pub fn header_size(&self) -> u16 {
        self.header.header_size.get()
    }

    /// The bytes of entries after the header.
    pub fn fat_size(&self) -> u64 {
        self.header.fat_size.get()
    }

    /// The entries in file order.
    pub fn entries(&self) -> FatbinEntries<'data> {
        FatbinEntries {
            fatbin: *self,
            offset: FATBIN_HEADER_SIZE,
            index: 0,
        }
    }
}

/// Iterator over a fat binary's entries, all checked by [`Fatbin::parse`].
#[derive(Debug, Clone)]
pub struct FatbinEntries<'data> {
    fatbin: Fatbin<'data>,
    offset: u64,
    index: u64,
}

impl<'data> Iterator for FatbinEntries<'data> {
    type Item = FatbinEntry<'data>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= to_u64(self.fatbin.data.len()) {
            return None;
        }
        // Parsing checked every entry: this cannot fail, and if it did the
        // iteration would end rather than spin.
        let entry = self.fatbin.entry_at(self.offset, self.index).ok()?;
        self.offset = entry.end();
        self.index = self.index.saturating_add(1);
        Some(entry)
    }
}

impl<'data> FatbinEntry<'data> {
    /// The checks on the header's own ranges; errors located from the entry
    /// start.
    fn check(&self) -> Result<()> {
        let compressed = u64::from(self.header.compressed_size.get());
        let payload = to_u64(self.payload.len());
        if self.compression() != Compression::None && compressed > payload {
            return Err(Error::new(
                ErrorKind::CompressedSizeTooLarge {
                    compressed,
                    payload,
                },
                0x10,
            ));
        }
        self.identifier_checked()?;
        if self.kind() == EntryKind::Concat {
            self.members_checked()?
                .try_for_each(|member| member.map(drop))
        } else {
            self.options_checked().map(drop)
        }
    }

    /// Offset of the entry in its fat binary.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Index of the entry in its fat binary.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Where the next entry starts.
    fn end(&self) -> u64 {
        let len = to_u64(self.header_bytes.len()).saturating_add(to_u64(self.payload.len()));
        self.offset.saturating_add(len)
    }

    /// The fixed header fields as stored.
    pub fn raw_header(&self) -> &'data EntryHeader {
        self.header
    }

    /// The whole header, extension included (identifier, options, member
    /// table, and bytes no field names).
    pub fn header_bytes(&self) -> &'data [u8] {
        self.header_bytes
    }

    /// What the entry holds.
    pub fn kind(&self) -> EntryKind {
        EntryKind::from_raw(self.header.kind.get())
    }

    /// The header's version field (0x0101).
    pub fn version(&self) -> u16 {
        self.header.version.get()
    }

    /// The header's size, extension included.
    pub fn header_size(&self) -> u32 {
        self.header.header_size.get()
    }

    /// The payload size (padded to 8).
    pub fn payload_size(&self) -> u64 {
        self.header.payload_size.get()
    }

    /// The compressed stream's size (0 when stored).
    pub fn compressed_size(&self) -> u32 {
        self.header.compressed_size.get()
    }

    /// The decoded size (0 when stored).
    pub fn uncompressed_size(&self) -> u64 {
        self.header.uncompressed_size.get()
    }

    /// The options record's offset (0 when none).
    pub fn options_offset(&self) -> u32 {
        self.header.options_offset.get()
    }

    /// The code's (major, minor) version: PTX ISA or cubin ABI.
    pub fn code_version(&self) -> (u16, u16) {
        (self.header.major.get(), self.header.minor.get())
    }

    /// The arch field: the SM number without its variant.
    pub fn arch(&self) -> u32 {
        self.header.arch.get()
    }

    /// The SM with its `a`/`f` variant.
    pub fn sm(&self) -> Sm {
        Sm::from_entry(self.arch(), self.flags())
    }

    /// The flags, unknown bits included.
    pub fn flags(&self) -> u64 {
        self.header.flags.get()
    }

    /// Whether its payload is opaque (flag 0x10000, nvcc `-dlto`'s LTO-IR):
    /// flagged as compressed, but no zstd frame; not decoded, only copied.
    pub fn is_opaque(&self) -> bool {
        self.flags() & FLAG_OPAQUE_LTO != 0
    }

    /// The reserved field at 0x30.
    pub fn reserved(&self) -> u64 {
        self.header.reserved.get()
    }

    /// The payload as stored (compressed or not, with its padding).
    pub fn payload(&self) -> &'data [u8] {
        self.payload
    }

    /// The identifier (`fatbinary --ident`, nvcc `-G`'s source name).
    pub fn identifier(&self) -> Option<&'data [u8]> {
        self.identifier_checked().ok().flatten()
    }

    fn identifier_checked(&self) -> Result<Option<&'data [u8]>> {
        let (offset, len) = (
            self.header.identifier_offset.get(),
            self.header.identifier_length.get(),
        );
        if offset == 0 && len == 0 {
            return Ok(None);
        }
        let (offset, len) = (u64::from(offset), u64::from(len));
        range(self.header_bytes, offset, len)
            .map(Some)
            .ok_or_else(|| out_of_bounds(Field::FatbinIdentifier, offset, len, self.header_bytes))
    }

    /// The options (ptxas options of a PTX entry, nvvm options of an LTO-IR
    /// entry, a binary blob on sm_100+ ELF entries), without the NUL; `None`
    /// when the entry has no options record, or is a concat entry.
    pub fn options(&self) -> Option<&'data [u8]> {
        if self.kind() == EntryKind::Concat {
            return None;
        }
        self.options_checked().ok().flatten()
    }

    fn options_checked(&self) -> Result<Option<&'data [u8]>> {
        let Some(record) = self.options_record()? else {
            return Ok(None);
        };
        let (offset, len) = (
            u64::from(record.offset.get()),
            u64::from(record.length.get()),
        );
        range(self.header_bytes, offset, len)
            .map(Some)
            .ok_or_else(|| out_of_bounds(Field::FatbinOptions, offset, len, self.header_bytes))
    }

    /// The record at the options offset, checked to lie in the header.
    fn options_record(&self) -> Result<Option<&'data OptionsRecord>> {
        let offset = u64::from(self.options_offset());
        if offset == 0 {
            return Ok(None);
        }
        let bytes = range(self.header_bytes, offset, 8)
            .ok_or_else(|| out_of_bounds(Field::FatbinOptions, offset, 8, self.header_bytes))?;
        Ok(OptionsRecord::ref_from_bytes(bytes).ok())
    }

    /// The members of a concat entry (none for other kinds), all checked by
    /// [`Fatbin::parse`].
    pub fn members(&self) -> impl Iterator<Item = ConcatMember<'data>> + 'data {
        let members = if self.kind() == EntryKind::Concat {
            self.members_checked().ok()
        } else {
            None
        };
        members.into_iter().flatten().map_while(Result::ok)
    }

    fn members_checked(&self) -> Result<ConcatMembers<'data>> {
        let Some(record) = self.options_record()? else {
            return Ok(ConcatMembers::empty(self.header_bytes));
        };
        let at = u64::from(self.options_offset());
        let len = u64::from(record.length.get());
        let table = range(self.header_bytes, at, len)
            .filter(|_| len >= 8)
            .ok_or_else(|| out_of_bounds(Field::ConcatMembers, at, len, self.header_bytes))?;
        Ok(ConcatMembers {
            table,
            base: at,
            pos: 8,
            left: record.offset.get(),
            decoded_len: self.decoded_len(),
            index: 0,
        })
    }

    /// How many bytes the payload decodes to: the uncompressed size, or the
    /// payload size when stored.
    pub fn decoded_len(&self) -> u64 {
        match self.compression() {
            Compression::None => to_u64(self.payload.len()),
            _ => self.uncompressed_size(),
        }
    }
}

/// One image in a concat entry: its header as stored and its range in the
/// entry's decoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConcatMember<'data> {
    /// The member's header (its `header_size` field is its offset).
    pub header: &'data EntryHeader,
    /// The member's header, extension included.
    pub header_bytes: &'data [u8],
    /// Index of the member in its entry.
    pub index: u64,
}

impl<'data> ConcatMember<'data> {
    /// What the member holds.
    pub fn kind(&self) -> EntryKind {
        EntryKind::from_raw(self.header.kind.get())
    }

    /// The SM with its variant.
    pub fn sm(&self) -> Sm {
        Sm::from_entry(self.header.arch.get(), self.header.flags.get())
    }

    /// Offset of the member in the entry's decoded bytes.
    pub fn offset(&self) -> u64 {
        u64::from(self.header.header_size.get())
    }

    /// Size of the member (padded to 8).
    pub fn size(&self) -> u64 {
        self.header.payload_size.get()
    }

    /// The member's bytes in its entry's decoded bytes.
    pub fn data<'d>(&self, decoded: &'d [u8]) -> Option<&'d [u8]> {
        range(decoded, self.offset(), self.size())
    }

    /// The member's identifier, if its header has one inside it.
    pub fn identifier(&self) -> Option<&'data [u8]> {
        let offset = u64::from(self.header.identifier_offset.get());
        let len = u64::from(self.header.identifier_length.get());
        (len != 0)
            .then(|| range(self.header_bytes, offset, len))
            .flatten()
    }
}

/// The member table of a concat entry: headers of 64 bytes plus an
/// extension whose length follows from the identifier and options they
/// point at (each NUL-terminated and padded to 8), as `fatbinary` writes it.
#[derive(Debug, Clone)]
struct ConcatMembers<'data> {
    table: &'data [u8],
    /// Offset of the table in the entry header.
    base: u64,
    pos: u64,
    left: u32,
    decoded_len: u64,
    index: u64,
}

impl<'data> ConcatMembers<'data> {
    fn empty(table: &'data [u8]) -> Self {
        ConcatMembers {
            table,
            base: 0,
            pos: 0,
            left: 0,
            decoded_len: 0,
            index: 0,
        }
    }

    fn next_member(&mut self) -> Result<ConcatMember<'data>> {
        let at = self.pos;
        let member_bytes = range(self.table, at, ENTRY_HEADER_SIZE)
            .ok_or_else(|| self.error(at, ENTRY_HEADER_SIZE))?;
        let header = EntryHeader::ref_from_bytes(member_bytes)
            .map_err(|_| self.error(at, ENTRY_HEADER_SIZE))?;
        let len = member_header_len(header, self.table, at)
            .ok_or_else(|| self.error(at, ENTRY_HEADER_SIZE))?;
        let header_bytes = range(self.table, at, len).ok_or_else(|| self.error(at, len))?;
        let member = ConcatMember {
            header,
            header_bytes,
            index: self.index,
        };
        let end = member.offset().checked_add(member.size());
        if end.is_none_or(|end| end > self.decoded_len) {
            return Err(Error::out_of_bounds(
                Field::ConcatMember,
                member.offset(),
                member.size(),
                self.decoded_len,
                self.base.saturating_add(at).saturating_add(4),
            ));
        }
        self.pos = at.saturating_add(len);
        Ok(member)
    }

    fn error(&self, at: u64, size: u64) -> Error {
        Error::out_of_bounds(
            Field::ConcatMembers,
            at,
            size,
            to_u64(self.table.len()),
            self.base.saturating_add(at),
        )
    }
}

impl<'data> Iterator for ConcatMembers<'data> {
    type Item = Result<ConcatMember<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        let member = self.next_member();
        match &member {
            Ok(_) => self.index = self.index.saturating_add(1),
            Err(_) => self.left = 0,
        }
        Some(member)
    }
}

/// A concat member header's length: 64 bytes, or up to the end of its
/// identifier or options (NUL included, padded to 8) when they lie beyond.
/// `table` holds the member at `at`.
fn member_header_len(header: &EntryHeader, table: &[u8], at: u64) -> Option<u64> {
    let pad_end = |offset: u64, len: u64| -> Option<u64> {
        let end = offset.checked_add(len)?.checked_add(1)?;
        end.checked_add(7).map(|e| e & !7)
    };
    let mut len = ENTRY_HEADER_SIZE;
    let id_len = u64::from(header.identifier_length.get());
    if id_len != 0 {
        len = len.max(pad_end(u64::from(header.identifier_offset.get()), id_len)?);
    }
    let options = u64::from(header.options_offset.get());
    if options != 0 {
        let record = range(table, at.checked_add(options)?, 8)?;
        let record = OptionsRecord::ref_from_bytes(record).ok()?;
        len = len.max(options.checked_add(8)?);
        len = len.max(pad_end(
            u64::from(record.offset.get()),
            u64::from(record.length.get()),
        )?);
    }
    Some(len)
}

/// Iterator over fat binaries laid back to back (a linked `.nv_fatbin`),
/// each with its offset, skipping zero bytes between and after them as
/// `cuobjdump` does. Anything else where a fat binary should start ends
/// the walk with a located error.
#[derive(Debug, Clone)]
pub struct Fatbins<'data>(BackToBack<'data, Fatbin<'data>>);

/// Walks the fat binaries in `data` (offsets relative to `data`).
pub fn fatbins(data: &[u8]) -> Fatbins<'_> {
    Fatbins(BackToBack::at(data, 0, Fatbin::parse, |fatbin| {
        fatbin.data().len()
    }))
}

impl<'data> Iterator for Fatbins<'data> {
    type Item = Result<(u64, Fatbin<'data>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

fn truncated(field: Field, needed: u64, available: usize, at: u64) -> Error {
    Error::truncated(field, needed, to_u64(available), at)
}

/// `[offset, +size)` does not lie in `within`; located at the range's start
/// field (the caller shifts it).
fn out_of_bounds(field: Field, offset: u64, size: u64, within: &[u8]) -> Error {
    Error::out_of_bounds(
        field,
        offset,
        size,
        to_u64(within.len()),
        match field {
            Field::FatbinHeader => 8,
            Field::FatbinEntryExtension => 4,
            Field::FatbinPayload => 8,
            Field::FatbinIdentifier => 0x20,
            Field::FatbinOptions | Field::ConcatMembers => 0x14,
            _ => offset,
        },
    )
}

#[cfg(all(test, feature = "alloc"))]
mod tests;
