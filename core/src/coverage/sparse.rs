//! A large ELF64 file read for coverage holding only what coverage reads
//! of it, from a deflated wheel member (two passes over its stream) or a
//! file on disk (read range by range): [`SparseElf`] asks for bytes and
//! builds the image, the caller reads.
//!
//! It first asks for the ELF header and the section header table, then
//! fills an image of the file's size, zero everywhere (pages never written
//! take no memory), with the program headers, the section table, every
//! section but the large `SHT_PROGBITS` ones (code, data), and of a large
//! `SHT_PROGBITS` section: all of it if it starts a bundle, a compressed
//! bundle or an OffloadBinary; if it starts CUDA fat binaries (`.nv_fatbin`,
//! `__nv_relfatbin`), each fat binary's header and each entry's header with
//! the first 4 KiB of its payload (all of it for entries neither cubin nor
//! PTX); 64 KiB where such a walk stops making sense (what a reader's error
//! would come from), and nothing more. The offload readers read nothing else
//! of a file so made; the tests hold the image's coverage to the whole
//! file's.

use alloc::vec::Vec;
use core::ops::Range;

use crate::container::Extent;
use crate::cuda_fatbin::{EntryKind, ENTRY_HEADER_SIZE, FATBIN_HEADER_SIZE, FATBIN_MAGIC_BYTES};
use crate::elf::{SHT_NOBITS, SHT_PROGBITS};
use crate::zip::{Member, ZipError};
use crate::FileKind;

/// What the image keeps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Policy {
    /// A `SHT_PROGBITS` section larger than this is code or data unless its
    /// first bytes start a container.
    pub(super) large: u64,
    /// What is kept of a cubin's or a PTX entry's payload: its start.
    pub(super) payload_kept: u64,
}

impl Policy {
    /// 1 MiB sections, 4 KiB of each payload.
    pub(super) const DEFAULT: Policy = Policy {
        large: 1 << 20,
        payload_kept: 4 << 10,
    };
}

/// The most sections a file read sparsely may have (shared libraries have
/// a few dozen).
const MAX_SECTIONS: usize = 4096;

/// How many zero bytes a step looks through at once.
const ZEROS_SCANNED: u64 = 64 << 10;

/// What is kept where fat binaries stop making sense: the readers stop
/// there too, with an error read from the header at that place.
const DAMAGE_KEPT: u64 = 64 << 10;

/// The image of a large ELF64 little-endian file, built from the bytes it
/// asks for: [`SparseElf::missing`] says which, [`SparseElf::give`] takes
/// them (in file order, as a stream gives them, or each piece at the start
/// of what `missing` asked for), [`SparseElf::image`] is the result.
pub struct SparseElf {
    size: u64,
    policy: Policy,
    phase: Phase,
    /// The ELF header, as given.
    head: [u8; 64],
    /// The image, once the section table says what to keep (taken only
    /// then: a stream has proved its size by the end of its first pass).
    image: Vec<u8>,
}

/// Where the reading is.
enum Phase {
    /// The ELF header: 64 bytes at 0, the first `given` of them given.
    Header { given: u64 },
    /// The section header table.
    Table {
        range: Range<u64>,
        headers_end: u64,
        bytes: Vec<u8>,
    },
    /// The sections, each as its keeper keeps it.
    Sections(Vec<Keeper>),
    /// No ELF64 little-endian file whose section table lies inside it.
    Refused,
}

impl SparseElf {
    /// Reads a file of `size` bytes, keeping 4 KiB of each cubin, PTX or
    /// bundle entry payload and walking every `SHT_PROGBITS` section over
    /// 1 MiB. The image (`size` bytes of zero pages) is taken once the
    /// section table is read; without the memory for it the file is
    /// refused (read it whole, or not at all).
    pub fn new(size: u64) -> SparseElf {
        SparseElf::with_policy(size, Policy::DEFAULT)
    }

