//! `@file` response files in both personalities, against LLVM 22's: quoting,
//! nesting (relative to the working directory), a file that does not exist
//! (left as an argument), a directory and a file that includes itself.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

const HIP: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const HOST: &str = "host-x86_64-unknown-linux-gnu-";

/// Runs `tool` (ours or LLVM's) in `dir`.
fn run_in(dir: &Path, tool: &Path, args: &[&str]) -> Output {
    Command::new(tool)
        .current_dir(dir)
        .args(args)
        .env("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1")
        .output()
        .unwrap()
}

/// stderr with the program's path as `PROGRAM`.
fn said(out: &Output, program: &Path) -> String {
    String::from_utf8_lossy(&out.stderr).replace(&*program.to_string_lossy(), "PROGRAM")
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn quoted_and_nested_response_files_unbundle_as_written_out() {
    let bundle = fixtures().join("llvm22/hip-4096.bundle");
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    std::fs::create_dir(dir.join("sub")).unwrap();
    write(
        dir,
        "sub/outer.rsp",
        &format!("-type=o \"-targets={HOST},{HIP}\"\n@inner.rsp -unbundle\n"),
    );
    // Relative to the working directory, not to the file naming it; a
    // quoted argument with an escaped space before it.
    write(
        dir,
        "inner.rsp",
        &format!(
            "-input={} -output=host\\ out '-output=device \"906\"'",
            bundle.display()
        ),
    );
    let ours = run_in(dir, &sb.ours(), &["@sub/outer.rsp"]);
    assert!(ours.status.success(), "{}", said(&ours, &sb.ours()));
    let direct = sb.path("direct");
    let plain = run(
        &sb.ours(),
        &[
            "-type=o",
            &format!("-targets={HOST},{HIP}"),
            "-unbundle",
            &format!("-input={}", bundle.display()),
            &format!("-output={}", direct.display()),
            &format!("-output={}", sb.path("direct.906").display()),
        ],
    );
    assert!(plain.status.success());
    assert_eq!(
        std::fs::read(sb.path("host out")).unwrap(),
        std::fs::read(&direct).unwrap()
    );
    assert_eq!(
        std::fs::read(sb.path("device \"906\"")).unwrap(),
        std::fs::read(sb.path("direct.906")).unwrap()
    );
    if let Some(llvm) = llvm22() {
        std::fs::rename(sb.path("host out"), sb.path("ours.host")).unwrap();
        let theirs = run_in(dir, &llvm, &["@sub/outer.rsp"]);
        assert!(theirs.status.success(), "{}", said(&theirs, &llvm));
        assert_eq!(
            std::fs::read(sb.path("host out")).unwrap(),
            std::fs::read(sb.path("ours.host")).unwrap()
        );
    }
}

#[test]
fn response_file_errors_are_llvms() {
    let sb = Sandbox::new();
    let dir = sb.dir.path().canonicalize().unwrap();
    write(&dir, "self.rsp", "-list @self.rsp\n");
    std::fs::create_dir(dir.join("d.rsp")).unwrap();
    let root = dir.display();
    let cases = [
        (
            "@missing.rsp",
            "clang-offload-bundler: Unknown command line argument '@missing.rsp'.  Try: 'PROGRAM --help'\n\
             clang-offload-bundler: for the --type option: must be specified at least once!\n"
                .to_owned(),
        ),
        (
            "@self.rsp",
            format!(
                "recursive expansion of: '{root}/self.rsp'\nPROGRAM: error: no output file specified!\n"
            ),
        ),
        (
            "@d.rsp",
            format!(
                "cannot not open file '{root}/d.rsp': Is a directory\nPROGRAM: error: no output file specified!\n"
            ),
        ),
    ];
    for (arg, want) in &cases {
        let ours = run_in(&dir, &sb.ours(), &[arg]);
        assert_eq!(ours.status.code(), Some(1), "{arg}");
        assert_eq!(said(&ours, &sb.ours()), *want, "{arg}");
        if let Some(llvm) = llvm22() {
            let theirs = run_in(&dir, &llvm, &[arg]);
            assert_eq!(theirs.status.code(), Some(1), "{arg}");
            assert_eq!(said(&theirs, &llvm), *want, "LLVM 22, {arg}");
        }
    }
}

#[test]
fn the_packager_reads_response_files() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let packager = sb.path("llvm-offload-binary");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_clangoffload"), &packager).unwrap();
    write(dir, "image.bin", "device code");
    write(
        dir,
        "p.rsp",
        "-o ours.bin \"--image=file=image.bin,arch=sm_70,triple=nvptx64-nvidia-cuda,kind=cuda\"",
    );
    let ours = run_in(dir, &packager, &["@p.rsp"]);
    assert!(ours.status.success(), "{}", said(&ours, &packager));
    let direct = run_in(
        dir,
        &packager,
        &[
            "-o",
            "direct.bin",
            "--image=file=image.bin,arch=sm_70,triple=nvptx64-nvidia-cuda,kind=cuda",
        ],
    );
    assert!(direct.status.success());
    let bytes = std::fs::read(sb.path("ours.bin")).unwrap();
    assert_eq!(bytes, std::fs::read(sb.path("direct.bin")).unwrap());
    let llvm = Path::new("/usr/lib/llvm-22/bin/llvm-offload-binary");
    if llvm.exists() {
        write(dir, "p.rsp", "-o llvm.bin \"--image=file=image.bin,arch=sm_70,triple=nvptx64-nvidia-cuda,kind=cuda\"");
        assert!(run_in(dir, llvm, &["@p.rsp"]).status.success());
        assert_eq!(bytes, std::fs::read(sb.path("llvm.bin")).unwrap());
    }
    // LLVM 22's packager crashes after this message; ours stops.
    std::fs::create_dir(dir.join("d.rsp")).unwrap();
    let bad = run_in(dir, &packager, &["@d.rsp"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(said(&bad, &packager).ends_with("/d.rsp': Is a directory\n"));
}
