//! Why a packager job failed, as data, with the messages llvm-offload-binary
//! prints.

use alloc::string::String;
use core::fmt;

use crate::{CompressionMethod, Error, ErrorKind};

/// Why a packager job failed. [`PackagerError::message`] gives the text
/// llvm-offload-binary 22 prints after `error: ` (where LLVM has one; ours
/// where it has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackagerError {
    /// Packaging: an `--image` argument has no `file` key.
    MissingFile,
    /// Extracting to an archive (`--archive`) with a filter that matches
    /// images but has no `file` key.
    ArchiveWithoutFile,
    /// LLVM bitcode: LLVM 22 reads the OffloadBinaries of its
    /// `llvm.embedded.objects`; this crate does not.
    Bitcode,
    /// `--format-version` is not 1, 2 or 3.
    FormatVersion(u32),
    /// `--compression-format` is neither `zlib` nor `zstd`.
    CompressionFormat(String),
    /// `--compression-level` is outside the method's range.
    CompressionLevel {
        /// The method.
        method: CompressionMethod,
        /// The level asked for.
        level: i32,
    },
    /// An ELF file or archive holding the binaries cannot be read.
    Container(Error),
    /// An OffloadBinary cannot be read.
    Binary(Error),
    /// Writing the package or an archive failed.
    Writer(Error),
    /// Extracting to an archive (`--archive`): an image LLVM's archive
    /// writer takes for ELF but cannot index
    /// ([`crate::archive::check_elf_member`]). LLVM fails the archive,
    /// naming the image's buffer (the archive member it came from, or the
    /// input).
    Unindexable {
        /// The name LLVM gives the image: its member's, or the input's.
        name: String,
        /// Why; the offset is in the input where the image's bytes are the
        /// input's, else in the image's decompressed binary.
        error: Error,
    },
    /// Extracting every image: nested images overlap so that extracting
    /// them all would write more than the input (with its decompressed
    /// binaries) holds, or an image is the binary that holds it.
    OverlappingImages {
        /// Bytes the images would write so far (`u64::MAX`: without end).
        written: u64,
        /// Bytes the input and its decompressed binaries hold.
        holds: u64,
    },
}

impl PackagerError {
    /// Whether the message names the input file first (`'<file>': ...`).
    pub fn names_input(&self) -> bool {
        matches!(self, PackagerError::Binary(_) | PackagerError::Container(_))
    }

    /// The core error behind this one, if there is one (for its status,
    /// offset and entry).
    pub fn core_error(&self) -> Option<&Error> {
        match self {
            PackagerError::Container(e)
            | PackagerError::Binary(e)
            | PackagerError::Writer(e)
            | PackagerError::Unindexable { error: e, .. } => Some(e),
            _ => None,
        }
    }

    /// The message as llvm-offload-binary prints it after `error: `, for an
    /// input named `input`.
    pub fn message<'a>(&'a self, input: &'a str) -> impl fmt::Display + 'a {
        Message { error: self, input }
    }

    /// The valid levels of `method`: zlib's and zstd's own bounds.
    pub(crate) fn level_range(method: CompressionMethod) -> (i32, i32) {
        match method {
            CompressionMethod::Zlib => (0, 9),
            _ => (-131_072, 22),
        }
    }
}

struct Message<'a> {
    error: &'a PackagerError,
    input: &'a str,
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let PackagerError::Binary(e) = self.error {
            write!(f, "{}: ", llvm_words(e))?;
        }
        if self.error.names_input() {
            write!(f, "'{}': ", self.input)?;
        }
        fmt::Display::fmt(self.error, f)
    }
}

impl fmt::Display for PackagerError {
    /// The message without the input's name in front.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PackagerError as E;
        match self {
            E::MissingFile => f.write_str("'file' is a required image arguments"),
            E::ArchiveWithoutFile => f.write_str("Image must have a 'file' argument."),
            E::Bitcode => f.write_str(
                "LLVM bitcode inputs (llvm.embedded.objects) are not supported; extract from \
                 the object file",
            ),
            E::FormatVersion(version) => {
                write!(f, "invalid format version {version}; expected 1, 2 or 3")
            }
            E::CompressionFormat(name) => write!(
                f,
                "invalid compression format '{name}'; expected 'zlib' or 'zstd'"
            ),
            E::CompressionLevel { method, level } => {
                let (low, high) = PackagerError::level_range(*method);
                write!(
                    f,
                    "invalid {} compression level {level}; expected a value in [{low}, {high}]",
                    method.name()
                )
            }
            E::Container(e) | E::Binary(e) | E::Writer(e) => write!(f, "{e}"),
            E::Unindexable { name, error } => write!(f, "'{name}': {error}"),
            E::OverlappingImages {
                written: u64::MAX, ..
            } => f.write_str("a nested OffloadBinary's image is the binary itself"),
            E::OverlappingImages { written, holds } => write!(
                f,
                "nested images overlap: extracting them would write over {written} bytes from \
                 {holds}"
            ),
        }
    }
}

impl core::error::Error for PackagerError {}

/// What LLVM says of an OffloadBinary it cannot read (its `object_error`
/// text), which its tests match: the end of the file for a size or an offset
/// past it (once the buffer holds a header and an entry), else invalid data.
fn llvm_words(e: &Error) -> &'static str {
    const EOF: &str = "The end of the file was unexpectedly encountered";
    match e.kind() {
        ErrorKind::BinaryOutOfBounds { len, .. } if len >= 72 => EOF,
        ErrorKind::BinarySizeTooSmall { .. }
        | ErrorKind::EntryTableOutOfBounds { .. }
        | ErrorKind::EntrySizeOutOfBounds { .. }
        | ErrorKind::ImageOutOfBounds { .. }
        | ErrorKind::StringTableOutOfBounds { .. } => EOF,
        _ => "Invalid data was encountered while parsing the file",
    }
}
