//! Status codes, their messages, and the detailed error record.

use core::ffi::c_char;
use core::fmt::Write;

use clangoffload::id::IdError;
use clangoffload::{Error, ErrorKind};

use crate::ffi::out_arg;

/// What a function did. The numbers are part of the ABI and are never reused;
/// take a status you store or pass around as `uint32_t`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL.
    NullArgument = 1,
    /// An argument is out of range (misaligned pointer, unknown flag, length over `PTRDIFF_MAX`).
    InvalidArgument = 2,
    /// A string argument is not UTF-8.
    InvalidUtf8 = 3,
    /// An output buffer is too small; the length needed was stored.
    BufferTooSmall = 4,
    /// An index is past the end.
    IndexOutOfRange = 5,
    /// Nothing matched.
    NotFound = 6,
    /// Memory could not be allocated.
    OutOfMemory = 7,
    /// An iteration has no more items (not an error).
    End = 8,
    /// The input is not a bundle (no magic).
    NotABundle = 10,
    /// The input ends inside a header field.
    Truncated = 11,
    /// The entry count cannot fit in the input.
    CountTooLarge = 12,
    /// An entry ID runs past the end of the input.
    IdOutOfBounds = 13,
    /// An entry ID is empty.
    EmptyId = 14,
    /// An entry's payload offset is 0.
    ZeroOffset = 15,
    /// An entry's payload offset plus size overflows.
    PayloadOverflow = 16,
    /// An entry's payload ends past the end of the input.
    PayloadOutOfBounds = 17,
    /// A bundle alignment of 0 was requested.
    ZeroAlignment = 18,
    /// A bundle to write would exceed 2^64 bytes.
    LayoutOverflow = 19,
    /// A compressed bundle's header version is not 1, 2 or 3.
    UnsupportedVersion = 40,
    /// A compressed bundle's method is neither zlib nor zstd.
    UnknownMethod = 41,
    /// The method is known but this build cannot use it.
    MethodUnavailable = 42,
    /// A compressed bundle's total size is smaller than its header.
    BadTotalSize = 43,
    /// A declared size exceeds the limit given.
    SizeLimitExceeded = 44,
    /// The stream does not decompress to the declared size.
    SizeMismatch = 45,
    /// The decompressed bytes do not have the stored hash.
    HashMismatch = 46,
    /// The compressed stream is damaged.
    CorruptStream = 47,
    /// A compressed bundle holds another compressed bundle.
    NestedCompressedBundle = 48,
    /// Bytes in a sequence of containers start no known container.
    UnknownContainer = 49,
    /// A compressed bundle too large for the header version asked for.
    TooLargeForVersion = 50,
    /// Not an ELF file.
    NotElf = 60,
    /// An ELF file this library does not read (big-endian, unknown class).
    UnsupportedElf = 61,
    /// The section header table lies outside the file.
    SectionTableOutOfBounds = 62,
    /// The section-name table index names no section with contents.
    BadNameTableIndex = 63,
    /// A section index names no section.
    BadSectionIndex = 64,
    /// A name offset lies outside its string table or is not terminated.
    BadSectionName = 65,
    /// A section's contents lie outside the file.
    SectionOutOfBounds = 66,
    /// A section to be removed is still used by one that stays.
    SectionInUse = 67,
    /// A section name to be written contains a NUL byte.
    NulInSectionName = 68,
    /// A text bundle's start marker has no end marker.
    MissingEndMarker = 70,
    /// A text bundle's end marker closes no entry.
    EndMarkerWithoutStart = 71,
    /// A text bundle's start marker inside an open entry.
    NestedStartMarker = 72,
    /// A text bundle's end marker names another ID than its start marker.
    EndMarkerIdMismatch = 73,
    /// An entry ID to be written holds a newline.
    NewlineInId = 74,
    /// A payload to be written holds a marker line.
    MarkerInPayload = 75,
    /// The input is not an `ar` archive.
    NotAnArchive = 80,
    /// A thin archive (not supported).
    ThinArchive = 81,
    /// An archive member header does not end with a backquote and a newline.
    BadMemberTerminator = 82,
    /// An archive member header field is not a decimal number.
    BadDecimal = 83,
    /// An archive member runs past the end of the archive.
    MemberOutOfBounds = 84,
    /// An archive member names a long name but there is no `//` table.
    MissingLongNameTable = 85,
    /// An archive long name offset lies outside the `//` table.
    LongNameOutOfBounds = 86,
    /// An archive long name is not terminated.
    UnterminatedLongName = 87,
    /// A BSD archive member name runs past its data.
    BsdNameOutOfBounds = 88,
    /// An archive symbol count cannot fit in the symbol table.
    SymbolCountTooLarge = 89,
    /// An archive symbol name lies outside the symbol table.
    SymbolNameOutOfBounds = 90,
    /// An archive member name cannot be written.
    InvalidMemberName = 91,
    /// An archive symbol name cannot be written.
    InvalidSymbolName = 92,
    /// The input is not an OffloadBinary (no magic 10 FF 10 AD).
    NotOffloadBinary = 100,
    /// An OffloadBinary's version is not 1, 2 or 3.
    UnsupportedBinaryVersion = 101,
    /// An OffloadBinary's size is smaller than its header.
    BinarySizeTooSmall = 102,
    /// An OffloadBinary's size runs past the end of the input.
    BinaryOutOfBounds = 103,
    /// An OffloadBinary's entries do not fit inside it.
    EntryTableOutOfBounds = 104,
    /// An OffloadBinary entry's image lies outside the binary.
    ImageOutOfBounds = 105,
    /// An OffloadBinary entry's string entries do not fit inside the binary.
    StringTableOutOfBounds = 106,
    /// An OffloadBinary key or value lies outside the binary.
    StringOutOfBounds = 107,
    /// An OffloadBinary key or value has no terminating NUL.
    UnterminatedString = 108,
    /// Decompression was asked of an OffloadBinary that is not compressed.
    NotCompressed = 109,
    /// A key (or version 1 value) to be written contains a NUL byte.
    NulInString = 110,
    /// The container does not record its size (a version 1 compressed bundle).
    UnknownExtent = 111,
    /// A bundle entry ID has fewer than 5 components.
    EntryIdTooFewComponents = 30,
    /// A target ID has no processor.
    TargetIdEmptyProcessor = 31,
    /// A target feature lacks its `+`/`-`.
    TargetIdMissingSign = 32,
    /// A target feature other than `sramecc`/`xnack`.
    TargetIdUnknownFeature = 33,
    /// A target feature given twice.
    TargetIdDuplicateFeature = 34,
    /// The processor is unknown.
    TargetIdUnknownProcessor = 35,
    /// The processor does not support a feature the ID sets.
    TargetIdUnsupportedFeature = 36,
    /// A triple LLVM cannot normalise (a `dxil` shader model it does not know).
    EntryIdUnsupportedTriple = 37,
    /// A bug: the library panicked. Please report it.
    Panic = 255,
}

