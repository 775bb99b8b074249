//! Where the next magic starts: one pass over the bytes for all four.
//!
//! Each step looks at [`STEP`] positions at once. For each magic, two of its
//! bytes that seldom occur together at the same distance in other data are
//! compared at every position (the [`PAIRS`]); only a step where some pair
//! matches is looked at again, position by position, against the whole
//! magics. The comparisons are plain array code over a fixed window, which
//! the compiler turns into vector compares (SSE2 on x86-64, NEON on AArch64)
//! with no allocation and no `unsafe`.
//!
//! Two things safe Rust cannot say are in `cpu`, the core's second `unsafe`
//! module, each one call. A prefetch: the hardware prefetcher stops at every
//! 4 KiB page, so a search through memory that is not in cache stalls at each
//! page, and a hint [`AHEAD`] bytes ahead keeps the reads going. And, with
//! `std` on x86-64, the same safe code compiled a second time for AVX2 (32
//! positions a compare instead of 16), called when the CPU has it. On a
//! 256 MiB file in the page cache the prefetch takes about 30% off the
//! search's time and AVX2 a further 17% (benches/README.md); without `std`
//! the search stays SSE2, or whatever the build's target features allow.

use crate::bundle::BUNDLE_MAGIC;
use crate::compressed::COMPRESSED_MAGIC;
use crate::cuda_fatbin::FATBIN_MAGIC_BYTES;
use crate::offload_binary::OFFLOAD_BINARY_MAGIC;

/// Two bytes of a magic, at these distances from its start.
struct Pair {
    magic: &'static [u8],
    at: [usize; 2],
    bytes: [u8; 2],
}

impl Pair {
    /// The bytes of `magic` at `at`. Used only to make [`PAIRS`], so it runs
    /// when the crate is compiled: an index out of range stops the build.
    #[allow(clippy::indexing_slicing)]
    const fn new<const N: usize>(magic: &'static [u8; N], at: [usize; 2]) -> Pair {
        let [first, second] = at;
        assert!(first < second && second < N && second <= REACH);
        Pair {
            magic,
            at,
            bytes: [magic[first], magic[second]],
        }
    }
}

/// The pair searched for each magic: of all its pairs of bytes, about the
/// least often found together at their distance in `libLLVM.so.22.1` (150 MB
/// of code and data: 748 places for the bundle's `O` and `U`, 1907 for
/// `CCOB`'s `C` and `B`, 221 for the OffloadBinary's `10` and `AD`, which
/// share their two loads, and 396 for the CUDA fat binary's `50` and `BA`,
/// which share them too), so that machine code and random bytes seldom send
/// a step to the whole-magic check. The fat binary's rarest pair, `ED 55` at
/// 1 and 2 (82 places; `55 BA` 102, `ED BA` 294, `50 ED` 298, `50 55` 2957;
/// the whole magic is there once), needs two loads of its own: measured
/// about 15% slower over a block in cache than `50 BA` (benches/README.md),
/// while 396 steps sent to the check cost nothing measurable.
const PAIRS: [Pair; 4] = [
    Pair::new(BUNDLE_MAGIC, [8, 17]),
    Pair::new(COMPRESSED_MAGIC, [0, 3]),
    Pair::new(OFFLOAD_BINARY_MAGIC, [0, 3]),
    Pair::new(FATBIN_MAGIC_BYTES, [0, 3]),
];

/// Positions compared in one step: a cache line, that is four SSE2 or two
/// AVX2 compares for each byte of a pair.
const STEP: usize = 64;

/// The farthest a pair's byte is from the start of its magic (the bundle's
/// `U`).
const REACH: usize = 17;

/// The bytes one step reads: its positions and the pair bytes of the last.
const WINDOW: usize = STEP + REACH;

/// How far ahead of the step the prefetch asks for bytes: far enough for
/// memory to answer in time, measured (2 and 4 KiB do equally well).
const AHEAD: usize = 4096;

/// The offset in `data` where the first magic starts, if any does.
pub(super) fn find_magic(data: &[u8]) -> Option<usize> {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    if let Some(found) = cpu::search_avx2(data) {
        return found;
    }
    search(data)
}

