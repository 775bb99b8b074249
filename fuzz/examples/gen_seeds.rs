//! Writes the seed inputs under `fuzz/seeds/<target>/`.
//!
//! ```sh
//! cd fuzz && cargo run --example gen_seeds
//! ```
//! Seeds are deterministic: rerunning rewrites the same files. Those of the
//! bundle and ID targets are small (well under libFuzzer's default 4096-byte
//! `-max_len`); the compressed-bundle targets also get the LLVM-made CCOBs of
//! `tests/fixtures/compressed` (5–55 KB), so libFuzzer raises `-max_len` to
//! the largest of them.

use std::fs;
use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use clangoffload::bundle::{write_bundle, BUNDLE_MAGIC};
use clangoffload::compressed::{
    compress, truncated_md5, CompressOptions, ZstdDecoder, COMPRESSED_MAGIC,
};
use clangoffload::{CompressedBundle, CompressionMethod, Containers, DecompressOptions, Limits};

/// (ID, payload) pairs of a bundle.
type Entries<'a> = &'a [(&'a [u8], &'a [u8])];

const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu-";
const GFX906: &[u8] = b"hipv4-amdgcn-amd-amdhsa--gfx906";
const GFX90A: &[u8] = b"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-";
const GFX9_GENERIC: &[u8] = b"hipv4-amdgcn-amd-amdhsa--gfx9-generic:xnack-";
const SM90: &[u8] = b"openmp-nvptx64-nvidia-cuda--sm_90";
const SPIRV: &[u8] = b"hipv4-spirv64-amd-amdhsa--amdgcnspirv";

fn seeds_dir(target: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    fs::create_dir_all(&dir).expect("create seeds dir");
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::write(dir.join(name), bytes).expect("write seed");
}

/// A header with raw descriptors `(offset, size, id)`, followed by `tail`.
fn raw(count: u64, descriptors: &[(u64, u64, &[u8])], tail: &[u8]) -> Vec<u8> {
    let mut out = BUNDLE_MAGIC.to_vec();
    out.extend_from_slice(&count.to_le_bytes());
    for (offset, size, id) in descriptors {
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id);
    }
    out.extend_from_slice(tail);
    out
}

fn bundle_parse() {
    let dir = seeds_dir("bundle_parse");
    let good: &[(&str, Entries, u64)] = &[
        ("empty", &[], 1),
        (
            "host_gfx906",
            &[(HOST, b"host"), (GFX906, b"\x7fELF device")],
            1,
        ),
        (
            "four_targets_align16",
            &[
                (HOST, b""),
                (GFX90A, b"gfx90a code"),
                (SM90, b"ptx"),
                (SPIRV, b"\x03\x02\x23\x07"),
            ],
            16,
        ),
        (
            "generic_align64",
            &[
                (HOST, b"h"),
                (GFX9_GENERIC, b"generic"),
                (GFX906, b"native"),
            ],
            64,
        ),
        (
            "duplicate_ids",
            &[(GFX906, b"first"), (GFX906, b"second")],
            8,
        ),
    ];
    for (name, entries, align) in good {
        let bytes = write_bundle(entries, *align).expect("write seed bundle");
        clangoffload::Bundle::parse(&bytes).expect("seed bundle parses");
        write(&dir, name, &bytes);
    }
    // Damaged bundles: each hits a different error or diagnostic.
    let host_then_bad = {
        let mut b = write_bundle(&[(HOST, b"host"), (GFX906, b"dev")], 1).unwrap();
        b.truncate(b.len() - 2);
        b
    };
    write(&dir, "payload_out_of_bounds", &host_then_bad);
    write(
        &dir,
        "overlapping",
        &raw(2, &[(70, 8, b"a"), (74, 8, b"b")], &[0xaa; 40]),
    );
    write(&dir, "payload_in_header", &raw(1, &[(8, 8, b"x")], b""));
    write(&dir, "zero_offset", &raw(1, &[(0, 0, b"x")], b""));
    write(&dir, "empty_id", &raw(1, &[(56, 0, b"")], b""));
    write(
        &dir,
        "count_too_large",
        &raw(u64::MAX, &[(57, 1, b"x")], b"!"),
    );
    write(&dir, "overflow", &raw(1, &[(u64::MAX, 2, b"x")], b""));
    write(&dir, "truncated_count", &BUNDLE_MAGIC[..]);
    write(
        &dir,
        "trailing",
        &raw(1, &[(57, 1, GFX906)], b"payload + trailing"),
    );
}

