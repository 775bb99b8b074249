//! kpack's split (clangoffload::kpack::split_host) against rocm-kpack's own
//! output (tests/fixtures/kpack: the hosts before, and after its splitter):
//! the rewritten host byte for byte, every code object keyed as it keyed
//! it, the archives of stored code objects byte for byte; and the refusals.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::{Path, PathBuf};

use clangoffload::compressed::DecompressOptions;
use clangoffload::kpack::{
    search_path, split_host, write_archive, ArchiveOptions, ArchiveWriter, HostSplit, KeyRule,
    NewEntry, Scheme, SplitFault, SplitOptions,
};
use clangoffload::ErrorKind;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kpack")
}

/// The hosts in the order rocm-kpack's splitter met them (their archives'
/// ordinals), with their directory under the prefix.
const HOSTS: [(&str, &str); 7] = [
    ("lib", "libone.so"),
    ("lib", "libskew.so"),
    ("lib", "libtwoz.so"),
    ("lib", "libtwo.so"),
    ("lib", "libxnack.so"),
    ("bin", "hip-pie"),
    ("bin", "hip-nopie"),
];

fn split<'a>(
    data: &'a [u8],
    dir: &str,
    name: &str,
    keys: KeyRule,
) -> clangoffload::Result<HostSplit<'a>> {
    let kernel_name = format!("pkg/stage/{dir}/{name}");
    let path = search_path(b"test_lib", 1);
    split_host(
        data,
        &SplitOptions {
            kernel_name: kernel_name.as_bytes(),
            search_paths: &[&path],
            keys,
        },
        &DecompressOptions::default(),
    )
}

#[test]
fn hosts_are_rocm_kpacks_byte_for_byte() {
    for (dir, name) in HOSTS {
        let input = std::fs::read(fixtures().join("inputs").join(name)).unwrap();
        let split = split(&input, dir, name, KeyRule::PerArch).unwrap();
        let theirs = std::fs::read(fixtures().join("none").join(dir).join(name)).unwrap();
        let zstd = std::fs::read(fixtures().join("zstd").join(dir).join(name)).unwrap();
        assert_eq!(theirs, zstd, "{name}: the host is the same in both schemes");
        if name == "hip-nopie" {
            // rocm-kpack leaves the pointer 0; ours holds the marker's
            // address: the only bytes that differ.
            assert_eq!(split.host.len(), theirs.len(), "{name}");
            let differ: Vec<usize> = (0..theirs.len())
                .filter(|&i| split.host[i] != theirs[i])
                .collect();
            assert!(
                !differ.is_empty() && differ.len() <= 8,
                "{name}: {differ:?}"
            );
            let at = differ[0] & !7;
            let pointer = u64::from_le_bytes(split.host[at..at + 8].try_into().unwrap());
            assert_eq!(pointer, split.marker_address, "{name}");
            assert_eq!(&theirs[at..at + 8], &[0; 8], "{name}");
            assert_eq!(&split.host[at - 8..at - 4], b"HIPK", "{name}");
        } else {
            assert!(
                split.host == theirs,
                "{name}: host differs from rocm-kpack's"
            );
        }
        assert!(input == std::fs::read(fixtures().join("inputs").join(name)).unwrap());
    }
}

