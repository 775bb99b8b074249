//! Whole blocks of several messages side by side: the instruction set
//! chosen at run time, two interleaved chains of steps (`pair`), four SSE2
//! lanes (`sse2`) or AVX-512VL's four or eight (`avx512`).

use super::{scheduled, Hasher, LANES};

/// The instructions messages are hashed side by side with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Isa {
    /// What every processor of the target has: two messages as two
    /// interleaved scalar chains, more in SSE2's lanes on x86-64 (one
    /// after the other elsewhere).
    Baseline,
    /// AVX-512VL's lanes (with the proof that the processor has it).
    #[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
    Avx512(avx512::Present),
}

impl Isa {
    /// The fastest this processor has.
    pub(super) fn best() -> Isa {
        #[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
        if let Some(present) = avx512::Present::detect() {
            return Isa::Avx512(present);
        }
        Isa::Baseline
    }

    /// How many messages it hashes in one group.
    pub(super) fn width(self) -> usize {
        match self {
            #[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
            Isa::Avx512(_) => super::WIDEST,
            Isa::Baseline => LANES,
        }
    }

    /// Every one this processor has, for tests.
    #[cfg(test)]
    pub(super) fn all() -> alloc::vec::Vec<Isa> {
        let mut all = alloc::vec![Isa::Baseline];
        #[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
        all.extend(avx512::Present::detect().map(Isa::Avx512));
        all
    }
}

/// Hashes the first `blocks` blocks of each message of `group` (at most
/// `isa`'s width, each with no pending block) into its hasher.
pub(super) fn hash_blocks(isa: Isa, group: &mut [(&mut Hasher, &[u8])], blocks: usize) {
    match isa {
        #[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
        Isa::Avx512(present) => avx512::hash_blocks(present, group, blocks),
        Isa::Baseline => {
            if let [(first, a), (second, b)] = group {
                let mut words = [first.state.words(), second.state.words()];
                for (a, b) in a.chunks_exact(64).zip(b.chunks_exact(64)).take(blocks) {
                    pair::compress(&mut words, [a, b]);
                }
                let [one, other] = words;
                first.state.advanced(one, blocks);
                second.state.advanced(other, blocks);
                return;
            }
            in_lanes::<LANES, Baseline>(group, blocks);
        }
    }
}

/// One 64-byte block of each of `N` messages into its words.
trait Compress<const N: usize> {
    fn compress(words: &mut [[u32; 4]; N], blocks: [&[u8; 64]; N]);
}

/// [`hash_blocks`] in the `N` lanes of `C`: lanes without a message
/// hash zeros, into words nobody reads.
#[inline(always)]
fn in_lanes<const N: usize, C: Compress<N>>(group: &mut [(&mut Hasher, &[u8])], blocks: usize) {
    let mut words = [[0u32; 4]; N];
    for (lane, (hasher, _)) in words.iter_mut().zip(group.iter()) {
        *lane = hasher.state.words();
    }
    const IDLE: [u8; 64] = [0; 64];
    for block in 0..blocks {
        let at = block.saturating_mul(64);
        let mut input = [&IDLE; N];
        for (lane, (_, data)) in input.iter_mut().zip(group.iter()) {
            let block = data.get(at..at.saturating_add(64));
            *lane = block.and_then(|b| b.try_into().ok()).unwrap_or(&IDLE);
        }
        C::compress(&mut words, input);
    }
    for (lane, (hasher, _)) in words.iter().zip(group.iter_mut()) {
        hasher.state.advanced(*lane, blocks);
    }
}

/// Two messages as two chains of scalar steps, interleaved: the
/// processor runs a step of each at once (about 1.45 times one MD5's
/// speed, benches/README.md), where a vector of four lanes with two idle
/// would be no faster than one.
mod pair {
    use super::scheduled::{rounds, Word};

    #[derive(Clone, Copy)]
    pub(super) struct Pair(u32, u32);

