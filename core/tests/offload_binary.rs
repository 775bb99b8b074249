//! OffloadBinaries, the ELF locator and scan, against what LLVM 22 made
//! (tests/fixtures/offload), and one test per malformed class.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clangoffload::container::{Container, Containers};
use clangoffload::elf::{AmdgpuTarget, ElfFile};
use clangoffload::locate::{
    locate_address, offload_sections, wrapper_target, wrapper_targets, wrappers, SectionKind,
    WrapperKind,
};
use clangoffload::object::ObjectFile;
use clangoffload::offload_binary::{
    image_args::image_arguments, write_offload_binary, BinaryDiagnostic, ImageKind, NewImage,
    OffloadKind, WriteOptions,
};
use clangoffload::scan::{scan, Found};
use clangoffload::{Bundle, DecompressOptions, ErrorKind, OffloadBinary};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/offload")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn binaries(data: &[u8]) -> Vec<OffloadBinary<'_>> {
    Containers::new(data)
        .map(|c| match c.unwrap().1 {
            Container::OffloadBinary(b) => b,
            other => panic!("not an OffloadBinary: {other:?}"),
        })
        .collect()
}

/// What `llvm-objdump --offloading` prints for these binaries.
fn objdump(binaries: &[OffloadBinary<'_>]) -> String {
    let mut out = String::new();
    for (i, entry) in binaries.iter().flat_map(|b| b.entries()).enumerate() {
        let text = |s: Option<&[u8]>| String::from_utf8_lossy(s.unwrap_or_default()).into_owned();
        write!(
            out,
            "\nOFFLOADING IMAGE [{i}]:\n{:<16}{}\n{:<16}{}\n{:<16}{}\n{:<16}{}\n",
            "kind",
            entry.image_kind().objdump_name(),
            "arch",
            text(entry.arch()),
            "triple",
            text(entry.triple()),
            "producer",
            entry.offload_kind().name()
        )
        .unwrap();
    }
    out
}

const PACKAGES: &[&str] = &[
    "single.offbin",
    "multi.offbin",
    "keys.offbin",
    "sizes.offbin",
    "empty-image.offbin",
    "cuda-ptx.offbin",
];

#[test]
fn llvm_packages_read_as_objdump_reads_them() {
    for name in PACKAGES {
        let data = fixture(name);
        let found = binaries(&data);
        assert!(!found.is_empty(), "{name}");
        let expected = String::from_utf8(fixture(&format!("{name}.objdump"))).unwrap();
        assert_eq!(objdump(&found), expected, "{name}");
        for binary in &found {
            assert_eq!(binary.version(), 1);
            let diagnostics = binary.validate();
            assert!(
                diagnostics
                    .iter()
                    .all(|d| matches!(d, BinaryDiagnostic::UnknownOffloadKind { .. })),
                "{name}: {diagnostics:?}"
            );
        }
    }
}

#[test]
fn version_1_writer_is_byte_identical_to_llvm_22() {
    for name in PACKAGES {
        let data = fixture(name);
        let mut rewritten = Vec::new();
        for binary in binaries(&data) {
            for entry in binary.entries() {
                let strings: Vec<(&[u8], &[u8])> =
                    entry.strings().map(|s| (s.key, s.value)).collect();
                let image = NewImage {
                    image_kind: entry.image_kind(),
                    offload_kind: entry.offload_kind(),
                    flags: entry.flags(),
                    strings: &strings,
                    image: entry.image(),
                };
                rewritten.extend(write_offload_binary(&[image], &WriteOptions::default()).unwrap());
            }
        }
        assert!(rewritten == data, "{name}");
    }
}

#[test]
fn keys_keep_their_values_and_llvm_order() {
    let data = fixture("keys.offbin");
    let all = binaries(&data);
    let first = all[0].entries().next().unwrap();
    let keys: Vec<&[u8]> = first.strings().map(|s| s.key).collect();
    // The order llvm-offload-binary 22 chose is its DenseMap's, which
    // image_arguments reproduces.
    let args: Vec<&[u8]> = image_arguments(
        b"file=x,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda,feature=+ptx,foo=bar",
    )
    .into_iter()
    .map(|a| a.key)
    .filter(|k| *k != b"file" && *k != b"kind")
    .collect();
    assert_eq!(keys, args);
    let values: Vec<(&[u8], &[u8])> = all
        .iter()
        .flat_map(|b| b.entries())
        .flat_map(|e| e.strings().map(|s| (s.key, s.value)).collect::<Vec<_>>())
        .collect();
    assert!(values.contains(&(&b"empty"[..], &b""[..])));
    assert!(values.contains(&(&b"eq"[..], &b"a=b"[..])));
    assert!(values.contains(&(&b"feature"[..], &b"+a,+b"[..])));
}

fn one_image<'a>(strings: &'a [(&'a [u8], &'a [u8])], image: &'a [u8]) -> NewImage<'a> {
    NewImage {
        image_kind: ImageKind::Object,
        offload_kind: OffloadKind::Hip,
        flags: 0,
        strings,
        image,
    }
}

const STRINGS: &[(&[u8], &[u8])] = &[(b"triple", b"amdgcn-amd-amdhsa"), (b"arch", b"gfx90a")];

#[test]
fn versions_2_and_3_round_trip_with_several_images() {
    let images = [
        one_image(STRINGS, b"ABCDEFGHIJ"),
        one_image(
            &[(b"triple", b"nvptx64-nvidia-cuda"), (b"arch", b"sm_80")],
            b"XYZ",
        ),
        one_image(&[(b"symbols", b"a\0b\0c")], b""),
    ];
    for version in [2, 3] {
        let options = WriteOptions {
            version,
            compression: None,
        };
        let data = write_offload_binary(&images, &options).unwrap();
        assert_eq!(data.len() % 8, 0);
        let binary = OffloadBinary::parse(&data).unwrap();
        assert_eq!(binary.version(), version);
        assert_eq!(binary.entry_count(), 3);
        let entries: Vec<_> = binary.entries().collect();
        assert_eq!(entries[0].image(), b"ABCDEFGHIJ");
        assert_eq!(entries[0].image_offset() % 8, 0);
        // Upstream packs images back to back: only the first is aligned.
        assert_eq!(entries[1].image_offset(), entries[0].image_offset() + 10);
        assert_eq!(entries[1].arch(), Some(&b"sm_80"[..]));
        // Version 2 values have a size and may hold NULs.
        assert_eq!(entries[2].string(b"symbols"), Some(&b"a\0b\0c"[..]));
    }
}

#[test]
fn version_3_compressed_round_trips_through_the_shared_decoder() {
    let image = vec![7u8; 10_000];
    let images = [one_image(STRINGS, &image)];
    let plain = write_offload_binary(
        &images,
        &WriteOptions {
            version: 3,
            compression: None,
        },
    )
    .unwrap();
    let methods = [clangoffload::CompressionMethod::Zlib];
    for method in methods {
        let options = WriteOptions {
            version: 3,
            compression: Some((method, None)),
        };
        let data = write_offload_binary(&images, &options).unwrap();
        assert!(data.len() < 1000);
        assert_eq!(data.len() % 8, 0);
        let binary = OffloadBinary::parse(&data).unwrap();
        assert!(binary.is_compressed());
        assert_eq!(binary.compression(), Some(method));
        assert_eq!(binary.inflated_size(), plain.len() as u64);
        assert_eq!(binary.entries().count(), 0);
        let inflated = binary.decompress(&DecompressOptions::default()).unwrap();
        assert_eq!(inflated, plain);
        let entry = OffloadBinary::parse(&inflated)
            .unwrap()
            .entries()
            .next()
            .unwrap();
        assert_eq!(entry.image(), &image[..]);
        // Padding after a compressed binary is not part of it; a walker
        // steps over it to the next binary.
        let mut two = data.clone();
        two.extend_from_slice(&plain);
        assert_eq!(Containers::new(&two).filter(|c| c.is_ok()).count(), 2);
    }
}

#[test]
fn compressed_binaries_refuse_hostile_sizes() {
    let images = [one_image(STRINGS, b"payload")];
    let options = WriteOptions {
        version: 3,
        compression: Some((clangoffload::CompressionMethod::Zlib, None)),
    };
    let mut data = write_offload_binary(&images, &options).unwrap();
    data[32..40].copy_from_slice(&(1u64 << 62).to_le_bytes());
    let binary = OffloadBinary::parse(&data).unwrap();
    let error = binary
        .decompress(&DecompressOptions::default())
        .unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::SizeLimitExceeded { .. }));
    assert_eq!(error.offset(), 32);
}

