//! What `list`, `extract` and `inspect` show of NVIDIA CUDA fat binaries
//! (`.nv_fatbin`, `__nv_relfatbin`, raw `.fatbin` files, OffloadBinary
//! `fatbinary` images). The library finds them, reads every header and
//! names the images as `cuobjdump -xelf all -xptx all` does; this file
//! prints and writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::Failure;
use crate::ffi::c;
use crate::ffi::cuda::{CudaEntry, CudaFatbin, CudaFatbins};
use crate::io::Input;

/// The fat binaries of a file, if it has any (or a damaged one).
pub fn read<'data>(file: &str, data: &'data [u8]) -> Result<Option<CudaFatbins<'data>>, Failure> {
    let found = CudaFatbins::parse(data, file).map_err(|e| Failure(format!("'{file}': {e}")))?;
    let any = !found.fatbins().is_empty() || found.fault().is_some();
    Ok(any.then_some(found))
}

/// One line per image: the name cuobjdump extracts it to, or for kinds it
/// does not extract, the kind and SM (a `--concat` entry shows as its
/// members).
pub fn list_lines(found: &CudaFatbins<'_>) -> Vec<String> {
    let members = members(found);
    found
        .entries()
        .iter()
        .filter(|e| !e.is_concat())
        .map(|e| {
            let line = if e.name.is_empty() {
                format!("({} {}, not extracted by cuobjdump)", e.kind_name, e.sm)
            } else {
                String::from_utf8_lossy(e.name).into_owned()
            };
            // An archive member's entries carry its name, as its bundles' IDs do.
            match members.get(e.record.fatbin).and_then(Option::as_ref) {
                Some(member) => format!("{member}: {line}"),
                None => line,
            }
        })
        .collect()
}

/// Each fat binary's archive member name (`None` outside archives).
fn members(found: &CudaFatbins<'_>) -> Vec<Option<String>> {
    (0..found.fatbins().len())
        .map(|index| member_name(found, index))
        .collect()
}

/// The archive member fat binary `index` is in, if any.
fn member_name(found: &CudaFatbins<'_>, index: usize) -> Option<String> {
    let member = found.member(index);
    (!member.is_empty()).then(|| String::from_utf8_lossy(member).into_owned())
}

/// One image `extract` was asked to write: its path, and why it was not
/// written (located in the file), if it was not.
pub struct Extracted {
    pub path: PathBuf,
    pub error: Option<String>,
}

/// Writes every ELF and PTX image into `dir` under cuobjdump's names, on
/// `threads` threads (each takes the next image in file order, so a slow
/// or failing one holds up no other); returns every image in file order,
/// with its error if it was not written. Every image is tried, whatever
/// fails, so what is written does not depend on `threads`. An existing
/// file is an error before anything is written unless `force`. Each
/// entry's pages of `input` are let go once its image is written: memory
/// holds the images in flight, not the file.
pub fn extract(
    found: &CudaFatbins<'_>,
    input: &Input,
    dir: &Path,
    force: bool,
    max_size: u64,
    threads: usize,
) -> Result<Vec<Extracted>, Failure> {
    let entries = found.entries();
    // (entry, path, the payload it is read from)
    let outputs: Vec<(usize, PathBuf, &[u8])> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let path = dir.join(String::from_utf8_lossy(e.name).as_ref());
            (!e.name.is_empty()).then_some((i, path, e.payload))
        })
        .collect();
    if !force {
        if let Some((_, taken, _)) = outputs
            .iter()
            .find(|(_, p, _)| p.symlink_metadata().is_ok())
        {
            return Err(Failure(format!(
                "'{}': file exists; nothing was written (--force overwrites)",
                taken.display()
            )));
        }
    }
    let write = |(index, path, payload): &(usize, PathBuf, &[u8])| -> Result<(), String> {
        let image = found
            .image(*index, max_size)
            .map_err(|e| located(found, *index, &e))?;
        input.release_part(payload);
        std::fs::write(path, image.bytes())
            .map_err(|e| format!("'{}': {}", path.display(), crate::io::os_message(&e)))
    };
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Result<(), String>>> = outputs.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, outputs.len().max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(output) = outputs.get(at) else {
                            return done;
                        };
                        done.push((at, write(output)));
                    }
                })
            })
            .collect();
        for worker in workers {
            // A worker that panicked leaves its images without a result,
            // reported below as not written.
            for (at, result) in worker.join().unwrap_or_default() {
                if let Some(slot) = results.get_mut(at) {
                    *slot = Some(result);
                }
            }
        }
    });
    Ok(outputs
        .into_iter()
        .zip(results)
        .map(|((_, path, _), result)| Extracted {
            error: match result {
                Some(Ok(())) => None,
                Some(Err(e)) => Some(e),
                None => Some("internal error: a worker thread panicked".into()),
            },
            path,
        })
        .collect())
}

/// Entry `index`'s error with where it is: the fat binary (section, archive
/// member, file offset) and the entry.
fn located(found: &CudaFatbins<'_>, index: usize, error: &str) -> String {
    let entries = found.entries();
    let Some(entry) = entries.get(index) else {
        return error.to_owned();
    };
    let fatbins = found.fatbins();
    let fatbin = entry.record.fatbin;
    // A raw fat binary's place says no more than what follows.
    let (place, at) = fatbins
        .get(fatbin)
        .map_or((String::new(), 0), |f| match f.record.source {
            c::CLANGOFFLOAD_CUDA_SOURCE_RAW => (String::new(), f.record.offset),
            _ => (format!("{}: ", place(found, fatbin, f)), f.record.offset),
        });
    format!(
        "{place}CUDA fat binary at offset {at:#x}, entry at offset {:#x} ({} {}): {error}",
        entry.record.offset, entry.kind_name, entry.sm
    )
}

