//! `ar` archives ("static libraries"), GNU and BSD variants: the container of
//! heterogeneous device archives (`clang-offload-bundler -type=a`).
//!
//! ```text
//! 0    8 B   "!<arch>\n"            ("!<thin>\n" is a thin archive: refused)
//! 8          members, back to back, each starting at an even distance from
//!            the previous one (one '\n' of padding after odd-sized data):
//!   +0   16 B  name       "name/" (GNU), "/123" (GNU, offset into "//"),
//!                         "#1/NN" (BSD: NN name bytes start the data), or a
//!                         special name: "/" and "/SYM64/" (GNU symbol table),
//!                         "//" (GNU long-name table), "__.SYMDEF",
//!                         "__.SYMDEF SORTED", "__.SYMDEF_64" (BSD symbol table)
//!   +16  12 B  mtime      decimal, space-padded
//!   +28   6 B  uid        decimal
//!   +34   6 B  gid        decimal
//!   +40   8 B  mode       octal
//!   +48  10 B  size       decimal: bytes of data after the header
//!   +58   2 B  "`\n"
//!   +60        data
//! ```
//! [`Archive::parse`] checks the magic and reads the symbol table and the
//! long-name table that lead the archive; [`Archive::members`] walks the other
//! members lazily, checking each header as it reaches it. Nothing is copied:
//! names and data are slices of the input, and member data is never read.
//!
//! Member names are bytes taken from the file. They are not paths and must
//! never be joined to a directory: an archive can name a member `../../x` or
//! `/etc/passwd`. This module offers nothing that turns them into paths.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bytes::{range, to_u64, Cursor};
use crate::{Error, ErrorKind, Field, Result};

#[cfg(feature = "alloc")]
mod device_name;
mod symbols;
#[cfg(feature = "alloc")]
mod writer;

#[cfg(feature = "alloc")]
pub use device_name::device_member_name;
pub use symbols::{Symbol, SymbolIter, SymbolTable, SymbolTableFormat};
#[cfg(feature = "alloc")]
pub use writer::{
    check_elf_member, write_archive, write_archive_indexed, ArchiveLayout, MemberSpec, NewMember,
};

/// The magic that starts every (regular) archive.
pub const ARCHIVE_MAGIC: &[u8; 8] = b"!<arch>\n";
/// The magic of a thin archive, whose members point to files outside it.
pub const THIN_ARCHIVE_MAGIC: &[u8; 8] = b"!<thin>\n";
/// The two bytes that end every member header.
pub const HEADER_TERMINATOR: &[u8; 2] = b"`\n";

/// A member header as stored: ASCII fields padded with spaces.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct MemberHeader {
    /// The name, or a reference to where the name is.
    pub name: [u8; 16],
    /// Modification time, decimal seconds since the epoch.
    pub mtime: [u8; 12],
    /// Owner ID, decimal.
    pub uid: [u8; 6],
    /// Group ID, decimal.
    pub gid: [u8; 6],
    /// File mode, octal.
    pub mode: [u8; 8],
    /// Size of the data after the header, decimal.
    pub size: [u8; 10],
    /// [`HEADER_TERMINATOR`].
    pub terminator: [u8; 2],
}
const _: () = assert!(core::mem::size_of::<MemberHeader>() == 60);

const HEADER_SIZE: u64 = 60;
const MAGIC_SIZE: u64 = 8;
const SIZE_FIELD: u64 = 48;
const TERMINATOR_FIELD: u64 = 58;

/// What a member is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberKind {
    /// An archived file.
    Regular,
    /// A symbol table (the archive index).
    SymbolTable(SymbolTableFormat),
    /// The GNU long-name table (`//`).
    LongNames,
}

/// An `ar` archive: the checked magic and leading special members over a
/// borrowed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Archive<'data> {
    data: &'data [u8],
    symbol_table: Option<SymbolTable<'data>>,
    long_names: Option<Member<'data>>,
    coff: bool,
    first_member: u64,
    first_index: u64,
}

/// The long-name table as member names are resolved through it: GNU
/// archives end each name with `/\n`, COFF archives (two `/` symbol tables
/// in front, as Microsoft's and llvm-ar's COFF writers lead with) with a NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LongNameTable<'data> {
    table: &'data [u8],
    coff: bool,
}

/// One member: its resolved name and its data, both borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member<'data> {
    index: u64,
    header_offset: u64,
    header: &'data MemberHeader,
    name: &'data [u8],
    data_offset: u64,
    data: &'data [u8],
    kind: MemberKind,
}