/// The `Input` of `fuzz_targets/bundle_roundtrip.rs`.
#[derive(Debug, PartialEq, Arbitrary)]
struct RoundtripInput {
    align: u16,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Encodes bytes the way `Vec<u8>: Arbitrary` reads them: a continue flag
/// (odd) before each element, an even byte to stop.
fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.extend_from_slice(&[1, b]);
    }
    out.push(0);
}

fn bundle_roundtrip() {
    let dir = seeds_dir("bundle_roundtrip");
    let cases: &[(&str, u16, Entries)] = &[
        ("none", 0, &[]),
        ("host_gfx906", 0, &[(HOST, b"host"), (GFX906, b"dev")]),
        ("align4096", 4095, &[(GFX90A, b"code"), (SM90, b"")]),
        (
            "align3_dups",
            2,
            &[(b"a", b"xy"), (b"a", b"z"), (b"b", b"")],
        ),
    ];
    for (name, align, entries) in cases {
        let mut bytes = align.to_le_bytes().to_vec();
        for (id, payload) in *entries {
            bytes.push(1);
            encode_bytes(&mut bytes, id);
            encode_bytes(&mut bytes, payload);
        }
        bytes.push(0);
        let decoded =
            RoundtripInput::arbitrary_take_rest(Unstructured::new(&bytes)).expect("seed decodes");
        let expected = RoundtripInput {
            align: *align,
            entries: entries
                .iter()
                .map(|(i, p)| (i.to_vec(), p.to_vec()))
                .collect(),
        };
        assert_eq!(
            decoded, expected,
            "seed {name} does not decode to its input"
        );
        write(&dir, name, &bytes);
    }
}

fn entry_id_parse() {
    let dir = seeds_dir("entry_id_parse");
    let ids = [
        "host-x86_64-unknown-linux-gnu",
        "host-x86_64-unknown-linux-gnu-",
        "hip-amdgcn-amd-amdhsa-unknown-gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+",
        "openmp-nvptx64-nvidia-cuda--sm_90a",
        "hipv4-spirv64-amd-amdhsa--amdgcnspirv",
        "hip-amdgcn-amd-amdhsa--fiji",
        "openmp-amdgcn-amd-amdhsa--gfx1030:xnack+",
        "hip-r600--amdhsa--tahiti:",
        "a-b-c",
    ];
    for (i, id) in ids.iter().enumerate() {
        write(&dir, &format!("id{i:02}"), id.as_bytes());
    }
}

fn target_id_compat() {
    let dir = seeds_dir("target_id_compat");
    // Lines: target IDs a, b, c; arch; entry IDs a, b; more entry IDs.
    let inputs = [
        "gfx906\ngfx906:xnack+\ngfx906:sramecc-:xnack+\namdgcn\n\
         hip-amdgcn-amd-amdhsa--gfx906\nhipv4-amdgcn-amd-amdhsa--gfx906:xnack+\n\
         hip-amdgcn-amd-amdhsa--gfx906:sramecc+",
        "gfx90a:sramecc+:xnack-\ngfx90a:xnack-:sramecc+\ngfx90a\nnvptx64\n\
         openmp-amdgcn-amd-amdhsa--gfx90a\nhip-amdgcn-amd-amdhsa--gfx90a:xnack-\n",
        "fiji\ngfx803\npolaris10\nr600\n\
         host-x86_64-unknown-linux-gnu-\nopenmp-nvptx64-nvidia-cuda--sm_90\n\
         openmp-nvptx64-nvidia-cuda--sm_90\nopenmp-nvptx64-nvidia-cuda--sm_90:xnack+",
        "gfx9-4-generic:xnack+\ngfx942:sramecc+:xnack+\ngfx1030\nspirv64\n\
         hipv4-spirv64-amd-amdhsa--amdgcnspirv\nhipv4-amdgcn-amd-amdhsa--gfx1030:",
    ];
    for (i, text) in inputs.iter().enumerate() {
        write(&dir, &format!("lines{i}"), text.as_bytes());
    }
}

