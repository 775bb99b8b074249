//! Which code object the HIP runtime loads for a `HIPK` record on a device,
//! by its own rule (CLR's `ExtractKpackBinary` and librocm_kpack's
//! `kpack_load_code_object`, ../shared/kpack.md §5):
//!
//! 1. the architecture list: the device's ISA name, then CLR's generic
//!    target for it ([`clr_generic`]) where its table has one;
//! 2. for each of them in turn, each feature subset in the runtime's order
//!    ([`feature_subsets`]); for each, every opened archive (in candidate
//!    order) whose `gfx_arches` lists it exactly;
//! 3. the loader rocm-kpack shipped tries only the first such candidate
//!    and returns its result; the one after rocm-systems#9953 (the default
//!    here) tries each in turn, then the next architecture.
//!
//! Finding and opening the archives (search paths, `@GFXARCH@`, the
//! environment) is the caller's: it hands the archives over in candidate
//! order.

use alloc::vec::Vec;

use super::{Archive, Entry};

/// The most features of a device's ISA name whose subsets are tried
/// ([`feature_subsets`]): 16 candidates.
pub const MAX_FEATURES: usize = 4;

/// The prefix of an ISA name that the runtime drops.
const ISA_PREFIX: &[u8] = b"amdgcn-amd-amdhsa--";

/// Which loader's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loader {
    /// rocm-kpack's shipped loader: the first archive that lists a
    /// candidate architecture decides.
    FirstCandidate,
    /// rocm-systems#9953: every candidate in turn, then the generic
    /// architecture.
    FallThrough,
}

/// librocm_kpack's error codes (`kpack_error_t`) where resolution fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KpackError {
    /// 5: an archive for the architecture has no entry for the key.
    KernelNotFound,
    /// 8: `ROCM_KPACK_DISABLE` turned the loader off.
    NotImplemented,
    /// 13: no archive could be opened.
    ArchiveNotFound,
    /// 14: no opened archive lists any candidate architecture.
    ArchNotFound,
}

impl KpackError {
    /// The runtime's number for it.
    pub fn code(self) -> u32 {
        match self {
            KpackError::KernelNotFound => 5,
            KpackError::NotImplemented => 8,
            KpackError::ArchiveNotFound => 13,
            KpackError::ArchNotFound => 14,
        }
    }

    /// The error of the runtime's number `code`, if resolution gives it.
    pub fn from_code(code: u32) -> Option<Self> {
        [
            KpackError::KernelNotFound,
            KpackError::NotImplemented,
            KpackError::ArchiveNotFound,
            KpackError::ArchNotFound,
        ]
        .into_iter()
        .find(|e| e.code() == code)
    }

    /// Why, in a sentence.
    pub fn reason(self) -> &'static str {
        match self {
            KpackError::KernelNotFound => {
                "KPACK_ERROR_KERNEL_NOT_FOUND (5): an archive for the device's architecture has no code object for this record"
            }
            KpackError::NotImplemented => {
                "KPACK_ERROR_NOT_IMPLEMENTED (8): ROCM_KPACK_DISABLE turned the loader off"
            }
            KpackError::ArchiveNotFound => {
                "KPACK_ERROR_ARCHIVE_NOT_FOUND (13): none of the archives the search paths name exists"
            }
            KpackError::ArchNotFound => {
                "KPACK_ERROR_ARCH_NOT_FOUND (14): no archive lists an architecture the device can run"
            }
        }
    }
}

/// The device's ISA name without the runtime's prefix.
fn bare(isa: &[u8]) -> &[u8] {
    isa.strip_prefix(ISA_PREFIX).unwrap_or(isa)
}

