//! The clang-offload-bundler personality: `-list`, `-unbundle` and bundling of
//! binary bundles with LLVM 22's flags, checks and messages.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use super::{sniff, Failure, Sniffed};
use crate::abi::{self, Bundle, Entry};
use crate::contents::{compress_report, load, starts_with_container, Decoding, Loaded};
use crate::flags::{self, bundler::HELP, bundler::OPTIONS, Parsed};
use crate::io::{file_identity, os_message, write_zeros, Input, Payload};

/// The validated command line.
struct Args<'a> {
    /// How we were invoked: LLVM prefixes its messages with it.
    argv0: &'a str,
    file_type: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    /// `-targets` as given.
    targets: Vec<String>,
    /// `-targets` as the bundler writes and matches them.
    normalized: Vec<String>,
    /// Index of the host target, if one was given.
    host: Option<usize>,
    align: u64,
    allow_missing: bool,
    hip_openmp: bool,
    check_input_archive: bool,
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
                _ => eprintln!(
                    "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: {text}. Ignoring it."
                ),
            }
        }
        let mut version = 3;
        if let Some(text) = env("COMPRESSED_BUNDLE_FORMAT_VERSION") {
            match text.parse::<u16>() {
                Ok(v @ (2 | 3)) if !text.starts_with('+') => version = v,
                Ok(_) if !text.starts_with('+') => eprintln!(
                    "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {text}. Valid values are 2 or 3. Using default version 3."
                ),
                _ => eprintln!(
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
    let (parsed, errors) = flags::parse(OPTIONS, args, argv0);
    // Help and version act while the command line is read, before any check.
    match parsed.first_flag(flags::IMMEDIATE) {
        Some("version") => {
            println!(
                "clang-offload-bundler version 22.1.8 (clangoffload {})",
                env!("CARGO_PKG_VERSION")
            );
            return 0;
        }
        Some(help) => {
            if let Some((_, text)) = HELP.iter().find(|(h, _)| *h == help) {
                print!("{text}");
            }
            return 0;
        }
        None => {}
    }
    for e in &errors {
        eprintln!("{program}: {e}");
    }
    let missing_type = parsed.last("type").is_none();
    if missing_type {
        eprintln!("{program}: for the --type option: must be specified at least once!");
    }
    if !errors.is_empty() || missing_type {
        return 1;
    }
    // `-h` only acts once the command line is valid.
    if let Some((_, text)) = HELP.iter().find(|(h, _)| *h == "h" && parsed.flag(h)) {
        print!("{text}");
        return 0;
    }
    let config = Config::read(&parsed);
    match run(&parsed, argv0, config) {
        Ok(()) => 0,
        Err(Failure(message)) => {
            eprintln!("{argv0}: error: {message}");
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
        return list(argv0, &file_type, &inputs[0], config);
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
    let (normalized, host) = check_targets(&targets, unbundle)?;
    let args = Args {
        argv0,
        file_type,
        inputs,
        outputs,
        targets,
        normalized,
        host,
        align: parsed
            .last("bundle-align")
            .map_or(Ok(1), str::parse)
            .unwrap_or(1),
        allow_missing: parsed.flag("allow-missing-bundles"),
        hip_openmp: parsed.flag("hip-openmp-compatible"),
        check_input_archive: parsed.flag("check-input-archive"),
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
    eprintln!("{argv0}: warning: {message}");
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

const TARGET_FORMAT: &str = "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

/// LLVM's per-target checks, in its order; returns the normalised targets
/// and the host target's index.
fn check_targets(
    targets: &[String],
    unbundle: bool,
) -> Result<(Vec<String>, Option<usize>), Failure> {
    let mut normalized = Vec::with_capacity(targets.len());
    let mut hosts = 0usize;
    let mut host = None;
    let mut hip_only = true;
    for (i, target) in targets.iter().enumerate() {
        if targets[..i].contains(target) {
            return fail("Duplicate targets are not allowed");
        }
        let Ok((id, parts)) = abi::parse_entry_id(target) else {
            return fail(TARGET_FORMAT);
        };
        if !id.known_kind || !id.known_arch {
            let mut message = format!("invalid target '{target}'");
            if !id.known_kind {
                message += &format!(", unknown offloading kind '{}'", parts[0]);
            }
            if !id.known_arch {
                message += &format!(", unknown target triple '{}'", parts[1..5].join("-"));
            }
            return Err(Failure(message));
        }
        if parts[0] == "host" {
            hosts += 1;
            host = Some(i);
        }
        hip_only &= parts[0] == "hip" || parts[0] == "hipv4";
        normalized.push(abi::normalize_entry_id(target)?);
    }
    let texts: Vec<&str> = targets.iter().map(String::as_str).collect();
    if let Some((a, b)) = abi::find_conflict(&texts) {
        return Err(Failure(format!(
            "Cannot bundle inputs with conflicting targets: '{}' and '{}'",
            targets[a], targets[b]
        )));
    }
    if (!unbundle && !hip_only && hosts != 1) || (unbundle && hosts > 1) {
        return Err(Failure(format!(
            "expecting exactly one host target but got {hosts}"
        )));
    }
    Ok((normalized, host))
}

/// How `-type` says to read and write the files.
fn check_type(file_type: &str) -> Result<(), Failure> {
    match file_type {
        "bc" | "gch" | "ast" | "o" => Ok(()),
        _ if abi::text_comment(file_type).is_some() => Ok(()),
        "a" => Ok(()),
        other => Err(Failure(format!("'{other}': invalid file type specified"))),
    }
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

/// What an input holds for the bundler.
enum Contents<'a> {
    /// Bundles and compressed bundles (several when they lie back to back, as
    /// in a linked `.hip_fatbin`), decompressed; none for a file that holds no
    /// bundle (the bundler takes it to be the host's own file).
    Containers(Vec<Loaded<'a>>),
    /// A host object whose entries are sections (`-type=o`).
    Object(abi::ObjectBundle<'a>),
    /// A text bundle (maybe decompressed) and its markers' comment.
    Text(Loaded<'a>, u32),
}

/// Where an entry's payload comes from when it is written out.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// Bytes of the input file, copied from the file.
    File { offset: u64, len: u64 },
    /// Bytes in memory (a decompressed bundle's).
    Bytes(&'a [u8]),
    /// The host object without its bundle sections.
    HostObject(&'a abi::ObjectBundle<'a>),
}

/// An entry the unbundler may write: its ID and its payload.
struct Candidate<'a> {
    id: &'a [u8],
    source: Source<'a>,
}

fn read_contents<'a>(
    argv0: &str,
    file_type: &str,
    path: &str,
    input: &'a Input,
    config: Config,
) -> Result<Contents<'a>, Failure> {
    if file_type == "o" && sniff(input.data()) == Sniffed::Object {
        if !input.data().starts_with(b"\x7fELF") {
            return Err(Failure(format!(
                "'{path}': Mach-O host objects are not supported; only ELF"
            )));
        }
        return abi::ObjectBundle::parse(input.data())
            .map(Contents::Object)
            .map_err(|e| Failure(format!("'{path}': malformed object: {e}")));
    }
    let comment = abi::text_comment(file_type);
    if !starts_with_container(input.data()) {
        return Ok(match comment {
            Some(comment) => Contents::Text(Loaded::whole(input.data()), comment),
            None => Contents::Containers(Vec::new()),
        });
    }
    let decoding = Decoding {
        binary_only: comment.is_none(),
        ..Decoding::from_env(config.verbose)?
    };
    let warning = |message: &str| warn(argv0, &format!("'{path}': {message}"));
    let mut loaded = load(input.data(), &decoding, &warning)
        .map_err(|Failure(e)| Failure(format!("'{path}': {e}")))?;
    match comment {
        // A compressed text bundle: LLVM reads the first container only.
        Some(comment) if !loaded.is_empty() => Ok(Contents::Text(loaded.swap_remove(0), comment)),
        _ => Ok(Contents::Containers(loaded)),
    }
}

/// Parses a text bundle, strictly.
fn parse_text<'a>(
    path: &str,
    loaded: &'a Loaded,
    comment: u32,
) -> Result<abi::TextBundle<'a>, Failure> {
    abi::TextBundle::parse(loaded.bytes(), comment)
        .map_err(|e| Failure(format!("'{path}': malformed text bundle: {e}")))
}

/// Parses a loaded container as a bundle.
fn parse<'a>(path: &str, loaded: &'a Loaded) -> Result<Bundle<'a>, Failure> {
    Bundle::parse(loaded.bytes()).map_err(|e| {
        let place = match (loaded.compressed.is_some(), loaded.offset) {
            (false, 0) => String::new(),
            (false, at) => format!(" at offset {at:#x}"),
            (true, at) => format!(" in the compressed bundle at offset {at:#x}"),
        };
        Failure(format!("'{path}': malformed bundle{place}: {e}"))
    })
}

fn list(argv0: &str, file_type: &str, path: &str, config: Config) -> Result<(), Failure> {
    let input = open_input(path, &[])?;
    check_type(file_type)?;
    let mut out = std::io::stdout().lock();
    let mut print = |id: &[u8]| -> std::io::Result<()> {
        out.write_all(id)?;
        out.write_all(b"\n")
    };
    match read_contents(argv0, file_type, path, &input, config)? {
        Contents::Containers(contents) => {
            for loaded in &contents {
                // LLVM keys a binary bundle's entries by ID: a repeated one
                // is listed once.
                let mut seen = HashSet::new();
                for entry in parse(path, loaded)?.entries() {
                    if seen.insert(entry.id) {
                        print(entry.id)?;
                    }
                }
            }
        }
        Contents::Object(object) => {
            for entry in object.entries() {
                print(entry.id)?;
            }
        }
        Contents::Text(loaded, comment) => {
            for entry in parse_text(path, &loaded, comment)?.entries() {
                print(entry.id)?;
            }
        }
    }
    std::io::stdout().flush()?;
    Ok(())
}

/// Each entry, in file order, goes to the first still-open requested target
/// (in `-targets` order) it is compatible with. LLVM visits both in hash
/// order instead; see the README.
fn unbundle_files(args: &Args) -> Result<(), Failure> {
    let path = &args.inputs[0];
    let input = open_input(path, &args.outputs)?;
    check_type(&args.file_type)?;
    if args.file_type == "a" {
        return unbundle_archive(args, &input);
    }
    let contents = read_contents(args.argv0, &args.file_type, path, &input, args.config)?;
    let bundles;
    let text;
    let candidates = match &contents {
        Contents::Containers(contents) => {
            bundles = contents
                .iter()
                .map(|loaded| parse(path, loaded))
                .collect::<Result<Vec<_>, _>>()?;
            for warning in bundles.iter().flat_map(Bundle::diagnostics) {
                warn(args.argv0, &format!("'{path}': {warning}"));
            }
            chosen_entries(args, path, contents, &bundles)
                .into_iter()
                .map(|(container, entry)| Candidate {
                    id: entry.id,
                    source: match contents[container].file_offset(entry.offset) {
                        Some(offset) => Source::File {
                            offset,
                            len: entry.payload.len() as u64,
                        },
                        None => Source::Bytes(entry.payload),
                    },
                })
                .collect()
        }
        Contents::Object(object) => object_candidates(object),
        Contents::Text(loaded, comment) => {
            text = parse_text(path, loaded, *comment)?;
            text.entries()
                .into_iter()
                .map(|entry| Candidate {
                    id: entry.id,
                    source: match loaded.file_offset(entry.offset) {
                        Some(offset) => Source::File {
                            offset,
                            len: entry.payload.len() as u64,
                        },
                        None => Source::Bytes(entry.payload),
                    },
                })
                .collect()
        }
    };
    // LLVM stops reading entries once every target is found, and fails on
    // an invalid ID only if it reaches one before. Text and object entries
    // it reads in file order, as we do; a binary bundle's in hash order, so
    // whether it reaches an invalid ID (LLVM 16's `host-x86_64-unknown-linux`)
    // is luck. There an invalid ID fails the run only when some target is
    // not found, the one case where LLVM surely reaches it.
    let hash_ordered = matches!(contents, Contents::Containers(_));
    let mut invalid_seen = false;
    let mut open: Vec<usize> = (0..args.targets.len()).collect();
    let mut found_host = false;
    for candidate in &candidates {
        if open.is_empty() {
            break;
        }
        // Bytes are opaque to LLVM: one that is not UTF-8 only makes its
        // component unknown, as U+FFFD does here.
        let id = String::from_utf8_lossy(candidate.id);
        let valid = abi::parse_entry_id(&id).is_ok();
        if !valid && !hash_ordered {
            return fail("invalid bundle id read from the bundle");
        }
        if !valid {
            invalid_seen = true;
            continue;
        }
        let Some(slot) = open
            .iter()
            .position(|&t| abi::entry_id_is_compatible(&id, &args.normalized[t], args.hip_openmp))
        else {
            continue;
        };
        let target = open.remove(slot);
        let mut out = create_output(&args.outputs[target])?;
        let written = match candidate.source {
            Source::File { offset, len } => input.copy_range(offset, len, &mut out),
            Source::Bytes(bytes) => out.write_all(bytes),
            Source::HostObject(object) => {
                let host = object
                    .host_object()
                    .map_err(|e| Failure(format!("'{path}': {e}")))?;
                out.write_all(&host)
            }
        };
        written.map_err(|e| Failure(format!("'{path}': {}", os_message(&e))))?;
        found_host |= id.starts_with("host-");
    }
    if invalid_seen && !open.is_empty() {
        return fail("invalid bundle id read from the bundle");
    }
    if !args.allow_missing && !open.is_empty() {
        let mut missing: Vec<&str> = open.iter().map(|&t| args.normalized[t].as_str()).collect();
        missing.sort_unstable();
        missing.dedup();
        return Err(Failure(format!(
            "Can't find bundles for {}",
            english_list(&missing)
        )));
    }
    if open.len() == args.targets.len() {
        // Nothing matched: the input is taken to be the host's own file,
        // all of it, or decompressed if it is a compressed bundle (LLVM
        // reads one container only).
        let host_file = match &contents {
            Contents::Containers(loaded) if loaded.len() == 1 && loaded[0].compressed.is_some() => {
                loaded[0].bytes()
            }
            _ => input.data(),
        };
        for &t in &open {
            let mut out = create_output(&args.outputs[t])?;
            if args.normalized[t].starts_with("host-") {
                out.write_all(host_file)?;
            }
        }
        return Ok(());
    }
    if !(found_host || args.host.is_none() || args.allow_missing) {
        return fail("Can't find bundle for the host target");
    }
    for &t in &open {
        create_output(&args.outputs[t])?;
    }
    Ok(())
}

/// `-type=a -unbundle`: one archive per target holding, for every member
/// that is a bundle (binary, compressed or object), a copy of each entry
/// compatible with the target, named as LLVM names it.
fn unbundle_archive(args: &Args, input: &Input) -> Result<(), Failure> {
    let path = &args.inputs[0];
    let archive = abi::Archive::parse(input.data()).map_err(|e| match e.status {
        abi::Status::NotAnArchive => Failure("file too small to be an archive".to_owned()),
        _ => Failure(format!("'{path}': {e}")),
    })?;
    let decoding = Decoding::from_env(args.config.verbose)?;
    let mut outputs: Vec<Vec<OwnedEntry>> = vec![Vec::new(); args.targets.len()];
    for member in archive.members() {
        let name = String::from_utf8_lossy(member.name);
        let entries = member_entries(&member, &decoding)
            .map_err(|Failure(e)| Failure(format!("'{path}': member '{name}': {e}")))?;
        if args.check_input_archive {
            let ids: Vec<&str> = entries
                .iter()
                .filter_map(|(id, _)| std::str::from_utf8(id).ok())
                .collect();
            if let Some((a, b)) = abi::find_conflict(&ids) {
                return Err(Failure(format!(
                    "conflicting TargetIDs [{}, {}] found in {name} of {path}",
                    ids[a], ids[b]
                )));
            }
        }
        for (id, payload) in &entries {
            let Ok(id_text) = std::str::from_utf8(id) else {
                continue;
            };
            for (t, out) in outputs.iter_mut().enumerate() {
                if abi::entry_id_is_compatible(id_text, &args.normalized[t], args.hip_openmp) {
                    let name = abi::device_member_name(member.name, id_text)?;
                    out.push((name, payload.clone()));
                }
            }
        }
    }
    if let Some(e) = archive.fault() {
        return Err(Failure(format!("'{path}': {e}")));
    }
    for (t, members) in outputs.iter().enumerate() {
        if members.is_empty() && !args.allow_missing {
            return Err(Failure(format!(
                "no compatible code object found for the target '{}' in heterogeneous archive library: {path}",
                args.targets[t]
            )));
        }
    }
    for (t, members) in outputs.iter().enumerate() {
        let pairs: Vec<(&[u8], &[u8])> =
            members.iter().map(|(n, d)| (n.as_slice(), &**d)).collect();
        let bytes = abi::write_archive(&pairs).map_err(|e| Failure(format!("'{path}': {e}")))?;
        create_output(&args.outputs[t])?.write_all(&bytes)?;
    }
    Ok(())
}

/// An (ID or member name, payload) pair.
type OwnedEntry<'a> = (Vec<u8>, Shared<'a>);

/// A payload: borrowed from the archive, or a range of a buffer made once
/// (decompressed, or a stripped host object) and shared by every entry and
/// output that uses it, so overlapping entries cost no copies.
#[derive(Clone)]
enum Shared<'a> {
    Archive(&'a [u8]),
    Made(Rc<[u8]>, std::ops::Range<usize>),
}

impl std::ops::Deref for Shared<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Shared::Archive(bytes) => bytes,
            Shared::Made(buffer, range) => buffer.get(range.clone()).unwrap_or_default(),
        }
    }
}

