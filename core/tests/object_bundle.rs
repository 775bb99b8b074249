//! Object-flavour bundles and the ELF reader, against objects that clang 22
//! compiled and clang-offload-bundler 22 bundled (tests/fixtures/object).

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::PathBuf;

use clangoffload::elf::{Class, ElfFile, NewSection, SHF_EXCLUDE, SHT_PROGBITS};
use clangoffload::object_bundle::{write_object_bundle, ObjectBundle, HOST_MARKER};
use clangoffload::ErrorKind;

const HOSTS: [&str; 5] = ["x86_64.o", "i386.o", "groups.o", "amdgcn.o", "shared.so"];
const IDS: [&str; 3] = [
    "host-x86_64-unknown-linux-gnu-",
    "openmp-x86_64-pc-linux-gnu-",
    "hip-amdgcn-amd-amdhsa--gfx906",
];

fn fixture(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../tests/fixtures/object", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn payloads() -> [Vec<u8>; 3] {
    [
        HOST_MARKER.to_vec(),
        fixture("openmp.payload"),
        fixture("hip.payload"),
    ]
}

#[test]
fn lists_what_llvm_lists_with_the_payloads_it_was_given() {
    for host in HOSTS {
        let data = fixture(&format!("bundled-{host}"));
        let bundle = ObjectBundle::parse(&data).unwrap();
        let entries: Vec<_> = bundle.entries().map(Result::unwrap).collect();
        let listed = fixture(&format!("bundled-{host}.list"));
        let expected: Vec<&str> = std::str::from_utf8(&listed).unwrap().lines().collect();
        let ids: Vec<&[u8]> = entries.iter().map(|e| e.id()).collect();
        assert_eq!(
            ids,
            expected.iter().map(|s| s.as_bytes()).collect::<Vec<_>>(),
            "{host}"
        );
        let payloads = payloads();
        for (entry, payload) in entries.iter().zip(&payloads) {
            assert_eq!(entry.payload(), payload.as_slice(), "{host}");
        }
        assert!(entries[0].is_host_marker());
        assert!(!entries[1].is_host_marker());
    }
}

#[test]
fn adding_sections_is_byte_identical_to_llvm() {
    let payloads = payloads();
    for host in HOSTS {
        let original = fixture(host);
        let elf = ElfFile::parse(&original).unwrap();
        let entries: Vec<(&[u8], &[u8])> = IDS
            .iter()
            .zip(&payloads)
            .map(|(id, p)| (id.as_bytes(), p.as_slice()))
            .collect();
        let ours = write_object_bundle(&elf.into(), &entries).unwrap();
        assert!(ours == fixture(&format!("bundled-{host}")), "{host}");
    }
}

#[test]
fn host_extraction_is_byte_identical_to_llvm_and_undoes_bundling() {
    for host in HOSTS {
        let bundled = fixture(&format!("bundled-{host}"));
        let stripped = ObjectBundle::parse(&bundled)
            .unwrap()
            .host_object()
            .unwrap();
        assert!(stripped == fixture(&format!("host-{host}")), "{host}");
        let again = ObjectBundle::parse(&stripped).unwrap();
        assert_eq!(again.entries().count(), 0, "{host}");
    }
    // clang's own objects come back exactly (its string tables are laid out
    // as ours), except amdgcn.o: clang put its empty .llvm_addrsig at the
    // same offset as .strtab but before it in the file, and a rewrite, like
    // llvm-objcopy's, orders sections at one offset by index.
    for host in ["x86_64.o", "i386.o", "groups.o"] {
        assert!(fixture(&format!("host-{host}")) == fixture(host), "{host}");
    }
}

#[test]
fn reads_32_and_64_bit_headers() {
    let data = fixture("i386.o");
    let elf = ElfFile::parse(&data).unwrap();
    assert_eq!(elf.header().class, Class::Elf32);
    assert_eq!(elf.header().machine, 3);
    let data = fixture("amdgcn.o");
    let elf = ElfFile::parse(&data).unwrap();
    assert_eq!(elf.header().class, Class::Elf64);
    assert_eq!(elf.header().machine, 224);
    assert!(elf.section_by_name(b".text").is_some());
}

/// Offset of `e_shoff` and of the section header table in a 64-bit file.
fn shoff(data: &[u8]) -> usize {
    usize::try_from(u64::from_le_bytes(data[40..48].try_into().unwrap())).unwrap()
}

#[test]
fn a_section_past_the_end_is_an_error_for_that_section_only() {
    let mut data = fixture("bundled-x86_64.o");
    let elf = ElfFile::parse(&data).unwrap();
    let openmp = elf
        .sections()
        .flatten()
        .find(|s| s.name().ends_with(b"openmp-x86_64-pc-linux-gnu-"))
        .unwrap()
        .index();
    let at = shoff(&data) + 64 * usize::try_from(openmp).unwrap() + 32;
    data[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let bundle = ObjectBundle::parse(&data).unwrap();
    let results: Vec<_> = bundle.entries().collect();
    assert_eq!(results.len(), 3);
    let err = results[1].as_ref().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::SectionOutOfBounds { .. }));
    assert_eq!(err.entry(), Some(openmp.into()));
    assert_eq!(results[2].as_ref().unwrap().id(), IDS[2].as_bytes());
    // A file with a damaged section cannot be rewritten.
    assert!(bundle.host_object().is_err());
}

