//! `clangoffload packager`, and the same binary invoked as
//! `clang-offload-packager` or `llvm-offload-binary`: a drop-in for LLVM 22's
//! tool. `-o FILE --image=k=v,...` packages images (byte-identical output);
//! `FILE --image=filter` extracts matching images from a raw OffloadBinary
//! file, an ELF host file or an archive of them; `--list FILE` (ours) prints
//! every image with its strings. Also upstream's later options: `--compress`,
//! `--compression-format`, `--compression-level`, and `--format-version`.

use clangoffload_capi::clangoffload_file_kind_tag as FileKind;
use std::io::Read as _;
use std::path::Path;

use crate::abi::{self, NewImage, OffloadBinaries, OffloadImage};
use crate::flags::{self, packager::OPTIONS};
use crate::io::{os_message, Input};

/// What went wrong, worded as llvm-offload-binary words it (after
/// `<argv0>: error: `).
struct Error(String);

impl<T: std::fmt::Display> From<T> for Error {
    fn from(e: T) -> Self {
        Error(e.to_string())
    }
}

/// Runs the tool; returns the process exit status.
pub fn main(argv0: &str, args: &[String]) -> i32 {
    let program = Path::new(argv0)
        .file_name()
        .map_or_else(|| argv0.to_owned(), |n| n.to_string_lossy().into_owned());
    let (parsed, errors) = flags::parse_with_positionals(OPTIONS, args, argv0, 1);
    match parsed.first_flag(flags::IMMEDIATE) {
        Some("version") => {
            println!(
                "llvm-offload-binary version 22.1.8 (clangoffload {})",
                env!("CARGO_PKG_VERSION")
            );
            return 0;
        }
        Some(help) => {
            print!("{}", flags::packager::help(help, &program));
            return 0;
        }
        None => {}
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{program}: {e}");
        }
        return 1;
    }
    if stem(&program).ends_with("clang-offload-packager") {
        eprintln!(
            "warning: 'clang-offload-packager' is deprecated. Use 'llvm-offload-binary' instead."
        );
    }
    let output = parsed.last("o").filter(|o| !o.is_empty());
    let input = parsed.positionals.first().filter(|i| !i.is_empty());
    if parsed.flag("h") || (output.is_none() && input.is_none()) {
        print!("{}", flags::packager::help("h", &program));
        return 0;
    }
    let result = match (output, input) {
        (Some(_), Some(_)) => Err(Error(
            "Packaging to an output file and extracting from an input file are mutually exclusive."
                .into(),
        )),
        (Some(output), None) => bundle(&parsed, output),
        (None, Some(input)) if parsed.flag("list") => list(input),
        (None, Some(input)) => extract(&parsed, input, argv0),
        (None, None) => Ok(()),
    };
    match result {
        Ok(()) => 0,
        Err(Error(message)) => {
            eprintln!("{argv0}: error: {message}");
            1
        }
    }
}

/// LLVM's `sys::path::stem`: the file name without its last extension.
fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "." || name == ".." {
        return name;
    }
    match name.rfind('.') {
        Some(at) => &name[..at],
        None => name,
    }
}

/// LLVM's `sys::path::extension` without its dot, if the file name has one.
fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "." || name == ".." {
        return None;
    }
    name.rfind('.').map(|at| &name[at + 1..])
}

fn read_image(file: &str) -> Result<Vec<u8>, Error> {
    let read = if file == "-" {
        let mut data = Vec::new();
        std::io::stdin().read_to_end(&mut data).map(|_| data)
    } else {
        std::fs::read(file)
    };
    // LLVM reports the system error without the file name here.
    read.map_err(|e| Error(os_message(&e)))
}

fn is_bitcode(data: &[u8]) -> bool {
    crate::job::kind(data) == FileKind::Bitcode
}