/// The entries of one archive member, in file order, as (ID, payload); none
/// if the member is not a bundle. Within a bundle a repeated ID means its
/// last entry, as in LLVM.
fn member_entries<'a>(
    member: &abi::ArchiveMember<'a>,
    decoding: &Decoding,
) -> Result<Vec<OwnedEntry<'a>>, Failure> {
    let data = member.data;
    let mut entries: Vec<OwnedEntry> = Vec::new();
    if sniff(data) == Sniffed::Object && data.starts_with(b"\x7fELF") {
        let object = abi::ObjectBundle::parse(data)?;
        for entry in object.entries() {
            let payload = if entry.host_marker && entry.id.starts_with(b"host-") {
                let host: Rc<[u8]> = Rc::from(&*object.host_object()?);
                let len = host.len();
                Shared::Made(host, 0..len)
            } else {
                Shared::Archive(entry.payload)
            };
            entries.push((entry.id.to_vec(), payload));
        }
        return Ok(entries);
    }
    if !starts_with_container(data) {
        return Ok(entries);
    }
    for loaded in load(data, decoding, &|_| {})? {
        let bundle = Bundle::parse(loaded.bytes())?;
        let all: Vec<Entry> = bundle.entries().collect();
        let last: HashMap<&[u8], usize> = all.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        // A decompressed bundle is kept once, shared by its entries.
        let made: Option<Rc<[u8]>> = loaded
            .file_offset(0)
            .is_none()
            .then(|| Rc::from(loaded.bytes()));
        for (i, entry) in all.iter().enumerate() {
            if last.get(entry.id) != Some(&i) {
                continue;
            }
            let at = |offset: u64| {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                start..start.saturating_add(entry.payload.len())
            };
            let payload = match &made {
                Some(buffer) => Shared::Made(Rc::clone(buffer), at(entry.offset)),
                // A plain bundle's payload is the member's own bytes.
                None => {
                    let offset = loaded.file_offset(entry.offset).unwrap_or(entry.offset);
                    Shared::Archive(data.get(at(offset)).unwrap_or_default())
                }
            };
            entries.push((entry.id.to_vec(), payload));
        }
    }
    Ok(entries)
}

