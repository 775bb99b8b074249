//! A member read sparsely covers as the whole member does: every ELF host
//! shape of the fixture folders, deflated in a wheel
//! (tests/fixtures/coverage/regenerate.sh), read both ways for every
//! current GPU, with the sparsest policy and the default one.

extern crate std;
use std::format;
use std::string::String;
use std::vec::Vec;

use super::sparse::{sparse_image, Policy};
use super::*;
use crate::zip::Zip;

const EVERY_ELF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/coverage/every-elf-0.1-py3-none-linux_x86_64.whl"
);

fn devices() -> Vec<Device<'static>> {
    CURRENT_GPUS
        .iter()
        .chain(&["gfx906", "gfx90a:xnack+", "gfx1030", "sm_50", "sm_75"])
        .map(|d| Device::parse(d).unwrap())
        .collect()
}

/// Everything coverage reports of the wheel, member by member, as text.
fn report(sparse: (u64, Policy)) -> Vec<String> {
    let data = std::fs::read(EVERY_ELF).unwrap();
    let decoding = crate::bundler::Decoding::default();
    let reading = Reading {
        sparse,
        ..Reading::new(decoding, true)
    };
    cover_with(&data, "w", &devices(), &reading, &|_| {})
        .iter()
        .map(|c| format!("{c:?}"))
        .collect()
}

#[test]
fn sparse_members_cover_as_whole_ones() {
    let whole = report((u64::MAX, Policy::DEFAULT));
    assert!(whole.len() >= 25, "{}", whole.len());
    // Device code found and loaded, and the damaged copy reported.
    assert!(whole.iter().any(|c| c.contains("loads: true")));
    assert!(whole
        .iter()
        .any(|c| c.contains("damaged") && c.contains("header size 8 is not allowed")));
    let sparsest = Policy {
        large: 0,
        payload_kept: 0,
    };
    for policy in [sparsest, Policy::DEFAULT] {
        let sparse = report((0, policy));
        assert_eq!(sparse.len(), whole.len(), "{policy:?}");
        for (s, w) in sparse.iter().zip(&whole) {
            assert_eq!(s, w, "{policy:?}");
        }
    }
}

#[test]
fn a_sparse_image_holds_headers_not_code() {
    let data = std::fs::read(EVERY_ELF).unwrap();
    let zip = Zip::parse(&data).unwrap();
    let member = zip
        .members()
        .map(Result::unwrap)
        .find(|m| m.name == b"every/cuda/nvcc-two-tu.so")
        .unwrap();
    let whole = member.contents(1 << 30).unwrap();
    let sparsest = Policy {
        large: 0,
        payload_kept: 0,
    };
    let image = sparse_image(&member, 1 << 30, &|_| {}, sparsest)
        .unwrap()
        .unwrap();
    assert_eq!(image.len(), whole.len());
    let file = crate::elf::ElfFile::parse(&whole).unwrap();
    let section = |name: &[u8]| {
        let s = file
            .sections()
            .map(Result::unwrap)
            .find(|s| s.name() == name)
            .unwrap();
        let start = usize::try_from(s.offset()).unwrap();
        start..start + s.data().len()
    };
    // A fat binary's headers are kept, its payloads not (code is kept only
    // as far as a reader would look for a container in it: 64 KiB, all of
    // this small file's; benches/README.md measures a 551 MB one).
    let fatbin = section(b".nv_fatbin");
    assert_eq!(
        image[fatbin.start..fatbin.start + 80],
        whole[fatbin.start..fatbin.start + 80]
    );
    let kept = image[fatbin.clone()].iter().filter(|&&b| b != 0).count();
    let all = whole[fatbin].iter().filter(|&&b| b != 0).count();
    assert!(kept * 4 < all, "{kept} of {all}");
    // Small sections are whole.
    let dynsym = section(b".dynsym");
    assert_eq!(image[dynsym.clone()], whole[dynsym]);
    // A member that is no ELF64 file is left to the whole reading.
    let text_member = Zip::parse(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/coverage/sample-0.1-py3-none-linux_x86_64.whl"
        ))
        .unwrap(),
    )
    .unwrap()
    .members()
    .map(Result::unwrap)
    .find(|m| m.name.ends_with(b"RECORD"))
    .map(|m| sparse_image(&m, 1 << 30, &|_| {}, sparsest).unwrap());
    assert_eq!(text_member, Some(None));
}

