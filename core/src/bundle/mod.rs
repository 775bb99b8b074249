//! clang-offload-bundler's binary bundle ("uncompressed bundle").
//!
//! ```text
//! 0   24 B  "__CLANG_OFFLOAD_BUNDLE__"
//! 24  u64   N, the number of entries
//! 32        N descriptors, back to back: u64 offset, u64 size, u64 id_len, id bytes
//! ...       payloads at their (absolute) offsets; gaps are zero
//! ```
//! All integers are little-endian. [`Bundle::parse`] checks every descriptor
//! before it returns; [`Bundle::parse_lenient`] checks only the magic so that a
//! loader can still take the good entries in front of a bad one.

use zerocopy::little_endian::U64;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64, Cursor};
use crate::{Error, ErrorKind, Field, Result};

#[cfg(feature = "alloc")]
mod validate;
#[cfg(feature = "alloc")]
mod writer;

#[cfg(feature = "alloc")]
pub use validate::BundleDiagnostic;
#[cfg(feature = "alloc")]
pub use writer::{write_bundle, BundleLayout};

/// The magic that starts every binary bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";

/// The fixed part of a bundle header.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BundleHeader {
    /// [`BUNDLE_MAGIC`].
    pub magic: [u8; 24],
    /// Number of entry descriptors that follow.
    pub entry_count: U64,
}
const _: () = assert!(core::mem::size_of::<BundleHeader>() == 32);

/// The fixed part of an entry descriptor; `id_len` bytes of ID follow it.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BundleEntryDescriptor {
    /// Absolute offset of the payload from the start of the bundle.
    pub offset: U64,
    /// Payload size in bytes.
    pub size: U64,
    /// Length of the entry ID that follows.
    pub id_len: U64,
}
const _: () = assert!(core::mem::size_of::<BundleEntryDescriptor>() == 24);

const HEADER_SIZE: u64 = 32;
const DESCRIPTOR_SIZE: u64 = 24;

/// A binary bundle: a checked header over a borrowed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bundle<'data> {
    data: &'data [u8],
    /// The bundle's length: `data`'s, or more for a bundle of which only the
    /// first bytes are at hand ([`Bundle::parse_table`]).
    len: u64,
    entry_count: u64,
    /// End of the descriptor table, known once every descriptor has been read.
    header_end: Option<u64>,
}

/// One entry of a bundle: its ID and payload, both borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleEntry<'data> {
    index: u64,
    descriptor_offset: u64,
    id: &'data [u8],
    offset: u64,
    size: u64,
    payload: &'data [u8],
}

impl<'data> Bundle<'data> {
    /// Whether `data` starts with the bundle magic.
    pub fn is_bundle(data: &[u8]) -> bool {
        data.starts_with(BUNDLE_MAGIC)
    }

