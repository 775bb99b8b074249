//! A minimal ELF reader: the file header, the section header table, section
//! names and section contents, for 32- and 64-bit little-endian files.
//!
//! ```text
//! 0          file header (52 or 64 bytes): class, encoding, type, machine,
//!            flags, e_shoff, e_shnum, e_shstrndx
//! e_shoff    e_shnum section headers (40 or 64 bytes each); header 0 is null
//!            and holds the real count and name-table index when they do not
//!            fit in 16 bits
//! sh_offset  each section's contents (none for SHT_NOBITS)
//! ```
//! Offload containers live in sections: object-flavour bundles in sections
//! named `__CLANG_OFFLOAD_BUNDLE__<id>`. [`ElfFile::parse`] checks the header,
//! the section table and the section-name table; each section's own bounds are
//! checked when [`ElfFile::sections`] reaches it, and a bad section does not
//! hide the others. Big-endian files are reported as unsupported.

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64};
use crate::{Error, ErrorKind, Field, Result};

pub use crate::error::ElfUnsupported;

mod amdgpu;
#[cfg(feature = "alloc")]
mod edit;
#[cfg(feature = "alloc")]
pub(crate) mod strtab;

pub use amdgpu::{AmdgpuTarget, FeatureSetting};
#[cfg(feature = "alloc")]
pub use edit::{rewrite_sections, NewSection};

/// `\x7fELF`.
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
/// `sh_type` of a section with no contents in the file.
pub const SHT_NOBITS: u32 = 8;
/// `sh_type` of program data.
pub const SHT_PROGBITS: u32 = 1;
/// `sh_type` of a symbol table.
pub const SHT_SYMTAB: u32 = 2;
/// `sh_type` of a string table.
pub const SHT_STRTAB: u32 = 3;
/// `sh_type` of relocations with addends.
pub const SHT_RELA: u32 = 4;
/// `sh_type` of relocations without addends.
pub const SHT_REL: u32 = 9;
/// `sh_type` of a dynamic symbol table.
pub const SHT_DYNSYM: u32 = 11;
/// `sh_type` of a section group.
pub const SHT_GROUP: u32 = 17;
/// `sh_type` of the extended section indices of a symbol table.
pub const SHT_SYMTAB_SHNDX: u32 = 18;
/// `sh_type` of LLVM's offloading section (`.llvm.offloading`).
pub const SHT_LLVM_OFFLOADING: u32 = 0x6fff_4c0b;
/// `sh_flags`: the section occupies memory at run time.
pub const SHF_ALLOC: u64 = 0x2;
/// `e_type` of relocatable objects.
pub const ET_REL: u16 = 1;
/// `e_machine` of AMD GPUs.
pub const EM_AMDGPU: u16 = 224;
/// `e_machine` of NVIDIA GPUs (cubins).
pub const EM_CUDA: u16 = 190;
/// `sh_type` of a cubin's uninitialized global memory (`.nv.global`).
pub const SHT_CUDA_GLOBAL: u32 = 0x7000_0007;
/// `sh_type` of a cubin's per-kernel local memory (`.nv.local.<kernel>`).
pub const SHT_CUDA_LOCAL: u32 = 0x7000_0009;
/// `sh_type` of a cubin's per-block shared memory (`.nv.shared.<kernel>`,
/// `.nv_debug.shared`).
pub const SHT_CUDA_SHARED: u32 = 0x7000_000a;
/// `sh_type` of a cubin's compiler-reserved shared memory
/// (`.nv.reservedSmem*`).
pub const SHT_CUDA_SHARED_RESERVED: u32 = 0x7000_0015;

