//! The archive index: which member defines which global symbol.
//!
//! ```text
//! GNU "/"        u32 BE count N, N × u32 BE member header offset, N NUL-terminated names
//! GNU "/SYM64/"  the same with u64 BE count and offsets
//! BSD "__.SYMDEF"     u32 LE ranlib bytes (N × 8), N × (u32 LE name offset, u32 LE
//!                     member header offset), u32 LE string table size, string table
//! BSD "__.SYMDEF_64"  the same with u64 LE fields (N × 16 ranlib bytes)
//! ```

use crate::bytes::{to_u64, Cursor};
use crate::{Error, ErrorKind, Field, Result};

use super::Member;

/// The layout of a symbol table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SymbolTableFormat {
    /// GNU `/`: 32-bit big-endian offsets.
    Gnu,
    /// GNU `/SYM64/`: 64-bit big-endian offsets.
    Gnu64,
    /// BSD `__.SYMDEF` or `__.SYMDEF SORTED`: 32-bit little-endian.
    Bsd,
    /// BSD `__.SYMDEF_64`: 64-bit little-endian.
    Bsd64,
}

impl SymbolTableFormat {
    fn word(self) -> u64 {
        match self {
            SymbolTableFormat::Gnu | SymbolTableFormat::Bsd => 4,
            SymbolTableFormat::Gnu64 | SymbolTableFormat::Bsd64 => 8,
        }
    }

    fn is_bsd(self) -> bool {
        matches!(self, SymbolTableFormat::Bsd | SymbolTableFormat::Bsd64)
    }
}

/// A symbol table member. Its entries are read lazily by
/// [`SymbolTable::symbols`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolTable<'data> {
    member: Member<'data>,
    format: SymbolTableFormat,
}

/// One entry of a symbol table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'data> {
    name: &'data [u8],
    member_offset: u64,
}

impl<'data> Symbol<'data> {
    /// The symbol's name, without its NUL.
    pub fn name(&self) -> &'data [u8] {
        self.name
    }

    /// Offset in the archive of the header of the member that defines it.
    pub fn member_offset(&self) -> u64 {
        self.member_offset
    }
}

impl<'data> SymbolTable<'data> {
    pub(super) fn new(member: Member<'data>, format: SymbolTableFormat) -> Self {
        SymbolTable { member, format }
    }

    /// The member holding the table.
    pub fn member(&self) -> Member<'data> {
        self.member
    }

    /// The table's layout.
    pub fn format(&self) -> SymbolTableFormat {
        self.format
    }

    /// The entries in stored order. The count and the offset array are checked
    /// when the iterator is made (its first item is then the error); names
    /// are read as they are reached. After an error the iterator ends.
    pub fn symbols(&self) -> SymbolIter<'data> {
        match self.layout() {
            Ok((count, entries, names, names_base)) => SymbolIter {
                format: self.format,
                entries,
                names,
                names_offset: self.member.data_offset.saturating_add(names_base),
                remaining: count,
                error: None,
            },
            Err(error) => SymbolIter {
                format: self.format,
                entries: Cursor::at(&[], 0),
                names: Cursor::at(&[], 0),
                names_offset: 0,
                remaining: 0,
                error: Some(error),
            },
        }
    }

    /// The entry count, a cursor over the entries, one over the names, and
    /// where the names cursor's buffer starts in the member's data.
    fn layout(&self) -> Result<(u64, Cursor<'data>, Cursor<'data>, u64)> {
        let data = self.member.data;
        let base = self.member.data_offset;
        let word = self.format.word();
        let at = |kind, offset: u64| Error::new(kind, base.saturating_add(offset));
        let truncated = |field, needed, left: usize, offset: u64| {
            Error::truncated(field, needed, to_u64(left), base.saturating_add(offset))
        };
        let mut cursor = Cursor::at(data, 0);
        let first = read_word(&mut cursor, self.format)
            .ok_or_else(|| truncated(Field::SymbolCount, word, cursor.remaining(), 0))?;
        let entry_size = if self.format.is_bsd() {
            word.saturating_mul(2)
        } else {
            word
        };
        // BSD stores the entries' size in bytes, GNU their count.
        let count = if self.format.is_bsd() {
            first.checked_div(entry_size).unwrap_or(0)
        } else {
            first
        };
        let max = to_u64(cursor.remaining())
            .checked_div(entry_size)
            .unwrap_or(0);
        let entries = cursor
            .read_bytes(count.saturating_mul(entry_size))
            .map(|bytes| Cursor::at(bytes, 0))
            .ok_or_else(|| at(ErrorKind::SymbolCountTooLarge { count, max }, 0))?;
        if !self.format.is_bsd() {
            return Ok((count, entries, cursor, 0));
        }
        let size_offset = cursor.offset();
        let table_size = read_word(&mut cursor, self.format)
            .ok_or_else(|| truncated(Field::SymbolCount, word, cursor.remaining(), size_offset))?;
        let names_offset = cursor.offset();
        let names = cursor.read_bytes(table_size).ok_or_else(|| {
            truncated(
                Field::SymbolNames,
                table_size,
                cursor.remaining(),
                names_offset,
            )
        })?;
        Ok((count, entries, Cursor::at(names, 0), names_offset))
    }
}

