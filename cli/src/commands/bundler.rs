//! The clang-offload-bundler personality: `-list`, `-unbundle` and bundling of
//! binary bundles with LLVM 22's flags, checks and messages.

use crate::stdio::{errln, out, outln};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use clangoffload_capi as c;

use super::Failure;
use crate::contents::max_decompressed_size;
use crate::ffi::job::{self, Job, Options};
use crate::flags::{self, bundler::HELP, bundler::OPTIONS, Parsed};
use crate::io::{file_identity, os_message, Input};

/// The validated command line.
struct Args<'a> {
    /// How we were invoked: LLVM prefixes its messages with it.
    argv0: &'a str,
    file_type: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    /// `-targets` as given.
    targets: Vec<String>,
    align: u64,
    /// `CLANGOFFLOAD_ALLOW_MISSING_BUNDLES` and the other job flags.
    flags: u32,
    /// `-###`: print the llvm-objcopy command an object bundle takes
    /// instead of writing it.
    dry_run: bool,
    unbundle: bool,
    config: Config,
}

/// What the environment and `-compress`/`-verbose`/`-compression-level` say,
/// read the way LLVM's bundler config reads them.
#[derive(Debug, Clone, Copy)]
struct Config {
    compress: bool,
    verbose: bool,
    /// The requested level, if any (printed as given; zstd clamps it).
    level: Option<i32>,
    version: u16,
}

impl Config {
    /// Reads the environment (unless `OFFLOAD_BUNDLER_IGNORE_ENV_VAR=1`),
    /// printing LLVM's warnings for bad values, then lets explicit options
    /// override it.
    fn read(parsed: &Parsed) -> Config {
        let var = |name| std::env::var(name).ok();
        let ignore = var("OFFLOAD_BUNDLER_IGNORE_ENV_VAR").as_deref() == Some("1");
        let env = |name| if ignore { None } else { var(name) };
        let mut level = None;
        if let Some(text) = env("OFFLOAD_BUNDLER_COMPRESSION_LEVEL") {
            match text.parse::<i32>() {
                Ok(n) if !text.starts_with('+') => level = Some(n),
                _ => errln!(
                    "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: {text}. Ignoring it."
                ),
            }
        }
        let mut version = 3;
        if let Some(text) = env("COMPRESSED_BUNDLE_FORMAT_VERSION") {
            match text.parse::<u16>() {
                Ok(v @ (2 | 3)) if !text.starts_with('+') => version = v,
                Ok(_) if !text.starts_with('+') => errln!(
                    "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {text}. Valid values are 2 or 3. Using default version 3."
                ),
                _ => errln!(
                    "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {text}. Using default version 3."
                ),
            }
        }
        let switch = |option, name| {
            if parsed.occurrences(option) > 0 {
                parsed.flag(option)
            } else {
                env(name).as_deref() == Some("1")
            }
        };
        if let Some(n) = parsed
            .last("compression-level")
            .and_then(|t| t.parse().ok())
        {
            level = Some(n);
        }
        Config {
            compress: switch("compress", "OFFLOAD_BUNDLER_COMPRESS"),
            verbose: switch("verbose", "OFFLOAD_BUNDLER_VERBOSE"),
            level,
            version,
        }
    }
}

