//! Zero-copy readers and writers for LLVM/Clang's offloading containers.
//!
//! Every reader is a view over a borrowed `&[u8]`: parsing checks the header once,
//! keeps references into the input and never copies or allocates. Writers and the
//! checks that need a scratch index (duplicate IDs, overlaps) live behind the
//! `alloc` feature.
//!
//! Modules are named after the format they implement:
//! - [`archive`]: `ar` archives (GNU and BSD), the container of device archives.
//! - [`bitcode`]: LLVM bitcode's top level and its symbol table (irsymtab), for archive indexes.
//! - [`bundle`]: clang-offload-bundler's binary bundles (`__CLANG_OFFLOAD_BUNDLE__`).
//! - [`compressed`]: compressed bundles (`CCOB`, zlib or zstd).
//! - [`container`]: walking containers laid back to back (`.hip_fatbin`).
//! - [`cuda_fatbin`]: NVIDIA CUDA fat binaries (`.nv_fatbin`): entries, `--concat`
//!   members, LZ4/zstd decoding, the driver's choice of code for a device.
//! - [`id`]: bundle entry IDs, AMDGPU target IDs, compatibility and selection.
//! - `select` (`alloc`): what each container of a file gives a device, by its runtime's rule, and why.
//! - `coverage` (`alloc`): what a file gives each device, the devices it targets, what fails only at run time.
//! - [`zip`]: ZIP archives (Python wheels) read in place, members decoded on request.
//! - `inspect` (`alloc`): what any file holds, container by container, as data for a report.
//! - [`kind`]: what a file is from its first bytes ([`FileKind::detect`]): every magic in one place.
//! - [`text_bundle`]: text bundles (`-type=i`, `s`, `ll`, ...), entries between comment markers.
//! - [`elf`]: the ELF sections that carry offload containers.
//! - [`locate`]: which ELF sections hold which containers, and the HIP/CUDA wrapper records.
//! - [`object_bundle`]: object-flavour bundles, entries as ELF sections of a host object.
//! - [`scan`]: every container and CUDA fat binary anywhere in a buffer (memory
//!   images, unknown files).
//! - [`offload_binary`]: OffloadBinary images (clang-offload-packager, `.llvm.offloading`).
//! - [`registration`]: the records an offload wrapper hands to the runtimes, and (`alloc`)
//!   the C unit that embeds an image and registers it, as llvm-offload-wrapper does.
//!
//! # Features
//!
//! With no features the crate is `no_std` and allocates nothing: every reader,
//! the ID rules, selection, scanning, and zlib decoding into the caller's buffer.
//! `alloc` adds the writers, the `validate` reports, ID normalisation and
//! conflict search, and zstd decoding with ruzstd. `std` adds nothing of its own
//! but run-time CPU detection (`memchr`'s, and the scan's AVX2 search).
//! `zstd` (implies `std`) decodes with libzstd, which is faster, and
//! compresses with it (LLVM's own compressor, so the output is byte-identical
//! to clang-offload-bundler's).
//!
//! The examples below read fixtures that LLVM 22 made (`tests/fixtures/` in the
//! repository); those that need `alloc` say so with `#[cfg(feature = "alloc")]`.
//!
//! # Reading a bundle
//!
//! [`Bundle::parse`] is strict: a truncated magic, count or descriptor, a count
//! that cannot fit, an ID past the end, an empty ID, offset 0, a payload that
//! wraps or ends past the input are errors carrying the kind (with the values at
//! fault), the byte offset and the entry index. [`Bundle::parse_lenient`] checks
//! only the magic; its iterator yields the good entries and then one located
//! error. `Bundle::validate` (`alloc`) reports duplicate IDs, overlapping
//! payloads, payloads inside the header and trailing bytes.
//!
//! ```
//! use clangoffload::Bundle;
//!
//! let bytes = include_bytes!("../../tests/fixtures/llvm22/hip-4096.bundle");
//! let bundle = Bundle::parse(bytes)?; // checks every descriptor, reads no payload
//! let mut ids = Vec::new();
//! for entry in bundle.entries() {
//!     let entry = entry?;
//!     println!("{:?}: {} bytes at {:#x}", entry.id_str(), entry.size(), entry.offset());
//!     assert_eq!(entry.payload().len() as u64, entry.size()); // a slice of `bytes`
//!     ids.push(entry.id_str().unwrap_or("(not UTF-8)"));
//! }
//! assert_eq!(
//!     ids,
//!     [
//!         "host-x86_64-unknown-linux-gnu-",
//!         "hipv4-amdgcn-amd-amdhsa--gfx906",
//!         "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
//!     ]
//! );
//!
//! // A damaged descriptor is a located error, not a short list.
//! let truncated = &bytes[..40];
//! let error = Bundle::parse(truncated).unwrap_err();
//! println!("{error}");
//! # Ok::<(), clangoffload::Error>(())
//! ```
//!
//! # Choosing a code object
//!
//! [`id::first_compatible`] is the bundler's and comgr's rule: the first entry,
//! in file order, compatible with a requested entry ID.
//! [`id::select_for_device`] is the HIP runtime's preference for a device:
//! native ISA, then its generic family, then SPIR-V.
//!
//! ```
//! use clangoffload::id::{first_compatible, select_for_device, DeviceMatch};
//! use clangoffload::{Bundle, BundleEntryId, TargetId};
//!
//! let bundle = Bundle::parse(include_bytes!("../../tests/fixtures/llvm22/hip-4096.bundle"))?;
//!
//! let device = TargetId::parse("gfx90a:sramecc+:xnack+")?;
//! let (how, entry) = select_for_device(&bundle, &device).expect("no code object");
//! assert_eq!(how, DeviceMatch::Native);
//! assert_eq!(entry.id_str(), Some("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"));
//! // Code built for xnack+ does not run where xnack- is asked for.
//! assert!(select_for_device(&bundle, &TargetId::parse("gfx90a:xnack-")?).is_none());
//!
//! let requested = BundleEntryId::parse("hip-amdgcn-amd-amdhsa--gfx906")?;
//! let entry = first_compatible(&bundle, &requested, false).expect("no gfx906 entry");
//! assert_eq!(entry.id_str(), Some("hipv4-amdgcn-amd-amdhsa--gfx906"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Entry IDs and target IDs
//!
//! [`BundleEntryId`] splits `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]`
//! (the target ID may contain `-`, e.g. `gfx9-4-generic`);
//! [`BundleEntryId::is_compatible_with`] is LLVM's rule: an exact match; or
//! kinds equal, `hip`↔`hipv4` or optionally `hip*`↔`openmp`, compatible
//! triples with `unknown` = empty, the same canonical processor, and every
//! feature the code object sets set the same way in the request ("any" in the
//! code object accepts on and off, not the reverse). It compares the IDs as
//! written; `id::as_read_by_bundler` (`alloc`) first turns an ID into what
//! clang-offload-bundler 22 compares when unbundling (LLVM's
//! `OffloadTargetInfo`: triple components as LLVM's parsed values, so an
//! unknown environment such as LLVM 16's `hip-amdgcn-amd-amdhsa-gfx906` is none
//! and `cudafoo` is `cuda`; a target ID whose processor is no known offload
//! architecture dropped; an object format at the end of the environment counts
//! when it is not the triple's default). Not modelled: arch aliases (`amd64`)
//! and ARM sub-architectures.
//!
//! [`TargetId`] parses AMDGPU target IDs (LLVM 22's processors and aliases, and
//! which processors support `xnack`/`sramecc`), gives the canonical form and the
//! symmetric conflict rule; `id::find_conflicting_targets` (`alloc`) applies it
//! to a list of entry IDs, and `id::normalize_entry_id` (`alloc`) gives the IDs
//! the bundler writes.
//!
//! ```
//! use clangoffload::{BundleEntryId, TargetId};
//!
//! let stored = BundleEntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")?;
//! assert_eq!(stored.kind(), "hipv4");
//! assert_eq!(stored.triple().arch, "amdgcn");
//! assert_eq!(stored.target_id(), "gfx90a:xnack+");
//!
//! let on = BundleEntryId::parse("hip-amdgcn-amd-amdhsa--gfx90a:xnack+")?;
//! let any = BundleEntryId::parse("hip-amdgcn-amd-amdhsa--gfx90a")?;
//! assert!(stored.is_compatible_with(&on, false)); // hip and hipv4 are one kind
//! assert!(!stored.is_compatible_with(&any, false)); // xnack+ code, "any" asked for
//! assert!(any.is_compatible_with(&on, false)); // "any" code runs with xnack+
//!
//! let target = TargetId::parse("gfx90a:xnack-:sramecc+")?;
//! assert_eq!(target.canonical().to_string(), "gfx90a:sramecc+:xnack-");
//! assert!(target.conflicts_with(&TargetId::parse("gfx90a:xnack-")?)); // sramecc set vs any
//! assert!(!target.conflicts_with(&TargetId::parse("gfx906")?));
//!
//! #[cfg(feature = "alloc")]
//! {
//!     use clangoffload::id::{as_read_by_bundler, normalize_entry_id};
//!
//!     // LLVM 16 wrote the processor where the environment goes.
//!     let old = BundleEntryId::parse("hip-amdgcn-amd-amdhsa-gfx906")?;
//!     let requested = BundleEntryId::parse("hip-amdgcn-amd-amdhsa--")?;
//!     assert!(!old.is_compatible_with(&requested, false));
//!     let (old, requested) = (as_read_by_bundler(&old), as_read_by_bundler(&requested));
//!     assert!(old.is_compatible_with(&requested, false));
//!
//!     assert_eq!(
//!         normalize_entry_id("hip-amdgcn-amd-amdhsa-unknown-gfx906")?,
//!         "hip-amdgcn-amd-amdhsa--gfx906"
//!     );
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Writing a bundle
//!
//! `bundle::write_bundle` and `bundle::BundleLayout` (`alloc`) write LLVM's
//! layout for any alignment of at least 1, entries in the order given and IDs as
//! given.
//!
//! ```
//! # #[cfg(feature = "alloc")]
//! # {
//! use clangoffload::bundle::write_bundle;
//! use clangoffload::Bundle;
//!
//! let entries: [(&[u8], &[u8]); 2] = [
//!     (b"host-x86_64-unknown-linux-gnu-", b""),
//!     (b"hipv4-amdgcn-amd-amdhsa--gfx906", b"code object"),
//! ];
//! let bytes = write_bundle(&entries, 4096)?;
//! let bundle = Bundle::parse(&bytes)?;
//! assert!(bundle.validate().is_empty());
//! let device = bundle.entries().nth(1).unwrap()?;
//! assert_eq!(device.offset(), 4096);
//! assert_eq!(device.payload(), b"code object");
//! # }
//! # Ok::<(), clangoffload::Error>(())
//! ```
//!
//! # Compressed bundles
//!
//! [`CompressedBundle::parse`] reads a version 1, 2 or 3 header (version,
//! method — unknown values kept — total size, uncompressed size, hash, the
//! compressed slice bounded by the total size) and touches nothing else.
//! `check(&Limits)` runs every test that needs no decoding;
//! `decompress_into(&mut [u8], &options)` writes exactly the declared size into
//! the caller's buffer (zlib allocates nothing), `decompress(&options)`
//! (`alloc`) into a `Vec` reserved with `try_reserve_exact`.
//! [`DecompressOptions`] defaults to a 1 GiB limit, hash verification on, and
//! the fastest zstd decoder the build has. Nested compressed bundles are an
//! error. `compressed::compress` (`alloc`) writes versions 2 and 3 with zstd
//! (feature `zstd`) or zlib.
//!
//! ```
//! use clangoffload::{CompressedBundle, CompressionMethod, DecompressOptions, Limits};
//!
//! let ccob = include_bytes!("../../tests/fixtures/compressed/llvm22/hip.v3.ccob");
//! let compressed = CompressedBundle::parse(ccob)?; // header only
//! assert_eq!(compressed.version(), 3);
//! assert_eq!(compressed.method(), CompressionMethod::Zstd);
//! let size = compressed.check(&Limits::default())?; // every check that needs no decoding
//! assert_eq!(size as u64, compressed.uncompressed_size());
//!
//! #[cfg(feature = "alloc")]
//! {
//!     let bundle = compressed.decompress(&DecompressOptions::default())?; // hash verified
//!     assert_eq!(bundle, include_bytes!("../../tests/fixtures/compressed/llvm22/hip.bundle"));
//!
//!     // zlib needs no libzstd, and decodes into the caller's buffer.
//!     use clangoffload::compressed::{compress, CompressOptions};
//!     let options = CompressOptions { method: CompressionMethod::Zlib, ..Default::default() };
//!     let zlib = compress(&bundle, &options)?;
//!     let mut out = vec![0; bundle.len()];
//!     CompressedBundle::parse(&zlib)?.decompress_into(&mut out, &DecompressOptions::default())?;
//!     assert_eq!(out, bundle);
//! }
//! # Ok::<(), clangoffload::Error>(())
//! ```
//!
//! # Containers back to back, and anywhere
//!
//! [`Containers`] walks bundles, compressed bundles and OffloadBinaries laid
//! back to back with zero padding (a linked `.hip_fatbin`), each with its
//! offset, moving by each container's own extent and ending with a located
//! error at the first damaged header. `container::declared_extent` gives a
//! container's extent from its header alone (for images known by a pointer
//! only). [`scan::scan`] finds every container anywhere in a buffer, validated,
//! NVIDIA CUDA fat binaries too, and reports the magics that start none as
//! rejected.
//!
//! ```
//! use clangoffload::scan::scan;
//! use clangoffload::{Container, Containers};
//!
//! // Three compressed bundles and a plain one, 8 KiB apart.
//! let fatbin = include_bytes!("../../tests/fixtures/compressed/concat/hip.hip_fatbin");
//! let mut found = Vec::new();
//! for container in Containers::new(fatbin) {
//!     let (offset, container) = container?;
//!     found.push((offset, matches!(container, Container::Compressed(_))));
//! }
//! assert_eq!(found, [(0, true), (8192, true), (16384, true), (24576, false)]);
//!
//! // A bundle somewhere in memory.
//! let mut memory = vec![0xA5_u8; 100];
//! memory.extend_from_slice(include_bytes!("../../tests/fixtures/llvm22/hip-4096.bundle"));
//! let offsets: Vec<u64> = scan(&memory).containers().map(|(offset, _)| offset).collect();
//! assert_eq!(offsets, [100]);
//! # Ok::<(), clangoffload::Error>(())
//! ```
//!
//! # OffloadBinaries
//!
//! [`OffloadBinary::parse`] reads versions 1–3 and checks every field once
//! (entry table, string entries, every key and value inside the binary, every
//! image range); the input need not be aligned and no image byte is read.
//! Entries give the image kind, offload kind, flags (unknown values kept), the
//! image slice, the strings and `triple()` / `arch()`. A compressed version 3
//! binary decompresses through the same bounded decoder as compressed bundles.
//! [`offload_binary::binaries`] walks a section; `write_offload_binary`
//! (`alloc`) writes version 1 as LLVM 22 does and versions 2 and 3 as upstream
//! does; `offload_binary::image_args::image_arguments` (`alloc`) splits an
//! `--image` argument into LLVM 22's order.
//!
//! ```
//! use clangoffload::offload_binary::binaries;
//!
//! // What clang-offload-packager wrote for nine images: one binary each.
//! let file = include_bytes!("../../tests/fixtures/offload/multi.offbin");
//! let mut images = Vec::new();
//! for binary in binaries(file) {
//!     let (_offset, binary) = binary?;
//!     for entry in binary.entries() {
//!         images.push((entry.triple().unwrap_or_default(), entry.arch().unwrap_or_default()));
//!     }
//! }
//! assert_eq!(images.len(), 9);
//! assert_eq!(images[0], (&b"amdgcn-amd-amdhsa"[..], &b"gfx908"[..]));
//! assert_eq!(images[5], (&b"nvptx64-nvidia-cuda"[..], &b"sm_75"[..]));
//! # Ok::<(), clangoffload::Error>(())
//! ```
//!
//! # Host files
//!
//! [`object::ObjectFile`] reads a host file of either format: ELF
//! ([`elf::ElfFile`]) or COFF objects and PE DLLs and executables
//! ([`coff::CoffFile`]). [`locate::offload_sections`] classifies its offload
//! sections; [`locate::wrappers`] reads the HIP/CUDA wrapper records and
//! [`locate::wrapper_target`] follows one to its fat binary (through the stored
//! address, or the relocation that fills it). [`elf::AmdgpuTarget`] reads a code
//! object's target ID from `e_flags` (code objects v4–v6).
//!
//! ```
//! use clangoffload::locate::{offload_sections, SectionKind};
//! use clangoffload::object::ObjectFile;
//! use clangoffload::Containers;
//!
//! let library = include_bytes!("../../tests/fixtures/offload/libhip-mixed.so");
//! let file = ObjectFile::parse(library)?;
//! let mut kinds = Vec::new();
//! for found in offload_sections(&file) {
//!     let found = found?;
//!     kinds.push(found.kind);
//!     if found.kind.holds_containers() {
//!         assert!(Containers::new(found.section.data()).count() > 0);
//!     }
//! }
//! assert_eq!(kinds, [SectionKind::HipFatbin, SectionKind::HipWrappers]);
//! # Ok::<(), clangoffload::Error>(())
//! ```
#![no_std]
// Unsafe code only where it buys something measured, each block with its
// SAFETY comment; docs/architecture.md names every such module and what it
// buys.
#![deny(unsafe_code)]
#![deny(missing_docs)]
// The workspace lints (Cargo.toml) hold for the library; its unit tests
// (compiled only with cfg(test), the library itself being checked without)
// may panic, as a failed test.
#![cfg_attr(
    test,
    allow(
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
mod back_to_back;
pub mod bitcode;
pub mod bundle;
#[cfg(feature = "alloc")]
pub mod bundler;
mod bytes;
pub mod coff;
pub mod compressed;
pub mod container;
#[cfg(feature = "alloc")]
pub mod coverage;
pub mod cuda_fatbin;
#[cfg(feature = "alloc")]
pub mod cuda_host;
pub mod elf;
mod error;
#[cfg(feature = "alloc")]
pub mod extract;
pub mod foreign;
pub mod id;
#[cfg(feature = "alloc")]
pub mod inspect;
pub mod kind;
pub mod kpack;
pub mod locate;
mod msgpack;
#[cfg(feature = "alloc")]
pub mod naming;
pub mod object;
pub mod object_bundle;
pub mod offload_binary;
#[cfg(feature = "alloc")]
pub mod packager;
pub mod registration;
pub mod scan;
pub mod select;

pub mod text_bundle;
pub mod zip;

pub use bundle::{Bundle, BundleEntry, BundleEntryIter, EntryPosition};
#[cfg(feature = "alloc")]
pub use bytes::offset_in;
pub use compressed::{CompressedBundle, CompressionMethod, DecompressOptions, Limits};
pub use container::{Container, Containers};
pub use error::{Error, ErrorKind, Field};
pub use id::{BundleEntryId, IdError, TargetId};
pub use kind::FileKind;
pub use offload_binary::{OffloadBinary, OffloadEntry};
pub use text_bundle::{TextBundle, TextEntry, TextEntryIter};

/// The result type of every fallible reader in this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;