impl clangoffload_status {
    fn message(self) -> &'static str {
        use clangoffload_status as S;
        match self {
            S::Ok => "success\0",
            S::NullArgument => "a required pointer argument is NULL\0",
            S::InvalidArgument => "invalid argument\0",
            S::InvalidUtf8 => "string argument is not UTF-8\0",
            S::BufferTooSmall => "output buffer too small\0",
            S::IndexOutOfRange => "index out of range\0",
            S::NotFound => "not found\0",
            S::OutOfMemory => "out of memory\0",
            S::End => "no more items\0",
            S::NotABundle => "not a bundle: missing magic\0",
            S::Truncated => "truncated header\0",
            S::CountTooLarge => "entry count cannot fit in the input\0",
            S::IdOutOfBounds => "entry ID runs past the end of the input\0",
            S::EmptyId => "empty entry ID\0",
            S::ZeroOffset => "entry payload offset is 0\0",
            S::PayloadOverflow => "entry payload offset + size overflows\0",
            S::PayloadOutOfBounds => "entry payload ends past the end of the input\0",
            S::ZeroAlignment => "bundle alignment must be at least 1\0",
            S::LayoutOverflow => "bundle layout overflows 64 bits\0",
            S::UnsupportedVersion => "unsupported compressed bundle version\0",
            S::UnknownMethod => "unknown compression method\0",
            S::MethodUnavailable => "compression method not available in this build\0",
            S::BadTotalSize => "total size smaller than the header\0",
            S::SizeLimitExceeded => "size exceeds the limit\0",
            S::SizeMismatch => "stream does not decompress to the declared size\0",
            S::HashMismatch => "hash of the decompressed bundle does not match\0",
            S::CorruptStream => "corrupt compressed stream\0",
            S::NestedCompressedBundle => "compressed bundle inside a compressed bundle\0",
            S::UnknownContainer => "no known container starts here\0",
            S::TooLargeForVersion => "too large for the compressed bundle version\0",
            S::NotElf => "not an ELF file: missing magic\0",
            S::UnsupportedElf => "unsupported ELF file (big-endian or unknown class)\0",
            S::SectionTableOutOfBounds => "section header table runs past the end of the file\0",
            S::BadNameTableIndex => "section name table index names no section\0",
            S::BadSectionIndex => "section index out of range\0",
            S::BadSectionName => "section name outside its string table\0",
            S::SectionOutOfBounds => "section contents run past the end of the file\0",
            S::SectionInUse => "section to remove is still referenced\0",
            S::NulInSectionName => "section name contains a NUL byte\0",
            S::MissingEndMarker => "text bundle entry has no end marker\0",
            S::EndMarkerWithoutStart => "text bundle end marker closes no entry\0",
            S::NestedStartMarker => "text bundle start marker inside an open entry\0",
            S::EndMarkerIdMismatch => "text bundle end marker names another entry\0",
            S::NewlineInId => "entry ID contains a newline\0",
            S::MarkerInPayload => "payload contains a text bundle marker line\0",
            S::NotAnArchive => "not an ar archive\0",
            S::ThinArchive => "thin archives are not supported\0",
            S::BadMemberTerminator => "archive member header does not end with `\\n`\0",
            S::BadDecimal => "archive member header field is not a decimal number\0",
            S::MemberOutOfBounds => "archive member runs past the end of the archive\0",
            S::MissingLongNameTable => {
                "archive member names a long name but there is no // table\0"
            }
            S::LongNameOutOfBounds => "archive long name offset outside the // table\0",
            S::UnterminatedLongName => "archive long name is not terminated\0",
            S::BsdNameOutOfBounds => "BSD archive member name runs past its data\0",
            S::SymbolCountTooLarge => "archive symbol count cannot fit in the symbol table\0",
            S::SymbolNameOutOfBounds => "archive symbol name outside the symbol table\0",
            S::InvalidMemberName => "archive member name cannot be written\0",
            S::InvalidSymbolName => "archive symbol name cannot be written\0",
            S::NotOffloadBinary => "not an OffloadBinary: missing magic\0",
            S::UnsupportedBinaryVersion => "unsupported OffloadBinary version\0",
            S::BinarySizeTooSmall => "OffloadBinary size smaller than its header\0",
            S::BinaryOutOfBounds => "OffloadBinary runs past the end of the input\0",
            S::EntryTableOutOfBounds => "OffloadBinary entries do not fit inside it\0",
            S::ImageOutOfBounds => "OffloadBinary image lies outside the binary\0",
            S::StringTableOutOfBounds => {
                "OffloadBinary string entries do not fit inside the binary\0"
            }
            S::StringOutOfBounds => "OffloadBinary key or value lies outside the binary\0",
            S::UnterminatedString => "OffloadBinary key or value has no terminating NUL\0",
            S::NotCompressed => "OffloadBinary is not compressed\0",
            S::NulInString => "key or value to write contains a NUL byte\0",
            S::UnknownExtent => "container does not record its size\0",
            S::EntryIdTooFewComponents => {
                "bundle entry ID needs <kind>-<arch>-<vendor>-<os>-<env>\0"
            }
            S::TargetIdEmptyProcessor => "target ID has no processor\0",
            S::TargetIdMissingSign => "target feature does not end in '+' or '-'\0",
            S::TargetIdUnknownFeature => "unknown target feature\0",
            S::TargetIdDuplicateFeature => "target feature given twice\0",
            S::TargetIdUnknownProcessor => "unknown processor\0",
            S::TargetIdUnsupportedFeature => "processor does not support the target feature\0",
            S::EntryIdUnsupportedTriple => "triple cannot be normalised\0",
            S::Panic => "internal error (panic) in clangoffload\0",
        }
    }

    fn from_u32(n: u32) -> Option<Self> {
        use clangoffload_status as S;
        const ALL: &[clangoffload_status] = &[
            S::Ok,
            S::NullArgument,
            S::InvalidArgument,
            S::InvalidUtf8,
            S::BufferTooSmall,
            S::IndexOutOfRange,
            S::NotFound,
            S::OutOfMemory,
            S::End,
            S::NotABundle,
            S::Truncated,
            S::CountTooLarge,
            S::IdOutOfBounds,
            S::EmptyId,
            S::ZeroOffset,
            S::PayloadOverflow,
            S::PayloadOutOfBounds,
            S::ZeroAlignment,
            S::LayoutOverflow,
            S::UnsupportedVersion,
            S::UnknownMethod,
            S::MethodUnavailable,
            S::BadTotalSize,
            S::SizeLimitExceeded,
            S::SizeMismatch,
            S::HashMismatch,
            S::CorruptStream,
            S::NestedCompressedBundle,
            S::UnknownContainer,
            S::TooLargeForVersion,
            S::NotElf,
            S::UnsupportedElf,
            S::SectionTableOutOfBounds,
            S::BadNameTableIndex,
            S::BadSectionIndex,
            S::BadSectionName,
            S::SectionOutOfBounds,
            S::SectionInUse,
            S::NulInSectionName,
            S::MissingEndMarker,
            S::EndMarkerWithoutStart,
            S::NestedStartMarker,
            S::EndMarkerIdMismatch,
            S::NewlineInId,
            S::MarkerInPayload,
            S::NotAnArchive,
            S::ThinArchive,
            S::BadMemberTerminator,
            S::BadDecimal,
            S::MemberOutOfBounds,
            S::MissingLongNameTable,
            S::LongNameOutOfBounds,
            S::UnterminatedLongName,
            S::BsdNameOutOfBounds,
            S::SymbolCountTooLarge,
            S::SymbolNameOutOfBounds,
            S::InvalidMemberName,
            S::InvalidSymbolName,
            S::EntryIdTooFewComponents,
            S::TargetIdEmptyProcessor,
            S::TargetIdMissingSign,
            S::TargetIdUnknownFeature,
            S::TargetIdDuplicateFeature,
            S::TargetIdUnknownProcessor,
            S::TargetIdUnsupportedFeature,
            S::EntryIdUnsupportedTriple,
            S::Panic,
            S::NotOffloadBinary,
            S::UnsupportedBinaryVersion,
            S::BinarySizeTooSmall,
            S::BinaryOutOfBounds,
            S::EntryTableOutOfBounds,
            S::ImageOutOfBounds,
            S::StringTableOutOfBounds,
            S::StringOutOfBounds,
            S::UnterminatedString,
            S::NotCompressed,
            S::NulInString,
            S::UnknownExtent,
        ];
        ALL.iter().copied().find(|s| *s as u32 == n)
    }
}

