//! `Entry`: one entry of a container as a Python object — a bundle's
//! entry, an OffloadBinary's image, a CUDA fat binary's entry, or the code
//! object `select_for_device` chose — its bytes a view of what keeps them
//! ([`Owner`]: the file, or bytes decoded from it). The kind-specific
//! details are each in one optional field.

use std::sync::Arc;

use clangoffload::id::DeviceMatch;
use clangoffload::inspect::InspectedEntry;
use clangoffload::{offset_in, OffloadBinary, TargetId};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::ids::{base_processor, canonical_processor};
use crate::source::{text, to_u64, to_usize, view, Source};

/// What keeps an entry's bytes: the file, or decoded bytes.
pub(crate) enum Owner {
    File(Arc<Source>),
    Decoded(Py<PyBytes>),
}

impl Owner {
    pub(crate) fn clone_ref(&self, py: Python<'_>) -> Owner {
        match self {
            Owner::File(f) => Owner::File(Arc::clone(f)),
            Owner::Decoded(b) => Owner::Decoded(b.clone_ref(py)),
        }
    }

    fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Owner::File(f) => f.object(py),
            Owner::Decoded(b) => Ok(b.bind(py).clone().into_any()),
        }
    }
}

/// An OffloadBinary image's details.
pub(crate) struct Image {
    pub(crate) triple: String,
    pub(crate) arch: String,
    pub(crate) image_kind: &'static str,
    pub(crate) offload_kind: &'static str,
    pub(crate) strings: Vec<(String, String)>,
}

/// A CUDA fat binary entry's details.
pub(crate) struct Cuda {
    pub(crate) kind: &'static str,
    pub(crate) sm: String,
    pub(crate) compression: &'static str,
    /// The file name `cuobjdump` extracts its image to.
    pub(crate) name: Option<String>,
}

/// One entry of a bundle (or one image of an OffloadBinary).
#[pyclass(frozen, module = "clangoffload")]
pub struct Entry {
    /// Its index in its container; None for a code object chosen by
    /// `select_for_device` (the runtime's rule gives the code, not where).
    pub(crate) index: Option<usize>,
    pub(crate) id: String,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) owner: Owner,
    /// Where its bytes start in the owner.
    pub(crate) start: usize,
    pub(crate) code_object_target: Option<String>,
    pub(crate) target_matches: Option<bool>,
    pub(crate) how: Option<&'static str>,
    pub(crate) image: Option<Image>,
    pub(crate) cuda: Option<Cuda>,
}

impl Entry {
    /// Entry `index` of a bundle whose bytes are `owner`'s from `base`.
    pub(crate) fn of_bundle(
        py: Python<'_>,
        index: usize,
        entry: &InspectedEntry<'_>,
        owner: &Owner,
        base: usize,
    ) -> PyResult<Entry> {
        let start = to_usize(entry.offset)?
            .checked_add(base)
            .ok_or_else(|| PyValueError::new_err("entry offset overflows"))?;
        Ok(Entry {
            index: Some(index),
            id: text(&entry.id),
            offset: to_u64(start),
            size: entry.size,
            owner: owner.clone_ref(py),
            start,
            code_object_target: entry.code_object.map(|c| c.target.to_string()),
            target_matches: entry.code_object.map(|c| c.id_agrees),
            how: None,
            image: None,
            cuda: None,
        })
    }

    /// The code object `select_for_device` chose, `size` bytes at `start`
    /// of `owner` (`offset` where it was found): no index (the runtime's
    /// rule gives the code, not where), `.how` saying which rule.
    pub(crate) fn chosen(
        id: String,
        offset: u64,
        size: u64,
        owner: Owner,
        start: usize,
        how: DeviceMatch,
    ) -> Entry {
        Entry {
            index: None,
            id,
            offset,
            size,
            owner,
            start,
            code_object_target: None,
            target_matches: None,
            how: Some(clangoffload::select::How::from(how).name()),
            image: None,
            cuda: None,
        }
    }

    /// The processor its code is for (see the `processor` getter).
    fn processor_name(&self) -> Option<String> {
        if self.cuda.is_some() {
            return None;
        }
        if self.image.is_some() {
            return TargetId::parse(&self.id)
                .ok()
                .map(|t| canonical_processor(&t));
        }
        base_processor(&self.id)
    }

    /// Whether `File.extract` takes this entry: compatible with `target` by
    /// the bundler's rules, and for the processor `arch` names.
    pub(crate) fn is_selected(&self, target: Option<&str>, arch: Option<&str>) -> bool {
        let by_target =
            target.is_none_or(|t| clangoffload::bundler::matches_target(&self.id, t, false));
        let by_arch = arch.is_none_or(|a| {
            let wanted = TargetId::parse(a).ok().map(|t| canonical_processor(&t));
            wanted.is_some() && self.processor_name() == wanted
        });
        by_target && by_arch
    }
}

#[pymethods]
impl Entry {
    /// The entry ID (an OffloadBinary image's target ID).
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// Its index in its container (None for a code object chosen by
    /// `select_for_device`).
    #[getter]
    fn index(&self) -> Option<usize> {
        self.index
    }

    /// Where its bytes start: in the file for a plain bundle or an
    /// OffloadBinary, in the decoded bundle for a compressed one.
    #[getter]
    fn offset(&self) -> u64 {
        self.offset
    }

