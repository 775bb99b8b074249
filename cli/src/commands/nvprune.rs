//! `clangoffload nvprune`, and the binary invoked as `nvprune`: keeps only
//! some device code, as NVIDIA's `nvprune` does (`-arch sm_80,compute_80`,
//! `-gencode arch=compute_80,code=sm_80`, `-o OUT IN`). A `.fatbin` file
//! (fat binaries back to back) is written pruned
//! (`clangoffload_cuda_fatbin_prune`); a host object's `.nv_fatbin` and
//! `__nv_relfatbin` sections are pruned in place
//! (`clangoffload_cuda_fatbin_prune_in_place`): the object keeps its
//! layout, its wrapper records still point at its fat binaries, and what
//! they no longer need is zeros. The library decides what is kept; this
//! file reads the options and the files.

use super::Failure;
use crate::contents::Decoding;
use crate::ffi::c;
use crate::ffi::c::clangoffload_file_kind_tag as FileKind;
use crate::ffi::cuda::{self, Target};
use crate::ffi::job::detect;
use crate::flags::{self, nvprune::OPTIONS, Parsed};
use crate::io::os_message;

/// Runs the tool; returns the process exit status.
pub fn main(args: &[String]) -> i32 {
    let parsed = flags::parse_with_positionals(OPTIONS, args, "nvprune", 1);
    super::nvidia_tool(
        "nvprune",
        "NVIDIA nvprune",
        flags::nvprune::HELP,
        parsed,
        run,
    )
}

/// `sm_XX` (a cubin) or `compute_XX` (PTX), with an `a` or `f` suffix, as
/// the library reads code names.
fn target(code: &str) -> Result<Target, Failure> {
    cuda::parse_code(code)
        .filter(|t| t.kind != c::CLANGOFFLOAD_CUDA_KIND_LTOIR)
        .ok_or_else(|| {
            Failure(format!(
                "invalid architecture '{code}' (sm_XX or compute_XX)"
            ))
        })
}

/// The codes of one `-gencode arch=compute_XX,code=...` value: `code=sm_YY`,
/// `code=compute_XX`, or `code=[sm_YY,compute_XX]`.
fn gencode(spec: &str) -> Result<Vec<Target>, Failure> {
    let code = spec
        .split_once("code=")
        .map(|(_, codes)| codes)
        .ok_or_else(|| Failure(format!("-gencode '{spec}' has no code=")))?;
    if !spec.starts_with("arch=") {
        return Err(Failure(format!(
            "-gencode '{spec}' does not start with arch="
        )));
    }
    let list = code.trim_start_matches('[').trim_end_matches(']');
    list.split(',').map(target).collect()
}

/// Every target the options name.
fn targets(parsed: &Parsed) -> Result<Vec<Target>, Failure> {
    let mut keep = Vec::new();
    for code in parsed.list("arch") {
        keep.push(target(code)?);
    }
    for name in ["generate-code", "gencode"] {
        for spec in parsed.list(name) {
            keep.extend(gencode(spec)?);
        }
    }
    if keep.is_empty() {
        return Err(Failure(
            "no architecture to keep: give -arch or -gencode".into(),
        ));
    }
    Ok(keep)
}

fn run(parsed: &Parsed) -> Result<(), Failure> {
    for name in ["no-relocatable-elf", "options-file", "optf"] {
        if parsed.occurrences(name) > 0 {
            return Err(Failure(format!(
                "option '--{name}' is not supported by clangoffload"
            )));
        }
    }
    let keep = targets(parsed)?;
    let output = parsed
        .last("output-file")
        .or_else(|| parsed.last("o"))
        .filter(|o| !o.is_empty())
        .ok_or_else(|| Failure("no output file: give -o <file>".into()))?;
    let input = parsed
        .positionals
        .first()
        .ok_or_else(|| Failure("no input file".into()))?;
    // Read whole (not mapped): the output may be the input.
    let mut data = std::fs::read(input).map_err(|e| {
        Failure(format!(
            "Could not open input file '{input}': {}",
            os_message(&e)
        ))
    })?;
    let kind = detect(&data).map(|k| k.kind);
    if matches!(kind, Some(FileKind::Archive | FileKind::ThinArchive)) {
        return Err(Failure(format!(
            "'{input}': archives are not supported; prune each object"
        )));
    }
    let max_size = Decoding::from_env(false)?.max_size;
    let pruned = if kind == Some(FileKind::CudaFatbin) {
        cuda::prune(&data, &keep, max_size).map_err(|e| Failure(format!("'{input}': {e}")))?
    } else {
        cuda::prune_in_place(&mut data, &keep, max_size)
            .map_err(|e| Failure(format!("'{input}': {e}")))?;
        data
    };
    std::fs::write(output, pruned).map_err(|e| {
        Failure(format!(
            "Could not open output file '{output}': {}",
            os_message(&e)
        ))
    })
}
