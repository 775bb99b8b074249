//! The `--image=key=value,...` arguments of clang-offload-packager and
//! llvm-offload-binary, in the order LLVM 22 stores them.
//!
//! The tool collects an argument's pairs in a `DenseMap<StringRef, StringRef>`
//! (a repeated key gets its values joined with `,`) and writes the strings in
//! that map's iteration order: bucket order of an open-addressing table keyed
//! by `llvm::hash_value(StringRef)`. To write byte-identical binaries we
//! replay that table: the same hash, 64 initial buckets, growth at 3/4 load,
//! quadratic probing.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// One `key=value` pair of an `--image` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageArgument<'a> {
    /// The text before the first `=` (all of it if there is none).
    pub key: &'a [u8],
    /// The text after the first `=`; the values of a repeated key joined with
    /// `,`.
    pub value: Vec<u8>,
}

/// Splits an `--image` argument into its pairs, in the order LLVM 22's
/// packager writes them as strings. `file` and `kind` are included: the
/// caller decides what they mean.
pub fn image_arguments(argument: &[u8]) -> Vec<ImageArgument<'_>> {
    let mut pairs: Vec<ImageArgument<'_>> = Vec::new();
    let mut index: BTreeMap<&[u8], usize> = BTreeMap::new();
    for part in argument.split(|&b| b == b',') {
        let (key, value) = match part.iter().position(|&b| b == b'=') {
            Some(at) => (part.get(..at), part.get(at.saturating_add(1)..)),
            None => (Some(part), Some(&[][..])),
        };
        let (key, value) = (key.unwrap_or_default(), value.unwrap_or_default());
        match index.get(key).and_then(|&i| pairs.get_mut(i)) {
            Some(pair) => {
                pair.value.push(b',');
                pair.value.extend_from_slice(value);
            }
            None => {
                index.insert(key, pairs.len());
                pairs.push(ImageArgument {
                    key,
                    value: value.to_vec(),
                });
            }
        }
    }
    let order = dense_map_order(pairs.iter().map(|p| p.key));
    let mut slots: Vec<Option<ImageArgument<'_>>> = pairs.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// The iteration order of a `DenseMap<StringRef, _>` after inserting the
/// distinct `keys` in order, as indices into `keys`.
fn dense_map_order<'a>(keys: impl Iterator<Item = &'a [u8]>) -> Vec<usize> {
    let hashes: Vec<u32> = keys.map(hash_value).collect();
    let mut buckets: Vec<Option<usize>> = Vec::new();
    for index in 0..hashes.len() {
        let entries = index.saturating_add(1);
        if entries.saturating_mul(4) >= buckets.len().saturating_mul(3) {
            let size = buckets.len().saturating_mul(2).max(64);
            let old = core::mem::replace(&mut buckets, alloc::vec![None; size]);
            for key in old.into_iter().flatten() {
                place(&mut buckets, key, &hashes);
            }
        }
        place(&mut buckets, index, &hashes);
    }
    buckets.into_iter().flatten().collect()
}

/// Puts `key` in the first free bucket of its quadratic probe sequence.
fn place(buckets: &mut [Option<usize>], key: usize, hashes: &[u32]) {
    let mask = buckets.len().wrapping_sub(1);
    let hash = hashes.get(key).copied().unwrap_or_default();
    let mut bucket = usize::try_from(hash).unwrap_or_default() & mask;
    let mut probe = 1usize;
    while let Some(slot) = buckets.get_mut(bucket) {
        if slot.is_none() {
            *slot = Some(key);
            return;
        }
        bucket = bucket.wrapping_add(probe) & mask;
        probe = probe.wrapping_add(1);
    }
}

// llvm::hash_value(StringRef) (ADT/Hashing.h, a CityHash variant) with the
// fixed seed of LLVM's release builds, truncated to 32 bits as DenseMap does.

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
const K2: u64 = 0x9ae1_6a3b_2f90_404f;
const K3: u64 = 0xc949_d7c7_509e_6557;
const SEED: u64 = 0xff51_afd7_ed55_8ccd;

fn hash_value(s: &[u8]) -> u32 {
    let full = if s.len() <= 64 {
        hash_short(s, SEED)
    } else {
        hash_long(s, SEED)
    };
    // DenseMapInfo<StringRef> keeps the low 32 bits.
    u32::try_from(full & 0xffff_ffff).unwrap_or_default()
}