/// `-o FILE`: one image per `file=` of every `--image`, written as
/// OffloadBinaries.
fn bundle(parsed: &flags::Parsed, output: &str) -> Result<(), Error> {
    // (strings, image kind, offload kind, bytes) of every image.
    type Loaded = (Vec<(String, String)>, u16, u16, Vec<u8>);
    let mut loaded: Vec<Loaded> = Vec::new();
    for argument in parsed.list("image") {
        let pairs = abi::image_arguments(argument);
        let Some((_, files)) = pairs.iter().find(|(k, _)| k == "file") else {
            return Err(Error("'file' is a required image arguments".into()));
        };
        let offload_kind = pairs
            .iter()
            .find(|(k, _)| k == "kind")
            .map_or(0, |(_, v)| abi::offload_kind_from_name(v));
        let strings: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| k != "file" && k != "kind")
            .cloned()
            .collect();
        for file in files.split(',') {
            let data = read_image(file)?;
            let image_kind = if is_bitcode(&data) {
                2
            } else {
                extension(file).map_or(0, abi::image_kind_from_extension)
            };
            loaded.push((strings.clone(), image_kind, offload_kind, data));
        }
    }
    let images: Vec<NewImage<'_>> = loaded
        .iter()
        .map(|(strings, image_kind, offload_kind, data)| NewImage {
            image_kind: *image_kind,
            offload_kind: *offload_kind,
            strings: strings
                .iter()
                .map(|(k, v)| (k.as_bytes(), v.as_bytes()))
                .collect(),
            image: data,
        })
        .collect();
    let (version, compression, level) = format(parsed)?;
    let bytes = abi::write_offload_binary(&images, version, compression, level)?;
    std::fs::write(output, &*bytes).map_err(|e| Error(os_message(&e)))
}

/// The format version, compression method and level the options ask for.
fn format(parsed: &flags::Parsed) -> Result<(u32, u32, Option<i32>), Error> {
    let level = parsed
        .last("compression-level")
        .and_then(|l| l.parse::<i32>().ok());
    if !parsed.flag("compress") {
        let version = parsed
            .last("format-version")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        if !(1..=3).contains(&version) {
            return Err(Error(format!(
                "invalid format version {version}; expected 1, 2 or 3"
            )));
        }
        return Ok((
            version,
            clangoffload_capi::CLANGOFFLOAD_COMPRESSION_NONE,
            None,
        ));
    }
    let method = match parsed.last("compression-format").unwrap_or("zstd") {
        "zlib" => clangoffload_capi::CLANGOFFLOAD_COMPRESSION_ZLIB,
        "zstd" => clangoffload_capi::CLANGOFFLOAD_COMPRESSION_ZSTD,
        other => {
            return Err(Error(format!(
                "invalid compression format '{other}'; expected 'zlib' or 'zstd'"
            )))
        }
    };
    if let Some(level) = level {
        let (low, high) = if method == clangoffload_capi::CLANGOFFLOAD_COMPRESSION_ZLIB {
            (0, 9)
        } else {
            (-131_072, 22)
        };
        if !(low..=high).contains(&level) {
            let name = if low == 0 { "zlib" } else { "zstd" };
            return Err(Error(format!(
                "invalid {name} compression level {level}; expected a value in [{low}, {high}]"
            )));
        }
    }
    Ok((3, method, level))
}

/// Where the images of an input come from: the name LLVM gives the buffer
/// (member name in an archive, the path as given otherwise) and its bytes.
struct Source<'data> {
    name: Vec<u8>,
    data: &'data [u8],
}

/// The regions of `data` that hold OffloadBinaries, as LLVM 22's
/// `extractOffloadBinaries` finds them: every `SHT_LLVM_OFFLOADING` section
/// of an ELF file, the members of an archive (recursively), or the whole
/// input if it is an OffloadBinary. Other inputs hold none.
fn sources<'d>(name: &[u8], data: &'d [u8], out: &mut Vec<Source<'d>>) -> Result<(), Error> {
    if crate::job::kind(data) == FileKind::Elf {
        for section in abi::offload_sections(data) {
            let section = section?;
            if section.kind == clangoffload_capi::clangoffload_section_kind::OffloadBinaries {
                out.push(Source {
                    name: name.to_vec(),
                    data: section.data,
                });
            }
        }
    } else if crate::job::kind(data) == FileKind::Archive {
        let archive = abi::Archive::parse(data)?;
        for member in archive.members() {
            sources(member.name, member.data, out)?;
        }
        if let Some(fault) = archive.fault() {
            return Err(fault.into());
        }
    } else if crate::job::kind(data) == FileKind::OffloadBinary {
        out.push(Source {
            name: name.to_vec(),
            data,
        });
    } else if is_bitcode(data) {
        return Err(Error(
            "LLVM bitcode inputs (llvm.embedded.objects) are not supported; extract from the object file"
                .into(),
        ));
    }
    Ok(())
}

