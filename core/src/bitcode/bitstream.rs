//! Reading LLVM's bitstream container: a bit cursor with LLVM's fixed and
//! VBR fields, the top-level walk, abbreviation definitions and records, and
//! the one-blob blocks the symbol table lives in.

use crate::bytes::{range, to_u64};
use crate::{Error, Result};

use super::fault::{malformed, BitcodeFault, MAX_ABBREVS};

/// The widest fixed or VBR field, and the widest abbreviation ID, that LLVM
/// reads (its `BitstreamCursor::MaxChunkSize`).
const MAX_CHUNK_SIZE: u64 = 32;

/// A blob and its offset in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Blob<'data> {
    pub(super) data: &'data [u8],
    pub(super) offset: u64,
}

impl Blob<'_> {
    pub(super) const EMPTY: Blob<'static> = Blob {
        data: &[],
        offset: 0,
    };
}

/// A read position, in bits, in a bitstream.
#[derive(Debug, Clone)]
pub(super) struct BitCursor<'data> {
    data: &'data [u8],
    pub(super) bit: u64,
    /// Offset of the bitstream in the file, for errors.
    base: u64,
}

impl<'data> BitCursor<'data> {
    /// A cursor on the first abbreviation ID, just after the magic.
    pub(super) fn after_magic(data: &'data [u8], base: u64) -> Self {
        BitCursor {
            data,
            bit: 32,
            base,
        }
    }

    fn len_bits(&self) -> u64 {
        to_u64(self.data.len()).saturating_mul(8)
    }

    pub(super) fn byte(&self) -> u64 {
        self.bit / 8
    }

    fn at_end(&self) -> bool {
        self.bit >= self.len_bits()
    }

    /// An error for a read that began at bit `at`.
    pub(super) fn fault(&self, at: u64, fault: BitcodeFault) -> Error {
        malformed(fault, self.base.saturating_add(at / 8))
    }

    /// Moves past `count` bits, which must lie in the stream.
    fn skip(&mut self, count: u64) -> Result<()> {
        match self.bit.checked_add(count) {
            Some(end) if end <= self.len_bits() => {
                self.bit = end;
                Ok(())
            }
            _ => Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd)),
        }
    }

    /// Reads a `width`-bit field, `width` at most 32.
    fn read(&mut self, width: u64) -> Result<u64> {
        let start = self.bit;
        if width > MAX_CHUNK_SIZE {
            return Err(self.fault(start, BitcodeFault::OperandTooWide { width }));
        }
        self.skip(width)?;
        let mut word = [0u8; 8];
        let bytes = usize::try_from(start / 8)
            .ok()
            .and_then(|at| self.data.get(at..))
            .unwrap_or_default();
        for (slot, byte) in word.iter_mut().zip(bytes) {
            *slot = *byte;
        }
        let shift = u32::try_from(start % 8).unwrap_or(0);
        let value = u64::from_le_bytes(word).checked_shr(shift).unwrap_or(0);
        Ok(value & low_bits(width))
    }

    /// Reads a variable-width number in `width`-bit chunks, as LLVM's
    /// `ReadVBR` (`limit` 32) or `ReadVBR64` (`limit` 64): bits past the
    /// limit are dropped, a chunk that would start at or past it is an error.
    fn vbr(&mut self, width: u64, limit: u64) -> Result<u64> {
        let start = self.bit;
        let data_bits = width.saturating_sub(1);
        let more = 1u64.checked_shl(u32::try_from(data_bits).unwrap_or(u32::MAX));
        let more = more.unwrap_or(0);
        let mut value = 0u64;
        let mut shift = 0u64;
        loop {
            let piece = self.read(width)?;
            let chunk = piece & more.wrapping_sub(1);
            value |= chunk
                .checked_shl(u32::try_from(shift).unwrap_or(u32::MAX))
                .unwrap_or(0);
            if piece & more == 0 {
                return Ok(value & low_bits(limit));
            }
            shift = shift.saturating_add(data_bits);
            if shift >= limit {
                return Err(self.fault(start, BitcodeFault::UnterminatedVbr));
            }
        }
    }

    fn vbr32(&mut self, width: u64) -> Result<u64> {
        self.vbr(width, 32)
    }

    fn vbr64(&mut self, width: u64) -> Result<u64> {
        self.vbr(width, 64)
    }

    /// Moves to the next multiple of 32 bits (possibly past the end, where
    /// the next read fails).
    fn align32(&mut self) {
        self.bit = self.bit.saturating_add(31) & !31;
    }

    /// After ENTER_SUBBLOCK and the block ID: reads the block's header as
    /// LLVM's `EnterSubBlock` does and gives its abbreviation width.
    fn enter_block(&mut self) -> Result<u64> {
        let at = self.bit;
        let width = self.vbr32(4)?;
        if width > MAX_CHUNK_SIZE {
            return Err(self.fault(at, BitcodeFault::BadAbbrevWidth { width }));
        }
        self.align32();
        self.read(32)?;
        if width == 0 {
            return Err(self.fault(at, BitcodeFault::BadAbbrevWidth { width }));
        }
        if self.at_end() {
            return Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd));
        }
        Ok(width)
    }

    /// After ENTER_SUBBLOCK and the block ID: moves past the block by its
    /// length, as LLVM's `SkipBlock` does.
    pub(super) fn skip_block(&mut self) -> Result<()> {
        self.vbr32(4)?;
        self.align32();
        let at = self.bit;
        let words = self.read(32)?;
        if self.at_end() {
            return Err(self.fault(self.bit, BitcodeFault::UnexpectedEnd));
        }
        let bits = words.saturating_mul(32);
        self.skip(bits)
            .map_err(|_| self.fault(at, BitcodeFault::BlockOutOfBounds { words }))
    }

    /// After UNABBREV_RECORD: moves past the record and gives its code.
    fn skip_unabbreviated_record(&mut self) -> Result<u64> {
        let code = self.vbr32(6)?;
        let count = self.vbr32(6)?;
        for _ in 0..count {
            self.vbr64(6)?;
        }
        Ok(code)
    }
}