fn fetch64(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(src) = s.get(at..at.saturating_add(8)) {
        b.copy_from_slice(src);
    }
    u64::from_le_bytes(b)
}

fn fetch32(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 4];
    if let Some(src) = s.get(at..at.saturating_add(4)) {
        b.copy_from_slice(src);
    }
    u64::from(u32::from_le_bytes(b))
}

fn byte(s: &[u8], at: usize) -> u64 {
    u64::from(s.get(at).copied().unwrap_or_default())
}

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

fn hash_16_bytes(low: u64, high: u64) -> u64 {
    const MUL: u64 = 0x9ddf_ea08_eb38_2d69;
    let mut a = (low ^ high).wrapping_mul(MUL);
    a ^= a >> 47;
    let mut b = (high ^ a).wrapping_mul(MUL);
    b ^= b >> 47;
    b.wrapping_mul(MUL)
}

fn hash_short(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let n = crate::bytes::to_u64(len);
    let end = |back: usize| len.saturating_sub(back);
    match len {
        0 => K2 ^ seed,
        1..=3 => {
            let y = byte(s, 0).wrapping_add(byte(s, len >> 1) << 8) & 0xffff_ffff;
            let z = n.wrapping_add(byte(s, end(1)) << 2) & 0xffff_ffff;
            shift_mix(y.wrapping_mul(K2) ^ z.wrapping_mul(K3) ^ seed).wrapping_mul(K2)
        }
        4..=8 => hash_16_bytes(
            n.wrapping_add(fetch32(s, 0) << 3),
            seed ^ fetch32(s, end(4)),
        ),
        9..=16 => {
            let (a, b) = (fetch64(s, 0), fetch64(s, end(8)));
            let rotation = u32::try_from(len).unwrap_or_default();
            hash_16_bytes(seed ^ a, b.wrapping_add(n).rotate_right(rotation)) ^ b
        }
        17..=32 => {
            let a = fetch64(s, 0).wrapping_mul(K1);
            let b = fetch64(s, 8);
            let c = fetch64(s, end(8)).wrapping_mul(K2);
            let d = fetch64(s, end(16)).wrapping_mul(K0);
            hash_16_bytes(
                a.wrapping_sub(b)
                    .rotate_right(43)
                    .wrapping_add((c ^ seed).rotate_right(30))
                    .wrapping_add(d),
                a.wrapping_add((b ^ K3).rotate_right(20))
                    .wrapping_sub(c)
                    .wrapping_add(n)
                    .wrapping_add(seed),
            )
        }
        _ => hash_33_to_64(s, seed),
    }
}

fn hash_33_to_64(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let n = crate::bytes::to_u64(len);
    let end = |back: usize| len.saturating_sub(back);
    let mut z = fetch64(s, 24);
    let mut a = fetch64(s, 0).wrapping_add(n.wrapping_add(fetch64(s, end(16))).wrapping_mul(K0));
    let mut b = a.wrapping_add(z).rotate_right(52);
    let mut c = a.rotate_right(37);
    a = a.wrapping_add(fetch64(s, 8));
    c = c.wrapping_add(a.rotate_right(7));
    a = a.wrapping_add(fetch64(s, 16));
    let vf = a.wrapping_add(z);
    let vs = b.wrapping_add(a.rotate_right(31)).wrapping_add(c);
    a = fetch64(s, 16).wrapping_add(fetch64(s, end(32)));
    z = fetch64(s, end(8));
    b = a.wrapping_add(z).rotate_right(52);
    c = a.rotate_right(37);
    a = a.wrapping_add(fetch64(s, end(24)));
    c = c.wrapping_add(a.rotate_right(7));
    a = a.wrapping_add(fetch64(s, end(16)));
    let wf = a.wrapping_add(z);
    let ws = b.wrapping_add(a.rotate_right(31)).wrapping_add(c);
    let r = shift_mix(
        vf.wrapping_add(ws)
            .wrapping_mul(K2)
            .wrapping_add(wf.wrapping_add(vs).wrapping_mul(K0)),
    );
    shift_mix((seed ^ r.wrapping_mul(K0)).wrapping_add(vs)).wrapping_mul(K2)
}

/// The running state for strings over 64 bytes.
struct State([u64; 7]);

