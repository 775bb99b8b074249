//! Compressed bundles: header fields of every version, round trips through
//! both methods and both zstd decoders, one test per malformed class, the
//! bomb, and the walker over containers laid back to back.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use clangoffload::bundle::write_bundle;
use clangoffload::compressed::{
    compress, truncated_md5, CompressOptions, StreamFault, ZstdDecoder, COMPRESSED_MAGIC,
};
use clangoffload::{
    Bundle, CompressedBundle, CompressionMethod, Container, Containers, DecompressOptions,
    ErrorKind, Field, Limits,
};

const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu-";
const DEV: &[u8] = b"hipv4-amdgcn-amd-amdhsa--gfx906";

/// A bundle with compressible payloads.
fn sample_bundle(seed: u32) -> Vec<u8> {
    let code: Vec<u8> = (0..60_000u32)
        .flat_map(|i| ((i / 13) ^ seed).to_le_bytes())
        .collect();
    write_bundle(&[(HOST, b""), (DEV, &code)], 4096).unwrap()
}

/// The methods this build can write.
fn methods() -> Vec<CompressionMethod> {
    let mut methods = vec![CompressionMethod::Zlib];
    if cfg!(feature = "zstd") {
        methods.push(CompressionMethod::Zstd);
    }
    methods
}

/// The zstd decoders this build has.
fn decoders() -> Vec<ZstdDecoder> {
    let mut decoders = vec![ZstdDecoder::Ruzstd];
    if cfg!(feature = "zstd") {
        decoders.push(ZstdDecoder::Libzstd);
    }
    decoders
}

fn options(decoder: ZstdDecoder) -> DecompressOptions {
    DecompressOptions {
        zstd_decoder: decoder,
        ..DecompressOptions::default()
    }
}

fn ccob(bundle: &[u8], version: u16, method: CompressionMethod) -> Vec<u8> {
    compress(
        bundle,
        &CompressOptions {
            version,
            method,
            level: None,
        },
    )
    .unwrap()
}

/// A version 1 container around a compressed stream.
fn v1(method: u16, uncompressed: u32, hash: u64, stream: &[u8]) -> Vec<u8> {
    let mut out = COMPRESSED_MAGIC.to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&method.to_le_bytes());
    out.extend_from_slice(&uncompressed.to_le_bytes());
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(stream);
    out
}

