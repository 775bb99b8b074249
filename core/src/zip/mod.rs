//! ZIP archives, as Python wheels are (PKWARE APPNOTE 6.3): the end of
//! central directory record (ZIP64's where the classic one's fields are
//! saturated), the central directory walked entry by entry, and each
//! member's bytes behind its local header, stored or deflated. Read in
//! place: listing allocates nothing; a member is decoded on request, into
//! memory bounded by its declared size and the caller's limit, its CRC-32
//! checked. Used to read wheels without unpacking them to disk.

use core::fmt;

use crate::bytes::to_u64;

#[cfg(feature = "alloc")]
mod crc32;
#[cfg(feature = "alloc")]
mod inflate;

#[cfg(feature = "alloc")]
use crc32::{crc32, Crc32};
#[cfg(feature = "alloc")]
use inflate::{inflate, inflate_each, WINDOW};

/// Why an archive, or one of its members, cannot be read; `offset` is the
/// file offset of the record or field at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipError {
    /// What is wrong.
    pub fault: ZipFault,
    /// Where.
    pub offset: u64,
}

/// What is wrong with a ZIP archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipFault {
    /// No end of central directory record in the last 64 KiB.
    NoEndRecord,
    /// A record runs past the end of the file.
    Truncated(&'static str),
    /// A record does not start with its signature.
    BadSignature(&'static str),
    /// The archive spans several disks.
    MultiDisk,
    /// A member is encrypted.
    Encrypted,
    /// A compression method other than stored (0) and deflate (8).
    UnsupportedMethod(u16),
    /// A member would decode to more than the limit allows.
    TooLarge {
        /// Its declared size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The deflate stream is damaged, or decodes to another size than the
    /// one declared.
    BadDeflate,
    /// The CRC-32 of the decoded bytes is not the one declared.
    BadCrc,
    /// A stored member whose stored size is not its size.
    SizeMismatch,
}

impl fmt::Display for ZipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fault {
            ZipFault::NoEndRecord => f.write_str("no ZIP end of central directory record"),
            ZipFault::Truncated(what) => write!(f, "ZIP {what} runs past the end of the file"),
            ZipFault::BadSignature(what) => write!(f, "ZIP {what} has a wrong signature"),
            ZipFault::MultiDisk => f.write_str("ZIP archive spans several disks"),
            ZipFault::Encrypted => f.write_str("ZIP member is encrypted"),
            ZipFault::UnsupportedMethod(m) => {
                write!(
                    f,
                    "ZIP member uses compression method {m} (stored and deflate are read)"
                )
            }
            ZipFault::TooLarge { size, limit } => {
                write!(
                    f,
                    "ZIP member of {size} bytes is over the {limit}-byte limit"
                )
            }
            ZipFault::BadDeflate => f.write_str("ZIP member's deflate stream is damaged"),
            ZipFault::BadCrc => f.write_str("ZIP member's CRC-32 does not match its bytes"),
            ZipFault::SizeMismatch => {
                f.write_str("stored ZIP member's stored size is not its size")
            }
        }?;
        write!(f, " (at offset {:#x})", self.offset)
    }
}

const END: u32 = 0x0605_4b50;
const END64: u32 = 0x0606_4b50;
const LOCATOR64: u32 = 0x0706_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

fn fail(fault: ZipFault, offset: usize) -> ZipError {
    ZipError {
        fault,
        offset: to_u64(offset),
    }
}

