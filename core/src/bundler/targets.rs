//! `-targets`: LLVM's checks, in its order, and the IDs the bundler writes
//! and matches them as.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::BundlerError;
use crate::id::{find_conflicting_targets, normalize_entry_id};
use crate::BundleEntryId;

/// Whether the targets are for bundling or unbundling (the host rule
/// differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Bundling: exactly one host target, unless every target is HIP.
    Bundle,
    /// Unbundling: at most one host target.
    Unbundle,
}

/// Checked targets: as given, as the bundler writes and matches them, and
/// which is the host's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets {
    /// As given.
    pub given: Vec<String>,
    /// Normalised, as the bundler writes and matches them.
    pub normalized: Vec<String>,
    /// The index of the host target, if one was given.
    pub host: Option<usize>,
}

/// Checks `-targets` as clang-offload-bundler 22 does, in its order:
/// duplicates, the `<kind>-<triple>` format, known kinds and triples,
/// conflicting target IDs, then the number of host targets.
pub fn check_targets<S: AsRef<str>>(targets: &[S], mode: Mode) -> Result<Targets, BundlerError> {
    let mut given: Vec<String> = Vec::new();
    let mut normalized = Vec::new();
    let mut ids = Vec::new();
    let mut host = None;
    let mut hosts = 0usize;
    let mut hip_only = true;
    for (i, target) in targets.iter().map(AsRef::as_ref).enumerate() {
        if given.iter().any(|g| g == target) {
            return Err(BundlerError::DuplicateTargets);
        }
        given.push(target.to_string());
        let id = BundleEntryId::parse(target).map_err(|_| BundlerError::TargetFormat)?;
        let known_kind = id.has_known_kind();
        let known_triple = id.triple().has_known_arch();
        if !known_kind || !known_triple {
            return Err(BundlerError::InvalidTarget {
                target: target.to_string(),
                unknown_kind: (!known_kind).then(|| id.kind().to_string()),
                unknown_triple: (!known_triple).then(|| id.triple().to_string()),
            });
        }
        if id.kind() == "host" {
            hosts = hosts.saturating_add(1);
            host = Some(i);
        }
        hip_only &= matches!(id.kind(), "hip" | "hipv4");
        normalized.push(normalize_entry_id(target).map_err(BundlerError::Id)?);
        ids.push(id);
    }
    if let Some((a, b)) = find_conflicting_targets(&ids) {
        let name = |i: usize| given.get(i).cloned().unwrap_or_default();
        return Err(BundlerError::ConflictingTargets(name(a), name(b)));
    }
    let bad_hosts = match mode {
        Mode::Bundle => !hip_only && hosts != 1,
        Mode::Unbundle => hosts > 1,
    };
    if bad_hosts {
        return Err(BundlerError::HostTargetCount(hosts));
    }
    Ok(Targets {
        given,
        normalized,
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_checked_in_llvms_order() {
        let t = check_targets(
            &[
                "host-x86_64-unknown-linux-gnu",
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
            ],
            Mode::Bundle,
        )
        .unwrap();
        assert_eq!(t.host, Some(0));
        assert_eq!(
            check_targets(
                &["host-x86_64--linux-", "host-x86_64--linux-"],
                Mode::Bundle
            ),
            Err(BundlerError::DuplicateTargets)
        );
        assert_eq!(
            check_targets(&["nonsense"], Mode::Bundle),
            Err(BundlerError::TargetFormat)
        );
        assert!(matches!(
            check_targets(&["foo-x86_64-unknown-linux-gnu"], Mode::Bundle),
            Err(BundlerError::InvalidTarget { unknown_kind: Some(k), unknown_triple: None, .. }) if k == "foo"
        ));
        assert_eq!(
            check_targets(&["openmp-x86_64-unknown-linux-gnu"], Mode::Bundle),
            Err(BundlerError::HostTargetCount(0))
        );
        assert!(check_targets(&["hip-amdgcn-amd-amdhsa--gfx906"], Mode::Bundle).is_ok());
        assert!(check_targets(&["openmp-x86_64-unknown-linux-gnu"], Mode::Unbundle).is_ok());
    }
}
