//! Replaying the kept inputs of a fuzz target through its checks on stable
//! Rust, without libFuzzer: shared by `core/tests/fuzz_replay.rs` (the core's
//! targets) and `cli/tests/fuzz_replay.rs` (the targets that run the tool's
//! own code).

use std::path::{Path, PathBuf};

/// The targets whose checks need the C ABI or the CLI crate, replayed by the
/// CLI's tests.
pub const REPLAYED_BY_THE_CLI: &[&str] = &["c_abi", "inspect_render"];

/// This directory (`fuzz/`).
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files kept for `target`: its seeds and its findings.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for kind in ["seeds", "artifacts-found"] {
        let Ok(dir) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else {
            continue;
        };
        for entry in dir {
            let path = entry.expect("a readable directory entry").path();
            if path.is_file() {
                let bytes = std::fs::read(&path).expect("a readable kept input");
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// Runs `check` on every kept input of `target` (decoded as libFuzzer
/// decodes it); returns how many.
pub fn replay(target: &str, check: impl Fn(&[u8])) -> usize {
    let files = inputs(target);
    for (path, bytes) in &files {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(bytes)));
        assert!(run.is_ok(), "{target}: {} fails its checks", path.display());
    }
    files.len()
}
