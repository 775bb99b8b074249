//! A kpack archive's table of contents, walked in place: the top-level map
//! once at parse (every type checked, positions kept), its arrays and maps
//! again by the iterators, with the same reading functions.

use super::{KpackFault, Scheme, MAX_FRAMES};
use crate::bytes::to_u64;
use crate::msgpack::{Fault, Reader, Value};
use crate::{Error, ErrorKind, Result};

/// The table's values, and where its arrays and maps start in it.
#[derive(Debug, Clone)]
pub(super) struct Toc<'data> {
    bytes: &'data [u8],
    /// File offset of `bytes`.
    base: u64,
    pub(super) format_version: Option<u64>,
    pub(super) group_name: Option<&'data [u8]>,
    pub(super) arch_family: Option<&'data [u8]>,
    pub(super) scheme: Scheme,
    arches: Items,
    toc: Items,
    pub(super) entry_count: u64,
    pub(super) blobs: Blobs,
}

/// `count` items of an array (or pairs of a map) from `at` in the table.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Items {
    at: usize,
    count: u64,
}

/// Where the code objects are placed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Blobs {
    /// `blobs`: one `{offset, size}` map per ordinal.
    Stored { blobs: Items },
    /// The zstd blob at `offset` of `size` bytes, `count` frames.
    Zstd { offset: u64, size: u64, count: u64 },
}

/// One entry of the table: a code object of binary `key` for `arch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'data> {
    /// `<kernel_name>#<index>`.
    pub key: &'data [u8],
    /// The architecture, as the runtime matches it (`gfx90a:xnack+`).
    pub arch: &'data [u8],
    /// Its place among the stored code objects.
    pub ordinal: u64,
    /// Its size decoded.
    pub original_size: u64,
    /// `type` (`hsaco`), if stated.
    pub kind: Option<&'data [u8]>,
    /// `metadata.target`, the bundle entry ID it came from, if stated.
    pub target: Option<&'data [u8]>,
    /// `metadata` as stored (one MessagePack map), if there.
    pub metadata: Option<&'data [u8]>,
    /// File offset of its map in the table (where its errors point).
    pub at: u64,
}

impl<'data> Entry<'data> {
    /// The ID it is listed and named under: the bundle entry ID it came
    /// from (`metadata.target`), or its architecture where the table does
    /// not say.
    pub fn id(&self) -> &'data [u8] {
        self.target.unwrap_or(self.arch)
    }
}

/// The top-level keys read, as found.
#[derive(Default)]
struct Found<'data> {
    format_version: Option<u64>,
    group_name: Option<&'data [u8]>,
    arch_family: Option<&'data [u8]>,
    arches: Option<Items>,
    toc: Option<(Items, u64)>,
    scheme: Option<(&'data [u8], usize)>,
    blobs: Option<Items>,
    zstd_offset: Option<(u64, usize)>,
    zstd_size: Option<(u64, usize)>,
}

impl<'data> Toc<'data> {
    /// Walks the table at file offset `base` of `archive`, to its end.
    pub(super) fn parse(archive: &'data [u8], bytes: &'data [u8], base: u64) -> Result<Self> {
        let mut walk = Walk {
            reader: Reader::new(bytes),
            base,
        };
        let pairs = walk.map("the table of contents")?;
        let mut found = Found::default();
        for _ in 0..pairs {
            let key = match walk.next()? {
                Value::Str(key) => key,
                _ => {
                    walk.skip()?;
                    continue;
                }
            };
            match key {
                b"format_version" => found.format_version = Some(walk.uint("format_version")?),
                b"group_name" => found.group_name = Some(walk.str("group_name")?),
                b"gfx_arch_family" => found.arch_family = Some(walk.str("gfx_arch_family")?),
                b"gfx_arches" => found.arches = Some(walk.arches()?),
                b"toc" => found.toc = Some(walk.toc()?),
                b"compression_scheme" => {
                    let at = walk.reader.position();
                    found.scheme = Some((walk.str("compression_scheme")?, at));
                }
                b"blobs" => found.blobs = Some(walk.blobs()?),
                b"zstd_offset" => {
                    let at = walk.reader.position();
                    found.zstd_offset = Some((walk.uint("zstd_offset")?, at));
                }
                b"zstd_size" => {
                    let at = walk.reader.position();
                    found.zstd_size = Some((walk.uint("zstd_size")?, at));
                }
                _ => walk.skip()?,
            }
        }
        walk.finish(found, archive, bytes)
    }

