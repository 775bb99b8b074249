//! The clang-offload-bundler's behaviour as data: what `-list` prints, what
//! `-unbundle` writes to each output, and what bundling writes, for an input
//! already in memory. Every rule the tool applies lives here — how `-type`
//! reads a file, which entry wins when an ID repeats, which entry goes to
//! which target, the host fallback, the archive fan-out with LLVM's member
//! names, the hash policy — so that the C ABI offers the same jobs to C build
//! tools and runtimes that the `clangoffload` tool runs.
//!
//! A job returns a [`Plan`]: for each output, the [`Piece`]s it is made of
//! (input bytes, bytes the plan made, zero padding). Writing the files is
//! the caller's: this crate does no I/O.
//!
//! ```
//! use clangoffload::bundler::{self, Decoding, FileType, UnbundleRequest};
//! use clangoffload::bundle::write_bundle;
//!
//! let input = write_bundle(
//!     &[(b"host-x86_64-unknown-linux-gnu", b"host"), (b"hip-amdgcn-amd-amdhsa--gfx90a", b"code")],
//!     8,
//! )?;
//! let request = UnbundleRequest {
//!     file_type: FileType::from_name("o")?,
//!     targets: &["hip-amdgcn-amd-amdhsa--gfx90a:xnack+"],
//!     ..UnbundleRequest::default()
//! };
//! let plan = bundler::unbundle(&input, &request, &mut ())?;
//! assert_eq!(plan.output_bytes(0)?, b"code");
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

mod bundle;
mod error;
pub(crate) mod input;
mod list;
mod plan;
pub mod report;
mod targets;
mod unbundle;

pub use crate::compressed::Decoding;
pub use bundle::{bundle, host_input, BundleRequest, Compression};
pub use error::{BundlerError, CompressedProblem, Place};
pub use input::DecodedContainer;
pub use list::{list, list_all, Listed};
pub use plan::{Piece, Plan};
pub use targets::{check_targets, Mode, Targets};
pub(crate) use unbundle::bundle_warnings;
pub use unbundle::{matches_target, unbundle, UnbundleRequest};

use crate::text_bundle::Comment;

/// How `-type` says to read and write a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// `bc`, `gch`, `ast`: a binary bundle.
    Binary,
    /// `o`: a host object whose entries are sections (a binary bundle when
    /// the input is no object).
    Object,
    /// A text type (`i`, `ii`, `cui`, `hipi`, `d`, `ll`, `s`), with the
    /// comment its markers use.
    Text(Comment),
    /// `a`: a heterogeneous device archive (unbundling only).
    Archive,
}

impl FileType {
    /// The type `-type=<name>` names, as clang-offload-bundler 22 accepts it.
    pub fn from_name(name: &str) -> Result<FileType, BundlerError> {
        match name {
            "bc" | "gch" | "ast" => Ok(FileType::Binary),
            "o" => Ok(FileType::Object),
            "a" => Ok(FileType::Archive),
            _ => Comment::for_file_type(name)
                .map(FileType::Text)
                .ok_or_else(|| BundlerError::InvalidFileType(name.into())),
        }
    }
}

/// What a job tells while it runs, in order: warnings and what LLVM's
/// `-verbose` reports. The job goes on after each.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// Something the tool warns about and goes past.
    Warning(Warning),
    /// A compressed bundle is about to be decoded (for timing).
    Decoding {
        /// Its offset in the input.
        offset: u64,
    },
    /// A compressed bundle was decoded; its hash is not yet checked.
    Decoded(DecodedContainer),
    /// A plain bundle was read (LLVM's `-verbose` says "Uncompressed bundle.").
    Uncompressed {
        /// Its offset in the input.
        offset: u64,
    },
    /// Bundling is about to compress the bundle (for timing).
    Compressing,
    /// Bundling compressed the bundle.
    Compressed(report::Compression),
}

