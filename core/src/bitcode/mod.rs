//! LLVM bitcode, as far as an archive index needs it: the top level of the
//! bitstream container (where the modules are, and the two blocks that hold
//! the symbol table), and that symbol table, LLVM's "irsymtab", which clang
//! writes beside every module so that linkers and archivers need not read the
//! IR.
//!
//! ```text
//! wrapper (optional)  u32 LE magic 0x0B17C0DE, u32 version, u32 offset, u32 size,
//!                     (u32 CPU type): the bitstream is the `size` bytes at `offset`
//! bitstream           'B' 'C' C0 DE, then abbreviation IDs of the block's width
//!                     (2 bits at the top level); bits are taken from the low end
//!                     of each byte, vbrN is N-bit chunks whose top bit says "more"
//!   0 END_BLOCK       align to 32 bits
//!   1 ENTER_SUBBLOCK  vbr8 block ID, vbr4 abbreviation width, align to 32 bits,
//!                     u32 length in 32-bit words, the contents, END_BLOCK
//!   2 DEFINE_ABBREV   vbr5 operand count; per operand 1 bit "literal": vbr8 value,
//!                     else 3 bits encoding: 1 fixed (vbr5 width), 2 vbr (vbr5
//!                     width), 3 array (the next operand is its element), 4 char6,
//!                     5 blob
//!   3 UNABBREV_RECORD vbr6 code, vbr6 operand count, vbr6 operands
//!   4..               (in a block) a record in the shape of the block's
//!                     abbreviation 4, 5, ...; a blob is vbr6 length, align to
//!                     32 bits, the bytes, align to 32 bits
//! top-level blocks    13 IDENTIFICATION (always followed by its 8 MODULE), 8 MODULE,
//!                     25 SYMTAB (record 1: a blob, the irsymtab),
//!                     23 STRTAB (record 1: a blob, the irsymtab's strings)
//!
//! irsymtab (u32 LE words; Str = {offset, size} in STRTAB's blob,
//!           Range = {offset, count} of records in the irsymtab itself)
//!   header, 76 B      version (3), Str producer, Range modules (12 B each),
//!                     Range comdats, Range symbols (24 B each), Range uncommons,
//!                     Str target triple, Str source file name,
//!                     Str COFF linker options, Range dependent libraries
//!   symbol, 24 B      Str name, Str IR name, comdat index, flags (bits: see
//!                     [`irsymtab::storage::Symbol`])
//! ```
//!
//! [`BitcodeFileContents::parse`] walks the top level as LLVM 22's
//! `getBitcodeFileContents` does: modules are counted and skipped by their
//! length, the first symbol table is kept with the first string table after
//! it, other blocks are skipped, and the walk stops when 8 bytes or fewer are
//! left. Reading allocates nothing; every fault is an error located in the
//! input. [`BitcodeFileContents::current_symtab`] gives the symbol table when
//! LLVM 22 would use it as it is, and [`irsymtab::Reader`] reads it.

use core::fmt;

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64};
use crate::{Error, ErrorKind, Field, Result};

/// The magic that starts a bitstream: `BC C0 DE`.
pub const BITCODE_MAGIC: &[u8; 4] = b"BC\xC0\xDE";

/// The magic of the wrapper header some bitcode files start with
/// (0x0B17C0DE, little-endian).
pub const WRAPPER_MAGIC: &[u8; 4] = &[0xDE, 0xC0, 0x17, 0x0B];

/// The block of a module's IR.
pub const MODULE_BLOCK_ID: u64 = 8;
/// The block naming the producer, before each module.
pub const IDENTIFICATION_BLOCK_ID: u64 = 13;
/// The block of the string table.
pub const STRTAB_BLOCK_ID: u64 = 23;
/// The block of the symbol table (irsymtab).
pub const SYMTAB_BLOCK_ID: u64 = 25;
/// The record of [`STRTAB_BLOCK_ID`] whose blob is the string table.
pub const STRTAB_BLOB: u64 = 1;
/// The record of [`SYMTAB_BLOCK_ID`] whose blob is the symbol table.
pub const SYMTAB_BLOB: u64 = 1;

/// The fields of the wrapper header LLVM reads (a fifth, the CPU type,
/// follows them).
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitcodeWrapperHeader {
    /// [`WRAPPER_MAGIC`].
    pub magic: [u8; 4],
    /// The wrapper's version (0).
    pub version: U32,
    /// Offset of the bitstream in the file.
    pub offset: U32,
    /// Size of the bitstream.
    pub size: U32,
}
const _: () = assert!(core::mem::size_of::<BitcodeWrapperHeader>() == 16);

/// The widest fixed or VBR field, and the widest abbreviation ID, that LLVM
/// reads (its `BitstreamCursor::MaxChunkSize`).
const MAX_CHUNK_SIZE: u64 = 32;

/// The most abbreviations one block may define here. LLVM's writer defines
/// one in each block this reader enters; a crafted block with more is an
/// error ([`BitcodeFault::TooManyAbbrevs`]) rather than an allocation.
pub const MAX_ABBREVS: usize = 64;

/// Whether `data` starts as LLVM bitcode, bare or wrapped (what LLVM's
/// `identify_magic` calls bitcode).
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(BITCODE_MAGIC) || data.starts_with(WRAPPER_MAGIC)
}

/// What is wrong with a bitcode file, in [`ErrorKind::MalformedBitcode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BitcodeFault {
    /// The file's length is not a multiple of 4 bytes (LLVM: "Invalid
    /// bitcode signature").
    LengthNotMultipleOf4 {
        /// The length.
        len: u64,
    },
    /// The wrapper's bitstream reaches past the end of the file.
    WrapperOutOfBounds {
        /// The wrapper's offset field.
        offset: u64,
        /// The wrapper's size field.
        size: u64,
        /// Length of the file.
        len: u64,
    },
    /// A read runs past the end of the bitstream.
    UnexpectedEnd,
    /// A variable-width number runs over 32 (or 64) bits.
    UnterminatedVbr,
    /// An END_BLOCK outside any block.
    EndBlockAtTopLevel,
    /// An identification block that no module block follows.
    IdentificationWithoutModule,
    /// A block's abbreviation width is 0 or over 32 bits.
    BadAbbrevWidth {
        /// The width.
        width: u64,
    },
    /// A block's length runs past the end of the bitstream.
    BlockOutOfBounds {
        /// The length, in 32-bit words.
        words: u64,
    },
    /// An abbreviation with no operands.
    EmptyAbbrev,
    /// An abbreviation operand's encoding is not 1 to 5.
    InvalidEncoding {
        /// The encoding.
        encoding: u64,
    },
    /// A fixed or VBR operand wider than 32 bits.
    OperandTooWide {
        /// The width.
        width: u64,
    },
    /// A block defines more abbreviations than [`MAX_ABBREVS`].
    TooManyAbbrevs,
    /// A record names an abbreviation its block has not defined.
    UnknownAbbrev {
        /// The abbreviation ID.
        id: u64,
    },
    /// An abbreviation whose first operand, the record code, is an array or
    /// a blob.
    ArrayOrBlobCode,
    /// An array operand that is not the second to last, or whose element is
    /// not a fixed, VBR or char6 operand.
    BadArray,
    /// A blob runs past the end of the bitstream.
    BlobOutOfBounds {
        /// The blob's length.
        size: u64,
    },
    /// A range of symbol table records does not lie inside the symbol table.
    RangeOutOfBounds {
        /// The range's offset.
        offset: u64,
        /// Its number of records.
        count: u64,
        /// Size of the symbol table.
        size: u64,
    },
    /// A string of the symbol table does not lie inside the string table.
    StringOutOfBounds {
        /// The string's offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// Size of the string table.
        strtab_size: u64,
    },
}