/// A valid single-image version 1 binary to damage.
fn v1() -> Vec<u8> {
    write_offload_binary(
        &[one_image(STRINGS, b"ABCDEFGHIJ")],
        &WriteOptions::default(),
    )
    .unwrap()
}

fn set(data: &mut [u8], at: usize, value: u64) {
    data[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn malformed_binaries_get_located_errors() {
    let good = v1();
    // (what to damage, expected kind, expected offset)
    type Damage = fn(&mut Vec<u8>);
    type Expect = fn(ErrorKind) -> bool;
    let cases: &[(&str, Damage, Expect, u64)] = &[
        (
            "short",
            |d| d.truncate(20),
            |k| matches!(k, ErrorKind::Truncated { .. }),
            0,
        ),
        (
            "magic",
            |d| d[0] = 0,
            |k| k == ErrorKind::NotOffloadBinary,
            0,
        ),
        (
            "version 4",
            |d| d[4] = 4,
            |k| k == ErrorKind::UnsupportedBinaryVersion { version: 4 },
            4,
        ),
        (
            "size past end",
            |d| set(d, 8, 1 << 40),
            |k| matches!(k, ErrorKind::BinaryOutOfBounds { .. }),
            8,
        ),
        (
            "size below header",
            |d| set(d, 8, 8),
            |k| matches!(k, ErrorKind::BinarySizeTooSmall { .. }),
            8,
        ),
        (
            "entry table outside",
            |d| set(d, 16, 1 << 20),
            |k| matches!(k, ErrorKind::EntryTableOutOfBounds { .. }),
            16,
        ),
        (
            // LLVM 22: "The end of the file was unexpectedly encountered".
            "v1 entry size 2^64-1",
            |d| set(d, 24, u64::MAX),
            |k| {
                matches!(
                    k,
                    ErrorKind::EntrySizeOutOfBounds {
                        entry_size: u64::MAX,
                        ..
                    }
                )
            },
            24,
        ),
        (
            "v1 entry size past the binary after its header",
            |d| {
                let size = u64::from_le_bytes(d[8..16].try_into().unwrap());
                set(d, 24, size - 31);
            },
            |k| matches!(k, ErrorKind::EntrySizeOutOfBounds { .. }),
            24,
        ),
        (
            // LLVM 22 crashes (reads string entries past the end).
            "string count huge",
            |d| set(d, 48, 1 << 60),
            |k| matches!(k, ErrorKind::StringTableOutOfBounds { .. }),
            40,
        ),
        (
            // LLVM 22 crashes (reads the key from a wild offset).
            "key offset out of bounds",
            |d| set(d, 72, 1 << 40),
            |k| matches!(k, ErrorKind::StringOutOfBounds { .. }),
            72,
        ),
        (
            "value offset out of bounds",
            |d| set(d, 80, 1 << 40),
            |k| matches!(k, ErrorKind::StringOutOfBounds { .. }),
            80,
        ),
        (
            // LLVM 22 crashes when extracting (copies past the end).
            "image past the end",
            |d| set(d, 64, 1 << 20),
            |k| matches!(k, ErrorKind::ImageOutOfBounds { .. }),
            56,
        ),
        (
            "image end wraps",
            |d| {
                set(d, 56, u64::MAX - 4);
                set(d, 64, 10)
            },
            |k| matches!(k, ErrorKind::ImageOutOfBounds { .. }),
            56,
        ),
        (
            // LLVM 22 reads on until some NUL.
            "string without NUL",
            |d| {
                let end = d.len();
                for b in &mut d[104..end] {
                    if *b == 0 {
                        *b = b'x';
                    }
                }
            },
            |k| matches!(k, ErrorKind::UnterminatedString { .. }),
            72,
        ),
    ];
    for (what, damage, expected, offset) in cases {
        let mut data = good.clone();
        damage(&mut data);
        let error = OffloadBinary::parse(&data).expect_err(what);
        assert!(expected(error.kind()), "{what}: {error}");
        assert_eq!(error.offset(), *offset, "{what}: {error}");
        if error.offset() >= 32 {
            assert_eq!(error.entry(), Some(0), "{what}");
        }
    }
}

#[test]
fn unknown_kinds_are_kept_and_duplicate_keys_reported() {
    let strings: &[(&[u8], &[u8])] = &[(b"arch", b"a"), (b"triple", b"t"), (b"arch", b"b")];
    let image = NewImage {
        image_kind: ImageKind::Unknown(9),
        offload_kind: OffloadKind::Unknown(0x20),
        flags: 4,
        strings,
        image: b"x",
    };
    let data = write_offload_binary(&[image], &WriteOptions::default()).unwrap();
    let binary = OffloadBinary::parse(&data).unwrap();
    let entry = binary.entries().next().unwrap();
    assert_eq!(entry.image_kind(), ImageKind::Unknown(9));
    assert_eq!(entry.offload_kind(), OffloadKind::Unknown(0x20));
    // The last value of a repeated key, as LLVM reads them.
    assert_eq!(entry.arch(), Some(&b"b"[..]));
    let diagnostics = binary.validate();
    assert!(diagnostics.contains(&BinaryDiagnostic::DuplicateKey {
        entry: 0,
        first: 0,
        second: 2
    }));
    assert!(diagnostics.contains(&BinaryDiagnostic::UnknownFlags { entry: 0, flags: 4 }));
}

#[test]
fn a_section_walk_keeps_good_binaries_before_a_bad_one_and_skips_padding() {
    let good = v1();
    let mut section = good.clone();
    section.extend_from_slice(&[0; 8]);
    section.extend_from_slice(&good);
    section.extend_from_slice(&[0; 8]);
    let mut bad = good.clone();
    set(&mut bad, 48, 1 << 60);
    let bad_at = section.len() as u64;
    section.extend_from_slice(&bad);
    let results: Vec<_> = Containers::new(&section).collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].is_ok() && results[1].is_ok());
    let error = results[2].as_ref().unwrap_err();
    assert_eq!(error.offset(), bad_at + 40);
}