/// Little-endian fields of `data` read at fixed places, each checked.
struct Fields<'a> {
    data: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Fields<'a> {
    /// The record `what` of `len` bytes at `at`, its signature checked.
    fn record(
        data: &'a [u8],
        at: usize,
        len: usize,
        signature: u32,
        what: &'static str,
    ) -> Result<Self, ZipError> {
        let fields = Fields { data, at, what };
        fields.bytes(0, len)?;
        if fields.u32(0)? != signature {
            return Err(fail(ZipFault::BadSignature(what), at));
        }
        Ok(fields)
    }

    fn bytes(&self, offset: usize, len: usize) -> Result<&'a [u8], ZipError> {
        let start = self.at.checked_add(offset);
        start
            .and_then(|s| self.data.get(s..s.checked_add(len)?))
            .ok_or_else(|| fail(ZipFault::Truncated(self.what), self.at))
    }

    fn array<const N: usize>(&self, offset: usize) -> Result<[u8; N], ZipError> {
        let bytes = self.bytes(offset, N)?;
        <[u8; N]>::try_from(bytes).map_err(|_| fail(ZipFault::Truncated(self.what), self.at))
    }

    fn u16(&self, offset: usize) -> Result<u16, ZipError> {
        self.array(offset).map(u16::from_le_bytes)
    }

    fn u32(&self, offset: usize) -> Result<u32, ZipError> {
        self.array(offset).map(u32::from_le_bytes)
    }

    fn u64(&self, offset: usize) -> Result<u64, ZipError> {
        self.array(offset).map(u64::from_le_bytes)
    }
}

/// A ZIP archive over borrowed bytes.
#[derive(Debug, Clone, Copy)]
pub struct Zip<'data> {
    data: &'data [u8],
    /// Where the central directory starts, and how many entries it holds.
    directory: usize,
    count: u64,
}

impl<'data> Zip<'data> {
    /// Whether `data` starts as a ZIP archive does (a local header, or the
    /// end record of an empty archive).
    pub fn is_zip(data: &[u8]) -> bool {
        data.starts_with(&LOCAL.to_le_bytes()) || data.starts_with(&END.to_le_bytes())
    }

    /// Finds the end of central directory record (the last one in the final
    /// 64 KiB + 22 bytes) and, where its fields are saturated, ZIP64's.
    pub fn parse(data: &'data [u8]) -> Result<Self, ZipError> {
        let floor = data.len().saturating_sub(0xFFFF + 22);
        let end = (floor..=data.len().saturating_sub(22))
            .rev()
            .find(|&at| data.get(at..at.saturating_add(4)) == Some(&END.to_le_bytes()[..]))
            .ok_or_else(|| fail(ZipFault::NoEndRecord, data.len()))?;
        let record = Fields::record(data, end, 22, END, "end of central directory record")?;
        if record.u16(4)? != 0 || record.u16(6)? != 0 {
            return Err(fail(ZipFault::MultiDisk, end));
        }
        let (mut count, mut directory) = (u64::from(record.u16(10)?), u64::from(record.u32(16)?));
        if count == 0xFFFF || directory == 0xFFFF_FFFF {
            let locator = end
                .checked_sub(20)
                .ok_or_else(|| fail(ZipFault::Truncated("ZIP64 locator"), end))?;
            let locator = Fields::record(data, locator, 20, LOCATOR64, "ZIP64 locator")?;
            let at = usize::try_from(locator.u64(8)?).unwrap_or(usize::MAX);
            let end64 = Fields::record(data, at, 56, END64, "ZIP64 end record")?;
            count = end64.u64(32)?;
            directory = end64.u64(48)?;
        }
        let directory = usize::try_from(directory)
            .ok()
            .filter(|&d| d <= data.len())
            .ok_or_else(|| fail(ZipFault::Truncated("central directory"), end))?;
        Ok(Zip {
            data,
            directory,
            count,
        })
    }

    /// Every member, in central directory order; a damaged entry ends the
    /// walk with its error.
    pub fn members(&self) -> Members<'data> {
        Members {
            data: self.data,
            at: self.directory,
            left: self.count,
        }
    }
}

/// The members of a [`Zip`], from its central directory.
#[derive(Debug, Clone)]
pub struct Members<'data> {
    data: &'data [u8],
    at: usize,
    left: u64,
}

impl<'data> Iterator for Members<'data> {
    type Item = Result<Member<'data>, ZipError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left = self.left.saturating_sub(1);
        let result = self.entry();
        if result.is_err() {
            self.left = 0;
        }
        Some(result)
    }
}

