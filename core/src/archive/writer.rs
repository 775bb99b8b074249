//! Writing GNU archives byte-identical to LLVM 22's `writeArchive` in
//! deterministic mode, as `llvm-ar cr` and `clang-offload-bundler -type=a
//! -unbundle` write them on Linux:
//!
//! - headers: mtime, uid and gid `0`, mode `644`;
//! - names of 16 bytes or more, or containing `/`, go to the `//` table as
//!   `name/\n` (once per distinct name; the table is padded to an even size
//!   with `\n`) and the header names `/<offset>`; others are `name/`;
//! - data is padded to an even size with `\n`;
//! - a symbol table `/` comes first if any member is an object file (a
//!   member with `symbols: Some`): a big-endian u32 count, the header offset
//!   of each symbol's member, the NUL-terminated names, padded to an even
//!   size with NUL; if the objects define no symbol the names are three NULs.
//!   It is `/SYM64/` with u64 fields once the last member's header would
//!   start at or past 4 GiB.

use alloc::vec::Vec;

use super::{ARCHIVE_MAGIC, HEADER_SIZE, HEADER_TERMINATOR, MAGIC_SIZE};
use crate::bitcode::{is_bitcode, BitcodeFileContents};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

/// Largest member LLVM writes: the size field has 10 digits.
const MAX_MEMBER_SIZE: u64 = 9_999_999_999;
/// Where LLVM switches to `/SYM64/` (its `SYM64_THRESHOLD`).
const SYM64_THRESHOLD: u64 = 1 << 32;

/// A member to write: its name, its data and, for an object file, the global
/// symbols it defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewMember<'a> {
    /// The member name, stored as given (no directory is stripped).
    pub name: &'a [u8],
    /// The member's contents.
    pub data: &'a [u8],
    /// `None` for a member that is not an object file (LLVM: not a
    /// `SymbolicFile`); `Some` with the defined global symbols, in the
    /// object's symbol table order, for one that is. LLVM computes these from
    /// ELF, COFF, Mach-O and bitcode files; the caller must.
    pub symbols: Option<&'a [&'a [u8]]>,
}

/// A member to lay out without its data: name, size and symbols as in
/// [`NewMember`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberSpec<'a> {
    /// The member name.
    pub name: &'a [u8],
    /// The size of the member's data.
    pub size: u64,
    /// See [`NewMember::symbols`].
    pub symbols: Option<&'a [&'a [u8]]>,
}

impl<'a> NewMember<'a> {
    /// The member's name, size and symbols.
    pub fn spec(&self) -> MemberSpec<'a> {
        MemberSpec {
            name: self.name,
            size: to_u64(self.data.len()),
            symbols: self.symbols,
        }
    }
}

/// Everything of an archive but the members' data: the bytes in front of
/// the first member (magic, symbol table, `//` table) and each member's
/// header, so that data can be streamed in after its header, followed by
/// one `\n` when its size is odd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveLayout {
    head: Vec<u8>,
    headers: Vec<[u8; 60]>,
    offsets: Vec<u64>,
    total_size: u64,
}

