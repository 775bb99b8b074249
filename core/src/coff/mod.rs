//! A minimal COFF reader: relocatable objects (what `clang -c` writes for
//! Windows targets) and PE images (DLLs and executables), little-endian,
//! with the file header, the optional header's fields this crate uses, the
//! section table, section names, contents, relocations and symbols.
//!
//! ```text
//! object:  0           file header (20 bytes): machine, section count,
//!                      symbol table offset and count, optional header size
//! image:   0           DOS header ("MZ"), e_lfanew at 0x3c
//!          e_lfanew    "PE\0\0", then the file header
//!          +24         optional header (PE32 or PE32+): image base,
//!                      alignments, data directories
//! both:    after them  section headers (40 bytes each), numbered from 1
//!          PointerToRawData      each section's contents
//!          PointerToRelocations  its relocations (10 bytes each; objects)
//!          PointerToSymbolTable  symbols (18 bytes each, with their
//!                      auxiliary records), then the string table: a
//!                      4-byte size that counts itself, then NUL-terminated
//!                      names
//! ```
//! A section name longer than eight bytes is `/<decimal offset>` (or
//! `//<base64 offset>`) into the string table in objects; linkers cut names
//! in images to eight bytes (`.hip_fatbin` becomes `.hip_fat`).
//! [`CoffFile::parse`] checks the headers and the section table; a symbol or
//! string table that cannot be read leaves the file without symbols (as LLVM
//! reads it), and long names then fail with that error. Each section's own
//! name, contents and relocations are checked when [`CoffFile::section`]
//! reaches it, and a bad section does not hide the others. Big objects
//! (`-mbig-obj`) are reported as unsupported.

use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64};
use crate::elf::Class;
use crate::{Error, ErrorKind, Field, Result};

pub use crate::error::CoffUnsupported;

#[cfg(feature = "alloc")]
mod edit;

#[cfg(feature = "alloc")]
pub use edit::{rewrite_sections, NewSection};

/// `IMAGE_FILE_MACHINE_AMD64`.
pub const MACHINE_AMD64: u16 = 0x8664;
/// `IMAGE_FILE_MACHINE_ARM64`.
pub const MACHINE_ARM64: u16 = 0xaa64;
/// `IMAGE_FILE_MACHINE_I386`.
pub const MACHINE_I386: u16 = 0x14c;
/// `IMAGE_FILE_MACHINE_ARMNT`.
pub const MACHINE_ARMNT: u16 = 0x1c4;
/// Section characteristics: executable code.
pub const SCN_CNT_CODE: u32 = 0x20;
/// Section characteristics: uninitialized data (no contents in the file).
pub const SCN_CNT_UNINITIALIZED_DATA: u32 = 0x80;
/// Section characteristics: the linker drops the section.
pub const SCN_LNK_REMOVE: u32 = 0x800;
/// Section characteristics: the section's alignment (a 4-bit field).
pub const SCN_ALIGN_MASK: u32 = 0x00f0_0000;
/// Section characteristics: the relocation count is in the first relocation.
pub const SCN_LNK_NRELOC_OVFL: u32 = 0x0100_0000;
/// Section characteristics: readable.
pub const SCN_MEM_READ: u32 = 0x4000_0000;
/// Symbol storage class of an external (global) symbol.
pub const SYM_CLASS_EXTERNAL: u8 = 2;
/// Symbol storage class of a static (section-local) symbol.
pub const SYM_CLASS_STATIC: u8 = 3;
/// Symbol storage class of a `.file` symbol.
pub const SYM_CLASS_FILE: u8 = 103;
/// Symbol storage class of a weak external.
pub const SYM_CLASS_WEAK_EXTERNAL: u8 = 105;
/// COMDAT selection of a section associated with another.
pub const COMDAT_SELECT_ASSOCIATIVE: u8 = 5;
/// Size of a symbol table record (a symbol or an auxiliary record).
pub const SYMBOL_SIZE: u64 = 18;
/// Size of a section header.
pub const SECTION_HEADER_SIZE: u64 = 40;
/// Size of a relocation.
pub const RELOCATION_SIZE: u64 = 10;
/// Size of the file header.
pub const FILE_HEADER_SIZE: u64 = 20;
/// The PE signature that `e_lfanew` points at.
pub const PE_MAGIC: &[u8; 4] = b"PE\0\0";
/// The class ID a big object's header carries at offset 12.
pub const BIG_OBJECT_MAGIC: [u8; 16] = [
    0xc7, 0xa1, 0xba, 0xd1, 0xee, 0xba, 0xa9, 0x4b, 0xaf, 0x20, 0xfa, 0xf6, 0x6a, 0xa4, 0xdc, 0xb8,
];
/// Optional header magic of PE32.
pub const PE32_MAGIC: u16 = 0x10b;
/// Optional header magic of PE32+.
pub const PE32_PLUS_MAGIC: u16 = 0x20b;

