//! What a device loads from ROCm's kpack archives, by the HIP runtime's
//! rule: each `HIPK` record of a split host (its archives found as its
//! marker and the `ROCM_KPACK_*` environment say, every path opened once
//! through the caller), or each binary key of one archive alone; archive
//! paths, feature subsets and the generic target tried in CLR's order.
//! `select` reports each record or key; coverage asks that every record of
//! a host gives code.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use super::How;
use crate::kpack::{arch_list, binary_key, candidates, chose_generic, place, records, resolve};
use crate::kpack::{Archive, Environment, KpackError, KpackRecord, Loader};

/// Reads the archive file at a path: its bytes, or `None` where none
/// opens.
pub type OpenArchive<'l, 'a> = dyn FnMut(&[u8]) -> Option<Cow<'a, [u8]>> + 'l;

/// Where a split host's archives are looked for, and how they are read.
pub struct Lookup<'l, 'a> {
    /// The loader's environment (`ROCM_KPACK_*`).
    pub environment: &'l Environment<'l>,
    /// The host's real directory (symlinks resolved): where relative
    /// search paths start.
    pub dir: &'l [u8],
    /// Which loader's rule decides.
    pub loader: Loader,
    /// The bytes of the archive file at a path, or `None` where none opens.
    pub open: &'l mut OpenArchive<'l, 'a>,
}

/// A record of a split host, or a binary key of an archive, and what it
/// gives a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KpackChoice {
    /// The record's file offset (a key of an archive alone: none).
    pub offset: Option<u64>,
    /// The binary key (`<kernel_name>#<co_index>`; a record without a
    /// marker: `#<co_index>`).
    pub key: Vec<u8>,
    /// What the device gets.
    pub outcome: KpackOutcome,
}

/// What a record or key gives a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KpackOutcome {
    /// The code object the runtime loads.
    Loads(KpackLoad),
    /// None: the runtime's error, and why (naming any file there that is
    /// no archive the runtime reads).
    Fails {
        /// The runtime's error.
        error: KpackError,
        /// `error <code>: <reason>`, and the damaged archives.
        reason: String,
    },
    /// The record cannot be read (it has no marker): why.
    Unreadable(String),
}

/// The code object a record or key gives a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KpackLoad {
    /// The path of the archive that holds it, as opened.
    pub path: Vec<u8>,
    /// Its place among the archive's entries.
    pub entry: usize,
    /// Its ID (the bundle entry ID it came from, or its architecture).
    pub id: Vec<u8>,
    /// The device's own processor's code, or its generic target's.
    pub how: How,
    /// `<how>: the <arch> code object of '<path>'`.
    pub reason: String,
}

impl KpackOutcome {
    /// Why this code, or why none.
    pub fn reason(&self) -> &str {
        match self {
            KpackOutcome::Loads(load) => &load.reason,
            KpackOutcome::Fails { reason, .. } | KpackOutcome::Unreadable(reason) => reason,
        }
    }
}

/// What each `HIPK` record of the split host in `data` gives each device
/// of `devices` (ISA names or target IDs), resolved as the HIP runtime
/// resolves it: one list per device, in record order. Every archive path
/// any resolution tries is opened once, through `lookup.open`. `None` when
/// `data` is no split host (no `HIPK` record).
pub fn select_split_host(
    data: &[u8],
    devices: &[&str],
    lookup: Lookup<'_, '_>,
) -> Option<Vec<Vec<KpackChoice>>> {
    let file = crate::object::ObjectFile::parse(data).ok()?;
    let records = records(&file);
    if records.is_empty() {
        return None;
    }
    let wanted: Vec<Vec<Vec<Vec<u8>>>> = devices
        .iter()
        .map(|device| paths(&records, device, &lookup))
        .collect();
    let mut opened: BTreeMap<&[u8], Option<Cow<'_, [u8]>>> = BTreeMap::new();
    for path in wanted.iter().flatten().flatten() {
        if !opened.contains_key(path.as_slice()) {
            let bytes = (lookup.open)(path);
            opened.insert(path, bytes);
        }
    }
    // Each file that opened, read as an archive or why not.
    let archives: BTreeMap<&[u8], crate::Result<Archive<'_>>> = opened
        .iter()
        .filter_map(|(path, bytes)| Some((*path, Archive::parse(bytes.as_deref()?))))
        .collect();
    let chosen = devices
        .iter()
        .zip(&wanted)
        .map(|(device, wanted)| {
            records
                .iter()
                .zip(wanted)
                .map(|(record, paths)| choose(record, device, paths, &archives, &lookup))
                .collect()
        })
        .collect();
    Some(chosen)
}

