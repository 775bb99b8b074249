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

#[cfg(feature = "zstd")]
mod lanes;

#[cfg(feature = "std")]
mod scheduled;

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
mod tests;
