//! Building C programs against the static library, for the tests that run C
//! code (plain and under AddressSanitizer + UndefinedBehaviorSanitizer).
#![allow(dead_code)]

#[path = "../../abi/header_model.rs"]
mod header_model;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where a test writes a scratch file or directory `name`: under Cargo's
/// `CARGO_TARGET_TMPDIR` (`target/tmp`), not the system's temporary
/// directory, so that each run replaces its own leftovers (installs, built
/// programs) instead of adding hundreds of megabytes to `/tmp`.
pub fn scratch_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("clangoffload-{name}"))
}

/// [`scratch_path`] as a fresh, empty directory.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = scratch_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bytes of `tests/fixtures/<path>`.
pub fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures").join(path)).unwrap()
}

/// The static library, built by cargo into the target directory of this test
/// binary. `cargo test` builds only the rlib of a library for its integration
/// tests, so on a clean checkout the archive has to be asked for here.
pub fn static_lib() -> PathBuf {
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
    assert!(status.success(), "building libclangoffload_capi.a failed");
    let lib = profile_dir.join("libclangoffload_capi.a");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

/// The flags that build a C program under ASan + UBSan, stopping at the
/// first report.
pub const SANITIZERS: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

/// Compiles the C `sources` (paths from the workspace root) with strict
/// warnings and `extra` flags, links them with the static library, and
/// returns the program's path (named after `name`, in the temp dir).
pub fn build_c(sources: &[&str], extra: &[&str], name: &str) -> PathBuf {
    build_with("cc", &["-std=c11"], sources, extra, name)
}

/// [`build_c`] with another compiler driver and language flags (C++).
pub fn build_with(
    compiler: &str,
    language: &[&str],
    sources: &[&str],
    extra: &[&str],
    name: &str,
) -> PathBuf {
    let out = scratch_path(name);
    let status = Command::new(compiler)
        .args(language)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .args(extra)
        .arg("-I")
        .arg(root().join("include"))
        .args(sources.iter().map(|s| root().join(s)))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(status.success(), "compiling {sources:?} ({name}) failed");
    out
}

/// Runs a program from [`build_c`] with `args`, deletes it, and returns what
/// it did; leaks are reported.
pub fn run_c(program: &Path, args: &[&Path]) -> Output {
    let run = Command::new(program)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(program);
    run
}

/// Fails the test with the program's output unless it succeeded.
pub fn assert_success(run: &Output, what: &str) {
    assert!(
        run.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert_success(&out, &format!("{cmd:?}"));
    out
}

/// The target directory of this test binary: `make` builds there too, so a
/// test run reuses what an earlier one built.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// Runs `make -C <root> args` with `env`, building in [`target_dir`].
pub fn make(args: &[&str], env: &[(&str, &Path)]) {
    let mut cmd = Command::new("make");
    cmd.arg("-s")
        .arg("-C")
        .arg(root())
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir());
    if let Some(cargo) = std::env::var_os("CARGO") {
        cmd.env("CARGO", cargo);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd);
}

/// `readelf --wide` symbol rows of `file`: (binding, section index, name).
pub fn symbols(args: &[&str], file: &Path) -> Vec<(String, String, String)> {
    let out = run(Command::new("readelf").arg("--wide").args(args).arg(file));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let row = f.first()?.strip_suffix(':')?.parse::<u64>().is_ok();
            (row && f.len() >= 8).then(|| (f[4].into(), f[6].into(), f[7].into()))
        })
        .collect()
}

/// The names an archive or object defines globally.
pub fn defined_globals(file: &Path) -> std::collections::BTreeSet<String> {
    symbols(&["-s"], file)
        .into_iter()
        .filter(|(bind, ndx, _)| ndx != "UND" && (bind == "GLOBAL" || bind == "WEAK"))
        .map(|(_, _, name)| name)
        .collect()
}

/// The names an archive or object needs from elsewhere.
pub fn undefined(file: &Path) -> std::collections::BTreeSet<String> {
    symbols(&["-s"], file)
        .into_iter()
        .filter(|(_, ndx, name)| ndx == "UND" && !name.is_empty())
        .map(|(_, _, name)| name)
        .collect()
}

/// The functions `include/clangoffload.h` declares, read by the header
/// reader the ABI snapshot uses.
pub fn header_functions() -> std::collections::BTreeSet<String> {
    let header = std::fs::read_to_string(root().join("include/clangoffload.h")).unwrap();
    header_model::parse(&header)
        .functions
        .into_iter()
        .map(|f| f.name)
        .collect()
}

/// Whether every tool in `tools` runs; if not, prints a notice that `what`
/// is skipped, naming the missing ones.
pub fn tools_present(tools: &[&str], what: &str) -> bool {
    let missing: Vec<_> = tools
        .iter()
        .filter(|t| Command::new(t).arg("--version").output().is_err())
        .collect();
    if !missing.is_empty() {
        eprintln!("notice: {what} skipped, missing {missing:?}");
    }
    missing.is_empty()
}

/// The archives the library asked a test's `open_archive` for: each path
/// and its bytes.
pub type Opened = Vec<(String, Vec<u8>)>;

/// A `clangoffload_kpack_open_fn` for tests: reads the archive at `path`
/// into the `Opened` at `context`.
///
/// # Safety
/// `context` points to a live `Opened` used by nothing else during the
/// call; `path` readable for `path_len` bytes; `out` writable.
pub unsafe extern "C" fn open_archive(
    context: *mut std::ffi::c_void,
    path: *const u8,
    path_len: usize,
    out: *mut clangoffload_capi::clangoffload_bytes,
) -> bool {
    // SAFETY: the test's list, unchanged by the library.
    let opened = unsafe { &mut *context.cast::<Opened>() };
    // SAFETY: readable for `path_len` bytes, as the library promises.
    let path = unsafe { std::slice::from_raw_parts(path, path_len) };
    let path = String::from_utf8_lossy(path).into_owned();
    let Ok(data) = std::fs::read(&path) else {
        return false;
    };
    opened.push((path, data));
    let bytes = &opened.last().unwrap().1;
    let view = clangoffload_capi::clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    };
    // SAFETY: writable, as the library promises; the bytes live in the
    // list (a moved Vec keeps its heap bytes) until the test drops it.
    unsafe { out.write(view) };
    true
}
