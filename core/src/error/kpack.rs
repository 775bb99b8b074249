//! What can be wrong with a kpack archive or with a host to split, and the
//! short names they carry; re-exported by `kpack`.

use core::fmt;

/// The most zstd frames the runtime's reader accepts in one archive.
pub const MAX_FRAMES: u64 = 1 << 20;

/// What is wrong with a kpack archive's table of contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KpackFault {
    /// The MessagePack ends inside a value.
    Truncated,
    /// Byte 0xc1, which MessagePack never uses.
    ReservedByte,
    /// Maps and arrays nest deeper than any archive does.
    TooDeep,
    /// A value is not of the type the runtime reads.
    WrongType {
        /// What the value is (a key's name).
        what: &'static str,
        /// The type it must have.
        expected: &'static str,
    },
    /// A value the runtime needs is absent.
    Missing {
        /// Its key.
        what: &'static str,
    },
    /// `compression_scheme` is neither `none` nor `zstd-per-kernel`.
    UnknownScheme,
    /// An entry's ordinal names no stored code object.
    OrdinalOutOfRange {
        /// The ordinal.
        ordinal: u64,
        /// How many there are.
        count: u64,
    },
    /// The zstd blob counts more frames than the runtime accepts
    /// ([`MAX_FRAMES`]) or than its size can hold.
    TooManyFrames {
        /// The count it states.
        count: u64,
    },
    /// A binary key given twice for one architecture (to the writer).
    DuplicateEntry,
}

impl fmt::Display for KpackFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KpackFault::Truncated => f.write_str("the MessagePack ends inside a value"),
            KpackFault::ReservedByte => f.write_str("byte 0xc1, which MessagePack never uses"),
            KpackFault::TooDeep => f.write_str("maps and arrays nest too deep"),
            KpackFault::WrongType { what, expected } => write!(f, "{what} is not {expected}"),
            KpackFault::Missing { what } => write!(f, "no {what}"),
            KpackFault::UnknownScheme => {
                f.write_str("compression_scheme is neither \"none\" nor \"zstd-per-kernel\"")
            }
            KpackFault::OrdinalOutOfRange { ordinal, count } => write!(
                f,
                "ordinal {ordinal} names no code object (the archive stores {count})"
            ),
            KpackFault::DuplicateEntry => {
                f.write_str("a binary key is given twice for one architecture")
            }
            KpackFault::TooManyFrames { count } => write!(
                f,
                "the zstd blob counts {count} frames (at most {MAX_FRAMES}, and 4 bytes each)"
            ),
        }
    }
}

/// An architecture or entry ID inside an error (errors are `Copy`): up to
/// 46 bytes, longer ones cut and marked.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShortName {
    bytes: [u8; 46],
    len: u8,
    cut: bool,
}

impl ShortName {
    /// `name`, cut to 46 bytes if longer.
    pub fn new(name: &[u8]) -> ShortName {
        let mut bytes = [0u8; 46];
        let len = name.len().min(bytes.len());
        if let (Some(to), Some(from)) = (bytes.get_mut(..len), name.get(..len)) {
            to.copy_from_slice(from);
        }
        ShortName {
            bytes,
            len: u8::try_from(len).unwrap_or(0),
            cut: name.len() > len,
        }
    }

    /// The bytes kept.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl fmt::Debug for ShortName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

impl fmt::Display for ShortName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.as_bytes().utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        if self.cut {
            f.write_str("...")?;
        }
        Ok(())
    }
}