/// The `width` low bits set (`width` at most 64).
fn low_bits(width: u64) -> u64 {
    u32::try_from(width)
        .ok()
        .and_then(|w| 1u64.checked_shl(w))
        .map_or(u64::MAX, |bit| bit.wrapping_sub(1))
}

/// Reads top-level entries until a block starts (its ID read) or an
/// unabbreviated record has been skipped (`None`); abbreviations defined at
/// the top level are read and dropped (none can be used there).
pub(super) fn next_top_level_block(bits: &mut BitCursor<'_>) -> Result<Option<u64>> {
    loop {
        let at = bits.bit;
        if bits.at_end() {
            return Err(bits.fault(at, BitcodeFault::UnexpectedEnd));
        }
        match bits.read(2)? {
            0 => return Err(bits.fault(at, BitcodeFault::EndBlockAtTopLevel)),
            1 => return bits.vbr32(8).map(Some),
            2 => define_abbrev(bits)?,
            _ => {
                bits.skip_unabbreviated_record()?;
                return Ok(None);
            }
        }
    }
}

/// One operand of an abbreviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    Literal(u64),
    Fixed(u64),
    Vbr(u64),
    Array,
    Char6,
    Blob,
}

fn read_operand(bits: &mut BitCursor<'_>) -> Result<Operand> {
    let at = bits.bit;
    if bits.read(1)? == 1 {
        return bits.vbr64(8).map(Operand::Literal);
    }
    let encoding = bits.read(3)?;
    Ok(match encoding {
        1 | 2 => {
            let width = bits.vbr64(5)?;
            if width > MAX_CHUNK_SIZE {
                return Err(bits.fault(at, BitcodeFault::OperandTooWide { width }));
            }
            // LLVM reads a zero-width field as the literal 0.
            match (width, encoding) {
                (0, _) => Operand::Literal(0),
                (_, 1) => Operand::Fixed(width),
                _ => Operand::Vbr(width),
            }
        }
        3 => Operand::Array,
        4 => Operand::Char6,
        5 => Operand::Blob,
        _ => return Err(bits.fault(at, BitcodeFault::InvalidEncoding { encoding })),
    })
}

/// After DEFINE_ABBREV: reads (and so checks) the abbreviation's operands.
fn define_abbrev(bits: &mut BitCursor<'_>) -> Result<()> {
    let at = bits.bit;
    let count = bits.vbr32(5)?;
    if count == 0 {
        return Err(bits.fault(at, BitcodeFault::EmptyAbbrev));
    }
    for _ in 0..count {
        read_operand(bits)?;
    }
    Ok(())
}

/// The abbreviations a block has defined so far: where each definition's
/// operands start, to be read again for every record that uses it.
struct Abbrevs {
    at: [u64; MAX_ABBREVS],
    len: usize,
}

impl Abbrevs {
    fn define(&mut self, bits: &mut BitCursor<'_>, id_at: u64) -> Result<()> {
        let at = bits.bit;
        define_abbrev(bits)?;
        let slot = self
            .at
            .get_mut(self.len)
            .ok_or_else(|| bits.fault(id_at, BitcodeFault::TooManyAbbrevs))?;
        *slot = at;
        self.len = self.len.saturating_add(1);
        Ok(())
    }

