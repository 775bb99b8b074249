//! Writes the seed inputs under `fuzz/seeds/<target>/`.
//!
//! ```sh
//! cd fuzz && cargo run --example gen_seeds
//! ```
//! Seeds are small (well under libFuzzer's default 4096-byte `-max_len`) and
//! deterministic: rerunning rewrites the same files.

use std::fs;
use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};
use clangoffload::bundle::{write_bundle, BUNDLE_MAGIC};

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

fn main() {
    bundle_parse();
    bundle_roundtrip();
    entry_id_parse();
    target_id_compat();
    println!("seeds written under {}/seeds", env!("CARGO_MANIFEST_DIR"));
}
