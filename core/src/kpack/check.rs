//! What the runtime hides about a host kpack split and its archives: each
//! defect a finding, with the record, archive and device it concerns
//! (../shared/kpack.md §3-§5, every one reproduced there).

use alloc::vec::Vec;

use super::{arch_list, resolve, Archive, Environment, KpackRecord, Loader, MarkerProblem, Scheme};

/// One archive as the check sees it: its file name (what
/// `ROCM_KPACK_PATH` would have to name) and its contents.
pub struct Named<'a, 'data> {
    /// The file name, without its directory.
    pub name: &'a [u8],
    /// The archive.
    pub archive: &'a Archive<'data>,
}

/// A defect the runtime does not report, or reports in words that do not
/// say why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A record whose pointer the split zeroed (an executable that is not
    /// position-independent): the runtime stops with "HIPK metadata is
    /// null".
    NullPointer {
        /// The record's index.
        record: usize,
        /// Its file offset.
        offset: u64,
    },
    /// Records whose key has no code object for an architecture that other
    /// records have: the splitter numbers code objects per architecture,
    /// the runtime looks them up by record, so when translation units have
    /// different architecture sets a record gets another unit's code (or
    /// none: `KERNEL_NOT_FOUND` on that architecture).
    RecordWithoutArch {
        /// The architecture.
        arch: Vec<u8>,
        /// The code object indices of the records that have none for it.
        records: Vec<u32>,
    },
    /// On a device of `device`, the loader rocm-kpack shipped stops at the
    /// variant archive `variant` (`…_gfx90a:xnack-.kpack`), which lacks the
    /// record's code, and fails with `KERNEL_NOT_FOUND`, where the
    /// fall-through loader finds it in `base` (TheRock#7081).
    ShadowedByVariant {
        /// The record's code object index.
        record: u32,
        /// The device's target ID.
        device: Vec<u8>,
        /// The archive that shadows (its index among those given).
        variant: usize,
        /// The archive that holds the code.
        base: usize,
    },
    /// An archive whose name holds `:`, which `ROCM_KPACK_PATH` and
    /// `ROCM_KPACK_PATH_PREFIX` (split on `:`) cannot name.
    NameNotNameable {
        /// Its index.
        archive: usize,
    },
    /// An archive storing its code objects uncompressed (`none`): several
    /// times the size zstd gives.
    Uncompressed {
        /// Its index.
        archive: usize,
    },
    /// An entry that cannot be read or does not decode to its
    /// `original_size` (the runtime's `DECOMPRESSION_FAILED`).
    DamagedEntry {
        /// The archive.
        archive: usize,
        /// The entry's index in its table.
        entry: usize,
        /// Why.
        error: crate::Error,
    },
    /// Bundle bytes the split left in the file (it cuts only whole pages),
    /// outside every section: a scanner finds a container that is not
    /// live.
    StaleContainer {
        /// Its file offset.
        offset: u64,
    },
}

/// The devices to try for archives of `arches`: each architecture's
/// processor with every setting of the features any archive gives it
/// (`gfx90a:xnack-` and `gfx90a` give `gfx90a:xnack+`, `gfx90a:xnack-`,
/// `gfx90a`), so that a variant archive is seen beside the base one.
fn devices(arches: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for arch in arches {
        let processor = arch.split(|&b| b == b':').next().unwrap_or_default();
        let features: Vec<&[u8]> = arches
            .iter()
            .filter(|a| a.split(|&b| b == b':').next() == Some(processor))
            .flat_map(|a| a.split(|&b| b == b':').skip(1))
            .map(|f| f.get(..f.len().saturating_sub(1)).unwrap_or_default())
            .collect();
        let mut names: Vec<&[u8]> = features;
        names.sort_unstable();
        names.dedup();
        let mut add = |device: Vec<u8>| {
            if !out.contains(&device) {
                out.push(device);
            }
        };
        add(processor.to_vec());
        for name in names.iter().take(4) {
            for sign in [b'+', b'-'] {
                let mut device = processor.to_vec();
                device.push(b':');
                device.extend_from_slice(name);
                device.push(sign);
                add(device);
            }
        }
    }
    out
}