/// Rewrites a v3 container's u64 field at `at`.
fn set_u64(data: &mut [u8], at: usize, value: u64) {
    data[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn decompress_err(data: &[u8], options: &DecompressOptions) -> ErrorKind {
    CompressedBundle::parse(data)
        .unwrap()
        .decompress(options)
        .expect_err("must be rejected")
        .kind()
}

#[test]
fn every_method_version_and_decoder_round_trips() {
    let bundle = sample_bundle(1);
    for method in methods() {
        for version in [2, 3] {
            let data = ccob(&bundle, version, method);
            let c = CompressedBundle::parse(&data).unwrap();
            assert_eq!(c.version(), version);
            assert_eq!(c.method(), method);
            assert_eq!(c.total_size(), Some(data.len() as u64));
            assert_eq!(c.uncompressed_size(), bundle.len() as u64);
            assert_eq!(c.hash(), truncated_md5(&bundle));
            assert_eq!(c.header_len(), if version == 2 { 24 } else { 32 });
            assert!(c.ratio() > 2.0, "{method} v{version}: {}", c.ratio());
            for decoder in decoders() {
                assert_eq!(c.decompress(&options(decoder)).unwrap(), bundle);
                let mut out = vec![0xaa; bundle.len() + 10];
                assert_eq!(
                    c.decompress_into(&mut out, &options(decoder)),
                    Ok(bundle.len())
                );
                assert_eq!(&out[..bundle.len()], &bundle[..]);
                assert_eq!(&out[bundle.len()..], &[0xaa; 10]);
            }
        }
    }
}

#[test]
fn the_hash_is_the_low_half_of_md5_little_endian() {
    // MD5("") = d41d8cd98f00b204 e9800998ecf8427e
    assert_eq!(truncated_md5(b""), 0x04b2_008f_d98c_1dd4);
}

#[test]
fn version_one_runs_to_the_end_and_stream_len_finds_the_end() {
    let bundle = sample_bundle(2);
    for method in methods() {
        let v3 = ccob(&bundle, 3, method);
        let stream = &v3[32..];
        let mut data = v1(
            method.raw(),
            bundle.len() as u32,
            truncated_md5(&bundle),
            stream,
        );
        let c = CompressedBundle::parse(&data).unwrap();
        assert_eq!((c.version(), c.total_size(), c.header_len()), (1, None, 20));
        assert_eq!(c.decompress(&DecompressOptions::default()).unwrap(), bundle);
        data.extend_from_slice(&[0; 100]);
        let c = CompressedBundle::parse(&data).unwrap();
        assert_eq!(c.compressed().len(), stream.len() + 100);
        assert_eq!(c.stream_len(), Ok(20 + stream.len() as u64));
    }
}

#[test]
fn the_container_ends_at_the_total_size() {
    let bundle = sample_bundle(3);
    let mut data = ccob(&bundle, 3, CompressionMethod::Zlib);
    let len = data.len();
    data.extend_from_slice(b"next container");
    let c = CompressedBundle::parse(&data).unwrap();
    assert_eq!(c.data().len(), len);
    assert_eq!(c.decompress(&DecompressOptions::default()).unwrap(), bundle);
}

#[test]
fn a_wrong_hash_is_refused_unless_verification_is_off() {
    let bundle = sample_bundle(4);
    for method in methods() {
        let mut data = ccob(&bundle, 3, method);
        data[24] ^= 1;
        let stored = u64::from_le_bytes(data[24..32].try_into().unwrap());
        assert_eq!(
            decompress_err(&data, &DecompressOptions::default()),
            ErrorKind::HashMismatch {
                stored,
                computed: truncated_md5(&bundle)
            }
        );
        let lax = DecompressOptions {
            verify_hash: false,
            ..DecompressOptions::default()
        };
        assert_eq!(
            CompressedBundle::parse(&data)
                .unwrap()
                .decompress(&lax)
                .unwrap(),
            bundle
        );
    }
}

#[test]
fn unknown_versions_and_methods_are_named() {
    let mut data = ccob(&sample_bundle(5), 3, CompressionMethod::Zlib);
    for version in [0u16, 4, 0xffff] {
        data[4..6].copy_from_slice(&version.to_le_bytes());
        let err = CompressedBundle::parse(&data).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnsupportedVersion { version });
        assert_eq!(err.offset(), 4);
    }
    data[4..6].copy_from_slice(&3u16.to_le_bytes());
    data[6..8].copy_from_slice(&7u16.to_le_bytes());
    let c = CompressedBundle::parse(&data).unwrap();
    assert_eq!(c.method(), CompressionMethod::Unknown(7));
    assert_eq!(
        decompress_err(&data, &DecompressOptions::default()),
        ErrorKind::UnknownMethod { method: 7 }
    );
}

#[test]
fn a_truncated_header_names_the_field_it_ends_in() {
    let bundle = sample_bundle(6);
    let v3 = ccob(&bundle, 3, CompressionMethod::Zlib);
    let v2 = ccob(&bundle, 2, CompressionMethod::Zlib);
    let v1 = v1(0, bundle.len() as u32, 0, &v3[32..]);
    use Field::*;
    // (start, size, field) of every header field, per version.
    type Layout<'a> = (&'a [u8], &'a [(usize, usize, Field)]);
    let layouts: [Layout; 3] = [
        (
            &v1,
            &[
                (0, 4, CompressedMagic),
                (4, 2, Version),
                (6, 2, Method),
                (8, 4, UncompressedSize),
                (12, 8, Hash),
            ],
        ),
        (
            &v2,
            &[
                (0, 4, CompressedMagic),
                (4, 2, Version),
                (6, 2, Method),
                (8, 4, TotalSize),
                (12, 4, UncompressedSize),
                (16, 8, Hash),
            ],
        ),
        (
            &v3,
            &[
                (0, 4, CompressedMagic),
                (4, 2, Version),
                (6, 2, Method),
                (8, 8, TotalSize),
                (16, 8, UncompressedSize),
                (24, 8, Hash),
            ],
        ),
    ];
    for (data, fields) in layouts {
        let header_len = fields.last().map(|(start, size, _)| start + size).unwrap();
        for cut in 1..header_len {
            let err = CompressedBundle::parse(&data[..cut]).unwrap_err();
            let &(start, size, field) = fields
                .iter()
                .find(|(start, size, _)| start + size > cut)
                .unwrap();
            assert_eq!(
                (err.kind(), err.offset()),
                (
                    ErrorKind::Truncated {
                        field,
                        needed: size as u64,
                        available: (cut - start) as u64
                    },
                    start as u64
                ),
                "v{} cut at {cut}",
                data[4]
            );
        }
    }
}

#[test]
fn total_sizes_outside_the_header_and_input_are_refused() {
    let mut data = ccob(&sample_bundle(7), 3, CompressionMethod::Zlib);
    let len = data.len() as u64;
    set_u64(&mut data, 8, 31);
    assert_eq!(
        CompressedBundle::parse(&data).unwrap_err().kind(),
        ErrorKind::BadTotalSize {
            total: 31,
            header_len: 32
        }
    );
    set_u64(&mut data, 8, len + 1);
    let err = CompressedBundle::parse(&data).unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::Truncated {
            field: Field::CompressedData,
            needed: len + 1 - 32,
            available: len - 32
        }
    );
    assert_eq!(err.offset(), 32);
}

