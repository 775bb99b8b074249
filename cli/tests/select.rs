//! `clangoffload select FILE --device TARGET`: the code a device loads from
//! each container, checked against the other ways of knowing it:
//! - kpack: every case rocm-kpack's own C++ loader was recorded resolving
//!   (tests/fixtures/kpack/loader/results.txt: 378 record x device x
//!   environment cases, loader e348328 = `--kpack-loader first`) gives the
//!   same code object (size and hash) or the same error code;
//! - bundles and compressed bundles: the choice named and written is the
//!   file `extract` writes under that name, byte for byte, and the one the
//!   HIP runtime's rule names for each device;
//! - CUDA: the driver's rule on a fat binary of sm_75, sm_80, compute_80 and
//!   sm_90 code, written as cuobjdump names the image;
//! - exit status 1 and a reason when a container gives the device nothing.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};

use clangoffload::compressed::truncated_md5;
use common::{clangoffload, fixtures};
use serde_json::Value;

/// `select --json` and its exit status.
fn select(args: &[&str], env: &[(&str, &str)]) -> (Value, bool) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_clangoffload"));
    command
        .arg("select")
        .args(args)
        .arg("--json")
        .env_remove("ROCM_KPACK_PATH")
        .env_remove("ROCM_KPACK_PATH_PREFIX")
        .env_remove("ROCM_KPACK_DISABLE");
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)));
    (report, out.status.success())
}

/// The zstd split's hosts and archives under `<root>/pkg/stage`, the
/// archives under their real names (":" where the fixtures have "_"), as
/// the loader was recorded on them.
fn install(root: &Path) -> PathBuf {
    let stage = root.join("pkg/stage");
    for dir in ["lib", "bin", ".kpack"] {
        std::fs::create_dir_all(stage.join(dir)).unwrap();
        for file in std::fs::read_dir(fixtures().join("kpack/zstd").join(dir)).unwrap() {
            let file = file.unwrap();
            let name = file
                .file_name()
                .to_string_lossy()
                .replace("gfx90a_xnack", "gfx90a:xnack");
            std::fs::copy(file.path(), stage.join(dir).join(name)).unwrap();
        }
    }
    stage
}

#[test]
fn kpack_records_resolve_as_rocm_kpacks_loader_did_in_every_recorded_case() {
    let tmp = tempfile::tempdir().unwrap();
    let stage = install(tmp.path());
    let results = std::fs::read_to_string(fixtures().join("kpack/loader/results.txt")).unwrap();
    let mut cases = 0;
    for (n, line) in results.lines().enumerate() {
        let f: Vec<&str> = line.split('|').collect();
        let (host, k, env, devices, want) = (f[0], f[1], f[2], f[3], f[4]);
        // The device's ISA: the runtime's list starts with it, and select
        // derives the generic target after it by CLR's table.
        let isa = devices.split(',').next().unwrap();
        let value = env
            .split_once('=')
            .map(|(name, v)| (name, v.replace("@ROOT@", stage.to_str().unwrap())));
        let env: Vec<(&str, &str)> = value.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let out = tmp.path().join(format!("out{n}"));
        let (report, _) = select(
            &[
                stage.join(host).to_str().unwrap(),
                "--device",
                isa,
                "--kpack-loader",
                "first",
                "-o",
                out.to_str().unwrap(),
            ],
            &env,
        );
        let choice = report["choices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"].as_str().unwrap().ends_with(&format!("#{k}")))
            .unwrap_or_else(|| panic!("{line}: no record {k} in {report}"));
        let got = if choice["loads"].as_bool().unwrap() {
            let bytes = std::fs::read(choice["output"].as_str().unwrap()).unwrap();
            format!("ok {} {:016x}", bytes.len(), truncated_md5(&bytes))
        } else {
            let reason = choice["reason"].as_str().unwrap();
            let code = reason
                .strip_prefix("error ")
                .and_then(|r| r.split(':').next())
                .unwrap_or_else(|| panic!("{line}: {reason}"));
            format!("error {code}")
        };
        assert_eq!(got, want, "{line}");
        cases += 1;
    }
    assert_eq!(cases, 378);
}