#[test]
fn unaligned_input_is_read() {
    let mut data = vec![0u8];
    data.extend(v1());
    let binary = OffloadBinary::parse(&data[1..]).unwrap();
    assert_eq!(binary.entries().next().unwrap().image(), b"ABCDEFGHIJ");
}

#[test]
fn image_arguments_join_repeated_keys() {
    let args = image_arguments(b"file=a.o,file=b.o,triple=t,kind=openmp");
    let file = args.iter().find(|a| a.key == b"file").unwrap();
    assert_eq!(file.value, b"a.o,b.o");
}

fn elf_sections(name: &str) -> Vec<(String, SectionKind)> {
    let data = fixture(name);
    let elf = ObjectFile::parse(&data).unwrap();
    offload_sections(&elf)
        .map(|s| {
            let s = s.unwrap();
            (
                String::from_utf8_lossy(s.section.name()).into_owned(),
                s.kind,
            )
        })
        .collect()
}

#[test]
fn locator_finds_every_kind_of_offload_section() {
    use SectionKind::*;
    let has = |name: &str, kind: SectionKind| {
        assert!(
            elf_sections(name).iter().any(|(_, k)| *k == kind),
            "{name}: {kind:?} in {:?}",
            elf_sections(name)
        )
    };
    has("embed.o", OffloadBinaries);
    has("omp.o", OffloadBinaries);
    has("hip-rdc-new-driver.o", OffloadBinaries);
    has("cuda-rdc-new-driver.o", OffloadBinaries);
    for name in [
        "hip.o",
        "hip-new-driver.o",
        "hip-compress.o",
        "libhip.so",
        "hip-exe",
    ] {
        has(name, HipFatbin);
        has(name, HipWrappers);
    }
    has("hip-rdc.o", BundleEntry);
    has("cuda.o", NvFatbin);
    has("cuda.o", CudaWrappers);
}

