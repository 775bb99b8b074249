//! The Python package `clangoffload` (module `clangoffload._native`): core's
//! readers, rules and writers as Python objects over the caller's bytes. It
//! holds no format rule of its own; every rule is core's, reached the way
//! the C ABI (`capi/`) reaches it. `python/clangoffload/` is the Python
//! layer on top (`open`, re-exports, typing stubs).

mod buffer;
mod container;
mod coverage;
mod cuda;
mod entry;
mod error;
mod file;
mod ids;
mod jobs;
mod kpack;
mod source;

use pyo3::prelude::*;

#[pymodule]
mod _native {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::container::Container;
    #[pymodule_export]
    use crate::coverage::{coverage, CoverageCell, CoveredFile};
    #[pymodule_export]
    use crate::entry::Entry;
    #[pymodule_export]
    use crate::file::{File, Wrapper};
    #[pymodule_export]
    use crate::ids::{EntryId, TargetId};
    #[pymodule_export]
    use crate::jobs::{
        _open_mapped, bundle, decompress, list_ids, normalize_entry_id, parse, unbundle,
    };
    #[pymodule_export]
    use crate::kpack::{kpack_arch_list, kpack_resolve, KpackArchive, KpackEntry, KpackResolution};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        use crate::error::*;
        let py = m.py();
        m.add("Error", py.get_type::<PyError>())?;
        m.add("TruncatedError", py.get_type::<TruncatedError>())?;
        m.add("BadMagicError", py.get_type::<BadMagicError>())?;
        m.add("HashMismatchError", py.get_type::<HashMismatchError>())?;
        m.add("LimitExceededError", py.get_type::<LimitExceededError>())?;
        m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
        m.add("InvalidIdError", py.get_type::<InvalidIdError>())?;
        m.add("BundlerFailure", py.get_type::<BundlerFailure>())?;
        Ok(())
    }
}
