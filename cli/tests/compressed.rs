//! Compressed bundles through the clang-offload-bundler personality: every
//! CCOB that LLVM 22 and 19 made lists and unbundles as LLVM does, what we
//! compress LLVM 22 reads and is no larger, `-verbose` and the environment
//! variables behave as LLVM's, concatenated containers work, and bad inputs
//! fail with located errors.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{fixtures, llvm22, run, sorted_lines, Sandbox};

fn compressed() -> PathBuf {
    fixtures().join("compressed")
}

/// `(ccob, uncompressed bundle, list)` of every binary-format CCOB in the
/// MANIFEST (the `-type=s` one holds a text bundle).
fn manifest() -> Vec<(PathBuf, PathBuf, PathBuf)> {
    let text = std::fs::read_to_string(compressed().join("MANIFEST")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.contains("asm."))
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let c = compressed();
            (c.join(f[0]), c.join(f[5]), c.join(f[6]))
        })
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn unbundle(tool: &Path, input: &Path, target: &str, output: &Path) -> Output {
    run(
        tool,
        &[
            "-type=o".to_owned(),
            format!("-input={}", input.display()),
            format!("-targets={target}"),
            format!("-output={}", output.display()),
            "-unbundle".to_owned(),
        ],
    )
}

#[test]
fn every_llvm_ccob_lists_and_unbundles_like_its_uncompressed_bundle() {
    let sb = Sandbox::new();
    let llvm = llvm22();
    let all = manifest();
    assert!(all.len() >= 10, "{all:?}");
    for (ccob, bundle, list) in all {
        let listed = run(
            &sb.ours(),
            &["-type=o", "-list", &format!("-input={}", ccob.display())],
        );
        assert!(
            listed.status.success(),
            "{}: {}",
            ccob.display(),
            stderr(&listed)
        );
        let expected = std::fs::read_to_string(&list).unwrap();
        assert_eq!(
            sorted_lines(&listed.stdout),
            sorted_lines(expected.as_bytes())
        );
        for target in expected.lines() {
            let ours = sb.path("ours");
            let r = unbundle(&sb.ours(), &ccob, target, &ours);
            assert!(r.status.success(), "{}: {}", ccob.display(), stderr(&r));
            let plain = sb.path("plain");
            assert!(unbundle(&sb.ours(), &bundle, target, &plain)
                .status
                .success());
            assert!(std::fs::read(&ours).unwrap() == std::fs::read(&plain).unwrap());
            if let Some(llvm) = &llvm {
                let theirs = sb.path("theirs");
                assert!(unbundle(llvm, &ccob, target, &theirs).status.success());
                assert!(
                    std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
                    "{} {target}",
                    ccob.display()
                );
            }
        }
    }
}

/// Lines that do not depend on timing.
fn steady(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.contains(" speed: ")).collect()
}

#[test]
fn verbose_decompression_lines_match_llvm_22() {
    let sb = Sandbox::new();
    let mut checked = 0;
    for (ccob, _, _) in manifest() {
        let verbose = ccob.with_extension("verbose");
        let Ok(expected) = std::fs::read_to_string(&verbose) else {
            continue;
        };
        let r = run(
            &sb.ours(),
            &[
                "-type=o",
                "-list",
                "-verbose",
                &format!("-input={}", ccob.display()),
            ],
        );
        assert!(r.status.success());
        assert_eq!(steady(&stderr(&r)), steady(&expected), "{}", ccob.display());
        checked += 1;
    }
    assert!(checked >= 10);
    let plain = compressed().join("llvm22/hip.bundle");
    let r = run(
        &sb.ours(),
        &[
            "-type=o",
            "-list",
            "-verbose",
            &format!("-input={}", plain.display()),
        ],
    );
    assert_eq!(stderr(&r), "Uncompressed bundle.\n");
}

