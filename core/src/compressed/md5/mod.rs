//! The hash compressed bundles store: the first 8 bytes of the MD5 (RFC 1321)
//! of the uncompressed bundle, read as a little-endian integer.
//!
//! `std` builds, whose verified decoding hashes on a thread of its own while
//! the output is decoded, hash with rounds written for a shorter chain of
//! dependent instructions than the `md5` crate's (about 8% faster,
//! benches/README.md): there the hash is the longer of the two threads, so
//! its speed is the verified decoding's. `no_std` builds use the `md5` crate.

/// An MD5 being computed, piece by piece.
pub(crate) struct Hasher {
    #[cfg(feature = "std")]
    state: scheduled::State,
    #[cfg(not(feature = "std"))]
    context: md5::Context,
}

impl Hasher {
    pub(crate) fn new() -> Self {
        Hasher {
            #[cfg(feature = "std")]
            state: scheduled::State::new(),
            #[cfg(not(feature = "std"))]
            context: md5::Context::new(),
        }
    }

    /// Hashes `data` after what came before.
    pub(crate) fn consume(&mut self, data: &[u8]) {
        #[cfg(feature = "std")]
        self.state.consume(data);
        #[cfg(not(feature = "std"))]
        self.context.consume(data);
    }

    /// The first 8 bytes of the digest, little-endian.
    pub(crate) fn truncated(self) -> u64 {
        #[cfg(feature = "std")]
        let digest = self.state.finalize();
        #[cfg(not(feature = "std"))]
        let digest = self.context.finalize().0;
        let mut low = [0u8; 8];
        low.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(low)
    }
}

/// How many MD5s [`consume_blocks_together`] computes side by side (only
/// the walk of many bundles at once, which needs libzstd, uses it).
#[cfg(feature = "zstd")]
pub(crate) const LANES: usize = 4;

/// The most messages [`consume_blocks_together`] hashes in one group: eight
/// in AVX-512VL's 256-bit vectors; elsewhere groups of [`LANES`].
#[cfg(feature = "zstd")]
pub(crate) const WIDEST: usize = 8;

/// How many messages this processor hashes side by side in one group.
#[cfg(feature = "zstd")]
pub(crate) fn width() -> usize {
    lanes::Isa::best().width()
}

/// Hashes the whole 64-byte blocks all `data` have in common, each after
/// what its hasher has hashed, side by side: one MD5 in each lane of a
/// vector (AVX-512VL where the processor has it, else SSE2 on x86-64; two
/// messages without AVX-512 as two interleaved scalar chains). MD5 is one
/// long chain of dependent steps within a message, so one message leaves
/// most of a core idle: four go through in about the time of one and a half
/// in SSE2's lanes, and of less than one in AVX-512VL's (benches/README.md).
/// Returns how many bytes of each `data` were hashed (the same for all);
/// none when a hasher holds part of a block, or there are fewer than two.
#[cfg(feature = "zstd")]
pub(crate) fn consume_blocks_together(pairs: &mut [(&mut Hasher, &[u8])]) -> usize {
    consume_blocks_with(lanes::Isa::best(), pairs)
}

/// [`consume_blocks_together`] with `isa`.
#[cfg(feature = "zstd")]
fn consume_blocks_with(isa: lanes::Isa, pairs: &mut [(&mut Hasher, &[u8])]) -> usize {
    let aligned = pairs.iter().all(|(hasher, _)| hasher.state.wanting() == 0);
    let blocks = pairs
        .iter()
        .map(|(_, data)| data.len() / 64)
        .min()
        .unwrap_or(0);
    if !aligned || blocks == 0 || pairs.len() < 2 {
        return 0;
    }
    for group in pairs.chunks_mut(isa.width()) {
        lanes::hash_blocks(isa, group, blocks);
    }
    blocks.saturating_mul(64)
}

/// Whole blocks of several messages side by side.
#[cfg(feature = "zstd")]
mod lanes {
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