    impl Word for Pair {
        #[inline(always)]
        fn splat(k: u32) -> Self {
            Pair(k, k)
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Pair(self.0.wrapping_add(o.0), self.1.wrapping_add(o.1))
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Pair(self.0 & o.0, self.1 & o.1)
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            Pair(self.0 ^ o.0, self.1 ^ o.1)
        }
        #[inline(always)]
        fn and_not(self, o: Self) -> Self {
            Pair(self.0 & !o.0, self.1 & !o.1)
        }
        #[inline(always)]
        fn or_not(self, o: Self) -> Self {
            Pair(self.0 | !o.0, self.1 | !o.1)
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            let by = L.unsigned_abs();
            Pair(self.0.rotate_left(by), self.1.rotate_left(by))
        }
    }

    /// One 64-byte block into each message's words.
    pub(super) fn compress(words: &mut [[u32; 4]; 2], blocks: [&[u8]; 2]) {
        let [a, b] = blocks;
        let mut m = [Pair(0, 0); 16];
        for (word, (x, y)) in m.iter_mut().zip(a.chunks_exact(4).zip(b.chunks_exact(4))) {
            let le = |bytes: &[u8]| {
                let mut four = [0u8; 4];
                four.copy_from_slice(bytes);
                u32::from_le_bytes(four)
            };
            *word = Pair(le(x), le(y));
        }
        let [one, other] = *words;
        let state = [
            Pair(one[0], other[0]),
            Pair(one[1], other[1]),
            Pair(one[2], other[2]),
            Pair(one[3], other[3]),
        ];
        let ends = rounds(state, &m);
        for (i, (start, end)) in state.into_iter().zip(ends).enumerate() {
            let sum = start.add(end);
            if let [Some(x), Some(y)] = words.each_mut().map(|w| w.get_mut(i)) {
                *x = sum.0;
                *y = sum.1;
            }
        }
    }
}

/// The lanes every processor of the target has.
struct Baseline;