/// The architectures the runtime tries for `isa`, in its order: the
/// processor with each subset of the features, for mask 2^n - 1 down to 0,
/// feature i kept when bit n - 1 - i is set, in their written order
/// (`gfx90a:sramecc+:xnack-` gives itself, `gfx90a:sramecc+`,
/// `gfx90a:xnack-`, `gfx90a`). No normalisation: the strings are compared
/// as written.
pub fn feature_subsets(isa: &[u8]) -> Vec<Vec<u8>> {
    let mut parts = bare(isa).split(|&b| b == b':');
    let processor = parts.next().unwrap_or_default();
    let features: Vec<&[u8]> = parts.collect();
    // A target ID has at most two features (`sramecc`, `xnack`); past
    // `MAX_FEATURES` the runtime's 2^n candidates would only cost memory
    // (times every search path of a marker) and time, so the rest are
    // dropped.
    let n = features.len().min(MAX_FEATURES);
    let mut out = Vec::new();
    for mask in (0..(1u32 << n)).rev() {
        let mut arch = processor.to_vec();
        for (i, feature) in features.iter().take(n).enumerate() {
            let bit = n.saturating_sub(1).saturating_sub(i);
            if mask & (1 << bit) != 0 {
                arch.push(b':');
                arch.extend_from_slice(feature);
            }
        }
        out.push(arch);
    }
    out
}

/// CLR's `TargetToGeneric`: the generic target its table names for the
/// processor of `isa` (features dropped, then `:sramecc±` and `:xnack±`
/// put back as the ISA has them), or `None` where the table has no entry
/// (gfx908, gfx90a, gfx940, gfx941, gfx1250 among others).
pub fn clr_generic(isa: &[u8]) -> Option<Vec<u8>> {
    let name = bare(isa);
    let mut parts = name.split(|&b| b == b':');
    let processor = parts.next().unwrap_or_default();
    let generic: &[u8] = match processor {
        b"gfx900" | b"gfx902" | b"gfx904" | b"gfx906" | b"gfx909" | b"gfx90c" => b"gfx9-generic",
        b"gfx942" | b"gfx950" => b"gfx9-4-generic",
        b"gfx1010" | b"gfx1011" | b"gfx1012" | b"gfx1013" => b"gfx10-1-generic",
        b"gfx1030" | b"gfx1031" | b"gfx1032" | b"gfx1033" | b"gfx1034" | b"gfx1035"
        | b"gfx1036" => b"gfx10-3-generic",
        b"gfx1100" | b"gfx1101" | b"gfx1102" | b"gfx1103" | b"gfx1150" | b"gfx1151"
        | b"gfx1152" | b"gfx1153" => b"gfx11-generic",
        b"gfx1200" | b"gfx1201" => b"gfx12-generic",
        _ => return None,
    };
    let features: Vec<&[u8]> = parts.collect();
    let mut out = generic.to_vec();
    for wanted in [&b"sramecc"[..], b"xnack"] {
        if let Some(feature) = features
            .iter()
            .find(|f| f.strip_suffix(b"+").or(f.strip_suffix(b"-")) == Some(wanted))
        {
            out.push(b':');
            out.extend_from_slice(feature);
        }
    }
    Some(out)
}

/// The architecture list CLR passes for a device: its ISA name, then its
/// generic target where CLR's table has one.
pub fn arch_list(isa: &[u8]) -> Vec<Vec<u8>> {
    let mut list = alloc::vec![bare(isa).to_vec()];
    list.extend(clr_generic(isa));
    list
}

/// Whether the code object resolution chose for a device whose
/// architecture list is `arches` ([`arch_list`]), one of architecture
/// `arch`, is the generic target's (the runtime tries the ISA's feature
/// subsets first, then the generic target's): its processor is the
/// generic entry's.
pub fn chose_generic(arches: &[Vec<u8>], arch: &[u8]) -> bool {
    let processor = |a: &[u8]| a.split(|&b| b == b':').next().map(<[u8]>::to_vec);
    arches
        .get(1)
        .is_some_and(|g| processor(g) == processor(arch))
}

/// The environment of the runtime's loader, as librocm_kpack reads it once
/// when its cache is made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment<'a> {
    /// `ROCM_KPACK_DISABLE` set, not empty, and not starting with `0`:
    /// every load fails with `KPACK_ERROR_NOT_IMPLEMENTED` (8).
    pub disabled: bool,
    /// `ROCM_KPACK_PATH` split on `:` (empty items dropped): when not empty,
    /// these archive files replace every path the marker gives (no
    /// `@GFXARCH@` expansion; relative ones from the working directory).
    pub path: Vec<&'a [u8]>,
    /// `ROCM_KPACK_PATH_PREFIX`, split the same way: archive files tried
    /// before the marker's.
    pub prefix: Vec<&'a [u8]>,
}

