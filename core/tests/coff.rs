//! The COFF/PE reader, locating containers in Windows hosts, and
//! object-flavour bundles on COFF hosts, against what clang 22, lld-link 22
//! and clang-offload-bundler 22 made (tests/fixtures/coff).

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::PathBuf;

use clangoffload::bundler::Decoding;
use clangoffload::coff::{CoffFile, CoffUnsupported};
use clangoffload::container::parse_container;
use clangoffload::elf::Class;
use clangoffload::inspect::{inspect, NoteKind};
use clangoffload::locate::{offload_sections, wrapper_target, wrapper_targets, SectionKind};
use clangoffload::object::ObjectFile;
use clangoffload::object_bundle::{write_object_bundle, ObjectBundle, HOST_MARKER};
use clangoffload::{Bundle, ErrorKind, Field, FileKind};

const HOSTS: [&str; 3] = ["hip.o", "hip-rdc-new-driver.o", "stubs.obj"];
const IDS: [&str; 3] = [
    "host-x86_64-pc-windows-msvc-",
    "openmp-x86_64-pc-windows-msvc-",
    "hip-amdgcn-amd-amdhsa--gfx906",
];

fn fixture(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../tests/fixtures/coff", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn lines(name: &str) -> Vec<String> {
    String::from_utf8(fixture(name))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bundling_on_a_coff_host_is_byte_identical_to_llvm() {
    let payloads = [
        HOST_MARKER.to_vec(),
        fixture("openmp.payload"),
        fixture("hip.payload"),
    ];
    for host in HOSTS {
        let data = fixture(host);
        let object = ObjectFile::parse(&data).unwrap();
        assert!(matches!(object, ObjectFile::Coff(_)), "{host}");
        let entries: Vec<(&[u8], &[u8])> = IDS
            .iter()
            .zip(&payloads)
            .map(|(id, p)| (id.as_bytes(), p.as_slice()))
            .collect();
        let ours = write_object_bundle(&object, &entries).unwrap();
        assert!(ours == fixture(&format!("bundled-{host}")), "{host}");
    }
}

#[test]
fn listing_and_host_extraction_match_llvm() {
    for host in HOSTS {
        let bundled = fixture(&format!("bundled-{host}"));
        let bundle = ObjectBundle::parse(&bundled).unwrap();
        let ids: Vec<String> = bundle
            .entries()
            .map(|e| String::from_utf8(e.unwrap().id().to_vec()).unwrap())
            .collect();
        assert_eq!(ids, lines(&format!("bundled-{host}.list")), "{host}");
        let stripped = bundle.host_object().unwrap();
        assert!(stripped == fixture(&format!("host-{host}")), "{host}");
        assert_eq!(ObjectBundle::parse(&stripped).unwrap().entries().count(), 0);
    }
    // What clang's driver bundled for -fgpu-rdc.
    let rdc = fixture("hip-rdc.o");
    let bundle = ObjectBundle::parse(&rdc).unwrap();
    let ids: Vec<String> = bundle
        .entries()
        .map(|e| String::from_utf8(e.unwrap().id().to_vec()).unwrap())
        .collect();
    assert_eq!(ids, lines("hip-rdc.o.list"));
    let device = bundle.entries().next().unwrap().unwrap();
    assert!(device.payload().starts_with(b"BC\xc0\xde"));
}

#[test]
fn a_pe_image_is_read_but_not_rewritten() {
    let dll = fixture("hip.dll");
    let object = ObjectFile::parse(&dll).unwrap();
    let ObjectFile::Coff(coff) = object else {
        panic!("not COFF")
    };
    assert!(coff.is_image());
    assert_eq!(coff.class(), Class::Elf64);
    let error = write_object_bundle(&object, &[(b"host-x", HOST_MARKER)]).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::UnsupportedCoff {
            what: CoffUnsupported::ImageRewrite
        }
    );
}

/// The bundle a wrapper record leads to, and the bundle's IDs.
fn wrapped_ids(name: &str) -> Vec<Vec<u8>> {
    let data = fixture(name);
    let object = ObjectFile::parse(&data).unwrap();
    let sections: Vec<_> = offload_sections(&object).map(Result::unwrap).collect();
    let kinds: Vec<SectionKind> = sections.iter().map(|s| s.kind).collect();
    assert!(
        kinds.contains(&SectionKind::HipWrappers) && kinds.contains(&SectionKind::HipFatbin),
        "{name}: {kinds:?}"
    );
    let segment = sections
        .iter()
        .find(|s| s.kind == SectionKind::HipWrappers)
        .unwrap();
    let fatbin = sections
        .iter()
        .find(|s| s.kind == SectionKind::HipFatbin)
        .unwrap();
    let all = wrapper_targets(&object, &segment.section);
    assert_eq!(all.len(), 1, "{name}");
    let (record, target) = all[0];
    let one = wrapper_target(&object, &segment.section, &record).unwrap();
    let (section, offset) = target.unwrap();
    assert_eq!((section.index(), offset), (one.0.index(), one.1));
    assert_eq!(section.index(), fatbin.section.index(), "{name}");
    assert_eq!(offset, 0);
    let container = parse_container(section.data()).unwrap();
    let bundle = match FileKind::detect(container.data()) {
        FileKind::Bundle => container.data().to_vec(),
        _ => return vec![b"compressed".to_vec()],
    };
    Bundle::parse(&bundle)
        .unwrap()
        .entries()
        .map(|e| e.unwrap().id().to_vec())
        .collect()
}

