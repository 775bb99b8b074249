//! Whole jobs, as the C ABI offers them: bundling (byte-identical to LLVM
//! 22's clang-offload-bundler), `-unbundle` and `-list` by the bundler's
//! rules, and decompressing one compressed bundle. Every rule is core's
//! (`bundler`, `compressed`); this module moves bytes in and out.

use clangoffload::bundler::{self, BundleRequest, Compression, Decoding, FileType, Plan};
use clangoffload::{CompressionMethod, DecompressOptions, Limits};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::buffer::{decompress_to_bytes, release_if_immutable, Detached, Held};
use crate::error::bundler_error;
use crate::file::File;

/// Output `index` of a bundler plan as one new `bytes`.
fn output_bytes<'py>(
    py: Python<'py>,
    plan: &Plan<'_>,
    index: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = usize::try_from(plan.output_size(index))
        .map_err(|_| PyValueError::new_err("output does not fit in memory"))?;
    PyBytes::new_with(py, size, |out| {
        // `new_with` hands out zeroed memory: padding is skipped over.
        let mut at = 0usize;
        for piece in plan.output(index) {
            let len = match (piece, plan.bytes(piece)) {
                (_, Some(bytes)) => {
                    at.checked_add(bytes.len())
                        .and_then(|end| out.get_mut(at..end))
                        .ok_or_else(|| PyValueError::new_err("plan larger than its size"))?
                        .copy_from_slice(bytes);
                    bytes.len()
                }
                (bundler::Piece::Zeros(n), None) => usize::try_from(*n)
                    .map_err(|_| PyValueError::new_err("padding does not fit in memory"))?,
                (_, None) => 0,
            };
            at = at
                .checked_add(len)
                .ok_or_else(|| PyValueError::new_err("plan larger than its size"))?;
        }
        Ok(())
    })
}

/// How `compress=` asks for compression: False/None, True (zstd, as
/// LLVM 22's `-compress`), or a method name.
fn compression(
    compress: &Bound<'_, PyAny>,
    version: u16,
    level: Option<i32>,
) -> PyResult<Option<Compression>> {
    let method = if let Ok(name) = compress.cast::<PyString>() {
        match name.to_str()? {
            "zstd" => CompressionMethod::Zstd,
            "zlib" => CompressionMethod::Zlib,
            other => {
                return Err(PyValueError::new_err(format!(
                    "compress={other:?}: expected 'zstd' or 'zlib'"
                )))
            }
        }
    } else if compress.is_truthy()? {
        CompressionMethod::Zstd
    } else {
        return Ok(None);
    };
    Ok(Some(Compression {
        method,
        version,
        level,
    }))
}

/// The binary bundle clang-offload-bundler 22 writes for `entries` (pairs
/// of target and payload, any buffer), byte for byte: IDs normalised and
/// checked as `-targets=` is, each payload at an `align`-aligned offset,
/// compressed with `compress=True` (zstd; or `"zlib"`) in header
/// `version` 2 or 3 at `level` (None: the bundler's default). The GIL is
/// released while compressing payloads nothing can write (`bytes`, a
/// read-only mmap).
#[pyfunction]
#[pyo3(signature = (entries, align=4096, compress=None, *, version=3, level=None))]
pub fn bundle<'py>(
    py: Python<'py>,
    entries: Vec<(String, Bound<'py, PyAny>)>,
    align: u64,
    compress: Option<&Bound<'py, PyAny>>,
    version: u16,
    level: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let compression = match compress {
        Some(compress) => compression(compress, version, level)?,
        None => None,
    };
    let held = entries
        .iter()
        .map(|(_, payload)| Held::new(payload))
        .collect::<PyResult<Vec<_>>>()?;
    let targets: Vec<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    let inputs: Vec<&[u8]> = held.iter().map(Held::bytes).collect();
    let request = BundleRequest {
        file_type: FileType::Binary,
        targets: &targets,
        inputs: &inputs,
        align,
        compression,
    };
    // Compressing is worth releasing the GIL for, over immutable inputs.
    let plan = if compression.is_some() {
        release_if_immutable(py, &held, || bundler::bundle(&request, &mut ()))
    } else {
        bundler::bundle(&request, &mut ())
    }
    .map_err(|e| bundler_error(py, &e))?;
    output_bytes(py, &plan, 0)
}