    /// Its size.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    /// Its bytes, as a `memoryview`: of the file (no copy) for a plain
    /// bundle or an OffloadBinary, of the decoded bytes for a compressed
    /// bundle. It keeps what it views alive; `bytes(entry.data)` copies.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let len = to_usize(self.size)?;
        view(&self.owner.object(py)?, self.start, len)
    }

    /// For an AMDGPU code object: the target ID its ELF header names.
    #[getter]
    fn code_object_target(&self) -> Option<&str> {
        self.code_object_target.as_deref()
    }

    /// For an AMDGPU code object: whether the entry ID ends with
    /// `-<code_object_target>`.
    #[getter]
    fn target_matches(&self) -> Option<bool> {
        self.target_matches
    }

    /// For an entry chosen by `select_for_device`: `"native"`,
    /// `"generic"` or `"spirv"`.
    #[getter]
    fn how(&self) -> Option<&'static str> {
        self.how
    }

    /// The processor its code is for (`gfx90a`; aliases resolved, features
    /// dropped), or None if the ID names none.
    #[getter]
    fn processor(&self) -> Option<String> {
        self.processor_name()
    }

    /// Whether clang-offload-bundler gives this entry to a request for
    /// `target` (both IDs read as LLVM 22 reads them).
    #[pyo3(signature = (target, hip_openmp_compatible=false))]
    fn matches(&self, target: &str, hip_openmp_compatible: bool) -> bool {
        clangoffload::bundler::matches_target(&self.id, target, hip_openmp_compatible)
    }

    /// An OffloadBinary image's triple; None for a bundle entry.
    #[getter]
    fn triple(&self) -> Option<&str> {
        self.image.as_ref().map(|i| i.triple.as_str())
    }

    /// An OffloadBinary image's architecture string (its target ID).
    #[getter]
    fn arch(&self) -> Option<&str> {
        self.image.as_ref().map(|i| i.arch.as_str())
    }

    /// An OffloadBinary image's kind (`elf`, `bitcode`, ...); a CUDA
    /// entry's (`elf`, `ptx`, `ltoir`, `concat`, `unknown`).
    #[getter]
    fn image_kind(&self) -> Option<&'static str> {
        match (&self.image, &self.cuda) {
            (Some(i), _) => Some(i.image_kind),
            (None, Some(c)) => Some(c.kind),
            (None, None) => None,
        }
    }

    /// A CUDA entry's SM (`sm_90a`, for PTX too).
    #[getter]
    fn sm(&self) -> Option<&str> {
        self.cuda.as_ref().map(|c| c.sm.as_str())
    }

    /// How a CUDA entry is stored: `"none"`, `"lz4"`, `"zstd"`,
    /// `"lz4+zstd"` (both flags), or `"opaque"` (nvcc `-dlto`'s LTO-IR,
    /// whose bytes are given as stored).
    #[getter]
    fn compression(&self) -> Option<&'static str> {
        self.cuda.as_ref().map(|c| c.compression)
    }

    /// The file name `cuobjdump -xelf all`/`-xptx all` writes a CUDA
    /// entry's image to (for entries of ``File.cuda_fatbins()`` of a file
    /// opened by path; None for other kinds, or when unknown).
    #[getter]
    fn cuobjdump_name(&self) -> Option<&str> {
        self.cuda.as_ref().and_then(|c| c.name.as_deref())
    }

    /// An OffloadBinary image's offload kind (`hip`, `openmp`, `cuda`, ...).
    #[getter]
    fn offload_kind(&self) -> Option<&'static str> {
        self.image.as_ref().map(|i| i.offload_kind)
    }

    /// An OffloadBinary image's key-value strings, in table order.
    #[getter]
    fn strings(&self) -> Option<Vec<(String, String)>> {
        self.image.as_ref().map(|i| i.strings.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "<clangoffload.Entry {:?} at {:#x}, {} bytes>",
            self.id, self.offset, self.size
        )
    }
}

/// Entries for every image of `binary`, which lies in `whole` (the bytes
/// of `owner`).
pub(crate) fn image_entries(
    py: Python<'_>,
    binary: &OffloadBinary<'_>,
    whole: &[u8],
    owner: &Owner,
) -> PyResult<Vec<Entry>> {
    binary
        .entries()
        .enumerate()
        .map(|(index, image)| {
            let start = offset_in(whole, image.image())
                .ok_or_else(|| PyValueError::new_err("image outside its binary"))?;
            let arch = image.arch().map(text).unwrap_or_default();
            Ok(Entry {
                index: Some(index),
                id: arch.clone(),
                offset: start,
                size: to_u64(image.image().len()),
                owner: owner.clone_ref(py),
                start: to_usize(start)?,
                code_object_target: None,
                target_matches: None,
                how: None,
                cuda: None,
                image: Some(Image {
                    triple: image.triple().map(text).unwrap_or_default(),
                    arch,
                    image_kind: image.image_kind().objdump_name(),
                    offload_kind: image.offload_kind().name(),
                    strings: image
                        .strings()
                        .map(|s| (text(s.key), text(s.value)))
                        .collect(),
                }),
            })
        })
        .collect()
}