/// An object's entries in section order. A host entry holding the host
/// marker stands for the object itself, without its bundle sections. (LLVM
/// treats any one-zero-byte section so, whatever its ID.)
fn object_candidates<'a>(object: &'a abi::ObjectBundle<'a>) -> Vec<Candidate<'a>> {
    object
        .entries()
        .into_iter()
        .map(|entry| Candidate {
            id: entry.id,
            source: if entry.host_marker && entry.id.starts_with(b"host-") {
                Source::HostObject(object)
            } else {
                Source::File {
                    offset: entry.offset,
                    len: entry.payload.len() as u64,
                }
            },
        })
        .collect()
}

/// The entries unbundling considers, in file order, each with its
/// container's index. Within a bundle a repeated ID means its last entry, as
/// in LLVM 22. Across containers laid back to back (which LLVM 22 cannot read)
/// the first container with an ID wins, and the others are named in a warning.
fn chosen_entries<'a>(
    args: &Args,
    path: &str,
    contents: &[Loaded],
    bundles: &[Bundle<'a>],
) -> Vec<(usize, Entry<'a>)> {
    let mut owner: HashMap<&[u8], usize> = HashMap::new();
    let mut chosen = Vec::new();
    for (container, bundle) in bundles.iter().enumerate() {
        let entries: Vec<Entry> = bundle.entries().collect();
        let last: HashMap<&[u8], usize> =
            entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        for (i, entry) in entries.iter().enumerate() {
            if last.get(entry.id) != Some(&i) {
                continue;
            }
            match owner.get(entry.id) {
                Some(&first) => warn(
                    args.argv0,
                    &format!(
                        "'{path}': '{}' is also in the container at offset {:#x}; using the one at offset {:#x}",
                        String::from_utf8_lossy(entry.id),
                        contents[container].offset,
                        contents[first].offset
                    ),
                ),
                None => {
                    owner.insert(entry.id, container);
                    chosen.push((container, *entry));
                }
            }
        }
    }
    chosen
}

