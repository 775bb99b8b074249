//! An LZ4 block decoder (the raw block format, no frame): what fat binary
//! entries flagged 0x2000 hold, and what NVIDIA's tools and ZLUDA decode
//! with `LZ4_decompress_safe`.
//!
//! Written here rather than taken from lz4_flex (the well-kept pure-Rust
//! decoder) because every lz4_flex release that is not yanked needs Rust
//! 1.81, above this workspace's 1.80; and because a fault here is located
//! (the input offset of the sequence at fault), as every error in this
//! crate is. The fuzz target `cuda_lz4` checks it against lz4_flex.
//!
//! ```text
//! sequence: token (literal length << 4 | match length - 4), [255-continued
//!           literal length], literals, u16 LE offset, [255-continued match
//!           length]; the last sequence has literals only.
//! ```

use crate::bytes::to_u64;
use crate::compressed::decompress::Decoded;
use crate::compressed::StreamFault;

/// The most output a block of `len` bytes can give: a match extension byte
/// adds at most 255 output bytes, and a sequence's fixed bytes less.
pub(crate) fn max_decoded_len(len: u64) -> u64 {
    len.saturating_mul(255).saturating_add(255)
}

/// Reads the input and writes the output, checking each step.
struct Block<'a> {
    src: &'a [u8],
    at: usize,
    out: &'a mut [u8],
    len: usize,
}

/// Why decoding stopped early: a fault at an input offset, or an output
/// longer than the buffer.
enum Stop {
    Fault(StreamFault, u64),
    Long,
}

impl Block<'_> {
    fn byte(&mut self) -> Result<u8, Stop> {
        let b = *self
            .src
            .get(self.at)
            .ok_or(Stop::Fault(StreamFault::Truncated, to_u64(self.at)))?;
        self.at = self.at.saturating_add(1);
        Ok(b)
    }

    /// A length whose nibble is 15 continues in bytes of 255.
    fn length(&mut self, nibble: u8) -> Result<usize, Stop> {
        let mut len = usize::from(nibble);
        if nibble == 15 {
            loop {
                let more = self.byte()?;
                len = len.saturating_add(usize::from(more));
                if more != 255 {
                    break;
                }
            }
        }
        Ok(len)
    }

    fn literals(&mut self, count: usize) -> Result<(), Stop> {
        let end = self.at.saturating_add(count);
        let bytes = self
            .src
            .get(self.at..end)
            .ok_or(Stop::Fault(StreamFault::Truncated, to_u64(self.at)))?;
        let target = self.output(count)?;
        target.copy_from_slice(bytes);
        self.at = end;
        Ok(())
    }

    /// The next `count` output bytes, or `Long` if the buffer ends first.
    fn output(&mut self, count: usize) -> Result<&mut [u8], Stop> {
        let end = self.len.checked_add(count).ok_or(Stop::Long)?;
        let start = self.len;
        self.len = end;
        self.out.get_mut(start..end).ok_or(Stop::Long)
    }

    /// Copies `count` bytes from `distance` back, overlapping as LZ4 means
    /// it: in runs no longer than the distance, each reading only bytes
    /// already written.
    fn copy_match(&mut self, distance: usize, count: usize, at: u64) -> Result<(), Stop> {
        if distance == 0 || distance > self.len {
            return Err(Stop::Fault(StreamFault::Malformed, at));
        }
        let end = self.len.checked_add(count).ok_or(Stop::Long)?;
        if end > self.out.len() {
            return Err(Stop::Long);
        }
        while self.len < end {
            let run = distance.min(end.saturating_sub(self.len));
            let from = self.len.saturating_sub(distance);
            self.out
                .copy_within(from..from.saturating_add(run), self.len);
            self.len = self.len.saturating_add(run);
        }
        Ok(())
    }

    fn sequence(&mut self) -> Result<(), Stop> {
        let token = self.byte()?;
        let literal_len = self.length(token >> 4)?;
        self.literals(literal_len)?;
        if self.at == self.src.len() {
            return Ok(());
        }
        let at = to_u64(self.at);
        let distance = u16::from_le_bytes([self.byte()?, self.byte()?]);
        let count = self.length(token & 15)?.saturating_add(4);
        self.copy_match(usize::from(distance), count, at)
    }
}