/// Where fat binary `index` is, as the report names it: `[section]`,
/// `(member)[section]`, `fat binary`, `OffloadBinary image`.
fn place(found: &CudaFatbins<'_>, index: usize, f: &CudaFatbin<'_>) -> String {
    let section = String::from_utf8_lossy(f.section);
    let place = match f.record.source {
        c::CLANGOFFLOAD_CUDA_SOURCE_RAW => "fat binary".to_owned(),
        c::CLANGOFFLOAD_CUDA_SOURCE_SECTION => format!("[{section}]"),
        _ if section.is_empty() => "OffloadBinary image".to_owned(),
        _ => format!("[{section}] OffloadBinary image"),
    };
    // As the place of a bundle in an archive member is written.
    match member_name(found, index) {
        Some(member) if place.starts_with('[') => format!("({member}){place}"),
        Some(member) => format!("({member}) {place}"),
        None => place,
    }
}

/// A fat binary and its entries, as `inspect --json` shows them.
#[derive(Serialize)]
pub struct FatbinReport {
    place: String,
    /// The archive member it is in, if the file is an archive.
    archive_member: Option<String>,
    offset: u64,
    size: usize,
    version: u16,
    header_size: u16,
    fat_size: u64,
    entries: Vec<EntryReport>,
}

/// Every header field of an entry.
#[derive(Serialize)]
struct EntryReport {
    offset: u64,
    member: Option<u64>,
    kind: &'static str,
    kind_id: u16,
    version: u16,
    header_size: u32,
    payload_size: u64,
    compressed_size: u32,
    uncompressed_size: u64,
    compression: &'static str,
    options_offset: u32,
    code_version: String,
    arch: u32,
    sm: String,
    flags: u64,
    reserved: u64,
    identifier_offset: u32,
    identifier_length: u32,
    identifier: Option<String>,
    options: Option<String>,
    extracted_as: Option<String>,
}

/// Options are text (PTX) or a binary blob (sm_100+ ELF): text when printable.
fn options_text(options: &[u8]) -> String {
    if options.iter().all(|b| (0x20..0x7f).contains(b)) {
        String::from_utf8_lossy(options).into_owned()
    } else {
        options.iter().fold(String::from("0x"), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    }
}

fn entry_report(entry: &CudaEntry<'_>) -> EntryReport {
    let e = &entry.record;
    let text = |b: &[u8]| (!b.is_empty()).then(|| String::from_utf8_lossy(b).into_owned());
    EntryReport {
        offset: e.offset,
        member: e.member.checked_sub(1),
        kind: entry.kind_name,
        kind_id: e.kind,
        version: e.version,
        header_size: e.header_size,
        payload_size: e.payload_size,
        compressed_size: e.compressed_size,
        uncompressed_size: e.uncompressed_size,
        compression: entry.compression,
        options_offset: e.options_offset,
        code_version: format!("{}.{}", e.major, e.minor),
        arch: e.arch,
        sm: entry.sm.clone(),
        flags: e.flags,
        reserved: e.reserved,
        identifier_offset: e.identifier_offset,
        identifier_length: e.identifier_length,
        identifier: text(entry.identifier),
        options: (e.options_offset != 0 && e.member == 0 && !entry.is_concat())
            .then(|| options_text(entry.options)),
        extracted_as: text(entry.name),
    }
}

/// The fat binaries and their entries, for the report.
pub fn reports(found: &CudaFatbins<'_>) -> Vec<FatbinReport> {
    let entries = found.entries();
    found
        .fatbins()
        .iter()
        .enumerate()
        .map(|(index, f)| FatbinReport {
            place: place(found, index, f),
            archive_member: member_name(found, index),
            offset: f.record.offset,
            size: f.data.len(),
            version: f.record.version,
            header_size: f.record.header_size,
            fat_size: f.record.fat_size,
            entries: entries
                .iter()
                .filter(|e| e.record.fatbin == index)
                .map(entry_report)
                .collect(),
        })
        .collect()
}

/// The text report of the fat binaries: one line each, one per entry.
pub fn text(reports: &[FatbinReport], out: &mut String) {
    for f in reports {
        let _ = writeln!(
            out,
            "{}: CUDA fat binary at offset {:#x}, {} bytes, version {}, header {}, {} entries",
            f.place,
            f.offset,
            crate::contents::commas(u64::try_from(f.size).unwrap_or(u64::MAX)),
            f.version,
            f.header_size,
            f.entries.len()
        );
        for e in &f.entries {
            // A member's header size field is its offset in the decoded blob.
            let (member, header) = match e.member {
                Some(m) => (format!("  member {m}"), format!("at +{:#x}", e.header_size)),
                None => (String::new(), format!("header {}", e.header_size)),
            };
            let _ = write!(
                out,
                "  {:#x}{member}: {} {} v{} {header} payload {} compressed {} ({}, {} -> {}) flags {:#x} reserved {:#x}",
                e.offset,
                e.kind,
                e.sm,
                e.code_version,
                e.payload_size,
                e.compressed_size,
                e.compression,
                e.compressed_size,
                e.uncompressed_size,
                e.flags,
                e.reserved,
            );
            if let Some(identifier) = &e.identifier {
                let _ = write!(out, " identifier {identifier:?}");
            }
            if let Some(options) = &e.options {
                let _ = write!(out, " options {options:?}");
            }
            if let Some(name) = &e.extracted_as {
                let _ = write!(out, " -> {name}");
            }
            out.push('\n');
        }
    }
}
