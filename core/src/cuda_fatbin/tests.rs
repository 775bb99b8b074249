//! The reader against fat binaries NVIDIA's `fatbinary` 13.5 wrote
//! (tests/fixtures/cuda/regenerate.sh), and against damaged copies of them.

extern crate std;
use std::prelude::rust_2021::*;
use std::vec;

use super::*;
use crate::compressed::DecompressOptions;

const STORED: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-stored.fatbin");
const ZSTD: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-zstd.fatbin");
const LZ4: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-lz4.fatbin");
const IDENT: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-ident-opts-debug.fatbin");
const VARIANTS: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-arch-variants.fatbin");
const CONCAT: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-concat-zstd.fatbin");
const CONCAT_LZ4: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-concat-lz4.fatbin");
const THREE: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-three-concatenated.fatbin");
const CUBIN80: &[u8] = include_bytes!("../../../tests/fixtures/cuda/inputs/k80.cubin");
const CUBIN90A: &[u8] = include_bytes!("../../../tests/fixtures/cuda/inputs/k90a.cubin");

fn entries(data: &[u8]) -> Vec<FatbinEntry<'_>> {
    Fatbin::parse(data).unwrap().entries().collect()
}

/// What cuobjdump extracts from an entry, decoded if need be.
fn image(entry: &FatbinEntry<'_>) -> Vec<u8> {
    let decoded = entry.decompress(&DecompressOptions::default()).unwrap();
    entry.image(&decoded).unwrap().to_vec()
}

#[test]
fn stored_header_and_entries() {
    let fatbin = Fatbin::parse(STORED).unwrap();
    assert_eq!(
        (fatbin.version(), fatbin.header_size(), fatbin.fat_size()),
        (1, 16, STORED.len() as u64 - 16)
    );
    let e = entries(STORED);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0].kind(), e[0].sm().to_string()),
        (EntryKind::Elf, "sm_80".into())
    );
    assert_eq!((e[0].version(), e[0].header_size()), (0x0101, 64));
    assert_eq!(e[0].flags(), FLAG_64BIT | FLAG_HOST_LINUX);
    assert_eq!(e[0].code_version(), (1, 8));
    assert_eq!(e[0].compression(), Compression::None);
    assert_eq!((e[0].options(), e[0].identifier()), (None, None));
    // The payload is padded to 8; the image is the cubin exactly.
    assert_eq!(e[0].payload_size(), 9312);
    assert_eq!(image(&e[0]), CUBIN80);
    assert_eq!((e[1].kind(), e[1].code_version()), (EntryKind::Ptx, (8, 8)));
    assert_eq!(
        (e[1].options_offset(), e[1].options()),
        (0x40, Some(&b""[..]))
    );
    let ptx = image(&e[1]);
    assert!(ptx.starts_with(b"\n\n\n\n") && ptx.ends_with(b"}\n"));
    assert!(!ptx.contains(&0));
}

#[test]
fn zstd_and_lz4_decode_to_the_stored_images() {
    let stored: Vec<Vec<u8>> = entries(STORED).iter().map(image).collect();
    for (data, compression) in [(ZSTD, Compression::Zstd), (LZ4, Compression::Lz4)] {
        let e = entries(data);
        assert!(e.iter().all(|e| e.compression() == compression));
        let images: Vec<Vec<u8>> = e.iter().map(image).collect();
        assert_eq!(images, stored);
        // Into the caller's buffer, exactly the declared size.
        let mut out = vec![0; e[0].uncompressed_size() as usize + 5];
        let n = e[0]
            .decompress_into(&mut out, &DecompressOptions::default())
            .unwrap();
        assert_eq!(&out[..n], CUBIN80);
    }
}

#[test]
fn identifier_options_and_debug_flag() {
    let e = entries(IDENT);
    assert_eq!(e[0].identifier(), Some(&b"myident.cu"[..]));
    assert_ne!(e[0].flags() & FLAG_DEBUG, 0);
    assert_eq!(e[1].options(), Some(&b"-O3 -v"[..]));
}

