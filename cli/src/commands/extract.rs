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
//! Containers are extracted on `N` threads (default: one per core), each
//! streaming two compressed bundles at once
//! (`clangoffload_extraction_stream`): their bytes go to the files as they
//! are decoded, and their hashes are checked side by side; memory holds
//! the bundles in flight (two per thread), never the file's. The files of a container that fails (damage, a wrong hash) are
//! removed, and the message says which outputs. Paths, warnings and errors
//! are printed in file order, as one thread would print them.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use super::Failure;
use crate::ffi::c::clangoffload_extraction_container as Container;
use crate::ffi::job::{Extraction, Streamer};
use crate::io::{os_message, Input};
use crate::stdio::{err, outln};

/// Compressed bundles each thread hashes side by side, read back from the
/// files written once each is decoded (one at a time, so memory is the
/// largest bundle per thread): eight fill AVX-512's 256-bit vectors (the
/// library takes fewer where the processor hashes fewer at once).
const LANES: usize = 8;

struct Args<'a> {
    file: &'a str,
    dir: PathBuf,
    force: bool,
    threads: Option<usize>,
    memory_budget: Option<&'a str>,
    /// Archives (files, directories) of a split host, in place of those its
    /// markers name.
    kpack_paths: Vec<&'a str>,
}

impl Args<'_> {
    /// The threads asked for, or one per core.
    fn threads(&self) -> usize {
        self.threads
            .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
            .unwrap_or(1)
    }
}

/// A thread count: a positive number.
fn threads(n: Option<&str>) -> Option<usize> {
    n.and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0)
}

fn parse(args: &[String]) -> Result<Args<'_>, Failure> {
    let usage = || Failure(crate::help::usage(crate::help::EXTRACT));
    let mut parsed = Args {
        file: "",
        dir: PathBuf::from("."),
        force: false,
        threads: None,
        memory_budget: None,
        kpack_paths: Vec::new(),
    };
    let mut file = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-o" => parsed.dir = PathBuf::from(rest.next().ok_or_else(usage)?),
            "--force" | "-f" => parsed.force = true,
            "--memory-budget" => parsed.memory_budget = Some(rest.next().ok_or_else(usage)?),
            "--kpack-path" => parsed.kpack_paths.push(rest.next().ok_or_else(usage)?),
            _ if arg.starts_with("--kpack-path=") => {
                parsed.kpack_paths.extend(arg.strip_prefix("--kpack-path="));
            }
            _ if arg.starts_with("--memory-budget=") => {
                parsed.memory_budget = arg.strip_prefix("--memory-budget=");
            }
            "-j" | "--jobs" => {
                parsed.threads = Some(threads(rest.next().map(String::as_str)).ok_or_else(usage)?);
            }
            _ if arg.starts_with("--jobs=") || (arg.starts_with("-j") && arg.len() > 2) => {
                let n = arg.strip_prefix("--jobs=").or_else(|| arg.get(2..));
                parsed.threads = Some(threads(n).ok_or_else(usage)?);
            }
            _ if file.is_none() => file = Some(arg.as_str()),
            _ => return Err(usage()),
        }
    }
    parsed.file = file.ok_or_else(usage)?;
    Ok(parsed)
}

/// Writes the ELF and PTX images of the CUDA fat binaries (if any) under
/// the names cuobjdump gives them, and prints the paths written; every
/// image is tried. Returns why each one that was not written was not, and
/// why a damaged fat binary could not be read, located in the file.
fn extract_cuda(
    args: &Args<'_>,
    input: &Input,
    cuda: Option<&crate::ffi::cuda::CudaFatbins<'_>>,
    options: &crate::ffi::job::Options<'_>,
) -> Result<Vec<String>, Failure> {
    let Some(cuda) = cuda else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| Failure(format!("'{}': {}", args.dir.display(), os_message(&e))))?;
    let threads = args.threads();
    let mut errors = Vec::new();
    let images = super::cuda::extract(
        cuda,
        input,
        &args.dir,
        args.force,
        options.max_size,
        threads,
    )?;
    for image in images {
        match image.error {
            None => outln!("{}", image.path.display())?,
            Some(e) => errors.push(format!(
                "'{}': {e} ('{}' not written)",
                args.file,
                image.path.display()
            )),
        }
    }
    errors.extend(
        cuda.fault()
            .map(|fault| format!("'{}': {fault}", args.file)),
    );
    Ok(errors)
}

