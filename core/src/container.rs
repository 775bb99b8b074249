//! Containers back to back, as in a linked `.hip_fatbin` section (one bundle
//! or compressed bundle per translation unit, each usually 4096-aligned with
//! zero padding in between) or a linked `.llvm.offloading` section (one
//! OffloadBinary per object, 8-aligned).
//!
//! The walker moves by each container's own extent (a compressed bundle's
//! total size, a bundle's furthest payload, an OffloadBinary's size, or for a
//! version 1 compressed bundle the end of its stream) and then over zero padding. It never searches
//! for the next magic: compressed bytes can contain `CCOB`.

use crate::bytes::to_u64;
use crate::{Bundle, CompressedBundle, Error, ErrorKind, OffloadBinary, Result};

/// One container found in a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container<'data> {
    /// An uncompressed binary bundle.
    Bundle(Bundle<'data>),
    /// A compressed bundle.
    Compressed(CompressedBundle<'data>),
    /// An OffloadBinary.
    OffloadBinary(OffloadBinary<'data>),
}

impl<'data> Container<'data> {
    /// The container's own bytes, from its magic to its end.
    pub fn data(&self) -> &'data [u8] {
        match self {
            Container::Bundle(bundle) => bundle.data(),
            Container::Compressed(compressed) => compressed.data(),
            Container::OffloadBinary(binary) => binary.data(),
        }
    }
}

/// Iterator over the containers in a buffer, each with its offset. After an
/// error (a damaged container, or bytes that start none) it ends: with no
/// extent to go by, the next boundary is unknown.
#[derive(Debug, Clone)]
pub struct Containers<'data> {
    data: &'data [u8],
    pos: usize,
}

impl<'data> Containers<'data> {
    /// Walks the containers in `data`, skipping zero padding around them.
    pub fn new(data: &'data [u8]) -> Self {
        Self::at(data, 0)
    }

    /// Walks the containers at or after offset `pos` of `data`; offsets stay
    /// relative to the start of `data`.
    pub fn at(data: &'data [u8], pos: u64) -> Self {
        Containers {
            data,
            pos: usize::try_from(pos).unwrap_or(usize::MAX),
        }
    }
}

/// Parses the container at the start of `data`, cut to its own extent: a
/// bundle ends at its furthest payload, a compressed bundle at its total size
/// (version 1: at the end of its stream), an OffloadBinary at its size.
pub fn parse_container(data: &[u8]) -> Result<Container<'_>> {
    if CompressedBundle::is_compressed(data) {
        let mut compressed = CompressedBundle::parse(data)?;
        if compressed.total_size().is_none() {
            compressed = compressed.cut_at(compressed.stream_len()?);
        }
        Ok(Container::Compressed(compressed))
    } else if Bundle::is_bundle(data) {
        let bundle = Bundle::parse(data)?;
        let end = bundle.extent();
        Ok(Container::Bundle(Bundle::parse(
            data.get(..end).unwrap_or(data),
        )?))
    } else if OffloadBinary::is_offload_binary(data) {
        Ok(Container::OffloadBinary(OffloadBinary::parse(data)?))
    } else {
        Err(Error::new(ErrorKind::UnknownContainer, 0))
    }
}

impl<'data> Iterator for Containers<'data> {
    type Item = Result<(u64, Container<'data>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.data.get(self.pos..)?;
        let start = self.pos.saturating_add(rest.iter().position(|&b| b != 0)?);
        match parse_container(self.data.get(start..).unwrap_or_default()) {
            Ok(container) => {
                self.pos = start.saturating_add(container.data().len().max(1));
                Some(Ok((to_u64(start), container)))
            }
            Err(error) => {
                self.pos = self.data.len();
                Some(Err(error.shifted(to_u64(start))))
            }
        }
    }
}