    /// Where abbreviation `id` (4 or more) is defined.
    fn get(&self, id: u64) -> Option<u64> {
        let index = usize::try_from(id.checked_sub(4)?).ok()?;
        self.at.get(..self.len)?.get(index).copied()
    }
}

/// Reads a record in the shape of the abbreviation defined at bit `def` and
/// gives its code and its (last) blob.
fn read_abbreviated_record<'data>(
    bits: &mut BitCursor<'data>,
    def: u64,
    at: u64,
) -> Result<(u64, Option<Blob<'data>>)> {
    let mut ops = BitCursor {
        bit: def,
        ..bits.clone()
    };
    let count = ops.vbr32(5)?;
    let code = match read_operand(&mut ops)? {
        Operand::Literal(value) => value,
        Operand::Fixed(width) => bits.read(width)?,
        Operand::Vbr(width) => bits.vbr64(width)?,
        Operand::Char6 => char6(bits.read(6)?),
        Operand::Array | Operand::Blob => return Err(bits.fault(at, BitcodeFault::ArrayOrBlobCode)),
    };
    let mut blob = None;
    let mut index = 1u64;
    while index < count {
        match read_operand(&mut ops)? {
            Operand::Literal(_) => {}
            Operand::Fixed(width) => {
                bits.read(width)?;
            }
            Operand::Vbr(width) => {
                bits.vbr64(width)?;
            }
            Operand::Char6 => {
                bits.read(6)?;
            }
            Operand::Array => {
                let elements = bits.vbr32(6)?;
                if index.saturating_add(2) != count {
                    return Err(bits.fault(at, BitcodeFault::BadArray));
                }
                index = index.saturating_add(1);
                match read_operand(&mut ops)? {
                    Operand::Fixed(width) => bits.skip(elements.saturating_mul(width))?,
                    Operand::Char6 => bits.skip(elements.saturating_mul(6))?,
                    Operand::Vbr(width) => {
                        // Each element takes at least `width` bits.
                        bits.clone().skip(elements.saturating_mul(width))?;
                        for _ in 0..elements {
                            bits.vbr64(width)?;
                        }
                    }
                    _ => return Err(bits.fault(at, BitcodeFault::BadArray)),
                }
            }
            Operand::Blob => {
                let size = bits.vbr32(6)?;
                bits.align32();
                let start = bits.bit;
                let padded = size.saturating_add(3) & !3;
                bits.skip(padded.saturating_mul(8))
                    .map_err(|_| bits.fault(start, BitcodeFault::BlobOutOfBounds { size }))?;
                let data = range(bits.data, start / 8, size)
                    .ok_or_else(|| bits.fault(start, BitcodeFault::BlobOutOfBounds { size }))?;
                blob = Some(Blob {
                    data,
                    offset: bits.base.saturating_add(start / 8),
                });
            }
        }
        index = index.saturating_add(1);
    }
    Ok((code, blob))
}

/// A char6 value as the character it stands for.
fn char6(value: u64) -> u64 {
    let value = value & 63;
    let (first, base) = match value {
        0..=25 => (0, b'a'),
        26..=51 => (26, b'A'),
        52..=61 => (52, b'0'),
        62 => return u64::from(b'.'),
        _ => return u64::from(b'_'),
    };
    value.saturating_sub(first).saturating_add(u64::from(base))
}

/// After ENTER_SUBBLOCK and the block ID: reads the block as LLVM's
/// `readBlobInRecord` does, and gives the blob of its last record with code
/// `code` (empty if that record has no blob, or if there is no such record).
/// The walk goes on after the block's END_BLOCK, wherever its length says
/// the block ends.
pub(super) fn read_blob_block<'data>(
    bits: &mut BitCursor<'data>,
    code: u64,
) -> Result<Blob<'data>> {
    let width = bits.enter_block()?;
    let mut abbrevs = Abbrevs {
        at: [0; MAX_ABBREVS],
        len: 0,
    };
    let mut found = Blob::EMPTY;
    loop {
        let at = bits.bit;
        if bits.at_end() {
            return Err(bits.fault(at, BitcodeFault::UnexpectedEnd));
        }
        match bits.read(width)? {
            0 => {
                bits.align32();
                return Ok(found);
            }
            1 => {
                bits.vbr32(8)?;
                bits.skip_block()?;
            }
            2 => abbrevs.define(bits, at)?,
            3 => {
                if bits.skip_unabbreviated_record()? == code {
                    found = Blob::EMPTY;
                }
            }
            id => {
                let def = abbrevs
                    .get(id)
                    .ok_or_else(|| bits.fault(at, BitcodeFault::UnknownAbbrev { id }))?;
                let (record, blob) = read_abbreviated_record(bits, def, at)?;
                if record == code {
                    found = blob.unwrap_or(Blob::EMPTY);
                }
            }
        }
    }
}
