//! Bundle entry IDs and AMDGPU target IDs as Python values: parsed by core
//! when made (a bad one raises `InvalidIdError`), compared and normalised by
//! core's rules. Each keeps its text and parses it again per call (a few
//! hundred nanoseconds), so no Rust view outlives a call.

use clangoffload::id::{as_read_by_bundler, normalize_entry_id, FeatureSetting};
use clangoffload::{BundleEntryId, TargetId as CoreTargetId};
use pyo3::prelude::*;

use crate::error::id_error;

/// The processor a target ID names, with an alias resolved (`fiji` →
/// `gfx803`); other processors (`sm_90a`) as written.
pub(crate) fn canonical_processor(target: &CoreTargetId<'_>) -> String {
    target
        .amdgpu_processor()
        .map_or(target.processor(), |p| p.name)
        .to_owned()
}

/// The processor an entry ID's target ID names; None if it names none.
pub(crate) fn base_processor(id: &str) -> Option<String> {
    let id = BundleEntryId::parse(id).ok()?;
    if id.target_id().is_empty() {
        return None;
    }
    id.parsed_target_id().ok().map(|t| canonical_processor(&t))
}

fn setting_name(setting: FeatureSetting) -> &'static str {
    match setting {
        FeatureSetting::Any => "any",
        FeatureSetting::On => "on",
        FeatureSetting::Off => "off",
    }
}

/// A bundle entry ID: `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]`,
/// e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`. Equal when the text is.
#[pyclass(frozen, eq, hash, module = "clangoffload")]
#[derive(PartialEq, Eq, Hash)]
pub struct EntryId {
    text: String,
}

impl EntryId {
    /// Applies `f` to the parsed ID (valid since `new` checked it).
    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&BundleEntryId<'_>) -> T) -> PyResult<T> {
        BundleEntryId::parse(&self.text)
            .map(|id| f(&id))
            .map_err(|e| id_error(py, &e, &self.text))
    }
}

#[pymethods]
impl EntryId {
    /// Parses `text`; `InvalidIdError` if it has fewer than five components.
    #[new]
    fn new(py: Python<'_>, text: String) -> PyResult<EntryId> {
        let id = EntryId { text };
        id.with(py, |_| ())?;
        Ok(id)
    }

    /// The offload kind (`host`, `hip`, `hipv4`, `openmp`, ...).
    #[getter]
    fn kind(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |id| id.kind().to_owned())
    }

    /// The triple as written (`amdgcn-amd-amdhsa-`).
    #[getter]
    fn triple(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |id| id.triple().to_string())
    }

    /// The triple's architecture (`amdgcn`).
    #[getter]
    fn arch(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |id| id.triple().arch.to_owned())
    }

    /// The target ID part (`gfx90a:xnack+`); empty if none.
    #[getter]
    fn target_id(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |id| id.target_id().to_owned())
    }

    /// The target ID parsed for the triple; None if there is none.
    /// `InvalidIdError` if it does not parse.
    #[getter]
    fn target(&self, py: Python<'_>) -> PyResult<Option<TargetId>> {
        let parsed = self.with(py, |id| {
            (!id.target_id().is_empty()).then(|| {
                id.parsed_target_id()
                    .map(|_| TargetId::unchecked(id.target_id(), id.triple().arch))
            })
        })?;
        parsed.transpose().map_err(|e| id_error(py, &e, &self.text))
    }

    /// The processor of its target ID (aliases resolved, features
    /// dropped); None if it names none.
    #[getter]
    fn processor(&self) -> Option<String> {
        base_processor(&self.text)
    }

    /// Whether it is a host entry.
    #[getter]
    fn is_host(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |id| id.is_host())
    }

    /// The ID clang-offload-bundler 22 writes for this target
    /// (`hip-amdgcn-amd-amdhsa-unknown-gfx906` →
    /// `hip-amdgcn-amd-amdhsa--gfx906`).
    fn normalized(&self, py: Python<'_>) -> PyResult<String> {
        normalize_entry_id(&self.text).map_err(|e| id_error(py, &e, &self.text))
    }

    /// Whether code stored under this ID may be given to a request for
    /// `requested`, by LLVM's rule on the IDs as written (kinds `hip` and
    /// `hipv4` alike; `hip*` and `openmp` too with
    /// `hip_openmp_compatible`; features the code sets must be set the same
    /// way in the request).
    #[pyo3(signature = (requested, hip_openmp_compatible=false))]
    fn is_compatible_with(
        &self,
        py: Python<'_>,
        requested: &EntryId,
        hip_openmp_compatible: bool,
    ) -> PyResult<bool> {
        let other =
            BundleEntryId::parse(&requested.text).map_err(|e| id_error(py, &e, &requested.text))?;
        self.with(py, |id| {
            id.is_compatible_with(&other, hip_openmp_compatible)
        })
    }

    /// Whether clang-offload-bundler 22 gives this entry to `-targets=`
    /// `requested` when unbundling: both read as it reads them (LLVM 16's
    /// `hip-amdgcn-amd-amdhsa-gfx906` included), then compatible.
    #[pyo3(signature = (requested, hip_openmp_compatible=false))]
    fn bundler_matches(
        &self,
        py: Python<'_>,
        requested: &EntryId,
        hip_openmp_compatible: bool,
    ) -> PyResult<bool> {
        let other =
            BundleEntryId::parse(&requested.text).map_err(|e| id_error(py, &e, &requested.text))?;
        self.with(py, |id| {
            as_read_by_bundler(id)
                .is_compatible_with(&as_read_by_bundler(&other), hip_openmp_compatible)
        })
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("EntryId({:?})", self.text)
    }
}

