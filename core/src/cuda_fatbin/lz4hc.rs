//! An LZ4 block compressor: the raw block format [`super::lz4`] decodes,
//! made as NVIDIA's `fatbinary` 13.5 makes it for entries flagged 0x2000
//! (`--compress-mode=speed`).
//!
//! `fatbinary`'s LZ4 blocks are byte for byte what the reference library's
//! high-compression mode gives at level 3 (`LZ4_compress_HC(src, dst, n,
//! bound, 3)`, lz4 1.9.4; checked against its output, and against
//! `lz4 -3`'s blocks, in the tests). That level is a hash-chain parser, and
//! this module is that parser, written again in safe Rust:
//!
//! - every position is hashed on its first 4 bytes (Knuth's multiplicative
//!   hash, 15 bits) into a table of the last position with that hash, and
//!   chained (a `u16` distance per position, 64 KiB of them) to the one
//!   before;
//! - at each position the chain is followed at most 4 times (level 3: 2^(3−1)
//!   attempts) within the 64 KiB window, for the longest match of at least 4
//!   bytes;
//! - a found match is not taken at once: the parser looks for a wider match
//!   starting inside it (near its end), and then a third, and shortens,
//!   drops or keeps them as LZ4 HC does ("_Search2"/"_Search3"), so that
//!   overlapping candidates become the cheapest sequence of matches;
//! - LZ4's end rules hold: the last match starts at least 12 bytes before
//!   the end and the last 5 bytes are literals.
//!
//! Positions are kept as in the C code, as indices that start at 64 KiB, so
//! that 0 in the hash table means "nothing yet" and the window test reads
//! the same. Inputs are limited to `LZ4_MAX_INPUT_SIZE` (0x7E00_0000 bytes),
//! as in the library, so that every position, length and sum of two of
//! them fits in a `u32` and in `usize`: the additions below cannot overflow,
//! and each subtraction takes a smaller value from a larger one (said where
//! it happens); slices are read through `get`, so a logic error could only
//! make a worse block, never a panic (and the `cuda_lz4` fuzz target checks
//! that every block decodes back to its input).

use alloc::vec::Vec;

use crate::bytes::{reserve, to_u64};
use crate::{Error, ErrorKind, Result};

/// The largest input the library compresses (`LZ4_MAX_INPUT_SIZE`).
pub(crate) const MAX_INPUT: usize = 0x7E00_0000;
const MIN_MATCH: usize = 4;
/// A match starts at least this far before the end (`MFLIMIT`).
const MF_LIMIT: usize = 12;
/// The last bytes are always literals (`LASTLITERALS`).
const LAST_LITERALS: usize = 5;
/// A match length that still fits the token's nibble (`OPTIMAL_ML`).
const OPTIMAL_ML: usize = 18;
/// The longest distance an offset can hold (`LZ4_DISTANCE_MAX`).
const MAX_DISTANCE: u32 = 65_535;
const HASH_LOG: u32 = 15;
/// Chain steps per search at level 3 (`1 << (level - 1)`).
const ATTEMPTS: u32 = 4;
/// The index of the input's first byte (the library's starting offset).
const FIRST_INDEX: u32 = 0x1_0000;

/// The most a block for `len` input bytes can take (`LZ4_compressBound`).
pub(crate) fn compress_bound(len: usize) -> usize {
    len.saturating_add(len / 255).saturating_add(16)
}

/// A match: where it starts in the input, where it copies from, how long.
#[derive(Clone, Copy)]
struct Match {
    start: usize,
    from: usize,
    len: usize,
}

/// The hash chains over one input.
struct Chains<'a> {
    src: &'a [u8],
    /// The index last seen with each hash (0: none).
    heads: Vec<u32>,
    /// Per index (mod 64 Ki), the distance to the previous one with its hash.
    links: Vec<u16>,
    /// The next position to insert.
    next: usize,
}