/// The file header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct RawFileHeader {
    pub machine: U16,
    pub number_of_sections: U16,
    pub time_date_stamp: U32,
    pub pointer_to_symbol_table: U32,
    pub number_of_symbols: U32,
    pub size_of_optional_header: U16,
    pub characteristics: U16,
}
const _: () = assert!(core::mem::size_of::<RawFileHeader>() == 20);

/// A section header.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
#[allow(missing_docs)]
pub struct SectionHeader {
    pub name: [u8; 8],
    pub virtual_size: U32,
    pub virtual_address: U32,
    pub size_of_raw_data: U32,
    pub pointer_to_raw_data: U32,
    pub pointer_to_relocations: U32,
    pub pointer_to_linenumbers: U32,
    pub number_of_relocations: U16,
    pub number_of_linenumbers: U16,
    pub characteristics: U32,
}
const _: () = assert!(core::mem::size_of::<SectionHeader>() == 40);

/// A relocation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
#[allow(missing_docs)]
pub struct Relocation {
    pub virtual_address: U32,
    pub symbol_table_index: U32,
    pub kind: U16,
}
const _: () = assert!(core::mem::size_of::<Relocation>() == 10);

/// A symbol table record.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
#[allow(missing_docs)]
pub struct Symbol {
    pub name: [u8; 8],
    pub value: U32,
    pub section_number: U16,
    pub kind: U16,
    pub storage_class: u8,
    pub number_of_aux_symbols: u8,
}
const _: () = assert!(core::mem::size_of::<Symbol>() == 18);

impl Symbol {
    /// The section number: 1-based; 0 undefined, negative special.
    pub fn section(&self) -> i16 {
        i16::from_le_bytes(self.section_number.get().to_le_bytes())
    }
}

/// The file header fields, in native integers, with what the optional
/// header of an image adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// `Machine` (0x8664 x86-64, 0xaa64 ARM64, 0x14c i386, 0x1c4 ARMNT).
    pub machine: u16,
    /// `NumberOfSections`.
    pub number_of_sections: u16,
    /// `TimeDateStamp`.
    pub time_date_stamp: u32,
    /// `PointerToSymbolTable` (0: none).
    pub pointer_to_symbol_table: u32,
    /// `NumberOfSymbols`, auxiliary records included.
    pub number_of_symbols: u32,
    /// `Characteristics`.
    pub characteristics: u16,
    /// Where the file header starts: 0 in objects, past `PE\0\0` in images.
    pub offset: u64,
    /// For an image, its optional header.
    pub image: Option<ImageHeader>,
}

/// The optional header fields of a PE image this crate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageHeader {
    /// PE32+ (64-bit) rather than PE32.
    pub pe32_plus: bool,
    /// `ImageBase`: the address relative virtual addresses are relative to.
    pub image_base: u64,
}

/// A parsed COFF object or PE image over a borrowed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoffFile<'data> {
    data: &'data [u8],
    header: FileHeader,
    table_offset: u64,
    table: &'data [u8],
    symbols: &'data [u8],
    strings_offset: u64,
    strings: &'data [u8],
    symbols_fault: Option<Error>,
}

/// One section: its header, full name and contents, borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'data> {
    index: u32,
    name: &'data [u8],
    header: &'data SectionHeader,
    data: &'data [u8],
    address: Option<u64>,
}

