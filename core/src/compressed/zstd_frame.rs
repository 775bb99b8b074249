//! What can be read from a zstd frame (RFC 8878) without decoding it: the
//! header's content size, window and flags, and where the frame ends (block
//! headers carry their sizes). Decoders are handed a frame only after this
//! has bounded it.

use super::stream::{FrameError, StreamFault};
use crate::bytes::to_u64;

const FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Skippable frames have magics 0x184D2A50..=0x184D2A5F.
const SKIPPABLE_MAGIC_HIGH: [u8; 3] = [0x2a, 0x4d, 0x18];
/// No block may regenerate or carry more than this (RFC 8878, 3.1.1.2.3).
const MAX_BLOCK_SIZE: u64 = 128 * 1024;

/// The header of a zstd frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZstdFrameHeader {
    header_len: u64,
    content_size: Option<u64>,
    window_size: u64,
    has_checksum: bool,
}

impl ZstdFrameHeader {
    /// Reads the frame header at the start of `frame`.
    pub(crate) fn parse(frame: &[u8]) -> Result<Self, FrameError> {
        let magic = frame.get(..4).ok_or((StreamFault::Truncated, 0))?;
        if magic.get(1..) == Some(&SKIPPABLE_MAGIC_HIGH[..])
            && magic.first().map(|b| b >> 4) == Some(5)
        {
            return Err((StreamFault::Unsupported, 0));
        }
        if magic != FRAME_MAGIC {
            return Err((StreamFault::Malformed, 0));
        }
        let descriptor = *frame.get(4).ok_or((StreamFault::Truncated, 4))?;
        let fcs_flag = descriptor >> 6;
        let single_segment = descriptor & 0x20 != 0;
        let has_checksum = descriptor & 0x04 != 0;
        if descriptor & 0x08 != 0 {
            return Err((StreamFault::Malformed, 4));
        }
        let dict_id_len: usize = match descriptor & 3 {
            0 => 0,
            1 => 1,
            2 => 2,
            _ => 4,
        };
        let fcs_len: usize = match (fcs_flag, single_segment) {
            (0, false) => 0,
            (0, true) => 1,
            (1, _) => 2,
            (2, _) => 4,
            _ => 8,
        };
        let window_len = usize::from(!single_segment);
        // At most 5 + 1 + 4 + 8 bytes.
        let header_len = 5usize
            .saturating_add(window_len)
            .saturating_add(dict_id_len)
            .saturating_add(fcs_len);
        let fields = frame
            .get(5..header_len)
            .ok_or((StreamFault::Truncated, to_u64(frame.len())))?;
        let (window, rest) = fields.split_at(window_len);
        let (dict_id, fcs) = rest.split_at(dict_id_len);
        if dict_id.iter().any(|&b| b != 0) {
            return Err((StreamFault::Unsupported, 5));
        }
        let content_size = match fcs_len {
            0 => None,
            2 => Some(le(fcs).saturating_add(256)),
            _ => Some(le(fcs)),
        };
        let window_size = match window.first() {
            Some(&w) => {
                // The exponent is at most 31, so the shift stays below 64.
                let base = 1u64 << (u32::from(w >> 3).saturating_add(10));
                base.saturating_add((base / 8).saturating_mul(u64::from(w & 7)))
            }
            // A single-segment frame's window is its content.
            None => content_size.unwrap_or(0),
        };
        Ok(ZstdFrameHeader {
            header_len: to_u64(header_len),
            content_size,
            window_size,
            has_checksum,
        })
    }

    /// Size of the frame header in bytes.
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// The decompressed size the frame records, if it records one.
    pub fn content_size(&self) -> Option<u64> {
        self.content_size
    }

    /// The window a decoder must keep, in bytes.
    pub fn window_size(&self) -> u64 {
        self.window_size
    }

    /// Whether the frame ends with a content checksum.
    pub fn has_checksum(&self) -> bool {
        self.has_checksum
    }
}

