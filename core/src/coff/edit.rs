//! Rewriting a COFF object with sections dropped or added, byte for byte as
//! llvm-objcopy 22 writes it (`--remove-section`, `--add-section` with
//! `--set-section-flags`): what clang-offload-bundler runs for `-type=o`.
//!
//! llvm-objcopy lays the whole file out again: the file header (no optional
//! header in an object), the section headers, each section's contents
//! followed by its relocations (uninitialized data gets zeros in the file
//! too; a section without contents gets pointer 0), the symbol table and a
//! string table rebuilt as LLVM's `StringTableBuilder` builds it. Symbols
//! keep their order and records; their section numbers follow the sections
//! that stay, and a section definition's auxiliary record is given the
//! number of its section (or of the one it is associated with).

use alloc::vec::Vec;

use zerocopy::little_endian::{U16, U32};
use zerocopy::IntoBytes;

use super::{
    CoffFile, CoffUnsupported, Relocation, Section, SectionHeader, BASE64,
    COMDAT_SELECT_ASSOCIATIVE, FILE_HEADER_SIZE, RELOCATION_SIZE, SCN_ALIGN_MASK, SCN_CNT_CODE,
    SCN_LNK_NRELOC_OVFL, SECTION_HEADER_SIZE, SYMBOL_SIZE, SYM_CLASS_FILE, SYM_CLASS_STATIC,
    SYM_CLASS_WEAK_EXTERNAL,
};
use crate::bytes::{grow, to_u64};
use crate::elf::strtab::StringTable;
use crate::{Error, ErrorKind, Result};

/// A section to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewSection<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// `Characteristics`, as llvm-objcopy derives them from the flags asked
    /// for; a section of the file with the same name gets them too (its
    /// alignment kept).
    pub characteristics: u32,
    /// Its contents.
    pub data: &'a [u8],
}

/// Characteristics under which a section gets an address and a virtual size.
const SCN_MEM_ANY: u32 = 0x2000_0000 | super::SCN_MEM_READ | 0x8000_0000;
/// Sections past this need the big-object format, which llvm-objcopy then
/// writes and this writer does not.
const MAX_SECTIONS: usize = 65279;

/// One section as written.
struct OutSection<'a> {
    name: &'a [u8],
    header: SectionHeader,
    data: &'a [u8],
    relocations: &'a [Relocation],
}

