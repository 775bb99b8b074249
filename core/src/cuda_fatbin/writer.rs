//! Writing fat binaries as NVIDIA's `fatbinary` 13.5 does for stored
//! (uncompressed) entries, and pruning existing ones to some SMs.
//!
//! The layout `fatbinary` gives each entry, read off its output
//! (tests/fixtures/cuda, `raw-*.fatbin`) and reproduced byte for byte:
//!
//! - flags: 0x1 (64-bit) | 0x10 (Linux host) | 0x2 for debug code |
//!   0x100000 / 0x200000 for `a` / `f` code | 0x1000000 when the entry
//!   carries the binary options blob;
//! - code version: an ELF's `e_ident[EI_VERSION]`.`e_ident[EI_ABIVERSION]`
//!   (1.8 from ptxas 13.5), PTX's `.version` directive;
//! - extension after the 64 fixed bytes, each item NUL-terminated and padded
//!   to 8: the identifier; then, for PTX always (cuobjdump refuses PTX
//!   without it), the options record and the options text; for an ELF for
//!   sm_100 and above that has a `.nv.compat` section, the record and the
//!   blob: a zero byte, then the section's bytes, the record's length being
//!   the section's (so the record's range starts with the zero byte and
//!   leaves the section's last byte just after it);
//! - payload: the cubin, or the PTX and its NUL, zero-padded to 8.
//!
//! `fatbinary` also rewrites the PTX it is given (comments and indentation
//! removed); this writer stores PTX as given, so its output is identical
//! for PTX already in that form (e.g. PTX taken from a fat binary).

use alloc::vec::Vec;

use super::{
    fatbins, EntryHeader, EntryKind, Fatbin, FatbinEntry, FatbinHeader, OptionsRecord, Sm,
    SmVariant, ENTRY_HEADER_SIZE, FATBIN_HEADER_SIZE, FATBIN_MAGIC, FLAG_64BIT, FLAG_ARCH_SPECIFIC,
    FLAG_BINARY_OPTIONS, FLAG_DEBUG, FLAG_FAMILY_SPECIFIC, FLAG_HOST_LINUX, FLAG_LZ4, FLAG_ZSTD,
};
use crate::bytes::{extend, grow, reserve, to_u64};
use crate::compressed::DecompressOptions;
use crate::elf::ElfFile;
use crate::{Error, ErrorKind, Result};
use zerocopy::{FromBytes, IntoBytes};

/// One image to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewEntry<'a> {
    /// ELF (a cubin) or PTX; other kinds are stored with code version 0.0.
    pub kind: EntryKind,
    /// The SM and its variant.
    pub sm: Sm,
    /// The cubin or PTX text (without a NUL).
    pub data: &'a [u8],
    /// `--ident`: stored in the header, and names what cuobjdump extracts.
    pub identifier: Option<&'a [u8]>,
    /// PTX: ptxas options (`--cmdline`).
    pub options: Option<&'a [u8]>,
    /// Debug code (`-g`).
    pub debug: bool,
}

/// Pads `n` up to a multiple of 8.
fn pad8(n: u64) -> Option<u64> {
    n.checked_add(7).map(|n| n & !7)
}

fn layout_overflow() -> Error {
    Error::new(ErrorKind::LayoutOverflow, 0)
}

/// The `.nv.compat` section of a cubin for sm_100 and above, which
/// `fatbinary` copies into the header.
fn compat_blob<'a>(entry: &NewEntry<'a>) -> Option<&'a [u8]> {
    if entry.kind != EntryKind::Elf || entry.sm.number < 100 {
        return None;
    }
    let elf = ElfFile::parse(entry.data).ok()?;
    Some(elf.section_by_name(b".nv.compat")?.data())
}

/// The code version `fatbinary` records.
fn code_version(entry: &NewEntry<'_>) -> (u16, u16) {
    match entry.kind {
        EntryKind::Elf => {
            let byte = |i: usize| entry.data.get(i).copied().map_or(0, u16::from);
            (byte(6), byte(8))
        }
        EntryKind::Ptx => ptx_version(entry.data).unwrap_or((0, 0)),
        _ => (0, 0),
    }
}