#[test]
fn embedded_binaries_read_as_objdump_reads_them() {
    for name in [
        "embed.o",
        "embed2.o",
        "cuda-rdc-new-driver.o",
        "hip-rdc-new-driver.o",
    ] {
        let data = fixture(name);
        let elf = ObjectFile::parse(&data).unwrap();
        let mut found = Vec::new();
        for section in offload_sections(&elf) {
            let section = section.unwrap();
            if section.kind == SectionKind::OffloadBinaries {
                found.extend(binaries(section.section.data()));
            }
        }
        let expected = String::from_utf8(fixture(&format!("{name}.objdump"))).unwrap();
        let body = expected.split_once("elf64-x86-64\n").unwrap().1;
        assert_eq!(objdump(&found), body, "{name}");
    }
}

#[test]
fn wrappers_in_linked_files_point_at_the_fat_binary() {
    for name in ["libhip.so", "libhip2.so", "libhip-mixed.so", "hip-exe"] {
        let data = fixture(name);
        let elf = ObjectFile::parse(&data).unwrap();
        let segment = elf.section_by_name(b".hipFatBinSegment").unwrap();
        let records: Vec<_> = wrappers(segment.data(), elf.class()).collect();
        assert!(!records.is_empty(), "{name}");
        for record in records {
            assert_eq!(record.kind, WrapperKind::Hip, "{name}");
            assert_eq!(record.version, 1);
            let (section, offset) = wrapper_target(&elf, &segment, &record).unwrap();
            assert_eq!(section.name(), b".hip_fatbin", "{name}");
            let (_, container) = Containers::at(section.data(), offset)
                .next()
                .unwrap()
                .unwrap();
            assert!(
                matches!(container, Container::Bundle(_) | Container::Compressed(_)),
                "{name}"
            );
        }
    }
    // Resolving a whole section at once finds the same targets.
    for name in [
        "libhip.so",
        "libhip2.so",
        "libhip-mixed.so",
        "hip-exe",
        "hip.o",
        "cuda.o",
        "hip-rdc.o",
    ] {
        let data = fixture(name);
        let elf = ObjectFile::parse(&data).unwrap();
        for section in offload_sections(&elf).flatten() {
            if !matches!(
                section.kind,
                SectionKind::HipWrappers | SectionKind::CudaWrappers
            ) {
                continue;
            }
            let all = wrapper_targets(&elf, &section.section);
            assert!(!all.is_empty(), "{name}");
            for (record, target) in all {
                let one = wrapper_target(&elf, &section.section, &record);
                assert_eq!(
                    target.map(|(s, o)| (s.index(), o)),
                    one.map(|(s, o)| (s.index(), o)),
                    "{name}"
                );
            }
        }
    }
    // In a relocatable object the pointer is left to a relocation.
    for name in ["hip.o", "hip-compress.o", "cuda.o"] {
        let data = fixture(name);
        let elf = ObjectFile::parse(&data).unwrap();
        let segment = offload_sections(&elf)
            .flatten()
            .find(|s| matches!(s.kind, SectionKind::HipWrappers | SectionKind::CudaWrappers))
            .unwrap()
            .section;
        let record = wrappers(segment.data(), elf.class()).next().unwrap();
        assert_eq!(record.binary, 0);
        assert!(locate_address(&elf, record.binary).is_none());
        let (section, offset) = wrapper_target(&elf, &segment, &record).unwrap();
        assert!(section.name().ends_with(b"_fatbin"), "{name}");
        assert_eq!(offset, 0);
    }
}

