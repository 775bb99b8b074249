//! kpack archives, markers and split hosts from arbitrary bytes.
//!
//! Invariants checked:
//! - `Archive::parse`, every iterator, `payload`, `contents` and
//!   `read_into` never panic, and errors point inside the input;
//! - every architecture, key and ID is a view of the input; a stored code
//!   object is one too, of its entry's blob;
//! - an entry is found by `entry(key, arch)` (the first with both);
//! - each key of an archive alone resolved for a device (`select_archive`)
//!   is listed once, and a code object chosen is the entry its index names;
//! - `contents` (under a 1 MiB limit) gives exactly `original_size` bytes
//!   for a zstd entry, the same bytes `read_into` writes into a buffer of
//!   that size, and `read_into` refuses one byte less;
//! - `Marker::parse` at the start of the input reads at most 64 KiB, its
//!   name and search paths are views of the input, and each search path
//!   names its own file name;
//! - the `HIPK` records of a host never panic, and each marker lies in the
//!   input;
//! - `split_host` never panics (under every key rule); where it splits,
//!   each code object lies inside its bundle (decoded under 1 MiB), and the
//!   input's bytes outside `.hip_fatbin` are in the rewritten host no
//!   longer than the input plus what the split appends;
//! - coverage of the input as a split host (`cover_split_host`, every
//!   archive path it asks for opened as the input from its last `KPAK`
//!   on, read for resolution) never panics, asks each path once, and gives a verdict per
//!   device, loads only with an entry; an NVIDIA device never loads.

use clangoffload::kpack::{
    records, search_path, split_host, Archive, KeyRule, Marker, Payload, SplitOptions,
    MAX_MARKER_LEN,
};
use clangoffload::{DecompressOptions, Limits};

use super::within::within;

pub fn check(data: &[u8]) {
    archive(data);
    marker(data);
    split(data);
    covered(data);
    if let Ok(file) = clangoffload::object::ObjectFile::parse(data) {
        for record in records(&file) {
            if let Ok((offset, marker)) = record.marker {
                assert!(offset + marker.len <= data.len() as u64);
            }
            assert!(record.offset < data.len() as u64);
        }
    }
}

fn archive(data: &[u8]) {
    let archive = match Archive::parse(data) {
        Ok(archive) => archive,
        Err(e) => {
            assert!(e.offset() <= data.len() as u64, "{e:?}");
            return;
        }
    };
    for arch in archive.arches() {
        within(data, arch);
    }
    let options = DecompressOptions {
        limits: Limits {
            max_uncompressed_size: 1 << 20,
        },
        ..DecompressOptions::default()
    };
    let mut count = 0u64;
    for entry in archive.entries() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                assert!(e.offset() <= data.len() as u64);
                break;
            }
        };
        count += 1;
        within(data, entry.key);
        within(data, entry.arch);
        let found = archive.entry(entry.key, entry.arch).unwrap().unwrap();
        assert_eq!((found.key, found.arch), (entry.key, entry.arch));
        match archive.payload(&entry) {
            Ok(Payload::Stored(bytes)) => {
                within(data, bytes);
            }
            Ok(Payload::Zstd { frame, offset }) => {
                assert_eq!(within(data, frame).start as u64, offset);
            }
            Err(e) => assert!(e.offset() <= data.len() as u64),
        }
        if let Ok(contents) = archive.contents(&entry, &options) {
            if matches!(archive.payload(&entry), Ok(Payload::Zstd { .. })) {
                assert_eq!(contents.len() as u64, entry.original_size);
            }
            let mut out = vec![0u8; contents.len()];
            assert_eq!(
                archive.read_into(&entry, &mut out, &options).unwrap(),
                out.len()
            );
            assert_eq!(out, &contents[..]);
            if let Some(short) = out.len().checked_sub(1) {
                assert!(archive
                    .read_into(&entry, &mut out[..short], &options)
                    .is_err());
            }
        }
    }
    assert!(count <= archive.entry_count());
    selected(&archive);
}

