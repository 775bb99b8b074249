//! LLVM's symbol table for the IR of a bitcode file (`irsymtab`): the
//! symbols of every module, in the order of LLVM's `ModuleSymbolTable`
//! (functions, global variables, aliases and ifuncs, then the symbols
//! of module-level assembly), with the flags a linker or an archiver
//! needs. Its strings live in the file's string table.
//!
//! [`Reader::parse`] checks the header, the module and symbol ranges and
//! every symbol's name once; afterwards symbols are read without checks.

use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use super::fault::{malformed, BitcodeFault};
use crate::bytes::{range, to_u64};
use crate::{Error, Field, Result};

/// The producer prefix of the tables LLVM 22 writes (`LLVM_VERSION_STRING`,
/// `22.1.8` for Debian's 22.1.8, perhaps followed by a revision).
pub const LLVM_22_PRODUCER_PREFIX: &[u8] = b"22.";

/// Whether a table of this version and producer is what LLVM 22 would
/// use without rebuilding it from the IR; see [`Reader::is_current`].
pub(super) fn is_current(version: u32, producer: &[u8]) -> bool {
    version == storage::Header::CURRENT_VERSION && producer.starts_with(LLVM_22_PRODUCER_PREFIX)
}

pub mod storage {
    //! The symbol table's on-disk records (all fields little-endian
    //! `u32`), named as LLVM's `irsymtab::storage` names them.

    use zerocopy::little_endian::U32;
    use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

    /// A string of the string table.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
    )]
    #[repr(C)]
    pub struct Str {
        /// Offset in the string table.
        pub offset: U32,
        /// Size in bytes (no NUL).
        pub size: U32,
    }
    const _: () = assert!(core::mem::size_of::<Str>() == 8);

    /// Records of the symbol table itself.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
    )]
    #[repr(C)]
    pub struct Range {
        /// Offset of the first record in the symbol table.
        pub offset: U32,
        /// Number of records.
        pub size: U32,
    }
    const _: () = assert!(core::mem::size_of::<Range>() == 8);

    /// One module's symbols: indexes into the symbol records.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
    )]
    #[repr(C)]
    pub struct Module {
        /// Index of the module's first symbol.
        pub begin: U32,
        /// Index after its last symbol.
        pub end: U32,
        /// Index of its first uncommon record.
        pub unc_begin: U32,
    }
    const _: () = assert!(core::mem::size_of::<Module>() == 12);

    /// A symbol.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
    )]
    #[repr(C)]
    pub struct Symbol {
        /// The mangled name.
        pub name: Str,
        /// The IR name (empty for a symbol of module-level assembly).
        pub ir_name: Str,
        /// Index of its comdat, or `u32::MAX` (-1) for none.
        pub comdat_index: U32,
        /// The `FB_*` bits.
        pub flags: U32,
    }
    const _: () = assert!(core::mem::size_of::<Symbol>() == 24);

    impl Symbol {
        /// Bits 0 and 1: the visibility (default, hidden, protected).
        pub const FB_VISIBILITY: u32 = 0;
        /// An uncommon record belongs to the symbol.
        pub const FB_HAS_UNCOMMON: u32 = 2;
        /// Declared, not defined.
        pub const FB_UNDEFINED: u32 = 3;
        /// Weak (or linkonce, or extern_weak).
        pub const FB_WEAK: u32 = 4;
        /// A common symbol.
        pub const FB_COMMON: u32 = 5;
        /// An alias or ifunc.
        pub const FB_INDIRECT: u32 = 6;
        /// In `llvm.used` or `llvm.compiler.used`.
        pub const FB_USED: u32 = 7;
        /// Thread-local.
        pub const FB_TLS: u32 = 8;
        /// May be left out of the symbol table.
        pub const FB_MAY_OMIT: u32 = 9;
        /// Not local.
        pub const FB_GLOBAL: u32 = 10;
        /// Not a real symbol of the object (`llvm.*` names, intrinsics).
        pub const FB_FORMAT_SPECIFIC: u32 = 11;
        /// `unnamed_addr`.
        pub const FB_UNNAMED_ADDR: u32 = 12;
        /// A function.
        pub const FB_EXECUTABLE: u32 = 13;
    }

    /// The header at the start of the symbol table (version 3).
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
    )]
    #[repr(C)]
    pub struct Header {
        /// The format's version; [`Header::CURRENT_VERSION`] in LLVM 22.
        pub version: U32,
        /// The LLVM version that wrote it.
        pub producer: Str,
        /// [`Module`] records.
        pub modules: Range,
        /// Comdat records (12 bytes each).
        pub comdats: Range,
        /// [`Symbol`] records.
        pub symbols: Range,
        /// Uncommon records (24 bytes each in version 3).
        pub uncommons: Range,
        /// The first module's target triple.
        pub target_triple: Str,
        /// The first module's source file name.
        pub source_file_name: Str,
        /// COFF linker directives.
        pub coff_linker_opts: Str,
        /// Dependent library strings ([`Str`] records).
        pub dependent_libraries: Range,
    }
    const _: () = assert!(core::mem::size_of::<Header>() == 76);

    impl Header {
        /// The version LLVM 22 writes and reads.
        pub const CURRENT_VERSION: u32 = 3;
    }
}

