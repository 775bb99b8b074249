//! Finding the offload containers in a host file: ELF relocatable objects,
//! executables and shared libraries, COFF objects and PE images.
//!
//! | section | holds |
//! |---|---|
//! | ELF type `SHT_LLVM_OFFLOADING` (any name); COFF `.llvm.offloading` | OffloadBinaries back to back |
//! | `.hip_fatbin` | bundles or compressed bundles back to back |
//! | `.nv_fatbin` | NVIDIA fat binaries back to back ([`crate::cuda_fatbin`]) |
//! | `__nv_relfatbin` | the same, for old-style relocatable device code |
//! | `__CLANG_OFFLOAD_BUNDLE__<id>` | one entry of an object-flavour bundle |
//! | `.hipFatBinSegment`, `.nvFatBinSegment` | fat-binary wrapper records pointing at the above |
//!
//! PE images cut section names to eight bytes (`.hip_fat`, `.hipFatB`); a
//! name that long which starts one of the names above stands for it.
//!
//! A wrapper's pointer is an address (executables, PE images: image base
//! plus relative address), or 0 with a relocation that fills it
//! (relocatable objects, position-independent files); [`wrapper_target`]
//! follows either back to the fat binary in the file.

use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::bundle::BUNDLE_MAGIC;
use crate::bytes::to_u64;
use crate::coff::Relocation;
use crate::elf::{self, Class, SHT_LLVM_OFFLOADING, SHT_RELA};
use crate::object::{ObjectFile, Section};
use crate::Result;

