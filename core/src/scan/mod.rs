//! Finding every bundle, compressed bundle, OffloadBinary and NVIDIA CUDA
//! fat binary anywhere in a buffer: an in-memory image, a core dump, a file
//! of unknown format.
//!
//! The buffer is read once: one pass looks for the four magics together
//! (`search`), so the bytes come from memory once and are compared once
//! however many magics are looked for. Every place a magic occurs is parsed
//! (overlapping ones too: a bundle magic's last `__` may start another): a
//! container that parses is reported with its offset, one that does not is
//! reported as rejected with the error (the magic strings also occur in
//! programs that look for containers, such as the HIP runtime). The inside of
//! a compressed bundle is skipped, since its compressed bytes can contain a
//! magic by chance; payloads of bundles and OffloadBinaries are searched too,
//! because they can hold containers (an OffloadBinary's image may be a fat
//! binary). A container found inside another owns no bytes past the end of
//! the one holding it, so a damaged compressed bundle nested in an image
//! cannot hide the containers that follow the image: scan finds every
//! container that [`Containers`](crate::container::Containers) walks to.
//!
//! A fat binary ([`Found::CudaFatbin`]) is checked by [`Fatbin::parse`] (its
//! header and every entry header) and cut to its extent; fat binaries back to
//! back, as in a linked `.nv_fatbin`, each start with the magic and are each
//! reported. Inside one, scan skips the bytes from its magic to the end of
//! its last compressed (LZ4 or zstd) entry, as it skips a compressed
//! bundle's, and searches what follows: stored entries after the last
//! compressed one, as an OffloadBinary's images are searched. Stored entries
//! before a compressed one are skipped with it, for a reason of state: the
//! scan's whole state between two hits is three offsets (the C ABI's
//! `clangoffload_scan_cursor`, fixed by its ABI snapshot), which can say
//! "nothing before this offset" but not "these ranges and not those". Little
//! is lost: a stored entry is device code (an ELF cubin, PTX text, LTO-IR),
//! in which no toolchain puts a container, and a fat binary whose entries
//! are all stored is searched whole.

mod search;

use crate::bytes::to_u64;
use crate::container::{parse_container, Container};
use crate::cuda_fatbin::{Compression, Fatbin};
use crate::Error;

/// What [`scan`] found at one place where a magic occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found<'data> {
    /// A container that parses, at this offset of the buffer.
    Container(u64, Container<'data>),
    /// An NVIDIA CUDA fat binary that parses, at this offset of the buffer
    /// (cut to its extent: its header and its entries).
    CudaFatbin(u64, Fatbin<'data>),
    /// A magic at this offset that starts no valid container, and why.
    Rejected(u64, Error),
}

/// Iterator over the containers in a buffer, in offset order.
pub struct Scan<'data> {
    data: &'data [u8],
    /// Offsets below this are inside a compressed bundle, or the compressed
    /// part of a fat binary, already reported.
    skip_until: usize,
    /// End of the last container found outside every other one: the most a
    /// container found inside it can cover.
    outer_end: usize,
    /// Just past the last hit reported: where the search goes on.
    after: usize,
}

/// Where a scan stands between two hits: all it needs to go on later, from a
/// caller that keeps no [`Scan`] (the C ABI's cursor). The default starts at
/// offset 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCursor {
    /// Where the search resumes.
    pub offset: u64,
    /// Offsets below this are inside a compressed bundle, or the compressed
    /// part of a fat binary, already reported.
    pub skip_until: u64,
    /// End of the last container found outside every other one.
    pub outer_end: u64,
}

/// Finds every container in `data`.
pub fn scan(data: &[u8]) -> Scan<'_> {
    scan_from(data, ScanCursor::default())
}

/// Goes on with a scan of `data` where `cursor` (from [`Scan::cursor`]) left
/// it: the hits are those the whole scan reports after that point.
pub fn scan_from(data: &[u8], cursor: ScanCursor) -> Scan<'_> {
    let at = |offset: u64| usize::try_from(offset).unwrap_or(usize::MAX);
    Scan {
        data,
        skip_until: at(cursor.skip_until),
        outer_end: at(cursor.outer_end),
        after: at(cursor.offset).min(data.len()),
    }
}

impl core::fmt::Debug for Scan<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scan")
            .field("len", &self.data.len())
            .field("after", &self.after)
            .finish()
    }
}

impl<'data> Scan<'data> {
    /// Where the scan stands: past the last hit it reported, or at the end of
    /// the buffer once it has reported all.
    pub fn cursor(&self) -> ScanCursor {
        ScanCursor {
            offset: to_u64(self.after),
            skip_until: to_u64(self.skip_until),
            outer_end: to_u64(self.outer_end),
        }
    }

    /// Only the containers that parse (bundles, compressed bundles,
    /// OffloadBinaries: fat binaries are not among them).
    pub fn containers(self) -> impl Iterator<Item = (u64, Container<'data>)> {
        self.filter_map(|found| match found {
            Found::Container(offset, container) => Some((offset, container)),
            Found::CudaFatbin(..) | Found::Rejected(..) => None,
        })
    }

    /// Notes a valid hit at `at`, `len` bytes long, of which the first
    /// `skip` are not to be searched.
    fn found(&mut self, at: usize, len: usize, skip: usize) {
        let end = at.saturating_add(len);
        if at >= self.outer_end {
            self.outer_end = end;
        }
        if skip != 0 {
            self.skip_until = at.saturating_add(skip).min(self.outer_end);
        }
    }
}

impl<'data> Iterator for Scan<'data> {
    type Item = Found<'data>;

    fn next(&mut self) -> Option<Self::Item> {
        // Hits inside a compressed bundle already reported are not looked for.
        let from = self.after.max(self.skip_until);
        let Some(at) = self
            .data
            .get(from..)
            .and_then(search::find_magic)
            .map(|hit| from.saturating_add(hit))
        else {
            self.after = self.data.len();
            return None;
        };
        self.after = at.saturating_add(1);
        let rest = self.data.get(at..).unwrap_or_default();
        let offset = to_u64(at);
        let found = if Fatbin::is_fatbin(rest) {
            match Fatbin::parse(rest) {
                Ok(fatbin) => {
                    self.found(at, fatbin.data().len(), compressed_part(&fatbin));
                    Found::CudaFatbin(offset, fatbin)
                }
                Err(error) => Found::Rejected(offset, error.shifted(offset)),
            }
        } else {
            match parse_container(rest) {
                Ok(container) => {
                    let len = container.data().len();
                    let skip = match container {
                        Container::Compressed(_) => len,
                        Container::Bundle(_) | Container::OffloadBinary(_) => 0,
                    };
                    self.found(at, len, skip);
                    Found::Container(offset, container)
                }
                Err(error) => Found::Rejected(offset, error.shifted(offset)),
            }
        };
        Some(found)
    }
}

/// How many bytes of `fatbin`, from its start, run to the end of its last
/// compressed entry (0 with none): what scan does not search.
fn compressed_part(fatbin: &Fatbin<'_>) -> usize {
    fatbin
        .entries()
        .filter(|entry| entry.compression() != Compression::None)
        .map(|entry| {
            let len = entry
                .header_bytes()
                .len()
                .saturating_add(entry.payload().len());
            usize::try_from(entry.offset())
                .unwrap_or(usize::MAX)
                .saturating_add(len)
        })
        .max()
        .unwrap_or(0)
}
