//! Deflate (the method ZIP members use) through miniz_oxide: a member
//! into one buffer of its size, or piece by piece through a window.

use super::ZipFault;
use crate::bytes::to_u64;

/// Inflates the raw deflate stream `stored` into exactly `size` bytes,
/// allocated once (no growing buffer, so a member takes its size in memory
/// and no more), telling `done_with` of each piece of `stored` once
/// consumed.
pub(super) fn inflate(
    stored: &[u8],
    size: u64,
    done_with: &dyn Fn(&[u8]),
) -> Result<alloc::vec::Vec<u8>, ZipFault> {
    let too_large = ZipFault::TooLarge { size, limit: size };
    let len = usize::try_from(size).map_err(|_| too_large)?;
    let mut out = alloc::vec::Vec::new();
    out.try_reserve_exact(len).map_err(|_| too_large)?;
    // Never more than `size` bytes: inflate_each stops past it.
    inflate_each(stored, size, WINDOW, done_with, &mut |piece| {
        out.extend_from_slice(piece);
        true
    })?;
    Ok(out)
}

/// The size of a streamed piece, and of the window the inflater writes
/// into.
pub(super) const WINDOW: usize = 1 << 20;

/// Inflates the raw deflate stream `stored`, which must decode to exactly
/// `size` bytes, through a window of `window` bytes (a power of two, as a
/// wrapping window must be, of 32 KiB or more, deflate's reach): `sink` gets each
/// piece as it is made and returns whether to go on, `done_with` each piece
/// of `stored` once consumed. Whether every byte went by (the sink did not
/// stop).
pub(super) fn inflate_each(
    stored: &[u8],
    size: u64,
    window_len: usize,
    done_with: &dyn Fn(&[u8]),
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<bool, ZipFault> {
    use miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_HAS_MORE_INPUT;
    use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    const PIECE: usize = 4 << 20;
    let mut window = alloc::vec::Vec::new();
    window
        .try_reserve_exact(window_len)
        .map_err(|_| ZipFault::TooLarge { size, limit: size })?;
    window.resize(window_len, 0);
    let mut state = alloc::boxed::Box::new(DecompressorOxide::new());
    let (mut read, mut at, mut total) = (0usize, 0usize, 0u64);
    loop {
        let rest = stored.get(read..).unwrap_or_default();
        let piece = rest.get(..PIECE).unwrap_or(rest);
        let more = if piece.len() < rest.len() {
            TINFL_FLAG_HAS_MORE_INPUT
        } else {
            0
        };
        let (status, used, made) = decompress(&mut state, piece, &mut window, at, more);
        done_with(piece.get(..used).unwrap_or_default());
        read = read.saturating_add(used);
        total = total.saturating_add(to_u64(made));
        if total > size {
            return Err(ZipFault::BadDeflate);
        }
        let out = window.get(at..at.saturating_add(made)).unwrap_or_default();
        if !sink(out) {
            return Ok(false);
        }
        at = at.saturating_add(made) & window_len.saturating_sub(1);
        match status {
            TINFLStatus::Done if total == size => return Ok(true),
            TINFLStatus::HasMoreOutput => {}
            TINFLStatus::NeedsMoreInput if more != 0 => {}
            _ => return Err(ZipFault::BadDeflate),
        }
    }
}
