//! Containers back to back, as in a linked `.hip_fatbin` section (one bundle
//! or compressed bundle per translation unit, each usually 4096-aligned with
//! zero padding in between) or a linked `.llvm.offloading` section (one
//! OffloadBinary per object, 8-aligned).
//!
//! The walk (`back_to_back`'s) moves by each container's own
//! extent (a compressed bundle's total size, a bundle's furthest payload, an
//! OffloadBinary's size, or for a version 1 compressed bundle the end of its
//! stream) and then over zero padding. It never searches for the next magic:
//! compressed bytes can contain `CCOB`.

use crate::back_to_back::BackToBack;
use crate::{Bundle, CompressedBundle, Error, ErrorKind, Field, FileKind, OffloadBinary, Result};

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

    /// Its kind, as [`FileKind::detect`] names the bytes it starts with.
    pub fn file_kind(&self) -> FileKind {
        match self {
            Container::Bundle(_) => FileKind::Bundle,
            Container::Compressed(_) => FileKind::CompressedBundle,
            Container::OffloadBinary(_) => FileKind::OffloadBinary,
        }
    }
}

/// Iterator over the containers in a buffer, each with its offset. After an
/// error (a damaged container, or bytes that start none) it ends: with no
/// extent to go by, the next boundary is unknown.
#[derive(Debug, Clone)]
pub struct Containers<'data>(BackToBack<'data, Container<'data>>);

impl<'data> Containers<'data> {
    /// Walks the containers in `data`, skipping zero padding around them.
    pub fn new(data: &'data [u8]) -> Self {
        Self::at(data, 0)
    }

    /// Walks the containers at or after offset `pos` of `data`; offsets stay
    /// relative to the start of `data`.
    pub fn at(data: &'data [u8], pos: u64) -> Self {
        Containers(BackToBack::at(data, pos, parse_container, |c| {
            c.data().len()
        }))
    }
}

/// Parses the container at the start of `data`, cut to its own extent: a
/// bundle ends at its furthest payload, a compressed bundle at its total size
/// (version 1: at the end of its stream), an OffloadBinary at its size.
pub fn parse_container(data: &[u8]) -> Result<Container<'_>> {
    if CompressedBundle::is_compressed(data) {
        CompressedBundle::parse_to_extent(data).map(Container::Compressed)
    } else if Bundle::is_bundle(data) {
        Bundle::parse_to_extent(data).map(Container::Bundle)
    } else if OffloadBinary::is_offload_binary(data) {
        OffloadBinary::parse(data).map(Container::OffloadBinary)
    } else {
        Err(Error::new(ErrorKind::UnknownContainer, 0))
    }
}

impl<'data> Iterator for Containers<'data> {
    type Item = Result<(u64, Container<'data>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// How far a container extends, as far as a prefix of it tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The container ends this many bytes after its start.
    Known(u64),
    /// The header continues past the prefix: read at least this many bytes
    /// and ask again.
    NeedAtLeast(u64),
    /// The header does not say (a version 1 compressed bundle, whose end is
    /// the end of its compressed stream).
    Unknown,
}

/// The extent of the container starting at the start of `prefix`, read from
/// its header alone: for a reader given a pointer and no length (as
/// `hipModuleLoadData` is), which must not read past the container. Only
/// header bytes are read; a bundle's descriptors are read in order, and the
/// answer may be to read more first. The header's own fields are checked
/// (magic, version, a bundle payload end that overflows); everything else is
/// for the parser once the extent is known.
pub fn declared_extent(prefix: &[u8]) -> Result<Extent> {
    // Too short to tell which magic: ask for enough of the longest one.
    let magics: [&[u8]; 3] = [
        crate::bundle::BUNDLE_MAGIC,
        crate::compressed::COMPRESSED_MAGIC,
        crate::offload_binary::OFFLOAD_BINARY_MAGIC,
    ];
    if magics
        .iter()
        .any(|m| prefix.len() < m.len() && m.starts_with(prefix))
    {
        return Ok(Extent::NeedAtLeast(32));
    }
    if CompressedBundle::is_compressed(prefix) {
        return compressed_extent(prefix);
    }
    if OffloadBinary::is_offload_binary(prefix) {
        // The header is 32 bytes up to version 2 (a binary may be those 32
        // bytes alone) and 40 from version 3: the 32 bytes every version
        // starts with say which, and a header cut short asks for its own
        // length.
        return match OffloadBinary::declared_size(prefix) {
            Err(e) => match e.kind() {
                ErrorKind::Truncated {
                    field: Field::OffloadBinaryHeader,
                    needed,
                    ..
                } => Ok(Extent::NeedAtLeast(needed)),
                _ => Err(e),
            },
            size => size.map(Extent::Known),
        };
    }
    if Bundle::is_bundle(prefix) {
        return bundle_extent(prefix);
    }
    Err(Error::new(ErrorKind::UnknownContainer, 0))
}

/// A compressed bundle's total size (versions 2 and 3), checked against its
/// header length.
fn compressed_extent(prefix: &[u8]) -> Result<Extent> {
    let field = |at: usize, len: usize| -> Option<u64> {
        let bytes = prefix.get(at..at.checked_add(len)?)?;
        let mut raw = [0u8; 8];
        raw.get_mut(..len)?.copy_from_slice(bytes);
        Some(u64::from_le_bytes(raw))
    };
    let Some(version) = field(4, 2) else {
        return Ok(Extent::NeedAtLeast(6));
    };
    let (total, header_len) = match version {
        1 => return Ok(Extent::Unknown),
        2 => (field(8, 4), 24),
        3 => (field(8, 8), 32),
        _ => {
            let version = u16::try_from(version).unwrap_or(u16::MAX);
            return Err(Error::new(ErrorKind::UnsupportedVersion { version }, 4));
        }
    };
    match total {
        None => Ok(Extent::NeedAtLeast(16)),
        Some(total) if total < header_len => {
            Err(Error::new(ErrorKind::BadTotalSize { total, header_len }, 8))
        }
        Some(total) => Ok(Extent::Known(total)),
    }
}

/// A bundle's extent from its descriptors: the end of the furthest payload or
/// of the header, whichever is later.
fn bundle_extent(prefix: &[u8]) -> Result<Extent> {
    use crate::bundle::{BundleEntryDescriptor, BundleHeader};
    use crate::bytes::Cursor;
    let mut cursor = Cursor::at(prefix, 0);
    let Some(header) = cursor.read::<BundleHeader>() else {
        return Ok(Extent::NeedAtLeast(32));
    };
    let mut furthest = cursor.offset();
    for _ in 0..header.entry_count.get() {
        let at = cursor.offset();
        let Some(descriptor) = cursor.read::<BundleEntryDescriptor>() else {
            return Ok(Extent::NeedAtLeast(at.saturating_add(24)));
        };
        let id_len = descriptor.id_len.get();
        if cursor.read_bytes(id_len).is_none() {
            let need = cursor.offset().checked_add(id_len).ok_or(Error::new(
                ErrorKind::IdOutOfBounds {
                    len: id_len,
                    available: 0,
                },
                at.saturating_add(16),
            ))?;
            return Ok(Extent::NeedAtLeast(need));
        }
        let (offset, size) = (descriptor.offset.get(), descriptor.size.get());
        let end = offset
            .checked_add(size)
            .ok_or(Error::new(ErrorKind::PayloadOverflow { offset, size }, at))?;
        furthest = furthest.max(end);
    }
    Ok(Extent::Known(furthest.max(cursor.offset())))
}
