//! Adding and removing sections, with the file laid out the way llvm-objcopy
//! lays it out, so that a section added here and removed by llvm-objcopy (or
//! the reverse) gives back the original file.
//!
//! What changes: the section header table (moved to the end), the
//! section-name table and every symbol string table (rebuilt from the names in
//! use, see [`super::strtab`]), symbol tables (new name offsets, renumbered
//! section indices), section groups and extended index tables (renumbered).
//! Sections outside segments are laid out in their original file order, each
//! at its alignment; sections inside segments, and the segments, stay where
//! they are. Every other byte is copied.

use alloc::vec::Vec;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, IntoBytes};

use super::strtab::StringTable;
use super::*;

/// A section to add: it goes after the existing ones, in the order given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewSection<'a> {
    /// The section's name.
    pub name: &'a [u8],
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addralign` (0 and 1 both mean unaligned).
    pub addralign: u64,
    /// The contents.
    pub data: &'a [u8],
}

/// One section of the output: its header (offset still to be assigned) and
/// where its bytes come from.
struct Planned<'a> {
    header: SectionHeader,
    /// The section's offset in the input, which orders the layout; `None`
    /// for an added section, which goes last.
    original_offset: Option<u64>,
    /// Kept at its input offset because a segment holds it.
    in_segment: bool,
    contents: Contents<'a>,
}

enum Contents<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Contents<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Contents::Borrowed(b) => b,
            Contents::Owned(v) => v,
        }
    }
}

/// Writes `file` without the sections for which `keep` returns false and with
/// `added` appended. A removed section that a kept one still refers to (by
/// `sh_link`, `sh_info`, a symbol or a group) is an error, as is a name with a
/// NUL in it.
pub fn rewrite_sections(
    file: &ElfFile,
    mut keep: impl FnMut(&Section) -> bool,
    added: &[NewSection],
) -> Result<Vec<u8>> {
    file.check_program_header_size()?;
    let count = file.section_count();
    let sections = (0..count)
        .map(|i| file.section(i))
        .collect::<Result<Vec<_>>>()?;
    if sections
        .iter()
        .filter(|s| s.header().kind == SHT_SYMTAB)
        .count()
        > 1
    {
        return Err(Error::new(
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::MultipleSymbolTables,
            },
            0,
        ));
    }
    // llvm-objcopy reads every relocation section's entries, removed ones
    // too, and refuses an entry size that is not its type's, or contents
    // that are not whole entries (a symbol table's too).
    let class = file.header().class;
    if let Some(bad) = sections.iter().find(|s| {
        let h = s.header();
        relocation_size(class, h.kind).is_some_and(|size| h.entsize != size)
            || (relocation_size(class, h.kind).is_some() || h.kind == SHT_SYMTAB)
                && h.size.checked_rem(h.entsize).is_some_and(|r| r != 0)
    }) {
        let h = bad.header();
        let what = if h.kind == SHT_SYMTAB {
            ElfUnsupported::SymbolSize(h.entsize)
        } else {
            ElfUnsupported::RelocationSize(h.entsize)
        };
        return Err(unsupported_at(file, bad, what));
    }
    check_string_tables(file, &sections)?;
    check_symbol_table_links(file, &sections)?;
    let mut new_index: Vec<Option<u32>> = Vec::new();
    let mut next = 0u32;
    for section in &sections {
        if section.index() == 0 || keep(section) {
            new_index.push(Some(next));
            next = next.checked_add(1).ok_or_else(overflow)?;
        } else {
            new_index.push(None);
        }
    }
    let map = Renumber {
        new_index: &new_index,
        count,
    };
    for added in added {
        if added.name.contains(&0) {
            return Err(Error::new(ErrorKind::NulInSectionName, 0));
        }
    }
    let shstrndx = file.header().shstrndx;
    let new_shstrndx = map.get(shstrndx, 0)?;
    let tables = rebuilt_tables(file, &sections, &new_index, added)?;
    let mut planned = Vec::new();
    let segments = segments(file)?;
    for section in &sections {
        if new_index
            .get(usize_of(section.index())?)
            .copied()
            .flatten()
            .is_none()
        {
            continue;
        }
        planned.push(plan(file, section, &map, &tables, &segments)?);
    }
    let names = tables
        .iter()
        .find(|(index, _)| *index == shstrndx)
        .map(|(_, table)| table);
    // Without a section-name table an added section's name has nowhere to go.
    if names.is_none() && !added.is_empty() {
        return Err(Error::new(
            ErrorKind::BadNameTableIndex {
                index: shstrndx,
                count,
            },
            offset_of_shstrndx(file.header().class),
        ));
    }
    for added in added {
        planned.push(Planned {
            header: SectionHeader {
                name: names.map_or(0, |t| t.offset(added.name)),
                kind: added.kind,
                flags: added.flags,
                size: to_u64(added.data.len()),
                addralign: added.addralign,
                ..SectionHeader::default()
            },
            original_offset: None,
            in_segment: false,
            contents: Contents::Borrowed(added.data),
        });
    }
    let total = to_u64(planned.len());
    if let Some(null) = planned.first_mut() {
        // Section 0 is written afresh, as llvm-objcopy writes it: all zeros
        // (whatever the input held there) but the count and the name-table
        // index when they do not fit in the file header.
        null.header = SectionHeader {
            size: if total >= u64::from(SHN_LORESERVE) {
                total
            } else {
                0
            },
            link: if new_shstrndx >= SHN_LORESERVE {
                new_shstrndx
            } else {
                0
            },
            ..SectionHeader::default()
        };
        null.contents = Contents::Borrowed(&[]);
    }
    let start = layout_start(file, &segments)?;
    let shoff = layout(&mut planned, start, file.header().class)?;
    write(file, &planned, shoff, new_shstrndx)
}

fn overflow() -> Error {
    Error::new(ErrorKind::LayoutOverflow, 0)
}

fn usize_of(n: u32) -> Result<usize> {
    usize::try_from(n).map_err(|_| overflow())
}

/// An `UnsupportedElf` error located at `section`'s header.
fn unsupported_at(file: &ElfFile, section: &Section, what: ElfUnsupported) -> Error {
    Error::new(
        ErrorKind::UnsupportedElf { what },
        file.section_header_offset(section.index()),
    )
    .in_entry(section.index().into())
}

/// The section `index` names; `None` past the sections.
fn section_at<'s, 'data>(sections: &'s [Section<'data>], index: u32) -> Option<&'s Section<'data>> {
    sections.get(usize::try_from(index).ok()?)
}

/// llvm-objcopy rebuilds the section-name table and every symbol table's
/// string table (removed symbol tables too: it reads the whole file first),
/// so it refuses either when it is not a non-allocated `SHT_STRTAB`. A link
/// to section 0 is no table; one past the sections is reported where the
/// table is read.
fn check_string_tables(file: &ElfFile, sections: &[Section]) -> Result<()> {
    let unusable = |index: u32| {
        section_at(sections, index)
            .is_some_and(|s| s.header().kind != SHT_STRTAB || s.header().flags & SHF_ALLOC != 0)
    };
    let shstrndx = file.header().shstrndx;
    if shstrndx != 0 && unusable(shstrndx) {
        return Err(Error::new(
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::NotAStringTable(shstrndx),
            },
            offset_of_shstrndx(file.header().class),
        ));
    }
    let bad_link = |s: &&Section| {
        let h = s.header();
        h.kind == SHT_SYMTAB && h.link != 0 && unusable(h.link)
    };
    match sections.iter().find(bad_link) {
        Some(symtab) => Err(unsupported_at(
            file,
            symtab,
            ElfUnsupported::NotAStringTable(symtab.header().link),
        )),
        None => Ok(()),
    }
}

/// llvm-objcopy reads a group's signature from the `SHT_SYMTAB` its
/// `sh_link` names, a relocation section's symbols from the `SHT_SYMTAB`
/// (the `SHT_DYNSYM` when the section is allocated) its link names, if any
/// (0: none), and refuses a link to another section. One past the sections
/// is reported where it is renumbered.
fn check_symbol_table_links(file: &ElfFile, sections: &[Section]) -> Result<()> {
    let bad_link = |s: &&Section| {
        let h = s.header();
        let wanted = match h.kind {
            SHT_GROUP => SHT_SYMTAB,
            SHT_REL | SHT_RELA if h.link != 0 && h.flags & SHF_ALLOC != 0 => SHT_DYNSYM,
            SHT_REL | SHT_RELA if h.link != 0 => SHT_SYMTAB,
            _ => return false,
        };
        // Section 0 is written as the null section whatever it holds, so a
        // group's link to it names no symbol table (link-zero-after-add).
        h.link == 0 || section_at(sections, h.link).is_some_and(|t| t.header().kind != wanted)
    };
    match sections.iter().find(bad_link) {
        Some(section) => Err(unsupported_at(
            file,
            section,
            ElfUnsupported::NotASymbolTable(section.header().link),
        )),
        None => Ok(()),
    }
}

/// Old section index → new one, for the sections that stay.
struct Renumber<'a> {
    new_index: &'a [Option<u32>],
    count: u32,
}

impl Renumber<'_> {
    /// The new index of section `old`, which section `by` refers to.
    fn get(&self, old: u32, by: u32) -> Result<u32> {
        match self.new_index.get(usize_of(old)?) {
            Some(Some(new)) => Ok(*new),
            Some(None) => Err(Error::new(ErrorKind::SectionInUse { index: old, by }, 0)),
            None => Err(Error::new(
                ErrorKind::BadSectionIndex {
                    index: old,
                    count: self.count,
                },
                0,
            )
            .in_entry(by.into())),
        }
    }

    /// Whether any kept section changes index.
    fn is_identity(&self) -> bool {
        self.new_index
            .iter()
            .enumerate()
            .all(|(i, n)| n.is_none_or(|n| usize::try_from(n).is_ok_and(|n| n == i)))
    }
}

/// The string tables llvm-objcopy rebuilds: the section-name table and the
/// string table of every symbol table, each from the names still in use.
fn rebuilt_tables<'a>(
    file: &ElfFile<'a>,
    sections: &[Section<'a>],
    new_index: &[Option<u32>],
    added: &[NewSection<'a>],
) -> Result<Vec<(u32, StringTable<'a>)>> {
    let kept = |s: &&Section| {
        new_index.get(usize::try_from(s.index()).unwrap_or(usize::MAX)) != Some(&None)
    };
    let shstrndx = file.header().shstrndx;
    let mut indices: Vec<u32> = Vec::new();
    if shstrndx != 0 {
        indices.push(shstrndx);
    }
    for s in sections.iter().filter(kept) {
        // (A symbol table linked to section 0 has no string table to rebuild:
        // section 0 has no contents.)
        if s.header().kind == SHT_SYMTAB
            && s.header().link != 0
            && !indices.contains(&s.header().link)
        {
            indices.push(s.header().link);
        }
    }
    let mut tables = Vec::new();
    for index in indices {
        let mut names: Vec<&'a [u8]> = Vec::new();
        if index == shstrndx {
            names.extend(sections.iter().filter(kept).map(Section::name));
            names.extend(added.iter().map(|a| a.name));
        }
        for symtab in sections.iter().filter(kept) {
            if symtab.header().kind == SHT_SYMTAB && symtab.header().link == index {
                let strings = file.section(index)?.data();
                for symbol in symbols(file, symtab)? {
                    names.push(symbol_name(strings, symtab, &symbol)?);
                }
            }
        }
        tables.push((index, StringTable::build(names)?));
    }
    Ok(tables)
}

/// The entry size of a `SHT_REL` or `SHT_RELA` section; `None` for other
/// types.
fn relocation_size(class: Class, kind: u32) -> Option<u64> {
    let word = class.address_size();
    match kind {
        SHT_REL => Some(word.saturating_mul(2)),
        SHT_RELA => Some(word.saturating_mul(3)),
        _ => None,
    }
}

/// The fields of a symbol this module rewrites, and where it is.
struct Symbol {
    at: usize,
    name: u32,
    shndx: u16,
}

fn symbols(file: &ElfFile, symtab: &Section) -> Result<Vec<Symbol>> {
    let class = file.header().class;
    let size = class.symbol_size();
    if symtab.header().entsize != size {
        return Err(Error::new(
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::SymbolSize(symtab.header().entsize),
            },
            symtab.offset(),
        )
        .in_entry(symtab.index().into()));
    }
    let step = usize::try_from(size).map_err(|_| overflow())?;
    let data = symtab.data();
    let mut out = Vec::new();
    for (i, raw) in data.chunks_exact(step).enumerate() {
        let at = i.checked_mul(step).ok_or_else(overflow)?;
        // st_name is first in both classes; st_shndx is the last field of a
        // 32-bit symbol and follows st_info/st_other in a 64-bit one.
        let name = U32::read_from_prefix(raw).map_or(0, |(v, _)| v.get());
        let shndx_at = match class {
            Class::Elf32 => 14,
            Class::Elf64 => 6,
        };
        let shndx = raw
            .get(shndx_at..)
            .and_then(|r| U16::read_from_prefix(r).ok())
            .map_or(0, |(v, _)| v.get());
        out.push(Symbol { at, name, shndx });
    }
    Ok(out)
}

fn symbol_name<'a>(strings: &'a [u8], symtab: &Section, symbol: &Symbol) -> Result<&'a [u8]> {
    if symbol.name == 0 {
        return Ok(&[]);
    }
    section_name(strings, symbol.name).ok_or_else(|| {
        Error::new(
            ErrorKind::BadSectionName {
                name: symbol.name,
                table_size: to_u64(strings.len()),
            },
            symtab.offset().saturating_add(to_u64(symbol.at)),
        )
        .in_entry(symtab.index().into())
    })
}

/// A segment's file range.
struct Segment {
    offset: u64,
    end: u64,
}

fn segments(file: &ElfFile) -> Result<Vec<Segment>> {
    let header = file.header();
    let class = header.class;
    let size = class.program_header_size();
    let mut out = Vec::new();
    for i in 0..u64::from(header.phnum) {
        let at = i
            .checked_mul(size)
            .and_then(|n| n.checked_add(header.phoff))
            .ok_or_else(overflow)?;
        let raw = range(file.data(), at, size).ok_or_else(|| {
            Error::truncated(
                Field::ElfHeader,
                size,
                to_u64(file.data().len()).saturating_sub(at),
                at,
            )
        })?;
        let (offset, filesz) = match class {
            Class::Elf64 => {
                let p = ProgramHeader64::ref_from_prefix(raw)
                    .map_err(|_| overflow())?
                    .0;
                (p.p_offset.get(), p.p_filesz.get())
            }
            Class::Elf32 => {
                let p = ProgramHeader32::ref_from_prefix(raw)
                    .map_err(|_| overflow())?
                    .0;
                (p.p_offset.get().into(), p.p_filesz.get().into())
            }
        };
        if filesz != 0 {
            let end = offset.checked_add(filesz).ok_or_else(overflow)?;
            // As llvm-objcopy: a segment past the end of the file is an
            // error. (Its end would otherwise start the layout, and a 2 KB
            // file could ask for an output of any size.)
            if end > to_u64(file.data().len()) {
                return Err(Error::new(
                    ErrorKind::SectionOutOfBounds {
                        offset,
                        size: filesz,
                        len: to_u64(file.data().len()),
                    },
                    at,
                ));
            }
            out.push(Segment { offset, end });
        }
    }
    Ok(out)
}

/// Where out-of-segment sections start: after the file header, the program
/// headers and every segment.
fn layout_start(file: &ElfFile, segments: &[Segment]) -> Result<u64> {
    let header = file.header();
    let mut start = header.class.header_size();
    if header.phnum != 0 {
        let table = u64::from(header.phnum)
            .checked_mul(header.class.program_header_size())
            .and_then(|n| n.checked_add(header.phoff))
            .ok_or_else(overflow)?;
        start = start.max(table);
    }
    Ok(segments.iter().map(|s| s.end).fold(start, u64::max))
}

fn plan<'a: 'b, 'b>(
    file: &ElfFile<'a>,
    section: &Section<'a>,
    map: &Renumber,
    tables: &'b [(u32, StringTable<'a>)],
    segments: &[Segment],
) -> Result<Planned<'b>> {
    let index = section.index();
    let mut header = *section.header();
    let shstrndx = file.header().shstrndx;
    if let Some((_, names)) = tables.iter().find(|(i, _)| *i == shstrndx) {
        if index != 0 {
            header.name = names.offset(section.name());
        }
    }
    if index != 0 {
        if header.link != 0 {
            header.link = map.get(header.link, index)?;
        }
        if header.kind == SHT_REL || header.kind == SHT_RELA || header.flags & SHF_INFO_LINK != 0 {
            header.info = map.get(header.info, index)?;
        }
        // llvm-objcopy aligns relocation sections and the symbol table to
        // the address size, whatever their sh_addralign says.
        if relocation_size(file.header().class, header.kind).is_some() || header.kind == SHT_SYMTAB
        {
            header.addralign = file.header().class.address_size();
        }
    }
    let mut contents = Contents::Borrowed(section.data());
    let mut rebuilt = false;
    if let Some((_, table)) = tables.iter().find(|(i, _)| *i == index) {
        header.size = to_u64(table.bytes().len());
        contents = Contents::Borrowed(table.bytes());
        rebuilt = true;
    } else if header.kind == SHT_SYMTAB || header.kind == SHT_DYNSYM {
        let names = tables.iter().find(|(i, _)| *i == section.header().link);
        if names.is_some() || !map.is_identity() {
            contents = Contents::Owned(rewrite_symbols(file, section, map, names.map(|(_, t)| t))?);
        }
    } else if (header.kind == SHT_GROUP || header.kind == SHT_SYMTAB_SHNDX) && !map.is_identity() {
        contents = Contents::Owned(renumber_words(section, map, header.kind == SHT_GROUP)?);
    }
    let in_segment = index != 0
        && header.kind != SHT_NOBITS
        && matches!(contents, Contents::Borrowed(_))
        && !rebuilt
        && segments.iter().any(|s| {
            section.offset() >= s.offset && section.offset().saturating_add(header.size) <= s.end
        });
    Ok(Planned {
        header,
        original_offset: Some(section.offset()),
        in_segment,
        contents,
    })
}

/// A symbol table with new name offsets (when its string table is rebuilt)
/// and renumbered section indices.
fn rewrite_symbols(
    file: &ElfFile,
    symtab: &Section,
    map: &Renumber,
    names: Option<&StringTable>,
) -> Result<Vec<u8>> {
    let mut out = symtab.data().to_vec();
    let strings = file.section(symtab.header().link)?.data();
    let shndx_at = match file.header().class {
        Class::Elf32 => 14,
        Class::Elf64 => 6,
    };
    for symbol in symbols(file, symtab)? {
        let name = match names {
            Some(table) => table.offset(symbol_name(strings, symtab, &symbol)?),
            None => symbol.name,
        };
        let shndx = u32::from(symbol.shndx);
        let shndx = if shndx == 0 || shndx >= SHN_LORESERVE {
            symbol.shndx
        } else {
            u16::try_from(map.get(shndx, symtab.index())?).map_err(|_| overflow())?
        };
        let at = symbol.at;
        if let Some(slot) = out.get_mut(at..).and_then(|s| s.get_mut(..4)) {
            slot.copy_from_slice(U32::new(name).as_bytes());
        }
        let field = at.checked_add(shndx_at).ok_or_else(overflow)?;
        if let Some(slot) = out.get_mut(field..).and_then(|s| s.get_mut(..2)) {
            slot.copy_from_slice(U16::new(shndx).as_bytes());
        }
    }
    Ok(out)
}

/// A group's member list (after its flag word) or an extended index table,
/// with every section index renumbered.
fn renumber_words(section: &Section, map: &Renumber, skip_first: bool) -> Result<Vec<u8>> {
    let mut out = section.data().to_vec();
    for (i, word) in out.chunks_exact_mut(4).enumerate() {
        if skip_first && i == 0 {
            continue;
        }
        let old = U32::read_from_bytes(word).map_or(0, |v| v.get());
        if old != 0 {
            word.copy_from_slice(U32::new(map.get(old, section.index())?).as_bytes());
        }
    }
    Ok(out)
}

/// The largest section alignment a rewrite honours: far above what compilers
/// and linkers use (a page, 64 KiB for some targets), small enough that the
/// padding it adds stays bounded.
const MAX_ALIGNMENT: u64 = 1 << 20;

/// Assigns offsets; returns where the section header table goes.
fn layout(planned: &mut [Planned], start: u64, class: Class) -> Result<u64> {
    let mut order: Vec<usize> = (1..planned.len()).collect();
    // Stable: ties keep index order, and added sections (no original offset)
    // go last in the order they were given.
    order.sort_by_key(|&i| {
        planned
            .get(i)
            .and_then(|p| p.original_offset)
            .unwrap_or(u64::MAX)
    });
    let mut offset = start;
    for i in order {
        let Some(p) = planned.get_mut(i) else {
            continue;
        };
        if p.in_segment {
            continue;
        }
        // Honouring any alignment, as llvm-objcopy does, would let a tiny
        // file ask for an output of any size.
        if p.header.addralign > MAX_ALIGNMENT {
            return Err(Error::new(
                ErrorKind::UnsupportedElf {
                    what: ElfUnsupported::Alignment(p.header.addralign),
                },
                0,
            ));
        }
        offset = align_to(offset, p.header.addralign)?;
        p.header.offset = offset;
        if p.header.kind != SHT_NOBITS {
            offset = offset.checked_add(p.header.size).ok_or_else(overflow)?;
        }
    }
    align_to(offset, class.address_size())
}

fn align_to(n: u64, align: u64) -> Result<u64> {
    let align = align.max(1);
    n.div_ceil(align).checked_mul(align).ok_or_else(overflow)
}

fn write(file: &ElfFile, planned: &[Planned], shoff: u64, shstrndx: u32) -> Result<Vec<u8>> {
    let class = file.header().class;
    let count = to_u64(planned.len());
    let len = count
        .checked_mul(class.section_header_size())
        .and_then(|n| n.checked_add(shoff))
        .ok_or_else(overflow)?;
    let len = usize::try_from(len).map_err(|_| overflow())?;
    let mut out = Vec::new();
    crate::bytes::grow(&mut out, len)?;
    // Sections kept in place inside segments first, so that the file header
    // and the program headers overwrite any that overlap them (llvm-objcopy
    // writes segment data before the headers for the same reason).
    for p in planned.iter().filter(|p| p.in_segment) {
        copy_at(&mut out, p.header.offset, p.contents.bytes())?;
    }
    let header_size = usize::try_from(class.header_size()).map_err(|_| overflow())?;
    copy_at(
        &mut out,
        0,
        file.data().get(..header_size).unwrap_or_default(),
    )?;
    let header = file.header();
    if header.phnum != 0 {
        let size = u64::from(header.phnum).saturating_mul(class.program_header_size());
        copy_at(
            &mut out,
            header.phoff,
            range(file.data(), header.phoff, size).unwrap_or_default(),
        )?;
    }
    let shnum = if count >= u64::from(SHN_LORESERVE) {
        0
    } else {
        count
    };
    let shnum = u16::try_from(shnum).map_err(|_| overflow())?;
    let shstrndx16 = u16::try_from(if shstrndx >= SHN_LORESERVE {
        SHN_XINDEX
    } else {
        shstrndx
    })
    .map_err(|_| overflow())?;
    match class {
        Class::Elf64 => {
            let (h, _) = FileHeader64::mut_from_prefix(&mut out).map_err(|_| overflow())?;
            h.e_shoff = U64::new(shoff);
            h.e_shnum = U16::new(shnum);
            h.e_shstrndx = U16::new(shstrndx16);
        }
        Class::Elf32 => {
            let (h, _) = FileHeader32::mut_from_prefix(&mut out).map_err(|_| overflow())?;
            h.e_shoff = U32::new(u32::try_from(shoff).map_err(|_| overflow())?);
            h.e_shnum = U16::new(shnum);
            h.e_shstrndx = U16::new(shstrndx16);
        }
    }
    let mut at = shoff;
    for p in planned {
        if p.header.kind != SHT_NOBITS && !p.in_segment {
            copy_at(&mut out, p.header.offset, p.contents.bytes())?;
        }
        copy_at(&mut out, at, &header_bytes(class, &p.header)?)?;
        at = at
            .checked_add(class.section_header_size())
            .ok_or_else(overflow)?;
    }
    Ok(out)
}

fn copy_at(out: &mut [u8], at: u64, bytes: &[u8]) -> Result<()> {
    let start = usize::try_from(at).map_err(|_| overflow())?;
    let end = start.checked_add(bytes.len()).ok_or_else(overflow)?;
    out.get_mut(start..end)
        .ok_or_else(overflow)?
        .copy_from_slice(bytes);
    Ok(())
}

fn header_bytes(class: Class, h: &SectionHeader) -> Result<Vec<u8>> {
    Ok(match class {
        Class::Elf64 => SectionHeader64 {
            sh_name: h.name.into(),
            sh_type: h.kind.into(),
            sh_flags: h.flags.into(),
            sh_addr: h.addr.into(),
            sh_offset: h.offset.into(),
            sh_size: h.size.into(),
            sh_link: h.link.into(),
            sh_info: h.info.into(),
            sh_addralign: h.addralign.into(),
            sh_entsize: h.entsize.into(),
        }
        .as_bytes()
        .to_vec(),
        Class::Elf32 => {
            let narrow = |v: u64| u32::try_from(v).map(U32::new).map_err(|_| overflow());
            SectionHeader32 {
                sh_name: h.name.into(),
                sh_type: h.kind.into(),
                sh_flags: narrow(h.flags)?,
                sh_addr: narrow(h.addr)?,
                sh_offset: narrow(h.offset)?,
                sh_size: narrow(h.size)?,
                sh_link: h.link.into(),
                sh_info: h.info.into(),
                sh_addralign: narrow(h.addralign)?,
                sh_entsize: narrow(h.entsize)?,
            }
            .as_bytes()
            .to_vec()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// A 64-bit header, one program header at 64 whose file range is
    /// `[offset, offset + filesz)`, and the null section header at 120.
    fn one_segment(offset: u64, filesz: u64) -> Vec<u8> {
        let mut data = vec![0u8; 64 + 56 + 64];
        data[40..48].copy_from_slice(&120u64.to_le_bytes()); // e_shoff
        data[60..62].copy_from_slice(&1u16.to_le_bytes()); // e_shnum
        data[..4].copy_from_slice(ELF_MAGIC);
        data[4] = 2;
        data[5] = 1;
        data[6] = 1;
        data[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
        data[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        data[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
        data[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        data[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        data[64..68].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        data[72..80].copy_from_slice(&offset.to_le_bytes());
        data[96..104].copy_from_slice(&filesz.to_le_bytes());
        data
    }

    /// Seen while triaging the `elf_object_bundle` fuzz target's huge-output
    /// finding: a segment's end started the layout even past the end of the
    /// file, so a 184-byte file asked for a 1 TiB output.
    #[test]
    fn segment_past_the_end_of_the_file_is_an_error() {
        let data = one_segment(1 << 40, 1);
        let file = ElfFile::parse(&data).unwrap();
        let err = rewrite_sections(&file, |_| true, &[]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::SectionOutOfBounds {
                offset: 1 << 40,
                size: 1,
                len: 184,
            }
        );
        assert_eq!(err.offset(), 64);
        // Inside the file it is fine, and the file comes back unchanged.
        let data = one_segment(0, 120);
        let file = ElfFile::parse(&data).unwrap();
        assert_eq!(rewrite_sections(&file, |_| true, &[]).unwrap(), data);
    }

    /// Found by the `elf_object_bundle` fuzz target
    /// (`artifacts-found/elf_object_bundle/section-over-file-header`): a
    /// section inside a segment that covers the file header was copied over
    /// the new header, putting back the input's `e_shoff`, so the output's
    /// section table pointed past its end.
    #[test]
    fn section_over_the_file_header_does_not_undo_the_new_header() {
        // One segment over the whole file; section 1 (PROGBITS) covers the
        // file header, 2 is the name table (at 376, one NUL), 3 is removed,
        // which moves the section table.
        let mut data = one_segment(0, 384);
        data.resize(384, 0);
        data[40..48].copy_from_slice(&120u64.to_le_bytes()); // e_shoff
        data[60..62].copy_from_slice(&4u16.to_le_bytes()); // e_shnum
        data[62..64].copy_from_slice(&2u16.to_le_bytes()); // e_shstrndx
        let section = |data: &mut [u8], index: usize, kind: u32, offset: u64, size: u64| {
            let at = 120 + 64 * index;
            data[at + 4..at + 8].copy_from_slice(&kind.to_le_bytes());
            data[at + 24..at + 32].copy_from_slice(&offset.to_le_bytes());
            data[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        };
        section(&mut data, 1, SHT_PROGBITS, 0, 64);
        section(&mut data, 2, SHT_STRTAB, 376, 1);
        section(&mut data, 3, SHT_PROGBITS, 0, 8);
        let file = ElfFile::parse(&data).unwrap();
        let out = rewrite_sections(&file, |s| s.index() != 3, &[]).unwrap();
        let again = ElfFile::parse(&out).unwrap();
        assert_eq!(again.section_count(), 3);
        let first = again.section(1).unwrap();
        assert_eq!((first.offset(), first.data().len()), (0, 64));
    }

    /// Found by the `elf_object_bundle` fuzz target
    /// (`artifacts-found/elf_object_bundle/name-table-in-segment`): a
    /// rebuilt string table inside a segment stayed at its input offset
    /// whatever its new size, over whatever was there (here the file header,
    /// which then overwrote the names).
    #[test]
    fn rebuilt_name_table_inside_a_segment_is_laid_out_anew() {
        // One segment over the whole file; section 1, the name table, is the
        // first 8 bytes of the file ("\x7fELF\x02\x01\x01\0"), and named
        // by its offset 1 (offset 0 is the empty name).
        let mut data = one_segment(0, 248);
        data.resize(248, 0);
        data[60..62].copy_from_slice(&2u16.to_le_bytes()); // e_shnum
        data[62..64].copy_from_slice(&1u16.to_le_bytes()); // e_shstrndx
        data[184..188].copy_from_slice(&1u32.to_le_bytes()); // sh_name
        data[188..192].copy_from_slice(&SHT_STRTAB.to_le_bytes());
        data[216..224].copy_from_slice(&8u64.to_le_bytes()); // sh_size
        let file = ElfFile::parse(&data).unwrap();
        let name = file.section(1).unwrap().name().to_vec();
        assert_eq!(name, b"ELF\x02\x01\x01");
        let added = NewSection {
            name: b"x",
            kind: SHT_PROGBITS,
            flags: 0,
            addralign: 1,
            data: b"data",
        };
        let out = rewrite_sections(&file, |_| true, &[added]).unwrap();
        let again = ElfFile::parse(&out).unwrap();
        assert_eq!(again.section(1).unwrap().name(), &name[..]);
        let x = again.section(2).unwrap();
        assert_eq!((x.name(), x.data()), (&b"x"[..], &b"data"[..]));
    }

    /// Found by the `elf_object_bundle` fuzz target
    /// (`artifacts-found/elf_object_bundle/add-without-name-table`): with no
    /// section-name table (`e_shstrndx` 0) an added section got name offset
    /// 0 in no table, so the output's section could not be read.
    #[test]
    fn adding_a_section_needs_a_name_table() {
        let mut data = one_segment(0, 184);
        data[56..58].copy_from_slice(&0u16.to_le_bytes()); // e_phnum
        let file = ElfFile::parse(&data).unwrap();
        let added = NewSection {
            name: b"x",
            kind: SHT_PROGBITS,
            flags: 0,
            addralign: 1,
            data: b"data",
        };
        let err = rewrite_sections(&file, |_| true, &[added]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::BadNameTableIndex { index: 0, count: 1 }
        );
        // Rewriting without adding still works.
        rewrite_sections(&file, |_| true, &[]).unwrap();
    }

    /// Found by the `elf_object_bundle` fuzz target
    /// (`artifacts-found/elf_object_bundle/symtab-linked-to-section-0`): an
    /// (empty) symbol table whose `sh_link` is 0 made section 0 a string
    /// table to rebuild, and its one NUL was written at section 0's offset,
    /// over the ELF magic.
    #[test]
    fn symbol_table_linked_to_section_0_keeps_the_magic() {
        // No segment; section 1 the name table (one NUL at 312), section 2
        // an empty symbol table with `sh_link` 0.
        let mut data = one_segment(0, 0);
        data.resize(313, 0);
        data[56..58].copy_from_slice(&0u16.to_le_bytes()); // e_phnum
        data[60..62].copy_from_slice(&3u16.to_le_bytes()); // e_shnum
        data[62..64].copy_from_slice(&1u16.to_le_bytes()); // e_shstrndx
        data[188..192].copy_from_slice(&SHT_STRTAB.to_le_bytes());
        data[208..216].copy_from_slice(&312u64.to_le_bytes()); // sh_offset
        data[216..224].copy_from_slice(&1u64.to_le_bytes()); // sh_size
        data[252..256].copy_from_slice(&SHT_SYMTAB.to_le_bytes());
        data[296..304].copy_from_slice(&24u64.to_le_bytes()); // sh_entsize
        let file = ElfFile::parse(&data).unwrap();
        let out = rewrite_sections(&file, |_| true, &[]).unwrap();
        assert!(out.starts_with(ELF_MAGIC));
        let again = ElfFile::parse(&out).unwrap();
        assert_eq!(again.section(2).unwrap().header().kind, SHT_SYMTAB);
    }

    #[test]
    fn section_zero_is_written_afresh() {
        // Found by the elf_object_bundle fuzz target (remove-layout-overflow):
        // a section 0 holding a type, flags, an offset, a huge size and an
        // alignment. Keeping them made the output one that could not be
        // rewritten again; llvm-objcopy writes zeros there.
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let shoff = usize::try_from(ElfFile::parse(data).unwrap().header().shoff).unwrap();
        let mut junk = data.to_vec();
        for (at, value) in [
            (4, 0x0300_0000u64),
            (8, 0x2600_0000),
            (24, 0x500),
            (32, 3 << 56),
            (48, 486),
        ] {
            junk[shoff + at..shoff + at + 8].copy_from_slice(&value.to_le_bytes());
        }
        let input = ElfFile::parse(&junk).unwrap();
        assert_ne!(
            *input.section(0).unwrap().header(),
            SectionHeader::default()
        );
        let out = rewrite_sections(&input, |_| true, &[]).unwrap();
        let out = ElfFile::parse(&out).unwrap();
        assert_eq!(*out.section(0).unwrap().header(), SectionHeader::default());
        assert!(rewrite_sections(&out, |_| true, &[]).is_ok());
    }

    #[test]
    fn a_name_table_llvm_would_refuse_is_an_error() {
        // As LLVM's object reader: the name table must be a NUL-terminated
        // SHT_STRTAB (found by the differential campaign against LLVM 22).
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let file = ElfFile::parse(data).unwrap();
        let index = usize::try_from(file.header().shstrndx).unwrap();
        let names = *file.section(file.header().shstrndx).unwrap().header();
        let header = usize::try_from(file.header().shoff).unwrap() + 64 * index;
        let mut not_strtab = data.to_vec();
        not_strtab[header + 4..header + 8].copy_from_slice(&1u32.to_le_bytes());
        let err = ElfFile::parse(&not_strtab).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadNameTable { kind: 1, .. }),
            "{err}"
        );
        let mut unterminated = data.to_vec();
        let last = usize::try_from(names.offset + names.size - 1).unwrap();
        unterminated[last] = b'x';
        let err = ElfFile::parse(&unterminated).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadNameTable { kind: 3, .. }),
            "{err}"
        );
        assert!(alloc::format!("{err}").contains("not NUL-terminated"));
    }

    #[test]
    fn two_symbol_tables_are_refused_as_llvm_objcopy_refuses_them() {
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let file = ElfFile::parse(data).unwrap();
        let text = (1..file.section_count())
            .find(|&i| file.section(i).unwrap().name() == b".text")
            .unwrap();
        let header =
            usize::try_from(file.header().shoff).unwrap() + 64 * usize::try_from(text).unwrap();
        let mut two = data.to_vec();
        two[header + 4..header + 8].copy_from_slice(&SHT_SYMTAB.to_le_bytes());
        let err = rewrite_sections(&ElfFile::parse(&two).unwrap(), |_| true, &[]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::MultipleSymbolTables
            }
        );
    }

    #[test]
    fn string_tables_llvm_objcopy_would_refuse_are_errors() {
        // Found by the elf_object_bundle fuzz target (symtab-link-not-strtab):
        // a symbol table linked to itself had its contents replaced by the
        // string table rebuilt from its names. llvm-objcopy 22 refuses each
        // of these inputs ("Symbol table has link index of N which is not a
        // string table", "e_shstrndx field value N ... does not reference a
        // string table").
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let file = ElfFile::parse(data).unwrap();
        let shoff = usize::try_from(file.header().shoff).unwrap();
        let header = |i: u32| shoff + 64 * usize::try_from(i).unwrap();
        let symtab = (1..file.section_count())
            .find(|&i| file.section(i).unwrap().header().kind == SHT_SYMTAB)
            .unwrap();
        let text = (1..file.section_count())
            .find(|&i| file.section(i).unwrap().name() == b".text")
            .unwrap();
        let shstrndx = file.header().shstrndx;
        let refused = |bytes: &[u8], index: u32, at: usize| {
            let err = rewrite_sections(&ElfFile::parse(bytes).unwrap(), |_| true, &[]).unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::UnsupportedElf {
                    what: ElfUnsupported::NotAStringTable(index)
                }
            );
            assert_eq!(err.offset(), u64::try_from(at).unwrap());
        };
        for link in [symtab, text] {
            let mut bad = data.to_vec();
            let at = header(symtab) + 40;
            bad[at..at + 4].copy_from_slice(&link.to_le_bytes());
            refused(&bad, link, header(symtab));
        }
        let mut allocated = data.to_vec();
        let at = header(shstrndx) + 8;
        allocated[at..at + 8].copy_from_slice(&SHF_ALLOC.to_le_bytes());
        refused(&allocated, shstrndx, 62);
        // Removing the symbol table does not help: llvm-objcopy reads it.
        let mut bad = data.to_vec();
        let at = header(symtab) + 40;
        bad[at..at + 4].copy_from_slice(&text.to_le_bytes());
        let file = ElfFile::parse(&bad).unwrap();
        let err = rewrite_sections(&file, |s| s.index() != symtab, &[]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::NotAStringTable(text)
            }
        );
    }

    #[test]
    fn links_to_symbol_tables_llvm_objcopy_would_refuse_are_errors() {
        // llvm-objcopy 22: "Link field value N in section .rela.text is not a
        // symbol table", "link field value 'N' in section '.group' is not a
        // symbol table".
        let header_of = |data: &[u8], kind: u32| {
            let file = ElfFile::parse(data).unwrap();
            let section = (1..file.section_count())
                .map(|i| file.section(i).unwrap())
                .find(|s| s.header().kind == kind)
                .unwrap();
            let at = file.section_header_offset(section.index());
            (usize::try_from(at).unwrap(), section.index())
        };
        let check = |data: &[u8], kind: u32, flags: u64, link: u32, refused: bool| {
            let (at, index) = header_of(data, kind);
            let mut bad = data.to_vec();
            let old = u64::from_le_bytes(bad[at + 8..at + 16].try_into().unwrap());
            bad[at + 8..at + 16].copy_from_slice(&(old | flags).to_le_bytes());
            bad[at + 40..at + 44].copy_from_slice(&link.to_le_bytes());
            let result = rewrite_sections(&ElfFile::parse(&bad).unwrap(), |_| true, &[]);
            if refused {
                let err = result.unwrap_err();
                assert_eq!(
                    err.kind(),
                    ErrorKind::UnsupportedElf {
                        what: ElfUnsupported::NotASymbolTable(link)
                    }
                );
                assert_eq!(
                    (err.offset(), err.entry()),
                    (to_u64(at), Some(index.into()))
                );
            } else {
                result.unwrap();
            }
        };
        let object = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let symtab = header_of(object, SHT_SYMTAB).1;
        // A relocation section linked to .text, or allocated and linked to
        // the SHT_SYMTAB (it needs the SHT_DYNSYM); none (0) is fine.
        check(object, SHT_RELA, 0, 2, true);
        check(object, SHT_RELA, SHF_ALLOC, symtab, true);
        check(object, SHT_RELA, 0, 0, false);
        let groups = include_bytes!("../../../tests/fixtures/object/groups.o");
        check(groups, SHT_GROUP, 0, 1, true);
        // (LLVM 22 crashes on a group linked to section 0; we refuse it.)
        check(groups, SHT_GROUP, 0, 0, true);
        // A link past the sections: "... is invalid" in llvm-objcopy 22.
        for (data, kind) in [(&object[..], SHT_RELA), (&groups[..], SHT_GROUP)] {
            let (at, _) = header_of(data, kind);
            let mut far = data.to_vec();
            far[at + 40..at + 44].copy_from_slice(&1000u32.to_le_bytes());
            let err = rewrite_sections(&ElfFile::parse(&far).unwrap(), |_| true, &[]).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::BadSectionIndex { index: 1000, .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn a_huge_alignment_is_refused_not_padded() {
        // Found by the elf_object_bundle fuzz target (huge-addralign): 2^59+1
        // would make a 2 KB object ask for an output of any size.
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        let file = ElfFile::parse(data).unwrap();
        let shoff = usize::try_from(file.header().shoff).unwrap();
        let mut bad = data.to_vec();
        // .text is section 2; sh_addralign is 48 bytes into its header.
        let at = shoff + 2 * 64 + 48;
        bad[at..at + 8].copy_from_slice(&((1u64 << 59) + 1).to_le_bytes());
        let file = ElfFile::parse(&bad).unwrap();
        let err = rewrite_sections(&file, |_| true, &[]).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::Alignment((1 << 59) + 1)
            }
        );
    }
}
