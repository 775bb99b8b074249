//! Help and flags as a user types them: every subcommand's `--help`, the
//! thread count in each of its spellings, and a top-level help that names
//! every command and `-j`.

#![allow(clippy::unwrap_used)]

mod common;

use common::clangoffload;

#[test]
fn every_subcommand_has_help() {
    for command in ["list", "extract", "inspect", "scan"] {
        for flag in ["--help", "-h"] {
            let out = clangoffload(&[command, flag]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{command} {flag}: {out:?}");
            assert!(
                text.starts_with(&format!("usage: clangoffload {command} FILE")),
                "{text}"
            );
        }
    }
    // The usage error is the help's first line.
    let out = clangoffload(&["extract"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "clangoffload: error: usage: clangoffload extract FILE [-o DIR] [--force] [-j N] [--memory-budget SIZE]".replace(
            "clangoffload: ",
            &format!("{}: ", env!("CARGO_BIN_EXE_clangoffload"))
        )
    );
}

#[test]
fn the_thread_count_is_read_in_every_spelling() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/llvm22/hip-4096.bundle"
    );
    let mut printed = Vec::new();
    for flag in [
        &["-j", "2"][..],
        &["-j2"],
        &["--jobs", "2"],
        &["--jobs=2"],
        &["-j1"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["extract", fixture, "-o", dir.path().to_str().unwrap()];
        args.extend_from_slice(flag);
        let out = clangoffload(&args);
        assert!(out.status.success(), "{flag:?}: {out:?}");
        printed
            .push(String::from_utf8_lossy(&out.stdout).replace(dir.path().to_str().unwrap(), "D"));
    }
    assert!(printed.windows(2).all(|w| w[0] == w[1]));
    for bad in [&["-j0"][..], &["-j", "x"], &["--jobs="], &["-j"]] {
        let mut args = vec!["extract", fixture];
        args.extend_from_slice(bad);
        assert_eq!(clangoffload(&args).status.code(), Some(1), "{bad:?}");
    }
}

#[test]
fn the_top_level_help_names_every_command_and_the_thread_flag() {
    let out = clangoffload(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "list",
        "extract",
        "inspect",
        "scan",
        "bundler",
        "packager",
        "wrap",
        "fatbinary",
        "nvprune",
        "-j N",
        ".cubin",
        "COMMAND --help",
    ] {
        assert!(text.contains(word), "{word}: {text}");
    }
}
