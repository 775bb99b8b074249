//! MD5's rounds written once over a `Word` (one u32, a pair of them, or
//! vector lanes), and the one-message state built on them.

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