/// Each key of the archive alone resolved for a device: each key once; a
/// code object chosen is the entry its index names, under its ID.
fn selected(archive: &Archive<'_>) {
    use clangoffload::kpack::{Environment, Loader};
    use clangoffload::select::{select_archive, KpackOutcome};
    let choices = select_archive(
        archive,
        b"a.kpack",
        "gfx90a:xnack+",
        &Environment::default(),
        Loader::FallThrough,
    );
    for (i, choice) in choices.iter().enumerate() {
        assert!(
            !choices[..i].iter().any(|c| c.key == choice.key),
            "key twice"
        );
        assert_eq!(choice.offset, None);
        if let KpackOutcome::Loads(load) = &choice.outcome {
            let entry = archive.entries().nth(load.entry).unwrap().unwrap();
            assert_eq!((entry.key, entry.id()), (&choice.key[..], &load.id[..]));
            assert_eq!(load.path, b"a.kpack");
        }
    }
}

fn marker(data: &[u8]) {
    match Marker::parse(data, 0) {
        Ok(marker) => {
            assert!(marker.len as usize <= data.len().min(MAX_MARKER_LEN));
            within(data, marker.kernel_name);
            for path in marker.search_paths() {
                within(data, path.path);
                assert!(path.names(path.file_name()));
            }
        }
        Err(e) => assert!(e.offset() <= data.len() as u64),
    }
}

fn split(data: &[u8]) {
    let options = DecompressOptions {
        limits: Limits {
            max_uncompressed_size: 1 << 20,
        },
        ..DecompressOptions::default()
    };
    let path = search_path(b"g", 1);
    for keys in [KeyRule::Strict, KeyRule::Record, KeyRule::PerArch] {
        let split = match split_host(
            data,
            &SplitOptions {
                kernel_name: b"lib/x.so",
                search_paths: &[&path],
                keys,
            },
            &options,
        ) {
            Ok(split) => split,
            Err(_) => continue,
        };
        assert!(split.host.len() as u64 <= data.len() as u64 + (1 << 20) + 4 * data.len() as u64);
        let mut scratch = Vec::new();
        for (unit, _) in split.units.iter().enumerate() {
            let Ok(bundle) = split.bundle(unit, &mut scratch, &options) else {
                continue;
            };
            for object in split
                .code_objects
                .iter()
                .filter(|o| o.record == unit as u64)
            {
                assert!(object.bytes(bundle).is_ok(), "{object:?}");
            }
        }
    }
}

fn covered(data: &[u8]) {
    use clangoffload::coverage::{cover_split_host, Lookup};
    use clangoffload::kpack::{read_for_resolution, Environment, Loader};
    let devices = ["gfx90a:xnack+", "gfx1100", "gfx11-generic", "sm_80"];
    // The archive every path opens: the input from its last `KPAK` on (a
    // host and an archive in one input), else the input.
    let from = data.windows(4).rposition(|w| w == b"KPAK").unwrap_or(0);
    let archive = &data[from..];
    let mut asked: Vec<Vec<u8>> = Vec::new();
    let mut open = |path: &[u8]| {
        assert!(!asked.iter().any(|p| p == path), "asked twice");
        asked.push(path.to_vec());
        read_for_resolution(archive.len() as u64, &mut |at, buf| {
            let at = at as usize;
            buf.copy_from_slice(&archive[at..at + buf.len()]);
            true
        })
        .map(std::borrow::Cow::Owned)
    };
    let lookup = Lookup {
        environment: &Environment::default(),
        dir: b"/pkg/lib",
        loader: Loader::FallThrough,
        open: &mut open,
    };
    if let Some(covered) = cover_split_host(data, "host", &devices, lookup) {
        assert_eq!(covered.verdicts.len(), devices.len());
        for verdict in &covered.verdicts {
            assert_eq!(verdict.loads, !verdict.entries.is_empty(), "{verdict:?}");
        }
        assert!(!covered.verdicts[3].loads);
    }
}
