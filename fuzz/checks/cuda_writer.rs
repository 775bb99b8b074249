//! `cuda_writer`: fat binaries written from arbitrary entries, stored or
//! compressed as `fatbinary` would (zstd, LZ4; PTX as given or rewritten
//! as `fatbinary` stores it), read back to what was written (kind, SM and
//! variant, payload padded to 8, PTX with its NUL, identifier, options,
//! debug flag; a compressed entry flagged as the options choose, with its
//! exact sizes, and decoding to the image); pruning by SM keeps exactly the
//! entries accepted, byte for byte; in place it keeps the fat binary's
//! offset and zero-fills the rest.

use arbitrary::Arbitrary;
use clangoffload::cuda_fatbin::{
    prune, prune_in_place, ptx, write_fatbin, CompressMode, Compression, EntryKind, Fatbin,
    NewEntry, Sm, SmVariant, WriteOptions, FLAG_DEBUG,
};
use clangoffload::DecompressOptions;

/// One entry to write.
#[derive(Debug, Arbitrary)]
pub struct EntryInput {
    ptx: bool,
    number: u8,
    variant: u8,
    data: Vec<u8>,
    identifier: Option<Vec<u8>>,
    options: Option<Vec<u8>>,
    debug: bool,
}

#[derive(Debug, Arbitrary)]
pub struct Input {
    entries: Vec<EntryInput>,
    keep_below: u8,
    /// Which of `fatbinary`'s ways to write (see `write_options`).
    how: u8,
}

/// Stored; `fatbinary`'s default (PTX and debug code zstd); every entry
/// zstd; every entry LZ4; each with PTX as given or rewritten (bit 2).
fn write_options(how: u8) -> WriteOptions {
    let base = match how % 4 {
        0 => WriteOptions::STORED,
        1 => WriteOptions::FATBINARY,
        2 => WriteOptions {
            compress_all: true,
            ..WriteOptions::FATBINARY
        },
        _ => WriteOptions {
            compress_all: true,
            mode: CompressMode::Speed,
            ..WriteOptions::FATBINARY
        },
    };
    WriteOptions {
        rewrite_ptx: how & 4 != 0,
        ..base
    }
}

pub fn check(input: Input) {
    let entries: Vec<NewEntry<'_>> = input
        .entries
        .iter()
        .take(16)
        .map(|e| NewEntry {
            kind: if e.ptx {
                EntryKind::Ptx
            } else {
                EntryKind::Elf
            },
            sm: Sm {
                number: u32::from(e.number),
                variant: match e.variant % 3 {
                    0 => SmVariant::Plain,
                    1 => SmVariant::Family,
                    _ => SmVariant::Arch,
                },
            },
            data: &e.data,
            identifier: e.identifier.as_deref(),
            options: e.options.as_deref(),
            debug: e.debug,
        })
        .collect();
    let write = write_options(input.how);
    let written = write_fatbin(&entries, &write).unwrap();
    let fatbin = Fatbin::parse(&written).expect("what we write parses");
    let read: Vec<_> = fatbin.entries().collect();
    assert_eq!(read.len(), entries.len());
    let options = DecompressOptions::default();
    for (new, e) in entries.iter().zip(&read) {
        assert_eq!((e.kind(), e.sm()), (new.kind, new.sm));
        assert_eq!(e.payload_size() % 8, 0);
        let mut image = match (new.kind, write.rewrite_ptx) {
            (EntryKind::Ptx, true) => ptx::as_fatbinary_stores(new.data).unwrap(),
            _ => new.data.to_vec(),
        };
        assert_eq!(e.compression(), write.compression(new));
        if e.compression() == Compression::None {
            assert!(e.payload().starts_with(&image));
            assert_eq!(e.uncompressed_size(), 0);
        } else {
            if new.kind == EntryKind::Ptx {
                image.push(0);
            }
            assert_eq!(e.uncompressed_size(), image.len() as u64);
            assert!(u64::from(e.compressed_size()) <= e.payload_size());
            assert!(e.payload_size() - u64::from(e.compressed_size()) < 8);
            assert_eq!(
                e.decompress(&options).expect("what we compress decodes"),
                image
            );
        }
        if new.kind == EntryKind::Ptx {
            if e.compression() == Compression::None {
                assert_eq!(e.payload()[image.len()], 0, "PTX keeps its NUL");
            }
            assert_eq!(
                e.options().unwrap_or_default(),
                new.options.unwrap_or_default()
            );
        }
        assert_eq!(e.identifier(), new.identifier);
        assert_eq!(e.flags() & FLAG_DEBUG != 0, new.debug);
    }
    let keep = |_: EntryKind, sm: Sm| sm.number < u32::from(input.keep_below);
    let expected: Vec<&[u8]> = read
        .iter()
        .filter(|e| keep(e.kind(), e.sm()))
        .map(|e| e.payload())
        .collect();
    let pruned = prune(&fatbin, &keep, &options).unwrap();
    let pruned_bytes = pruned.clone().unwrap_or_else(|| written.clone());
    let got: Vec<Vec<u8>> = Fatbin::parse(&pruned_bytes)
        .unwrap()
        .entries()
        .map(|e| e.payload().to_vec())
        .collect();
    assert_eq!(got, expected.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    let mut section = written.clone();
    let changed = prune_in_place(&mut section, &keep, &options).unwrap();
    assert_eq!(changed, usize::from(pruned.is_some()));
    assert!(section.starts_with(&pruned_bytes));
    assert!(section[pruned_bytes.len()..].iter().all(|&b| b == 0));
}