impl<'data> Archive<'data> {
    /// Whether `data` starts with the magic of a regular archive.
    pub fn is_archive(data: &[u8]) -> bool {
        data.starts_with(ARCHIVE_MAGIC)
    }

    /// Checks the magic and reads the symbol table and long-name table that
    /// lead the archive, if any. Other members are read by [`Archive::members`].
    /// A thin archive is [`ErrorKind::ThinArchive`].
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        if !Self::is_archive(data) {
            return Err(if data.starts_with(THIN_ARCHIVE_MAGIC) {
                Error::new(ErrorKind::ThinArchive, 0)
            } else if !data.is_empty() && ARCHIVE_MAGIC.starts_with(data) {
                Error::truncated(Field::ArchiveMagic, MAGIC_SIZE, to_u64(data.len()), 0)
            } else {
                Error::new(ErrorKind::NotAnArchive, 0)
            });
        }
        let mut archive = Archive {
            data,
            symbol_table: None,
            long_names: None,
            coff: false,
            first_member: MAGIC_SIZE,
            first_index: 0,
        };
        // Like LLVM, only the members in front of the first regular one are
        // taken as the index and the name table. A bad one is left for
        // `members()` to report, so that `parse` fails only on the magic.
        while let Some(Ok((member, next))) = read_member(
            data,
            archive.first_member,
            archive.first_index,
            archive.name_table(),
        ) {
            match member.kind {
                MemberKind::Regular => break,
                MemberKind::SymbolTable(format) => {
                    // A second `/` right after the first: a COFF archive.
                    archive.coff |= archive.first_index == 1
                        && format == SymbolTableFormat::Gnu
                        && archive
                            .symbol_table
                            .is_some_and(|t| t.format() == SymbolTableFormat::Gnu);
                    archive
                        .symbol_table
                        .get_or_insert(SymbolTable::new(member, format));
                }
                MemberKind::LongNames => {
                    archive.long_names.get_or_insert(member);
                }
            }
            archive.first_member = next;
            archive.first_index = archive.first_index.saturating_add(1);
        }
        Ok(archive)
    }

    /// The whole input buffer.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The symbol table (archive index) in front of the members, if any.
    pub fn symbol_table(&self) -> Option<SymbolTable<'data>> {
        self.symbol_table
    }

    /// The GNU long-name table (`//`) in front of the members, if any.
    pub fn long_names(&self) -> Option<Member<'data>> {
        self.long_names
    }

    fn name_table(&self) -> Option<LongNameTable<'data>> {
        self.long_names.map(|m| LongNameTable {
            table: m.data,
            coff: self.coff,
        })
    }

    /// Checks that the file does not end right after an odd-sized last
    /// member, without the byte of padding that should follow it.
    /// [`Archive::members`] reads such a member, as LLVM's bundler does when
    /// it unbundles; LLVM's archive reader fails the step past it, which
    /// llvm-ar and `clang-offload-bundler -check-input-archive` report
    /// ("offset to next archive member past the end of the archive").
    pub fn check_final_padding(&self) -> Result<()> {
        let Some(Ok(last)) = self.members().last() else {
            return Ok(());
        };
        let end = last.data_offset.saturating_add(last.size());
        let contents = end.saturating_sub(last.header_offset.saturating_add(HEADER_SIZE));
        if contents % 2 == 1 && end == to_u64(self.data.len()) {
            return Err(Error::truncated(Field::MemberPadding, 1, 0, end).in_entry(last.index));
        }
        Ok(())
    }

    /// The regular members in file order; symbol tables and long-name tables
    /// are skipped. Each header is checked when it is reached; after an error
    /// the iterator ends.
    pub fn members(&self) -> Members<'data> {
        Members {
            data: self.data,
            long_names: self.name_table(),
            offset: self.first_member,
            next_index: self.first_index,
            done: false,
        }
    }
}

impl<'data> Member<'data> {
    /// Position of the member's header among all headers in the file
    /// (symbol and name tables included), from 0.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The name, resolved through the long-name table or the BSD name field.
    /// Bytes, not a path: never join it to a directory.
    pub fn name(&self) -> &'data [u8] {
        self.name
    }

    /// The header as stored, for its mtime, uid, gid and mode fields.
    pub fn header(&self) -> &'data MemberHeader {
        self.header
    }

    /// Offset of the member's 60-byte header in the archive.
    pub fn header_offset(&self) -> u64 {
        self.header_offset
    }

    /// Offset of the member's data (after a BSD name) in the archive.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// The member's data, borrowed from the input (a BSD name excluded).
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// Size of the data in bytes.
    pub fn size(&self) -> u64 {
        to_u64(self.data.len())
    }

    /// What the member is for.
    pub fn kind(&self) -> MemberKind {
        self.kind
    }
}

