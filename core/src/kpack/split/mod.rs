//! Splitting a host: the split itself is in `rewrite.rs` (with `alloc`);
//! why a host cannot be split ([`SplitFault`]) is one of the error's words,
//! defined with it.

pub use crate::error::{ShortName, SplitFault};

#[cfg(feature = "alloc")]
mod rewrite;

#[cfg(feature = "alloc")]
pub use rewrite::{
    marker_bytes, search_path, split_host, HostSplit, KeyRule, SplitCodeObject, SplitOptions,
    SplitUnit, MARKER_SECTION,
};
