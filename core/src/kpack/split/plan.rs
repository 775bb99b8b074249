//! What a split stores and where it goes: the options, the marker, each
//! translation unit's bundle and each code object keyed in the archive of
//! its architecture (`<kernel_name>#<n>` per [`KeyRule`]).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::layout::add;
use super::{fail, ShortName, SplitFault};
use crate::bytes::to_u64;
use crate::compressed::DecompressOptions;
use crate::container::{Container, Containers};
use crate::elf::SectionHeader;
use crate::msgpack::write;
use crate::{Bundle, Error, ErrorKind, Result};

/// The marker's section.
pub const MARKER_SECTION: &[u8] = b".rocm_kpack_ref";

/// How code objects are keyed in the archives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyRule {
    /// By record index where that is also rocm-kpack's per-architecture
    /// counter; a host where the two differ is refused.
    #[default]
    Strict,
    /// By the index of the record whose bundle holds the code object: what
    /// the runtime looks up (`<kernel_name>#<record index>`).
    Record,
    /// rocm-kpack's per-architecture counter: the n-th code object of an
    /// architecture in the host is `#n`, whichever record it belongs to.
    PerArch,
}

/// What the split writes into the host.
#[derive(Debug, Clone, Copy)]
pub struct SplitOptions<'a> {
    /// The marker's `kernel_name`: the binary's name in the archives'
    /// keys (rocm-kpack: `<artifact prefix>/<path under it>`).
    pub kernel_name: &'a [u8],
    /// The marker's `kpack_search_paths` (rocm-kpack: one,
    /// `../` per directory level, then `.kpack/<group>_@GFXARCH@.kpack`).
    pub search_paths: &'a [&'a [u8]],
    /// How code objects are keyed.
    pub keys: KeyRule,
}

/// The search path rocm-kpack's artifact splitter writes for a binary
/// `depth` directories below its prefix: `../` that many times, then
/// `.kpack/<group>_@GFXARCH@.kpack`.
pub fn search_path(group: &[u8], depth: usize) -> Vec<u8> {
    let mut path = Vec::new();
    for _ in 0..depth {
        path.extend_from_slice(b"../");
    }
    path.extend_from_slice(b".kpack/");
    path.extend_from_slice(group);
    path.push(b'_');
    path.extend_from_slice(crate::kpack::GFXARCH);
    path.extend_from_slice(b".kpack");
    path
}

/// The marker's bytes, as Python's msgpack writes rocm-kpack's dict.
pub fn marker_bytes(kernel_name: &[u8], search_paths: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    write::map(&mut out, 2);
    write::str(&mut out, b"kpack_search_paths");
    write::array(&mut out, search_paths.len());
    for path in search_paths {
        write::str(&mut out, path);
    }
    write::str(&mut out, b"kernel_name");
    write::str(&mut out, kernel_name);
    out
}

/// One code object of a split: which record's bundle holds it, its entry
/// ID, its key in the archive of its architecture, and where it lies in
/// the (decoded) bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitCodeObject {
    /// The record (and bundle) index.
    pub record: u64,
    /// The bundle entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`).
    pub id: Vec<u8>,
    /// Where the architecture starts in `id` (after its last `--`).
    arch_at: usize,
    /// `<kernel_name>#<n>`.
    pub key: Vec<u8>,
    /// Offset of its bytes in the bundle (decoded, for a compressed one).
    pub offset: u64,
    /// Its size.
    pub size: u64,
}

impl SplitCodeObject {
    /// The architecture: the entry ID after its last `--`, as rocm-kpack
    /// names archives and keys entries.
    pub fn arch(&self) -> &[u8] {
        self.id.get(self.arch_at..).unwrap_or_default()
    }

    /// Its bytes in `bundle` (what [`HostSplit::bundle`] gave).
    pub fn bytes<'b>(&self, bundle: &'b [u8]) -> Result<&'b [u8]> {
        crate::bytes::range(bundle, self.offset, self.size).ok_or_else(|| {
            Error::new(
                ErrorKind::OutputTooSmall {
                    needed: self.offset.saturating_add(self.size),
                    available: to_u64(bundle.len()),
                },
                self.offset,
            )
        })
    }
}

/// One translation unit: its record's bundle in `.hip_fatbin`.
#[derive(Debug, Clone)]
pub struct SplitUnit<'data> {
    /// Its file offset.
    pub offset: u64,
    container: Container<'data>,
}

impl<'data> SplitUnit<'data> {
    /// Whether its bundle is compressed.
    pub fn is_compressed(&self) -> bool {
        matches!(self.container, Container::Compressed(_))
    }

    /// Its bytes in the input.
    pub fn data(&self) -> &'data [u8] {
        self.container.data()
    }
}