impl ArchiveLayout {
    /// Lays out `members` as LLVM does.
    ///
    /// Names must be non-empty and free of `\n`, symbol names free of NUL
    /// ([`ErrorKind::InvalidMemberName`], [`ErrorKind::InvalidSymbolName`],
    /// naming the member); a member over 9,999,999,999 bytes is
    /// [`ErrorKind::SizeLimitExceeded`].
    pub fn new(members: &[MemberSpec<'_>]) -> Result<Self> {
        Self::with_sym64_threshold(members, SYM64_THRESHOLD)
    }

    /// [`ArchiveLayout::new`] with LLVM's `SYM64_THRESHOLD` environment
    /// variable: the symbol table becomes `/SYM64/` once the last member's
    /// header would start at or past `threshold` (4 GiB by default).
    pub fn with_sym64_threshold(members: &[MemberSpec<'_>], threshold: u64) -> Result<Self> {
        let overflow = || Error::new(ErrorKind::LayoutOverflow, 0);
        let mut names = NameTable::default();
        let mut headers = Vec::new();
        let mut symbol_names = Vec::new();
        let mut symbol_count = 0u64;
        let mut has_object = false;
        for (index, member) in (0u64..).zip(members) {
            let invalid = |kind| Error::new(kind, 0).in_entry(index);
            if member.name.is_empty() || member.name.contains(&b'\n') {
                return Err(invalid(ErrorKind::InvalidMemberName));
            }
            if member.size > MAX_MEMBER_SIZE {
                return Err(invalid(ErrorKind::SizeLimitExceeded {
                    size: member.size,
                    limit: MAX_MEMBER_SIZE,
                }));
            }
            let mut name_field = Vec::new();
            match names.reference(member.name) {
                Some(offset) => {
                    name_field.push(b'/');
                    push_decimal(&mut name_field, offset);
                }
                None => {
                    name_field.extend_from_slice(member.name);
                    name_field.push(b'/');
                }
            }
            headers.push(member_header(&name_field, b"644", member.size).ok_or_else(overflow)?);
            if let Some(symbols) = member.symbols {
                has_object = true;
                for symbol in symbols {
                    if symbol.contains(&0) {
                        return Err(invalid(ErrorKind::InvalidSymbolName));
                    }
                    symbol_names.extend_from_slice(symbol);
                    symbol_names.push(0);
                    symbol_count = symbol_count.checked_add(1).ok_or_else(overflow)?;
                }
            }
        }
        if has_object && symbol_names.is_empty() {
            symbol_names.extend_from_slice(&[0, 0, 0]);
        }
        let name_table = names.finish();

        // Member offsets relative to the end of the head, then the head's size
        // with a 32-bit table, as LLVM decides between `/` and `/SYM64/`.
        let mut relative = Vec::new();
        let mut end = 0u64;
        for member in members {
            relative.push(end);
            end = HEADER_SIZE
                .checked_add(member.size)
                .and_then(|n| n.checked_add(member.size % 2))
                .and_then(|n| n.checked_add(end))
                .ok_or_else(overflow)?;
        }
        let name_table_size = if name_table.is_empty() {
            0
        } else {
            HEADER_SIZE
                .checked_add(to_u64(name_table.len()))
                .ok_or_else(overflow)?
        };
        let head_size = |word: u64| {
            symbol_table_size(word, symbol_count, &symbol_names)
                .and_then(|n| n.checked_add(MAGIC_SIZE + HEADER_SIZE))
                .and_then(|n| n.checked_add(name_table_size))
        };
        let last = relative.last().copied().unwrap_or(0);
        let small = head_size(4).ok_or_else(overflow)?;
        let word = if small.checked_add(last).ok_or_else(overflow)? >= threshold {
            8
        } else {
            4
        };
        let members_start = if symbol_names.is_empty() {
            MAGIC_SIZE
                .checked_add(name_table_size)
                .ok_or_else(overflow)?
        } else {
            head_size(word).ok_or_else(overflow)?
        };

        let mut head = Vec::new();
        head.extend_from_slice(ARCHIVE_MAGIC);
        if !symbol_names.is_empty() {
            let size = symbol_table_size(word, symbol_count, &symbol_names).ok_or_else(overflow)?;
            let name: &[u8] = if word == 8 { b"/SYM64/" } else { b"/" };
            head.extend_from_slice(&member_header(name, b"0", size).ok_or_else(overflow)?);
            push_word(&mut head, word, symbol_count);
            for (member, offset) in members.iter().zip(&relative) {
                let offset = members_start.checked_add(*offset).ok_or_else(overflow)?;
                for _ in member.symbols.unwrap_or_default() {
                    push_word(&mut head, word, offset);
                }
            }
            head.extend_from_slice(&symbol_names);
            if symbol_names.len() % 2 == 1 {
                head.push(0);
            }
        }
        if !name_table.is_empty() {
            head.extend_from_slice(&table_header(to_u64(name_table.len())).ok_or_else(overflow)?);
            head.extend_from_slice(&name_table);
        }
        let offsets = relative
            .iter()
            .map(|offset| members_start.checked_add(*offset))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(overflow)?;
        let total_size = members_start.checked_add(end).ok_or_else(overflow)?;
        Ok(ArchiveLayout {
            head,
            headers,
            offsets,
            total_size,
        })
    }

    /// The magic, the symbol table and the long-name table.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// Each member's 60-byte header, in member order.
    pub fn member_headers(&self) -> &[[u8; 60]] {
        &self.headers
    }

    /// Each member header's offset in the archive.
    pub fn member_offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The size of the whole archive.
    pub fn total_size(&self) -> u64 {
        self.total_size
    }
}

/// Writes a whole GNU archive for `members` into memory; see
/// [`ArchiveLayout::new`] for the rules.
pub fn write_archive(members: &[NewMember<'_>]) -> Result<Vec<u8>> {
    let specs: Vec<MemberSpec<'_>> = members.iter().map(NewMember::spec).collect();
    let layout = ArchiveLayout::new(&specs)?;
    let total = layout.total_size();
    let mut out = crate::bytes::reserve(total)?;
    out.extend_from_slice(layout.head());
    for (member, header) in members.iter().zip(layout.member_headers()) {
        out.extend_from_slice(header);
        out.extend_from_slice(member.data);
        if member.data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    Ok(out)
}

/// Writes a GNU archive of `(name, data)` members with the symbol index
/// LLVM writes: every member that is an ELF file LLVM reads or a COFF object, or LLVM bitcode
/// whose symbol table LLVM 22 takes as it is
/// ([`BitcodeFileContents::current_symtab`]), is indexed by its defined
/// global symbols, in member order; any other member is not an object.
/// Bitcode without such a table is left unindexed: LLVM reads its symbols
/// from the IR, which we do not (docs/differences.md). A member LLVM takes
/// for ELF but cannot open is not indexed ([`check_elf_member`] says why
/// LLVM's writer fails on it).
pub fn write_archive_indexed(members: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    let symbols: Vec<Option<Vec<&[u8]>>> = members
        .iter()
        .map(|(_, data)| object_symbols(data))
        .collect();
    let new: Vec<NewMember> = members
        .iter()
        .zip(&symbols)
        .map(|(&(name, data), symbols)| NewMember {
            name,
            data,
            symbols: symbols.as_deref(),
        })
        .collect();
    write_archive(&new)
}

/// The symbols LLVM's archive writer indexes `data` by, in its symbol
/// table's order, or `None` where it is not an object to LLVM.
///
/// - An ELF file: its defined global symbols, read as LLVM's writer reads
///   them ([`crate::elf::index_symbols`]).
/// - A COFF file: its defined global symbols.
/// - LLVM bitcode: the global, defined, not format-specific symbols of its
///   symbol table when LLVM 22 would take that table as it is
///   ([`BitcodeFileContents::current_symtab`]); none, but an object, when it
///   holds no module (LLVM reads it as an empty IR file). Bitcode without
///   such a table is left unindexed (`None`): LLVM reads its symbols from
///   the IR, which we do not (docs/differences.md); so is bitcode we cannot
///   read, which LLVM does not index either (it warns), and a table with a
///   name holding a NUL (LLVM writes it, and its index then reads wrong).
fn object_symbols(data: &[u8]) -> Option<Vec<&[u8]>> {
    if is_bitcode(data) {
        let contents = BitcodeFileContents::parse(data).ok()?;
        if contents.module_count() == 0 {
            return Some(Vec::new());
        }
        let table = contents.current_symtab().ok()??;
        let names: Vec<&[u8]> = table.defined_global_symbols().collect();
        return (!names.iter().any(|name| name.contains(&0))).then_some(names);
    }
    if crate::coff::CoffFile::is_coff(data) {
        return Some(
            crate::coff::CoffFile::parse(data)
                .ok()?
                .defined_global_symbols()
                .collect(),
        );
    }
    crate::elf::index_symbols(data).ok()
}

/// Fails for a member LLVM's archive writer takes for ELF (the magic and
/// 18 bytes or more) but cannot index, with why: its object reader does not
/// open it (a file header cut short, a section header table past the end),
/// or its symbol table or that table's strings lie outside it
/// ([`crate::elf::index_symbols`]). LLVM then fails the archive.
/// Big-endian files, which this crate does not read, pass.
pub fn check_elf_member(data: &[u8]) -> Result<()> {
    if data.len() < 18 || !crate::elf::ElfFile::is_elf(data) || data.get(5) == Some(&2) {
        return Ok(());
    }
    crate::elf::index_symbols(data).map(drop)
}

/// The `//` table being built: each distinct long name once, as `name/\n`.
#[derive(Default)]
struct NameTable {
    bytes: Vec<u8>,
    entries: Vec<(usize, usize)>,
}

impl NameTable {
    /// The table offset to write for `name`, or `None` if it is short. Two
    /// short names LLVM would write but not read back go to the table too:
    /// `#1` (its `#1/` reads as a BSD name) and one starting with `#` and
    /// holding a space (cut at the space).
    fn reference(&mut self, name: &[u8]) -> Option<u64> {
        let unreadable_short =
            name == b"#1" || (name.first() == Some(&b'#') && name.contains(&b' '));
        if name.len() < 16 && !name.contains(&b'/') && !unreadable_short {
            return None;
        }
        let bytes = &self.bytes;
        let found = self
            .entries
            .iter()
            .find(|&&(start, len)| {
                start.checked_add(len).and_then(|end| bytes.get(start..end)) == Some(name)
            })
            .map(|&(start, _)| start);
        let start = found.unwrap_or_else(|| {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(name);
            self.bytes.extend_from_slice(b"/\n");
            self.entries.push((start, name.len()));
            start
        });
        Some(to_u64(start))
    }

    fn finish(mut self) -> Vec<u8> {
        if self.bytes.len() % 2 == 1 {
            self.bytes.push(b'\n');
        }
        self.bytes
    }
}

/// A member header with LLVM's deterministic mtime, uid and gid (0), or
/// `None` if a field does not fit.
fn member_header(name: &[u8], mode: &[u8], size: u64) -> Option<[u8; 60]> {
    let mut header = Vec::with_capacity(60);
    pad_field(&mut header, name, 16)?;
    pad_field(&mut header, b"0", 12)?;
    pad_field(&mut header, b"0", 6)?;
    pad_field(&mut header, b"0", 6)?;
    pad_field(&mut header, mode, 8)?;
    let mut digits = Vec::new();
    push_decimal(&mut digits, size);
    pad_field(&mut header, &digits, 10)?;
    header.extend_from_slice(HEADER_TERMINATOR);
    header.try_into().ok()
}

/// The `//` header: a blank name and metadata, only the size.
fn table_header(size: u64) -> Option<[u8; 60]> {
    let mut header = Vec::with_capacity(60);
    pad_field(&mut header, b"//", 48)?;
    let mut digits = Vec::new();
    push_decimal(&mut digits, size);
    pad_field(&mut header, &digits, 10)?;
    header.extend_from_slice(HEADER_TERMINATOR);
    header.try_into().ok()
}

fn pad_field(out: &mut Vec<u8>, value: &[u8], width: usize) -> Option<()> {
    let padding = width.checked_sub(value.len())?;
    out.extend_from_slice(value);
    out.resize(out.len().saturating_add(padding), b' ');
    Some(())
}

fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let mut len = 0usize;
    let mut rest = value;
    for slot in digits.iter_mut().rev() {
        *slot = b'0'.saturating_add(u8::try_from(rest % 10).unwrap_or(0));
        rest /= 10;
        len = len.saturating_add(1);
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(
        digits
            .get(digits.len().saturating_sub(len)..)
            .unwrap_or_default(),
    );
}

fn push_word(out: &mut Vec<u8>, word: u64, value: u64) {
    if word == 8 {
        out.extend_from_slice(&value.to_be_bytes());
    } else {
        out.extend_from_slice(&u32::try_from(value).unwrap_or(u32::MAX).to_be_bytes());
    }
}

/// Size of a GNU symbol table's data (count, offsets, names, padding).
fn symbol_table_size(word: u64, count: u64, names: &[u8]) -> Option<u64> {
    let size = word
        .checked_add(count.checked_mul(word)?)?
        .checked_add(to_u64(names.len()))?;
    size.checked_add(size % 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits() {
        for value in [0u64, 7, 10, 644, 9_999_999_999, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, value);
            assert_eq!(out, alloc::format!("{value}").into_bytes());
        }
    }

    #[test]
    fn long_names_are_shared() {
        let mut table = NameTable::default();
        assert_eq!(table.reference(b"short.o"), None);
        assert_eq!(table.reference(b"a-name-of-16-chr"), Some(0));
        assert_eq!(table.reference(b"dir/x"), Some(18));
        assert_eq!(table.reference(b"a-name-of-16-chr"), Some(0));
        assert_eq!(table.reference(b"# x"), Some(25));
        assert_eq!(table.reference(b"#x"), None);
        assert_eq!(table.reference(b"#1"), Some(30));
        assert_eq!(table.finish(), b"a-name-of-16-chr/\ndir/x/\n# x/\n#1/\n");
    }
}