/// Off x86-64: one lane after the other.
#[cfg(not(target_arch = "x86_64"))]
impl Compress<LANES> for Baseline {
    fn compress(words: &mut [[u32; 4]; LANES], blocks: [&[u8; 64]; LANES]) {
        for (lane, block) in words.iter_mut().zip(blocks) {
            scheduled::compress(lane, block);
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Compress<LANES> for Baseline {
    fn compress(words: &mut [[u32; 4]; LANES], blocks: [&[u8; 64]; LANES]) {
        sse2::compress::<sse2::Lanes>(words, blocks);
    }
}

/// `impl Vector` and `impl Word` for `$lanes`, a tuple struct of one
/// `__m128i`: the word operations every x86-64 processor computes with
/// SSE2, then `$rest`, the methods the lanes compute otherwise (at
/// least `rotl`). For `sse2` and `avx512`, which share them; each use
/// site has `Vector` and `Word` in scope and allows unsafe code.
#[cfg(target_arch = "x86_64")]
macro_rules! sse2_words {
    ($lanes:ident { $($rest:tt)* }) => {
        impl Vector for $lanes {
            #[inline(always)]
            fn from_raw(raw: core::arch::x86_64::__m128i) -> Self {
                $lanes(raw)
            }
            #[inline(always)]
            fn raw(self) -> core::arch::x86_64::__m128i {
                self.0
            }
        }

        // Every intrinsic below needs only SSE2, which every x86_64
        // target has (it is the architecture's baseline), so each call is
        // sound in any function; none reads or writes memory.
        impl Word for $lanes {
            #[inline(always)]
            fn splat(k: u32) -> Self {
                let k = i32::from_ne_bytes(k.to_ne_bytes());
                // SAFETY: `_mm_set1_epi32` needs SSE2 (every x86_64
                // target's baseline) and only builds a vector from `k`.
                $lanes(unsafe { core::arch::x86_64::_mm_set1_epi32(k) })
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                // SAFETY: `_mm_add_epi32` needs SSE2 (every x86_64
                // target's baseline) and only adds two vector values.
                $lanes(unsafe { core::arch::x86_64::_mm_add_epi32(self.0, other.0) })
            }
            #[inline(always)]
            fn and(self, other: Self) -> Self {
                // SAFETY: `_mm_and_si128` needs SSE2 (every x86_64
                // target's baseline) and only combines two vector values.
                $lanes(unsafe { core::arch::x86_64::_mm_and_si128(self.0, other.0) })
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                // SAFETY: `_mm_xor_si128` needs SSE2 (every x86_64
                // target's baseline) and only combines two vector values.
                $lanes(unsafe { core::arch::x86_64::_mm_xor_si128(self.0, other.0) })
            }
            #[inline(always)]
            fn and_not(self, other: Self) -> Self {
                // andnot(x, y) is !x & y.
                // SAFETY: `_mm_andnot_si128` needs SSE2 (every x86_64
                // target's baseline) and only combines two vector values.
                $lanes(unsafe { core::arch::x86_64::_mm_andnot_si128(other.0, self.0) })
            }
            #[inline(always)]
            fn or_not(self, other: Self) -> Self {
                use core::arch::x86_64::{_mm_or_si128, _mm_set1_epi32, _mm_xor_si128};
                // SAFETY: `_mm_set1_epi32` needs SSE2 (every x86_64
                // target's baseline) and only builds a vector of ones.
                let ones = unsafe { _mm_set1_epi32(-1) };
                // SAFETY: `_mm_xor_si128` needs SSE2 (every x86_64
                // target's baseline) and only combines two vector values.
                let not_other = unsafe { _mm_xor_si128(other.0, ones) };
                // SAFETY: `_mm_or_si128` needs SSE2 (every x86_64
                // target's baseline) and only combines two vector values.
                $lanes(unsafe { _mm_or_si128(self.0, not_other) })
            }
            $($rest)*
        }
    };
}

/// The rounds on four lanes of 32 bits: the only unsafe code here is
/// calling SSE2's intrinsics, which every x86-64 processor has (the
/// baseline of every x86_64 Rust target), on values, plus the 16-byte
/// loads and stores of arrays of 16 bytes; run under ASan by
/// `core/tests/sanitize`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod sse2 {
    use super::scheduled::{rounds, Word};
    use super::LANES;
    use core::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_or_si128, _mm_set_epi32, _mm_slli_epi32, _mm_srli_epi32,
        _mm_storeu_si128, _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi32,
        _mm_unpacklo_epi64,
    };

    /// A 128-bit vector of four 32-bit words, one per lane, whatever
    /// instructions compute on them.
    pub(super) trait Vector: Word {
        fn from_raw(raw: __m128i) -> Self;
        fn raw(self) -> __m128i;
    }

    /// Four words, one per lane, computed on with SSE2.
    #[derive(Clone, Copy)]
    pub(super) struct Lanes(__m128i);

    sse2_words!(Lanes {
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            // SAFETY: `_mm_slli_epi32` needs SSE2 (every x86_64 target's
            // baseline) and only shifts a vector value.
            let left = unsafe { _mm_slli_epi32::<L>(self.0) };
            // SAFETY: `_mm_srli_epi32` needs SSE2 (every x86_64 target's
            // baseline) and only shifts a vector value.
            let right = unsafe { _mm_srli_epi32::<R>(self.0) };
            // SAFETY: `_mm_or_si128` needs SSE2 (every x86_64 target's
            // baseline) and only combines two vector values.
            Lanes(unsafe { _mm_or_si128(left, right) })
        }
    });

