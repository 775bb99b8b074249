//! `list`, `extract` and `inspect` of a kpack archive (`.kpack`, ROCm 7's
//! split device code) given alone: its entries as `<binary key>: <ID>`,
//! each code object written under the library's name for it, and the
//! archive's facts. A damaged entry is an error for itself only.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Failure;
use crate::ffi::kpack::Kpack;
use crate::io::os_message;
use crate::stdio::outln;

/// `list`: one `<binary key>: <ID>` line per entry, in table order.
pub fn list(file: &str, data: &[u8]) -> Result<(), Failure> {
    let kpack = Kpack::parse(data).map_err(|e| Failure(format!("'{file}': {e}")))?;
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    for entry in kpack.entries() {
        out.write_all(entry.key)?;
        out.write_all(b": ")?;
        out.write_all(entry.id)?;
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
    crate::io::create(path, force)?
        .write_all(bytes)
        .map_err(|e| format!("'{}': {}", path.display(), os_message(&e)))
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
                id: lossy(entry.id),
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

/// A host after kpack's split, read through to its archives: each record's
/// code objects, found as the runtime finds its archives (the marker's
/// search paths, relative to the host's real directory, `@GFXARCH@` for
/// any architecture), or in the `--kpack-path` files and directories given.
pub struct ReadThrough {
    /// Per record: its key, and (archive path, entry index, ID, size) of
    /// each code object the archives hold for it, in archive order.
    pub records: Vec<(Vec<u8>, Vec<Found>)>,
    /// Why a record has no marker: one located line each.
    pub record_problems: Vec<String>,
    /// Why an archive or a record's key gave nothing: one located line each.
    pub errors: Vec<String>,
}

impl ReadThrough {
    /// Every failure, records' first.
    fn failures(&self) -> Vec<String> {
        self.record_problems
            .iter()
            .chain(&self.errors)
            .cloned()
            .collect()
    }
}

/// One code object a record's key finds.
#[derive(Clone)]
pub struct Found {
    pub archive: usize,
    pub entry: usize,
    pub id: Vec<u8>,
    pub size: u64,
}

/// The archives read through, kept open (mapped) while their entries are
/// read.
pub struct Archives {
    pub paths: Vec<std::path::PathBuf>,
    inputs: Vec<crate::io::Input>,
}

impl Archives {
    pub fn parsed(&self, index: usize) -> Option<Result<Kpack<'_>, String>> {
        self.inputs
            .get(index)
            .map(|input| Kpack::parse(input.data()))
    }

    /// Archive `index`'s path, for messages.
    fn shown(&self, index: usize) -> std::path::Display<'_> {
        self.paths.get(index).map_or(Path::new(""), |p| p).display()
    }
}

/// `Some` when `data` is a host kpack split (HIPK records or a
/// `.hip_fatbin` without bytes), read through to its archives.
pub fn read_through(
    file: &str,
    data: &[u8],
    kpack_paths: &[&str],
) -> Result<Option<(ReadThrough, Archives)>, Failure> {
    let Ok(host) = crate::ffi::kpack::Host::parse(data) else {
        return Ok(None);
    };
    let records = host.records();
    if records.is_empty() && host.moved_fatbin().is_none() {
        return Ok(None);
    }
    let (mut errors, mut record_problems) = (Vec::new(), Vec::new());
    let mut search = Vec::new();
    for record in &records {
        match &record.problem {
            Some(problem) => record_problems.push(format!(
                "'{file}': HIPK record {} at offset {:#x}: {problem}",
                record.index, record.offset
            )),
            None => search.extend(record.search_paths.iter().copied()),
        }
    }
    let paths = find_archives(file, &search, kpack_paths, &mut errors);
    let mut inputs = Vec::new();
    let mut kept = Vec::new();
    for path in paths {
        match crate::io::Input::open(&path, false) {
            Ok(input) => {
                inputs.push(input);
                kept.push(path);
            }
            Err(e) => errors.push(format!("'{}': {}", path.display(), os_message(&e))),
        }
    }
    let archives = Archives {
        paths: kept,
        inputs,
    };
    let parsed: Vec<Option<Kpack<'_>>> = (0..archives.paths.len())
        .map(|i| match archives.parsed(i) {
            Some(Ok(kpack)) => Some(kpack),
            Some(Err(e)) => {
                errors.push(format!("'{}': {e}", archives.shown(i)));
                None
            }
            None => None,
        })
        .collect();
    // Each archive's entries by key, listed once.
    let mut by_key: std::collections::HashMap<Vec<u8>, Vec<Found>> =
        std::collections::HashMap::new();
    for (archive, kpack) in parsed.iter().enumerate() {
        let Some(kpack) = kpack else { continue };
        for (entry, e) in kpack.entries().iter().enumerate() {
            by_key.entry(e.key.to_vec()).or_default().push(Found {
                archive,
                entry,
                id: e.id.to_vec(),
                size: e.original_size,
            });
        }
    }
    let mut out = Vec::new();
    for record in records.iter().filter(|r| r.problem.is_none()) {
        let key = crate::ffi::kpack::binary_key(record.kernel_name, record.co_index);
        let found = by_key.get(&key).cloned().unwrap_or_default();
        if found.is_empty() {
            errors.push(format!(
                "'{file}': HIPK record {} ({}): no archive found holds its code objects",
                record.index,
                String::from_utf8_lossy(&key)
            ));
        }
        out.push((key, found));
    }
    drop(parsed);
    Ok(Some((
        ReadThrough {
            records: out,
            record_problems,
            errors,
        },
        archives,
    )))
}