impl<'data> Members<'data> {
    fn entry(&mut self) -> Result<Member<'data>, ZipError> {
        let entry = Fields::record(self.data, self.at, 46, CENTRAL, "central directory entry")?;
        let flags = entry.u16(8)?;
        let method = entry.u16(10)?;
        let crc = entry.u32(16)?;
        let (mut compressed, mut size) = (u64::from(entry.u32(20)?), u64::from(entry.u32(24)?));
        let name_len = usize::from(entry.u16(28)?);
        let extra_len = usize::from(entry.u16(30)?);
        let comment_len = usize::from(entry.u16(32)?);
        let mut local = u64::from(entry.u32(42)?);
        let name = entry.bytes(46, name_len)?;
        let extra = entry.bytes(name_len.saturating_add(46), extra_len)?;
        // ZIP64's extended information: the saturated fields, in order.
        let mut fields = zip64(extra);
        for value in [&mut size, &mut compressed, &mut local] {
            if *value == 0xFFFF_FFFF {
                *value = fields
                    .next()
                    .ok_or_else(|| fail(ZipFault::Truncated("ZIP64 extra field"), self.at))?;
            }
        }
        let at = self.at;
        self.at = self
            .at
            .saturating_add(46)
            .saturating_add(name_len)
            .saturating_add(extra_len)
            .saturating_add(comment_len);
        Ok(Member {
            data: self.data,
            name,
            entry: at,
            flags,
            method,
            crc,
            compressed,
            size,
            local,
        })
    }
}

/// The 8-byte values of the ZIP64 extended information field (id 1) in a
/// central directory entry's extra data.
fn zip64(mut extra: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut found: &[u8] = &[];
    while let [a, b, c, d, rest @ ..] = extra {
        let (id, len) = (
            u16::from_le_bytes([*a, *b]),
            usize::from(u16::from_le_bytes([*c, *d])),
        );
        let Some(body) = rest.get(..len) else { break };
        if id == 1 {
            found = body;
            break;
        }
        extra = rest.get(len..).unwrap_or_default();
    }
    found.chunks_exact(8).map(|c| {
        let mut b = [0; 8];
        b.copy_from_slice(c);
        u64::from_le_bytes(b)
    })
}

/// One member of a ZIP archive.
#[derive(Debug, Clone, Copy)]
pub struct Member<'data> {
    data: &'data [u8],
    /// Its name as stored (`/`-separated).
    pub name: &'data [u8],
    entry: usize,
    /// Its general-purpose flags (bit 0: encrypted, which this reader refuses).
    pub flags: u16,
    /// Its compression method (0 stored, 8 deflate).
    pub method: u16,
    /// Its CRC-32 as stored, checked against the decoded bytes.
    pub crc: u32,
    /// Its stored size.
    pub compressed: u64,
    /// Its size once decoded.
    pub size: u64,
    local: u64,
}

impl<'data> Member<'data> {
    /// Whether it is a directory (its name ends with `/`).
    pub fn is_dir(&self) -> bool {
        self.name.ends_with(b"/")
    }

