//! The rewrite's state (rocm-kpack's `ElfSurgery`): the image, its header
//! and header tables as they become, and what changes them as rocm-kpack
//! does: the program header table applied in place or moved, a section's
//! whole pages cut.

use alloc::vec::Vec;

use super::image::Image;
use super::layout::{
    add, mul, name_at, overflow, page_align_offset, read_header, round_down, round_up, sub, table,
    Header, Phdr, PAGE, PF_R, PHDR_SIZE, PT_LOAD, PT_PHDR, SHDR_SIZE, SHT_NOBITS,
};
use super::{fail, SplitFault};
use crate::bytes::to_u64;
use crate::elf::{Class, SectionHeader};
use crate::{Error, ErrorKind, Result};

/// rocm-kpack moves the program header table with room for a multiple of
/// this many headers.
const SPARE_SLOTS: u64 = 16;

/// The rewrite's state: rocm-kpack's `ElfSurgery` and its lists.
pub(super) struct Surgery<'a> {
    pub(super) image: Image<'a>,
    pub(super) header: Header,
    pub(super) phdrs: Vec<Phdr>,
    pub(super) shdrs: Vec<SectionHeader>,
    pub(super) names: Vec<Vec<u8>>,
}

impl<'a> Surgery<'a> {
    /// `data`'s header, header tables and section names.
    pub(super) fn read(data: &'a [u8]) -> Result<Surgery<'a>> {
        let header = read_header(data)?;
        let phdrs = table(data, header.phoff, header.phnum, PHDR_SIZE, Phdr::read)?;
        let shdrs = table(data, header.shoff, header.shnum, SHDR_SIZE, |b| {
            SectionHeader::read(Class::Elf64, b)
        })?;
        let strtab_header = shdrs
            .get(usize::try_from(header.shstrndx).map_err(|_| overflow(62))?)
            .copied()
            .unwrap_or_default();
        let strtab = crate::bytes::range(data, strtab_header.offset, strtab_header.size)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::BadNameTableIndex {
                        index: u32::try_from(header.shstrndx).unwrap_or(u32::MAX),
                        count: u32::try_from(header.shnum).unwrap_or(u32::MAX),
                    },
                    62,
                )
            })?;
        let names = shdrs.iter().map(|s| name_at(strtab, s.name)).collect();
        Ok(Surgery {
            image: Image {
                input: data,
                patches: Vec::new(),
                tail: Vec::new(),
                removed: None,
            },
            header,
            phdrs,
            shdrs,
            names,
        })
    }

    pub(super) fn write_header(&mut self) -> Result<()> {
        let h = self.header;
        let phnum = u16::try_from(h.phnum).map_err(|_| overflow(56))?;
        let shnum = u16::try_from(h.shnum).map_err(|_| overflow(60))?;
        self.image.write(32, &h.phoff.to_le_bytes())?;
        self.image.write(40, &h.shoff.to_le_bytes())?;
        self.image.write(56, &phnum.to_le_bytes())?;
        self.image.write(60, &shnum.to_le_bytes())?;
        Ok(())
    }

    pub(super) fn write_shdr(&mut self, index: usize) -> Result<()> {
        let shdr = *self.shdrs.get(index).ok_or_else(|| overflow(0))?;
        let at = add(self.header.shoff, mul(to_u64(index), SHDR_SIZE)?)?;
        self.image.write(at, &shdr.elf64_bytes())
    }

    pub(super) fn find(&self, name: &[u8]) -> Option<usize> {
        self.names.iter().position(|n| n.as_slice() == name)
    }

    /// The first program header (of any type) holding `vaddr`, as
    /// rocm-kpack looks.
    pub(super) fn phdr_at(&self, vaddr: u64) -> Option<(usize, Phdr)> {
        self.phdrs
            .iter()
            .copied()
            .enumerate()
            .find(|(_, p)| p.contains(vaddr))
    }

    pub(super) fn offset_of(&self, vaddr: u64) -> Result<u64> {
        let (_, p) = self
            .phdr_at(vaddr)
            .ok_or_else(|| fail(SplitFault::Unmapped { address: vaddr }, 0))?;
        add(p.offset, sub(vaddr, p.vaddr)?)
    }

    /// The least file offset of contents after the program header table:
    /// rocm-kpack's room for the table where it is.
    fn min_content_offset(&self) -> u64 {
        let phoff = self.header.phoff;
        let mut min = self.image.len();
        for s in &self.shdrs {
            if s.kind != 0 && s.offset > phoff {
                min = min.min(s.offset);
            }
        }
        for p in &self.phdrs {
            if p.kind == PT_LOAD && p.filesz > 0 && p.offset > phoff {
                min = min.min(p.offset);
            }
        }
        min
    }

    /// rocm-kpack's `ProgramHeaderManager.apply` for `list`: in place if it
    /// fits (and the table is not growing), else moved to the end.
    pub(super) fn apply_phdrs(&mut self, mut list: Vec<Phdr>) -> Result<()> {
        let required = mul(to_u64(list.len()), PHDR_SIZE)?;
        let available = self.min_content_offset().saturating_sub(self.header.phoff);
        if required <= available {
            if to_u64(list.len()) > self.header.phnum {
                return Err(fail(SplitFault::PhdrRoom, 32));
            }
            for (i, p) in list.iter().enumerate() {
                let at = add(self.header.phoff, mul(to_u64(i), PHDR_SIZE)?)?;
                self.image.write(at, &p.bytes())?;
            }
            self.header.phnum = to_u64(list.len());
            self.phdrs = list;
            return self.write_header();
        }
        let vaddr = round_up(max_load_end(&list))?;
        let offset = page_align_offset(self.image.len(), vaddr)?;
        self.image.pad_to(offset)?;
        let needed = add(to_u64(list.len()), 1)?;
        let capacity = mul(add(needed, SPARE_SLOTS - 1)? / SPARE_SLOTS, SPARE_SLOTS)?;
        let size = mul(capacity, PHDR_SIZE)?;
        if let Some(p) = list.iter_mut().find(|p| p.kind == PT_PHDR) {
            *p = Phdr {
                offset,
                vaddr,
                paddr: vaddr,
                filesz: size,
                memsz: size,
                ..*p
            };
        }
        list.push(Phdr::load(PF_R, offset, vaddr, size, PAGE));
        let mut table = Vec::new();
        for p in &list {
            table.extend_from_slice(&p.bytes());
        }
        table.resize(usize::try_from(size).map_err(|_| overflow(offset))?, 0);
        self.image.append(&table)?;
        self.header.phoff = offset;
        self.header.phnum = to_u64(list.len());
        self.phdrs = list;
        self.write_header()
    }
}

