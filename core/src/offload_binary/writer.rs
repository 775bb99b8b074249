//! Writing OffloadBinaries: version 1 byte-identical to LLVM 22's packager,
//! versions 2 and 3 as upstream LLVM defines them.

use alloc::vec::Vec;

use zerocopy::IntoBytes;

use super::{
    EntryRecord, Header, HeaderV3, ImageKind, OffloadKind, StringEntryV1, StringEntryV2, ALIGNMENT,
    ENTRY_SIZE, OFFLOAD_BINARY_MAGIC,
};
use crate::bytes::{grow, reserve, to_u64};
use crate::compressed::writer::compress_stream;
use crate::compressed::CompressionMethod;
use crate::elf::strtab::StringTable;
use crate::{Error, ErrorKind, Result};

/// An image to be written, with its metadata.
#[derive(Debug, Clone, Copy)]
pub struct NewImage<'a> {
    /// What the image holds.
    pub image_kind: ImageKind,
    /// Which offload model produced it.
    pub offload_kind: OffloadKind,
    /// Entry flags.
    pub flags: u32,
    /// Key-value strings, written in this order.
    pub strings: &'a [(&'a [u8], &'a [u8])],
    /// The image bytes.
    pub image: &'a [u8],
}

/// How to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// 1 (LLVM 22: one binary per image, back to back), 2 or 3 (one binary
    /// holding every image).
    pub version: u32,
    /// Version 3 only: compress everything after the header with this method
    /// and level (`None`: upstream's default, zlib 6 or zstd 5).
    pub compression: Option<(CompressionMethod, Option<i32>)>,
}

impl WriteOptions {
    /// The level upstream LLVM compresses OffloadBinaries at by default.
    pub fn default_level(method: CompressionMethod) -> i32 {
        match method {
            CompressionMethod::Zstd => 5,
            _ => 6,
        }
    }
}

impl Default for WriteOptions {
    /// Version 1, what LLVM 22 writes and reads.
    fn default() -> Self {
        WriteOptions {
            version: 1,
            compression: None,
        }
    }
}