/// The bundling command lines of the fixtures' `hip` and `big` sets.
fn bundling_cases() -> Vec<Vec<String>> {
    let inputs = compressed().join("inputs");
    let input = |name: &str| format!("-input={}", inputs.join(name).display());
    vec![
        vec![
            "-type=o".into(),
            "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+,hipv4-amdgcn-amd-amdhsa--gfx1100".into(),
            "-input=/dev/null".into(),
            input("tu1-gfx906.o"),
            input("tu1-gfx90a-xnack.o"),
            input("tu1-gfx1100.o"),
        ],
        vec![
            "-type=bc".into(),
            "-targets=host-x86_64-unknown-linux-gnu,openmp-amdgcn-amd-amdhsa--gfx906".into(),
            input("big.txt"),
            input("tu1-gfx906.o"),
        ],
    ]
}

/// The verbose lines that do not depend on the compressed size or timing.
fn size_free(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            !l.contains(" speed: ")
                && !l.starts_with("Total file size")
                && !l.starts_with("Binary size after")
                && !l.starts_with("Compression rate")
                && !l.starts_with("Compression ratio")
        })
        .collect()
}

/// Whether `tool` uses libzstd 1.5.4, the version we build in: then the same
/// parameters give the same bytes. (Debian 12's LLVM 22 does.)
fn links_zstd_1_5_4(tool: &Path) -> bool {
    let Ok(ldd) = Command::new("ldd").arg(tool).output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&ldd.stdout);
    let same = text
        .lines()
        .filter_map(|l| l.split("=> ").nth(1)?.split(' ').next())
        .filter(|lib| lib.contains("libzstd"))
        .any(|lib| {
            std::fs::canonicalize(lib).is_ok_and(|p| p.to_string_lossy().ends_with("1.5.4"))
        });
    if !same {
        eprintln!(
            "NOTICE: {} does not link libzstd 1.5.4; checking sizes only",
            tool.display()
        );
    }
    same
}

#[test]
fn what_we_compress_llvm_22_reads_byte_for_byte() {
    let Some(llvm) = llvm22() else { return };
    let same_zstd = links_zstd_1_5_4(&llvm);
    let sb = Sandbox::new();
    type Setting<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let settings: &[Setting] = &[
        (&[], &[]),
        (&["-compression-level=19"], &[]),
        (&["-bundle-align=4096"], &[]),
        (&[], &[("COMPRESSED_BUNDLE_FORMAT_VERSION", "2")]),
        (
            &["-compression-level=1"],
            &[("COMPRESSED_BUNDLE_FORMAT_VERSION", "3")],
        ),
    ];
    for case in bundling_cases() {
        for (extra, env) in settings {
            let make = |tool: &Path, out: &Path| {
                let mut cmd = Command::new(tool);
                cmd.args(&case)
                    .args(*extra)
                    .args(["-compress", "-verbose"])
                    .arg(format!("-output={}", out.display()));
                for (k, v) in *env {
                    cmd.env(k, v);
                }
                cmd.output().unwrap()
            };
            let (ours, theirs) = (sb.path("ours.ccob"), sb.path("theirs.ccob"));
            let (o, t) = (make(&sb.ours(), &ours), make(&llvm, &theirs));
            assert!(o.status.success() && t.status.success(), "{}", stderr(&o));
            let (ours_bytes, theirs_bytes) = (
                std::fs::read(&ours).unwrap(),
                std::fs::read(&theirs).unwrap(),
            );
            assert_eq!(
                &ours_bytes[..8],
                &theirs_bytes[..8],
                "magic, version, method"
            );
            if same_zstd {
                assert!(
                    ours_bytes == theirs_bytes,
                    "{case:?} {extra:?}: bytes differ"
                );
            }
            assert!(
                ours_bytes.len() <= theirs_bytes.len(),
                "{case:?} {extra:?}: ours {} > LLVM {}",
                ours_bytes.len(),
                theirs_bytes.len()
            );
            assert_eq!(
                size_free(&stderr(&o)),
                size_free(&stderr(&t)),
                "{case:?} {extra:?}"
            );
            // LLVM reads ours: the same list, and every entry unbundles to the
            // entry LLVM unbundles from its own.
            let list = |file: &Path| {
                let r = run(
                    &llvm,
                    &["-type=o", "-list", &format!("-input={}", file.display())],
                );
                assert!(r.status.success(), "{}", stderr(&r));
                sorted_lines(&r.stdout)
            };
            let targets = list(&ours);
            assert_eq!(targets, list(&theirs));
            for target in &targets {
                let (a, b) = (sb.path("a"), sb.path("b"));
                assert!(unbundle(&llvm, &ours, target, &a).status.success());
                assert!(unbundle(&llvm, &theirs, target, &b).status.success());
                assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
            }
        }
    }
}

