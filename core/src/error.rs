//! Errors as data: what went wrong, where in the input, and for which entry.

use core::fmt;

/// A header field of a container, named in [`ErrorKind::Truncated`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The 24-byte bundle magic.
    BundleMagic,
    /// The bundle's entry count.
    EntryCount,
    /// An entry descriptor's payload offset.
    EntryOffset,
    /// An entry descriptor's payload size.
    EntrySize,
    /// An entry descriptor's ID length.
    IdLength,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::BundleMagic => "bundle magic",
            Field::EntryCount => "entry count",
            Field::EntryOffset => "entry offset",
            Field::EntrySize => "entry size",
            Field::IdLength => "entry ID length",
        }
    }
}

/// What is wrong with an input, with the values that make it wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input does not start with the container's magic.
    BadMagic,
    /// The input ends inside a header field.
    Truncated {
        /// The field that is cut short.
        field: Field,
        /// How many bytes the field needs.
        needed: u64,
        /// How many bytes are left.
        available: u64,
    },
    /// The entry count cannot fit: each descriptor needs at least 24 bytes.
    CountTooLarge {
        /// The count in the header.
        count: u64,
        /// The largest count the input could hold.
        max: u64,
    },
    /// An entry ID's length runs past the end of the input.
    IdOutOfBounds {
        /// The length in the descriptor.
        len: u64,
        /// The bytes left after the length field.
        available: u64,
    },
    /// An entry ID is empty.
    EmptyId,
    /// An entry's payload offset is 0, which would place it over the magic.
    ZeroOffset,
    /// An entry's payload offset plus size overflows 64 bits.
    PayloadOverflow {
        /// Payload offset.
        offset: u64,
        /// Payload size.
        size: u64,
    },
    /// An entry's payload ends past the end of the input.
    PayloadOutOfBounds {
        /// Payload offset.
        offset: u64,
        /// Payload size.
        size: u64,
        /// Length of the input.
        len: u64,
    },
    /// A bundle alignment of zero was requested.
    ZeroAlignment,
    /// A bundle being written would be larger than 2^64 bytes.
    LayoutOverflow,
    /// Memory for an output could not be reserved.
    OutOfMemory {
        /// Bytes requested.
        requested: u64,
    },
}

/// An error found in an input: its kind, the byte offset of the offending field,
/// and the index of the entry it belongs to, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
    offset: u64,
    entry: Option<u64>,
}

impl Error {
    pub(crate) const fn new(kind: ErrorKind, offset: u64) -> Self {
        Error {
            kind,
            offset,
            entry: None,
        }
    }

    pub(crate) const fn in_entry(mut self, entry: u64) -> Self {
        self.entry = Some(entry);
        self
    }

    /// What is wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Byte offset, from the start of the container, of the field at fault.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Index (in file order) of the entry at fault, if the fault is in an entry.
    pub fn entry(&self) -> Option<u64> {
        self.entry
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::BadMagic => f.write_str("not a bundle: missing magic"),
            ErrorKind::Truncated {
                field,
                needed,
                available,
            } => write!(
                f,
                "truncated {}: needs {needed} bytes, {available} left",
                field.name()
            ),
            ErrorKind::CountTooLarge { count, max } => write!(
                f,
                "entry count {count} cannot fit in the input (at most {max})"
            ),
            ErrorKind::IdOutOfBounds { len, available } => write!(
                f,
                "entry ID length {len} runs past the end of the input ({available} bytes left)"
            ),
            ErrorKind::EmptyId => f.write_str("empty entry ID"),
            ErrorKind::ZeroOffset => f.write_str("entry payload offset is 0"),
            ErrorKind::PayloadOverflow { offset, size } => write!(
                f,
                "entry payload offset {offset:#x} + size {size:#x} overflows"
            ),
            ErrorKind::PayloadOutOfBounds { offset, size, len } => write!(
                f,
                "entry payload [{offset:#x}, +{size:#x}) ends past the end of the input ({len:#x} bytes)"
            ),
            ErrorKind::ZeroAlignment => f.write_str("bundle alignment must be at least 1"),
            ErrorKind::LayoutOverflow => f.write_str("bundle layout overflows 64 bits"),
            ErrorKind::OutOfMemory { requested } => {
                write!(f, "cannot reserve {requested} bytes")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(entry) = self.entry {
            write!(f, "entry {entry}: ")?;
        }
        write!(f, "{} (at offset {:#x})", self.kind, self.offset)
    }
}

impl core::error::Error for Error {}