impl<'a> Environment<'a> {
    /// The environment from the three variables' values (`None`: unset).
    pub fn from_values(
        disable: Option<&'a [u8]>,
        path: Option<&'a [u8]>,
        prefix: Option<&'a [u8]>,
    ) -> Self {
        let split = |value: Option<&'a [u8]>| -> Vec<&'a [u8]> {
            value
                .unwrap_or_default()
                .split(|&b| b == b':')
                .filter(|item| !item.is_empty())
                .collect()
        };
        Environment {
            disabled: disable.is_some_and(|v| v.first().is_some_and(|&c| c != b'0')),
            path: split(path),
            prefix: split(prefix),
        }
    }
}

/// The archive paths the runtime tries, in its order: `ROCM_KPACK_PATH`'s
/// alone if it gives any; else `ROCM_KPACK_PATH_PREFIX`'s, then each
/// search path of the marker placed by `place` (the caller's: from the
/// host's real directory) and, where it holds `@GFXARCH@`, once for each
/// architecture of `arches` and each of its feature subsets, the first
/// `@GFXARCH@` replaced.
pub fn candidates(
    environment: &Environment<'_>,
    paths: &[super::SearchPath<'_>],
    arches: &[Vec<u8>],
    place: &dyn Fn(&[u8]) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    if !environment.path.is_empty() {
        return environment.path.iter().map(|p| p.to_vec()).collect();
    }
    let mut out: Vec<Vec<u8>> = environment.prefix.iter().map(|p| p.to_vec()).collect();
    for path in paths {
        let placed = place(path.path);
        let placed = super::SearchPath { path: &placed };
        if placed
            .path
            .windows(super::GFXARCH.len())
            .any(|w| w == super::GFXARCH)
        {
            for arch in arches {
                for subset in feature_subsets(arch) {
                    out.push(placed.with_arch(&subset));
                }
            }
        } else {
            out.push(placed.path.to_vec());
        }
    }
    out
}

/// Where the runtime looks for a search path `rel` of a host whose real
/// directory is `dir` (symlinks resolved; the caller's to find):
/// an absolute path as it is, else `dir` joined with `rel` and its `..`
/// and `.` applied to the text (`weakly_canonical`: what lies below need
/// not exist).
pub fn place(dir: &[u8], rel: &[u8]) -> Vec<u8> {
    if rel.first() == Some(&b'/') {
        return rel.to_vec();
    }
    let mut out = dir.to_vec();
    for part in rel.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                let cut = out.iter().rposition(|&b| b == b'/').unwrap_or(0);
                // The root stays.
                out.truncate(cut.max(usize::from(out.first() == Some(&b'/'))));
            }
            name => {
                if out.last() != Some(&b'/') {
                    out.push(b'/');
                }
                out.extend_from_slice(name);
            }
        }
    }
    out
}

/// What resolution found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved<'data> {
    /// The archive's place in the list given.
    pub archive: usize,
    /// The entry (its `arch`, the architecture it matched).
    pub entry: Entry<'data>,
}

/// The code object the runtime loads for binary `key` on a device whose
/// architecture list is `arches` ([`arch_list`]), from `archives` (the
/// ones of [`candidates`] that opened, in their order), by `loader`'s
/// rule, in `environment`; or its error.
pub fn resolve<'data>(
    environment: &Environment<'_>,
    key: &[u8],
    arches: &[Vec<u8>],
    archives: &[Archive<'data>],
    loader: Loader,
) -> Result<Resolved<'data>, KpackError> {
    if environment.disabled {
        return Err(KpackError::NotImplemented);
    }
    if archives.is_empty() {
        return Err(KpackError::ArchiveNotFound);
    }
    let mut tried = None;
    for arch in arches {
        for candidate in feature_subsets(arch) {
            for (index, archive) in archives.iter().enumerate() {
                if !archive.has_arch(&candidate) {
                    continue;
                }
                let found = archive.entry(key, &candidate).ok().flatten();
                match (found, loader) {
                    (Some(entry), _) => {
                        return Ok(Resolved {
                            archive: index,
                            entry,
                        })
                    }
                    (None, Loader::FirstCandidate) => return Err(KpackError::KernelNotFound),
                    (None, Loader::FallThrough) => tried = Some(KpackError::KernelNotFound),
                }
            }
        }
    }
    Err(tried.unwrap_or(KpackError::ArchNotFound))
}