/// Every host's code objects, into one archive per architecture, in the
/// splitter's order.
fn archives(scheme: Scheme, keys: KeyRule) -> Vec<(String, Vec<u8>)> {
    let inputs: Vec<Vec<u8>> = HOSTS
        .iter()
        .map(|(_, name)| std::fs::read(fixtures().join("inputs").join(name)).unwrap())
        .collect();
    let mut writers: Vec<(String, ArchiveWriter, Vec<u8>)> = Vec::new();
    for ((dir, name), input) in HOSTS.iter().zip(&inputs) {
        let split = split(input, dir, name, keys).unwrap();
        let mut scratch = Vec::new();
        for unit in 0..split.units.len() {
            let bundle = split
                .bundle(unit, &mut scratch, &DecompressOptions::default())
                .unwrap();
            for object in split
                .code_objects
                .iter()
                .filter(|o| o.record == unit as u64)
            {
                let arch = String::from_utf8(object.arch().to_vec()).unwrap();
                if !writers.iter().any(|(a, ..)| *a == arch) {
                    let arches: [&[u8]; 1] = [arch.as_bytes()];
                    let mut writer = ArchiveWriter::new(&ArchiveOptions {
                        group_name: b"test_lib",
                        arch_family: arch.as_bytes(),
                        arches: &arches,
                        scheme,
                        level: 3,
                    });
                    let out = writer.placeholder();
                    writers.push((arch.clone(), writer, out));
                }
                let (_, writer, out) = writers.iter_mut().find(|(a, ..)| *a == arch).unwrap();
                let metadata: [(&[u8], &[u8]); 2] =
                    [(b"target", &object.id), (b"source_prefix", b"pkg/stage")];
                let entry = NewEntry {
                    key: &object.key,
                    arch: object.arch(),
                    code: object.bytes(bundle).unwrap(),
                    metadata: &metadata,
                };
                writer.add(&entry, out).unwrap();
            }
        }
    }
    writers
        .into_iter()
        .map(|(arch, writer, mut out)| {
            let (prefix, toc) = writer.finish().unwrap();
            out.extend_from_slice(&toc);
            out[..prefix.len()].copy_from_slice(&prefix);
            (arch, out)
        })
        .collect()
}

#[test]
fn stored_archives_are_rocm_kpacks_byte_for_byte() {
    let ours = archives(Scheme::Stored, KeyRule::PerArch);
    assert_eq!(ours.len(), 4);
    for (arch, bytes) in ours {
        let file = format!("test_lib_{}.kpack", arch.replace(':', "_"));
        let theirs = std::fs::read(fixtures().join("none/.kpack").join(&file)).unwrap();
        assert!(bytes == theirs, "{file} differs from rocm-kpack's");
    }
}

#[cfg(feature = "zstd")]
#[test]
fn zstd_archives_hold_rocm_kpacks_entries() {
    use clangoffload::kpack::Archive;
    let ours = archives(Scheme::ZstdPerKernel, KeyRule::PerArch);
    for (arch, bytes) in ours {
        let file = format!("test_lib_{}.kpack", arch.replace(':', "_"));
        let theirs = std::fs::read(fixtures().join("zstd/.kpack").join(&file)).unwrap();
        let (a, b) = (
            Archive::parse(&bytes).unwrap(),
            Archive::parse(&theirs).unwrap(),
        );
        let (ea, eb): (Vec<_>, Vec<_>) = (a.entries().collect(), b.entries().collect());
        assert_eq!(ea.len(), eb.len(), "{file}");
        for (x, y) in ea.iter().zip(&eb) {
            let (x, y) = (x.as_ref().unwrap(), y.as_ref().unwrap());
            assert_eq!(
                (x.key, x.arch, x.ordinal),
                (y.key, y.arch, y.ordinal),
                "{file}"
            );
            assert_eq!(x.metadata, y.metadata, "{file}");
            let opts = DecompressOptions::default();
            assert_eq!(a.contents(x, &opts).unwrap(), b.contents(y, &opts).unwrap());
        }
    }
}