impl fmt::Display for BitcodeFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BitcodeFault::LengthNotMultipleOf4 { len } => {
                write!(f, "length {len} is not a multiple of 4")
            }
            BitcodeFault::WrapperOutOfBounds { offset, size, len } => write!(
                f,
                "wrapper's bitstream [{offset:#x}, +{size:#x}) ends past the end of the file ({len:#x} bytes)"
            ),
            BitcodeFault::UnexpectedEnd => f.write_str("unexpected end of the bitstream"),
            BitcodeFault::UnterminatedVbr => f.write_str("variable-width number too long"),
            BitcodeFault::EndBlockAtTopLevel => f.write_str("END_BLOCK outside any block"),
            BitcodeFault::IdentificationWithoutModule => {
                f.write_str("identification block not followed by a module block")
            }
            BitcodeFault::BadAbbrevWidth { width } => {
                write!(f, "abbreviation width {width} is not 1 to 32")
            }
            BitcodeFault::BlockOutOfBounds { words } => write!(
                f,
                "block of {words} words runs past the end of the bitstream"
            ),
            BitcodeFault::EmptyAbbrev => f.write_str("abbreviation with no operands"),
            BitcodeFault::InvalidEncoding { encoding } => {
                write!(f, "invalid abbreviation operand encoding {encoding}")
            }
            BitcodeFault::OperandTooWide { width } => {
                write!(f, "abbreviation operand of {width} bits (at most 32)")
            }
            BitcodeFault::TooManyAbbrevs => write!(
                f,
                "more than {MAX_ABBREVS} abbreviations in one block"
            ),
            BitcodeFault::UnknownAbbrev { id } => write!(f, "undefined abbreviation {id}"),
            BitcodeFault::ArrayOrBlobCode => {
                f.write_str("abbreviation starts with an array or a blob")
            }
            BitcodeFault::BadArray => f.write_str(
                "array operand not second to last, or its element not fixed, VBR or char6",
            ),
            BitcodeFault::BlobOutOfBounds { size } => write!(
                f,
                "blob of {size} bytes runs past the end of the bitstream"
            ),
            BitcodeFault::RangeOutOfBounds {
                offset,
                count,
                size,
            } => write!(
                f,
                "{count} records at offset {offset} do not fit in the {size}-byte symbol table"
            ),
            BitcodeFault::StringOutOfBounds {
                offset,
                size,
                strtab_size,
            } => write!(
                f,
                "string at offset {offset} with size {size} lies outside the {strtab_size}-byte string table"
            ),
        }
    }
}

fn malformed(fault: BitcodeFault, offset: u64) -> Error {
    Error::new(ErrorKind::MalformedBitcode { fault }, offset)
}

/// A blob and its offset in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Blob<'data> {
    data: &'data [u8],
    offset: u64,
}

impl Blob<'_> {
    const EMPTY: Blob<'static> = Blob {
        data: &[],
        offset: 0,
    };
}

/// What LLVM reads from a bitcode file's top level before it reads any IR
/// (its `BitcodeFileContents`): how many modules there are, and the symbol
/// table with the string table that serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitcodeFileContents<'data> {
    module_count: u64,
    symtab: Blob<'data>,
    strtab_for_symtab: Blob<'data>,
}

impl<'data> BitcodeFileContents<'data> {
    /// Walks the top level of a bitcode file (bare or wrapped).
    ///
    /// Input that does not start with either magic is
    /// [`ErrorKind::NotBitcode`]; a bitstream shorter than its magic,
    /// [`ErrorKind::Truncated`]; any other fault,
    /// [`ErrorKind::MalformedBitcode`], at the byte where the read that
    /// failed began.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let (stream, base) = bitstream(data)?;
        let mut bits = BitCursor {
            data: stream,
            bit: 32,
            base,
        };
        let mut contents = BitcodeFileContents {
            module_count: 0,
            symtab: Blob::EMPTY,
            strtab_for_symtab: Blob::EMPTY,
        };
        // LLVM stops where no further module could fit (it allows trailing
        // garbage, as Apple's ar leaves).
        while bits.byte().saturating_add(8) < to_u64(stream.len()) {
            let Some(id) = next_top_level_block(&mut bits)? else {
                continue;
            };
            match id {
                IDENTIFICATION_BLOCK_ID => {
                    bits.skip_block()?;
                    let next = bits.bit;
                    if next_top_level_block(&mut bits)? != Some(MODULE_BLOCK_ID) {
                        return Err(bits.fault(next, BitcodeFault::IdentificationWithoutModule));
                    }
                    bits.skip_block()?;
                    contents.module_count = contents.module_count.saturating_add(1);
                }
                MODULE_BLOCK_ID => {
                    bits.skip_block()?;
                    contents.module_count = contents.module_count.saturating_add(1);
                }
                STRTAB_BLOCK_ID => {
                    let strtab = read_blob_block(&mut bits, STRTAB_BLOB)?;
                    // The first string table after the symbol table serves it.
                    if !contents.symtab.data.is_empty()
                        && contents.strtab_for_symtab.data.is_empty()
                    {
                        contents.strtab_for_symtab = strtab;
                    }
                }
                SYMTAB_BLOCK_ID => {
                    let symtab = read_blob_block(&mut bits, SYMTAB_BLOB)?;
                    // Binary concatenation can leave several; LLVM keeps the
                    // first (and then rebuilds it: the module count differs).
                    if contents.symtab.data.is_empty() {
                        contents.symtab = symtab;
                    }
                }
                _ => bits.skip_block()?,
            }
        }
        Ok(contents)
    }

    /// The number of modules (MODULE blocks) in the file.
    pub fn module_count(&self) -> u64 {
        self.module_count
    }

    /// The first symbol table's blob (empty if there is none).
    pub fn symtab(&self) -> &'data [u8] {
        self.symtab.data
    }

    /// Offset of [`BitcodeFileContents::symtab`] in the file.
    pub fn symtab_offset(&self) -> u64 {
        self.symtab.offset
    }

    /// The blob of the first string table after the symbol table (empty if
    /// there is none).
    pub fn strtab_for_symtab(&self) -> &'data [u8] {
        self.strtab_for_symtab.data
    }

    /// The symbol table as LLVM 22 uses it without reading the IR, or
    /// `Ok(None)` where LLVM would build it anew from the IR: no module, no
    /// symbol table or string table, a table shorter than its header, one
    /// that is not current ([`irsymtab::Reader::is_current`]: another version
    /// or producer), or one that describes another number of modules than
    /// the file holds (made by binary concatenation). A damaged table is an
    /// error located in the file.
    pub fn current_symtab(&self) -> Result<Option<irsymtab::Reader<'data>>> {
        let (symtab, strtab) = (self.symtab.data, self.strtab_for_symtab.data);
        if self.module_count == 0
            || strtab.is_empty()
            || symtab.len() < core::mem::size_of::<irsymtab::storage::Header>()
        {
            return Ok(None);
        }
        let in_file = |e: Error| e.shifted(self.symtab.offset);
        // Only the version and the producer are certain to be where they
        // are in any version's header.
        let (version, producer) =
            irsymtab::version_and_producer(symtab, strtab).map_err(in_file)?;
        if !irsymtab::is_current(version, producer) {
            return Ok(None);
        }
        let reader = irsymtab::Reader::parse(symtab, strtab).map_err(in_file)?;
        Ok((u64::from(reader.module_count()) == self.module_count).then_some(reader))
    }
}

/// The bitstream inside `data` (after a wrapper, if any) and its offset.
fn bitstream(data: &[u8]) -> Result<(&[u8], u64)> {
    if !is_bitcode(data) {
        return Err(Error::new(ErrorKind::NotBitcode, 0));
    }
    let len = to_u64(data.len());
    if !len.is_multiple_of(4) {
        return Err(malformed(BitcodeFault::LengthNotMultipleOf4 { len }, 0));
    }
    let (stream, base) = if data.starts_with(WRAPPER_MAGIC) {
        let (header, _) = BitcodeWrapperHeader::ref_from_prefix(data).map_err(|_| {
            let needed = to_u64(core::mem::size_of::<BitcodeWrapperHeader>());
            let field = Field::BitcodeWrapper;
            Error::new(
                ErrorKind::Truncated {
                    field,
                    needed,
                    available: len,
                },
                0,
            )
        })?;
        let (offset, size) = (u64::from(header.offset.get()), u64::from(header.size.get()));
        let stream = range(data, offset, size)
            .ok_or_else(|| malformed(BitcodeFault::WrapperOutOfBounds { offset, size, len }, 8))?;
        (stream, offset)
    } else {
        (data, 0)
    };
    match stream.get(..4) {
        Some(magic) if magic == BITCODE_MAGIC => Ok((stream, base)),
        Some(_) => Err(Error::new(ErrorKind::NotBitcode, base)),
        None => Err(Error::new(
            ErrorKind::Truncated {
                field: Field::BitcodeMagic,
                needed: 4,
                available: to_u64(stream.len()),
            },
            base,
        )),
    }
}

/// A read position, in bits, in a bitstream.
#[derive(Debug, Clone)]
struct BitCursor<'data> {
    data: &'data [u8],
    bit: u64,
    /// Offset of the bitstream in the file, for errors.
    base: u64,
}

impl<'data> BitCursor<'data> {
    fn len_bits(&self) -> u64 {
        to_u64(self.data.len()).saturating_mul(8)
    }