impl From<ErrorKind> for clangoffload_status {
    fn from(kind: ErrorKind) -> Self {
        use clangoffload_status as S;
        match kind {
            ErrorKind::BadMagic => S::NotABundle,
            ErrorKind::Truncated { .. } => S::Truncated,
            ErrorKind::CountTooLarge { .. } => S::CountTooLarge,
            ErrorKind::IdOutOfBounds { .. } => S::IdOutOfBounds,
            ErrorKind::EmptyId => S::EmptyId,
            ErrorKind::ZeroOffset => S::ZeroOffset,
            ErrorKind::PayloadOverflow { .. } => S::PayloadOverflow,
            ErrorKind::PayloadOutOfBounds { .. } => S::PayloadOutOfBounds,
            ErrorKind::ZeroAlignment => S::ZeroAlignment,
            ErrorKind::LayoutOverflow => S::LayoutOverflow,
            ErrorKind::OutOfMemory { .. } => S::OutOfMemory,
            ErrorKind::UnsupportedVersion { .. } => S::UnsupportedVersion,
            ErrorKind::UnknownMethod { .. } => S::UnknownMethod,
            ErrorKind::MethodUnavailable { .. } => S::MethodUnavailable,
            ErrorKind::BadTotalSize { .. } => S::BadTotalSize,
            ErrorKind::SizeLimitExceeded { .. } => S::SizeLimitExceeded,
            ErrorKind::TooLargeForVersion { .. } => S::TooLargeForVersion,
            ErrorKind::ContentSizeMismatch { .. }
            | ErrorKind::DecompressedTooLarge { .. }
            | ErrorKind::DecompressedTooSmall { .. } => S::SizeMismatch,
            ErrorKind::OutputTooSmall { .. } => S::BufferTooSmall,
            ErrorKind::HashMismatch { .. } => S::HashMismatch,
            ErrorKind::CorruptStream { .. } => S::CorruptStream,
            ErrorKind::NestedCompressedBundle => S::NestedCompressedBundle,
            ErrorKind::UnknownContainer => S::UnknownContainer,
            ErrorKind::NotElf => S::NotElf,
            ErrorKind::UnsupportedElf { .. } => S::UnsupportedElf,
            ErrorKind::SectionTableOutOfBounds { .. } => S::SectionTableOutOfBounds,
            ErrorKind::BadNameTableIndex { .. } => S::BadNameTableIndex,
            ErrorKind::BadSectionIndex { .. } => S::BadSectionIndex,
            ErrorKind::BadSectionName { .. } => S::BadSectionName,
            ErrorKind::SectionOutOfBounds { .. } => S::SectionOutOfBounds,
            ErrorKind::SectionInUse { .. } => S::SectionInUse,
            ErrorKind::NulInSectionName => S::NulInSectionName,
            ErrorKind::MissingEndMarker => S::MissingEndMarker,
            ErrorKind::EndMarkerWithoutStart => S::EndMarkerWithoutStart,
            ErrorKind::NestedStartMarker => S::NestedStartMarker,
            ErrorKind::EndMarkerIdMismatch => S::EndMarkerIdMismatch,
            ErrorKind::NewlineInId => S::NewlineInId,
            ErrorKind::MarkerInPayload => S::MarkerInPayload,
            ErrorKind::NotAnArchive => S::NotAnArchive,
            ErrorKind::ThinArchive => S::ThinArchive,
            ErrorKind::BadMemberTerminator => S::BadMemberTerminator,
            ErrorKind::BadDecimal { .. } => S::BadDecimal,
            ErrorKind::MemberOutOfBounds { .. } => S::MemberOutOfBounds,
            ErrorKind::MissingLongNameTable { .. } => S::MissingLongNameTable,
            ErrorKind::LongNameOutOfBounds { .. } => S::LongNameOutOfBounds,
            ErrorKind::UnterminatedLongName { .. } => S::UnterminatedLongName,
            ErrorKind::BsdNameOutOfBounds { .. } => S::BsdNameOutOfBounds,
            ErrorKind::SymbolCountTooLarge { .. } => S::SymbolCountTooLarge,
            ErrorKind::SymbolNameOutOfBounds => S::SymbolNameOutOfBounds,
            ErrorKind::InvalidMemberName => S::InvalidMemberName,
            ErrorKind::InvalidSymbolName => S::InvalidSymbolName,
            ErrorKind::NotOffloadBinary => S::NotOffloadBinary,
            ErrorKind::UnsupportedBinaryVersion { .. } => S::UnsupportedBinaryVersion,
            ErrorKind::BinarySizeTooSmall { .. } => S::BinarySizeTooSmall,
            ErrorKind::BinaryOutOfBounds { .. } => S::BinaryOutOfBounds,
            ErrorKind::EntryTableOutOfBounds { .. } => S::EntryTableOutOfBounds,
            ErrorKind::ImageOutOfBounds { .. } => S::ImageOutOfBounds,
            ErrorKind::StringTableOutOfBounds { .. } => S::StringTableOutOfBounds,
            ErrorKind::StringOutOfBounds { .. } => S::StringOutOfBounds,
            ErrorKind::UnterminatedString { .. } => S::UnterminatedString,
            ErrorKind::NotCompressed => S::NotCompressed,
            ErrorKind::NulInString => S::NulInString,
            _ => S::InvalidArgument,
        }
    }
}