/// The archive files the search paths name (relative ones from the host's
/// real directory), or those `kpack_paths` give (files, and the `.kpack`
/// files in directories); sorted, each once.
fn find_archives(
    file: &str,
    search: &[&[u8]],
    kpack_paths: &[&str],
    errors: &mut Vec<String>,
) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let mut found: Vec<PathBuf> = Vec::new();
    let listed = |dir: &Path,
                  keep: &dyn Fn(&[u8]) -> bool,
                  found: &mut Vec<PathBuf>,
                  errors: &mut Vec<String>| match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if keep(name.as_encoded_bytes()) && entry.path().is_file() {
                    found.push(entry.path());
                }
            }
        }
        Err(e) => errors.push(format!("'{}': {}", dir.display(), os_message(&e))),
    };
    if kpack_paths.is_empty() {
        let real = std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file));
        let base = real.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut seen: Vec<&[u8]> = Vec::new();
        for &path in search {
            if seen.contains(&path) {
                continue;
            }
            seen.push(path);
            let text = String::from_utf8_lossy(path);
            let full = base.join(text.as_ref());
            let dir = full.parent().map(Path::to_path_buf).unwrap_or_default();
            listed(
                &dir,
                &|name| crate::ffi::kpack::names(path, name),
                &mut found,
                errors,
            );
        }
    } else {
        for given in kpack_paths {
            let path = Path::new(given);
            if path.is_dir() {
                listed(path, &|name| name.ends_with(b".kpack"), &mut found, errors);
            } else {
                found.push(path.to_path_buf());
            }
        }
    }
    let mut unique: Vec<(PathBuf, PathBuf)> = found
        .into_iter()
        .map(|p| (std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone()), p))
        .collect();
    unique.sort();
    unique.dedup_by(|a, b| a.0 == b.0);
    // Named by their canonical paths (`lib/../.kpack/x` is `.kpack/x`).
    unique.into_iter().map(|(canonical, _)| canonical).collect()
}

/// `list` of a split host: each record's code objects' IDs, in record
/// order; the records and archives that gave nothing as errors.
pub fn list_host(through: &ReadThrough) -> Result<Vec<String>, Failure> {
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    for (_, found) in &through.records {
        for f in found {
            out.write_all(&f.id)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(through.failures())
}

/// `extract` of a split host: each record's code objects, read from their
/// archives, under the archives' names for them with the host's name as
/// the stem; every path printed, in record order whatever the thread count;
/// what could not be written as errors. Code objects are decoded on
/// `threads` threads, each with its own view of every archive and one code
/// object in memory at a time, handed out one by one so that a large one
/// holds up no other.
pub fn extract_host(
    file: &str,
    through: &ReadThrough,
    archives: &Archives,
    dir: &Path,
    force: bool,
    max_size: u64,
    threads: usize,
) -> Result<Vec<String>, Failure> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let stem = Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure(format!("'{}': {}", dir.display(), os_message(&e))))?;
    let work: Vec<(&[u8], &Found)> = through
        .records
        .iter()
        .flat_map(|(key, found)| found.iter().map(move |f| (key.as_slice(), f)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<PathBuf, String>>>> =
        work.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let names = std::sync::Mutex::new(std::collections::HashSet::new());
    let one_thread = || {
        // This thread's own views: the library's handles are not shared.
        let parsed: Vec<Option<Kpack<'_>>> = (0..archives.paths.len())
            .map(|i| archives.parsed(i).and_then(Result::ok))
            .collect();
        let mut buffer = Vec::new();
        while let Some((index, (key, f))) = {
            let index = next.fetch_add(1, Ordering::Relaxed);
            work.get(index).map(|w| (index, *w))
        } {
            let Some(Some(kpack)) = parsed.get(f.archive) else {
                continue;
            };
            let written = kpack.output_name(f.entry, &stem).and_then(|name| {
                let path = dir.join(&name);
                let fresh = names.lock().map(|mut n| n.insert(name)).unwrap_or(false);
                if !fresh {
                    return Err(format!("'{}' would be written twice", path.display()));
                }
                kpack
                    .read_into(f.entry, f.size, max_size, &mut buffer)
                    .and_then(|()| write(&path, &buffer, force))
                    .map(|()| path)
            });
            let written = written.map_err(|e| {
                format!(
                    "'{file}': {} from '{}': {e}",
                    String::from_utf8_lossy(key),
                    archives.shown(f.archive)
                )
            });
            if let Some(slot) = results.get(index) {
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(written);
                }
            }
        }
    };
    let threads = threads.clamp(1, work.len().max(1));
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(one_thread);
        }
        one_thread();
    });
    let mut errors = through.failures();
    for slot in results {
        match slot.into_inner().ok().flatten() {
            Some(Ok(path)) => outln!("{}", path.display())?,
            Some(Err(e)) => errors.push(e),
            None => {}
        }
    }
    Ok(errors)
}