    /// Parses a bundle and checks every descriptor: the count must fit in the
    /// input, every ID and payload must lie inside it. Payload bytes are not read.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        Self::parse_table(data, to_u64(data.len()))
    }

    /// Parses a bundle of `len` bytes of which `table` holds the first ones,
    /// at least its header and entry table (what a compressed bundle's
    /// [`decompress_table`](crate::CompressedBundle::decompress_table)
    /// gives): every descriptor is checked as [`Bundle::parse`] checks it,
    /// against `len`. An entry's [`payload`](BundleEntry::payload) is empty
    /// unless `table` holds it whole; its offset and size are always known.
    pub fn parse_table(table: &'data [u8], len: u64) -> Result<Self> {
        let mut bundle = Self::parse_lenient(table)?;
        bundle.len = len.max(to_u64(table.len()));
        bundle.check_entry_count()?;
        let mut entries = bundle.entries();
        for entry in &mut entries {
            entry?;
        }
        bundle.header_end = Some(entries.cursor.offset());
        Ok(bundle)
    }

    /// Parses only the magic and the entry count. Descriptors are checked as
    /// [`Bundle::entries`] reaches them, so the good entries in front of a bad
    /// one can still be used.
    pub fn parse_lenient(data: &'data [u8]) -> Result<Self> {
        let mut cursor = Cursor::at(data, 0);
        let Some(header) = cursor.read::<BundleHeader>() else {
            return Err(if Self::is_bundle(data) {
                let available = data.len().saturating_sub(24);
                Error::truncated(Field::EntryCount, 8, to_u64(available), 24)
            } else if BUNDLE_MAGIC.starts_with(data) && !data.is_empty() {
                Error::truncated(Field::BundleMagic, 24, to_u64(data.len()), 0)
            } else {
                Error::new(ErrorKind::BadMagic, 0)
            });
        };
        if &header.magic != BUNDLE_MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 0));
        }
        Ok(Bundle {
            data,
            len: to_u64(data.len()),
            entry_count: header.entry_count.get(),
            header_end: None,
        })
    }

    /// Checks that the entry count can fit in the input: each descriptor
    /// takes at least 24 bytes. [`Bundle::parse`] starts with this check.
    pub fn check_entry_count(&self) -> Result<()> {
        let max = self.len.saturating_sub(HEADER_SIZE) / DESCRIPTOR_SIZE;
        if self.entry_count > max {
            return Err(Error::new(
                ErrorKind::CountTooLarge {
                    count: self.entry_count,
                    max,
                },
                24,
            ));
        }
        Ok(())
    }

    /// The whole input buffer the bundle was parsed from.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The bundle's size: [`data`](Self::data)'s length, or the length
    /// [`Bundle::parse_table`] was given.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// The entry count stored in the header (checked only by [`Bundle::parse`]).
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// The size of the header (magic, count and descriptors), if every
    /// descriptor was checked by [`Bundle::parse`].
    pub fn header_len(&self) -> Option<u64> {
        self.header_end
    }

    /// Parses the bundle at the start of `data`, cut at its
    /// [`extent`](Self::extent): where a container after it may start.
    pub(crate) fn parse_to_extent(data: &'data [u8]) -> Result<Self> {
        let end = Self::parse(data)?.extent();
        Self::parse(data.get(..end).unwrap_or(data))
    }

    /// Where the bundle ends: past its header and its furthest payload. Only
    /// meaningful after [`Bundle::parse`] checked every descriptor.
    pub fn extent(&self) -> usize {
        let header = self.header_end.unwrap_or(HEADER_SIZE);
        let end = self
            .entries()
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.offset().saturating_add(entry.size()))
            .fold(header, u64::max);
        usize::try_from(end).unwrap_or(usize::MAX)
    }

    /// The entries in file order. Each descriptor is read when it is reached;
    /// after an error the iterator ends.
    pub fn entries(&self) -> BundleEntryIter<'data> {
        self.entries_from(EntryPosition::START)
    }

    /// The entries from `position` on, as [`BundleEntryIter::position`] gave
    /// it: a walk resumed in constant time by a caller that keeps no iterator
    /// (the C ABI's cursor). A position from elsewhere reads descriptors at
    /// the wrong place, each still checked against the buffer.
    pub fn entries_from(&self, position: EntryPosition) -> BundleEntryIter<'data> {
        let offset = position.descriptor_offset.max(HEADER_SIZE);
        BundleEntryIter {
            data: self.data,
            len: self.len,
            cursor: Cursor::at(self.data, usize::try_from(offset).unwrap_or(usize::MAX)),
            next_index: position.index,
            entry_count: self.entry_count,
        }
    }
}

/// Follows a bundle's header and entry table as its first bytes arrive, to
/// tell when there are enough of them for [`Bundle::parse_table`]: the
/// header and every descriptor with its ID, or the place where the parser
/// will stop with an error (a bad magic, a count or an ID that cannot fit
/// in the bundle's `len` bytes). Each call goes on from where the last one
/// stopped, so a table arriving in many pieces is read once.
#[cfg(feature = "alloc")]
#[derive(Debug, Default)]
pub(crate) struct TableScan {
    /// Where the next descriptor starts, once the header was read.
    at: u64,
    /// Descriptors still to come, once the header was read.
    left: Option<u64>,
}