    fn byte(&self) -> u64 {
        self.bit / 8
    }

    fn at_end(&self) -> bool {
        self.bit >= self.len_bits()
    }

    /// An error for a read that began at bit `at`.
    fn fault(&self, at: u64, fault: BitcodeFault) -> Error {
        malformed(fault, self.base.saturating_add(at / 8))
    }

    /// Moves past `count` bits, which must lie in the stream.
    fn skip(&mut self, count: u64) -> Result<()> {
        match self.bit.checked_add(count) {
            Some(end) if end <= self.len_bits() => {
                self.bit = end;
                Ok(())
            }
            _ => Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd)),
        }
    }

    /// Reads a `width`-bit field, `width` at most 32.
    fn read(&mut self, width: u64) -> Result<u64> {
        let start = self.bit;
        if width > MAX_CHUNK_SIZE {
            return Err(self.fault(start, BitcodeFault::OperandTooWide { width }));
        }
        self.skip(width)?;
        let mut word = [0u8; 8];
        let bytes = usize::try_from(start / 8)
            .ok()
            .and_then(|at| self.data.get(at..))
            .unwrap_or_default();
        for (slot, byte) in word.iter_mut().zip(bytes) {
            *slot = *byte;
        }
        let shift = u32::try_from(start % 8).unwrap_or(0);
        let value = u64::from_le_bytes(word).checked_shr(shift).unwrap_or(0);
        Ok(value & low_bits(width))
    }

    /// Reads a variable-width number in `width`-bit chunks, as LLVM's
    /// `ReadVBR` (`limit` 32) or `ReadVBR64` (`limit` 64): bits past the
    /// limit are dropped, a chunk that would start at or past it is an error.
    fn vbr(&mut self, width: u64, limit: u64) -> Result<u64> {
        let start = self.bit;
        let data_bits = width.saturating_sub(1);
        let more = 1u64.checked_shl(u32::try_from(data_bits).unwrap_or(u32::MAX));
        let more = more.unwrap_or(0);
        let mut value = 0u64;
        let mut shift = 0u64;
        loop {
            let piece = self.read(width)?;
            let chunk = piece & more.wrapping_sub(1);
            value |= chunk
                .checked_shl(u32::try_from(shift).unwrap_or(u32::MAX))
                .unwrap_or(0);
            if piece & more == 0 {
                return Ok(value & low_bits(limit));
            }
            shift = shift.saturating_add(data_bits);
            if shift >= limit {
                return Err(self.fault(start, BitcodeFault::UnterminatedVbr));
            }
        }
    }

    fn vbr32(&mut self, width: u64) -> Result<u64> {
        self.vbr(width, 32)
    }

    fn vbr64(&mut self, width: u64) -> Result<u64> {
        self.vbr(width, 64)
    }

    /// Moves to the next multiple of 32 bits (possibly past the end, where
    /// the next read fails).
    fn align32(&mut self) {
        self.bit = self.bit.saturating_add(31) & !31;
    }

    /// After ENTER_SUBBLOCK and the block ID: reads the block's header as
    /// LLVM's `EnterSubBlock` does and gives its abbreviation width.
    fn enter_block(&mut self) -> Result<u64> {
        let at = self.bit;
        let width = self.vbr32(4)?;
        if width > MAX_CHUNK_SIZE {
            return Err(self.fault(at, BitcodeFault::BadAbbrevWidth { width }));
        }
        self.align32();
        self.read(32)?;
        if width == 0 {
            return Err(self.fault(at, BitcodeFault::BadAbbrevWidth { width }));
        }
        if self.at_end() {
            return Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd));
        }
        Ok(width)
    }

    /// After ENTER_SUBBLOCK and the block ID: moves past the block by its
    /// length, as LLVM's `SkipBlock` does.
    fn skip_block(&mut self) -> Result<()> {
        self.vbr32(4)?;
        self.align32();
        let at = self.bit;
        let words = self.read(32)?;
        if self.at_end() {
            return Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd));
        }
        let bits = words.saturating_mul(32);
        self.skip(bits)
            .map_err(|_| self.fault(at, BitcodeFault::BlockOutOfBounds { words }))
    }

    /// After UNABBREV_RECORD: moves past the record and gives its code.
    fn skip_unabbreviated_record(&mut self) -> Result<u64> {
        let code = self.vbr32(6)?;
        let count = self.vbr32(6)?;
        for _ in 0..count {
            self.vbr64(6)?;
        }
        Ok(code)
    }
}

/// The `width` low bits set (`width` at most 64).
fn low_bits(width: u64) -> u64 {
    u32::try_from(width)
        .ok()
        .and_then(|w| 1u64.checked_shl(w))
        .map_or(u64::MAX, |bit| bit.wrapping_sub(1))
}

/// Reads top-level entries until a block starts (its ID read) or an
/// unabbreviated record has been skipped (`None`); abbreviations defined at
/// the top level are read and dropped (none can be used there).
fn next_top_level_block(bits: &mut BitCursor<'_>) -> Result<Option<u64>> {
    loop {
        let at = bits.bit;
        if bits.at_end() {
            return Err(bits.fault(at, BitcodeFault::UnexpectedEnd));
        }
        match bits.read(2)? {
            0 => return Err(bits.fault(at, BitcodeFault::EndBlockAtTopLevel)),
            1 => return bits.vbr32(8).map(Some),
            2 => define_abbrev(bits)?,
            _ => {
                bits.skip_unabbreviated_record()?;
                return Ok(None);
            }
        }
    }
}

/// One operand of an abbreviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    Literal(u64),
    Fixed(u64),
    Vbr(u64),
    Array,
    Char6,
    Blob,
}

fn read_operand(bits: &mut BitCursor<'_>) -> Result<Operand> {
    let at = bits.bit;
    if bits.read(1)? == 1 {
        return bits.vbr64(8).map(Operand::Literal);
    }
    let encoding = bits.read(3)?;
    Ok(match encoding {
        1 | 2 => {
            let width = bits.vbr64(5)?;
            if width > MAX_CHUNK_SIZE {
                return Err(bits.fault(at, BitcodeFault::OperandTooWide { width }));
            }
            // LLVM reads a zero-width field as the literal 0.
            match (width, encoding) {
                (0, _) => Operand::Literal(0),
                (_, 1) => Operand::Fixed(width),
                _ => Operand::Vbr(width),
            }
        }
        3 => Operand::Array,
        4 => Operand::Char6,
        5 => Operand::Blob,
        _ => return Err(bits.fault(at, BitcodeFault::InvalidEncoding { encoding })),
    })
}

/// After DEFINE_ABBREV: reads (and so checks) the abbreviation's operands.
fn define_abbrev(bits: &mut BitCursor<'_>) -> Result<()> {
    let at = bits.bit;
    let count = bits.vbr32(5)?;
    if count == 0 {
        return Err(bits.fault(at, BitcodeFault::EmptyAbbrev));
    }
    for _ in 0..count {
        read_operand(bits)?;
    }
    Ok(())
}

/// The abbreviations a block has defined so far: where each definition's
/// operands start, to be read again for every record that uses it.
struct Abbrevs {
    at: [u64; MAX_ABBREVS],
    len: usize,
}

impl Abbrevs {
    fn define(&mut self, bits: &mut BitCursor<'_>, id_at: u64) -> Result<()> {
        let at = bits.bit;
        define_abbrev(bits)?;
        let slot = self
            .at
            .get_mut(self.len)
            .ok_or_else(|| bits.fault(id_at, BitcodeFault::TooManyAbbrevs))?;
        *slot = at;
        self.len = self.len.saturating_add(1);
        Ok(())
    }

    /// Where abbreviation `id` (4 or more) is defined.
    fn get(&self, id: u64) -> Option<u64> {
        let index = usize::try_from(id.checked_sub(4)?).ok()?;
        self.at.get(..self.len)?.get(index).copied()
    }
}

