//! A host after kpack's split: `.hip_fatbin` left as `SHT_NOBITS` (its
//! code objects moved to archives), each wrapper record rewritten from
//! `HIPF` to `HIPK` with its pointer at a MessagePack marker (in
//! `.rocm_kpack_ref`; `.kpackrf` in PE images) and its last field the code
//! object index, and the marker naming the binary and where its archives
//! are:
//!
//! ```text
//! {"kpack_search_paths": ["../.kpack/<group>_@GFXARCH@.kpack"],
//!  "kernel_name": "<prefix>/lib/libfoo.so"}
//! ```
//!
//! The runtime reads at most [`MAX_MARKER_LEN`] bytes from the pointer and
//! looks up `<kernel_name>#<index>` for its architectures in each archive
//! the search paths name (`@GFXARCH@` replaced by each architecture).

use super::KpackFault;
use crate::bytes::to_u64;
use crate::msgpack::{Fault, Reader, Value};
use crate::{Error, ErrorKind, Result};

/// The most bytes of a marker the runtime reads from the pointer.
pub const MAX_MARKER_LEN: usize = 64 << 10;

/// What a search path says in place of an architecture.
pub const GFXARCH: &[u8] = b"@GFXARCH@";

/// A kpack marker, read in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker<'data> {
    /// `kernel_name`: the binary as the archives key it.
    pub kernel_name: &'data [u8],
    bytes: &'data [u8],
    /// Where `kpack_search_paths`' items start in `bytes`, and how many.
    paths_at: usize,
    paths: u64,
    /// How many bytes the marker takes.
    pub len: u64,
}

impl<'data> Marker<'data> {
    /// Reads the marker at the start of `bytes` (at most
    /// [`MAX_MARKER_LEN`] of them are looked at), which lie at file offset
    /// `base` (where errors point). It must be a map with a string
    /// `kernel_name` and an array `kpack_search_paths` holding at least one
    /// string (the runtime skips other items, and refuses a marker with
    /// none as invalid metadata).
    pub fn parse(bytes: &'data [u8], base: u64) -> Result<Self> {
        let bytes = bytes.get(..MAX_MARKER_LEN).unwrap_or(bytes);
        let mut reader = Reader::new(bytes);
        let fail = |fault, at: usize| {
            Error::new(
                ErrorKind::MalformedKpack { fault },
                base.saturating_add(to_u64(at)),
            )
        };
        let msgpack = |fault: Fault, at| fail(super::toc::msgpack_fault(fault), at);
        let wrong = |what, expected, at| fail(KpackFault::WrongType { what, expected }, at);
        let pairs = match reader.next().map_err(|f| msgpack(f, 0))? {
            Value::Map(n) => n,
            _ => return Err(wrong("the marker", "a map", 0)),
        };
        let (mut kernel_name, mut paths) = (None, None);
        for _ in 0..pairs {
            let at = reader.position();
            match reader.next().map_err(|f| msgpack(f, at))? {
                Value::Str(b"kernel_name") => {
                    let at = reader.position();
                    match reader.next().map_err(|f| msgpack(f, at))? {
                        Value::Str(name) => kernel_name = Some(name),
                        _ => return Err(wrong("kernel_name", "a string", at)),
                    }
                }
                Value::Str(b"kpack_search_paths") => {
                    let at = reader.position();
                    let Value::Array(count) = reader.next().map_err(|f| msgpack(f, at))? else {
                        return Err(wrong("kpack_search_paths", "an array", at));
                    };
                    let start = reader.position();
                    let mut strings = 0u64;
                    for _ in 0..count {
                        let at = reader.position();
                        if let Value::Str(_) = reader.clone().next().map_err(|f| msgpack(f, at))? {
                            strings = strings.saturating_add(1);
                        }
                        reader.skip().map_err(|f| msgpack(f, at))?;
                    }
                    if strings == 0 {
                        let what = "kpack_search_paths";
                        return Err(fail(KpackFault::Missing { what }, at));
                    }
                    paths = Some((start, count));
                }
                _ => {
                    let at = reader.position();
                    reader.skip().map_err(|f| msgpack(f, at))?;
                }
            }
        }
        let missing = |what| fail(KpackFault::Missing { what }, 0);
        let kernel_name = kernel_name.ok_or_else(|| missing("kernel_name"))?;
        let (paths_at, paths) = paths.ok_or_else(|| missing("kpack_search_paths"))?;
        Ok(Marker {
            kernel_name,
            bytes,
            paths_at,
            paths,
            len: to_u64(reader.position()),
        })
    }