/// The real CCOBs (LLVM 22 and 19, and the synthetic v1 and zlib ones).
const FIXTURE_CCOBS: &[&str] = &[
    "llvm22/hip.v3.ccob",
    "llvm22/hip.v2.ccob",
    "llvm22/hip.v3-level19.ccob",
    "llvm22/hip-align4096.v3.ccob",
    "llvm22/tu2.v2.ccob",
    "llvm22/big.v3.ccob",
    "llvm22/asm.v3.ccob",
    "llvm19/hip.v2.ccob",
    "llvm19/tu3.v2.ccob",
    "synthetic/hip.v1.ccob",
    "synthetic/hip.zlib-v3.ccob",
    "synthetic/hip.zlib-v2.ccob",
];

fn fixture(path: &str) -> Vec<u8> {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/compressed")
        .join(path);
    fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()))
}

/// `llvm22/hip.v3.ccob` → `llvm22_hip.v3.ccob`.
fn fixture_name(path: &str) -> String {
    path.replace('/', "_")
}

/// A small bundle with a compressible device payload.
fn small_bundle() -> Vec<u8> {
    let code: Vec<u8> = (0..600u32).flat_map(|i| (i / 5).to_le_bytes()).collect();
    write_bundle(&[(HOST, b"host"), (GFX906, &code)], 8).unwrap()
}

fn ccob(bundle: &[u8], version: u16, method: CompressionMethod, level: i32) -> Vec<u8> {
    compress(
        bundle,
        &CompressOptions {
            version,
            method,
            level: Some(level),
        },
    )
    .expect("compress seed")
}

/// A compressed-bundle header of `version` (1, 2 or 3) around `stream`, with
/// the total size (v2, v3) of exactly the header and the stream.
fn wrap(version: u16, method: u16, declared: u64, hash: u64, stream: &[u8]) -> Vec<u8> {
    let mut out = COMPRESSED_MAGIC.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&method.to_le_bytes());
    match version {
        1 => out.extend_from_slice(&(declared as u32).to_le_bytes()),
        2 => {
            out.extend_from_slice(&(24 + stream.len() as u32).to_le_bytes());
            out.extend_from_slice(&(declared as u32).to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&(32 + stream.len() as u64).to_le_bytes());
            out.extend_from_slice(&declared.to_le_bytes());
        }
    }
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(stream);
    out
}

/// The stream of a compressed bundle made by `ccob`.
fn stream_of(ccob: &[u8]) -> &[u8] {
    CompressedBundle::parse(ccob).unwrap().compressed()
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of zeros each (4 bytes per
/// block), 128 KiB window, with the content size recorded or not.
fn zstd_rle_bomb(blocks: u32, record_size: bool) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd];
    if record_size {
        frame.extend_from_slice(&[0xc0, 0x38]);
        frame.extend_from_slice(&(u64::from(blocks) << 17).to_le_bytes());
    } else {
        frame.extend_from_slice(&[0x00, 0x38]);
    }
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        frame.extend_from_slice(&((128 * 1024) << 3 | 1 << 1 | last).to_le_bytes()[..3]);
        frame.push(0);
    }
    frame
}

/// A single-segment zstd frame of one raw block holding `data` (< 256 bytes).
fn zstd_raw_frame(data: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x20, data.len() as u8];
    frame.extend_from_slice(&((data.len() as u32) << 3 | 1).to_le_bytes()[..3]);
    frame.extend_from_slice(data);
    frame
}

/// A zstd frame by libzstd with a content checksum.
fn zstd_checksummed(data: &[u8]) -> Vec<u8> {
    use zstd_safe::{compress_bound, CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(1)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(true)).unwrap();
    let mut out = Vec::with_capacity(compress_bound(data.len()));
    cctx.compress2(&mut out, data).unwrap();
    out
}

