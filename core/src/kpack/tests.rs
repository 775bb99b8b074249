//! Archives rocm-kpack's splitter wrote (tests/fixtures/kpack, both
//! schemes), read as its own reader reads them; and archives made wrong on
//! purpose.

use super::*;
use crate::compressed::truncated_md5;
use alloc::string::String;
use alloc::vec::Vec;
use alloc::{format, vec};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/kpack");

fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("{ROOT}/{path}")).unwrap()
}

/// An entry as rocm-kpack's reader lists it: key, arch, ordinal,
/// original_size, the truncated MD5 of its code object.
type Listed = (String, String, u64, u64, u64);

/// `listing.txt`, made by rocm-kpack's reader: per archive, its entries in
/// table order.
fn listing() -> Vec<(String, Vec<Listed>)> {
    let text = String::from_utf8(read("listing.txt")).unwrap();
    let mut archives: Vec<(String, Vec<_>)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let entry = (
            f[1].into(),
            f[2].into(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
            u64::from_str_radix(f[5], 16).unwrap(),
        );
        match archives.last_mut() {
            Some((path, entries)) if path == f[0] => entries.push(entry),
            _ => archives.push((f[0].into(), vec![entry])),
        }
    }
    archives
}

#[test]
fn every_entry_reads_as_rocm_kpacks_own_reader_reads_it() {
    let archives = listing();
    assert_eq!(archives.len(), 8, "four archives in each scheme");
    let options = DecompressOptions::default();
    for (path, want) in archives {
        let data = read(&path);
        let archive = Archive::parse(&data).unwrap();
        let scheme = if path.starts_with("zstd") {
            Scheme::ZstdPerKernel
        } else {
            Scheme::Stored
        };
        assert_eq!(archive.scheme(), scheme, "{path}");
        assert_eq!(archive.group_name(), Some(&b"test_lib"[..]));
        assert_eq!(archive.format_version(), Some(1));
        // One architecture per archive, named in the file name (with "_"
        // for ":").
        let arches: Vec<&[u8]> = archive.arches().collect();
        assert_eq!(arches.len(), 1, "{path}");
        let arch = String::from_utf8(arches[0].to_vec()).unwrap();
        assert!(path.ends_with(&format!("test_lib_{}.kpack", arch.replace(':', "_"))));
        assert!(archive.has_arch(arches[0]) && !archive.has_arch(b"gfx90"));
        assert_eq!(archive.arch_family(), Some(arches[0]));
        assert_eq!(archive.entry_count(), want.len() as u64, "{path}");
        let got: Vec<Entry<'_>> = archive.entries().map(|e| e.unwrap()).collect();
        for (entry, (key, arch, ordinal, size, md5)) in got.iter().zip(&want) {
            assert_eq!(entry.key, key.as_bytes(), "{path}");
            assert_eq!(entry.arch, arch.as_bytes(), "{path}");
            assert_eq!((entry.ordinal, entry.original_size), (*ordinal, *size));
            assert_eq!(entry.kind, Some(&b"hsaco"[..]));
            let target = format!("hipv4-amdgcn-amd-amdhsa--{arch}");
            assert_eq!(entry.target, Some(target.as_bytes()));
            let contents = archive.contents(entry, &options).unwrap();
            assert_eq!(contents.len() as u64, *size, "{path} {key}");
            assert_eq!(truncated_md5(&contents), *md5, "{path} {key}");
            assert!(contents.starts_with(b"\x7fELF"));
            // Stored: borrowed from the file, not copied.
            if scheme == Scheme::Stored {
                assert!(matches!(contents, alloc::borrow::Cow::Borrowed(_)));
            }
            let mut out = vec![0; *size as usize];
            assert_eq!(
                archive.read_into(entry, &mut out, &options).unwrap(),
                out.len()
            );
            assert_eq!(out, &contents[..]);
            let mut short = vec![0; *size as usize - 1];
            assert!(archive.read_into(entry, &mut short, &options).is_err());
            // Looked up as the runtime does.
            let found = archive.entry(key.as_bytes(), arch.as_bytes()).unwrap();
            assert_eq!(found, Some(*entry));
        }
        assert_eq!(
            archive
                .entry(b"pkg/stage/lib/libone.so#9", arches[0])
                .unwrap(),
            None
        );
    }
}

#[test]
fn output_names_stay_in_their_directory_and_name_the_code_object() {
    let data = read("zstd/.kpack/test_lib_gfx90a_xnack+.kpack");
    let archive = Archive::parse(&data).unwrap();
    let entry = archive.entries().next().unwrap().unwrap();
    assert_eq!(
        output_name("a.kpack", 3, &entry),
        "a.kpack.3.pkg_stage_lib_libxnack.so_0.hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
    );
    let bare = Entry {
        key: b"../x#1",
        target: None,
        ..entry
    };
    assert_eq!(output_name("a", 0, &bare), "a.0._.._x_1.gfx90a:xnack+");
}

/// A small MessagePack writer for archives made by hand.
#[derive(Default)]
struct Pack(Vec<u8>);