/// Decodes the block `src` into `out`, which holds the declared size.
/// `Err((fault, offset))` locates a damaged block in `src`.
pub(crate) fn decode(src: &[u8], out: &mut [u8]) -> Result<Decoded, (StreamFault, u64)> {
    if src.is_empty() {
        return Err((StreamFault::Truncated, 0));
    }
    let mut block = Block {
        src,
        at: 0,
        out,
        len: 0,
    };
    while block.at < src.len() {
        match block.sequence() {
            Ok(()) => {}
            Err(Stop::Long) => return Ok(Decoded::Long),
            Err(Stop::Fault(fault, at)) => return Err((fault, at)),
        }
    }
    Ok(if block.len == block.out.len() {
        Decoded::Exact
    } else {
        Decoded::Short(to_u64(block.len))
    })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::prelude::rust_2021::*;
    use std::vec;

    use super::*;

    fn run(src: &[u8], size: usize) -> (Result<Decoded, (StreamFault, u64)>, Vec<u8>) {
        let mut out = vec![0; size];
        let r = decode(src, &mut out);
        (r, out)
    }

    #[test]
    fn literals_only_and_overlapping_match() {
        // "abc" then a match of 9 at distance 3 (overlapping), then "z".
        let src = [0x35, b'a', b'b', b'c', 3, 0, 0x10, b'z'];
        let (r, out) = run(&src, 13);
        assert_eq!(r.ok(), Some(Decoded::Exact));
        assert_eq!(out, b"abcabcabcabcz");
    }

    #[test]
    fn long_lengths_continue_in_255s() {
        let mut src = vec![0xF0, 255, 3];
        src.extend(core::iter::repeat_n(7u8, 15 + 255 + 3));
        let (r, out) = run(&src, 273);
        assert_eq!(r.ok(), Some(Decoded::Exact));
        assert!(out.iter().all(|&b| b == 7));
    }

    #[test]
    fn short_long_and_faults_are_reported() {
        let src = [0x30, b'a', b'b', b'c'];
        assert_eq!(run(&src, 4).0.ok(), Some(Decoded::Short(3)));
        assert_eq!(run(&src, 2).0.ok(), Some(Decoded::Long));
        // Distance 0, and one reaching before the output.
        assert_eq!(
            run(&[0x10, b'a', 0, 0], 8).0.err(),
            Some((StreamFault::Malformed, 2))
        );
        assert_eq!(
            run(&[0x10, b'a', 2, 0], 8).0.err(),
            Some((StreamFault::Malformed, 2))
        );
        // Literals past the input, a cut offset, an empty block.
        assert_eq!(
            run(&[0x50, b'a'], 8).0.err(),
            Some((StreamFault::Truncated, 1))
        );
        assert_eq!(
            run(&[0x10, b'a', 1], 8).0.err(),
            Some((StreamFault::Truncated, 3))
        );
        assert_eq!(run(&[], 0).0.err(), Some((StreamFault::Truncated, 0)));
        // A match longer than the buffer.
        assert_eq!(
            run(&[0x1F, b'a', 1, 0, 200], 50).0.ok(),
            Some(Decoded::Long)
        );
    }

    #[test]
    fn bound_holds_for_the_densest_block() {
        // One literal, then a match whose length is all 255s.
        let mut src = vec![0x1F, b'x', 1, 0];
        src.extend(core::iter::repeat_n(255u8, 100));
        src.push(0);
        let produced = 1 + 4 + 15 + 255 * 100;
        let (r, _) = run(&src, produced);
        assert_eq!(r.ok(), Some(Decoded::Exact));
        assert!(max_decoded_len(src.len() as u64) >= produced as u64);
    }
}