    /// Word `j` of each of four blocks in vector `j`: the blocks read 16
    /// bytes at a time and transposed.
    #[inline(always)]
    pub(super) fn transposed(blocks: [&[u8; 64]; LANES]) -> [__m128i; 16] {
        // SAFETY: `_mm_setzero_si128` needs SSE2 (every x86_64 target's
        // baseline) and only makes a zero vector.
        let zero = unsafe { core::arch::x86_64::_mm_setzero_si128() };
        let mut m = [zero; 16];
        let mut rows = [[zero; 4]; LANES];
        for (row, block) in rows.iter_mut().zip(blocks) {
            for (quarter, bytes) in row.iter_mut().zip(block.chunks_exact(16)) {
                // SAFETY: `bytes` is 16 readable bytes (a `chunks_exact(16)`
                // piece of a 64-byte block); loadu takes any alignment and
                // needs only SSE2 (every x86_64 target's baseline).
                *quarter = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
            }
        }
        let [r0, r1, r2, r3] = rows;
        for (q, out) in m.chunks_exact_mut(4).enumerate() {
            let (Some(&a), Some(&b), Some(&c), Some(&d)) =
                (r0.get(q), r1.get(q), r2.get(q), r3.get(q))
            else {
                continue;
            };
            for (word, column) in out.iter_mut().zip(transpose4(a, b, c, d)) {
                *word = column;
            }
        }
        m
    }

    /// The 4x4 matrix of words whose rows are `a`, `b`, `c` and `d`,
    /// transposed: word `j` of each row in vector `j`.
    // Eight unpacks in one block: a chain of shuffles that is one
    // operation to the reader, all needing only SSE2 and touching no
    // memory; a block (and the same comment) per unpack would hide it.
    #[allow(clippy::multiple_unsafe_ops_per_block)]
    #[inline(always)]
    fn transpose4(a: __m128i, b: __m128i, c: __m128i, d: __m128i) -> [__m128i; 4] {
        // SAFETY: `_mm_unpack{lo,hi}_epi{32,64}` need only SSE2 (every
        // x86_64 target's baseline) and only shuffle vector values.
        unsafe {
            let t0 = _mm_unpacklo_epi32(a, b);
            let t1 = _mm_unpacklo_epi32(c, d);
            let t2 = _mm_unpackhi_epi32(a, b);
            let t3 = _mm_unpackhi_epi32(c, d);
            [
                _mm_unpacklo_epi64(t0, t1),
                _mm_unpackhi_epi64(t0, t1),
                _mm_unpacklo_epi64(t2, t3),
                _mm_unpackhi_epi64(t2, t3),
            ]
        }
    }

    /// One 64-byte block into each lane's words, computed on as `V`.
    #[inline(always)]
    pub(super) fn compress<V: Vector>(words: &mut [[u32; 4]; LANES], blocks: [&[u8; 64]; LANES]) {
        let m = transposed(blocks).map(V::from_raw);
        let lane_word = |i: usize| {
            let w = |lane: usize| {
                let word = words.get(lane).and_then(|w| w.get(i)).copied().unwrap_or(0);
                i32::from_ne_bytes(word.to_ne_bytes())
            };
            // SAFETY: `_mm_set_epi32` needs SSE2 (every x86_64 target's
            // baseline) and only builds a vector from four words.
            V::from_raw(unsafe { _mm_set_epi32(w(3), w(2), w(1), w(0)) })
        };
        let state = [lane_word(0), lane_word(1), lane_word(2), lane_word(3)];
        let ends = rounds(state, &m);
        for (i, (start, end)) in state.into_iter().zip(ends).enumerate() {
            let mut sum = [0u32; 4];
            // SAFETY: `sum` is 16 writable bytes (four `u32`s); storeu
            // takes any alignment and needs only SSE2 (every x86_64
            // target's baseline).
            unsafe { _mm_storeu_si128(sum.as_mut_ptr().cast(), start.add(end).raw()) };
            for (lane, word) in words.iter_mut().zip(sum) {
                if let Some(w) = lane.get_mut(i) {
                    *w = word;
                }
            }
        }
    }
}