pub(super) fn max_load_end(list: &[Phdr]) -> u64 {
    list.iter()
        .filter(|p| p.kind == PT_LOAD)
        .map(|p| p.vaddr.saturating_add(p.memsz))
        .max()
        .unwrap_or(0)
}

/// rocm-kpack's `conservative_zero_page` of section `index`: the bytes
/// removed.
pub(super) fn zero_page(surgery: &mut Surgery<'_>, index: usize) -> Result<u64> {
    let section = *surgery.shdrs.get(index).ok_or_else(|| overflow(0))?;
    let end = add(section.addr, section.size)?;
    let (start, stop) = (round_up(section.addr)?, round_down(end));
    if start >= stop {
        return Ok(0);
    }
    let mut size = stop.saturating_sub(start);
    if end == round_down(end) {
        // Ending on a page: one page stays, so that the segments after it
        // keep offsets of their own.
        size = size.saturating_sub(PAGE);
        if size == 0 {
            return Ok(0);
        }
    }
    let cut = add(section.offset, sub(start, section.addr)?)?;
    let (target_index, target) = surgery
        .phdr_at(section.addr)
        .filter(|(_, p)| p.kind == PT_LOAD)
        .ok_or_else(|| {
            fail(
                SplitFault::Unmapped {
                    address: section.addr,
                },
                section.offset,
            )
        })?;
    surgery.image.remove(cut, size)?;
    if surgery.header.phoff > cut {
        surgery.header.phoff = sub(surgery.header.phoff, size)?;
    }
    if surgery.header.shoff > cut {
        surgery.header.shoff = sub(surgery.header.shoff, size)?;
    }
    // The segment split around the section.
    let mut pieces = Vec::new();
    if target.vaddr < section.addr {
        let memsz = sub(section.addr, target.vaddr)?;
        pieces.push((target.vaddr, memsz, target.offset, memsz.min(target.filesz)));
    }
    if section.addr < start {
        let prefix = sub(start, section.addr)?;
        pieces.push((section.addr, prefix, section.offset, prefix));
    }
    pieces.push((start, sub(end, start)?, cut, 0));
    let target_end = add(target.vaddr, target.memsz)?;
    if end < target_end {
        let section_file_end = add(section.offset, section.size)?;
        let file_end = add(target.offset, target.filesz)?;
        if file_end > section_file_end {
            pieces.push((
                end,
                sub(target_end, end)?,
                sub(section_file_end, size)?,
                sub(file_end, section_file_end)?,
            ));
        }
    }
    let mut list = Vec::new();
    for (i, p) in surgery.phdrs.iter().enumerate() {
        if i == target_index {
            for &(vaddr, memsz, offset, filesz) in &pieces {
                list.push(Phdr {
                    kind: PT_LOAD,
                    flags: target.flags,
                    offset,
                    vaddr,
                    paddr: vaddr,
                    filesz,
                    memsz,
                    align: target.align,
                });
            }
        } else if p.offset > cut {
            list.push(Phdr {
                offset: sub(p.offset, size)?,
                ..*p
            });
        } else {
            list.push(*p);
        }
    }
    surgery.phdrs = list.clone();
    surgery.header.phnum = to_u64(list.len());
    surgery.apply_phdrs(list)?;
    for i in 0..surgery.shdrs.len() {
        let Some(s) = surgery.shdrs.get_mut(i) else {
            continue;
        };
        if i == index {
            s.kind = SHT_NOBITS;
        } else if s.offset > cut {
            s.offset = sub(s.offset, size)?;
        } else {
            continue;
        }
        surgery.write_shdr(i)?;
    }
    surgery.write_header()?;
    Ok(size)
}