/// Whether a section of type `sh_type` in a file for `machine` holds bytes
/// of the file. `SHT_NOBITS` never does; in a cubin neither do NVIDIA's
/// memory reservations, which its linker writes as `SHT_NOBITS` is written
/// (an address and a size, no bytes): their `sh_offset` may even point at
/// the section header table, and their size run past the end of the file.
pub fn holds_file_bytes(machine: u16, sh_type: u32) -> bool {
    let cuda_reservation = matches!(
        sh_type,
        SHT_CUDA_GLOBAL | SHT_CUDA_LOCAL | SHT_CUDA_SHARED | SHT_CUDA_SHARED_RESERVED
    );
    sh_type != SHT_NOBITS && !(machine == EM_CUDA && cuda_reservation)
}
/// `EI_OSABI` of AMD's HSA runtime.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `sh_flags`: `sh_info` holds a section index.
pub const SHF_INFO_LINK: u64 = 0x40;
/// `sh_flags`: the linker drops the section.
pub const SHF_EXCLUDE: u64 = 0x8000_0000;
/// First reserved section index: symbol section indices at or above it are
/// special (absolute, common, extended).
pub const SHN_LORESERVE: u32 = 0xff00;
/// `st_shndx`/`e_shstrndx`: the real index is elsewhere.
pub const SHN_XINDEX: u32 = 0xffff;

/// The 64-bit file header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct FileHeader64 {
    pub e_ident: [u8; 16],
    pub e_type: U16,
    pub e_machine: U16,
    pub e_version: U32,
    pub e_entry: U64,
    pub e_phoff: U64,
    pub e_shoff: U64,
    pub e_flags: U32,
    pub e_ehsize: U16,
    pub e_phentsize: U16,
    pub e_phnum: U16,
    pub e_shentsize: U16,
    pub e_shnum: U16,
    pub e_shstrndx: U16,
}
const _: () = assert!(core::mem::size_of::<FileHeader64>() == 64);

/// The 32-bit file header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct FileHeader32 {
    pub e_ident: [u8; 16],
    pub e_type: U16,
    pub e_machine: U16,
    pub e_version: U32,
    pub e_entry: U32,
    pub e_phoff: U32,
    pub e_shoff: U32,
    pub e_flags: U32,
    pub e_ehsize: U16,
    pub e_phentsize: U16,
    pub e_phnum: U16,
    pub e_shentsize: U16,
    pub e_shnum: U16,
    pub e_shstrndx: U16,
}
const _: () = assert!(core::mem::size_of::<FileHeader32>() == 52);

/// A 64-bit section header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct SectionHeader64 {
    pub sh_name: U32,
    pub sh_type: U32,
    pub sh_flags: U64,
    pub sh_addr: U64,
    pub sh_offset: U64,
    pub sh_size: U64,
    pub sh_link: U32,
    pub sh_info: U32,
    pub sh_addralign: U64,
    pub sh_entsize: U64,
}
const _: () = assert!(core::mem::size_of::<SectionHeader64>() == 64);

/// A 32-bit section header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct SectionHeader32 {
    pub sh_name: U32,
    pub sh_type: U32,
    pub sh_flags: U32,
    pub sh_addr: U32,
    pub sh_offset: U32,
    pub sh_size: U32,
    pub sh_link: U32,
    pub sh_info: U32,
    pub sh_addralign: U32,
    pub sh_entsize: U32,
}
const _: () = assert!(core::mem::size_of::<SectionHeader32>() == 40);

/// A 64-bit program header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct ProgramHeader64 {
    pub p_type: U32,
    pub p_flags: U32,
    pub p_offset: U64,
    pub p_vaddr: U64,
    pub p_paddr: U64,
    pub p_filesz: U64,
    pub p_memsz: U64,
    pub p_align: U64,
}
const _: () = assert!(core::mem::size_of::<ProgramHeader64>() == 56);

/// A 32-bit program header.
#[derive(Debug, Clone, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
#[allow(missing_docs)]
pub struct ProgramHeader32 {
    pub p_type: U32,
    pub p_offset: U32,
    pub p_vaddr: U32,
    pub p_paddr: U32,
    pub p_filesz: U32,
    pub p_memsz: U32,
    pub p_flags: U32,
    pub p_align: U32,
}
const _: () = assert!(core::mem::size_of::<ProgramHeader32>() == 32);

/// ELF's two word sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// `ELFCLASS32`.
    Elf32,
    /// `ELFCLASS64`.
    Elf64,
}