/// The rounds in AVX-512VL's lanes of 128 bits: each round's function
/// is one instruction (`vpternlogd`) and so is each rotation
/// (`vprold`), which shortens the chain of dependent steps MD5 is from
/// about five instructions to four. With two messages (each thread of
/// `extract` decodes two) the four lanes run half idle and still hash
/// faster than two interleaved scalar chains (benches/README.md).
///
/// Unsafe code: the intrinsics, which need a processor with AVX-512F
/// and AVX-512VL. A [`Present`] is made only where the processor says
/// it has both, and [`Lanes`], private here, only inside
/// [`hash_blocks`], which takes one; run under ASan by
/// `core/tests/sanitize` on processors that have them.
#[cfg(all(target_arch = "x86_64", clangoffload_avx512))]
#[allow(unsafe_code)]
// Built only by Rust 1.89 and later (build.rs).
#[clippy::msrv = "1.89"]
mod avx512 {
    use super::scheduled::{rounds, Word};
    use super::sse2::Vector;
    use super::{in_lanes, sse2, Compress, Hasher, LANES};
    use crate::compressed::md5::WIDEST;
    use core::arch::x86_64::{
        __m128i, __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256,
        _mm256_rol_epi32, _mm256_set1_epi32, _mm256_set_m128i, _mm256_setr_epi32,
        _mm256_storeu_si256, _mm256_ternarylogic_epi32, _mm256_xor_si256, _mm_rol_epi32,
        _mm_ternarylogic_epi32,
    };

    /// Proof that this processor has AVX-512F and AVX-512VL.
    #[derive(Clone, Copy, Debug)]
    pub(in super::super) struct Present(());

    impl Present {
        pub(in super::super) fn detect() -> Option<Present> {
            let has = std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vl");
            has.then_some(Present(()))
        }
    }

    /// [`super::hash_blocks`] in AVX-512VL's lanes.
    pub(super) fn hash_blocks(_: Present, group: &mut [(&mut Hasher, &[u8])], blocks: usize) {
        // SAFETY: `Present` says the processor has both features.
        unsafe { hash_blocks_avx512(group, blocks) }
    }