    /// `kpack_search_paths`' strings, in order (other items skipped, as the
    /// runtime skips them).
    pub fn search_paths(&self) -> SearchPaths<'data> {
        SearchPaths {
            reader: Reader::at(self.bytes, self.paths_at),
            left: self.paths,
        }
    }
}

/// The search paths of a [`Marker`].
#[derive(Debug, Clone)]
pub struct SearchPaths<'data> {
    reader: Reader<'data>,
    left: u64,
}

impl<'data> Iterator for SearchPaths<'data> {
    type Item = SearchPath<'data>;

    fn next(&mut self) -> Option<SearchPath<'data>> {
        while let Some(left) = self.left.checked_sub(1) {
            self.left = left;
            let head = self.reader.clone().next();
            if self.reader.skip().is_err() {
                // Checked at parse: never here.
                self.left = 0;
                return None;
            }
            if let Ok(Value::Str(path)) = head {
                return Some(SearchPath { path });
            }
        }
        None
    }
}

/// One search path of a marker: an archive's path, absolute or relative to
/// the host's directory, `@GFXARCH@` standing for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchPath<'data> {
    /// As the marker holds it.
    pub path: &'data [u8],
}

impl<'data> SearchPath<'data> {
    /// The directory part (up to the last `/`, empty if none).
    pub fn directory(&self) -> &'data [u8] {
        match self.path.iter().rposition(|&b| b == b'/') {
            Some(at) => self.path.get(..at).unwrap_or_default(),
            None => &[],
        }
    }

    /// The file name part (after the last `/`).
    pub fn file_name(&self) -> &'data [u8] {
        match self.path.iter().rposition(|&b| b == b'/') {
            Some(at) => self.path.get(at.saturating_add(1)..).unwrap_or_default(),
            None => self.path,
        }
    }

    /// Whether the path is absolute (the runtime takes it as is).
    pub fn is_absolute(&self) -> bool {
        self.path.first() == Some(&b'/')
    }

    /// Whether `name` is a file this path names: equal to its file name, or,
    /// where that holds `@GFXARCH@`, equal to it with some non-empty text in
    /// place of the first one (the architecture).
    pub fn names(&self, name: &[u8]) -> bool {
        let file = self.file_name();
        match find(file, GFXARCH) {
            None => name == file,
            Some(at) => {
                let (before, after) = (
                    file.get(..at).unwrap_or_default(),
                    file.get(at.saturating_add(GFXARCH.len())..)
                        .unwrap_or_default(),
                );
                name.len() > before.len().saturating_add(after.len())
                    && name.starts_with(before)
                    && name.ends_with(after)
            }
        }
    }

    /// The path with its first `@GFXARCH@` replaced by `arch`, as the
    /// runtime makes its candidates.
    #[cfg(feature = "alloc")]
    pub fn with_arch(&self, arch: &[u8]) -> alloc::vec::Vec<u8> {
        let mut out = alloc::vec::Vec::with_capacity(self.path.len().saturating_add(arch.len()));
        match find(self.path, GFXARCH) {
            None => out.extend_from_slice(self.path),
            Some(at) => {
                out.extend_from_slice(self.path.get(..at).unwrap_or_default());
                out.extend_from_slice(arch);
                out.extend_from_slice(
                    self.path
                        .get(at.saturating_add(GFXARCH.len())..)
                        .unwrap_or_default(),
                );
            }
        }
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The key the runtime looks a record's code object up by:
/// `<kernel_name>#<co_index>`.
#[cfg(feature = "alloc")]
pub fn binary_key(kernel_name: &[u8], co_index: u32) -> alloc::vec::Vec<u8> {
    let mut key = kernel_name.to_vec();
    key.extend_from_slice(alloc::format!("#{co_index}").as_bytes());
    key
}

/// One `HIPK` record of a split host, and its marker.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone)]
pub struct KpackRecord<'data> {
    /// Its place among the records of its section.
    pub index: usize,
    /// The code object index it carries (its last field's low 32 bits).
    pub co_index: u32,
    /// File offset of the record.
    pub offset: u64,
    /// Its marker and the marker's file offset, or why it has none.
    pub marker: core::result::Result<(u64, Marker<'data>), MarkerProblem>,
}

/// Why a `HIPK` record gives no marker.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerProblem {
    /// The pointer is 0 and no relocation fills it: a non-PIE executable,
    /// whose pointer kpack's split zeroes (the runtime stops with "HIPK
    /// metadata is null").
    NullPointer,
    /// The pointer leads to no bytes in the file.
    Unresolved {
        /// The pointer's value.
        address: u64,
    },
    /// The bytes there are no marker.
    Damaged(Error),
}