/// Runs the tool; returns the process exit status.
pub fn main(argv0: &str, args: &[String]) -> i32 {
    let program = Path::new(argv0)
        .file_name()
        .map_or_else(|| argv0.to_owned(), |n| n.to_string_lossy().into_owned());
    let args = match flags::response::expand(args) {
        Ok(args) => args,
        Err(message) => {
            // LLVM prints why and goes on as if no option had been given.
            errln!("{message}");
            let none = Parsed::default();
            return finish(argv0, run(&none, argv0, Config::read(&none)));
        }
    };
    let (parsed, errors) = flags::parse(OPTIONS, &args, argv0);
    // Help and version act while the command line is read, before any check.
    match parsed.first_flag(flags::IMMEDIATE) {
        Some("version") => {
            let _ = outln!(
                "clang-offload-bundler version 22.1.8 (clangoffload {})",
                env!("CARGO_PKG_VERSION")
            );
            return 0;
        }
        Some(help) => {
            if let Some((_, text)) = HELP.iter().find(|(h, _)| *h == help) {
                let _ = out!("{text}");
            }
            return 0;
        }
        None => {}
    }
    for e in &errors {
        errln!("{program}: {e}");
    }
    let missing_type = parsed.last("type").is_none();
    if missing_type {
        errln!("{program}: for the --type option: must be specified at least once!");
    }
    if !errors.is_empty() || missing_type {
        return 1;
    }
    // `-h` only acts once the command line is valid.
    if let Some((_, text)) = HELP.iter().find(|(h, _)| *h == "h" && parsed.flag(h)) {
        let _ = out!("{text}");
        return 0;
    }
    let config = Config::read(&parsed);
    finish(argv0, run(&parsed, argv0, config))
}

/// The exit status, with the error said as LLVM says it.
fn finish(argv0: &str, result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(Failure(message)) => {
            errln!("{argv0}: error: {message}");
            1
        }
    }
}

fn run(parsed: &Parsed, argv0: &str, config: Config) -> Result<(), Failure> {
    let inputs = merge_deprecated(parsed, "input", "inputs", argv0)?;
    let outputs = merge_deprecated(parsed, "output", "outputs", argv0)?;
    let file_type = parsed.last("type").unwrap_or_default().to_owned();
    let unbundle = parsed.flag("unbundle");
    if parsed.flag("list") {
        if unbundle {
            return fail("-unbundle and -list cannot be used together");
        }
        if inputs.len() != 1 {
            return fail("only one input file supported for -list");
        }
        if !outputs.is_empty() {
            return fail("-outputs option is invalid for -list");
        }
        if parsed.occurrences("targets") > 0 {
            return fail("-targets option is invalid for -list");
        }
        let input = inputs.first().map_or("", String::as_str);
        return list(argv0, &file_type, input, config);
    }
    if parsed.flag("check-input-archive") {
        if !unbundle {
            return fail("-check-input-archive cannot be used while bundling");
        }
        if file_type != "a" {
            return fail("-check-input-archive can only be used for unbundling archives (-type=a)");
        }
    }
    if outputs.is_empty() {
        return fail("no output file specified!");
    }
    if parsed.occurrences("targets") == 0 {
        return fail("for the --targets option: must be specified at least once!");
    }
    let targets = parsed.list("targets").to_vec();
    if unbundle {
        if inputs.len() != 1 {
            return fail("only one input file supported in unbundling mode");
        }
        if outputs.len() != targets.len() {
            return fail("number of output files and targets should match in unbundling mode");
        }
    } else {
        if file_type == "a" {
            return fail("Archive files are only supported for unbundling");
        }
        if outputs.len() != 1 {
            return fail("only one output file supported in bundling mode");
        }
        if inputs.len() != targets.len() {
            return fail("number of input files and targets should match in bundling mode");
        }
    }
    let names: Vec<&str> = targets.iter().map(String::as_str).collect();
    job::check_targets(argv0, &names, unbundle).map_err(Failure)?;
    let flag = |name, bit| if parsed.flag(name) { bit } else { 0 };
    let args = Args {
        argv0,
        file_type,
        inputs,
        outputs,
        targets,
        align: parsed
            .last("bundle-align")
            .map_or(Ok(1), str::parse)
            .unwrap_or(1),
        flags: flag(
            "allow-missing-bundles",
            c::CLANGOFFLOAD_ALLOW_MISSING_BUNDLES,
        ) | flag("hip-openmp-compatible", c::CLANGOFFLOAD_HIP_OPENMP)
            | flag("check-input-archive", c::CLANGOFFLOAD_CHECK_INPUT_ARCHIVE)
            | config.decoding_flags()?,
        dry_run: parsed.flag("###"),
        unbundle,
        config,
    };
    if args.unbundle {
        unbundle_files(&args)
    } else {
        bundle_files(&args)
    }
}