/// Small crafted compressed bundles, good and damaged, for the parse and
/// decompress targets.
fn crafted_ccobs() -> Vec<(String, Vec<u8>)> {
    let bundle = small_bundle();
    let hash = truncated_md5(&bundle);
    let n = bundle.len() as u64;
    let (zlib, zstd) = (CompressionMethod::Zlib, CompressionMethod::Zstd);
    let v3_zstd = ccob(&bundle, 3, zstd, 1);
    let v2_zlib = ccob(&bundle, 2, zlib, 1);
    let zlib_stream = stream_of(&v2_zlib).to_vec();
    let zstd_stream = stream_of(&v3_zstd).to_vec();
    let mut out: Vec<(String, Vec<u8>)> = vec![
        ("small_v3_zstd".into(), v3_zstd.clone()),
        ("small_v2_zstd".into(), ccob(&bundle, 2, zstd, 1)),
        ("small_v3_zlib".into(), ccob(&bundle, 3, zlib, 6)),
        ("small_v2_zlib".into(), v2_zlib.clone()),
        ("v1_zlib".into(), wrap(1, 0, n, hash, &zlib_stream)),
        ("v1_zstd".into(), wrap(1, 1, n, hash, &zstd_stream)),
        ("v1_zlib_then_bytes".into(), {
            let mut v = wrap(1, 0, n, hash, &zlib_stream);
            v.extend_from_slice(b"CCOB trailing");
            v
        }),
        ("v3_zstd_checksum".into(), {
            let frame = zstd_checksummed(&bundle);
            wrap(3, 1, n, hash, &frame)
        }),
        ("v3_zstd_raw_block".into(), {
            let data = b"__CLANG_OFFLOAD_BUNDLE__\0\0\0\0\0\0\0\0";
            wrap(
                3,
                1,
                data.len() as u64,
                truncated_md5(data),
                &zstd_raw_frame(data),
            )
        }),
        ("v3_zlib_stored".into(), {
            let data = b"stored CCOB block";
            wrap(
                3,
                0,
                data.len() as u64,
                truncated_md5(data),
                stream_of(&ccob(data, 3, zlib, 0)),
            )
        }),
        ("empty_v3_zstd".into(), ccob(b"", 3, zstd, 1)),
        ("empty_v2_zlib".into(), ccob(b"", 2, zlib, 1)),
        // RLE bomb: 1000 blocks of 128 KiB (125 MiB) in about 4 KB.
        (
            "bomb_undeclared".into(),
            wrap(3, 1, 1 << 20, 0, &zstd_rle_bomb(1000, false)),
        ),
        (
            "bomb_honest".into(),
            wrap(3, 1, 1000 << 17, 0, &zstd_rle_bomb(1000, true)),
        ),
        (
            "bomb_liar".into(),
            wrap(3, 1, 1 << 20, 0, &zstd_rle_bomb(1000, true)),
        ),
        (
            "bomb_v1".into(),
            wrap(1, 1, 4 << 17, 0, &zstd_rle_bomb(4, false)),
        ),
        (
            "hash_mismatch".into(),
            wrap(3, 1, n, hash ^ 1, &zstd_stream),
        ),
        (
            "declared_short".into(),
            wrap(3, 0, n - 1, hash, &zlib_stream),
        ),
        (
            "declared_long".into(),
            wrap(2, 0, n + 1, hash, &zlib_stream),
        ),
        (
            "content_size_mismatch".into(),
            wrap(3, 1, n + 1, hash, &zstd_stream),
        ),
        ("nested".into(), ccob(&v3_zstd, 3, zlib, 1)),
        ("unknown_method".into(), wrap(3, 2, n, hash, &zstd_stream)),
        ("zlib_as_zstd".into(), wrap(2, 1, n, hash, &zlib_stream)),
        (
            "dictionary_id".into(),
            wrap(
                3,
                1,
                4,
                0,
                &[0x28, 0xb5, 0x2f, 0xfd, 0x21, 4, 7, 0x19, 0, 0, 0],
            ),
        ),
        (
            "skippable".into(),
            wrap(3, 1, 0, 0, &[0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]),
        ),
        (
            "huge_window".into(),
            wrap(
                3,
                1,
                10,
                0,
                &[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00],
            ),
        ),
        (
            "version4".into(),
            wrap(3, 1, 0, 0, b"")
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 4 { 4 } else { b })
                .collect(),
        ),
        ("total_below_header".into(), {
            let mut v = wrap(3, 1, 0, 0, b"");
            v[8] = 10;
            v
        }),
        ("total_past_input".into(), {
            let mut v = v3_zstd.clone();
            v.truncate(v.len() - 3);
            v
        }),
    ];
    // Headers cut inside each field.
    for (version, lens) in [
        (1u16, &[1, 3, 5, 7, 11, 19][..]),
        (2, &[10, 15, 23]),
        (3, &[8, 20, 31]),
    ] {
        let whole = wrap(version, 1, n, hash, &zstd_stream);
        for &len in lens {
            out.push((format!("v{version}_cut{len}"), whole[..len].to_vec()));
        }
    }
    out
}

