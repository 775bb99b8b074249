//! Hashes checked after decoding, from bytes read back where they were
//! written: a bundle decoded whole need not stay in memory until it is
//! hashed, so one thread holds one bundle, not one per MD5 lane, and the
//! hashes of several bundles still go through MD5 side by side
//! ([`md5::consume_blocks_together`]; in AVX-512VL's eight lanes about
//! eight times one message's speed, benches/README.md).

use alloc::vec::Vec;

use super::md5::{self, Hasher};
use crate::bytes::to_u64;

/// How much of a message is read back at a time (a multiple of 64, so that
/// only a message's last piece ends within a block).
const PIECE: usize = 256 << 10;

/// Messages waiting for their hash, oldest first.
pub(crate) struct Queue {
    waiting: Vec<Waiting>,
    width: usize,
}

/// One message being hashed.
struct Waiting {
    id: usize,
    len: u64,
    /// How much of it has been read back.
    read: u64,
    hasher: Hasher,
    /// The piece read last, and how much of it is hashed.
    piece: Vec<u8>,
    at: usize,
}

impl Queue {
    /// A queue hashing up to `width` messages side by side (at least 1,
    /// at most as many as the processor hashes in one group).
    pub(crate) fn new(width: usize) -> Self {
        Queue {
            waiting: Vec::new(),
            width: width.clamp(1, md5::width()),
        }
    }

    /// Whether enough messages wait to fill every lane.
    pub(crate) fn full(&self) -> bool {
        self.waiting.len() >= self.width
    }

    /// Queues message `id` of `len` bytes.
    pub(crate) fn push(&mut self, id: usize, len: u64) {
        self.waiting.push(Waiting {
            id,
            len,
            read: 0,
            hasher: Hasher::new(),
            piece: Vec::new(),
            at: 0,
        });
    }

    /// Hashes the oldest waiting messages side by side until one ends:
    /// its id and truncated MD5, or `None` for the hash when `read` (asked
    /// for a message's bytes at an offset, to fill the slice) could not
    /// give them back. `None` when nothing waits.
    pub(crate) fn next_done(
        &mut self,
        read: &mut dyn FnMut(usize, u64, &mut [u8]) -> bool,
    ) -> Option<(usize, Option<u64>)> {
        loop {
            let width = self.waiting.len().min(self.width);
            if width == 0 {
                return None;
            }
            for index in 0..width {
                if let Some(ended) = self.refill(index, read) {
                    return Some(ended);
                }
            }
            let lanes = self.waiting.get_mut(..width).unwrap_or_default();
            let mut pairs: Vec<(&mut Hasher, &[u8])> = lanes
                .iter_mut()
                .map(|w| (&mut w.hasher, w.piece.get(w.at..).unwrap_or_default()))
                .collect();
            let common = md5::consume_blocks_together(&mut pairs);
            for lane in lanes.iter_mut() {
                lane.at = lane.at.saturating_add(common);
                // Alone, or at its message's last part block: hashed by
                // itself (side by side, every piece holds a block or more).
                let rest = lane.piece.get(lane.at..).unwrap_or_default();
                if common == 0 && (width == 1 || rest.len() < 64) {
                    lane.hasher.consume(rest);
                    lane.at = lane.piece.len();
                }
            }
        }
    }

    /// Reads the next piece of message `index` if its last one is hashed;
    /// or, if it is over (or cannot be read), takes it out and says how it
    /// ended.
    fn refill(
        &mut self,
        index: usize,
        read: &mut dyn FnMut(usize, u64, &mut [u8]) -> bool,
    ) -> Option<(usize, Option<u64>)> {
        let waiting = self.waiting.get_mut(index)?;
        if waiting.at < waiting.piece.len() {
            return None;
        }
        let left = waiting.len.saturating_sub(waiting.read);
        let n = usize::try_from(left).map_or(PIECE, |left| left.min(PIECE));
        if n > 0 {
            waiting.piece.resize(n, 0);
            waiting.at = 0;
            if read(waiting.id, waiting.read, &mut waiting.piece) {
                waiting.read = waiting.read.saturating_add(to_u64(n));
                return None;
            }
        }
        let ended = self.waiting.remove(index);
        Some((ended.id, (n == 0).then(|| ended.hasher.truncated())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compressed::truncated_md5;

    /// Messages of many lengths, hashed through a queue `width` wide with
    /// `kept` waiting between calls, come out with their own hashes.
    fn hashes_as_each_alone(width: usize, kept: usize) {
        let lengths = [
            0usize,
            1,
            63,
            64,
            65,
            PIECE - 1,
            PIECE,
            PIECE + 1,
            3 * PIECE + 17,
            100,
        ];
        let messages: Vec<Vec<u8>> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|b| (b * 7 + i * 13) as u8).collect())
            .collect();
        let mut read = |id: usize, at: u64, out: &mut [u8]| {
            let at = at as usize;
            out.copy_from_slice(&messages[id][at..at + out.len()]);
            true
        };
        let mut queue = Queue::new(width);
        let mut got = Vec::new();
        for (id, message) in messages.iter().enumerate() {
            queue.push(id, to_u64(message.len()));
            while queue.waiting.len() > kept {
                got.extend(queue.next_done(&mut read));
            }
        }
        while let Some(done) = queue.next_done(&mut read) {
            got.push(done);
        }
        got.sort();
        let want: Vec<_> = messages
            .iter()
            .enumerate()
            .map(|(id, m)| (id, Some(truncated_md5(m))))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn every_width_hashes_every_message_as_alone() {
        for width in 1..=md5::WIDEST {
            for kept in 0..md5::WIDEST {
                hashes_as_each_alone(width, kept);
            }
        }
    }

    #[test]
    fn a_message_that_cannot_be_read_back_has_no_hash_and_hides_no_other() {
        let message = [5u8; 1000];
        let mut read = |id: usize, _at: u64, out: &mut [u8]| {
            out.fill(5);
            id != 1
        };
        let mut queue = Queue::new(4);
        for id in 0..3 {
            queue.push(id, 1000);
        }
        let mut got = Vec::new();
        while let Some(done) = queue.next_done(&mut read) {
            got.push(done);
        }
        got.sort();
        let hash = truncated_md5(&message);
        assert_eq!(got, [(0, Some(hash)), (1, None), (2, Some(hash))]);
    }
}