/// The length of the frame at the start of `frame`, found by walking its
/// block headers.
pub(crate) fn frame_len(frame: &[u8]) -> Result<u64, FrameError> {
    let header = ZstdFrameHeader::parse(frame)?;
    let len = to_u64(frame.len());
    let mut pos = header.header_len;
    let max_block = header.window_size.min(MAX_BLOCK_SIZE);
    loop {
        let block = usize::try_from(pos)
            .ok()
            .and_then(|at| frame.get(at..at.checked_add(3)?))
            .ok_or((StreamFault::Truncated, pos))?;
        let bits = le(block);
        let last = bits & 1 != 0;
        let size = bits >> 3;
        let carried = match (bits >> 1) & 3 {
            1 => 1, // RLE: one byte repeated `size` times
            // A compressed block needs at least its literals header. libzstd's
            // one-shot decoder (LLVM's) refuses an empty one, its streaming
            // decoder skips it: refusing here keeps every decoder with LLVM.
            2 if size == 0 => return Err((StreamFault::Malformed, pos)),
            3 => return Err((StreamFault::Malformed, pos)),
            _ => size,
        };
        // RFC 8878: no block is larger than min(window, 128 KiB). libzstd does
        // not enforce it for raw and RLE blocks, ruzstd does; checking here
        // makes both decoders refuse such frames.
        if size > max_block {
            return Err((StreamFault::Malformed, pos));
        }
        pos = pos.saturating_add(3).saturating_add(carried);
        if pos > len {
            return Err((StreamFault::Truncated, len));
        }
        if last {
            break;
        }
    }
    if header.has_checksum {
        pos = pos.saturating_add(4);
        if pos > len {
            return Err((StreamFault::Truncated, len));
        }
    }
    Ok(pos)
}

/// A little-endian integer of up to 8 bytes.
fn le(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |n, &b| (n << 8) | u64::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_descriptor_and_content_size_fields() {
        // Not single-segment, window descriptor 0x58 (exponent 11, mantissa 0:
        // 2 MiB), 4-byte content size.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x58, 0x10, 0x27, 0, 0];
        let h = ZstdFrameHeader::parse(&frame).unwrap();
        assert_eq!(h.window_size(), 2 << 20);
        assert_eq!(h.content_size(), Some(10_000));
        assert_eq!(h.header_len(), 10);
        // Single segment, 2-byte content size (stored minus 256).
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x64, 0x00, 0x01];
        let h = ZstdFrameHeader::parse(&frame).unwrap();
        assert_eq!(h.content_size(), Some(512));
        assert_eq!(h.window_size(), 512);
        assert!(h.has_checksum());
    }

    #[test]
    fn walks_blocks_to_the_end_of_the_frame() {
        // Single segment, 1-byte size 5; a raw block of 2 and a last RLE
        // block of 3, then trailing bytes.
        let frame = [
            0x28,
            0xb5,
            0x2f,
            0xfd,
            0x20,
            5, // header
            2 << 3,
            0,
            0,
            b'a',
            b'b', // raw block
            (3 << 3) | 0b011,
            0,
            0,
            b'c', // last block, RLE
            b'x',
            b'y',
        ];
        assert_eq!(frame_len(&frame), Ok(15));
        assert_eq!(frame_len(&frame[..15]), Ok(15));
        assert_eq!(frame_len(&frame[..12]), Err((StreamFault::Truncated, 11)));
        assert_eq!(frame_len(&frame[..13]), Err((StreamFault::Truncated, 11)));
        assert_eq!(frame_len(&frame[..14]), Err((StreamFault::Truncated, 14)));
    }

    #[test]
    fn blocks_larger_than_the_window_are_malformed() {
        // Window 1 KiB (descriptor 0), an RLE block regenerating 2 KiB.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x03, 0x40, 0x00, 0];
        assert_eq!(frame_len(&frame), Err((StreamFault::Malformed, 6)));
    }

    #[test]
    fn empty_compressed_blocks_are_malformed_empty_raw_ones_are_not() {
        // Single segment, content size 0: an empty compressed block (not
        // last), as llvm's one-shot libzstd refuses; then an empty raw one.
        let compressed = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0, 0b100, 0, 0, 0b001, 0, 0];
        assert_eq!(frame_len(&compressed), Err((StreamFault::Malformed, 6)));
        let raw = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0, 0b000, 0, 0, 0b001, 0, 0];
        assert_eq!(frame_len(&raw), Ok(12));
    }

    #[test]
    fn rejects_reserved_blocks_skippable_frames_and_dictionaries() {
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 5, 0b111, 0, 0];
        assert_eq!(frame_len(&frame), Err((StreamFault::Malformed, 6)));
        let skippable = [0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0];
        assert_eq!(
            ZstdFrameHeader::parse(&skippable),
            Err((StreamFault::Unsupported, 0))
        );
        let with_dict = [0x28, 0xb5, 0x2f, 0xfd, 0x21, 7, 5];
        assert_eq!(
            ZstdFrameHeader::parse(&with_dict),
            Err((StreamFault::Unsupported, 5))
        );
    }
}