impl Class {
    /// Size of the file header.
    pub const fn header_size(self) -> u64 {
        match self {
            Class::Elf32 => 52,
            Class::Elf64 => 64,
        }
    }

    /// Size of a section header.
    pub const fn section_header_size(self) -> u64 {
        match self {
            Class::Elf32 => 40,
            Class::Elf64 => 64,
        }
    }

    /// Size of a program header.
    pub const fn program_header_size(self) -> u64 {
        match self {
            Class::Elf32 => 32,
            Class::Elf64 => 56,
        }
    }

    /// Size of a symbol table entry.
    pub const fn symbol_size(self) -> u64 {
        match self {
            Class::Elf32 => 16,
            Class::Elf64 => 24,
        }
    }

    /// Size of an address, the alignment of the tables a writer lays out.
    pub const fn address_size(self) -> u64 {
        match self {
            Class::Elf32 => 4,
            Class::Elf64 => 8,
        }
    }
}

/// The file header fields this crate uses, in native integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// 32- or 64-bit.
    pub class: Class,
    /// `e_type`: 1 relocatable, 2 executable, 3 shared object.
    pub file_type: u16,
    /// `e_machine` (62 x86-64, 224 AMDGPU, 190 CUDA).
    pub machine: u16,
    /// `e_flags` (for AMDGPU: the processor and its features).
    pub flags: u32,
    /// `EI_OSABI` (64: AMD HSA).
    pub os_abi: u8,
    /// `EI_ABIVERSION` (AMD HSA: 2, 3, 4 for code object v4, v5, v6).
    pub abi_version: u8,
    /// `e_phoff`.
    pub phoff: u64,
    /// `e_phnum`.
    pub phnum: u16,
    /// `e_shoff`.
    pub shoff: u64,
    /// The number of sections, from `e_shnum` or section 0.
    pub shnum: u32,
    /// The index of the section-name table, from `e_shstrndx` or section 0.
    pub shstrndx: u32,
}

/// A section header in native integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub struct SectionHeader {
    pub name: u32,
    pub kind: u32,
    pub flags: u64,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub addralign: u64,
    pub entsize: u64,
}

impl SectionHeader {
    pub(crate) fn read(class: Class, bytes: &[u8]) -> Option<SectionHeader> {
        Some(match class {
            Class::Elf64 => {
                let h = SectionHeader64::ref_from_prefix(bytes).ok()?.0;
                SectionHeader {
                    name: h.sh_name.get(),
                    kind: h.sh_type.get(),
                    flags: h.sh_flags.get(),
                    addr: h.sh_addr.get(),
                    offset: h.sh_offset.get(),
                    size: h.sh_size.get(),
                    link: h.sh_link.get(),
                    info: h.sh_info.get(),
                    addralign: h.sh_addralign.get(),
                    entsize: h.sh_entsize.get(),
                }
            }
            Class::Elf32 => {
                let h = SectionHeader32::ref_from_prefix(bytes).ok()?.0;
                SectionHeader {
                    name: h.sh_name.get(),
                    kind: h.sh_type.get(),
                    flags: h.sh_flags.get().into(),
                    addr: h.sh_addr.get().into(),
                    offset: h.sh_offset.get().into(),
                    size: h.sh_size.get().into(),
                    link: h.sh_link.get(),
                    info: h.sh_info.get(),
                    addralign: h.sh_addralign.get().into(),
                    entsize: h.sh_entsize.get().into(),
                }
            }
        })
    }

    /// The section's bytes in the file: none for `SHT_NOBITS`.
    fn file_size(&self) -> u64 {
        if self.kind == SHT_NOBITS {
            0
        } else {
            self.size
        }
    }

    /// Its `Elf64_Shdr` bytes (kpack's split writes section headers back).
    #[cfg(feature = "alloc")]
    pub(crate) fn elf64_bytes(&self) -> [u8; 64] {
        let h = SectionHeader64 {
            sh_name: U32::new(self.name),
            sh_type: U32::new(self.kind),
            sh_flags: U64::new(self.flags),
            sh_addr: U64::new(self.addr),
            sh_offset: U64::new(self.offset),
            sh_size: U64::new(self.size),
            sh_link: U32::new(self.link),
            sh_info: U32::new(self.info),
            sh_addralign: U64::new(self.addralign),
            sh_entsize: U64::new(self.entsize),
        };
        let mut out = [0u8; 64];
        out.copy_from_slice(h.as_bytes());
        out
    }
}

