//! `clangoffload check PATH... [--kpack-path PATH]...`: what the HIP
//! runtime hides about hosts ROCm's kpack split and their archives, one
//! finding per line (file, record, archive, device), the library's rule
//! (`clangoffload_kpack_check`). Directories are walked (symbolic links to
//! directories not followed); files that are no split host are skipped.
//! Exit status 1 when anything is found.

use std::path::{Path, PathBuf};

use super::Failure;
use crate::ffi::c;
use crate::ffi::kpack::{check, Finding, Kpack};
use crate::stdio::outln;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let usage = || Failure(crate::help::usage(crate::help::CHECK));
    let (mut paths, mut kpack_paths) = (Vec::new(), Vec::new());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--kpack-path" => kpack_paths.push(rest.next().ok_or_else(usage)?.as_str()),
            _ if arg.starts_with("--kpack-path=") => {
                kpack_paths.extend(arg.strip_prefix("--kpack-path="));
            }
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    if paths.is_empty() {
        return Err(usage());
    }
    let mut files = Vec::new();
    for path in &paths {
        walk(path, &mut files)?;
    }
    let (mut found, mut errors) = (0usize, Vec::new());
    for file in files {
        match check_file(&file, &kpack_paths) {
            Ok(lines) => {
                found = found.saturating_add(lines.len());
                for line in lines {
                    outln!("{line}")?;
                }
            }
            Err(e) => errors.push(e),
        }
    }
    for e in &errors {
        crate::stdio::errln!("{program}: error: {e}");
    }
    match (found, errors.len()) {
        (0, 0) => Ok(()),
        (n, 0) => Err(Failure(format!("{n} findings"))),
        (n, e) => Err(Failure(format!("{n} findings, {e} files not read"))),
    }
}

/// The files under `path` (itself if a file), sorted.
fn walk(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| {
        Failure(format!(
            "'{}': {}",
            path.display(),
            crate::io::os_message(&e)
        ))
    })?;
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| {
                Failure(format!(
                    "'{}': {}",
                    path.display(),
                    crate::io::os_message(&e)
                ))
            })?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for entry in entries {
            walk(&entry, files)?;
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
    Ok(())
}

/// The findings for one file, as lines; none for a file that is no split
/// host.
fn check_file(path: &Path, kpack_paths: &[&str]) -> Result<Vec<String>, String> {
    let file = path.display().to_string();
    let input = crate::io::Input::open(path, false)
        .map_err(|e| format!("'{file}': {}", crate::io::os_message(&e)))?;
    let Some((_, archives)) = super::kpack::read_through(&file, input.data(), kpack_paths)
        .map_err(|super::Failure(e)| e)?
    else {
        return Ok(Vec::new());
    };
    let parsed: Vec<(Vec<u8>, Kpack<'_>, String)> = (0..archives.paths.len())
        .filter_map(|i| {
            let kpack = archives.parsed(i)?.ok()?;
            let path = archives.paths.get(i)?;
            let name = path
                .file_name()?
                .to_string_lossy()
                .into_owned()
                .into_bytes();
            Some((name, kpack, path.display().to_string()))
        })
        .collect();
    let given: Vec<(&[u8], &Kpack<'_>)> =
        parsed.iter().map(|(n, k, _)| (n.as_slice(), k)).collect();
    let shown = |i: usize| parsed.get(i).map_or("", |p| p.2.as_str());
    Ok(check(input.data(), &given)?
        .iter()
        .map(|f| sentence(&file, f, &shown))
        .collect())
}

/// A finding in words.
fn sentence<'a>(file: &str, f: &Finding, archive: &dyn Fn(usize) -> &'a str) -> String {
    let text = String::from_utf8_lossy(&f.text);
    match f.kind {
        c::CLANGOFFLOAD_KPACK_NULL_POINTER => format!(
            "'{file}': HIPK record {} at offset {:#x}: its pointer is 0 and no relocation fills it \
             (kpack's split zeroes it in executables that are not position-independent): the \
             runtime stops with \"HIPK metadata is null\"",
            f.record, f.offset
        ),
        c::CLANGOFFLOAD_KPACK_RECORD_WITHOUT_ARCH => format!(
            "'{file}': record {} has no code object for {text}, which other records have: the \
             splitter numbers code objects per architecture and the runtime looks them up by \
             record, so with translation units of different architecture sets a record gets \
             another unit's code or none (KERNEL_NOT_FOUND)",
            f.record
        ),
        c::CLANGOFFLOAD_KPACK_SHADOWED_BY_VARIANT => format!(
            "'{file}': record {} on {text}: rocm-kpack's shipped loader stops at '{}', which lacks \
             it (KERNEL_NOT_FOUND, hipErrorInvalidImage), where the fall-through loader \
             (rocm-systems#9953) finds it in '{}'",
            f.record,
            archive(f.archive),
            archive(f.base)
        ),
        c::CLANGOFFLOAD_KPACK_NAME_NOT_NAMEABLE => format!(
            "'{}': its name holds ':', which ROCM_KPACK_PATH and ROCM_KPACK_PATH_PREFIX (split \
             on ':') cannot name",
            archive(f.archive)
        ),
        c::CLANGOFFLOAD_KPACK_UNCOMPRESSED => format!(
            "'{}': code objects stored uncompressed (compression_scheme none; zstd-per-kernel \
             is several times smaller)",
            archive(f.archive)
        ),
        c::CLANGOFFLOAD_KPACK_DAMAGED_ENTRY => format!(
            "'{}': entry {} cannot be read ({} at offset {:#x}): the runtime fails with \
             DECOMPRESSION_FAILED",
            archive(f.archive),
            f.entry,
            crate::ffi::status_message(f.status),
            f.offset
        ),
        c::CLANGOFFLOAD_KPACK_STALE_CONTAINER => format!(
            "'{file}': a container at offset {:#x} left by the split outside every section \
             (it cuts whole pages only): not live, whatever a scanner says",
            f.offset
        ),
        other => format!("'{file}': finding of kind {other}"),
    }
}