#[test]
fn the_fall_through_loader_finds_what_a_variant_archive_shadows() {
    let tmp = tempfile::tempdir().unwrap();
    let stage = install(tmp.path());
    let host = stage.join("lib/libone.so");
    let host = host.to_str().unwrap();
    // libone's gfx90a code is in the base archive; an xnack- device's
    // candidates try the xnack- variant archive first, which lacks it.
    let (first, ok) = select(
        &[host, "--device", "gfx90a:xnack-", "--kpack-loader", "first"],
        &[],
    );
    assert!(!ok);
    let reason = first["choices"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("error 5: KPACK_ERROR_KERNEL_NOT_FOUND"),
        "{reason}"
    );
    let (fall, ok) = select(&[host, "--device", "gfx90a:xnack-"], &[]);
    assert!(ok, "{fall}");
    let choice = &fall["choices"][0];
    assert_eq!(choice["entry"], "hipv4-amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(choice["how"], "native");
    assert!(choice["reason"]
        .as_str()
        .unwrap()
        .ends_with("test_lib_gfx90a.kpack'"));
    // ROCM_KPACK_DISABLE, from the environment or the option.
    for (args, env) in [
        (
            vec![host, "--device", "gfx906"],
            vec![("ROCM_KPACK_DISABLE", "1")],
        ),
        (
            vec![host, "--device", "gfx906", "--rocm-kpack-disable", "yes"],
            vec![],
        ),
    ] {
        let (off, ok) = select(&args, &env);
        assert!(!ok);
        assert!(off["choices"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("error 8:"));
    }
}

#[test]
fn a_kpack_archive_alone_gives_each_key_its_code_object() {
    let archive = fixtures().join("kpack/none/.kpack/test_lib_gfx906.kpack");
    let (report, ok) = select(
        &[archive.to_str().unwrap(), "--device", "gfx906:xnack-"],
        &[],
    );
    assert!(ok, "{report}");
    let choices = report["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 9);
    assert!(choices
        .iter()
        .all(|c| c["entry"] == "hipv4-amdgcn-amd-amdhsa--gfx906" && c["kind"] == "kpack key"));
    let (none, ok) = select(&[archive.to_str().unwrap(), "--device", "gfx1100"], &[]);
    assert!(!ok);
    assert!(none["choices"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("error 14:"));
}

/// What `extract` writes for `file`, by file name.
fn extracted(file: &Path, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let done = clangoffload(&[
        "extract".as_ref(),
        file.as_os_str(),
        "-o".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(done.status.success(), "{done:?}");
    String::from_utf8(done.stdout)
        .unwrap()
        .lines()
        .map(|p| {
            let name = Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(p).unwrap())
        })
        .collect()
}

#[test]
fn bundles_give_the_runtimes_choice_as_extract_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = fixtures().join("kpack/inputs");
    // (library, device, the entry each container gives; None: nothing)
    let cases: &[(&str, &str, &[Option<&str>])] = &[
        (
            "libxnack.so",
            "gfx90a:sramecc+:xnack+",
            &[Some("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")],
        ),
        (
            "libxnack.so",
            "gfx90a:xnack-",
            &[Some("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")],
        ),
        (
            "libxnack.so",
            "amdgcn-amd-amdhsa--gfx906:xnack+",
            &[Some("hipv4-amdgcn-amd-amdhsa--gfx906")],
        ),
        ("libxnack.so", "gfx908", &[None]),
        // Two compressed bundles (CCOB v3, zstd).
        (
            "libtwoz.so",
            "gfx90a:xnack+",
            &[
                Some("hipv4-amdgcn-amd-amdhsa--gfx90a"),
                Some("hipv4-amdgcn-amd-amdhsa--gfx90a"),
            ],
        ),
        // TU0 has gfx90a only, TU1 gfx906 and gfx90a.
        (
            "libskew.so",
            "gfx906",
            &[None, Some("hipv4-amdgcn-amd-amdhsa--gfx906")],
        ),
    ];
    for (n, (library, device, want)) in cases.iter().enumerate() {
        let file = inputs.join(library);
        let all = extracted(&file, &tmp.path().join(format!("all{n}")));
        let out = tmp.path().join(format!("sel{n}"));
        let (report, ok) = select(
            &[
                file.to_str().unwrap(),
                "--device",
                device,
                "-o",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(
            ok,
            want.iter().all(Option::is_some),
            "{library} {device}: {report}"
        );
        let choices = report["choices"].as_array().unwrap();
        assert_eq!(choices.len(), want.len(), "{library} {device}: {report}");
        for (choice, want) in choices.iter().zip(*want) {
            assert_eq!(
                choice["entry"].as_str(),
                *want,
                "{library} {device}: {choice}"
            );
            let Some(output) = choice["output"].as_str() else {
                assert!(!choice["reason"].as_str().unwrap().is_empty());
                continue;
            };
            let name = Path::new(output).file_name().unwrap().to_string_lossy();
            let same = all
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{library} {device}: {name} is no name extract gives"));
            assert_eq!(
                std::fs::read(output).unwrap(),
                same.1,
                "{library} {device}: {name}"
            );
        }
    }
}

#[test]
fn nothing_for_a_device_says_why_for_each_entry() {
    let file = fixtures().join("kpack/inputs/libxnack.so");
    let (report, ok) = select(&[file.to_str().unwrap(), "--device", "gfx90a:xnack-"], &[]);
    assert!(ok);
    assert_eq!(report["choices"][0]["how"], "native");
    let (report, ok) = select(&[file.to_str().unwrap(), "--device", "gfx1100"], &[]);
    assert!(!ok);
    let reason = report["choices"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("none of its 4 entries runs on gfx1100"),
        "{reason}"
    );
    assert!(
        reason.contains("`hipv4-amdgcn-amd-amdhsa--gfx906` is for gfx906"),
        "{reason}"
    );
    assert!(reason.contains("is `host` code"), "{reason}");
    // A feature setting the device lacks, not another processor: a device
    // named without its xnack mode runs neither xnack+ nor xnack- code.
    let (report, ok) = select(&[file.to_str().unwrap(), "--device", "gfx90a"], &[]);
    assert!(!ok);
    let reason = report["choices"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+` is built with xnack+, the device has xnack any"),
        "{reason}"
    );
    // The other vendor's device.
    let (report, ok) = select(&[file.to_str().unwrap(), "--device", "sm_90"], &[]);
    assert!(!ok);
    assert!(report["choices"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("nothing for an NVIDIA device"));
    // A device no rule knows is a usage error, not a choice.
    let bad = clangoffload(&["select", file.to_str().unwrap(), "--device", "gfx9999"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is no device"));
}

#[test]
fn cuda_fat_binaries_give_the_drivers_choice() {
    let tmp = tempfile::tempdir().unwrap();
    // sm_75, sm_80 and sm_90 cubins, compute_80 PTX.
    let file = fixtures().join("cuda/clang-multi-ptx.o");
    let all = extracted(&file, &tmp.path().join("all"));
    for (device, want, how) in [
        ("sm_75", Some("sm_75"), "cubin"),
        ("sm_86", Some("sm_80"), "cubin"),
        ("sm_90", Some("sm_90"), "cubin"),
        ("sm_120", Some("compute_80"), "ptx"),
        ("sm_52", None, ""),
    ] {
        let out = tmp.path().join(device);
        let (report, ok) = select(
            &[
                file.to_str().unwrap(),
                "--device",
                device,
                "-o",
                out.to_str().unwrap(),
            ],
            &[],
        );
        let choice = &report["choices"][0];
        assert_eq!(choice["kind"], "CUDA fat binary");
        assert_eq!(choice["entry"].as_str(), want, "{device}: {report}");
        assert_eq!(ok, want.is_some());
        if want.is_none() {
            continue;
        }
        assert_eq!(choice["how"], how);
        let output = choice["output"].as_str().unwrap();
        let name = Path::new(output).file_name().unwrap().to_string_lossy();
        let same = all.iter().find(|(n, _)| *n == name).unwrap();
        assert_eq!(std::fs::read(output).unwrap(), same.1, "{device}: {name}");
    }
}

#[test]
fn files_are_never_overwritten_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let file = fixtures().join("kpack/inputs/libxnack.so");
    let args = [
        file.to_str().unwrap(),
        "--device",
        "gfx906",
        "-o",
        tmp.path().to_str().unwrap(),
    ];
    let (_, ok) = select(&args, &[]);
    assert!(ok);
    let again = clangoffload(&[&["select"][..], &args[..]].concat());
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    let forced = clangoffload(&[&["select"][..], &args[..], &["--force"][..]].concat());
    assert!(forced.status.success(), "{forced:?}");
    let text = String::from_utf8(forced.stdout).unwrap();
    assert!(text.contains("  written: "), "{text}");
}
