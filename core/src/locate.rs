//! Finding the offload containers in an ELF host file: relocatable objects,
//! executables and shared libraries.
//!
//! | section | holds |
//! |---|---|
//! | type `SHT_LLVM_OFFLOADING` (`.llvm.offloading`, any name) | OffloadBinaries back to back |
//! | `.hip_fatbin` | bundles or compressed bundles back to back |
//! | `.nv_fatbin` | an NVIDIA fat binary (not parsed here) |
//! | `__CLANG_OFFLOAD_BUNDLE__<id>` | one entry of an object-flavour bundle |
//! | `.hipFatBinSegment`, `.nvFatBinSegment` | fat-binary wrapper records pointing at the above |
//!
//! A wrapper's pointer is an address (executables), or 0 with a relocation
//! that fills it (relocatable objects, position-independent files);
//! [`wrapper_target`] follows either back to the fat binary in the file.

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::bundle::BUNDLE_MAGIC;
use crate::bytes::to_u64;
use crate::elf::{
    Class, ElfFile, Section, ET_REL, SHF_ALLOC, SHT_LLVM_OFFLOADING, SHT_NOBITS, SHT_RELA,
};
use crate::Result;

/// What an offload section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// OffloadBinaries (section type `SHT_LLVM_OFFLOADING`).
    OffloadBinaries,
    /// Bundles or compressed bundles (`.hip_fatbin`).
    HipFatbin,
    /// An NVIDIA fat binary (`.nv_fatbin`).
    NvFatbin,
    /// One entry of an object-flavour bundle (`__CLANG_OFFLOAD_BUNDLE__<id>`).
    BundleEntry,
    /// HIP fat-binary wrapper records (`.hipFatBinSegment`).
    HipWrappers,
    /// CUDA fat-binary wrapper records (`.nvFatBinSegment`).
    CudaWrappers,
}

impl SectionKind {
    /// The kind of offload data a section holds, if any.
    pub fn of(section: &Section<'_>) -> Option<Self> {
        let name = section.name();
        if section.header().kind == SHT_NOBITS {
            return None;
        }
        if section.header().kind == SHT_LLVM_OFFLOADING {
            return Some(SectionKind::OffloadBinaries);
        }
        match name {
            b".hip_fatbin" => Some(SectionKind::HipFatbin),
            b".nv_fatbin" => Some(SectionKind::NvFatbin),
            b".hipFatBinSegment" => Some(SectionKind::HipWrappers),
            b".nvFatBinSegment" => Some(SectionKind::CudaWrappers),
            _ if name.starts_with(BUNDLE_MAGIC) => Some(SectionKind::BundleEntry),
            _ => None,
        }
    }

    /// Whether the section holds containers that
    /// [`crate::container::Containers`] walks.
    pub fn holds_containers(self) -> bool {
        matches!(self, SectionKind::OffloadBinaries | SectionKind::HipFatbin)
    }
}

/// A section with offload data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadSection<'data> {
    /// The section.
    pub section: Section<'data>,
    /// What it holds.
    pub kind: SectionKind,
}

/// The sections of `elf` that hold offload data, in section order. A section
/// whose header is damaged is an error for that section only.
pub fn offload_sections<'a, 'data>(
    elf: &'a ElfFile<'data>,
) -> impl Iterator<Item = Result<OffloadSection<'data>>> + 'a {
    elf.sections().filter_map(|section| match section {
        Ok(section) => SectionKind::of(&section).map(|kind| Ok(OffloadSection { section, kind })),
        Err(error) => Some(Err(error)),
    })
}

// The wrapper records' layouts and magics are registration's.
pub use crate::registration::{
    FatbinWrapper32, FatbinWrapper64, CUDA_WRAPPER_MAGIC, HIPK_WRAPPER_MAGIC, HIP_WRAPPER_MAGIC,
};

/// Which runtime a wrapper record is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WrapperKind {
    /// `__hipRegisterFatBinary` (HIPF).
    Hip,
    /// ROCm's kpack variant (HIPK): the pointer names kpack metadata.
    HipKpack,
    /// `__cudaRegisterFatBinary`.
    Cuda,
    /// Any other magic.
    Unknown(u32),
}

impl WrapperKind {
    /// The magic of this kind.
    pub fn magic(self) -> u32 {
        match self {
            WrapperKind::Hip => HIP_WRAPPER_MAGIC,
            WrapperKind::HipKpack => HIPK_WRAPPER_MAGIC,
            WrapperKind::Cuda => CUDA_WRAPPER_MAGIC,
            WrapperKind::Unknown(magic) => magic,
        }
    }

