//! `list`, `extract` and `inspect` of a kpack archive (`.kpack`, ROCm 7's
//! split device code) given alone: its entries as `<binary key>: <ID>`,
//! each code object written under the library's name for it, and the
//! archive's facts. A damaged entry is an error for itself only.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::Failure;
use crate::ffi::kpack::{Entry, Kpack};
use crate::io::os_message;
use crate::stdio::outln;

/// The ID an entry is listed under: the bundle entry ID it came from, or
/// its architecture where the table does not say.
fn id<'a>(entry: &Entry<'a>) -> &'a [u8] {
    if entry.target.is_empty() {
        entry.arch
    } else {
        entry.target
    }
}

/// `list`: one `<binary key>: <ID>` line per entry, in table order.
pub fn list(file: &str, data: &[u8]) -> Result<(), Failure> {
    let kpack = Kpack::parse(data).map_err(|e| Failure(format!("'{file}': {e}")))?;
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    for entry in kpack.entries() {
        out.write_all(entry.key)?;
        out.write_all(b": ")?;
        out.write_all(id(&entry))?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// `extract`: every entry's code object into `dir`, each path printed as it
/// is written; returns why each entry that was not written was not.
pub fn extract(
    file: &str,
    data: &[u8],
    dir: &Path,
    force: bool,
    max_size: u64,
) -> Result<Vec<String>, Failure> {
    let kpack = Kpack::parse(data).map_err(|e| Failure(format!("'{file}': {e}")))?;
    let stem = Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    let entries = kpack.entries();
    let paths = (0..entries.len())
        .map(|i| kpack.output_name(i, &stem).map(|name| dir.join(name)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure(format!("'{}': {}", dir.display(), os_message(&e))))?;
    if !force {
        if let Some(taken) = paths.iter().find(|p| p.symlink_metadata().is_ok()) {
            return Err(Failure(format!(
                "'{}': file exists; nothing was written (--force overwrites)",
                taken.display()
            )));
        }
    }
    let mut errors = Vec::new();
    for (index, (entry, path)) in entries.iter().zip(&paths).enumerate() {
        let written = kpack
            .read(index, entry.original_size, max_size)
            .and_then(|bytes| write(path, &bytes, force));
        match written {
            Ok(()) => outln!("{}", path.display())?,
            Err(e) => errors.push(format!(
                "'{file}': entry {index} ({}, {}; table at offset {:#x}): {e} ('{}' not written)",
                String::from_utf8_lossy(entry.key),
                String::from_utf8_lossy(entry.arch),
                entry.toc_offset,
                path.display()
            )),
        }
    }
    Ok(errors)
}

fn write(path: &Path, bytes: &[u8], force: bool) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| os_message(&e))
}

/// What `inspect --json` prints of an archive.
#[derive(Serialize)]
struct Report<'a> {
    file: &'a str,
    size: usize,
    kpack: Archive<'a>,
}

#[derive(Serialize)]
struct Archive<'a> {
    version: u32,
    format_version: u64,
    scheme: &'static str,
    group_name: std::borrow::Cow<'a, str>,
    arch_family: std::borrow::Cow<'a, str>,
    arches: Vec<std::borrow::Cow<'a, str>>,
    toc_offset: u64,
    entries: Vec<EntryReport<'a>>,
}

#[derive(Serialize)]
struct EntryReport<'a> {
    key: std::borrow::Cow<'a, str>,
    arch: std::borrow::Cow<'a, str>,
    id: std::borrow::Cow<'a, str>,
    ordinal: u64,
    original_size: u64,
    toc_offset: u64,
    /// Why its code object cannot be had (only with `--verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// `inspect [--json] [--verify]`: the archive's facts and entries; with
/// `verify`, every code object read (decoded) and its failures returned.
pub fn inspect(
    file: &str,
    data: &[u8],
    json: bool,
    verify: bool,
    max_size: u64,
) -> Result<Vec<String>, Failure> {
    let kpack = Kpack::parse(data).map_err(|e| Failure(format!("'{file}': {e}")))?;
    let info = kpack
        .info()
        .ok_or_else(|| Failure(format!("'{file}': the library gave no archive facts")))?;
    let lossy = String::from_utf8_lossy;
    let mut damage = Vec::new();
    let entries: Vec<EntryReport<'_>> = kpack
        .entries()
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let error = verify
                .then(|| kpack.read(index, entry.original_size, max_size).err())
                .flatten();
            if let Some(e) = &error {
                damage.push(format!(
                    "entry {index} ({}, {}): {e}",
                    lossy(entry.key),
                    lossy(entry.arch)
                ));
            }
            EntryReport {
                key: lossy(entry.key),
                arch: lossy(entry.arch),
                id: lossy(id(entry)),
                ordinal: entry.ordinal,
                original_size: entry.original_size,
                toc_offset: entry.toc_offset,
                error,
            }
        })
        .collect();
    let report = Report {
        file,
        size: data.len(),
        kpack: Archive {
            version: 1,
            format_version: info.format_version,
            scheme: info.scheme,
            group_name: lossy(info.group_name),
            arch_family: lossy(info.arch_family),
            arches: kpack.arches().into_iter().map(lossy).collect(),
            toc_offset: info.toc_offset,
            entries,
        },
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        text(&report)?;
    }
    Ok(damage)
}

fn text(report: &Report<'_>) -> Result<(), Failure> {
    let k = &report.kpack;
    outln!(
        "{}: kpack archive, version {}, {} bytes, {} code objects ({}), table of contents at {:#x}",
        report.file,
        k.version,
        report.size,
        k.entries.len(),
        k.scheme,
        k.toc_offset
    )?;
    outln!(
        "  group {}, architectures: {}",
        k.group_name,
        k.arches.join(" ")
    )?;
    for (index, e) in k.entries.iter().enumerate() {
        outln!(
            "  [{index}] {} for {}: ordinal {}, {} bytes, from {}",
            e.key,
            e.arch,
            e.ordinal,
            e.original_size,
            e.id
        )?;
        if let Some(error) = &e.error {
            outln!("      damaged: {error}")?;
        }
    }
    Ok(())
}
