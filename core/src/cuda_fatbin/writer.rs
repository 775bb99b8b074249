//! Writing fat binaries as NVIDIA's `fatbinary` 13.5 does, stored or
//! compressed, and pruning existing ones to some SMs.
//!
//! The layout `fatbinary` gives each entry, read off its output
//! (tests/fixtures/cuda, `raw-*.fatbin`) and reproduced byte for byte:
//!
//! - flags: 0x1 (64-bit; not with `-32`) | 0x10 (Linux host) | 0x2 for debug
//!   code | 0x100000 / 0x200000 for `a` / `f` code | 0x1000000 when the
//!   entry carries the binary options blob | 0x2000 (LZ4) or 0x8000 (zstd)
//!   when compressed;
//! - code version: an ELF's `e_ident[EI_VERSION]`.`e_ident[EI_ABIVERSION]`
//!   (1.8 from ptxas 13.5), PTX's `.version` directive;
//! - extension after the 64 fixed bytes, each item NUL-terminated and padded
//!   to 8: the identifier; then, for PTX always (cuobjdump refuses PTX
//!   without it), the options record and the options text; for an ELF for
//!   sm_100 and above that has a `.nv.compat` section, the record and the
//!   blob: a zero byte, then the section's bytes, the record's length being
//!   the section's (so the record's range starts with the zero byte and
//!   leaves the section's last byte just after it);
//! - payload: the cubin, or the PTX and its NUL, zero-padded to 8; when
//!   compressed, the compressed bytes zero-padded to 8, with their exact
//!   length in the compressed size and the image's (PTX: with its NUL) in
//!   the uncompressed size.
//!
//! Which entries `fatbinary` compresses ([`WriteOptions`]): none with
//! `--compress=false` or `--compress-mode=none`; otherwise PTX always (even
//! when that makes it longer), and cubins with `--compress-all`, `-c`
//! (relocatable code), `-g` (debug code) or `--compress-mode=size`. How:
//! zstd level 5 (no checksum, content size recorded; modes `default` and
//! `balance`), LZ4 as the reference library's high-compression level 3
//! (mode `speed`; see `lz4hc.rs`), zstd at its maximum level for `size`.
//! Stored, `default`/`balance` and `speed` entries are byte-identical to
//! `fatbinary`'s; for `size` NVIDIA's zstd parameters are not known (no
//! level of libzstd 1.5.4 gives its bytes), so those entries only decode to
//! the same images.
//!
//! `fatbinary` also rewrites the PTX it is given (comments and some white
//! space removed, `ptx.rs`); so does this writer when
//! [`WriteOptions::rewrite_ptx`] is set, as it is by default.

use alloc::vec::Vec;

use super::{
    fatbins, lz4hc, ptx, Compression, EntryHeader, EntryKind, Fatbin, FatbinEntry, FatbinHeader,
    OptionsRecord, Sm, SmVariant, ENTRY_HEADER_SIZE, FATBIN_HEADER_SIZE, FATBIN_MAGIC, FLAG_64BIT,
    FLAG_ARCH_SPECIFIC, FLAG_BINARY_OPTIONS, FLAG_DEBUG, FLAG_FAMILY_SPECIFIC, FLAG_HOST_LINUX,
    FLAG_LZ4, FLAG_ZSTD,
};
use crate::bytes::{extend, grow, reserve, to_u64};
use crate::compressed::writer::zstd_frame;
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

/// `fatbinary`'s `--compress-mode`: how the entries it compresses are
/// compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressMode {
    /// `default`: zstd level 5.
    Default,
    /// `balance`: the same as `default` in `fatbinary` 13.5.
    Balance,
    /// `speed`: LZ4 (high-compression level 3).
    Speed,
    /// `size`: zstd at its maximum level, and cubins compressed too.
    Size,
    /// `none`: nothing compressed.
    None,
}

impl CompressMode {
    /// The mode a `--compress-mode` value names.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "default" => CompressMode::Default,
            "balance" => CompressMode::Balance,
            "speed" => CompressMode::Speed,
            "size" => CompressMode::Size,
            "none" => CompressMode::None,
            _ => return None,
        })
    }
}

/// How to write a fat binary: `fatbinary`'s options that change its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// `--compress` (true by default): compress PTX and debug code.
    pub compress: bool,
    /// `--compress-all`: compress cubins too.
    pub compress_all: bool,
    /// `--compress-mode`.
    pub mode: CompressMode,
    /// `-c` (`--device-c`): relocatable code, whose cubins are compressed.
    pub relocatable: bool,
    /// `-64` (true) or `-32`: whether entries are flagged 64-bit.
    pub bits64: bool,
    /// Store PTX as `fatbinary` rewrites it (`ptx.rs`), not as given.
    pub rewrite_ptx: bool,
}

impl WriteOptions {
    /// Every entry stored as given: `fatbinary -64 --compress-mode=none`
    /// with PTX kept as it is.
    pub const STORED: WriteOptions = WriteOptions {
        compress: false,
        compress_all: false,
        mode: CompressMode::None,
        relocatable: false,
        bits64: true,
        rewrite_ptx: false,
    };

