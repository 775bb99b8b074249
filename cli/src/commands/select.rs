//! `clangoffload select FILE --device TARGET [-o DIR] [--force] [--json]`:
//! the code object a device would load from each container of a file, by
//! its runtime's rule, and why (the library's choice and words,
//! `clangoffload_select`): for an AMD target ID (`gfx90a:sramecc+:xnack-`)
//! the HIP runtime's from each bundle, compressed bundle and OffloadBinary;
//! for an NVIDIA SM (`sm_89`) the CUDA driver's from each fat binary. A
//! host ROCm's kpack split is resolved record by record as the runtime
//! resolves it: the archives its markers name (or `ROCM_KPACK_PATH` /
//! `_PATH_PREFIX`, from the environment or `--rocm-kpack-*`), opened in
//! the runtime's order, by the loader `--kpack-loader` names. A kpack
//! archive alone: each binary key it holds, resolved in it.
//!
//! With `-o DIR` each chosen code object is written, named as `extract`
//! names it, and every path written is printed. Exit status 1 when some
//! container or record gives the device nothing (or cannot be read), after
//! everything else is reported and written.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Failure;
use crate::ffi::kpack::{arch_list, chose_generic, resolve, Environment, Host, Kpack, Loader};
use crate::ffi::select::Selection;
use crate::stdio::{err, outln};

struct Args<'a> {
    file: &'a str,
    device: &'a str,
    dir: Option<PathBuf>,
    force: bool,
    json: bool,
    loader: Loader,
    environment: Environment,
}

fn parse(args: &[String]) -> Result<Args<'_>, Failure> {
    let usage = || Failure(crate::help::usage(crate::help::SELECT));
    let mut parsed = Args {
        file: "",
        device: "",
        dir: None,
        force: false,
        json: false,
        loader: Loader::FallThrough,
        environment: Environment::from_process(),
    };
    let mut words = crate::flags::words::Words::new(args);
    while let Some((flag, inline)) = words.next_word() {
        let mut value = || words.value(inline).ok_or_else(usage);
        match flag {
            "--device" => parsed.device = value()?,
            "-o" => parsed.dir = Some(PathBuf::from(value()?)),
            "--force" => parsed.force = true,
            "--json" => parsed.json = true,
            "--kpack-loader" => {
                parsed.loader = match value()? {
                    "first" => Loader::FirstCandidate,
                    "fall-through" => Loader::FallThrough,
                    _ => return Err(usage()),
                }
            }
            "--rocm-kpack-path" => parsed.environment.path = Some(value()?.into()),
            "--rocm-kpack-path-prefix" => parsed.environment.prefix = Some(value()?.into()),
            "--rocm-kpack-disable" => parsed.environment.disable = Some(value()?.into()),
            _ if parsed.file.is_empty() && !flag.starts_with('-') => parsed.file = flag,
            _ => return Err(usage()),
        }
    }
    if parsed.file.is_empty() || parsed.device.is_empty() {
        return Err(usage());
    }
    Ok(parsed)
}

/// One container, record or key and what it gives the device.
#[derive(Serialize)]
pub struct Choice {
    /// `bundle`, `compressed bundle`, `OffloadBinary`, `CUDA fat binary`,
    /// `kpack record`, `kpack key`.
    kind: String,
    /// The container's or record's file offset (a key's: none).
    offset: Option<u64>,
    /// A record's key, or a key of an archive.
    key: Option<String>,
    pub loads: bool,
    /// The chosen code's ID.
    pub entry: Option<String>,
    /// `native`, `generic`, `spirv`, `cubin`, `ptx`.
    pub how: Option<&'static str>,
    /// Why this code, or why none.
    pub reason: String,
    /// The file written (`-o`).
    output: Option<String>,
    /// The container could not be read.
    error: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    file: &'a str,
    device: &'a str,
    choices: Vec<Choice>,
    /// Damage found between containers, and files that could not be
    /// written.
    errors: Vec<String>,
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    let input = super::open(args.file)?;
    let data = input.data();
    let stem = Path::new(args.file).file_name().map_or_else(
        || args.file.to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure(format!(
                "'{}': {}",
                dir.display(),
                crate::io::os_message(&e)
            ))
        })?;
    }
    let mut report = Report {
        file: args.file,
        device: args.device,
        choices: Vec::new(),
        errors: Vec::new(),
    };
    if crate::ffi::kpack::is_kpack(data) {
        archive_alone(&args, &stem, data, &mut report)?;
    } else if let Some(host) = split_host(data) {
        records(&args, &stem, &host, &mut report)?;
    } else {
        containers(&args, data, &mut report)?;
    }
    print(&args, &report)?;
    for e in &report.errors {
        err!("{program}: error: {e}\n");
    }
    let short = report.choices.iter().filter(|c| !c.loads).count();
    if short > 0 {
        return Err(Failure(format!(
            "'{}': {short} of {} give {} nothing",
            args.file,
            report.choices.len(),
            args.device
        )));
    }
    if !report.errors.is_empty() {
        return Err(Failure(format!(
            "'{}': {} errors",
            args.file,
            report.errors.len()
        )));
    }
    Ok(())
}