    /// [`SparseElf::new`] walking every `SHT_PROGBITS` section and keeping
    /// no payload: the reading on inputs as small as a fuzzer's.
    #[doc(hidden)]
    pub fn sparsest(size: u64) -> SparseElf {
        SparseElf::with_policy(
            size,
            Policy {
                large: 0,
                payload_kept: 0,
            },
        )
    }

    pub(super) fn with_policy(size: u64, policy: Policy) -> SparseElf {
        SparseElf {
            size,
            policy,
            phase: Phase::Header { given: 0 },
            head: [0; 64],
            image: Vec::new(),
        }
    }

    /// The bytes to give next, `None` once the image is made (or refused).
    /// Give them from the start of the range, as much of it as suits.
    pub fn missing(&self) -> Option<Range<u64>> {
        match &self.phase {
            Phase::Header { given } => Some(*given..64u64.min(self.size)).filter(|r| !r.is_empty()),
            Phase::Table { range, bytes, .. } => {
                let given = range
                    .start
                    .saturating_add(crate::bytes::to_u64(bytes.len()));
                Some(given..range.end).filter(|r| !r.is_empty())
            }
            Phase::Sections(keepers) => keepers
                .iter()
                .map(Keeper::missing)
                .filter(|r| !r.is_empty())
                .min_by_key(|r| r.start),
            Phase::Refused => None,
        }
    }

    /// Gives every range it misses, read by `read` (fill the buffer from
    /// the offset, say how many bytes: `None` or 0 for a failed read) a
    /// piece of at most 1 MiB at a time. Whether every range was read.
    pub fn read_with(&mut self, read: &mut dyn FnMut(u64, &mut [u8]) -> Option<usize>) -> bool {
        let mut buffer = alloc::vec![0u8; 1 << 20];
        while let Some(range) = self.missing() {
            let len = range.end.saturating_sub(range.start);
            let want = usize::try_from(len).map_or(buffer.len(), |n| n.min(buffer.len()));
            let piece = buffer.get_mut(..want).unwrap_or_default();
            match read(range.start, piece).and_then(|n| piece.get(..n)) {
                Some(bytes) if !bytes.is_empty() => self.give(range.start, bytes),
                _ => return false,
            }
        }
        true
    }

    /// Whether it still reads the headers (the first pass over a stream).
    pub fn reads_headers(&self) -> bool {
        matches!(self.phase, Phase::Header { .. } | Phase::Table { .. })
    }

    /// Takes `piece`, the file's bytes from `at`.
    pub fn give(&mut self, at: u64, piece: &[u8]) {
        let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
        match &mut self.phase {
            Phase::Header { given } => {
                let Some((from, to)) = overlap(at, piece, &(*given..64)) else {
                    return;
                };
                if to != *given {
                    return;
                }
                let start = usize::try_from(to).unwrap_or(usize::MAX);
                if let Some(out) = self.head.get_mut(start..start.saturating_add(from.len())) {
                    out.copy_from_slice(from);
                }
                *given = end.min(64);
                if *given == 64 || *given == self.size {
                    self.phase = self.after_header();
                    self.give(at, piece);
                }
            }
            Phase::Table { range, bytes, .. } => {
                let first = range
                    .start
                    .saturating_add(crate::bytes::to_u64(bytes.len()));
                let wanted = first..range.end;
                match overlap(at, piece, &wanted) {
                    Some((from, to)) if to == first => bytes.extend_from_slice(from),
                    _ => return,
                }
                if crate::bytes::to_u64(bytes.len()) == range.end.saturating_sub(range.start) {
                    self.phase = self.sections();
                }
            }
            Phase::Sections(keepers) => {
                for keeper in keepers {
                    keeper.take(at, piece, &mut self.image);
                }
            }
            Phase::Refused => {}
        }
    }

    /// The image, once every byte asked for was given; `None` if the file
    /// is no ELF64 little-endian file with its section table inside it.
    pub fn image(self) -> Option<Vec<u8>> {
        match self.phase {
            Phase::Sections(_) => Some(self.image),
            _ => None,
        }
    }