#[test]
fn declared_sizes_must_match_the_stream() {
    let bundle = sample_bundle(8);
    let n = bundle.len() as u64;
    for method in methods() {
        for decoder in decoders() {
            let opts = options(decoder);
            for declared in [n - 1, n + 1, 1, 0] {
                let mut data = ccob(&bundle, 3, method);
                set_u64(&mut data, 16, declared);
                let kind = decompress_err(&data, &opts);
                let expected = match method {
                    // The frame header records the real size: refused before decoding.
                    CompressionMethod::Zstd => {
                        ErrorKind::ContentSizeMismatch { declared, frame: n }
                    }
                    _ if declared < n => ErrorKind::DecompressedTooLarge { declared },
                    _ => ErrorKind::DecompressedTooSmall {
                        declared,
                        actual: n,
                    },
                };
                assert_eq!(kind, expected, "{method} declared {declared}");
            }
        }
    }
}

#[test]
fn sizes_over_the_limit_are_refused_before_anything_is_allocated() {
    let mut data = ccob(&sample_bundle(9), 3, CompressionMethod::Zlib);
    for declared in [1u64 << 63, 64 << 30, 1 << 40, (1 << 30) + 1] {
        set_u64(&mut data, 16, declared);
        let err = CompressedBundle::parse(&data)
            .unwrap()
            .decompress(&DecompressOptions::default())
            .unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::SizeLimitExceeded {
                size: declared,
                limit: Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE
            }
        );
        assert_eq!(err.offset(), 16);
    }
    let small = DecompressOptions {
        limits: Limits {
            max_uncompressed_size: 1000,
        },
        ..DecompressOptions::default()
    };
    let data = ccob(&sample_bundle(9), 2, CompressionMethod::Zlib);
    assert!(matches!(
        decompress_err(&data, &small),
        ErrorKind::SizeLimitExceeded { limit: 1000, .. }
    ));
}

#[test]
fn a_caller_buffer_too_small_is_refused() {
    let bundle = sample_bundle(10);
    let data = ccob(&bundle, 3, CompressionMethod::Zlib);
    let mut out = vec![0; bundle.len() - 1];
    let err = CompressedBundle::parse(&data)
        .unwrap()
        .decompress_into(&mut out, &DecompressOptions::default())
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::OutputTooSmall {
            needed: bundle.len() as u64,
            available: bundle.len() as u64 - 1
        }
    );
}

fn corrupt(kind: ErrorKind) -> Option<(CompressionMethod, StreamFault)> {
    match kind {
        ErrorKind::CorruptStream { method, fault } => Some((method, fault)),
        _ => None,
    }
}

#[test]
fn truncated_garbage_and_mismatched_streams_are_corrupt() {
    let bundle = sample_bundle(11);
    for method in methods() {
        for decoder in decoders() {
            let opts = options(decoder);
            let good = ccob(&bundle, 3, method);
            // Truncated: cut the stream and the total size with it.
            let mut cut = good[..good.len() - 20].to_vec();
            let cut_len = cut.len() as u64;
            set_u64(&mut cut, 8, cut_len);
            let fault = corrupt(decompress_err(&cut, &opts)).unwrap();
            assert_eq!(
                fault,
                (method, StreamFault::Truncated),
                "{method} {decoder:?}"
            );
            // Garbage.
            let mut garbage = good.clone();
            for (i, b) in garbage[32..].iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(151) ^ 0x5a;
            }
            assert!(
                corrupt(decompress_err(&garbage, &opts)).is_some(),
                "{method}"
            );
            // Garbage after a valid frame header: the decoder itself must refuse.
            let mut body = good.clone();
            let mid = 32 + (good.len() - 32) / 2;
            for b in &mut body[mid..mid + 64] {
                *b ^= 0xa5;
            }
            let kind = decompress_err(&body, &opts);
            assert!(
                corrupt(kind).is_some() || matches!(kind, ErrorKind::HashMismatch { .. }),
                "{method} {decoder:?}: {kind:?}"
            );
            // Trailing bytes inside the total size.
            let mut trailing = good.clone();
            trailing.extend_from_slice(&[0; 3]);
            let total = trailing.len() as u64;
            set_u64(&mut trailing, 8, total);
            assert_eq!(
                corrupt(decompress_err(&trailing, &opts)),
                Some((method, StreamFault::TrailingBytes { len: 3 }))
            );
        }
        // The header names the other method.
        let mut swapped = ccob(&bundle, 3, method);
        let other = 1 - method.raw();
        swapped[6..8].copy_from_slice(&other.to_le_bytes());
        let kind = decompress_err(&swapped, &DecompressOptions::default());
        assert_eq!(
            corrupt(kind).map(|(m, _)| m),
            Some(CompressionMethod::from_raw(other)),
            "{kind:?}"
        );
    }
}