            // SAFETY (every block below): SSE2 is enabled on every x86_64
            // target, and these intrinsics only compute on their arguments.
            impl Word for $lanes {
                #[inline(always)]
                fn splat(k: u32) -> Self {
                    let k = i32::from_ne_bytes(k.to_ne_bytes());
                    $lanes(unsafe { core::arch::x86_64::_mm_set1_epi32(k) })
                }
                #[inline(always)]
                fn add(self, other: Self) -> Self {
                    $lanes(unsafe { core::arch::x86_64::_mm_add_epi32(self.0, other.0) })
                }
                #[inline(always)]
                fn and(self, other: Self) -> Self {
                    $lanes(unsafe { core::arch::x86_64::_mm_and_si128(self.0, other.0) })
                }
                #[inline(always)]
                fn xor(self, other: Self) -> Self {
                    $lanes(unsafe { core::arch::x86_64::_mm_xor_si128(self.0, other.0) })
                }
                #[inline(always)]
                fn and_not(self, other: Self) -> Self {
                    // andnot(x, y) is !x & y.
                    $lanes(unsafe { core::arch::x86_64::_mm_andnot_si128(other.0, self.0) })
                }
                #[inline(always)]
                fn or_not(self, other: Self) -> Self {
                    use core::arch::x86_64::{_mm_or_si128, _mm_set1_epi32, _mm_xor_si128};
                    let ones = unsafe { _mm_set1_epi32(-1) };
                    $lanes(unsafe { _mm_or_si128(self.0, _mm_xor_si128(other.0, ones)) })
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
                // SAFETY: as for the operations above.
                Lanes(unsafe {
                    _mm_or_si128(_mm_slli_epi32::<L>(self.0), _mm_srli_epi32::<R>(self.0))
                })
            }
        });

        /// Word `j` of each of four blocks in vector `j`: the blocks read 16
        /// bytes at a time and transposed.
        #[inline(always)]
        pub(super) fn transposed(blocks: [&[u8; 64]; LANES]) -> [__m128i; 16] {
            // SAFETY: SSE2 is enabled on every x86_64 target.
            let zero = unsafe { core::arch::x86_64::_mm_setzero_si128() };
            let mut m = [zero; 16];
            let mut rows = [[zero; 4]; LANES];
            for (row, block) in rows.iter_mut().zip(blocks) {
                for (quarter, bytes) in row.iter_mut().zip(block.chunks_exact(16)) {
                    // SAFETY: `bytes` is 16 readable bytes; loadu takes any
                    // alignment.
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
                // SAFETY: as for `sse2_words`' operations.
                let columns = unsafe {
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
                };
                for (word, column) in out.iter_mut().zip(columns) {
                    *word = column;
                }
            }
            m
        }

        /// One 64-byte block into each lane's words, computed on as `V`.
        #[inline(always)]
        pub(super) fn compress<V: Vector>(
            words: &mut [[u32; 4]; LANES],
            blocks: [&[u8; 64]; LANES],
        ) {
            let m = transposed(blocks).map(V::from_raw);
            let lane_word = |i: usize| {
                let w = |lane: usize| {
                    let word = words.get(lane).and_then(|w| w.get(i)).copied().unwrap_or(0);
                    i32::from_ne_bytes(word.to_ne_bytes())
                };
                // SAFETY: as for `sse2_words`' operations.
                V::from_raw(unsafe { _mm_set_epi32(w(3), w(2), w(1), w(0)) })
            };
            let state = [lane_word(0), lane_word(1), lane_word(2), lane_word(3)];
            let ends = rounds(state, &m);
            for (i, (start, end)) in state.into_iter().zip(ends).enumerate() {
                let mut sum = [0u32; 4];
                // SAFETY: `sum` is 16 writable bytes; storeu takes any
                // alignment.
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

        // SAFETY (every block of `$rest` below): a `Lanes` exists only
        // inside `hash_blocks_avx512`, entered only where the processor has
        // AVX-512F and AVX-512VL; the intrinsics only compute on values.
        sse2_words!(Lanes {
            #[inline(always)]
            fn rotl<const L: i32, const R: i32>(self) -> Self {
                Lanes(unsafe { _mm_rol_epi32::<L>(self.0) })
            }
            #[inline(always)]
            fn settled(mut self) -> Self {
                // An empty instruction the value goes through.
                unsafe {
                    core::arch::asm!("/* {0} */", inout(xmm_reg) self.0,
                        options(pure, nomem, nostack, preserves_flags));
                }
                self
            }
            #[inline(always)]
            fn f(b: Self, c: Self, d: Self) -> Self {
                Lanes(unsafe { _mm_ternarylogic_epi32::<F>(b.0, c.0, d.0) })
            }
            #[inline(always)]
            fn g(b: Self, c: Self, d: Self) -> (Self, Self) {
                let zero = Self::splat(0);
                (
                    zero,
                    Lanes(unsafe { _mm_ternarylogic_epi32::<G>(b.0, c.0, d.0) }),
                )
            }
            #[inline(always)]
            fn h(b: Self, c: Self, d: Self) -> Self {
                Lanes(unsafe { _mm_ternarylogic_epi32::<H>(b.0, c.0, d.0) })
            }
            #[inline(always)]
            fn i(b: Self, c: Self, d: Self) -> Self {
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

        // SAFETY (every block below): a `Wide` exists only inside
        // `hash_blocks_avx512`, entered only where the processor has
        // AVX-512F and AVX-512VL (and so AVX2); the intrinsics only compute
        // on values.
        impl Word for Wide {
            #[inline(always)]
            fn splat(k: u32) -> Self {
                let k = i32::from_ne_bytes(k.to_ne_bytes());
                Wide(unsafe { _mm256_set1_epi32(k) })
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                Wide(unsafe { _mm256_add_epi32(self.0, other.0) })
            }
            #[inline(always)]
            fn and(self, other: Self) -> Self {
                Wide(unsafe { _mm256_and_si256(self.0, other.0) })
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                Wide(unsafe { _mm256_xor_si256(self.0, other.0) })
            }
            #[inline(always)]
            fn and_not(self, other: Self) -> Self {
                // andnot(x, y) is !x & y.
                Wide(unsafe { _mm256_andnot_si256(other.0, self.0) })
            }
            #[inline(always)]
            fn or_not(self, other: Self) -> Self {
                Wide(unsafe { _mm256_ternarylogic_epi32::<OR_NOT>(self.0, other.0, other.0) })
            }
            #[inline(always)]
            fn rotl<const L: i32, const R: i32>(self) -> Self {
                Wide(unsafe { _mm256_rol_epi32::<L>(self.0) })
            }
            #[inline(always)]
            fn f(b: Self, c: Self, d: Self) -> Self {
                Wide(unsafe { _mm256_ternarylogic_epi32::<F>(b.0, c.0, d.0) })
            }
            #[inline(always)]
            fn g(b: Self, c: Self, d: Self) -> (Self, Self) {
                let zero = Self::splat(0);
                (
                    zero,
                    Wide(unsafe { _mm256_ternarylogic_epi32::<G>(b.0, c.0, d.0) }),
                )
            }
            #[inline(always)]
            fn h(b: Self, c: Self, d: Self) -> Self {
                Wide(unsafe { _mm256_ternarylogic_epi32::<H>(b.0, c.0, d.0) })
            }
            #[inline(always)]
            fn i(b: Self, c: Self, d: Self) -> Self {
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
                    // SAFETY: as for the operations above.
                    *word = Wide(unsafe { _mm256_set_m128i(high, low) });
                }
                let lane_word = |i: usize| {
                    let w = |lane: usize| {
                        let word = words.get(lane).and_then(|w| w.get(i)).copied().unwrap_or(0);
                        i32::from_ne_bytes(word.to_ne_bytes())
                    };
                    // SAFETY: as for the operations above.
                    Wide(unsafe {
                        _mm256_setr_epi32(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7))
                    })
                };
                let state = [lane_word(0), lane_word(1), lane_word(2), lane_word(3)];
                let ends = rounds(state, &m);
                for (i, (start, end)) in state.into_iter().zip(ends).enumerate() {
                    let mut sum = [0u32; WIDEST];
                    // SAFETY: `sum` is 32 writable bytes; storeu takes any
                    // alignment.
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
}

#[cfg(feature = "std")]
mod scheduled {
    /// The four state words, the bytes of a block not yet complete and the
    /// length so far.
    pub(super) struct State {
        words: [u32; 4],
        pending: [u8; 64],
        filled: usize,
        length: u64,
    }

    impl State {
        pub(super) fn new() -> Self {
            State {
                words: [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476],
                pending: [0; 64],
                filled: 0,
                length: 0,
            }
        }

        pub(super) fn consume(&mut self, mut data: &[u8]) {
            self.length = self.length.wrapping_add(crate::bytes::to_u64(data.len()));
            if self.filled > 0 {
                let room = self.pending.get_mut(self.filled..).unwrap_or_default();
                let take = room.len().min(data.len());
                room.iter_mut().zip(data).for_each(|(to, from)| *to = *from);
                self.filled = self.filled.saturating_add(take);
                data = data.get(take..).unwrap_or_default();
                if self.filled < 64 {
                    return;
                }
                compress(&mut self.words, &self.pending);
                self.filled = 0;
            }
            let mut blocks = data.chunks_exact(64);
            for block in &mut blocks {
                compress(&mut self.words, block);
            }
            let rest = blocks.remainder();
            self.pending
                .iter_mut()
                .zip(rest)
                .for_each(|(to, from)| *to = *from);
            self.filled = rest.len();
        }

        #[cfg(feature = "zstd")]
        /// Bytes still wanted to complete the pending block (0 when none
        /// is pending).
        pub(super) fn wanting(&self) -> usize {
            64usize.wrapping_sub(self.filled) & 63
        }

        #[cfg(feature = "zstd")]
        /// The state words, to be advanced by whole blocks elsewhere
        /// ([`Self::advanced`]); only with no block pending.
        pub(super) fn words(&self) -> [u32; 4] {
            self.words
        }

        #[cfg(feature = "zstd")]
        /// Takes `words`, the state after `blocks` more whole blocks.
        pub(super) fn advanced(&mut self, words: [u32; 4], blocks: usize) {
            self.words = words;
            let bytes = crate::bytes::to_u64(blocks).wrapping_mul(64);
            self.length = self.length.wrapping_add(bytes);
        }

        pub(super) fn finalize(mut self) -> [u8; 16] {
            let bits = self.length.wrapping_mul(8).to_le_bytes();
            // 0x80, then zeros up to 56 bytes into a block, then the length.
            let zeros = 55usize.wrapping_sub(self.filled) & 63;
            self.consume(&[0x80]);
            self.consume([0; 64].get(..zeros).unwrap_or_default());
            self.consume(&bits);
            let mut digest = [0u8; 16];
            for (bytes, word) in digest.chunks_exact_mut(4).zip(self.words) {
                bytes.copy_from_slice(&word.to_le_bytes());
            }
            digest
        }
    }

    /// One step: `a = b + rotl(a + f + k + m, s)`, with `a + k + m` (and,
    /// through `$early`, the part of `f` that does not depend on `b`) added
    /// before `f`'s last operation, so that only that operation, an add, the
    /// rotation and an add wait on the previous step.
    macro_rules! step {
        ($a:ident, $b:ident, $early:expr, $late:expr, $m:expr, $k:expr, $s:expr) => {
            $a = $b.add(
                $a.add($m.add(W::splat($k)))
                    .settled()
                    .add($early)
                    .add($late)
                    .rotl::<$s, { 32 - $s }>(),
            );
        };
    }

    /// Rounds 1 to 4 with RFC 1321's functions ([`Word::f`] to
    /// [`Word::i`]), G as an early part (not depending on the newest word
    /// `b`) plus a late one: (b & d) | (c & !d) = (c & !d) + (b & d), as
    /// their bits are disjoint.
    macro_rules! f {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, W::splat(0), W::f($b, $c, $d), $m, $k, $s)
        };
    }
    macro_rules! g {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            let (early, late) = W::g($b, $c, $d);
            step!($a, $b, early, late, $m, $k, $s)
        };
    }
    macro_rules! h {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, W::splat(0), W::h($b, $c, $d), $m, $k, $s)
        };
    }
    macro_rules! i {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, W::splat(0), W::i($b, $c, $d), $m, $k, $s)
        };
    }

    /// A 32-bit word of MD5's state, or several of them side by side (one
    /// per lane, for several MD5s computed at once): the operations the
    /// rounds use.
    pub(super) trait Word: Copy {
        fn splat(k: u32) -> Self;
        fn add(self, other: Self) -> Self;
        fn and(self, other: Self) -> Self;
        fn xor(self, other: Self) -> Self;
        /// `self & !other`.
        fn and_not(self, other: Self) -> Self;
        /// `self | !other`.
        fn or_not(self, other: Self) -> Self;
        /// Rotates left by `L` (`R` is `32 - L`).
        fn rotl<const L: i32, const R: i32>(self) -> Self;
        /// The same value, as a sum the compiler must finish before adding
        /// anything to it (for vectors, whose compiler would otherwise add
        /// the step's constant last, on the chain of dependent steps).
        #[inline(always)]
        fn settled(self) -> Self {
            self
        }
        /// Round 1's function: `((c ^ d) & b) ^ d`, one operation after
        /// `b`'s.
        #[inline(always)]
        fn f(b: Self, c: Self, d: Self) -> Self {
            c.xor(d).and(b).xor(d)
        }
        /// Round 2's function as the two parts added to the sum: one that
        /// does not wait on `b`, and one that does.
        #[inline(always)]
        fn g(b: Self, c: Self, d: Self) -> (Self, Self) {
            (c.and_not(d), b.and(d))
        }
        /// Round 3's function.
        #[inline(always)]
        fn h(b: Self, c: Self, d: Self) -> Self {
            b.xor(c.xor(d))
        }
        /// Round 4's function.
        #[inline(always)]
        fn i(b: Self, c: Self, d: Self) -> Self {
            c.xor(b.or_not(d))
        }
    }

    impl Word for u32 {
        #[inline(always)]
        fn splat(k: u32) -> Self {
            k
        }
        #[inline(always)]
        fn add(self, other: Self) -> Self {
            self.wrapping_add(other)
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            self & other
        }
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            self ^ other
        }
        #[inline(always)]
        fn and_not(self, other: Self) -> Self {
            self & !other
        }
        #[inline(always)]
        fn or_not(self, other: Self) -> Self {
            self | !other
        }
        #[inline(always)]
        fn rotl<const L: i32, const R: i32>(self) -> Self {
            self.rotate_left(L.unsigned_abs())
        }
    }

    /// The 64 steps over one block's words `m`, from `[a, b, c, d]`; what
    /// they end with, to be added to the state (RFC 1321, section 3.4).
    #[inline(always)]
    pub(super) fn rounds<W: Word>(state: [W; 4], m: &[W; 16]) -> [W; 4] {
        let [mut a, mut b, mut c, mut d] = state;
        let [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15] = *m;
        f!(a, b, c, d, m0, 0xd76a_a478, 7);
        f!(d, a, b, c, m1, 0xe8c7_b756, 12);
        f!(c, d, a, b, m2, 0x2420_70db, 17);
        f!(b, c, d, a, m3, 0xc1bd_ceee, 22);
        f!(a, b, c, d, m4, 0xf57c_0faf, 7);
        f!(d, a, b, c, m5, 0x4787_c62a, 12);
        f!(c, d, a, b, m6, 0xa830_4613, 17);
        f!(b, c, d, a, m7, 0xfd46_9501, 22);
        f!(a, b, c, d, m8, 0x6980_98d8, 7);
        f!(d, a, b, c, m9, 0x8b44_f7af, 12);
        f!(c, d, a, b, m10, 0xffff_5bb1, 17);
        f!(b, c, d, a, m11, 0x895c_d7be, 22);
        f!(a, b, c, d, m12, 0x6b90_1122, 7);
        f!(d, a, b, c, m13, 0xfd98_7193, 12);
        f!(c, d, a, b, m14, 0xa679_438e, 17);
        f!(b, c, d, a, m15, 0x49b4_0821, 22);

        g!(a, b, c, d, m1, 0xf61e_2562, 5);
        g!(d, a, b, c, m6, 0xc040_b340, 9);
        g!(c, d, a, b, m11, 0x265e_5a51, 14);
        g!(b, c, d, a, m0, 0xe9b6_c7aa, 20);
        g!(a, b, c, d, m5, 0xd62f_105d, 5);
        g!(d, a, b, c, m10, 0x0244_1453, 9);
        g!(c, d, a, b, m15, 0xd8a1_e681, 14);
        g!(b, c, d, a, m4, 0xe7d3_fbc8, 20);
        g!(a, b, c, d, m9, 0x21e1_cde6, 5);
        g!(d, a, b, c, m14, 0xc337_07d6, 9);
        g!(c, d, a, b, m3, 0xf4d5_0d87, 14);
        g!(b, c, d, a, m8, 0x455a_14ed, 20);
        g!(a, b, c, d, m13, 0xa9e3_e905, 5);
        g!(d, a, b, c, m2, 0xfcef_a3f8, 9);
        g!(c, d, a, b, m7, 0x676f_02d9, 14);
        g!(b, c, d, a, m12, 0x8d2a_4c8a, 20);

        h!(a, b, c, d, m5, 0xfffa_3942, 4);
        h!(d, a, b, c, m8, 0x8771_f681, 11);
        h!(c, d, a, b, m11, 0x6d9d_6122, 16);
        h!(b, c, d, a, m14, 0xfde5_380c, 23);
        h!(a, b, c, d, m1, 0xa4be_ea44, 4);
        h!(d, a, b, c, m4, 0x4bde_cfa9, 11);
        h!(c, d, a, b, m7, 0xf6bb_4b60, 16);
        h!(b, c, d, a, m10, 0xbebf_bc70, 23);
        h!(a, b, c, d, m13, 0x289b_7ec6, 4);
        h!(d, a, b, c, m0, 0xeaa1_27fa, 11);
        h!(c, d, a, b, m3, 0xd4ef_3085, 16);
        h!(b, c, d, a, m6, 0x0488_1d05, 23);
        h!(a, b, c, d, m9, 0xd9d4_d039, 4);
        h!(d, a, b, c, m12, 0xe6db_99e5, 11);
        h!(c, d, a, b, m15, 0x1fa2_7cf8, 16);
        h!(b, c, d, a, m2, 0xc4ac_5665, 23);

        i!(a, b, c, d, m0, 0xf429_2244, 6);
        i!(d, a, b, c, m7, 0x432a_ff97, 10);
        i!(c, d, a, b, m14, 0xab94_23a7, 15);
        i!(b, c, d, a, m5, 0xfc93_a039, 21);
        i!(a, b, c, d, m12, 0x655b_59c3, 6);
        i!(d, a, b, c, m3, 0x8f0c_cc92, 10);
        i!(c, d, a, b, m10, 0xffef_f47d, 15);
        i!(b, c, d, a, m1, 0x8584_5dd1, 21);
        i!(a, b, c, d, m8, 0x6fa8_7e4f, 6);
        i!(d, a, b, c, m15, 0xfe2c_e6e0, 10);
        i!(c, d, a, b, m6, 0xa301_4314, 15);
        i!(b, c, d, a, m13, 0x4e08_11a1, 21);
        i!(a, b, c, d, m4, 0xf753_7e82, 6);
        i!(d, a, b, c, m11, 0xbd3a_f235, 10);
        i!(c, d, a, b, m2, 0x2ad7_d2bb, 15);
        i!(b, c, d, a, m9, 0xeb86_d391, 21);
        [a, b, c, d]
    }

    /// Hashes one 64-byte block into `words`.
    pub(super) fn compress(words: &mut [u32; 4], block: &[u8]) {
        let mut m = [0u32; 16];
        for (word, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
            let mut le = [0u8; 4];
            le.copy_from_slice(bytes);
            *word = u32::from_le_bytes(le);
        }
        let ends = rounds(*words, &m);
        for (word, add) in words.iter_mut().zip(ends) {
            *word = word.wrapping_add(add);
        }
    }
}