#[test]
fn code_object_headers_name_the_target_their_bundle_entry_names() {
    let data = fixture("hip.o");
    let elf = ElfFile::parse(&data).unwrap();
    let fatbin = elf.section_by_name(b".hip_fatbin").unwrap();
    let bundle = Bundle::parse(fatbin.data()).unwrap();
    let mut checked = 0;
    for entry in bundle.entries() {
        let entry = entry.unwrap();
        let id = entry.id_str().unwrap();
        if entry.payload().is_empty() {
            continue;
        }
        let code_object = ElfFile::parse(entry.payload()).unwrap();
        let target = AmdgpuTarget::from_header(code_object.header()).unwrap();
        assert!(id.ends_with(&format!("--{target}")), "{id} vs {target}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

#[test]
fn target_ids_come_from_e_flags() {
    let mut header = ElfFile::parse(&fixture("hip.o"))
        .unwrap()
        .header()
        .to_owned();
    header.machine = 224;
    header.os_abi = 64;
    header.abi_version = 2;
    for (flags, id) in [
        (0x03f | 0x300 | 0x800, "gfx90a:sramecc-:xnack+"),
        (0x03f | 0x100 | 0x400, "gfx90a"),
        (0x051 | (1 << 24), "gfx9-generic"),
        (0x04c | 0xc00 | 0x200, "gfx942:sramecc+:xnack-"),
        // What LLVM's main branch writes: new machines, and gfx1250/gfx1251
        // and gfx12-5-generic with the features it gives them.
        (0x05d, "gfx1170"),
        (0x050, "gfx1310"),
        (0x057, "gfx1154"),
        (0x062 | (1 << 24), "gfx11-7-generic"),
        (0x063 | (1 << 24), "gfx13-generic"),
        (0x05b | (1 << 24) | 0x300, "gfx12-5-generic:xnack+"),
        (0x049 | 0xc00, "gfx1250:sramecc+"),
        (0x05a | 0x200, "gfx1251:xnack-"),
    ] {
        header.flags = flags;
        assert_eq!(AmdgpuTarget::from_header(&header).unwrap().to_string(), id);
    }
    // LLVM 22's llvm-mc writes "any" for both features of gfx1250, whose
    // target IDs take neither: still a target, with no features.
    header.flags = 0x549;
    assert_eq!(
        AmdgpuTarget::from_header(&header).unwrap().to_string(),
        "gfx1250"
    );
    // A feature set on or off that the processor lacks names no target ID
    // (fuzz/artifacts-found/elf_locate/feature-the-processor-lacks).
    for flags in [0x025 | 0x800, 0x025 | 0x300, 0x05d | 0x300, 0x05b | 0xc00] {
        header.flags = flags;
        assert!(AmdgpuTarget::from_header(&header).is_none(), "{flags:#x}");
    }
    header.flags = 0x040;
    assert!(AmdgpuTarget::from_header(&header).is_none());
    header.flags = 0x03f;
    header.abi_version = 1;
    assert!(AmdgpuTarget::from_header(&header).is_none());
}

/// Containers by offset: what scan finds.
fn scanned(data: &[u8]) -> Vec<(u64, &'static str)> {
    scan(data)
        .filter_map(|f| match f {
            Found::Container(offset, c) => Some((
                offset,
                match c {
                    Container::Bundle(_) => "bundle",
                    Container::Compressed(_) => "compressed",
                    Container::OffloadBinary(_) => "binary",
                },
            )),
            Found::CudaFatbin(..) | Found::Rejected(..) => None,
        })
        .collect()
}

#[test]
fn scan_finds_what_the_locator_finds() {
    for name in [
        "embed.o",
        "embed2.o",
        "hip.o",
        "hip-compress.o",
        "libhip2.so",
        "libhip-mixed.so",
        "hip-exe",
        "omp.o",
    ] {
        let data = fixture(name);
        let elf = ObjectFile::parse(&data).unwrap();
        let mut expected = Vec::new();
        for section in offload_sections(&elf) {
            let section = section.unwrap();
            if !section.kind.holds_containers() {
                continue;
            }
            for found in Containers::new(section.section.data()) {
                let (offset, c) = found.unwrap();
                let kind = match c {
                    Container::Bundle(_) => "bundle",
                    Container::Compressed(_) => "compressed",
                    Container::OffloadBinary(_) => "binary",
                };
                expected.push((section.section.offset() + offset, kind));
            }
        }
        let found = scanned(&data);
        for hit in &expected {
            assert!(found.contains(hit), "{name}: {hit:?} not in {found:?}");
        }
    }
}

#[test]
fn scan_crosses_block_boundaries_and_dense_hits() {
    let binary = v1();
    // Containers at every alignment around the 128 KiB block boundary.
    let mut data = vec![0u8; 300_000];
    let mut placed = Vec::new();
    for (i, at) in [0usize, 131_072 - 3, 131_400, 200_001]
        .into_iter()
        .enumerate()
    {
        data[at..at + binary.len()].copy_from_slice(&binary);
        placed.push((at as u64, "binary"));
        let _ = i;
    }
    // Thousands of bare magics (rejected) between them must not hide any.
    for at in (20_000..120_000).step_by(37) {
        data[at..at + 4].copy_from_slice(b"CCOB");
    }
    let found = scanned(&data);
    assert_eq!(found, placed);
    let rejected = scan(&data)
        .filter(|f| matches!(f, Found::Rejected(..)))
        .count();
    assert!(rejected > 2000);
}

/// Every offset where a magic starts, the slow way.
fn every_magic(data: &[u8]) -> Vec<u64> {
    let magics: [&[u8]; 4] = [
        clangoffload::bundle::BUNDLE_MAGIC,
        clangoffload::compressed::COMPRESSED_MAGIC,
        clangoffload::offload_binary::OFFLOAD_BINARY_MAGIC,
        clangoffload::cuda_fatbin::FATBIN_MAGIC_BYTES,
    ];
    (0..data.len())
        .filter(|&at| magics.iter().any(|m| data[at..].starts_with(m)))
        .map(|at| at as u64)
        .collect()
}

fn offsets(data: &[u8]) -> Vec<u64> {
    scan(data)
        .map(|f| match f {
            Found::Container(offset, _)
            | Found::CudaFatbin(offset, _)
            | Found::Rejected(offset, _) => offset,
        })
        .collect()
}

#[test]
fn scan_sees_every_magic_among_near_magics() {
    // Cut magics at every step alignment (the search compares 64 positions
    // at a time), whole ones between them, containers across 64-byte and
    // 4 KiB boundaries, and magics cut by the end of the buffer.
    let binary = v1();
    let mut data = Vec::new();
    let mut placed = Vec::new();
    for i in 0..4000usize {
        data.extend_from_slice(match i % 6 {
            0 => b"CCO".as_slice(),
            1 => b"\x10\xff\x10",
            2 => b"__CLANG_OFFLOAD_BUNDLE_",
            3 => b"C\x10\xffB\x10\x00\x00\xad",
            4 => b"__CLANG_OFFLOAD_BUNDLE\x00",
            _ => &b"xxxxxxx"[..i % 7],
        });
        if i % 97 == 0 {
            data.extend_from_slice(if i % 2 == 0 {
                b"CCOB"
            } else {
                b"\x10\xff\x10\xad"
            });
        }
        if i % 701 == 0 {
            let at = (data.len() | 4095) - 9 + i % 13;
            data.resize(at, b'.');
            placed.push((at as u64, "binary"));
            data.extend_from_slice(&binary);
        }
    }
    let magics = every_magic(&data);
    assert!(magics.len() > 40);
    assert_eq!(offsets(&data), magics);
    assert_eq!(scanned(&data), placed);
    for cut in 1..24 {
        let mut end = data.clone();
        end.extend_from_slice(&clangoffload::bundle::BUNDLE_MAGIC[..cut]);
        assert_eq!(offsets(&end), magics, "a bundle magic cut at {cut}");
    }
    for magic in [
        &b"CCOB"[..],
        b"\x10\xff\x10\xad",
        b"__CLANG_OFFLOAD_BUNDLE__",
    ] {
        for pad in 0..70 {
            let mut end = data.clone();
            end.resize(data.len() + pad, b'.');
            end.extend_from_slice(magic);
            let mut want = magics.clone();
            want.push((end.len() - magic.len()) as u64);
            assert_eq!(offsets(&end), want, "{magic:?} at the end after {pad}");
        }
    }
}

#[test]
fn scan_finds_a_container_whose_magic_overlaps_another() {
    // A bundle magic's last "__" starts the next one: a string such as
    // "__CLANG_OFFLOAD_BUNDLE" just before a bundle makes a rejected magic
    // 22 bytes before the bundle, and the bundle is still found (the
    // iterator's search used to skip past the whole first magic).
    let bundle = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llvm22/hip-4096.bundle"),
    )
    .unwrap();
    for lead in [0usize, 1, 63, 4090] {
        let mut data = vec![b'.'; lead];
        data.extend_from_slice(b"__CLANG_OFFLOAD_BUNDLE");
        data.extend_from_slice(&bundle);
        let found: Vec<_> = scan(&data).collect();
        assert!(
            matches!(found.as_slice(), [Found::Rejected(a, _), Found::Container(b, Container::Bundle(_))]
                if *a == lead as u64 && *b == lead as u64 + 22),
            "{lead}: {found:?}"
        );
    }
}

/// A compressed bundle (zlib, stored: its stream holds `inner` verbatim).
fn stored_compressed(inner: &[u8]) -> Vec<u8> {
    clangoffload::compressed::compress(
        inner,
        &clangoffload::compressed::CompressOptions {
            version: 3,
            method: clangoffload::CompressionMethod::Zlib,
            level: Some(0),
        },
    )
    .unwrap()
}

/// An OffloadBinary whose image is `image`, and where the image starts.
fn binary_holding(image: &[u8]) -> (Vec<u8>, usize) {
    let binary =
        write_offload_binary(&[one_image(STRINGS, image)], &WriteOptions::default()).unwrap();
    let at = binary
        .windows(image.len())
        .position(|w| w == image)
        .unwrap();
    (binary, at)
}

#[test]
fn scan_skips_inside_compressed_bundles_only_within_what_holds_them() {
    // Well-formed nesting: a compressed bundle in an image; the OffloadBinary
    // its stored stream holds verbatim is compressed bytes, not a hit.
    let inner = v1();
    let compressed = stored_compressed(&inner);
    assert!(compressed
        .windows(inner.len())
        .any(|w| w == inner.as_slice()));
    let (outer, at) = binary_holding(&compressed);
    assert_eq!(scanned(&outer), [(0, "binary"), (at as u64, "compressed")]);

    // A damaged one: the image holds only a compressed bundle's header, whose
    // total size runs past the image into the compressed bundle after it.
    // That one is found (as the walker finds it), and its inside skipped.
    let header = &compressed[..32];
    let (mut data, at) = binary_holding(header);
    let next = data.len();
    data.extend_from_slice(&compressed);
    assert!(at + compressed.len() > next && at + compressed.len() <= data.len());
    let walked: Vec<u64> = Containers::new(&data).map(|f| f.unwrap().0).collect();
    assert_eq!(walked, [0, next as u64]);
    assert_eq!(
        scanned(&data),
        [
            (0, "binary"),
            (at as u64, "compressed"),
            (next as u64, "compressed")
        ]
    );
}

/// Reads a container's extent the way a pointer-only reader does: a prefix
/// at a time, as long as the header asks for more.
fn extent_by_prefixes(data: &[u8]) -> (u64, usize) {
    use clangoffload::container::{declared_extent, Extent};
    let mut len = 8usize;
    loop {
        let prefix = &data[..len.min(data.len())];
        match declared_extent(prefix).unwrap() {
            Extent::Known(size) => return (size, prefix.len()),
            Extent::NeedAtLeast(n) => {
                assert!(n as usize > prefix.len(), "no progress");
                len = n as usize;
            }
            Extent::Unknown => panic!("unknown extent"),
        }
    }
}

#[test]
fn extents_come_from_headers_without_reading_payloads() {
    let hip = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/llvm22/hip-4096.bundle"),
    )
    .unwrap();
    let (size, read) = extent_by_prefixes(&hip);
    assert_eq!(size, hip.len() as u64);
    assert!(read < 512, "read {read} bytes of the header");
    // The 32 bytes every version's header starts with give the size.
    let binary = v1();
    assert_eq!(extent_by_prefixes(&binary), (binary.len() as u64, 32));
    // A version 2 binary of no entries is those 32 bytes alone: the reader
    // must not ask for a version 3 header's 40 (fuzz: offload_binary).
    let mut empty = Vec::from(&binary[..32]);
    empty[4] = 2;
    empty[8..16].copy_from_slice(&32u64.to_le_bytes());
    empty[16..32].fill(0);
    assert!(OffloadBinary::parse(&empty).is_ok());
    assert_eq!(extent_by_prefixes(&empty), (32, 32));
    // A version 3 header is 40 bytes: 32 of them ask for the rest (fuzz:
    // c_abi, where this said TRUNCATED with no extent).
    let mut v3 = empty.clone();
    v3[4] = 3;
    v3[8..16].copy_from_slice(&48u64.to_le_bytes());
    use clangoffload::container::{declared_extent, Extent};
    assert_eq!(declared_extent(&v3), Ok(Extent::NeedAtLeast(40)));
    v3.resize(40, 0);
    assert_eq!(declared_extent(&v3), Ok(Extent::Known(48)));
    let compressed = clangoffload::compressed::compress(
        &hip,
        &clangoffload::compressed::CompressOptions {
            version: 3,
            method: clangoffload::CompressionMethod::Zlib,
            level: None,
        },
    )
    .unwrap();
    assert_eq!(extent_by_prefixes(&compressed).0, compressed.len() as u64);
    // Header faults are errors, not guesses.
    let mut bad = hip.clone();
    bad[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
    bad[40..48].copy_from_slice(&2u64.to_le_bytes());
    assert!(clangoffload::container::declared_extent(&bad).is_err());
}

#[test]
fn version_2_entry_counts_that_cannot_fit_are_refused() {
    let options = WriteOptions {
        version: 2,
        compression: None,
    };
    let good = write_offload_binary(&[one_image(STRINGS, b"x")], &options).unwrap();
    for count in [1u64 << 32, 1 << 63, u64::MAX] {
        let mut data = good.clone();
        set(&mut data, 24, count);
        let error = OffloadBinary::parse(&data).unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::EntryTableOutOfBounds { count: c, .. } if c == count),
            "{count}: {error}"
        );
        assert_eq!(error.offset(), 24);
    }
}