#[test]
fn wrappers_lead_to_the_fat_binary_in_objects_and_images() {
    let expected: Vec<Vec<u8>> = vec![
        b"host-x86_64-unknown-linux-gnu-".to_vec(),
        b"hipv4-amdgcn-amd-amdhsa--gfx906".to_vec(),
    ];
    // An object: the pointer is 0 and a relocation fills it. Images: the
    // pointer is the image base plus the relative address, in sections
    // whose names lld-link cut to eight bytes.
    for name in ["hip.o", "hip.dll", "hip.exe"] {
        assert_eq!(wrapped_ids(name), expected, "{name}");
    }
    assert_eq!(wrapped_ids("hip-compress.o"), [b"compressed".to_vec()]);
    let exe = fixture("hip.exe");
    let ObjectFile::Coff(coff) = ObjectFile::parse(&exe).unwrap() else {
        panic!("not COFF")
    };
    let names: Vec<&[u8]> = coff.sections().map(|s| s.unwrap().name()).collect();
    assert!(names.contains(&&b".hip_fat"[..]) && names.contains(&&b".hipFatB"[..]));
}

#[test]
fn inspection_finds_every_container_of_every_windows_host() {
    for (name, section, kind) in [
        ("hip.o", &b".hip_fatbin"[..], "bundle"),
        ("hip-compress.o", b".hip_fatbin", "compressed"),
        ("hip.dll", b".hip_fat", "bundle"),
        ("hip.exe", b".hip_fat", "bundle"),
        (
            "hip-rdc-new-driver.o",
            b".llvm.offloading",
            "offload binary",
        ),
    ] {
        let data = fixture(name);
        let found = inspect(&data, Decoding::default());
        assert!(found.errors.is_empty(), "{name}: {:?}", found.errors);
        assert_eq!(found.files[0].objdump_format(), Some("coff-x86-64"));
        assert_eq!(found.containers.len(), 1, "{name}");
        let container = &found.containers[0];
        assert_eq!(container.place.section, Some(section), "{name}");
        assert!(container.error.is_none(), "{name}");
        let is = match container.container {
            clangoffload::Container::Bundle(_) => "bundle",
            clangoffload::Container::Compressed(_) => "compressed",
            clangoffload::Container::OffloadBinary(_) => "offload binary",
        };
        assert_eq!(is, kind, "{name}");
        if kind != "offload binary" {
            let wrapped = found
                .notes
                .iter()
                .find(|n| matches!(n.kind, NoteKind::Wrapper { .. }))
                .unwrap();
            let NoteKind::Wrapper { target, .. } = &wrapped.kind else {
                unreachable!()
            };
            assert_eq!(target.unwrap().container, container.container.data());
        }
    }
    let rdc = fixture("hip-rdc.o");
    let found = inspect(&rdc, Decoding::default());
    let bundle_sections = found
        .notes
        .iter()
        .filter(|n| matches!(n.kind, NoteKind::BundleEntry { .. }))
        .count();
    assert_eq!(bundle_sections, 2);
}

/// `hip.o` with bytes replaced at `at`.
fn patched(at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut data = fixture("hip.o");
    data[at..at + bytes.len()].copy_from_slice(bytes);
    data
}

