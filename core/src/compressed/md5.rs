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
            $a = $b.wrapping_add(
                $a.wrapping_add($m.wrapping_add($k))
                    .wrapping_add($early)
                    .wrapping_add($late)
                    .rotate_left($s),
            );
        };
    }

    /// Rounds 1 to 4 with RFC 1321's functions, each written as an early
    /// part (not depending on the newest word `b`) plus a late one:
    /// F = (b & c) | (!b & d) = ((c ^ d) & b) ^ d, no early part;
    /// G = (b & d) | (c & !d) = (c & !d) + (b & d), disjoint bits;
    /// H = b ^ c ^ d; I = c ^ (b | !d), no early part.
    macro_rules! f {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, 0, (($c ^ $d) & $b) ^ $d, $m, $k, $s)
        };
    }
    macro_rules! g {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, $c & !$d, $b & $d, $m, $k, $s)
        };
    }
    macro_rules! h {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, 0, $b ^ ($c ^ $d), $m, $k, $s)
        };
    }
    macro_rules! i {
        ($a:ident, $b:ident, $c:ident, $d:ident, $m:expr, $k:expr, $s:expr) => {
            step!($a, $b, 0, $c ^ ($b | !$d), $m, $k, $s)
        };
    }

    /// Hashes one 64-byte block into `words` (RFC 1321, section 3.4).
    fn compress(words: &mut [u32; 4], block: &[u8]) {
        let mut m = [0u32; 16];
        for (word, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
            let mut le = [0u8; 4];
            le.copy_from_slice(bytes);
            *word = u32::from_le_bytes(le);
        }
        let [mut a, mut b, mut c, mut d] = *words;
        f!(a, b, c, d, m[0], 0xd76a_a478, 7);
        f!(d, a, b, c, m[1], 0xe8c7_b756, 12);
        f!(c, d, a, b, m[2], 0x2420_70db, 17);
        f!(b, c, d, a, m[3], 0xc1bd_ceee, 22);
        f!(a, b, c, d, m[4], 0xf57c_0faf, 7);
        f!(d, a, b, c, m[5], 0x4787_c62a, 12);
        f!(c, d, a, b, m[6], 0xa830_4613, 17);
        f!(b, c, d, a, m[7], 0xfd46_9501, 22);
        f!(a, b, c, d, m[8], 0x6980_98d8, 7);
        f!(d, a, b, c, m[9], 0x8b44_f7af, 12);
        f!(c, d, a, b, m[10], 0xffff_5bb1, 17);
        f!(b, c, d, a, m[11], 0x895c_d7be, 22);
        f!(a, b, c, d, m[12], 0x6b90_1122, 7);
        f!(d, a, b, c, m[13], 0xfd98_7193, 12);
        f!(c, d, a, b, m[14], 0xa679_438e, 17);
        f!(b, c, d, a, m[15], 0x49b4_0821, 22);

        g!(a, b, c, d, m[1], 0xf61e_2562, 5);
        g!(d, a, b, c, m[6], 0xc040_b340, 9);
        g!(c, d, a, b, m[11], 0x265e_5a51, 14);
        g!(b, c, d, a, m[0], 0xe9b6_c7aa, 20);
        g!(a, b, c, d, m[5], 0xd62f_105d, 5);
        g!(d, a, b, c, m[10], 0x0244_1453, 9);
        g!(c, d, a, b, m[15], 0xd8a1_e681, 14);
        g!(b, c, d, a, m[4], 0xe7d3_fbc8, 20);
        g!(a, b, c, d, m[9], 0x21e1_cde6, 5);
        g!(d, a, b, c, m[14], 0xc337_07d6, 9);
        g!(c, d, a, b, m[3], 0xf4d5_0d87, 14);
        g!(b, c, d, a, m[8], 0x455a_14ed, 20);
        g!(a, b, c, d, m[13], 0xa9e3_e905, 5);
        g!(d, a, b, c, m[2], 0xfcef_a3f8, 9);
        g!(c, d, a, b, m[7], 0x676f_02d9, 14);
        g!(b, c, d, a, m[12], 0x8d2a_4c8a, 20);

        h!(a, b, c, d, m[5], 0xfffa_3942, 4);
        h!(d, a, b, c, m[8], 0x8771_f681, 11);
        h!(c, d, a, b, m[11], 0x6d9d_6122, 16);
        h!(b, c, d, a, m[14], 0xfde5_380c, 23);
        h!(a, b, c, d, m[1], 0xa4be_ea44, 4);
        h!(d, a, b, c, m[4], 0x4bde_cfa9, 11);
        h!(c, d, a, b, m[7], 0xf6bb_4b60, 16);
        h!(b, c, d, a, m[10], 0xbebf_bc70, 23);
        h!(a, b, c, d, m[13], 0x289b_7ec6, 4);
        h!(d, a, b, c, m[0], 0xeaa1_27fa, 11);
        h!(c, d, a, b, m[3], 0xd4ef_3085, 16);
        h!(b, c, d, a, m[6], 0x0488_1d05, 23);
        h!(a, b, c, d, m[9], 0xd9d4_d039, 4);
        h!(d, a, b, c, m[12], 0xe6db_99e5, 11);
        h!(c, d, a, b, m[15], 0x1fa2_7cf8, 16);
        h!(b, c, d, a, m[2], 0xc4ac_5665, 23);

        i!(a, b, c, d, m[0], 0xf429_2244, 6);
        i!(d, a, b, c, m[7], 0x432a_ff97, 10);
        i!(c, d, a, b, m[14], 0xab94_23a7, 15);
        i!(b, c, d, a, m[5], 0xfc93_a039, 21);
        i!(a, b, c, d, m[12], 0x655b_59c3, 6);
        i!(d, a, b, c, m[3], 0x8f0c_cc92, 10);
        i!(c, d, a, b, m[10], 0xffef_f47d, 15);
        i!(b, c, d, a, m[1], 0x8584_5dd1, 21);
        i!(a, b, c, d, m[8], 0x6fa8_7e4f, 6);
        i!(d, a, b, c, m[15], 0xfe2c_e6e0, 10);
        i!(c, d, a, b, m[6], 0xa301_4314, 15);
        i!(b, c, d, a, m[13], 0x4e08_11a1, 21);
        i!(a, b, c, d, m[4], 0xf753_7e82, 6);
        i!(d, a, b, c, m[11], 0xbd3a_f235, 10);
        i!(c, d, a, b, m[2], 0x2ad7_d2bb, 15);
        i!(b, c, d, a, m[9], 0xeb86_d391, 21);

        for (word, add) in words.iter_mut().zip([a, b, c, d]) {
            *word = word.wrapping_add(add);
        }
    }
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