#[test]
fn environment_variables_act_and_warn_as_in_llvm_22() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let case = &bundling_cases()[0];
    let envs: &[&[(&str, &str)]] = &[
        &[("OFFLOAD_BUNDLER_COMPRESS", "1")],
        &[("OFFLOAD_BUNDLER_COMPRESS", "yes")],
        &[
            ("OFFLOAD_BUNDLER_COMPRESS", "1"),
            ("OFFLOAD_BUNDLER_VERBOSE", "1"),
        ],
        &[
            ("OFFLOAD_BUNDLER_COMPRESS", "1"),
            ("OFFLOAD_BUNDLER_VERBOSE", "1"),
            ("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "abc"),
            ("COMPRESSED_BUNDLE_FORMAT_VERSION", "4"),
        ],
        &[
            ("OFFLOAD_BUNDLER_COMPRESS", "1"),
            ("OFFLOAD_BUNDLER_VERBOSE", "1"),
            ("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "7"),
            ("COMPRESSED_BUNDLE_FORMAT_VERSION", "abc"),
        ],
        &[
            ("COMPRESSED_BUNDLE_FORMAT_VERSION", ""),
            ("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", ""),
        ],
        &[
            ("OFFLOAD_BUNDLER_COMPRESS", "1"),
            ("COMPRESSED_BUNDLE_FORMAT_VERSION", "2"),
        ],
        &[
            ("OFFLOAD_BUNDLER_COMPRESS", "1"),
            ("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1"),
        ],
    ];
    let overrides: &[&[&str]] = &[
        &[],
        &["-compress=false"],
        &["-verbose=0", "-compression-level=2"],
    ];
    for env in envs {
        for extra in overrides {
            let make = |tool: &Path, out: &Path| {
                let mut cmd = Command::new(tool);
                cmd.args(case)
                    .args(*extra)
                    .arg(format!("-output={}", out.display()));
                for (k, v) in *env {
                    cmd.env(k, v);
                }
                cmd.output().unwrap()
            };
            let (ours, theirs) = (sb.path("ours"), sb.path("theirs"));
            let (o, t) = (make(&sb.ours(), &ours), make(&llvm, &theirs));
            assert_eq!(o.status.code(), t.status.code(), "{env:?} {extra:?}");
            assert_eq!(
                size_free(&stderr(&o)),
                size_free(&stderr(&t)),
                "{env:?} {extra:?}"
            );
            let (a, b) = (
                std::fs::read(&ours).unwrap(),
                std::fs::read(&theirs).unwrap(),
            );
            assert_eq!(
                a.get(..8),
                b.get(..8),
                "{env:?} {extra:?}: same kind of output"
            );
        }
    }
}

#[test]
fn concatenated_containers_are_all_listed_and_unbundled() {
    let sb = Sandbox::new();
    let fatbin = compressed().join("concat/hip.hip_fatbin");
    let layout = std::fs::read_to_string(compressed().join("concat/hip.layout")).unwrap();
    // The list is every container's list in turn.
    let mut expected = String::new();
    for line in layout.lines().filter(|l| !l.starts_with('#')) {
        let piece = compressed().join(line.split('|').nth(2).unwrap());
        let r = run(
            &sb.ours(),
            &["-type=o", "-list", &format!("-input={}", piece.display())],
        );
        expected += &String::from_utf8_lossy(&r.stdout);
    }
    let r = run(
        &sb.ours(),
        &["-type=o", "-list", &format!("-input={}", fatbin.display())],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(String::from_utf8_lossy(&r.stdout), expected);
    assert_eq!(expected.lines().count(), 13);
    // Unbundling takes the first container's entry and names the others.
    let out = sb.path("gfx906.o");
    let r = unbundle(&sb.ours(), &fatbin, "hipv4-amdgcn-amd-amdhsa--gfx906", &out);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        std::fs::read(&out).unwrap()
            == std::fs::read(compressed().join("inputs/tu1-gfx906.o")).unwrap()
    );
    // One line for the ID written, naming the three containers passed
    // over; none for the IDs not asked for.
    let warned: Vec<String> = stderr(&r).lines().map(str::to_owned).collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].ends_with(
            "'hipv4-amdgcn-amd-amdhsa--gfx906' is also in the containers at offsets \
             0x2000, 0x4000, 0x6000; using the one at offset 0x0"
        ),
        "{warned:?}"
    );
}

