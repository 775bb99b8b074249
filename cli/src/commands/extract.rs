//! `clangoffload extract FILE [-o DIR] [--force]`: every entry of every
//! container to its own file — bundle entries as `<file name>[.<member>].
//! <index>.<entry ID>`, OffloadBinary images as `<file name>[.<member>].
//! <index>.<triple>[-<arch>][.<ext>]` (index counted across every container
//! of the file, in file order, so no two outputs share a name), every part
//! made safe as a file name. The library plans it
//! (`clangoffload_bundler_extract`): names and all.
//!
//! `DIR` is created when missing. Files are created exclusively: an existing
//! file is an error, found before anything is written, unless `--force`
//! asks to overwrite.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::Failure;
use crate::ffi::job::Job;
use crate::io::os_message;
use crate::stdio::outln;

const USAGE: &str = "usage: clangoffload extract FILE [-o DIR] [--force]";

struct Args<'a> {
    file: &'a str,
    dir: PathBuf,
    force: bool,
}

fn parse(args: &[String]) -> Result<Args<'_>, Failure> {
    let mut file = None;
    let mut dir = None;
    let mut force = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-o" => dir = Some(rest.next().ok_or_else(|| Failure(USAGE.into()))?),
            "--force" | "-f" => force = true,
            _ if file.is_none() => file = Some(arg.as_str()),
            _ => return Err(Failure(USAGE.into())),
        }
    }
    Ok(Args {
        file: file.ok_or_else(|| Failure(USAGE.into()))?,
        dir: PathBuf::from(dir.map_or(".", String::as_str)),
        force,
    })
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    let input = super::open(args.file)?;
    let options = super::bundler::any_file(args.file)?;
    let job = Job::extract(program, input.data(), &options).map_err(Failure)?;
    let outputs = job.outputs();
    let paths: Vec<PathBuf> = outputs
        .iter()
        .map(|o| args.dir.join(String::from_utf8_lossy(o.name).as_ref()))
        .collect();
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| Failure(format!("'{}': {}", args.dir.display(), os_message(&e))))?;
    if !args.force {
        if let Some(taken) = paths.iter().find(|p| p.symlink_metadata().is_ok()) {
            return Err(Failure(format!(
                "'{}': file exists; nothing was written (--force overwrites)",
                taken.display()
            )));
        }
    }
    for (i, path) in paths.iter().enumerate() {
        let out = create(path, args.force)?;
        if let Err(e) = job.write(i, &out, &[&input]) {
            // No partial file is left behind unannounced.
            drop(out);
            let _ = std::fs::remove_file(path);
            return Err(Failure(format!(
                "'{}': {e}; removed, {i} of {} files written",
                path.display(),
                paths.len()
            )));
        }
        outln!("{}", path.display())?;
    }
    // Damage found on the way, reported once what could be read is written.
    job.failure()
        .map_or(Ok(()), |message| Err(Failure(message.into())))
}

/// Creates `path` for writing: exclusively unless `force`.
fn create(path: &Path, force: bool) -> Result<File, Failure> {
    let mut options = OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options
        .open(path)
        .map_err(|e| Failure(format!("'{}': {}", path.display(), os_message(&e))))
}