/// A host whose `HIPK` records point into kpack archives.
pub(super) fn split_host(data: &[u8]) -> Option<Host<'_>> {
    let host = Host::parse(data).ok()?;
    (!host.records().is_empty()).then_some(host)
}

/// Every container the library finds, and its choice.
fn containers(args: &Args<'_>, data: &[u8], report: &mut Report<'_>) -> Result<(), Failure> {
    let selection = Selection::new(data, args.file, args.device)
        .map_err(|e| Failure(format!("'{}': {e}", args.file)))?;
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for c in selection.containers() {
        let mut choice = Choice {
            kind: lossy(c.kind),
            offset: Some(c.offset),
            key: None,
            loads: c.how.is_some(),
            entry: c.how.map(|_| lossy(c.id)),
            how: c.how,
            reason: lossy(c.reason),
            output: None,
            error: c.failed,
        };
        if let (Some(dir), true) = (&args.dir, choice.loads) {
            let path = dir.join(lossy(c.output_name));
            match selection
                .read(c.index)
                .and_then(|code| write(&path, code.bytes(), args.force))
            {
                Ok(()) => choice.output = Some(path.display().to_string()),
                Err(e) => report.errors.push(format!("'{}': {e}", args.file)),
            }
        }
        report.choices.push(choice);
    }
    report.errors.extend(
        selection
            .failures()
            .into_iter()
            .map(|f| format!("'{}': {}", args.file, lossy(f))),
    );
    Ok(())
}

/// Each `HIPK` record resolved as the runtime resolves it: the candidate
/// archives of every record first, then each existing one opened once (by
/// canonical path; unreadable ones skipped, as the runtime skips them),
/// then each record's key looked up in its candidates that opened.
fn records(
    args: &Args<'_>,
    stem: &str,
    host: &Host<'_>,
    report: &mut Report<'_>,
) -> Result<(), Failure> {
    let real = std::fs::canonicalize(args.file).unwrap_or_else(|_| PathBuf::from(args.file));
    let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let records = host.records();
    let mut wanted = Vec::new();
    for (place, record) in records.iter().enumerate() {
        wanted.push(match record.problem {
            Some(_) => (Vec::new(), false),
            None => host
                .candidates(
                    place,
                    args.device.as_bytes(),
                    &args.environment,
                    dir.as_os_str().as_encoded_bytes(),
                )
                .map_err(|e| Failure(format!("'{}': {e}", args.file)))?,
        });
    }
    let mut canonical: Vec<PathBuf> = Vec::new();
    let per_record: Vec<Vec<usize>> = wanted
        .iter()
        .map(|(paths, _)| {
            let mut mine = Vec::new();
            for path in paths {
                let path = PathBuf::from(String::from_utf8_lossy(path).into_owned());
                let Ok(real) = std::fs::canonicalize(&path) else {
                    continue;
                };
                if !real.is_file() {
                    continue;
                }
                let index = canonical
                    .iter()
                    .position(|p| *p == real)
                    .unwrap_or_else(|| {
                        canonical.push(real);
                        canonical.len().saturating_sub(1)
                    });
                if !mine.contains(&index) {
                    mine.push(index);
                }
            }
            mine
        })
        .collect();
    let inputs: Vec<Option<crate::io::Input>> = canonical
        .iter()
        .map(|p| crate::io::Input::open(p, false).ok())
        .collect();
    let kpacks: Vec<Option<Kpack<'_>>> = inputs
        .iter()
        .map(|i| i.as_ref().and_then(|i| Kpack::parse(i.data()).ok()))
        .collect();
    let arches = arch_list(args.device.as_bytes());
    for ((record, (_, disabled)), mine) in records.iter().zip(&wanted).zip(&per_record) {
        let key = crate::ffi::kpack::binary_key(record.kernel_name, record.co_index);
        let mut choice = Choice::of("kpack record", Some(record.offset), &key);
        if let Some(problem) = &record.problem {
            choice.reason.clone_from(problem);
            choice.error = true;
            report.choices.push(choice);
            continue;
        }
        let opened: Vec<(usize, &Kpack<'_>)> = mine
            .iter()
            .filter_map(|&i| kpacks.get(i)?.as_ref().map(|k| (i, k)))
            .collect();
        let list: Vec<&Kpack<'_>> = opened.iter().map(|(_, k)| *k).collect();
        match resolve(&list, &key, &arches, args.loader, *disabled) {
            Ok((archive, entry)) => {
                if let Some(&(i, kpack)) = opened.get(archive) {
                    let path = canonical.get(i).map(|p| p.display().to_string());
                    let at = Chosen {
                        path: path.as_deref().unwrap_or_default(),
                        kpack,
                        entry,
                    };
                    at.fill(args, stem, report, &mut choice);
                }
            }
            Err((code, why)) => choice.reason = format!("error {code}: {why}"),
        }
        report.choices.push(choice);
    }
    Ok(())
}

/// A kpack archive alone: each binary key, resolved in it.
fn archive_alone(
    args: &Args<'_>,
    stem: &str,
    data: &[u8],
    report: &mut Report<'_>,
) -> Result<(), Failure> {
    let kpack = Kpack::parse(data).map_err(|e| Failure(format!("'{}': {e}", args.file)))?;
    let arches = arch_list(args.device.as_bytes());
    let mut keys: Vec<&[u8]> = Vec::new();
    for entry in kpack.entries() {
        if !keys.contains(&entry.key) {
            keys.push(entry.key);
        }
    }
    let disabled = args
        .environment
        .disable
        .as_ref()
        .is_some_and(|v| v.first().is_some_and(|&c| c != b'0'));
    for key in keys {
        let mut choice = Choice::of("kpack key", None, key);
        match resolve(&[&kpack], key, &arches, args.loader, disabled) {
            Ok((_, entry)) => {
                let at = Chosen {
                    path: args.file,
                    kpack: &kpack,
                    entry,
                };
                at.fill(args, stem, report, &mut choice);
            }
            Err((code, why)) => choice.reason = format!("error {code}: {why}"),
        }
        report.choices.push(choice);
    }
    Ok(())
}

impl Choice {
    /// A record or key not resolved yet.
    fn of(kind: &str, offset: Option<u64>, key: &[u8]) -> Self {
        Choice {
            kind: kind.into(),
            offset,
            key: Some(String::from_utf8_lossy(key).into_owned()),
            loads: false,
            entry: None,
            how: None,
            reason: String::new(),
            output: None,
            error: false,
        }
    }
}

/// The code object resolution chose: entry `entry` of `kpack`, the archive
/// at `path`.
struct Chosen<'a> {
    path: &'a str,
    kpack: &'a Kpack<'a>,
    entry: usize,
}