/// What each binary key of `archive` (the file at `path`) gives `device`,
/// resolved in it alone as the runtime would (each key once, in the order
/// the table first lists it).
pub fn select_archive(
    archive: &Archive<'_>,
    path: &[u8],
    device: &str,
    environment: &Environment<'_>,
    loader: Loader,
) -> Vec<KpackChoice> {
    let mut keys: Vec<&[u8]> = Vec::new();
    for entry in archive.entries().flatten() {
        if !keys.contains(&entry.key) {
            keys.push(entry.key);
        }
    }
    let arches = arch_list(device.as_bytes());
    let list = [(path, archive.clone())];
    keys.into_iter()
        .map(|key| KpackChoice {
            offset: None,
            key: key.to_vec(),
            outcome: resolved(environment, key, &arches, &list, loader),
        })
        .collect()
}

/// The archive paths each record's resolution for `device` tries, in the
/// runtime's order (none for a record without a marker).
fn paths(records: &[KpackRecord<'_>], device: &str, lookup: &Lookup<'_, '_>) -> Vec<Vec<Vec<u8>>> {
    let arches = arch_list(device.as_bytes());
    records
        .iter()
        .map(|record| match &record.marker {
            Ok((_, marker)) => {
                let search: Vec<_> = marker.search_paths().collect();
                candidates(lookup.environment, &search, &arches, &|rel| {
                    place(lookup.dir, rel)
                })
            }
            Err(_) => Vec::new(),
        })
        .collect()
}

/// What `record` gives `device` from the archives at `paths` that opened.
fn choose(
    record: &KpackRecord<'_>,
    device: &str,
    paths: &[Vec<u8>],
    archives: &BTreeMap<&[u8], crate::Result<Archive<'_>>>,
    lookup: &Lookup<'_, '_>,
) -> KpackChoice {
    let (key, outcome) = match &record.marker {
        Err(problem) => (
            binary_key(b"", record.co_index),
            KpackOutcome::Unreadable(alloc::format!("{problem}")),
        ),
        Ok((_, marker)) => {
            let key = binary_key(marker.kernel_name, record.co_index);
            let mut list: Vec<(&[u8], Archive<'_>)> = Vec::new();
            for path in paths {
                if let Some((p, Ok(archive))) = archives.get_key_value(path.as_slice()) {
                    if !list.iter().any(|(q, _)| q == p) {
                        list.push((p, archive.clone()));
                    }
                }
            }
            let arches = arch_list(device.as_bytes());
            let mut outcome = resolved(lookup.environment, &key, &arches, &list, lookup.loader);
            if let KpackOutcome::Fails { reason, .. } = &mut outcome {
                // A file there that is no archive the runtime reads is why
                // the search found nothing: said, not taken for a missing
                // file.
                let damaged = paths
                    .iter()
                    .find_map(|p| Some((p, archives.get(p.as_slice())?.as_ref().err()?)));
                if let Some((path, fault)) = damaged {
                    let path = String::from_utf8_lossy(path);
                    let _ = write!(reason, "; '{path}' is no kpack archive: {fault}");
                }
            }
            (key, outcome)
        }
    };
    KpackChoice {
        offset: Some(record.offset),
        key,
        outcome,
    }
}

/// Binary `key` resolved for a device of architecture list `arches` among
/// `list` (each archive with its path, in the runtime's order).
fn resolved(
    environment: &Environment<'_>,
    key: &[u8],
    arches: &[Vec<u8>],
    list: &[(&[u8], Archive<'_>)],
    loader: Loader,
) -> KpackOutcome {
    let only: Vec<Archive<'_>> = list.iter().map(|(_, a)| a.clone()).collect();
    match resolve(environment, key, arches, &only, loader) {
        Ok(found) => {
            let how = if chose_generic(arches, found.entry.arch) {
                How::Generic
            } else {
                How::Native
            };
            let (path, archive) = list
                .get(found.archive)
                .map_or((&[][..], None), |(p, a)| (*p, Some(a)));
            let entry = archive
                .and_then(|a| a.entries().position(|e| e.ok() == Some(found.entry)))
                .unwrap_or(0);
            let reason = alloc::format!(
                "{}: the {} code object of '{}'",
                how.name(),
                String::from_utf8_lossy(found.entry.arch),
                String::from_utf8_lossy(path)
            );
            KpackOutcome::Loads(KpackLoad {
                path: path.to_vec(),
                entry,
                id: found.entry.id().to_vec(),
                how,
                reason,
            })
        }
        Err(error) => KpackOutcome::Fails {
            error,
            reason: alloc::format!("error {}: {}", error.code(), error.reason()),
        },
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;

    use super::*;

    const KPACK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/kpack");

    /// `host` (under `zstd/`) selected for `devices`; every path asked.
    fn select(host: &str, devices: &[&str]) -> (Option<Vec<Vec<KpackChoice>>>, Vec<Vec<u8>>) {
        let path = std::format!("{KPACK}/zstd/{host}");
        let data = std::fs::read(&path).unwrap();
        let dir = std::path::Path::new(&path)
            .parent()
            .unwrap()
            .to_str()
            .unwrap();
        let mut asked = Vec::new();
        let mut open = |path: &[u8]| {
            asked.push(path.to_vec());
            let text = String::from_utf8_lossy(path).into_owned();
            std::fs::read(text).ok().map(Cow::Owned)
        };
        let lookup = Lookup {
            environment: &Environment::default(),
            dir: dir.as_bytes(),
            loader: Loader::FallThrough,
            open: &mut open,
        };
        (select_split_host(&data, devices, lookup), asked)
    }

    #[test]
    fn each_record_names_its_archive_and_entry() {
        let (chosen, asked) = select("lib/libtwo.so", &["gfx906", "gfx1100"]);
        let [gfx906, gfx1100] = &chosen.unwrap()[..] else {
            panic!()
        };
        assert!(gfx906.len() >= 2);
        for (k, choice) in gfx906.iter().enumerate() {
            assert!(choice.key.ends_with(std::format!("#{k}").as_bytes()));
            let KpackOutcome::Loads(load) = &choice.outcome else {
                panic!("{choice:?}")
            };
            assert!(load.path.ends_with(b"/.kpack/test_lib_gfx906.kpack"));
            assert_eq!(load.how, How::Native);
            let bytes = std::fs::read(String::from_utf8_lossy(&load.path).as_ref()).unwrap();
            let archive = Archive::parse(&bytes).unwrap();
            let entry = archive.entries().nth(load.entry).unwrap().unwrap();
            assert_eq!((entry.key, entry.id()), (&choice.key[..], &load.id[..]));
        }
        for choice in gfx1100 {
            assert!(matches!(
                choice.outcome,
                KpackOutcome::Fails {
                    error: KpackError::ArchiveNotFound,
                    ..
                }
            ));
            assert!(choice.outcome.reason().starts_with("error 13:"));
        }
        let mut unique = asked.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), asked.len());
    }

    #[test]
    fn a_record_without_a_marker_is_unreadable_and_no_host_is_none() {
        let (chosen, asked) = select("bin/hip-nopie", &["gfx906"]);
        let chosen = chosen.unwrap();
        let [choice] = &chosen[0][..] else { panic!() };
        assert_eq!(choice.key, b"#0");
        let KpackOutcome::Unreadable(why) = &choice.outcome else {
            panic!("{choice:?}")
        };
        assert!(why.contains("pointer is 0"), "{why}");
        assert!(asked.is_empty());
        assert!(select(".kpack/test_lib_gfx906.kpack", &["gfx906"])
            .0
            .is_none());
    }

    #[test]
    fn an_archive_alone_resolves_each_key_once() {
        let path = std::format!("{KPACK}/none/.kpack/test_lib_gfx906.kpack");
        let bytes = std::fs::read(&path).unwrap();
        let archive = Archive::parse(&bytes).unwrap();
        let environment = Environment::default();
        let chosen = select_archive(
            &archive,
            b"a.kpack",
            "gfx906:xnack-",
            &environment,
            Loader::FallThrough,
        );
        assert_eq!(chosen.len(), 9);
        for choice in &chosen {
            let KpackOutcome::Loads(load) = &choice.outcome else {
                panic!("{choice:?}")
            };
            assert_eq!(load.reason, "native: the gfx906 code object of 'a.kpack'");
        }
        let off = Environment::from_values(Some(b"1"), None, None);
        let chosen = select_archive(&archive, b"a.kpack", "gfx906", &off, Loader::FallThrough);
        assert!(chosen.iter().all(|c| matches!(
            c.outcome,
            KpackOutcome::Fails {
                error: KpackError::NotImplemented,
                ..
            }
        )));
    }
}