#[test]
fn a_compressed_bundle_inside_a_compressed_bundle_is_an_error() {
    let inner = ccob(&sample_bundle(12), 3, CompressionMethod::Zlib);
    let outer = ccob(&inner, 3, CompressionMethod::Zlib);
    assert_eq!(
        decompress_err(&outer, &DecompressOptions::default()),
        ErrorKind::NestedCompressedBundle
    );
}

/// A zstd frame of RLE blocks: `blocks` × 128 KiB of zeros in about
/// 4 × `blocks` bytes, with the content size recorded or not.
fn zstd_bomb(blocks: u32, record_size: bool) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
    let content = u64::from(blocks) * 128 * 1024;
    if record_size {
        frame.push(0xc0); // 8-byte content size, window descriptor follows
        frame.push(0x38); // window 128 KiB
        frame.extend_from_slice(&content.to_le_bytes());
    } else {
        frame.push(0x00);
        frame.push(0x38);
    }
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = (128 * 1024) << 3 | 1 << 1 | last;
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(0);
    }
    frame
}

fn v3_around(method: CompressionMethod, declared: u64, stream: &[u8]) -> Vec<u8> {
    let mut out = COMPRESSED_MAGIC.to_vec();
    out.extend_from_slice(&3u16.to_le_bytes());
    out.extend_from_slice(&method.raw().to_le_bytes());
    out.extend_from_slice(&(32 + stream.len() as u64).to_le_bytes());
    out.extend_from_slice(&declared.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(stream);
    out
}

#[test]
fn a_zstd_bomb_is_refused_whatever_it_declares() {
    // 24576 RLE blocks: 98 KB that inflate to 3 GiB.
    let bomb = zstd_bomb(24 * 1024, true);
    assert!(bomb.len() < 100_000);
    let three_gib = 3u64 << 30;
    let opts = DecompressOptions::default();
    // Declared honestly: over the limit.
    let honest = v3_around(CompressionMethod::Zstd, three_gib, &bomb);
    assert!(matches!(
        decompress_err(&honest, &opts),
        ErrorKind::SizeLimitExceeded { size, .. } if size == three_gib
    ));
    // Declared small: the frame header gives it away.
    let liar = v3_around(CompressionMethod::Zstd, 1 << 20, &bomb);
    assert_eq!(
        decompress_err(&liar, &opts),
        ErrorKind::ContentSizeMismatch {
            declared: 1 << 20,
            frame: three_gib
        }
    );
    // No content size in the frame: decoding stops at the declared 8 MiB.
    let quiet = v3_around(
        CompressionMethod::Zstd,
        8 << 20,
        &zstd_bomb(24 * 1024, false),
    );
    for decoder in decoders() {
        assert_eq!(
            decompress_err(&quiet, &options(decoder)),
            ErrorKind::DecompressedTooLarge { declared: 8 << 20 },
            "{decoder:?}"
        );
    }
}

#[test]
fn a_huge_window_is_refused() {
    // Window descriptor 0xf8: exponent 31, 2 TiB.
    let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00];
    let data = v3_around(CompressionMethod::Zstd, 10, &frame);
    assert!(matches!(
        corrupt(decompress_err(&data, &DecompressOptions::default())),
        Some((_, StreamFault::WindowTooLarge { .. }))
    ));
}

/// Pads `out` with zeros to a multiple of 4096.
fn pad(out: &mut Vec<u8>) {
    out.resize(out.len().div_ceil(4096) * 4096, 0);
}