/// A parsed ELF file: a checked header and section table over a borrowed
/// buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfFile<'data> {
    data: &'data [u8],
    header: FileHeader,
    table: &'data [u8],
    names: &'data [u8],
}

/// One section: its header, name and contents, borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'data> {
    index: u32,
    name: &'data [u8],
    header: SectionHeader,
    data: &'data [u8],
}

impl<'data> ElfFile<'data> {
    /// Whether `data` starts with the ELF magic.
    pub fn is_elf(data: &[u8]) -> bool {
        data.starts_with(ELF_MAGIC)
    }

    /// Parses the file header and the section header table, as LLVM's
    /// object reader opens a file: section names are not read.
    fn parse_table(data: &'data [u8]) -> Result<Self> {
        let header = read_file_header(data)?;
        let class = header.class;
        let entsize = class.section_header_size();
        let mut header = header;
        let mut table: &[u8] = &[];
        let table_out_of_bounds = |header: &FileHeader| {
            Error::new(
                ErrorKind::SectionTableOutOfBounds {
                    offset: header.shoff,
                    count: header.shnum.into(),
                    len: to_u64(data.len()),
                },
                offset_of_shoff(class),
            )
        };
        if header.shoff != 0 {
            let first =
                range(data, header.shoff, entsize).ok_or_else(|| table_out_of_bounds(&header))?;
            let null = SectionHeader::read(class, first).unwrap_or_default();
            if header.shnum == 0 {
                header.shnum = u32::try_from(null.size).unwrap_or(u32::MAX);
            }
            if header.shstrndx == SHN_XINDEX {
                header.shstrndx = null.link;
            }
            table = u64::from(header.shnum)
                .checked_mul(entsize)
                .and_then(|size| range(data, header.shoff, size))
                .ok_or_else(|| table_out_of_bounds(&header))?;
        } else {
            header.shnum = 0;
        }
        Ok(ElfFile {
            data,
            header,
            table,
            names: &[],
        })
    }

