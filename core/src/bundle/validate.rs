//! Things a well-formed bundle should not contain but that are not errors in
//! the layout: LLVM accepts them silently, we report them.

use alloc::vec::Vec;

use super::{Bundle, BundleEntry};
use crate::bytes::to_u64;

/// A questionable but readable feature of a bundle, found by [`Bundle::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BundleDiagnostic {
    /// Two entries have the same ID. Our readers take the first one; LLVM's
    /// bundler takes the last.
    DuplicateId {
        /// Index of the first entry with the ID.
        first: u64,
        /// Index of the later entry with the same ID.
        second: u64,
    },
    /// Two non-empty payloads share bytes.
    OverlappingPayloads {
        /// The entry whose payload starts first.
        first: u64,
        /// The entry whose payload starts inside the first one's.
        second: u64,
    },
    /// A payload starts inside the header (magic, count or descriptors).
    PayloadOverlapsHeader {
        /// The entry.
        entry: u64,
        /// Where the header ends.
        header_len: u64,
    },
    /// Bytes follow the end of the last payload (and of the header).
    TrailingBytes {
        /// Where the bundle's own bytes end.
        offset: u64,
        /// How many bytes follow.
        len: u64,
    },
}

impl<'data> Bundle<'data> {
    /// Reports duplicate IDs, overlapping payloads, payloads inside the header
    /// and trailing bytes. Reads descriptors only; the lenient walk is used, so
    /// this works on the good prefix of a damaged bundle too.
    pub fn validate(&self) -> Vec<BundleDiagnostic> {
        let mut entries: Vec<BundleEntry<'data>> = self.entries().map_while(|e| e.ok()).collect();
        let header_len = entries.last().map_or(32, |e| {
            e.descriptor_offset()
                .saturating_add(24)
                .saturating_add(to_u64(e.id().len()))
        });
        let extent = entries
            .iter()
            .map(|e| e.offset().saturating_add(e.size()))
            .fold(header_len, u64::max);
        let mut found = Vec::new();

        for entry in &entries {
            if entry.offset() < header_len {
                found.push(BundleDiagnostic::PayloadOverlapsHeader {
                    entry: entry.index(),
                    header_len,
                });
            }
        }

        entries.sort_by(|a, b| a.id().cmp(b.id()).then(a.index().cmp(&b.index())));
        for pair in entries.windows(2) {
            if let [a, b] = pair {
                if a.id() == b.id() {
                    found.push(BundleDiagnostic::DuplicateId {
                        first: a.index(),
                        second: b.index(),
                    });
                }
            }
        }

        // Sorted by start, a payload overlaps an earlier one exactly when it
        // starts before the furthest end seen so far.
        entries.retain(|e| e.size() > 0);
        entries.sort_by_key(|e| (e.offset(), e.index()));
        let mut furthest: Option<(u64, u64)> = None; // (end, index)
        for e in &entries {
            let end = e.offset().saturating_add(e.size());
            if let Some((far_end, far_index)) = furthest {
                if e.offset() < far_end {
                    found.push(BundleDiagnostic::OverlappingPayloads {
                        first: far_index,
                        second: e.index(),
                    });
                }
                if end > far_end {
                    furthest = Some((end, e.index()));
                }
            } else {
                furthest = Some((end, e.index()));
            }
        }

        let len = self.size();
        if len > extent {
            found.push(BundleDiagnostic::TrailingBytes {
                offset: extent,
                len: len.saturating_sub(extent),
            });
        }
        found
    }
}
