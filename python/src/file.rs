//! `File`, the Python object over one file's or buffer's bytes
//! ([`Source`]: held, viewed, closed), and what is found in them:
//! containers (`container`), entries, wrapper records.

use std::sync::Arc;

use clangoffload::locate::{offload_sections, wrapper_targets, SectionKind};
use clangoffload::object::ObjectFile;
use pyo3::prelude::*;

use crate::container::Container;
use crate::entry::Entry;
use crate::error::core_error;
use crate::source::{view, Source};

/// The bytes of one file or buffer, and everything found in them.
///
/// Made by `clangoffload.open(path)` (a read-only mmap, closed by
/// `close()`) or `clangoffload.parse(buffer)` (any buffer-protocol object,
/// its export held until `close()` or until the File and everything read
/// from it are freed). Usable as a context manager.
#[pyclass(frozen, module = "clangoffload")]
pub struct File {
    /// Shared with every container and entry read from it.
    source: Arc<Source>,
}

impl File {
    /// A File over `object`, holding an export of it.
    pub(crate) fn new(
        object: &Bound<'_, PyAny>,
        owns_object: bool,
        name: Option<String>,
        verify_hash: bool,
    ) -> PyResult<File> {
        let source = Source::new(object, owns_object, name, verify_hash)?;
        Ok(File {
            source: Arc::new(source),
        })
    }
}

#[pymethods]
impl File {
    /// Every container in the file, in file order, as `clangoffload inspect`
    /// finds them: bundles, compressed bundles and OffloadBinaries back to
    /// back, in ELF/COFF/PE offload sections, in archive members. Damage
    /// outside any container (a bad section header, bytes that start no
    /// container) raises the first such error; a container that cannot be
    /// read whole raises when its entries are asked for.
    fn containers(&self, py: Python<'_>) -> PyResult<Vec<Container>> {
        Container::all_in(py, &self.source)
    }

    /// Every container anywhere in the bytes (a memory image, an unknown
    /// file), CUDA fat binaries included, found by their magics and
    /// validated; magics that start no valid container are skipped.
    fn scan(&self) -> PyResult<Vec<Container>> {
        Container::scanned_in(&self.source)
    }

    /// Every NVIDIA CUDA fat binary, as `cuobjdump -all` reads the file:
    /// a raw fat binary's back to back, a host's `.nv_fatbin` then
    /// `__nv_relfatbin` sections, the `fatbinary` images of OffloadBinaries,
    /// each archive member's in turn. A damaged one raises.
    fn cuda_fatbins(&self, py: Python<'_>) -> PyResult<Vec<Container>> {
        Container::cuda_in(py, &self.source)
    }

    /// The entries of every container whose code runs for `target` (an entry
    /// ID, by clang-offload-bundler's rules: `hip-amdgcn-amd-amdhsa--gfx90a`
    /// also takes `gfx90a:xnack+` code... as the bundler reads it) and/or
    /// whose processor is `arch` (`gfx90a`, aliases resolved; features
    /// ignored), in file order, repeats across containers included.
    #[pyo3(signature = (*, target=None, arch=None))]
    fn extract(
        &self,
        py: Python<'_>,
        target: Option<&str>,
        arch: Option<&str>,
    ) -> PyResult<Vec<Entry>> {
        let mut chosen = Vec::new();
        for container in Container::all_in(py, &self.source)? {
            for entry in container.entries(py)? {
                if entry.is_selected(target, arch) {
                    chosen.push(entry);
                }
            }
        }
        Ok(chosen)
    }

    /// The HIP/CUDA fat-binary wrapper records of an ELF or COFF/PE file
    /// (`.hipFatBinSegment`, `.nvFatBinSegment`), each with its file offset
    /// and the file offset of the fat binary it points at (through its
    /// address or its relocation), where found. Empty for other files.
    fn wrappers(&self, py: Python<'_>) -> PyResult<Vec<Wrapper>> {
        let held = self.source.held()?;
        let data = held.bytes();
        let Ok(file) = ObjectFile::parse(data) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for section in offload_sections(&file) {
            let section = section.map_err(|e| core_error(py, &e, 0))?;
            if !matches!(
                section.kind,
                SectionKind::HipWrappers | SectionKind::CudaWrappers
            ) {
                continue;
            }
            let base = section.section.offset();
            let name = String::from_utf8_lossy(section.section.name()).into_owned();
            for (record, target) in wrapper_targets(&file, &section.section) {
                let target_offset = target.and_then(|(target, at)| target.offset().checked_add(at));
                found.push(Wrapper {
                    offset: base.saturating_add(record.offset),
                    section: name.clone(),
                    kind: record.kind.name(),
                    magic: record.kind.magic(),
                    version: record.version,
                    binary_address: record.binary,
                    target_offset,
                });
            }
        }
        Ok(found)
    }

    /// Releases the buffer export; for a file from `open()`, also unmaps
    /// it. Raises `BufferError` (and stays open) while a `memoryview` of the
    /// file's bytes is alive, or a decode in another thread is reading it.
    /// Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.source.close(py)
    }

    /// Whether `close()` has succeeded.
    #[getter]
    fn closed(&self) -> bool {
        self.source.closed()
    }

    /// The path given to `open()`, or None.
    #[getter]
    fn name(&self) -> Option<&str> {
        self.source.path()
    }

    /// A `memoryview` of all the bytes (read-only for `open()` and `bytes`).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let len = self.source.held()?.bytes().len();
        view(&self.source.object(py)?, 0, len)
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.source.held()?.bytes().len())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        let state = match self.source.held() {
            Ok(held) => format!("{} bytes", held.bytes().len()),
            Err(_) => "closed".to_owned(),
        };
        match self.source.path() {
            Some(name) => format!("<clangoffload.File {name:?} {state}>"),
            None => format!("<clangoffload.File {state}>"),
        }
    }
}

/// A HIP or CUDA fat-binary wrapper record (what the offload wrapper
/// registers with the runtime), with file offsets so that it can be patched
/// in place (kpack rewrites `HIPF` to `HIPK`).
#[pyclass(frozen, module = "clangoffload", get_all)]
pub struct Wrapper {
    /// The record's file offset (where its magic is).
    offset: u64,
    /// The wrapper section's name.
    section: String,
    /// `HIPF`, `HIPK`, `CUDA`, or `unknown magic`.
    kind: &'static str,
    /// The magic as a number.
    magic: u32,
    /// The record's version (1).
    version: u32,
    /// The address stored in the record (0 where a relocation fills it).
    binary_address: u64,
    /// The file offset of the fat binary it leads to, or None if not found.
    target_offset: Option<u64>,
}

#[pymethods]
impl Wrapper {
    fn __repr__(&self) -> String {
        format!(
            "<clangoffload.Wrapper {} at {:#x} -> {}>",
            self.kind,
            self.offset,
            self.target_offset
                .map_or_else(|| "?".to_owned(), |t| format!("{t:#x}"))
        )
    }
}