    /// The magic as text (`HIPF`, `HIPK`, `CUDA`), or `unknown magic`.
    pub fn name(self) -> &'static str {
        match self {
            WrapperKind::Hip => "HIPF",
            WrapperKind::HipKpack => "HIPK",
            WrapperKind::Cuda => "CUDA",
            WrapperKind::Unknown(_) => "unknown magic",
        }
    }

    /// The kind a magic names.
    pub fn from_magic(magic: u32) -> Self {
        match magic {
            HIP_WRAPPER_MAGIC => WrapperKind::Hip,
            HIPK_WRAPPER_MAGIC => WrapperKind::HipKpack,
            CUDA_WRAPPER_MAGIC => WrapperKind::Cuda,
            other => WrapperKind::Unknown(other),
        }
    }
}

/// One wrapper record, in native integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    /// Offset of the record in its section.
    pub offset: u64,
    /// Which runtime it is for.
    pub kind: WrapperKind,
    /// The version (1).
    pub version: u32,
    /// The address of the fat binary (0 in relocatable objects).
    pub binary: u64,
}

/// The wrapper records in a `.hipFatBinSegment` or `.nvFatBinSegment`
/// section's contents; a partial record at the end is ignored.
pub fn wrappers(data: &[u8], class: Class) -> impl Iterator<Item = Wrapper> + '_ {
    (0..).map_while(move |index| wrapper_at(data, class, index))
}

/// Record `index` of a wrapper section's contents, if it is there whole.
pub fn wrapper_at(data: &[u8], class: Class, index: usize) -> Option<Wrapper> {
    let size: usize = match class {
        Class::Elf64 => 24,
        Class::Elf32 => 16,
    };
    let at = index.checked_mul(size)?;
    let raw = data.get(at..at.checked_add(size)?)?;
    let (magic, version, binary) = match class {
        Class::Elf64 => FatbinWrapper64::ref_from_bytes(raw)
            .map(|w| (w.magic.get(), w.version.get(), w.binary.get()))
            .ok()?,
        Class::Elf32 => FatbinWrapper32::ref_from_bytes(raw)
            .map(|w| (w.magic.get(), w.version.get(), u64::from(w.binary.get())))
            .ok()?,
    };
    Some(Wrapper {
        offset: to_u64(at),
        kind: WrapperKind::from_magic(magic),
        version,
        binary,
    })
}

/// Where a wrapper record's pointer leads: the section and offset of the fat
/// binary. The pointer is read where it is stored; if that is 0 (left to a
/// relocation, as in relocatable objects and position-independent files),
/// the RELA relocation that fills it is followed instead. Each call searches
/// the relocations; [`wrapper_targets`] resolves a whole section in one pass.
pub fn wrapper_target<'data>(
    elf: &ElfFile<'data>,
    segment: &Section<'data>,
    record: &Wrapper,
) -> Option<(Section<'data>, u64)> {
    if record.binary != 0 {
        return locate_address(elf, record.binary);
    }
    let place = pointer_place(elf, segment, record)?;
    let (rela, relocation) = relocations(elf, segment).find(|(_, r)| r.offset.get() == place)?;
    follow(elf, &rela, relocation, |address| {
        locate_address(elf, address)
    })
}