#[test]
fn arch_and_family_variants() {
    let sms: Vec<String> = entries(VARIANTS)
        .iter()
        .map(|e| e.sm().to_string())
        .collect();
    assert_eq!(
        sms,
        [
            "sm_80", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103f", "sm_110", "sm_120",
            "sm_121a", "sm_90a", "sm_100f"
        ]
    );
    // sm_100+ ELF entries carry a binary options blob, kept as bytes.
    let e = entries(VARIANTS);
    assert_ne!(e[2].flags() & FLAG_BINARY_OPTIONS, 0);
    assert!(e[2].options().is_some_and(|o| !o.is_empty()));
}

#[test]
fn concat_members_slice_the_decoded_blob() {
    for (data, sms) in [
        (CONCAT, &["sm_80", "sm_90a", "sm_100", "sm_120"][..]),
        (CONCAT_LZ4, &["sm_80", "sm_90a"][..]),
    ] {
        let mut found = Vec::new();
        for entry in entries(data) {
            if entry.kind() != EntryKind::Concat {
                continue;
            }
            let decoded = entry.decompress(&DecompressOptions::default()).unwrap();
            for member in entry.members() {
                let bytes = member.data(&decoded).unwrap();
                found.push((
                    member.sm().to_string(),
                    image_of(member.kind(), bytes, true).unwrap().to_vec(),
                ));
            }
        }
        let names: Vec<&str> = found.iter().map(|(sm, _)| sm.as_str()).collect();
        assert_eq!(names, sms);
        assert_eq!(found[0].1, CUBIN80);
        assert_eq!(found[1].1, CUBIN90A);
    }
}

#[test]
fn back_to_back_with_zero_padding() {
    let mut data = THREE.to_vec();
    data.splice(STORED.len()..STORED.len(), [0u8; 8]);
    data.extend_from_slice(&[0; 16]);
    let offsets: Vec<u64> = fatbins(&data).map(|f| f.unwrap().0).collect();
    assert_eq!(
        offsets,
        [
            0,
            STORED.len() as u64 + 8,
            (STORED.len() + 8 + LZ4.len()) as u64
        ]
    );
    // Other bytes after a fat binary end the walk with a located error.
    data.extend_from_slice(b"junk");
    let last = fatbins(&data).last().unwrap().unwrap_err();
    assert_eq!(
        (last.kind(), last.offset()),
        (ErrorKind::NotFatbin, data.len() as u64 - 4)
    );
}