/// A target ID: a processor and its features, e.g. `gfx90a:sramecc+:xnack-`
/// (AMDGPU processors and their aliases as LLVM 22 knows them). Equal when
/// the canonical form is.
#[pyclass(frozen, module = "clangoffload")]
pub struct TargetId {
    text: String,
    /// The triple architecture it is read for (`amdgcn` unless made from
    /// an entry ID of another architecture).
    arch: String,
}

impl TargetId {
    fn unchecked(text: &str, arch: &str) -> TargetId {
        TargetId {
            text: text.to_owned(),
            arch: arch.to_owned(),
        }
    }

    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&CoreTargetId<'_>) -> T) -> PyResult<T> {
        CoreTargetId::parse_for_arch(&self.arch, &self.text)
            .map(|t| f(&t))
            .map_err(|e| id_error(py, &e, &self.text))
    }
}

#[pymethods]
impl TargetId {
    /// Parses an AMDGPU target ID; `InvalidIdError` for an unknown
    /// processor, a feature it does not support, a malformed feature.
    #[new]
    fn new(py: Python<'_>, text: String) -> PyResult<TargetId> {
        let target = TargetId::unchecked(&text, "amdgcn");
        target.with(py, |_| ())?;
        Ok(target)
    }

    /// The processor (aliases resolved: `fiji` is `gfx803`).
    #[getter]
    fn processor(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, canonical_processor)
    }

    /// The canonical form (features sorted: `gfx90a:sramecc+:xnack-`).
    #[getter]
    fn canonical(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |t| t.canonical().to_string())
    }

    /// `"on"`, `"off"` or `"any"` (not given).
    #[getter]
    fn xnack(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |t| setting_name(t.xnack()))
    }

    /// `"on"`, `"off"` or `"any"` (not given).
    #[getter]
    fn sramecc(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |t| setting_name(t.sramecc()))
    }

    /// Whether code for this target runs on `requested` (same processor,
    /// every feature this one sets set the same way there).
    fn is_compatible_with(&self, py: Python<'_>, requested: &TargetId) -> PyResult<bool> {
        requested.with(py, |other| self.with(py, |t| t.is_compatible_with(other)))?
    }

    /// Whether the two may not appear in one bundle (LLVM's conflict rule:
    /// the same processor with a feature set in one and not the other, or
    /// set differently).
    fn conflicts_with(&self, py: Python<'_>, other: &TargetId) -> PyResult<bool> {
        other.with(py, |o| self.with(py, |t| t.conflicts_with(o)))?
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<TargetId>() else {
            return Ok(false);
        };
        let (mine, theirs) = (self.canonical(py)?, other.get().canonical(py)?);
        Ok(mine == theirs && self.arch == other.get().arch)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<u64> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.canonical(py)?.hash(&mut hasher);
        Ok(hasher.finish())
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("TargetId({:?})", self.text)
    }
}