impl Pack {
    fn map(&mut self, n: u8) -> &mut Self {
        self.0.push(0x80 | n);
        self
    }
    fn array(&mut self, n: u8) -> &mut Self {
        self.0.push(0x90 | n);
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.0.push(0xd9);
        self.0.push(s.len() as u8);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn uint(&mut self, n: u64) -> &mut Self {
        self.0.push(0xcf);
        self.0.extend_from_slice(&n.to_be_bytes());
        self
    }
}

/// An archive of `blob` (after the 64-byte header) and the table `toc`
/// writes (the blob area's offset given to it).
fn archive(blob: &[u8], toc: impl FnOnce(&mut Pack)) -> Vec<u8> {
    let mut data = vec![0u8; 64];
    data[..4].copy_from_slice(KPACK_MAGIC);
    data[4..8].copy_from_slice(&1u32.to_le_bytes());
    data.extend_from_slice(blob);
    let toc_offset = data.len() as u64;
    data[8..16].copy_from_slice(&toc_offset.to_le_bytes());
    let mut pack = Pack::default();
    toc(&mut pack);
    data.extend_from_slice(&pack.0);
    data
}

/// `toc` with two entries of `gfx906`, ordinals 0 and `second`, sizes
/// `sizes`.
fn two_entries(p: &mut Pack, second: u64, sizes: [u64; 2]) {
    p.str("gfx_arches").array(1).str("gfx906");
    p.str("toc").map(2);
    for (i, (ordinal, size)) in [(0, sizes[0]), (second, sizes[1])].into_iter().enumerate() {
        p.str(&format!("lib.so#{i}")).map(1).str("gfx906").map(2);
        p.str("ordinal")
            .uint(ordinal)
            .str("original_size")
            .uint(size);
    }
}

fn stored(second_ordinal: u64, blobs: [(u64, u64); 2]) -> Vec<u8> {
    archive(b"AAAABBBBBB", |p| {
        p.map(3);
        two_entries(p, second_ordinal, [4, 6]);
        p.str("blobs").array(2);
        for (offset, size) in blobs {
            p.map(2).str("offset").uint(offset).str("size").uint(size);
        }
    })
}

fn kind(result: Result<impl core::fmt::Debug>) -> ErrorKind {
    result.unwrap_err().kind()
}

#[test]
fn a_stored_entry_out_of_place_costs_only_itself() {
    let options = DecompressOptions::default();
    let good = stored(1, [(64, 4), (68, 6)]);
    let archive = Archive::parse(&good).unwrap();
    let got: Vec<_> = archive
        .entries()
        .map(|e| {
            archive
                .contents(&e.unwrap(), &options)
                .unwrap()
                .into_owned()
        })
        .collect();
    assert_eq!(got, [b"AAAA".to_vec(), b"BBBBBB".to_vec()]);
    // The second blob past the end; the second ordinal past the blobs.
    for (data, fault) in [
        (stored(1, [(64, 4), (68, 600)]), "blob"),
        (stored(2, [(64, 4), (68, 6)]), "ordinal"),
    ] {
        let archive = Archive::parse(&data).unwrap();
        let entries: Vec<_> = archive.entries().map(|e| e.unwrap()).collect();
        assert_eq!(
            &archive.contents(&entries[0], &options).unwrap()[..],
            b"AAAA"
        );
        let error = archive.contents(&entries[1], &options).unwrap_err();
        assert_eq!(
            error.offset(),
            entries[1].at,
            "{fault}: located at its entry"
        );
        match (fault, error.kind()) {
            (
                "blob",
                ErrorKind::OutOfBounds {
                    field: Field::KpackBlob,
                    offset: 68,
                    size: 600,
                    ..
                },
            ) => {}
            (
                "ordinal",
                ErrorKind::MalformedKpack {
                    fault:
                        KpackFault::OrdinalOutOfRange {
                            ordinal: 2,
                            count: 2,
                        },
                },
            ) => {}
            other => panic!("{other:?}"),
        }
    }
}

/// The zstd blob: a count, then sized frames of two code objects.
fn zstd_archive(frames: &[&[u8]], count: u32, sizes: [u64; 2], zstd_size: Option<u64>) -> Vec<u8> {
    let mut blob = count.to_le_bytes().to_vec();
    for frame in frames {
        blob.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        blob.extend_from_slice(frame);
    }
    let len = zstd_size.unwrap_or(blob.len() as u64);
    archive(&blob, |p| {
        p.map(5);
        two_entries(p, 1, sizes);
        p.str("compression_scheme").str("zstd-per-kernel");
        p.str("zstd_offset").uint(64).str("zstd_size").uint(len);
    })
}

/// One zstd frame of `bytes` (content size recorded), as python-zstandard
/// writes rocm-kpack's.
#[cfg(feature = "zstd")]
fn frame(bytes: &[u8]) -> Vec<u8> {
    crate::compressed::zstd::libzstd::compress(bytes, 3, false).unwrap()
}

#[cfg(feature = "zstd")]
#[test]
fn a_zstd_entry_decodes_to_its_original_size_or_says_why_not() {
    let options = DecompressOptions::default();
    let (a, b) = (frame(b"first code object"), frame(b"second"));
    let good = zstd_archive(&[&a, &b], 2, [17, 6], None);
    let archive = Archive::parse(&good).unwrap();
    let got: Vec<_> = archive
        .entries()
        .map(|e| {
            archive
                .contents(&e.unwrap(), &options)
                .unwrap()
                .into_owned()
        })
        .collect();
    assert_eq!(got, [b"first code object".to_vec(), b"second".to_vec()]);

    // A lying size: the first entry still decodes.
    let lying = zstd_archive(&[&a, &b], 2, [17, 7], None);
    let archive = Archive::parse(&lying).unwrap();
    let entries: Vec<_> = archive.entries().map(|e| e.unwrap()).collect();
    assert!(archive.contents(&entries[0], &options).is_ok());
    assert!(matches!(
        kind(archive.contents(&entries[1], &options)),
        ErrorKind::ContentSizeMismatch {
            declared: 7,
            frame: 6
        }
    ));
    // A huge size: refused by the limit, nothing allocated.
    let huge = zstd_archive(&[&a, &b], 2, [17, 1 << 40], None);
    let archive = Archive::parse(&huge).unwrap();
    let entries: Vec<_> = archive.entries().map(|e| e.unwrap()).collect();
    assert!(matches!(
        kind(archive.contents(&entries[1], &options)),
        ErrorKind::SizeLimitExceeded { size, .. } if size == 1 << 40
    ));
    // The second frame's size runs past the blob.
    let mut past = zstd_archive(&[&a, &b], 2, [17, 6], None);
    let second_size = 64 + 4 + 4 + a.len();
    past[second_size..second_size + 4].copy_from_slice(&1000u32.to_le_bytes());
    let archive = Archive::parse(&past).unwrap();
    let entries: Vec<_> = archive.entries().map(|e| e.unwrap()).collect();
    assert!(archive.contents(&entries[0], &options).is_ok());
    let error = archive.contents(&entries[1], &options).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::OutOfBounds {
            field: Field::KpackFrame,
            size: 1000,
            ..
        }
    ));
    assert_eq!(error.offset(), second_size as u64 + 4);
}