fn read32(src: &[u8], at: usize) -> Option<u32> {
    let bytes = src.get(at..at.wrapping_add(4))?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn read16(src: &[u8], at: usize) -> Option<[u8; 2]> {
    let bytes = src.get(at..at.wrapping_add(2))?;
    bytes.try_into().ok()
}

fn hash(word: u32) -> usize {
    usize::try_from(word.wrapping_mul(2_654_435_761) >> (32 - HASH_LOG)).unwrap_or(0)
}

/// The index of position `at` (below [`MAX_INPUT`], so it fits).
fn index(at: usize) -> u32 {
    u32::try_from(at).map_or(u32::MAX, |at| at.wrapping_add(FIRST_INDEX))
}

/// The position of an index at or above [`FIRST_INDEX`].
fn position(index: u32) -> usize {
    usize::try_from(index.wrapping_sub(FIRST_INDEX)).unwrap_or(usize::MAX)
}

/// How many bytes from `a` and `b` (`b` < `a`) agree before `limit`.
fn count(src: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let (Some(x), Some(y)) = (src.get(a..limit), src.get(b..)) else {
        return 0;
    };
    x.iter().zip(y).take_while(|(x, y)| x == y).count()
}

impl<'a> Chains<'a> {
    fn new(src: &'a [u8]) -> Result<Self> {
        let mut heads = Vec::new();
        heads
            .try_reserve_exact(1 << HASH_LOG)
            .map_err(|_| Error::new(ErrorKind::LayoutOverflow, 0))?;
        heads.resize(1 << HASH_LOG, 0);
        let mut links = Vec::new();
        links
            .try_reserve_exact(1 << 16)
            .map_err(|_| Error::new(ErrorKind::LayoutOverflow, 0))?;
        links.resize(1 << 16, u16::MAX);
        Ok(Chains {
            src,
            heads,
            links,
            next: 0,
        })
    }

    fn link(&self, index: u32) -> u32 {
        let slot = usize::try_from(index & 0xFFFF).unwrap_or(0);
        self.links
            .get(slot)
            .copied()
            .map_or(MAX_DISTANCE, u32::from)
    }

    /// Hashes every position before `at` not yet hashed (`LZ4HC_Insert`).
    fn insert(&mut self, at: usize) {
        while self.next < at {
            let here = index(self.next);
            let h = hash(read32(self.src, self.next).unwrap_or(0));
            if let Some(head) = self.heads.get_mut(h) {
                // The head is an earlier index or 0.
                let delta = here.wrapping_sub(*head).min(MAX_DISTANCE);
                let slot = usize::try_from(here & 0xFFFF).unwrap_or(0);
                if let Some(link) = self.links.get_mut(slot) {
                    *link = u16::try_from(delta).unwrap_or(u16::MAX);
                }
                *head = here;
            }
            self.next = self.next.wrapping_add(1);
        }
    }

    /// The longest match longer than `longest` for the bytes at `at`,
    /// extended backwards as far as `low` (`LZ4HC_InsertAndGetWiderMatch`
    /// without pattern analysis or chain swapping, which level 3 does not
    /// use). `None` when there is none.
    fn wider(&mut self, at: usize, low: usize, high: usize, mut longest: usize) -> Option<Match> {
        self.insert(at);
        let here = index(at);
        let lowest = if FIRST_INDEX.wrapping_add(MAX_DISTANCE + 1) > here {
            FIRST_INDEX
        } else {
            // here ≥ FIRST_INDEX + 64 Ki > MAX_DISTANCE.
            here.wrapping_sub(MAX_DISTANCE)
        };
        // low ≤ at, always.
        let look_back = at.wrapping_sub(low);
        let pattern = read32(self.src, at)?;
        let mut candidate = self.heads.get(hash(pattern)).copied().unwrap_or_default();
        let mut best = None;
        let mut attempts = ATTEMPTS;
        while candidate >= lowest && attempts > 0 {
            attempts = attempts.wrapping_sub(1);
            let from = position(candidate);
            // longest ≥ look_back + 1 in every call (its callers pass
            // (ml, ml − 2) or (ml, ml − 3) or (3, 0)), and only grows.
            let probe = from
                .wrapping_add(longest)
                .wrapping_sub(1)
                .wrapping_sub(look_back);
            let probe_at = low.wrapping_add(longest).wrapping_sub(1);
            if read16(self.src, probe_at).is_some()
                && read16(self.src, probe_at) == read16(self.src, probe)
                && read32(self.src, from) == Some(pattern)
            {
                let back = self.count_back(at, from, low);
                let len = MIN_MATCH
                    .wrapping_add(count(
                        self.src,
                        at.wrapping_add(MIN_MATCH),
                        from.wrapping_add(MIN_MATCH),
                        high,
                    ))
                    .wrapping_add(back);
                if len > longest {
                    longest = len;
                    // back ≤ from and back ≤ at − low (count_back).
                    best = Some(Match {
                        start: at.wrapping_sub(back),
                        from: from.wrapping_sub(back),
                        len,
                    });
                }
            }
            // candidate ≥ FIRST_INDEX > MAX_DISTANCE ≥ the link.
            candidate = candidate.wrapping_sub(self.link(candidate));
        }
        best
    }

    /// How many bytes before `at` and `from` agree, going no further back
    /// than `low` or the input's start (`LZ4HC_countBack`).
    fn count_back(&self, at: usize, from: usize, low: usize) -> usize {
        let most = at.wrapping_sub(low).min(from);
        let (Some(a), Some(b)) = (self.src.get(..at), self.src.get(..from)) else {
            return 0;
        };
        a.iter()
            .rev()
            .zip(b.iter().rev())
            .take(most)
            .take_while(|(x, y)| x == y)
            .count()
    }
}

/// Writes a length's continuation bytes after a nibble of 15.
fn push_length(out: &mut Vec<u8>, mut rest: usize) {
    while rest >= 255 {
        out.push(255);
        rest = rest.wrapping_sub(255);
    }
    out.push(u8::try_from(rest).unwrap_or(0));
}

/// The sequences written so far and the first byte not yet written.
struct Writer<'a> {
    src: &'a [u8],
    out: Vec<u8>,
    anchor: usize,
}