impl<'data> CoffFile<'data> {
    /// Whether `data` starts as a COFF object or PE image, as LLVM tells
    /// them apart (a COFF object of a machine it knows, a big object, or an
    /// `MZ` stub whose `e_lfanew` names `PE\0\0`).
    pub fn is_coff(data: &[u8]) -> bool {
        match data {
            [0x64, 0x86 | 0xaa, ..] | [0x4c | 0xc4, 0x01, ..] => true,
            [0, 0, 0xff, 0xff, ..] => data.get(12..28) == Some(&BIG_OBJECT_MAGIC[..]),
            [b'M', b'Z', ..] => pe_signature(data).is_some(),
            _ => false,
        }
    }

    /// Parses the headers, the section table and the symbol and string
    /// tables. Section contents are not read.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let offset = if data.starts_with(b"MZ") {
            pe_signature(data)
                .ok_or_else(|| Error::truncated(Field::DosHeader, 0x40, to_u64(data.len()), 0))?
                .checked_add(4)
                .ok_or_else(|| Error::truncated(Field::DosHeader, 0x40, to_u64(data.len()), 0))?
        } else {
            0
        };
        let raw = range(data, offset, FILE_HEADER_SIZE)
            .and_then(|b| RawFileHeader::ref_from_bytes(b).ok())
            .ok_or_else(|| {
                Error::truncated(
                    Field::CoffHeader,
                    offset.saturating_add(FILE_HEADER_SIZE),
                    to_u64(data.len()),
                    offset,
                )
            })?;
        if raw.machine.get() == 0 && raw.number_of_sections.get() == 0xffff {
            return Err(unsupported(CoffUnsupported::BigObject, offset));
        }
        let optional_at = offset.saturating_add(FILE_HEADER_SIZE);
        let optional_size = u64::from(raw.size_of_optional_header.get());
        let optional = range(data, optional_at, optional_size).ok_or_else(|| {
            Error::truncated(
                Field::OptionalHeader,
                optional_at.saturating_add(optional_size),
                to_u64(data.len()),
                optional_at,
            )
        })?;
        let image = if offset != 0 {
            Some(image_header(optional, optional_at)?)
        } else {
            None
        };
        let header = FileHeader {
            machine: raw.machine.get(),
            number_of_sections: raw.number_of_sections.get(),
            time_date_stamp: raw.time_date_stamp.get(),
            pointer_to_symbol_table: raw.pointer_to_symbol_table.get(),
            number_of_symbols: raw.number_of_symbols.get(),
            characteristics: raw.characteristics.get(),
            offset,
            image,
        };
        let table_at = optional_at.saturating_add(optional_size);
        let count = u64::from(header.number_of_sections);
        let table =
            range(data, table_at, count.saturating_mul(SECTION_HEADER_SIZE)).ok_or(Error::new(
                ErrorKind::SectionTableOutOfBounds {
                    offset: table_at,
                    count,
                    len: to_u64(data.len()),
                },
                offset.saturating_add(2),
            ))?;
        // As LLVM does, a file whose symbol or string table cannot be read is
        // read without them: short section names still name their sections.
        let (symbols, strings, symbols_fault) = match symbol_and_string_tables(data, &header) {
            Ok((symbols, strings)) => (symbols, strings, None),
            Err(fault) => (&[][..], &[][..], Some(fault)),
        };
        let strings_offset =
            u64::from(header.pointer_to_symbol_table).saturating_add(to_u64(symbols.len()));
        Ok(CoffFile {
            data,
            header,
            table_offset: table_at,
            table,
            symbols,
            strings_offset,
            strings,
            symbols_fault,
        })
    }

    /// Why the symbol table or the string table after it could not be read,
    /// if so: the file is then read without symbols, and a long name is this
    /// error.
    pub fn symbols_fault(&self) -> Option<Error> {
        self.symbols_fault
    }

    /// The whole input.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Whether this is a PE image (DLL or executable) rather than an object.
    pub fn is_image(&self) -> bool {
        self.header.image.is_some()
    }

    /// The word size of the machine, as ELF names it: 64-bit for x86-64 and
    /// ARM64 and for PE32+ images, 32-bit otherwise.
    pub fn class(&self) -> Class {
        let wide = match self.header.image {
            Some(image) => image.pe32_plus,
            None => matches!(self.header.machine, MACHINE_AMD64 | MACHINE_ARM64),
        };
        if wide {
            Class::Elf64
        } else {
            Class::Elf32
        }
    }

    /// The number of sections (numbered 1 to this).
    pub fn section_count(&self) -> u32 {
        self.header.number_of_sections.into()
    }

    /// File offset of section `index`'s header.
    pub fn section_header_offset(&self, index: u32) -> u64 {
        u64::from(index)
            .saturating_sub(1)
            .saturating_mul(SECTION_HEADER_SIZE)
            .saturating_add(self.table_offset)
    }

    fn section_header(&self, index: u32) -> Option<&'data SectionHeader> {
        let at = u64::from(index.checked_sub(1)?).checked_mul(SECTION_HEADER_SIZE)?;
        SectionHeader::ref_from_bytes(range(self.table, at, SECTION_HEADER_SIZE)?).ok()
    }

    /// The section numbered `index` (from 1), with its name and contents
    /// checked.
    pub fn section(&self, index: u32) -> Result<Section<'data>> {
        let header = self.existing_header(index)?;
        let at = self.section_header_offset(index);
        let name = self.section_name(index)?;
        let (offset, size) = self.contents_range(header);
        let data = range(self.data, offset, size).ok_or_else(|| {
            Error::new(
                ErrorKind::SectionOutOfBounds {
                    offset,
                    size,
                    len: to_u64(self.data.len()),
                },
                at,
            )
            .in_entry(index.into())
        })?;
        let address = self.header.image.and_then(|image| {
            image
                .image_base
                .checked_add(header.virtual_address.get().into())
        });
        Ok(Section {
            index,
            name,
            header,
            data,
            address,
        })
    }

    /// The full name of section `index`, read from its header and the string
    /// table (its contents may still lie outside the file), or why it cannot
    /// be read.
    pub fn section_name(&self, index: u32) -> Result<&'data [u8]> {
        self.name_of(
            self.existing_header(index)?,
            self.section_header_offset(index),
        )
        .map_err(|e| e.in_entry(index.into()))
    }

    /// The header of section `index`, or an error naming an index outside
    /// the table.
    fn existing_header(&self, index: u32) -> Result<&'data SectionHeader> {
        self.section_header(index).ok_or(Error::new(
            ErrorKind::BadSectionIndex {
                index,
                count: self.section_count(),
            },
            self.section_header_offset(1),
        ))
    }

    /// Every section, in order. A section whose name or contents lie outside
    /// the file is an error for that section only.
    pub fn sections(&self) -> impl Iterator<Item = Result<Section<'data>>> + '_ {
        (1..=self.section_count()).map(|i| self.section(i))
    }

    /// The relocations of `section` (the extended count of
    /// `IMAGE_SCN_LNK_NRELOC_OVFL` read, its carrier skipped).
    pub fn relocations(&self, section: &Section<'data>) -> Result<&'data [Relocation]> {
        let header = section.header;
        let at = u64::from(header.pointer_to_relocations.get());
        let mut count = u64::from(header.number_of_relocations.get());
        let mut start = at;
        if header.characteristics.get() & SCN_LNK_NRELOC_OVFL != 0 {
            let first = range(self.data, at, RELOCATION_SIZE)
                .and_then(|b| Relocation::ref_from_bytes(b).ok());
            if let Some(first) = first {
                count = u64::from(first.virtual_address.get()).saturating_sub(1);
                start = at.saturating_add(RELOCATION_SIZE);
            }
        }
        if count == 0 {
            return Ok(&[]);
        }
        count
            .checked_mul(RELOCATION_SIZE)
            .and_then(|size| range(self.data, start, size))
            .and_then(|b| <[Relocation]>::ref_from_bytes(b).ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::RelocationsOutOfBounds {
                        offset: start,
                        count,
                        len: to_u64(self.data.len()),
                    },
                    self.section_header_offset(section.index),
                )
                .in_entry(section.index.into())
            })
    }

    /// The number of symbol table records (auxiliary records included);
    /// none without a symbol table pointer or a readable table, as LLVM
    /// reads it.
    pub fn symbol_count(&self) -> u32 {
        u32::try_from(to_u64(self.symbols.len()) / SYMBOL_SIZE).unwrap_or(u32::MAX)
    }

    /// Symbol table record `index` (a symbol or an auxiliary record).
    pub fn symbol(&self, index: u32) -> Option<&'data Symbol> {
        let at = u64::from(index).checked_mul(SYMBOL_SIZE)?;
        Symbol::ref_from_bytes(range(self.symbols, at, SYMBOL_SIZE)?).ok()
    }

    /// The auxiliary records of the symbol at `index`, as bytes.
    pub fn aux_records(&self, index: u32, symbol: &Symbol) -> Option<&'data [u8]> {
        let at = u64::from(index).checked_add(1)?.checked_mul(SYMBOL_SIZE)?;
        let size = u64::from(symbol.number_of_aux_symbols).checked_mul(SYMBOL_SIZE)?;
        range(self.symbols, at, size)
    }

    /// A symbol's name: inline, or from the string table.
    pub fn symbol_name(&self, symbol: &'data Symbol) -> Result<&'data [u8]> {
        match symbol.name {
            [0, 0, 0, 0, a, b, c, d] => self.string(u32::from_le_bytes([a, b, c, d])),
            _ => Ok(inline_name(&symbol.name)),
        }
    }

    /// The names of the symbols the file defines for other files to use
    /// (external, and defined or common), in symbol table order: what an
    /// archive's symbol table lists for it, as LLVM's archive writer reads
    /// COFF symbols. Symbols whose names cannot be read are skipped.
    pub fn defined_global_symbols(&self) -> impl Iterator<Item = &'data [u8]> + '_ {
        let mut index = 0u32;
        core::iter::from_fn(move || {
            while index < self.symbol_count() {
                let symbol = self.symbol(index)?;
                index = index
                    .saturating_add(1)
                    .saturating_add(symbol.number_of_aux_symbols.into());
                let undefined = symbol.section() == 0 && symbol.value.get() == 0;
                let debug = symbol.section() == -2;
                if symbol.storage_class == SYM_CLASS_EXTERNAL && !undefined && !debug {
                    if let Ok(name) = self.symbol_name(symbol) {
                        return Some(name);
                    }
                }
            }
            None
        })
    }

    /// The string table, its size field included.
    pub fn string_table(&self) -> &'data [u8] {
        self.strings
    }

    /// The NUL-terminated string at `offset` of the string table. As in LLVM,
    /// an offset into the size field reads from there (an empty symbol name
    /// is all zeros, offset 0); an empty table holds no string.
    pub fn string(&self, offset: u32) -> Result<&'data [u8]> {
        if let Some(fault) = self.symbols_fault {
            return Err(fault);
        }
        crate::elf::section_name(self.strings, offset)
            .filter(|_| self.strings.len() > 4)
            .ok_or(Error::new(
                ErrorKind::BadSectionName {
                    name: offset,
                    table_size: to_u64(self.strings.len()),
                },
                self.strings_offset,
            ))
    }

    /// A section header's full name; an error is located at `at`, the
    /// header.
    fn name_of(&self, header: &'data SectionHeader, at: u64) -> Result<&'data [u8]> {
        let raw = &header.name;
        let Some(rest) = raw.strip_prefix(b"/") else {
            return Ok(inline_name(raw));
        };
        let digits = inline_name(rest);
        let offset = if let Some(base64) = digits.strip_prefix(b"/") {
            decode_base64(base64)
        } else {
            decode_decimal(digits)
        };
        let offset = offset.ok_or(Error::new(
            ErrorKind::BadDecimal {
                field: Field::SectionName,
            },
            at,
        ))?;
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        // A bad offset is the header's fault; a table that cannot be read
        // is the table's.
        self.string(offset).map_err(|e| match self.symbols_fault {
            Some(_) => e,
            None => Error::new(e.kind(), at),
        })
    }

    /// Where a section's contents lie: none without a file pointer; in an
    /// image, no more than its virtual size (the rest is file alignment).
    fn contents_range(&self, header: &SectionHeader) -> (u64, u64) {
        let offset = u64::from(header.pointer_to_raw_data.get());
        if offset == 0 {
            return (0, 0);
        }
        let raw = u64::from(header.size_of_raw_data.get());
        let size = if self.is_image() {
            raw.min(header.virtual_size.get().into())
        } else {
            raw
        };
        (offset, size)
    }
}

