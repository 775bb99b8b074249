//! What a strict parse accepts but a careful reader wants to know: repeated
//! keys (LLVM's reader keeps the last), kinds and flags no LLVM defines, and
//! sizes the writer would never produce.

use alloc::vec::Vec;

use super::{ImageKind, OffloadBinary, OffloadKind, ALIGNMENT, FLAG_METADATA};

/// Keys longer than this are not compared for duplicates, so that checking a
/// crafted binary stays linear in its size; they are reported instead.
pub const MAX_COMPARED_KEY: usize = 256;

/// Something unusual about a binary that parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BinaryDiagnostic {
    /// Two strings of one entry have the same key (the later one's value is
    /// the key's, as LLVM reads them).
    DuplicateKey {
        /// The entry.
        entry: u64,
        /// The first string with the key.
        first: u64,
        /// A later string with the same key.
        second: u64,
    },
    /// A key longer than [`MAX_COMPARED_KEY`], left out of the duplicate check.
    LongKey {
        /// The entry.
        entry: u64,
        /// The string.
        string: u64,
    },
    /// An image kind LLVM does not define.
    UnknownImageKind {
        /// The entry.
        entry: u64,
        /// The stored value.
        raw: u16,
    },
    /// An offload kind LLVM does not define.
    UnknownOffloadKind {
        /// The entry.
        entry: u64,
        /// The stored value.
        raw: u16,
    },
    /// Flags LLVM does not define for this version.
    UnknownFlags {
        /// The entry.
        entry: u64,
        /// The stored flags.
        flags: u32,
    },
    /// The binary's size is not a multiple of 8, so a binary after it in a
    /// section would be misaligned.
    UnalignedSize {
        /// The size.
        size: u64,
    },
}

impl OffloadBinary<'_> {
    /// Everything unusual about this binary, in entry order.
    pub fn validate(&self) -> Vec<BinaryDiagnostic> {
        let mut found = Vec::new();
        if !self.size().is_multiple_of(ALIGNMENT) {
            found.push(BinaryDiagnostic::UnalignedSize { size: self.size() });
        }
        let known_flags = if self.version == 1 { 0 } else { FLAG_METADATA };
        for entry in self.entries() {
            let index = entry.index();
            if let ImageKind::Unknown(raw) = entry.image_kind() {
                found.push(BinaryDiagnostic::UnknownImageKind { entry: index, raw });
            }
            if let OffloadKind::Unknown(raw) = entry.offload_kind() {
                found.push(BinaryDiagnostic::UnknownOffloadKind { entry: index, raw });
            }
            if entry.flags() & !known_flags != 0 {
                found.push(BinaryDiagnostic::UnknownFlags {
                    entry: index,
                    flags: entry.flags(),
                });
            }
            let mut keys: Vec<(&[u8], u64)> = Vec::new();
            for (string, s) in (0u64..).zip(entry.strings()) {
                if s.key.len() > MAX_COMPARED_KEY {
                    found.push(BinaryDiagnostic::LongKey {
                        entry: index,
                        string,
                    });
                } else {
                    keys.push((s.key, string));
                }
            }
            keys.sort_unstable();
            for pair in keys.windows(2) {
                if let [(a, first), (b, second)] = pair {
                    if a == b {
                        found.push(BinaryDiagnostic::DuplicateKey {
                            entry: index,
                            first: *first,
                            second: *second,
                        });
                    }
                }
            }
        }
        found
    }
}
