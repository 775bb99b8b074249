//! Splitting a host (with `alloc`): plan.rs (what is stored and where: the
//! options, the marker, each code object's key), rewrite.rs (the split, step
//! by step, and the records), surgery.rs (the header tables applied as
//! rocm-kpack applies them, a section's pages cut), image.rs (the file as it
//! becomes), layout.rs (the ELF64 pieces in native integers, checked
//! arithmetic). Why a host cannot be split ([`SplitFault`]) is one of the
//! error's words, defined with it.

pub use crate::error::{ShortName, SplitFault};

#[cfg(feature = "alloc")]
mod image;
#[cfg(feature = "alloc")]
mod layout;
#[cfg(feature = "alloc")]
mod plan;
#[cfg(feature = "alloc")]
mod rewrite;
#[cfg(feature = "alloc")]
mod surgery;

#[cfg(feature = "alloc")]
pub use plan::{
    marker_bytes, search_path, HostSplit, KeyRule, SplitCodeObject, SplitOptions, SplitUnit,
    MARKER_SECTION,
};
#[cfg(feature = "alloc")]
pub use rewrite::split_host;

/// A split failing with `fault` at file offset `offset`.
#[cfg(feature = "alloc")]
fn fail(fault: SplitFault, offset: u64) -> crate::Error {
    crate::Error::new(crate::ErrorKind::KpackSplit { fault }, offset)
}