impl Chosen<'_> {
    /// Fills `choice` with the code object, written under `-o` as `extract`
    /// names it.
    fn fill(&self, args: &Args<'_>, stem: &str, report: &mut Report<'_>, choice: &mut Choice) {
        let entries = self.kpack.entries();
        let Some(e) = entries.get(self.entry) else {
            return;
        };
        let generic = chose_generic(args.device.as_bytes(), e.arch);
        let arch = String::from_utf8_lossy(e.arch);
        choice.loads = true;
        choice.entry = Some(String::from_utf8_lossy(e.id).into_owned());
        choice.how = Some(if generic { "generic" } else { "native" });
        choice.reason = format!(
            "{}: the {arch} code object of '{}'",
            if generic { "generic" } else { "native" },
            self.path
        );
        let Some(dir) = &args.dir else {
            return;
        };
        let written = self.kpack.output_name(self.entry, stem).and_then(|name| {
            let out = dir.join(name);
            self.kpack
                .read(self.entry, e.original_size, 0)
                .and_then(|bytes| write(&out, &bytes, args.force))
                .map(|()| out)
        });
        match written {
            Ok(out) => choice.output = Some(out.display().to_string()),
            Err(e) => report.errors.push(format!("'{}': {e}", args.file)),
        }
    }
}

fn write(path: &Path, bytes: &[u8], force: bool) -> Result<(), String> {
    use std::io::Write;
    crate::io::create(path, force)?
        .write_all(bytes)
        .map_err(|e| format!("'{}': {}", path.display(), crate::io::os_message(&e)))
}

fn print(args: &Args<'_>, report: &Report<'_>) -> Result<(), Failure> {
    if args.json {
        outln!("{}", serde_json::to_string(report)?)?;
        return Ok(());
    }
    for c in &report.choices {
        let place = match (c.offset, &c.key) {
            (Some(offset), Some(key)) => format!("{} {key} at {offset:#x}", c.kind),
            (Some(offset), None) => format!("{} at {offset:#x}", c.kind),
            (None, key) => format!("{} {}", c.kind, key.as_deref().unwrap_or_default()),
        };
        match (&c.entry, c.how) {
            (Some(entry), Some(how)) => outln!("{place}: {entry} [{how}]: {}", c.reason)?,
            _ if c.error => outln!("{place}: unreadable: {}", c.reason)?,
            _ => outln!("{place}: nothing: {}", c.reason)?,
        }
        if let Some(output) = &c.output {
            outln!("  written: {output}")?;
        }
    }
    Ok(())
}
