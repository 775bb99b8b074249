//! Status codes, their messages, and the detailed error record.

use core::ffi::c_char;
use core::fmt::Write;

#[cfg(feature = "alloc")]
use clangoffload::bundler::BundlerError;
use clangoffload::id::IdError;
use clangoffload::{Error, ErrorKind, Field};

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
    /// A file could not be created, read or written.
    IoError = 9,
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
    /// A compressed bundle's hash could not be checked: what was written of
    /// it could not be read back.
    Unverifiable = 51,
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
    /// The section name table is not a NUL-terminated `SHT_STRTAB`.
    BadNameTable = 69,
    /// A COFF object or PE image this library does not read or write (a big
    /// object, an unknown optional header, rewriting an image).
    UnsupportedCoff = 76,
    /// A COFF symbol table, or the string table after it, lies outside the
    /// file.
    SymbolTableOutOfBounds = 77,
    /// A COFF section's relocations lie outside the file.
    RelocationsOutOfBounds = 78,
    /// A symbol index names no symbol.
    BadSymbolIndex = 79,
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
    /// Decompression was asked of an OffloadBinary or a fat binary entry that is not compressed.
    NotCompressed = 109,
    /// A key (or version 1 value) to be written contains a NUL byte.
    NulInString = 110,
    /// The container does not record its size (a version 1 compressed bundle).
    UnknownExtent = 111,
    /// The bundler's file type (`-type`) names no type.
    InvalidFileType = 120,
    /// A bundler target is not `<offload kind>-<target triple>`.
    TargetFormat = 121,
    /// A bundler target is given twice.
    DuplicateTargets = 122,
    /// A bundler target has an unknown offload kind or target triple.
    InvalidTarget = 123,
    /// Two bundler targets name one processor with conflicting target features.
    ConflictingTargets = 124,
    /// Not exactly one host target where the bundler needs one.
    HostTargetCount = 125,
    // 126 is not assigned: the bundler's alignment of 0 is `ZeroAlignment` (18).
    /// Bundling into an archive (archives are only unbundled).
    ArchiveBundling = 127,
    /// A Mach-O host object (the bundler reads ELF host objects only).
    MachOObject = 128,
    /// An OffloadBinary where the bundler needs a bundle.
    OffloadBinaryNotBundle = 129,
    /// A bundle entry ID that is not `<offload kind>-<target triple>` as the bundler reads it.
    InvalidBundleId = 130,
    /// No bundle entry for some of the targets.
    MissingBundles = 131,
    /// Bundle entries for the device targets but none for the host target.
    MissingHostBundle = 132,
    /// The input holds no bundle of any flavour.
    NotAContainer = 133,
    /// Two entries of an archive member have conflicting target IDs.
    ConflictingTargetIds = 134,
    /// No archive member holds code for a target.
    NoCompatibleCodeObject = 135,
    /// A compressed bundle decompresses to something other than a binary bundle.
    NotBinaryBundle = 136,
    /// Extracting every entry would write more than the bundle holds
    /// (overlapping payloads).
    ExtractionTooLarge = 137,
    /// A PE image (DLL or executable) as a `-type=o` bundle host: only ELF
    /// and COFF objects are written.
    CoffObject = 138,
    /// An `--image` argument to package has no `file` key.
    MissingImageFile = 140,
    /// Extracting to an archive with a filter that has no `file` key.
    ArchiveWithoutFile = 141,
    /// LLVM bitcode where the packager reads OffloadBinaries (not supported).
    BitcodeInput = 142,
    /// A compression level outside the method's range.
    InvalidCompressionLevel = 143,
    /// The host triple's object format is not ELF (registration code is
    /// written for ELF hosts only).
    NotElfHost = 150,
    /// An offload kind without a runtime registration (only OpenMP, HIP and
    /// CUDA have one).
    UnsupportedOffloadKind = 151,
    /// A compressed OffloadBinary where its image is needed in place.
    CompressedOffloadBinary = 152,
    /// An OffloadBinary without a device image (no entry, or metadata only).
    NoDeviceImage = 153,
    /// A symbol table's string table is not a non-empty, NUL-terminated
    /// `SHT_STRTAB`.
    BadStringTable = 154,
    /// Not LLVM bitcode (no magic `BC C0 DE`).
    NotBitcode = 160,
    /// An LLVM bitcode file's bitstream or symbol table is damaged.
    MalformedBitcode = 161,
    /// Not a CUDA fat binary (no magic `50 ED 55 BA`).
    NotFatbin = 170,
    /// A fat binary or fat binary entry header states a size it cannot have.
    BadHeaderSize = 171,
    /// A range a fat binary declares (its size, an entry's header or payload,
    /// an identifier, options, a `--concat` member) lies outside what holds it.
    FatbinOutOfBounds = 172,
    /// A fat binary entry's compressed size is larger than its payload.
    CompressedSizeTooLarge = 173,
    /// Not a kpack archive (no magic `KPAK`).
    NotKpack = 180,
    /// A kpack archive's version is not 1.
    UnsupportedKpackVersion = 181,
    /// A kpack archive's table of contents is not what rocm-kpack writes.
    MalformedKpack = 182,
    /// A range a kpack archive declares (its table, a code object, its zstd
    /// blob or one of its frames) lies outside the archive or the blob.
    KpackOutOfBounds = 183,
    /// A `HIPK` record's pointer is 0 and no relocation fills it (kpack's
    /// split zeroes it in executables that are not position-independent).
    KpackNullPointer = 184,
    /// A `HIPK` record's pointer leads to no bytes in the file.
    KpackUnresolvedPointer = 185,
    /// A host kpack's split cannot take, or one where rocm-kpack's split
    /// would write a host the runtime misreads (the message says which).
    KpackSplitRefused = 186,
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

