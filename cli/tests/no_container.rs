//! A file that holds no container gets the same words from `list`,
//! `extract` and `inspect`, naming what it is when we recognise it; a raw
//! code object or cubin is shown by `inspect` (exit 0), anything else fails
//! all three (exit 1).

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::clangoffload;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(path)
}

/// `{"abc": 1, "def": [2, 3]}`, as Tensile's `.dat` libraries are maps.
const MSGPACK: &[u8] = b"\x82\xa3abc\x01\xa3def\x92\x02\x03";

#[test]
fn list_extract_and_inspect_say_the_same_of_files_without_containers() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let random: Vec<u8> = (0..100_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes()[1])
        .collect();
    let cases = [
        (
            fixture("llvm22/clang-hip.gfx906.co"),
            "it is an AMDGPU code object for amdgcn-amd-amdhsa--gfx906",
            true,
        ),
        (
            fixture("cuda/inputs/k80.cubin"),
            "it is a CUDA cubin for sm_80",
            true,
        ),
        (
            write("TensileLibrary.dat", MSGPACK),
            "it is MessagePack data (such as a Tensile library's .dat file), not device code",
            false,
        ),
        (
            write("random.bin", &random),
            "its 100000 bytes are of no format we know",
            false,
        ),
        (write("empty", b""), "the file is empty", false),
    ];
    for (path, what, device_code) in cases {
        let file = path.to_str().unwrap();
        let sentence = format!("no offload container or CUDA fat binary: {what}");
        let error = format!(
            "{}: error: '{file}': {sentence}\n",
            env!("CARGO_BIN_EXE_clangoffload")
        );
        for command in ["list", "extract", "inspect"] {
            let out_dir = dir.path().join("out");
            let mut args = vec![command, file];
            if command == "extract" {
                args.extend(["-o", out_dir.to_str().unwrap()]);
            }
            let out = clangoffload(&args);
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            if command == "inspect" && device_code {
                assert_eq!(
                    (out.status.code(), &*stdout),
                    (Some(0), &*format!("{sentence}\n"))
                );
            } else {
                assert_eq!(
                    (out.status.code(), &*stderr),
                    (Some(1), &*error),
                    "{command}"
                );
                assert!(stdout.is_empty(), "{command}: {stdout}");
            }
        }
        let json = clangoffload(&["inspect", "--json", file]);
        let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(value["no_container"], serde_json::json!(sentence));
    }
}

/// A kpack archive is read (list, extract, inspect of its entries), not
/// described: one cut inside its header is an error about the header.
#[test]
fn a_kpack_archive_is_read_not_described() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lib.kpack");
    std::fs::write(&path, b"KPAK\x01\x00\x00\x00").unwrap();
    for command in ["list", "extract", "inspect"] {
        let out = clangoffload(&[command, path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(
            stderr.contains("truncated kpack header: needs 16 bytes, 8 left"),
            "{command}: {stderr}"
        );
    }
}
