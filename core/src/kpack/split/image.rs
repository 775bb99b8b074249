//! The file as the rewrite goes: the input, patched and less one removed
//! range, then appended bytes; the input itself is never copied until the
//! end ([`Image::finish`]).

use alloc::vec::Vec;

use super::layout::{add, overflow};
use super::{fail, SplitFault};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

/// The file as the rewrite goes: the input (patched, less one removed
/// range) then appended bytes. Offsets are the current file's.
pub(super) struct Image<'a> {
    pub(super) input: &'a [u8],
    /// Writes into the input, at input offsets, in order.
    pub(super) patches: Vec<(u64, Vec<u8>)>,
    pub(super) tail: Vec<u8>,
    /// The removed range: where it was (now where what followed it is), and
    /// its size.
    pub(super) removed: Option<(u64, u64)>,
}

impl<'a> Image<'a> {
    fn input_len(&self) -> u64 {
        to_u64(self.input.len()).saturating_sub(self.removed.map_or(0, |(_, s)| s))
    }

    pub(super) fn len(&self) -> u64 {
        self.input_len().saturating_add(to_u64(self.tail.len()))
    }

    /// The input offset of current offset `at` (in the input part).
    fn original(&self, at: u64) -> u64 {
        match self.removed {
            Some((start, size)) if at >= start => at.saturating_add(size),
            _ => at,
        }
    }

    pub(super) fn write(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let end = add(at, to_u64(bytes.len()))?;
        if end > self.len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        let input_len = self.input_len();
        if at >= input_len {
            let from = usize::try_from(at.saturating_sub(input_len)).map_err(|_| overflow(at))?;
            let to = from.saturating_add(bytes.len());
            self.tail
                .get_mut(from..to)
                .ok_or_else(|| overflow(at))?
                .copy_from_slice(bytes);
            return Ok(());
        }
        if end > input_len
            || self
                .removed
                .is_some_and(|(start, _)| at < start && end > start)
        {
            // Never asked for: a write across the end of the input or the cut.
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        self.patches.push((self.original(at), bytes.to_vec()));
        Ok(())
    }

    pub(super) fn read(&self, at: u64, len: u64) -> Result<Vec<u8>> {
        let end = add(at, len)?;
        if end > self.len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        let mut out = Vec::new();
        let input_len = self.input_len();
        if at < input_len {
            let stop = end.min(input_len);
            if self
                .removed
                .is_some_and(|(start, _)| at < start && stop > start)
            {
                return Err(fail(SplitFault::Unmapped { address: at }, at));
            }
            let from = self.original(at);
            let size = stop.saturating_sub(at);
            let bytes = crate::bytes::range(self.input, from, size).ok_or_else(|| overflow(at))?;
            out.extend_from_slice(bytes);
            for (offset, patch) in &self.patches {
                overlay(&mut out, from, *offset, patch);
            }
        }
        if end > input_len {
            let from = at.max(input_len).saturating_sub(input_len);
            let bytes =
                crate::bytes::range(&self.tail, from, end.saturating_sub(at.max(input_len)))
                    .ok_or_else(|| overflow(at))?;
            out.extend_from_slice(bytes);
        }
        Ok(out)
    }

    pub(super) fn read_u32(&self, at: u64) -> Result<u32> {
        let bytes = self.read(at, 4)?;
        let array: [u8; 4] = bytes.as_slice().try_into().map_err(|_| overflow(at))?;
        Ok(u32::from_le_bytes(array))
    }

    pub(super) fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = self.len();
        crate::bytes::extend(&mut self.tail, bytes)?;
        Ok(at)
    }

    pub(super) fn pad_to(&mut self, offset: u64) -> Result<()> {
        let len = self.len();
        if offset > len {
            let more = usize::try_from(offset.saturating_sub(len)).map_err(|_| overflow(len))?;
            let new_len = self.tail.len().saturating_add(more);
            self.tail.resize(new_len, 0);
        }
        Ok(())
    }

    pub(super) fn remove(&mut self, at: u64, size: u64) -> Result<()> {
        if self.removed.is_some() || add(at, size)? > self.input_len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        self.removed = Some((at, size));
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let len = usize::try_from(self.len()).map_err(|_| overflow(0))?;
        out.try_reserve_exact(len).map_err(|_| {
            Error::new(
                ErrorKind::OutOfMemory {
                    requested: to_u64(len),
                },
                0,
            )
        })?;
        let (cut, size) = self.removed.unwrap_or((to_u64(self.input.len()), 0));
        let before = crate::bytes::range(self.input, 0, cut).ok_or_else(|| overflow(cut))?;
        out.extend_from_slice(before);
        let after = add(cut, size)?;
        let rest = self
            .input
            .get(usize::try_from(after).map_err(|_| overflow(after))?..)
            .unwrap_or_default();
        out.extend_from_slice(rest);
        for (offset, patch) in &self.patches {
            // Patches are at input offsets: move those after the cut down.
            if *offset >= after {
                overlay(&mut out, size, *offset, patch);
            } else if add(*offset, to_u64(patch.len()))? <= cut {
                overlay(&mut out, 0, *offset, patch);
            }
        }
        out.extend_from_slice(&self.tail);
        Ok(out)
    }
}

/// Writes `patch`, at input offset `at`, over `out`, which holds the input
/// from offset `base` on (for `base` > `at`: `out` starts `base` earlier).
fn overlay(out: &mut [u8], base: u64, at: u64, patch: &[u8]) {
    for (i, byte) in patch.iter().enumerate() {
        let Some(place) = at.checked_add(to_u64(i)).and_then(|p| p.checked_sub(base)) else {
            continue;
        };
        if let Some(slot) = usize::try_from(place).ok().and_then(|p| out.get_mut(p)) {
            *slot = *byte;
        }
    }
}