/// [`find_magic`] for the target features it is compiled with (inlined
/// into `cpu`'s AVX2 copy too).
#[inline(always)]
fn search(data: &[u8]) -> Option<usize> {
    let mut pos = 0usize;
    loop {
        match step_with_pair(data, pos) {
            Ok(step) => {
                // `step` is at least WINDOW bytes before the end: no wrap.
                let next = step.wrapping_add(STEP);
                if let Some(at) = magic_in(data, step, next) {
                    return Some(at);
                }
                pos = next;
            }
            Err(tail) => return magic_in(data, tail, data.len()),
        }
    }
}

/// The first step from `pos` where a pair matches (`Ok`), or where the
/// whole steps end (`Err`). There is no call in this loop, so the compiler
/// keeps the pairs' bytes in vector registers all through it.
#[inline(always)]
fn step_with_pair(data: &[u8], mut pos: usize) -> Result<usize, usize> {
    while let Some(window) = data.get(pos..).and_then(<[u8]>::first_chunk::<WINDOW>) {
        // Both below the end of the buffer, so neither can wrap.
        if let Some(ahead) = data.get(pos.wrapping_add(AHEAD)) {
            cpu::prefetch(ahead);
        }
        if some_pair(window) {
            return Ok(pos);
        }
        pos = pos.wrapping_add(STEP);
    }
    Err(pos)
}

/// The first place in `from..to` where a whole magic starts.
#[inline(never)]
fn magic_in(data: &[u8], from: usize, to: usize) -> Option<usize> {
    (from..to).find(|&at| magic_at(data, at))
}

/// Whether a pair matches at any of the step's positions. One loop over the
/// positions with every pair inside it, so that the compiler keeps the
/// comparisons of a position together in vector registers and reduces once.
#[inline(always)]
fn some_pair(window: &[u8; WINDOW]) -> bool {
    let lanes = PAIRS
        .each_ref()
        .map(|pair| pair.at.map(|at| lanes(window, at)));
    let mut any = 0u8;
    for position in 0..STEP {
        for (pair, [first, second]) in PAIRS.iter().zip(&lanes) {
            let [a, b] = pair.bytes;
            any |= u8::from(first.get(position) == Some(&a))
                & u8::from(second.get(position) == Some(&b));
        }
    }
    any != 0
}

/// The `STEP` bytes from `offset` of the window (`offset` is at most
/// [`REACH`], so they are always there; the compiler sees that).
#[inline(always)]
fn lanes(window: &[u8; WINDOW], offset: usize) -> &[u8; STEP] {
    window
        .get(offset..)
        .and_then(<[u8]>::first_chunk)
        .unwrap_or(&[0; STEP])
}

/// Whether a whole magic starts at `at`.
fn magic_at(data: &[u8], at: usize) -> bool {
    let rest = data.get(at..).unwrap_or_default();
    PAIRS.iter().any(|pair| rest.starts_with(pair.magic))
}

