//! The one place that does offset arithmetic on untrusted input: a bounded
//! cursor and checked ranges. Every format reads through it.

use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// Widens a length or position to the `u64` that offsets in files use.
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The `size` bytes at `offset`, or `None` if any of them lie outside `data`.
pub(crate) fn range(data: &[u8], offset: u64, size: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(size).ok()?)?;
    data.get(start..end)
}

/// Where `part` starts in `whole`, if it is a slice of it (a view a reader
/// handed out, placed back in the buffer it was read from).
#[cfg(feature = "alloc")]
pub fn offset_in(whole: &[u8], part: &[u8]) -> Option<u64> {
    // Addresses only, compared and subtracted: no pointer is made from them.
    #[allow(clippy::as_conversions)]
    let (start, at) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    let offset = at.checked_sub(start)?;
    (offset.checked_add(part.len())? <= whole.len()).then(|| to_u64(offset))
}

/// A read position inside a buffer that can only move forward and never past
/// the end.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'data> {
    data: &'data [u8],
    pos: usize,
}

impl<'data> Cursor<'data> {
    pub(crate) fn at(data: &'data [u8], pos: usize) -> Self {
        Cursor {
            data,
            pos: pos.min(data.len()),
        }
    }

    /// The current position as a file offset.
    pub(crate) fn offset(&self) -> u64 {
        to_u64(self.pos)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Reads a fixed-layout record, or returns `None` (without moving) if it
    /// does not fit.
    pub(crate) fn read<T>(&mut self) -> Option<&'data T>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let rest = self.data.get(self.pos..)?;
        let (value, _) = T::ref_from_prefix(rest).ok()?;
        self.pos = self.pos.checked_add(core::mem::size_of::<T>())?;
        Some(value)
    }

    /// Reads `len` bytes, or returns `None` (without moving) if they do not fit.
    pub(crate) fn read_bytes(&mut self, len: u64) -> Option<&'data [u8]> {
        let bytes = range(self.data, self.offset(), len)?;
        self.pos = self.pos.checked_add(bytes.len())?;
        Some(bytes)
    }

    /// Moves to the end so that every later read fails: used after an error so
    /// an iterator cannot spin on a bad record.
    pub(crate) fn finish(&mut self) {
        self.pos = self.data.len();
    }
}

/// An empty `Vec` with room for exactly `len` bytes, or an `OutOfMemory`
/// error: every writer sizes its output before filling it and must not abort.
#[cfg(feature = "alloc")]
pub(crate) fn reserve(len: u64) -> crate::Result<alloc::vec::Vec<u8>> {
    let mut out = alloc::vec::Vec::new();
    out.try_reserve_exact(to_usize(len)?)
        .map_err(|_| out_of_memory(len))?;
    Ok(out)
}

#[cfg(feature = "alloc")]
fn to_usize(len: u64) -> crate::Result<usize> {
    usize::try_from(len).map_err(|_| out_of_memory(len))
}

#[cfg(feature = "alloc")]
fn out_of_memory(requested: u64) -> crate::Error {
    crate::Error::new(crate::ErrorKind::OutOfMemory { requested }, 0)
}

/// `len` zero bytes to decode into, or an `OutOfMemory` error. The memory
/// comes from the allocator already zeroed (`calloc`: a large buffer is
/// fresh pages, mapped when the decoder first writes them) instead of being
/// filled here, which would fault in every page before decoding starts and
/// cost a fifth of a verified decoding. A fallible reservation of the same
/// size first shows that the memory can be had, so this does not abort.
#[cfg(feature = "alloc")]
pub(crate) fn zeroed(len: u64) -> crate::Result<alloc::vec::Vec<u8>> {
    drop(reserve(len)?);
    Ok(alloc::vec![0; to_usize(len)?])
}

/// Appends `bytes` to `out`, or fails without aborting.
#[cfg(feature = "alloc")]
pub(crate) fn extend(out: &mut alloc::vec::Vec<u8>, bytes: &[u8]) -> crate::Result<()> {
    out.try_reserve(bytes.len())
        .map_err(|_| out_of_memory(to_u64(bytes.len())))?;
    out.extend_from_slice(bytes);
    Ok(())
}

/// Makes `out` `more` bytes longer (zero-filled), or fails without aborting.
#[cfg(feature = "alloc")]
pub(crate) fn grow(out: &mut alloc::vec::Vec<u8>, more: usize) -> crate::Result<()> {
    out.try_reserve_exact(more)
        .map_err(|_| out_of_memory(to_u64(more)))?;
    out.resize(out.len().saturating_add(more), 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_rejects_overflow_and_out_of_bounds() {
        let data = [0u8; 8];
        assert_eq!(range(&data, 2, 3), Some(&data[2..5]));
        assert_eq!(range(&data, 8, 0), Some(&data[8..8]));
        assert_eq!(range(&data, 9, 0), None);
        assert_eq!(range(&data, 4, 5), None);
        assert_eq!(range(&data, u64::MAX, 2), None);
        assert_eq!(range(&data, 1, u64::MAX), None);
    }

    #[test]
    fn cursor_does_not_move_on_failed_reads() {
        let data = [1u8, 2, 3];
        let mut c = Cursor::at(&data, 0);
        assert_eq!(c.read_bytes(4), None);
        assert_eq!(c.offset(), 0);
        assert_eq!(c.read_bytes(2), Some(&data[..2]));
        assert_eq!(c.remaining(), 1);
        c.finish();
        assert_eq!(c.read_bytes(0), Some(&[][..]));
        assert_eq!(c.read_bytes(1), None);
    }
}