/// What `inspect` shows of a host kpack split: where `.hip_fatbin` went,
/// each `HIPK` record with its marker, and the code objects its key finds
/// in the archives the marker names.
#[derive(Serialize)]
pub struct HostReport {
    /// `.hip_fatbin` left without bytes.
    pub fatbin_moved: Option<Moved>,
    pub records: Vec<RecordReport>,
    /// The archives read, in the order the code objects name them.
    pub archives: Vec<String>,
    /// Records and archives that gave nothing, one located line each.
    pub errors: Vec<String>,
}

/// Where `.hip_fatbin` was: its address and size, kept.
#[derive(Serialize)]
pub struct Moved {
    pub address: u64,
    pub size: u64,
}

#[derive(Serialize)]
pub struct RecordReport {
    pub index: usize,
    pub co_index: u32,
    pub offset: u64,
    pub kernel_name: String,
    pub search_paths: Vec<String>,
    pub key: String,
    /// Why it has no marker.
    pub problem: Option<String>,
    pub code_objects: Vec<CodeObjectReport>,
}

#[derive(Serialize)]
pub struct CodeObjectReport {
    /// Index into `archives`.
    pub archive: usize,
    pub id: String,
    pub size: u64,
}

/// The report of a host kpack split (`None` for any other file).
pub fn host_report(file: &str, data: &[u8]) -> Result<Option<HostReport>, Failure> {
    let Some((through, archives)) = read_through(file, data, &[])? else {
        return Ok(None);
    };
    let host = crate::ffi::kpack::Host::parse(data).map_err(Failure)?;
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut found = through.records.iter();
    let records = host
        .records()
        .iter()
        .map(|r| {
            let code_objects = match r.problem {
                Some(_) => Vec::new(),
                None => found
                    .next()
                    .map(|(_, f)| {
                        f.iter()
                            .map(|f| CodeObjectReport {
                                archive: f.archive,
                                id: lossy(&f.id),
                                size: f.size,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            RecordReport {
                index: r.index,
                co_index: r.co_index,
                offset: r.offset,
                kernel_name: lossy(r.kernel_name),
                search_paths: r.search_paths.iter().map(|p| lossy(p)).collect(),
                key: lossy(&crate::ffi::kpack::binary_key(r.kernel_name, r.co_index)),
                problem: r.problem.clone(),
                code_objects,
            }
        })
        .collect();
    Ok(Some(HostReport {
        fatbin_moved: host
            .moved_fatbin()
            .map(|(address, size)| Moved { address, size }),
        records,
        archives: archives
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        errors: through.errors,
    }))
}

/// `inspect`'s text of a host report.
pub fn host_text(report: &HostReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if let Some(Moved { address, size }) = report.fatbin_moved {
        let _ = writeln!(
            out,
            ".hip_fatbin: moved to kpack archives (no bytes in the file; {size} bytes at address {address:#x})"
        );
    }
    for r in &report.records {
        let _ = write!(
            out,
            "kpack record {} (code object {}) at offset {:#x}: ",
            r.index, r.co_index, r.offset
        );
        if let Some(problem) = &r.problem {
            let _ = writeln!(out, "no marker: {problem}");
            continue;
        }
        let _ = writeln!(
            out,
            "key {}, search paths {}",
            r.key,
            r.search_paths.join(", ")
        );
        for c in &r.code_objects {
            let archive = report.archives.get(c.archive).map_or("", String::as_str);
            let _ = writeln!(out, "  {} ({} bytes) in {archive}", c.id, c.size);
        }
    }
    out
}