fn write(sb: &Sandbox, name: &str, bytes: &[u8]) -> PathBuf {
    let path = sb.path(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn damaged_compressed_bundles_fail_with_located_errors() {
    let sb = Sandbox::new();
    let good = std::fs::read(compressed().join("llvm22/hip.v3.ccob")).unwrap();
    let list = |path: &Path, env: &[(&str, &str)]| {
        let mut cmd = Command::new(sb.ours());
        cmd.args(["-type=o", "-list", &format!("-input={}", path.display())]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let mut bad_hash = good.clone();
    bad_hash[24] ^= 1;
    cases.push((
        "hash",
        bad_hash.clone(),
        "hash mismatch: stored 0x521b3f7798bcda77",
    ));
    let mut version = good.clone();
    version[4] = 4;
    cases.push((
        "version",
        version,
        "unsupported compressed bundle version 4",
    ));
    let mut method = good.clone();
    method[6] = 2;
    cases.push(("method", method, "unknown compression method 2"));
    cases.push((
        "truncated",
        good[..20].to_vec(),
        "truncated uncompressed size",
    ));
    let mut total = good.clone();
    total[8..16].copy_from_slice(&(good.len() as u64 + 1).to_le_bytes());
    cases.push(("total", total, "truncated compressed data"));
    let mut declared = good.clone();
    declared[16..24].copy_from_slice(&(3u64 << 30).to_le_bytes());
    cases.push(("huge", declared, "exceeds the limit of 1073741824 bytes"));
    let mut garbage = good.clone();
    for b in &mut garbage[40..200] {
        *b = 0x55;
    }
    cases.push(("garbage", garbage, "corrupt zstd stream"));
    let unbundle = |path: &Path| {
        let mut cmd = Command::new(sb.ours());
        cmd.args([
            "-type=o",
            "-unbundle",
            &format!("-input={}", path.display()),
            "-targets=hipv4-amdgcn-amd-amdhsa--gfx906",
            &format!("-output={}", sb.path("out").display()),
        ]);
        cmd.output().unwrap()
    };
    for (name, bytes, message) in &cases {
        let path = write(&sb, name, bytes);
        // -list reads only the entry table, so it cannot check the hash of
        // the whole bundle (LLVM's -list checks none); -unbundle does.
        let r = if *name == "hash" {
            assert!(list(&path, &[]).status.success());
            unbundle(&path)
        } else {
            list(&path, &[])
        };
        assert_eq!(r.status.code(), Some(1), "{name}: {}", stderr(&r));
        let err = stderr(&r);
        assert!(err.contains(message), "{name}: {err}");
        assert!(err.contains("at offset 0x"), "{name}: {err}");
    }
    // LLVM's behaviour on request: a wrong hash accepted; a higher limit.
    let path = write(&sb, "hash", &bad_hash);
    let mut cmd = Command::new(sb.ours());
    cmd.args([
        "-type=o",
        "-unbundle",
        &format!("-input={}", path.display()),
        "-targets=hipv4-amdgcn-amd-amdhsa--gfx906",
        &format!("-output={}", sb.path("out").display()),
    ]);
    let r = cmd
        .env("CLANGOFFLOAD_SKIP_HASH_CHECK", "1")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    let good_path = write(&sb, "good", &good);
    let r = list(
        &good_path,
        &[("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE", "1000")],
    );
    assert!(
        stderr(&r).contains("exceeds the limit of 1000 bytes"),
        "{}",
        stderr(&r)
    );
}

/// The fuzz finding `empty-compressed-block`: a zstd frame holding an empty
/// compressed block, which LLVM's one-shot libzstd refuses and libzstd's
/// streaming decoder (ours while hashing) would skip. Refused at the block,
/// with the hash check and without, as LLVM 22 refuses it.
#[test]
fn an_empty_zstd_compressed_block_is_refused_as_llvm_22_refuses_it() {
    let sb = Sandbox::new();
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/artifacts-found/compressed_decompress/empty-compressed-block");
    let data = std::fs::read(&input).unwrap();
    // The frame starts at 0x14 (a version 1 header); the block header at
    // 0x55 is type 2 (compressed), size 0.
    assert_eq!(&data[0x14..0x18], b"\x28\xb5\x2f\xfd");
    assert_eq!(&data[0x55..0x58], [0b100, 0, 0]);
    for skip_hash in ["0", "1"] {
        let r = Command::new(sb.ours())
            .args(["-type=o", "-list", &format!("-input={}", input.display())])
            .env("CLANGOFFLOAD_SKIP_HASH_CHECK", skip_hash)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
        assert!(
            stderr(&r).contains("corrupt zstd stream: malformed data (at offset 0x55)"),
            "skip hash {skip_hash}: {}",
            stderr(&r)
        );
    }
    let Some(llvm) = llvm22() else { return };
    let r = run(
        &llvm,
        &["-type=o", "-list", &format!("-input={}", input.display())],
    );
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("Data corruption detected"),
        "{}",
        stderr(&r)
    );
}

fn clangoffload(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clangoffload"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn inspect_reports_every_container_as_json() {
    let fatbin = compressed().join("concat/hip.hip_fatbin");
    // Without --verify only the entry tables are decoded: no hash.
    let r = clangoffload(&["inspect", "--json", fatbin.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let tables: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let r = clangoffload(&["inspect", "--json", "--verify", fatbin.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    for (c, t) in v["containers"]
        .as_array()
        .unwrap()
        .iter()
        .zip(tables["containers"].as_array().unwrap())
    {
        let ids = |c: &serde_json::Value| -> Vec<(serde_json::Value, serde_json::Value, serde_json::Value)> {
            c["entries"].as_array().unwrap().iter().map(|e| (e["id"].clone(), e["offset"].clone(), e["size"].clone())).collect()
        };
        assert_eq!(ids(c), ids(t));
        if c["kind"] == "compressed" {
            assert!(t["compressed"]["computed_hash"].is_null());
            assert!(t["compressed"]["hash_matches"].is_null());
        }
    }
    assert_eq!(v["schema"], 1);
    let containers = v["containers"].as_array().unwrap();
    let offsets: Vec<u64> = containers
        .iter()
        .map(|c| c["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [0, 8192, 16384, 24576]);
    let versions: Vec<_> = containers
        .iter()
        .map(|c| c["compressed"]["version"].as_u64())
        .collect();
    assert_eq!(versions, [Some(3), Some(2), Some(2), None]);
    for c in &containers[..3] {
        let h = &c["compressed"];
        assert_eq!(h["method"], "zstd");
        assert_eq!(h["hash_matches"], true);
        assert_eq!(h["hash"], h["computed_hash"]);
        assert_eq!(h["total_size"], c["size"]);
        assert!(h["ratio"].as_f64().unwrap() > 5.0);
    }
    assert_eq!(containers[3]["kind"], "bundle");
    let ids: Vec<usize> = containers
        .iter()
        .map(|c| c["entries"].as_array().unwrap().len())
        .collect();
    assert_eq!(ids, [4, 3, 3, 3]);
    assert!(v["error"].is_null());
    // The text form says the same.
    let r = clangoffload(&["inspect", "--verify", fatbin.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("container 2 at offset 0x4000: compressed bundle, 5,298 bytes"));
    assert_eq!(text.matches("(matches)").count(), 3);
    let r = clangoffload(&["inspect", fatbin.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert_eq!(text.matches("(not checked: --verify").count(), 3);
}

#[test]
fn inspect_reports_a_damaged_container_and_goes_on() {
    let sb = Sandbox::new();
    let mut fatbin = std::fs::read(compressed().join("concat/hip.hip_fatbin")).unwrap();
    fatbin[8192 + 16] ^= 0xff; // the second container's hash (v2: at 16)
    let path = write(&sb, "damaged", &fatbin);
    // Only --verify decodes far enough to see it.
    let r = clangoffload(&["inspect", "--json", path.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let r = clangoffload(&["inspect", "--json", "--verify", path.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let containers = v["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 4);
    assert_eq!(containers[1]["compressed"]["hash_matches"], false);
    assert!(containers[1]["error"]
        .as_str()
        .unwrap()
        .contains("hash mismatch"));
    assert!(containers[2]["error"].is_null());
    // A header that cannot be read ends the walk with a located error.
    fatbin[16384 + 4] = 9;
    let path = write(&sb, "damaged2", &fatbin);
    let r = clangoffload(&["inspect", "--json", path.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["containers"].as_array().unwrap().len(), 2);
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains("at offset 0x4000") && error.contains("version 9"),
        "{error}"
    );
}

#[test]
fn list_and_extract_read_compressed_and_concatenated_files() {
    let sb = Sandbox::new();
    let fatbin = compressed().join("concat/hip.hip_fatbin");
    let r = clangoffload(&["list", fatbin.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(String::from_utf8_lossy(&r.stdout).lines().count(), 13);
    let dir = sb.path("out");
    std::fs::create_dir(&dir).unwrap();
    let ccob = compressed().join("llvm22/hip.v3.ccob");
    let r = clangoffload(&[
        "extract",
        ccob.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let gfx906 = dir.join("hip.v3.ccob.1.hipv4-amdgcn-amd-amdhsa--gfx906");
    assert!(
        std::fs::read(gfx906).unwrap()
            == std::fs::read(compressed().join("inputs/tu1-gfx906.o")).unwrap()
    );
}

#[test]
fn llvm_22_reads_our_zlib_compressed_bundles() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let case = &bundling_cases()[0];
    for version in ["2", "3"] {
        let out = sb.path("zlib.ccob");
        let r = Command::new(sb.ours())
            .args(case)
            .args([
                "-compress",
                "-verbose",
                &format!("-output={}", out.display()),
            ])
            .env("CLANGOFFLOAD_COMPRESSION_METHOD", "zlib")
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", version)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", stderr(&r));
        assert!(stderr(&r).contains("Compression method used: zlib\nCompression level: 6\n"));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[4..8], &[version.parse::<u8>().unwrap(), 0, 0, 0]);
        let r = run(
            &llvm,
            &[
                "-type=o",
                "-list",
                "-verbose",
                &format!("-input={}", out.display()),
            ],
        );
        assert!(r.status.success(), "{}", stderr(&r));
        assert!(stderr(&r).contains("Decompression method: zlib"));
        assert!(stderr(&r).contains("Hashes match: Yes"));
        for target in String::from_utf8_lossy(&r.stdout).lines() {
            let (a, b) = (sb.path("a"), sb.path("b"));
            assert!(unbundle(&llvm, &out, target, &a).status.success());
            assert!(unbundle(&sb.ours(), &out, target, &b).status.success());
            assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
        }
    }
}

/// A valid zlib compressed bundle around arbitrary (possibly damaged) bytes.
fn wrap(inner: &[u8]) -> Vec<u8> {
    use clangoffload::compressed::{compress, CompressOptions};
    let options = CompressOptions {
        version: 3,
        method: clangoffload::CompressionMethod::Zlib,
        level: None,
    };
    compress(inner, &options).unwrap()
}

#[test]
fn a_damaged_bundle_inside_a_good_compressed_bundle_is_located() {
    let sb = Sandbox::new();
    let mut huge_count = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    huge_count.extend_from_slice(&(1u64 << 63).to_le_bytes());
    huge_count.extend_from_slice(&[0; 64]);
    let mut past_end = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    past_end.extend_from_slice(&1u64.to_le_bytes());
    for n in [100u64, 50, 3] {
        past_end.extend_from_slice(&n.to_le_bytes()); // offset, size, id length
    }
    past_end.extend_from_slice(b"h-x");
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "count",
            &huge_count,
            "entry count 9223372036854775808 cannot fit",
        ),
        ("past-end", &past_end, "ends past the end of the input"),
        (
            "nested",
            &wrap(&huge_count),
            "compressed bundle contains another",
        ),
        (
            "not-a-bundle",
            b"plain text, not a bundle",
            "something other than a binary bundle",
        ),
    ];
    for (name, inner, message) in cases {
        let path = write(&sb, name, &wrap(inner));
        for args in [
            vec![
                "-type=o".to_owned(),
                "-list".into(),
                format!("-input={}", path.display()),
            ],
            vec![
                "-type=o".to_owned(),
                "-unbundle".into(),
                format!("-input={}", path.display()),
                "-targets=hipv4-amdgcn-amd-amdhsa--gfx906".into(),
                format!("-output={}", sb.path("o").display()),
            ],
        ] {
            let r = run(&sb.ours(), &args);
            assert_eq!(r.status.code(), Some(1), "{name}: {}", stderr(&r));
            assert!(stderr(&r).contains(message), "{name}: {}", stderr(&r));
        }
    }
}

#[test]
fn ids_that_are_not_utf8_inside_a_compressed_bundle_are_listed_as_bytes() {
    let sb = Sandbox::new();
    let odd: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx906\xff";
    let host: &[u8] = b"host-x86_64--linux-";
    let bundle = clangoffload::bundle::write_bundle(&[(odd, b"code"), (host, b"")], 1).unwrap();
    let path = write(&sb, "odd.ccob", &wrap(&bundle));
    let r = run(
        &sb.ours(),
        &["-type=o", "-list", &format!("-input={}", path.display())],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(
        r.stdout,
        b"hip-amdgcn-amd-amdhsa--gfx906\xff\nhost-x86_64--linux-\n"
    );
    let r = unbundle(
        &sb.ours(),
        &path,
        "hip-amdgcn-amd-amdhsa--gfx906",
        &sb.path("o"),
    );
    // As LLVM 22: `gfx906\xff` is no processor, so the entry is not gfx906.
    assert_eq!(r.status.code(), Some(1));
    assert!(
        stderr(&r).contains("Can't find bundles for hip-amdgcn-amd-amdhsa--gfx906"),
        "{}",
        stderr(&r)
    );
}

/// The decompression limit is for each compressed bundle: three containers
/// that each fit are read together, in a file and across an archive's
/// members, however much they add up to; one that does not fit is refused
/// before it is decoded.
#[test]
fn the_decompression_limit_is_for_each_container() {
    let sb = Sandbox::new();
    let payload = vec![7u8; 400 << 10];
    let id = b"hipv4-amdgcn-amd-amdhsa--gfx906";
    let bundle = clangoffload::bundle::write_bundle(&[(id, &payload)], 4096).unwrap();
    let (one, size) = (wrap(&bundle), bundle.len());
    let three = write(&sb, "three", &one.repeat(3));
    let fits = ("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE", "1000000");
    let too_small = ("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE", "400000");
    let bundler = |args: &[String], env: &[(&str, &str)]| {
        let mut cmd = Command::new(sb.ours());
        cmd.args(args);
        cmd.envs(env.iter().copied());
        cmd.output().unwrap()
    };
    let list = [
        "-type=o".into(),
        "-list".into(),
        format!("-input={}", three.display()),
    ];
    let unbundle = [
        "-type=o".into(),
        "-unbundle".into(),
        format!("-input={}", three.display()),
        format!("-targets={}", std::str::from_utf8(id).unwrap()),
        format!("-output={}", sb.path("out").display()),
    ];
    for args in [&list[..], &unbundle[..]] {
        // 3 × 413696 bytes, above the limit together, each below it.
        assert!(3 * size > 1_000_000);
        let r = bundler(args, &[fits]);
        assert!(r.status.success(), "{}", stderr(&r));
        let r = bundler(args, &[too_small]);
        assert_eq!(r.status.code(), Some(1));
        assert!(
            stderr(&r).contains(&format!(
                "compressed bundle at offset 0x0: size {size} exceeds the limit of 400000 bytes"
            )),
            "{}",
            stderr(&r)
        );
    }

    // An archive whose three members each hold one.
    let members: Vec<_> = ["a.o", "b.o", "c.o"]
        .iter()
        .map(|name| clangoffload::archive::NewMember {
            name: name.as_bytes(),
            data: &one,
            symbols: None,
        })
        .collect();
    let archive = write(
        &sb,
        "lib.a",
        &clangoffload::archive::write_archive(&members).unwrap(),
    );
    let unbundle = [
        "-type=a".into(),
        "-unbundle".into(),
        format!("-input={}", archive.display()),
        format!("-targets={}", std::str::from_utf8(id).unwrap()),
        format!("-output={}", sb.path("out.a").display()),
    ];
    let r = bundler(&unbundle, &[fits]);
    assert!(r.status.success(), "{}", stderr(&r));
    let r = bundler(&unbundle, &[too_small]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        stderr(&r).contains("member 'a.o'") && stderr(&r).contains("exceeds the limit"),
        "{}",
        stderr(&r)
    );
}

/// A compressed bundle large enough that our verified decoding hashes on a
/// second thread while it decodes (2 MiB of device code per target), made
/// by LLVM 22: every target unbundles to its input, as LLVM unbundles it; a
/// wrong hash is refused, naming both hashes (the computed one is LLVM's).
#[test]
fn a_large_llvm_ccob_unbundles_with_its_hash_checked() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let targets = [
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa--gfx90a",
    ];
    let inputs: Vec<PathBuf> = (0..2u32)
        .map(|t| {
            let code: Vec<u8> = (0..(1u32 << 19))
                .flat_map(|i| ((i / 5) ^ (i >> 9) ^ t).to_le_bytes())
                .collect();
            write(&sb, &format!("dev{t}.o"), &code)
        })
        .collect();
    let ccob = sb.path("big.ccob");
    let mut make = Command::new(&llvm);
    make.args(["-type=o", "-compress"])
        .arg(format!(
            "-targets=host-x86_64-unknown-linux-gnu-,{}",
            targets.join(",")
        ))
        .arg("-input=/dev/null")
        .args(inputs.iter().map(|p| format!("-input={}", p.display())))
        .arg(format!("-output={}", ccob.display()));
    let made = make.output().unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let bytes = std::fs::read(&ccob).unwrap();
    assert_eq!(&bytes[..6], b"CCOB\x03\x00", "LLVM 22 writes version 3");
    for (target, input) in targets.iter().zip(&inputs) {
        let (ours, theirs) = (sb.path("ours.o"), sb.path("theirs.o"));
        let o = unbundle(&sb.ours(), &ccob, target, &ours);
        let t = unbundle(&llvm, &ccob, target, &theirs);
        assert!(o.status.success() && t.status.success(), "{}", stderr(&o));
        let ours = std::fs::read(&ours).unwrap();
        assert_eq!(ours, std::fs::read(input).unwrap(), "{target}");
        assert_eq!(ours, std::fs::read(&theirs).unwrap(), "{target}");
    }
    let mut bad_hash = bytes.clone();
    bad_hash[24] ^= 1;
    let bad = write(&sb, "bad.ccob", &bad_hash);
    let r = unbundle(&sb.ours(), &bad, targets[0], &sb.path("x.o"));
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let stored = u64::from_le_bytes(bytes[24..32].try_into().unwrap());
    let mismatch = format!(
        "hash mismatch: stored {:#018x}, computed {stored:#018x}",
        stored ^ 1
    );
    assert!(stderr(&r).contains(&mismatch), "{}", stderr(&r));
}
