//! kpack's split of a host: its code objects planned into archives (one per
//! architecture, keyed `<kernel_name>#<n>`) and the host rewritten as
//! rocm-kpack's `kpack_offload_binary` rewrites it (ROCm/rocm-kpack
//! e348328, `elf/kpack_transform.py`), byte for byte:
//!
//! ```text
//! 1. the marker {"kpack_search_paths": [...], "kernel_name": ...} appended
//!    as section .rocm_kpack_ref (last index), the name table copied to the
//!    end with its name, the section header table written after them
//! 2. the marker copied to the next page and given its own PT_LOAD (R) at
//!    the first page after every PT_LOAD; the program header table moved
//!    to the end of the file (PT_PHDR with it) in a PT_LOAD of its own,
//!    room for a multiple of 16 headers
//! 3. each HIPF record k: magic HIPK, pointer at the marker (through the
//!    R_X86_64_RELATIVE relocation that fills it, its addend rewritten),
//!    the code object index k in its last field
//! 4. .hip_fatbin: its whole pages (less one when it ends on a page)
//!    cut from the file, the section NOBITS, its PT_LOAD split around it
//!    (a zero-fill segment in its place), every later offset moved down;
//!    the program headers rewritten in place, or moved again if they no
//!    longer fit
//! ```
//!
//! Where rocm-kpack is wrong this module does otherwise (docs/differences.md,
//! "rocm-kpack"):
//!
//! * an executable that is not position-independent (`ET_EXEC`) has no
//!   relocation to fill a record's pointer, and rocm-kpack leaves it 0 (the
//!   runtime stops: "HIPK metadata is null"); here the pointer holds the
//!   marker's address, as the `HIPF` record held its bundle's;
//! * a record of a position-independent file whose pointer no relocation
//!   fills would be left 0 there too: refused here;
//! * rocm-kpack keys code objects by a per-architecture counter, the
//!   runtime looks them up by the record's index: when translation units
//!   hold different architectures (or one twice) the two differ and the
//!   runtime gets another unit's code.
//!   [`KeyRule::Strict`](super::KeyRule::Strict) (the default) refuses such
//!   a host naming the first record and architecture that differ;
//!   [`KeyRule::Record`](super::KeyRule::Record) keys by record, as the
//!   runtime looks up; [`KeyRule::PerArch`](super::KeyRule::PerArch) is
//!   rocm-kpack's counter.
//!
//! Nothing here holds more than the host's tables, one decoded compressed
//! bundle's entry table and the rewritten host: the code objects are read
//! (and compressed bundles decoded) one bundle at a time by the caller,
//! through [`HostSplit::bundle`].

use alloc::vec::Vec;

use super::layout::{
    add, mul, overflow, page_align_offset, relocations, round_up, sub, Phdr, Rela, ET_DYN, PAGE,
    PF_R, R_X86_64_RELATIVE, SHDR_SIZE, SHF_ALLOC, SHT_NOBITS, SHT_PROGBITS,
};
use super::plan::{
    marker_bytes, plan_code_objects, HostSplit, SplitOptions, SplitUnit, MARKER_SECTION,
};
use super::surgery::{max_load_end, zero_page, Surgery};
use super::{fail, SplitFault};
use crate::bytes::to_u64;
use crate::compressed::DecompressOptions;
use crate::elf::SectionHeader;
use crate::Result;

const HIPF: u32 = 0x4849_5046;
const HIPK: u32 = 0x4B50_4948;
/// A `.hipFatBinSegment` record: magic, version, pointer, reserved.
const RECORD: u64 = 24;