    /// Parses the file header, the section header table and the section-name
    /// table. Section contents are not read.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let mut file = Self::parse_table(data)?;
        let header = file.header;
        if header.shnum != 0 && header.shstrndx != 0 {
            let strtab = file
                .section_header(header.shstrndx)
                .filter(|h| h.kind != SHT_NOBITS)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::BadNameTableIndex {
                            index: header.shstrndx,
                            count: header.shnum,
                        },
                        offset_of_shstrndx(header.class),
                    )
                })?;
            file.names = range(data, strtab.offset, strtab.size)
                .ok_or_else(|| section_out_of_bounds(&file, header.shstrndx, &strtab))?;
            // LLVM's object reader refuses any other name table.
            if strtab.kind != SHT_STRTAB || file.names.last().is_some_and(|&b| b != 0) {
                return Err(Error::new(
                    ErrorKind::BadNameTable {
                        index: header.shstrndx,
                        kind: strtab.kind,
                    },
                    file.section_header_offset(header.shstrndx),
                ));
            }
        }
        Ok(file)
    }

    /// The whole input.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The number of section headers, including the null one.
    pub fn section_count(&self) -> u32 {
        self.header.shnum
    }

    fn section_header(&self, index: u32) -> Option<SectionHeader> {
        let entsize = self.header.class.section_header_size();
        let at = u64::from(index).checked_mul(entsize)?;
        SectionHeader::read(self.header.class, range(self.table, at, entsize)?)
    }

    /// The section at `index`, with its name and contents checked.
    pub fn section(&self, index: u32) -> Result<Section<'data>> {
        let header = self.existing_header(index)?;
        let name = if index == 0 {
            &[][..]
        } else {
            self.name_of(index, &header)?
        };
        // SHT_NOBITS has no contents, wherever its sh_offset points.
        let data = if index == 0 || header.kind == SHT_NOBITS {
            &[][..]
        } else {
            range(self.data, header.offset, header.size)
                .ok_or_else(|| section_out_of_bounds(self, index, &header))?
        };
        Ok(Section {
            index,
            name,
            header,
            data,
        })
    }

    /// Checks `e_phentsize` when there are program headers: what reading
    /// them (llvm-objcopy does) needs.
    #[cfg(feature = "alloc")]
    pub(crate) fn check_program_header_size(&self) -> Result<()> {
        let class = self.header.class;
        // e_phentsize: four fields before e_shstrndx.
        let at = offset_of_shstrndx(class).saturating_sub(8);
        let size = range(self.data, at, 2)
            .and_then(|b| U16::read_from_bytes(b).ok())
            .map_or(0, |v| v.get());
        if self.header.phnum != 0 && u64::from(size) != class.program_header_size() {
            return Err(Error::new(
                ErrorKind::UnsupportedElf {
                    what: ElfUnsupported::ProgramHeaderSize(size),
                },
                at,
            ));
        }
        Ok(())
    }

    /// Checks that the null section's contents (`sh_offset`, `sh_size`) lie
    /// inside the file. They hold nothing, but LLVM's object reader bounds
    /// them as any section's when a tool reads every section's contents
    /// (`llvm-objdump --offloading` fails on them).
    pub fn check_null_section(&self) -> Result<()> {
        match self.section_header(0) {
            Some(null) if range(self.data, null.offset, null.file_size()).is_none() => {
                Err(section_out_of_bounds(self, 0, &null))
            }
            _ => Ok(()),
        }
    }

    /// The name of section `index`, read from its header alone (its contents
    /// may still lie outside the file). Section 0's is read too: LLVM's
    /// object reader names every section from index 0, and a bad name there
    /// fails it as any other.
    pub fn section_name(&self, index: u32) -> Result<&'data [u8]> {
        let header = self.existing_header(index)?;
        self.name_of(index, &header)
    }

    /// The header of section `index`, or an error naming an index outside
    /// the table.
    fn existing_header(&self, index: u32) -> Result<SectionHeader> {
        self.section_header(index).ok_or_else(|| {
            Error::new(
                ErrorKind::BadSectionIndex {
                    index,
                    count: self.header.shnum,
                },
                self.header.shoff,
            )
        })
    }

    /// A section's name: none for name offset 0, as LLVM reads it (even in
    /// a file with no name table), else the string at that offset.
    fn name_of(&self, index: u32, header: &SectionHeader) -> Result<&'data [u8]> {
        if header.name == 0 {
            return Ok(&[]);
        }
        section_name(self.names, header.name).ok_or_else(|| {
            Error::new(
                ErrorKind::BadSectionName {
                    name: header.name,
                    table_size: to_u64(self.names.len()),
                },
                self.section_header_offset(index),
            )
            .in_entry(index.into())
        })
    }

    /// Every section after the null one, in index order. A section whose
    /// name or contents lie outside the file is an error for that section
    /// only; the iterator goes on with the next.
    pub fn sections(&self) -> impl Iterator<Item = Result<Section<'data>>> + '_ {
        (1..self.header.shnum).map(|i| self.section(i))
    }

    /// The first section with this exact name.
    pub fn section_by_name(&self, name: &[u8]) -> Option<Section<'data>> {
        self.sections().flatten().find(|s| s.name == name)
    }

    /// The names of the symbols the file defines for other files to use
    /// (binding global, weak or unique; not undefined; not a section or file
    /// symbol), in symbol table order: what an archive's symbol table lists
    /// for it. Symbols whose names cannot be read are skipped.
    pub fn defined_global_symbols(&self) -> impl Iterator<Item = &'data [u8]> + '_ {
        let class = self.header.class;
        let size = usize::try_from(class.symbol_size()).unwrap_or(usize::MAX);
        self.sections()
            .flatten()
            .filter(|s| s.header.kind == SHT_SYMTAB)
            .flat_map(move |symtab| {
                let strings = self.section(symtab.header.link).map_or(&[][..], |s| s.data);
                symtab
                    .data
                    .chunks_exact(size)
                    .filter_map(move |raw| defined_global(class, raw, strings))
            })
    }

    /// File offset of section `index`'s header.
    pub(crate) fn section_header_offset(&self, index: u32) -> u64 {
        u64::from(index)
            .saturating_mul(self.header.class.section_header_size())
            .saturating_add(self.header.shoff)
    }
}

