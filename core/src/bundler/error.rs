//! Why a bundler job failed, as data, with the messages LLVM's tool prints.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::id::IdError;
use crate::Error;

/// Where in an input a damaged bundle lies, for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// At the start of the input.
    Start,
    /// At this offset of the input.
    At(u64),
    /// Inside the compressed bundle at this offset of the input.
    InCompressed(u64),
}

/// Why a bundler job failed. [`BundlerError::message`] gives the text
/// clang-offload-bundler prints (where LLVM has one; our own where it has
/// none); [`BundlerError::names_input`] says whether it is about the input
/// file, which LLVM prefixes with the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundlerError {
    /// `-type` names no type.
    InvalidFileType(String),
    /// A target is not `<kind>-<triple>`.
    TargetFormat,
    /// A target is given twice.
    DuplicateTargets,
    /// A target has an unknown offload kind or triple.
    InvalidTarget {
        /// The target as given.
        target: String,
        /// The kind, if it is unknown.
        unknown_kind: Option<String>,
        /// The triple, if it is unknown.
        unknown_triple: Option<String>,
    },
    /// A target cannot be normalised.
    Id(IdError),
    /// Two targets name one processor with conflicting features.
    ConflictingTargets(String, String),
    /// Not exactly one host target where one is needed.
    HostTargetCount(usize),
    /// `-bundle-align=0`.
    ZeroAlignment,
    /// Bundling with `-type=a`.
    ArchiveBundling,
    /// A Mach-O host object (LLVM reads it; this crate does not).
    MachOObject,
    /// A PE image (DLL or executable) as the host of `-type=o` bundling:
    /// LLVM 22 adds the sections to the image; this crate writes COFF
    /// objects only.
    CoffObject,
    /// A host object that cannot be read.
    MalformedObject(Error),
    /// A text bundle that cannot be read.
    MalformedTextBundle(Error),
    /// A bundle that cannot be read.
    MalformedBundle {
        /// What is wrong.
        error: Error,
        /// Where the bundle is.
        place: Place,
    },
    /// A sequence of containers whose next one cannot be read.
    Unreadable {
        /// Where it starts in the input.
        offset: u64,
        /// Whether it starts with a bundle's or a compressed bundle's magic
        /// (which says how the message names it).
        what: Option<crate::FileKind>,
        /// What is wrong.
        error: Error,
    },
    /// A compressed bundle that cannot be decoded or checked.
    Compressed {
        /// Its offset in the input.
        offset: u64,
        /// What is wrong.
        problem: CompressedProblem,
    },
    /// An OffloadBinary where the bundler needs a bundle.
    OffloadBinaryNotBundle {
        /// Its offset in the input.
        offset: u64,
    },
    /// An entry ID that is no `<kind>-<triple>` where LLVM reads it.
    InvalidBundleId,
    /// `-type=a`: an archive member's bundle has an entry ID that is no
    /// `<kind>-<triple>` (LLVM refuses the archive).
    InvalidCodeObjectId {
        /// The member's name.
        member: Vec<u8>,
        /// The ID.
        id: Vec<u8>,
    },
    /// Targets found in no entry (sorted, each once).
    MissingBundles(Vec<String>),
    /// Device targets found but the host target not.
    MissingHostBundle,
    /// `-type=a` on a file that is no archive.
    NotAnArchive,
    /// A file that holds no bundle of any flavour (for listing all IDs):
    /// what it is instead.
    NotAContainer(crate::foreign::Foreign),
    /// Extracting every entry of a bundle whose payloads overlap would write
    /// more than the bundle holds.
    OverlappingPayloads {
        /// The entry past which the budget is spent.
        entry: usize,
        /// The bundle's offset in the input.
        bundle_offset: u64,
        /// The bundle's size.
        budget: u64,
    },
    /// An archive member that cannot be read.
    Member {
        /// The member's name.
        name: Vec<u8>,
        /// What is wrong with it.
        error: Box<BundlerError>,
    },
    /// `-check-input-archive`: two entries of a member conflict.
    ConflictingTargetIds {
        /// The member's name.
        member: Vec<u8>,
        /// The two entry IDs.
        ids: (String, String),
    },
    /// `-type=a`: no member holds code for a target.
    NoCompatibleCodeObject {
        /// The target as given.
        target: String,
    },
    /// Any other error of a reader or writer, about the input.
    Input(Error),
    /// An error of a writer, about nothing in the input.
    Writer(Error),
}