fn compressed_parse() {
    let dir = seeds_dir("compressed_parse");
    for path in FIXTURE_CCOBS {
        write(&dir, &fixture_name(path), &fixture(path));
    }
    for (name, bytes) in crafted_ccobs() {
        write(&dir, &name, &bytes);
    }
}

fn compressed_decompress() {
    let dir = seeds_dir("compressed_decompress");
    let limits = Limits {
        max_uncompressed_size: 1 << 20,
    };
    for path in FIXTURE_CCOBS {
        let bytes = fixture(path);
        // The real ones decompress with both decoders under the target's limit.
        let b = CompressedBundle::parse(&bytes).expect("fixture parses");
        for zstd_decoder in [ZstdDecoder::Libzstd, ZstdDecoder::Ruzstd] {
            let opts = DecompressOptions {
                limits,
                verify_hash: true,
                zstd_decoder,
            };
            b.decompress(&opts).expect("fixture decompresses");
        }
        write(&dir, &fixture_name(path), &bytes);
    }
    for (name, bytes) in crafted_ccobs() {
        write(&dir, &name, &bytes);
    }
}

/// Pads `out` with zeros to a multiple of `align`.
fn pad(out: &mut Vec<u8>, align: usize) {
    out.resize(out.len().div_ceil(align) * align, 0);
}

fn containers_walk() {
    let dir = seeds_dir("containers_walk");
    let fatbin = fixture("concat/hip.hip_fatbin");
    assert_eq!(Containers::new(&fatbin).count(), 4);
    write(&dir, "concat_hip.hip_fatbin", &fatbin);

    let bundle = small_bundle();
    let hash = truncated_md5(&bundle);
    let n = bundle.len() as u64;
    let (zlib, zstd) = (CompressionMethod::Zlib, CompressionMethod::Zstd);
    let zlib_stream = stream_of(&ccob(&bundle, 2, zlib, 1)).to_vec();
    let zstd_stream = stream_of(&ccob(&bundle, 3, zstd, 1)).to_vec();
    let plain = write_bundle(&[(HOST, b""), (GFX906, b"CCOB inside a payload")], 1).unwrap();

    // v1 zlib, v2 zstd, a bundle, v1 zstd: padded to 64, zeros at the end.
    let mut mixed = wrap(1, 0, n, hash, &zlib_stream);
    pad(&mut mixed, 64);
    mixed.extend_from_slice(&ccob(&bundle, 2, zstd, 1));
    mixed.extend_from_slice(&[0; 5]);
    mixed.extend_from_slice(&plain);
    pad(&mut mixed, 64);
    mixed.extend_from_slice(&wrap(1, 1, n, hash, &zstd_stream));
    mixed.extend_from_slice(&[0; 16]);
    // A stored zlib block with `CCOB` in it, then back to back.
    let mut stored = ccob(b"CCOB CCOB CCOB", 3, zlib, 0);
    stored.extend_from_slice(&wrap(1, 0, n, hash, &zlib_stream));
    stored.extend_from_slice(&plain);
    // Good, then damaged.
    let mut damaged = ccob(&bundle, 3, zlib, 1);
    damaged.extend_from_slice(&[0; 3]);
    let cut = ccob(&bundle, 2, zstd, 1);
    damaged.extend_from_slice(&cut[..cut.len() - 4]);
    let mut unknown = plain.clone();
    unknown.extend_from_slice(b"\0\0ELF");
    let mut real_v1 = fixture("synthetic/hip.v1.ccob");
    pad(&mut real_v1, 16);
    real_v1.extend_from_slice(&plain);
    for (name, bytes) in [
        ("mixed", mixed),
        ("ccob_in_stored_block", stored),
        ("good_then_truncated", damaged),
        ("bundle_then_unknown", unknown),
        ("real_v1_then_bundle", real_v1),
        ("zeros", vec![0; 40]),
    ] {
        write(&dir, name, &bytes);
    }
}