impl<'data> Section<'data> {
    /// The section's index in the section header table.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The section's name (bytes: names need not be UTF-8).
    pub fn name(&self) -> &'data [u8] {
        self.name
    }

    /// The section's header.
    pub fn header(&self) -> &SectionHeader {
        &self.header
    }

    /// The section's contents in the file (empty for `SHT_NOBITS`).
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// Where the contents start in the file.
    pub fn offset(&self) -> u64 {
        self.header.offset
    }
}

/// The symbols LLVM's archive writer indexes a member it takes for ELF by,
/// read as it reads them: the file opened as its object reader opens it
/// (the file header and section header table; section names are not
/// read), then the first symbol table's defined globals, in order, named
/// from that table's string table. An error where LLVM's writer fails: the
/// file does not open, the symbol table or (when it defines a symbol to
/// index) its string table lies outside the file or is not a non-empty
/// `SHT_STRTAB` ending in a NUL, the symbol size is not the class's, or a
/// name offset lies outside the strings.
#[cfg(feature = "alloc")]
pub fn index_symbols(data: &[u8]) -> Result<alloc::vec::Vec<&[u8]>> {
    let file = ElfFile::parse_table(data)?;
    let class = file.header.class;
    let Some((index, symtab)) = (1..file.header.shnum).find_map(|i| {
        file.section_header(i)
            .filter(|h| h.kind == SHT_SYMTAB)
            .map(|h| (i, h))
    }) else {
        return Ok(alloc::vec::Vec::new());
    };
    let in_symtab =
        |kind| Error::new(kind, file.section_header_offset(index)).in_entry(index.into());
    let entries = range(data, symtab.offset, symtab.size)
        .ok_or_else(|| section_out_of_bounds(&file, index, &symtab))?;
    let size = class.symbol_size();
    if symtab.entsize != size || symtab.size.checked_rem(size) != Some(0) {
        return Err(in_symtab(ErrorKind::UnsupportedElf {
            what: ElfUnsupported::SymbolSize(symtab.entsize),
        }));
    }
    let step = usize::try_from(size).unwrap_or(usize::MAX);
    // Entry 0 is the null symbol.
    let exported: alloc::vec::Vec<u32> = entries
        .chunks_exact(step)
        .skip(1)
        .filter_map(|raw| exported_name(class, raw))
        .collect();
    if exported.is_empty() {
        return Ok(alloc::vec::Vec::new());
    }
    let strings = file.section_header(symtab.link).ok_or_else(|| {
        in_symtab(ErrorKind::BadSectionIndex {
            index: symtab.link,
            count: file.header.shnum,
        })
    })?;
    // In the order LLVM's getStringTable checks them.
    let bad_table = || {
        Error::new(
            ErrorKind::BadStringTable {
                index: symtab.link,
                kind: strings.kind,
                size: strings.size,
            },
            file.section_header_offset(symtab.link),
        )
        .in_entry(symtab.link.into())
    };
    if strings.kind != SHT_STRTAB {
        return Err(bad_table());
    }
    let table = range(data, strings.offset, strings.size)
        .ok_or_else(|| section_out_of_bounds(&file, symtab.link, &strings))?;
    if table.last() != Some(&0) {
        return Err(bad_table());
    }
    exported
        .into_iter()
        .map(|name| {
            section_name(table, name).ok_or_else(|| {
                in_symtab(ErrorKind::BadSectionName {
                    name,
                    table_size: to_u64(table.len()),
                })
            })
        })
        .collect()
}