/// Iterator over an archive's regular members; see [`Archive::members`].
#[derive(Debug, Clone)]
pub struct Members<'data> {
    data: &'data [u8],
    long_names: Option<LongNameTable<'data>>,
    offset: u64,
    next_index: u64,
    done: bool,
}

impl<'data> Iterator for Members<'data> {
    type Item = Result<Member<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let Some(item) = read_member(self.data, self.offset, self.next_index, self.long_names)
            else {
                self.done = true;
                return None;
            };
            self.next_index = self.next_index.saturating_add(1);
            match item {
                Ok((member, next)) => {
                    self.offset = next;
                    if member.kind == MemberKind::Regular {
                        return Some(Ok(member));
                    }
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
        None
    }
}

/// Reads the member whose header is at `offset`, or `None` at the end of the
/// archive. Returns the member and where the next header starts.
fn read_member<'data>(
    data: &'data [u8],
    offset: u64,
    index: u64,
    long_names: Option<LongNameTable<'data>>,
) -> Option<Result<(Member<'data>, u64)>> {
    let start = usize::try_from(offset).ok()?;
    let mut cursor = Cursor::at(data, start);
    if cursor.remaining() == 0 {
        return None;
    }
    let at = |kind, field: u64| Error::new(kind, offset.saturating_add(field)).in_entry(index);
    let Some(header) = cursor.read::<MemberHeader>() else {
        return Some(Err(at(
            ErrorKind::Truncated {
                field: Field::MemberHeader,
                needed: HEADER_SIZE,
                available: to_u64(cursor.remaining()),
            },
            0,
        )));
    };
    Some(
        read_checked_member(data, offset, index, header, long_names)
            .map_err(|(kind, field)| at(kind, field)),
    )
}

/// The part of [`read_member`] after the header is in hand; errors are a
/// kind and the offset of the field at fault from the header.
fn read_checked_member<'data>(
    data: &'data [u8],
    offset: u64,
    index: u64,
    header: &'data MemberHeader,
    long_names: Option<LongNameTable<'data>>,
) -> Result<(Member<'data>, u64), (ErrorKind, u64)> {
    if &header.terminator != HEADER_TERMINATOR {
        return Err((ErrorKind::BadMemberTerminator, TERMINATOR_FIELD));
    }
    let size = parse_decimal(&header.size).ok_or((
        ErrorKind::BadDecimal {
            field: Field::MemberSize,
        },
        SIZE_FIELD,
    ))?;
    let len = to_u64(data.len());
    let header_end = offset.saturating_add(HEADER_SIZE);
    let contents = range(data, header_end, size).ok_or((
        ErrorKind::MemberOutOfBounds {
            offset: header_end,
            size,
            len,
        },
        SIZE_FIELD,
    ))?;
    let (name, kind, name_len) = resolve_name(header, contents, long_names)?;
    let data_offset = header_end.saturating_add(name_len);
    let member_data = contents
        .get(usize::try_from(name_len).unwrap_or(usize::MAX)..)
        .unwrap_or_default();
    // A missing padding byte after the last member is read, as LLVM's
    // bundler reads it (see `Archive::check_final_padding`).
    let next = header_end
        .saturating_add(size)
        .saturating_add(size % 2)
        .min(len);
    Ok((
        Member {
            index,
            header_offset: offset,
            header,
            name,
            data_offset,
            data: member_data,
            kind,
        },
        next,
    ))
}

