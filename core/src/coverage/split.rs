//! A host ROCm's kpack split covered: its device code is in kpack archives,
//! found through each `HIPK` record's marker; a device gets code when
//! every record resolves for it as the HIP runtime resolves it (archive
//! paths, feature subsets and the generic target in CLR's order), as
//! `select` chooses each record's code object.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use super::{absent, Covered, Verdict};
use crate::kpack::{arch_list, binary_key, candidates, chose_generic, place, records, resolve};
use crate::kpack::{Archive, Environment, KpackRecord, Loader};
use crate::select::{Device, How};

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

/// What record of a split host gives a device.
enum Outcome {
    /// Its code object: the entry's ID, whether the generic target's, and
    /// why.
    Loads(String, How, String),
    /// Why none.
    Nothing(String),
}

/// Covers `data`, named `name`, for the devices `devices` names (an NVIDIA
/// one gets nothing: a split host's code is AMD's): `None` when it is no
/// split host (no `HIPK` record). Each archive path is opened once.
pub fn cover_split_host(
    data: &[u8],
    name: &str,
    devices: &[&str],
    lookup: Lookup<'_, '_>,
) -> Option<Covered> {
    let file = crate::object::ObjectFile::parse(data).ok()?;
    let records = records(&file);
    if records.is_empty() {
        return None;
    }
    // Every path an AMD device's resolution tries, opened once.
    let wanted: Vec<Vec<Vec<Vec<u8>>>> = devices
        .iter()
        .map(|device| match Device::parse(device) {
            Ok(Device::Cuda(_)) => Vec::new(),
            _ => paths(&records, device, &lookup),
        })
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
    let verdicts = devices
        .iter()
        .zip(&wanted)
        .map(|(device, wanted)| match Device::parse(device) {
            Ok(parsed @ Device::Cuda(_)) => absent(&parsed),
            _ => {
                let outcomes: Vec<Outcome> = records
                    .iter()
                    .zip(wanted)
                    .map(|(record, paths)| choose(record, device, paths, &archives, &lookup))
                    .collect();
                verdict(&outcomes)
            }
        })
        .collect();
    Some(Covered {
        name: name.into(),
        verdicts,
        targets: Vec::new(),
        findings: Vec::new(),
        error: None,
        own: Vec::new(),
    })
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
) -> Outcome {
    let marker = match &record.marker {
        Ok((_, marker)) => marker,
        Err(problem) => return Outcome::Nothing(alloc::format!("{problem}")),
    };
    let key = binary_key(marker.kernel_name, record.co_index);
    let mut list: Vec<(&[u8], Archive<'_>)> = Vec::new();
    for path in paths {
        if let Some((p, Ok(archive))) = archives.get_key_value(path.as_slice()) {
            if !list.iter().any(|(q, _)| q == p) {
                list.push((p, archive.clone()));
            }
        }
    }
    let only: Vec<Archive<'_>> = list.iter().map(|(_, a)| a.clone()).collect();
    let arches = arch_list(device.as_bytes());
    match resolve(lookup.environment, &key, &arches, &only, lookup.loader) {
        Ok(found) => {
            let how = if chose_generic(&arches, found.entry.arch) {
                How::Generic
            } else {
                How::Native
            };
            let path = list.get(found.archive).map_or(&[][..], |(p, _)| p);
            let reason = alloc::format!(
                "{}: the {} code object of '{}'",
                how.name(),
                String::from_utf8_lossy(found.entry.arch),
                String::from_utf8_lossy(path)
            );
            Outcome::Loads(
                String::from_utf8_lossy(found.entry.id()).into_owned(),
                how,
                reason,
            )
        }
        Err(error) => {
            let mut why = alloc::format!("error {}: {}", error.code(), error.reason());
            // A file there that is no archive the runtime reads is why the
            // search found nothing: said, not taken for a missing file.
            let damaged = paths
                .iter()
                .find_map(|p| Some((p, archives.get(p.as_slice())?.as_ref().err()?)));
            if let Some((path, fault)) = damaged {
                let path = String::from_utf8_lossy(path);
                let _ = write!(why, "; '{path}' is no kpack archive: {fault}");
            }
            Outcome::Nothing(why)
        }
    }
}

/// Every record must give the device code (the runtime loads each code
/// object as its kernels are launched): the first that gives none says
/// why; else the chosen IDs, each once, generic if any is.
fn verdict(outcomes: &[Outcome]) -> Verdict {
    let mut verdict = Verdict {
        applies: true,
        loads: !outcomes.is_empty(),
        entries: Vec::new(),
        how: None,
        reason: String::new(),
    };
    for outcome in outcomes {
        match outcome {
            Outcome::Nothing(why) => {
                return Verdict {
                    loads: false,
                    entries: Vec::new(),
                    how: None,
                    reason: why.clone(),
                    ..verdict
                };
            }
            Outcome::Loads(id, how, reason) => {
                if !verdict.entries.contains(id) {
                    verdict.entries.push(id.clone());
                }
                if verdict.how != Some(How::Generic) {
                    verdict.how = Some(*how);
                }
                if verdict.reason.is_empty() {
                    verdict.reason.clone_from(reason);
                }
            }
        }
    }
    verdict
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;

    const ZSTD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/kpack/zstd");

    /// The fixture split host (its archives beside it, `../.kpack/`)
    /// covered for `devices`; the paths opened.
    fn cover(devices: &[&str], environment: &Environment<'_>) -> (Option<Covered>, Vec<String>) {
        let host = std::fs::read(std::format!("{ZSTD}/lib/libtwo.so")).unwrap();
        let dir = std::format!("{ZSTD}/lib");
        let mut asked = Vec::new();
        let mut open = |path: &[u8]| {
            let path = String::from_utf8_lossy(path).into_owned();
            let bytes = std::fs::read(&path).ok().map(Cow::Owned);
            asked.push(path);
            bytes
        };
        let lookup = Lookup {
            environment,
            dir: dir.as_bytes(),
            loader: Loader::FallThrough,
            open: &mut open,
        };
        (cover_split_host(&host, "libtwo.so", devices, lookup), asked)
    }

    #[test]
    fn every_record_resolves_as_the_runtime_does() {
        let devices = ["gfx906", "gfx90a:xnack+", "gfx1100", "sm_80"];
        let (covered, asked) = cover(&devices, &Environment::default());
        let covered = covered.unwrap();
        let [gfx906, gfx90a, gfx1100, sm80] = &covered.verdicts[..] else {
            panic!("{:?}", covered.verdicts)
        };
        assert!(gfx906.loads && gfx906.how == Some(How::Native));
        assert_eq!(gfx906.entries, ["hipv4-amdgcn-amd-amdhsa--gfx906"]);
        assert!(
            gfx906.reason.ends_with("/.kpack/test_lib_gfx906.kpack'"),
            "{}",
            gfx906.reason
        );
        assert!(gfx90a.loads && gfx90a.entries == ["hipv4-amdgcn-amd-amdhsa--gfx90a"]);
        // No archive for gfx1100: the runtime's error 13.
        assert!(!gfx1100.loads && gfx1100.applies);
        assert!(
            gfx1100.reason.starts_with("error 13:"),
            "{}",
            gfx1100.reason
        );
        // A split host holds AMD code only.
        assert!(!sm80.applies && sm80.reason == "no NVIDIA code in the file");
        // Each path once, whatever the devices and records asking.
        let mut unique = asked.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), asked.len(), "{asked:?}");
    }

    #[test]
    fn a_damaged_archive_is_named_not_taken_for_a_missing_one() {
        let host = std::fs::read(std::format!("{ZSTD}/lib/libtwo.so")).unwrap();
        let dir = std::format!("{ZSTD}/lib");
        // gfx906's archive cut inside its table of contents.
        let mut open = |path: &[u8]| {
            let text = String::from_utf8_lossy(path).into_owned();
            let mut bytes = std::fs::read(&text).ok()?;
            if text.ends_with("test_lib_gfx906.kpack") {
                bytes.truncate(bytes.len() - 9);
            }
            Some(Cow::Owned(bytes))
        };
        let lookup = Lookup {
            environment: &Environment::default(),
            dir: dir.as_bytes(),
            loader: Loader::FallThrough,
            open: &mut open,
        };
        let covered = cover_split_host(&host, "libtwo.so", &["gfx906", "gfx90a:xnack+"], lookup);
        let verdicts = covered.unwrap().verdicts;
        assert!(!verdicts[0].loads);
        assert!(
            verdicts[0].reason.starts_with("error 13:"),
            "{}",
            verdicts[0].reason
        );
        assert!(
            verdicts[0]
                .reason
                .contains("test_lib_gfx906.kpack' is no kpack archive: "),
            "{}",
            verdicts[0].reason
        );
        // The other archive still gives its device code.
        assert!(verdicts[1].loads, "{:?}", verdicts[1]);
    }

    #[test]
    fn the_environment_and_other_files_are_heeded() {
        let disabled = Environment {
            disabled: true,
            ..Environment::default()
        };
        let (covered, _) = cover(&["gfx906"], &disabled);
        let verdict = &covered.unwrap().verdicts[0];
        assert!(
            !verdict.loads && verdict.reason.starts_with("error 8:"),
            "{}",
            verdict.reason
        );
        // A file with device code of its own, or none, is no split host.
        let plain = std::fs::read(std::format!("{ZSTD}/../inputs/libone.so")).unwrap();
        let lookup = Lookup {
            environment: &Environment::default(),
            dir: b"/",
            loader: Loader::FallThrough,
            open: &mut |_| None,
        };
        assert!(cover_split_host(&plain, "libone.so", &["gfx906"], lookup).is_none());
    }
}
