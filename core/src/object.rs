//! An object file of either format that hosts carry offload code in: ELF
//! (Linux and most others) or COFF (Windows objects, and PE DLLs and
//! executables). What locating containers, object-flavour bundles and
//! inspection need of a host file is here, once for both: sections by
//! number with their names, contents, file offsets and run-time addresses.

use crate::coff::{self, CoffFile};
use crate::elf::{self, Class, ElfFile, SHF_ALLOC, SHT_NOBITS};
use crate::Result;

/// A parsed ELF file or COFF object or PE image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectFile<'data> {
    /// An ELF file.
    Elf(ElfFile<'data>),
    /// A COFF object or PE image.
    Coff(CoffFile<'data>),
}

/// One section of an [`ObjectFile`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section<'data> {
    /// An ELF section.
    Elf(elf::Section<'data>),
    /// A COFF section.
    Coff(coff::Section<'data>),
}

impl<'data> ObjectFile<'data> {
    /// Parses `data` as COFF when it starts as a COFF object or PE image
    /// does, as ELF otherwise (so anything else is not ELF).
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        if CoffFile::is_coff(data) {
            CoffFile::parse(data).map(ObjectFile::Coff)
        } else {
            ElfFile::parse(data).map(ObjectFile::Elf)
        }
    }

    /// The whole input.
    pub fn data(&self) -> &'data [u8] {
        match self {
            ObjectFile::Elf(elf) => elf.data(),
            ObjectFile::Coff(coff) => coff.data(),
        }
    }

    /// The word size: the size of a wrapper record's pointer.
    pub fn class(&self) -> Class {
        match self {
            ObjectFile::Elf(elf) => elf.header().class,
            ObjectFile::Coff(coff) => coff.class(),
        }
    }

    /// Whether the file is relocatable (an object): pointers are then filled
    /// by relocations, not stored.
    pub fn is_relocatable(&self) -> bool {
        match self {
            ObjectFile::Elf(elf) => elf.header().file_type == elf::ET_REL,
            ObjectFile::Coff(coff) => !coff.is_image(),
        }
    }

    /// One past the highest section number; sections are numbered from 1
    /// in both formats (ELF's section 0 is its null section).
    pub fn section_end(&self) -> u32 {
        match self {
            ObjectFile::Elf(elf) => elf.section_count(),
            ObjectFile::Coff(coff) => coff.section_count().saturating_add(1),
        }
    }

    /// The section numbered `index`, with its name and contents checked.
    pub fn section(&self, index: u32) -> Result<Section<'data>> {
        match self {
            ObjectFile::Elf(elf) => elf.section(index).map(Section::Elf),
            ObjectFile::Coff(coff) => coff.section(index).map(Section::Coff),
        }
    }

    /// Every section number, ELF's null section 0 included (COFF numbers
    /// sections from 1): the sections LLVM walks by name.
    pub fn section_indices(&self) -> core::ops::Range<u32> {
        match self {
            ObjectFile::Elf(elf) => 0..elf.section_count(),
            ObjectFile::Coff(coff) => 1..coff.section_count().saturating_add(1),
        }
    }

    /// The name of section `index`, read from its header alone, or why it
    /// cannot be read.
    pub fn section_name(&self, index: u32) -> Result<&'data [u8]> {
        match self {
            ObjectFile::Elf(elf) => elf.section_name(index),
            ObjectFile::Coff(coff) => coff.section_name(index),
        }
    }

    /// Every section (ELF's null section left out), in order. A damaged
    /// section is an error for that section only.
    pub fn sections(&self) -> impl Iterator<Item = Result<Section<'data>>> + '_ {
        (1..self.section_end()).map(|i| self.section(i))
    }

    /// The first section with this exact name.
    pub fn section_by_name(&self, name: &[u8]) -> Option<Section<'data>> {
        self.sections().flatten().find(|s| s.name() == name)
    }
}

impl<'data> From<ElfFile<'data>> for ObjectFile<'data> {
    fn from(elf: ElfFile<'data>) -> Self {
        ObjectFile::Elf(elf)
    }
}

impl<'data> From<CoffFile<'data>> for ObjectFile<'data> {
    fn from(coff: CoffFile<'data>) -> Self {
        ObjectFile::Coff(coff)
    }
}

impl<'data> Section<'data> {
    /// The section's number.
    pub fn index(&self) -> u32 {
        match self {
            Section::Elf(s) => s.index(),
            Section::Coff(s) => s.index(),
        }
    }

    /// The section's name (an image's COFF names may be cut to eight bytes).
    pub fn name(&self) -> &'data [u8] {
        match self {
            Section::Elf(s) => s.name(),
            Section::Coff(s) => s.name(),
        }
    }

    /// The section's contents in the file.
    pub fn data(&self) -> &'data [u8] {
        match self {
            Section::Elf(s) => s.data(),
            Section::Coff(s) => s.data(),
        }
    }

    /// Where the contents start in the file.
    pub fn offset(&self) -> u64 {
        match self {
            Section::Elf(s) => s.offset(),
            Section::Coff(s) => s.offset(),
        }
    }

    /// The run-time address of the contents, for a section that is loaded
    /// and has contents in the file: an ELF `SHF_ALLOC` section, a PE
    /// image's section. COFF objects have none.
    pub fn address(&self) -> Option<u64> {
        match self {
            Section::Elf(s) => {
                let header = s.header();
                (header.flags & SHF_ALLOC != 0 && header.kind != SHT_NOBITS).then_some(header.addr)
            }
            Section::Coff(s) => s.address(),
        }
    }

    /// Whether the section has no contents in the file by its type: ELF's
    /// `SHT_NOBITS`, COFF's uninitialized data.
    pub fn is_uninitialized(&self) -> bool {
        match self {
            Section::Elf(s) => s.header().kind == SHT_NOBITS,
            Section::Coff(s) => s.characteristics() & coff::SCN_CNT_UNINITIALIZED_DATA != 0,
        }
    }
}