impl<'data> Section<'data> {
    /// The section's number (from 1).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The full name (bytes; an image's may be cut to eight).
    pub fn name(&self) -> &'data [u8] {
        self.name
    }

    /// The header.
    pub fn header(&self) -> &'data SectionHeader {
        self.header
    }

    /// The contents in the file (empty for uninitialized data).
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// Where the contents start in the file.
    pub fn offset(&self) -> u64 {
        if self.data.is_empty() {
            0
        } else {
            self.header.pointer_to_raw_data.get().into()
        }
    }

    /// In an image, the run-time address of the contents (image base plus
    /// relative virtual address); objects have none.
    pub fn address(&self) -> Option<u64> {
        self.address
    }

    /// `Characteristics`.
    pub fn characteristics(&self) -> u32 {
        self.header.characteristics.get()
    }
}

/// The offset of `PE\0\0`, if `e_lfanew` names one inside `data`.
fn pe_signature(data: &[u8]) -> Option<u64> {
    let at = u32::from_le_bytes(data.get(0x3c..0x40)?.try_into().ok()?);
    let at = u64::from(at);
    (range(data, at, 4)? == PE_MAGIC).then_some(at)
}

/// The PE32 or PE32+ optional header's image base and word size.
fn image_header(optional: &[u8], at: u64) -> Result<ImageHeader> {
    let short =
        |needed: u64| Error::truncated(Field::OptionalHeader, needed, to_u64(optional.len()), at);
    let magic = U16::read_from_prefix(optional)
        .map_err(|_| short(2))?
        .0
        .get();
    let (pe32_plus, image_base) = match magic {
        PE32_PLUS_MAGIC => {
            let bytes = optional.get(24..32).ok_or_else(|| short(32))?;
            (
                true,
                u64::from_le_bytes(bytes.try_into().map_err(|_| short(32))?),
            )
        }
        PE32_MAGIC => {
            let bytes = optional.get(28..32).ok_or_else(|| short(32))?;
            let base = u32::from_le_bytes(bytes.try_into().map_err(|_| short(32))?);
            (false, u64::from(base))
        }
        other => return Err(unsupported(CoffUnsupported::OptionalHeaderMagic(other), at)),
    };
    Ok(ImageHeader {
        pe32_plus,
        image_base,
    })
}