/// The name offset of a symbol table entry if it is a defined global.
fn exported_name(class: Class, raw: &[u8]) -> Option<u32> {
    let (name, info, shndx) = match class {
        Class::Elf64 => {
            let (name, rest) = U32::read_from_prefix(raw).ok()?;
            let (&info, rest) = rest.split_first()?;
            let (shndx, _) = U16::read_from_prefix(rest.get(1..)?).ok()?;
            (name.get(), info, shndx.get())
        }
        Class::Elf32 => {
            let (name, rest) = U32::read_from_prefix(raw).ok()?;
            let &info = rest.get(8)?;
            let (shndx, _) = U16::read_from_prefix(rest.get(10..)?).ok()?;
            (name.get(), info, shndx.get())
        }
    };
    let binding = info >> 4;
    let kind = info & 0xf;
    // STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE; not STT_SECTION or STT_FILE.
    let exported = matches!(binding, 1 | 2 | 10) && !matches!(kind, 3 | 4);
    (exported && shndx != 0 && name != 0).then_some(name)
}

/// The name of a symbol table entry if it is a defined global.
fn defined_global<'a>(class: Class, raw: &[u8], strings: &'a [u8]) -> Option<&'a [u8]> {
    section_name(strings, exported_name(class, raw)?)
}

fn read_file_header(data: &[u8]) -> Result<FileHeader> {
    if !ElfFile::is_elf(data) {
        return Err(Error::new(ErrorKind::NotElf, 0));
    }
    let unsupported = |what, at| Error::new(ErrorKind::UnsupportedElf { what }, at);
    let class = match data.get(4).copied().unwrap_or(0) {
        1 => Class::Elf32,
        2 => Class::Elf64,
        other => return Err(unsupported(ElfUnsupported::Class(other), 4)),
    };
    match data.get(5).copied().unwrap_or(0) {
        1 => {}
        2 => return Err(unsupported(ElfUnsupported::BigEndian, 5)),
        other => return Err(unsupported(ElfUnsupported::Encoding(other), 5)),
    }
    let truncated =
        || Error::truncated(Field::ElfHeader, class.header_size(), to_u64(data.len()), 0);
    let header = match class {
        Class::Elf64 => {
            let h = FileHeader64::ref_from_prefix(data)
                .map_err(|_| truncated())?
                .0;
            raw_header(
                class,
                [h.e_type, h.e_machine],
                h.e_flags,
                h.e_phoff.get(),
                h.e_shoff.get(),
                [
                    h.e_phentsize,
                    h.e_phnum,
                    h.e_shentsize,
                    h.e_shnum,
                    h.e_shstrndx,
                ],
            )
        }
        Class::Elf32 => {
            let h = FileHeader32::ref_from_prefix(data)
                .map_err(|_| truncated())?
                .0;
            raw_header(
                class,
                [h.e_type, h.e_machine],
                h.e_flags,
                h.e_phoff.get().into(),
                h.e_shoff.get().into(),
                [
                    h.e_phentsize,
                    h.e_phnum,
                    h.e_shentsize,
                    h.e_shnum,
                    h.e_shstrndx,
                ],
            )
        }
    };
    let (mut header, shentsize) = header;
    header.os_abi = data.get(7).copied().unwrap_or_default();
    header.abi_version = data.get(8).copied().unwrap_or_default();
    if header.shoff != 0 && u64::from(shentsize) != class.section_header_size() {
        return Err(unsupported(
            ElfUnsupported::SectionHeaderSize(shentsize),
            // e_shentsize: two fields before e_shstrndx.
            offset_of_shstrndx(class).saturating_sub(4),
        ));
    }
    // LLVM's object reader reads program headers only when asked; so does
    // this one (see `check_program_header_size`).
    Ok(header)
}