/// Text bundle seeds: a selector byte (0 `//`, 1 `#`, 2 `;`) and the file.
/// LLVM 22's fixtures of `tests/fixtures/text`, then small crafted files for
/// every malformed class and the odd but readable cases.
fn text_bundle() {
    use clangoffload::text_bundle::{write_text_bundle, Comment, TEXT_FILE_TYPES};
    let dir = seeds_dir("text_bundle");
    let selector = |comment| match comment {
        Comment::DoubleSlash => 0u8,
        Comment::Hash => 1,
        Comment::Semicolon => 2,
    };
    for (t, comment) in TEXT_FILE_TYPES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/fixtures/text/{t}.bundle"));
        let data = fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        write(
            &dir,
            &format!("llvm22_{t}"),
            &[&[selector(comment)][..], &data].concat(),
        );
    }
    const S: &[u8] = b"\n// __CLANG_OFFLOAD_BUNDLE____START__ ";
    const E: &[u8] = b"\n// __CLANG_OFFLOAD_BUNDLE____END__ ";
    let host = HOST;
    let dev = GFX906;
    let good = write_text_bundle(Comment::DoubleSlash, &[(host, b"int h;\n"), (dev, b"")]).unwrap();
    let crafted: &[(&str, Vec<u8>)] = &[
        ("empty", Vec::new()),
        ("no_marker", b"int main() { return 0; }\n".to_vec()),
        ("start_at_zero", [&S[1..], host, b"\nint h;\n"].concat()),
        (
            "crlf",
            [b"\r", S, host, b"\r\nint h;\r\n\r", E, host, b"\r\n"].concat(),
        ),
        (
            "between",
            [b"pre\n", &good[..], b"mid\n", &good[..], b"post"].concat(),
        ),
        ("end_no_newline", [S, host, b"\nx", E, host].concat()),
        (
            "other_prefix",
            [
                S,
                host,
                b"\nx\n// __CLANG_OFFLOAD_BUNDLE____MID__ y",
                E,
                host,
                b"\n",
            ]
            .concat(),
        ),
        (
            "start_without_end",
            [&good[..], S, host, b"\nint h;\n"].concat(),
        ),
        ("start_line_cut", [S, host].concat()),
        (
            "end_before_start",
            [E, host, b"\n", S, host, b"\nint h;\n"].concat(),
        ),
        ("end_only", [b"int x;", E, host, b"\n"].concat()),
        (
            "nested",
            [
                S, host, b"\na", S, dev, b"\nb", E, dev, b"\n", E, host, b"\n",
            ]
            .concat(),
        ),
        (
            "end_other_id",
            [S, host, b"\nint h;", E, dev, b"\n"].concat(),
        ),
        ("empty_id", [S, b"\nint h;", E, b"\n"].concat()),
    ];
    for (name, data) in crafted {
        write(&dir, name, &[&[0u8][..], data].concat());
    }
}

/// Copies the files of `tests/fixtures/<fixtures>` whose names end with one
/// of `suffixes` to `seeds/<target>/`, checking each with `check`.
fn copy_fixtures(target: &str, fixtures: &str, suffixes: &[&str], check: fn(&[u8]) -> bool) {
    let dir = seeds_dir(target);
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(fixtures);
    let mut names: Vec<String> = fs::read_dir(&from)
        .unwrap_or_else(|e| panic!("read {}: {e}", from.display()))
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .into_string()
                .expect("UTF-8 name")
        })
        .filter(|n| suffixes.iter().any(|s| n.ends_with(s)))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no fixtures in {}", from.display());
    for name in names {
        let bytes = fs::read(from.join(&name)).expect("read fixture");
        assert!(check(&bytes), "fixture {name} is not what {target} expects");
        write(&dir, &name, &bytes);
    }
}

/// The ELF objects and shared objects of `tests/fixtures/object` (with and
/// without bundle sections, 32- and 64-bit, with section groups).
fn elf_object_bundle() {
    copy_fixtures("elf_object_bundle", "object", &[".o", ".so"], |b| {
        clangoffload::elf::ElfFile::parse(b).is_ok()
    });
}

/// The LLVM-made archives of `tests/fixtures/archive` (members plain,
/// compressed and object bundles, GNU and BSD, 32- and 64-bit indexes), each
/// behind the target's flags byte: all four targets; with
/// `-allow-missing-bundles` and `-hip-openmp-compatible`; with
/// `-check-input-archive`.
fn archive_unbundle() {
    let dir = seeds_dir("archive_unbundle");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/archive");
    let mut names: Vec<String> = fs::read_dir(&from)
        .expect("read the archive fixtures")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".a"))
        .collect();
    names.sort();
    for name in names {
        let archive = fs::read(from.join(&name)).expect("read fixture");
        assert!(clangoffload::archive::Archive::parse(&archive).is_ok());
        for flags in [0x0f_u8, 0x3f, 0x4f] {
            let bytes = [&[flags][..], &archive].concat();
            write(&dir, &format!("{name}.{flags:02x}"), &bytes);
        }
    }
}

