//! Bundle entry IDs, target IDs, their compatibility rules, and picking the
//! entry a device should load.

mod entry_id;
pub mod processor;
mod select;
mod target_id;
mod triple;

use core::fmt;

pub use entry_id::{BundleEntryId, OFFLOAD_KINDS};
pub use select::{
    first_compatible, first_compatible_of, is_exactly, mismatch, parse_device, select_for_device,
    select_image, DeviceMatch, Loadable, Mismatch,
};
#[cfg(feature = "alloc")]
pub use select::{select_in_compressed, ChosenEntry};
pub use target_id::{CanonicalTargetId, FeatureSetting, TargetId};
pub use triple::Triple;

mod arch;
#[cfg(feature = "alloc")]
mod conflict;
#[cfg(feature = "alloc")]
mod normalize;
#[cfg(feature = "alloc")]
mod triple_normalize;
#[cfg(feature = "alloc")]
pub use conflict::find_conflicting_targets;
#[cfg(feature = "alloc")]
pub use normalize::{as_read_by_bundler, is_offload_arch, normalize_entry_id};

/// Why a bundle entry ID or target ID does not parse. Positions are byte
/// offsets into the string.
///
/// Not `#[non_exhaustive]`, as [`ErrorKind`](crate::ErrorKind): a new error
/// is a breaking change, so that exhaustive matches on it stop compiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdError {
    /// An entry ID has fewer than the five components kind and triple need.
    TooFewComponents {
        /// How many components were found.
        found: usize,
    },
    /// A target ID has no processor before its features.
    EmptyProcessor,
    /// A feature does not end in `+` or `-`.
    MissingFeatureSign {
        /// Where the feature starts.
        at: usize,
    },
    /// A feature other than `sramecc` or `xnack`.
    UnknownFeature {
        /// Where the feature starts.
        at: usize,
    },
    /// A feature given twice.
    DuplicateFeature {
        /// Where the second one starts.
        at: usize,
    },
    /// The processor is not an AMDGPU processor LLVM knows.
    UnknownProcessor,
    /// The processor does not support a feature the ID sets.
    UnsupportedFeature,
    /// A `dxil` triple whose shader model LLVM cannot normalise (LLVM 22
    /// aborts on it).
    UnsupportedShaderModel,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IdError::TooFewComponents { found } => write!(
                f,
                "bundle entry ID has {found} of the 5 components <kind>-<arch>-<vendor>-<os>-<env>"
            ),
            IdError::EmptyProcessor => f.write_str("target ID has no processor"),
            IdError::MissingFeatureSign { at } => {
                write!(f, "target feature at byte {at} does not end in '+' or '-'")
            }
            IdError::UnknownFeature { at } => {
                write!(
                    f,
                    "unknown target feature at byte {at} (expected sramecc or xnack)"
                )
            }
            IdError::DuplicateFeature { at } => {
                write!(f, "target feature at byte {at} is given twice")
            }
            IdError::UnknownProcessor => f.write_str("unknown processor"),
            IdError::UnsupportedFeature => {
                f.write_str("the processor does not support a feature the target ID sets")
            }
            IdError::UnsupportedShaderModel => f.write_str("unsupported shader model version"),
        }
    }
}

impl core::error::Error for IdError {}
