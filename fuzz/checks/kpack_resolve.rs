//! Resolution of a `HIPK` record and the `check` of a split host, from
//! arbitrary bytes. The input is cut into pieces, each a little-endian
//! `u16` length and that many bytes (the last one cut short): a device's
//! ISA name, the three `ROCM_KPACK_*` values (an empty piece: unset), a
//! marker (MessagePack), a key, and up to four archives; the whole input
//! is also read as a host.
//!
//! Invariants checked:
//! - `arch_list`, `feature_subsets` and `candidates` never panic and stay
//!   bounded: at most two architectures, 2^`MAX_FEATURES` subsets each, and
//!   the candidates the rule gives (the path list alone when
//!   `ROCM_KPACK_PATH` is set; else the prefixes, then per search path one
//!   or one per architecture and subset);
//! - `resolve` with `ROCM_KPACK_DISABLE` set fails with
//!   `KPACK_ERROR_NOT_IMPLEMENTED`, with no archive with
//!   `ARCHIVE_NOT_FOUND`; a code object found has the key asked for, an
//!   architecture of the device's subsets that its archive lists, and is
//!   what the archive's own lookup gives;
//! - whatever the shipped (first-candidate) loader finds, the fall-through
//!   loader finds too;
//! - `check` of the host against the archives never panics, and every
//!   finding names a record or archive that exists.

use clangoffload::kpack::{
    arch_list, candidates, check as check_host, feature_subsets, records, resolve, Archive,
    Environment, Finding, KpackError, Loader, Marker, Named, MAX_FEATURES,
};

pub fn check(data: &[u8]) {
    let mut rest = data;
    let mut next = || {
        let (len, tail) = rest.split_at_checked(2).unwrap_or((&[0, 0], &[]));
        let len = usize::from(u16::from_le_bytes([len[0], len[1]])).min(tail.len());
        let (piece, tail) = tail.split_at(len);
        rest = tail;
        piece
    };
    let (isa, disable, path, prefix, marker, key) =
        (next(), next(), next(), next(), next(), next());
    let archives: Vec<Archive<'_>> = (0..4)
        .map(|_| next())
        .filter_map(|piece| Archive::parse(piece).ok())
        .collect();
    fn set(piece: &[u8]) -> Option<&[u8]> {
        (!piece.is_empty()).then_some(piece)
    }
    let environment = Environment::from_values(set(disable), set(path), set(prefix));

    let arches = arch_list(isa);
    assert!(!arches.is_empty() && arches.len() <= 2);
    let most = 1usize << MAX_FEATURES;
    for arch in &arches {
        let subsets = feature_subsets(arch);
        assert!(!subsets.is_empty() && subsets.len() <= most);
    }
    if let Ok(marker) = Marker::parse(marker, 0) {
        let paths: Vec<_> = marker.search_paths().collect();
        let found = candidates(&environment, &paths, &arches, &|p: &[u8]| p.to_vec());
        let bound = if environment.path.is_empty() {
            environment.prefix.len() + paths.len() * arches.len() * most
        } else {
            environment.path.len()
        };
        assert!(found.len() <= bound, "{} > {bound}", found.len());
    }

    let first = resolve(
        &environment,
        key,
        &arches,
        &archives,
        Loader::FirstCandidate,
    );
    let fall = resolve(&environment, key, &arches, &archives, Loader::FallThrough);
    if environment.disabled {
        assert_eq!(first, Err(KpackError::NotImplemented));
        assert_eq!(fall, Err(KpackError::NotImplemented));
    } else if archives.is_empty() {
        assert_eq!(fall, Err(KpackError::ArchiveNotFound));
    }
    for found in [first, fall].iter().flatten() {
        let archive = &archives[found.archive];
        assert_eq!(found.entry.key, key);
        assert!(archive.has_arch(found.entry.arch));
        assert!(arches
            .iter()
            .any(|a| feature_subsets(a).iter().any(|s| s == found.entry.arch)));
        let own = archive.entry(key, found.entry.arch).unwrap().unwrap();
        assert_eq!(own.at, found.entry.at);
    }
    if let Ok(found) = first {
        assert_eq!(
            fall.map(|f| (f.archive, f.entry.at)),
            Ok((found.archive, found.entry.at))
        );
    }

    if let Ok(file) = clangoffload::object::ObjectFile::parse(data) {
        let records = records(&file);
        let named: Vec<Named<'_, '_>> = archives
            .iter()
            .map(|archive| Named {
                name: b"a:b",
                archive,
            })
            .collect();
        for finding in check_host(data, &records, &named) {
            match finding {
                Finding::NullPointer { record, .. } => assert!(record < records.len()),
                Finding::ShadowedByVariant { variant, base, .. } => {
                    assert!(variant < archives.len() && base < archives.len());
                }
                Finding::NameNotNameable { archive }
                | Finding::Uncompressed { archive }
                | Finding::DamagedEntry { archive, .. } => assert!(archive < archives.len()),
                Finding::RecordWithoutArch { .. } | Finding::StaleContainer { .. } => {}
            }
        }
    }
}
