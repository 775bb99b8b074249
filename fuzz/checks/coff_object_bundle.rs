//! Rewriting arbitrary bytes read as a COFF object as llvm-objcopy would
//! (what `-type=o` bundling and host extraction do), and reading it as an
//! object-flavour bundle.
//!
//! Invariants checked:
//! - no panic in `CoffFile::parse`, `ObjectBundle::parse`, `entries`,
//!   `host_object`, `rewrite_sections`;
//! - for input that starts as COFF, `ObjectBundle::parse` succeeds exactly
//!   when `CoffFile::parse` does;
//!   every entry ID and payload lies inside the input;
//! - a rewrite that keeps everything, when it succeeds, parses with every
//!   section readable, the input's sections by name in order, and is a
//!   fixed point: rewriting it again gives the same bytes;
//! - adding one section, when it succeeds, parses, its last section has the
//!   added name and data, and removing it again gives the bytes of the
//!   rewrite that keeps everything;
//! - (these three unless a name does not survive a rewrite, as in
//!   llvm-objcopy: an empty symbol name, written as all zeros, reads back
//!   from the string table's size field, which changes with the table; a
//!   short section name starting with `/`, written in place, reads back as
//!   a string table offset);
//! - `host_object()`, when it succeeds, has no bundle entries;
//!
//! Known, not checked: a section of uninitialized data gets its size in
//! zeros in the output (as llvm-objcopy writes it), so a small input can ask
//! for a large output; inputs with more than 1 MiB of it are skipped.

use clangoffload::bundle::BUNDLE_MAGIC;
use clangoffload::coff::{rewrite_sections, CoffFile, NewSection, SCN_MEM_READ};
use clangoffload::object_bundle::ObjectBundle;

use super::within::within_or_empty;

const ADDED_NAME: &[u8] = b".clangoffload.fuzz";
const ADDED_DATA: &[u8] = b"fuzz payload\0\x01\x02";
/// Most bytes of sections without contents a rewrite is tried with.
const MAX_ZEROS: u64 = 1 << 20;

fn names<'a>(file: &CoffFile<'a>) -> Option<Vec<&'a [u8]>> {
    file.sections().map(|s| s.ok().map(|s| s.name())).collect()
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    // What LLVM opens as COFF (a known machine, or a PE signature); the
    // reader itself takes any file header.
    if !CoffFile::is_coff(data) {
        return;
    }
    let file = match CoffFile::parse(data) {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            assert!(ObjectBundle::parse(data).is_err());
            return;
        }
    };
    let bundle =
        ObjectBundle::parse(data).expect("ObjectBundle::parse where CoffFile::parse succeeds");
    for entry in bundle.entries().flatten() {
        within_or_empty(data, entry.id());
        within_or_empty(data, entry.payload());
        assert!(entry.section().name().starts_with(BUNDLE_MAGIC));
    }
    let zeros: u64 = file
        .sections()
        .flatten()
        .filter(|s| s.data().is_empty())
        .map(|s| u64::from(s.header().size_of_raw_data.get()))
        .sum();
    if zeros > MAX_ZEROS {
        return;
    }
    // Auxiliary records are looked at too: that only skips more inputs.
    let empty_name = (0..file.symbol_count())
        .filter_map(|i| file.symbol(i))
        .any(|s| file.symbol_name(s).is_ok_and(<[u8]>::is_empty));
    let slash_name = file
        .sections()
        .flatten()
        .any(|s| s.name().len() <= 8 && s.name().starts_with(b"/"));
    if empty_name || slash_name {
        return;
    }
    if let Ok(host) = bundle.host_object() {
        let again = ObjectBundle::parse(&host).expect("host object parses");
        assert_eq!(again.entries().count(), 0);
    }
    let Ok(same) = rewrite_sections(&file, |_| true, &[]) else {
        return;
    };
    let out = CoffFile::parse(&same).expect("a rewrite parses");
    assert_eq!(
        names(&out).expect("a rewrite's sections are readable"),
        names(&file).expect("a rewritten input's sections are readable")
    );
    let twice = rewrite_sections(&out, |_| true, &[]).expect("a rewrite rewrites");
    assert!(twice == same, "a rewrite is a fixed point");
    let added = NewSection {
        name: ADDED_NAME,
        characteristics: SCN_MEM_READ,
        data: ADDED_DATA,
    };
    if names(&file).is_some_and(|n| n.contains(&ADDED_NAME)) {
        return;
    }
    let Ok(with) = rewrite_sections(&file, |_| true, &[added]) else {
        return;
    };
    let out = CoffFile::parse(&with).expect("a file with an added section parses");
    let last = out.section(out.section_count()).expect("the added section");
    assert_eq!((last.name(), last.data()), (ADDED_NAME, ADDED_DATA));
    let removed = rewrite_sections(&out, |s| s.name() != ADDED_NAME, &[]).expect("removing it");
    assert!(
        removed == same,
        "adding and removing a section is no change"
    );
}
