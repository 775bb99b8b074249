//! Parsing arbitrary bytes as an ELF file and an object-flavour bundle, and
//! rewriting its section table.
//!
//! Invariants checked:
//! - no panic in `ElfFile::parse`, `sections`, `defined_global_symbols`,
//!   `ObjectBundle::parse`, `entries`, `host_object`, `rewrite_sections`;
//! - every section name and contents, symbol name, entry ID and payload lies
//!   inside the input; an entry is its section's name after the bundle magic
//!   and its contents at its offset; `ObjectBundle::parse` succeeds exactly
//!   when `ElfFile::parse` does (for input that is not COFF);
//! - `host_object()`, when it succeeds, parses as ELF with every section
//!   readable, no bundle entries, and exactly the input's non-bundle
//!   sections, by name, in order;
//! - adding one section with `rewrite_sections(.., |_| true, &[new])`, when
//!   it succeeds, parses, its last section has the added name, type and
//!   data, the sections before it are the input's (by name); removing it
//!   again (`keep = name != added`) gives the same bytes as
//!   `rewrite_sections(.., |_| true, &[])` of the input, checked where that
//!   is the input itself (skipped when the input already has a section of
//!   that name).

use clangoffload::bundle::BUNDLE_MAGIC;
use clangoffload::elf::{
    rewrite_sections, Class, ElfFile, NewSection, SectionHeader, SHT_NOBITS, SHT_PROGBITS,
};
use clangoffload::object_bundle::ObjectBundle;

use super::within::within_or_empty;

const ADDED_NAME: &[u8] = b".clangoffload.fuzz";
/// Largest section alignment the rewrite is tried with.
const MAX_ALIGN: u64 = 1 << 20;
const ADDED_DATA: &[u8] = b"fuzz payload\0\x01\x02";

/// The names of the sections after the null one, or `None` if one cannot be
/// read.
fn names<'a>(elf: &ElfFile<'a>) -> Option<Vec<&'a [u8]>> {
    elf.sections().map(|s| s.ok().map(|s| s.name())).collect()
}