    /// `gfx_arches`, each a string (checked at parse).
    pub(super) fn arches(&self) -> Arches<'data> {
        Arches {
            reader: self.reader_at(self.arches.at),
            left: self.arches.count,
        }
    }

    /// Every entry, in table order.
    pub(super) fn entries(&self) -> Entries<'data> {
        Entries {
            walk: Walk {
                reader: self.reader_at(self.toc.at),
                base: self.base,
            },
            keys_left: self.toc.count,
            key: &[],
            arches_left: 0,
            failed: false,
        }
    }

    /// `blobs[entry.ordinal]` of `blobs` (this table's): offset and size.
    pub(super) fn blob(&self, blobs: Items, entry: &Entry<'_>) -> Result<(u64, u64)> {
        if entry.ordinal >= blobs.count {
            let fault = KpackFault::OrdinalOutOfRange {
                ordinal: entry.ordinal,
                count: blobs.count,
            };
            return Err(Error::new(ErrorKind::MalformedKpack { fault }, entry.at));
        }
        let mut walk = Walk {
            reader: self.reader_at(blobs.at),
            base: self.base,
        };
        for _ in 0..entry.ordinal {
            walk.skip()?;
        }
        walk.blob()
    }

    fn reader_at(&self, at: usize) -> Reader<'data> {
        Reader::at(self.bytes, at)
    }
}

/// `gfx_arches`, one string at a time.
#[derive(Debug, Clone)]
pub struct Arches<'data> {
    reader: Reader<'data>,
    left: u64,
}

impl<'data> Iterator for Arches<'data> {
    type Item = &'data [u8];

    fn next(&mut self) -> Option<&'data [u8]> {
        self.left = self.left.checked_sub(1)?;
        match self.reader.next() {
            Ok(Value::Str(arch)) => Some(arch),
            _ => {
                self.left = 0;
                None
            }
        }
    }
}

/// Every entry of the table, in its order.
#[derive(Debug, Clone)]
pub struct Entries<'data> {
    walk: Walk<'data>,
    keys_left: u64,
    key: &'data [u8],
    arches_left: u64,
    failed: bool,
}

impl<'data> Iterator for Entries<'data> {
    type Item = Result<Entry<'data>>;

    fn next(&mut self) -> Option<Result<Entry<'data>>> {
        if self.failed {
            return None;
        }
        let next = self.step().transpose();
        self.failed = matches!(next, Some(Err(_)));
        next
    }
}

impl<'data> Entries<'data> {
    fn step(&mut self) -> Result<Option<Entry<'data>>> {
        while self.arches_left == 0 {
            let Some(left) = self.keys_left.checked_sub(1) else {
                return Ok(None);
            };
            self.keys_left = left;
            self.key = self.walk.str("a binary key")?;
            self.arches_left = self.walk.map("a binary's architectures")?;
        }
        self.arches_left = self.arches_left.saturating_sub(1);
        let arch = self.walk.str("an architecture")?;
        self.walk.entry(self.key, arch).map(Some)
    }
}

/// A cursor in the table that reads values of the types the runtime
/// expects, with errors at file offsets.
#[derive(Debug, Clone)]
struct Walk<'data> {
    reader: Reader<'data>,
    base: u64,
}

impl<'data> Walk<'data> {
    fn here(&self) -> u64 {
        self.base.saturating_add(to_u64(self.reader.position()))
    }

    fn fail(&self, fault: KpackFault) -> Error {
        Error::new(ErrorKind::MalformedKpack { fault }, self.here())
    }