fn set_u32(data: &mut [u8], at: usize, value: u32) {
    data[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn set_u64(data: &mut [u8], at: usize, value: u64) {
    data[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn damaged_headers_are_located_errors() {
    let e = |data: &[u8]| Fatbin::parse(data).unwrap_err();
    assert_eq!(e(b"nope").kind(), ErrorKind::NotFatbin);
    let t = e(&STORED[..10]);
    assert!(matches!(
        t.kind(),
        ErrorKind::Truncated {
            field: Field::FatbinHeader,
            ..
        }
    ));
    // Cut inside the entries: the fat size runs past the end.
    let t = e(&STORED[..100]);
    assert!(matches!(
        t.kind(),
        ErrorKind::OutOfBounds {
            field: Field::FatbinHeader,
            ..
        }
    ));
    assert_eq!(t.offset(), 8);
    let mut d = STORED.to_vec();
    d[6] = 24;
    assert_eq!(
        e(&d).kind(),
        ErrorKind::BadHeaderSize {
            size: 24,
            expected: 16
        }
    );
    // A fat size that overflows with the header.
    let mut d = STORED.to_vec();
    set_u64(&mut d, 8, u64::MAX - 3);
    assert!(matches!(e(&d).kind(), ErrorKind::OutOfBounds { .. }));
    // An entry header size under 64, and one past the end.
    let mut d = STORED.to_vec();
    set_u32(&mut d, 16 + 4, 0);
    let err = e(&d);
    assert_eq!(
        (err.kind(), err.offset(), err.entry()),
        (
            ErrorKind::BadHeaderSize {
                size: 0,
                expected: 64
            },
            20,
            Some(0)
        )
    );
    let mut d = STORED.to_vec();
    set_u32(&mut d, 16 + 4, u32::MAX);
    assert!(matches!(
        e(&d).kind(),
        ErrorKind::OutOfBounds {
            field: Field::FatbinEntryExtension,
            ..
        }
    ));
    // A payload size past the end, and one that overflows.
    for size in [1 << 20, u64::MAX] {
        let mut d = STORED.to_vec();
        set_u64(&mut d, 16 + 8, size);
        let err = e(&d);
        assert!(matches!(
            err.kind(),
            ErrorKind::OutOfBounds {
                field: Field::FatbinPayload,
                ..
            }
        ));
        assert_eq!((err.offset(), err.entry()), (16 + 8, Some(0)));
    }
    // The second entry's payload ends short of the next: truncated header.
    let mut d = STORED.to_vec();
    let second = 16 + 64 + 9312;
    set_u64(&mut d, second + 8, 1880 - 8);
    let err = e(&d);
    assert!(matches!(
        err.kind(),
        ErrorKind::Truncated {
            field: Field::FatbinEntryHeader,
            ..
        }
    ));
    assert_eq!(err.entry(), Some(2));
    // Identifier and options outside the header.
    let mut d = STORED.to_vec();
    set_u32(&mut d, second + 0x24, 100);
    assert!(matches!(
        e(&d).kind(),
        ErrorKind::OutOfBounds {
            field: Field::FatbinIdentifier,
            ..
        }
    ));
    let mut d = STORED.to_vec();
    set_u32(&mut d, second + 0x40 + 4, 100);
    assert!(matches!(
        e(&d).kind(),
        ErrorKind::OutOfBounds {
            field: Field::FatbinOptions,
            ..
        }
    ));
}

#[test]
fn damaged_compressed_payloads_are_located_errors() {
    let options = DecompressOptions::default();
    let decode = |data: &[u8]| entries(data)[0].decompress(&options).unwrap_err();
    for data in [ZSTD, LZ4] {
        // A compressed size beyond the payload is refused by parsing.
        let mut d = data.to_vec();
        let payload = u32::from_le_bytes(d[16 + 8..16 + 12].try_into().unwrap());
        set_u32(&mut d, 16 + 0x10, payload + 1);
        let err = Fatbin::parse(&d).unwrap_err();
        assert!(matches!(
            err.kind(),
            ErrorKind::CompressedSizeTooLarge { .. }
        ));
        assert_eq!((err.offset(), err.entry()), (16 + 0x10, Some(0)));
        // Declared one byte too many, one too few.
        let declared = 9312;
        let mut d = data.to_vec();
        set_u64(&mut d, 16 + 0x38, declared + 1);
        let err = decode(&d);
        assert!(matches!(
            err.kind(),
            ErrorKind::DecompressedTooSmall { .. } | ErrorKind::ContentSizeMismatch { .. }
        ));
        assert_eq!(err.entry(), Some(0));
        let mut d = data.to_vec();
        set_u64(&mut d, 16 + 0x38, declared - 1);
        let err = decode(&d);
        assert!(matches!(
            err.kind(),
            ErrorKind::DecompressedTooLarge { .. } | ErrorKind::ContentSizeMismatch { .. }
        ));
        // A bomb: 1 TiB declared is refused before anything is allocated.
        let mut d = data.to_vec();
        set_u64(&mut d, 16 + 0x38, 1 << 40);
        assert!(matches!(
            decode(&d).kind(),
            ErrorKind::SizeLimitExceeded { .. }
        ));
        // Damaged bytes inside the stream.
        let mut d = data.to_vec();
        for b in &mut d[16 + 64 + 4..16 + 64 + 40] {
            *b = 0xFF;
        }
        let err = decode(&d);
        assert!(matches!(
            err.kind(),
            ErrorKind::CorruptLz4 { .. }
                | ErrorKind::CorruptStream { .. }
                | ErrorKind::DecompressedTooLarge { .. }
                | ErrorKind::DecompressedTooSmall { .. }
        ));
    }
    // The LZ4 decoder stops on a stream whose real output is short: the
    // zstd frame declares its own size, so cut the LZ4 block instead.
    let mut d = LZ4.to_vec();
    let compressed = u32::from_le_bytes(d[16 + 0x10..16 + 0x14].try_into().unwrap());
    set_u32(&mut d, 16 + 0x10, compressed - 40);
    let err = decode(&d);
    assert!(matches!(
        err.kind(),
        ErrorKind::CorruptLz4 { .. } | ErrorKind::DecompressedTooSmall { .. }
    ));
    // Both compression flags.
    let mut d = ZSTD.to_vec();
    d[16 + 0x29] |= 0x20;
    assert_eq!(
        entries(&d)[0].decompress(&options).unwrap_err().kind(),
        ErrorKind::AmbiguousCompression {
            flags: 0x8011 | 0x2000
        }
    );
    // A stored entry is not decoded.
    let mut out = [0u8; 8];
    assert_eq!(
        entries(STORED)[0]
            .decompress_into(&mut out, &options)
            .unwrap_err()
            .kind(),
        ErrorKind::NotCompressed
    );
}

#[test]
fn unknown_kinds_and_flags_are_kept() {
    let mut d = STORED.to_vec();
    d[16] = 0x77;
    d[16 + 0x2F] = 0x80;
    let e = entries(&d);
    assert_eq!(e[0].kind(), EntryKind::Unknown(0x77));
    assert_eq!(e[0].flags(), 0x8000_0000_0000_0011);
}

#[test]
fn sm_parsing() {
    let sm = |s| Sm::parse(s).map(|sm| sm.to_string());
    assert_eq!(sm("sm_90a").as_deref(), Some("sm_90a"));
    assert_eq!(sm("compute_100f").as_deref(), Some("sm_100f"));
    assert_eq!(sm("86").as_deref(), Some("sm_86"));
    assert_eq!(sm("sm_"), None);
    assert_eq!(sm("sm_9x"), None);
    assert_eq!(sm("sm_a"), None);
}

const WRITER_THREE: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-writer-three.fatbin");
const CUBIN100F: &[u8] = include_bytes!("../../../tests/fixtures/cuda/inputs/k100f.cubin");
const PTX80: &[u8] = include_bytes!("../../../tests/fixtures/cuda/inputs/k80.ptx");
#[cfg(feature = "zstd")]
const DEFAULT: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-default.fatbin");
#[cfg(feature = "zstd")]
const ZSTD_SIZE: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-zstd-size.fatbin");

fn new_entry<'a>(kind: EntryKind, sm: &str, data: &'a [u8]) -> NewEntry<'a> {
    NewEntry {
        kind,
        sm: Sm::parse(sm).unwrap(),
        data,
        identifier: None,
        options: None,
        debug: false,
    }
}

/// PTX as fatbinary stores it (it rewrites what it is given).
fn stored_ptx() -> Vec<u8> {
    image(&entries(STORED)[1])
}

#[test]
fn writer_is_byte_identical_to_fatbinary() {
    let ptx = stored_ptx();
    let written = write_fatbin(
        &[
            new_entry(EntryKind::Elf, "sm_90a", CUBIN90A),
            new_entry(EntryKind::Ptx, "sm_80", &ptx),
            new_entry(EntryKind::Elf, "sm_100f", CUBIN100F),
        ],
        &WriteOptions::STORED,
    )
    .unwrap();
    assert_eq!(written, WRITER_THREE);
    let written = write_fatbin(
        &[
            new_entry(EntryKind::Elf, "sm_80", CUBIN80),
            new_entry(EntryKind::Ptx, "sm_80", &ptx),
        ],
        &WriteOptions::STORED,
    )
    .unwrap();
    assert_eq!(written, STORED);
}

#[test]
fn writer_identifier_options_and_debug_read_back() {
    let ptx = stored_ptx();
    let mut elf = new_entry(EntryKind::Elf, "sm_80", CUBIN80);
    elf.identifier = Some(b"myident.cu");
    elf.debug = true;
    let mut ptx_entry = new_entry(EntryKind::Ptx, "sm_80", &ptx);
    ptx_entry.identifier = Some(b"myident.cu");
    ptx_entry.options = Some(b"-O3 -v");
    ptx_entry.debug = true;
    let written = write_fatbin(&[elf, ptx_entry], &WriteOptions::STORED).unwrap();
    let e = entries(&written);
    let reference = entries(IDENT);
    for (ours, theirs) in e.iter().zip(&reference) {
        // fatbinary got the PTX unminified: only the PTX payload differs.
        assert_eq!(ours.header_bytes()[..8], theirs.header_bytes()[..8]);
        assert_eq!(ours.header_bytes()[16..], theirs.header_bytes()[16..]);
    }
    assert_eq!(e[0].header_bytes(), reference[0].header_bytes());
    assert_eq!(e[1].options(), Some(&b"-O3 -v"[..]));
}

#[test]
fn prune_keeps_exactly_the_requested_code() {
    let options = DecompressOptions::default();
    let fatbin = Fatbin::parse(CONCAT).unwrap();
    let keep = |_: EntryKind, sm: Sm| sm.number == 80 || sm.number == 120;
    let pruned = prune(&fatbin, &keep, &options).unwrap().unwrap();
    let mut kept = Vec::new();
    for entry in entries(&pruned) {
        let decoded = entry.decompress(&options).unwrap();
        if entry.kind() == EntryKind::Concat {
            for m in entry.members() {
                kept.push((
                    m.sm().to_string(),
                    image_of(m.kind(), m.data(&decoded).unwrap(), true)
                        .unwrap()
                        .to_vec(),
                ));
            }
        } else {
            kept.push((
                entry.sm().to_string(),
                entry.image(&decoded).unwrap().to_vec(),
            ));
        }
    }
    let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["sm_80", "sm_80", "sm_120"]);
    assert_eq!(kept[1].1, CUBIN80);
    // Keeping everything changes nothing.
    assert_eq!(prune(&fatbin, &|_, _| true, &options).unwrap(), None);
}

#[test]
fn prune_in_place_keeps_offsets_and_zero_fills() {
    let options = DecompressOptions::default();
    let mut section = THREE.to_vec();
    let keep = |kind: EntryKind, _: Sm| kind == EntryKind::Ptx;
    assert_eq!(prune_in_place(&mut section, &keep, &options).unwrap(), 3);
    assert_eq!(section.len(), THREE.len());
    let found: Vec<(u64, usize)> = fatbins(&section)
        .map(|f| f.unwrap())
        .map(|(at, f)| (at, f.entries().count()))
        .collect();
    assert_eq!(
        found,
        [
            (0, 1),
            (STORED.len() as u64, 1),
            ((STORED.len() + LZ4.len()) as u64, 1)
        ]
    );
}

#[test]
fn selection_follows_the_documented_rule_from_sm_70_to_sm_120() {
    let ptx = stored_ptx();
    let entry = |kind, sm| {
        new_entry(
            kind,
            sm,
            if kind == EntryKind::Ptx {
                &ptx[..]
            } else {
                CUBIN80
            },
        )
    };
    let written = write_fatbin(
        &[
            entry(EntryKind::Elf, "sm_70"),
            entry(EntryKind::Elf, "sm_80"),
            entry(EntryKind::Elf, "sm_86"),
            entry(EntryKind::Elf, "sm_90a"),
            entry(EntryKind::Elf, "sm_100f"),
            entry(EntryKind::Elf, "sm_100a"),
            entry(EntryKind::Ptx, "sm_75"),
            entry(EntryKind::Ptx, "sm_90"),
            entry(EntryKind::Ptx, "sm_120a"),
        ],
        &WriteOptions::STORED,
    )
    .unwrap();
    let fatbin = Fatbin::parse(&written).unwrap();
    let chosen = |device: u32| {
        select_for_device(&fatbin, device).map(|c| {
            let kind = match c.kind {
                CudaMatch::Cubin => "cubin",
                CudaMatch::Ptx => "ptx",
            };
            std::format!("{kind} {}", c.sm)
        })
    };
    let cases: [(u32, Option<&str>); 16] = [
        (70, Some("cubin sm_70")),
        (72, Some("cubin sm_70")),
        (75, Some("cubin sm_70")),
        (80, Some("cubin sm_80")),
        (86, Some("cubin sm_86")),
        (87, Some("cubin sm_86")),
        (89, Some("cubin sm_86")),
        (90, Some("cubin sm_90a")),
        (100, Some("cubin sm_100a")),
        (101, Some("cubin sm_100f")),
        (103, Some("cubin sm_100f")),
        (110, Some("ptx sm_90")),
        (120, Some("ptx sm_120a")),
        (121, Some("ptx sm_90")),
        (61, None),
        (0, None),
    ];
    for (device, expected) in cases {
        assert_eq!(chosen(device).as_deref(), expected, "sm_{device}");
    }
    // Concat members are candidates too.
    let concat = Fatbin::parse(CONCAT).unwrap();
    let c = select_for_device(&concat, 90).unwrap();
    assert_eq!(
        (c.kind, c.sm.to_string(), c.member),
        (CudaMatch::Cubin, "sm_90a".into(), Some(1))
    );
    let c = select_for_device(&concat, 89).unwrap();
    assert_eq!(
        (c.kind, c.sm.to_string(), c.member),
        (CudaMatch::Cubin, "sm_80".into(), Some(0))
    );
}

#[test]
fn an_elf_entry_that_is_no_elf_is_refused_as_cuobjdump_does() {
    let mut d = STORED.to_vec();
    // Zero the cubin's file header: cuobjdump says "Invalid ELF".
    for b in &mut d[16 + 64..16 + 64 + 64] {
        *b = 0;
    }
    let e = entries(&d);
    let err = e[0].image(e[0].payload()).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.entry()),
        (ErrorKind::NotElf, 16 + 64, Some(0))
    );
    // A section table past the end of the payload is damage too, located
    // at the payload with how far the headers reach.
    let mut d = STORED.to_vec();
    d[16 + 64 + 0x28..16 + 64 + 0x30].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e = entries(&d);
    let err = e[0].image(e[0].payload()).unwrap_err();
    assert_eq!((err.offset(), err.entry()), (16 + 64, Some(0)));
    assert!(matches!(
        err.kind(),
        ErrorKind::OutOfBounds { field: crate::Field::ElfImage, offset: 0, size, len: 9312 }
            if size == (1u64 << 40) + 20 * 64
    ));
}