#[cfg(feature = "alloc")]
impl core::fmt::Display for MarkerProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MarkerProblem::NullPointer => f.write_str(
                "its pointer is 0 and no relocation fills it (kpack's split zeroes it in \
                 executables that are not position-independent; the runtime stops with \
                 \"HIPK metadata is null\")",
            ),
            MarkerProblem::Unresolved { address } => {
                write!(f, "its pointer {address:#x} leads to no bytes in the file")
            }
            MarkerProblem::Damaged(error) => write!(f, "its marker: {error}"),
        }
    }
}

/// Every `HIPK` record of `file`'s wrapper sections, in order, with its
/// marker.
#[cfg(feature = "alloc")]
pub fn records<'data>(
    file: &crate::object::ObjectFile<'data>,
) -> alloc::vec::Vec<KpackRecord<'data>> {
    use crate::locate::{offload_sections, wrapper_targets, SectionKind, WrapperKind};
    let mut records = alloc::vec::Vec::new();
    for section in offload_sections(file).flatten() {
        if section.kind != SectionKind::HipWrappers {
            continue;
        }
        let base = section.section.offset();
        for (index, (wrapper, target)) in wrapper_targets(file, &section.section)
            .into_iter()
            .enumerate()
        {
            if wrapper.kind != WrapperKind::HipKpack {
                continue;
            }
            let marker = match target {
                None if wrapper.binary == 0 => Err(MarkerProblem::NullPointer),
                None => Err(MarkerProblem::Unresolved {
                    address: wrapper.binary,
                }),
                Some((held, at)) => {
                    let offset = held.offset().saturating_add(at);
                    let bytes = usize::try_from(at)
                        .ok()
                        .and_then(|at| held.data().get(at..))
                        .unwrap_or_default();
                    Marker::parse(bytes, offset)
                        .map(|marker| (offset, marker))
                        .map_err(MarkerProblem::Damaged)
                }
            };
            records.push(KpackRecord {
                index,
                co_index: u32::try_from(wrapper.reserved & u64::from(u32::MAX)).unwrap_or(0),
                offset: base.saturating_add(wrapper.offset),
                marker,
            });
        }
    }
    records
}

/// `.hip_fatbin` as kpack's split leaves it: no bytes in the file
/// (`SHT_NOBITS`), its address and size kept. `Some((address, size))` when
/// `file` has such a section.
pub fn moved_fatbin(file: &crate::object::ObjectFile<'_>) -> Option<(u64, u64)> {
    file.sections().flatten().find_map(|section| match section {
        crate::object::Section::Elf(s)
            if s.name() == b".hip_fatbin" && section.is_uninitialized() =>
        {
            Some((s.header().addr, s.header().size))
        }
        _ => None,
    })
}