    fn next(&mut self) -> Result<Value<'data>> {
        self.reader
            .next()
            .map_err(|fault| self.fail(msgpack_fault(fault)))
    }

    fn skip(&mut self) -> Result<()> {
        self.reader
            .skip()
            .map_err(|fault| self.fail(msgpack_fault(fault)))
    }

    /// The next value, which must be what `expected` says.
    fn typed<T>(
        &mut self,
        what: &'static str,
        expected: &'static str,
        take: impl FnOnce(Value<'data>) -> Option<T>,
    ) -> Result<T> {
        let at = self.reader.clone();
        let value = self.next()?;
        take(value).ok_or_else(|| {
            self.reader = at;
            self.fail(KpackFault::WrongType { what, expected })
        })
    }

    fn uint(&mut self, what: &'static str) -> Result<u64> {
        self.typed(what, "an unsigned integer", |v| match v {
            Value::Uint(n) => Some(n),
            _ => None,
        })
    }

    fn str(&mut self, what: &'static str) -> Result<&'data [u8]> {
        self.typed(what, "a string", |v| match v {
            Value::Str(s) => Some(s),
            _ => None,
        })
    }

    /// A map's pair count.
    fn map(&mut self, what: &'static str) -> Result<u64> {
        self.typed(what, "a map", |v| match v {
            Value::Map(n) => Some(n),
            _ => None,
        })
    }

    fn array(&mut self, what: &'static str) -> Result<Items> {
        let count = self.typed(what, "an array", |v| match v {
            Value::Array(n) => Some(n),
            _ => None,
        })?;
        Ok(Items {
            at: self.reader.position(),
            count,
        })
    }

    /// `gfx_arches`: an array of strings.
    fn arches(&mut self) -> Result<Items> {
        let items = self.array("gfx_arches")?;
        for _ in 0..items.count {
            self.str("an architecture of gfx_arches")?;
        }
        Ok(items)
    }

    /// `toc`: every entry read once; its pairs and how many entries.
    fn toc(&mut self) -> Result<(Items, u64)> {
        let count = self.map("toc")?;
        let items = Items {
            at: self.reader.position(),
            count,
        };
        let mut entries = Entries {
            walk: self.clone(),
            keys_left: count,
            key: &[],
            arches_left: 0,
            failed: false,
        };
        let mut total = 0u64;
        while entries.step()?.is_some() {
            total = total.saturating_add(1);
        }
        self.reader = entries.walk.reader;
        Ok((items, total))
    }

    /// An entry's map: `ordinal` and `original_size` (required), `type`
    /// and `metadata.target` if there.
    fn entry(&mut self, key: &'data [u8], arch: &'data [u8]) -> Result<Entry<'data>> {
        let at = self.here();
        let pairs = self.map("an entry")?;
        let (mut ordinal, mut original_size, mut kind, mut target) = (None, None, None, None);
        let mut metadata = None;
        for _ in 0..pairs {
            match self.next()? {
                Value::Str(b"ordinal") => ordinal = Some(self.uint("ordinal")?),
                Value::Str(b"original_size") => original_size = Some(self.uint("original_size")?),
                Value::Str(b"type") => kind = Some(self.str("type")?),
                Value::Str(b"metadata") => {
                    let (start, rest) = (self.reader.position(), self.reader.rest());
                    target = self.metadata()?;
                    let len = self.reader.position().saturating_sub(start);
                    metadata = rest.get(..len);
                }
                _ => self.skip()?,
            }
        }
        let missing = |what| {
            Error::new(
                ErrorKind::MalformedKpack {
                    fault: KpackFault::Missing { what },
                },
                at,
            )
        };
        Ok(Entry {
            key,
            arch,
            ordinal: ordinal.ok_or_else(|| missing("ordinal"))?,
            original_size: original_size.ok_or_else(|| missing("original_size"))?,
            kind,
            target,
            metadata,
            at,
        })
    }

    /// An entry's `metadata` map: its `target`, if a string.
    fn metadata(&mut self) -> Result<Option<&'data [u8]>> {
        let pairs = self.map("metadata")?;
        let mut target = None;
        for _ in 0..pairs {
            match self.next()? {
                Value::Str(b"target") => target = Some(self.str("metadata.target")?),
                _ => self.skip()?,
            }
        }
        Ok(target)
    }

    /// `blobs`: an array of `{offset, size}` maps, each checked.
    fn blobs(&mut self) -> Result<Items> {
        let items = self.array("blobs")?;
        for _ in 0..items.count {
            self.blob()?;
        }
        Ok(items)
    }

    /// One `{offset, size}` map.
    fn blob(&mut self) -> Result<(u64, u64)> {
        let at = self.here();
        let pairs = self.map("a blob")?;
        let (mut offset, mut size) = (None, None);
        for _ in 0..pairs {
            match self.next()? {
                Value::Str(b"offset") => offset = Some(self.uint("a blob's offset")?),
                Value::Str(b"size") => size = Some(self.uint("a blob's size")?),
                _ => self.skip()?,
            }
        }
        let missing = |what| {
            Error::new(
                ErrorKind::MalformedKpack {
                    fault: KpackFault::Missing { what },
                },
                at,
            )
        };
        Ok((
            offset.ok_or_else(|| missing("a blob's offset"))?,
            size.ok_or_else(|| missing("a blob's size"))?,
        ))
    }

    /// The table once its map is read: the scheme and what it needs.
    fn finish(self, found: Found<'data>, archive: &[u8], bytes: &'data [u8]) -> Result<Toc<'data>> {
        let at = |position: usize| self.base.saturating_add(to_u64(position));
        let fail = |fault, position| Error::new(ErrorKind::MalformedKpack { fault }, at(position));
        let scheme = match found.scheme {
            None | Some((b"none", _)) => Scheme::Stored,
            Some((b"zstd-per-kernel", _)) => Scheme::ZstdPerKernel,
            Some((_, position)) => return Err(fail(KpackFault::UnknownScheme, position)),
        };
        let (toc, entry_count) = found.toc.unwrap_or_default();
        let blobs = match scheme {
            Scheme::Stored => Blobs::Stored {
                blobs: found.blobs.unwrap_or_default(),
            },
            Scheme::ZstdPerKernel => {
                let missing = |what| fail(KpackFault::Missing { what }, 0);
                let (offset, _) = found.zstd_offset.ok_or_else(|| missing("zstd_offset"))?;
                let (size, _) = found.zstd_size.ok_or_else(|| missing("zstd_size"))?;
                Blobs::Zstd {
                    offset,
                    size,
                    count: frame_count(archive, offset, size)?,
                }
            }
        };
        Ok(Toc {
            bytes,
            base: self.base,
            format_version: found.format_version,
            group_name: found.group_name,
            arch_family: found.arch_family,
            scheme,
            arches: found.arches.unwrap_or_default(),
            toc,
            entry_count,
            blobs,
        })
    }
}