#[test]
fn a_broken_header_or_table_is_a_located_error() {
    let good = stored(1, [(64, 4), (68, 6)]);
    let mut magic = good.clone();
    magic[0] = b'k';
    assert_eq!(kind(Archive::parse(&magic)), ErrorKind::NotKpack);
    let mut version = good.clone();
    version[4] = 2;
    let error = Archive::parse(&version).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::UnsupportedKpackVersion { version: 2 }
    );
    assert_eq!(error.offset(), 4);
    let mut toc_past = good.clone();
    toc_past[8..16].copy_from_slice(&(good.len() as u64).to_le_bytes());
    let error = Archive::parse(&toc_past).unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::OutOfBounds {
            field: Field::KpackToc,
            ..
        }
    ));
    assert_eq!(error.offset(), 8);
    assert!(matches!(
        kind(Archive::parse(&good[..10])),
        ErrorKind::Truncated {
            field: Field::KpackHeader,
            ..
        }
    ));
    // The table cut anywhere: an error inside the table, never a panic.
    let toc = 74;
    for cut in toc + 1..good.len() {
        let error = Archive::parse(&good[..cut]).unwrap_err();
        assert!(
            error.offset() >= toc as u64 && error.offset() <= cut as u64,
            "{cut}"
        );
    }
    // An unknown scheme, a count of frames that cannot fit, a blob past
    // the end, an entry without its ordinal, a wrong type.
    let scheme = archive(b"", |p| {
        p.map(1).str("compression_scheme").str("lz4");
    });
    let error = Archive::parse(&scheme).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::MalformedKpack {
            fault: KpackFault::UnknownScheme
        }
    );
    assert_eq!(error.offset(), 64 + 1 + 20);
    let a = b"\x28\xb5\x2f\xfd not a frame, never decoded here";
    let lying_count = zstd_archive(&[a], 1000, [1, 1], None);
    assert_eq!(
        kind(Archive::parse(&lying_count)),
        ErrorKind::MalformedKpack {
            fault: KpackFault::TooManyFrames { count: 1000 }
        }
    );
    let blob_past = zstd_archive(&[a], 1, [1, 1], Some(1 << 30));
    assert!(matches!(
        kind(Archive::parse(&blob_past)),
        ErrorKind::OutOfBounds {
            field: Field::KpackFrames,
            ..
        }
    ));
    let no_ordinal = archive(b"", |p| {
        p.map(1)
            .str("toc")
            .map(1)
            .str("k#0")
            .map(1)
            .str("gfx906")
            .map(1);
        p.str("original_size").uint(1);
    });
    let error = Archive::parse(&no_ordinal).unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::MalformedKpack {
            fault: KpackFault::Missing { what: "ordinal" }
        }
    );
    let wrong = archive(b"", |p| {
        p.map(1).str("gfx_arches").array(1).uint(906);
    });
    assert!(matches!(
        kind(Archive::parse(&wrong)),
        ErrorKind::MalformedKpack {
            fault: KpackFault::WrongType { .. }
        }
    ));
}