#[cfg(feature = "alloc")]
impl TableScan {
    /// Whether `prefix`, the first bytes of a bundle of `len` bytes, is
    /// enough.
    pub(crate) fn done(&mut self, prefix: &[u8], len: u64) -> bool {
        let have = to_u64(prefix.len());
        let left = match self.left {
            Some(left) => left,
            None => {
                let Some(header) = prefix.get(..32) else {
                    return have >= len;
                };
                let count = le_u64(header, 24);
                if !Bundle::is_bundle(header)
                    || count > len.saturating_sub(HEADER_SIZE) / DESCRIPTOR_SIZE
                {
                    return true;
                }
                self.at = HEADER_SIZE;
                count
            }
        };
        let mut left = left;
        while left > 0 {
            let id_len_at = self.at.saturating_add(16);
            let Some(id_len) = usize::try_from(id_len_at)
                .ok()
                .and_then(|at| prefix.get(at..at.checked_add(8)?))
                .map(|bytes| le_u64(bytes, 0))
            else {
                self.left = Some(left);
                return have >= len;
            };
            let end = self
                .at
                .saturating_add(DESCRIPTOR_SIZE)
                .saturating_add(id_len);
            if end > len {
                return true;
            }
            if end > have {
                self.left = Some(left);
                return false;
            }
            self.at = end;
            left = left.saturating_sub(1);
        }
        self.left = Some(0);
        true
    }
}

/// The little-endian u64 at `at` in `bytes` (0 past the end).
#[cfg(feature = "alloc")]
fn le_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| u64::from_le_bytes(*b))
}

impl<'data> BundleEntry<'data> {
    /// Position of the entry in the file's descriptor table.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The entry ID exactly as stored (bytes: IDs in files need not be UTF-8).
    pub fn id(&self) -> &'data [u8] {
        self.id
    }

    /// The entry ID if it is UTF-8.
    pub fn id_str(&self) -> Option<&'data str> {
        core::str::from_utf8(self.id).ok()
    }

    /// Absolute offset of the payload in the bundle.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Payload size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The payload, borrowed from the input (empty when the entry lies past
    /// the first bytes of a bundle parsed with [`Bundle::parse_table`]).
    pub fn payload(&self) -> &'data [u8] {
        self.payload
    }

    /// Offset of this entry's descriptor in the header.
    pub fn descriptor_offset(&self) -> u64 {
        self.descriptor_offset
    }
}

/// Where a walk over a bundle's entries stands: the index and descriptor
/// offset of the next entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryPosition {
    /// Index of the next entry.
    pub index: u64,
    /// Offset of its descriptor (0 is read as the first descriptor's).
    pub descriptor_offset: u64,
}

impl EntryPosition {
    /// Before the first entry.
    pub const START: EntryPosition = EntryPosition {
        index: 0,
        descriptor_offset: HEADER_SIZE,
    };
}

/// Iterator over a bundle's entries in file order; see [`Bundle::entries`].
#[derive(Debug, Clone)]
pub struct BundleEntryIter<'data> {
    data: &'data [u8],
    len: u64,
    cursor: Cursor<'data>,
    next_index: u64,
    entry_count: u64,
}

impl<'data> BundleEntryIter<'data> {
    /// Where the walk stands, to resume it with [`Bundle::entries_from`].
    pub fn position(&self) -> EntryPosition {
        EntryPosition {
            index: self.next_index,
            descriptor_offset: self.cursor.offset(),
        }
    }

    fn read_entry(&mut self, index: u64) -> Result<BundleEntry<'data>> {
        let descriptor_offset = self.cursor.offset();
        let at = |kind, offset| Error::new(kind, offset).in_entry(index);
        let Some(descriptor) = self.cursor.read::<BundleEntryDescriptor>() else {
            let left = self.cursor.remaining();
            let (field, field_start) = match left {
                0..=7 => (Field::EntryOffset, 0),
                8..=15 => (Field::EntrySize, 8),
                _ => (Field::IdLength, 16),
            };
            let available = to_u64(left.saturating_sub(field_start));
            let field_at = descriptor_offset.saturating_add(to_u64(field_start));
            return Err(Error::truncated(field, 8, available, field_at).in_entry(index));
        };
        let (offset, size, id_len) = (
            descriptor.offset.get(),
            descriptor.size.get(),
            descriptor.id_len.get(),
        );
        let id_offset = self.cursor.offset();
        let Some(id) = self.cursor.read_bytes(id_len) else {
            let available = to_u64(self.cursor.remaining());
            return Err(at(
                ErrorKind::IdOutOfBounds {
                    len: id_len,
                    available,
                },
                id_offset.saturating_sub(8),
            ));
        };
        if id.is_empty() {
            return Err(at(ErrorKind::EmptyId, id_offset.saturating_sub(8)));
        }
        if offset == 0 {
            return Err(at(ErrorKind::ZeroOffset, descriptor_offset));
        }
        if offset.checked_add(size).is_none() {
            return Err(at(
                ErrorKind::PayloadOverflow { offset, size },
                descriptor_offset,
            ));
        }
        let len = self.len;
        if offset.saturating_add(size) > len {
            return Err(at(
                ErrorKind::PayloadOutOfBounds { offset, size, len },
                descriptor_offset,
            ));
        }
        // Beyond the bytes at hand only for a bundle parsed from its table.
        let payload = range(self.data, offset, size).unwrap_or_default();
        Ok(BundleEntry {
            index,
            descriptor_offset,
            id,
            offset,
            size,
            payload,
        })
    }
}