#[test]
fn a_host_whose_units_differ_in_architectures_is_refused_or_keyed_by_record() {
    let input = std::fs::read(fixtures().join("inputs/libskew.so")).unwrap();
    let error = split(&input, "lib", "libskew.so", KeyRule::Strict).unwrap_err();
    let ErrorKind::KpackSplit {
        fault:
            SplitFault::KeyConflict {
                record,
                arch,
                counter,
                conflicts,
            },
    } = error.kind()
    else {
        panic!("{error}");
    };
    assert_eq!((record, counter, conflicts), (1, 0, 1), "{error}");
    assert_eq!(arch.as_bytes(), b"gfx906");
    assert!(error.to_string().contains("gfx906"), "{error}");
    let split = split(&input, "lib", "libskew.so", KeyRule::Record).unwrap();
    let keys: Vec<(&[u8], &[u8])> = split
        .code_objects
        .iter()
        .map(|o| (o.arch(), o.key.as_slice()))
        .collect();
    assert_eq!(
        keys,
        [
            (&b"gfx90a"[..], &b"pkg/stage/lib/libskew.so#0"[..]),
            (b"gfx906", b"pkg/stage/lib/libskew.so#1"),
            (b"gfx90a", b"pkg/stage/lib/libskew.so#1"),
        ]
    );
}

#[test]
fn write_archive_is_the_writer_at_once() {
    let entries = [
        NewEntry {
            key: b"a#0",
            arch: b"gfx906",
            code: b"one",
            metadata: &[],
        },
        NewEntry {
            key: b"b#0",
            arch: b"gfx906",
            code: b"two!",
            metadata: &[],
        },
    ];
    let options = ArchiveOptions {
        group_name: b"g",
        arch_family: b"gfx906",
        arches: &[b"gfx906"],
        scheme: Scheme::Stored,
        level: 3,
    };
    let whole = write_archive(&entries, &options).unwrap();
    let archive = clangoffload::kpack::Archive::parse(&whole).unwrap();
    assert_eq!(archive.entries().count(), 2);
    let mut twice = entries.to_vec();
    twice.push(entries[0]);
    assert!(write_archive(&twice, &options).is_err());
}

#[test]
fn malformed_hosts_are_refused_where_they_are_wrong() {
    let input = std::fs::read(fixtures().join("inputs/libone.so")).unwrap();
    let fault = |data: &[u8]| match split(data, "lib", "x", KeyRule::Strict) {
        Err(e) => match e.kind() {
            ErrorKind::KpackSplit { fault } => Some((fault, e.offset())),
            _ => None,
        },
        Ok(_) => panic!("split"),
    };
    // Not ELF64 x86-64.
    let mut bad = input.clone();
    bad[4] = 1;
    assert!(matches!(
        fault(&bad),
        Some((SplitFault::Unsupported { .. }, 0))
    ));
    // A split host.
    let done = std::fs::read(fixtures().join("none/lib/libone.so")).unwrap();
    assert!(matches!(fault(&done), Some((SplitFault::AlreadySplit, _))));
    // A record's magic broken: the record is named, at its offset.
    let file = clangoffload::elf::ElfFile::parse(&input).unwrap();
    let segment = file.section_by_name(b".hipFatBinSegment").unwrap();
    let at = segment.offset() as usize;
    let mut bad = input.clone();
    bad[at] = b'X';
    let (fault, offset) = fault(&bad).unwrap();
    assert!(
        matches!(fault, SplitFault::RecordMagic { record: 0, .. }),
        "{fault}"
    );
    assert_eq!(offset, at as u64);
    // Truncated: a located error, no panic.
    for len in [0, 10, 64, 1000, input.len() / 2, input.len() - 1] {
        assert!(
            split(&input[..len], "lib", "x", KeyRule::Strict).is_err(),
            "{len}"
        );
    }
}

/// Damage anywhere gives an error or a split, never a panic: every 7th
/// byte of two hosts (one with compressed bundles) set to 0xff, and to 0.
#[test]
fn damage_never_panics() {
    for name in ["libtwo.so", "libtwoz.so"] {
        let input = std::fs::read(fixtures().join("inputs").join(name)).unwrap();
        for at in (0..input.len()).step_by(7) {
            for value in [0xff, 0] {
                let mut bad = input.clone();
                bad[at] = value;
                let _ = split(&bad, "lib", name, KeyRule::Strict);
            }
        }
    }
}