/// Splits `data`, a host (x86-64 ELF shared object or executable) whose
/// `.hip_fatbin` holds one bundle per `HIPF` record of
/// `.hipFatBinSegment`: its code objects as the archives store them, and
/// the host as rocm-kpack rewrites it. `data` itself is never changed.
pub fn split_host<'data>(
    data: &'data [u8],
    options: &SplitOptions<'_>,
    decompress: &DecompressOptions,
) -> Result<HostSplit<'data>> {
    let mut surgery = Surgery::read(data)?;
    let header = surgery.header;
    let section = |surgery: &Surgery<'_>, name: &'static str| {
        surgery
            .find(name.as_bytes())
            .and_then(|i| surgery.shdrs.get(i).copied().map(|s| (i, s)))
            .ok_or_else(|| fail(SplitFault::MissingSection { name }, header.shoff))
    };
    let (fatbin_index, fatbin) = section(&surgery, ".hip_fatbin")?;
    let (_, segment) = section(&surgery, ".hipFatBinSegment")?;
    if fatbin.kind == SHT_NOBITS || surgery.find(MARKER_SECTION).is_some() {
        let at = header
            .shoff
            .saturating_add(to_u64(fatbin_index).saturating_mul(SHDR_SIZE));
        return Err(fail(SplitFault::AlreadySplit, at));
    }
    if segment.size % RECORD != 0 {
        return Err(fail(
            SplitFault::RecordSize { size: segment.size },
            segment.offset,
        ));
    }
    let count = segment.size / RECORD;

    // The records, and the bundle each points at.
    let (units, code_objects) =
        plan_code_objects(data, &fatbin, options.kernel_name, options.keys, decompress)?;
    if to_u64(units.len()) != count {
        return Err(fail(
            SplitFault::RecordCount {
                records: count,
                bundles: to_u64(units.len()),
            },
            segment.offset,
        ));
    }
    let records = Records {
        segment,
        count,
        relas: relocations(data, &surgery.shdrs)?,
        position_independent: header.kind == ET_DYN,
    };
    records.check(&surgery, &fatbin, &units)?;

    let marker = marker_bytes(options.kernel_name, options.search_paths);
    let (content_offset, marker_index) = append_marker(&mut surgery, &marker)?;
    let marker_address = load_marker(&mut surgery, &marker, content_offset, marker_index)?;
    records.rewrite(&mut surgery, &fatbin, marker_address)?;

    // Step 4: .hip_fatbin's whole pages cut.
    let removed = zero_page(&mut surgery, fatbin_index)?;
    let host = surgery.image.finish()?;
    Ok(HostSplit {
        host,
        units,
        code_objects,
        marker_address,
        marker,
        removed,
    })
}

/// Step 1: the marker section, the name table and the section headers appended:
/// the marker's offset and its section's index.
fn append_marker(surgery: &mut Surgery<'_>, marker: &[u8]) -> Result<(u64, usize)> {
    let content_offset = surgery.image.append(marker)?;
    let strndx = usize::try_from(surgery.header.shstrndx).map_err(|_| overflow(62))?;
    let strtab_shdr = *surgery.shdrs.get(strndx).ok_or_else(|| overflow(62))?;
    let name_offset = u32::try_from(strtab_shdr.size).map_err(|_| overflow(strtab_shdr.offset))?;
    let mut names_table = surgery.image.read(strtab_shdr.offset, strtab_shdr.size)?;
    names_table.extend_from_slice(MARKER_SECTION);
    names_table.push(0);
    let names_offset = surgery.image.append(&names_table)?;
    if let Some(s) = surgery.shdrs.get_mut(strndx) {
        s.offset = names_offset;
        s.size = to_u64(names_table.len());
    }
    surgery.shdrs.push(SectionHeader {
        name: name_offset,
        kind: SHT_PROGBITS,
        addralign: 1,
        offset: content_offset,
        size: to_u64(marker.len()),
        ..SectionHeader::default()
    });
    surgery.names.push(MARKER_SECTION.to_vec());
    let marker_index = surgery.shdrs.len().saturating_sub(1);
    let mut table_bytes = Vec::new();
    for s in &surgery.shdrs {
        table_bytes.extend_from_slice(&s.elf64_bytes());
    }
    surgery.header.shoff = surgery.image.append(&table_bytes)?;
    surgery.header.shnum = to_u64(surgery.shdrs.len());
    surgery.write_header()?;
    Ok((content_offset, marker_index))
}

/// Step 2: the marker in a PT_LOAD of its own (copied to the next page where its
/// offset and address differ within a page): its address.
fn load_marker(
    surgery: &mut Surgery<'_>,
    marker: &[u8],
    content_offset: u64,
    marker_index: usize,
) -> Result<u64> {
    let mut list = surgery.phdrs.clone();
    let marker_address = round_up(max_load_end(&list))?;
    let mut marker_offset = content_offset;
    if content_offset % PAGE != marker_address % PAGE {
        let aligned = page_align_offset(surgery.image.len(), marker_address)?;
        surgery.image.pad_to(aligned)?;
        marker_offset = surgery.image.append(marker)?;
    }
    list.push(Phdr::load(
        PF_R,
        marker_offset,
        marker_address,
        to_u64(marker.len()),
        PAGE,
    ));
    surgery.apply_phdrs(list)?;
    if let Some(s) = surgery.shdrs.get_mut(marker_index) {
        s.flags |= SHF_ALLOC;
        s.addr = marker_address;
        s.offset = marker_offset;
    }
    surgery.write_shdr(marker_index)?;
    Ok(marker_address)
}