fn read_word(cursor: &mut Cursor<'_>, format: SymbolTableFormat) -> Option<u64> {
    let bytes = cursor.read_bytes(format.word())?;
    Some(match (format, bytes) {
        (SymbolTableFormat::Gnu, &[a, b, c, d]) => u64::from(u32::from_be_bytes([a, b, c, d])),
        (SymbolTableFormat::Bsd, &[a, b, c, d]) => u64::from(u32::from_le_bytes([a, b, c, d])),
        (SymbolTableFormat::Gnu64, bytes) => u64::from_be_bytes(bytes.try_into().ok()?),
        (SymbolTableFormat::Bsd64, bytes) => u64::from_le_bytes(bytes.try_into().ok()?),
        _ => return None,
    })
}

/// Iterator over a symbol table's entries; see [`SymbolTable::symbols`].
#[derive(Debug, Clone)]
pub struct SymbolIter<'data> {
    format: SymbolTableFormat,
    entries: Cursor<'data>,
    /// GNU: the names still to read, in order. BSD: the whole string table.
    names: Cursor<'data>,
    /// Offset in the archive of the start of `names`' buffer.
    names_offset: u64,
    remaining: u64,
    error: Option<Error>,
}

impl<'data> SymbolIter<'data> {
    fn read_symbol(&mut self) -> Option<Symbol<'data>> {
        if self.format.is_bsd() {
            let name_offset = read_word(&mut self.entries, self.format)?;
            let member_offset = read_word(&mut self.entries, self.format)?;
            let mut names = self.names.clone();
            names.read_bytes(name_offset)?;
            let name = read_c_string(&mut names)?;
            Some(Symbol {
                name,
                member_offset,
            })
        } else {
            let member_offset = read_word(&mut self.entries, self.format)?;
            let name = read_c_string(&mut self.names)?;
            Some(Symbol {
                name,
                member_offset,
            })
        }
    }
}

fn read_c_string<'data>(cursor: &mut Cursor<'data>) -> Option<&'data [u8]> {
    let rest = cursor.clone().read_bytes(to_u64(cursor.remaining()))?;
    let len = memchr::memchr(0, rest)?;
    let name = cursor.read_bytes(to_u64(len))?;
    cursor.read_bytes(1)?;
    Some(name)
}

impl<'data> Iterator for SymbolIter<'data> {
    type Item = Result<Symbol<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.error.take() {
            return Some(Err(error));
        }
        if self.remaining == 0 {
            return None;
        }
        self.remaining = self.remaining.saturating_sub(1);
        let names_at = self.names_offset.saturating_add(self.names.offset());
        match self.read_symbol() {
            Some(symbol) => Some(Ok(symbol)),
            None => {
                self.remaining = 0;
                Some(Err(Error::new(ErrorKind::SymbolNameOutOfBounds, names_at)))
            }
        }
    }
}