/// Why a compressed bundle could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompressedProblem {
    /// The decoder's error.
    Decode(Error),
    /// The stored hash is not the decoded bytes'.
    HashMismatch {
        /// The stored hash.
        stored: u64,
        /// The hash of the decoded bytes.
        computed: u64,
    },
    /// The decoded bytes are no binary bundle.
    NotBinaryBundle,
    /// Its hash could not be checked: the bytes written of this output (or
    /// kept of the bundle, if `None`) could not be read back.
    Unverifiable {
        /// The output, numbered across the input.
        output: Option<usize>,
    },
}

const TARGET_FORMAT: &str = "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

impl BundlerError {
    /// Whether LLVM's message names the input file first (`'<file>': ...`).
    pub fn names_input(&self) -> bool {
        use BundlerError as E;
        matches!(
            self,
            E::MachOObject
                | E::CoffObject
                | E::MalformedObject(_)
                | E::MalformedTextBundle(_)
                | E::MalformedBundle { .. }
                | E::Unreadable { .. }
                | E::Compressed { .. }
                | E::OffloadBinaryNotBundle { .. }
                | E::Member { .. }
                | E::NotAContainer(_)
                | E::OverlappingPayloads { .. }
                | E::Input(_)
        )
    }

    /// The core error behind this one, if there is one (for its status,
    /// offset and entry).
    pub fn core_error(&self) -> Option<&Error> {
        use BundlerError as E;
        match self {
            E::MalformedObject(e)
            | E::MalformedTextBundle(e)
            | E::MalformedBundle { error: e, .. }
            | E::Unreadable { error: e, .. }
            | E::Input(e)
            | E::Writer(e) => Some(e),
            E::Compressed {
                problem: CompressedProblem::Decode(e),
                ..
            } => Some(e),
            E::Member { error, .. } => error.core_error(),
            _ => None,
        }
    }

    /// The message as LLVM's tool prints it after `error: `, for an input
    /// named `input` (the file, or for bundling the host input).
    pub fn message<'a>(&'a self, input: &'a str) -> impl fmt::Display + 'a {
        Message { error: self, input }
    }
}

struct Message<'a> {
    error: &'a BundlerError,
    input: &'a str,
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.error.names_input() {
            write!(f, "'{}': ", self.input)?;
        }
        self.error.describe(self.input, f)
    }
}