impl From<IdError> for clangoffload_status {
    fn from(e: IdError) -> Self {
        use clangoffload_status as S;
        match e {
            IdError::TooFewComponents { .. } => S::EntryIdTooFewComponents,
            IdError::EmptyProcessor => S::TargetIdEmptyProcessor,
            IdError::MissingFeatureSign { .. } => S::TargetIdMissingSign,
            IdError::UnknownFeature { .. } => S::TargetIdUnknownFeature,
            IdError::DuplicateFeature { .. } => S::TargetIdDuplicateFeature,
            IdError::UnknownProcessor => S::TargetIdUnknownProcessor,
            IdError::UnsupportedFeature => S::TargetIdUnsupportedFeature,
            IdError::UnsupportedShaderModel => S::EntryIdUnsupportedTriple,
            _ => S::InvalidArgument,
        }
    }
}

/// An English message for any status value (unknown values get "unknown
/// status").
///
/// Ownership: returns static storage; never free it.
///
/// Lifetime: the NUL-terminated string lives as long as the library is loaded.
///
/// NULL: never returns NULL. Pure; takes no pointer.
#[no_mangle]
pub extern "C" fn clangoffload_status_message(status: u32) -> *const c_char {
    clangoffload_status::from_u32(status)
        .map_or("unknown status\0", clangoffload_status::message)
        .as_ptr()
        .cast()
}