/// Every image of `input`, with the name of the buffer it came from.
fn with_images<T>(
    input: &str,
    run: impl FnOnce(&[(Vec<u8>, OffloadImage<'_>)]) -> Result<T, Error>,
) -> Result<T, Error> {
    let file = Input::open(Path::new(input), false)
        .map_err(|e| Error(format!("'{input}': {}", os_message(&e))))?;
    let mut found = Vec::new();
    sources(input.as_bytes(), file.data(), &mut found)?;
    let mut parsed = Vec::new();
    for source in &found {
        let binaries = OffloadBinaries::parse(source.data, false, 0)
            .map_err(|e| Error(format!("'{input}': {e}")))?;
        parsed.push((source.name.clone(), binaries));
    }
    let images: Vec<(Vec<u8>, OffloadImage<'_>)> = parsed
        .iter()
        .flat_map(|(name, binaries)| {
            binaries
                .images()
                .into_iter()
                .map(move |image| (name.clone(), image))
        })
        .collect();
    run(&images)
}

/// Whether `image` passes every `key=value` of a filter (`file` is not a
/// filter; `kind` compares the offload kind; a missing key reads as empty).
fn matches(image: &OffloadImage<'_>, filter: &[(String, String)]) -> bool {
    filter.iter().all(|(key, value)| match key.as_str() {
        "file" => true,
        "kind" => image.offload_kind == abi::offload_kind_from_name(value),
        _ => image.string(key.as_bytes()) == value.as_bytes(),
    })
}

fn write_file(name: &str, data: &[u8]) -> Result<(), Error> {
    std::fs::write(name, data).map_err(|e| Error(os_message(&e)))
}

/// `FILE --image=filter...`: writes the images each filter matches.
fn extract(parsed: &flags::Parsed, input: &str, argv0: &str) -> Result<(), Error> {
    with_images(input, |images| {
        for argument in parsed.list("image") {
            let filter = abi::image_arguments(argument);
            let matched: Vec<&(Vec<u8>, OffloadImage<'_>)> = images
                .iter()
                .filter(|(_, image)| matches(image, &filter))
                .collect();
            if matched.is_empty() {
                continue;
            }
            let file = filter.iter().find(|(k, _)| k == "file").map(|(_, v)| v);
            if parsed.flag("archive") {
                let Some(file) = file else {
                    return Err(Error("Image must have a 'file' argument.".into()));
                };
                let members: Vec<(&[u8], &[u8])> = matched
                    .iter()
                    .map(|(name, image)| (name.as_slice(), image.image))
                    .collect();
                write_file(file, &abi::write_archive(&members)?)?;
            } else if let Some(file) = file {
                if matched.len() > 1 {
                    eprintln!("{argv0}: warning: Multiple inputs match to a single file, '{file}'");
                }
                if let Some((_, last)) = matched.last() {
                    write_file(file, last.image)?;
                }
            } else {
                for (index, (_, image)) in matched.iter().enumerate() {
                    write_file(&automatic_name(input, image, index), image.image)?;
                }
            }
        }
        Ok(())
    })
}

/// `<input stem>-<triple>-<arch>.<index>.<kind extension>`, as LLVM 22 names
/// extracted images, with `/` and NUL (which LLVM passes through, writing
/// outside the directory) replaced by `_`.
fn automatic_name(input: &str, image: &OffloadImage<'_>, index: usize) -> String {
    let name = format!(
        "{}-{}-{}.{index}.{}",
        stem(input),
        String::from_utf8_lossy(image.triple),
        String::from_utf8_lossy(image.arch),
        abi::image_kind_name(image.image_kind, 0)
    );
    name.replace(['/', '\0'], "_")
}

/// `--list FILE`: every image, one line each, with all its strings.
fn list(input: &str) -> Result<(), Error> {
    with_images(input, |images| {
        let mut out = String::new();
        for (index, (source, image)) in images.iter().enumerate() {
            let kind = abi::image_kind_name(image.image_kind, 0);
            out.push_str(&format!(
                "{index}\t{}\t{}\t{}\tsize={}\tversion={}{}",
                String::from_utf8_lossy(source),
                if kind.is_empty() { "none" } else { kind },
                abi::offload_kind_name(image.offload_kind),
                image.image.len(),
                image.version,
                if image.compressed { " compressed" } else { "" }
            ));
            for (key, value) in &image.strings {
                out.push_str(&format!(
                    "\t{}={}",
                    String::from_utf8_lossy(key).escape_debug(),
                    String::from_utf8_lossy(value).escape_debug()
                ));
            }
            out.push('\n');
        }
        print!("{out}");
        Ok(())
    })
}