/// Reads `file` as a caller with random access does: each missing range,
/// a piece of at most `chunk` bytes at a time. How many bytes were read.
fn read_sparsely(sparse: &mut SparseElf, file: &[u8], chunk: u64) -> u64 {
    let mut read = 0;
    while let Some(range) = sparse.missing() {
        let end = range.end.min(range.start + chunk).min(file.len() as u64);
        let piece = &file[range.start as usize..end as usize];
        assert!(!piece.is_empty(), "{range:?} past the end");
        sparse.give(range.start, piece);
        read += piece.len() as u64;
    }
    read
}

#[test]
fn a_file_read_range_by_range_covers_as_the_whole_file() {
    let data = std::fs::read(EVERY_ELF).unwrap();
    let zip = Zip::parse(&data).unwrap();
    let decoding = crate::bundler::Decoding::default();
    let devices = devices();
    let sparsest = Policy {
        large: 0,
        payload_kept: 0,
    };
    let mut files = 0;
    for member in zip.members().map(Result::unwrap) {
        let whole = member.contents(1 << 30).unwrap();
        for (policy, chunk) in [(sparsest, 7), (sparsest, 1 << 20), (Policy::DEFAULT, 4096)] {
            let mut sparse = SparseElf::with_policy(member.size, policy);
            let read = read_sparsely(&mut sparse, &whole, chunk);
            assert!(read <= 2 * member.size, "{read}");
            let image = sparse.image().unwrap();
            let name = core::str::from_utf8(member.name).unwrap();
            let report = |bytes: &[u8]| {
                let covered = cover(bytes, name, &devices, decoding, true, &|_| {});
                format!("{covered:?}")
            };
            assert_eq!(report(&image), report(&whole), "{name} {policy:?} {chunk}");
        }
        files += 1;
    }
    assert!(files >= 28);
    // A file that is no ELF64 file asks for its header only.
    let mut sparse = SparseElf::new(1000);
    assert_eq!(sparse.missing(), Some(0..64));
    sparse.give(0, &[0x7f; 64]);
    assert_eq!(sparse.missing(), None);
    assert!(sparse.image().is_none());
}

/// An ELF64 header of a file of `size` bytes whose section table of
/// `count` entries lies at `shoff`.
fn elf_header(shoff: u64, count: u16) -> Vec<u8> {
    let mut head = std::vec![0u8; 64];
    head[..4].copy_from_slice(b"\x7fELF");
    head[4] = 2;
    head[5] = 1;
    head[40..48].copy_from_slice(&shoff.to_le_bytes());
    head[58..60].copy_from_slice(&64u16.to_le_bytes());
    head[60..62].copy_from_slice(&count.to_le_bytes());
    head
}

/// What a sparse reading of `file` gives: its image or `None` (refused).
fn sparse_of(file: &[u8]) -> Option<Vec<u8>> {
    let mut sparse = SparseElf::sparsest(file.len() as u64);
    read_sparsely(&mut sparse, file, 4096);
    sparse.image()
}

#[test]
fn malformed_headers_are_refused_and_lying_sections_skipped() {
    // Cut short: fewer than 64 bytes, or a header alone.
    assert_eq!(sparse_of(b"\x7fELF\x02\x01"), None);
    // A section table past the end, or whose size overflows.
    assert_eq!(sparse_of(&elf_header(1 << 40, 1)), None);
    assert_eq!(sparse_of(&elf_header(u64::MAX - 10, 2)), None);
    // No section table, or one of another entry size.
    assert_eq!(sparse_of(&elf_header(0, 1)), None);
    let mut odd = elf_header(64, 1);
    odd[58] = 40;
    odd.extend_from_slice(&[0; 64]);
    assert_eq!(sparse_of(&odd), None);
    // More sections than a sparse reading takes: read whole instead.
    let mut many = elf_header(64, 4097);
    many.resize(64 + 64 * 4097, 0);
    assert_eq!(sparse_of(&many), None);
    // Sections whose offset and size overflow or lie past the end are
    // skipped; the rest is kept.
    let mut file = elf_header(64, 3);
    let section = |kind: u32, offset: u64, size: u64| {
        let mut h = [0u8; 64];
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[24..32].copy_from_slice(&offset.to_le_bytes());
        h[32..40].copy_from_slice(&size.to_le_bytes());
        h
    };
    file.extend_from_slice(&section(1, u64::MAX, 2));
    file.extend_from_slice(&section(1, 100, 1 << 50));
    file.extend_from_slice(&section(2, 256, 8));
    file.extend_from_slice(&[0x55; 64]);
    let image = sparse_of(&file).unwrap();
    assert_eq!(image.len(), file.len());
    assert_eq!(image[..256], file[..256], "headers and table");
    assert_eq!(image[256..264], [0x55; 8], "the small section");
    assert!(image[264..].iter().all(|&b| b == 0), "nothing else");
}