    /// Its stored bytes, behind its local header.
    pub fn stored(&self) -> Result<&'data [u8], ZipError> {
        let at = usize::try_from(self.local).unwrap_or(usize::MAX);
        let header = Fields::record(self.data, at, 30, LOCAL, "local header")?;
        let skip = usize::from(header.u16(26)?)
            .saturating_add(usize::from(header.u16(28)?))
            .saturating_add(30);
        let len = usize::try_from(self.compressed).unwrap_or(usize::MAX);
        header.bytes(skip, len)
    }

    /// Its bytes: borrowed when stored, decoded when deflated, at most
    /// `limit` bytes; the CRC-32 checked either way.
    #[cfg(feature = "alloc")]
    pub fn contents(&self, limit: u64) -> Result<alloc::borrow::Cow<'data, [u8]>, ZipError> {
        self.contents_releasing(limit, &|_| {})
    }

    /// [`contents`](Self::contents), `done_with` told of each piece of the
    /// stored bytes as soon as the inflater has consumed it (a caller
    /// reading a mapped file lets those pages go while the member decodes).
    #[cfg(feature = "alloc")]
    pub fn contents_releasing(
        &self,
        limit: u64,
        done_with: &dyn Fn(&[u8]),
    ) -> Result<alloc::borrow::Cow<'data, [u8]>, ZipError> {
        use alloc::borrow::Cow;
        let here = |fault| ZipError {
            fault,
            offset: self.local,
        };
        self.check(limit).map_err(here)?;
        let stored = self.stored()?;
        let bytes = match self.method {
            0 => Cow::Borrowed(stored),
            _ => Cow::Owned(inflate(stored, self.size, done_with).map_err(here)?),
        };
        if crc32(&bytes) != self.crc {
            return Err(here(ZipFault::BadCrc));
        }
        Ok(bytes)
    }

    /// Its decoded bytes piece by piece, in order, without holding them:
    /// `sink` gets each piece (at most 1 MiB) and returns whether to go on;
    /// `done_with` is told of each piece of the stored bytes once consumed.
    /// When every byte went by, its size and CRC-32 are checked (a sink that
    /// stops early gets no check). Memory: a 1 MiB window, whatever the size.
    #[cfg(feature = "alloc")]
    pub fn each_piece(
        &self,
        limit: u64,
        done_with: &dyn Fn(&[u8]),
        sink: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), ZipError> {
        self.pieces(limit, true, done_with, sink)
    }

    /// [`each_piece`](Self::each_piece), the CRC-32 computed and checked
    /// only if `check` (a second pass over bytes the first checked).
    #[cfg(feature = "alloc")]
    pub(crate) fn pieces(
        &self,
        limit: u64,
        check: bool,
        done_with: &dyn Fn(&[u8]),
        sink: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), ZipError> {
        let here = |fault| ZipError {
            fault,
            offset: self.local,
        };
        self.check(limit).map_err(here)?;
        let stored = self.stored()?;
        let mut crc = Crc32::new();
        let mut check_each = |piece: &[u8]| {
            if check {
                crc.update(piece);
            }
            sink(piece)
        };
        let whole = match self.method {
            0 => stored.chunks(WINDOW).all(|piece| {
                let go = check_each(piece);
                done_with(piece);
                go
            }),
            _ => {
                inflate_each(stored, self.size, WINDOW, done_with, &mut check_each).map_err(here)?
            }
        };
        if check && whole && crc.value() != self.crc {
            return Err(here(ZipFault::BadCrc));
        }
        Ok(())
    }

    /// Whether this reader decodes the member within `limit`: not
    /// encrypted, stored (its two sizes one) or deflated, no larger.
    #[cfg(feature = "alloc")]
    fn check(&self, limit: u64) -> Result<(), ZipFault> {
        if self.flags & 1 != 0 {
            return Err(ZipFault::Encrypted);
        }
        if self.size > limit {
            return Err(ZipFault::TooLarge {
                size: self.size,
                limit,
            });
        }
        match self.method {
            // A stored member's two sizes are one.
            0 if self.compressed != self.size => Err(ZipFault::SizeMismatch),
            0 | 8 => Ok(()),
            other => Err(ZipFault::UnsupportedMethod(other)),
        }
    }

    /// The file offset of its central directory entry.
    pub fn entry_offset(&self) -> u64 {
        to_u64(self.entry)
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::vec::Vec;

    const WHEEL: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/coverage/sample-0.1-py3-none-linux_x86_64.whl"
    );

    fn fixture(path: &str) -> Vec<u8> {
        std::fs::read(std::format!(
            "{}/../tests/fixtures/{path}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn a_wheel_written_by_pythons_zipfile_reads_member_for_member() {
        let data = std::fs::read(WHEEL).unwrap();
        assert!(Zip::is_zip(&data));
        let zip = Zip::parse(&data).unwrap();
        let members: Vec<Member<'_>> = zip.members().map(Result::unwrap).collect();
        let names: Vec<&[u8]> = members.iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                &b"sample/__init__.py"[..],
                b"sample/lib/libxnack.so",
                b"sample/lib/clang-multi-ptx.o",
                b"sample/lib/libtwoz.so",
                b"sample-0.1.dist-info/",
                b"sample-0.1.dist-info/RECORD",
            ]
        );
        assert!(members[4].is_dir());
        // Deflated, stored, and deflated with ZIP64 fields.
        for (member, path) in [
            (1, "kpack/inputs/libxnack.so"),
            (2, "cuda/clang-multi-ptx.o"),
            (3, "kpack/inputs/libtwoz.so"),
        ] {
            let got = members[member].contents(1 << 20).unwrap();
            assert_eq!(&got[..], &fixture(path)[..], "{path}");
        }
        assert!(matches!(
            members[2].contents(1 << 20).unwrap(),
            alloc::borrow::Cow::Borrowed(_)
        ));
        let limit = members[1].contents(100).unwrap_err();
        assert_eq!(
            limit.fault,
            ZipFault::TooLarge {
                size: 28736,
                limit: 100
            }
        );
    }

    #[test]
    fn each_piece_gives_the_members_bytes_in_order() {
        let data = std::fs::read(WHEEL).unwrap();
        let zip = Zip::parse(&data).unwrap();
        for member in zip.members().map(Result::unwrap).filter(|m| !m.is_dir()) {
            let mut got = Vec::new();
            let mut pieces = 0usize;
            let done_with = |b: &[u8]| {
                let _ = b.len();
            };
            member
                .each_piece(1 << 20, &done_with, &mut |piece| {
                    got.extend_from_slice(piece);
                    pieces += 1;
                    true
                })
                .unwrap();
            assert_eq!(got, &member.contents(1 << 20).unwrap()[..]);
            // An empty member gives no piece.
            assert_eq!(pieces == 0, member.size == 0);
            if member.size == 0 {
                continue;
            }
            // A sink that stops early stops the decoding, with no check.
            let mut calls = 0;
            member
                .each_piece(1 << 20, &done_with, &mut |_| {
                    calls += 1;
                    false
                })
                .unwrap();
            assert_eq!(calls, 1);
            assert_eq!(
                member
                    .each_piece(10, &done_with, &mut |_| true)
                    .unwrap_err()
                    .fault,
                ZipFault::TooLarge {
                    size: member.size,
                    limit: 10
                }
            );
        }
    }

    #[test]
    fn inflating_through_a_window_wraps_it_many_times() {
        // 3 MiB that deflate well but not trivially, through a 32 KiB window.
        let plain: Vec<u8> = (0u32..3 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 & 0x0f)
            .collect();
        let stored = miniz_oxide::deflate::compress_to_vec(&plain, 6);
        let (mut got, mut pieces) = (Vec::new(), 0);
        let whole = inflate_each(&stored, plain.len() as u64, 32 << 10, &|_| {}, &mut |p| {
            assert!(p.len() <= 32 << 10);
            got.extend_from_slice(p);
            pieces += 1;
            true
        })
        .unwrap();
        assert!(whole && pieces > 90, "{pieces}");
        assert_eq!(got, plain);
        // A stream that decodes to more or fewer bytes than declared.
        let short = inflate_each(
            &stored,
            plain.len() as u64 - 1,
            32 << 10,
            &|_| {},
            &mut |_| true,
        );
        assert_eq!(short.unwrap_err(), ZipFault::BadDeflate);
        let long = inflate_each(
            &stored,
            plain.len() as u64 + 1,
            32 << 10,
            &|_| {},
            &mut |_| true,
        );
        assert_eq!(long.unwrap_err(), ZipFault::BadDeflate);
    }

    #[test]
    fn damage_is_located() {
        let data = std::fs::read(WHEEL).unwrap();
        assert_eq!(
            Zip::parse(&data[..1000]).unwrap_err().fault,
            ZipFault::NoEndRecord
        );
        // A flipped byte in the deflated library: its CRC or its stream.
        let zip = Zip::parse(&data).unwrap();
        let member = zip.members().nth(1).unwrap().unwrap();
        let stored = member.stored().unwrap();
        let at = stored.as_ptr() as usize - data.as_ptr() as usize + 100;
        let mut bad = data.clone();
        bad[at] ^= 0x55;
        let zip = Zip::parse(&bad).unwrap();
        let member = zip.members().nth(1).unwrap().unwrap();
        let fault = member.contents(1 << 20).unwrap_err().fault;
        assert!(
            matches!(fault, ZipFault::BadCrc | ZipFault::BadDeflate),
            "{fault:?}"
        );
        // A central directory cut short.
        let mut cut = data.clone();
        let end = cut.len() - 22;
        let directory = u32::from_le_bytes(cut[end + 16..end + 20].try_into().unwrap()) as usize;
        cut[directory] = 0;
        let zip = Zip::parse(&cut).unwrap();
        let error = zip.members().next().unwrap().unwrap_err();
        assert_eq!(
            error.fault,
            ZipFault::BadSignature("central directory entry")
        );
        assert_eq!(error.offset, directory as u64);
        assert_eq!(zip.members().count(), 1);
    }

    /// An end of central directory record: `count` entries, the directory
    /// at `directory`.
    fn end(count: u16, directory: u32) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend_from_slice(&END.to_le_bytes());
        e.extend_from_slice(&[0; 6]);
        e.extend_from_slice(&count.to_le_bytes());
        e.extend_from_slice(&[0; 4]);
        e.extend_from_slice(&directory.to_le_bytes());
        e.extend_from_slice(&[0; 2]);
        e
    }

    #[test]
    fn lying_counts_and_offsets_are_located_errors() {
        // A directory past the end of the file.
        let past = end(1, 1000);
        let error = Zip::parse(&past).unwrap_err();
        assert_eq!(error.fault, ZipFault::Truncated("central directory"));
        // A saturated count with no ZIP64 locator before it.
        let saturated = end(0xFFFF, 0);
        let error = Zip::parse(&saturated).unwrap_err();
        assert_eq!(error.fault, ZipFault::Truncated("ZIP64 locator"));
        // 65,534 entries claimed in a 22-byte file: one located error, then
        // the walk ends.
        let lying = end(0xFFFE, 0);
        let zip = Zip::parse(&lying).unwrap();
        let items: Vec<_> = zip.members().collect();
        assert_eq!(items.len(), 1);
        let error = items[0].unwrap_err();
        assert_eq!(error.fault, ZipFault::Truncated("central directory entry"));
        assert_eq!(error.offset, 0);
        // A ZIP64 end record counting 2^63 entries: the same.
        let mut zip64 = Vec::new();
        zip64.extend_from_slice(&END64.to_le_bytes());
        zip64.extend_from_slice(&[0; 28]);
        zip64.extend_from_slice(&(1u64 << 63).to_le_bytes());
        zip64.extend_from_slice(&[0; 8]);
        zip64.extend_from_slice(&0u64.to_le_bytes());
        zip64.extend_from_slice(&LOCATOR64.to_le_bytes());
        zip64.extend_from_slice(&[0; 4]);
        zip64.extend_from_slice(&0u64.to_le_bytes());
        zip64.extend_from_slice(&[0; 4]);
        zip64.extend_from_slice(&end(0xFFFF, 0xFFFF_FFFF));
        let zip = Zip::parse(&zip64).unwrap();
        assert_eq!(zip.members().count(), 1);
        assert!(zip.members().next().unwrap().is_err());
    }

    #[test]
    fn a_member_whose_data_lies_past_the_end_is_refused() {
        let data = std::fs::read(WHEEL).unwrap();
        let zip = Zip::parse(&data).unwrap();
        let member = zip.members().nth(1).unwrap().unwrap();
        let moved = Member {
            local: data.len() as u64 - 10,
            ..member
        };
        assert_eq!(
            moved.stored().unwrap_err().fault,
            ZipFault::Truncated("local header")
        );
        let long = Member {
            compressed: u64::MAX,
            ..member
        };
        assert_eq!(
            long.stored().unwrap_err().fault,
            ZipFault::Truncated("local header")
        );
        // A declared size the limit refuses, before anything is inflated.
        let bomb = Member {
            size: 1 << 40,
            ..member
        };
        assert!(matches!(
            bomb.contents(1 << 30).unwrap_err().fault,
            ZipFault::TooLarge { .. }
        ));
    }
}