/// The frame count at the start of the zstd blob at `offset` of `size`
/// bytes in `archive`: the blob within the archive, the count no more than
/// the runtime accepts ([`MAX_FRAMES`]) or than the blob can hold (4 bytes
/// of size each, after the 4-byte count).
fn frame_count(archive: &[u8], offset: u64, size: u64) -> Result<u64> {
    let len = to_u64(archive.len());
    let out_of_bounds = Error::out_of_bounds(crate::Field::KpackFrames, offset, size, len, offset);
    crate::bytes::range(archive, offset, size).ok_or(out_of_bounds)?;
    let count = crate::bytes::range(archive, offset, 4)
        .filter(|_| size >= 4)
        .and_then(|b| b.try_into().ok())
        .map(|b: [u8; 4]| u64::from(u32::from_le_bytes(b)))
        .ok_or(out_of_bounds)?;
    if count > MAX_FRAMES || count > size.saturating_sub(4) / 4 {
        let fault = KpackFault::TooManyFrames { count };
        return Err(Error::new(ErrorKind::MalformedKpack { fault }, offset));
    }
    Ok(count)
}

pub(super) fn msgpack_fault(fault: Fault) -> KpackFault {
    match fault {
        Fault::Truncated => KpackFault::Truncated,
        Fault::Reserved => KpackFault::ReservedByte,
        Fault::TooDeep => KpackFault::TooDeep,
    }
}