/// LLVM 22's packages, objects and archive of `tests/fixtures/offload`, each
/// with no filter and with two filters (one with `--archive`), and a package
/// holding a package (nested, as upstream extracts with no filter).
fn packager_extract() {
    let dir = seeds_dir("packager_extract");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/offload");
    for name in [
        "multi.offbin",
        "keys.offbin",
        "sizes.offbin",
        "offload.a",
        "omp.o",
        "hip-new-driver.o",
    ] {
        let input = fs::read(from.join(name)).expect("read fixture");
        assert!(clangoffload::packager::list(&input).is_ok(), "{name}");
        for choice in [0x00_u8, 0x01, 0x82] {
            let bytes = [&[choice][..], &input].concat();
            write(&dir, &format!("{name}.{choice:02x}"), &bytes);
        }
    }
    use clangoffload::packager::{package, Format, PackageImage};
    let inner = fs::read(from.join("multi.offbin")).expect("read fixture");
    let image = PackageImage {
        argument: b"file=inner,arch=nested,triple=x-y-z",
        file: b"inner",
        data: &inner,
    };
    let nested = package(&[image], &Format::default()).expect("package");
    write(&dir, "nested.00", &[&[0][..], &nested].concat());
}

/// The host files, packages and archive of `tests/fixtures/offload` (HIP and
/// CUDA objects with their wrapper records, executables, shared libraries),
/// and compressed bundles.
fn inspect() {
    let none = |_: &[u8]| true;
    copy_fixtures(
        "inspect",
        "offload",
        &[".o", ".so", "hip-exe", ".offbin", ".a"],
        none,
    );
    copy_fixtures("inspect", "compressed/llvm22", &[".ccob"], none);
}

/// LLVM 22's packages of `tests/fixtures/offload` (the registered image is
/// the first), and bytes that start no binary.
fn registration() {
    copy_fixtures("registration", "offload", &[".offbin"], |b| {
        clangoffload::OffloadBinary::parse(b).is_ok()
    });
    write(
        &seeds_dir("registration"),
        "plain",
        b"\x7fELF not an OffloadBinary",
    );
}

/// LLVM 22's packages of `tests/fixtures/offload`, plus one binary of each
/// upstream version (2, 3, 3 compressed).
fn offload_binary() {
    copy_fixtures("offload_binary", "offload", &[".offbin"], |b| {
        clangoffload::OffloadBinary::parse(b).is_ok()
    });
    use clangoffload::offload_binary::{
        write_offload_binary, ImageKind, NewImage, OffloadKind, WriteOptions,
    };
    let strings: &[(&[u8], &[u8])] = &[(b"triple", b"amdgcn-amd-amdhsa"), (b"arch", b"gfx90a")];
    let image = NewImage {
        image_kind: ImageKind::Object,
        offload_kind: OffloadKind::Hip,
        flags: 0,
        strings,
        image: b"\x7fELF image bytes",
    };
    let dir = seeds_dir("offload_binary");
    for (name, version, compression) in [
        ("v2", 2, None),
        ("v3", 3, None),
        ("v3-zlib", 3, Some((CompressionMethod::Zlib, None))),
    ] {
        let options = WriteOptions {
            version,
            compression,
        };
        let bytes = write_offload_binary(&[image, image], &options).expect("write binary");
        write(&dir, name, &bytes);
    }
}

/// The host objects, shared libraries and executable of
/// `tests/fixtures/offload` (every kind of offload section).
fn elf_locate() {
    copy_fixtures("elf_locate", "offload", &[".o", ".so", "-exe"], |b| {
        clangoffload::elf::ElfFile::parse(b).is_ok()
    });
}

/// Small host files and packages of `tests/fixtures/offload` to scan.
fn scan() {
    copy_fixtures(
        "scan",
        "offload",
        &["embed2.o", "hip-compress.o", "single.offbin"],
        |b| !b.is_empty(),
    );
}

fn main() {
    offload_binary();
    elf_locate();
    scan();
    bundle_parse();
    bundle_roundtrip();
    entry_id_parse();
    target_id_compat();
    compressed_parse();
    compressed_decompress();
    containers_walk();
    text_bundle();
    elf_object_bundle();
    archive_unbundle();
    packager_extract();
    inspect();
    registration();
    println!("seeds written under {}/seeds", env!("CARGO_MANIFEST_DIR"));
}