/// k80.cubin with its last section (`SHT_NOBITS`, at the section header
/// table) given `sh_type` and a size past the end of the file, as NVIDIA's
/// linker writes `.nv_debug.shared` in bitsandbytes' relocatable cubins.
fn cubin_with_last_section(sh_type: u32, machine: u16) -> Vec<u8> {
    let mut cubin = CUBIN80.to_vec();
    let last = 0x1e80 + 19 * 64;
    set_u32(&mut cubin, last + 4, sh_type);
    set_u64(&mut cubin, last + 32, 0x154a67);
    cubin[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
    cubin
}

#[test]
fn memory_reservations_hold_no_file_bytes_in_a_cubin() {
    let with = |compressed: bool, cubin: &[u8]| {
        let options = WriteOptions {
            compress_all: compressed,
            ..if compressed {
                WriteOptions::FATBINARY
            } else {
                WriteOptions::STORED
            }
        };
        let fatbin = write_fatbin(&[new_entry(EntryKind::Elf, "sm_80", cubin)], &options).unwrap();
        let entry = entries(&fatbin)[0];
        assert_eq!(entry.compression() != Compression::None, compressed);
        let decoded = entry.decompress(&DecompressOptions::default()).unwrap();
        entry.image(&decoded).map(<[u8]>::to_vec)
    };
    for sh_type in [0x7000_0007, 0x7000_0009, 0x7000_000a, 0x7000_0015] {
        let cubin = cubin_with_last_section(sh_type, crate::elf::EM_CUDA);
        // Writing compressed entries needs libzstd.
        for compressed in [false, cfg!(feature = "zstd")] {
            assert_eq!(with(compressed, &cubin).unwrap(), cubin, "{sh_type:#x}");
        }
    }
    // The same types outside a cubin, and other types in one, hold bytes:
    // a stored image they would run past is damaged...
    for (sh_type, machine) in [(0x7000_000a, 62), (0x7000_0008, crate::elf::EM_CUDA)] {
        let cubin = cubin_with_last_section(sh_type, machine);
        let err = with(false, &cubin).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::OutOfBounds {
                    field: crate::Field::ElfImage,
                    size: 0x15_68e7,
                    ..
                }
            ),
            "{err:?}"
        );
        // ...but a decoded one has its declared size, which bounds it.
        if cfg!(feature = "zstd") {
            assert_eq!(with(true, &cubin).unwrap(), cubin);
        }
    }
}