/// The findings for a host's `records` (`host` its bytes) and the archives
/// its markers name, in the runtime's candidate order.
pub fn check(host: &[u8], records: &[KpackRecord<'_>], archives: &[Named<'_, '_>]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for record in records {
        if record.marker == Err(MarkerProblem::NullPointer) {
            findings.push(Finding::NullPointer {
                record: record.index,
                offset: record.offset,
            });
        }
    }
    let keyed: Vec<(u32, Vec<u8>)> = records
        .iter()
        .filter_map(|r| {
            let (_, marker) = r.marker.as_ref().ok()?;
            Some((
                r.co_index,
                super::binary_key(marker.kernel_name, r.co_index),
            ))
        })
        .collect();
    // Architectures some record has and others lack.
    let mut arches: Vec<&[u8]> = archives.iter().flat_map(|n| n.archive.arches()).collect();
    arches.sort_unstable();
    arches.dedup();
    for arch in &arches {
        let has = |key: &[u8]| {
            archives
                .iter()
                .any(|n| n.archive.entry(key, arch).ok().flatten().is_some())
        };
        let lacking: Vec<u32> = keyed
            .iter()
            .filter(|(_, key)| !has(key))
            .map(|(k, _)| *k)
            .collect();
        if !lacking.is_empty() && lacking.len() < keyed.len() {
            findings.push(Finding::RecordWithoutArch {
                arch: arch.to_vec(),
                records: lacking,
            });
        }
    }
    // The shipped loader against the fall-through one, device by device.
    let parsed: Vec<Archive<'_>> = archives.iter().map(|n| n.archive.clone()).collect();
    let none = Environment::default();
    for device in devices(&arches) {
        let list = arch_list(&device);
        for (record, key) in &keyed {
            let first = resolve(&none, key, &list, &parsed, Loader::FirstCandidate);
            let fall = resolve(&none, key, &list, &parsed, Loader::FallThrough);
            if let (Err(_), Ok(found)) = (first, fall) {
                // The candidate the shipped loader stopped at.
                let variant = list
                    .iter()
                    .flat_map(|arch| super::feature_subsets(arch))
                    .find_map(|subset| parsed.iter().position(|a| a.has_arch(&subset)))
                    .unwrap_or(0);
                findings.push(Finding::ShadowedByVariant {
                    record: *record,
                    device: device.clone(),
                    variant,
                    base: found.archive,
                });
            }
        }
    }
    for (index, named) in archives.iter().enumerate() {
        if named.name.contains(&b':') {
            findings.push(Finding::NameNotNameable { archive: index });
        }
        if named.archive.scheme() == Scheme::Stored {
            findings.push(Finding::Uncompressed { archive: index });
        }
        let options = crate::DecompressOptions::default();
        for (entry_index, entry) in named.archive.entries().enumerate() {
            let damaged = match entry {
                Err(error) => Some(error),
                Ok(entry) => match named.archive.contents(&entry, &options) {
                    Err(error) => Some(error),
                    Ok(bytes) if crate::bytes::to_u64(bytes.len()) != entry.original_size => {
                        Some(crate::Error::new(
                            crate::ErrorKind::DecompressedTooSmall {
                                declared: entry.original_size,
                                actual: crate::bytes::to_u64(bytes.len()),
                            },
                            entry.at,
                        ))
                    }
                    Ok(_) => None,
                },
            };
            if let Some(error) = damaged {
                findings.push(Finding::DamagedEntry {
                    archive: index,
                    entry: entry_index,
                    error,
                });
            }
        }
    }
    if !records.is_empty() {
        for found in crate::scan::scan(host) {
            if let crate::scan::Found::Container(offset, _) = found {
                findings.push(Finding::StaleContainer { offset });
            }
        }
    }
    findings
}
