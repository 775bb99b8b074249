//! How each [`ErrorKind`] reads.

use core::fmt;

use super::ErrorKind;

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
            ErrorKind::UnsupportedVersion { version } => {
                write!(f, "unsupported compressed bundle version {version}")
            }
            ErrorKind::UnknownMethod { method } => {
                write!(f, "unknown compression method {method}")
            }
            ErrorKind::MethodUnavailable { method } => {
                write!(f, "{method} is not available in this build")
            }
            ErrorKind::BadTotalSize { total, header_len } => write!(
                f,
                "total size {total} is smaller than the {header_len}-byte header"
            ),
            ErrorKind::SizeLimitExceeded { size, limit } => {
                write!(f, "size {size} exceeds the limit of {limit} bytes")
            }
            ErrorKind::TooLargeForVersion { size, version } => write!(
                f,
                "size {size} does not fit in a version {version} compressed bundle"
            ),
            ErrorKind::ContentSizeMismatch { declared, frame } => write!(
                f,
                "header declares {declared} uncompressed bytes, the zstd frame {frame}"
            ),
            ErrorKind::DecompressedTooLarge { declared } => write!(
                f,
                "stream decompresses to more than the declared {declared} bytes"
            ),
            ErrorKind::DecompressedTooSmall { declared, actual } => write!(
                f,
                "stream decompresses to {actual} bytes, not the declared {declared}"
            ),
            ErrorKind::OutputTooSmall { needed, available } => write!(
                f,
                "output buffer of {available} bytes cannot hold {needed} bytes"
            ),
            ErrorKind::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: stored {stored:#018x}, computed {computed:#018x}"
            ),
            ErrorKind::CorruptStream { method, fault } => {
                write!(f, "corrupt {method} stream: {fault}")
            }
            ErrorKind::NestedCompressedBundle => {
                f.write_str("compressed bundle contains another compressed bundle")
            }
            ErrorKind::UnknownContainer => f.write_str("no known container starts here"),
            ErrorKind::NotAnArchive => f.write_str("not an archive: missing !<arch> magic"),
            ErrorKind::ThinArchive => {
                f.write_str("thin archives (!<thin>) are not supported: their members are outside them")
            }
            ErrorKind::BadMemberTerminator => {
                f.write_str("archive member header does not end with `\\n`")
            }
            ErrorKind::BadDecimal { field } => {
                write!(f, "{} is not a decimal number", field.name())
            }
            ErrorKind::MemberOutOfBounds { offset, size, len } => write!(
                f,
                "member data [{offset:#x}, +{size:#x}) ends past the end of the archive ({len:#x} bytes)"
            ),
            ErrorKind::MissingLongNameTable { offset } => write!(
                f,
                "member name refers to offset {offset} of a long-name table (//) the archive does not have"
            ),
            ErrorKind::LongNameOutOfBounds { offset, len } => write!(
                f,
                "long name offset {offset} is past the end of the {len}-byte long-name table"
            ),
            ErrorKind::UnterminatedLongName { offset } => {
                write!(f, "long name at offset {offset} is not terminated by /\\n")
            }
            ErrorKind::BsdNameOutOfBounds { len, size } => write!(
                f,
                "member name length {len} is larger than the member ({size} bytes)"
            ),
            ErrorKind::SymbolCountTooLarge { count, max } => write!(
                f,
                "symbol count {count} cannot fit in the symbol table (at most {max})"
            ),
            ErrorKind::SymbolNameOutOfBounds => {
                f.write_str("symbol name lies outside the symbol table or is not NUL-terminated")
            }
            ErrorKind::InvalidMemberName => {
                f.write_str("member name is empty or contains a line break")
            }
            ErrorKind::InvalidSymbolName => f.write_str("symbol name contains a NUL byte"),
            ErrorKind::MissingEndMarker => {
                f.write_str("text bundle start marker without a matching end marker")
            }
            ErrorKind::EndMarkerWithoutStart => {
                f.write_str("text bundle end marker outside any entry")
            }
            ErrorKind::NestedStartMarker => {
                f.write_str("text bundle start marker inside an open entry")
            }
            ErrorKind::EndMarkerIdMismatch => {
                f.write_str("text bundle end marker names another entry ID than its start marker")
            }
            ErrorKind::NewlineInId => f.write_str("entry ID contains a line break"),
            ErrorKind::MarkerInPayload => {
                f.write_str("payload contains a text bundle marker line")
            }
            ErrorKind::NotElf => f.write_str("not an ELF file: missing magic"),
            ErrorKind::UnsupportedElf { what } => write!(f, "unsupported: {what}"),
            ErrorKind::UnsupportedCoff { what } => write!(f, "unsupported: {what}"),
            ErrorKind::SymbolTableOutOfBounds { offset, count, len } => write!(
                f,
                "symbol table of {count} records at {offset:#x} runs past the end of the file ({len:#x} bytes)"
            ),
            ErrorKind::SymbolNamesOutOfBounds { offset, size, len } => write!(
                f,
                "string table of {size:#x} bytes at {offset:#x} runs past the end of the file ({len:#x} bytes)"
            ),
            ErrorKind::RelocationsOutOfBounds { offset, count, len } => write!(
                f,
                "{count} relocations at {offset:#x} run past the end of the file ({len:#x} bytes)"
            ),
            ErrorKind::BadSymbolIndex { index, count } => write!(
                f,
                "symbol index {index} names no symbol ({count} symbol table records)"
            ),
            ErrorKind::SectionTableOutOfBounds { offset, count, len } => write!(
                f,
                "section header table of {count} entries at {offset:#x} runs past the end of the file ({len:#x} bytes)"
            ),
            ErrorKind::BadNameTableIndex { index, count } => write!(
                f,
                "section name table index {index} names no section with contents ({count} sections)"
            ),
            ErrorKind::BadNameTable { index, kind: 3 } => write!(
                f,
                "section name table [index {index}] is not NUL-terminated"
            ),
            ErrorKind::BadNameTable { index, kind } => write!(
                f,
                "section name table [index {index}] has type {kind:#x}, not SHT_STRTAB"
            ),
            // Type 3 is SHT_STRTAB: a table of that type is empty or unterminated.
            ErrorKind::BadStringTable {
                index,
                kind: 3,
                size: 0,
            } => write!(f, "string table [index {index}] is empty"),
            ErrorKind::BadStringTable { index, kind: 3, .. } => {
                write!(f, "string table [index {index}] is not NUL-terminated")
            }
            ErrorKind::BadStringTable { index, kind, .. } => write!(
                f,
                "string table [index {index}] has type {kind:#x}, not SHT_STRTAB"
            ),
            ErrorKind::BadSectionIndex { index, count } => {
                write!(f, "section index {index} out of range ({count} sections)")
            }
            ErrorKind::BadSectionName { name, table_size } => write!(
                f,
                "name offset {name:#x} lies outside the {table_size}-byte string table or is not NUL-terminated"
            ),
            ErrorKind::SectionOutOfBounds { offset, size, len } => write!(
                f,
                "section contents [{offset:#x}, +{size:#x}) run past the end of the file ({len:#x} bytes)"
            ),
            ErrorKind::NulInSectionName => f.write_str("section name contains a NUL byte"),
            ErrorKind::SectionInUse { index, by } => write!(
                f,
                "section {index} cannot be removed: section {by} refers to it"
            ),
            ErrorKind::NotOffloadBinary => {
                f.write_str("not an OffloadBinary: missing magic 10 FF 10 AD")
            }
            ErrorKind::UnsupportedBinaryVersion { version } => {
                write!(f, "unsupported OffloadBinary version {version}")
            }
            ErrorKind::BinarySizeTooSmall { size, header_len } => write!(
                f,
                "OffloadBinary size {size} is smaller than its {header_len}-byte header"
            ),
            ErrorKind::BinaryOutOfBounds { size, len } => write!(
                f,
                "OffloadBinary size {size} runs past the end of the input ({len} bytes)"
            ),
            ErrorKind::EntryTableOutOfBounds {
                offset,
                count,
                size,
            } => write!(
                f,
                "{count} entries at offset {offset} do not fit in the {size}-byte binary"
            ),
            ErrorKind::EntrySizeOutOfBounds { entry_size, size } => write!(
                f,
                "entry size {entry_size} is larger than the {size}-byte binary after its 32-byte header"
            ),
            ErrorKind::ImageOutOfBounds {
                offset,
                size,
                binary_size,
            } => write!(
                f,
                "image at offset {offset} with size {size} lies outside the {binary_size}-byte binary"
            ),
            ErrorKind::StringTableOutOfBounds {
                offset,
                count,
                size,
            } => write!(
                f,
                "{count} string entries at offset {offset} do not fit in the {size}-byte binary"
            ),
            ErrorKind::StringOutOfBounds {
                offset,
                size,
                binary_size,
            } => write!(
                f,
                "string at offset {offset} with size {size} lies outside the {binary_size}-byte binary"
            ),
            ErrorKind::UnterminatedString { offset } => write!(
                f,
                "string at offset {offset} has no NUL before the end of the binary"
            ),
            ErrorKind::NotCompressed => f.write_str("not compressed"),
            ErrorKind::NulInString => f.write_str(
                "a key (or a version 1 value) contains a NUL byte, which would end it",
            ),
            ErrorKind::NotBitcode => f.write_str("not LLVM bitcode: missing magic BC C0 DE"),
            ErrorKind::MalformedBitcode { fault } => write!(f, "malformed bitcode: {fault}"),
            ErrorKind::NotFatbin => {
                f.write_str("not a CUDA fat binary: missing magic 50 ED 55 BA")
            }
            ErrorKind::NotKpack => f.write_str("not a kpack archive: missing magic KPAK"),
            ErrorKind::UnsupportedKpackVersion { version } => {
                write!(f, "unsupported kpack archive version {version} (1 is known)")
            }
            ErrorKind::MalformedKpack { fault } => {
                write!(f, "malformed kpack table of contents: {fault}")
            }
            ErrorKind::KpackSplit { fault } => write!(f, "cannot split the host: {fault}"),
            ErrorKind::BadHeaderSize { size, expected } => write!(
                f,
                "header size {size} is not allowed (expected {expected})"
            ),
            ErrorKind::OutOfBounds {
                field,
                offset,
                size,
                len,
            } => write!(
                f,
                "{} [{offset:#x}, +{size:#x}) does not lie inside its {len:#x} bytes",
                field.name()
            ),
            ErrorKind::CompressedSizeTooLarge {
                compressed,
                payload,
            } => write!(
                f,
                "compressed size {compressed} is larger than the {payload}-byte payload"
            ),
            ErrorKind::CorruptLz4 { fault } => write!(f, "corrupt LZ4 block: {fault}"),
            ErrorKind::AmbiguousCompression { flags } => write!(
                f,
                "flags {flags:#x} name both LZ4 (0x2000) and zstd (0x8000) compression"
            ),
        }
    }
}