/// The run's result: every error one line, in file order (the last is
/// the failure, which the caller prints).
pub fn outcome(program: &str, errors: &[String]) -> Result<(), Failure> {
    match errors.split_last() {
        None => Ok(()),
        Some((last, before)) => {
            for e in before {
                crate::stdio::errln!("{program}: error: {e}");
            }
            Err(Failure(last.clone()))
        }
    }
}

/// What writing one container did, to be printed in its turn.
#[derive(Default)]
struct Done {
    /// Warnings and verbose reports, as printed.
    notes: String,
    /// The paths written, in order.
    written: Vec<PathBuf>,
    /// Why its outputs were not written.
    error: Option<String>,
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    let input = super::open(args.file)?;
    let options = super::bundler::any_file(args.file)?;
    if crate::ffi::kpack::is_kpack(input.data()) {
        let errors = super::kpack::extract(
            args.file,
            input.data(),
            &args.dir,
            args.force,
            options.max_size,
        )?;
        return outcome(program, &errors);
    }
    let split = super::kpack::read_through(args.file, input.data(), &args.kpack_paths)?;
    if let Some((through, archives)) = split {
        let threads = args.threads();
        let errors = super::kpack::extract_host(
            args.file,
            &through,
            &archives,
            &args.dir,
            args.force,
            options.max_size,
            threads,
        )?;
        return outcome(program, &errors);
    }
    let cuda = super::cuda::read(args.file, input.data())?;
    let budget = crate::contents::memory_budget(args.memory_budget)?;
    let extraction = match Extraction::new(program, &input, &options) {
        Ok(mut extraction) => {
            if budget.is_some() {
                extraction.set_memory_budget(budget);
            }
            extraction
        }
        // A file of CUDA fat binaries only is no bundle: not an error here.
        Err(_) if cuda.is_some() => {
            return outcome(
                program,
                &extract_cuda(&args, &input, cuda.as_ref(), &options)?,
            )
        }
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
    let threads = args.threads().clamp(1, containers.len().max(1));
    let shared = Shared {
        next: AtomicUsize::new(0),
        ended: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        results: Mutex::new((0..containers.len()).map(|_| None).collect()),
        changed: Condvar::new(),
    };
    let context = Context {
        program,
        input: &input,
        extraction: &extraction,
        containers: &containers,
        paths: &paths,
        force: args.force,
        shared: &shared,
    };
    let mut errors = Vec::new();
    std::thread::scope(|scope| -> Result<(), Failure> {
        for _ in 0..threads {
            let context = &context;
            scope.spawn(move || context.work());
        }
        // Print each container's paths and notes once it and every one
        // before it are done; a container never handed out (the run
        // stopped) is skipped once every worker has ended.
        let mut printed = 0;
        let mut results = shared.results.lock().map_err(|_| panicked())?;
        while printed < containers.len() {
            match results.get_mut(printed).and_then(Option::take) {
                Some(done) => {
                    err!("{}", done.notes);
                    for path in &done.written {
                        outln!("{}", path.display())?;
                    }
                    errors.extend(done.error);
                    printed = printed.saturating_add(1);
                }
                None if shared.finished(threads) => printed = printed.saturating_add(1),
                None => results = shared.changed.wait(results).map_err(|_| panicked())?,
            }
        }
        Ok(())
    })?;
    // Damage found on the way, reported once what could be read is written.
    errors.extend(extraction.failures().iter().cloned());
    errors.extend(extract_cuda(&args, &input, cuda.as_ref(), &options)?);
    outcome(program, &errors)
}

fn panicked() -> Failure {
    Failure("internal error: a worker thread panicked".into())
}

/// What the workers share with the printer.
struct Shared {
    /// The next container to hand out.
    next: AtomicUsize,
    /// How many workers have ended.
    ended: AtomicUsize,
    /// An output could not be written: hand out no more.
    stop: AtomicBool,
    /// What each container's extraction did, until printed.
    results: Mutex<Vec<Option<Done>>>,
    changed: Condvar,
}

impl Shared {
    /// Whether every worker has ended.
    fn finished(&self, threads: usize) -> bool {
        self.ended.load(Ordering::SeqCst) >= threads
    }
}

/// What every worker shares.
struct Context<'a, 'data> {
    program: &'a str,
    input: &'a Input,
    extraction: &'a Extraction<'data>,
    containers: &'a [Container],
    paths: &'a [PathBuf],
    force: bool,
    shared: &'a Shared,
}

impl Context<'_, '_> {
    /// One worker: streams containers until none is left.
    fn work(&self) {
        let mut worker = Worker {
            context: self,
            open: HashMap::new(),
            reading: HashMap::new(),
            created: HashSet::new(),
            current: None,
            notes: HashMap::new(),
        };
        self.extraction
            .stream(self.program, self.input, LANES, &mut worker);
        // Under the lock, so that the printer cannot miss the wake-up
        // between its check and its wait.
        let _results = self.shared.results.lock();
        self.shared.ended.fetch_add(1, Ordering::SeqCst);
        self.shared.changed.notify_all();
    }