/// Why a host cannot be split (the error's offset is the field at fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplitFault {
    /// Not a file kpack's split handles.
    Unsupported {
        /// What it must be.
        expected: &'static str,
    },
    /// A section the split needs is absent.
    MissingSection {
        /// Its name.
        name: &'static str,
    },
    /// The host is split already (a marker section, `.hip_fatbin` without
    /// bytes, or a `HIPK` record).
    AlreadySplit,
    /// `.hipFatBinSegment`'s size is no multiple of 24.
    RecordSize {
        /// The section's size.
        size: u64,
    },
    /// A record's magic is not `HIPF`.
    RecordMagic {
        /// The record.
        record: u64,
        /// Its magic.
        magic: u32,
    },
    /// Records and `.hip_fatbin`'s bundles are not as many.
    RecordCount {
        /// Records.
        records: u64,
        /// Bundles.
        bundles: u64,
    },
    /// Record k does not point at bundle k (rocm-kpack assumes it does).
    RecordTarget {
        /// The record.
        record: u64,
        /// Where it points.
        address: u64,
        /// Where bundle k is.
        bundle: u64,
    },
    /// A record's pointer in a position-independent file has no relocation
    /// (rocm-kpack would leave it 0).
    NoRelocation {
        /// The record.
        record: u64,
    },
    /// A relocation other than the records' still points into
    /// `.hip_fatbin` (rocm-kpack refuses it too).
    StaleRelocation {
        /// Where it applies.
        address: u64,
        /// Where it points.
        target: u64,
    },
    /// An address the split writes at is in no segment.
    Unmapped {
        /// The address.
        address: u64,
    },
    /// `.hip_fatbin`'s bytes hold something other than bundles.
    NotBundle,
    /// rocm-kpack's key for a code object (its per-architecture counter)
    /// is not the record index the runtime looks it up by.
    KeyConflict {
        /// The record whose bundle holds the code object.
        record: u64,
        /// Its architecture.
        arch: ShortName,
        /// rocm-kpack's counter for it.
        counter: u64,
        /// How many code objects differ so in this host.
        conflicts: u64,
    },
    /// The program header table has room for the marker's segment where
    /// it is (rocm-kpack fails on such a file; so does this).
    PhdrRoom,
}

impl fmt::Display for SplitFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SplitFault::Unsupported { expected } => write!(f, "the host is not {expected}"),
            SplitFault::MissingSection { name } => write!(f, "the host has no {name} section"),
            SplitFault::AlreadySplit => f.write_str(
                "the host is split already (.rocm_kpack_ref, .hip_fatbin without bytes or a \
                 HIPK record)",
            ),
            SplitFault::RecordSize { size } => write!(
                f,
                ".hipFatBinSegment's size {size} is no multiple of a record's 24 bytes"
            ),
            SplitFault::RecordMagic { record, magic } => {
                write!(f, "record {record}'s magic {magic:#010x} is not HIPF")
            }
            SplitFault::RecordCount { records, bundles } => write!(
                f,
                "{records} records but {bundles} bundles in .hip_fatbin (kpack needs one \
                 bundle per record, in order)"
            ),
            SplitFault::RecordTarget {
                record,
                address,
                bundle,
            } => write!(
                f,
                "record {record} points at {address:#x}, not at bundle {record} ({bundle:#x}); \
                 the runtime asks for #{record} with that record"
            ),
            SplitFault::NoRelocation { record } => write!(
                f,
                "record {record}'s pointer has no relocation to fill it in this \
                 position-independent file (rocm-kpack would leave it 0)"
            ),
            SplitFault::StaleRelocation { address, target } => write!(
                f,
                "the relocation at {address:#x} still points into .hip_fatbin ({target:#x})"
            ),
            SplitFault::Unmapped { address } => {
                write!(f, "address {address:#x} lies in no segment")
            }
            SplitFault::NotBundle => {
                f.write_str(".hip_fatbin holds something other than offload bundles")
            }
            SplitFault::KeyConflict {
                record,
                arch,
                counter,
                conflicts,
            } => write!(
                f,
                "record {record}'s {arch} code object: rocm-kpack keys it #{counter}, the runtime \
                 looks up #{record} (units hold different architectures; {conflicts} such)"
            ),
            SplitFault::PhdrRoom => f.write_str(
                "the program header table has room for another header in place \
                 (rocm-kpack fails on such a file)",
            ),
        }
    }
}