    /// Where the section table lies, from the ELF header.
    fn after_header(&self) -> Phase {
        let head = self.head.as_slice();
        let Some(range) = table_range(head, self.size) else {
            return Phase::Refused;
        };
        let (phoff, phentsize, phnum) = (
            u64_at(head, 32),
            u64::from(u16_at(head, 54)),
            u64::from(u16_at(head, 56)),
        );
        let headers_end = phoff
            .saturating_add(phentsize.saturating_mul(phnum))
            .clamp(64, self.size);
        let mut bytes = Vec::new();
        let len = usize::try_from(range.end.saturating_sub(range.start)).unwrap_or(usize::MAX);
        if bytes.try_reserve_exact(len).is_err() {
            return Phase::Refused;
        }
        Phase::Table {
            range,
            headers_end,
            bytes,
        }
    }

    /// What each section keeps, from the section table.
    fn sections(&mut self) -> Phase {
        let Phase::Table {
            range,
            headers_end,
            bytes,
        } = core::mem::replace(&mut self.phase, Phase::Refused)
        else {
            return Phase::Refused;
        };
        // Each section is a keeper that a range-by-range reading scans for
        // every range: a crafted table of 65,535 sections would make that
        // quadratic. Files with that many are read whole.
        if bytes.len() / 64 > MAX_SECTIONS {
            return Phase::Refused;
        }
        // Zero pages from the system: only what is written takes memory.
        let Ok(image) = crate::bytes::zeroed(self.size) else {
            return Phase::Refused;
        };
        self.image = image;
        let mut keepers = alloc::vec![Keeper::whole(0..headers_end), Keeper::whole(range)];
        for h in bytes.chunks_exact(64) {
            let (kind, offset, len) = (u32_at(h, 4), u64_at(h, 24), u64_at(h, 32));
            let Some(end) = offset.checked_add(len).filter(|&e| e <= self.size) else {
                continue;
            };
            if kind == SHT_NOBITS || len == 0 {
                continue;
            }
            keepers.push(if kind == SHT_PROGBITS && len > self.policy.large {
                Keeper {
                    end,
                    payload_kept: self.policy.payload_kept,
                    step: Step::Probe(offset),
                    given: 0,
                }
            } else {
                Keeper::whole(offset..end)
            });
        }
        Phase::Sections(keepers)
    }
}

/// The image of `member` (an ELF64 little-endian file) holding what the
/// offload readers read, or `None` if it is no such file or its headers do
/// not say where its sections are (the caller then decodes it whole): two
/// passes over its stream, the first for the headers (its CRC-32 checked),
/// the second for the rest.
pub(super) fn sparse_image(
    member: &Member<'_>,
    limit: u64,
    done_with: &dyn Fn(&[u8]),
    policy: Policy,
) -> Result<Option<Vec<u8>>, ZipError> {
    let mut sparse = SparseElf::with_policy(member.size, policy);
    let mut at = 0u64;
    member.each_piece(limit, done_with, &mut |piece| {
        if sparse.reads_headers() {
            sparse.give(at, piece);
        }
        at = at.saturating_add(crate::bytes::to_u64(piece.len()));
        !matches!(sparse.phase, Phase::Refused)
    })?;
    if !matches!(sparse.phase, Phase::Sections(_)) {
        return Ok(None);
    }
    at = 0;
    // The first pass checked the CRC-32 of these same bytes.
    member.pieces(limit, false, done_with, &mut |piece| {
        sparse.give(at, piece);
        at = at.saturating_add(crate::bytes::to_u64(piece.len()));
        true
    })?;
    Ok(sparse.image())
}

/// Where the section header table of an ELF64 little-endian header lies,
/// if inside a file of `size` bytes with entries of 64 bytes.
fn table_range(head: &[u8], size: u64) -> Option<Range<u64>> {
    if !head.starts_with(crate::elf::ELF_MAGIC) || head.get(4..6) != Some(&[2, 1][..]) {
        return None;
    }
    let (shoff, entsize, count) = (u64_at(head, 40), u16_at(head, 58), u16_at(head, 60));
    let end = shoff.checked_add(u64::from(count).checked_mul(64)?)?;
    (entsize == 64 && count > 0 && shoff > 0 && end <= size).then_some(shoff..end)
}