    /// Records what extracting container `index` did.
    fn record(&self, index: usize, done: Done) {
        if let Ok(mut results) = self.shared.results.lock() {
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(done);
            }
        }
        self.shared.changed.notify_all();
    }

    /// The message for container `index`'s outputs that are not written.
    fn not_written(&self, index: usize) -> String {
        let container = self.containers.get(index);
        let first = container.map_or(0, |c| c.first_output);
        let count = container.map_or(0, |c| c.output_count);
        format!(
            "outputs {}..{} of the container at offset {:#x} not written",
            first,
            first.saturating_add(count),
            container.map_or(0, |c| c.offset)
        )
    }

    /// Output `output`'s path.
    fn path(&self, output: usize) -> &Path {
        self.paths.get(output).map_or(Path::new(""), |p| p)
    }

    /// The container output `output` belongs to.
    fn container_of(&self, output: usize) -> usize {
        self.containers
            .partition_point(|c| c.first_output.saturating_add(c.output_count) <= output)
    }

    fn outputs(&self, index: usize) -> std::ops::Range<usize> {
        let container = self.containers.get(index);
        let first = container.map_or(0, |c| c.first_output);
        first..first.saturating_add(container.map_or(0, |c| c.output_count))
    }
}

/// Files a worker keeps open at once: outputs come one after the other
/// within a container, and a container may have many thousands.
const OPEN_FILES: usize = 16;

/// One worker's files and held notes.
struct Worker<'a, 'b, 'data> {
    context: &'a Context<'b, 'data>,
    /// Each open output's file.
    open: HashMap<usize, File>,
    /// Outputs open to be read back (their bundle's hash is checked from
    /// them once it is decoded).
    reading: HashMap<usize, File>,
    /// The outputs created so far, of the containers in flight.
    created: HashSet<usize>,
    /// The container last handed out, whose notes come next.
    current: Option<usize>,
    notes: HashMap<usize, String>,
}

