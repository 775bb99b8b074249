//! `list`, `extract` and `inspect` on CUDA fat binaries (tests/fixtures/cuda,
//! made by clang 22 and NVIDIA's tools): the images cuobjdump lists, under
//! its names, with the bytes it extracts (MANIFEST.sha256), every header
//! field in JSON, located errors for damaged fat binaries, and a plain
//! message for a file with nothing to list.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{fixtures, Sandbox};

fn cuda(name: &str) -> PathBuf {
    fixtures().join("cuda").join(name)
}

fn clangoffload(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clangoffload"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sha256(data: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()[..64].to_owned()
}

/// MANIFEST.sha256 lines of one fixture: name -> hash.
fn manifest(fixture: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(cuda("MANIFEST.sha256")).unwrap();
    text.lines()
        .filter_map(|l| {
            let (hash, rest) = l.split_once("  ")?;
            let name = rest.strip_prefix(&format!("{fixture}: "))?;
            Some((name.to_owned(), hash.to_owned()))
        })
        .collect()
}

#[test]
fn list_shows_what_cuobjdump_lists() {
    for fixture in [
        "nvcc-two-tu.so",
        "clang-multi-ptx.o",
        "raw-concat-zstd.fatbin",
    ] {
        let r = clangoffload(&["list", cuda(fixture).to_str().unwrap()]);
        assert!(r.status.success(), "{fixture}: {}", stderr(&r));
        let mut listed: Vec<String> = stdout(&r).lines().map(str::to_owned).collect();
        listed.sort();
        let expected: Vec<String> = manifest(fixture).into_keys().collect();
        assert_eq!(listed, expected, "{fixture}");
    }
}