use storage::Header;

/// Offsets of the header fields this reader checks, for errors.
const PRODUCER_FIELD: u64 = 4;
const MODULES_FIELD: u64 = 12;
const SYMBOLS_FIELD: u64 = 28;

/// The version and producer of a symbol table: the two fields every
/// version keeps in the same place. Errors are located in `symtab`.
pub(super) fn version_and_producer<'data>(
    symtab: &'data [u8],
    strtab: &'data [u8],
) -> Result<(u32, &'data [u8])> {
    let header = header(symtab)?;
    let producer = string(strtab, &header.producer, PRODUCER_FIELD)?;
    Ok((header.version.get(), producer))
}

fn header(symtab: &[u8]) -> Result<&Header> {
    Header::ref_from_prefix(symtab)
        .map(|(header, _)| header)
        .map_err(|_| {
            let needed = to_u64(core::mem::size_of::<Header>());
            Error::truncated(Field::IrSymtabHeader, needed, to_u64(symtab.len()), 0)
        })
}

/// The string `s` of `strtab`; an error at `at` if it lies outside.
fn string<'data>(strtab: &'data [u8], s: &storage::Str, at: u64) -> Result<&'data [u8]> {
    let (offset, size) = (u64::from(s.offset.get()), u64::from(s.size.get()));
    range(strtab, offset, size).ok_or_else(|| {
        let strtab_size = to_u64(strtab.len());
        malformed(
            BitcodeFault::StringOutOfBounds {
                offset,
                size,
                strtab_size,
            },
            at,
        )
    })
}

/// The records `r` of `symtab`; an error at `at` if they lie outside.
fn records<'data, T>(symtab: &'data [u8], r: &storage::Range, at: u64) -> Result<&'data [T]>
where
    T: FromBytes + KnownLayout + Immutable + Unaligned,
{
    let (offset, count) = (u64::from(r.offset.get()), u64::from(r.size.get()));
    to_u64(core::mem::size_of::<T>())
        .checked_mul(count)
        .and_then(|size| range(symtab, offset, size))
        .and_then(|bytes| <[T]>::ref_from_bytes(bytes).ok())
        .ok_or_else(|| {
            let size = to_u64(symtab.len());
            malformed(
                BitcodeFault::RangeOutOfBounds {
                    offset,
                    count,
                    size,
                },
                at,
            )
        })
}

/// A symbol table and its string table, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader<'data> {
    header: &'data Header,
    producer: &'data [u8],
    symbols: &'data [storage::Symbol],
    strtab: &'data [u8],
}

