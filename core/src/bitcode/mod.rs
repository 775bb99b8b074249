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

mod bitstream;
mod fault;
pub mod irsymtab;
#[cfg(all(test, feature = "alloc"))]
mod tests;

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64};
use crate::{Error, ErrorKind, Field, Result};

use bitstream::{next_top_level_block, read_blob_block, BitCursor, Blob};
use fault::malformed;
pub use fault::{BitcodeFault, MAX_ABBREVS};

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

/// Whether `data` starts as LLVM bitcode, bare or wrapped (what LLVM's
/// `identify_magic` calls bitcode).
pub fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(BITCODE_MAGIC) || data.starts_with(WRAPPER_MAGIC)
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
        let mut bits = BitCursor::after_magic(stream, base);
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
            Error::truncated(field, needed, len, 0)
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
        None => Err(Error::truncated(
            Field::BitcodeMagic,
            4,
            to_u64(stream.len()),
            base,
        )),
    }
}