/// The symbol table and the string table after it. No symbol table (pointer
/// 0) gives two empty tables; a string table whose size field says less than
/// 4 is empty, as LLVM reads it.
fn symbol_and_string_tables<'data>(
    data: &'data [u8],
    header: &FileHeader,
) -> Result<(&'data [u8], &'data [u8])> {
    let at = u64::from(header.pointer_to_symbol_table);
    if at == 0 {
        return Ok((&[], &[]));
    }
    let count = u64::from(header.number_of_symbols);
    let size = count.saturating_mul(SYMBOL_SIZE);
    let len = to_u64(data.len());
    let symbols = range(data, at, size).ok_or(Error::new(
        ErrorKind::SymbolTableOutOfBounds {
            offset: at,
            count,
            len,
        },
        header.offset.saturating_add(8),
    ))?;
    let strings_at = at.saturating_add(size);
    let Some(field) = range(data, strings_at, 4) else {
        // LLVM takes a missing string table in an image as an empty one.
        return if header.image.is_some() {
            Ok((symbols, &[]))
        } else {
            Err(string_table_out_of_bounds(strings_at, 4, len))
        };
    };
    let declared = u32::from_le_bytes(field.try_into().unwrap_or_default());
    let declared = u64::from(declared).max(4);
    let strings = range(data, strings_at, declared)
        .ok_or_else(|| string_table_out_of_bounds(strings_at, declared, len))?;
    Ok((symbols, strings))
}