#[test]
fn the_walker_steps_over_every_container_and_its_padding() {
    let bundles = [sample_bundle(20), sample_bundle(21), sample_bundle(22)];
    let mut data = Vec::new();
    let mut starts = Vec::new();
    let method = *methods().last().unwrap();
    let pieces = [
        ccob(&bundles[0], 3, method),
        bundles[1].clone(),
        ccob(&bundles[2], 2, CompressionMethod::Zlib),
        {
            let v3 = ccob(&bundles[0], 3, method);
            v1(
                method.raw(),
                bundles[0].len() as u32,
                truncated_md5(&bundles[0]),
                &v3[32..],
            )
        },
        write_bundle(&[(HOST, b"")], 1).unwrap(),
    ];
    for piece in &pieces {
        starts.push(data.len() as u64);
        data.extend_from_slice(piece);
        pad(&mut data);
    }
    let found: Vec<_> = Containers::new(&data).map(Result::unwrap).collect();
    assert_eq!(found.len(), pieces.len());
    for ((offset, container), (start, piece)) in found.iter().zip(starts.iter().zip(&pieces)) {
        assert_eq!(offset, start);
        assert_eq!(container.data(), &piece[..]);
    }
    match found[1].1 {
        Container::Bundle(b) => assert_eq!(b.entry_count(), 2),
        other => panic!("{other:?}"),
    }
    match found[3].1 {
        Container::Compressed(c) => {
            assert_eq!(c.version(), 1);
            assert_eq!(
                c.decompress(&DecompressOptions::default()).unwrap(),
                bundles[0]
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_walker_never_splits_at_a_magic_inside_compressed_bytes() {
    // zlib level 0 stores the bytes as they are, magic included.
    let mut payload = Vec::new();
    for _ in 0..50 {
        payload.extend_from_slice(b"CCOB\x03\x00\x00\x00__CLANG_OFFLOAD_BUNDLE__");
    }
    let bundle = write_bundle(&[(DEV, &payload)], 1).unwrap();
    let stored = compress(
        &bundle,
        &CompressOptions {
            version: 3,
            method: CompressionMethod::Zlib,
            level: Some(0),
        },
    )
    .unwrap();
    assert!(stored[32..].windows(4).any(|w| w == b"CCOB"));
    let mut data = stored.clone();
    data.extend_from_slice(&stored);
    let found: Vec<_> = Containers::new(&data).map(Result::unwrap).collect();
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].0, stored.len() as u64);
}

#[test]
fn the_walker_reports_the_good_containers_then_a_located_error() {
    let good = ccob(&sample_bundle(30), 3, CompressionMethod::Zlib);
    let mut data = good.clone();
    pad(&mut data);
    let bad_at = data.len() as u64;
    let mut bad = good.clone();
    bad[4] = 9;
    data.extend_from_slice(&bad);
    data.extend_from_slice(&good);
    let found: Vec<_> = Containers::new(&data).collect();
    assert_eq!(found.len(), 2);
    assert!(found[0].is_ok());
    let err = found[1].unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnsupportedVersion { version: 9 });
    assert_eq!(err.offset(), bad_at + 4);

    let mut junk = good.clone();
    junk.extend_from_slice(b"\0\0\0junk");
    let found: Vec<_> = Containers::new(&junk).collect();
    let err = found[1].unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnknownContainer, good.len() as u64 + 3)
    );
    assert_eq!(Containers::new(&[0; 100]).count(), 0);
    assert!(Bundle::is_bundle(&sample_bundle(1)));
}

#[test]
fn a_wrong_zstd_content_checksum_is_refused_by_both_decoders() {
    // Single segment with a content checksum: 3 bytes in one raw last block,
    // then a checksum that is not XXH64("abc").
    let frame = [
        0x28,
        0xb5,
        0x2f,
        0xfd,
        0x24,
        3, // header
        (3 << 3) | 1,
        0,
        0,
        b'a',
        b'b',
        b'c', // last raw block
        0xde,
        0xad,
        0xbe,
        0xef,
    ];
    let data = v3_around(CompressionMethod::Zstd, 3, &frame);
    for decoder in decoders() {
        let opts = DecompressOptions {
            verify_hash: false,
            ..options(decoder)
        };
        assert_eq!(
            corrupt(decompress_err(&data, &opts)),
            Some((CompressionMethod::Zstd, StreamFault::ChecksumMismatch)),
            "{decoder:?}"
        );
    }
}

/// A bundle of about 2 MiB: large enough that a verified zstd decoding hashes
/// on a second thread while it decodes (where the machine has two cores).
fn large_bundle() -> Vec<u8> {
    let code: Vec<u8> = (0..500_000u32)
        .flat_map(|i| ((i / 7) ^ (i >> 11)).to_le_bytes())
        .collect();
    write_bundle(&[(HOST, b""), (DEV, &code)], 4096).unwrap()
}

#[test]
fn verified_decoding_of_a_large_bundle_gives_the_bytes_and_errors_of_unverified_decoding() {
    let bundle = large_bundle();
    assert!(bundle.len() > 1 << 20);
    for method in methods() {
        let good = ccob(&bundle, 3, method);
        let mut wrong_hash = good.clone();
        wrong_hash[24] ^= 1;
        let mut cut = good[..good.len() - 20].to_vec();
        let cut_len = cut.len() as u64;
        set_u64(&mut cut, 8, cut_len);
        let mut garbled = good.clone();
        for at in (64..good.len()).step_by(4099) {
            garbled[at] ^= 0x5a;
        }
        for decoder in decoders() {
            let verified = options(decoder);
            let unverified = DecompressOptions {
                verify_hash: false,
                ..verified
            };
            let c = CompressedBundle::parse(&good).unwrap();
            assert_eq!(c.decompress(&verified).unwrap(), bundle);
            assert_eq!(
                c.decompress_hashed(&unverified, true).unwrap(),
                (bundle.clone(), Some(truncated_md5(&bundle)))
            );
            let mut out = vec![0xaa; bundle.len() + 1];
            assert_eq!(c.decompress_into(&mut out, &verified), Ok(bundle.len()));
            assert_eq!(
                (&out[..bundle.len()], out[bundle.len()]),
                (&bundle[..], 0xaa)
            );
            let stored = u64::from_le_bytes(wrong_hash[24..32].try_into().unwrap());
            let mismatch = CompressedBundle::parse(&wrong_hash)
                .unwrap()
                .decompress(&verified)
                .unwrap_err();
            assert_eq!(
                (mismatch.kind(), mismatch.offset()),
                (
                    ErrorKind::HashMismatch {
                        stored,
                        computed: truncated_md5(&bundle)
                    },
                    24
                ),
                "{method} {decoder:?}"
            );
            for damaged in [&cut, &garbled] {
                let c = CompressedBundle::parse(damaged).unwrap();
                let lax = c.decompress(&unverified);
                match c.decompress(&verified) {
                    Err(e) if matches!(e.kind(), ErrorKind::HashMismatch { .. }) => {
                        assert!(lax.is_ok(), "{method} {decoder:?}")
                    }
                    strict => assert_eq!(strict, lax, "{method} {decoder:?}"),
                }
            }
        }
    }
}

