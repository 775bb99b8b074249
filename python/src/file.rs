//! The caller's bytes, held: `File` keeps a buffer export of the object it
//! reads (a `bytes`, a `bytearray`, a read-only `mmap`, ...) for as long as it
//! is open, so the object cannot be resized or unmapped under a reader, and
//! hands out views (`memoryview` slices of that object) instead of copies.
//!
//! Lifetimes (the contract `docs/python.md` states):
//! - Every Rust read of the caller's bytes happens through a [`Held`] export,
//!   shared by `Arc`: `close()` refuses (`BufferError`) while a decode
//!   running in another thread still holds one.
//! - Views given out are `memoryview`s of the source object, each holding an
//!   export of its own: for a file from `open()`, `close()` unmaps it only
//!   when no such view is alive, else raises `BufferError` and stays open.
//!   A view can therefore never outlive its mapping.
//! - A source whose memory can be written (a `bytearray`, or a read-only
//!   `memoryview` of one) is read under the GIL only; before the GIL is
//!   released (decoding) the bytes to decode are copied, so a concurrent
//!   writer cannot change them mid-decode: the rule is a type,
//!   `buffer::Detached`, the only way to release the GIL here.

use std::sync::{Arc, Mutex, PoisonError};

use clangoffload::locate::{offload_sections, wrapper_targets, SectionKind};
use clangoffload::object::ObjectFile;
use clangoffload::DecompressOptions;
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyMemoryView, PySlice};

use crate::buffer::Held;
use crate::container::{Container, Entry};
use crate::error::core_error;

/// `range` of `bytes`, or a located "truncated" error (never a panic: the
/// ranges come from parsed headers, checked again here).
pub(crate) fn slice(bytes: &[u8], start: usize, len: usize) -> PyResult<&[u8]> {
    start
        .checked_add(len)
        .and_then(|end| bytes.get(start..end))
        .ok_or_else(|| PyValueError::new_err("range outside the buffer"))
}

/// A `memoryview` of `owner[start:start+len]`: no copy, the view holding an
/// export of `owner` itself.
pub(crate) fn view<'py>(
    owner: &Bound<'py, PyAny>,
    start: usize,
    len: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let py = owner.py();
    let to_isize = |n: usize| {
        isize::try_from(n).map_err(|_| PyValueError::new_err("offset does not fit in a Py_ssize_t"))
    };
    let end = start
        .checked_add(len)
        .ok_or_else(|| PyValueError::new_err("range overflows"))?;
    let whole = PyMemoryView::from(owner)?;
    whole.get_item(PySlice::new(py, to_isize(start)?, to_isize(end)?, 1))
}

/// The bytes of one file or buffer, and everything found in them.
///
/// Made by `clangoffload.open(path)` (a read-only mmap, closed by
/// `close()`) or `clangoffload.parse(buffer)` (any buffer-protocol object,
/// its export held until `close()` or until the File is freed). Usable as a
/// context manager.
#[pyclass(frozen, module = "clangoffload")]
pub struct File {
    /// The object whose bytes are read (the mmap for `open`).
    source: Py<PyAny>,
    /// The export; `None` once closed.
    held: Mutex<Option<Arc<Held>>>,
    /// Whether `close()` closes `source` too (the mmap `open` made).
    owns_source: bool,
    /// The path given to `open`, if any.
    name: Option<String>,
    /// Whether decoding a compressed bundle checks its hash.
    verify_hash: bool,
}

impl File {
    /// A File over `source`, holding an export of it.
    pub(crate) fn new(
        source: &Bound<'_, PyAny>,
        owns_source: bool,
        name: Option<String>,
        verify_hash: bool,
    ) -> PyResult<File> {
        let held = Held::new(source)?;
        Ok(File {
            source: source.clone().unbind(),
            held: Mutex::new(Some(Arc::new(held))),
            owns_source,
            name,
            verify_hash,
        })
    }

    /// How its compressed bundles are decoded: the default limit, the hash
    /// checked as `open`/`parse` were asked.
    pub(crate) fn decompress_options(&self) -> DecompressOptions {
        DecompressOptions {
            verify_hash: self.verify_hash,
            ..DecompressOptions::default()
        }
    }

    /// The export, for reading; an error once the file is closed.
    pub(crate) fn held(&self) -> PyResult<Arc<Held>> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| PyValueError::new_err("I/O operation on a closed clangoffload.File"))
    }

    /// The path given to `open`, if any.
    pub(crate) fn path(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The source object, for making views; an error once closed (an
    /// unmapped mmap has no bytes to view).
    pub(crate) fn source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.held()?;
        Ok(self.source.bind(py).clone())
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
    fn containers(slf: &Bound<'_, Self>) -> PyResult<Vec<Container>> {
        Container::all_in(slf)
    }

    /// Every container anywhere in the bytes (a memory image, an unknown
    /// file), CUDA fat binaries included, found by their magics and
    /// validated; magics that start no valid container are skipped.
    fn scan(slf: &Bound<'_, Self>) -> PyResult<Vec<Container>> {
        Container::scanned_in(slf)
    }

    /// Every NVIDIA CUDA fat binary, as `cuobjdump -all` reads the file:
    /// a raw fat binary's back to back, a host's `.nv_fatbin` then
    /// `__nv_relfatbin` sections, the `fatbinary` images of OffloadBinaries,
    /// each archive member's in turn. A damaged one raises.
    fn cuda_fatbins(slf: &Bound<'_, Self>) -> PyResult<Vec<Container>> {
        Container::cuda_in(slf)
    }

    /// The entries of every container whose code runs for `target` (an entry
    /// ID, by clang-offload-bundler's rules: `hip-amdgcn-amd-amdhsa--gfx90a`
    /// also takes `gfx90a:xnack+` code... as the bundler reads it) and/or
    /// whose processor is `arch` (`gfx90a`, aliases resolved; features
    /// ignored), in file order, repeats across containers included.
    #[pyo3(signature = (*, target=None, arch=None))]
    fn extract(
        slf: &Bound<'_, Self>,
        target: Option<&str>,
        arch: Option<&str>,
    ) -> PyResult<Vec<Entry>> {
        let mut chosen = Vec::new();
        for container in Container::all_in(slf)? {
            for entry in container.entries(slf.py())? {
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
        let held = self.held()?;
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
        let mut slot = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(held) = slot.take() else {
            return Ok(());
        };
        let held = match Arc::try_unwrap(held) {
            Ok(held) => held,
            Err(shared) => {
                *slot = Some(shared);
                return Err(PyBufferError::new_err(
                    "cannot close: another thread is reading the file",
                ));
            }
        };
        drop(held);
        if self.owns_source {
            let source = self.source.bind(py);
            if let Err(error) = source.call_method0("close") {
                // Views of the mapping are alive: keep it, and the file,
                // open, so they stay valid.
                *slot = Some(Arc::new(Held::new(source)?));
                return Err(PyBufferError::new_err(format!(
                    "cannot close: memoryviews of the file's bytes are still alive ({error})"
                )));
            }
        }
        Ok(())
    }

    /// Whether `close()` has succeeded.
    #[getter]
    fn closed(&self) -> bool {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// The path given to `open()`, or None.
    #[getter]
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// A `memoryview` of all the bytes (read-only for `open()` and `bytes`).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let len = self.held()?.bytes().len();
        view(&self.source(py)?, 0, len)
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.held()?.bytes().len())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        let state = match self.held() {
            Ok(held) => format!("{} bytes", held.bytes().len()),
            Err(_) => "closed".to_owned(),
        };
        match &self.name {
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