/// Writes, from one table of `Status => "message"` rows,
/// `clangoffload_status::message` (an exhaustive `match` without wildcard: a
/// status without a row, or a row without a status, does not compile; a row
/// twice is an unreachable pattern, denied) and `clangoffload_status::ALL`
/// (every status, from the same rows). The enum above stays written out
/// because cbindgen reads the source, not expanded macros.
macro_rules! status_table {
    ($($status:ident => $message:literal,)+) => {
        impl clangoffload_status {
            /// Every status, in the order of the table.
            pub(crate) const ALL: &'static [clangoffload_status] =
                &[$(clangoffload_status::$status,)+];

            /// The status's English message, NUL-terminated.
            #[deny(unreachable_patterns)]
            fn message(self) -> &'static str {
                match self {
                    $(clangoffload_status::$status => concat!($message, "\0"),)+
                }
            }
        }
    };
}

status_table! {
    Ok => "success",
    NullArgument => "a required pointer argument is NULL",
    InvalidArgument => "invalid argument",
    InvalidUtf8 => "string argument is not UTF-8",
    BufferTooSmall => "output buffer too small",
    IndexOutOfRange => "index out of range",
    NotFound => "not found",
    OutOfMemory => "out of memory",
    End => "no more items",
    IoError => "input/output error",
    NotABundle => "not a bundle: missing magic",
    Truncated => "truncated header",
    CountTooLarge => "entry count cannot fit in the input",
    IdOutOfBounds => "entry ID runs past the end of the input",
    EmptyId => "empty entry ID",
    ZeroOffset => "entry payload offset is 0",
    PayloadOverflow => "entry payload offset + size overflows",
    PayloadOutOfBounds => "entry payload ends past the end of the input",
    ZeroAlignment => "bundle alignment must be at least 1",
    LayoutOverflow => "bundle layout overflows 64 bits",
    UnsupportedVersion => "unsupported compressed bundle version",
    UnknownMethod => "unknown compression method",
    MethodUnavailable => "compression method not available in this build",
    BadTotalSize => "total size smaller than the header",
    SizeLimitExceeded => "size exceeds the limit",
    SizeMismatch => "stream does not decompress to the declared size",
    HashMismatch => "hash of the decompressed bundle does not match",
    CorruptStream => "corrupt compressed stream",
    NestedCompressedBundle => "compressed bundle inside a compressed bundle",
    UnknownContainer => "no known container starts here",
    TooLargeForVersion => "too large for the compressed bundle version",
    Unverifiable => "hash not checked: the bytes written could not be read back",
    NotElf => "not an ELF file: missing magic",
    UnsupportedElf => "unsupported ELF file (big-endian or unknown class)",
    SectionTableOutOfBounds => "section header table runs past the end of the file",
    BadNameTableIndex => "section name table index names no section",
    BadNameTable => "section name table is not a NUL-terminated string table",
    UnsupportedCoff => "unsupported COFF file (big object, unknown optional header, image rewrite)",
    SymbolTableOutOfBounds => "symbol table runs past the end of the file",
    RelocationsOutOfBounds => "relocations run past the end of the file",
    BadSymbolIndex => "symbol index names no symbol",
    BadSectionIndex => "section index out of range",
    BadSectionName => "section name outside its string table",
    SectionOutOfBounds => "section contents run past the end of the file",
    SectionInUse => "section to remove is still referenced",
    NulInSectionName => "section name contains a NUL byte",
    MissingEndMarker => "text bundle entry has no end marker",
    EndMarkerWithoutStart => "text bundle end marker closes no entry",
    NestedStartMarker => "text bundle start marker inside an open entry",
    EndMarkerIdMismatch => "text bundle end marker names another entry",
    NewlineInId => "entry ID contains a newline",
    MarkerInPayload => "payload contains a text bundle marker line",
    NotAnArchive => "not an ar archive",
    ThinArchive => "thin archives are not supported",
    BadMemberTerminator => "archive member header does not end with `\\n`",
    BadDecimal => "archive member header field is not a decimal number",
    MemberOutOfBounds => "archive member runs past the end of the archive",
    MissingLongNameTable => "archive member names a long name but there is no // table",
    LongNameOutOfBounds => "archive long name offset outside the // table",
    UnterminatedLongName => "archive long name is not terminated",
    BsdNameOutOfBounds => "BSD archive member name runs past its data",
    SymbolCountTooLarge => "archive symbol count cannot fit in the symbol table",
    SymbolNameOutOfBounds => "archive symbol name outside the symbol table",
    InvalidMemberName => "archive member name cannot be written",
    InvalidSymbolName => "archive symbol name cannot be written",
    NotOffloadBinary => "not an OffloadBinary: missing magic",
    UnsupportedBinaryVersion => "unsupported OffloadBinary version",
    BinarySizeTooSmall => "OffloadBinary size smaller than its header",
    BinaryOutOfBounds => "OffloadBinary runs past the end of the input",
    EntryTableOutOfBounds => "OffloadBinary entries do not fit inside it",
    ImageOutOfBounds => "OffloadBinary image lies outside the binary",
    StringTableOutOfBounds => "OffloadBinary string entries do not fit inside the binary",
    StringOutOfBounds => "OffloadBinary key or value lies outside the binary",
    UnterminatedString => "OffloadBinary key or value has no terminating NUL",
    NotCompressed => "the OffloadBinary or fat binary entry is not compressed",
    NulInString => "key or value to write contains a NUL byte",
    UnknownExtent => "container does not record its size",
    InvalidFileType => "invalid file type specified",
    TargetFormat => "target is not <offload kind>-<target triple>",
    DuplicateTargets => "duplicate targets are not allowed",
    InvalidTarget => "unknown offload kind or target triple",
    ConflictingTargets => "targets with conflicting target features",
    HostTargetCount => "expecting exactly one host target",
    ArchiveBundling => "archives are only supported for unbundling",
    MachOObject => "Mach-O host objects are not supported",
    CoffObject => "PE images are not supported as bundle hosts; only ELF and COFF objects",
    OffloadBinaryNotBundle => "an OffloadBinary, not a bundle",
    InvalidBundleId => "invalid bundle ID read from the bundle",
    MissingBundles => "no bundle for a target",
    MissingHostBundle => "no bundle for the host target",
    NotAContainer => "no offload container or CUDA fat binary",
    ConflictingTargetIds => "conflicting target IDs in an archive member",
    NoCompatibleCodeObject => "no compatible code object for a target",
    NotBinaryBundle => "compressed bundle does not hold a binary bundle",
    ExtractionTooLarge => "overlapping payloads: extracting every entry would write more than the bundle",
    MissingImageFile => "'file' is a required image argument",
    ArchiveWithoutFile => "an image extracted to an archive must have a 'file' argument",
    BitcodeInput => "LLVM bitcode inputs are not supported",
    InvalidCompressionLevel => "compression level out of range",
    NotElfHost => "host object format is not ELF; only ELF hosts are supported",
    UnsupportedOffloadKind => "no runtime registration for the offload kind",
    CompressedOffloadBinary => "OffloadBinary is compressed: its image exists only once decompressed",
    NoDeviceImage => "OffloadBinary has no device image",
    BadStringTable => "symbol table's string table is not a non-empty, NUL-terminated SHT_STRTAB",
    NotBitcode => "not LLVM bitcode: missing magic",
    MalformedBitcode => "malformed LLVM bitcode",
    NotFatbin => "not a CUDA fat binary: missing magic",
    BadHeaderSize => "fat binary header size not allowed",
    FatbinOutOfBounds => "fat binary range lies outside what holds it",
    CompressedSizeTooLarge => "fat binary entry's compressed size exceeds its payload",
    NotKpack => "not a kpack archive: missing magic KPAK",
    UnsupportedKpackVersion => "unsupported kpack archive version",
    MalformedKpack => "malformed kpack table of contents",
    KpackOutOfBounds => "kpack archive range out of bounds",
    KpackNullPointer => "HIPK record's pointer is 0 and no relocation fills it",
    KpackUnresolvedPointer => "HIPK record's pointer leads to no bytes in the file",
    KpackSplitRefused => "host cannot be split by kpack's rules",
    EntryIdTooFewComponents => "bundle entry ID needs <kind>-<arch>-<vendor>-<os>-<env>",
    TargetIdEmptyProcessor => "target ID has no processor",
    TargetIdMissingSign => "target feature does not end in '+' or '-'",
    TargetIdUnknownFeature => "unknown target feature",
    TargetIdDuplicateFeature => "target feature given twice",
    TargetIdUnknownProcessor => "unknown processor",
    TargetIdUnsupportedFeature => "processor does not support the target feature",
    EntryIdUnsupportedTriple => "triple cannot be normalised",
    Panic => "internal error (panic) in clangoffload",
}