fn string_table_out_of_bounds(offset: u64, size: u64, len: u64) -> Error {
    Error::new(
        ErrorKind::SymbolNamesOutOfBounds { offset, size, len },
        offset,
    )
}

fn unsupported(what: CoffUnsupported, at: u64) -> Error {
    Error::new(ErrorKind::UnsupportedCoff { what }, at)
}

/// An eight-byte name field up to its first NUL.
pub(crate) fn inline_name(field: &[u8]) -> &[u8] {
    let end = memchr::memchr(0, field).unwrap_or(field.len());
    field.get(..end).unwrap_or(field)
}

/// Up to seven decimal digits (what fits after `/` in a name field).
fn decode_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = u64::from(d.checked_sub(b'0').filter(|&d| d < 10)?);
        n.checked_mul(10)?.checked_add(digit)
    })
}

/// The digits of the base64 offsets of long section names.
pub(crate) const BASE64: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Six base64 digits after `//`, for offsets past 9,999,999.
fn decode_base64(digits: &[u8]) -> Option<u64> {
    if digits.len() != 6 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = BASE64.iter().position(|&c| c == d)?;
        n.checked_mul(64)?.checked_add(to_u64(digit))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object with one section named through the string table.
    fn object() -> [u8; 80] {
        let mut out = [0u8; 80];
        let mut put = |at: usize, bytes: &[u8]| out[at..at + bytes.len()].copy_from_slice(bytes);
        // File header: x86-64, 1 section, symbol table at 64 with no symbols.
        put(0, &[0x64, 0x86, 1, 0]);
        put(8, &64u32.to_le_bytes());
        // Section header: "/4", 4 bytes of data at 60, readable data.
        put(20, b"/4");
        put(36, &4u32.to_le_bytes());
        put(40, &60u32.to_le_bytes());
        put(56, &0x4000_0040u32.to_le_bytes());
        put(60, b"data");
        // String table: size 16, ".hip_fatbin\0".
        put(64, &16u32.to_le_bytes());
        put(68, b".hip_fatbin\0");
        out
    }

    #[test]
    fn reads_long_names_and_contents() {
        let data = object();
        let file = CoffFile::parse(&data).unwrap();
        assert!(!file.is_image());
        assert_eq!(file.class(), Class::Elf64);
        let section = file.section(1).unwrap();
        assert_eq!(section.name(), b".hip_fatbin");
        assert_eq!(section.data(), b"data");
        assert_eq!(section.offset(), 60);
        assert!(file.section(2).is_err());
    }

    #[test]
    fn malformed_files_get_located_errors() {
        let data = object();
        let kind = |d: &[u8]| CoffFile::parse(d).unwrap_err().kind();
        assert!(matches!(
            kind(&data[..10]),
            ErrorKind::Truncated {
                field: Field::CoffHeader,
                ..
            }
        ));
        assert!(matches!(
            kind(&data[..40]),
            ErrorKind::SectionTableOutOfBounds { .. }
        ));
        // The string table's size field says more than the file holds: no
        // symbols, and the long name is that error.
        let mut long = data;
        long[64] = 200;
        let file = CoffFile::parse(&long).unwrap();
        let error = file.symbols_fault().unwrap();
        assert!(matches!(
            error.kind(),
            ErrorKind::SymbolNamesOutOfBounds { .. }
        ));
        assert_eq!(error.offset(), 64);
        assert_eq!(file.section(1).unwrap_err().kind(), error.kind());
        // A name offset past the string table: that section only.
        let mut name = data;
        name[21] = b'4';
        name[22] = b'9';
        let file = CoffFile::parse(&name).unwrap();
        let error = file.section(1).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::BadSectionName { name: 49, .. }
        ));
        // Contents past the end.
        let mut past = data;
        past[40] = 0xff;
        let error = CoffFile::parse(&past).unwrap().section(1).unwrap_err();
        assert!(matches!(error.kind(), ErrorKind::SectionOutOfBounds { .. }));
        assert_eq!(error.offset(), 20);
        // Relocations past the end.
        let mut relocs = data;
        relocs[44] = 60;
        relocs[52] = 3;
        let file = CoffFile::parse(&relocs).unwrap();
        let section = file.section(1).unwrap();
        let error = file.relocations(&section).unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::RelocationsOutOfBounds { count: 3, .. }
        ));
    }

    #[test]
    fn decodes_name_offsets() {
        assert_eq!(decode_decimal(b"1234567"), Some(1_234_567));
        assert_eq!(decode_decimal(b"12a"), None);
        assert_eq!(decode_base64(b"AAAAAB"), Some(1));
        assert_eq!(decode_base64(b"AAAA/+"), Some(63 * 64 + 62));
    }
}