impl BundlerError {
    /// The message without the input's name in front.
    fn describe(&self, input: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BundlerError as E;
        match self {
            E::InvalidFileType(name) => write!(f, "'{name}': invalid file type specified"),
            E::TargetFormat => f.write_str(TARGET_FORMAT),
            E::DuplicateTargets => f.write_str("Duplicate targets are not allowed"),
            E::InvalidTarget {
                target,
                unknown_kind,
                unknown_triple,
            } => {
                write!(f, "invalid target '{target}'")?;
                if let Some(kind) = unknown_kind {
                    write!(f, ", unknown offloading kind '{kind}'")?;
                }
                if let Some(triple) = unknown_triple {
                    write!(f, ", unknown target triple '{triple}'")?;
                }
                Ok(())
            }
            E::Id(e) => write!(f, "{e}"),
            E::ConflictingTargets(a, b) => write!(
                f,
                "Cannot bundle inputs with conflicting targets: '{a}' and '{b}'"
            ),
            E::HostTargetCount(n) => write!(f, "expecting exactly one host target but got {n}"),
            E::ZeroAlignment => {
                f.write_str("invalid -bundle-align=0: the alignment must be at least 1")
            }
            E::ArchiveBundling => f.write_str("Archive files are only supported for unbundling"),
            E::MachOObject => f.write_str("Mach-O host objects are not supported; only ELF"),
            E::CoffObject => f.write_str(
                "PE images (DLLs, executables) are not supported as bundle hosts; only ELF and \
                 COFF objects (nothing is written in another format instead)",
            ),
            E::MalformedObject(e) => write!(f, "malformed object: {e}"),
            E::MalformedTextBundle(e) => write!(f, "malformed text bundle: {e}"),
            E::MalformedBundle { error, place } => {
                f.write_str("malformed bundle")?;
                match place {
                    Place::Start => {}
                    Place::At(at) => write!(f, " at offset {at:#x}")?,
                    Place::InCompressed(at) => {
                        write!(f, " in the compressed bundle at offset {at:#x}")?
                    }
                }
                write!(f, ": {error}")
            }
            E::Unreadable {
                offset,
                what,
                error,
            } => {
                let what = match what {
                    Some(crate::FileKind::CompressedBundle) => "malformed compressed bundle",
                    Some(crate::FileKind::Bundle) => "malformed bundle",
                    _ => return write!(f, "{error}"),
                };
                match offset {
                    0 => write!(f, "{what}: {error}"),
                    at => write!(f, "{what} at offset {at:#x}: {error}"),
                }
            }
            E::Compressed { offset, problem } => {
                write!(f, "compressed bundle at offset {offset:#x}: ")?;
                match problem {
                    CompressedProblem::Decode(e) => write!(f, "{e}"),
                    CompressedProblem::HashMismatch { stored, computed } => write!(
                        f,
                        "hash mismatch: stored {stored:#016x}, computed {computed:#016x} \
                         (set CLANGOFFLOAD_SKIP_HASH_CHECK=1 to accept it)"
                    ),
                    CompressedProblem::NotBinaryBundle => {
                        f.write_str("decompresses to something other than a binary bundle")
                    }
                    CompressedProblem::Unverifiable { output: Some(output) } => write!(
                        f,
                        "hash not checked: output {output} could not be read back as written"
                    ),
                    CompressedProblem::Unverifiable { output: None } => {
                        f.write_str("hash not checked: its bytes could not be read back")
                    }
                }
            }
            E::OffloadBinaryNotBundle { offset } => write!(
                f,
                "an OffloadBinary at offset {offset:#x}, not a bundle; see clangoffload packager"
            ),
            E::InvalidBundleId => f.write_str("invalid bundle id read from the bundle"),
            E::InvalidCodeObjectId { member, id } => write!(
                f,
                "Invalid bundle id read from code object: '{}' in member '{}'",
                alloc::string::String::from_utf8_lossy(id),
                alloc::string::String::from_utf8_lossy(member)
            ),
            E::MissingBundles(targets) => {
                f.write_str("Can't find bundles for ")?;
                english_list(f, targets)
            }
            E::MissingHostBundle => f.write_str("Can't find bundle for the host target"),
            E::NotAnArchive => f.write_str("file too small to be an archive"),
            E::NotAContainer(what) => write!(f, "{}", crate::foreign::NoContainer(*what)),
            E::OverlappingPayloads {
                entry,
                bundle_offset,
                budget,
            } => write!(
                f,
                "entry {entry} of the bundle at offset {bundle_offset:#x}: payloads overlap, and \
                 extracting them all would write more than the bundle's {budget} bytes; \
                 take single entries with `clangoffload bundler -unbundle`"
            ),
            E::Member { name, error } => {
                write!(f, "member '{}': ", alloc::string::String::from_utf8_lossy(name))?;
                error.describe(input, f)
            }
            E::ConflictingTargetIds { member, ids } => write!(
                f,
                "conflicting TargetIDs [{}, {}] found in {} of {input}",
                ids.0,
                ids.1,
                alloc::string::String::from_utf8_lossy(member)
            ),
            E::NoCompatibleCodeObject { target } => write!(
                f,
                "no compatible code object found for the target '{target}' in heterogeneous archive library: {input}"
            ),
            E::Input(e) | E::Writer(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Display for BundlerError {
    /// The message with the input unnamed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe("<input>", f)
    }
}

impl core::error::Error for BundlerError {}

impl From<Error> for BundlerError {
    fn from(e: Error) -> Self {
        BundlerError::Input(e)
    }
}

/// `A`, `A and B`, `A, B, and C`, as LLVM lists missing targets.
fn english_list(f: &mut fmt::Formatter<'_>, items: &[String]) -> fmt::Result {
    match items {
        [] => Ok(()),
        [one] => f.write_str(one),
        [a, b] => write!(f, "{a} and {b}"),
        [rest @ .., last] => {
            for item in rest {
                write!(f, "{item}, ")?;
            }
            write!(f, "and {last}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn missing(items: &[&str]) -> String {
        BundlerError::MissingBundles(items.iter().map(|s| s.to_string()).collect()).to_string()
    }

    #[test]
    fn missing_targets_are_listed_as_llvm_does() {
        assert_eq!(missing(&["a"]), "Can't find bundles for a");
        assert_eq!(missing(&["a", "b"]), "Can't find bundles for a and b");
        assert_eq!(
            missing(&["a", "b", "c"]),
            "Can't find bundles for a, b, and c"
        );
        assert_eq!(
            missing(&["a", "b", "c", "d"]),
            "Can't find bundles for a, b, c, and d"
        );
    }

    #[test]
    fn messages_about_the_input_name_it() {
        let e = BundlerError::OffloadBinaryNotBundle { offset: 16 };
        assert_eq!(
            e.message("f.o").to_string(),
            "'f.o': an OffloadBinary at offset 0x10, not a bundle; see clangoffload packager"
        );
        let e = BundlerError::NoCompatibleCodeObject {
            target: "hip-amdgcn-amd-amdhsa--gfx906".into(),
        };
        assert!(!e.names_input());
        assert!(e.message("lib.a").to_string().ends_with("library: lib.a"));
    }
}