/// `file` without the sections `keep` refuses and with `added` appended, as
/// llvm-objcopy writes it. Objects only: an image is refused.
pub fn rewrite_sections(
    file: &CoffFile<'_>,
    mut keep: impl FnMut(&Section<'_>) -> bool,
    added: &[NewSection<'_>],
) -> Result<Vec<u8>> {
    if file.is_image() {
        return Err(Error::new(
            ErrorKind::UnsupportedCoff {
                what: CoffUnsupported::ImageRewrite,
            },
            file.header().offset,
        ));
    }
    let starts = symbol_starts(file)?;
    let mut sections = Vec::new();
    // New number of each old section (index 0 unused), 0 when dropped.
    let mut numbers = Vec::new();
    numbers.push(0u32);
    for section in file.sections() {
        let section = section?;
        let relocations = file.relocations(&section)?;
        check_targets(file, &starts, relocations)?;
        if !keep(&section) {
            numbers.push(0);
            continue;
        }
        let mut header = *section.header();
        let mut characteristics = header.characteristics.get() & !SCN_LNK_NRELOC_OVFL;
        if let Some(new) = added.iter().find(|n| n.name == section.name()) {
            characteristics = (characteristics & SCN_ALIGN_MASK) | new.characteristics;
        }
        header.characteristics = U32::new(characteristics);
        sections.push(OutSection {
            name: section.name(),
            header,
            data: section.data(),
            relocations,
        });
        numbers.push(u32::try_from(sections.len()).unwrap_or(u32::MAX));
    }
    for new in added {
        let header = added_header(new, sections.last().map(|s| &s.header))?;
        sections.push(OutSection {
            name: new.name,
            header,
            data: new.data,
            relocations: &[],
        });
    }
    if sections.len() > MAX_SECTIONS {
        return Err(Error::new(
            ErrorKind::UnsupportedCoff {
                what: CoffUnsupported::BigObject,
            },
            0,
        ));
    }
    let symbols = symbols(file, &starts, &numbers)?;
    write(file, &mut sections, &symbols)
}

/// Which symbol table records start a symbol (the rest are auxiliary); a
/// symbol whose auxiliary records run past the table is an error.
fn symbol_starts(file: &CoffFile<'_>) -> Result<Vec<bool>> {
    let count = file.symbol_count();
    let mut starts = Vec::new();
    let mut index = 0u32;
    while index < count {
        let symbol = file.symbol(index).ok_or(bad_symbol(index, count))?;
        file.aux_records(index, symbol)
            .ok_or(bad_symbol(index, count))?;
        starts.push(true);
        let aux = usize::from(symbol.number_of_aux_symbols);
        starts.resize(starts.len().saturating_add(aux), false);
        index = index
            .saturating_add(1)
            .saturating_add(symbol.number_of_aux_symbols.into());
    }
    Ok(starts)
}

fn bad_symbol(index: u32, count: u32) -> Error {
    Error::new(ErrorKind::BadSymbolIndex { index, count }, 0)
}

/// Every relocation names a symbol, not an auxiliary record.
fn check_targets(file: &CoffFile<'_>, starts: &[bool], relocations: &[Relocation]) -> Result<()> {
    for relocation in relocations {
        let index = relocation.symbol_table_index.get();
        let at = usize::try_from(index).unwrap_or(usize::MAX);
        if !starts.get(at).copied().unwrap_or(false) {
            return Err(bad_symbol(index, file.symbol_count()));
        }
    }
    Ok(())
}

/// The header llvm-objcopy gives an added section: an address right after
/// the last section's and a virtual size when it is readable, writable or
/// executable.
fn added_header(new: &NewSection<'_>, last: Option<&SectionHeader>) -> Result<SectionHeader> {
    let size =
        u32::try_from(new.data.len()).map_err(|_| Error::new(ErrorKind::LayoutOverflow, 0))?;
    let with_address = new.characteristics & SCN_MEM_ANY != 0;
    let address = match last {
        Some(last) if with_address => last
            .virtual_address
            .get()
            .checked_add(last.virtual_size.get())
            .ok_or(Error::new(ErrorKind::LayoutOverflow, 0))?,
        _ => 0,
    };
    Ok(SectionHeader {
        name: [0; 8],
        virtual_size: U32::new(if with_address { size } else { 0 }),
        virtual_address: U32::new(address),
        size_of_raw_data: U32::new(size),
        pointer_to_raw_data: U32::new(0),
        pointer_to_relocations: U32::new(0),
        pointer_to_linenumbers: U32::new(0),
        number_of_relocations: U16::new(0),
        number_of_linenumbers: U16::new(0),
        characteristics: U32::new(new.characteristics),
    })
}

/// One symbol as written: its name and its record with the auxiliary ones.
struct OutSymbol<'a> {
    name: &'a [u8],
    records: Vec<u8>,
}

/// The symbols with their section numbers renumbered.
fn symbols<'a>(
    file: &CoffFile<'a>,
    starts: &[bool],
    numbers: &[u32],
) -> Result<Vec<OutSymbol<'a>>> {
    let count = file.symbol_count();
    let sections = file.section_count();
    let renumber = |old: u32| -> Result<u32> {
        let at = usize::try_from(old).unwrap_or(usize::MAX);
        match numbers.get(at) {
            Some(0) => Err(Error::new(ErrorKind::SectionInUse { index: old, by: 0 }, 0)),
            Some(&new) if old != 0 => Ok(new),
            _ => Err(Error::new(
                ErrorKind::BadSectionIndex {
                    index: old,
                    count: sections,
                },
                0,
            )),
        }
    };
    let mut out = Vec::new();
    for (index, _) in starts.iter().enumerate().filter(|(_, &start)| start) {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        let symbol = file.symbol(index).ok_or(bad_symbol(index, count))?;
        let aux = file
            .aux_records(index, symbol)
            .ok_or(bad_symbol(index, count))?;
        let name = file.symbol_name(symbol)?;
        let mut record = *symbol;
        let number = symbol.section();
        let new_number = match u32::try_from(number) {
            Ok(old) if old > 0 => Some(renumber(old)?),
            _ => None,
        };
        if let Some(new) = new_number {
            record.section_number = U16::new(u16::try_from(new).unwrap_or(u16::MAX));
        }
        let mut aux = aux.to_vec();
        match symbol.storage_class {
            SYM_CLASS_FILE => {
                let used = aux
                    .iter()
                    .rposition(|&b| b != 0)
                    .map_or(0, |i| i.saturating_add(1));
                let needed = to_u64(used).div_ceil(SYMBOL_SIZE);
                if needed != u64::from(symbol.number_of_aux_symbols) {
                    return Err(Error::new(
                        ErrorKind::UnsupportedCoff {
                            what: CoffUnsupported::FileSymbolPadding,
                        },
                        0,
                    ));
                }
            }
            SYM_CLASS_STATIC if symbol.number_of_aux_symbols == 1 => {
                if let Some(own) = new_number {
                    let target = if aux.get(14) == Some(&COMDAT_SELECT_ASSOCIATIVE) {
                        renumber(u32::from(le16(&aux, 12)))?
                    } else {
                        own
                    };
                    let [a, b, c, d] = target.to_le_bytes();
                    if let Some(low) = aux.get_mut(12..14) {
                        low.copy_from_slice(&[a, b]);
                    }
                    if let Some(high) = aux.get_mut(16..18) {
                        high.copy_from_slice(&[c, d]);
                    }
                }
            }
            SYM_CLASS_WEAK_EXTERNAL if symbol.number_of_aux_symbols > 0 => {
                let tag = le32(&aux, 0);
                let at = usize::try_from(tag).unwrap_or(usize::MAX);
                if !starts.get(at).copied().unwrap_or(false) {
                    return Err(bad_symbol(tag, count));
                }
            }
            _ => {}
        }
        let mut records = record.as_bytes().to_vec();
        records.extend_from_slice(&aux);
        out.push(OutSymbol { name, records });
    }
    Ok(out)
}