#[test]
fn malformed_headers_are_located_errors() {
    let data = fixture("x86_64.o");
    let kind = |d: &[u8]| ElfFile::parse(d).unwrap_err().kind();
    assert!(matches!(kind(&data[..63]), ErrorKind::Truncated { .. }));
    let mut table_past_end = data.clone();
    table_past_end[40..48].copy_from_slice(&(data.len() as u64 - 8).to_le_bytes());
    assert!(matches!(
        kind(&table_past_end),
        ErrorKind::SectionTableOutOfBounds { .. }
    ));
    let mut many = data.clone();
    many[60..62].copy_from_slice(&0xfff0u16.to_le_bytes());
    assert!(matches!(
        kind(&many),
        ErrorKind::SectionTableOutOfBounds { .. }
    ));
    let mut bad_names = data.clone();
    bad_names[62..64].copy_from_slice(&500u16.to_le_bytes());
    let err = ElfFile::parse(&bad_names).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::BadNameTableIndex {
            index: 500,
            count: 12
        }
    );
    assert_eq!(err.offset(), 62);
    let mut name_out_of_range = data.clone();
    let at = shoff(&data) + 64 * 2;
    name_out_of_range[at..at + 4].copy_from_slice(&0xffffu32.to_le_bytes());
    let elf = ElfFile::parse(&name_out_of_range).unwrap();
    let err = elf.section(2).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::BadSectionName { name: 0xffff, .. }
    ));
    assert_eq!(err.offset(), u64::try_from(at).unwrap());
    assert_eq!(elf.sections().filter(Result::is_ok).count(), 10);
}

#[test]
fn a_removed_section_still_in_use_is_refused() {
    let data = fixture("bundled-x86_64.o");
    let elf = ElfFile::parse(&data).unwrap();
    let bundle_section = elf
        .sections()
        .flatten()
        .find(|s| s.name().starts_with(b"__CLANG_OFFLOAD_BUNDLE__"))
        .unwrap()
        .index();
    // Point .text's sh_link at a bundle section.
    let text = elf.section_by_name(b".text").unwrap().index();
    let mut linked = data.clone();
    let at = shoff(&data) + 64 * usize::try_from(text).unwrap() + 40;
    linked[at..at + 4].copy_from_slice(&bundle_section.to_le_bytes());
    let err = ObjectBundle::parse(&linked)
        .unwrap()
        .host_object()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::SectionInUse {
            index: bundle_section,
            by: text
        }
    );
}

#[test]
fn removing_a_middle_section_renumbers_links_symbols_and_groups() {
    let data = fixture("groups.o");
    let elf = ElfFile::parse(&data).unwrap();
    let comment = elf.section_by_name(b".comment").unwrap().index();
    let out = clangoffload::elf::rewrite_sections(&elf, |s| s.index() != comment, &[]).unwrap();
    let after = ElfFile::parse(&out).unwrap();
    assert_eq!(after.section_count(), elf.section_count() - 1);
    // Every kept section keeps its name and contents, except the tables that
    // hold section indices.
    for old in elf.sections().flatten().filter(|s| s.index() != comment) {
        let moved = |i: u32| if i > comment { i - 1 } else { i };
        let new = after.section(moved(old.index())).unwrap();
        assert_eq!(new.name(), old.name());
        assert_eq!(new.header().link, moved(old.header().link));
        if !matches!(old.header().kind, 2 | 3 | 17) {
            assert_eq!(new.data(), old.data(), "{:?}", old.name());
        }
    }
    // And adding a section back then removing it is the identity.
    let added = clangoffload::elf::rewrite_sections(
        &after,
        |_| true,
        &[NewSection {
            name: b"extra",
            kind: SHT_PROGBITS,
            flags: SHF_EXCLUDE,
            addralign: 1,
            data: b"x",
        }],
    )
    .unwrap();
    let added_elf = ElfFile::parse(&added).unwrap();
    let back =
        clangoffload::elf::rewrite_sections(&added_elf, |s| s.name() != b"extra", &[]).unwrap();
    assert!(back == out);
}

#[test]
fn defined_global_symbols_are_what_an_archive_index_lists() {
    let data = fixture("x86_64.o");
    let elf = ElfFile::parse(&data).unwrap();
    let names: Vec<&[u8]> = elf.defined_global_symbols().collect();
    assert_eq!(names, [&b"add"[..], b"counter", b"bump"]);
    let data = fixture("i386.o");
    let elf = ElfFile::parse(&data).unwrap();
    assert_eq!(elf.defined_global_symbols().count(), 3);
}

#[test]
fn a_wrong_section_header_size_is_located() {
    let mut data = fixture("x86_64.o");
    data[58..60].copy_from_slice(&40u16.to_le_bytes());
    let err = ElfFile::parse(&data).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::UnsupportedElf { .. }));
    assert_eq!(err.offset(), 58);
}

#[test]
fn extended_section_numbering_is_read_from_section_0() {
    let data = fixture("bundled-x86_64.o");
    let plain = ElfFile::parse(&data).unwrap();
    let count = plain.section_count();
    let names = plain.header().shstrndx;
    let mut extended = data.clone();
    let shoff = shoff(&data);
    extended[60..62].copy_from_slice(&0u16.to_le_bytes()); // e_shnum
    extended[62..64].copy_from_slice(&0xffffu16.to_le_bytes()); // e_shstrndx
    extended[shoff + 32..shoff + 40].copy_from_slice(&u64::from(count).to_le_bytes());
    extended[shoff + 40..shoff + 44].copy_from_slice(&names.to_le_bytes());
    let elf = ElfFile::parse(&extended).unwrap();
    assert_eq!(elf.section_count(), count);
    assert_eq!(elf.header().shstrndx, names);
    let bundle = ObjectBundle::parse(&extended).unwrap();
    let ids: Vec<&[u8]> = bundle.entries().map(|e| e.unwrap().id()).collect();
    assert_eq!(ids, IDS.map(str::as_bytes));
}
