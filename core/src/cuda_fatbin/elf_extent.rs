//! A cubin's length from its own ELF headers. A stored ELF entry is padded
//! to 8 and the fat binary does not record the unpadded size; `cuobjdump`
//! writes the exact cubin, which ends at the furthest of: the file header,
//! the program and section header tables, every section's contents that
//! hold file bytes ([`crate::elf::holds_file_bytes`]: not `SHT_NOBITS`, nor
//! a cubin's memory reservations), and every segment's file image. A
//! compressed entry's decoded size is exact, and bounds the cubin.

use zerocopy::FromBytes;

use crate::bytes::{range, to_u64};
use crate::elf::{
    holds_file_bytes, FileHeader32, FileHeader64, ProgramHeader32, ProgramHeader64,
    SectionHeader32, SectionHeader64, ELF_MAGIC,
};

/// Why bytes are no cubin that can be cut from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// No ELF magic, or a class that is neither 32- nor 64-bit.
    NotElf,
    /// The headers place bytes up to `end`, past the bytes there are.
    PastEnd { end: u64 },
}

/// `data` cut to the cubin's length. `exact`: `data` is a compressed
/// entry's decoded bytes, whose declared size is the cubin's, so what the
/// headers place past it is no fault (cuobjdump writes those bytes too).
pub(crate) fn cut(data: &[u8], exact: bool) -> Result<&[u8], Fault> {
    let end = extent(data)?;
    let len = to_u64(data.len());
    if end > len && !exact {
        return Err(Fault::PastEnd { end });
    }
    usize::try_from(end.min(len))
        .ok()
        .and_then(|end| data.get(..end))
        .ok_or(Fault::NotElf)
}

/// What the cut needs of a file header, for either class.
struct Layout {
    machine: u16,
    header: u64,
    phoff: u64,
    phnum: u64,
    shoff: u64,
    shnum: u64,
    wide: bool,
}

impl Layout {
    fn read(data: &[u8]) -> Result<Self, Fault> {
        if !data.starts_with(ELF_MAGIC) {
            return Err(Fault::NotElf);
        }
        let past = Fault::PastEnd {
            end: to_u64(core::mem::size_of::<FileHeader64>()),
        };
        match data.get(4) {
            Some(2) => {
                let (h, _) = FileHeader64::ref_from_prefix(data).map_err(|_| past)?;
                Ok(Layout {
                    machine: h.e_machine.get(),
                    header: to_u64(core::mem::size_of::<FileHeader64>()),
                    phoff: h.e_phoff.get(),
                    phnum: h.e_phnum.get().into(),
                    shoff: h.e_shoff.get(),
                    shnum: h.e_shnum.get().into(),
                    wide: true,
                })
            }
            Some(1) => {
                let (h, _) = FileHeader32::ref_from_prefix(data).map_err(|_| past)?;
                Ok(Layout {
                    machine: h.e_machine.get(),
                    header: to_u64(core::mem::size_of::<FileHeader32>()),
                    phoff: h.e_phoff.get().into(),
                    phnum: h.e_phnum.get().into(),
                    shoff: h.e_shoff.get().into(),
                    shnum: h.e_shnum.get().into(),
                    wide: false,
                })
            }
            _ => Err(Fault::NotElf),
        }
    }

    fn sizes(&self) -> (u64, u64) {
        if self.wide {
            (56, 64)
        } else {
            (32, 40)
        }
    }

    /// Section `i`'s type, offset and size, if its header is in `data`.
    fn section(&self, data: &[u8], i: u64) -> Option<(u32, u64, u64)> {
        let bytes = entry(data, self.shoff, i, self.sizes().1)?;
        if self.wide {
            let (s, _) = SectionHeader64::ref_from_prefix(bytes).ok()?;
            Some((s.sh_type.get(), s.sh_offset.get(), s.sh_size.get()))
        } else {
            let (s, _) = SectionHeader32::ref_from_prefix(bytes).ok()?;
            let (offset, size) = (s.sh_offset.get().into(), s.sh_size.get().into());
            Some((s.sh_type.get(), offset, size))
        }
    }

    /// Segment `i`'s file offset and size, if its header is in `data`.
    fn segment(&self, data: &[u8], i: u64) -> Option<(u64, u64)> {
        let bytes = entry(data, self.phoff, i, self.sizes().0)?;
        if self.wide {
            let (p, _) = ProgramHeader64::ref_from_prefix(bytes).ok()?;
            Some((p.p_offset.get(), p.p_filesz.get()))
        } else {
            let (p, _) = ProgramHeader32::ref_from_prefix(bytes).ok()?;
            Some((p.p_offset.get().into(), p.p_filesz.get().into()))
        }
    }
}

/// The end of the furthest thing the headers place (saturating: an end
/// that overflows is past any data). Headers outside `data` place their
/// table's end, which is past it.
fn extent(data: &[u8]) -> Result<u64, Fault> {
    let l = Layout::read(data)?;
    let (phsize, shsize) = l.sizes();
    let table_end =
        |offset: u64, count: u64, size: u64| offset.saturating_add(count.saturating_mul(size));
    let mut end = l
        .header
        .max(table_end(l.phoff, l.phnum, phsize))
        .max(table_end(l.shoff, l.shnum, shsize));
    for i in 0..l.shnum {
        match l.section(data, i) {
            Some((kind, offset, size)) if holds_file_bytes(l.machine, kind) => {
                end = end.max(offset.saturating_add(size));
            }
            Some(_) => {}
            None => break,
        }
    }
    for i in 0..l.phnum {
        let Some((offset, size)) = l.segment(data, i) else {
            break;
        };
        end = end.max(offset.saturating_add(size));
    }
    Ok(end)
}

/// Entry `index` of the table at `offset`, each `size` bytes.
fn entry(data: &[u8], offset: u64, index: u64, size: u64) -> Option<&[u8]> {
    let at = offset.checked_add(index.checked_mul(size)?)?;
    range(data, at, size)
}