/// Lays the file out and writes it.
fn write(
    file: &CoffFile<'_>,
    sections: &mut [OutSection<'_>],
    symbols: &[OutSymbol<'_>],
) -> Result<Vec<u8>> {
    let overflow = || Error::new(ErrorKind::LayoutOverflow, 0);
    let long = |name: &&[u8]| name.len() > 8;
    let strings = StringTable::build_coff(
        sections.iter().map(|s| s.name).filter(long).collect(),
        symbols.iter().map(|s| s.name).filter(long).collect(),
    )?;
    let count = to_u64(sections.len());
    let mut at = count
        .checked_mul(SECTION_HEADER_SIZE)
        .and_then(|n| n.checked_add(FILE_HEADER_SIZE))
        .ok_or_else(overflow)?;
    let u32_at = |at: u64| u32::try_from(at).map_err(|_| overflow());
    for section in sections.iter_mut() {
        let header = &mut section.header;
        header.name = name_field(section.name, &strings);
        let size = u64::from(header.size_of_raw_data.get());
        header.pointer_to_raw_data = U32::new(if size > 0 { u32_at(at)? } else { 0 });
        at = at.checked_add(size).ok_or_else(overflow)?;
        let relocations = to_u64(section.relocations.len());
        let mut table = relocations;
        if relocations >= 0xffff {
            let flags = header.characteristics.get() | SCN_LNK_NRELOC_OVFL;
            header.characteristics = U32::new(flags);
            header.number_of_relocations = U16::new(0xffff);
            table = relocations.checked_add(1).ok_or_else(overflow)?;
        } else {
            header.number_of_relocations = U16::new(u16::try_from(relocations).unwrap_or(0));
        }
        header.pointer_to_relocations = U32::new(if table > 0 { u32_at(at)? } else { 0 });
        at = table
            .checked_mul(RELOCATION_SIZE)
            .and_then(|n| at.checked_add(n))
            .ok_or_else(overflow)?;
    }
    let symbol_table = at;
    let records: usize = symbols.iter().map(|s| s.records.len()).sum();
    let total = at
        .checked_add(to_u64(records))
        .and_then(|n| n.checked_add(to_u64(strings.bytes().len())))
        .ok_or_else(overflow)?;
    let mut out = Vec::new();
    grow(&mut out, usize::try_from(total).map_err(|_| overflow())?)?;
    out.clear();
    let header = file.header();
    let raw_count = u32::try_from(records / 18).map_err(|_| overflow())?;
    out.extend_from_slice(&header.machine.to_le_bytes());
    out.extend_from_slice(
        &u16::try_from(sections.len())
            .map_err(|_| overflow())?
            .to_le_bytes(),
    );
    out.extend_from_slice(&header.time_date_stamp.to_le_bytes());
    out.extend_from_slice(&u32_at(symbol_table)?.to_le_bytes());
    out.extend_from_slice(&raw_count.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&header.characteristics.to_le_bytes());
    for section in sections.iter() {
        out.extend_from_slice(section.header.as_bytes());
    }
    for section in sections.iter() {
        let size =
            usize::try_from(section.header.size_of_raw_data.get()).map_err(|_| overflow())?;
        let data = section.data.get(..size).unwrap_or(section.data);
        out.extend_from_slice(data);
        // Code is padded with int3, as llvm-objcopy pads it.
        let fill = if section.header.characteristics.get() & SCN_CNT_CODE != 0 {
            0xcc
        } else {
            0
        };
        out.resize(
            out.len().saturating_add(size.saturating_sub(data.len())),
            fill,
        );
        let relocations = section.relocations.len();
        if relocations >= 0xffff {
            let carrier = Relocation {
                virtual_address: U32::new(
                    u32::try_from(relocations.saturating_add(1)).map_err(|_| overflow())?,
                ),
                symbol_table_index: U32::new(0),
                kind: U16::new(0),
            };
            out.extend_from_slice(carrier.as_bytes());
        }
        out.extend_from_slice(section.relocations.as_bytes());
    }
    for symbol in symbols {
        let mut records = symbol.records.clone();
        let name = name_bytes(symbol.name, &strings);
        if let Some(field) = records.get_mut(..8) {
            field.copy_from_slice(&name);
        }
        out.extend_from_slice(&records);
    }
    out.extend_from_slice(strings.bytes());
    Ok(out)
}

/// The little-endian `u16` at `at`, 0 past the end.
fn le16(bytes: &[u8], at: usize) -> u16 {
    let field = bytes
        .get(at..at.saturating_add(2))
        .and_then(|b| b.try_into().ok());
    field.map_or(0, u16::from_le_bytes)
}

/// The little-endian `u32` at `at`, 0 past the end.
fn le32(bytes: &[u8], at: usize) -> u32 {
    let field = bytes
        .get(at..at.saturating_add(4))
        .and_then(|b| b.try_into().ok());
    field.map_or(0, u32::from_le_bytes)
}

/// A symbol's name field: inline when it fits, else a string table offset.
fn name_bytes(name: &[u8], strings: &StringTable<'_>) -> [u8; 8] {
    let mut field = [0u8; 8];
    if name.len() <= 8 {
        if let Some(slot) = field.get_mut(..name.len()) {
            slot.copy_from_slice(name);
        }
    } else if let Some(slot) = field.get_mut(4..) {
        slot.copy_from_slice(&strings.offset(name).to_le_bytes());
    }
    field
}

/// A section's name field: inline when it fits, else `/<decimal offset>`,
/// or `//<six base64 digits>` past seven decimal digits.
fn name_field(name: &[u8], strings: &StringTable<'_>) -> [u8; 8] {
    if name.len() <= 8 {
        return name_bytes(name, strings);
    }
    let offset = strings.offset(name);
    let text = if offset <= 9_999_999 {
        alloc::format!("/{offset}").into_bytes()
    } else {
        // Six digits hold any 32-bit offset.
        let mut text = b"//".to_vec();
        text.extend([30u32, 24, 18, 12, 6, 0].map(|shift| {
            let digit = offset.checked_shr(shift).unwrap_or(0) & 63;
            let at = usize::try_from(digit).unwrap_or(0);
            BASE64.get(at).copied().unwrap_or(b'A')
        }));
        text
    };
    let mut field = [0u8; 8];
    for (slot, byte) in field.iter_mut().zip(text) {
        *slot = byte;
    }
    field
}