/// What one region of the file keeps, step by step as its bytes are given.
struct Keeper {
    /// Where the region ends.
    end: u64,
    /// What is kept of a cubin's or a PTX entry's payload.
    payload_kept: u64,
    step: Step,
    /// How far the current step's bytes have been given, from its start.
    given: u64,
}

/// The bytes a keeper waits for next: copied into the image, then (for a
/// probe or a header) read from it to choose the next step.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// All of the region from here.
    Whole(u64),
    /// A large section's first bytes, to learn what it holds.
    Probe(u64),
    /// A fat binary's header (or the zero padding before one) here.
    Fatbin(u64),
    /// Zero bytes from here, up to the first that is not (then a probe or a
    /// fat binary header, as `probe` says).
    Zeros { at: u64, probe: bool },
    /// An entry's fixed header here, in a fat binary whose entries end there.
    Entry { at: u64, end: u64 },
    /// An entry's header extension and payload start, then the next entry.
    Kept {
        bytes: Range<u64>,
        next: u64,
        end: u64,
    },
    /// A bundle, compressed bundle or OffloadBinary here, this much of its
    /// header wanted to learn its extent.
    Extent { at: u64, need: u64 },
    /// The payload starts of a bundle's entries, in turn, then what follows
    /// the bundle.
    Payloads { ranges: Vec<Range<u64>>, next: u64 },
    /// A container kept whole, then what follows it.
    Container { bytes: Range<u64>, next: u64 },
    /// Where the fat binaries stop making sense (damage, or a large section
    /// that starts none): the bytes the readers' error would come from.
    Damaged(u64),
    /// Nothing more.
    Done,
}

impl Keeper {
    fn whole(range: Range<u64>) -> Keeper {
        Keeper {
            end: range.end,
            payload_kept: 0,
            step: Step::Whole(range.start),
            given: 0,
        }
    }

    /// The bytes the current step waits for.
    fn wanted(&self) -> Range<u64> {
        let cut = |start: u64, len: u64| start..start.saturating_add(len).min(self.end);
        match self.step {
            Step::Whole(from) => from..self.end,
            Step::Probe(at) => cut(at, 24),
            Step::Fatbin(at) => cut(at, FATBIN_HEADER_SIZE),
            Step::Zeros { at, .. } => cut(at, ZEROS_SCANNED),
            // Past the fat binary's entries: nothing to read.
            Step::Entry { at, end } if at >= end => at..at,
            Step::Entry { at, .. } => cut(at, ENTRY_HEADER_SIZE),
            Step::Kept { ref bytes, .. } | Step::Container { ref bytes, .. } => bytes.clone(),
            Step::Extent { at, need } => cut(at, need),
            Step::Payloads { ref ranges, next } => ranges.first().cloned().unwrap_or(next..next),
            Step::Damaged(at) => cut(at, DAMAGE_KEPT),
            Step::Done => self.end..self.end,
        }
    }

    /// The bytes it still waits for: its step's, less those given.
    fn missing(&self) -> Range<u64> {
        let wanted = self.wanted();
        wanted.start.max(self.given).min(wanted.end)..wanted.end
    }

    /// Takes what it wants of `piece` (the file's bytes from `at`), and
    /// every step whose bytes are then all given. A piece that starts after
    /// the first byte it waits for gives it nothing: pieces come in file
    /// order (a stream), or each at the first byte some keeper waits for.
    fn take(&mut self, at: u64, piece: &[u8], image: &mut [u8]) {
        let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
        while self.step != Step::Done {
            let missing = self.missing();
            if missing.is_empty() {
                // Every byte of the step is in the image already.
                self.step = self.next(&self.wanted(), image);
                continue;
            }
            if missing.start < at || missing.start > end {
                return;
            }
            // The image is zero already: zero bytes are not written, so
            // that their pages take no memory.
            if let Some((from, to)) =
                overlap(at, piece, &missing).filter(|(f, _)| f.iter().any(|&b| b != 0))
            {
                let to = usize::try_from(to).unwrap_or(usize::MAX);
                if let Some(out) = image.get_mut(to..to.saturating_add(from.len())) {
                    out.copy_from_slice(from);
                }
            }
            self.given = missing.end.min(end);
            if self.given < missing.end {
                return;
            }
            self.step = self.next(&self.wanted(), image);
            // The next step's bytes before this piece were given with the
            // step before (they start no earlier than its bytes did).
            self.given = at;
        }
    }