    /// What `fatbinary -64` does with no other option.
    pub const FATBINARY: WriteOptions = WriteOptions {
        compress: true,
        compress_all: false,
        mode: CompressMode::Default,
        relocatable: false,
        bits64: true,
        rewrite_ptx: true,
    };

    /// How `entry` is compressed under these options.
    pub fn compression(&self, entry: &NewEntry<'_>) -> Compression {
        if !self.compress || self.mode == CompressMode::None {
            return Compression::None;
        }
        let compressed = entry.kind == EntryKind::Ptx
            || entry.debug
            || self.compress_all
            || self.relocatable
            || self.mode == CompressMode::Size;
        match (compressed, self.mode) {
            (false, _) => Compression::None,
            (true, CompressMode::Speed) => Compression::Lz4,
            (true, _) => Compression::Zstd,
        }
    }
}

impl Default for WriteOptions {
    /// [`WriteOptions::FATBINARY`].
    fn default() -> Self {
        WriteOptions::FATBINARY
    }
}

/// The zstd level of `fatbinary`'s modes `default` and `balance`.
const ZSTD_LEVEL: i32 = 5;
/// The zstd level used for mode `size` (libzstd's maximum).
const ZSTD_SIZE_LEVEL: i32 = 22;

/// `image` compressed as `how` says: LZ4, or a zstd frame without
/// long-distance matching.
fn compress(image: &[u8], how: Compression, mode: CompressMode) -> Result<Vec<u8>> {
    match how {
        Compression::Lz4 => lz4hc::compress(image),
        _ => {
            let level = if mode == CompressMode::Size {
                ZSTD_SIZE_LEVEL
            } else {
                ZSTD_LEVEL
            };
            zstd_frame(image, level, false, 0)
        }
    }
}

/// Pads `n` up to a multiple of 8.
fn pad8(n: u64) -> Option<u64> {
    n.checked_add(7).map(|n| n & !7)
}

pub(crate) fn layout_overflow() -> Error {
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

/// Appends one entry to `out`, stored or compressed as `options` say.
fn write_entry(out: &mut Vec<u8>, entry: &NewEntry<'_>, options: &WriteOptions) -> Result<()> {
    let rewritten;
    let mut entry = *entry;
    if entry.kind == EntryKind::Ptx && options.rewrite_ptx {
        rewritten = ptx::as_fatbinary_stores(entry.data)?;
        entry.data = &rewritten;
    }
    let (ext, identifier_offset, options_offset, ext_flags) = extension(&entry)?;
    // The image: a cubin as it is, PTX with its NUL.
    let nul: &[u8] = if entry.kind == EntryKind::Ptx {
        &[0]
    } else {
        &[]
    };
    let how = options.compression(&entry);
    let (payload, compressed_size, uncompressed_size, method_flag) = match how {
        Compression::None => (None, 0, 0, 0),
        _ => {
            let mut image = reserve(to_u64(entry.data.len()).saturating_add(1))?;
            extend(&mut image, entry.data)?;
            extend(&mut image, nul)?;
            let packed = compress(&image, how, options.mode)?;
            let flag = if how == Compression::Lz4 {
                FLAG_LZ4
            } else {
                FLAG_ZSTD
            };
            let size = u32::try_from(packed.len()).map_err(|_| layout_overflow())?;
            (Some(packed), size, to_u64(image.len()), flag)
        }
    };
    let written = payload.as_deref().unwrap_or(entry.data);
    let stored = match payload {
        Some(_) => Some(to_u64(written.len())),
        None => to_u64(written.len()).checked_add(to_u64(nul.len())),
    };
    let payload_size = stored.and_then(pad8).ok_or_else(layout_overflow)?;
    let header_size = to_u64(ext.len()).saturating_add(ENTRY_HEADER_SIZE);
    let (major, minor) = code_version(&entry);
    let mut flags = FLAG_HOST_LINUX | variant_flags(entry.sm) | ext_flags | method_flag;
    if options.bits64 {
        flags |= FLAG_64BIT;
    }
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
        compressed_size: compressed_size.into(),
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
        uncompressed_size: uncompressed_size.into(),
    };
    extend(out, header.as_bytes())?;
    extend(out, &ext)?;
    extend(out, written)?;
    let padding = payload_size.saturating_sub(to_u64(written.len()));
    grow(
        out,
        usize::try_from(padding).map_err(|_| layout_overflow())?,
    )
}

/// A fat binary holding `entries`, in the order given, laid out as
/// `fatbinary` lays them out with the options `options` stands for
/// ([`WriteOptions::STORED`]: every entry stored as given).
pub fn write_fatbin(entries: &[NewEntry<'_>], options: &WriteOptions) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    for entry in entries {
        write_entry(&mut body, entry, options)?;
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

/// The fat binaries back to back in `data` (zero bytes between them
/// skipped), each pruned as [`prune`] does, written back to back: what
/// `nvprune` makes of a `.fatbin` file.
pub fn prune_fatbins(
    data: &[u8],
    keep: &dyn Fn(EntryKind, Sm) -> bool,
    options: &DecompressOptions,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for found in fatbins(data) {
        let (_, fatbin) = found?;
        match prune(&fatbin, keep, options)? {
            Some(pruned) => extend(&mut out, &pruned)?,
            None => extend(&mut out, fatbin.data())?,
        }
    }
    Ok(out)
}
