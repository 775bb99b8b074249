//! The caller's bytes, held: a [`Source`] keeps a buffer export of the
//! object a `File` reads (a `bytes`, a `bytearray`, a read-only `mmap`, ...)
//! for as long as it is open, so the object cannot be resized or unmapped
//! under a reader, and hands out views (`memoryview` slices of that object)
//! instead of copies. The `File` a Python caller holds, and every container
//! and entry read from it, share one `Source`, so that this module, not
//! `File`, is what they depend on.
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

use clangoffload::DecompressOptions;
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyMemoryView, PySlice};

use crate::buffer::Held;

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

/// Text from bytes read from a file (names, IDs): UTF-8, else with
/// replacement characters.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A length or offset in the bytes as a file offset.
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A file offset as a place in the bytes held.
pub(crate) fn to_usize(n: u64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| PyValueError::new_err("offset does not fit in memory"))
}

/// The bytes of one file or buffer, held until closed.
pub(crate) struct Source {
    /// The object whose bytes are read (the mmap for `open`).
    object: Py<PyAny>,
    /// The export; `None` once closed.
    held: Mutex<Option<Arc<Held>>>,
    /// Whether `close()` closes `object` too (the mmap `open` made).
    owns_object: bool,
    /// The path given to `open`, if any.
    name: Option<String>,
    /// Whether decoding a compressed bundle checks its hash.
    verify_hash: bool,
}

impl Source {
    /// The bytes of `object`, holding an export of it.
    pub(crate) fn new(
        object: &Bound<'_, PyAny>,
        owns_object: bool,
        name: Option<String>,
        verify_hash: bool,
    ) -> PyResult<Source> {
        let held = Held::new(object)?;
        Ok(Source {
            object: object.clone().unbind(),
            held: Mutex::new(Some(Arc::new(held))),
            owns_object,
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

    /// The export, for reading; an error once closed.
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
    pub(crate) fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.held()?;
        Ok(self.object.bind(py).clone())
    }

    /// Whether `close()` has succeeded.
    pub(crate) fn closed(&self) -> bool {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// Releases the export; with `owns_object`, closes the object too.
    /// `BufferError` (and still open) while a decode in another thread
    /// holds the export, or a `memoryview` of the object is alive. Closing
    /// twice does nothing.
    pub(crate) fn close(&self, py: Python<'_>) -> PyResult<()> {
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
        if self.owns_object {
            let object = self.object.bind(py);
            if let Err(error) = object.call_method0("close") {
                // Views of the mapping are alive: keep it, and the file,
                // open, so they stay valid.
                *slot = Some(Arc::new(Held::new(object)?));
                return Err(PyBufferError::new_err(format!(
                    "cannot close: memoryviews of the file's bytes are still alive ({error})"
                )));
            }
        }
        Ok(())
    }
}