#[test]
fn strings_are_bytes_not_text() {
    let strings: &[(&[u8], &[u8])] = &[(b"k\xff\xfe", b"v\x80"), (b"triple", b"\xc3\x28")];
    for version in [1, 2] {
        let options = WriteOptions {
            version,
            compression: None,
        };
        let data = write_offload_binary(&[one_image(strings, b"img")], &options).unwrap();
        let binary = OffloadBinary::parse(&data).unwrap();
        let entry = binary.entries().next().unwrap();
        let read: Vec<(&[u8], &[u8])> = entry.strings().map(|s| (s.key, s.value)).collect();
        assert_eq!(read, strings);
        assert_eq!(entry.triple(), Some(&b"\xc3\x28"[..]));
    }
    // A key holding a NUL cannot be written: it would end the key.
    let bad: &[(&[u8], &[u8])] = &[(b"a\0b", b"v")];
    let error = write_offload_binary(&[one_image(bad, b"")], &WriteOptions::default()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NulInString);
}

#[test]
fn damaged_compressed_streams_are_errors() {
    let image = vec![3u8; 5000];
    let options = WriteOptions {
        version: 3,
        compression: Some((clangoffload::CompressionMethod::Zlib, None)),
    };
    let good = write_offload_binary(&[one_image(STRINGS, &image)], &options).unwrap();
    let size = u64::from_le_bytes(good[8..16].try_into().unwrap()) as usize;
    // Cut short: the size says the stream ends earlier.
    let mut short = good[..size].to_vec();
    short.truncate(size - 4);
    set(&mut short, 8, (size - 4) as u64);
    let error = OffloadBinary::parse(&short)
        .unwrap()
        .decompress(&DecompressOptions::default())
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::CorruptStream { .. }),
        "{error}"
    );
    // Declaring less than the stream gives.
    let mut small = good.clone();
    let inflated = u64::from_le_bytes(good[32..40].try_into().unwrap());
    set(&mut small, 32, inflated - 8);
    let error = OffloadBinary::parse(&small)
        .unwrap()
        .decompress(&DecompressOptions::default())
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DecompressedTooLarge { .. }),
        "{error}"
    );
}