/// What an offload section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// OffloadBinaries (section type `SHT_LLVM_OFFLOADING`).
    OffloadBinaries,
    /// Bundles or compressed bundles (`.hip_fatbin`).
    HipFatbin,
    /// NVIDIA fat binaries (`.nv_fatbin`).
    NvFatbin,
    /// NVIDIA fat binaries of relocatable device code (`__nv_relfatbin`).
    NvRelFatbin,
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
        if section.is_uninitialized() {
            return None;
        }
        let name = section.name();
        let named = |full: &[u8]| {
            name == full
                || (matches!(section, Section::Coff(_))
                    && name.len() == 8
                    && full.starts_with(name))
        };
        match section {
            Section::Elf(s) if s.header().kind == SHT_LLVM_OFFLOADING => {
                return Some(SectionKind::OffloadBinaries)
            }
            Section::Coff(_) if named(b".llvm.offloading") => {
                return Some(SectionKind::OffloadBinaries)
            }
            _ => {}
        }
        if named(b".hip_fatbin") {
            Some(SectionKind::HipFatbin)
        } else if named(b".nv_fatbin") {
            Some(SectionKind::NvFatbin)
        } else if named(b"__nv_relfatbin") {
            Some(SectionKind::NvRelFatbin)
        } else if named(b".hipFatBinSegment") {
            Some(SectionKind::HipWrappers)
        } else if named(b".nvFatBinSegment") {
            Some(SectionKind::CudaWrappers)
        } else if name.starts_with(BUNDLE_MAGIC) {
            Some(SectionKind::BundleEntry)
        } else {
            None
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

/// The sections of `file` that hold offload data, in section order. A
/// section whose header is damaged is an error for that section only.
pub fn offload_sections<'a, 'data>(
    file: &'a ObjectFile<'data>,
) -> impl Iterator<Item = Result<OffloadSection<'data>>> + 'a {
    file.sections().filter_map(|section| match section {
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
    /// The record's last field: NULL for HIPF and CUDA records; in a `HIPK`
    /// record (kpack's split) the code object index, as a `u32` in its low
    /// bytes (the runtime reads the field and keeps those 32 bits).
    pub reserved: u64,
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
    let (magic, version, binary, reserved) = match class {
        Class::Elf64 => FatbinWrapper64::ref_from_bytes(raw)
            .map(|w| {
                (
                    w.magic.get(),
                    w.version.get(),
                    w.binary.get(),
                    w.reserved.get(),
                )
            })
            .ok()?,
        Class::Elf32 => FatbinWrapper32::ref_from_bytes(raw)
            .map(|w| {
                let (binary, reserved) = (w.binary.get(), w.reserved.get());
                (
                    w.magic.get(),
                    w.version.get(),
                    u64::from(binary),
                    u64::from(reserved),
                )
            })
            .ok()?,
    };
    Some(Wrapper {
        offset: to_u64(at),
        kind: WrapperKind::from_magic(magic),
        version,
        binary,
        reserved,
    })
}

/// Where a wrapper record's pointer leads: the section and offset of the fat
/// binary. The pointer is read where it is stored; if that is 0 (left to a
/// relocation, as in relocatable objects and position-independent files),
/// the relocation that fills it is followed instead. Each call searches
/// the relocations; [`wrapper_targets`] resolves a whole section in one pass.
pub fn wrapper_target<'data>(
    file: &ObjectFile<'data>,
    segment: &Section<'data>,
    record: &Wrapper,
) -> Option<(Section<'data>, u64)> {
    if record.binary != 0 {
        return locate_address(file, record.binary);
    }
    let place = pointer_place(file, segment, record)?;
    let fill = relocations(file, segment, &|at| at == place).next()?;
    follow(file, &fill, |address| locate_address(file, address))
}

/// Every wrapper record of `segment` with where it leads, as
/// [`wrapper_target`] finds it, but reading the relocations and the section
/// table once: linear in the file however many records there are.
#[cfg(feature = "alloc")]
pub fn wrapper_targets<'data>(
    file: &ObjectFile<'data>,
    segment: &Section<'data>,
) -> alloc::vec::Vec<(Wrapper, Option<(Section<'data>, u64)>)> {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;
    let records: Vec<Wrapper> = wrappers(segment.data(), file.class()).collect();
    let places: BTreeMap<u64, usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.binary == 0)
        .filter_map(|(i, r)| Some((pointer_place(file, segment, r)?, i)))
        .collect();
    let mut filled = BTreeMap::new();
    if let (Some((&low, _)), Some((&high, _))) = (places.first_key_value(), places.last_key_value())
    {
        // Most of a library's relocations lie outside the records: only
        // those inside are looked up.
        for fill in relocations(file, segment, &|at| (low..=high).contains(&at)) {
            if let Some(&i) = places.get(&fill.place()) {
                filled.entry(i).or_insert(fill);
            }
        }
    }
    // Loaded sections by address, for addresses to file positions.
    let mut loaded: Vec<(u64, Section<'data>)> = file
        .sections()
        .flatten()
        .filter(|s| !s.data().is_empty())
        .filter_map(|s| Some((s.address()?, s)))
        .collect();
    loaded.sort_by_key(|(address, _)| *address);
    let at_address = |address: u64| {
        let after = loaded.partition_point(|(start, _)| *start <= address);
        // Sections with contents do not overlap in a well-formed file; in a
        // crafted one, look a few further down.
        loaded
            .get(..after)?
            .iter()
            .rev()
            .take(8)
            .find_map(|(start, section)| {
                let offset = address.checked_sub(*start)?;
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
                    .and_then(|fill| follow(file, fill, at_address))
            };
            (*record, target)
        })
        .collect()
}

/// Where the relocation that fills a record's pointer applies: the offset in
/// the section (relocatable ELF objects), the section's address plus the
/// offset (COFF objects, whose sections start at their address), or the
/// run-time address.
fn pointer_place(file: &ObjectFile<'_>, segment: &Section<'_>, record: &Wrapper) -> Option<u64> {
    let field = record.offset.checked_add(8)?;
    match segment {
        Section::Coff(s) => u64::from(s.header().virtual_address.get()).checked_add(field),
        Section::Elf(_) if file.is_relocatable() => Some(field),
        Section::Elf(s) => s.header().addr.checked_add(field),
    }
}

/// A relocation that may fill a wrapper's pointer.
#[derive(Debug, Clone, Copy)]
enum Fill<'data> {
    /// An ELF RELA relocation and the section that holds it.
    Elf(elf::Section<'data>, &'data Rela64),
    /// A COFF relocation of the wrapper section.
    Coff(&'data Relocation),
}

impl Fill<'_> {
    /// Where it applies.
    fn place(&self) -> u64 {
        match self {
            Fill::Elf(_, relocation) => relocation.offset.get(),
            Fill::Coff(relocation) => relocation.virtual_address.get().into(),
        }
    }
}

/// The relocations that can apply to `segment`: in ELF, the RELA relocations
/// of its own relocation section in a relocatable object, all of them
/// otherwise (64-bit files; 32-bit ones use REL with the addend in place);
/// in COFF, the section's own. Only those whose place `keep` accepts.
fn relocations<'a, 'data>(
    file: &'a ObjectFile<'data>,
    segment: &'a Section<'data>,
    keep: &'a dyn Fn(u64) -> bool,
) -> impl Iterator<Item = Fill<'data>> + 'a {
    let (elf, coff) = match (file, segment) {
        (ObjectFile::Elf(elf), Section::Elf(_)) => (Some(elf), None),
        (ObjectFile::Coff(coff), Section::Coff(section)) => (None, coff.relocations(section).ok()),
        _ => (None, None),
    };
    let relocatable = file.is_relocatable();
    let is_64 = file.class() == Class::Elf64;
    let elf_fills = elf.into_iter().flat_map(move |elf| {
        elf.sections()
            .flatten()
            .filter(move |rela| {
                is_64
                    && rela.header().kind == SHT_RELA
                    && (!relocatable || rela.header().info == segment.index())
            })
            .flat_map(move |rela| {
                rela.data()
                    .chunks_exact(24)
                    .filter_map(|raw| Rela64::ref_from_bytes(raw).ok())
                    .filter(move |relocation| keep(relocation.offset.get()))
                    .map(move |relocation| Fill::Elf(rela, relocation))
            })
    });
    let coff_fills = coff.into_iter().flatten().map(Fill::Coff);
    elf_fills.chain(coff_fills.filter(move |fill| keep(fill.place())))
}

/// Where a relocation points: its symbol's section and value plus the addend
/// (relocatable objects), or that address, or the addend alone for a
/// relocation without symbol, mapped to the file by `at_address`. A COFF
/// relocation's addend is the value in place: the pointer, 0 here.
fn follow<'data>(
    file: &ObjectFile<'data>,
    fill: &Fill<'data>,
    at_address: impl Fn(u64) -> Option<(Section<'data>, u64)>,
) -> Option<(Section<'data>, u64)> {
    let (shndx, value) = match (file, fill) {
        (ObjectFile::Elf(elf), Fill::Elf(rela, relocation)) => {
            let (symbol, addend) = (relocation.info.get() >> 32, relocation.addend.get());
            if symbol == 0 {
                return at_address(addend);
            }
            let symtab = elf.section(rela.header().link).ok()?;
            let at = usize::try_from(symbol.checked_mul(24)?).ok()?;
            let sym = Sym64::ref_from_bytes(symtab.data().get(at..at.checked_add(24)?)?).ok()?;
            let value = sym.value.get().checked_add(addend)?;
            if !file.is_relocatable() {
                return at_address(value);
            }
            (u32::from(sym.shndx.get()), value)
        }
        (ObjectFile::Coff(coff), Fill::Coff(relocation)) => {
            let symbol = coff.symbol(relocation.symbol_table_index.get())?;
            let shndx = u32::try_from(symbol.section()).ok().filter(|&n| n > 0)?;
            (shndx, u64::from(symbol.value.get()))
        }
        _ => return None,
    };
    let target = file.section(shndx).ok()?;
    (value < to_u64(target.data().len())).then_some((target, value))
}

#[derive(Debug, FromBytes, KnownLayout, Immutable, Unaligned)]
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
/// `address`: the loaded section (with contents in the file) whose address
/// range contains it.
pub fn locate_address<'data>(
    file: &ObjectFile<'data>,
    address: u64,
) -> Option<(Section<'data>, u64)> {
    if address == 0 {
        return None;
    }
    file.sections().flatten().find_map(|section| {
        let offset = address.checked_sub(section.address()?)?;
        (offset < to_u64(section.data().len())).then_some((section, offset))
    })
}
