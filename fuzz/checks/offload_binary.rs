//! Parsing arbitrary bytes as OffloadBinaries, and writing what parses.
//!
//! Invariants checked:
//! - no panic in `parse`, `entries`, `strings`, `validate`, `decompress`,
//!   `binaries`, `declared_extent`;
//! - a parsed binary lies inside the input and its size is its declared
//!   size; every image and string lies inside the binary;
//! - the walk over back-to-back binaries ends, yields an error only last;
//! - `declared_extent` on the input agrees with the parsed size;
//! - a parsed (uncompressed) binary rewritten with the writer, in its own
//!   version, parses back to the same kinds, flags, strings and images;
//! - decompressing a compressed binary (bounded to 1 MiB) gives a binary
//!   whose declared size is the inflated size.

use clangoffload::container::{declared_extent, Extent};
use clangoffload::offload_binary::{binaries, write_offload_binary, NewImage, WriteOptions};
use clangoffload::{DecompressOptions, Limits, OffloadBinary};

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let mut errors = 0;
    for found in binaries(data) {
        assert_eq!(errors, 0, "item after an error");
        match found {
            Ok((offset, binary)) => check_binary(data, offset as usize, &binary),
            Err(_) => errors += 1,
        }
    }
    if let Ok(binary) = OffloadBinary::parse(data) {
        match declared_extent(data) {
            Ok(Extent::Known(size)) => assert_eq!(size, binary.size()),
            other => panic!("extent {other:?} of a binary that parses"),
        }
    }
}

fn check_binary(data: &[u8], offset: usize, binary: &OffloadBinary<'_>) {
    let size = binary.size() as usize;
    assert!(offset + size <= data.len());
    assert_eq!(binary.data().as_ptr(), data[offset..].as_ptr());
    let _ = binary.validate();
    if binary.is_compressed() {
        let options = DecompressOptions {
            limits: Limits {
                max_uncompressed_size: 1 << 20,
            },
            ..DecompressOptions::default()
        };
        if let Ok(inflated) = binary.decompress(&options) {
            assert_eq!(inflated.len() as u64, binary.inflated_size());
            if let Ok(again) = OffloadBinary::parse(&inflated) {
                assert!(!again.is_compressed());
            }
        }
        return;
    }
    let strings: Vec<Vec<(&[u8], &[u8])>> = binary
        .entries()
        .map(|e| e.strings().map(|s| (s.key, s.value)).collect())
        .collect();
    let mut images = Vec::new();
    for (entry, strings) in binary.entries().zip(&strings) {
        let image = entry.image();
        let start = image.as_ptr() as usize - binary.data().as_ptr() as usize;
        assert!(start + image.len() <= size);
        for (key, value) in strings {
            for part in [key, value] {
                let at = part.as_ptr() as usize;
                let base = binary.data().as_ptr() as usize;
                assert!(part.is_empty() || (at >= base && at + part.len() <= base + size));
            }
        }
        images.push(NewImage {
            image_kind: entry.image_kind(),
            offload_kind: entry.offload_kind(),
            flags: entry.flags(),
            strings,
            image,
        });
    }
    let version = binary.version();
    // Version 1 holds one image per binary and cannot store NULs in values.
    let Ok(written) = write_offload_binary(
        &images,
        &WriteOptions {
            version,
            compression: None,
        },
    ) else {
        return;
    };
    let again: Vec<_> = binaries(&written)
        .map(|b| b.expect("rewritten binary parses").1)
        .collect();
    let entries: Vec<_> = again.iter().flat_map(|b| b.entries()).collect();
    assert_eq!(entries.len(), images.len());
    for (entry, image) in entries.iter().zip(&images) {
        assert_eq!(entry.image(), image.image);
        assert_eq!(entry.image_kind(), image.image_kind);
        assert_eq!(entry.offload_kind(), image.offload_kind);
        assert_eq!(entry.flags(), image.flags);
        let strings: Vec<(&[u8], &[u8])> = entry.strings().map(|s| (s.key, s.value)).collect();
        assert_eq!(&strings, image.strings);
    }
}