/// Sentinel in `clangoffload_error.entry` when the error is not in an entry.
pub const CLANGOFFLOAD_NO_ENTRY: u64 = u64::MAX;

/// Where and why an input was rejected: filled by the functions that take a
/// `clangoffload_error *` (which may be NULL when the details are not wanted).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_error {
    /// The status the function returned.
    pub status: u32,
    /// Byte offset of the offending field from the start of the input.
    pub offset: u64,
    /// Index of the offending entry, or `CLANGOFFLOAD_NO_ENTRY`.
    pub entry: u64,
    /// A precise NUL-terminated description, with the values at fault.
    pub message: [c_char; 256],
}

impl clangoffload_error {
    pub(crate) fn from_core(e: &Error) -> Self {
        let mut err = clangoffload_error {
            status: clangoffload_status::from(e.kind()) as u32,
            offset: e.offset(),
            entry: e.entry().unwrap_or(CLANGOFFLOAD_NO_ENTRY),
            message: [0; 256],
        };
        // Truncation of an over-long message is fine: the last byte stays NUL.
        let mut message = Message {
            buf: err
                .message
                .split_last_mut()
                .map_or(&mut [][..], |(_, text)| text),
            len: 0,
        };
        let _ = write!(message, "{e}");
        err
    }
}

/// A `fmt::Write` into a fixed buffer that keeps what fits.
struct Message<'a> {
    buf: &'a mut [c_char],
    len: usize,
}

impl Write for Message<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let rest = self.buf.get_mut(self.len..).unwrap_or_default();
        for (dst, src) in rest.iter_mut().zip(s.bytes()) {
            *dst = c_char::from_ne_bytes([src]);
        }
        self.len = self.len.saturating_add(s.len()).min(self.buf.len());
        Ok(())
    }
}

/// Stores `e` into the caller's optional error record.
///
/// # Safety
/// `out` must be NULL or point to a writable `clangoffload_error`.
pub(crate) unsafe fn report(e: &Error, out: *mut clangoffload_error) -> clangoffload_status {
    // SAFETY: forwarded to the caller; NULL means "not wanted".
    if let Ok(slot) = unsafe { out_arg(out) } {
        *slot = clangoffload_error::from_core(e);
    }
    clangoffload_status::from(e.kind())
}
