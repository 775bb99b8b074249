//! The ELF64 pieces the split reads and rewrites, in native integers (the
//! header fields it changes, section and program headers, RELA
//! relocations) and the checked arithmetic of its layout: every sum, product
//! and page rounding fails as [`ErrorKind::LayoutOverflow`] instead of
//! wrapping.

use alloc::vec::Vec;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::FromBytes;

use super::{fail, SplitFault};
use crate::bytes::to_u64;
use crate::elf::{FileHeader64, ProgramHeader64, SectionHeader};
use crate::{Error, ErrorKind, Result};

pub(super) const PAGE: u64 = 0x1000;
pub(super) const PT_LOAD: u32 = 1;
pub(super) const PT_PHDR: u32 = 6;
pub(super) const PF_R: u32 = 4;
pub(super) const SHT_PROGBITS: u32 = 1;
pub(super) const SHT_RELA: u32 = 4;
pub(super) const SHT_NOBITS: u32 = 8;
pub(super) const SHF_ALLOC: u64 = 2;
const ET_EXEC: u16 = 2;
pub(super) const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
pub(super) const R_X86_64_RELATIVE: u64 = 8;
pub(super) const PHDR_SIZE: u64 = 56;
pub(super) const SHDR_SIZE: u64 = 64;
const RELA_SIZE: u64 = 24;

/// An ELF64 program header in native integers.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Phdr {
    pub(super) kind: u32,
    pub(super) flags: u32,
    pub(super) offset: u64,
    pub(super) vaddr: u64,
    pub(super) paddr: u64,
    pub(super) filesz: u64,
    pub(super) memsz: u64,
    pub(super) align: u64,
}

impl Phdr {
    pub(super) fn read(bytes: &[u8]) -> Option<Phdr> {
        let h = ProgramHeader64::ref_from_prefix(bytes).ok()?.0;
        Some(Phdr {
            kind: h.p_type.get(),
            flags: h.p_flags.get(),
            offset: h.p_offset.get(),
            vaddr: h.p_vaddr.get(),
            paddr: h.p_paddr.get(),
            filesz: h.p_filesz.get(),
            memsz: h.p_memsz.get(),
            align: h.p_align.get(),
        })
    }

    pub(super) fn bytes(&self) -> [u8; 56] {
        let h = ProgramHeader64 {
            p_type: U32::new(self.kind),
            p_flags: U32::new(self.flags),
            p_offset: U64::new(self.offset),
            p_vaddr: U64::new(self.vaddr),
            p_paddr: U64::new(self.paddr),
            p_filesz: U64::new(self.filesz),
            p_memsz: U64::new(self.memsz),
            p_align: U64::new(self.align),
        };
        let mut out = [0u8; 56];
        out.copy_from_slice(zerocopy::IntoBytes::as_bytes(&h));
        out
    }

    pub(super) fn load(flags: u32, offset: u64, vaddr: u64, size: u64, align: u64) -> Phdr {
        Phdr {
            kind: PT_LOAD,
            flags,
            offset,
            vaddr,
            paddr: vaddr,
            filesz: size,
            memsz: size,
            align,
        }
    }

    pub(super) fn contains(&self, vaddr: u64) -> bool {
        self.vaddr <= vaddr && vaddr < self.vaddr.saturating_add(self.memsz)
    }
}

/// The ELF header fields the rewrite changes, and where they are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) kind: u16,
    pub(super) phoff: u64,
    pub(super) phnum: u64,
    pub(super) shoff: u64,
    pub(super) shnum: u64,
    pub(super) shstrndx: u64,
}

pub(super) fn overflow(at: u64) -> Error {
    Error::new(ErrorKind::LayoutOverflow, at)
}

pub(super) fn add(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| overflow(a))
}

pub(super) fn sub(a: u64, b: u64) -> Result<u64> {
    a.checked_sub(b).ok_or_else(|| overflow(a))
}

pub(super) fn mul(a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| overflow(a))
}

pub(super) fn round_up(value: u64) -> Result<u64> {
    Ok(add(value, PAGE - 1)? & !(PAGE - 1))
}

pub(super) fn round_down(value: u64) -> u64 {
    value & !(PAGE - 1)
}