/// A static library from `nvcc -lib`: each member's images, named by
/// cuobjdump's numbers going on across members, each line with its member
/// as bundles in archives have.
#[test]
fn list_of_a_static_library_names_each_member() {
    let r = clangoffload(&["list", cuda("nvcc-lib.a").to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(
        stdout(&r),
        "tmpxft_00002ba0_00000000-16_a.o: nvcc-lib.1.sm_80.cubin\n\
         tmpxft_00002ba0_00000000-16_a.o: nvcc-lib.1.sm_90.ptx\n\
         tmpxft_00002ba0_00000000-20_b.o: nvcc-lib.2.sm_80.cubin\n\
         tmpxft_00002ba0_00000000-20_b.o: nvcc-lib.2.sm_90.ptx\n"
    );
    let r = clangoffload(&[
        "inspect",
        "--json",
        cuda("nvcc-lib-rdc.a").to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let json: serde_json::Value = serde_json::from_str(&stdout(&r)).unwrap();
    let fatbins = json["cuda_fatbins"].as_array().unwrap();
    let places: Vec<_> = fatbins
        .iter()
        .map(|f| {
            (
                f["archive_member"].as_str().unwrap(),
                f["place"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            (
                "tmpxft_00003022_00000000-13_a.o",
                "(tmpxft_00003022_00000000-13_a.o)[__nv_relfatbin]"
            ),
            (
                "tmpxft_00003022_00000000-16_b.o",
                "(tmpxft_00003022_00000000-16_b.o)[__nv_relfatbin]"
            ),
        ]
    );
}

#[test]
fn extract_writes_cuobjdumps_bytes_under_its_names() {
    for fixture in [
        "nvcc-rdc-linked.so",
        "clang-lz4.o",
        "raw-concat-lz4.fatbin",
        "nvcc-a-debug.o",
        "nvcc-lib.a",
        "nvcc-lib-rdc.a",
    ] {
        let sb = Sandbox::new();
        let dir = sb.path("out");
        let r = clangoffload(&[
            "extract",
            cuda(fixture).to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{fixture}: {}", stderr(&r));
        let got: BTreeMap<String, String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().into_string().unwrap();
                (name, sha256(&std::fs::read(e.path()).unwrap()))
            })
            .collect();
        assert_eq!(got, manifest(fixture), "{fixture}");
        // A second run finds the files there and writes nothing.
        let again = clangoffload(&[
            "extract",
            cuda(fixture).to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ]);
        assert!(!again.status.success() && stderr(&again).contains("file exists"));
    }
}

#[test]
fn inspect_json_has_every_header_field() {
    let r = clangoffload(&[
        "inspect",
        "--json",
        cuda("raw-ident-opts-debug.fatbin").to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let f = &v["cuda_fatbins"][0];
    assert_eq!(
        (f["version"].as_u64(), f["header_size"].as_u64()),
        (Some(1), Some(16))
    );
    let ptx = &f["entries"][1];
    for (key, value) in [
        ("kind", serde_json::json!("ptx")),
        ("kind_id", serde_json::json!(1)),
        ("version", serde_json::json!(0x101)),
        ("header_size", serde_json::json!(96)),
        ("payload_size", serde_json::json!(1880)),
        ("compressed_size", serde_json::json!(0)),
        ("uncompressed_size", serde_json::json!(0)),
        ("options_offset", serde_json::json!(0x50)),
        ("code_version", serde_json::json!("8.8")),
        ("arch", serde_json::json!(80)),
        ("sm", serde_json::json!("sm_80")),
        ("flags", serde_json::json!(0x13)),
        ("reserved", serde_json::json!(0)),
        ("identifier_offset", serde_json::json!(0x40)),
        ("identifier_length", serde_json::json!(10)),
        ("identifier", serde_json::json!("myident.cu")),
        ("options", serde_json::json!("-O3 -v")),
        ("extracted_as", serde_json::json!("myident.sm_80.ptx")),
    ] {
        assert_eq!(ptx[key], value, "{key}");
    }
    // In a host: the section, and no complaint about the fat binary.
    let r = clangoffload(&["inspect", cuda("clang-sm100-sm120.o").to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let text = stdout(&r);
    assert!(text.contains("[.nv_fatbin]: CUDA fat binary"), "{text}");
    assert!(text.contains("elf sm_120"), "{text}");
}

#[test]
fn damaged_fat_binaries_fail_with_a_located_error() {
    let sb = Sandbox::new();
    let mut data = std::fs::read(cuda("raw-lz4.fatbin")).unwrap();
    // The first entry's compressed size beyond its payload.
    data[16 + 0x10..16 + 0x14].copy_from_slice(&100_000u32.to_le_bytes());
    let path = sb.path("bad.fatbin");
    std::fs::write(&path, &data).unwrap();
    for command in ["list", "inspect"] {
        let r = clangoffload(&[command, path.to_str().unwrap()]);
        assert!(!r.status.success(), "{command}");
        let message = stderr(&r) + &stdout(&r);
        assert!(
            message.contains("compressed size 100000") && message.contains("0x20"),
            "{command}: {message}"
        );
    }
}

#[test]
fn scan_prints_the_fat_binaries_anywhere_in_a_file() {
    // Two fat binaries back to back at an odd offset, a damaged one, and an
    // OffloadBinary holding a fat binary.
    let sb = Sandbox::new();
    let lz4 = std::fs::read(cuda("raw-lz4.fatbin")).unwrap();
    let zstd = std::fs::read(cuda("raw-zstd.fatbin")).unwrap();
    let mut bad = std::fs::read(cuda("raw-default.fatbin")).unwrap();
    bad[6] = 17; // header size
    let mut data = vec![0xa5u8; 4097];
    data.extend_from_slice(&lz4);
    data.extend_from_slice(&zstd);
    let bad_at = data.len() + 3;
    data.extend_from_slice(&[0xa5; 3]);
    data.extend_from_slice(&bad);
    let path = sb.path("image.bin");
    std::fs::write(&path, &data).unwrap();
    let r = clangoffload(&["scan", path.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(
        stdout(&r),
        format!(
            "0x1001\tCUDA fat binary\t3,008 bytes\n{:#x}\tCUDA fat binary\t2,264 bytes\n",
            4097 + lz4.len()
        )
    );
    let r = clangoffload(&["scan", "--rejected", path.to_str().unwrap()]);
    assert!(
        stdout(&r).ends_with(&format!(
            "{bad_at:#x}\trejected CUDA fat binary: fat binary header size not allowed\n"
        )),
        "{}",
        stdout(&r)
    );
    let r = clangoffload(&[
        "scan",
        cuda("offload-cubin-fatbin-ptx.offbin").to_str().unwrap(),
    ]);
    let out = stdout(&r);
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("\toffload binary\t"))
            .count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("\tCUDA fat binary\t"))
            .count(),
        1,
        "{out}"
    );
}

#[test]
fn a_file_with_nothing_to_list_says_so() {
    // A clang -fgpu-rdc object: OffloadBinaries only, no bundle, no fat
    // binary (cuobjdump: "does not contain device code").
    let r = clangoffload(&["list", cuda("clang-rdc-k.o").to_str().unwrap()]);
    assert!(!r.status.success());
    assert!(r.stdout.is_empty());
    assert!(
        stderr(&r).contains("no bundle entry or CUDA fat binary entry"),
        "{}",
        stderr(&r)
    );
    // Bytes of no known format.
    let sb = Sandbox::new();
    let path = sb.path("plain.bin");
    std::fs::write(&path, b"nothing offload here").unwrap();
    let r = clangoffload(&["list", path.to_str().unwrap()]);
    assert!(
        !r.status.success()
            && stderr(&r).contains(
                "no offload container or CUDA fat binary: its 20 bytes are of no format we know"
            )
    );
}