/// Every prefix of a real archive of each scheme, and every byte of it
/// changed: parsing and reading every entry never panics, and what reads
/// reads within the input.
#[test]
fn no_cut_or_changed_byte_panics() {
    let options = DecompressOptions::default();
    for path in [
        "none/.kpack/test_lib_gfx90a_xnack+.kpack",
        "zstd/.kpack/test_lib_gfx90a_xnack-.kpack",
    ] {
        let data = read(path);
        let visit = |data: &[u8]| {
            if let Ok(archive) = Archive::parse(data) {
                let _ = archive.arches().count();
                for entry in archive.entries().flatten() {
                    let _ = archive.contents(&entry, &options);
                }
            }
        };
        for cut in 0..data.len() {
            visit(&data[..cut]);
        }
        let mut changed = data.clone();
        for i in 0..data.len() {
            for flip in [0x01, 0x80, 0xff] {
                changed[i] ^= flip;
                visit(&changed);
                changed[i] ^= flip;
            }
        }
    }
}

/// The hosts rocm-kpack's splitter wrote: each `HIPK` record with its index
/// and marker (through the relocation that fills its pointer), the
/// executable that is not position-independent with its pointer zeroed,
/// `.hip_fatbin` moved; the libraries before the split have none of it.
#[test]
fn split_hosts_give_their_records_and_markers() {
    use crate::object::ObjectFile;
    let hosts = [
        ("lib/libone.so", 1),
        ("lib/libtwo.so", 2),
        ("lib/libtwoz.so", 2),
        ("lib/libxnack.so", 1),
        ("lib/libskew.so", 2),
        ("bin/hip-pie", 1),
        ("bin/hip-nopie", 1),
    ];
    for scheme in ["none", "zstd"] {
        for (host, count) in hosts {
            let data = read(&format!("{scheme}/{host}"));
            let file = ObjectFile::parse(&data).unwrap();
            let records = records(&file);
            assert_eq!(records.len(), count, "{host}");
            assert!(moved_fatbin(&file).is_some(), "{host}");
            for (k, record) in records.iter().enumerate() {
                assert_eq!((record.index, record.co_index), (k, k as u32), "{host}");
                assert_eq!(&data[record.offset as usize..][..4], b"HIPK");
                if host == "bin/hip-nopie" {
                    assert_eq!(record.marker, Err(MarkerProblem::NullPointer));
                    continue;
                }
                let (offset, marker) = record.marker.clone().unwrap();
                assert_eq!(marker.kernel_name, format!("pkg/stage/{host}").as_bytes());
                let paths: Vec<&[u8]> = marker.search_paths().map(|p| p.path).collect();
                assert_eq!(paths, [&b"../.kpack/test_lib_@GFXARCH@.kpack"[..]]);
                assert_eq!(
                    &data[offset as usize..][..marker.len as usize][..1],
                    b"\x82"
                );
                assert_eq!(
                    binary_key(marker.kernel_name, record.co_index),
                    format!("pkg/stage/{host}#{k}").as_bytes()
                );
            }
        }
    }
    for input in ["libone.so", "libtwo.so", "hip-nopie"] {
        let data = read(&format!("inputs/{input}"));
        let file = ObjectFile::parse(&data).unwrap();
        assert!(records(&file).is_empty() && moved_fatbin(&file).is_none());
    }
}

#[test]
fn a_search_path_names_its_archives_as_the_runtime_makes_them() {
    let path = SearchPath {
        path: b"../.kpack/test_lib_@GFXARCH@.kpack",
    };
    assert_eq!(path.directory(), b"../.kpack");
    assert!(!path.is_absolute());
    assert!(path.names(b"test_lib_gfx90a:xnack+.kpack"));
    assert!(path.names(b"test_lib_gfx906.kpack"));
    assert!(!path.names(b"test_lib_.kpack"));
    assert!(!path.names(b"other_gfx906.kpack"));
    assert_eq!(
        path.with_arch(b"gfx90a:xnack-"),
        b"../.kpack/test_lib_gfx90a:xnack-.kpack"
    );
    let plain = SearchPath {
        path: b"/opt/x.kpack",
    };
    assert!(plain.is_absolute() && plain.names(b"x.kpack") && !plain.names(b"y.kpack"));
    assert_eq!(plain.with_arch(b"gfx906"), b"/opt/x.kpack");
}