/// Reads a record in the shape of the abbreviation defined at bit `def` and
/// gives its code and its (last) blob.
fn read_abbreviated_record<'data>(
    bits: &mut BitCursor<'data>,
    def: u64,
    at: u64,
) -> Result<(u64, Option<Blob<'data>>)> {
    let mut ops = BitCursor {
        bit: def,
        ..bits.clone()
    };
    let count = ops.vbr32(5)?;
    let code = match read_operand(&mut ops)? {
        Operand::Literal(value) => value,
        Operand::Fixed(width) => bits.read(width)?,
        Operand::Vbr(width) => bits.vbr64(width)?,
        Operand::Char6 => char6(bits.read(6)?),
        Operand::Array | Operand::Blob => return Err(bits.fault(at, BitcodeFault::ArrayOrBlobCode)),
    };
    let mut blob = None;
    let mut index = 1u64;
    while index < count {
        match read_operand(&mut ops)? {
            Operand::Literal(_) => {}
            Operand::Fixed(width) => {
                bits.read(width)?;
            }
            Operand::Vbr(width) => {
                bits.vbr64(width)?;
            }
            Operand::Char6 => {
                bits.read(6)?;
            }
            Operand::Array => {
                let elements = bits.vbr32(6)?;
                if index.saturating_add(2) != count {
                    return Err(bits.fault(at, BitcodeFault::BadArray));
                }
                index = index.saturating_add(1);
                match read_operand(&mut ops)? {
                    Operand::Fixed(width) => bits.skip(elements.saturating_mul(width))?,
                    Operand::Char6 => bits.skip(elements.saturating_mul(6))?,
                    Operand::Vbr(width) => {
                        // Each element takes at least `width` bits.
                        bits.clone().skip(elements.saturating_mul(width))?;
                        for _ in 0..elements {
                            bits.vbr64(width)?;
                        }
                    }
                    _ => return Err(bits.fault(at, BitcodeFault::BadArray)),
                }
            }
            Operand::Blob => {
                let size = bits.vbr32(6)?;
                bits.align32();
                let start = bits.bit;
                let padded = size.saturating_add(3) & !3;
                bits.skip(padded.saturating_mul(8))
                    .map_err(|_| bits.fault(start, BitcodeFault::BlobOutOfBounds { size }))?;
                let data = range(bits.data, start / 8, size)
                    .ok_or_else(|| bits.fault(start, BitcodeFault::BlobOutOfBounds { size }))?;
                blob = Some(Blob {
                    data,
                    offset: bits.base.saturating_add(start / 8),
                });
            }
        }
        index = index.saturating_add(1);
    }
    Ok((code, blob))
}

/// A char6 value as the character it stands for.
fn char6(value: u64) -> u64 {
    let value = value & 63;
    let (first, base) = match value {
        0..=25 => (0, b'a'),
        26..=51 => (26, b'A'),
        52..=61 => (52, b'0'),
        62 => return u64::from(b'.'),
        _ => return u64::from(b'_'),
    };
    value.saturating_sub(first).saturating_add(u64::from(base))
}

/// After ENTER_SUBBLOCK and the block ID: reads the block as LLVM's
/// `readBlobInRecord` does, and gives the blob of its last record with code
/// `code` (empty if that record has no blob, or if there is no such record).
/// The walk goes on after the block's END_BLOCK, wherever its length says
/// the block ends.
fn read_blob_block<'data>(bits: &mut BitCursor<'data>, code: u64) -> Result<Blob<'data>> {
    let width = bits.enter_block()?;
    let mut abbrevs = Abbrevs {
        at: [0; MAX_ABBREVS],
        len: 0,
    };
    let mut found = Blob::EMPTY;
    loop {
        let at = bits.bit;
        if bits.at_end() {
            return Err(bits.fault(at, BitcodeFault::UnexpectedEnd));
        }
        match bits.read(width)? {
            0 => {
                bits.align32();
                return Ok(found);
            }
            1 => {
                bits.vbr32(8)?;
                bits.skip_block()?;
            }
            2 => abbrevs.define(bits, at)?,
            3 => {
                if bits.skip_unabbreviated_record()? == code {
                    found = Blob::EMPTY;
                }
            }
            id => {
                let def = abbrevs
                    .get(id)
                    .ok_or_else(|| bits.fault(at, BitcodeFault::UnknownAbbrev { id }))?;
                let (record, blob) = read_abbreviated_record(bits, def, at)?;
                if record == code {
                    found = blob.unwrap_or(Blob::EMPTY);
                }
            }
        }
    }
}

pub mod irsymtab {
    //! LLVM's symbol table for the IR of a bitcode file (`irsymtab`): the
    //! symbols of every module, in the order of LLVM's `ModuleSymbolTable`
    //! (functions, global variables, aliases and ifuncs, then the symbols
    //! of module-level assembly), with the flags a linker or an archiver
    //! needs. Its strings live in the file's string table.
    //!
    //! [`Reader::parse`] checks the header, the module and symbol ranges and
    //! every symbol's name once; afterwards symbols are read without checks.

    use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

    use super::{malformed, BitcodeFault};
    use crate::bytes::{range, to_u64};
    use crate::{Error, ErrorKind, Field, Result};

    /// The producer prefix of the tables LLVM 22 writes (`LLVM_VERSION_STRING`,
    /// `22.1.8` for Debian's 22.1.8, perhaps followed by a revision).
    pub const LLVM_22_PRODUCER_PREFIX: &[u8] = b"22.";

    /// Whether a table of this version and producer is what LLVM 22 would
    /// use without rebuilding it from the IR; see [`Reader::is_current`].
    pub(super) fn is_current(version: u32, producer: &[u8]) -> bool {
        version == storage::Header::CURRENT_VERSION && producer.starts_with(LLVM_22_PRODUCER_PREFIX)
    }

    pub mod storage {
        //! The symbol table's on-disk records (all fields little-endian
        //! `u32`), named as LLVM's `irsymtab::storage` names them.

        use zerocopy::little_endian::U32;
        use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