/// The file type `-type=` names.
fn file_type(py: Python<'_>, name: &str) -> PyResult<FileType> {
    FileType::from_name(name).map_err(|e| bundler_error(py, &e))
}

/// What `clang-offload-bundler -unbundle -type=<file_type> -targets=...`
/// writes for each target, by its rules (exact ID first, then the first
/// compatible entry; host fallback; archives fanned out), as `bytes`; with
/// `allow_missing=True` a target given nothing gets empty bytes (LLVM writes
/// an empty file). Raises `BundlerFailure` where the bundler fails.
#[pyfunction]
#[pyo3(signature = (data, targets, *, file_type="o", allow_missing=false, hip_openmp_compatible=false))]
pub fn unbundle<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    targets: Vec<String>,
    file_type: &str,
    allow_missing: bool,
    hip_openmp_compatible: bool,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let held = Held::new(data)?;
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let request = bundler::UnbundleRequest {
        file_type: self::file_type(py, file_type)?,
        targets: &targets,
        allow_missing,
        hip_openmp_compatible,
        ..bundler::UnbundleRequest::default()
    };
    let plan =
        bundler::unbundle(held.bytes(), &request, &mut ()).map_err(|e| bundler_error(py, &e))?;
    // LLVM writes what it found, then fails; here the failure is all.
    if let Some(failure) = plan.failure() {
        return Err(bundler_error(py, failure));
    }
    (0..plan.output_count())
        .map(|i| output_bytes(py, &plan, i))
        .collect()
}

/// What `clang-offload-bundler -list -type=<file_type>` prints: the entry
/// IDs in file order (a repeated ID of one bundle once).
#[pyfunction]
#[pyo3(signature = (data, *, file_type="o"))]
pub fn list_ids(py: Python<'_>, data: &Bound<'_, PyAny>, file_type: &str) -> PyResult<Vec<String>> {
    let held = Held::new(data)?;
    let listed = bundler::list(
        held.bytes(),
        self::file_type(py, file_type)?,
        Decoding::default(),
        &mut (),
    )
    .map_err(|e| bundler_error(py, &e))?;
    Ok(listed
        .iter()
        .map(|(_, id)| String::from_utf8_lossy(id).into_owned())
        .collect())
}

/// Decompresses one compressed bundle (`CCOB`, versions 1–3, zlib or
/// zstd) into new `bytes`, with the GIL released: at most `max_size`
/// bytes (default 1 GiB), the hash checked unless `verify_hash=False`.
#[pyfunction]
#[pyo3(signature = (data, *, verify_hash=true, max_size=None))]
pub fn decompress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    verify_hash: bool,
    max_size: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let held = Held::new(data)?;
    let options = DecompressOptions {
        verify_hash,
        limits: Limits {
            max_uncompressed_size: max_size.unwrap_or(Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE),
        },
        ..DecompressOptions::default()
    };
    decompress_to_bytes(py, &Detached::new(&held, held.bytes()), &options, 0)
}

/// The file object for any buffer-protocol object, its export held until
/// `close()`; `verify_hash=False` decodes compressed bundles without
/// checking their hash (as LLVM's bundler and the runtimes do).
#[pyfunction]
#[pyo3(signature = (data, *, verify_hash=true))]
pub fn parse(data: &Bound<'_, PyAny>, verify_hash: bool) -> PyResult<File> {
    File::new(data, false, None, verify_hash)
}

/// The file object for an mmap that `clangoffload.open` made: `close()`
/// closes it.
#[pyfunction]
#[pyo3(signature = (mapping, name, *, verify_hash=true))]
pub fn _open_mapped(mapping: &Bound<'_, PyAny>, name: String, verify_hash: bool) -> PyResult<File> {
    File::new(mapping, true, Some(name), verify_hash)
}

/// The ID clang-offload-bundler 22 writes for a `-targets=` entry.
#[pyfunction]
pub fn normalize_entry_id(py: Python<'_>, text: &str) -> PyResult<String> {
    clangoffload::id::normalize_entry_id(text).map_err(|e| crate::error::id_error(py, &e, text))
}