#[test]
fn a_marker_that_is_not_one_says_why() {
    let mut good = Pack::default();
    good.map(2)
        .str("kpack_search_paths")
        .array(2)
        .uint(1)
        .str("a/@GFXARCH@.kpack");
    good.str("kernel_name").str("lib/x.so");
    let marker = Marker::parse(&good.0, 100).unwrap();
    let paths: Vec<&[u8]> = marker.search_paths().map(|p| p.path).collect();
    assert_eq!(paths, [&b"a/@GFXARCH@.kpack"[..]], "non-strings skipped");
    assert_eq!(marker.len, good.0.len() as u64);
    for cut in 0..good.0.len() {
        assert!(Marker::parse(&good.0[..cut], 100).is_err(), "{cut}");
    }
    let mut none = Pack::default();
    none.map(2).str("kpack_search_paths").array(1).uint(1);
    none.str("kernel_name").str("lib/x.so");
    assert_eq!(
        kind(Marker::parse(&none.0, 0)),
        ErrorKind::MalformedKpack {
            fault: KpackFault::Missing {
                what: "kpack_search_paths"
            }
        }
    );
    let mut no_name = Pack::default();
    no_name.map(1).str("kpack_search_paths").array(1).str("a");
    assert_eq!(
        kind(Marker::parse(&no_name.0, 0)),
        ErrorKind::MalformedKpack {
            fault: KpackFault::Missing {
                what: "kernel_name"
            }
        }
    );
    let error = Marker::parse(b"\x91\x01", 7).unwrap_err();
    assert_eq!(error.offset(), 7);
}

