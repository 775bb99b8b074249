//! The code a device loads from each container of a file, by its
//! runtime's rule, and why (`clangoffload select`): for an AMD device, the
//! HIP runtime's choice from each bundle, compressed bundle and
//! OffloadBinary ([`crate::id::select_for_device`],
//! [`crate::id::select_image`]); for an NVIDIA one (`sm_90`), the CUDA
//! driver's from each fat binary ([`crate::cuda_fatbin::select_for_device`]).
//! A container for the other vendor gives the device nothing, and says so.
//! Each choice is named as `extract` names that entry's file, so that
//! `select -o` writes the same file `extract` would.
//!
//! A split host's `HIPK` records, and the binary keys of a kpack archive
//! alone, are resolved as the HIP runtime resolves them
//! ([`select_split_host`], [`select_archive`], over [`crate::kpack`]'s
//! candidates and resolution): their archives are files the caller opens.
//!
//! [`select_in_fatbin`] asks the same of one fat binary without `alloc`.

mod fatbin;
#[cfg(feature = "alloc")]
mod kpack;
#[cfg(feature = "alloc")]
mod selector;

pub use fatbin::select_in_fatbin;
#[cfg(feature = "alloc")]
pub use kpack::{
    select_archive, select_split_host, KpackChoice, KpackLoad, KpackOutcome, Lookup, OpenArchive,
};
#[cfg(feature = "alloc")]
pub use selector::{select, Chosen, Device, How, Outcome, Selected, Selection, Selector};
