//! `clangoffload packager`, and the same binary invoked as
//! `clang-offload-packager` or `llvm-offload-binary`: a drop-in for LLVM 22's
//! tool. `-o FILE --image=k=v,...` packages images (byte-identical output);
//! `FILE --image=filter` extracts matching images from a raw OffloadBinary
//! file, an ELF or COFF host file or an archive of them; `--list FILE` (ours) prints
//! every image with its strings. Also upstream's later options: `--compress`,
//! `--compression-format`, `--compression-level`, and `--format-version`.
//! The library's packager jobs (`clangoffload_packager_*`) hold every rule;
//! this file parses flags, reads and writes files, and prints.

use crate::stdio::{errln, out, outln};
use std::fs::File;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use super::Failure;
use crate::ffi::job::Job;
use crate::ffi::packaging::{self, Format, Listing};
use crate::ffi::{image_kind_name, offload_kind_name};
use crate::flags::{self, packager::OPTIONS};
use crate::io::os_message;

/// Runs the tool; returns the process exit status.
pub fn main(argv0: &str, args: &[String]) -> i32 {
    let program = Path::new(argv0)
        .file_name()
        .map_or_else(|| argv0.to_owned(), |n| n.to_string_lossy().into_owned());
    // LLVM 22's tool crashes after a bad response file; we stop.
    let args = match flags::response::expand(args) {
        Ok(args) => args,
        Err(message) => {
            errln!("{message}");
            return 1;
        }
    };
    let (parsed, errors) = flags::parse_with_positionals(OPTIONS, &args, argv0, 1);
    match parsed.first_flag(flags::IMMEDIATE) {
        Some("version") => {
            let _ = outln!(
                "llvm-offload-binary version 22.1.8 (clangoffload {})",
                env!("CARGO_PKG_VERSION")
            );
            return 0;
        }
        Some(help) => {
            let _ = out!("{}", flags::packager::help(help, &program));
            return 0;
        }
        None => {}
    }
    if !errors.is_empty() {
        for e in &errors {
            errln!("{program}: {e}");
        }
        return 1;
    }
    if crate::is_legacy_packager(&program) {
        errln!(
            "warning: 'clang-offload-packager' is deprecated. Use 'llvm-offload-binary' instead."
        );
    }
    let output = parsed.last("o").filter(|o| !o.is_empty());
    let input = parsed.positionals.first().filter(|i| !i.is_empty());
    if parsed.flag("h") || (output.is_none() && input.is_none()) {
        let _ = out!("{}", flags::packager::help("h", &program));
        return 0;
    }
    let result = match (output, input) {
        (Some(_), Some(_)) => Err(Failure(
            "Packaging to an output file and extracting from an input file are mutually exclusive."
                .into(),
        )),
        (Some(output), None) => package(argv0, &parsed, output),
        (None, Some(input)) if parsed.flag("list") => list(argv0, input),
        (None, Some(input)) => extract(argv0, &parsed, input),
        (None, None) => Ok(()),
    };
    match result {
        Ok(()) => 0,
        Err(Failure(message)) => {
            errln!("{argv0}: error: {message}");
            1
        }
    }
}

/// An image file's bytes (`-` is stdin). LLVM reports the system error
/// without the file name here.
fn read_image(file: &str) -> Result<Vec<u8>, Failure> {
    let read = if file == "-" {
        let mut data = Vec::new();
        std::io::stdin().read_to_end(&mut data).map(|_| data)
    } else {
        std::fs::read(file)
    };
    read.map_err(|e| Failure(os_message(&e)))
}

/// `-o FILE`: every file of every `--image`, packaged.
fn package(program: &str, parsed: &flags::Parsed, output: &str) -> Result<(), Failure> {
    let mut files = Vec::new();
    for argument in parsed.list("image") {
        for file in packaging::image_files(argument).map_err(Failure)? {
            files.push((argument.as_str(), file, read_image(file)?));
        }
    }
    let images: Vec<(&str, &str, &[u8])> = files
        .iter()
        .map(|(argument, file, data)| (*argument, *file, data.as_slice()))
        .collect();
    let format = Format {
        version: parsed.last("format-version").and_then(|v| v.parse().ok()),
        compress: parsed.flag("compress"),
        compression_format: parsed.last("compression-format"),
        compression_level: parsed
            .last("compression-level")
            .and_then(|l| l.parse().ok()),
    };
    let bytes = packaging::package(program, &images, &format).map_err(Failure)?;
    std::fs::write(output, bytes).map_err(|e| Failure(os_message(&e)))
}

/// `FILE --image=filter...`: the files each filter's images go to, written
/// filter by filter as LLVM does (a later filter's failure leaves the
/// earlier files written). With no filter, every image, each file said as
/// LLVM after 22 says it.
fn extract(program: &str, parsed: &flags::Parsed, input: &str) -> Result<(), Failure> {
    let file = super::open(input)?;
    let filters: Vec<&str> = parsed.list("image").iter().map(String::as_str).collect();
    let runs: Vec<&[&str]> = match filters.as_slice() {
        [] => vec![&[]],
        some => some.iter().map(std::slice::from_ref).collect(),
    };
    for filter in runs {
        let extraction =
            Job::extract_images(program, file.data(), input, filter, parsed.flag("archive"))
                .map_err(Failure)?;
        for (i, output) in extraction.outputs().iter().enumerate() {
            let out = File::create(std::ffi::OsStr::from_bytes(output.name))
                .map_err(|e| Failure(os_message(&e)))?;
            extraction.write(i, &out, &[&file]).map_err(Failure)?;
            if filter.is_empty() {
                outln!("Extracted: {}", String::from_utf8_lossy(output.name))?;
            }
        }
    }
    Ok(())
}

/// `--list FILE`: every image, one line each, with all its strings.
fn list(program: &str, input: &str) -> Result<(), Failure> {
    let file = super::open(input)?;
    let listing = Listing::new(program, file.data(), input).map_err(Failure)?;
    let mut out = String::new();
    for (index, image) in listing.images().iter().enumerate() {
        let source = match image.member {
            [] => input.into(),
            member => String::from_utf8_lossy(member),
        };
        let kind = image_kind_name(image.image_kind, 0);
        out.push_str(&format!(
            "{index}\t{source}\t{}\t{}\tsize={}\tversion={}{}",
            if kind.is_empty() { "none" } else { kind },
            offload_kind_name(image.offload_kind),
            image.size,
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
    out!("{out}")?;
    Ok(())
}