/// The least offset at or after `offset` with `vaddr`'s place in a page.
pub(super) fn page_align_offset(offset: u64, vaddr: u64) -> Result<u64> {
    let (want, have) = (vaddr & (PAGE - 1), offset & (PAGE - 1));
    if have == want {
        Ok(offset)
    } else if have < want {
        Ok(round_down(offset) | want)
    } else {
        Ok(round_up(offset)? | want)
    }
}
pub(super) fn read_header(data: &[u8]) -> Result<Header> {
    let unsupported = |expected| fail(SplitFault::Unsupported { expected }, 0);
    let elf64 = "a 64-bit little-endian x86-64 ELF file";
    let h = FileHeader64::ref_from_prefix(data)
        .map_err(|_| unsupported(elf64))?
        .0;
    if !data.starts_with(crate::elf::ELF_MAGIC)
        || h.e_ident.get(4) != Some(&2)
        || h.e_ident.get(5) != Some(&1)
        || h.e_machine.get() != EM_X86_64
    {
        return Err(unsupported(elf64));
    }
    let kind = h.e_type.get();
    if kind != ET_DYN && kind != ET_EXEC {
        return Err(fail(
            SplitFault::Unsupported {
                expected: "a shared object or an executable",
            },
            16,
        ));
    }
    let entsizes = |field: U16, want: u64, at| {
        if u64::from(field.get()) == want {
            Ok(())
        } else {
            Err(fail(
                SplitFault::Unsupported {
                    expected: "an ELF file with 56-byte program and 64-byte section headers",
                },
                at,
            ))
        }
    };
    entsizes(h.e_phentsize, PHDR_SIZE, 54)?;
    entsizes(h.e_shentsize, SHDR_SIZE, 58)?;
    let (shnum, shstrndx) = (h.e_shnum.get(), h.e_shstrndx.get());
    if shnum == 0 || shstrndx >= shnum || h.e_phnum.get() == 0xffff {
        return Err(fail(
            SplitFault::Unsupported {
                expected: "an ELF file with its section and program header counts in its header",
            },
            60,
        ));
    }
    Ok(Header {
        kind,
        phoff: h.e_phoff.get(),
        phnum: u64::from(h.e_phnum.get()),
        shoff: h.e_shoff.get(),
        shnum: u64::from(shnum),
        shstrndx: u64::from(shstrndx),
    })
}

pub(super) fn table<T>(
    data: &[u8],
    offset: u64,
    count: u64,
    size: u64,
    read: fn(&[u8]) -> Option<T>,
) -> Result<Vec<T>> {
    let bytes = crate::bytes::range(data, offset, mul(count, size)?).ok_or_else(|| {
        Error::new(
            ErrorKind::SectionTableOutOfBounds {
                offset,
                count,
                len: to_u64(data.len()),
            },
            offset,
        )
    })?;
    let step = usize::try_from(size).map_err(|_| overflow(offset))?;
    bytes
        .chunks_exact(step)
        .map(|chunk| read(chunk).ok_or_else(|| overflow(offset)))
        .collect()
}

pub(super) fn name_at(strtab: &[u8], at: u32) -> Vec<u8> {
    let rest = usize::try_from(at)
        .ok()
        .and_then(|at| strtab.get(at..))
        .unwrap_or_default();
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    rest.get(..end).unwrap_or_default().to_vec()
}

/// A relocation with addend.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rela {
    /// Its file offset.
    pub(super) at: u64,
    pub(super) address: u64,
    pub(super) info: u64,
    pub(super) addend: u64,
}

pub(super) fn relocations(data: &[u8], shdrs: &[SectionHeader]) -> Result<Vec<Rela>> {
    let mut out = Vec::new();
    for s in shdrs.iter().filter(|s| s.kind == SHT_RELA) {
        let step = if s.entsize == 0 { RELA_SIZE } else { s.entsize };
        let mut at = s.offset;
        let end = add(s.offset, s.size)?;
        while at < end {
            let bytes = crate::bytes::range(data, at, RELA_SIZE).ok_or_else(|| {
                Error::new(
                    ErrorKind::SectionOutOfBounds {
                        offset: s.offset,
                        size: s.size,
                        len: to_u64(data.len()),
                    },
                    at,
                )
            })?;
            let word = |i: usize| {
                bytes
                    .get(i..i.saturating_add(8))
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, u64::from_le_bytes)
            };
            out.push(Rela {
                at,
                address: word(0),
                info: word(8),
                addend: word(16),
            });
            at = add(at, step)?;
        }
    }
    Ok(out)
}
