//! `clangoffload fatbinary`, and the binary invoked as `fatbinary`: a
//! drop-in for NVIDIA's `fatbinary` 13.5 as clang's CUDA driver runs it
//! (`-64 --create OUT [-g] --image3=kind=elf,sm=80,file=X.cubin
//! --image3=kind=ptx,sm=80,file=X.s`, and what `-Xcuda-fatbinary` adds:
//! `--compress`, `--compress-all`, `--compress-mode`, `-c`, `--ident`,
//! `--cmdline`). The library writes the fat binary
//! (`clangoffload_cuda_fatbin_write`, byte-identical to `fatbinary`'s but
//! for `--compress-mode=size`); this file reads the options and the images
//! and writes the file. Options `fatbinary` has and we do not support are
//! refused by name; unknown ones are refused as `fatbinary` refuses them.

use super::Failure;
use crate::ffi::c;
use crate::ffi::cuda::{self, parse_sm, NewEntry};
use crate::ffi::view;
use crate::flags::{self, fatbinary::OPTIONS, fatbinary::UNSUPPORTED, Parsed};
use crate::io::os_message;

/// Runs the tool; returns the process exit status.
pub fn main(args: &[String]) -> i32 {
    let parsed = flags::parse(OPTIONS, args, "fatbinary");
    super::nvidia_tool(
        "fatbinary",
        "NVIDIA fatbinary 13.5",
        flags::fatbinary::HELP,
        parsed,
        run,
    )
}

/// One `--image3` value: kind, SM, file.
struct Image {
    kind: u16,
    arch: u32,
    variant: u32,
    file: String,
}

/// `kind=elf,sm=80,file=X`, checked as `fatbinary` checks it.
fn parse_image(spec: &str) -> Result<Image, Failure> {
    let (mut kind, mut sm, mut file) = (None, None, None);
    for pair in spec.split(',') {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| Failure(format!("missing '=' in image3 '{spec}'")))?;
        let slot = match key {
            "kind" => &mut kind,
            "sm" => &mut sm,
            "file" => &mut file,
            other => return Err(Failure(format!("unknown keyword '{other}' in image3"))),
        };
        if slot.replace(value).is_some() {
            return Err(Failure(format!("redefinition of keyword '{key}'")));
        }
    }
    let missing = |what: &str| Failure(format!("Missing {what} in image3"));
    let kind = match kind.ok_or_else(|| missing("kind"))? {
        "elf" => c::CLANGOFFLOAD_CUDA_KIND_ELF,
        "ptx" => c::CLANGOFFLOAD_CUDA_KIND_PTX,
        other => {
            return Err(Failure(format!(
                "image kind '{other}' is not supported (elf and ptx are)"
            )))
        }
    };
    let sm = sm.ok_or_else(|| missing("sm"))?;
    let (arch, variant) =
        parse_sm(sm).ok_or_else(|| Failure(format!("invalid architecture '{sm}'")))?;
    Ok(Image {
        kind,
        arch,
        variant,
        file: file.ok_or_else(|| missing("file"))?.to_owned(),
    })
}

/// A true/false option value (`--compress`).
fn boolean(name: &str, value: &str) -> Result<bool, Failure> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(Failure(format!(
            "invalid value '{other}' for option '--{name}' (true or false)"
        ))),
    }
}

/// The mode and flags `clangoffload_cuda_fatbin_write` takes for the
/// options given.
fn write_options(parsed: &Parsed) -> Result<(u32, u32), Failure> {
    let mode = match parsed.last("compress-mode") {
        None | Some("default") => c::CLANGOFFLOAD_CUDA_COMPRESS_DEFAULT,
        Some("balance") => c::CLANGOFFLOAD_CUDA_COMPRESS_BALANCE,
        Some("speed") => c::CLANGOFFLOAD_CUDA_COMPRESS_SPEED,
        Some("size") => c::CLANGOFFLOAD_CUDA_COMPRESS_SIZE,
        Some("none") => c::CLANGOFFLOAD_CUDA_COMPRESS_NONE,
        Some(other) => {
            return Err(Failure(format!(
                "invalid value '{other}' for option '--compress-mode' (default, size, speed, balance, none)"
            )))
        }
    };
    let mut flags = 0;
    if let Some(value) = parsed.last("compress") {
        if !boolean("compress", value)? {
            flags |= c::CLANGOFFLOAD_CUDA_WRITE_NO_COMPRESS;
        }
    }
    let on = [
        ("compress-all", c::CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL),
        ("device-c", c::CLANGOFFLOAD_CUDA_WRITE_DEVICE_C),
        ("c", c::CLANGOFFLOAD_CUDA_WRITE_DEVICE_C),
    ];
    for (name, flag) in on {
        if parsed.flag(name) {
            flags |= flag;
        }
    }
    // 64-bit unless -32 (both is an error, as in fatbinary).
    if parsed.flag("32") {
        flags |= c::CLANGOFFLOAD_CUDA_WRITE_32BIT;
    }
    Ok((mode, flags))
}

fn run(parsed: &Parsed) -> Result<(), Failure> {
    for (name, why) in UNSUPPORTED {
        if parsed.occurrences(name) > 0 {
            return Err(Failure(format!(
                "option '--{name}' is not supported by clangoffload: {why}"
            )));
        }
    }
    if parsed.flag("32") && parsed.flag("64") {
        // fatbinary: "nvFatbin error: unknown option".
        return Err(Failure("options '-32' and '-64' exclude each other".into()));
    }
    let output = parsed
        .last("create")
        .filter(|o| !o.is_empty())
        .ok_or_else(|| Failure("no output file: give --create <file>".into()))?;
    let (mode, flags) = write_options(parsed)?;
    let images = parsed
        .list("image3")
        .iter()
        .map(|spec| parse_image(spec))
        .collect::<Result<Vec<_>, _>>()?;
    let contents = images
        .iter()
        .map(|image| {
            std::fs::read(&image.file).map_err(|e| {
                Failure(format!(
                    "Could not open input file '{}': {}",
                    image.file,
                    os_message(&e)
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let debug = parsed.flag("debug") || parsed.flag("g");
    let identifier = parsed.last("ident").map(str::as_bytes);
    let cmdline = parsed.last("cmdline").map(str::as_bytes);
    // A view whose NULL pointer means "none".
    let optional = |value: Option<&[u8]>| {
        value.map_or(
            c::clangoffload_bytes {
                ptr: std::ptr::null(),
                len: 0,
            },
            view,
        )
    };
    let entries: Vec<NewEntry> = images
        .iter()
        .zip(&contents)
        .map(|(image, data)| NewEntry {
            kind: image.kind,
            arch: image.arch,
            variant: image.variant,
            data: view(data),
            identifier: optional(identifier),
            options: optional(if image.kind == c::CLANGOFFLOAD_CUDA_KIND_PTX {
                cmdline
            } else {
                None
            }),
            debug,
        })
        .collect();
    let bytes = cuda::write(&entries, mode, flags).map_err(Failure)?;
    std::fs::write(output, bytes).map_err(|e| {
        Failure(format!(
            "Could not open output file '{output}': {}",
            os_message(&e)
        ))
    })
}