fn warn(argv0: &str, message: &str) {
    errln!("{argv0}: warning: {message}");
}

fn fail<T>(message: &str) -> Result<T, Failure> {
    Err(Failure(message.to_owned()))
}

/// `-input` plus the deprecated comma-separated `-inputs` (likewise outputs).
fn merge_deprecated(
    parsed: &Parsed,
    name: &str,
    deprecated: &str,
    argv0: &str,
) -> Result<Vec<String>, Failure> {
    let mut values = parsed.list(name).to_vec();
    let old = parsed.list(deprecated);
    if !old.is_empty() {
        if !values.is_empty() {
            return Err(Failure(format!(
                "-{deprecated} and -{name} cannot be used together, use only -{name} instead"
            )));
        }
        warn(
            argv0,
            &format!("-{deprecated} is deprecated, use -{name} instead"),
        );
        values = old.to_vec();
    }
    Ok(values)
}

/// Opens an input; read whole when one of `outputs` is the same file, since
/// creating that output truncates it.
fn open_input(path: &str, outputs: &[String]) -> Result<Input, Failure> {
    let id = file_identity(Path::new(path));
    let clobbered = id.is_some() && outputs.iter().any(|o| file_identity(Path::new(o)) == id);
    Input::open(Path::new(path), clobbered)
        .map_err(|e| Failure(format!("'{path}': {}", os_message(&e))))
}

fn create_output(path: &str) -> Result<File, Failure> {
    File::create(path).map_err(|e| Failure(format!("'{path}': {}", os_message(&e))))
}

