//! Zero-copy readers and writers for LLVM/Clang's offloading containers.
//!
//! Every reader is a view over a borrowed `&[u8]`: parsing checks the header once,
//! keeps references into the input and never copies or allocates. Writers and the
//! checks that need a scratch index (duplicate IDs, overlaps) live behind the
//! `alloc` feature.
//!
//! Modules are named after the format they implement:
//! - [`archive`]: `ar` archives (GNU and BSD), the container of device archives.
//! - [`bundle`]: clang-offload-bundler's binary bundles (`__CLANG_OFFLOAD_BUNDLE__`).
//! - [`compressed`]: compressed bundles (`CCOB`, zlib or zstd).
//! - [`container`]: walking containers laid back to back (`.hip_fatbin`).
//! - [`id`]: bundle entry IDs, AMDGPU target IDs, compatibility and selection.
//! - [`text_bundle`]: text bundles (`-type=i`, `s`, `ll`, ...), entries between comment markers.
//! - [`elf`]: the ELF sections that carry offload containers.
//! - [`locate`]: which ELF sections hold which containers, and the HIP/CUDA wrapper records.
//! - [`object_bundle`]: object-flavour bundles, entries as ELF sections of a host object.
//! - [`scan`]: every container anywhere in a buffer (memory images, unknown files).
//! - [`offload_binary`]: OffloadBinary images (clang-offload-packager, `.llvm.offloading`).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    warn(
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::as_conversions,
        clippy::unwrap_used
    )
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod archive;
pub mod bundle;
mod bytes;
pub mod compressed;
pub mod container;
pub mod elf;
mod error;
pub mod id;
pub mod locate;
pub mod object_bundle;
pub mod offload_binary;
pub mod scan;
pub mod text_bundle;

pub use bundle::{Bundle, BundleEntry, BundleEntryIter, EntryPosition};
pub use compressed::{CompressedBundle, CompressionMethod, DecompressOptions, Limits};
pub use container::{Container, Containers};
pub use error::{Error, ErrorKind, Field};
pub use id::{BundleEntryId, IdError, TargetId};
pub use offload_binary::{OffloadBinary, OffloadEntry};
pub use text_bundle::{TextBundle, TextEntry, TextEntryIter};

/// The result type of every fallible reader in this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;
