//! `-type=a -unbundle` (heterogeneous device archives) through the bundler
//! drop-in, against the archives clang-offload-bundler 22 wrote for the same
//! commands (tests/fixtures/archive/COMMANDS, regenerate.sh regen_archive).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use clangoffload::archive::Archive;
use common::*;

fn archive(name: &str) -> std::path::PathBuf {
    fixtures().join("archive").join(name)
}

/// The `-type=a -unbundle` commands LLVM ran, as (arguments, outputs).
fn llvm_commands() -> Vec<(Vec<String>, Vec<String>)> {
    let log = std::fs::read_to_string(archive("COMMANDS")).unwrap();
    log.lines()
        .filter(|l| l.contains("-unbundle -type=a"))
        .map(|l| {
            let args: Vec<String> = l.split_whitespace().skip(1).map(str::to_owned).collect();
            let outputs = args
                .iter()
                .filter_map(|a| a.strip_prefix("-output=").map(str::to_owned))
                .collect();
            (args, outputs)
        })
        .collect()
}

fn members(data: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    Archive::parse(data)
        .unwrap()
        .members()
        .map(|m| {
            let m = m.unwrap();
            (m.name().to_vec(), m.data().to_vec())
        })
        .collect()
}

#[test]
fn unbundling_archives_matches_llvm_22() {
    let sb = Sandbox::new();
    let commands = llvm_commands();
    assert_eq!(commands.len(), 5);
    for (args, outputs) in commands {
        let args: Vec<String> = args
            .iter()
            .map(|a| match a.strip_prefix("-output=") {
                Some(o) => format!("-output={}", sb.path(o).display()),
                None => match a.strip_prefix("-input=") {
                    Some(i) => format!("-input={}", archive(i).display()),
                    None => a.clone(),
                },
            })
            .collect();
        let r = run(&sb.ours(), &args);
        assert!(
            r.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        for output in outputs {
            let ours = std::fs::read(sb.path(&output)).unwrap();
            let llvm = std::fs::read(archive(&output)).unwrap();
            // Same members (names and bytes) in the same order.
            assert_eq!(members(&ours), members(&llvm), "{output}");
            // And the same bytes: the index too, bitcode members' included.
            assert!(ours == llvm, "{output}: archive bytes differ");
        }
    }
}

#[test]
fn archive_errors_are_llvm_s_or_name_the_member() {
    let sb = Sandbox::new();
    let not_archive = sb.path("not.a");
    std::fs::write(&not_archive, "This is not an archive file.\n").unwrap();
    let unbundle = |input: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "-unbundle".to_owned(),
            "-type=a".into(),
            "-targets=hip-amdgcn-amd-amdhsa--gfx900".into(),
            format!("-input={}", input.display()),
            format!("-output={}", sb.path("out.a").display()),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        run(&sb.ours(), &args)
    };
    let r = unbundle(&not_archive, &["-allow-missing-bundles"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("error: file too small to be an archive"));
    let bundles = archive("gnu-bundles.a");
    let r = unbundle(&bundles, &[]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains(
        "no compatible code object found for the target 'hip-amdgcn-amd-amdhsa--gfx900' in heterogeneous archive library"
    ));
    // A member that is a damaged bundle (LLVM 22 aborts with length_error).
    let mut data = std::fs::read(&bundles).unwrap();
    let at = data
        .windows(24)
        .position(|w| w == b"__CLANG_OFFLOAD_BUNDLE__")
        .unwrap();
    data[at + 24..at + 32].copy_from_slice(&u64::MAX.to_le_bytes());
    let damaged = sb.path("damaged.a");
    std::fs::write(&damaged, &data).unwrap();
    let r = unbundle(&damaged, &["-allow-missing-bundles"]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(stderr.contains("member 'fat.bc'"), "{stderr}");
}

#[test]
fn clangoffload_list_shows_every_bundle_member_s_entries() {
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let r = run(
        ours,
        &[
            "list".to_owned(),
            archive("gnu-compressed.a").display().to_string(),
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8(r.stdout).unwrap();
    assert!(
        text.starts_with("fatz.bc: host-x86_64-unknown-linux-gnu-\n"),
        "{text}"
    );
    assert!(
        text.contains("objz.o: hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 6);
}