/// `fatbinary -64 --create=X --image3=kind=elf,sm=80,file=k80.cubin
/// --image3=kind=ptx,sm=80,file=k80.ptx` with the options given.
fn as_fatbinary(options: &WriteOptions) -> Vec<u8> {
    let entries = [
        new_entry(EntryKind::Elf, "sm_80", CUBIN80),
        new_entry(EntryKind::Ptx, "sm_80", PTX80),
    ];
    write_fatbin(&entries, options).unwrap()
}

#[test]
fn writer_rewrites_ptx_and_stores_as_fatbinary() {
    let none = WriteOptions {
        mode: CompressMode::None,
        ..WriteOptions::FATBINARY
    };
    assert_eq!(as_fatbinary(&none), STORED);
    let not = WriteOptions {
        compress: false,
        ..WriteOptions::FATBINARY
    };
    assert_eq!(as_fatbinary(&not), STORED);
}

#[test]
fn writer_lz4_is_byte_identical_to_fatbinary() {
    let speed = WriteOptions {
        mode: CompressMode::Speed,
        compress_all: true,
        ..WriteOptions::FATBINARY
    };
    assert_eq!(as_fatbinary(&speed), LZ4);
}

#[cfg(feature = "zstd")]
#[test]
fn writer_zstd_is_byte_identical_to_fatbinary() {
    assert_eq!(as_fatbinary(&WriteOptions::FATBINARY), DEFAULT);
    let all = WriteOptions {
        compress_all: true,
        ..WriteOptions::FATBINARY
    };
    assert_eq!(as_fatbinary(&all), ZSTD);
    let balance = WriteOptions {
        mode: CompressMode::Balance,
        ..all
    };
    assert_eq!(as_fatbinary(&balance), ZSTD);
    // -c compresses cubins as --compress-all does.
    let relocatable = WriteOptions {
        relocatable: true,
        ..WriteOptions::FATBINARY
    };
    assert_eq!(as_fatbinary(&relocatable), ZSTD);
}