/// Gathers the class-independent fields; returns the header and the
/// section header size, which is checked against the class (the program
/// header size is checked only where program headers are read).
fn raw_header(
    class: Class,
    [file_type, machine]: [U16; 2],
    flags: U32,
    phoff: u64,
    shoff: u64,
    [_phentsize, phnum, shentsize, shnum, shstrndx]: [U16; 5],
) -> (FileHeader, u16) {
    (
        FileHeader {
            class,
            file_type: file_type.get(),
            machine: machine.get(),
            os_abi: 0,
            abi_version: 0,
            flags: flags.get(),
            phoff,
            phnum: phnum.get(),
            shoff,
            shnum: shnum.get().into(),
            shstrndx: shstrndx.get().into(),
        },
        shentsize.get(),
    )
}

/// Offset of `e_shoff` in the file header.
const fn offset_of_shoff(class: Class) -> u64 {
    match class {
        Class::Elf32 => 32,
        Class::Elf64 => 40,
    }
}

/// Offset of `e_shstrndx` in the file header.
const fn offset_of_shstrndx(class: Class) -> u64 {
    match class {
        Class::Elf32 => 50,
        Class::Elf64 => 62,
    }
}

fn section_out_of_bounds(file: &ElfFile, index: u32, header: &SectionHeader) -> Error {
    Error::new(
        ErrorKind::SectionOutOfBounds {
            offset: header.offset,
            size: header.size,
            len: to_u64(file.data.len()),
        },
        file.section_header_offset(index),
    )
    .in_entry(index.into())
}

/// The NUL-terminated string at `offset` in a string table.
pub(crate) fn section_name(table: &[u8], offset: u32) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let rest = table.get(start..)?;
    let end = memchr::memchr(0, rest)?;
    rest.get(..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_is_not_little_endian_elf() {
        assert_eq!(ElfFile::parse(b"").unwrap_err().kind(), ErrorKind::NotElf);
        let mut be = [0u8; 64];
        be[..4].copy_from_slice(ELF_MAGIC);
        be[4] = 2;
        be[5] = 2;
        assert_eq!(
            ElfFile::parse(&be).unwrap_err().kind(),
            ErrorKind::UnsupportedElf {
                what: ElfUnsupported::BigEndian
            }
        );
        be[5] = 1;
        assert!(matches!(
            ElfFile::parse(&be[..40]).unwrap_err().kind(),
            ErrorKind::Truncated {
                field: Field::ElfHeader,
                ..
            }
        ));
        let file = ElfFile::parse(&be).unwrap();
        assert_eq!(file.section_count(), 0);
        assert_eq!(file.sections().count(), 0);
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn index_symbols_takes_only_string_tables_llvm_reads_names_from() {
        // llvm-ar 22 fails an archive of such an object: "invalid sh_type for
        // string table section [index N]: expected SHT_STRTAB, but got
        // SHT_PROGBITS", "... is empty", "... is non-null terminated".
        let data = include_bytes!("../../../tests/fixtures/object/x86_64.o");
        assert!(!index_symbols(data).unwrap().is_empty());
        let file = ElfFile::parse(data).unwrap();
        let symtab = file
            .sections()
            .map(Result::unwrap)
            .find(|s| s.header().kind == SHT_SYMTAB)
            .unwrap();
        let link = symtab.header().link;
        let at = file.section_header_offset(link);
        let header = usize::try_from(at).unwrap();
        let strings = *file.section(link).unwrap().header();
        let refused = |bytes: &[u8], kind: u32, size: u64| {
            let err = index_symbols(bytes).unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::BadStringTable {
                    index: link,
                    kind,
                    size
                }
            );
            assert_eq!((err.offset(), err.entry()), (at, Some(link.into())));
            let _ = alloc::format!("{err}");
        };
        let mut progbits = data.to_vec();
        progbits[header + 4..header + 8].copy_from_slice(&SHT_PROGBITS.to_le_bytes());
        refused(&progbits, SHT_PROGBITS, strings.size);
        let mut empty = data.to_vec();
        empty[header + 32..header + 40].fill(0);
        refused(&empty, SHT_STRTAB, 0);
        let mut unterminated = data.to_vec();
        let last = usize::try_from(strings.offset + strings.size - 1).unwrap();
        unterminated[last] = b'x';
        refused(&unterminated, SHT_STRTAB, strings.size);
    }
}