/// A bundle of many entries with code-like, distinct payloads, large enough
/// that its table and its payloads arrive in different stretches of every
/// decoder (zlib's 32 KiB ring, 256 KiB otherwise).
fn wide_bundle() -> Vec<u8> {
    let ids: Vec<Vec<u8>> = (0..40)
        .map(|i| format!("hipv4-amdgcn-amd-amdhsa--gfx90{}-{i}", i % 10).into_bytes())
        .collect();
    let payloads: Vec<Vec<u8>> = (0..40u32)
        .map(|i| {
            (0..20_000u32)
                .flat_map(|j| ((j / 7) ^ (i * 31)).to_le_bytes())
                .collect()
        })
        .collect();
    let entries: Vec<(&[u8], &[u8])> = ids
        .iter()
        .zip(&payloads)
        .map(|(id, p)| (id.as_slice(), p.as_slice()))
        .collect();
    write_bundle(&entries, 4096).unwrap()
}

#[test]
fn the_table_alone_is_decoded_and_reads_every_entry() {
    let bundle = wide_bundle();
    let full = Bundle::parse(&bundle).unwrap();
    for method in methods() {
        let data = ccob(&bundle, 3, method);
        let compressed = CompressedBundle::parse(&data).unwrap();
        for decoder in decoders() {
            let table = compressed.decompress_table(&options(decoder)).unwrap();
            assert!(bundle.starts_with(&table), "{method:?} {decoder:?}");
            // Not the payloads: at most the table and one stretch.
            assert!(table.len() < bundle.len() / 4, "{} bytes", table.len());
            let from_table = Bundle::parse_table(&table, bundle.len() as u64).unwrap();
            assert_eq!(from_table.size(), bundle.len() as u64);
            let ours: Vec<_> = from_table
                .entries()
                .map(|e| e.unwrap())
                .map(|e| (e.id().to_vec(), e.offset(), e.size()))
                .collect();
            let theirs: Vec<_> = full
                .entries()
                .map(|e| e.unwrap())
                .map(|e| (e.id().to_vec(), e.offset(), e.size()))
                .collect();
            assert_eq!(ours, theirs);
            assert!(from_table.validate().is_empty());
        }
    }
}

#[test]
fn the_hash_is_checked_streaming_and_a_range_decodes_only_so_far() {
    let bundle = wide_bundle();
    let full = Bundle::parse(&bundle).unwrap();
    let entry = full.entries().nth(20).unwrap().unwrap();
    for method in methods() {
        let data = ccob(&bundle, 3, method);
        let compressed = CompressedBundle::parse(&data).unwrap();
        for decoder in decoders() {
            let o = options(decoder);
            assert_eq!(
                compressed.hash_streamed(&o).unwrap(),
                truncated_md5(&bundle)
            );
            let mut out = vec![0u8; entry.size() as usize];
            for hash in [false, true] {
                out.fill(0);
                let got = compressed
                    .decompress_range(entry.offset(), &mut out, &o, hash)
                    .unwrap();
                assert_eq!(out, entry.payload(), "{method:?} {decoder:?}");
                assert_eq!(got, hash.then(|| truncated_md5(&bundle)));
            }
            // Past the declared size: refused before decoding.
            let err = compressed
                .decompress_range(bundle.len() as u64 - 1, &mut [0u8; 2], &o, false)
                .unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::OutputTooSmall { .. }));
        }
        // A wrong hash is found by streaming, and is refused unless the
        // check is off.
        let mut bad = data.clone();
        bad[24] ^= 1;
        let compressed = CompressedBundle::parse(&bad).unwrap();
        let o = DecompressOptions::default();
        assert!(matches!(
            compressed.hash_streamed(&o).unwrap_err().kind(),
            ErrorKind::HashMismatch { .. }
        ));
        let mut out = vec![0u8; 8];
        assert!(compressed.decompress_range(0, &mut out, &o, false).is_ok());
        assert!(compressed.decompress_range(0, &mut out, &o, true).is_err());
        let lax = DecompressOptions {
            verify_hash: false,
            ..o
        };
        assert_eq!(
            compressed.hash_streamed(&lax).unwrap(),
            truncated_md5(&bundle)
        );
    }
}

