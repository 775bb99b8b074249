//! The one walk over containers laid back to back, whatever their kind: a
//! linked `.hip_fatbin` (bundles and compressed bundles), `.llvm.offloading`
//! (OffloadBinaries) or `.nv_fatbin` (CUDA fat binaries), each container
//! followed by zero padding. The walk moves by each container's own extent
//! and never searches for the next magic (compressed bytes can hold any).
//! It knows no format: the caller gives the parser and the extent.

use crate::bytes::to_u64;
use crate::Result;

/// Iterator over the containers of one kind in a buffer, each with its
/// offset, skipping zero bytes between and after them. After an error (a
/// damaged container, or bytes that start none) it ends: with no extent to
/// go by, the next boundary is unknown. Errors are located from the start of
/// the buffer.
#[derive(Debug, Clone)]
pub(crate) struct BackToBack<'data, T> {
    data: &'data [u8],
    pos: usize,
    /// Parses the container at the start of a slice, cut to its extent.
    parse: fn(&'data [u8]) -> Result<T>,
    /// The container's length in bytes, from its start.
    len: fn(&T) -> usize,
}

impl<'data, T> BackToBack<'data, T> {
    /// Walks the containers at or after offset `pos` of `data`; offsets stay
    /// relative to the start of `data`.
    pub(crate) fn at(
        data: &'data [u8],
        pos: u64,
        parse: fn(&'data [u8]) -> Result<T>,
        len: fn(&T) -> usize,
    ) -> Self {
        BackToBack {
            data,
            pos: usize::try_from(pos).unwrap_or(usize::MAX),
            parse,
            len,
        }
    }
}

impl<'data, T> Iterator for BackToBack<'data, T> {
    type Item = Result<(u64, T)>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.data.get(self.pos..)?;
        let start = self.pos.saturating_add(rest.iter().position(|&b| b != 0)?);
        match (self.parse)(self.data.get(start..).unwrap_or_default()) {
            Ok(container) => {
                // An empty container would hold the walk in place.
                self.pos = start.saturating_add((self.len)(&container).max(1));
                Some(Ok((to_u64(start), container)))
            }
            Err(error) => {
                self.pos = self.data.len();
                Some(Err(error.shifted(to_u64(start))))
            }
        }
    }
}