/// What safe Rust cannot say: a prefetch, and that the CPU has AVX2. The
/// core's second `unsafe` module (the first is libzstd's stable output
/// buffer, compressed::zstd); two calls, each measured (benches/README.md).
#[allow(unsafe_code)]
mod cpu {
    /// Asks the CPU to bring the cache line holding `byte` into its caches.
    #[inline(always)]
    pub(super) fn prefetch(byte: &u8) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint: it cannot fault, and it changes
        // no memory the program sees. The address is that of a live byte.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(byte).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = byte;
    }

    /// The search compiled for AVX2, if this CPU has it (the answer is
    /// cached by `std` after the first call).
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    pub(super) fn search_avx2(data: &[u8]) -> Option<Option<usize>> {
        if !std::is_x86_feature_detected!("avx2") {
            return None;
        }
        // SAFETY: calling a function compiled for AVX2 needs only a CPU that
        // has AVX2, checked just above; its body is safe code.
        Some(unsafe { avx2(data) })
    }

    /// The safe search, compiled with AVX2.
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2(data: &[u8]) -> Option<usize> {
        super::search(data)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;

    /// Every place a magic starts, the slow way.
    fn every_magic(data: &[u8]) -> Vec<usize> {
        (0..data.len()).filter(|&at| magic_at(data, at)).collect()
    }

    /// Every place, by `find_magic` from just past the previous one; the
    /// same by `search` as compiled for the build's target (where
    /// `find_magic` may take the AVX2 copy).
    fn found(data: &[u8]) -> Vec<usize> {
        let every = |find: fn(&[u8]) -> Option<usize>| {
            let mut hits = Vec::new();
            let mut from = 0;
            while let Some(at) = find(&data[from..]) {
                hits.push(from + at);
                from += at + 1;
            }
            hits
        };
        let hits = every(find_magic);
        assert_eq!(hits, every(search));
        hits
    }

    #[test]
    fn pairs_are_the_magics_bytes() {
        assert_eq!(PAIRS[0].bytes, *b"OU");
        assert_eq!(PAIRS[1].bytes, *b"CB");
        assert_eq!(PAIRS[2].bytes, [0x10, 0xAD]);
        assert_eq!(PAIRS[3].bytes, [0x50, 0xBA]);
        assert_eq!(WINDOW, 64 + 17);
    }

    #[test]
    fn every_magic_at_every_place_around_a_step() {
        // Each magic at every offset across the first steps and the tail:
        // whole, cut by the end of the buffer, and with each byte wrong.
        for pair in &PAIRS {
            let magic = pair.magic;
            for len in [0, 1, 30, STEP, WINDOW - 1, WINDOW, WINDOW + 1, 3 * STEP + 5] {
                for at in 0..len + 1 {
                    let mut data = std::vec![0x5au8; len];
                    let end = (at + magic.len()).min(len);
                    data[at..end].copy_from_slice(&magic[..end - at]);
                    let want = if end - at == magic.len() {
                        std::vec![at]
                    } else {
                        Vec::new()
                    };
                    assert_eq!(found(&data), want, "{magic:?} at {at} of {len}");
                    for wrong in 0..end - at {
                        let mut bad = data.clone();
                        bad[at + wrong] ^= 0x80;
                        assert_eq!(found(&bad), [], "{magic:?} at {at} of {len}, {wrong} bad");
                    }
                }
            }
        }
    }

    #[test]
    fn dense_and_overlapping_magics() {
        // All four back to back, a bundle magic whose last "__" starts the
        // next one, and magics in consecutive steps.
        let mut data = Vec::new();
        for i in 0..200usize {
            data.extend_from_slice(&[b'x'; 7][..i % 7]);
            data.extend_from_slice(PAIRS[i % 4].magic);
        }
        data.extend_from_slice(b"__CLANG_OFFLOAD_BUNDLE__CLANG_OFFLOAD_BUNDLE__CCOB");
        data.extend_from_slice(b"\x10\xff\x10\xad\x10\xff\x10\xadCCOBCCOB");
        data.extend_from_slice(b"\x50\xed\x55\xba\x50\xed\x55\xbaCCOB\x50\xed\x55\xba");
        let hits = found(&data);
        assert_eq!(hits, every_magic(&data));
        assert_eq!(hits.len(), 200 + 3 + 4 + 4);
    }

    #[test]
    fn near_magics_are_not_magics() {
        // Every pair matches at nearly every step, no magic is whole.
        let mut data = Vec::new();
        for i in 0..3000usize {
            data.extend_from_slice(match i % 7 {
                0 => b"CCO".as_slice(),
                1 => b"\x10\xff\x10",
                2 => b"__CLANG_OFFLOAD_BUNDLE_",
                3 => b"C\x10\xffB\x10\x00\x00\xad",
                4 => b"\x50\xed\x55\xbb\x50\x00\x00\xba",
                5 => b"\x50\xed\x54\xba\x51\xed\x55\xba",
                _ => b"__CLANG_OFFLOAD_BUNDLE\x00__OFFLOAD_BUNDLE__",
            });
        }
        assert_eq!(found(&data), []);
        // And one real magic of each kind deep inside them.
        for pair in &PAIRS {
            let mut with = data.clone();
            let at = with.len() / 2 + 3;
            with[at..at + pair.magic.len()].copy_from_slice(pair.magic);
            assert_eq!(found(&with), every_magic(&with));
            assert!(found(&with).contains(&at));
        }
    }

    #[test]
    fn pseudo_random_bytes_with_planted_magics() {
        let mut data = std::vec![0u8; 1 << 20];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for byte in data.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = (state >> 32) as u8;
        }
        for (i, at) in (0..data.len() - 64).step_by(4099).enumerate() {
            let magic = PAIRS[i % 4].magic;
            data[at..at + magic.len()].copy_from_slice(magic);
        }
        assert_eq!(found(&data), every_magic(&data));
    }
}