/// Every wrapper record of `segment` with where it leads, as
/// [`wrapper_target`] finds it, but reading the relocations and the section
/// table once: linear in the file however many records there are.
#[cfg(feature = "alloc")]
pub fn wrapper_targets<'data>(
    elf: &ElfFile<'data>,
    segment: &Section<'data>,
) -> alloc::vec::Vec<(Wrapper, Option<(Section<'data>, u64)>)> {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;
    let records: Vec<Wrapper> = wrappers(segment.data(), elf.header().class).collect();
    let places: BTreeMap<u64, usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.binary == 0)
        .filter_map(|(i, r)| Some((pointer_place(elf, segment, r)?, i)))
        .collect();
    let mut filled = BTreeMap::new();
    if !places.is_empty() {
        for (rela, relocation) in relocations(elf, segment) {
            if let Some(&i) = places.get(&relocation.offset.get()) {
                filled.entry(i).or_insert((rela, relocation));
            }
        }
    }
    // Allocated sections by address, for addresses to file positions.
    let mut allocated: Vec<Section<'data>> = elf
        .sections()
        .flatten()
        .filter(|s| s.header().flags & SHF_ALLOC != 0 && !s.data().is_empty())
        .collect();
    allocated.sort_by_key(|s| s.header().addr);
    let at_address = |address: u64| {
        let after = allocated.partition_point(|s| s.header().addr <= address);
        // Sections with contents do not overlap in a well-formed file; in a
        // crafted one, look a few further down.
        allocated
            .get(..after)?
            .iter()
            .rev()
            .take(8)
            .find_map(|section| {
                let offset = address.checked_sub(section.header().addr)?;
                (address != 0 && offset < to_u64(section.data().len()))
                    .then_some((*section, offset))
            })
    };
    records
        .iter()
        .enumerate()
        .map(|(i, record)| {
            let target = if record.binary != 0 {
                at_address(record.binary)
            } else {
                filled
                    .get(&i)
                    .and_then(|(rela, relocation)| follow(elf, rela, relocation, at_address))
            };
            (*record, target)
        })
        .collect()
}

/// Where the relocation that fills a record's pointer applies: the offset in
/// the section (relocatable objects) or the run-time address.
fn pointer_place(elf: &ElfFile<'_>, segment: &Section<'_>, record: &Wrapper) -> Option<u64> {
    let field = record.offset.checked_add(8)?;
    if elf.header().file_type == ET_REL {
        Some(field)
    } else {
        segment.header().addr.checked_add(field)
    }
}

/// The RELA relocations that can apply to `segment`: those of its own
/// relocation section in a relocatable object, all of them otherwise
/// (64-bit files; 32-bit ones use REL with the addend in place).
fn relocations<'a, 'data>(
    elf: &'a ElfFile<'data>,
    segment: &'a Section<'data>,
) -> impl Iterator<Item = (Section<'data>, &'data Rela64)> + 'a {
    let relocatable = elf.header().file_type == ET_REL;
    let is_64 = elf.header().class == Class::Elf64;
    elf.sections()
        .flatten()
        .filter(move |rela| {
            is_64
                && rela.header().kind == SHT_RELA
                && (!relocatable || rela.header().info == segment.index())
        })
        .flat_map(|rela| {
            rela.data()
                .chunks_exact(24)
                .filter_map(|raw| Rela64::ref_from_bytes(raw).ok())
                .map(move |relocation| (rela, relocation))
        })
}

/// Where a relocation points: its symbol's section and value plus the addend
/// (relocatable objects), or that address, or the addend alone for a
/// relocation without symbol, mapped to the file by `at_address`.
fn follow<'data>(
    elf: &ElfFile<'data>,
    rela: &Section<'data>,
    relocation: &Rela64,
    at_address: impl Fn(u64) -> Option<(Section<'data>, u64)>,
) -> Option<(Section<'data>, u64)> {
    let (symbol, addend) = (relocation.info.get() >> 32, relocation.addend.get());
    if symbol == 0 {
        return at_address(addend);
    }
    let symtab = elf.section(rela.header().link).ok()?;
    let at = usize::try_from(symbol.checked_mul(24)?).ok()?;
    let sym = Sym64::ref_from_bytes(symtab.data().get(at..at.checked_add(24)?)?).ok()?;
    let value = sym.value.get().checked_add(addend)?;
    if elf.header().file_type == ET_REL {
        let target = elf.section(u32::from(sym.shndx.get())).ok()?;
        (value < to_u64(target.data().len())).then_some((target, value))
    } else {
        at_address(value)
    }
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct Rela64 {
    offset: U64,
    info: U64,
    addend: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct Sym64 {
    name: U32,
    info: u8,
    other: u8,
    shndx: zerocopy::little_endian::U16,
    value: U64,
    size: U64,
}

/// The section and offset within it that hold the byte at run-time address
/// `address`: the allocated section (with contents in the file) whose
/// address range contains it.
pub fn locate_address<'data>(elf: &ElfFile<'data>, address: u64) -> Option<(Section<'data>, u64)> {
    if address == 0 {
        return None;
    }
    elf.sections().flatten().find_map(|section| {
        let header = section.header();
        let offset = address.checked_sub(header.addr)?;
        let inside = header.flags & SHF_ALLOC != 0
            && header.kind != SHT_NOBITS
            && offset < to_u64(section.data().len());
        inside.then_some((section, offset))
    })
}
