//! Reading arbitrary bytes as a COFF object or PE image, and locating
//! offload sections, wrapper records and their targets in it.
//!
//! Invariants checked:
//! - no panic in `CoffFile::parse`, `section`, `relocations`, `symbol`,
//!   `symbol_name`, `aux_records`, nor in the locating calls `elf_locate`
//!   checks (run here on the COFF file through `ObjectFile`);
//! - every section name and contents, relocation table, symbol record,
//!   symbol name and auxiliary record lies inside the input; a section's
//!   contents start at its offset;
//! - what `elf_locate::locate` asserts of offload sections and wrapper
//!   targets.

use clangoffload::coff::CoffFile;
use clangoffload::object::ObjectFile;

use super::elf_locate::locate;
use super::within::within_or_empty;

/// Symbol records looked at, at most.
const MAX_SYMBOLS: u32 = 4096;

/// Records read in place lie inside the input.
fn records_within<T>(data: &[u8], records: &[T]) {
    let (base, start) = (data.as_ptr() as usize, records.as_ptr() as usize);
    let len = core::mem::size_of_val(records);
    assert!(len == 0 || (start >= base && start + len <= base + data.len()));
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let file = match CoffFile::parse(data) {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for section in file.sections() {
        let section = match section {
            Ok(section) => section,
            Err(e) => {
                let _ = e.to_string();
                continue;
            }
        };
        within_or_empty(data, section.name());
        let range = within_or_empty(data, section.data());
        if !section.data().is_empty() {
            assert_eq!(range.start as u64, section.offset());
        }
        if let Ok(relocations) = file.relocations(&section) {
            records_within(data, relocations);
        }
    }
    let mut index = 0;
    while index < file.symbol_count().min(MAX_SYMBOLS) {
        let symbol = file.symbol(index).expect("a record inside the table");
        records_within(data, core::slice::from_ref(symbol));
        if let Ok(name) = file.symbol_name(symbol) {
            within_or_empty(data, name);
            assert!(!name.contains(&0));
        }
        if let Some(aux) = file.aux_records(index, symbol) {
            within_or_empty(data, aux);
        }
        index += 1 + u32::from(symbol.number_of_aux_symbols);
    }
    locate(data, &ObjectFile::Coff(file));
}