#[test]
fn streams_that_decode_short_or_long_are_refused_when_read_through() {
    let bundle = wide_bundle();
    for method in methods() {
        let data = ccob(&bundle, 3, method);
        let header = CompressedBundle::parse(&data).unwrap().header_len() as usize;
        for (declared, short) in [
            (bundle.len() as u64 + 1, true),
            (bundle.len() as u64 - 1, false),
        ] {
            let mut wrong = data.clone();
            set_u64(&mut wrong, 16, declared);
            let compressed = CompressedBundle::parse(&wrong).unwrap();
            for decoder in decoders() {
                let lax = DecompressOptions {
                    verify_hash: false,
                    ..options(decoder)
                };
                let err = compressed.hash_streamed(&lax).unwrap_err();
                let kind = err.kind();
                assert!(
                    matches!(kind, ErrorKind::DecompressedTooSmall { .. }) && short
                        || matches!(kind, ErrorKind::DecompressedTooLarge { .. }) && !short
                        || matches!(kind, ErrorKind::ContentSizeMismatch { .. }),
                    "{method:?} {decoder:?} {declared}: {kind:?}"
                );
                // The table is still what it was (a zstd frame records its
                // content size, which the header check compares first).
                if method == CompressionMethod::Zlib {
                    assert!(compressed.decompress_table(&lax).is_ok());
                }
            }
        }
        // A stream cut short fails when read through, at a located offset.
        let cut = {
            let mut cut = data[..header + (data.len() - header) / 2].to_vec();
            let len = cut.len() as u64;
            set_u64(&mut cut, 8, len);
            cut
        };
        let compressed = CompressedBundle::parse(&cut).unwrap();
        for decoder in decoders() {
            assert!(compressed.hash_streamed(&options(decoder)).is_err());
        }
    }
}

/// A HIP fat binary with code-like payloads: the host, then gfx906, gfx908,
/// gfx90a, gfx942 (400 KB each), and last gfx1100 (1 MiB).
fn device_bundle() -> Vec<u8> {
    let ids: [&[u8]; 6] = [
        HOST,
        b"hipv4-amdgcn-amd-amdhsa--gfx906",
        b"hipv4-amdgcn-amd-amdhsa--gfx908",
        b"hipv4-amdgcn-amd-amdhsa--gfx90a",
        b"hipv4-amdgcn-amd-amdhsa--gfx942",
        b"hipv4-amdgcn-amd-amdhsa--gfx1100",
    ];
    let mut payloads: Vec<Vec<u8>> = vec![Vec::new()];
    for i in 1..5u32 {
        payloads.push(
            (0..100_000u32)
                .flat_map(|j| ((j / 7) ^ (i * 31) ^ (j >> 9)).to_le_bytes())
                .collect(),
        );
    }
    payloads.push(
        (0..1u32 << 18)
            .flat_map(|j| ((j / 5) ^ (j >> 11).wrapping_mul(0x9e37_79b9)).to_le_bytes())
            .collect(),
    );
    let entries: Vec<(&[u8], &[u8])> = ids
        .iter()
        .copied()
        .zip(payloads.iter().map(|p| &p[..]))
        .collect();
    write_bundle(&entries, 4096).unwrap()
}

