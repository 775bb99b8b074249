//! Builds `tests/c/smoke.c` against the static library with strict warnings,
//! plain and under AddressSanitizer + UndefinedBehaviorSanitizer, and runs it
//! on the LLVM 22 fixtures. Also checks that the header compiles as C++17.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::process::Command;

use common::{assert_success, build_c, root, run_c, SANITIZERS};

fn compile_and_run(extra: &[&str], name: &str) {
    let program = build_c(&["capi/tests/c/smoke.c"], extra, &format!("smoke-{name}"));
    let run = run_c(&program, &[&root().join("tests/fixtures")]);
    assert_success(&run, &format!("smoke ({name})"));
}

#[test]
fn c_smoke_program() {
    compile_and_run(&[], "plain");
}

#[test]
fn c_smoke_program_under_sanitizers() {
    compile_and_run(SANITIZERS, "asan");
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