/// The `.hipFatBinSegment` records and the relocations that fill their
/// pointers.
struct Records {
    segment: SectionHeader,
    count: u64,
    relas: Vec<Rela>,
    /// `ET_DYN`: each pointer is filled by a relocation, not stored.
    position_independent: bool,
}

impl Records {
    /// The address of record `k`'s pointer.
    fn pointer(&self, k: u64) -> Result<u64> {
        add(add(self.segment.addr, mul(k, RECORD)?)?, 8)
    }

    /// The first relocation at `address`.
    fn rela(&self, address: u64) -> Option<Rela> {
        self.relas.iter().find(|r| r.address == address).copied()
    }

    /// Each record is `HIPF` and points at its own unit's bundle.
    fn check(
        &self,
        surgery: &Surgery<'_>,
        fatbin: &SectionHeader,
        units: &[SplitUnit<'_>],
    ) -> Result<()> {
        let seg_offset = surgery.offset_of(self.segment.addr)?;
        for (k, unit) in units.iter().enumerate() {
            let k = to_u64(k);
            let at = add(seg_offset, mul(k, RECORD)?)?;
            let magic = surgery.image.read_u32(at)?;
            if magic == HIPK {
                return Err(fail(SplitFault::AlreadySplit, at));
            }
            if magic != HIPF {
                return Err(fail(SplitFault::RecordMagic { record: k, magic }, at));
            }
            let address = if self.position_independent {
                match self.rela(self.pointer(k)?) {
                    Some(rela) => rela.addend,
                    None => return Err(fail(SplitFault::NoRelocation { record: k }, at)),
                }
            } else {
                let bytes = surgery.image.read(add(at, 8)?, 8)?;
                <[u8; 8]>::try_from(bytes.as_slice()).map_or(0, u64::from_le_bytes)
            };
            let bundle = add(fatbin.addr, sub(unit.offset, fatbin.offset)?)?;
            if address != bundle {
                return Err(fail(
                    SplitFault::RecordTarget {
                        record: k,
                        address,
                        bundle,
                    },
                    at,
                ));
            }
        }
        Ok(())
    }

    /// Step 3: the records, HIPK, the pointer at the marker (and the relocation
    /// that fills it), the index; no other relocation may still point into
    /// `.hip_fatbin`.
    fn rewrite(
        &self,
        surgery: &mut Surgery<'_>,
        fatbin: &SectionHeader,
        marker_address: u64,
    ) -> Result<()> {
        let mut rewritten = Vec::new();
        for k in 0..self.count {
            let pointer = self.pointer(k)?;
            let at = surgery.offset_of(pointer)?;
            surgery.image.write(at, &marker_address.to_le_bytes())?;
            if self.position_independent {
                let rela = self
                    .rela(pointer)
                    .ok_or_else(|| fail(SplitFault::NoRelocation { record: k }, at))?;
                let mut entry = Vec::with_capacity(24);
                entry.extend_from_slice(&rela.address.to_le_bytes());
                entry.extend_from_slice(&R_X86_64_RELATIVE.to_le_bytes());
                entry.extend_from_slice(&marker_address.to_le_bytes());
                surgery.image.write(rela.at, &entry)?;
                rewritten.push(rela.at);
            }
        }
        let seg_offset = surgery.offset_of(self.segment.addr)?;
        for k in 0..self.count {
            let at = add(seg_offset, mul(k, RECORD)?)?;
            surgery.image.write(at, &HIPK.to_le_bytes())?;
            // rocm-kpack zeroes the pointer here; in a position-dependent
            // executable nothing fills it again, so the marker's address stays.
            let pointer = if self.position_independent {
                0
            } else {
                marker_address
            };
            surgery.image.write(add(at, 8)?, &pointer.to_le_bytes())?;
            let index = u32::try_from(k).map_err(|_| overflow(at))?;
            surgery.image.write(add(at, 16)?, &index.to_le_bytes())?;
        }
        let fatbin_end = add(fatbin.addr, fatbin.size)?;
        for rela in &self.relas {
            if rela.info & 0xffff_ffff == R_X86_64_RELATIVE
                && (fatbin.addr..fatbin_end).contains(&rela.addend)
                && !rewritten.contains(&rela.at)
            {
                return Err(fail(
                    SplitFault::StaleRelocation {
                        address: rela.address,
                        target: rela.addend,
                    },
                    rela.at,
                ));
            }
        }
        Ok(())
    }
}