impl Writer<'_> {
    /// The literals from the anchor to `m.start`, then the match `m`
    /// (`LZ4HC_encodeSequence`); the anchor moves past the match.
    fn sequence(&mut self, start: usize, len: usize, from: usize) {
        // anchor ≤ start, and from < start.
        let literals = start.wrapping_sub(self.anchor);
        let extra = len.wrapping_sub(MIN_MATCH);
        let token = (u8::try_from(literals.min(15)).unwrap_or(15) << 4)
            | u8::try_from(extra.min(15)).unwrap_or(15);
        self.out.push(token);
        if literals >= 15 {
            push_length(&mut self.out, literals.wrapping_sub(15));
        }
        self.out
            .extend_from_slice(self.src.get(self.anchor..start).unwrap_or_default());
        let distance = u16::try_from(start.wrapping_sub(from)).unwrap_or(0);
        self.out.extend_from_slice(&distance.to_le_bytes());
        if extra >= 15 {
            push_length(&mut self.out, extra.wrapping_sub(15));
        }
        self.anchor = start.wrapping_add(len);
    }

    fn emit(&mut self, m: Match) {
        self.sequence(m.start, m.len, m.from);
    }

    /// The last literals (every byte from the anchor on).
    fn finish(mut self) -> Vec<u8> {
        let rest = self.src.get(self.anchor..).unwrap_or_default();
        self.out
            .push(u8::try_from(rest.len().min(15)).unwrap_or(15) << 4);
        if rest.len() >= 15 {
            push_length(&mut self.out, rest.len().wrapping_sub(15));
        }
        self.out.extend_from_slice(rest);
        self.out
    }
}

/// Moves `m` forward by `by` bytes (start and source), shortening it.
fn advance(m: &mut Match, by: usize) {
    m.start = m.start.wrapping_add(by);
    m.from = m.from.wrapping_add(by);
    m.len = m.len.wrapping_sub(by);
}

