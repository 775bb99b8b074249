//! ELF string tables laid out the way LLVM's `StringTableBuilder` lays them
//! out, so that a rebuilt table matches what clang and llvm-objcopy write.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::bytes::grow;
use crate::{Error, ErrorKind, Result};

/// A string table and where each of its strings starts.
#[derive(Debug)]
pub(crate) struct StringTable<'a> {
    bytes: Vec<u8>,
    offsets: BTreeMap<&'a [u8], u32>,
}

impl<'a> StringTable<'a> {
    /// Lays out the distinct strings: sorted so that each string comes right
    /// after the strings it is a suffix of (descending, compared from the last
    /// byte), each stored once, and a suffix of the string stored just before it
    /// pointing into that string. The table starts with a NUL, where the empty
    /// string lives.
    pub(crate) fn build(strings: impl IntoIterator<Item = &'a [u8]>) -> Result<Self> {
        let sorted = sorted(strings.into_iter().collect());
        Self::lay_out(1, &[sorted])
    }

    /// A COFF string table, as LLVM's object writers build one: a 4-byte size
    /// field (which counts itself), then the long section names (first, so
    /// that their offsets stay short enough for a section header), then the
    /// symbol names, each group sorted as [`build`](Self::build) sorts; a
    /// string in both is a section name.
    pub(crate) fn build_coff(sections: Vec<&'a [u8]>, symbols: Vec<&'a [u8]>) -> Result<Self> {
        let sections = sorted(sections);
        let symbols = sorted(
            symbols
                .into_iter()
                .filter(|s| sections.binary_search_by(|t| descending(t, s)).is_err())
                .collect(),
        );
        let mut table = Self::lay_out(4, &[sections, symbols])?;
        let size = u32::try_from(table.bytes.len())
            .map_err(|_| Error::new(ErrorKind::LayoutOverflow, 0))?;
        if let Some(field) = table.bytes.get_mut(..4) {
            field.copy_from_slice(&size.to_le_bytes());
        }
        Ok(table)
    }

    /// Stores the groups one after the other from offset `start`, a string
    /// that ends the one stored just before it (across groups too) pointing
    /// into that one.
    fn lay_out(start: usize, groups: &[Vec<&'a [u8]>]) -> Result<Self> {
        let overflow = || Error::new(ErrorKind::LayoutOverflow, 0);
        let mut offsets = BTreeMap::new();
        let mut size = start;
        let mut previous: &[u8] = &[];
        for s in groups.iter().flatten() {
            let offset = if previous.ends_with(s) {
                // The string and its NUL end where the previous one's do.
                size.checked_sub(s.len()).and_then(|n| n.checked_sub(1))
            } else {
                let at = size;
                size = size
                    .checked_add(s.len())
                    .and_then(|n| n.checked_add(1))
                    .ok_or_else(overflow)?;
                previous = s;
                Some(at)
            };
            let offset = offset
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(overflow)?;
            offsets.insert(*s, offset);
        }
        u32::try_from(size).map_err(|_| overflow())?;
        let mut bytes = Vec::new();
        grow(&mut bytes, size)?;
        for (s, &offset) in &offsets {
            let start = usize::try_from(offset).map_err(|_| overflow())?;
            let end = start.checked_add(s.len()).ok_or_else(overflow)?;
            if let Some(slot) = bytes.get_mut(start..end) {
                slot.copy_from_slice(s);
            }
        }
        Ok(StringTable { bytes, offsets })
    }

    /// Where `s` starts; the empty string (and any string not added) is at 0.
    pub(crate) fn offset(&self, s: &[u8]) -> u32 {
        self.offsets.get(s).copied().unwrap_or(0)
    }

    /// The table's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The distinct non-empty strings, in the order LLVM's `StringTableBuilder`
/// stores them: descending, compared from the last byte, so that a string
/// comes right after the strings it is a suffix of.
fn sorted(mut strings: Vec<&[u8]>) -> Vec<&[u8]> {
    strings.retain(|s| !s.is_empty());
    strings.sort_unstable_by(|a, b| descending(a, b));
    strings.dedup();
    strings
}

fn descending(a: &[u8], b: &[u8]) -> core::cmp::Ordering {
    b.iter().rev().cmp(a.iter().rev())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_share_storage_as_in_llvm() {
        let names: [&[u8]; 5] = [b".text", b".rela.text", b".data", b"", b".strtab"];
        let table = StringTable::build(names).unwrap();
        let off = |s: &[u8]| usize::try_from(table.offset(s)).unwrap();
        let (rela, text) = (off(b".rela.text"), off(b".text"));
        assert_eq!(text, rela + 5);
        assert_eq!(off(b""), 0);
        let bytes = table.bytes();
        assert_eq!(bytes[0], 0);
        assert_eq!(&bytes[rela..rela + 11], b".rela.text\0");
        // Sorted descending from the last byte: ".rela.text" (t) before
        // ".strtab" (b) before ".data" (a).
        assert_eq!(&bytes[1..], b".rela.text\0.strtab\0.data\0");
    }

    #[test]
    fn coff_tables_put_section_names_first() {
        let sections: Vec<&[u8]> = alloc::vec![b".hip_fatbin", b".llvm_addrsig"];
        let symbols: Vec<&[u8]> = alloc::vec![b"name_y", b".hip_fatbin", b"symbol_name_y"];
        let table = StringTable::build_coff(sections, symbols).unwrap();
        assert_eq!(
            table.bytes(),
            b"\x2c\0\0\0.hip_fatbin\0.llvm_addrsig\0symbol_name_y\0"
        );
        assert_eq!(table.offset(b".hip_fatbin"), 4);
        assert_eq!(table.offset(b"symbol_name_y"), 30);
        assert_eq!(table.offset(b"name_y"), 37);
    }
}