#[cfg(feature = "zstd")]
#[test]
fn writer_size_mode_decodes_to_fatbinarys_images() {
    let size = WriteOptions {
        mode: CompressMode::Size,
        ..WriteOptions::FATBINARY
    };
    let written = as_fatbinary(&size);
    let (ours, theirs) = (entries(&written), entries(ZSTD_SIZE));
    assert_eq!(ours.len(), theirs.len());
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(image(a), image(b));
        assert_eq!(a.flags(), b.flags());
        assert_eq!(a.uncompressed_size(), b.uncompressed_size());
        assert_eq!(a.header_size(), b.header_size());
    }
}

#[test]
fn writer_compresses_as_fatbinary_chooses() {
    let elf = new_entry(EntryKind::Elf, "sm_80", CUBIN80);
    let ptx = new_entry(EntryKind::Ptx, "sm_80", PTX80);
    let debug = NewEntry { debug: true, ..elf };
    let o = WriteOptions::FATBINARY;
    assert_eq!(o.compression(&elf), Compression::None);
    assert_eq!(o.compression(&ptx), Compression::Zstd);
    assert_eq!(o.compression(&debug), Compression::Zstd);
    let speed = WriteOptions {
        mode: CompressMode::Speed,
        ..o
    };
    assert_eq!(speed.compression(&elf), Compression::None);
    assert_eq!(speed.compression(&ptx), Compression::Lz4);
    let size = WriteOptions {
        mode: CompressMode::Size,
        ..o
    };
    assert_eq!(size.compression(&elf), Compression::Zstd);
    let off = WriteOptions {
        compress: false,
        compress_all: true,
        ..o
    };
    assert_eq!(off.compression(&ptx), Compression::None);
    assert_eq!(CompressMode::from_name("speed"), Some(CompressMode::Speed));
    assert_eq!(CompressMode::from_name("fast"), None);
}

#[test]
fn prune_fatbins_prunes_each_of_several() {
    let options = DecompressOptions::default();
    let keep = |kind: EntryKind, sm: Sm| kind == EntryKind::Elf && sm.number == 80;
    let pruned = prune_fatbins(THREE, &keep, &options).unwrap();
    let found: Vec<_> = fatbins(&pruned).map(|f| f.unwrap().1).collect();
    assert_eq!(found.len(), 3);
    for fatbin in &found {
        let kinds: Vec<_> = fatbin.entries().map(|e| e.kind()).collect();
        assert_eq!(kinds, [EntryKind::Elf]);
    }
    // Keeping everything gives the input back; bytes that are no fat binary
    // are the error.
    assert_eq!(prune_fatbins(THREE, &|_, _| true, &options).unwrap(), THREE);
    assert!(prune_fatbins(b"not a fat binary", &keep, &options).is_err());
}
