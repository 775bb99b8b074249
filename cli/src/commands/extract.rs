//! `clangoffload extract FILE [-o DIR] [--force] [-j N]`: every entry of
//! every container to its own file — bundle entries as `<file name>
//! [.<member>].<index>.<entry ID>`, OffloadBinary images as `<file name>
//! [.<member>].<index>.<triple>[-<arch>][.<ext>]` (index counted across every
//! container of the file, in file order, so no two outputs share a name),
//! every part made safe as a file name. The library finds and names them
//! (`clangoffload_bundler_extraction`) and plans one container at a time.
//!
//! `DIR` is created when missing. Files are created exclusively: an existing
//! file is an error, found before anything is written, unless `--force`
//! asks to overwrite.
//!
//! CUDA fat binaries' ELF and PTX images are written as
//! `cuobjdump -xelf all -xptx all` names them (docs/cli.md).
//!
//! Containers are decoded on `N` threads (default: one per core), each
//! written as soon as it is decoded and then released, so memory holds at
//! most `N` decoded containers, never the whole file. Paths, warnings and
//! errors are printed in file order, as one thread would print them.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::Failure;
use crate::ffi::c::clangoffload_extraction_container as Container;
use crate::ffi::job::Extraction;
use crate::io::os_message;
use crate::stdio::{err, outln};

const USAGE: &str = "usage: clangoffload extract FILE [-o DIR] [--force] [-j THREADS]";

struct Args<'a> {
    file: &'a str,
    dir: PathBuf,
    force: bool,
    threads: Option<usize>,
}

fn parse(args: &[String]) -> Result<Args<'_>, Failure> {
    let usage = || Failure(USAGE.into());
    let mut parsed = Args {
        file: "",
        dir: PathBuf::from("."),
        force: false,
        threads: None,
    };
    let mut file = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-o" => parsed.dir = PathBuf::from(rest.next().ok_or_else(usage)?),
            "--force" | "-f" => parsed.force = true,
            "-j" | "--jobs" => {
                let n = rest.next().and_then(|n| n.parse::<usize>().ok());
                parsed.threads = Some(n.filter(|&n| n > 0).ok_or_else(usage)?);
            }
            _ if file.is_none() => file = Some(arg.as_str()),
            _ => return Err(usage()),
        }
    }
    parsed.file = file.ok_or_else(usage)?;
    Ok(parsed)
}

/// Writes the ELF and PTX images of the CUDA fat binaries (if any) under
/// the names cuobjdump gives them, and prints their paths; a damaged fat
/// binary fails after what could be read is written.
fn extract_cuda(
    args: &Args<'_>,
    cuda: Option<&crate::ffi::cuda::CudaFatbins<'_>>,
    options: &crate::ffi::job::Options<'_>,
) -> Result<(), Failure> {
    let Some(cuda) = cuda else {
        return Ok(());
    };
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| Failure(format!("'{}': {}", args.dir.display(), os_message(&e))))?;
    let threads = args
        .threads
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);
    for path in super::cuda::extract(cuda, &args.dir, args.force, options.max_size, threads)? {
        outln!("{}", path.display())?;
    }
    match cuda.fault() {
        Some(fault) => Err(Failure(format!("'{}': {fault}", args.file))),
        None => Ok(()),
    }
}