impl clangoffload_status {
    /// The status's number.
    pub(crate) const fn code(self) -> u32 {
        // A fieldless `repr(u32)` enum: the cast is its discriminant, lossless.
        #[allow(clippy::as_conversions)]
        let code = self as u32;
        code
    }

    fn from_u32(n: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.code() == n)
    }
}

impl From<clangoffload_status> for u32 {
    fn from(status: clangoffload_status) -> u32 {
        status.code()
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
            ErrorKind::UnsupportedCoff { .. } => S::UnsupportedCoff,
            ErrorKind::SymbolTableOutOfBounds { .. } | ErrorKind::SymbolNamesOutOfBounds { .. } => {
                S::SymbolTableOutOfBounds
            }
            ErrorKind::RelocationsOutOfBounds { .. } => S::RelocationsOutOfBounds,
            ErrorKind::BadSymbolIndex { .. } => S::BadSymbolIndex,
            ErrorKind::SectionTableOutOfBounds { .. } => S::SectionTableOutOfBounds,
            ErrorKind::BadNameTableIndex { .. } => S::BadNameTableIndex,
            ErrorKind::BadNameTable { .. } => S::BadNameTable,
            ErrorKind::BadStringTable { .. } => S::BadStringTable,
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
            ErrorKind::EntryTableOutOfBounds { .. } | ErrorKind::EntrySizeOutOfBounds { .. } => {
                S::EntryTableOutOfBounds
            }
            ErrorKind::ImageOutOfBounds { .. } => S::ImageOutOfBounds,
            ErrorKind::StringTableOutOfBounds { .. } => S::StringTableOutOfBounds,
            ErrorKind::StringOutOfBounds { .. } => S::StringOutOfBounds,
            ErrorKind::UnterminatedString { .. } => S::UnterminatedString,
            ErrorKind::NotCompressed => S::NotCompressed,
            ErrorKind::NulInString => S::NulInString,
            ErrorKind::NotBitcode => S::NotBitcode,
            ErrorKind::MalformedBitcode { .. } => S::MalformedBitcode,
            ErrorKind::NotFatbin => S::NotFatbin,
            ErrorKind::BadHeaderSize { .. } => S::BadHeaderSize,
            ErrorKind::OutOfBounds {
                field:
                    Field::KpackToc
                    | Field::KpackBlob
                    | Field::KpackFrames
                    | Field::KpackFrame
                    | Field::KpackHeader,
                ..
            } => S::KpackOutOfBounds,
            ErrorKind::OutOfBounds { .. } => S::FatbinOutOfBounds,
            ErrorKind::NotKpack => S::NotKpack,
            ErrorKind::UnsupportedKpackVersion { .. } => S::UnsupportedKpackVersion,
            ErrorKind::MalformedKpack { .. } => S::MalformedKpack,
            ErrorKind::KpackSplit { .. } => S::KpackSplitRefused,
            ErrorKind::CompressedSizeTooLarge { .. } => S::CompressedSizeTooLarge,
            ErrorKind::CorruptLz4 { .. } => S::CorruptStream,
            ErrorKind::AmbiguousCompression { .. } => S::UnknownMethod,
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

/// An empty record (status 0, no message): what a caller passes in before a
/// call fills it. Arrays longer than 32 have no derived `Default`.
impl Default for clangoffload_error {
    fn default() -> Self {
        clangoffload_error {
            status: 0,
            offset: 0,
            entry: 0,
            message: [0; 256],
        }
    }
}

impl clangoffload_error {
    /// A record of `status` at `offset` in `entry` (or
    /// `CLANGOFFLOAD_NO_ENTRY`), with `message` truncated to fit.
    pub(crate) fn new(
        status: clangoffload_status,
        offset: u64,
        entry: Option<u64>,
        message: impl core::fmt::Display,
    ) -> Self {
        let mut err = clangoffload_error {
            status: status.code(),
            offset,
            entry: entry.unwrap_or(CLANGOFFLOAD_NO_ENTRY),
            ..Self::default()
        };
        // Truncation of an over-long message is fine: the last byte stays NUL.
        let mut text = Message {
            buf: err
                .message
                .split_last_mut()
                .map_or(&mut [][..], |(_, text)| text),
            len: 0,
        };
        let _ = write!(text, "{message}");
        err
    }

    pub(crate) fn from_core(e: &Error) -> Self {
        Self::new(e.kind().into(), e.offset(), e.entry(), e)
    }

    /// Fills the caller's optional record with `record()`. NULL means "not
    /// wanted"; a misaligned pointer is skipped too, since reporting an error
    /// never fails on its record (the status alone still says what failed).
    /// Here rather than through `ffi::out_arg` so that this module, the one
    /// list of statuses every other module uses, depends on none of them.
    ///
    /// # Safety
    /// `out` must be NULL or point to a writable `clangoffload_error`.
    pub(crate) unsafe fn store(out: *mut Self, record: impl FnOnce() -> Self) {
        if !out.is_aligned() {
            return;
        }
        // SAFETY: aligned; NULL is turned into None; writability promised
        // by the caller.
        if let Some(slot) = unsafe { out.as_mut() } {
            *slot = record();
        }
    }

    /// [`store`](Self::store) of a job's failure: `status`, the offset and
    /// entry of the core error `behind` it (0 and `CLANGOFFLOAD_NO_ENTRY`
    /// if none), and `message` (truncated to fit).
    ///
    /// # Safety
    /// As [`store`](Self::store).
    #[cfg(feature = "alloc")]
    pub(crate) unsafe fn store_failure(
        out: *mut Self,
        status: clangoffload_status,
        behind: Option<&Error>,
        message: impl core::fmt::Display,
    ) {
        let offset = behind.map_or(0, Error::offset);
        let record = || Self::new(status, offset, behind.and_then(Error::entry), message);
        // SAFETY: forwarded to the caller.
        unsafe { Self::store(out, record) }
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
    unsafe { clangoffload_error::store(out, || clangoffload_error::from_core(e)) };
    clangoffload_status::from(e.kind())
}

/// The status of a bundler job's failure: that of the core error behind it
/// where there is one, else the bundler's own. Every variant is named, so a
/// new one does not compile until it has a status.
#[cfg(feature = "alloc")]
pub(crate) fn status_of(e: &BundlerError) -> clangoffload_status {
    use clangoffload::bundler::CompressedProblem as P;
    use clangoffload_status as S;
    use BundlerError as E;
    match e {
        E::InvalidFileType(_) => S::InvalidFileType,
        E::TargetFormat => S::TargetFormat,
        E::DuplicateTargets => S::DuplicateTargets,
        E::InvalidTarget { .. } => S::InvalidTarget,
        E::Id(e) => S::from(*e),
        E::ConflictingTargets(..) => S::ConflictingTargets,
        E::HostTargetCount(_) => S::HostTargetCount,
        E::ZeroAlignment => S::ZeroAlignment,
        E::ArchiveBundling => S::ArchiveBundling,
        E::MachOObject => S::MachOObject,
        E::CoffObject => S::CoffObject,
        E::MalformedObject(e)
        | E::MalformedTextBundle(e)
        | E::MalformedBundle { error: e, .. }
        | E::Unreadable { error: e, .. }
        | E::Input(e)
        | E::Writer(e) => S::from(e.kind()),
        E::Compressed { problem, .. } => match problem {
            P::Decode(e) => S::from(e.kind()),
            P::HashMismatch { .. } => S::HashMismatch,
            P::NotBinaryBundle => S::NotBinaryBundle,
            P::Unverifiable { .. } => S::Unverifiable,
        },
        E::OffloadBinaryNotBundle { .. } => S::OffloadBinaryNotBundle,
        E::InvalidBundleId | E::InvalidCodeObjectId { .. } => S::InvalidBundleId,
        E::MissingBundles(_) => S::MissingBundles,
        E::MissingHostBundle => S::MissingHostBundle,
        E::NotAnArchive => S::NotAnArchive,
        E::NotAContainer(_) => S::NotAContainer,
        E::OverlappingPayloads { .. } => S::ExtractionTooLarge,
        E::Member { error, .. } => status_of(error),
        E::ConflictingTargetIds { .. } => S::ConflictingTargetIds,
        E::NoCompatibleCodeObject { .. } => S::NoCompatibleCodeObject,
    }
}

/// Stores a bundler job's failure into the caller's optional error record:
/// its status ([`status_of`]), the offset and entry of the core error behind
/// it (0 and `CLANGOFFLOAD_NO_ENTRY` if none), and the message the tool
/// prints for an input named `input_name` (truncated to fit).
///
/// # Safety
/// `out` must be NULL or point to a writable `clangoffload_error`.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn report_bundler(
    e: &BundlerError,
    input_name: &str,
    out: *mut clangoffload_error,
) -> clangoffload_status {
    let status = status_of(e);
    let message = e.message(input_name);
    // SAFETY: forwarded to the caller; NULL means "not wanted".
    unsafe { clangoffload_error::store_failure(out, status, e.core_error(), message) };
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn message_of(n: u32) -> &'static str {
        // SAFETY: static NUL-terminated storage.
        unsafe { CStr::from_ptr(clangoffload_status_message(n)) }
            .to_str()
            .expect("UTF-8 message")
    }

    #[test]
    fn every_number_decodes_to_its_own_status_or_none() {
        for n in 0..=1024 {
            if let Some(s) = clangoffload_status::from_u32(n) {
                assert_eq!(s.code(), n);
                assert_eq!(u32::from(s), n);
            }
        }
        for s in clangoffload_status::ALL {
            assert_eq!(clangoffload_status::from_u32(s.code()), Some(*s));
        }
        assert_eq!(
            clangoffload_status::from_u32(126),
            None,
            "126 is not assigned"
        );
        assert_eq!(clangoffload_status::from_u32(u32::MAX), None);
    }

    #[test]
    fn every_status_has_one_message() {
        let mut seen = std::collections::BTreeSet::new();
        for s in clangoffload_status::ALL {
            assert!(seen.insert(s.code()), "{s:?} twice in the table");
            let m = s.message();
            assert_eq!(
                m.find('\0'),
                Some(m.len() - 1),
                "{s:?}: one NUL, at the end"
            );
            assert!(m.len() > 1, "{s:?}: empty message");
            assert_eq!(message_of(s.code()), &m[..m.len() - 1]);
        }
        assert_eq!(message_of(126), "unknown status");
    }

    /// The header (checked to be what cbindgen makes of the enum) lists
    /// exactly the statuses of the table, with the same numbers.
    #[test]
    fn the_header_lists_the_statuses_of_the_table() {
        let header = include_str!("../../include/clangoffload.h");
        let mut in_header = Vec::new();
        for line in header.lines() {
            let Some(rest) = line.trim().strip_prefix("CLANGOFFLOAD_STATUS_") else {
                continue;
            };
            let Some((name, value)) = rest.split_once(" = ") else {
                continue;
            };
            let value: u32 = value.trim_end_matches(',').parse().expect("a number");
            in_header.push((name.to_owned(), value));
        }
        let mut in_table: Vec<_> = clangoffload_status::ALL
            .iter()
            .map(|s| (screaming_snake(&format!("{s:?}")), s.code()))
            .collect();
        in_header.sort();
        in_table.sort();
        assert_eq!(in_header, in_table);
    }

    fn screaming_snake(name: &str) -> String {
        let mut out = String::new();
        for (i, c) in name.char_indices() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        out
    }

    #[test]
    fn id_errors_have_their_own_statuses() {
        assert_eq!(
            clangoffload_status::from(IdError::EmptyProcessor),
            clangoffload_status::TargetIdEmptyProcessor
        );
        assert_eq!(
            clangoffload_status::from(IdError::TooFewComponents { found: 2 }),
            clangoffload_status::EntryIdTooFewComponents
        );
    }

    /// A bundle whose only entry has payload offset 0: an error in entry 0.
    fn zero_offset_error() -> Error {
        let mut bytes = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        for field in [1u64, 0, 4, 1] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(b"a");
        let e = clangoffload::Bundle::parse(&bytes).expect_err("offset 0");
        assert_eq!(e.kind(), ErrorKind::ZeroOffset);
        assert_eq!(e.entry(), Some(0));
        e
    }

    #[test]
    fn core_errors_are_reported_with_their_place() {
        let e = zero_offset_error();
        let mut out = core::mem::MaybeUninit::<clangoffload_error>::uninit();
        // SAFETY: a writable record.
        let status = unsafe { report(&e, out.as_mut_ptr()) };
        assert_eq!(status, clangoffload_status::ZeroOffset);
        // SAFETY: written by report.
        let out = unsafe { out.assume_init() };
        assert_eq!(out.status, status.code());
        assert_eq!((out.offset, out.entry), (e.offset(), 0));
        // SAFETY: NUL-terminated (the last byte stays 0).
        let text = unsafe { CStr::from_ptr(out.message.as_ptr()) };
        assert_eq!(text.to_str().unwrap(), e.to_string());
    }

    #[cfg(feature = "alloc")]
    mod bundler {
        use super::*;
        use clangoffload::bundler::{CompressedProblem, Place};
        use clangoffload_status as S;
        use BundlerError as E;

        #[test]
        fn every_bundler_error_has_a_precise_status() {
            let core = zero_offset_error();
            let cases = [
                (E::InvalidFileType("z".into()), S::InvalidFileType),
                (E::TargetFormat, S::TargetFormat),
                (E::DuplicateTargets, S::DuplicateTargets),
                (
                    E::InvalidTarget {
                        target: "x".into(),
                        unknown_kind: Some("x".into()),
                        unknown_triple: None,
                    },
                    S::InvalidTarget,
                ),
                (
                    E::Id(IdError::UnknownProcessor),
                    S::TargetIdUnknownProcessor,
                ),
                (
                    E::ConflictingTargets("a".into(), "b".into()),
                    S::ConflictingTargets,
                ),
                (E::HostTargetCount(2), S::HostTargetCount),
                (E::ZeroAlignment, S::ZeroAlignment),
                (E::ArchiveBundling, S::ArchiveBundling),
                (E::MachOObject, S::MachOObject),
                (E::CoffObject, S::CoffObject),
                (E::MalformedObject(core), S::ZeroOffset),
                (E::MalformedTextBundle(core), S::ZeroOffset),
                (
                    E::MalformedBundle {
                        error: core,
                        place: Place::At(8),
                    },
                    S::ZeroOffset,
                ),
                (
                    E::Unreadable {
                        offset: 0,
                        what: None,
                        error: core,
                    },
                    S::ZeroOffset,
                ),
                (
                    E::Compressed {
                        offset: 0,
                        problem: CompressedProblem::Decode(core),
                    },
                    S::ZeroOffset,
                ),
                (
                    E::Compressed {
                        offset: 0,
                        problem: CompressedProblem::HashMismatch {
                            stored: 1,
                            computed: 2,
                        },
                    },
                    S::HashMismatch,
                ),
                (
                    E::Compressed {
                        offset: 0,
                        problem: CompressedProblem::NotBinaryBundle,
                    },
                    S::NotBinaryBundle,
                ),
                (
                    E::OffloadBinaryNotBundle { offset: 16 },
                    S::OffloadBinaryNotBundle,
                ),
                (E::InvalidBundleId, S::InvalidBundleId),
                (
                    E::InvalidCodeObjectId {
                        member: b"m.o".to_vec(),
                        id: b"hip-amdgcn".to_vec(),
                    },
                    S::InvalidBundleId,
                ),
                (E::MissingBundles(vec!["t".into()]), S::MissingBundles),
                (E::MissingHostBundle, S::MissingHostBundle),
                (E::NotAnArchive, S::NotAnArchive),
                (
                    E::NotAContainer(clangoffload::foreign::Foreign::Unknown { len: 0 }),
                    S::NotAContainer,
                ),
                (
                    E::Member {
                        name: b"m.o".to_vec(),
                        error: Box::new(E::MachOObject),
                    },
                    S::MachOObject,
                ),
                (
                    E::Member {
                        name: b"m.o".to_vec(),
                        error: Box::new(E::Input(core)),
                    },
                    S::ZeroOffset,
                ),
                (
                    E::ConflictingTargetIds {
                        member: b"m.o".to_vec(),
                        ids: ("a".into(), "b".into()),
                    },
                    S::ConflictingTargetIds,
                ),
                (
                    E::NoCompatibleCodeObject { target: "t".into() },
                    S::NoCompatibleCodeObject,
                ),
                (E::Input(core), S::ZeroOffset),
                (E::Writer(core), S::ZeroOffset),
            ];
            for (e, status) in cases {
                assert_eq!(status_of(&e), status, "{e:?}");
            }
        }

        fn reported(e: &BundlerError, input: &str) -> (clangoffload_status, clangoffload_error) {
            let mut out = core::mem::MaybeUninit::<clangoffload_error>::uninit();
            // SAFETY: a writable record.
            let status = unsafe { report_bundler(e, input, out.as_mut_ptr()) };
            // SAFETY: written by report_bundler.
            (status, unsafe { out.assume_init() })
        }

        fn text(out: &clangoffload_error) -> &str {
            // SAFETY: NUL-terminated (the last byte stays 0).
            unsafe { CStr::from_ptr(out.message.as_ptr()) }
                .to_str()
                .unwrap()
        }

        #[test]
        fn a_bundler_error_is_reported_with_the_core_errors_place() {
            let core = zero_offset_error();
            let e = E::Member {
                name: b"m.o".to_vec(),
                error: Box::new(E::MalformedObject(core)),
            };
            let (status, out) = reported(&e, "lib.a");
            assert_eq!(status, S::ZeroOffset);
            assert_eq!(out.status, S::ZeroOffset.code());
            assert_eq!((out.offset, out.entry), (core.offset(), 0));
            assert_eq!(text(&out), e.message("lib.a").to_string());
            assert!(text(&out).starts_with("'lib.a': member 'm.o': malformed object: "));
        }

        #[test]
        fn a_bundler_error_without_a_core_error_has_no_place() {
            let e = E::OffloadBinaryNotBundle { offset: 16 };
            let (status, out) = reported(&e, "f.o");
            assert_eq!(status, S::OffloadBinaryNotBundle);
            assert_eq!((out.offset, out.entry), (0, CLANGOFFLOAD_NO_ENTRY));
            assert_eq!(
                text(&out),
                "'f.o': an OffloadBinary at offset 0x10, not a bundle; see clangoffload packager"
            );
        }

        #[test]
        fn a_long_bundler_message_is_truncated_and_terminated() {
            let targets = (0..100)
                .map(|i| format!("hip-amdgcn-amd-amdhsa--gfx{i}"))
                .collect();
            let e = E::MissingBundles(targets);
            let (status, out) = reported(&e, "f.o");
            assert_eq!(status, S::MissingBundles);
            let full = e.message("f.o").to_string();
            assert_eq!(out.message.last(), Some(&0));
            assert_eq!(text(&out), &full[..out.message.len() - 1]);
        }

        #[test]
        fn no_record_is_written_through_null() {
            // SAFETY: NULL means "not wanted".
            let status =
                unsafe { report_bundler(&E::MissingHostBundle, "f.o", core::ptr::null_mut()) };
            assert_eq!(status, S::MissingHostBundle);
        }
    }
}
