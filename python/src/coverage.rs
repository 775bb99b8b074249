//! `coverage(paths, devices=None, *, verify=False)`: for every file of
//! device code under the paths (directories walked once whatever the
//! links; wheels read member by member, nothing unpacked) and every device,
//! whether its runtime loads code for it, which, or why not, as plain
//! objects. Every rule is core's (`clangoffload::coverage`), kpack split
//! hosts resolved through their archives as the runtime finds them.

use std::collections::HashSet;
use std::path::PathBuf;

use clangoffload::bundler::Decoding;
use std::os::unix::ffi::OsStrExt;

use clangoffload::coverage::{Lookup, Tree};
use clangoffload::kpack::{Environment, Loader};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// A file's verdict for one device.
#[pyclass(frozen, get_all, module = "clangoffload")]
#[derive(Clone)]
pub struct CoverageCell {
    device: String,
    /// Whether the file holds code of the device's vendor at all.
    applies: bool,
    /// Whether every container of that vendor gives the device code.
    loads: bool,
    /// The chosen code's IDs joined by ", ", or ``None``.
    entry: Option<String>,
    /// ``native``, ``generic``, ``spirv``, ``cubin``, ``ptx`` or ``None``.
    how: Option<&'static str>,
    reason: String,
}

/// One file of device code (a wheel member is one: ``<wheel>!<member>``).
#[pyclass(frozen, get_all, module = "clangoffload")]
#[derive(Clone)]
pub struct CoveredFile {
    file: String,
    /// Why it could not be read, or ``None``.
    error: Option<String>,
    /// The devices its code targets and its bytes of code for each.
    targets: Vec<(String, u64)>,
    findings: Vec<String>,
    /// One cell per device, in the order of the devices asked about.
    cells: Vec<CoverageCell>,
}

