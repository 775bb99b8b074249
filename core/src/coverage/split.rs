//! A host ROCm's kpack split covered: its device code is in kpack archives,
//! found through each `HIPK` record's marker; a device gets code when
//! every record resolves for it as the HIP runtime resolves it (archive
//! paths, feature subsets and the generic target in CLR's order), as
//! `select` chooses each record's code object (`select::select_split_host`).

use alloc::string::String;
use alloc::vec::Vec;

use super::{absent, Covered, Verdict};
use crate::select::{select_split_host, Device, How, KpackChoice, KpackOutcome, Lookup};

/// Covers `data`, named `name`, for the devices `devices` names (an NVIDIA
/// one gets nothing: a split host's code is AMD's): `None` when it is no
/// split host (no `HIPK` record). Each archive path is opened once.
pub fn cover_split_host(
    data: &[u8],
    name: &str,
    devices: &[&str],
    lookup: Lookup<'_, '_>,
) -> Option<Covered> {
    let amd: Vec<&str> = devices
        .iter()
        .copied()
        .filter(|device| !matches!(Device::parse(device), Ok(Device::Cuda(_))))
        .collect();
    let mut chosen = select_split_host(data, &amd, lookup)?.into_iter();
    let verdicts = devices
        .iter()
        .map(|device| match Device::parse(device) {
            Ok(parsed @ Device::Cuda(_)) => absent(&parsed),
            _ => verdict(&chosen.next().unwrap_or_default()),
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

/// Every record must give the device code (the runtime loads each code
/// object as its kernels are launched): the first that gives none says
/// why; else the chosen IDs, each once, generic if any is.
fn verdict(choices: &[KpackChoice]) -> Verdict {
    let mut verdict = Verdict {
        applies: true,
        loads: !choices.is_empty(),
        entries: Vec::new(),
        how: None,
        reason: String::new(),
    };
    for choice in choices {
        let KpackOutcome::Loads(load) = &choice.outcome else {
            return Verdict {
                loads: false,
                entries: Vec::new(),
                how: None,
                reason: choice.outcome.reason().into(),
                ..verdict
            };
        };
        let id = String::from_utf8_lossy(&load.id).into_owned();
        if !verdict.entries.contains(&id) {
            verdict.entries.push(id);
        }
        if verdict.how != Some(How::Generic) {
            verdict.how = Some(load.how);
        }
        if verdict.reason.is_empty() {
            verdict.reason.clone_from(&load.reason);
        }
    }
    verdict
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use crate::kpack::{Environment, Loader};
    use alloc::borrow::Cow;

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
