//! Writing binary bundles byte-identical to clang-offload-bundler's.

use alloc::vec::Vec;

use zerocopy::IntoBytes;

use super::{BundleEntryDescriptor, BundleHeader, BUNDLE_MAGIC, DESCRIPTOR_SIZE, HEADER_SIZE};
use crate::bytes::{reserve, to_u64};
use crate::{Error, ErrorKind, Result};

/// Where everything goes in a bundle about to be written: the header bytes and
/// each payload's offset. Payloads can then be streamed in after the header,
/// each preceded by zeros up to its offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleLayout {
    header: Vec<u8>,
    offsets: Vec<u64>,
    total_size: u64,
}

impl BundleLayout {
    /// Lays out entries given as (ID, payload size), in order, the way the
    /// bundler does: the first payload at the header's end rounded up to
    /// `align`, each next one at the previous end rounded up to `align`, no
    /// padding after the last. `align` need not be a power of two; 0 is an
    /// error.
    pub fn new<'a, I>(entries: I, align: u64) -> Result<Self>
    where
        I: IntoIterator<Item = (&'a [u8], u64)>,
        I::IntoIter: Clone,
    {
        if align == 0 {
            return Err(Error::new(ErrorKind::ZeroAlignment, 0));
        }
        let overflow = || Error::new(ErrorKind::LayoutOverflow, 0);
        let entries = entries.into_iter();
        let mut header_len = HEADER_SIZE;
        let mut count = 0u64;
        for (id, _) in entries.clone() {
            header_len = header_len
                .checked_add(DESCRIPTOR_SIZE)
                .and_then(|n| n.checked_add(to_u64(id.len())))
                .ok_or_else(overflow)?;
            count = count.checked_add(1).ok_or_else(overflow)?;
        }
        let mut header = reserve(header_len)?;
        header.extend_from_slice(
            BundleHeader {
                magic: *BUNDLE_MAGIC,
                entry_count: count.into(),
            }
            .as_bytes(),
        );
        let mut offsets = Vec::new();
        let mut end = header_len;
        for (id, size) in entries {
            let offset = align_to(end, align).ok_or_else(overflow)?;
            end = offset.checked_add(size).ok_or_else(overflow)?;
            let descriptor = BundleEntryDescriptor {
                offset: offset.into(),
                size: size.into(),
                id_len: to_u64(id.len()).into(),
            };
            header.extend_from_slice(descriptor.as_bytes());
            header.extend_from_slice(id);
            offsets.push(offset);
        }
        Ok(BundleLayout {
            header,
            offsets,
            total_size: end,
        })
    }

    /// The header: magic, count and descriptors.
    pub fn header(&self) -> &[u8] {
        &self.header
    }

    /// Each payload's offset, in entry order.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The size of the whole bundle.
    pub fn total_size(&self) -> u64 {
        self.total_size
    }
}

fn align_to(value: u64, align: u64) -> Option<u64> {
    let rem = value.checked_rem(align)?;
    if rem == 0 {
        Some(value)
    } else {
        value.checked_add(align.checked_sub(rem)?)
    }
}

/// Writes a whole bundle for `(ID, payload)` pairs into memory; see
/// [`BundleLayout::new`] for the layout rules. IDs are written as given: use
/// [`crate::id::normalize_entry_id`] first to get the bundler's IDs.
pub fn write_bundle(entries: &[(&[u8], &[u8])], align: u64) -> Result<Vec<u8>> {
    let layout = BundleLayout::new(entries.iter().map(|(id, p)| (*id, to_u64(p.len()))), align)?;
    let mut out = reserve(layout.total_size())?;
    out.extend_from_slice(layout.header());
    for ((_, payload), &offset) in entries.iter().zip(layout.offsets()) {
        let offset =
            usize::try_from(offset).map_err(|_| Error::new(ErrorKind::LayoutOverflow, 0))?;
        out.resize(offset, 0);
        out.extend_from_slice(payload);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_to_handles_non_powers_of_two() {
        assert_eq!(align_to(10, 3), Some(12));
        assert_eq!(align_to(12, 3), Some(12));
        assert_eq!(align_to(0, 4096), Some(0));
        assert_eq!(align_to(u64::MAX, 2), None);
        assert_eq!(align_to(5, 0), None);
    }
}
