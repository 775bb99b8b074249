//! A large deflated ELF member of a wheel, read without holding it: two
//! passes over its deflate stream, nothing kept but what coverage reads.
//!
//! The first pass reads the ELF header and the section header table as
//! they go by (and checks the member's CRC-32). The second fills an image of
//! the member's size, zero everywhere (pages never written take no memory),
//! with the headers, every section but the large `SHT_PROGBITS` ones (code,
//! data), and of a large `SHT_PROGBITS` section: nothing if it starts no
//! container, all of it if it starts a bundle, a compressed bundle or an
//! OffloadBinary, and, if it starts CUDA fat binaries (`.nv_fatbin`,
//! `__nv_relfatbin`), each fat binary's header and each entry's header with
//! the first 4 KiB of its payload (all of it for entries neither cubin nor
//! PTX). The offload readers read nothing else of such a file; the tests
//! hold the image's coverage to the whole member's.

use alloc::vec::Vec;
use core::ops::Range;

use crate::cuda_fatbin::{EntryKind, ENTRY_HEADER_SIZE, FATBIN_HEADER_SIZE, FATBIN_MAGIC_BYTES};
use crate::elf::{SHT_NOBITS, SHT_PROGBITS};
use crate::zip::{Member, ZipError};
use crate::FileKind;

/// What the second pass keeps.
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

/// How many zero bytes a step looks through at once.
const ZEROS_SCANNED: u64 = 64 << 10;

/// What is kept where fat binaries stop making sense: the readers stop
/// there too, with an error read from the header at that place.
const DAMAGE_KEPT: u64 = 64 << 10;

/// The image of `member` (an ELF64 little-endian file) holding what the
/// offload readers read, or `None` if it is no such file or its headers do
/// not say where its sections are (the caller then decodes it whole).
pub(super) fn sparse_image(
    member: &Member<'_>,
    limit: u64,
    done_with: &dyn Fn(&[u8]),
    policy: Policy,
) -> Result<Option<Vec<u8>>, ZipError> {
    let Some(sections) = section_table(member, limit, done_with)? else {
        return Ok(None);
    };
    // Zero pages from the system: only what is written below takes memory.
    let Ok(mut image) = crate::bytes::zeroed(member.size) else {
        return Ok(None);
    };
    let mut keepers = sections.keepers(member.size, policy);
    let mut at = 0u64;
    // The first pass checked the CRC-32 of these same bytes.
    member.pieces(limit, false, done_with, &mut |piece| {
        let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
        for keeper in &mut keepers {
            keeper.take(at, piece, &mut image);
        }
        at = end;
        true
    })?;
    Ok(Some(image))
}

/// What the first pass read: where the program headers end, and each
/// section's (type, offset, size).
struct Sections {
    headers_end: u64,
    table: Range<u64>,
    sections: Vec<(u32, u64, u64)>,
}

/// The first pass: the ELF header and the section header table, `None` if
/// the member is no ELF64 little-endian file with a table inside it.
fn section_table(
    member: &Member<'_>,
    limit: u64,
    done_with: &dyn Fn(&[u8]),
) -> Result<Option<Sections>, ZipError> {
    let mut head = Vec::new();
    let mut table: Option<(Range<u64>, Vec<u8>)> = None;
    let mut refused = false;
    let mut at = 0u64;
    member.each_piece(limit, done_with, &mut |piece| {
        let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
        if head.len() < 64 {
            let want = 64usize.saturating_sub(head.len()).min(piece.len());
            head.extend_from_slice(piece.get(..want).unwrap_or_default());
            if head.len() == 64 {
                table = table_range(&head, member.size).map(|r| (r, Vec::new()));
                refused = table.is_none();
                if refused {
                    return false;
                }
            }
        }
        if let Some((range, bytes)) = &mut table {
            if let Some((from, _)) = overlap(at, piece, range) {
                bytes.extend_from_slice(from);
            }
        }
        at = end;
        true
    })?;
    let Some((range, bytes)) = table.filter(|_| !refused) else {
        return Ok(None);
    };
    let sections = bytes
        .chunks_exact(64)
        .map(|h| (u32_at(h, 4), u64_at(h, 24), u64_at(h, 32)))
        .collect();
    let (phoff, phentsize, phnum) = (
        u64_at(&head, 32),
        u64::from(u16_at(&head, 54)),
        u64::from(u16_at(&head, 56)),
    );
    let headers_end = phoff
        .saturating_add(phentsize.saturating_mul(phnum))
        .max(64);
    Ok(Some(Sections {
        headers_end,
        table: range,
        sections,
    }))
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

impl Sections {
    /// What the second pass keeps, section by section.
    fn keepers(&self, size: u64, policy: Policy) -> Vec<Keeper> {
        let mut keepers = alloc::vec![
            Keeper::whole(0..self.headers_end.min(size)),
            Keeper::whole(self.table.clone()),
        ];
        for &(kind, offset, len) in &self.sections {
            let Some(end) = offset.checked_add(len).filter(|&e| e <= size) else {
                continue;
            };
            if kind == SHT_NOBITS || len == 0 {
                continue;
            }
            keepers.push(if kind == SHT_PROGBITS && len > policy.large {
                Keeper {
                    end,
                    payload_kept: policy.payload_kept,
                    step: Step::Probe(offset),
                }
            } else {
                Keeper::whole(offset..end)
            });
        }
        keepers
    }
}

/// What one region of the member keeps, step by step as the bytes go by.
struct Keeper {
    /// Where the region ends.
    end: u64,
    /// What is kept of a cubin's or a PTX entry's payload.
    payload_kept: u64,
    step: Step,
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
            Step::Entry { at, .. } => cut(at, ENTRY_HEADER_SIZE),
            Step::Kept { ref bytes, .. } => bytes.clone(),
            Step::Damaged(at) => cut(at, DAMAGE_KEPT),
            Step::Done => self.end..self.end,
        }
    }

    /// Takes what it wants of `piece` (the member's bytes from `at`), and
    /// every step whose bytes are now all in the image.
    fn take(&mut self, at: u64, piece: &[u8], image: &mut [u8]) {
        let end = at.saturating_add(crate::bytes::to_u64(piece.len()));
        loop {
            let wanted = self.wanted();
            // The image is zero already: zero bytes are not written, so
            // that their pages take no memory.
            if let Some((from, to)) =
                overlap(at, piece, &wanted).filter(|(f, _)| f.iter().any(|&b| b != 0))
            {
                let to = usize::try_from(to).unwrap_or(usize::MAX);
                if let Some(out) = image.get_mut(to..to.saturating_add(from.len())) {
                    out.copy_from_slice(from);
                }
            }
            if wanted.end > end || self.step == Step::Done {
                return;
            }
            self.step = self.next(&wanted, image);
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
                    return Step::Whole(at)
                }
                _ => return Step::Damaged(at),
            }
        }
        self.fatbin(at, bytes)
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