impl<'data> Reader<'data> {
    /// Reads a version 3 symbol table (LLVM 22's) and its string table:
    /// the header ([`ErrorKind::Truncated`](crate::ErrorKind::Truncated) if `symtab` is shorter),
    /// the producer, the module and symbol ranges and every symbol's
    /// name must lie inside their tables
    /// ([`ErrorKind::MalformedBitcode`](crate::ErrorKind::MalformedBitcode), located in `symtab`). The
    /// version is not checked here: see [`Reader::is_current`].
    pub fn parse(symtab: &'data [u8], strtab: &'data [u8]) -> Result<Self> {
        let header = header(symtab)?;
        let producer = string(strtab, &header.producer, PRODUCER_FIELD)?;
        records::<storage::Module>(symtab, &header.modules, MODULES_FIELD)?;
        let symbols = records::<storage::Symbol>(symtab, &header.symbols, SYMBOLS_FIELD)?;
        let first = u64::from(header.symbols.offset.get());
        let size = to_u64(core::mem::size_of::<storage::Symbol>());
        for (index, symbol) in (0u64..).zip(symbols) {
            let at = index.saturating_mul(size).saturating_add(first);
            string(strtab, &symbol.name, at)?;
        }
        Ok(Reader {
            header,
            producer,
            symbols,
            strtab,
        })
    }

    /// The header.
    pub fn header(&self) -> &'data Header {
        self.header
    }

    /// The format version.
    pub fn version(&self) -> u32 {
        self.header.version.get()
    }

    /// The producer: the version of LLVM that wrote the table.
    pub fn producer(&self) -> &'data [u8] {
        self.producer
    }

    /// Whether LLVM 22 uses the table as it is: LLVM reads a table only
    /// if its version is [`Header::CURRENT_VERSION`] and its producer is
    /// its own version string, and otherwise builds one from the IR.
    /// This reader takes any LLVM 22 release's producer
    /// ([`LLVM_22_PRODUCER_PREFIX`]): they write the same tables.
    pub fn is_current(&self) -> bool {
        is_current(self.version(), self.producer)
    }

    /// The number of modules the table describes.
    pub fn module_count(&self) -> u32 {
        self.header.modules.size.get()
    }

    /// Every symbol, in the table's order.
    pub fn symbols(&self) -> SymbolIter<'data> {
        SymbolIter {
            raw: self.symbols.iter(),
            strtab: self.strtab,
        }
    }

    /// The names of the symbols LLVM's archive writer indexes, in the
    /// table's order: global, defined and not format-specific.
    pub fn defined_global_symbols(&self) -> impl Iterator<Item = &'data [u8]> {
        self.symbols()
            .filter(|s| s.is_global() && !s.is_undefined() && !s.is_format_specific())
            .map(|s| s.name())
    }
}

/// Iterator over a symbol table's symbols; see [`Reader::symbols`].
#[derive(Debug, Clone)]
pub struct SymbolIter<'data> {
    raw: core::slice::Iter<'data, storage::Symbol>,
    strtab: &'data [u8],
}

impl<'data> Iterator for SymbolIter<'data> {
    type Item = Symbol<'data>;

    fn next(&mut self) -> Option<Symbol<'data>> {
        let raw = self.raw.next()?;
        // Checked by `Reader::parse`.
        let name = string(self.strtab, &raw.name, 0).unwrap_or_default();
        Some(Symbol {
            name,
            flags: raw.flags.get(),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }
}

impl ExactSizeIterator for SymbolIter<'_> {}

/// A symbol of the table: its name and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'data> {
    name: &'data [u8],
    flags: u32,
}

impl<'data> Symbol<'data> {
    /// The mangled name.
    pub fn name(&self) -> &'data [u8] {
        self.name
    }

    /// The flags (`storage::Symbol::FB_*` bits).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    fn flag(&self, bit: u32) -> bool {
        self.flags.checked_shr(bit).unwrap_or(0) & 1 == 1
    }

    /// Declared, not defined.
    pub fn is_undefined(&self) -> bool {
        self.flag(storage::Symbol::FB_UNDEFINED)
    }

    /// Weak.
    pub fn is_weak(&self) -> bool {
        self.flag(storage::Symbol::FB_WEAK)
    }

    /// Not local.
    pub fn is_global(&self) -> bool {
        self.flag(storage::Symbol::FB_GLOBAL)
    }

    /// Not a symbol of the object file (`llvm.*` names).
    pub fn is_format_specific(&self) -> bool {
        self.flag(storage::Symbol::FB_FORMAT_SPECIFIC)
    }

    /// A function.
    pub fn is_executable(&self) -> bool {
        self.flag(storage::Symbol::FB_EXECUTABLE)
    }
}