fn is_bundle_name(name: &[u8]) -> bool {
    name.starts_with(&BUNDLE_MAGIC[..])
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let elf = match ElfFile::parse(data) {
        Ok(elf) => elf,
        Err(e) => {
            let _ = e.to_string();
            if !clangoffload::coff::CoffFile::is_coff(data) {
                assert!(ObjectBundle::parse(data).is_err());
            }
            return;
        }
    };
    assert_eq!(elf.data().as_ptr(), data.as_ptr());
    for section in elf.sections() {
        match section {
            Ok(s) => {
                within_or_empty(data, s.name());
                let range = within_or_empty(data, s.data());
                if !s.data().is_empty() {
                    assert_eq!(range.start as u64, s.offset());
                }
                if s.header().kind == SHT_NOBITS {
                    assert!(s.data().is_empty());
                } else {
                    assert_eq!(s.data().len() as u64, s.header().size);
                }
                assert!(!s.name().contains(&0));
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    for name in elf.defined_global_symbols().take(data.len() + 1) {
        within_or_empty(data, name);
        assert!(!name.contains(&0));
    }

    let bundle =
        ObjectBundle::parse(data).expect("ObjectBundle::parse where ElfFile::parse succeeds");
    for entry in bundle.entries() {
        let Ok(entry) = entry else { continue };
        within_or_empty(data, entry.id());
        within_or_empty(data, entry.payload());
        let section = entry.section();
        assert!(is_bundle_name(section.name()));
        assert_eq!(&section.name()[BUNDLE_MAGIC.len()..], entry.id());
        assert_eq!(entry.payload(), section.data());
        assert_eq!(entry.offset(), section.offset());
    }

    // Known, not checked: the layout honours any `sh_addralign` (as
    // llvm-objcopy does), so a large one makes a large output from a small
    // input (the core's `try_reserve_exact` reports `OutOfMemory` only when
    // the allocation fails). See the README's findings.
    if elf
        .sections()
        .flatten()
        .any(|s| s.header().addralign > MAX_ALIGN)
    {
        return;
    }
    let input_names = names(&elf);
    match bundle.host_object() {
        Ok(host) => {
            let input_names = input_names
                .as_ref()
                .expect("host_object succeeded with an unreadable section");
            let out = ElfFile::parse(&host).expect("host object parses");
            let out_names = names(&out).expect("host object's sections are readable");
            let expected: Vec<&[u8]> = input_names
                .iter()
                .copied()
                .filter(|n| !is_bundle_name(n))
                .collect();
            assert_eq!(out_names, expected, "host object's sections");
            let again = ObjectBundle::parse(&host).expect("host object is an object bundle");
            assert_eq!(again.entries().count(), 0, "host object has bundle entries");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }

    let added = NewSection {
        name: ADDED_NAME,
        kind: SHT_PROGBITS,
        flags: 0,
        addralign: 4,
        data: ADDED_DATA,
    };
    let Ok(with_added) = rewrite_sections(&elf, |_| true, &[added]) else {
        return;
    };
    let input_names = input_names.expect("rewrite succeeded with an unreadable section");
    let out = ElfFile::parse(&with_added).expect("output with the added section parses");
    let out_names = names(&out).expect("output sections readable");
    assert_eq!(out_names.len(), input_names.len() + 1);
    assert_eq!(&out_names[..input_names.len()], &input_names[..]);
    let last = out
        .section(out.section_count() - 1)
        .expect("added section readable");
    assert_eq!(last.name(), ADDED_NAME);
    assert_eq!(last.data(), ADDED_DATA);
    assert_eq!(last.header().kind, SHT_PROGBITS);
    if input_names.contains(&ADDED_NAME) {
        return;
    }
    let removed = rewrite_sections(&out, |s| s.name() != ADDED_NAME, &[])
        .expect("removing the added section");
    let identity =
        rewrite_sections(&elf, |_| true, &[]).expect("identity rewrite where adding succeeded");
    // The layout is llvm-objcopy's: sections in the order of their input
    // offsets, ties by index. That is not a fixed point for every input: a
    // section whose offset lies before the layout start, or ties with
    // another, can move on a later pass, and adding a name changes the name
    // table's size, which moves the ties of what follows it
    // (`artifacts-found/elf_object_bundle/layout-not-idempotent*`). So add
    // then remove gives the identity rewrite's bytes for an input already in
    // the layout's form (identity rewrite = input), as LLVM-made objects are,
    // and for any input the same sections: names, headers but the offset,
    // and contents, in order.
    if identity == data {
        assert!(
            removed == identity,
            "add then remove differs from the identity rewrite"
        );
    }
    assert_eq!(
        sections_but_offsets(&removed),
        sections_but_offsets(&identity),
        "add then remove changes more than where sections are"
    );
}

/// Every section of an ELF file but where it lies and how its string tables
/// are laid out: name, header without `sh_offset` and `sh_name`, contents —
/// a string table's neither size nor contents (a rewrite that adds a name
/// rebuilds the tables from the names in use, where the identity rewrite
/// may keep them as they are: `artifacts-found/elf_object_bundle/
/// strtab-rebuilt`, whose symbol table, cut to one byte, uses none of its
/// names), and a section's bytes that are the file header's `e_shoff`.
fn sections_but_offsets(data: &[u8]) -> Vec<(Vec<u8>, SectionHeader, Vec<u8>)> {
    const SHT_STRTAB: u32 = 3;
    let elf = ElfFile::parse(data).expect("a rewrite parses");
    // `e_shoff`, the one file header field that says where things lie.
    let shoff = match elf.header().class {
        Class::Elf32 => 0x20..0x24,
        Class::Elf64 => 0x28..0x30,
    };
    (0..elf.section_count())
        .map(|i| {
            let s = elf.section(i).expect("a rewrite's sections read");
            let mut header = *s.header();
            let at = header.offset;
            header.offset = 0;
            header.name = 0;
            let contents = match header.kind {
                SHT_NOBITS => Vec::new(),
                SHT_STRTAB => {
                    header.size = 0;
                    Vec::new()
                }
                // A section kept in place over the file header holds the
                // header written there (`section-over-file-header`), with
                // its `e_shoff` (`section-holds-shoff`).
                _ => (at..)
                    .zip(s.data())
                    .map(|(o, &b)| if shoff.contains(&o) { 0 } else { b })
                    .collect(),
            };
            (s.name().to_vec(), header, contents)
        })
        .collect()
}