impl<'data> Iterator for BundleEntryIter<'data> {
    type Item = Result<BundleEntry<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next_index >= self.entry_count {
            return None;
        }
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        let entry = self.read_entry(index);
        if entry.is_err() {
            self.cursor.finish();
            self.next_index = self.entry_count;
        }
        Some(entry)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn bundle() -> Vec<u8> {
        write_bundle(
            &[
                (b"host-x86_64-unknown-linux-gnu-", b""),
                (b"hipv4-amdgcn-amd-amdhsa--gfx906", &[7u8; 5000]),
                (b"hipv4-amdgcn-amd-amdhsa--gfx90a", &[9u8; 3000]),
            ],
            4096,
        )
        .unwrap()
    }

    /// Where a scan fed `data` `step` bytes at a time says it has enough.
    fn enough_at(data: &[u8], len: u64, step: usize) -> usize {
        let mut scan = TableScan::default();
        let mut have = 0;
        loop {
            have = data.len().min(have + step);
            if scan.done(&data[..have], len) || have == data.len() {
                return have;
            }
        }
    }

    #[test]
    fn a_table_scan_stops_at_the_end_of_the_table_however_the_bytes_arrive() {
        let data = bundle();
        let table_end = Bundle::parse(&data).unwrap().header_len().unwrap() as usize;
        for step in [1, 7, 24, 32, 100] {
            let at = enough_at(&data, data.len() as u64, step);
            assert!(
                at >= table_end && at < table_end + step,
                "step {step}: {at}"
            );
            let table = Bundle::parse_table(&data[..at], data.len() as u64).unwrap();
            assert_eq!(table.entries().count(), 3);
            assert!(table.entries().all(|e| e.is_ok()));
        }
    }

    #[test]
    fn a_table_scan_stops_where_the_parser_will_fail() {
        // Not a bundle: 32 bytes tell.
        assert_eq!(enough_at(&[0x55; 4096], 4096, 1), 32);
        // A count that cannot fit, an ID longer than the bundle: the header,
        // or that descriptor's length field, tells.
        let mut huge_count = bundle();
        huge_count[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(enough_at(&huge_count, huge_count.len() as u64, 1), 32);
        let mut huge_id = bundle();
        huge_id[48..56].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(enough_at(&huge_id, huge_id.len() as u64, 1), 56);
        assert!(Bundle::parse_table(&huge_id[..56], huge_id.len() as u64).is_err());
        // A bundle shorter than its header: the whole of it.
        assert_eq!(enough_at(&huge_id[..20], 20, 1), 20);
    }

    #[test]
    fn a_payload_past_the_table_has_no_bytes_but_its_place() {
        let data = bundle();
        let table_end = Bundle::parse(&data).unwrap().header_len().unwrap() as usize;
        let table = Bundle::parse_table(&data[..table_end], data.len() as u64).unwrap();
        let entry = table.entries().nth(1).unwrap().unwrap();
        assert_eq!((entry.offset(), entry.size()), (4096, 5000));
        assert!(entry.payload().is_empty());
        assert_eq!(table.size(), data.len() as u64);
        // Past the bundle's length it is still an error.
        assert!(Bundle::parse_table(&data[..table_end], 8000).is_err());
    }
}