/// Writes `images` as OffloadBinaries.
pub fn write_offload_binary(images: &[NewImage<'_>], options: &WriteOptions) -> Result<Vec<u8>> {
    match options.version {
        1 => {
            let mut out = Vec::new();
            for image in images {
                let binary = write_one(core::slice::from_ref(image), 1)?;
                out.try_reserve(binary.len())
                    .map_err(|_| oom(to_u64(binary.len())))?;
                out.extend_from_slice(&binary);
            }
            Ok(out)
        }
        2 => write_one(images, 2),
        3 => match options.compression {
            None => write_one(images, 3),
            Some((method, level)) => {
                let level = level.unwrap_or_else(|| WriteOptions::default_level(method));
                compress(&write_one(images, 3)?, method, level)
            }
        },
        version => Err(Error::new(
            ErrorKind::UnsupportedBinaryVersion { version },
            4,
        )),
    }
}

fn oom(requested: u64) -> Error {
    Error::new(ErrorKind::OutOfMemory { requested }, 0)
}

fn overflow() -> Error {
    Error::new(ErrorKind::LayoutOverflow, 0)
}

fn add(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(overflow)
}

fn align(n: u64) -> Result<u64> {
    Ok(add(n, ALIGNMENT - 1)? & !(ALIGNMENT - 1))
}

/// A compressed version 3 binary: the header of `binary` with its size set to
/// the compressed size and the inflated size to the whole of `binary`, then
/// one stream of everything after the header, then zeros to 8 (not counted
/// in the size).
fn compress(binary: &[u8], method: CompressionMethod, level: i32) -> Result<Vec<u8>> {
    let body = binary.get(40..).unwrap_or_default();
    let stream = compress_stream(body, method, level)?;
    let size = add(40, to_u64(stream.len()))?;
    let mut out = reserve(align(size)?)?;
    out.extend_from_slice(binary.get(..40).unwrap_or_default());
    if let Some(field) = out.get_mut(8..16) {
        field.copy_from_slice(&size.to_le_bytes());
    }
    if let Some(field) = out.get_mut(32..40) {
        field.copy_from_slice(&to_u64(binary.len()).to_le_bytes());
    }
    out.extend_from_slice(&stream);
    pad_to(&mut out, align(size)?)?;
    Ok(out)
}

/// One binary holding `images`: header, entries, every entry's string
/// entries, one string table, zeros to 8, the images back to back (only the
/// first is aligned, as upstream lays them out), then zeros to 8.
fn write_one(images: &[NewImage<'_>], version: u32) -> Result<Vec<u8>> {
    for image in images {
        check_strings(image, version)?;
    }
    let all_strings = images
        .iter()
        .flat_map(|image| image.strings.iter())
        .flat_map(|(key, value)| [*key, *value]);
    let table = StringTable::build(all_strings)?;
    let header_len: u64 = if version == 3 { 40 } else { 32 };
    let string_entry_size: u64 = if version == 1 { 16 } else { 24 };
    let count = to_u64(images.len());
    let entries_end = add(
        header_len,
        count.checked_mul(ENTRY_SIZE).ok_or_else(overflow)?,
    )?;
    let total_strings = images
        .iter()
        .try_fold(0u64, |n, image| add(n, to_u64(image.strings.len())))?;
    let strings_end = add(
        entries_end,
        total_strings
            .checked_mul(string_entry_size)
            .ok_or_else(overflow)?,
    )?;
    let table_end = add(strings_end, to_u64(table.bytes().len()))?;
    let mut image_offsets = Vec::new();
    image_offsets
        .try_reserve_exact(images.len())
        .map_err(|_| oom(count))?;
    let mut end = align(table_end)?;
    for image in images {
        image_offsets.push(end);
        end = add(end, to_u64(image.image.len()))?;
    }
    let size = align(end)?;

    let mut out = reserve(size)?;
    let header = Header {
        magic: *OFFLOAD_BINARY_MAGIC,
        version: version.into(),
        size: size.into(),
        entries_offset: header_len.into(),
        entries_field: if version == 1 { ENTRY_SIZE } else { count }.into(),
    };
    if version == 3 {
        let v3 = HeaderV3 {
            common: header,
            inflated_size: 0.into(),
        };
        out.extend_from_slice(v3.as_bytes());
    } else {
        out.extend_from_slice(header.as_bytes());
    }
    let mut string_at = entries_end;
    for (image, &image_offset) in images.iter().zip(&image_offsets) {
        let record = EntryRecord {
            image_kind: image.image_kind.raw().into(),
            offload_kind: image.offload_kind.raw().into(),
            flags: image.flags.into(),
            string_offset: string_at.into(),
            num_strings: to_u64(image.strings.len()).into(),
            image_offset: image_offset.into(),
            image_size: to_u64(image.image.len()).into(),
        };
        out.extend_from_slice(record.as_bytes());
        string_at = add(
            string_at,
            to_u64(image.strings.len()).saturating_mul(string_entry_size),
        )?;
    }
    let string_offset = |s: &[u8]| strings_end.saturating_add(u64::from(table.offset(s)));
    for (key, value) in images.iter().flat_map(|image| image.strings.iter()) {
        let (key_offset, value_offset) = (string_offset(key), string_offset(value));
        if version == 1 {
            let entry = StringEntryV1 {
                key_offset: key_offset.into(),
                value_offset: value_offset.into(),
            };
            out.extend_from_slice(entry.as_bytes());
        } else {
            let entry = StringEntryV2 {
                key_offset: key_offset.into(),
                value_offset: value_offset.into(),
                value_size: to_u64(value.len()).into(),
            };
            out.extend_from_slice(entry.as_bytes());
        }
    }
    out.extend_from_slice(table.bytes());
    for (image, &at) in images.iter().zip(&image_offsets) {
        pad_to(&mut out, at)?;
        out.extend_from_slice(image.image);
    }
    pad_to(&mut out, size)?;
    Ok(out)
}

fn pad_to(out: &mut Vec<u8>, at: u64) -> Result<()> {
    let len = to_u64(out.len());
    let more = usize::try_from(at.saturating_sub(len)).map_err(|_| overflow())?;
    grow(out, more)
}

/// Keys cannot hold a NUL in any version; values cannot in version 1, where
/// the NUL ends them.
fn check_strings(image: &NewImage<'_>, version: u32) -> Result<()> {
    for (index, (key, value)) in image.strings.iter().enumerate() {
        if key.contains(&0) || (version == 1 && value.contains(&0)) {
            return Err(Error::new(ErrorKind::NulInString, 0).in_entry(to_u64(index)));
        }
    }
    Ok(())
}