    /// The step after the current one, whose bytes `wanted` are in `image`.
    fn next(&self, wanted: &Range<u64>, image: &[u8]) -> Step {
        let bytes =
            crate::bytes::range(image, wanted.start, wanted.end.saturating_sub(wanted.start))
                .unwrap_or_default();
        match self.step {
            Step::Whole(_) | Step::Damaged(_) | Step::Done => Step::Done,
            Step::Probe(at) => self.header(at, bytes, true),
            Step::Fatbin(at) => self.header(at, bytes, false),
            Step::Zeros { at, probe } => {
                let zeros = crate::bytes::to_u64(bytes.iter().take_while(|&&b| b == 0).count());
                let next = at.saturating_add(zeros);
                match (
                    next >= self.end,
                    zeros == crate::bytes::to_u64(bytes.len()),
                    probe,
                ) {
                    (true, ..) => Step::Done,
                    (false, true, _) => Step::Zeros { at: next, probe },
                    (false, false, true) => Step::Probe(next),
                    (false, false, false) => Step::Fatbin(next),
                }
            }
            Step::Entry { at, end } => self.entry(at, end, bytes),
            Step::Kept { next, end, .. } => Step::Entry { at: next, end },
            Step::Extent { at, .. } => self.extent(at, bytes, image),
            Step::Payloads { ref ranges, next } => match ranges.get(1..) {
                Some(rest) if !rest.is_empty() => Step::Payloads {
                    ranges: rest.to_vec(),
                    next,
                },
                _ => self.probe_at(next),
            },
            Step::Container { next, .. } => self.probe_at(next),
        }
    }

    /// After the first bytes at `at` of a large section (`probe`) or of the
    /// place a fat binary may start: zero padding is skipped as the readers
    /// skip it; a section that starts no container keeps the bytes the
    /// readers would read of it if it were named as one.
    fn header(&self, at: u64, bytes: &[u8], probe: bool) -> Step {
        let zeros = bytes.iter().take_while(|&&b| b == 0).count();
        if zeros > 0 {
            let next = at.saturating_add(crate::bytes::to_u64(zeros));
            return match (next >= self.end, zeros == bytes.len(), probe) {
                (true, ..) => Step::Done,
                (false, true, _) => Step::Zeros { at: next, probe },
                (false, false, true) => Step::Probe(next),
                (false, false, false) => Step::Fatbin(next),
            };
        }
        if probe {
            match FileKind::detect(bytes) {
                FileKind::CudaFatbin => {}
                FileKind::Bundle | FileKind::CompressedBundle | FileKind::OffloadBinary => {
                    return Step::Extent { at, need: 32 }
                }
                _ => return Step::Damaged(at),
            }
        }
        self.fatbin(at, bytes)
    }

    /// A probe for the next container at `at`, or nothing at the end.
    fn probe_at(&self, at: u64) -> Step {
        if at >= self.end {
            Step::Done
        } else {
            Step::Probe(at)
        }
    }