/// The member's name, its kind and how many bytes of its contents the name
/// takes (BSD names only).
fn resolve_name<'data>(
    header: &'data MemberHeader,
    contents: &'data [u8],
    long_names: Option<LongNameTable<'data>>,
) -> Result<(&'data [u8], MemberKind, u64), (ErrorKind, u64)> {
    let field: &'data [u8] = &header.name;
    if let Some(digits) = field.strip_prefix(b"#1/") {
        let name_len = parse_decimal(digits).ok_or((
            ErrorKind::BadDecimal {
                field: Field::NameLength,
            },
            3,
        ))?;
        let size = to_u64(contents.len());
        let name = range(contents, 0, name_len).ok_or((
            ErrorKind::BsdNameOutOfBounds {
                len: name_len,
                size,
            },
            3,
        ))?;
        let name = trim_end(name, 0);
        let kind = match name {
            b"__.SYMDEF" | b"__.SYMDEF SORTED" => MemberKind::SymbolTable(SymbolTableFormat::Bsd),
            b"__.SYMDEF_64" | b"__.SYMDEF_64 SORTED" => {
                MemberKind::SymbolTable(SymbolTableFormat::Bsd64)
            }
            _ => MemberKind::Regular,
        };
        return Ok((name, kind, name_len));
    }
    if let Some(rest) = field.strip_prefix(b"/") {
        let word = split_at_byte(rest, b' ');
        let kind = match word {
            b"" => MemberKind::SymbolTable(SymbolTableFormat::Gnu),
            b"/" => MemberKind::LongNames,
            b"SYM64/" => MemberKind::SymbolTable(SymbolTableFormat::Gnu64),
            _ => {
                let name = long_name(rest, long_names)?;
                return Ok((name, MemberKind::Regular, 0));
            }
        };
        return Ok((
            field.get(..word.len().saturating_add(1)).unwrap_or(field),
            kind,
            0,
        ));
    }
    // A short name ends at its first '/' (GNU), else at trailing spaces (BSD).
    // Only the space-padded BSD spelling of `__.SYMDEF` is an index: `__.SYMDEF/`
    // is a GNU member of that name.
    let name = split_at_byte(field, b'/');
    if name.len() == field.len() {
        let name = trim_end(name, b' ');
        let kind = match name {
            b"__.SYMDEF" | b"__.SYMDEF SORTED" => MemberKind::SymbolTable(SymbolTableFormat::Bsd),
            _ => MemberKind::Regular,
        };
        return Ok((name, kind, 0));
    }
    if field.first() == Some(&b'#') {
        // LLVM reads names starting with '#' up to a space, then drops a final '/'.
        let word = split_at_byte(field, b' ');
        return Ok((
            word.strip_suffix(b"/").unwrap_or(word),
            MemberKind::Regular,
            0,
        ));
    }
    Ok((name, MemberKind::Regular, 0))
}

/// Resolves `/123` (with `digits` the bytes after the '/') through the `//`
/// table: the name runs from the offset to the next "/\n".
fn long_name<'data>(
    digits: &[u8],
    long_names: Option<LongNameTable<'data>>,
) -> Result<&'data [u8], (ErrorKind, u64)> {
    let offset = parse_decimal(digits).ok_or((
        ErrorKind::BadDecimal {
            field: Field::LongNameOffset,
        },
        1,
    ))?;
    let names = long_names.ok_or((ErrorKind::MissingLongNameTable { offset }, 1))?;
    let table = names.table;
    let len = to_u64(table.len());
    let tail = usize::try_from(offset)
        .ok()
        .and_then(|start| table.get(start..))
        .filter(|tail| !tail.is_empty())
        .ok_or((ErrorKind::LongNameOutOfBounds { offset, len }, 1))?;
    let name = if names.coff {
        memchr::memchr(0, tail).and_then(|end| tail.get(..end))
    } else {
        memchr::memchr(b'\n', tail)
            .and_then(|end| tail.get(..end))
            .and_then(|line| line.strip_suffix(b"/"))
    };
    name.ok_or((ErrorKind::UnterminatedLongName { offset }, 1))
}

/// A decimal header field: digits followed only by spaces, at least one
/// digit, and a value that fits in 64 bits.
fn parse_decimal(field: &[u8]) -> Option<u64> {
    let digits = trim_end(field, b' ');
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |value, &byte| {
        let digit = u64::from(byte.checked_sub(b'0').filter(|d| *d < 10)?);
        value.checked_mul(10)?.checked_add(digit)
    })
}

fn trim_end(bytes: &[u8], pad: u8) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|&b| b != pad)
        .map_or(0, |last| last.saturating_add(1));
    bytes.get(..end).unwrap_or_default()
}

fn split_at_byte(bytes: &[u8], stop: u8) -> &[u8] {
    let end = memchr::memchr(stop, bytes).unwrap_or(bytes.len());
    bytes.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_fields() {
        assert_eq!(parse_decimal(b"644     "), Some(644));
        assert_eq!(parse_decimal(b"0"), Some(0));
        assert_eq!(parse_decimal(b"          "), None);
        assert_eq!(parse_decimal(b" 12"), None);
        assert_eq!(parse_decimal(b"1 2"), None);
        assert_eq!(parse_decimal(b"12a"), None);
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b"99999999999999999999999"), None);
    }

    #[test]
    fn trimming() {
        assert_eq!(trim_end(b"ab  ", b' '), b"ab");
        assert_eq!(trim_end(b"   ", b' '), b"");
        assert_eq!(split_at_byte(b"a/b", b'/'), b"a");
        assert_eq!(split_at_byte(b"ab", b'/'), b"ab");
    }
}
