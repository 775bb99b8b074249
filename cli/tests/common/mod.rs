//! Shared helpers: the fixtures, our binary under LLVM's tool name, and the
//! real LLVM 22 tool when it is installed.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A bundling case from `tests/fixtures/cases.txt`.
pub struct Case {
    pub name: String,
    pub file_type: String,
    pub align: String,
    pub targets: Vec<String>,
    pub inputs: Vec<PathBuf>,
}

pub fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("cases.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            Case {
                name: f[0].into(),
                file_type: f[1].into(),
                align: f[2].into(),
                targets: f[3].split(',').map(str::to_owned).collect(),
                inputs: f[4]
                    .split(',')
                    .map(|i| {
                        if i == "/dev/null" {
                            PathBuf::from(i)
                        } else {
                            fixtures().join("inputs").join(i)
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The LLVM versions whose fixtures are committed.
pub fn fixture_versions() -> Vec<String> {
    ["22", "19", "16"]
        .into_iter()
        .filter(|v| fixtures().join(format!("llvm{v}")).is_dir())
        .map(str::to_owned)
        .collect()
}

/// A temp dir with a `clang-offload-bundler` symlink to our binary.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_clangoffload"),
            dir.path().join("clang-offload-bundler"),
        )
        .unwrap();
        Sandbox { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn ours(&self) -> PathBuf {
        self.path("clang-offload-bundler")
    }
}

pub const LLVM22: &str = "/usr/lib/llvm-22/bin/clang-offload-bundler";

/// LLVM 22's bundler, or None (after saying so) when it is not installed.
pub fn llvm22() -> Option<PathBuf> {
    let p = PathBuf::from(LLVM22);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "NOTICE: {LLVM22} not found; live interop checks skipped (apt-get install -y clang-22)"
        );
        None
    }
}

pub fn run<S: AsRef<std::ffi::OsStr>>(tool: &Path, args: &[S]) -> Output {
    Command::new(tool).args(args).output().unwrap()
}

/// `clangoffload ARGS...`, our tool under its own name.
pub fn clangoffload<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_clangoffload")), args)
}

/// stdout lines, sorted (LLVM lists in hash order).
pub fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}
