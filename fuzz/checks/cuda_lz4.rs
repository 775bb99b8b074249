//! `cuda_lz4`: the LZ4 block decoder behind fat binary entries flagged
//! 0x2000, through the public path (the bytes as an entry's payload, a
//! declared size from the first two bytes), against a plain reference
//! decoder written from the format: the same bytes when both succeed,
//! both fail otherwise (ours may fail more: it stops at the declared size);
//! errors located inside the payload. A literal-only block of the input
//! (what any LZ4 writer may emit) decodes back to the input. The
//! compressor (`fatbinary --compress-mode=speed`'s LZ4, through
//! `write_fatbin`): the input as an LZ4 entry decodes back to it, by ours
//! and by the reference; the block keeps LZ4's end rules (the last match
//! starts at least 12 bytes before the end, the last 5 bytes are literals)
//! and stays within `LZ4_compressBound`.

use clangoffload::cuda_fatbin::{
    write_fatbin, CompressMode, EntryKind, Fatbin, NewEntry, Sm, SmVariant, WriteOptions,
    FLAG_64BIT, FLAG_HOST_LINUX, FLAG_LZ4,
};
use clangoffload::DecompressOptions;

/// The reference: sequences until the input ends, no limit but 1 MiB.
fn reference(src: &[u8]) -> Option<Vec<u8>> {
    let (mut out, mut i) = (Vec::new(), 0usize);
    if src.is_empty() {
        return None;
    }
    while i < src.len() {
        let token = src[i];
        i += 1;
        let mut lit = usize::from(token >> 4);
        if lit == 15 {
            loop {
                let b = *src.get(i)?;
                i += 1;
                lit += usize::from(b);
                if b != 255 {
                    break;
                }
            }
        }
        out.extend_from_slice(src.get(i..i + lit)?);
        i += lit;
        if i == src.len() {
            break;
        }
        let off = usize::from(u16::from_le_bytes([*src.get(i)?, *src.get(i + 1)?]));
        i += 2;
        let mut len = usize::from(token & 15);
        if len == 15 {
            loop {
                let b = *src.get(i)?;
                i += 1;
                len += usize::from(b);
                if b != 255 {
                    break;
                }
            }
        }
        len += 4;
        if off == 0 || off > out.len() || out.len() + len > 1 << 20 {
            return None;
        }
        for _ in 0..len {
            out.push(out[out.len() - off]);
        }
    }
    Some(out)
}

/// Where the last match of a block (that the reference decodes) starts and
/// ends in the output, if it has one.
fn last_match(src: &[u8]) -> Option<(usize, usize)> {
    let (mut i, mut produced, mut last) = (0usize, 0usize, None);
    let more = |i: &mut usize, mut n: usize| {
        if n == 15 {
            loop {
                let b = src[*i];
                *i += 1;
                n += usize::from(b);
                if b != 255 {
                    break;
                }
            }
        }
        n
    };
    while i < src.len() {
        let token = src[i];
        i += 1;
        let lit = more(&mut i, usize::from(token >> 4));
        i += lit;
        produced += lit;
        if i == src.len() {
            break;
        }
        i += 2;
        let len = more(&mut i, usize::from(token & 15)) + 4;
        last = Some((produced, produced + len));
        produced += len;
    }
    last
}

/// `data` written as an LZ4-compressed ELF entry, as `fatbinary
/// --compress-all --compress-mode=speed` writes it: decodes back, keeps
/// the end rules, stays within the bound.
fn compressor_round_trip(data: &[u8]) {
    let entry = NewEntry {
        kind: EntryKind::Elf,
        sm: Sm {
            number: 80,
            variant: SmVariant::Plain,
        },
        data,
        identifier: None,
        options: None,
        debug: false,
    };
    let options = WriteOptions {
        compress_all: true,
        mode: CompressMode::Speed,
        ..WriteOptions::FATBINARY
    };
    let fatbin = write_fatbin(&[entry], &options).unwrap();
    let entry = Fatbin::parse(&fatbin).unwrap().entries().next().unwrap();
    assert_eq!(entry.flags() & FLAG_LZ4, FLAG_LZ4);
    let block = entry.compressed();
    assert!(block.len() <= data.len() + data.len() / 255 + 16);
    assert_eq!(
        entry.decompress(&DecompressOptions::default()).unwrap(),
        data
    );
    assert_eq!(reference(block).as_deref(), Some(data));
    if let Some((start, end)) = last_match(block) {
        assert!(start + 12 <= data.len(), "last match starts too late");
        assert!(end + 5 <= data.len(), "the last 5 bytes are literals");
    }
}

/// A fat binary of one ELF entry holding `block` as its LZ4 payload.
pub fn wrap(block: &[u8], declared: u64) -> Vec<u8> {
    let padded = block.len().div_ceil(8) * 8;
    let mut entry = Vec::new();
    entry.extend_from_slice(&2u16.to_le_bytes());
    entry.extend_from_slice(&0x101u16.to_le_bytes());
    entry.extend_from_slice(&64u32.to_le_bytes());
    entry.extend_from_slice(&(padded as u64).to_le_bytes());
    entry.extend_from_slice(&(block.len() as u32).to_le_bytes());
    entry.extend_from_slice(&[0; 4]); // options offset
    entry.extend_from_slice(&[8, 0, 1, 0]); // code version 1.8
    entry.extend_from_slice(&80u32.to_le_bytes());
    entry.extend_from_slice(&[0; 8]); // identifier
    entry.extend_from_slice(&(FLAG_64BIT | FLAG_HOST_LINUX | FLAG_LZ4).to_le_bytes());
    entry.extend_from_slice(&[0; 8]);
    entry.extend_from_slice(&declared.to_le_bytes());
    entry.extend_from_slice(block);
    entry.resize(64 + padded, 0);
    let mut out = Vec::new();
    out.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    out.extend_from_slice(&entry);
    out
}

pub fn check(data: &[u8]) {
    compressor_round_trip(data);
    let Some((size, block)) = data.split_first_chunk::<2>() else {
        return;
    };
    let block_len = block.len() as u64;
    let fatbin = wrap(block, u64::from(u16::from_le_bytes(*size)));
    let entry = Fatbin::parse(&fatbin).unwrap().entries().next().unwrap();
    let ours = entry.decompress(&DecompressOptions::default());
    match (&ours, reference(block)) {
        (Ok(ours), Some(theirs)) => assert_eq!(ours, &theirs),
        (Ok(_), None) => panic!("ours decodes what the reference refuses"),
        (Err(e), _) => assert!(e.offset() >= 16 && e.offset() <= 16 + 64 + block_len, "{e}"),
    }
    if let Some(theirs) = reference(block) {
        // The reference's length declared: ours agrees exactly.
        let fatbin = wrap(block, theirs.len() as u64);
        let entry = Fatbin::parse(&fatbin).unwrap().entries().next().unwrap();
        assert_eq!(
            entry.decompress(&DecompressOptions::default()).unwrap(),
            theirs
        );
    }
    // Literal-only blocks: one sequence of the whole input.
    let mut literal = Vec::new();
    let n = data.len();
    if n >= 15 {
        literal.push(0xF0);
        let mut rest = n - 15;
        while rest >= 255 {
            literal.push(255);
            rest -= 255;
        }
        literal.push(rest as u8);
    } else {
        literal.push((n as u8) << 4);
    }
    literal.extend_from_slice(data);
    let fatbin = wrap(&literal, n as u64);
    let entry = Fatbin::parse(&fatbin).unwrap().entries().next().unwrap();
    assert_eq!(
        entry.decompress(&DecompressOptions::default()).unwrap(),
        data
    );
}
