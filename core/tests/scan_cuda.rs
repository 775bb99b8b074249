//! `scan` and NVIDIA CUDA fat binaries: every fat binary of the CUDA
//! fixtures (tests/fixtures/cuda, made by clang 22 and NVIDIA's tools) found
//! where `cuobjdump` reads it (`host_fatbins`), the same planted at odd
//! offsets in random bytes and in each other, damaged ones reported as
//! rejected with located errors, and what scan skips inside a fat binary:
//! its bytes up to the end of its last compressed entry.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::{Path, PathBuf};

use clangoffload::cuda_fatbin::{fatbins, Compression, Fatbin, FLAG_LZ4, FLAG_ZSTD};
use clangoffload::cuda_host::host_fatbins;
use clangoffload::scan::{scan, Found};
use clangoffload::{Container, DecompressOptions, ErrorKind, Field};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn cuda(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("cuda").join(name)).unwrap()
}

fn bundle() -> Vec<u8> {
    std::fs::read(fixtures().join("llvm22/hip-4096.bundle")).unwrap()
}

fn offload_binary() -> Vec<u8> {
    std::fs::read(fixtures().join("offload/single.offbin")).unwrap()
}

/// Every CUDA fixture cuobjdump was run on: host objects and libraries,
/// raw fat binaries, an OffloadBinary.
fn cuda_fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures().join("cuda"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".cuobjdump.txt").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// A valid hit: offset, kind, extent.
type Hit = (u64, &'static str, usize);

/// The valid hits of a scan of `data`, and the offsets of the rejected ones.
fn hits(data: &[u8]) -> (Vec<Hit>, Vec<u64>) {
    let (mut valid, mut rejected) = (Vec::new(), Vec::new());
    for found in scan(data) {
        match found {
            Found::Container(at, c) => valid.push((
                at,
                match c {
                    Container::Bundle(_) => "bundle",
                    Container::Compressed(_) => "compressed",
                    Container::OffloadBinary(_) => "binary",
                },
                c.data().len(),
            )),
            Found::CudaFatbin(at, fatbin) => {
                assert_eq!(
                    fatbin.data().as_ptr(),
                    data[at as usize..].as_ptr(),
                    "a fat binary's bytes are the buffer's"
                );
                valid.push((at, "fatbin", fatbin.data().len()));
            }
            Found::Rejected(at, _) => rejected.push(at),
        }
    }
    (valid, rejected)
}

fn fatbin_hits(data: &[u8]) -> Vec<(u64, usize)> {
    hits(data)
        .0
        .into_iter()
        .filter(|h| h.1 == "fatbin")
        .map(|(at, _, len)| (at, len))
        .collect()
}

/// Xorshift bytes: no magic of any kind in the sizes used here (checked).
fn random(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

fn shifted(hits: &[Hit], by: usize) -> Vec<Hit> {
    hits.iter()
        .map(|&(at, kind, len)| (at + by as u64, kind, len))
        .collect()
}

#[test]
fn scan_finds_every_fat_binary_cuobjdump_reads() {
    let names = cuda_fixtures();
    assert!(names.len() >= 30, "fixtures missing: {names:?}");
    let mut fatbins_seen = 0;
    for name in &names {
        let data = cuda(name);
        let mut expected: Vec<(u64, usize)> = host_fatbins(&data)
            .into_iter()
            .map(|h| (h.offset, h.fatbin.unwrap().data().len()))
            .collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(fatbin_hits(&data), expected, "{name}");
        fatbins_seen += expected.len();
    }
    assert!(fatbins_seen >= 35, "{fatbins_seen}");
    // Three back to back: each is reported, as the walker walks them.
    let three = cuda("raw-three-concatenated.fatbin");
    let walked: Vec<(u64, usize)> = fatbins(&three)
        .map(|f| f.unwrap())
        .map(|(at, f)| (at, f.data().len()))
        .collect();
    assert_eq!(walked.len(), 3);
    assert_eq!(fatbin_hits(&three), walked);
}

#[test]
fn scan_finds_the_fixtures_planted_at_odd_offsets_in_random_bytes() {
    let names = cuda_fixtures();
    // Each alone, at several odd offsets around the search's 64-byte steps
    // and a page: what it holds is found, shifted, and nothing else.
    let noise = random(70_000, 0x5eed);
    assert_eq!(hits(&noise), (vec![], vec![]));
    for name in &names {
        let file = cuda(name);
        let (alone, _) = hits(&file);
        for lead in [1usize, 63, 65, 4093, 65_537] {
            let mut data = noise[..lead].to_vec();
            data.extend_from_slice(&file);
            data.extend_from_slice(&noise[lead..lead + 333]);
            assert_eq!(hits(&data).0, shifted(&alone, lead), "{name} at {lead}");
        }
    }
    // All of them in one buffer, each after an odd run of random bytes.
    let mut data = Vec::new();
    let mut expected = Vec::new();
    for (i, name) in names.iter().enumerate() {
        data.extend_from_slice(&random(1 + 2 * i + (i * 997) % 4099, i as u64));
        let file = cuda(name);
        expected.extend(shifted(&hits(&file).0, data.len()));
        data.extend_from_slice(&file);
    }
    assert_eq!(hits(&data).0, expected);
}

/// Where `inner` starts in `outer`.
fn find(outer: &[u8], inner: &[u8]) -> usize {
    outer.windows(inner.len()).position(|w| w == inner).unwrap()
}

/// The first stored entry of `fatbin` at least `len` bytes long: where its
/// payload starts (in the fat binary).
fn stored_payload(fatbin: &[u8], len: usize) -> usize {
    let fatbin = Fatbin::parse(fatbin).unwrap();
    let entry = fatbin
        .entries()
        .find(|e| e.compression() == Compression::None && e.payload().len() >= len)
        .unwrap();
    entry.offset() as usize + entry.header_bytes().len()
}

#[test]
fn scan_finds_fat_binaries_and_containers_in_each_other() {
    // A fat binary in an OffloadBinary's image (clang's fixture: three
    // OffloadBinaries back to back, a cubin, a fat binary, PTX): all four.
    let offbin = cuda("offload-cubin-fatbin-ptx.offbin");
    let (found, _) = hits(&offbin);
    let kinds: Vec<&str> = found.iter().map(|h| h.1).collect();
    assert_eq!(kinds, ["binary", "binary", "fatbin", "binary"]);
    let image = found[1].0..found[1].0 + found[1].2 as u64;
    assert!(image.contains(&found[2].0) && found[2].0 < found[3].0);

    // A fat binary and a bundle in the stored entries of a fat binary
    // whose entries are all stored: found, as in an OffloadBinary's image.
    let mut outer = cuda("raw-stored.fatbin");
    let inner = cuda("raw-lz4.fatbin");
    let binary = offload_binary();
    let at = stored_payload(&outer, inner.len() + binary.len() + 8) + 3;
    outer[at..at + inner.len()].copy_from_slice(&inner);
    let next = at + inner.len() + 5;
    outer[next..next + binary.len()].copy_from_slice(&binary);
    let (found, _) = hits(&outer);
    assert_eq!(
        found,
        [
            (0, "fatbin", outer.len()),
            (at as u64, "fatbin", inner.len()),
            (next as u64, "binary", binary.len()),
        ]
    );

    // A fat binary in a bundle's entry: both, and the fat binary planted in
    // the random bytes after the bundle too.
    let mut bundle = bundle();
    let zstd = cuda("raw-zstd.fatbin");
    let at = bundle.len() - zstd.len() - 101;
    bundle[at..at + zstd.len()].copy_from_slice(&zstd);
    let lead = 4097;
    let mut data = random(lead, 7);
    data.extend_from_slice(&bundle);
    let after = data.len() + 9;
    data.extend_from_slice(&random(9, 8));
    data.extend_from_slice(&zstd);
    assert_eq!(
        hits(&data).0,
        [
            ((lead) as u64, "bundle", bundle.len()),
            ((lead + at) as u64, "fatbin", zstd.len()),
            (after as u64, "fatbin", zstd.len()),
        ]
    );
}

/// A damage: what it is, how it is done, where its error is located in the
/// fat binary and in which entry.
type Damage = (&'static str, Box<dyn Fn(&mut Vec<u8>)>, u64, Option<u64>);

#[test]
fn damaged_fat_binaries_are_rejected_with_located_errors() {
    let good = cuda("raw-default.fatbin");
    let lead = 1001;
    // Each damage at an odd offset, followed by a valid OffloadBinary: the
    // error is located in the buffer, and the scan goes on.
    let cases: [Damage; 5] = [
        ("header size 17", Box::new(|f| f[6] = 17), 6, None),
        (
            "fat size past the end",
            Box::new(|f| f[8..16].copy_from_slice(&(1u64 << 40).to_le_bytes())),
            8,
            None,
        ),
        (
            "entry header size 63",
            Box::new(|f| f[16 + 4..16 + 8].copy_from_slice(&63u32.to_le_bytes())),
            16 + 4,
            Some(0),
        ),
        (
            "payload past the fat binary",
            Box::new(|f| f[16 + 8..16 + 16].copy_from_slice(&(1u64 << 20).to_le_bytes())),
            16 + 8,
            Some(0),
        ),
        (
            "compressed size past the payload",
            Box::new(|f| {
                f[16 + 0x29] |= 0x20; // flag 0x2000: LZ4
                f[16 + 0x10..16 + 0x14].copy_from_slice(&100_000u32.to_le_bytes());
            }),
            16 + 0x10,
            Some(0),
        ),
    ];
    let binary = offload_binary();
    for (what, damage, field, entry) in &cases {
        let mut fatbin = good.clone();
        damage(&mut fatbin);
        let mut data = random(lead, 3);
        data.extend_from_slice(&fatbin);
        data.extend_from_slice(&binary);
        let found: Vec<Found<'_>> = scan(&data).collect();
        let [Found::Rejected(at, error), Found::Container(next, _)] = found.as_slice() else {
            panic!("{what}: {found:?}");
        };
        assert_eq!(*at, lead as u64, "{what}");
        assert_eq!(error.offset(), lead as u64 + field, "{what}: {error}");
        assert_eq!(error.entry(), *entry, "{what}: {error}");
        assert_eq!(*next as usize, lead + good.len(), "{what}");
    }
    // Cut by the end of the buffer at every length up to the whole: rejected
    // (truncated) at the magic, never a hit past it, never a panic.
    for cut in 4..good.len() {
        let mut data = random(lead, 4);
        data.extend_from_slice(&good[..cut]);
        let found: Vec<Found<'_>> = scan(&data).collect();
        match found.as_slice() {
            [Found::Rejected(at, error)] => {
                assert_eq!(*at, lead as u64);
                let truncated = matches!(
                    error.kind(),
                    ErrorKind::Truncated { .. }
                        | ErrorKind::OutOfBounds {
                            field: Field::FatbinHeader,
                            ..
                        }
                );
                assert!(truncated, "cut at {cut}: {error}");
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

/// A fat binary of entries (flags, payload as stored, size decoded), each
/// a 64-byte header (kind ELF, sm_80) and its payload padded to 8.
fn fatbin_of(entries: &[(u64, &[u8], u64)]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(flags, payload, decoded) in entries {
        let padded = payload.len().div_ceil(8) * 8;
        let compressed = if flags & (FLAG_LZ4 | FLAG_ZSTD) != 0 {
            payload.len() as u32
        } else {
            0
        };
        let mut header = [0u8; 64];
        header[0..2].copy_from_slice(&2u16.to_le_bytes());
        header[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        header[4..8].copy_from_slice(&64u32.to_le_bytes());
        header[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        header[0x10..0x14].copy_from_slice(&compressed.to_le_bytes());
        header[0x1C..0x20].copy_from_slice(&80u32.to_le_bytes());
        header[0x28..0x30].copy_from_slice(&(flags | 0x11).to_le_bytes());
        let decoded = if compressed != 0 { decoded } else { 0 };
        header[0x38..0x40].copy_from_slice(&decoded.to_le_bytes());
        body.extend_from_slice(&header);
        body.extend_from_slice(payload);
        body.resize(body.len() + padded - payload.len(), 0);
    }
    let mut fatbin = Vec::new();
    fatbin.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
    fatbin.extend_from_slice(&1u16.to_le_bytes());
    fatbin.extend_from_slice(&16u16.to_le_bytes());
    fatbin.extend_from_slice(&(body.len() as u64).to_le_bytes());
    fatbin.extend_from_slice(&body);
    fatbin
}

/// An LZ4 block of literals only: `data` verbatim after a token and its
/// length bytes (what any LZ4 writer may emit for data it cannot match).
fn lz4_literals(data: &[u8]) -> Vec<u8> {
    let mut block = vec![0xF0];
    let mut rest = data.len() - 15;
    while rest >= 255 {
        block.push(255);
        rest -= 255;
    }
    block.push(rest as u8);
    block.extend_from_slice(data);
    block
}

/// A zstd frame of one raw block: `data` verbatim after a frame header
/// (single segment, two-byte content size) and a block header.
fn zstd_raw(data: &[u8]) -> Vec<u8> {
    assert!((256..65_792).contains(&data.len()));
    let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0x60];
    frame.extend_from_slice(&((data.len() - 256) as u16).to_le_bytes());
    let block = (data.len() as u32) << 3 | 1;
    frame.extend_from_slice(&block.to_le_bytes()[..3]);
    frame.extend_from_slice(data);
    frame
}

#[test]
fn a_container_inside_a_compressed_entry_is_not_reported_twice() {
    // A compressed entry whose stream holds a bundle verbatim (an LZ4 block
    // of literals, a zstd raw block): it decodes to the bundle, and scan
    // reports the fat binary alone, not the bundle inside its stream.
    let bundle = bundle();
    let decoded = bundle.len() as u64;
    for (flags, stream) in [
        (FLAG_LZ4, lz4_literals(&bundle)),
        (FLAG_ZSTD, zstd_raw(&bundle)),
    ] {
        let fatbin = fatbin_of(&[(flags, &stream, decoded)]);
        let parsed = Fatbin::parse(&fatbin).unwrap();
        let entry = parsed.entries().next().unwrap();
        assert_eq!(
            entry.decompress(&DecompressOptions::default()).unwrap(),
            bundle,
            "{flags:#x}"
        );
        let lead = 77;
        let mut data = random(lead, 5);
        data.extend_from_slice(&fatbin);
        data.extend_from_slice(&random(40, 6));
        let inside = lead + find(&fatbin, &bundle);
        assert!(scan(&data[inside..]).any(|f| matches!(f, Found::Container(0, _))));
        assert_eq!(
            hits(&data),
            (vec![(lead as u64, "fatbin", fatbin.len())], vec![]),
            "{flags:#x}"
        );
    }
}

#[test]
fn what_scan_skips_in_a_fat_binary_ends_with_its_last_compressed_entry() {
    // Entries: stored (an OffloadBinary inside), LZ4 (a bundle inside its
    // literals), stored (an OffloadBinary inside). Scan skips from the magic
    // to the end of the LZ4 entry, the first stored entry with it (the
    // documented cost of a three-offset cursor), and searches the last.
    let binary = offload_binary();
    let bundle = bundle();
    let stream = lz4_literals(&bundle);
    let fatbin = fatbin_of(&[
        (0, &binary, 0),
        (FLAG_LZ4, &stream, bundle.len() as u64),
        (0, &binary, 0),
    ]);
    let last = fatbin.len() - binary.len().div_ceil(8) * 8;
    assert_eq!(&fatbin[last..last + binary.len()], binary.as_slice());
    assert_eq!(
        hits(&fatbin).0,
        [
            (0, "fatbin", fatbin.len()),
            (last as u64, "binary", binary.len())
        ]
    );
    // Stored entries only: all searched.
    let stored = fatbin_of(&[(0, &binary, 0), (0, &bundle, 0)]);
    let (found, _) = hits(&stored);
    assert_eq!(
        found.iter().map(|h| h.1).collect::<Vec<_>>(),
        ["fatbin", "binary", "bundle"]
    );
}
