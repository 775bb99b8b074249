//! Finding every bundle, compressed bundle and OffloadBinary anywhere in a
//! buffer: an in-memory image, a core dump, a file of unknown format.
//!
//! The buffer is read once, in blocks small enough to stay in cache; each
//! block is searched for the three magics with `memchr::memmem` finders, so
//! the bytes come from memory once however many magics are looked for. Every
//! place a magic occurs is parsed: a container that parses is reported with
//! its offset, one that does not is reported as rejected with the error (the
//! magic strings also occur in programs that look for containers, such as the
//! HIP runtime). The inside of a compressed bundle is skipped, since its
//! compressed bytes can contain a magic by chance; payloads of bundles and
//! OffloadBinaries are searched too, because they can hold containers. A
//! container found inside another owns no bytes past the end of the one
//! holding it, so a damaged compressed bundle nested in an image cannot hide
//! the containers that follow the image: scan finds every container that
//! [`Containers`](crate::container::Containers) walks to.

use memchr::memmem::Finder;

use crate::bundle::BUNDLE_MAGIC;
use crate::bytes::to_u64;
use crate::compressed::COMPRESSED_MAGIC;
use crate::container::{parse_container, Container};
use crate::offload_binary::OFFLOAD_BINARY_MAGIC;
use crate::Error;

/// Bytes searched at a time: small enough for the L2 cache, so the three
/// searches over a block read it from memory once.
const BLOCK: usize = 128 * 1024;

/// Every magic is shorter than this; blocks overlap by it so that a magic
/// across a block boundary is found.
const OVERLAP: usize = BUNDLE_MAGIC.len() - 1;

/// What [`scan`] found at one place where a magic occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found<'data> {
    /// A container that parses, at this offset of the buffer.
    Container(u64, Container<'data>),
    /// A magic at this offset that starts no valid container, and why.
    Rejected(u64, Error),
}

/// Iterator over the containers in a buffer, in offset order.
pub struct Scan<'data> {
    data: &'data [u8],
    finders: [Finder<'static>; 3],
    /// Start of the block being searched.
    block: usize,
    /// Hits in the current block not yet reported, as offsets into `data`,
    /// sorted; the first `pending_len` are valid.
    pending: [usize; 63],
    pending_len: usize,
    pending_next: usize,
    /// Where the search within the current block resumes (past the hits
    /// already taken, when a block has more than fit in `pending`).
    resume: usize,
    /// Offsets below this are inside a compressed bundle already reported.
    skip_until: usize,
    /// End of the last container found outside every other one: the most a
    /// container found inside it can cover.
    outer_end: usize,
    /// Just past the last hit reported (where a resumed scan searches from).
    after: usize,
}

/// Where a scan stands between two hits: all it needs to go on later, from a
/// caller that keeps no [`Scan`] (the C ABI's cursor). The default starts at
/// offset 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCursor {
    /// Where the search resumes.
    pub offset: u64,
    /// Offsets below this are inside a compressed bundle already reported.
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
    let start = at(cursor.offset).min(data.len());
    Scan {
        data,
        finders: [
            Finder::new(BUNDLE_MAGIC),
            Finder::new(COMPRESSED_MAGIC),
            Finder::new(OFFLOAD_BINARY_MAGIC),
        ],
        block: start,
        pending: [0; 63],
        pending_len: 0,
        pending_next: 0,
        resume: start,
        skip_until: at(cursor.skip_until),
        outer_end: at(cursor.outer_end),
        after: start,
    }
}

impl core::fmt::Debug for Scan<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scan")
            .field("len", &self.data.len())
            .field("block", &self.block)
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

    /// Only the containers that parse.
    pub fn containers(self) -> impl Iterator<Item = (u64, Container<'data>)> {
        self.filter_map(|found| match found {
            Found::Container(offset, container) => Some((offset, container)),
            Found::Rejected(..) => None,
        })
    }

    /// Fills `pending` with the next hits at or after `resume` in the current
    /// block, moving to later blocks while a block has none. Returns false at
    /// the end of the buffer.
    fn refill(&mut self) -> bool {
        // Each magic gets an equal share of `pending`. If one fills its share,
        // the hits are complete only up to its last one: keep those, and
        // search the block again after it.
        const SHARE: usize = 21;
        loop {
            if self.block >= self.data.len() {
                return false;
            }
            let end = self
                .block
                .saturating_add(BLOCK)
                .saturating_add(OVERLAP)
                .min(self.data.len());
            // Hits must start inside the block proper; the overlap only lets
            // a magic that starts there be seen whole.
            let limit = self.block.saturating_add(BLOCK).min(self.data.len());
            let start = self.resume.max(self.block);
            let window = self.data.get(start..end).unwrap_or_default();
            self.pending_len = 0;
            self.pending_next = 0;
            let mut complete_until = limit;
            for finder in &self.finders {
                for (taken, hit) in finder.find_iter(window).enumerate() {
                    let at = start.saturating_add(hit);
                    if at >= limit {
                        break;
                    }
                    if taken == SHARE {
                        complete_until = complete_until.min(at);
                        break;
                    }
                    if let Some(slot) = self.pending.get_mut(self.pending_len) {
                        *slot = at;
                        self.pending_len = self.pending_len.saturating_add(1);
                    }
                }
            }
            let hits = self.pending.get_mut(..self.pending_len).unwrap_or_default();
            hits.sort_unstable();
            self.pending_len = hits.partition_point(|&at| at < complete_until);
            if complete_until < limit {
                self.resume = complete_until;
            } else {
                self.block = limit;
                self.resume = limit;
            }
            if self.pending_len != 0 {
                return true;
            }
        }
    }
}

impl<'data> Iterator for Scan<'data> {
    type Item = Found<'data>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.pending_next >= self.pending_len && !self.refill() {
                self.after = self.data.len();
                return None;
            }
            let at = self.pending.get(self.pending_next).copied()?;
            self.pending_next = self.pending_next.saturating_add(1);
            if at < self.skip_until {
                continue;
            }
            self.after = at.saturating_add(1);
            let rest = self.data.get(at..).unwrap_or_default();
            let offset = to_u64(at);
            let found = match parse_container(rest) {
                Ok(container) => {
                    let end = at.saturating_add(container.data().len());
                    if at >= self.outer_end {
                        self.outer_end = end;
                    }
                    if let Container::Compressed(_) = container {
                        self.skip_until = end.min(self.outer_end);
                    }
                    Found::Container(offset, container)
                }
                Err(error) => Found::Rejected(offset, error.shifted(offset)),
            };
            return Some(found);
        }
    }
}