#[test]
fn extents_of_damaged_headers() {
    use clangoffload::container::{declared_extent, Extent};
    // A bundle counting 2^63 entries: the walk asks for more bytes, one
    // descriptor at a time, and never more than the next one needs.
    let mut bundle = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    bundle.extend_from_slice(&(1u64 << 63).to_le_bytes());
    bundle.extend_from_slice(&[0u8; 24 * 3]);
    assert_eq!(
        declared_extent(&bundle),
        Ok(Extent::NeedAtLeast(32 + 24 * 4))
    );
    // Compressed: a total size below the header, an unknown version, and
    // version 1, which records no total size.
    let mut ccob = b"CCOB".to_vec();
    ccob.extend_from_slice(&2u16.to_le_bytes());
    ccob.extend_from_slice(&1u16.to_le_bytes());
    ccob.extend_from_slice(&10u32.to_le_bytes());
    ccob.extend_from_slice(&[0u8; 12]);
    assert!(matches!(
        declared_extent(&ccob).unwrap_err().kind(),
        ErrorKind::BadTotalSize { total: 10, .. }
    ));
    ccob[4] = 7;
    assert!(matches!(
        declared_extent(&ccob).unwrap_err().kind(),
        ErrorKind::UnsupportedVersion { version: 7 }
    ));
    ccob[4] = 1;
    assert_eq!(declared_extent(&ccob), Ok(Extent::Unknown));
    // An OffloadBinary of an unknown version.
    let mut binary = v1();
    binary[4] = 9;
    assert!(declared_extent(&binary).is_err());
    // A size below its version's header, said from the 32 bytes every
    // version starts with (a version 3 header is 40), at the size field.
    let mut short = binary[..32].to_vec();
    for (version, size) in [(2u8, 16u64), (3, 32)] {
        short[4] = version;
        short[8..16].copy_from_slice(&size.to_le_bytes());
        let e = declared_extent(&short).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::BinarySizeTooSmall { .. }) && e.offset() == 8,
            "{e:?}"
        );
    }
    // A size of 2^64 - 1 is what the header says: the reader's bound
    // refuses it, not a guess here.
    short[4] = 2;
    short[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(declared_extent(&short), Ok(Extent::Known(u64::MAX)));
    // Eight bytes of any version ask for the 32 all versions share.
    assert_eq!(declared_extent(&short[..8]), Ok(Extent::NeedAtLeast(32)));
}