/// A warning: the job goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// Bytes after a plain bundle that start no container, or a damaged
    /// one: LLVM reads the bundle and ignores them.
    TrailingBytes {
        /// How many bytes.
        len: u64,
        /// The offset of the bundle they follow.
        bundle_offset: u64,
        /// Why they cannot be read, if they start a container.
        damaged: Option<alloc::boxed::Box<BundlerError>>,
    },
    /// A finding about a bundle that does not stop reading it (overlapping
    /// payloads, a repeated ID, bytes after it).
    Bundle(crate::bundle::BundleDiagnostic),
    /// More findings about a bundle than are worth showing.
    MoreBundleFindings(usize),
    /// An ID written from the first of several containers laid back to
    /// back that hold it.
    IdInTwoContainers {
        /// The entry ID.
        id: alloc::vec::Vec<u8>,
        /// The offsets of the containers whose entries are ignored.
        ignored: alloc::vec::Vec<u64>,
        /// The offset of the container whose entry is used.
        used: u64,
    },
    /// Two `-targets` normalise to one ID.
    SameWrittenId {
        /// The targets as given.
        first: alloc::string::String,
        /// The later one.
        second: alloc::string::String,
        /// The ID both are written as.
        written: alloc::string::String,
    },
    /// llvm-offload-binary: several images match a filter that names one
    /// `file`; the last one is written to it.
    MultipleMatches {
        /// The file.
        file: alloc::string::String,
    },
}

impl Warning {
    /// The warning as the tool prints it after `warning: `, for an input
    /// named `input`.
    pub fn message<'a>(&'a self, input: &'a str) -> impl core::fmt::Display + 'a {
        WarningMessage {
            warning: self,
            input,
        }
    }
}

struct WarningMessage<'a> {
    warning: &'a Warning,
    input: &'a str,
}

impl core::fmt::Display for WarningMessage<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use crate::bundle::BundleDiagnostic as D;
        let input = self.input;
        match self.warning {
            Warning::TrailingBytes {
                len,
                bundle_offset,
                damaged,
            } => {
                write!(f, "'{input}': {len} bytes after the bundle at offset {bundle_offset:#x} ")?;
                match damaged {
                    None => f.write_str("start no known container")?,
                    Some(error) => write!(f, "are not a readable container ({error})")?,
                }
                f.write_str("; ignored")
            }
            Warning::Bundle(diagnostic) => {
                write!(f, "'{input}': ")?;
                match *diagnostic {
                    D::DuplicateId { first, second } => {
                        write!(f, "entries {first} and {second} have the same ID")
                    }
                    D::OverlappingPayloads { first, second } => {
                        write!(f, "payloads of entries {first} and {second} overlap")
                    }
                    D::PayloadOverlapsHeader { entry, header_len } => write!(
                        f,
                        "payload of entry {entry} starts inside the header (which ends at {header_len:#x})"
                    ),
                    D::TrailingBytes { offset, len } => write!(
                        f,
                        "{len} bytes follow the end of the bundle at offset {offset:#x}"
                    ),
                }
            }
            Warning::MoreBundleFindings(n) => {
                write!(f, "'{input}': {n} more such findings not shown")
            }
            Warning::IdInTwoContainers { id, ignored, used } => {
                let id = alloc::string::String::from_utf8_lossy(id);
                write!(f, "'{input}': '{id}' is also in the container")?;
                // A few offsets say enough: dozens of containers repeat.
                const SHOWN: usize = 3;
                match ignored.as_slice() {
                    [one] => write!(f, " at offset {one:#x}")?,
                    many => {
                        write!(f, "s at offsets")?;
                        for (i, at) in many.iter().take(SHOWN).enumerate() {
                            write!(f, "{}{at:#x}", if i == 0 { " " } else { ", " })?;
                        }
                        if many.len() > SHOWN {
                            write!(f, " and {} more", many.len().saturating_sub(SHOWN))?;
                        }
                    }
                }
                write!(f, "; using the one at offset {used:#x}")
            }
            Warning::SameWrittenId {
                first,
                second,
                written,
            } => write!(
                f,
                "targets '{first}' and '{second}' are both written as '{written}'; readers will take one of them"
            ),
            Warning::MultipleMatches { file } => {
                write!(f, "Multiple inputs match to a single file, '{file}'")
            }
        }
    }
}

/// Receives a job's [`Note`]s. `()` ignores them.
pub trait Observer {
    /// Called for each note, in order.
    fn note(&mut self, note: Note);

    /// Called when the job has taken what it needs of `bytes`, a part of
    /// its input (a compressed bundle whose entry table, or whole contents,
    /// it has decoded into its own buffers), so that a caller reading a
    /// mapped file may let those pages go: a kernel that maps a file in
    /// large folios keeps every place a job touched resident otherwise. The
    /// job may still read them again (a later decode of the same bundle);
    /// they must stay readable. Ignored by default.
    fn done_with(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

impl Observer for () {
    fn note(&mut self, _: Note) {}
}

impl<F: FnMut(Note)> Observer for F {
    fn note(&mut self, note: Note) {
        self(note)
    }
}
