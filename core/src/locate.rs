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
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

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

/// Magic of a HIP fat-binary wrapper (`__hip_fatbin_wrapper`): "HIPF".
pub const HIP_WRAPPER_MAGIC: u32 = 0x4849_5046;
/// Magic of a ROCm kpack wrapper: "HIPK".
pub const HIPK_WRAPPER_MAGIC: u32 = 0x4b50_4948;
/// Magic of a CUDA fat-binary wrapper (`__cuda_fatbin_wrapper`).
pub const CUDA_WRAPPER_MAGIC: u32 = 0x4662_43b1;

/// A 64-bit fat-binary wrapper record, as clang emits it.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FatbinWrapper64 {
    /// [`HIP_WRAPPER_MAGIC`], [`HIPK_WRAPPER_MAGIC`] or [`CUDA_WRAPPER_MAGIC`].
    pub magic: U32,
    /// 1.
    pub version: U32,
    /// Address of the fat binary.
    pub binary: U64,
    /// Unused (NULL).
    pub reserved: U64,
}
const _: () = assert!(core::mem::size_of::<FatbinWrapper64>() == 24);

/// A 32-bit fat-binary wrapper record.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FatbinWrapper32 {
    /// The magic.
    pub magic: U32,
    /// 1.
    pub version: U32,
    /// Address of the fat binary.
    pub binary: U32,
    /// Unused (NULL).
    pub reserved: U32,
}
const _: () = assert!(core::mem::size_of::<FatbinWrapper32>() == 16);

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
    let size = match class {
        Class::Elf64 => 24,
        Class::Elf32 => 16,
    };
    data.chunks_exact(size)
        .zip((0u64..).map(move |i| i.saturating_mul(to_u64(size))))
        .map(move |(raw, offset)| {
            let (magic, version, binary) = match class {
                Class::Elf64 => FatbinWrapper64::ref_from_bytes(raw)
                    .map(|w| (w.magic.get(), w.version.get(), w.binary.get()))
                    .unwrap_or_default(),
                Class::Elf32 => FatbinWrapper32::ref_from_bytes(raw)
                    .map(|w| (w.magic.get(), w.version.get(), u64::from(w.binary.get())))
                    .unwrap_or_default(),
            };
            Wrapper {
                offset,
                kind: WrapperKind::from_magic(magic),
                version,
                binary,
            }
        })
}

/// Where a wrapper record's pointer leads: the section and offset of the fat
/// binary. The pointer is read where it is stored; if that is 0 (left to a
/// relocation, as in relocatable objects and position-independent files),
/// the RELA relocation that fills it is followed instead.
pub fn wrapper_target<'data>(
    elf: &ElfFile<'data>,
    segment: &Section<'data>,
    record: &Wrapper,
) -> Option<(Section<'data>, u64)> {
    if record.binary != 0 {
        return locate_address(elf, record.binary);
    }
    let field = record.offset.checked_add(8)?;
    let relocatable = elf.header().file_type == ET_REL;
    let place = if relocatable {
        field
    } else {
        segment.header().addr.checked_add(field)?
    };
    let relocation = elf.sections().flatten().find_map(|rela| {
        let applies = rela.header().kind == SHT_RELA
            && (!relocatable || rela.header().info == segment.index());
        if !applies || elf.header().class != Class::Elf64 {
            return None;
        }
        rela.data()
            .chunks_exact(24)
            .filter_map(|raw| Rela64::ref_from_bytes(raw).ok())
            .find(|r| r.offset.get() == place)
            .map(|r| (rela, r.info.get() >> 32, r.addend.get()))
    })?;
    let (rela, symbol, addend) = relocation;
    if symbol == 0 {
        return locate_address(elf, addend);
    }
    let symtab = elf.section(rela.header().link).ok()?;
    let at = usize::try_from(symbol.checked_mul(24)?).ok()?;
    let sym = Sym64::ref_from_bytes(symtab.data().get(at..at.checked_add(24)?)?).ok()?;
    let value = sym.value.get().checked_add(addend)?;
    if relocatable {
        let target = elf.section(u32::from(sym.shndx.get())).ok()?;
        (value < to_u64(target.data().len())).then_some((target, value))
    } else {
        locate_address(elf, value)
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