impl State {
    fn new(s: &[u8], seed: u64) -> Self {
        let mut h = [
            0,
            seed,
            hash_16_bytes(seed, K1),
            (seed ^ K1).rotate_right(49),
            seed.wrapping_mul(K1),
            shift_mix(seed),
            0,
        ];
        h[6] = hash_16_bytes(h[4], h[5]);
        let mut state = State(h);
        state.mix(s, 0);
        state
    }

    fn mix_32(s: &[u8], at: usize, a: &mut u64, b: &mut u64) {
        *a = a.wrapping_add(fetch64(s, at));
        let c = fetch64(s, at.saturating_add(24));
        *b = b.wrapping_add(*a).wrapping_add(c).rotate_right(21);
        let d = *a;
        *a = a
            .wrapping_add(fetch64(s, at.saturating_add(8)))
            .wrapping_add(fetch64(s, at.saturating_add(16)));
        *b = b.wrapping_add(a.rotate_right(44)).wrapping_add(d);
        *a = a.wrapping_add(c);
    }

    fn mix(&mut self, s: &[u8], at: usize) {
        let [mut h0, mut h1, mut h2, mut h3, mut h4, mut h5, mut h6] = self.0;
        let f = |off: usize| fetch64(s, at.saturating_add(off));
        h0 = h0
            .wrapping_add(h1)
            .wrapping_add(h3)
            .wrapping_add(f(8))
            .rotate_right(37)
            .wrapping_mul(K1);
        h1 = h1
            .wrapping_add(h4)
            .wrapping_add(f(48))
            .rotate_right(42)
            .wrapping_mul(K1);
        h0 ^= h6;
        h1 = h1.wrapping_add(h3).wrapping_add(f(40));
        h2 = h2.wrapping_add(h5).rotate_right(33).wrapping_mul(K1);
        h3 = h4.wrapping_mul(K1);
        h4 = h0.wrapping_add(h2);
        Self::mix_32(s, at, &mut h3, &mut h4);
        h5 = h2.wrapping_add(h6);
        h6 = h1.wrapping_add(f(16));
        Self::mix_32(s, at.saturating_add(32), &mut h5, &mut h6);
        self.0 = [h0, h1, h2, h3, h4, h5, h6];
    }

    fn finish(&self, len: u64) -> u64 {
        let [h0, h1, h2, h3, h4, h5, h6] = self.0;
        hash_16_bytes(
            hash_16_bytes(h3, h5)
                .wrapping_add(shift_mix(h1).wrapping_mul(K1))
                .wrapping_add(h2),
            hash_16_bytes(h4, h6)
                .wrapping_add(shift_mix(len).wrapping_mul(K1))
                .wrapping_add(h0),
        )
    }
}

fn hash_long(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let aligned_end = len & !63;
    let mut state = State::new(s, seed);
    let mut at = 64;
    while at < aligned_end {
        state.mix(s, at);
        at = at.saturating_add(64);
    }
    if len & 63 != 0 {
        state.mix(s, len.saturating_sub(64));
    }
    state.finish(crate::bytes::to_u64(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(argument: &str) -> Vec<&[u8]> {
        image_arguments(argument.as_bytes())
            .into_iter()
            .map(|a| a.key)
            .collect()
    }

    #[test]
    fn order_matches_llvm_22() {
        // What llvm-offload-binary 22 wrote for these arguments.
        assert_eq!(
            keys("file=x.o,aa=1,bb=2,cc=3,dd=4,ee=5,ff=6,gg=7,hh=8"),
            [
                &b"gg"[..],
                b"file",
                b"ff",
                b"dd",
                b"cc",
                b"aa",
                b"bb",
                b"hh",
                b"ee"
            ]
        );
        assert_eq!(
            keys("file=x.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp,zeta=1,alpha=2")
                .into_iter()
                .filter(|k| *k != b"file" && *k != b"kind")
                .collect::<Vec<_>>(),
            [&b"arch"[..], b"zeta", b"triple", b"alpha"]
        );
    }

    #[test]
    fn repeated_keys_join_and_missing_values_are_empty() {
        let args = image_arguments(b"file=a,file=b,flag,=x");
        let file = args.iter().find(|a| a.key == b"file").map(|a| &a.value[..]);
        assert_eq!(file, Some(&b"a,b"[..]));
        let flag = args.iter().find(|a| a.key == b"flag").map(|a| &a.value[..]);
        assert_eq!(flag, Some(&b""[..]));
        assert!(args.iter().any(|a| a.key.is_empty() && a.value == b"x"));
    }
}
