//! Parsing arbitrary bytes as an `ar` archive.
//!
//! Invariants checked:
//! - no panic in `parse`, `members`, `symbols`, `device_member_name`;
//! - every member's header, name and data lie inside the input; the data is
//!   at `data_offset()`, after the 60-byte header (and a BSD name); headers
//!   are in increasing order; indexes increase;
//! - the walk terminates (at most one member per 60 bytes), yields at most one
//!   error, only as its last item, and stays ended; errors lie inside the
//!   input (or at its end) and name their member;
//! - symbol table entries' names lie inside the input; the walk ends after
//!   an error;
//! - the good members rewritten with `write_archive` (with the symbol table
//!   names, split among members) parse back to the same names and data, with
//!   no error, and the layout's offsets are the members' header offsets.

use clangoffload::archive::{device_member_name, write_archive, Archive, NewMember};

use super::within::within;

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let Ok(archive) = Archive::parse(data) else {
        assert!(!data.starts_with(b"!<arch>\n"));
        return;
    };
    let len = data.len() as u64;
    let mut symbol_names: Vec<&[u8]> = Vec::new();
    if let Some(table) = archive.symbol_table() {
        within(data, table.member().data());
        let mut iter = table.symbols();
        for item in iter.by_ref().take(data.len() + 1) {
            match item {
                Ok(symbol) => {
                    within(data, symbol.name());
                    assert!(!symbol.name().contains(&0));
                    symbol_names.push(symbol.name());
                }
                Err(e) => {
                    assert!(e.offset() <= len);
                    let _ = e.to_string();
                    break;
                }
            }
        }
        assert!(symbol_names.len() <= data.len());
    }
    if let Some(names) = archive.long_names() {
        within(data, names.data());
    }

    let mut good = Vec::new();
    let mut error = None;
    let mut iter = archive.members();
    let limit = data.len() / 60 + 1;
    let mut last_header = None;
    let mut last_index = None;
    for (n, item) in iter.by_ref().take(limit + 1).enumerate() {
        assert!(n < limit, "walk yields too many items");
        assert!(error.is_none(), "item after an error");
        match item {
            Ok(m) => {
                let header = m.header_offset();
                assert!(last_header.is_none_or(|h| header > h));
                assert!(last_index.is_none_or(|i| m.index() > i));
                last_header = Some(header);
                last_index = Some(m.index());
                assert!(header + 60 <= len);
                let range = within(data, m.data());
                assert_eq!(range.start as u64, m.data_offset());
                assert!(m.data_offset() >= header + 60);
                within(data, m.name());
                let _ = device_member_name(m.name(), "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+");
                let _ = device_member_name(m.name(), "hip-nvptx64-nvidia-cuda--sm_70");
                good.push(m);
            }
            Err(e) => {
                assert!(e.offset() <= len, "error offset past the input");
                assert!(e.entry().is_some());
                let _ = e.to_string();
                error = Some(e);
            }
        }
    }
    assert!(
        iter.next().is_none() && iter.next().is_none(),
        "walk does not end"
    );

    // Round trip: names that the writer refuses (empty, with '\n') are skipped.
    let kept: Vec<_> = good
        .iter()
        .filter(|m| !m.name().is_empty() && !m.name().contains(&b'\n'))
        .collect();
    if kept.iter().map(|m| m.data().len()).sum::<usize>() > 16 << 20 {
        return;
    }
    // Give all the symbols to the first member, none to the others.
    let new: Vec<NewMember<'_>> = kept
        .iter()
        .enumerate()
        .map(|(i, m)| NewMember {
            name: m.name(),
            data: m.data(),
            symbols: (i == 0).then_some(symbol_names.as_slice()),
        })
        .collect();
    let out = write_archive(&new).expect("rewrite of parsed members");
    let again = Archive::parse(&out).expect("rewritten archive parses");
    let back: Vec<_> = again
        .members()
        .map(|m| m.expect("rewritten member"))
        .collect();
    assert_eq!(back.len(), kept.len());
    for (a, b) in back.iter().zip(&kept) {
        assert_eq!(a.name(), b.name());
        assert_eq!(a.data(), b.data());
    }
    if let Some(first) = back.first() {
        let table = again.symbol_table().expect("a symbol table for the object");
        let names: Vec<_> = table.symbols().map(|s| s.expect("symbol")).collect();
        if symbol_names.is_empty() {
            assert!(names.is_empty());
        } else {
            assert_eq!(names.len(), symbol_names.len());
            for (s, name) in names.iter().zip(&symbol_names) {
                assert_eq!(s.name(), *name);
                assert_eq!(s.member_offset(), first.header_offset());
            }
        }
    }
}