/// What writing one container did, to be printed in its turn.
#[derive(Default)]
struct Done {
    /// Warnings and verbose reports, as printed.
    notes: String,
    /// The paths written, in order.
    written: Vec<PathBuf>,
    /// Why the rest of its outputs were not written.
    error: Option<String>,
    /// Whether the error ends the whole extraction (an output that cannot
    /// be written) rather than this container alone (damage in it).
    fatal: bool,
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    let input = super::open(args.file)?;
    let options = super::bundler::any_file(args.file)?;
    let cuda = super::cuda::read(args.file, input.data())?;
    let extraction = match Extraction::new(program, input.data(), &options) {
        Ok(extraction) => extraction,
        // A file of CUDA fat binaries only is no bundle: not an error here.
        Err(_) if cuda.is_some() => return extract_cuda(&args, cuda.as_ref(), &options),
        Err(e) => return Err(Failure(e)),
    };
    let paths: Vec<PathBuf> = extraction
        .output_names()
        .iter()
        .map(|name| args.dir.join(String::from_utf8_lossy(name).as_ref()))
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
    let containers = extraction.containers();
    let threads = args
        .threads
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
        .clamp(1, containers.len().max(1));
    let context = Context {
        program,
        input: &input,
        file: Path::new(args.file),
        extraction: &extraction,
        paths: &paths,
        force: args.force,
    };
    let mut errors = Vec::new();
    std::thread::scope(|scope| -> Result<(), Failure> {
        let mut pending = containers.iter().copied().enumerate();
        let mut in_flight = VecDeque::new();
        let mut stop = false;
        loop {
            while !stop && in_flight.len() < threads {
                let Some((index, container)) = pending.next() else {
                    break;
                };
                let context = &context;
                in_flight.push_back(scope.spawn(move || context.write(index, container)));
            }
            let Some(worker) = in_flight.pop_front() else {
                break;
            };
            let done = worker.join().unwrap_or_else(|_| Done {
                error: Some("internal error: a worker thread panicked".into()),
                fatal: true,
                ..Done::default()
            });
            err!("{}", done.notes);
            for path in &done.written {
                outln!("{}", path.display())?;
            }
            if let Some(error) = done.error {
                errors.push(error);
                // Damage in one container leaves the others to extract; an
                // output that cannot be written stops the rest.
                stop |= done.fatal;
            }
        }
        Ok(())
    })?;
    // Damage found on the way, reported once what could be read is written.
    if let Some(failure) = extraction.failure() {
        errors.push(failure.into());
    }
    if let Err(Failure(e)) = extract_cuda(&args, cuda.as_ref(), &options) {
        errors.push(e);
    }
    match errors.as_slice() {
        [] => Ok(()),
        [only] => Err(Failure(only.clone())),
        [first, rest @ ..] => {
            for e in rest {
                crate::stdio::errln!("{program}: error: {e}");
            }
            Err(Failure(first.clone()))
        }
    }
}

/// What every worker shares.
struct Context<'a, 'data> {
    program: &'a str,
    input: &'a crate::io::Input,
    file: &'a Path,
    extraction: &'a Extraction<'data>,
    paths: &'a [PathBuf],
    force: bool,
}

impl Context<'_, '_> {
    /// Decodes and writes container `index`; its job, and the decoded bytes
    /// it holds, are released before this returns.
    fn write(&self, index: usize, container: Container) -> Done {
        let first = container.first_output;
        let outputs = first..first.saturating_add(container.output_count);
        let (job, notes) = self.extraction.plan(self.program, index);
        let mut done = Done {
            notes,
            ..Done::default()
        };
        let not_written = |done: &Done| {
            format!(
                "outputs {}..{} of the container at offset {:#x} not written",
                outputs.start.saturating_add(done.written.len()),
                outputs.end,
                container.offset
            )
        };
        let job = match job {
            Ok(job) => job,
            Err(e) => {
                done.error = Some(format!("{e} ({})", not_written(&done)));
                return done;
            }
        };
        // A descriptor of this thread's own, so that copies on other threads
        // do not move its offset.
        let own = File::open(self.file).ok();
        let fds = [own.as_ref().map_or(-1, AsRawFd::as_raw_fd)];
        for (i, path) in self
            .paths
            .get(outputs.clone())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let written = create(path, self.force).and_then(|out| {
                job.write_from(i, &out, &fds).map_err(|e| {
                    // No partial file is left behind unannounced.
                    drop(out);
                    let _ = std::fs::remove_file(path);
                    format!("'{}': {e}; removed", path.display())
                })
            });
            if let Err(e) = written {
                done.error = Some(format!("{e} ({})", not_written(&done)));
                done.fatal = true;
                return done;
            }
            done.written.push(path.clone());
        }
        // Its input bytes are no longer needed: memory holds the containers
        // in flight, not the file read so far.
        drop(job);
        self.input.release(container.offset, container.size);
        done
    }
}

/// Creates `path` for writing: exclusively unless `force`.
fn create(path: &Path, force: bool) -> Result<File, String> {
    let mut options = OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options
        .open(path)
        .map_err(|e| format!("'{}': {}", path.display(), os_message(&e)))
}