fn list(argv0: &str, file_type: &str, path: &str, config: Config) -> Result<(), Failure> {
    let input = open_input(path, &[])?;
    let options = Options {
        file_type,
        targets: &[],
        flags: config.decoding_flags()?,
        max_size: max_decompressed_size()?,
        input_name: path,
    };
    let listed = Job::list(argv0, &input, &options).map_err(Failure)?;
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    for (_, id) in listed.listed() {
        out.write_all(id)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Writes each output as the library's plan says; then reports the error
/// LLVM reports after writing what it found.
fn unbundle_files(args: &Args) -> Result<(), Failure> {
    let path = args.inputs.first().map_or("", String::as_str);
    let input = open_input(path, &args.outputs)?;
    let targets: Vec<&str> = args.targets.iter().map(String::as_str).collect();
    let options = Options {
        file_type: &args.file_type,
        targets: &targets,
        flags: args.flags,
        max_size: max_decompressed_size()?,
        input_name: path,
    };
    let job = Job::unbundle(args.argv0, &input, &options).map_err(Failure)?;
    for (i, (path, output)) in args.outputs.iter().zip(job.outputs()).enumerate() {
        if output.written {
            write_output(&job, i, path, &[&input])?;
        }
    }
    job.failure()
        .map_or(Ok(()), |message| Err(Failure(message.into())))
}

/// Creates `path` and writes output `i` of `job` to it.
fn write_output(job: &Job, i: usize, path: &str, inputs: &[&Input]) -> Result<(), Failure> {
    let out = create_output(path)?;
    job.write(i, &out, inputs)
        .map_err(|e| Failure(format!("'{path}': {e}")))
}

fn bundle_files(args: &Args) -> Result<(), Failure> {
    // An input that is also the output is read now: creating the output
    // truncates it.
    let inputs = args
        .inputs
        .iter()
        .map(|p| open_input(p, &args.outputs))
        .collect::<Result<Vec<_>, _>>()?;
    let data: Vec<&[u8]> = inputs.iter().map(Input::data).collect();
    let host = args.targets.iter().position(|t| t.starts_with("host-"));
    let host_object = host
        .and_then(|h| data.get(h))
        .and_then(|d| job::detect(d))
        .is_some_and(|k| k.is_object);
    if args.dry_run && args.file_type == "o" && host_object {
        return print_objcopy_command(args, host.unwrap_or(0));
    }
    let targets: Vec<&str> = args.targets.iter().map(String::as_str).collect();
    let options = Options {
        file_type: &args.file_type,
        targets: &targets,
        flags: args.flags & c::CLANGOFFLOAD_VERBOSE,
        max_size: 0,
        input_name: host
            .and_then(|h| args.inputs.get(h))
            .map_or("", String::as_str),
    };
    let compression = if args.config.compress {
        Some((
            compression_method()?,
            args.config.version,
            args.config.level,
        ))
    } else {
        None
    };
    let job = Job::bundle(args.argv0, &data, &options, args.align, compression).map_err(Failure)?;
    let path = args.outputs.first().map_or("", String::as_str);
    let written = write_output(&job, 0, path, &inputs.iter().collect::<Vec<_>>());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// `-###` for an object bundle: LLVM 22 prints the llvm-objcopy command that
/// would add the entry sections (the host's from a temporary file holding
/// the host marker) and leaves the output empty. We add the sections
/// ourselves, byte-identically, so the command describes what we would do.
fn print_objcopy_command(args: &Args, host: usize) -> Result<(), Failure> {
    let output = args.outputs.first().map_or("", String::as_str);
    create_output(output)?;
    let objcopy = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("llvm-objcopy")))
        .filter(|p| p.exists())
        .map_or_else(|| "llvm-objcopy".to_owned(), |p| p.display().to_string());
    let marker =
        std::env::temp_dir().join(format!("clang-offload-bundler-{}.tmp", std::process::id()));
    let mut line = format!("\"{objcopy}\"");
    for (i, target) in args.targets.iter().enumerate() {
        let id = job::normalize(target).map_err(Failure)?;
        let file = if i == host {
            marker.display().to_string()
        } else {
            args.inputs.get(i).cloned().unwrap_or_default()
        };
        line.push_str(&format!(
            " \"--add-section=__CLANG_OFFLOAD_BUNDLE__{id}={file}\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__{id}=readonly,exclude\""
        ));
    }
    line.push_str(&format!(
        " \"--\" \"{}\" \"{}\"",
        args.inputs.get(host).map_or("", String::as_str),
        output
    ));
    errln!("{line}");
    Ok(())
}

/// zstd, as LLVM 22 writes, unless `CLANGOFFLOAD_COMPRESSION_METHOD=zlib` asks
/// for what an LLVM built without zstd writes (our extension: LLVM has no
/// switch for it).
fn compression_method() -> Result<u32, Failure> {
    match std::env::var("CLANGOFFLOAD_COMPRESSION_METHOD").as_deref() {
        Err(_) | Ok("zstd") => Ok(c::CLANGOFFLOAD_COMPRESSION_ZSTD),
        Ok("zlib") => Ok(c::CLANGOFFLOAD_COMPRESSION_ZLIB),
        Ok(other) => Err(Failure(format!(
            "CLANGOFFLOAD_COMPRESSION_METHOD={other}: expected zlib or zstd"
        ))),
    }
}

/// `CLANGOFFLOAD_SKIP_HASH_CHECK=1` accepts a wrong hash, as LLVM does.
pub fn hash_flags() -> u32 {
    if std::env::var("CLANGOFFLOAD_SKIP_HASH_CHECK").is_ok_and(|v| v == "1") {
        c::CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK
    } else {
        0
    }
}

impl Config {
    /// The job flags for decoding: the hash policy and `-verbose`.
    fn decoding_flags(&self) -> Result<u32, Failure> {
        Ok(hash_flags()
            | if self.verbose {
                c::CLANGOFFLOAD_VERBOSE
            } else {
                0
            })
    }
}

/// How `list` and `extract` read a file of any kind: every bundle in it,
/// with the hash policy and decompression limit from the environment.
pub fn any_file(file: &str) -> Result<Options<'_>, Failure> {
    Ok(Options {
        file_type: "",
        targets: &[],
        flags: hash_flags(),
        max_size: max_decompressed_size()?,
        input_name: file,
    })
}