/// The hash a compressed bundle stores: the first 8 bytes of the MD5 of the
/// uncompressed bundle, read as a little-endian integer.
pub fn truncated_md5(data: &[u8]) -> u64 {
    let mut hasher = super::md5::Hasher::new();
    hasher.consume(data);
    hasher.truncated()
}

/// [`truncated_md5`] of each of `messages`, computed side by side: the
/// whole blocks they have in common go through MD5 together (up to eight in
/// AVX-512VL's lanes where the processor has them; else two as two
/// interleaved chains of steps, three or four in SSE2's lanes), which costs
/// less than hashing them one after the other (benches/README.md); the
/// rest of each is hashed alone. For a caller that checks many bundles.
#[cfg(feature = "zstd")]
pub fn truncated_md5s(messages: &[&[u8]]) -> alloc::vec::Vec<u64> {
    use super::md5::{consume_blocks_together, Hasher};
    let mut hashers: alloc::vec::Vec<Hasher> = messages.iter().map(|_| Hasher::new()).collect();
    let mut pairs: alloc::vec::Vec<(&mut Hasher, &[u8])> =
        hashers.iter_mut().zip(messages.iter().copied()).collect();
    // Longest first, so that messages of like length share lanes.
    pairs.sort_by_key(|(_, message)| core::cmp::Reverse(message.len()));
    for group in pairs.chunks_mut(super::md5::width()) {
        let common = consume_blocks_together(group);
        for (hasher, message) in group.iter_mut() {
            hasher.consume(message.get(common..).unwrap_or_default());
        }
    }
    drop(pairs);
    hashers.into_iter().map(Hasher::truncated).collect()
}

