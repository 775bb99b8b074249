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
use crate::ffi::kpack::{
    select_kpack, select_split_host, Environment, Host, Kpack, KpackChoice, Loader,
};
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
    } else if split_host(data).is_some() {
        records(&args, &stem, data, &mut report)?;
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

/// Each `HIPK` record resolved by the library as the runtime resolves it
/// (the archives its markers name, from the host's real directory, each
/// opened once).
fn records(
    args: &Args<'_>,
    stem: &str,
    data: &[u8],
    report: &mut Report<'_>,
) -> Result<(), Failure> {
    let failed = |e: String| Failure(format!("'{}': {e}", args.file));
    let real = std::fs::canonicalize(args.file).unwrap_or_else(|_| PathBuf::from(args.file));
    let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = dir.as_os_str().as_encoded_bytes();
    let (choices, opened) =
        select_split_host(data, args.device, dir, &args.environment, args.loader)
            .map_err(failed)?
            .ok_or_else(|| failed("no longer a kpack split host".into()))?;
    // Each archive a code object is written from, read once.
    let mut archives: Vec<(Vec<u8>, Result<Kpack<'_>, String>)> = Vec::new();
    for chosen in choices {
        let kpack = match (&args.dir, chosen.loads) {
            (Some(_), true) => {
                let at = archives.iter().position(|(p, _)| *p == chosen.path);
                let at = at.unwrap_or_else(|| {
                    let kpack = opened
                        .get(&chosen.path)
                        .ok_or_else(|| "no longer mapped".to_owned())
                        .and_then(Kpack::parse);
                    archives.push((chosen.path.clone(), kpack));
                    archives.len().saturating_sub(1)
                });
                archives.get(at).map(|(_, k)| k.as_ref())
            }
            _ => None,
        };
        let choice = kpack_choice(args, stem, "kpack record", chosen, kpack, report);
        report.choices.push(choice);
    }
    Ok(())
}

/// A kpack archive alone: each binary key, resolved in it by the library.
fn archive_alone(
    args: &Args<'_>,
    stem: &str,
    data: &[u8],
    report: &mut Report<'_>,
) -> Result<(), Failure> {
    let failed = |e: String| Failure(format!("'{}': {e}", args.file));
    let kpack = Kpack::parse(data).map_err(failed)?;
    let path = args.file.as_bytes();
    let choices =
        select_kpack(&kpack, path, args.device, &args.environment, args.loader).map_err(failed)?;
    for chosen in choices {
        let choice = kpack_choice(args, stem, "kpack key", chosen, Some(Ok(&kpack)), report);
        report.choices.push(choice);
    }
    Ok(())
}

/// `chosen` as `select` reports it, its code object written under `-o` (as
/// `extract` names it) from `kpack`, the archive that holds it.
fn kpack_choice(
    args: &Args<'_>,
    stem: &str,
    kind: &str,
    chosen: KpackChoice,
    kpack: Option<Result<&Kpack<'_>, &String>>,
    report: &mut Report<'_>,
) -> Choice {
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut choice = Choice {
        kind: kind.into(),
        offset: chosen.offset,
        key: Some(lossy(&chosen.key)),
        loads: chosen.loads,
        entry: chosen.loads.then(|| lossy(&chosen.id)),
        how: chosen.how,
        reason: chosen.reason,
        output: None,
        error: chosen.unreadable,
    };
    let (Some(dir), true) = (&args.dir, chosen.loads) else {
        return choice;
    };
    let written = match kpack {
        Some(Ok(kpack)) => write_entry(kpack, chosen.entry, dir, stem, args.force),
        Some(Err(e)) => Err(format!("'{}': {e}", lossy(&chosen.path))),
        None => Err(format!("'{}': not read", lossy(&chosen.path))),
    };
    match written {
        Ok(out) => choice.output = Some(out.display().to_string()),
        Err(e) => report.errors.push(format!("'{}': {e}", args.file)),
    }
    choice
}

/// Entry `entry` of `kpack` written into `dir`, named as `extract` names
/// it: the path written.
fn write_entry(
    kpack: &Kpack<'_>,
    entry: usize,
    dir: &Path,
    stem: &str,
    force: bool,
) -> Result<PathBuf, String> {
    let size = kpack
        .entries()
        .get(entry)
        .map(|e| e.original_size)
        .ok_or_else(|| format!("no entry {entry}"))?;
    let out = dir.join(kpack.output_name(entry, stem)?);
    let bytes = kpack.read(entry, size, 0)?;
    write(&out, &bytes, force)?;
    Ok(out)
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
