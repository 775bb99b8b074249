//! Errors as data: what went wrong, where in the input, and for which entry.

use core::fmt;

mod bitcode;
mod display;
mod kpack;
mod stream;
mod unsupported;

pub use bitcode::{BitcodeFault, MAX_ABBREVS};
pub use kpack::{KpackFault, ShortName, SplitFault, MAX_FRAMES};
pub use stream::{CompressionMethod, StreamFault};
pub use unsupported::{CoffUnsupported, ElfUnsupported};

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
    /// The 4-byte compressed-bundle magic.
    CompressedMagic,
    /// A compressed bundle's header version.
    Version,
    /// A compressed bundle's compression method.
    Method,
    /// A compressed bundle's total size.
    TotalSize,
    /// A compressed bundle's uncompressed size.
    UncompressedSize,
    /// A compressed bundle's truncated MD5 hash.
    Hash,
    /// The compressed bytes that the total size promises.
    CompressedData,
    /// The 8-byte archive magic.
    ArchiveMagic,
    /// A 60-byte archive member header.
    MemberHeader,
    /// An archive member's size.
    MemberSize,
    /// A BSD archive member's name length (`#1/NN`).
    NameLength,
    /// A GNU archive member's offset into the long-name table (`/NN`).
    LongNameOffset,
    /// An archive symbol table's count or size field.
    SymbolCount,
    /// An archive symbol table's string table.
    SymbolNames,
    /// An ELF file header.
    ElfHeader,
    /// An OffloadBinary header.
    OffloadBinaryHeader,
    /// An OffloadBinary entry.
    OffloadEntry,
    /// The fields of a bitcode wrapper header that LLVM reads (16 bytes).
    BitcodeWrapper,
    /// The 4-byte bitcode magic.
    BitcodeMagic,
    /// The header of a bitcode file's symbol table (irsymtab).
    IrSymtabHeader,
    /// A PE image's DOS header (`MZ`, with `e_lfanew` at 0x3c).
    DosHeader,
    /// A COFF file header.
    CoffHeader,
    /// A COFF optional header (PE32 or PE32+).
    OptionalHeader,
    /// A COFF section name field (`/<decimal>` or `//<base64>`).
    SectionName,
    /// The byte of padding after an odd-sized archive member.
    MemberPadding,
    /// A CUDA fat binary's 16-byte header.
    FatbinHeader,
    /// A CUDA fat binary entry's 64-byte header.
    FatbinEntryHeader,
    /// The bytes a fat binary entry's header size promises.
    FatbinEntryExtension,
    /// A fat binary entry's payload (its payload size).
    FatbinPayload,
    /// A fat binary entry's identifier.
    FatbinIdentifier,
    /// A fat binary entry's options record or its options.
    FatbinOptions,
    /// The member table of a `--concat` fat binary entry.
    ConcatMembers,
    /// A `--concat` member's range in its entry's decoded bytes.
    ConcatMember,
    /// What a cubin's ELF headers place: file header, header tables,
    /// sections that hold file bytes, segments.
    ElfImage,
    /// A kpack archive's 64-byte header.
    KpackHeader,
    /// A kpack archive's table of contents (its offset to the end).
    KpackToc,
    /// A code object stored in a kpack archive (`blobs[ordinal]`).
    KpackBlob,
    /// A kpack archive's zstd blob: a frame count, then sized frames.
    KpackFrames,
    /// One zstd frame of a kpack archive's blob.
    KpackFrame,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::BundleMagic => "bundle magic",
            Field::EntryCount => "entry count",
            Field::EntryOffset => "entry offset",
            Field::EntrySize => "entry size",
            Field::IdLength => "entry ID length",
            Field::CompressedMagic => "compressed bundle magic",
            Field::Version => "compressed bundle version",
            Field::Method => "compression method",
            Field::TotalSize => "total size",
            Field::UncompressedSize => "uncompressed size",
            Field::Hash => "hash",
            Field::CompressedData => "compressed data",
            Field::ArchiveMagic => "archive magic",
            Field::MemberHeader => "archive member header",
            Field::MemberSize => "member size",
            Field::NameLength => "member name length",
            Field::LongNameOffset => "long name offset",
            Field::SymbolCount => "symbol count",
            Field::SymbolNames => "symbol names",
            Field::ElfHeader => "ELF header",
            Field::OffloadBinaryHeader => "OffloadBinary header",
            Field::OffloadEntry => "OffloadBinary entry",
            Field::BitcodeWrapper => "bitcode wrapper header",
            Field::BitcodeMagic => "bitcode magic",
            Field::IrSymtabHeader => "bitcode symbol table header",
            Field::DosHeader => "DOS header",
            Field::CoffHeader => "COFF file header",
            Field::OptionalHeader => "COFF optional header",
            Field::SectionName => "COFF section name offset",
            Field::MemberPadding => "archive member padding",
            Field::FatbinHeader => "fat binary header",
            Field::FatbinEntryHeader => "fat binary entry header",
            Field::FatbinEntryExtension => "fat binary entry header extension",
            Field::FatbinPayload => "fat binary entry payload",
            Field::FatbinIdentifier => "fat binary entry identifier",
            Field::FatbinOptions => "fat binary entry options",
            Field::ConcatMembers => "concat member table",
            Field::ConcatMember => "concat member",
            Field::ElfImage => "ELF image (what its headers place)",
            Field::KpackHeader => "kpack header",
            Field::KpackToc => "kpack table of contents",
            Field::KpackBlob => "kpack code object",
            Field::KpackFrames => "kpack zstd blob",
            Field::KpackFrame => "kpack zstd frame",
        }
    }
}