#[cfg(test)]
mod tests {
    use super::Hasher;
    use alloc::vec::Vec;

    fn truncated(pieces: &[&[u8]]) -> u64 {
        let mut hasher = Hasher::new();
        for piece in pieces {
            hasher.consume(piece);
        }
        hasher.truncated()
    }

    fn reference(data: &[u8]) -> u64 {
        let digest = md5::compute(data).0;
        u64::from_le_bytes(digest[..8].try_into().unwrap())
    }

    #[test]
    fn rfc_1321_test_suite() {
        // RFC 1321, appendix A.5, as printed there.
        let suite: [(&[u8], &str); 7] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                b"abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, digest) in suite {
            let first8: Vec<u8> = (0..8)
                .map(|i| u8::from_str_radix(&digest[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let expected = u64::from_le_bytes(first8.try_into().unwrap());
            assert_eq!(truncated(&[input]), expected, "{input:?}");
        }
    }

    /// Messages hashed side by side, in steps of every kind (whole blocks,
    /// parts of blocks, nothing, lanes that end early; what the lanes do
    /// not have in common hashed alone), give each message's own MD5, for
    /// every number of lanes up to more than a vector holds.
    /// With every instruction set this processor has.
    #[cfg(feature = "zstd")]
    #[test]
    fn messages_hashed_together_hash_as_each_alone() {
        for isa in super::lanes::Isa::all() {
            hashed_together_hash_as_each_alone(isa);
        }
    }

    /// A compiler with AVX-512's intrinsics and a processor with AVX-512VL
    /// use them: the test above then covers both.
    #[cfg(all(feature = "zstd", target_arch = "x86_64"))]
    #[test]
    fn avx512_is_used_where_the_processor_has_it() {
        let has =
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl");
        let lanes = super::lanes::Isa::all().len();
        match (cfg!(clangoffload_avx512), has) {
            (true, true) => assert_eq!(lanes, 2),
            _ => assert_eq!(lanes, 1),
        }
        assert!(matches!(super::lanes::Isa::best(), super::lanes::Isa::Baseline) == (lanes == 1));
    }

    #[cfg(feature = "zstd")]
    fn hashed_together_hash_as_each_alone(isa: super::lanes::Isa) {
        let data: Vec<u8> = (0..40_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for lanes in 1..=super::WIDEST * 2 + 1 {
            // Lane i hashes data[i * 101..][..len_i], fed in steps that
            // differ per lane and per round.
            let lens: Vec<usize> = (0..lanes).map(|i| 9_000 + i * 1_237 % 5_000).collect();
            let mut hashers: Vec<Hasher> = (0..lanes).map(|_| Hasher::new()).collect();
            let mut fed = alloc::vec![0usize; lanes];
            for round in 0.. {
                let steps: Vec<usize> = (0..lanes)
                    .map(|i| match (round + i) % 5 {
                        0 => 4096,
                        1 => 640,
                        2 => 0,
                        3 => 77,
                        _ => 1_000,
                    })
                    .collect();
                let mut pairs: Vec<(&mut Hasher, &[u8])> = hashers
                    .iter_mut()
                    .enumerate()
                    .map(|(i, h)| {
                        let message = &data[i * 101..][..lens[i]];
                        let take = steps[i].min(lens[i] - fed[i]);
                        let piece = &message[fed[i]..fed[i] + take];
                        fed[i] += take;
                        (h, piece)
                    })
                    .collect();
                let common = super::consume_blocks_with(isa, &mut pairs);
                for (hasher, piece) in pairs {
                    hasher.consume(&piece[common..]);
                }
                if fed.iter().zip(&lens).all(|(f, l)| f == l) {
                    break;
                }
            }
            for (i, hasher) in hashers.into_iter().enumerate() {
                let message = &data[i * 101..][..lens[i]];
                assert_eq!(
                    hasher.truncated(),
                    reference(message),
                    "{isa:?}: {lanes} lanes, lane {i}"
                );
            }
        }
    }

    /// `truncated_md5s` gives each message's own hash, for every count of
    /// messages and unequal lengths.
    #[cfg(feature = "zstd")]
    #[test]
    fn messages_hashed_side_by_side_hash_as_each_alone() {
        let data: Vec<u8> = (0..50_000u32)
            .map(|i| (i.wrapping_mul(40_503) >> 5) as u8)
            .collect();
        for count in 0..7 {
            let messages: Vec<&[u8]> = (0..count)
                .map(|i| &data[i * 77..i * 77 + 9_000 + i * 3_001])
                .collect();
            let side_by_side = crate::compressed::truncated_md5s(&messages);
            let alone: Vec<u64> = messages.iter().map(|m| reference(m)).collect();
            assert_eq!(side_by_side, alone, "{count} messages");
        }
    }

    #[test]
    fn every_length_and_every_split_hashes_as_the_md5_crate_does() {
        let data: Vec<u8> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for len in 0..data.len() {
            let input = &data[..len];
            let whole = reference(input);
            assert_eq!(truncated(&[input]), whole, "length {len}");
            for cut in [1, 55, 56, 63, 64, 65, 127, 128, 200] {
                let (head, tail) = input.split_at(cut.min(len));
                let (mid, tail) = tail.split_at((cut / 3).min(tail.len()));
                assert_eq!(
                    truncated(&[head, mid, tail]),
                    whole,
                    "length {len}, cut {cut}"
                );
            }
        }
    }
}