/// A host's split: the rewritten host, and the code objects to store.
#[derive(Debug, Clone)]
pub struct HostSplit<'data> {
    /// The host as rocm-kpack rewrites it (but for the differences in the
    /// module's documentation).
    pub host: Vec<u8>,
    /// Each record's bundle, in record order.
    pub units: Vec<SplitUnit<'data>>,
    /// Every code object, in bundle order then entry order (host entries
    /// left out): the order rocm-kpack stores them in.
    pub code_objects: Vec<SplitCodeObject>,
    /// The marker's address.
    pub marker_address: u64,
    /// The marker's bytes.
    pub marker: Vec<u8>,
    /// Bytes cut from the file (whole pages of `.hip_fatbin`).
    pub removed: u64,
}

impl<'data> HostSplit<'data> {
    /// Unit `index`'s bundle as a plain bundle: borrowed from the input,
    /// or a compressed one decoded into `scratch` (one at a time).
    pub fn bundle<'s>(
        &self,
        index: usize,
        scratch: &'s mut Vec<u8>,
        options: &DecompressOptions,
    ) -> Result<&'s [u8]>
    where
        'data: 's,
    {
        let unit = self.units.get(index).ok_or_else(|| {
            fail(
                SplitFault::RecordCount {
                    records: to_u64(index),
                    bundles: to_u64(self.units.len()),
                },
                0,
            )
        })?;
        match &unit.container {
            Container::Compressed(compressed) => {
                *scratch = compressed
                    .decompress(options)
                    .map_err(|e| e.shifted(unit.offset))?;
                Ok(scratch.as_slice())
            }
            other => Ok(other.data()),
        }
    }
}

/// The code objects of `host`'s `.hip_fatbin`, keyed by `rule`.
pub(super) fn plan_code_objects<'data>(
    data: &'data [u8],
    fatbin: &SectionHeader,
    kernel_name: &[u8],
    rule: KeyRule,
    options: &DecompressOptions,
) -> Result<(Vec<SplitUnit<'data>>, Vec<SplitCodeObject>)> {
    let bytes = crate::bytes::range(data, fatbin.offset, fatbin.size).ok_or_else(|| {
        Error::new(
            ErrorKind::SectionOutOfBounds {
                offset: fatbin.offset,
                size: fatbin.size,
                len: to_u64(data.len()),
            },
            fatbin.offset,
        )
    })?;
    let mut units = Vec::new();
    let mut objects = Vec::new();
    let mut counters: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut conflict: Option<(u64, ShortName, u64, u64)> = None;
    let mut conflicts = 0u64;
    for found in Containers::new(bytes) {
        let (at, container) = found.map_err(|e| e.shifted(fatbin.offset))?;
        let offset = add(fatbin.offset, at)?;
        let record = to_u64(units.len());
        let table;
        let bundle = match &container {
            Container::Bundle(bundle) => *bundle,
            Container::Compressed(compressed) => {
                table = compressed
                    .decompress_table(options)
                    .map_err(|e| e.shifted(offset))?;
                Bundle::parse_table(&table, compressed.uncompressed_size())
                    .map_err(|e| e.shifted(offset))?
            }
            Container::OffloadBinary(_) => return Err(fail(SplitFault::NotBundle, offset)),
        };
        for entry in bundle.entries() {
            let entry = entry.map_err(|e| e.shifted(offset))?;
            let id = entry.id();
            let Some(dashes) = id.windows(2).rposition(|w| w == b"--") else {
                continue; // the host entry: no architecture
            };
            let arch_at = dashes.saturating_add(2);
            let arch = id.get(arch_at..).unwrap_or_default();
            let counter = counters.entry(arch.to_vec()).or_insert(0);
            let n = *counter;
            *counter = counter.saturating_add(1);
            if n != record {
                conflicts = conflicts.saturating_add(1);
                if conflict.is_none() {
                    let at = add(offset, entry.descriptor_offset())?;
                    conflict = Some((record, ShortName::new(arch), n, at));
                }
            }
            let index = match rule {
                KeyRule::PerArch => n,
                KeyRule::Strict | KeyRule::Record => record,
            };
            let mut key = kernel_name.to_vec();
            key.extend_from_slice(alloc::format!("#{index}").as_bytes());
            objects.push(SplitCodeObject {
                record,
                id: id.to_vec(),
                arch_at,
                key,
                offset: entry.offset(),
                size: entry.size(),
            });
        }
        units.push(SplitUnit { offset, container });
    }
    if let (KeyRule::Strict, Some((record, arch, counter, at))) = (rule, conflict) {
        let fault = SplitFault::KeyConflict {
            record,
            arch,
            counter,
            conflicts,
        };
        return Err(fail(fault, at));
    }
    Ok((units, objects))
}