/// `src` as one LZ4 block, as `LZ4_compress_HC(…, 3)` makes it.
/// Inputs over 0x7E00_0000 bytes are refused (the library's limit).
pub(crate) fn compress(src: &[u8]) -> Result<Vec<u8>> {
    if src.len() > MAX_INPUT {
        return Err(Error::new(ErrorKind::LayoutOverflow, to_u64(src.len())));
    }
    let mut writer = Writer {
        src,
        out: reserve(to_u64(compress_bound(src.len())))?,
        anchor: 0,
    };
    // LZ4_minLength: shorter inputs are all literals.
    if src.len() > MF_LIMIT {
        parse(&mut Chains::new(src)?, &mut writer);
    }
    Ok(writer.finish())
}

/// The hash-chain parse (`LZ4HC_compress_hashChain`), every step as the
/// library takes it.
fn parse(chains: &mut Chains<'_>, w: &mut Writer<'_>) {
    let n = chains.src.len();
    // n > MF_LIMIT > LAST_LITERALS.
    let mf_limit = n.wrapping_sub(MF_LIMIT);
    let match_limit = n.wrapping_sub(LAST_LITERALS);
    let mut ip = 0;
    'main: while ip <= mf_limit {
        let Some(mut m1) = chains.wider(ip, ip, match_limit, MIN_MATCH - 1) else {
            ip = ip.wrapping_add(1);
            continue;
        };
        // Saved, in case we would skip too much.
        let mut m0 = m1;
        'search2: loop {
            let found2 = if m1.start.wrapping_add(m1.len) <= mf_limit {
                chains.wider(
                    m1.start.wrapping_add(m1.len).wrapping_sub(2),
                    m1.start,
                    match_limit,
                    m1.len,
                )
            } else {
                None
            };
            let Some(mut m2) = found2 else {
                w.emit(m1);
                ip = w.anchor;
                continue 'main;
            };
            if m0.start < m1.start && m2.start < m1.start.wrapping_add(m0.len) {
                // Squeezing the first match between the original one and
                // the second: restore the original.
                m1 = m0;
            }
            // Here m1.start ≤ m2.start.
            if m2.start.wrapping_sub(m1.start) < 3 {
                // The first match is too small: removed.
                m1 = m2;
                continue 'search2;
            }
            'search3: loop {
                if m2.start.wrapping_sub(m1.start) < OPTIMAL_ML {
                    let mut new_len = m1.len.min(OPTIMAL_ML);
                    // m2.len ≥ MIN_MATCH: every match is.
                    let m2_end = m2.start.wrapping_add(m2.len).wrapping_sub(MIN_MATCH);
                    if m1.start.wrapping_add(new_len) > m2_end {
                        new_len = m2_end.wrapping_sub(m1.start);
                    }
                    let gap = m2.start.wrapping_sub(m1.start);
                    if new_len > gap {
                        let overlap = new_len.wrapping_sub(gap);
                        advance(&mut m2, overlap);
                    }
                }
                // Now m2.start = m1.start + min(m1.len, OPTIMAL_ML).
                let found3 = if m2.start.wrapping_add(m2.len) <= mf_limit {
                    chains.wider(
                        m2.start.wrapping_add(m2.len).wrapping_sub(3),
                        m2.start,
                        match_limit,
                        m2.len,
                    )
                } else {
                    None
                };
                let Some(m3) = found3 else {
                    // No better match: two sequences to write.
                    if m2.start < m1.start.wrapping_add(m1.len) {
                        m1.len = m2.start.wrapping_sub(m1.start);
                    }
                    w.emit(m1);
                    w.emit(m2);
                    ip = w.anchor;
                    continue 'main;
                };
                let m1_end = m1.start.wrapping_add(m1.len);
                if m3.start < m1_end.wrapping_add(3) {
                    // Not enough room for the second match: remove it.
                    if m3.start >= m1_end {
                        // The first can be written at once; the third
                        // becomes the first.
                        if m2.start < m1_end {
                            let overlap = m1_end.wrapping_sub(m2.start);
                            advance(&mut m2, overlap);
                            if m2.len < MIN_MATCH {
                                m2 = m3;
                            }
                        }
                        w.emit(m1);
                        m1 = m3;
                        m0 = m2;
                        continue 'search2;
                    }
                    m2 = m3;
                    continue 'search3;
                }
                // Three ascending matches: write the first, as long as it
                // can be without swallowing the second.
                if m2.start < m1_end {
                    let gap = m2.start.wrapping_sub(m1.start);
                    if gap < OPTIMAL_ML {
                        m1.len = m1.len.min(OPTIMAL_ML);
                        let m2_end = m2.start.wrapping_add(m2.len).wrapping_sub(MIN_MATCH);
                        if m1.start.wrapping_add(m1.len) > m2_end {
                            m1.len = m2_end.wrapping_sub(m1.start);
                        }
                        if m1.len > gap {
                            let overlap = m1.len.wrapping_sub(gap);
                            advance(&mut m2, overlap);
                        }
                    } else {
                        m1.len = gap;
                    }
                }
                w.emit(m1);
                m1 = m2;
                m2 = m3;
                continue 'search3;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::prelude::rust_2021::*;
    use std::{format, vec};

    use super::*;
    use crate::compressed::decompress::Decoded;

    fn round_trip(src: &[u8]) -> Vec<u8> {
        let block = compress(src).unwrap();
        let mut out = vec![0; src.len()];
        assert!(matches!(
            crate::cuda_fatbin::lz4::decode(&block, &mut out),
            Ok(Decoded::Exact)
        ));
        assert_eq!(out, src);
        block
    }

    #[test]
    fn small_inputs_are_literals() {
        assert_eq!(round_trip(b""), [0]);
        assert_eq!(round_trip(b"abcabcabcabc"), b"\xC0abcabcabcabc");
    }

    #[test]
    fn round_trips() {
        let mut data = Vec::new();
        for i in 0u32..20_000 {
            data.extend_from_slice(format!("{} {} ", i % 97, i % 13).as_bytes());
            if i % 7 == 0 {
                data.push(u8::try_from(i % 251).unwrap());
            }
        }
        for len in [13, 14, 100, 1000, 70_000, data.len()] {
            round_trip(&data[..len]);
        }
        round_trip(&vec![7u8; 100_000]);
        // Pseudo-random bytes: nothing to match.
        let mut x = 1u32;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect();
        round_trip(&noise);
    }

    /// The block `lz4 -3` puts in a frame for `path` (one block of up to 4
    /// MiB), when the lz4 tool is installed.
    fn lz4_tool_block(path: &std::path::Path) -> Option<Vec<u8>> {
        let out = std::process::Command::new("lz4")
            .args(["-3", "-B7", "--no-frame-crc", "-c"])
            .arg(path)
            .output()
            .ok()?;
        let frame = out.stdout;
        let flags = *frame.get(4)?;
        let at = if flags & 8 != 0 { 15 } else { 7 };
        let size = u32::from_le_bytes(frame.get(at..at + 4)?.try_into().ok()?);
        if size & 0x8000_0000 != 0 {
            return None; // stored uncompressed
        }
        Some(frame.get(at + 4..at + 4 + size as usize)?.to_vec())
    }

    #[test]
    fn same_blocks_as_lz4_level_3() {
        if std::process::Command::new("lz4")
            .arg("--version")
            .output()
            .is_err()
        {
            std::eprintln!("skipped: no lz4 tool on PATH");
            return;
        }
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for dir in [
            "tests/fixtures/cuda",
            "tests/fixtures/cuda/inputs",
            "core/src",
            "docs",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                files.push(entry.unwrap().path());
            }
        }
        let mut compared = 0;
        for path in files {
            let Ok(data) = std::fs::read(&path) else {
                continue;
            };
            if data.len() < 13 || data.len() > 4 << 20 {
                continue;
            }
            let Some(expected) = lz4_tool_block(&path) else {
                continue;
            };
            assert!(compress(&data).unwrap() == expected, "{}", path.display());
            compared += 1;
        }
        assert!(compared > 20, "{compared}");
    }
}