/// `A`, `A and B`, `A, B, and C`.
fn english_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

fn bundle_files(args: &Args) -> Result<(), Failure> {
    // An input that is also the output is read now: creating the output
    // truncates it.
    let output_id = file_identity(Path::new(&args.outputs[0]));
    let payloads = args
        .inputs
        .iter()
        .map(|p| {
            let clobbered = output_id.is_some() && file_identity(Path::new(p)) == output_id;
            Payload::open(Path::new(p), clobbered)
                .map_err(|e| Failure(format!("'{p}': {}", os_message(&e))))
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_type(&args.file_type)?;
    if args.file_type == "o" {
        // The host input carries the entries as sections when it is an
        // object. With no host target LLVM 22 takes input 0 and crashes; a
        // binary bundle is what such inputs need.
        if let Some(host) = args.host {
            let carrier = payloads[host].read_all()?;
            if sniff(&carrier) == Sniffed::Object {
                return bundle_object(args, &payloads, host, &carrier);
            }
        }
    }
    for (i, id) in args.normalized.iter().enumerate() {
        if let Some(j) = args.normalized[..i]
            .iter()
            .position(|earlier| earlier == id)
        {
            warn(
                args.argv0,
                &format!(
                "targets '{}' and '{}' are both written as '{id}'; readers will take one of them",
                args.targets[j], args.targets[i]
            ),
            );
        }
    }
    let path = &args.outputs[0];
    let written = (|| -> Result<(), Failure> {
        if let Some(comment) = abi::text_comment(&args.file_type) {
            let data = payloads
                .iter()
                .map(Payload::read_all)
                .collect::<Result<Vec<_>, _>>()?;
            let entries: Vec<(&[u8], &[u8])> = args
                .normalized
                .iter()
                .zip(&data)
                .map(|(id, payload)| (id.as_bytes(), payload.as_slice()))
                .collect();
            let bundle = abi::write_text_bundle(comment, &entries)?;
            return write_output(args, path, &bundle);
        }
        if args.align == 0 {
            return fail("invalid -bundle-align=0: the alignment must be at least 1");
        }
        let ids: Vec<&[u8]> = args.normalized.iter().map(|s| s.as_bytes()).collect();
        let sizes: Vec<u64> = payloads.iter().map(Payload::len).collect();
        let layout = abi::bundle_layout(&ids, &sizes, args.align)?;
        if !args.config.compress {
            let mut out = create_output(path)?;
            return write_bundle(&mut out, &layout, &payloads);
        }
        let mut bundle = Vec::new();
        bundle.try_reserve_exact(layout.total_size as usize)?;
        write_bundle(&mut bundle, &layout, &payloads)?;
        write_output(args, path, &bundle)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// Writes a bundle held in memory, compressed first if asked.
fn write_output(args: &Args, path: &str, bundle: &[u8]) -> Result<(), Failure> {
    if !args.config.compress {
        create_output(path)?.write_all(bundle)?;
        return Ok(());
    }
    let method = compression_method()?;
    let start = Instant::now();
    let compressed = abi::compress(bundle, args.config.version, method, args.config.level)?;
    if args.config.verbose {
        let level = args
            .config
            .level
            .unwrap_or(if method == ZSTD { 3 } else { 6 });
        let seconds = start.elapsed().as_secs_f64();
        eprint!(
            "{}",
            compress_report(&compressed, bundle.len() as u64, level, seconds)
        );
    }
    create_output(path)?.write_all(&compressed)?;
    Ok(())
}

/// `-type=o` with a host object: the object with one section per target,
/// the host's holding the host marker.
fn bundle_object(
    args: &Args,
    payloads: &[Payload],
    host: usize,
    carrier: &[u8],
) -> Result<(), Failure> {
    let path = &args.inputs[host];
    if args.dry_run {
        return print_objcopy_command(args, host);
    }
    let data = payloads
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i == host {
                Ok(Vec::new())
            } else {
                p.read_all()
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !carrier.starts_with(b"\x7fELF") {
        return Err(Failure(format!(
            "'{path}': Mach-O host objects are not supported; only ELF"
        )));
    }
    let entries: Vec<(&[u8], &[u8])> = args
        .normalized
        .iter()
        .zip(&data)
        .enumerate()
        .map(|(i, (id, bytes))| {
            let payload: &[u8] = if i == host { &[0] } else { bytes };
            (id.as_bytes(), payload)
        })
        .collect();
    let bundled = abi::write_object_bundle(carrier, &entries)
        .map_err(|e| Failure(format!("'{path}': {e}")))?;
    create_output(&args.outputs[0])?.write_all(&bundled)?;
    Ok(())
}

/// `-###` for an object bundle: LLVM 22 prints the llvm-objcopy command that
/// would add the entry sections (the host's from a temporary file holding
/// the host marker) and leaves the output empty. We add the sections
/// ourselves, byte-identically, so the command describes what we would do.
fn print_objcopy_command(args: &Args, host: usize) -> Result<(), Failure> {
    create_output(&args.outputs[0])?;
    let objcopy = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("llvm-objcopy")))
        .filter(|p| p.exists())
        .map_or_else(|| "llvm-objcopy".to_owned(), |p| p.display().to_string());
    let marker =
        std::env::temp_dir().join(format!("clang-offload-bundler-{}.tmp", std::process::id()));
    let mut line = format!("\"{objcopy}\"");
    for (i, id) in args.normalized.iter().enumerate() {
        let file = if i == host {
            marker.display().to_string()
        } else {
            args.inputs[i].clone()
        };
        line.push_str(&format!(
            " \"--add-section=__CLANG_OFFLOAD_BUNDLE__{id}={file}\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__{id}=readonly,exclude\""
        ));
    }
    line.push_str(&format!(
        " \"--\" \"{}\" \"{}\"",
        args.inputs[host], args.outputs[0]
    ));
    eprintln!("{line}");
    Ok(())
}

/// Compression method 1, the one LLVM 22 writes.
const ZSTD: u16 = 1;

/// zstd, as LLVM 22 writes, unless `CLANGOFFLOAD_COMPRESSION_METHOD=zlib` asks
/// for what an LLVM built without zstd writes (our extension: LLVM has no
/// switch for it).
fn compression_method() -> Result<u16, Failure> {
    match std::env::var("CLANGOFFLOAD_COMPRESSION_METHOD").as_deref() {
        Err(_) | Ok("zstd") => Ok(ZSTD),
        Ok("zlib") => Ok(0),
        Ok(other) => Err(Failure(format!(
            "CLANGOFFLOAD_COMPRESSION_METHOD={other}: expected zlib or zstd"
        ))),
    }
}

/// Writes a bundle: the header, then each payload at its offset with zeros
/// in the gaps.
fn write_bundle(
    out: &mut impl Write,
    layout: &abi::Layout,
    payloads: &[Payload],
) -> Result<(), Failure> {
    out.write_all(&layout.header)?;
    let mut at = layout.header.len() as u64;
    for (payload, &offset) in payloads.iter().zip(&layout.offsets) {
        write_zeros(out, offset - at)?;
        payload.copy_to(out)?;
        at = offset + payload.len();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::english_list;

    #[test]
    fn missing_targets_are_listed_as_llvm_does() {
        assert_eq!(english_list(&["a"]), "a");
        assert_eq!(english_list(&["a", "b"]), "a and b");
        assert_eq!(english_list(&["a", "b", "c"]), "a, b, and c");
        assert_eq!(english_list(&["a", "b", "c", "d"]), "a, b, c, and d");
    }
}
