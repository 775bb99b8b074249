//! kpack archives (ROCm 7's split device code) and the HIP runtime's rule
//! for choosing a code object from them: `KpackArchive` over the caller's
//! bytes (held, read in place), `kpack_resolve` and `kpack_arch_list`.
//! Every rule is core's (`clangoffload::kpack`).

use std::sync::Arc;

use clangoffload::kpack::{arch_list, resolve, Archive, Environment, Loader};
use clangoffload::DecompressOptions;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::Held;
use crate::error::core_error;

/// A kpack archive (``.kpack``), read in place from any buffer-protocol
/// object, whose export it holds. Its table of contents is checked when it
/// is made; a code object is decoded when asked for.
#[pyclass(frozen, module = "clangoffload")]
pub struct KpackArchive {
    held: Arc<Held>,
}

/// One entry of a kpack archive's table of contents.
#[pyclass(frozen, get_all, module = "clangoffload")]
#[derive(Clone)]
pub struct KpackEntry {
    /// The binary key, ``<kernel_name>#<index>``.
    key: String,
    /// The architecture, as the runtime matches it (``gfx90a:xnack+``).
    arch: String,
    /// The bundle entry ID it came from, or ``None``.
    target: Option<String>,
    ordinal: u64,
    original_size: u64,
}

/// What the runtime loads for a record: the archive (its index in the list
/// given) and entry, or its error code (``kpack_error``, 0 when found).
#[pyclass(frozen, get_all, module = "clangoffload")]
pub struct KpackResolution {
    kpack_error: u32,
    reason: Option<&'static str>,
    archive: Option<usize>,
    entry: Option<KpackEntry>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn entry_of(entry: &clangoffload::kpack::Entry<'_>) -> KpackEntry {
    KpackEntry {
        key: text(entry.key),
        arch: text(entry.arch),
        target: entry.target.map(text),
        ordinal: entry.ordinal,
        original_size: entry.original_size,
    }
}

impl KpackArchive {
    /// The archive, parsed again over the held bytes (a walk of its table
    /// only).
    fn archive(&self, py: Python<'_>) -> PyResult<Archive<'_>> {
        Archive::parse(self.held.bytes()).map_err(|e| core_error(py, &e, 0))
    }
}

#[pymethods]
impl KpackArchive {
    #[new]
    fn new(buffer: &Bound<'_, PyAny>) -> PyResult<Self> {
        let held = Held::new(buffer)?;
        Archive::parse(held.bytes()).map_err(|e| core_error(buffer.py(), &e, 0))?;
        Ok(KpackArchive {
            held: Arc::new(held),
        })
    }

    /// ``"none"`` or ``"zstd-per-kernel"``.
    #[getter]
    fn scheme(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.archive(py)?.scheme().name())
    }

    /// ``group_name``, if the table states it.
    #[getter]
    fn group_name(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.archive(py)?.group_name().map(text))
    }

    /// ``gfx_arches``: the architectures the runtime takes it for.
    #[getter]
    fn arches(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.archive(py)?.arches().map(text).collect())
    }

    /// Every entry, in table order.
    fn entries(&self, py: Python<'_>) -> PyResult<Vec<KpackEntry>> {
        let archive = self.archive(py)?;
        archive
            .entries()
            .map(|e| e.map(|e| entry_of(&e)).map_err(|e| core_error(py, &e, 0)))
            .collect()
    }

    /// The code object of ``key`` for ``arch`` (exact strings, as the
    /// runtime looks it up), decoded; ``KeyError`` when the table has none.
    fn read<'py>(&self, py: Python<'py>, key: &str, arch: &str) -> PyResult<Bound<'py, PyBytes>> {
        let archive = self.archive(py)?;
        let entry = archive
            .entry(key.as_bytes(), arch.as_bytes())
            .map_err(|e| core_error(py, &e, 0))?
            .ok_or_else(|| PyKeyError::new_err(format!("{key} for {arch}")))?;
        let bytes = archive
            .contents(&entry, &DecompressOptions::default())
            .map_err(|e| core_error(py, &e, 0))?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// The architecture list CLR passes for a device ISA name: itself, then its
/// generic target where CLR's table has one.
#[pyfunction]
pub fn kpack_arch_list(isa: &str) -> Vec<String> {
    arch_list(isa.as_bytes()).iter().map(|a| text(a)).collect()
}

/// What the HIP runtime loads for binary ``key`` on a device whose
/// architecture list is ``arches``, from ``archives`` (the candidates that
/// opened, in the runtime's order): the fall-through loader unless
/// ``first_candidate`` (rocm-kpack's shipped one); ``disabled`` as
/// ``ROCM_KPACK_DISABLE`` makes it.
#[pyfunction]
#[pyo3(signature = (archives, key, arches, *, first_candidate = false, disabled = false))]
pub fn kpack_resolve(
    py: Python<'_>,
    archives: Vec<PyRef<'_, KpackArchive>>,
    key: &str,
    arches: Vec<String>,
    first_candidate: bool,
    disabled: bool,
) -> PyResult<KpackResolution> {
    let parsed = archives
        .iter()
        .map(|a| a.archive(py))
        .collect::<PyResult<Vec<_>>>()?;
    let list: Vec<Vec<u8>> = arches.into_iter().map(String::into_bytes).collect();
    let environment = Environment {
        disabled,
        ..Environment::default()
    };
    let loader = if first_candidate {
        Loader::FirstCandidate
    } else {
        Loader::FallThrough
    };
    Ok(
        match resolve(&environment, key.as_bytes(), &list, &parsed, loader) {
            Ok(found) => KpackResolution {
                kpack_error: 0,
                reason: None,
                archive: Some(found.archive),
                entry: Some(entry_of(&found.entry)),
            },
            Err(e) => KpackResolution {
                kpack_error: e.code(),
                reason: Some(e.reason()),
                archive: None,
                entry: None,
            },
        },
    )
}