        /// A string of the string table.
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            FromBytes,
            IntoBytes,
            KnownLayout,
            Immutable,
            Unaligned,
        )]
        #[repr(C)]
        pub struct Str {
            /// Offset in the string table.
            pub offset: U32,
            /// Size in bytes (no NUL).
            pub size: U32,
        }
        const _: () = assert!(core::mem::size_of::<Str>() == 8);

        /// Records of the symbol table itself.
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            FromBytes,
            IntoBytes,
            KnownLayout,
            Immutable,
            Unaligned,
        )]
        #[repr(C)]
        pub struct Range {
            /// Offset of the first record in the symbol table.
            pub offset: U32,
            /// Number of records.
            pub size: U32,
        }
        const _: () = assert!(core::mem::size_of::<Range>() == 8);

        /// One module's symbols: indexes into the symbol records.
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            FromBytes,
            IntoBytes,
            KnownLayout,
            Immutable,
            Unaligned,
        )]
        #[repr(C)]
        pub struct Module {
            /// Index of the module's first symbol.
            pub begin: U32,
            /// Index after its last symbol.
            pub end: U32,
            /// Index of its first uncommon record.
            pub unc_begin: U32,
        }
        const _: () = assert!(core::mem::size_of::<Module>() == 12);

        /// A symbol.
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            FromBytes,
            IntoBytes,
            KnownLayout,
            Immutable,
            Unaligned,
        )]
        #[repr(C)]
        pub struct Symbol {
            /// The mangled name.
            pub name: Str,
            /// The IR name (empty for a symbol of module-level assembly).
            pub ir_name: Str,
            /// Index of its comdat, or `u32::MAX` (-1) for none.
            pub comdat_index: U32,
            /// The `FB_*` bits.
            pub flags: U32,
        }
        const _: () = assert!(core::mem::size_of::<Symbol>() == 24);

        impl Symbol {
            /// Bits 0 and 1: the visibility (default, hidden, protected).
            pub const FB_VISIBILITY: u32 = 0;
            /// An uncommon record belongs to the symbol.
            pub const FB_HAS_UNCOMMON: u32 = 2;
            /// Declared, not defined.
            pub const FB_UNDEFINED: u32 = 3;
            /// Weak (or linkonce, or extern_weak).
            pub const FB_WEAK: u32 = 4;
            /// A common symbol.
            pub const FB_COMMON: u32 = 5;
            /// An alias or ifunc.
            pub const FB_INDIRECT: u32 = 6;
            /// In `llvm.used` or `llvm.compiler.used`.
            pub const FB_USED: u32 = 7;
            /// Thread-local.
            pub const FB_TLS: u32 = 8;
            /// May be left out of the symbol table.
            pub const FB_MAY_OMIT: u32 = 9;
            /// Not local.
            pub const FB_GLOBAL: u32 = 10;
            /// Not a real symbol of the object (`llvm.*` names, intrinsics).
            pub const FB_FORMAT_SPECIFIC: u32 = 11;
            /// `unnamed_addr`.
            pub const FB_UNNAMED_ADDR: u32 = 12;
            /// A function.
            pub const FB_EXECUTABLE: u32 = 13;
        }

        /// The header at the start of the symbol table (version 3).
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            FromBytes,
            IntoBytes,
            KnownLayout,
            Immutable,
            Unaligned,
        )]
        #[repr(C)]
        pub struct Header {
            /// The format's version; [`Header::CURRENT_VERSION`] in LLVM 22.
            pub version: U32,
            /// The LLVM version that wrote it.
            pub producer: Str,
            /// [`Module`] records.
            pub modules: Range,
            /// Comdat records (12 bytes each).
            pub comdats: Range,
            /// [`Symbol`] records.
            pub symbols: Range,
            /// Uncommon records (24 bytes each in version 3).
            pub uncommons: Range,
            /// The first module's target triple.
            pub target_triple: Str,
            /// The first module's source file name.
            pub source_file_name: Str,
            /// COFF linker directives.
            pub coff_linker_opts: Str,
            /// Dependent library strings ([`Str`] records).
            pub dependent_libraries: Range,
        }
        const _: () = assert!(core::mem::size_of::<Header>() == 76);

        impl Header {
            /// The version LLVM 22 writes and reads.
            pub const CURRENT_VERSION: u32 = 3;
        }
    }

    use storage::Header;

    /// Offsets of the header fields this reader checks, for errors.
    const PRODUCER_FIELD: u64 = 4;
    const MODULES_FIELD: u64 = 12;
    const SYMBOLS_FIELD: u64 = 28;

    /// The version and producer of a symbol table: the two fields every
    /// version keeps in the same place. Errors are located in `symtab`.
    pub(super) fn version_and_producer<'data>(
        symtab: &'data [u8],
        strtab: &'data [u8],
    ) -> Result<(u32, &'data [u8])> {
        let header = header(symtab)?;
        let producer = string(strtab, &header.producer, PRODUCER_FIELD)?;
        Ok((header.version.get(), producer))
    }

    fn header(symtab: &[u8]) -> Result<&Header> {
        Header::ref_from_prefix(symtab)
            .map(|(header, _)| header)
            .map_err(|_| {
                let kind = ErrorKind::Truncated {
                    field: Field::IrSymtabHeader,
                    needed: to_u64(core::mem::size_of::<Header>()),
                    available: to_u64(symtab.len()),
                };
                Error::new(kind, 0)
            })
    }

    /// The string `s` of `strtab`; an error at `at` if it lies outside.
    fn string<'data>(strtab: &'data [u8], s: &storage::Str, at: u64) -> Result<&'data [u8]> {
        let (offset, size) = (u64::from(s.offset.get()), u64::from(s.size.get()));
        range(strtab, offset, size).ok_or_else(|| {
            let strtab_size = to_u64(strtab.len());
            malformed(
                BitcodeFault::StringOutOfBounds {
                    offset,
                    size,
                    strtab_size,
                },
                at,
            )
        })
    }

    /// The records `r` of `symtab`; an error at `at` if they lie outside.
    fn records<'data, T>(symtab: &'data [u8], r: &storage::Range, at: u64) -> Result<&'data [T]>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let (offset, count) = (u64::from(r.offset.get()), u64::from(r.size.get()));
        to_u64(core::mem::size_of::<T>())
            .checked_mul(count)
            .and_then(|size| range(symtab, offset, size))
            .and_then(|bytes| <[T]>::ref_from_bytes(bytes).ok())
            .ok_or_else(|| {
                let size = to_u64(symtab.len());
                malformed(
                    BitcodeFault::RangeOutOfBounds {
                        offset,
                        count,
                        size,
                    },
                    at,
                )
            })
    }

    /// A symbol table and its string table, checked.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Reader<'data> {
        header: &'data Header,
        producer: &'data [u8],
        symbols: &'data [storage::Symbol],
        strtab: &'data [u8],
    }

    impl<'data> Reader<'data> {
        /// Reads a version 3 symbol table (LLVM 22's) and its string table:
        /// the header ([`ErrorKind::Truncated`] if `symtab` is shorter),
        /// the producer, the module and symbol ranges and every symbol's
        /// name must lie inside their tables
        /// ([`ErrorKind::MalformedBitcode`], located in `symtab`). The
        /// version is not checked here: see [`Reader::is_current`].
        pub fn parse(symtab: &'data [u8], strtab: &'data [u8]) -> Result<Self> {
            let header = header(symtab)?;
            let producer = string(strtab, &header.producer, PRODUCER_FIELD)?;
            records::<storage::Module>(symtab, &header.modules, MODULES_FIELD)?;
            let symbols = records::<storage::Symbol>(symtab, &header.symbols, SYMBOLS_FIELD)?;
            let first = u64::from(header.symbols.offset.get());
            let size = to_u64(core::mem::size_of::<storage::Symbol>());
            for (index, symbol) in (0u64..).zip(symbols) {
                let at = index.saturating_mul(size).saturating_add(first);
                string(strtab, &symbol.name, at)?;
            }
            Ok(Reader {
                header,
                producer,
                symbols,
                strtab,
            })
        }

        /// The header.
        pub fn header(&self) -> &'data Header {
            self.header
        }

        /// The format version.
        pub fn version(&self) -> u32 {
            self.header.version.get()
        }

        /// The producer: the version of LLVM that wrote the table.
        pub fn producer(&self) -> &'data [u8] {
            self.producer
        }

        /// Whether LLVM 22 uses the table as it is: LLVM reads a table only
        /// if its version is [`Header::CURRENT_VERSION`] and its producer is
        /// its own version string, and otherwise builds one from the IR.
        /// This reader takes any LLVM 22 release's producer
        /// ([`LLVM_22_PRODUCER_PREFIX`]): they write the same tables.
        pub fn is_current(&self) -> bool {
            is_current(self.version(), self.producer)
        }

        /// The number of modules the table describes.
        pub fn module_count(&self) -> u32 {
            self.header.modules.size.get()
        }

        /// Every symbol, in the table's order.
        pub fn symbols(&self) -> SymbolIter<'data> {
            SymbolIter {
                raw: self.symbols.iter(),
                strtab: self.strtab,
            }
        }

        /// The names of the symbols LLVM's archive writer indexes, in the
        /// table's order: global, defined and not format-specific.
        pub fn defined_global_symbols(&self) -> impl Iterator<Item = &'data [u8]> {
            self.symbols()
                .filter(|s| s.is_global() && !s.is_undefined() && !s.is_format_specific())
                .map(|s| s.name())
        }
    }

    /// Iterator over a symbol table's symbols; see [`Reader::symbols`].
    #[derive(Debug, Clone)]
    pub struct SymbolIter<'data> {
        raw: core::slice::Iter<'data, storage::Symbol>,
        strtab: &'data [u8],
    }

    impl<'data> Iterator for SymbolIter<'data> {
        type Item = Symbol<'data>;

        fn next(&mut self) -> Option<Symbol<'data>> {
            let raw = self.raw.next()?;
            // Checked by `Reader::parse`.
            let name = string(self.strtab, &raw.name, 0).unwrap_or_default();
            Some(Symbol {
                name,
                flags: raw.flags.get(),
            })
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            self.raw.size_hint()
        }
    }

    impl ExactSizeIterator for SymbolIter<'_> {}

    /// A symbol of the table: its name and flags.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Symbol<'data> {
        name: &'data [u8],
        flags: u32,
    }

    impl<'data> Symbol<'data> {
        /// The mangled name.
        pub fn name(&self) -> &'data [u8] {
            self.name
        }

        /// The flags (`storage::Symbol::FB_*` bits).
        pub fn flags(&self) -> u32 {
            self.flags
        }

        fn flag(&self, bit: u32) -> bool {
            self.flags.checked_shr(bit).unwrap_or(0) & 1 == 1
        }

        /// Declared, not defined.
        pub fn is_undefined(&self) -> bool {
            self.flag(storage::Symbol::FB_UNDEFINED)
        }

        /// Weak.
        pub fn is_weak(&self) -> bool {
            self.flag(storage::Symbol::FB_WEAK)
        }

        /// Not local.
        pub fn is_global(&self) -> bool {
            self.flag(storage::Symbol::FB_GLOBAL)
        }

        /// Not a symbol of the object file (`llvm.*` names).
        pub fn is_format_specific(&self) -> bool {
            self.flag(storage::Symbol::FB_FORMAT_SPECIFIC)
        }

        /// A function.
        pub fn is_executable(&self) -> bool {
            self.flag(storage::Symbol::FB_EXECUTABLE)
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use alloc::vec::Vec;

    use super::irsymtab::storage::Symbol as RawSymbol;
    use super::irsymtab::Reader;
    use super::*;

    /// clang 22's bitcode for `tests/fixtures/archive/src/k.cl`, and the
    /// symbols `llvm-nm -g --defined-only` gave for it.
    const K_BC: &[u8] = include_bytes!("../../tests/fixtures/archive/inputs/k-gfx906.bc");
    const K_SYMBOLS: [&[u8]; 3] = [b"scale", b"__clang_ocl_kern_imp_scale", b"helper_value"];

    fn kind(data: &[u8]) -> (ErrorKind, u64) {
        let e = BitcodeFileContents::parse(data).unwrap_err();
        (e.kind(), e.offset())
    }

    fn fault(data: &[u8]) -> (BitcodeFault, u64) {
        match kind(data) {
            (ErrorKind::MalformedBitcode { fault }, offset) => (fault, offset),
            other => panic!("{other:?}"),
        }
    }

    /// Writes bitstreams bit by bit, as LLVM's BitstreamWriter does.
    struct Writer {
        bytes: Vec<u8>,
        bit: usize,
    }

    impl Writer {
        fn new() -> Self {
            Writer {
                bytes: BITCODE_MAGIC.to_vec(),
                bit: 32,
            }
        }

        fn fixed(&mut self, value: u64, width: u32) -> &mut Self {
            for i in 0..width {
                if self.bit / 8 == self.bytes.len() {
                    self.bytes.push(0);
                }
                self.bytes[self.bit / 8] |= u8::from((value >> i) & 1 == 1) << (self.bit % 8);
                self.bit += 1;
            }
            self
        }

        fn vbr(&mut self, mut value: u64, width: u32) -> &mut Self {
            let more = 1u64 << (width - 1);
            while value >= more {
                self.fixed(value & (more - 1) | more, width);
                value >>= width - 1;
            }
            self.fixed(value, width)
        }

        fn align32(&mut self) -> &mut Self {
            while !self.bit.is_multiple_of(32) {
                self.fixed(0, 1);
            }
            self
        }

        fn bytes(&mut self, data: &[u8]) -> &mut Self {
            for &b in data {
                self.fixed(u64::from(b), 8);
            }
            self
        }

        /// A block with abbreviation width `width`, entered from a scope of
        /// width `outer`; `words` overrides the length written.
        fn block(
            &mut self,
            outer: u32,
            id: u64,
            width: u32,
            words: Option<u32>,
            body: impl FnOnce(&mut Writer),
        ) -> &mut Self {
            self.fixed(1, outer)
                .vbr(id, 8)
                .vbr(u64::from(width), 4)
                .align32();
            let length_at = self.bit / 8;
            self.fixed(0, 32);
            body(self);
            self.fixed(0, width).align32();
            let measured = u32::try_from((self.bit / 8 - length_at - 4) / 4).unwrap();
            let words = words.unwrap_or(measured);
            self.bytes[length_at..length_at + 4].copy_from_slice(&words.to_le_bytes());
            self
        }

        /// DEFINE_ABBREV [literal 1, blob] in a block of width 3.
        fn blob_abbrev(&mut self) -> &mut Self {
            self.fixed(2, 3).vbr(2, 5);
            self.fixed(1, 1).vbr(1, 8);
            self.fixed(0, 1).fixed(5, 3)
        }

        /// A record of abbreviation `id`, [literal, blob] shaped.
        fn blob_record(&mut self, id: u64, data: &[u8]) -> &mut Self {
            self.fixed(id, 3).vbr(data.len() as u64, 6).align32();
            self.bytes(data).align32()
        }

        /// A SYMTAB or STRTAB block holding `data` as LLVM writes it.
        fn blob_block(&mut self, id: u64, data: &[u8]) -> &mut Self {
            self.block(2, id, 3, None, |w| {
                w.blob_abbrev().blob_record(4, data);
            })
        }

        fn module(&mut self) -> &mut Self {
            self.block(2, IDENTIFICATION_BLOCK_ID, 5, None, |w| {
                w.fixed(3, 5).vbr(1, 6).vbr(1, 6).vbr(22, 6);
            })
            .block(2, MODULE_BLOCK_ID, 3, None, |w| {
                w.fixed(3, 3).vbr(1, 6).vbr(1, 6).vbr(2, 6);
            })
        }

        fn finish(&mut self) -> Vec<u8> {
            self.align32();
            core::mem::take(&mut self.bytes)
        }
    }

    /// A version 3 symbol table: (symtab, strtab).
    fn irsymtab(
        version: u32,
        producer: &str,
        modules: u32,
        symbols: &[(&str, u32)],
    ) -> (Vec<u8>, Vec<u8>) {
        let mut strtab = producer.as_bytes().to_vec();
        let module_at = 76u32;
        let symbols_at = module_at + 12 * modules;
        let mut out = Vec::new();
        let word = |out: &mut Vec<u8>, w: u32| out.extend_from_slice(&w.to_le_bytes());
        for w in [
            version,
            0,
            producer.len() as u32,
            module_at,
            modules,
            symbols_at,
            0,
        ] {
            word(&mut out, w);
        }
        for w in [
            symbols_at,
            symbols.len() as u32,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ] {
            word(&mut out, w);
        }
        for _ in 0..modules {
            for w in [0, symbols.len() as u32, 0] {
                word(&mut out, w);
            }
        }
        for (name, flags) in symbols {
            let at = strtab.len() as u32;
            strtab.extend_from_slice(name.as_bytes());
            for w in [
                at,
                name.len() as u32,
                at,
                name.len() as u32,
                u32::MAX,
                *flags,
            ] {
                word(&mut out, w);
            }
        }
        assert_eq!(out.len(), symbols_at as usize + 24 * symbols.len());
        (out, strtab)
    }

    fn file(modules: usize, symtab: &[u8], strtab: &[u8]) -> Vec<u8> {
        let mut w = Writer::new();
        for _ in 0..modules {
            w.module();
        }
        w.blob_block(SYMTAB_BLOCK_ID, symtab)
            .blob_block(STRTAB_BLOCK_ID, strtab)
            .finish()
    }

    const DEFINED: u32 = 1 << RawSymbol::FB_GLOBAL;
    const UNDEFINED: u32 = DEFINED | 1 << RawSymbol::FB_UNDEFINED;
    const LOCAL: u32 = 1 << RawSymbol::FB_EXECUTABLE;
    const FORMAT_SPECIFIC: u32 = DEFINED | 1 << RawSymbol::FB_FORMAT_SPECIFIC;
    const WEAK: u32 = DEFINED | 1 << RawSymbol::FB_WEAK;

    fn indexed(data: &[u8]) -> Option<Vec<&[u8]>> {
        let contents = BitcodeFileContents::parse(data).unwrap();
        let table = contents.current_symtab().unwrap()?;
        Some(table.defined_global_symbols().collect())
    }

    #[test]
    fn clang_22_bitcode() {
        let contents = BitcodeFileContents::parse(K_BC).unwrap();
        assert_eq!(contents.module_count(), 1);
        assert_eq!(contents.symtab().len(), 184);
        assert_eq!(
            &K_BC[contents.symtab_offset() as usize..][..184],
            contents.symtab()
        );
        let table = contents.current_symtab().unwrap().unwrap();
        assert_eq!(table.version(), 3);
        assert_eq!(table.producer(), b"22.1.8");
        assert!(table.is_current());
        assert_eq!(table.module_count(), 1);
        let all: Vec<_> = table.symbols().map(|s| s.name()).collect();
        assert_eq!(
            all,
            [
                &b"scale"[..],
                b"__clang_ocl_kern_imp_scale",
                b"_Z13get_global_idj",
                b"helper_value"
            ]
        );
        let get_global_id = table.symbols().nth(2).unwrap();
        assert!(get_global_id.is_undefined() && get_global_id.is_executable());
        assert_eq!(
            table.defined_global_symbols().collect::<Vec<_>>(),
            K_SYMBOLS
        );
        assert_eq!(indexed(K_BC).unwrap(), K_SYMBOLS);
    }

    #[test]
    fn wrapped_bitcode_is_read_at_its_offset() {
        let mut wrapped = Vec::new();
        for w in [0x0B17_C0DE_u32, 0, 20, K_BC.len() as u32, 0] {
            wrapped.extend_from_slice(&w.to_le_bytes());
        }
        wrapped.extend_from_slice(K_BC);
        let plain = BitcodeFileContents::parse(K_BC).unwrap();
        let contents = BitcodeFileContents::parse(&wrapped).unwrap();
        assert_eq!(contents.symtab(), plain.symtab());
        assert_eq!(contents.symtab_offset(), plain.symtab_offset() + 20);
        assert_eq!(indexed(&wrapped).unwrap(), K_SYMBOLS);
        // What the wrapper holds must be a bitstream, inside the file.
        let mut inner = wrapped.clone();
        inner[20] = b'X';
        assert_eq!(kind(&inner), (ErrorKind::NotBitcode, 20));
        let mut outside = wrapped.clone();
        outside[12..16].copy_from_slice(&(K_BC.len() as u32 + 4).to_le_bytes());
        let (f, at) = fault(&outside);
        assert!(matches!(
            f,
            BitcodeFault::WrapperOutOfBounds { offset: 20, .. }
        ));
        assert_eq!(at, 8);
        let mut empty = wrapped[..24].to_vec();
        empty[12..16].copy_from_slice(&2u32.to_le_bytes());
        let e = BitcodeFileContents::parse(&empty).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::Truncated {
                field: Field::BitcodeMagic,
                needed: 4,
                available: 2
            }
        ));
        assert!(matches!(
            kind(&wrapped[..12]).0,
            ErrorKind::Truncated {
                field: Field::BitcodeWrapper,
                needed: 16,
                available: 12
            }
        ));
    }

    #[test]
    fn what_is_not_bitcode() {
        assert!(!is_bitcode(b"\x7fELF") && is_bitcode(b"BC\xC0\xDE") && is_bitcode(WRAPPER_MAGIC));
        assert_eq!(kind(b"\x7fELF\0\0\0\0"), (ErrorKind::NotBitcode, 0));
        assert_eq!(kind(b""), (ErrorKind::NotBitcode, 0));
        // LLVM reads no bitcode whose length is not a multiple of 4.
        let mut odd = K_BC.to_vec();
        odd.push(0);
        assert_eq!(
            fault(&odd),
            (BitcodeFault::LengthNotMultipleOf4 { len: 4905 }, 0)
        );
    }

    #[test]
    fn symbols_are_filtered_as_llvm_s_archive_writer_does() {
        let symbols = [
            ("b_first", DEFINED | LOCAL),
            ("llvm.used", FORMAT_SPECIFIC),
            ("undefined", UNDEFINED),
            ("local", LOCAL),
            ("weak", WEAK),
            ("a_last", DEFINED),
        ];
        let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &symbols);
        let data = file(1, &symtab, &strtab);
        assert_eq!(
            indexed(&data).unwrap(),
            [&b"b_first"[..], b"weak", b"a_last"]
        );
        let table = Reader::parse(&symtab, &strtab).unwrap();
        assert_eq!(table.symbols().len(), 6);
        assert!(table.symbols().nth(4).unwrap().is_weak());
        // Any LLVM 22 release's table is current.
        let (symtab, strtab) = irsymtab(3, "22.0.0git abcdef", 1, &symbols);
        assert_eq!(indexed(&file(1, &symtab, &strtab)).unwrap().len(), 3);
    }

    #[test]
    fn tables_llvm_would_rebuild_give_none() {
        let symbols = [("f", DEFINED)];
        let cases = [
            // Another version or producer: LLVM reads the IR instead.
            (irsymtab(2, "22.1.8", 1, &symbols), 1),
            (irsymtab(3, "21.1.8", 1, &symbols), 1),
            (irsymtab(3, "", 1, &symbols), 1),
            // Two modules, a table of one (binary concatenation).
            (irsymtab(3, "22.1.8", 1, &symbols), 2),
            (irsymtab(3, "22.1.8", 2, &symbols), 1),
            // No module at all.
            (irsymtab(3, "22.1.8", 1, &symbols), 0),
        ];
        for ((symtab, strtab), modules) in cases {
            assert_eq!(indexed(&file(modules, &symtab, &strtab)), None);
        }
        // A table shorter than the header, or no string table.
        let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &symbols);
        assert_eq!(indexed(&file(1, &symtab[..72], &strtab)), None);
        let data = Writer::new()
            .module()
            .blob_block(SYMTAB_BLOCK_ID, &symtab)
            .finish();
        assert_eq!(indexed(&data), None);
        // A string table before the symbol table does not serve it.
        let data = Writer::new()
            .module()
            .blob_block(STRTAB_BLOCK_ID, &strtab)
            .blob_block(SYMTAB_BLOCK_ID, &symtab)
            .finish();
        assert_eq!(indexed(&data), None);
        let data = Writer::new()
            .module()
            .blob_block(STRTAB_BLOCK_ID, b"other")
            .blob_block(SYMTAB_BLOCK_ID, &symtab)
            .blob_block(STRTAB_BLOCK_ID, &strtab)
            .blob_block(SYMTAB_BLOCK_ID, b"second table, ignored")
            .blob_block(STRTAB_BLOCK_ID, b"second strtab, ignored")
            .finish();
        assert_eq!(indexed(&data).unwrap(), [b"f"]);
    }

    #[test]
    fn damaged_tables_are_located_errors() {
        let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &[("f", DEFINED), ("g", DEFINED)]);
        let at = BitcodeFileContents::parse(&file(1, &symtab, &strtab))
            .unwrap()
            .symtab_offset();
        let damaged = |patch: &dyn Fn(&mut Vec<u8>), strtab: &[u8]| {
            let mut symtab = symtab.clone();
            patch(&mut symtab);
            let data = file(1, &symtab, strtab);
            let contents = BitcodeFileContents::parse(&data).unwrap();
            let e = contents.current_symtab().unwrap_err();
            let direct = Reader::parse(contents.symtab(), contents.strtab_for_symtab());
            assert_eq!(direct.unwrap_err().shifted(at), e);
            match e.kind() {
                ErrorKind::MalformedBitcode { fault } => (fault, e.offset() - at),
                other => panic!("{other:?}"),
            }
        };
        let set = |at: usize, value: u32| {
            move |s: &mut Vec<u8>| s[at..at + 4].copy_from_slice(&value.to_le_bytes())
        };
        assert_eq!(
            damaged(&set(4, 3), &strtab),
            (
                BitcodeFault::StringOutOfBounds {
                    offset: 3,
                    size: 6,
                    strtab_size: 8
                },
                4
            )
        );
        assert_eq!(
            damaged(&set(32, 3), &strtab),
            (
                BitcodeFault::RangeOutOfBounds {
                    offset: 88,
                    count: 3,
                    size: 136
                },
                28
            )
        );
        assert_eq!(
            damaged(&set(32, u32::MAX), &strtab).1,
            28,
            "a count whose size overflows"
        );
        assert!(matches!(
            damaged(&set(16, 6), &strtab),
            (BitcodeFault::RangeOutOfBounds { count: 6, .. }, 12)
        ));
        // The second symbol's name.
        assert_eq!(
            damaged(&set(88 + 24, 100), &strtab),
            (
                BitcodeFault::StringOutOfBounds {
                    offset: 100,
                    size: 1,
                    strtab_size: 8
                },
                88 + 24
            )
        );
        // The reader alone: a header cut short.
        let e = Reader::parse(&symtab[..75], &strtab).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::Truncated {
                field: Field::IrSymtabHeader,
                needed: 76,
                available: 75
            }
        );
    }

    #[test]
    fn the_top_level_walk_follows_llvm() {
        let (symtab, strtab) = irsymtab(3, "22.1.8", 2, &[("f", DEFINED)]);
        // Top-level abbreviations and records, unknown blocks, a bare
        // module block and up to 8 trailing bytes are passed over.
        let mut w = Writer::new();
        w.fixed(2, 2).vbr(1, 5).fixed(0, 1).fixed(4, 3);
        w.fixed(3, 2).vbr(7, 6).vbr(2, 6).vbr(1000, 6).vbr(0, 6);
        w.block(2, 99, 4, None, |w| {
            w.fixed(3, 4).vbr(1, 6).vbr(0, 6);
        });
        w.module();
        w.block(2, MODULE_BLOCK_ID, 2, None, |_| {});
        w.blob_block(SYMTAB_BLOCK_ID, &symtab)
            .blob_block(STRTAB_BLOCK_ID, &strtab);
        let data = w.finish();
        let garbage = [&data[..], &[0xff; 8]].concat();
        let contents = BitcodeFileContents::parse(&garbage).unwrap();
        assert_eq!(contents.module_count(), 2);
        assert_eq!(indexed(&garbage).unwrap(), [b"f"]);
        // Twelve are read, and here end the stream.
        let zeros = [&data[..], &[0; 12]].concat();
        let at = data.len() as u64;
        assert_eq!(fault(&zeros), (BitcodeFault::EndBlockAtTopLevel, at));
        // The magic and nothing else: no modules.
        let contents = BitcodeFileContents::parse(&K_BC[..12]).unwrap();
        assert_eq!(contents.module_count(), 0);
        assert_eq!(contents.current_symtab(), Ok(None));
    }

    #[test]
    fn malformed_bitstreams_are_located_errors() {
        let block_at = 4;
        // An identification block must come with a module.
        let data = Writer::new()
            .block(2, IDENTIFICATION_BLOCK_ID, 5, None, |_| {})
            .block(2, 99, 3, None, |_| {})
            .finish();
        assert_eq!(
            fault(&data),
            (BitcodeFault::IdentificationWithoutModule, 16)
        );
        // A block longer than the stream, skipped or read.
        let data = Writer::new()
            .block(2, 99, 3, Some(3), |_| {})
            .fixed(0, 32)
            .finish();
        assert_eq!(
            fault(&data),
            (BitcodeFault::BlockOutOfBounds { words: 3 }, 8)
        );
        // A table block that the stream ends in.
        let mut w = Writer::new();
        w.fixed(1, 2)
            .vbr(SYMTAB_BLOCK_ID, 8)
            .vbr(3, 4)
            .align32()
            .fixed(100, 32);
        w.blob_abbrev();
        for _ in 0..4 {
            w.fixed(3, 3).vbr(2, 6).vbr(1, 6).vbr(63, 6);
        }
        // A record of three operands, cut in the first.
        w.fixed(3, 3).vbr(2, 6).vbr(3, 6);
        while !w.bit.is_multiple_of(32) {
            w.fixed(1, 1);
        }
        assert_eq!(fault(&w.finish()).0, BitcodeFault::UnexpectedEnd);
        // Abbreviation widths of 0 and 33.
        for width in [0, 33] {
            let data = Writer::new()
                .fixed(1, 2)
                .vbr(SYMTAB_BLOCK_ID, 8)
                .vbr(width, 4)
                .align32()
                .fixed(1, 32)
                .fixed(0, 64)
                .finish();
            assert_eq!(
                fault(&data),
                (BitcodeFault::BadAbbrevWidth { width }, block_at + 1)
            );
        }
        // A block ID whose VBR never ends.
        let data = Writer::new().fixed(1, 2).fixed(u64::MAX, 62).finish();
        assert_eq!(
            fault(&[&data[..], &[0xff; 8]].concat()),
            (BitcodeFault::UnterminatedVbr, 4)
        );
        // Abbreviations: no operands, encoding 0 and 6, a fixed field of
        // 33 bits, an undefined ID, a blob as the code, an array last, an
        // array of blobs, and one too many.
        let in_symtab = |body: &dyn Fn(&mut Writer)| {
            let mut w = Writer::new();
            w.block(2, SYMTAB_BLOCK_ID, 3, None, body);
            w.fixed(0, 64);
            fault(&w.finish())
        };
        let body_at = 12;
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3).vbr(0, 5);
            }),
            (BitcodeFault::EmptyAbbrev, body_at)
        );
        for encoding in [0, 6] {
            assert_eq!(
                in_symtab(&|w| {
                    w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(encoding, 3);
                }),
                (BitcodeFault::InvalidEncoding { encoding }, body_at + 1)
            );
        }
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(1, 3).vbr(33, 5);
            }),
            (BitcodeFault::OperandTooWide { width: 33 }, body_at + 1)
        );
        assert_eq!(
            in_symtab(&|w| {
                w.blob_abbrev().fixed(5, 3);
            }),
            (BitcodeFault::UnknownAbbrev { id: 5 }, body_at + 2)
        );
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(5, 3).fixed(4, 3);
            }),
            (BitcodeFault::ArrayOrBlobCode, body_at + 1)
        );
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3)
                    .vbr(2, 5)
                    .fixed(1, 1)
                    .vbr(1, 8)
                    .fixed(0, 1)
                    .fixed(3, 3);
                w.fixed(4, 3).vbr(0, 6);
            }),
            (BitcodeFault::BadArray, body_at + 2)
        );
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3).vbr(3, 5).fixed(1, 1).vbr(1, 8);
                w.fixed(0, 1).fixed(3, 3).fixed(0, 1).fixed(5, 3);
                w.fixed(4, 3).vbr(0, 6);
            }),
            (BitcodeFault::BadArray, body_at + 3)
        );
        let (f, _) = in_symtab(&|w| {
            for _ in 0..=MAX_ABBREVS {
                w.blob_abbrev();
            }
        });
        assert_eq!(f, BitcodeFault::TooManyAbbrevs);
        // A blob past the end.
        let data = Writer::new()
            .block(2, SYMTAB_BLOCK_ID, 3, None, |w| {
                w.blob_abbrev()
                    .fixed(4, 3)
                    .vbr(20, 6)
                    .align32()
                    .bytes(b"12345678");
            })
            .finish();
        assert_eq!(
            fault(&data),
            (BitcodeFault::BlobOutOfBounds { size: 20 }, 16)
        );
    }

    #[test]
    fn records_in_the_table_blocks_are_read_as_llvm_reads_them() {
        let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &[("f", DEFINED)]);
        // Fields, arrays and a nested block before the blob; the last
        // record with the blob's code wins, even an unabbreviated one
        // (which has no blob: the table is then empty).
        let data = Writer::new()
            .module()
            .block(2, SYMTAB_BLOCK_ID, 4, None, |w| {
                // [literal 1, fixed 7, vbr 3, char6, array of vbr 2]
                w.fixed(2, 4).vbr(6, 5);
                w.fixed(1, 1).vbr(1, 8);
                w.fixed(0, 1).fixed(1, 3).vbr(7, 5);
                w.fixed(0, 1).fixed(2, 3).vbr(3, 5);
                w.fixed(0, 1).fixed(4, 3);
                w.fixed(0, 1).fixed(3, 3).fixed(0, 1).fixed(2, 3).vbr(2, 5);
                w.fixed(4, 4).fixed(99, 7).vbr(1000, 3).fixed(5, 6);
                w.vbr(3, 6).vbr(1, 2).vbr(2, 2).vbr(7, 2);
                // [vbr 6 code, blob]: code 2 is not the table.
                w.fixed(2, 4).vbr(2, 5).fixed(0, 1).fixed(2, 3).vbr(6, 5);
                w.fixed(0, 1).fixed(5, 3);
                w.fixed(5, 4)
                    .vbr(1, 6)
                    .vbr(b"garbage".len() as u64, 6)
                    .align32();
                w.bytes(b"garbage").align32();
                w.block(4, 77, 2, None, |w| {
                    w.fixed(3, 2).vbr(1, 6).vbr(0, 6);
                });
                w.fixed(5, 4)
                    .vbr(2, 6)
                    .vbr(4, 6)
                    .align32()
                    .bytes(b"nope")
                    .align32();
            })
            .blob_block(STRTAB_BLOCK_ID, &strtab)
            .finish();
        let contents = BitcodeFileContents::parse(&data).unwrap();
        assert_eq!(contents.symtab(), b"garbage");
        let with_table = |last_unabbreviated: bool| {
            let mut w = Writer::new();
            w.module().block(2, SYMTAB_BLOCK_ID, 3, None, |w| {
                w.blob_abbrev()
                    .blob_record(4, b"first")
                    .blob_record(4, &symtab);
                if last_unabbreviated {
                    w.fixed(3, 3).vbr(1, 6).vbr(0, 6);
                }
            });
            w.blob_block(STRTAB_BLOCK_ID, &strtab).finish()
        };
        assert_eq!(indexed(&with_table(false)).unwrap(), [b"f"]);
        let data = with_table(true);
        let contents = BitcodeFileContents::parse(&data).unwrap();
        assert!(contents.symtab().is_empty());
        assert_eq!(contents.current_symtab(), Ok(None));
    }

    #[test]
    fn cut_or_damaged_bitcode_never_panics() {
        let check = |data: &[u8]| match BitcodeFileContents::parse(data) {
            Ok(contents) => {
                assert!(contents.symtab().len() <= data.len());
                if let Ok(Some(table)) = contents.current_symtab() {
                    assert!(table.defined_global_symbols().count() <= data.len());
                }
            }
            Err(e) => {
                assert!(e.offset() <= data.len() as u64, "{e}");
                let _ = alloc::format!("{e}");
            }
        };
        for len in (0..K_BC.len()).step_by(4) {
            check(&K_BC[..len]);
        }
        let mut data = K_BC.to_vec();
        for at in 0..data.len() {
            for flip in [0x01, 0x80, 0xff] {
                data[at] ^= flip;
                check(&data);
                data[at] ^= flip;
            }
        }
    }
}
