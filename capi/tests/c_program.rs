//! Builds `tests/c/smoke.c` against the static library with strict warnings,
//! plain and under AddressSanitizer + UndefinedBehaviorSanitizer, and runs it
//! on the LLVM 22 fixtures. Also checks that the header compiles as C++17.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The static library, built by cargo into the target directory of this test
/// binary. `cargo test` builds only the rlib of a library for its integration
/// tests, so on a clean checkout the archive has to be asked for here.
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let target_dir = profile_dir.parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--quiet", "-p", "clangoffload-capi", "--lib"])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(root());
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building libclangoffload.a failed");
    let lib = profile_dir.join("libclangoffload.a");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

fn compile_and_run(extra: &[&str], name: &str) {
    let out =
        std::env::temp_dir().join(format!("clangoffload-smoke-{name}-{}", std::process::id()));
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .args(extra)
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("capi/tests/c/smoke.c"))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("cc runs");
    assert!(status.success(), "compiling smoke.c ({name}) failed");
    let run = Command::new(&out)
        .arg(root().join("tests/fixtures"))
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(
        run.status.success(),
        "smoke ({name}) failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn c_smoke_program() {
    compile_and_run(&[], "plain");
}

#[test]
fn c_smoke_program_under_sanitizers() {
    compile_and_run(
        &[
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ],
        "asan",
    );
}

#[test]
fn header_compiles_as_cpp17() {
    let status = Command::new("c++")
        .args([
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-x",
            "c++",
        ])
        .arg(root().join("include/clangoffload.h"))
        .status()
        .expect("c++ runs");
    assert!(status.success());
}