/// Every regular file under `paths`, each once, sorted per path.
fn walk(paths: &[PathBuf]) -> PyResult<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for path in paths {
        let mut stack = vec![path.clone()];
        let mut found = Vec::new();
        while let Some(path) = stack.pop() {
            let real = std::fs::canonicalize(&path)
                .map_err(|e| PyOSError::new_err(format!("'{}': {e}", path.display())))?;
            if !seen.insert(real.clone()) {
                continue;
            }
            if real.is_dir() {
                let read = std::fs::read_dir(&path)
                    .map_err(|e| PyOSError::new_err(format!("'{}': {e}", path.display())))?;
                let mut entries: Vec<PathBuf> =
                    read.filter_map(|e| e.ok().map(|e| e.path())).collect();
                entries.sort();
                stack.extend(entries.into_iter().rev());
            } else if real.is_file() {
                found.push(path);
            }
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// A file's bytes as coverage reads them: an ELF file over
/// `SPARSE_ABOVE` bytes read range by range (core's `SparseElf`: only what
/// coverage reads of it is in memory), any other file whole.
fn read_for_coverage(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use clangoffload::coverage::{SparseElf, SPARSE_ABOVE};
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > SPARSE_ABOVE {
        let mut sparse = SparseElf::new(size);
        let mut failed = None;
        let read = sparse.read_with(&mut |offset, piece| {
            file.read_at(piece, offset)
                .map_err(|e| failed = Some(e))
                .ok()
        });
        if let Some(error) = failed {
            return Err(error);
        }
        if let Some(image) = sparse.image().filter(|_| read) {
            return Ok(image);
        }
    }
    std::fs::read(path)
}

/// Covers every file under `paths` for `devices` (AMD target IDs or
/// ``sm_XX``; default: the current GPUs the library lists and every device
/// some file's code targets). ``verify`` checks compressed bundles' hashes.
#[pyfunction]
#[pyo3(signature = (paths, devices = None, *, verify = false))]
pub fn coverage(
    paths: Vec<PathBuf>,
    devices: Option<Vec<String>>,
    verify: bool,
) -> PyResult<Vec<CoveredFile>> {
    let files = walk(&paths)?;
    let decoding = Decoding {
        max_size: clangoffload::Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE,
        verify_hash: false,
        verbose: false,
    };
    let given: Option<Vec<&str>> = devices
        .as_ref()
        .map(|d| d.iter().map(String::as_str).collect());
    let mut tree = Tree::new(given.as_deref(), decoding, verify).map_err(|(index, e)| {
        let name = given.as_ref().and_then(|g| g.get(index)).unwrap_or(&"");
        PyValueError::new_err(format!("'{name}': {e}"))
    })?;
    let read = |path: &PathBuf| {
        read_for_coverage(path)
            .map_err(|e| PyOSError::new_err(format!("'{}': {e}", path.display())))
    };
    // Each file's input number; a kpack split host's is given once the list
    // is whole (its archives give each device's verdict).
    let mut inputs = Vec::new();
    for path in &files {
        let data = read(path)?;
        inputs.push(
            (!is_split_host(&data)).then(|| tree.add(&data, &path.display().to_string(), &|_| {})),
        );
    }
    // Files read before a later one brought a device of their vendor, read
    // again for it (core says which).
    while let Some(input) = tree.pending() {
        let path = inputs
            .iter()
            .position(|i| *i == Some(input))
            .and_then(|n| files.get(n))
            .ok_or_else(|| PyValueError::new_err("coverage: no such input"))?;
        let data = read(path).unwrap_or_default();
        tree.add_again(input, &data, &path.display().to_string(), &|_| {});
    }
    let environment = std::env::vars_os().fold([None, None, None], |mut found, (k, v)| {
        let slot = [
            "ROCM_KPACK_DISABLE",
            "ROCM_KPACK_PATH",
            "ROCM_KPACK_PATH_PREFIX",
        ]
        .iter()
        .position(|name| k == *name);
        if let Some(slot) = slot.and_then(|s| found.get_mut(s)) {
            *slot = Some(v.into_encoded_bytes());
        }
        found
    });
    let [disable, kpack_path, prefix] = &environment;
    let environment =
        Environment::from_values(disable.as_deref(), kpack_path.as_deref(), prefix.as_deref());
    for (path, input) in files.iter().zip(inputs.iter_mut()) {
        if input.is_none() {
            *input = add_split_host(&mut tree, path, &environment, read(path)?);
        }
    }
    let names = tree.devices();
    let of = |covered: &clangoffload::coverage::Covered| CoveredFile {
        cells: names
            .iter()
            .zip(&covered.verdicts)
            .map(|(device, v)| CoverageCell {
                device: device.clone(),
                applies: v.applies,
                loads: v.loads,
                entry: v.loads.then(|| v.entries.join(", ")),
                how: v.how.map(clangoffload::select::How::name),
                reason: v.reason.clone(),
            })
            .collect(),
        file: covered.name.clone(),
        error: covered.error.clone(),
        targets: covered.targets.clone(),
        findings: covered.findings.iter().map(ToString::to_string).collect(),
    };
    let mut out = Vec::new();
    // Each input's files (split hosts were given last).
    let mut by_input: Vec<Vec<&clangoffload::coverage::Covered>> = Vec::new();
    by_input.resize_with(tree.inputs(), Vec::new);
    for (input, covered) in tree.files() {
        if let Some(list) = by_input.get_mut(input) {
            list.push(covered);
        }
    }
    for (path, input) in files.iter().zip(inputs) {
        match input {
            Some(input) => out.extend(by_input.get(input).into_iter().flatten().map(|c| of(c))),
            None => out.push(CoveredFile {
                file: path.display().to_string(),
                error: Some("no longer a kpack split host".into()),
                targets: Vec::new(),
                findings: Vec::new(),
                cells: Vec::new(),
            }),
        }
    }
    Ok(out)
}

/// A kpack archive's bytes as resolution reads them (core's
/// `read_for_resolution`: its header and table, the code objects left
/// zero and never resident).
fn read_archive(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    clangoffload::kpack::read_for_resolution(size, &mut |at, buf| {
        file.read_exact_at(buf, at).is_ok()
    })
    .ok_or_else(|| std::io::Error::other("cannot be read"))
}

/// Covers the kpack split host at `path` (its bytes `data`) for every
/// device of the tree's list, its archives read as the runtime finds them;
/// its input number, `None` if it is no split host.
fn add_split_host(
    tree: &mut Tree,
    path: &std::path::Path,
    environment: &Environment<'_>,
    data: Vec<u8>,
) -> Option<usize> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real
        .parent()
        .map(std::path::Path::as_os_str)
        .unwrap_or_default();
    let mut open = |archive: &[u8]| {
        let archive = std::path::Path::new(std::ffi::OsStr::from_bytes(archive));
        read_archive(archive).ok().map(std::borrow::Cow::Owned)
    };
    let lookup = Lookup {
        environment,
        dir: dir.as_encoded_bytes(),
        loader: Loader::FallThrough,
        open: &mut open,
    };
    tree.add_split_host(&data, &path.display().to_string(), lookup)
}

/// Whether `data` is a host ROCm's kpack split: `HIPK` records in place of
/// its device code.
fn is_split_host(data: &[u8]) -> bool {
    clangoffload::object::ObjectFile::parse(data)
        .is_ok_and(|file| !clangoffload::kpack::records(&file).is_empty())
}