    /// # Safety
    /// The processor has AVX-512F and AVX-512VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn hash_blocks_avx512(group: &mut [(&mut Hasher, &[u8])], blocks: usize) {
        if group.len() > LANES {
            in_lanes::<WIDEST, Wide>(group, blocks);
        } else {
            in_lanes::<LANES, Lanes>(group, blocks);
        }
    }

    impl Compress<LANES> for Lanes {
        #[inline(always)]
        fn compress(words: &mut [[u32; 4]; LANES], blocks: [&[u8; 64]; LANES]) {
            sse2::compress::<Lanes>(words, blocks);
        }
    }

    /// Four words, one per lane, computed on with AVX-512VL.
    #[derive(Clone, Copy)]
    struct Lanes(__m128i);

    // `vpternlogd`'s tables for functions of (b, c, d): their values
    // where b, c and d are B, C and D (the low 8 bits).
    const B: i32 = 0xf0;
    const C: i32 = 0xcc;
    const D: i32 = 0xaa;
    const F: i32 = ((B & C) | (!B & D)) & 0xff;
    const G: i32 = ((B & D) | (C & !D)) & 0xff;
    const H: i32 = (B ^ C ^ D) & 0xff;
    const I: i32 = (C ^ (B | !D)) & 0xff;

    // The methods below use AVX-512F and AVX-512VL instructions: sound
    // because a `Lanes` exists only inside `hash_blocks_avx512`, entered
    // only with a `Present`, made only where the processor has both.
    sse2_words!(Lanes {
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            // SAFETY: `_mm_rol_epi32` needs AVX-512F and AVX-512VL, which
            // the processor has wherever a `Lanes` exists (see above); it
            // only rotates a vector value.
            Lanes(unsafe { _mm_rol_epi32::<L>(self.0) })
        }
        #[inline(always)]
        fn settled(mut self) -> Self {
            // An empty instruction the value goes through.
            // SAFETY: the assembly is a comment: it executes nothing,
            // touches no memory, stack or flags (as its options say) and
            // leaves the xmm register it names as it was.
            unsafe {
                core::arch::asm!("/* {0} */", inout(xmm_reg) self.0,
                    options(pure, nomem, nostack, preserves_flags));
            }
            self
        }
        #[inline(always)]
        fn f(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm_ternarylogic_epi32` needs AVX-512F and
            // AVX-512VL, which the processor has wherever a `Lanes`
            // exists (see above); it only combines vector values.
            Lanes(unsafe { _mm_ternarylogic_epi32::<F>(b.0, c.0, d.0) })
        }
        #[inline(always)]
        fn g(b: Self, c: Self, d: Self) -> (Self, Self) {
            let zero = Self::splat(0);
            (
                zero,
                // SAFETY: `_mm_ternarylogic_epi32` needs AVX-512F and
                // AVX-512VL, which the processor has wherever a `Lanes`
                // exists (see above); it only combines vector values.
                Lanes(unsafe { _mm_ternarylogic_epi32::<G>(b.0, c.0, d.0) }),
            )
        }
        #[inline(always)]
        fn h(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm_ternarylogic_epi32` needs AVX-512F and
            // AVX-512VL, which the processor has wherever a `Lanes`
            // exists (see above); it only combines vector values.
            Lanes(unsafe { _mm_ternarylogic_epi32::<H>(b.0, c.0, d.0) })
        }
        #[inline(always)]
        fn i(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm_ternarylogic_epi32` needs AVX-512F and
            // AVX-512VL, which the processor has wherever a `Lanes`
            // exists (see above); it only combines vector values.
            Lanes(unsafe { _mm_ternarylogic_epi32::<I>(b.0, c.0, d.0) })
        }
    });

    /// Eight words, one per lane, in AVX-512VL's 256-bit vectors: the
    /// same chain of dependent steps as four lanes, so twice the bytes
    /// in the same time.
    #[derive(Clone, Copy)]
    struct Wide(__m256i);

    /// `vpternlogd`'s table for `a | !b` (A and B as B and C above).
    const OR_NOT: i32 = (B | !C) & 0xff;

    // The methods below use AVX2 and AVX-512F/VL instructions: sound
    // because a `Wide` exists only inside `hash_blocks_avx512`, entered
    // only with a `Present`, made only where the processor has AVX-512F
    // and AVX-512VL (and so AVX2).
    impl Word for Wide {
        #[inline(always)]
        fn splat(k: u32) -> Self {
            let k = i32::from_ne_bytes(k.to_ne_bytes());
            // SAFETY: `_mm256_set1_epi32` needs AVX, which the processor has
            // wherever a `Wide` exists (see above); it only builds a vector from `k`.
            Wide(unsafe { _mm256_set1_epi32(k) })
        }
        #[inline(always)]
        fn add(self, other: Self) -> Self {
            // SAFETY: `_mm256_add_epi32` needs AVX2, which the processor has
            // wherever a `Wide` exists (see above); it only adds two vector values.
            Wide(unsafe { _mm256_add_epi32(self.0, other.0) })
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: `_mm256_and_si256` needs AVX2, which the processor has
            // wherever a `Wide` exists (see above); it only combines two vector values.
            Wide(unsafe { _mm256_and_si256(self.0, other.0) })
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: `_mm256_xor_si256` needs AVX2, which the processor has
            // wherever a `Wide` exists (see above); it only combines two vector values.
            Wide(unsafe { _mm256_xor_si256(self.0, other.0) })
        }
        #[inline(always)]
        fn and_not(self, other: Self) -> Self {
            // andnot(x, y) is !x & y.
            // SAFETY: `_mm256_andnot_si256` needs AVX2, which the processor
            // has wherever a `Wide` exists (see above); it only combines
            // two vector values.
            Wide(unsafe { _mm256_andnot_si256(other.0, self.0) })
        }
        #[inline(always)]
        fn or_not(self, other: Self) -> Self {
            // SAFETY: `_mm256_ternarylogic_epi32` needs AVX-512F and AVX-512VL, which the processor has
            // wherever a `Wide` exists (see above); it only combines vector values.
            Wide(unsafe { _mm256_ternarylogic_epi32::<OR_NOT>(self.0, other.0, other.0) })
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            // SAFETY: `_mm256_rol_epi32` needs AVX-512F and AVX-512VL, which the processor has
            // wherever a `Wide` exists (see above); it only rotates a vector value.
            Wide(unsafe { _mm256_rol_epi32::<L>(self.0) })
        }
        #[inline(always)]
        fn f(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm256_ternarylogic_epi32` needs AVX-512F and AVX-512VL, which the processor has
            // wherever a `Wide` exists (see above); it only combines vector values.
            Wide(unsafe { _mm256_ternarylogic_epi32::<F>(b.0, c.0, d.0) })
        }
        #[inline(always)]
        fn g(b: Self, c: Self, d: Self) -> (Self, Self) {
            let zero = Self::splat(0);
            (
                zero,
                // SAFETY: `_mm256_ternarylogic_epi32` needs AVX-512F and AVX-512VL, which the processor has
                // wherever a `Wide` exists (see above); it only combines vector values.
                Wide(unsafe { _mm256_ternarylogic_epi32::<G>(b.0, c.0, d.0) }),
            )
        }
        #[inline(always)]
        fn h(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm256_ternarylogic_epi32` needs AVX-512F and AVX-512VL, which the processor has
            // wherever a `Wide` exists (see above); it only combines vector values.
            Wide(unsafe { _mm256_ternarylogic_epi32::<H>(b.0, c.0, d.0) })
        }
        #[inline(always)]
        fn i(b: Self, c: Self, d: Self) -> Self {
            // SAFETY: `_mm256_ternarylogic_epi32` needs AVX-512F and AVX-512VL, which the processor has
            // wherever a `Wide` exists (see above); it only combines vector values.
            Wide(unsafe { _mm256_ternarylogic_epi32::<I>(b.0, c.0, d.0) })
        }
    }

    impl Compress<WIDEST> for Wide {
        /// The blocks of lanes 0-3 and 4-7 transposed as four lanes
        /// are, each word's two halves joined in one vector.
        #[inline(always)]
        fn compress(words: &mut [[u32; 4]; WIDEST], blocks: [&[u8; 64]; WIDEST]) {
            let [b0, b1, b2, b3, b4, b5, b6, b7] = blocks;
            let low = sse2::transposed([b0, b1, b2, b3]);
            let high = sse2::transposed([b4, b5, b6, b7]);
            let mut m = [Wide::splat(0); 16];
            for (word, (low, high)) in m.iter_mut().zip(low.into_iter().zip(high)) {
                // SAFETY: `_mm256_set_m128i` needs AVX, which the processor
                // has wherever a `Wide` exists (see above); it only joins
                // two vector values.
                *word = Wide(unsafe { _mm256_set_m128i(high, low) });
            }
            let lane_word = |i: usize| {
                let w = |lane: usize| {
                    let word = words.get(lane).and_then(|w| w.get(i)).copied().unwrap_or(0);
                    i32::from_ne_bytes(word.to_ne_bytes())
                };
                // SAFETY: `_mm256_setr_epi32` needs AVX, which the processor
                // has wherever a `Wide` exists (see above); it only builds
                // a vector from eight words.
                Wide(unsafe { _mm256_setr_epi32(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7)) })
            };
            let state = [lane_word(0), lane_word(1), lane_word(2), lane_word(3)];
            let ends = rounds(state, &m);
            for (i, (start, end)) in state.into_iter().zip(ends).enumerate() {
                let mut sum = [0u32; WIDEST];
                // SAFETY: `sum` is 32 writable bytes (eight `u32`s); storeu
                // takes any alignment and needs AVX, which the processor
                // has wherever a `Wide` exists (see above).
                unsafe { _mm256_storeu_si256(sum.as_mut_ptr().cast(), start.add(end).0) };
                for (lane, word) in words.iter_mut().zip(sum) {
                    if let Some(w) = lane.get_mut(i) {
                        *w = word;
                    }
                }
            }
        }
    }
}
