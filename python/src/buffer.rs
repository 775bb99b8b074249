//! The buffer rule, as types: [`Held`] is an export of the caller's object
//! (its bytes neither freed, resized nor unmapped while held), and
//! [`Detached`] is the only way to read bytes with the GIL released.
//! Memory nothing can write (`bytes`, a read-only `mmap`, views of them) is
//! borrowed as it is; any other (a `bytearray`, a writable `mmap`, a
//! read-only `memoryview` of a `bytearray`) is copied first, under the GIL,
//! so that Python code writing to it from another thread meanwhile changes
//! nothing the decoder reads: what is decoded is what the buffer held when
//! the call began. `Python::detach` is refused by clippy everywhere but here.

use std::borrow::Cow;

use clangoffload::{CompressedBundle, DecompressOptions};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyMemoryView, PyType};

use crate::error::core_error;

/// A held buffer export of the source object: while it lives the exporter
/// may neither resize nor unmap its memory.
pub(crate) struct Held {
    buffer: PyBuffer<u8>,
    /// Whether nothing can write the memory (see [`immutable`]).
    immutable: bool,
}

impl Held {
    /// Takes an export of `source`, which must be C-contiguous bytes.
    pub(crate) fn new(source: &Bound<'_, PyAny>) -> PyResult<Held> {
        let buffer = PyBuffer::<u8>::get(source)?;
        if !buffer.is_c_contiguous() {
            return Err(PyBufferError::new_err(
                "clangoffload reads contiguous buffers only",
            ));
        }
        let immutable = buffer.readonly() && immutable(source)?;
        Ok(Held { buffer, immutable })
    }

    /// The bytes of the export.
    pub(crate) fn bytes(&self) -> &[u8] {
        let len = self.buffer.len_bytes();
        if len == 0 {
            return &[];
        }
        // SAFETY: the export is C-contiguous (checked in `new`) and `len`
        // bytes long; it is held (so neither freed, resized nor unmapped)
        // for as long as `self`, which the returned slice borrows. The bytes
        // may be written by Python code only while it holds the GIL, and
        // memory that can be written is read with the GIL released only
        // through a copy ([`Detached`]).
        unsafe { std::slice::from_raw_parts(self.buffer.buf_ptr().cast::<u8>().cast_const(), len) }
    }

    /// Whether nothing can write the bytes while they are held.
    fn immutable(&self) -> bool {
        self.immutable
    }
}

/// Whether nothing can write the memory `source` exports, given that its
/// export is read-only. A read-only export promises only that the memory is
/// not written through it: a read-only `memoryview` of a `bytearray`, or a
/// read-only array viewing a writable one, is written through its base. The
/// memory is known not to change only when the object under every view is
/// `bytes` or an `mmap` opened for reading (whose own export is read-only).
fn immutable(source: &Bound<'_, PyAny>) -> PyResult<bool> {
    static MMAP: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = source.py();
    let mut base = source.clone();
    // A view's `.obj` is what it views (None for one that no object owns).
    while let Ok(view) = base.cast::<PyMemoryView>() {
        base = view.getattr(pyo3::intern!(py, "obj"))?;
    }
    if base.is_instance_of::<PyBytes>() {
        return Ok(true);
    }
    Ok(base.is_instance(MMAP.import(py, "mmap", "mmap")?)?
        && PyBuffer::<u8>::get(&base)?.readonly())
}

/// Bytes that may be read with the GIL released: borrowed from memory
/// nothing can write, else a copy.
pub(crate) struct Detached<'h> {
    bytes: Cow<'h, [u8]>,
}

impl<'h> Detached<'h> {
    /// `bytes`, a part of `held`'s: borrowed if nothing can write them,
    /// else copied now (the GIL is held).
    pub(crate) fn new(held: &Held, bytes: &'h [u8]) -> Self {
        let bytes = if held.immutable() {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned(bytes.to_vec())
        };
        Detached { bytes }
    }

    /// The bytes (to parse under the GIL, or to find offsets in).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// `work` on the bytes with the GIL released. What it reads of the
    /// caller's memory must be these bytes (or what was parsed from them).
    #[allow(clippy::disallowed_methods)] // The one place that releases it.
    pub(crate) fn release<'a, T: Send>(
        &'a self,
        py: Python<'_>,
        work: impl Send + FnOnce(&'a [u8]) -> T,
    ) -> T {
        let bytes: &'a [u8] = &self.bytes;
        py.detach(move || work(bytes))
    }
}

/// `work` with the GIL released if nothing can write any of `held`, else
/// with it held (a writer then waits for the work): for work over several
/// exports at once, whose copies would cost more than holding the GIL.
#[allow(clippy::disallowed_methods)] // Released only over immutable memory.
pub(crate) fn release_if_immutable<T: Send>(
    py: Python<'_>,
    held: &[Held],
    work: impl Send + FnOnce() -> T,
) -> T {
    if held.iter().all(Held::immutable) {
        py.detach(work)
    } else {
        work()
    }
}

/// Decodes the compressed bundle `input` straight into a new `bytes` with
/// the GIL released (so `input` must not be writable by Python code: a
/// copy, or memory nothing can write). Errors are located `base` bytes further.
pub(crate) fn decompress_to_bytes<'py>(
    py: Python<'py>,
    input: &Detached<'_>,
    options: &DecompressOptions,
    base: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let located = |e: clangoffload::Error| core_error(py, &e, base);
    let compressed = CompressedBundle::parse(input.bytes()).map_err(located)?;
    let size = compressed.check(&options.limits).map_err(located)?;
    let mut decoding = Ok(0);
    let bytes = PyBytes::new_with(py, size, |out| {
        // Nobody else sees the new `bytes` until it is returned.
        decoding = input.release(py, |bytes| {
            CompressedBundle::parse(bytes)?.decompress_into(out, options)
        });
        Ok(())
    })?;
    decoding.map_err(located)?;
    Ok(bytes)
}