#[test]
fn feature_subsets_and_generic_targets_are_the_runtimes() {
    let subsets = |isa: &[u8]| -> Vec<String> {
        feature_subsets(isa)
            .into_iter()
            .map(|s| String::from_utf8(s).unwrap())
            .collect()
    };
    assert_eq!(
        subsets(b"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
        [
            "gfx90a:sramecc+:xnack-",
            "gfx90a:sramecc+",
            "gfx90a:xnack-",
            "gfx90a"
        ]
    );
    assert_eq!(subsets(b"gfx1100"), ["gfx1100"]);
    assert_eq!(
        clr_generic(b"amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-").unwrap(),
        b"gfx9-generic:sramecc+:xnack-"
    );
    assert_eq!(clr_generic(b"gfx1031").unwrap(), b"gfx10-3-generic");
    assert_eq!(
        clr_generic(b"gfx950:xnack+").unwrap(),
        b"gfx9-4-generic:xnack+"
    );
    for none in [&b"gfx908:xnack-"[..], b"gfx90a", b"gfx940", b"gfx1250"] {
        assert_eq!(clr_generic(none), None);
    }
    let path = SearchPath {
        path: b"../.kpack/t_@GFXARCH@.kpack",
    };
    let list = arch_list(b"amdgcn-amd-amdhsa--gfx906:xnack-");
    let names: Vec<String> = candidates(&Environment::default(), &[path], &list, &|p| p.to_vec())
        .into_iter()
        .map(|c| String::from_utf8(c).unwrap())
        .collect();
    let env = Environment::from_values(Some(b"0"), None, Some(b"a.kpack::b.kpack"));
    assert!(!env.disabled && env.path.is_empty());
    let prefixed = candidates(&env, &[path], &list, &|p| [b"/h/".as_slice(), p].concat());
    assert_eq!(
        prefixed[..3],
        [
            b"a.kpack".to_vec(),
            b"b.kpack".to_vec(),
            b"/h/../.kpack/t_gfx906:xnack-.kpack".to_vec()
        ]
    );
    let env = Environment::from_values(Some(b"yes"), Some(b":x.kpack"), Some(b"a.kpack"));
    assert!(env.disabled);
    assert_eq!(
        candidates(&env, &[path], &list, &|p| p.to_vec()),
        [b"x.kpack".to_vec()]
    );
    assert!(!Environment::from_values(Some(b""), None, None).disabled);
    assert_eq!(
        names,
        [
            "../.kpack/t_gfx906:xnack-.kpack",
            "../.kpack/t_gfx906.kpack",
            "../.kpack/t_gfx9-generic:xnack-.kpack",
            "../.kpack/t_gfx9-generic.kpack"
        ]
    );
}

/// The installed tree of rocm-kpack's output (every archive beside the
/// others) resolved for devices as the runtime would, in both loaders:
/// what ../shared/kpack.md §5.3 records of the real loaders. The archives
/// are opened in the runtime's candidate order (their names with ":").
#[test]
fn resolution_finds_what_the_runtime_finds() {
    let root = "zstd/.kpack";
    let open = |isa: &[u8]| -> Vec<Vec<u8>> {
        let path = SearchPath {
            path: b"test_lib_@GFXARCH@.kpack",
        };
        let mut opened = Vec::new();
        for candidate in candidates(&Environment::default(), &[path], &arch_list(isa), &|p| {
            p.to_vec()
        }) {
            let file = String::from_utf8(candidate).unwrap().replace(':', "_");
            if let Ok(data) = std::fs::read(format!("{ROOT}/{root}/{file}")) {
                if !opened.contains(&data) {
                    opened.push(data);
                }
            }
        }
        opened
    };
    let resolve_for = |isa: &[u8], key: &str, loader| {
        let data = open(isa);
        let archives: Vec<Archive<'_>> = data.iter().map(|d| Archive::parse(d).unwrap()).collect();
        resolve(
            &Environment::default(),
            key.as_bytes(),
            &arch_list(isa),
            &archives,
            loader,
        )
        .map(|r| {
            (
                String::from_utf8(r.entry.arch.to_vec()).unwrap(),
                r.entry.ordinal,
            )
        })
    };
    use Loader::{FallThrough as Fall, FirstCandidate as First};
    let mi100 = b"amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-";
    let mi200 = b"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-";
    let mi200_xnack = b"amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+";
    let mi300 = b"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
    for loader in [First, Fall] {
        assert_eq!(
            resolve_for(mi100, "pkg/stage/lib/libtwo.so#1", loader)
                .unwrap()
                .0,
            "gfx906"
        );
        // The xnack variant's archive matches first: it has libxnack only.
        assert_eq!(
            resolve_for(mi200, "pkg/stage/lib/libxnack.so#0", loader)
                .unwrap()
                .0,
            "gfx90a:xnack-"
        );
        assert_eq!(
            resolve_for(mi200_xnack, "pkg/stage/lib/libxnack.so#0", loader)
                .unwrap()
                .0,
            "gfx90a:xnack+"
        );
        assert_eq!(
            resolve_for(mi300, "pkg/stage/lib/libtwo.so#0", loader),
            Err(KpackError::ArchiveNotFound)
        );
        // libskew's record 1 has no gfx906 code object (the splitter's
        // per-architecture counter gave TU1's to record 0).
        assert_eq!(
            resolve_for(mi100, "pkg/stage/lib/libskew.so#1", loader),
            Err(KpackError::KernelNotFound)
        );
    }
    // The shadowing of TheRock#7081: the shipped loader stops at the
    // variant archive, the fall-through one goes on to the base one.
    for key in ["pkg/stage/lib/libtwo.so#0", "pkg/stage/lib/libone.so#0"] {
        assert_eq!(
            resolve_for(mi200, key, First),
            Err(KpackError::KernelNotFound)
        );
        assert_eq!(resolve_for(mi200, key, Fall).unwrap().0, "gfx90a");
        assert_eq!(
            resolve_for(mi200_xnack, key, First),
            Err(KpackError::KernelNotFound)
        );
        assert_eq!(resolve_for(mi200_xnack, key, Fall).unwrap().0, "gfx90a");
    }
    let none = Environment::default();
    assert_eq!(
        resolve(&none, b"k#0", &arch_list(b"gfx906"), &[], Fall),
        Err(KpackError::ArchiveNotFound)
    );
    let off = Environment::from_values(Some(b"1"), None, None);
    assert_eq!(
        resolve(&off, b"k#0", &arch_list(b"gfx906"), &[], Fall),
        Err(KpackError::NotImplemented)
    );
}

/// `check` on rocm-kpack's output: each defect where kpack.md reproduced
/// it, nothing on a clean host with clean archives.
#[test]
fn check_finds_each_defect_where_it_is_and_nothing_elsewhere() {
    use crate::object::ObjectFile;
    let names = [
        "test_lib_gfx906.kpack",
        "test_lib_gfx90a.kpack",
        "test_lib_gfx90a_xnack+.kpack",
        "test_lib_gfx90a_xnack-.kpack",
    ];
    let findings = |scheme: &str, host: &str, which: &[usize]| {
        let data = read(&format!("{scheme}/{host}"));
        let bytes: Vec<Vec<u8>> = which
            .iter()
            .map(|&i| read(&format!("{scheme}/.kpack/{}", names[i])))
            .collect();
        let archives: Vec<Archive<'_>> = bytes.iter().map(|b| Archive::parse(b).unwrap()).collect();
        // Their real names (":" where the fixtures have "_").
        let real: Vec<String> = which
            .iter()
            .map(|&i| names[i].replace("gfx90a_xnack", "gfx90a:xnack"))
            .collect();
        let named: Vec<Named<'_, '_>> = real
            .iter()
            .zip(&archives)
            .map(|(name, archive)| Named {
                name: name.as_bytes(),
                archive,
            })
            .collect();
        let file = ObjectFile::parse(&data).unwrap();
        check(&data, &records(&file), &named)
    };
    // Clean: both records, base archives only, compressed.
    assert_eq!(findings("zstd", "lib/libtwo.so", &[0, 1]), []);
    // The xnack archives shadow the base one for libtwo (both records, on
    // both xnack devices), and cannot be named in ROCM_KPACK_PATH.
    let all = findings("zstd", "lib/libtwo.so", &[2, 3, 0, 1]);
    let shadowed: Vec<(u32, &[u8])> = all
        .iter()
        .filter_map(|f| match f {
            Finding::ShadowedByVariant {
                record,
                device,
                base,
                ..
            } => {
                assert_eq!(*base, 3, "the base gfx90a archive");
                Some((*record, device.as_slice()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        shadowed,
        [
            (0, &b"gfx90a:xnack+"[..]),
            (1, b"gfx90a:xnack+"),
            (0, b"gfx90a:xnack-"),
            (1, b"gfx90a:xnack-")
        ]
    );
    assert!(all.contains(&Finding::NameNotNameable { archive: 0 }));
    assert!(all.contains(&Finding::NameNotNameable { archive: 1 }));
    assert_eq!(all.len(), 6, "{all:?}");
    // libxnack's own variant archives hold it: nothing shadowed.
    let xnack = findings("zstd", "lib/libxnack.so", &[2, 3, 0, 1]);
    assert!(
        xnack
            .iter()
            .all(|f| matches!(f, Finding::NameNotNameable { .. })),
        "{xnack:?}"
    );
    // libskew: its record 1 has no gfx906 code object.
    assert_eq!(
        findings("zstd", "lib/libskew.so", &[0, 1]),
        [Finding::RecordWithoutArch {
            arch: b"gfx906".to_vec(),
            records: vec![1]
        }]
    );
    // The executable whose pointer the split zeroed.
    let nopie = findings("zstd", "bin/hip-nopie", &[0, 1]);
    assert!(
        matches!(
            nopie[..],
            [Finding::NullPointer {
                record: 0,
                offset: 0x11f0
            }]
        ),
        "{nopie:?}"
    );
    // Uncompressed archives.
    assert_eq!(
        findings("none", "lib/libtwo.so", &[0, 1]),
        [
            Finding::Uncompressed { archive: 0 },
            Finding::Uncompressed { archive: 1 }
        ]
    );
    // libtwoz's second compressed bundle left in the file.
    let stale = findings("zstd", "lib/libtwoz.so", &[0, 1]);
    assert!(
        matches!(stale[..], [Finding::StaleContainer { offset: 0x1000 }]),
        "{stale:?}"
    );
}

/// The archives rocm-kpack wrote, written again from their entries: the
/// same bytes where code objects are stored; zstd archives the same but
/// for the frames (libzstd 1.5.4 here, python-zstandard's 1.5.7 there, at
/// the same level), reading back entry for entry.
#[cfg(feature = "zstd")]
#[test]
fn the_writer_writes_what_rocm_kpack_writes() {
    use crate::msgpack::{Reader, Value};
    let options = DecompressOptions::default();
    for (path, _) in listing() {
        let data = read(&path);
        let archive = Archive::parse(&data).unwrap();
        let entries: Vec<Entry<'_>> = archive.entries().map(|e| e.unwrap()).collect();
        let codes: Vec<Vec<u8>> = entries
            .iter()
            .map(|e| archive.contents(e, &options).unwrap().into_owned())
            .collect();
        let metadata: Vec<Vec<(&[u8], &[u8])>> = entries
            .iter()
            .map(|e| {
                let mut reader = Reader::new(e.metadata.unwrap_or_default());
                let Ok(Value::Map(n)) = reader.next() else {
                    return Vec::new();
                };
                (0..n)
                    .map(|_| match (reader.next(), reader.next()) {
                        (Ok(Value::Str(k)), Ok(Value::Str(v))) => (k, v),
                        other => panic!("{other:?}"),
                    })
                    .collect()
            })
            .collect();
        let new: Vec<NewEntry<'_>> = entries
            .iter()
            .zip(&codes)
            .zip(&metadata)
            .map(|((e, code), metadata)| NewEntry {
                key: e.key,
                arch: e.arch,
                code,
                metadata,
            })
            .collect();
        let arches: Vec<&[u8]> = archive.arches().collect();
        let written = write_archive(
            &new,
            &ArchiveOptions {
                group_name: archive.group_name().unwrap(),
                arch_family: archive.arch_family().unwrap(),
                arches: &arches,
                scheme: archive.scheme(),
                level: 3,
            },
        )
        .unwrap();
        if archive.scheme() == Scheme::Stored {
            assert!(written == data, "{path}: not the bytes rocm-kpack wrote");
            continue;
        }
        let ours = Archive::parse(&written).unwrap();
        let again: Vec<Entry<'_>> = ours.entries().map(|e| e.unwrap()).collect();
        assert_eq!(again.len(), entries.len());
        for ((a, b), code) in again.iter().zip(&entries).zip(&codes) {
            assert_eq!((a.key, a.arch, a.ordinal), (b.key, b.arch, b.ordinal));
            assert_eq!((a.original_size, a.metadata), (b.original_size, b.metadata));
            assert!(
                ours.contents(a, &options).unwrap() == code.as_slice(),
                "{path}"
            );
        }
        assert_eq!(ours.arches().collect::<Vec<_>>(), arches);
    }
}

/// Counts far past what the table holds (a map32 or array32 of 2^32 - 1
/// items in a few bytes): a located truncation at the table's end, found
/// at once, never walked item by item past the input.
#[test]
fn lying_counts_in_the_table_are_refused_where_the_bytes_end() {
    let huge_map = archive(b"", |p| {
        p.0.extend_from_slice(b"\xdf\xff\xff\xff\xff");
        p.str("toc").0.extend_from_slice(b"\xdf\xff\xff\xff\xff");
    });
    let huge_arches = archive(b"", |p| {
        p.map(1)
            .str("gfx_arches")
            .0
            .extend_from_slice(b"\xdd\xff\xff\xff\xff");
        p.str("gfx906");
    });
    let huge_blobs = archive(b"", |p| {
        p.map(1)
            .str("blobs")
            .0
            .extend_from_slice(b"\xdd\xff\xff\xff\xff");
    });
    for data in [huge_map, huge_arches, huge_blobs] {
        let error = Archive::parse(&data).unwrap_err();
        assert_eq!(
            error.kind(),
            ErrorKind::MalformedKpack {
                fault: KpackFault::Truncated
            }
        );
        assert!(error.offset() <= data.len() as u64);
    }
}

/// A table naming one key and architecture twice (rocm-kpack's writer
/// refuses to): both entries are listed, nothing hidden, and a lookup
/// takes the first (docs/differences.md).
#[test]
fn a_key_given_twice_is_listed_twice_and_looked_up_first() {
    let data = archive(b"AAAABB", |p| {
        p.map(2).str("toc").map(2);
        for (ordinal, size) in [(0, 4), (1, 2)] {
            p.str("k#0").map(1).str("gfx906").map(2);
            p.str("ordinal")
                .uint(ordinal)
                .str("original_size")
                .uint(size);
        }
        p.str("blobs").array(2);
        for (offset, size) in [(64, 4), (68, 2)] {
            p.map(2).str("offset").uint(offset).str("size").uint(size);
        }
    });
    let archive = Archive::parse(&data).unwrap();
    let listed: Vec<u64> = archive.entries().map(|e| e.unwrap().ordinal).collect();
    assert_eq!(listed, [0, 1]);
    assert_eq!(
        archive.entry(b"k#0", b"gfx906").unwrap().unwrap().ordinal,
        0
    );
}

#[test]
fn search_paths_are_placed_as_weakly_canonical_places_them() {
    let placed =
        |dir: &str, rel: &str| String::from_utf8(place(dir.as_bytes(), rel.as_bytes())).unwrap();
    assert_eq!(
        placed("/opt/rocm/lib", "../.kpack/x_@GFXARCH@.kpack"),
        "/opt/rocm/.kpack/x_@GFXARCH@.kpack"
    );
    assert_eq!(
        placed("/opt/rocm/lib", "./a/./b.kpack"),
        "/opt/rocm/lib/a/b.kpack"
    );
    assert_eq!(placed("/lib", "../../../x.kpack"), "/x.kpack");
    assert_eq!(placed("/opt/lib", "/abs/y.kpack"), "/abs/y.kpack");
    assert_eq!(placed("/opt/lib", "a//b.kpack"), "/opt/lib/a/b.kpack");
    // More than 16 features are cut to MAX_FEATURES: 16 candidates at most.
    let many = b"gfx90a:a+:b+:c+:d+:e+:f+:g+:h+:i+:j+:k+:l+:m+:n+:o+:p+:q+";
    assert_eq!(feature_subsets(many).len(), 1 << MAX_FEATURES);
}

#[test]
fn an_archive_read_for_resolution_parses_as_the_whole_file() {
    let whole = read("zstd/.kpack/test_lib_gfx90a.kpack");
    let size = whole.len() as u64;
    let mut asked = Vec::new();
    let sparse = read_for_resolution(size, &mut |at, buf| {
        asked.push((at, buf.len()));
        let at = at as usize;
        buf.copy_from_slice(&whole[at..at + buf.len()]);
        true
    })
    .unwrap();
    let toc = Archive::parse(&whole).unwrap().toc_offset();
    // The header, then the table to the end; the code objects not read.
    assert_eq!(asked, [(0, 64), (toc, whole.len() - toc as usize)]);
    assert!(sparse[64..toc as usize].iter().all(|&b| b == 0));
    fn entries(data: &[u8]) -> Vec<Entry<'_>> {
        Archive::parse(data)
            .unwrap()
            .entries()
            .map(Result::unwrap)
            .collect()
    }
    let (a, b) = (entries(&sparse), entries(&whole));
    assert_eq!(a, b);
    assert!(!a.is_empty());
    // A file that is no archive is read whole; a failed read is no bytes.
    let text = b"not an archive at all".to_vec();
    let got = read_for_resolution(text.len() as u64, &mut |at, buf| {
        buf.copy_from_slice(&text[at as usize..at as usize + buf.len()]);
        true
    });
    assert_eq!(got.as_deref(), Some(&text[..]));
    assert!(read_for_resolution(size, &mut |_, _| false).is_none());
    // A size no memory holds fails without aborting.
    assert!(read_for_resolution(u64::MAX, &mut |_, _| true).is_none());
}

#[test]
fn a_choice_is_generic_when_its_processor_is_the_generic_targets() {
    let list = arch_list(b"gfx1031");
    assert!(chose_generic(&list, b"gfx10-3-generic"));
    assert!(!chose_generic(&list, b"gfx1031"));
    // Features do not count; a device without a generic target has none.
    let xnack = arch_list(b"gfx90c:xnack-");
    assert!(chose_generic(&xnack, b"gfx9-generic:xnack-"));
    assert!(!chose_generic(
        &arch_list(b"gfx90a:xnack+"),
        b"gfx90a:xnack+"
    ));
}
