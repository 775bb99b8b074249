//! What can be wrong with a bitcode file, and the limit on abbreviations
//! the fault names; re-exported by `bitcode`.

use core::fmt;

/// The most abbreviations one block may define here. LLVM's writer defines
/// one in each block this reader enters; a crafted block with more is an
/// error ([`BitcodeFault::TooManyAbbrevs`]) rather than an allocation.
pub const MAX_ABBREVS: usize = 64;

/// What is wrong with a bitcode file, in [`ErrorKind::MalformedBitcode`](crate::ErrorKind::MalformedBitcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BitcodeFault {
    /// The file's length is not a multiple of 4 bytes (LLVM: "Invalid
    /// bitcode signature").
    LengthNotMultipleOf4 {
        /// The length.
        len: u64,
    },
    /// The wrapper's bitstream reaches past the end of the file.
    WrapperOutOfBounds {
        /// The wrapper's offset field.
        offset: u64,
        /// The wrapper's size field.
        size: u64,
        /// Length of the file.
        len: u64,
    },
    /// A read runs past the end of the bitstream.
    UnexpectedEnd,
    /// A variable-width number runs over 32 (or 64) bits.
    UnterminatedVbr,
    /// An END_BLOCK outside any block.
    EndBlockAtTopLevel,
    /// An identification block that no module block follows.
    IdentificationWithoutModule,
    /// A block's abbreviation width is 0 or over 32 bits.
    BadAbbrevWidth {
        /// The width.
        width: u64,
    },
    /// A block's length runs past the end of the bitstream.
    BlockOutOfBounds {
        /// The length, in 32-bit words.
        words: u64,
    },
    /// An abbreviation with no operands.
    EmptyAbbrev,
    /// An abbreviation operand's encoding is not 1 to 5.
    InvalidEncoding {
        /// The encoding.
        encoding: u64,
    },
    /// A fixed or VBR operand wider than 32 bits.
    OperandTooWide {
        /// The width.
        width: u64,
    },
    /// A block defines more abbreviations than [`MAX_ABBREVS`].
    TooManyAbbrevs,
    /// A record names an abbreviation its block has not defined.
    UnknownAbbrev {
        /// The abbreviation ID.
        id: u64,
    },
    /// An abbreviation whose first operand, the record code, is an array or
    /// a blob.
    ArrayOrBlobCode,
    /// An array operand that is not the second to last, or whose element is
    /// not a fixed, VBR or char6 operand.
    BadArray,
    /// A blob runs past the end of the bitstream.
    BlobOutOfBounds {
        /// The blob's length.
        size: u64,
    },
    /// A range of symbol table records does not lie inside the symbol table.
    RangeOutOfBounds {
        /// The range's offset.
        offset: u64,
        /// Its number of records.
        count: u64,
        /// Size of the symbol table.
        size: u64,
    },
    /// A string of the symbol table does not lie inside the string table.
    StringOutOfBounds {
        /// The string's offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// Size of the string table.
        strtab_size: u64,
    },
}

impl fmt::Display for BitcodeFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BitcodeFault::LengthNotMultipleOf4 { len } => {
                write!(f, "length {len} is not a multiple of 4")
            }
            BitcodeFault::WrapperOutOfBounds { offset, size, len } => write!(
                f,
                "wrapper's bitstream [{offset:#x}, +{size:#x}) ends past the end of the file ({len:#x} bytes)"
            ),
            BitcodeFault::UnexpectedEnd => f.write_str("unexpected end of the bitstream"),
            BitcodeFault::UnterminatedVbr => f.write_str("variable-width number too long"),
            BitcodeFault::EndBlockAtTopLevel => f.write_str("END_BLOCK outside any block"),
            BitcodeFault::IdentificationWithoutModule => {
                f.write_str("identification block not followed by a module block")
            }
            BitcodeFault::BadAbbrevWidth { width } => {
                write!(f, "abbreviation width {width} is not 1 to 32")
            }
            BitcodeFault::BlockOutOfBounds { words } => write!(
                f,
                "block of {words} words runs past the end of the bitstream"
            ),
            BitcodeFault::EmptyAbbrev => f.write_str("abbreviation with no operands"),
            BitcodeFault::InvalidEncoding { encoding } => {
                write!(f, "invalid abbreviation operand encoding {encoding}")
            }
            BitcodeFault::OperandTooWide { width } => {
                write!(f, "abbreviation operand of {width} bits (at most 32)")
            }
            BitcodeFault::TooManyAbbrevs => write!(
                f,
                "more than {MAX_ABBREVS} abbreviations in one block"
            ),
            BitcodeFault::UnknownAbbrev { id } => write!(f, "undefined abbreviation {id}"),
            BitcodeFault::ArrayOrBlobCode => {
                f.write_str("abbreviation starts with an array or a blob")
            }
            BitcodeFault::BadArray => f.write_str(
                "array operand not second to last, or its element not fixed, VBR or char6",
            ),
            BitcodeFault::BlobOutOfBounds { size } => write!(
                f,
                "blob of {size} bytes runs past the end of the bitstream"
            ),
            BitcodeFault::RangeOutOfBounds {
                offset,
                count,
                size,
            } => write!(
                f,
                "{count} records at offset {offset} do not fit in the {size}-byte symbol table"
            ),
            BitcodeFault::StringOutOfBounds {
                offset,
                size,
                strtab_size,
            } => write!(
                f,
                "string at offset {offset} with size {size} lies outside the {strtab_size}-byte string table"
            ),
        }
    }
}