impl Worker<'_, '_, '_> {
    /// Output `output`'s file, open for writing: created (exclusively
    /// unless `--force`) on its first bytes, opened again to append if it
    /// was closed to keep few open.
    fn file(&mut self, output: usize) -> Result<&mut File, String> {
        let path = self.context.path(output);
        if !self.open.contains_key(&output) {
            if self.open.len() >= OPEN_FILES {
                self.open.clear();
            }
            let file = if self.created.insert(output) {
                crate::io::create(path, self.context.force)?
            } else {
                OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("'{}': {}", path.display(), os_message(&e)))?
            };
            self.open.insert(output, file);
        }
        self.open
            .get_mut(&output)
            .ok_or_else(|| format!("'{}': not open", path.display()))
    }

    /// Closes container `index`'s files: removing those created if
    /// `remove`, else creating those that got no bytes (empty outputs).
    fn close(&mut self, index: usize, remove: bool) -> Result<(), String> {
        let mut result = Ok(());
        for output in self.context.outputs(index) {
            self.open.remove(&output);
            let created = self.created.remove(&output);
            let path = self.context.path(output);
            if remove {
                if created {
                    let _ = std::fs::remove_file(path);
                }
            } else if !created && result.is_ok() {
                result = crate::io::create(path, self.context.force).map(drop);
                self.created.insert(output);
            }
        }
        result
    }

    /// Ends container `index` with `error`, its files removed; `fatal`
    /// stops the whole run (an output that cannot be written).
    fn fail(&mut self, index: usize, error: String, fatal: bool) {
        let _ = self.close(index, true);
        if fatal {
            self.context.shared.stop.store(true, Ordering::SeqCst);
        }
        let done = Done {
            notes: self.notes.remove(&index).unwrap_or_default(),
            written: Vec::new(),
            error: Some(format!(
                "{error} ({}; removed)",
                self.context.not_written(index)
            )),
        };
        self.context.record(index, done);
    }
}

impl Streamer for Worker<'_, '_, '_> {
    fn next(&mut self) -> Option<usize> {
        let shared = self.context.shared;
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        let index = shared.next.fetch_add(1, Ordering::SeqCst);
        if index >= self.context.containers.len() {
            return None;
        }
        self.current = Some(index);
        Some(index)
    }

    fn write(&mut self, output: usize, bytes: &[u8]) -> bool {
        let written = self
            .file(output)
            .and_then(|file| file.write_all(bytes).map_err(|e| os_message(&e)));
        match written {
            Ok(()) => true,
            Err(e) => {
                let path = self.context.path(output);
                let error = if e.starts_with('\'') {
                    e
                } else {
                    format!("'{}': {e}", path.display())
                };
                let index = self.context.container_of(output);
                self.fail(index, error, true);
                false
            }
        }
    }

    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
        if !self.reading.contains_key(&output) {
            if self.reading.len() >= OPEN_FILES {
                self.reading.clear();
            }
            let Ok(file) = File::open(self.context.path(output)) else {
                return false;
            };
            self.reading.insert(output, file);
        }
        self.reading.get_mut(&output).is_some_and(|file| {
            file.seek(SeekFrom::Start(offset)).is_ok() && file.read_exact(bytes).is_ok()
        })
    }

    fn done(&mut self, index: usize, error: Option<String>) {
        for output in self.context.outputs(index) {
            self.reading.remove(&output);
        }
        match error {
            Some(error) => self.fail(index, error, false),
            None => match self.close(index, false) {
                Err(error) => self.fail(index, error, true),
                Ok(()) => {
                    let done = Done {
                        notes: self.notes.remove(&index).unwrap_or_default(),
                        written: self
                            .context
                            .paths
                            .get(self.context.outputs(index))
                            .unwrap_or_default()
                            .to_vec(),
                        error: None,
                    };
                    self.context.record(index, done);
                }
            },
        }
        // Its input bytes are no longer needed: memory holds the
        // containers in flight, not the file read so far.
        if let Some(container) = self.context.containers.get(index) {
            self.context.input.release(container.offset, container.size);
        }
    }

    fn note(&mut self, text: &str) {
        let index = self.current.unwrap_or(0);
        self.notes.entry(index).or_default().push_str(text);
    }
}