    /// After `bytes` of the header of a bundle, compressed bundle or
    /// OffloadBinary at `at`: more of it, or what to keep of it. A bundle
    /// keeps its header and entry table and the start of each payload; the
    /// others are kept whole (a compressed bundle is small already).
    fn extent(&self, at: u64, bytes: &[u8], image: &[u8]) -> Step {
        let len = match crate::container::declared_extent(bytes) {
            Ok(Extent::Known(len)) => len,
            Ok(Extent::NeedAtLeast(need)) if need > crate::bytes::to_u64(bytes.len()) => {
                return Step::Extent { at, need };
            }
            Ok(Extent::Unknown) => return Step::Whole(at),
            _ => return Step::Damaged(at),
        };
        let Some(next) = at.checked_add(len).filter(|&n| n <= self.end) else {
            return Step::Damaged(at);
        };
        if !crate::Bundle::is_bundle(bytes) {
            return Step::Container {
                bytes: at..next,
                next,
            };
        }
        let mut ranges: Vec<Range<u64>> = Vec::new();
        // Header and entry table: what the extent was read from.
        ranges.push(at..at.saturating_add(crate::bytes::to_u64(bytes.len())));
        // The bundle as long as it is (its payloads not read: zero), to
        // read its entry table, which lies in `bytes`.
        let bundle = crate::bytes::range(image, at, len).and_then(|b| crate::Bundle::parse(b).ok());
        for entry in bundle.iter().flat_map(crate::Bundle::entries).flatten() {
            let start = at.saturating_add(entry.offset());
            let kept = crate::bytes::to_u64(entry.payload().len()).min(self.payload_kept);
            if kept > 0 {
                ranges.push(start..start.saturating_add(kept));
            }
        }
        ranges.sort_by_key(|r| r.start);
        Step::Payloads { ranges, next }
    }

    /// A fat binary's header at `at`.
    fn fatbin(&self, at: u64, bytes: &[u8]) -> Step {
        if bytes.len() < 16 {
            return Step::Damaged(at);
        }
        let header = u64::from(u16_at(bytes, 6));
        let fat = u64_at(bytes, 8);
        match at
            .checked_add(header)
            .zip(at.checked_add(header).and_then(|s| s.checked_add(fat)))
        {
            Some((start, end))
                if bytes.starts_with(FATBIN_MAGIC_BYTES)
                    && header == FATBIN_HEADER_SIZE
                    && end <= self.end =>
            {
                Step::Entry { at: start, end }
            }
            _ => Step::Damaged(at),
        }
    }

    /// After an entry's fixed header at `at`, in a fat binary whose entries
    /// end at `end`.
    fn entry(&self, at: u64, end: u64, bytes: &[u8]) -> Step {
        if at >= end {
            return Step::Fatbin(end);
        }
        if bytes.len() < 16 {
            return Step::Damaged(at);
        }
        let kind = EntryKind::from_raw(u16_at(bytes, 0));
        let header = u64::from(u32_at(bytes, 4));
        let payload = u64_at(bytes, 8);
        let kept = match kind {
            EntryKind::Elf | EntryKind::Ptx => payload.min(self.payload_kept),
            _ => payload,
        };
        let next = at.checked_add(header).and_then(|p| p.checked_add(payload));
        match next {
            Some(next) if header >= ENTRY_HEADER_SIZE && next <= end => Step::Kept {
                bytes: at..at.saturating_add(header).saturating_add(kept),
                next,
                end,
            },
            _ => Step::Damaged(at),
        }
    }
}

/// The part of `piece` (the member's bytes from `at`) inside `wanted`, and
/// the member offset where it starts.
fn overlap<'p>(at: u64, piece: &'p [u8], wanted: &Range<u64>) -> Option<(&'p [u8], u64)> {
    let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
    let (start, stop) = (wanted.start.max(at), wanted.end.min(end));
    if start >= stop {
        return None;
    }
    let from = usize::try_from(start.saturating_sub(at)).ok()?;
    let to = usize::try_from(stop.saturating_sub(at)).ok()?;
    Some((piece.get(from..to)?, start))
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    let mut b = [0u8; 2];
    if let Some(s) = bytes.get(at..at.saturating_add(2)) {
        b.copy_from_slice(s);
    }
    u16::from_le_bytes(b)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = bytes.get(at..at.saturating_add(4)) {
        b.copy_from_slice(s);
    }
    u32::from_le_bytes(b)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..at.saturating_add(8)) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}