#[test]
fn selecting_in_a_compressed_bundle_decodes_the_chosen_code_object_alone() {
    use clangoffload::id::{select_for_device, select_in_compressed};
    use clangoffload::select::select_in_fatbin;
    let bundle = device_bundle();
    let plain = Bundle::parse(&bundle).unwrap();
    let device = clangoffload::TargetId::parse("gfx90a:xnack+").unwrap();
    let (how, entry) = select_for_device(&plain, &device).unwrap();
    assert_eq!(entry.id(), b"hipv4-amdgcn-amd-amdhsa--gfx90a");
    // Mid-bundle: a quarter of the bundle before it, half after it.
    assert!(entry.offset() > bundle.len() as u64 / 4);
    assert!(entry.offset() + entry.size() < bundle.len() as u64 / 2);
    let needed = entry.payload().len() + entry.id().len();
    for method in methods() {
        let data = ccob(&bundle, 3, method);
        let compressed = CompressedBundle::parse(&data).unwrap();
        for decoder in decoders() {
            for verify_hash in [false, true] {
                let o = DecompressOptions {
                    verify_hash,
                    ..options(decoder)
                };
                let what = format!("{method:?} {decoder:?} verify {verify_hash}");
                let chosen = select_in_compressed(&compressed, &device, &o)
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    (chosen.how(), chosen.id(), chosen.offset(), chosen.size()),
                    (how, entry.id(), entry.offset(), entry.size()),
                    "{what}"
                );
                assert_eq!(chosen.needed(), needed);
                // The code first, then the ID; the bytes after untouched.
                let mut out = vec![0xaa; needed + 3];
                let found = chosen.decompress_into(&mut out, &o).unwrap();
                assert_eq!(found.code, entry.payload(), "{what}");
                assert_eq!(found.id, entry.id());
                assert_eq!((found.how, found.offset), (how, entry.offset()));
                assert_eq!(found.code.as_ptr(), out.as_ptr());
                assert_eq!(&out[needed..], [0xaa; 3]);
                // A byte too small: the size needed, nothing written.
                let mut short = vec![0u8; needed - 1];
                let err = chosen.decompress_into(&mut short, &o).unwrap_err();
                assert_eq!(
                    err.kind(),
                    ErrorKind::OutputTooSmall {
                        needed: needed as u64,
                        available: needed as u64 - 1
                    }
                );
                assert!(short.iter().all(|&b| b == 0));
                // select_in_fatbin: the same, the same size asked for.
                let err = select_in_fatbin(&data, &device, &mut [0u8; 16], &o).unwrap_err();
                assert!(
                    matches!(err.kind(), ErrorKind::OutputTooSmall { needed: n, .. } if n == needed as u64),
                    "{what}: {err:?}"
                );
                let mut scratch = vec![0u8; needed];
                let found = select_in_fatbin(&data, &device, &mut scratch, &o)
                    .unwrap()
                    .unwrap();
                let from_plain = select_in_fatbin(&bundle, &device, &mut [], &o)
                    .unwrap()
                    .unwrap();
                assert_eq!(found, from_plain, "{what}");
            }
            // Nothing fits: known from the table alone.
            let gfx803 = clangoffload::TargetId::parse("gfx803").unwrap();
            assert_eq!(
                select_in_compressed(&compressed, &gfx803, &options(decoder)),
                Ok(None)
            );
        }
    }
}

#[test]
fn selection_checks_the_hash_only_when_asked_and_decodes_only_so_far() {
    use clangoffload::id::{select_for_device, select_in_compressed};
    let bundle = device_bundle();
    let plain = Bundle::parse(&bundle).unwrap();
    let device = clangoffload::TargetId::parse("gfx90a").unwrap();
    let (_, entry) = select_for_device(&plain, &device).unwrap();
    for method in methods() {
        let good = ccob(&bundle, 3, method);
        let mut wrong_hash = good.clone();
        wrong_hash[24] ^= 1;
        // Damage 10 bytes before the end of the stream, in the last entry,
        // more than 1 MiB of output after the chosen one ends.
        let mut damaged_after = good.clone();
        let at = good.len() - 10;
        damaged_after[at] ^= 0xff;
        for decoder in decoders() {
            let verified = options(decoder);
            let unverified = DecompressOptions {
                verify_hash: false,
                ..verified
            };
            let what = format!("{method:?} {decoder:?}");
            // The damage is found by decoding alone: selecting without the
            // hash, which finds nothing wrong, stops before it. Not with
            // ruzstd on a zstd frame whose window covers the bundle (as
            // LLVM's do): it hands out no byte still inside its window
            // before the frame ends, so its walks decode the whole frame.
            let damaged = CompressedBundle::parse(&damaged_after).unwrap();
            assert!(damaged.decompress(&unverified).is_err(), "{what}");
            let wrong = CompressedBundle::parse(&wrong_hash).unwrap();
            assert!(matches!(
                wrong.decompress(&verified).unwrap_err().kind(),
                ErrorKind::HashMismatch { .. }
            ));
            let stops_early = method == CompressionMethod::Zlib || decoder == ZstdDecoder::Libzstd;
            let cases = if stops_early {
                vec![(damaged, false), (wrong, true)]
            } else {
                assert_eq!(
                    select_in_compressed(&damaged, &device, &unverified).map_err(|e| e.kind()),
                    damaged
                        .decompress(&unverified)
                        .map(|_| None)
                        .map_err(|e| e.kind()),
                );
                vec![(wrong, true)]
            };
            for (compressed, hash_only) in cases {
                let chosen = select_in_compressed(&compressed, &device, &unverified)
                    .unwrap()
                    .unwrap();
                let mut out = vec![0u8; chosen.needed()];
                let found = chosen.decompress_into(&mut out, &unverified).unwrap();
                assert_eq!(found.code, entry.payload(), "{what}");
                // With the check, the rest is decoded and the fault found.
                let chosen = select_in_compressed(&compressed, &device, &verified)
                    .unwrap()
                    .unwrap();
                let kind = chosen
                    .decompress_into(&mut out, &verified)
                    .unwrap_err()
                    .kind();
                if hash_only {
                    assert!(matches!(kind, ErrorKind::HashMismatch { .. }), "{what}");
                } else {
                    assert_eq!(
                        Err(kind),
                        damaged.decompress(&verified).map_err(|e| e.kind())
                    );
                }
            }
        }
    }
}