/// `.version X.Y` in PTX text.
fn ptx_version(ptx: &[u8]) -> Option<(u16, u16)> {
    let at = memchr::memmem::find(ptx, b".version")?;
    let rest = ptx.get(at.checked_add(8)?..)?;
    let text = core::str::from_utf8(rest.get(..rest.iter().position(|&b| b == b'\n')?)?).ok()?;
    let (major, minor) = text.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Writes `bytes` NUL-terminated and padded to 8 at the end of `ext`.
fn push_padded(ext: &mut Vec<u8>, bytes: &[u8]) -> Result<()> {
    extend(ext, bytes)?;
    extend(ext, &[0])?;
    pad(ext)
}

/// Zero-pads `ext` to a multiple of 8 (it starts 8-aligned, at 0x40).
fn pad(ext: &mut Vec<u8>) -> Result<()> {
    let end = pad8(to_u64(ext.len())).ok_or_else(layout_overflow)?;
    let more =
        usize::try_from(end.saturating_sub(to_u64(ext.len()))).map_err(|_| layout_overflow())?;
    grow(ext, more)
}

/// The header extension (bytes after the 64 fixed ones) and the fields it
/// sets: (extension, identifier offset, options offset, flags it adds).
fn extension(entry: &NewEntry<'_>) -> Result<(Vec<u8>, u32, u32, u64)> {
    let mut ext = Vec::new();
    let here = |ext: &Vec<u8>| {
        u32::try_from(to_u64(ext.len()).saturating_add(ENTRY_HEADER_SIZE))
            .map_err(|_| layout_overflow())
    };
    let mut identifier_offset = 0;
    if let Some(identifier) = entry.identifier {
        identifier_offset = here(&ext)?;
        push_padded(&mut ext, identifier)?;
    }
    let blob = compat_blob(entry);
    let (mut options_offset, mut flags) = (0, 0);
    if entry.kind == EntryKind::Ptx || blob.is_some() {
        options_offset = here(&ext)?;
        let (text, len): (&[u8], usize) = match blob {
            Some(blob) => (blob, blob.len()),
            None => {
                let text = entry.options.unwrap_or_default();
                (text, text.len())
            }
        };
        let record = OptionsRecord {
            offset: options_offset.saturating_add(8).into(),
            length: u32::try_from(len).map_err(|_| layout_overflow())?.into(),
        };
        extend(&mut ext, record.as_bytes())?;
        if blob.is_some() {
            // The zero byte comes first, not last, as fatbinary has it.
            flags |= FLAG_BINARY_OPTIONS;
            extend(&mut ext, &[0])?;
            extend(&mut ext, text)?;
            pad(&mut ext)?;
        } else {
            push_padded(&mut ext, text)?;
        }
    }
    Ok((ext, identifier_offset, options_offset, flags))
}

fn variant_flags(sm: Sm) -> u64 {
    match sm.variant {
        SmVariant::Plain => 0,
        SmVariant::Arch => FLAG_ARCH_SPECIFIC,
        SmVariant::Family => FLAG_FAMILY_SPECIFIC,
    }
}

/// Appends one stored entry to `out`.
fn write_entry(out: &mut Vec<u8>, entry: &NewEntry<'_>) -> Result<()> {
    let (ext, identifier_offset, options_offset, ext_flags) = extension(entry)?;
    let stored = match entry.kind {
        EntryKind::Ptx => to_u64(entry.data.len()).checked_add(1),
        _ => Some(to_u64(entry.data.len())),
    };
    let payload_size = stored.and_then(pad8).ok_or_else(layout_overflow)?;
    let header_size = to_u64(ext.len()).saturating_add(ENTRY_HEADER_SIZE);
    let (major, minor) = code_version(entry);
    let mut flags = FLAG_64BIT | FLAG_HOST_LINUX | variant_flags(entry.sm) | ext_flags;
    if entry.debug {
        flags |= FLAG_DEBUG;
    }
    let identifier_length = entry.identifier.map_or(0, <[u8]>::len);
    let header = EntryHeader {
        kind: entry.kind.raw().into(),
        version: 0x0101.into(),
        header_size: u32::try_from(header_size)
            .map_err(|_| layout_overflow())?
            .into(),
        payload_size: payload_size.into(),
        compressed_size: 0.into(),
        options_offset: options_offset.into(),
        minor: minor.into(),
        major: major.into(),
        arch: entry.sm.number.into(),
        identifier_offset: identifier_offset.into(),
        identifier_length: u32::try_from(identifier_length)
            .map_err(|_| layout_overflow())?
            .into(),
        flags: flags.into(),
        reserved: 0.into(),
        uncompressed_size: 0.into(),
    };
    extend(out, header.as_bytes())?;
    extend(out, &ext)?;
    extend(out, entry.data)?;
    let padding = payload_size.saturating_sub(to_u64(entry.data.len()));
    grow(
        out,
        usize::try_from(padding).map_err(|_| layout_overflow())?,
    )
}

/// A fat binary holding `entries`, stored, in the order given, laid out as
/// `fatbinary -64 --compress-mode=none` lays them out.
pub fn write_fatbin(entries: &[NewEntry<'_>]) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    for entry in entries {
        write_entry(&mut body, entry)?;
    }
    wrap(&body)
}

/// The fat binary header followed by `body` (its entries).
fn wrap(body: &[u8]) -> Result<Vec<u8>> {
    let header = FatbinHeader {
        magic: FATBIN_MAGIC.into(),
        version: 1.into(),
        header_size: 16.into(),
        fat_size: to_u64(body.len()).into(),
    };
    let mut out = reserve(FATBIN_HEADER_SIZE.saturating_add(to_u64(body.len())))?;
    extend(&mut out, header.as_bytes())?;
    extend(&mut out, body)?;
    Ok(out)
}

/// `fatbin` with only the code `keep` accepts: entries copied byte for byte
/// (compressed ones stay compressed); a `--concat` entry kept whole when
/// `keep` accepts all its members, dropped when it accepts none, and
/// otherwise replaced by stored entries for the members it accepts (each
/// with its own header from the member table). Entries of kinds other than
/// ELF and PTX (LTO-IR, unknown) are kept. Returns `None` when nothing would
/// change.
pub fn prune(
    fatbin: &Fatbin<'_>,
    keep: &dyn Fn(EntryKind, Sm) -> bool,
    options: &DecompressOptions,
) -> Result<Option<Vec<u8>>> {
    let mut body = Vec::new();
    let mut changed = false;
    for entry in fatbin.entries() {
        changed |= prune_entry(&mut body, &entry, keep, options)?;
    }
    if !changed {
        return Ok(None);
    }
    wrap(&body).map(Some)
}

/// Appends what is kept of `entry` to `body`; whether that changed it.
fn prune_entry(
    body: &mut Vec<u8>,
    entry: &FatbinEntry<'_>,
    keep: &dyn Fn(EntryKind, Sm) -> bool,
    options: &DecompressOptions,
) -> Result<bool> {
    let whole = |body: &mut Vec<u8>| -> Result<bool> {
        extend(body, entry.header_bytes())?;
        extend(body, entry.payload())?;
        Ok(false)
    };
    match entry.kind() {
        EntryKind::Elf | EntryKind::Ptx if keep(entry.kind(), entry.sm()) => whole(body),
        EntryKind::Elf | EntryKind::Ptx => Ok(true),
        EntryKind::Concat => {
            let kept = entry.members().filter(|m| keep(m.kind(), m.sm())).count();
            let total = entry.members().count();
            if kept == total {
                return whole(body);
            }
            if kept > 0 {
                let decoded = entry.decompress(options)?;
                for member in entry.members().filter(|m| keep(m.kind(), m.sm())) {
                    let data = member.data(&decoded).unwrap_or_default();
                    write_member(body, member.header_bytes, data)?;
                }
            }
            Ok(true)
        }
        _ => whole(body),
    }
}

/// A concat member as a stored entry: its header with the header size
/// where the member table kept its offset, and no compression.
fn write_member(body: &mut Vec<u8>, header_bytes: &[u8], data: &[u8]) -> Result<()> {
    let start = body.len();
    extend(body, header_bytes)?;
    let header_size = u32::try_from(header_bytes.len()).map_err(|_| layout_overflow())?;
    let fixed = body
        .get_mut(start..)
        .and_then(|h| EntryHeader::mut_from_prefix(h).ok())
        .ok_or_else(layout_overflow)?
        .0;
    fixed.header_size = header_size.into();
    fixed.payload_size = to_u64(data.len()).into();
    fixed.compressed_size = 0.into();
    fixed.uncompressed_size = 0.into();
    fixed.flags = (fixed.flags.get() & !(FLAG_LZ4 | FLAG_ZSTD)).into();
    extend(body, data)
}

/// Prunes every fat binary in a section's contents (a host's `.nv_fatbin`)
/// in place: each keeps its offset, so that the wrapper records pointing
/// at it stay right, and the bytes it no longer needs become zeros, which
/// readers (cuobjdump, this crate) skip. Returns how many fat binaries
/// changed. A fat binary that would grow (a partly kept `--concat` entry
/// stored) does not fit: [`ErrorKind::LayoutOverflow`], and `section` is left
/// as it was.
pub fn prune_in_place(
    section: &mut [u8],
    keep: &dyn Fn(EntryKind, Sm) -> bool,
    options: &DecompressOptions,
) -> Result<usize> {
    let mut plan = Vec::new();
    for found in fatbins(section) {
        let (offset, fatbin) = found?;
        if let Some(pruned) = prune(&fatbin, keep, options)? {
            if pruned.len() > fatbin.data().len() {
                return Err(Error::new(ErrorKind::LayoutOverflow, offset));
            }
            plan.push((offset, fatbin.data().len(), pruned));
        }
    }
    for (offset, len, pruned) in &plan {
        let start = usize::try_from(*offset).map_err(|_| layout_overflow())?;
        let span = start
            .checked_add(*len)
            .and_then(|end| section.get_mut(start..end))
            .ok_or_else(layout_overflow)?;
        span.fill(0);
        span.get_mut(..pruned.len())
            .ok_or_else(layout_overflow)?
            .copy_from_slice(pruned);
    }
    Ok(plan.len())
}