/// What is wrong with an input, with the values that make it wrong.
///
/// Not `#[non_exhaustive]`: a new kind is a breaking change on purpose, so
/// that exhaustive matches on it (the C API's statuses) stop compiling until
/// they give it a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// A compressed bundle's header version is not 1, 2 or 3.
    UnsupportedVersion {
        /// The version in the header.
        version: u16,
    },
    /// A compressed bundle's method is neither zlib (0) nor zstd (1).
    UnknownMethod {
        /// The method in the header.
        method: u16,
    },
    /// The method is known but this build cannot use it (zstd decoding needs
    /// the `alloc` feature, zstd compression the `zstd` feature).
    MethodUnavailable {
        /// The method asked for.
        method: CompressionMethod,
    },
    /// A compressed bundle's total size is smaller than its own header.
    BadTotalSize {
        /// The total size in the header.
        total: u64,
        /// The size of the header.
        header_len: u64,
    },
    /// A size is larger than the limit the caller set.
    SizeLimitExceeded {
        /// The size asked for.
        size: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A compressed bundle is too large for the header version asked for.
    TooLargeForVersion {
        /// The size that does not fit.
        size: u64,
        /// The header version.
        version: u16,
    },
    /// The zstd frame records a content size other than the header's.
    ContentSizeMismatch {
        /// The uncompressed size in the bundle header.
        declared: u64,
        /// The content size in the zstd frame header.
        frame: u64,
    },
    /// The stream decompresses to more bytes than the header declares.
    DecompressedTooLarge {
        /// The uncompressed size in the header.
        declared: u64,
    },
    /// The stream decompresses to fewer bytes than the header declares.
    DecompressedTooSmall {
        /// The uncompressed size in the header.
        declared: u64,
        /// The bytes the stream produced.
        actual: u64,
    },
    /// The caller's output buffer cannot hold the decompressed bundle.
    OutputTooSmall {
        /// Bytes needed.
        needed: u64,
        /// Bytes given.
        available: u64,
    },
    /// The truncated MD5 of the decompressed bytes differs from the stored one.
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of what the stream decompressed to.
        computed: u64,
    },
    /// The compressed stream is damaged.
    CorruptStream {
        /// The method the header names.
        method: CompressionMethod,
        /// What is wrong with it.
        fault: StreamFault,
    },
    /// A compressed bundle decompresses to another compressed bundle.
    NestedCompressedBundle,
    /// Bytes in a sequence of containers that start no known container.
    UnknownContainer,
    /// The input does not start with the archive magic `!<arch>\n`.
    NotAnArchive,
    /// The input is a thin archive (`!<thin>\n`), whose members are files
    /// outside it.
    ThinArchive,
    /// An archive member header does not end with `` `\n ``.
    BadMemberTerminator,
    /// A decimal field of an archive member header holds something other
    /// than digits followed by spaces, or a number over 64 bits.
    BadDecimal {
        /// The field.
        field: Field,
    },
    /// An archive member's data runs past the end of the archive.
    MemberOutOfBounds {
        /// Offset of the data.
        offset: u64,
        /// Size in the header.
        size: u64,
        /// Length of the archive.
        len: u64,
    },
    /// A member name refers to the long-name table (`/NN`), but the archive
    /// has none.
    MissingLongNameTable {
        /// The offset referred to.
        offset: u64,
    },
    /// A long-name offset lies past the end of the long-name table.
    LongNameOutOfBounds {
        /// The offset referred to.
        offset: u64,
        /// Size of the table.
        len: u64,
    },
    /// A long name has no `/\n` after it in the long-name table.
    UnterminatedLongName {
        /// The offset referred to.
        offset: u64,
    },
    /// A BSD member name (`#1/NN`) is longer than the member.
    BsdNameOutOfBounds {
        /// The name length in the header.
        len: u64,
        /// The member's size.
        size: u64,
    },
    /// An archive symbol table's count cannot fit in the table.
    SymbolCountTooLarge {
        /// The count in the table.
        count: u64,
        /// The largest count the table could hold.
        max: u64,
    },
    /// A symbol name lies outside the symbol table's names or has no NUL.
    SymbolNameOutOfBounds,
    /// A member name to be written is empty or contains a line break.
    InvalidMemberName,
    /// A symbol name to be written contains a NUL byte.
    InvalidSymbolName,
    /// A text bundle's start marker has no end marker after it (or its line
    /// has no end). The offset is the start marker's.
    MissingEndMarker,
    /// A text bundle's end marker closes no entry.
    EndMarkerWithoutStart,
    /// A text bundle's start marker lies inside an entry that is still open.
    NestedStartMarker,
    /// A text bundle's end marker names another ID than the start marker.
    EndMarkerIdMismatch,
    /// A text bundle entry ID to be written contains a line break.
    NewlineInId,
    /// A payload to be written into a text bundle contains a marker line.
    MarkerInPayload,
    /// The input does not start with the ELF magic.
    NotElf,
    /// A valid ELF file of a kind this reader does not handle.
    UnsupportedElf {
        /// What is not handled.
        what: ElfUnsupported,
    },
    /// A valid COFF file of a kind this crate does not handle.
    UnsupportedCoff {
        /// What is not handled.
        what: CoffUnsupported,
    },
    /// A COFF symbol table lies outside the file.
    SymbolTableOutOfBounds {
        /// `PointerToSymbolTable`.
        offset: u64,
        /// `NumberOfSymbols`.
        count: u64,
        /// Length of the file.
        len: u64,
    },
    /// The string table after a COFF symbol table lies outside the file.
    SymbolNamesOutOfBounds {
        /// Where it starts.
        offset: u64,
        /// Its size (at least its 4-byte size field).
        size: u64,
        /// Length of the file.
        len: u64,
    },
    /// A COFF section's relocations lie outside the file.
    RelocationsOutOfBounds {
        /// `PointerToRelocations`.
        offset: u64,
        /// The number of relocations.
        count: u64,
        /// Length of the file.
        len: u64,
    },
    /// A symbol index (in a relocation or a weak external) names no symbol,
    /// or an auxiliary record.
    BadSymbolIndex {
        /// The index.
        index: u32,
        /// The number of symbol table records.
        count: u32,
    },
    /// The section header table lies outside the file.
    SectionTableOutOfBounds {
        /// `e_shoff`.
        offset: u64,
        /// The number of sections.
        count: u64,
        /// Length of the file.
        len: u64,
    },
    /// `e_shstrndx` names no section, or one without contents.
    BadNameTableIndex {
        /// The index.
        index: u32,
        /// The number of sections.
        count: u32,
    },
    /// The section name table is not a string table (`SHT_STRTAB`) that
    /// ends in a NUL, which LLVM's object reader requires.
    BadNameTable {
        /// Its section index.
        index: u32,
        /// Its `sh_type`.
        kind: u32,
    },
    /// A symbol table's string table is not what LLVM's object reader reads
    /// names from: a non-empty `SHT_STRTAB` that ends in a NUL.
    BadStringTable {
        /// Its section index.
        index: u32,
        /// Its `sh_type`.
        kind: u32,
        /// Its `sh_size`.
        size: u64,
    },
    /// A section index (in a header, a symbol or a group) names no section.
    BadSectionIndex {
        /// The index.
        index: u32,
        /// The number of sections.
        count: u32,
    },
    /// A name offset lies outside its string table or has no terminating NUL.
    BadSectionName {
        /// The offset into the string table.
        name: u32,
        /// Size of the string table.
        table_size: u64,
    },
    /// A section's contents lie outside the file.
    SectionOutOfBounds {
        /// `sh_offset`.
        offset: u64,
        /// `sh_size`.
        size: u64,
        /// Length of the file.
        len: u64,
    },
    /// A section name to be written contains a NUL byte.
    NulInSectionName,
    /// A section to be removed is still used by one that stays.
    SectionInUse {
        /// The section to be removed.
        index: u32,
        /// The section that refers to it.
        by: u32,
    },
    /// The input does not start with the OffloadBinary magic `10 FF 10 AD`.
    NotOffloadBinary,
    /// An OffloadBinary's version is not 1, 2 or 3.
    UnsupportedBinaryVersion {
        /// The version in the header.
        version: u32,
    },
    /// An OffloadBinary's size is smaller than its own header.
    BinarySizeTooSmall {
        /// The size in the header.
        size: u64,
        /// The size of the header.
        header_len: u64,
    },
    /// An OffloadBinary's size runs past the end of the input.
    BinaryOutOfBounds {
        /// The size in the header.
        size: u64,
        /// Length of the input.
        len: u64,
    },
    /// An OffloadBinary's entry table does not fit inside the binary.
    EntryTableOutOfBounds {
        /// Offset of the table.
        offset: u64,
        /// Number of 40-byte entries.
        count: u64,
        /// Size of the binary.
        size: u64,
    },
    /// A version 1 binary's entry size is larger than the binary after its
    /// 32-byte header (LLVM 22 refuses it; the field is otherwise unused).
    EntrySizeOutOfBounds {
        /// The entry size field.
        entry_size: u64,
        /// Size of the binary.
        size: u64,
    },
    /// An entry's image does not lie inside the binary (or its end overflows).
    ImageOutOfBounds {
        /// Offset of the image.
        offset: u64,
        /// Size of the image.
        size: u64,
        /// Size of the binary.
        binary_size: u64,
    },
    /// An entry's string entries do not fit inside the binary.
    StringTableOutOfBounds {
        /// Offset of the string entries.
        offset: u64,
        /// Number of string entries.
        count: u64,
        /// Size of the binary.
        size: u64,
    },
    /// A key or value does not lie inside the binary.
    StringOutOfBounds {
        /// Offset of the string.
        offset: u64,
        /// Its size (1 for a NUL-terminated string: at least its NUL).
        size: u64,
        /// Size of the binary.
        binary_size: u64,
    },
    /// A NUL-terminated key or value has no NUL before the end of the binary.
    UnterminatedString {
        /// Offset of the string.
        offset: u64,
    },
    /// Decompression was asked of an OffloadBinary or a fat binary entry
    /// that is not compressed.
    NotCompressed,
    /// A key (any version) or value (version 1) to be written contains a NUL.
    NulInString,
    /// The input starts with neither bitcode magic (`BC C0 DE`, or the
    /// wrapper's `DE C0 17 0B`), or the wrapper's bitstream does not start
    /// with `BC C0 DE`.
    NotBitcode,
    /// A bitcode file's bitstream or symbol table is damaged.
    MalformedBitcode {
        /// What is wrong with it.
        fault: BitcodeFault,
    },
    /// The input does not start with the CUDA fat binary magic `50 ED 55 BA`.
    NotFatbin,
    /// The input does not start with the kpack archive magic `KPAK`.
    NotKpack,
    /// A kpack archive's version is not 1.
    UnsupportedKpackVersion {
        /// The version in the header.
        version: u32,
    },
    /// A kpack archive's table of contents is not what rocm-kpack writes
    /// (the error's offset is the value at fault).
    MalformedKpack {
        /// What is wrong.
        fault: KpackFault,
    },
    /// A host kpack's split cannot take (or should not: where rocm-kpack
    /// would write a host the runtime misreads).
    KpackSplit {
        /// Why.
        fault: SplitFault,
    },
    /// A CUDA fat binary header or entry header states a size it cannot
    /// have (a container header other than 16 bytes, an entry header under
    /// 64).
    BadHeaderSize {
        /// The size in the header.
        size: u64,
        /// The size required (the container's) or the least allowed (an
        /// entry's).
        expected: u64,
    },
    /// A range a fat binary declares (its size, an entry's header or
    /// payload, an identifier, options, a `--concat` member) does not lie
    /// inside what holds it, or its end overflows.
    OutOfBounds {
        /// What the range is.
        field: Field,
        /// Where it starts (relative to what holds it).
        offset: u64,
        /// Its size.
        size: u64,
        /// The size of what holds it.
        len: u64,
    },
    /// A fat binary entry's compressed size is larger than its payload.
    CompressedSizeTooLarge {
        /// The compressed size.
        compressed: u64,
        /// The payload size.
        payload: u64,
    },
    /// A fat binary entry's LZ4 block is damaged.
    CorruptLz4 {
        /// What is wrong with it.
        fault: StreamFault,
    },
    /// A fat binary entry's flags name both LZ4 (0x2000) and zstd (0x8000).
    AmbiguousCompression {
        /// The entry's flags.
        flags: u64,
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

    /// The input ends inside `field`, which needs `needed` bytes where
    /// `available` are left, at `offset`: every [`ErrorKind::Truncated`] is
    /// made here.
    pub(crate) const fn truncated(field: Field, needed: u64, available: u64, offset: u64) -> Self {
        Error::new(
            ErrorKind::Truncated {
                field,
                needed,
                available,
            },
            offset,
        )
    }

    /// The `size` bytes of `field` at `start` do not lie inside the `len`
    /// bytes that hold it, reported at `offset`: every
    /// [`ErrorKind::OutOfBounds`] is made here.
    pub(crate) const fn out_of_bounds(
        field: Field,
        start: u64,
        size: u64,
        len: u64,
        offset: u64,
    ) -> Self {
        Error::new(
            ErrorKind::OutOfBounds {
                field,
                offset: start,
                size,
                len,
            },
            offset,
        )
    }

    pub(crate) const fn in_entry(mut self, entry: u64) -> Self {
        self.entry = Some(entry);
        self
    }

    /// The same error, for a container found `base` bytes into a larger buffer.
    pub const fn shifted(mut self, base: u64) -> Self {
        self.offset = self.offset.saturating_add(base);
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(entry) = self.entry {
            write!(f, "entry {entry}: ")?;
        }
        write!(f, "{} (at offset {:#x})", self.kind, self.offset)
    }
}

impl core::error::Error for Error {}