#[test]
fn malformed_coff_files_get_located_errors() {
    let data = fixture("hip.o");
    let file = CoffFile::parse(&data).unwrap();
    let count = file.section_count();
    // Truncated headers.
    let error = CoffFile::parse(&data[..12]).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::Truncated {
            field: Field::CoffHeader,
            ..
        }
    ));
    let error = CoffFile::parse(&fixture("hip.dll")[..0x90]).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::Truncated {
            field: Field::OptionalHeader,
            ..
        }
    ));
    // The section table past the end.
    let error = CoffFile::parse(&patched(2, &0xfff0u16.to_le_bytes())).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::SectionTableOutOfBounds { .. }
    ));
    assert_eq!(error.offset(), 2);
    // The symbol table past the end: read without symbols, as LLVM reads
    // it; short names still name their sections, long ones are the error.
    let bad = patched(12, &0x00ff_ffffu32.to_le_bytes());
    let no_symbols = CoffFile::parse(&bad).unwrap();
    let error = no_symbols.symbols_fault().unwrap();
    assert!(matches!(
        error.kind(),
        ErrorKind::SymbolTableOutOfBounds { .. }
    ));
    assert_eq!(error.offset(), 8);
    assert_eq!(no_symbols.symbol_count(), 0);
    assert_eq!(no_symbols.section(1).unwrap().name(), b".text");
    let long = (1..=count)
        .find(|&i| no_symbols.section(i).is_err())
        .unwrap();
    let at_long = no_symbols.section(long).unwrap_err();
    assert_eq!(
        (at_long.kind(), at_long.offset()),
        (error.kind(), error.offset())
    );
    // A string-table offset out of range: that section only.
    let fatbin = (1..=count)
        .find(|&i| file.section(i).unwrap().name() == b".hip_fatbin")
        .unwrap();
    let header = usize::try_from(file.section_header_offset(fatbin)).unwrap();
    let bad = patched(header, b"/999999\0");
    let file = CoffFile::parse(&bad).unwrap();
    let error = file.section(fatbin).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::BadSectionName { name: 999_999, .. }
    ));
    assert_eq!(error.offset(), u64::try_from(header).unwrap());
    assert_eq!(error.entry(), Some(u64::from(fatbin)));
    assert!(file.section(1).is_ok());
    let object = ObjectFile::Coff(file);
    let found: Vec<_> = offload_sections(&object).collect();
    assert!(found.iter().any(Result::is_err));
    assert!(found
        .iter()
        .flatten()
        .any(|s| s.kind == SectionKind::HipWrappers));
    // A name field that is not a number.
    let bad = patched(header, b"/12x\0\0\0\0");
    let error = CoffFile::parse(&bad).unwrap().section(fatbin).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::BadDecimal {
            field: Field::SectionName
        }
    );
    // Relocations pointing outside the file: an error for that section, and
    // the wrapper is left unresolved rather than followed.
    let file = CoffFile::parse(&data).unwrap();
    let segment = (1..=count)
        .find(|&i| file.section(i).unwrap().name() == b".hipFatBinSegment")
        .unwrap();
    let at = usize::try_from(file.section_header_offset(segment)).unwrap() + 24;
    let bad = patched(at, &0x00ff_0000u32.to_le_bytes());
    let file = CoffFile::parse(&bad).unwrap();
    let section = file.section(segment).unwrap();
    let error = file.relocations(&section).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::RelocationsOutOfBounds {
            offset: 0x00ff_0000,
            ..
        }
    ));
    let object = ObjectFile::Coff(file);
    let segment = object.section(segment).unwrap();
    assert!(wrapper_targets(&object, &segment)[0].1.is_none());
    // A relocation naming a symbol past the table: rewriting refuses it.
    let file = CoffFile::parse(&data).unwrap();
    let section = file.section(1).unwrap();
    let first = usize::try_from(section.header().pointer_to_relocations.get()).unwrap();
    let bad = patched(first + 4, &0x7fff_ffffu32.to_le_bytes());
    let object = ObjectFile::parse(&bad).unwrap();
    let error = write_object_bundle(&object, &[(b"host-x", HOST_MARKER)]).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::BadSymbolIndex {
            index: 0x7fff_ffff,
            ..
        }
    ));
    // Every prefix of a real file parses or fails cleanly.
    for len in (0..data.len()).step_by(97) {
        if let Ok(file) = CoffFile::parse(&data[..len]) {
            for section in file.sections().flatten() {
                let _ = file.relocations(&section);
            }
        }
    }
}

#[test]
fn coff_archives_name_members_through_their_nul_terminated_long_names() {
    let data = fixture("hip-rdc.lib");
    let archive = clangoffload::archive::Archive::parse(&data).unwrap();
    let names: Vec<Vec<u8>> = archive
        .members()
        .map(|m| m.unwrap().name().to_vec())
        .collect();
    assert_eq!(
        names,
        [b"hip-rdc.o".to_vec(), b"bundled-stubs.obj".to_vec()]
    );
}

#[test]
fn a_big_object_host_is_a_clear_error_not_a_binary_bundle() {
    use clangoffload::bundler::{bundle, BundleRequest, FileType};
    let mut big = vec![0u8; 56];
    big[2..4].copy_from_slice(&[0xff, 0xff]);
    big[4] = 2;
    big[6..8].copy_from_slice(&0x8664u16.to_le_bytes());
    big[12..28].copy_from_slice(&clangoffload::coff::BIG_OBJECT_MAGIC);
    assert!(FileKind::detect(&big).is_object());
    assert_eq!(
        ObjectFile::parse(&big).unwrap_err().kind(),
        ErrorKind::UnsupportedCoff {
            what: CoffUnsupported::BigObject
        }
    );
    let request = BundleRequest {
        file_type: FileType::Object,
        targets: &[
            "host-x86_64-pc-windows-msvc",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ],
        inputs: &[&big, b"device"],
        align: 1,
        compression: None,
    };
    let error = bundle(&request, &mut ()).unwrap_err();
    assert!(error.to_string().contains("COFF big object"), "{error}");
}
