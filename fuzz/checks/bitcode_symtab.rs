//! Reading arbitrary bytes as LLVM bitcode: the top-level walk
//! (`BitcodeFileContents::parse`), the symbol table reader
//! (`irsymtab::Reader`) and what the archive writer makes of a bitcode
//! member (`write_archive_indexed`).
//!
//! Invariants checked:
//! - no panic;
//! - input without a bitcode magic is `NotBitcode` at 0; every error lies
//!   inside the input (or at its end) and can be written;
//! - the symbol table and its string table are slices of the input at the
//!   offsets reported; at most one module per 8 bytes;
//! - `current_symtab` is `None` unless there is a module and a string table;
//!   a table it gives is current, describes as many modules as the file
//!   holds, and is what `Reader::parse` reads from the same slices (an error
//!   the same error, moved by the table's offset); every symbol name lies
//!   inside the input; `defined_global_symbols` are, in order, the symbols
//!   that are global, defined and not format-specific;
//! - the same bitstream in a wrapper (offset 20) reads the same, its offsets
//!   moved by 20;
//! - the input as a one-member archive: the index lists exactly those
//!   symbols (an empty index for a file with no module; none for a file
//!   without a current table, one that cannot be read, or names with a NUL);
//! - `Reader::parse` of the input as both tables never panics and its names
//!   lie inside the input.

use clangoffload::archive::{write_archive_indexed, Archive};
use clangoffload::bitcode::irsymtab::Reader;
use clangoffload::bitcode::{is_bitcode, BitcodeFileContents};
use clangoffload::{Error, ErrorKind};

use super::within::within_or_empty;

fn located(data: &[u8], e: &Error) {
    assert!(e.offset() <= data.len() as u64, "error past the input: {e}");
    let _ = e.to_string();
}

/// The names `write_archive_indexed` should index `data` by, or `None`.
fn expected_index(data: &[u8]) -> Option<Vec<&[u8]>> {
    let contents = BitcodeFileContents::parse(data).ok()?;
    if contents.module_count() == 0 {
        return Some(Vec::new());
    }
    let table = contents.current_symtab().ok()??;
    let names: Vec<&[u8]> = table.defined_global_symbols().collect();
    // A name with a NUL cannot be written into an index.
    (!names.iter().any(|name| name.contains(&0))).then_some(names)
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let contents = match BitcodeFileContents::parse(data) {
        Ok(contents) => contents,
        Err(e) => {
            located(data, &e);
            if !is_bitcode(data) {
                assert_eq!((e.kind(), e.offset()), (ErrorKind::NotBitcode, 0));
            }
            check_reader(data);
            return;
        }
    };
    assert!(is_bitcode(data));
    assert!(contents.module_count() <= data.len() as u64 / 8);
    let symtab = within_or_empty(data, contents.symtab());
    if !contents.symtab().is_empty() {
        assert_eq!(symtab.start as u64, contents.symtab_offset());
    }
    within_or_empty(data, contents.strtab_for_symtab());
    if !contents.strtab_for_symtab().is_empty() {
        assert!(!contents.symtab().is_empty());
    }

    match contents.current_symtab() {
        Ok(Some(table)) => {
            assert!(contents.module_count() > 0);
            assert!(table.is_current());
            assert_eq!(u64::from(table.module_count()), contents.module_count());
            let direct = Reader::parse(contents.symtab(), contents.strtab_for_symtab())
                .expect("the current table parses alone");
            assert_eq!(direct, table);
            let mut kept = Vec::new();
            for symbol in table.symbols() {
                within_or_empty(data, symbol.name());
                if symbol.is_global() && !symbol.is_undefined() && !symbol.is_format_specific() {
                    kept.push(symbol.name());
                }
            }
            assert_eq!(table.defined_global_symbols().collect::<Vec<_>>(), kept);
        }
        Ok(None) => {}
        Err(e) => {
            located(data, &e);
            assert!(contents.module_count() > 0 && !contents.strtab_for_symtab().is_empty());
            let direct = Reader::parse(contents.symtab(), contents.strtab_for_symtab())
                .expect_err("a damaged table does not parse alone");
            assert_eq!(direct.shifted(contents.symtab_offset()), e);
        }
    }

    // The same bitstream in a wrapper.
    if data.starts_with(b"BC\xC0\xDE") && data.len().is_multiple_of(4) {
        let mut wrapped = Vec::with_capacity(data.len() + 20);
        for word in [0x0B17_C0DE_u32, 0, 20, data.len() as u32, 0] {
            wrapped.extend_from_slice(&word.to_le_bytes());
        }
        wrapped.extend_from_slice(data);
        let inner = BitcodeFileContents::parse(&wrapped).expect("wrapped bitcode parses");
        assert_eq!(inner.module_count(), contents.module_count());
        assert_eq!(inner.symtab(), contents.symtab());
        assert_eq!(inner.strtab_for_symtab(), contents.strtab_for_symtab());
        if !contents.symtab().is_empty() {
            assert_eq!(inner.symtab_offset(), contents.symtab_offset() + 20);
        }
        assert_eq!(expected_index(&wrapped), expected_index(data));
    }

    // As the one member of an archive.
    let archive = write_archive_indexed(&[(b"m.bc", data)]).expect("an archive of one member");
    let archive = Archive::parse(&archive).expect("the archive parses");
    let index: Option<Vec<Vec<u8>>> = archive.symbol_table().map(|table| {
        table
            .symbols()
            .map(|s| s.expect("an index entry").name().to_vec())
            .collect()
    });
    let expected = expected_index(data).map(|names| names.iter().map(|n| n.to_vec()).collect());
    assert_eq!(index, expected);

    check_reader(data);
}

/// The symbol table reader on the input as both of its tables.
fn check_reader(data: &[u8]) {
    match Reader::parse(data, data) {
        Ok(table) => {
            within_or_empty(data, table.producer());
            for symbol in table.symbols() {
                within_or_empty(data, symbol.name());
            }
        }
        Err(e) => located(data, &e),
    }
}