#[test]
fn a_partial_wrapper_record_is_not_read() {
    use clangoffload::elf::Class;
    let mut section = Vec::new();
    section.extend_from_slice(&0x4849_5046u32.to_le_bytes());
    section.extend_from_slice(&1u32.to_le_bytes());
    section.extend_from_slice(&0x1000u64.to_le_bytes());
    section.extend_from_slice(&0u64.to_le_bytes());
    section.extend_from_slice(&[0x46, 0x50, 0x49]);
    let records: Vec<_> = wrappers(&section, Class::Elf64).collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].kind, WrapperKind::Hip);
    assert_eq!(records[0].binary, 0x1000);
    let records: Vec<_> = wrappers(&section, Class::Elf32).collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].binary, 0x1000);
}

/// A version 1 binary's entry size is otherwise unused: any value up to the
/// binary's size after its header reads, as LLVM 22 reads it.
#[test]
fn a_v1_entry_size_up_to_the_binary_after_its_header_reads() {
    let mut data = v1();
    let size = u64::from_le_bytes(data[8..16].try_into().unwrap());
    for entry_size in [0, 40, size - 32] {
        set(&mut data, 24, entry_size);
        let binary = OffloadBinary::parse(&data).unwrap();
        assert_eq!(binary.entries().count(), 1, "entry size {entry_size}");
    }
}

/// A key given twice reads as its last value, as LLVM reads the strings into
/// a map (llvm-objdump prints it, `--image=triple=` filters on it).
#[test]
fn a_repeated_key_reads_as_its_last_value() {
    let strings: &[(&[u8], &[u8])] = &[
        (b"triple", b"first-triple"),
        (b"arch", b"gfx90a"),
        (b"triple", b"last-triple"),
    ];
    let data =
        write_offload_binary(&[one_image(strings, b"code")], &WriteOptions::default()).unwrap();
    let binary = OffloadBinary::parse(&data).unwrap();
    let entry = binary.entries().next().unwrap();
    assert_eq!(entry.triple(), Some(&b"last-triple"[..]));
    assert_eq!(entry.string(b"arch"), Some(&b"gfx90a"[..]));
    let objdump = Path::new("/usr/lib/llvm-22/bin/llvm-objdump");
    if objdump.exists() {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("repeated-key.offbin");
        std::fs::write(&path, &data).unwrap();
        let out = std::process::Command::new(objdump)
            .arg("--offloading")
            .arg(&path)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("triple          last-triple"), "{text}");
    }
}
