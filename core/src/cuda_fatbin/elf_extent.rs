//! A cubin's length from its own ELF headers. A stored ELF entry is padded
//! to 8 and the fat binary does not record the unpadded size; `cuobjdump`
//! writes the exact cubin, which ends at the furthest of: the file header,
//! the program and section header tables, every section's contents but
//! `SHT_NOBITS`, and every segment's file image.

use zerocopy::FromBytes;

use crate::bytes::to_u64;
use crate::elf::{
    FileHeader32, FileHeader64, ProgramHeader32, ProgramHeader64, SectionHeader32, SectionHeader64,
    ELF_MAGIC, SHT_NOBITS,
};

/// `data` cut to the cubin's length; `None` when its headers do not give a
/// length inside it (not an ELF, or damaged), which cuobjdump refuses.
pub(crate) fn cut(data: &[u8]) -> Option<&[u8]> {
    extent(data)
        .and_then(|end| usize::try_from(end).ok())
        .and_then(|end| data.get(..end))
}

/// The end of the furthest thing the headers place, if it is in `data`.
pub(crate) fn extent(data: &[u8]) -> Option<u64> {
    if !data.starts_with(ELF_MAGIC) {
        return None;
    }
    let end = match data.get(4)? {
        2 => extent64(data)?,
        1 => extent32(data)?,
        _ => return None,
    };
    (end <= to_u64(data.len())).then_some(end)
}

/// The end of table `index` entries of `size` bytes at `offset`.
fn table_end(offset: u64, count: u64, size: u64) -> Option<u64> {
    offset.checked_add(count.checked_mul(size)?)
}

/// Entry `index` of the table at `offset`, each `size` bytes.
fn entry(data: &[u8], offset: u64, index: u64, size: u64) -> Option<&[u8]> {
    let at = offset.checked_add(index.checked_mul(size)?)?;
    crate::bytes::range(data, at, size)
}

fn extent64(data: &[u8]) -> Option<u64> {
    let (h, _) = FileHeader64::ref_from_prefix(data).ok()?;
    let (phoff, phnum, phsize) = (h.e_phoff.get(), u64::from(h.e_phnum.get()), 56);
    let (shoff, shnum, shsize) = (h.e_shoff.get(), u64::from(h.e_shnum.get()), 64);
    let mut end = to_u64(core::mem::size_of::<FileHeader64>())
        .max(table_end(phoff, phnum, phsize)?)
        .max(table_end(shoff, shnum, shsize)?);
    for i in 0..shnum {
        let (s, _) = SectionHeader64::ref_from_prefix(entry(data, shoff, i, shsize)?).ok()?;
        if s.sh_type.get() != SHT_NOBITS {
            end = end.max(s.sh_offset.get().checked_add(s.sh_size.get())?);
        }
    }
    for i in 0..phnum {
        let (p, _) = ProgramHeader64::ref_from_prefix(entry(data, phoff, i, phsize)?).ok()?;
        end = end.max(p.p_offset.get().checked_add(p.p_filesz.get())?);
    }
    Some(end)
}

fn extent32(data: &[u8]) -> Option<u64> {
    let (h, _) = FileHeader32::ref_from_prefix(data).ok()?;
    let (phoff, phnum, phsize) = (u64::from(h.e_phoff.get()), u64::from(h.e_phnum.get()), 32);
    let (shoff, shnum, shsize) = (u64::from(h.e_shoff.get()), u64::from(h.e_shnum.get()), 40);
    let mut end = to_u64(core::mem::size_of::<FileHeader32>())
        .max(table_end(phoff, phnum, phsize)?)
        .max(table_end(shoff, shnum, shsize)?);
    for i in 0..shnum {
        let (s, _) = SectionHeader32::ref_from_prefix(entry(data, shoff, i, shsize)?).ok()?;
        if s.sh_type.get() != SHT_NOBITS {
            let (offset, size) = (u64::from(s.sh_offset.get()), u64::from(s.sh_size.get()));
            end = end.max(offset.checked_add(size)?);
        }
    }
    for i in 0..phnum {
        let (p, _) = ProgramHeader32::ref_from_prefix(entry(data, phoff, i, phsize)?).ok()?;
        let (offset, size) = (u64::from(p.p_offset.get()), u64::from(p.p_filesz.get()));
        end = end.max(offset.checked_add(size)?);
    }
    Some(end)
}
