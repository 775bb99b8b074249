//! The C++ wrapper (`include/clangoffload.hpp`) and the two copyable examples
//! (`examples/list_and_pick.c`, `examples/list_and_pick.cpp`).
//!
//! `tests/cpp/wrapper_test.cpp` exercises the whole wrapper on the committed
//! fixtures; it is built against the static library with strict warnings,
//! with exceptions, without them (`-fno-exceptions`) and under ASan/UBSan,
//! and must report every check passed. The examples are built and run on a
//! plain bundle, a compressed bundle, HIP host objects (plain and
//! compressed), an OffloadBinary, an archive, and inputs with no compatible
//! code object or a damaged container: their output is checked against what
//! LLVM's tools printed for the fixtures, and the C and C++ programs must
//! print the same bytes and exit with the same status.
//!
//! Skipped, with a notice, when there is no C++ compiler.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{build_c, build_with, root, SANITIZERS};

/// The C++ compiler: `g++`, else `c++`; `None` (and a notice) if neither runs.
fn cxx() -> Option<&'static str> {
    for candidate in ["g++", "c++"] {
        let found = Command::new(candidate)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return Some(candidate);
        }
    }
    eprintln!("NOTICE: no C++ compiler (g++ or c++): skipping the C++ wrapper tests");
    None
}

/// Compiles the C++ `sources` (paths from the workspace root) with strict
/// warnings and `extra` flags, links them with the static library, and
/// returns the program's path.
fn build_cpp(compiler: &str, sources: &[&str], extra: &[&str], name: &str) -> PathBuf {
    let mut flags = vec!["-Wconversion", "-Wshadow"];
    flags.extend_from_slice(extra);
    build_with(compiler, &["-std=c++17"], sources, &flags, name)
}

/// Runs `program` with `args` (sanitizers stop at the first report).
fn run(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        .output()
        .expect("the program runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

fn fixture_str(name: &str) -> String {
    fixture(name).to_str().unwrap().to_owned()
}

/// Builds the wrapper test with `extra` flags, runs it on the fixtures and
/// checks that every check passed; returns the program (not deleted) and its
/// standard output.
fn wrapper_test(compiler: &str, extra: &[&str], name: &str) -> (PathBuf, String) {
    let program = build_cpp(compiler, &["capi/tests/cpp/wrapper_test.cpp"], extra, name);
    let out = run(&program, &[&fixture_str("")]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "wrapper test ({name}) failed:\n{stdout}{}",
        text(&out.stderr)
    );
    // "checks: N failed: 0", with N large enough that no section was skipped.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("checks: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields.len(), 4, "{line}");
    let checks: usize = fields[1].parse().unwrap();
    assert!(checks >= 450, "only {checks} checks ran ({name})");
    assert_eq!(fields[3], "0", "{line}");
    (program, stdout)
}

#[test]
fn wrapper_with_exceptions() {
    let Some(compiler) = cxx() else { return };
    let (program, stdout) = wrapper_test(compiler, &[], "cpp-wrapper");
    assert!(stdout.starts_with("exceptions: on\n"), "{stdout}");
    // value() on an error throws clangoffload::exception, carrying the status
    // and the library's message.
    let out = run(&program, &["--value-on-error"]);
    let _ = std::fs::remove_file(&program);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "caught status 10: not a bundle: missing magic (at offset 0x0)\n"
    );
}

#[test]
fn wrapper_without_exceptions() {
    let Some(compiler) = cxx() else { return };
    let (program, stdout) = wrapper_test(compiler, &["-fno-exceptions"], "cpp-wrapper-noexcept");
    assert!(stdout.starts_with("exceptions: off\n"), "{stdout}");
    // value() on an error cannot throw: it prints the message and aborts.
    let out = run(&program, &["--value-on-error"]);
    let _ = std::fs::remove_file(&program);
    assert_eq!(
        out.status.signal(),
        Some(6),
        "not SIGABRT: {:?}",
        out.status
    );
    assert_eq!(
        text(&out.stderr),
        "clangoffload: not a bundle: missing magic (at offset 0x0) (status 10)\n"
    );
    assert!(!text(&out.stdout).contains("value() returned"));
}

#[test]
fn wrapper_under_sanitizers() {
    let Some(compiler) = cxx() else { return };
    let (program, stdout) = wrapper_test(compiler, SANITIZERS, "cpp-wrapper-asan");
    let _ = std::fs::remove_file(&program);
    assert!(stdout.starts_with("exceptions: on\n"), "{stdout}");
}

/// The header alone, with clang too when it is installed: no warning under
/// `-Wconversion -Wshadow`, with and without exceptions.
#[test]
fn wrapper_header_compiles_cleanly_with_every_compiler() {
    let Some(gnu) = cxx() else { return };
    let mut compilers = vec![gnu.to_owned()];
    for clang in ["clang++-22", "clang++"] {
        if Command::new(clang)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            compilers.push(clang.to_owned());
            break;
        }
    }
    for compiler in &compilers {
        for mode in [&[][..], &["-fno-exceptions"][..]] {
            let status = Command::new(compiler)
                .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic"])
                .args([
                    "-Wconversion",
                    "-Wshadow",
                    "-Wsign-conversion",
                    "-fsyntax-only",
                ])
                .args(mode)
                .arg("-I")
                .arg(root().join("include"))
                .arg(root().join("capi/tests/cpp/wrapper_test.cpp"))
                .status()
                .expect("the compiler runs");
            assert!(status.success(), "{compiler} {mode:?} rejects the wrapper");
        }
    }
}

// ---------------------------------------------------------------------------
// The examples

/// Both examples, built once.
struct Examples {
    c: PathBuf,
    cpp: PathBuf,
}

impl Examples {
    /// `tag` keeps apart the programs of tests that run at the same time.
    fn build(compiler: &str, tag: &str) -> Examples {
        Examples {
            c: build_c(
                &["examples/list_and_pick.c"],
                &[],
                &format!("list-and-pick-c-{tag}"),
            ),
            cpp: build_cpp(
                compiler,
                &["examples/list_and_pick.cpp"],
                &[],
                &format!("list-and-pick-cpp-{tag}"),
            ),
        }
    }

    /// Runs both on `file` and `target`; they must agree byte for byte and in
    /// exit status. Returns (exit code, stdout, stderr).
    fn run(&self, file: &Path, target: &str) -> (i32, String, String) {
        let file = file.to_str().unwrap();
        let c = run(&self.c, &[file, target]);
        let cpp = run(&self.cpp, &[file, target]);
        let what = format!("list_and_pick {file} {target}");
        assert_eq!(text(&c.stdout), text(&cpp.stdout), "{what}: stdout differs");
        assert_eq!(text(&c.stderr), text(&cpp.stderr), "{what}: stderr differs");
        assert_eq!(
            c.status.code(),
            cpp.status.code(),
            "{what}: exit status differs"
        );
        let code = c
            .status
            .code()
            .unwrap_or_else(|| panic!("{what}: killed: {:?}", c.status));
        (code, text(&c.stdout), text(&c.stderr))
    }
}

impl Drop for Examples {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.c);
        let _ = std::fs::remove_file(&self.cpp);
    }
}

/// The lines of a committed `.list` file, sorted (LLVM lists in hash order).
fn sorted_list(name: &str) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// `(offset, size)` of `.hip_fatbin` in readelf's table of a host file.
fn hip_fatbin_section(sections: &str) -> (u64, u64) {
    let table = std::fs::read_to_string(fixture(sections)).unwrap();
    let line = table
        .lines()
        .find(|l| l.contains(" .hip_fatbin "))
        .expect("a .hip_fatbin line");
    let fields: Vec<&str> = line.split_whitespace().collect();
    // [ N] .hip_fatbin PROGBITS address offset size ...
    let at = fields.iter().position(|f| *f == ".hip_fatbin").unwrap();
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    (hex(fields[at + 3]), hex(fields[at + 4]))
}

/// The size llvm-objdump --offloading extracted for `entry` (`.objdump-files`:
/// `<file>.<index>.<entry id>|<size>[|sha256]`).
fn extracted_size(files: &str, entry: &str) -> usize {
    let listing = std::fs::read_to_string(fixture(files)).unwrap();
    let line = listing
        .lines()
        .find(|l| l.split('|').next().unwrap().ends_with(&format!(".{entry}")))
        .unwrap_or_else(|| panic!("{entry} not in {files}"));
    line.split('|').nth(1).unwrap().parse().unwrap()
}

/// Checks a listing of one container: its header line, its entries (as a
/// set: LLVM's lists are in hash order) and the final `picked` line.
fn assert_single_container(
    out: &(i32, String, String),
    header: &str,
    entries: &[String],
    picked: &str,
) {
    let (code, stdout, stderr) = out;
    assert_eq!(*code, 0, "{stdout}{stderr}");
    assert_eq!(stderr, "");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.first().copied(), Some(header), "{stdout}");
    assert_eq!(lines.last().copied(), Some(picked), "{stdout}");
    let mut listed: Vec<String> = lines[1..lines.len() - 1]
        .iter()
        .map(|l| {
            l.strip_prefix("  entry ")
                .unwrap_or_else(|| panic!("not an entry line: {l}"))
                .to_owned()
        })
        .collect();
    listed.sort();
    assert_eq!(listed, entries, "{stdout}");
}

#[test]
fn examples_list_and_pick() {
    let Some(compiler) = cxx() else { return };
    let examples = Examples::build(compiler, "ok");
    let gfx906 = "hipv4-amdgcn-amd-amdhsa--gfx906";

    // A plain bundle made by LLVM 22: the whole file is the container, and the
    // gfx906 payload is the code object it was made from.
    let bundle = fixture("llvm22/hip-4096.bundle");
    let size = std::fs::metadata(&bundle).unwrap().len();
    let payload = std::fs::metadata(fixture("inputs/gfx906.co"))
        .unwrap()
        .len();
    assert_single_container(
        &examples.run(&bundle, gfx906),
        &format!("container bundle at 0 size {size}"),
        &sorted_list("llvm22/hip-4096.list"),
        &format!("picked {gfx906} {payload} bytes"),
    );
    // A request with any xnack/sramecc setting takes the same code object.
    let (code, stdout, _) = examples.run(&bundle, "hip-amdgcn-amd-amdhsa--gfx906:xnack+");
    assert_eq!(code, 0);
    assert!(
        stdout.ends_with(&format!("\npicked {gfx906} {payload} bytes\n")),
        "{stdout}"
    );

    // A compressed bundle (LLVM 22, v3 zstd): decompressed, the entries are
    // those LLVM 22 lists; the gfx906 code object is tu1-gfx906.o.
    let ccob = fixture("compressed/llvm22/hip.v3.ccob");
    let size = std::fs::metadata(&ccob).unwrap().len();
    let payload = std::fs::metadata(fixture("compressed/inputs/tu1-gfx906.o"))
        .unwrap()
        .len();
    assert_single_container(
        &examples.run(&ccob, gfx906),
        &format!("container compressed at 0 size {size}"),
        &sorted_list("compressed/llvm22/hip.v3.list"),
        &format!("picked {gfx906} {payload} bytes"),
    );

    // HIP host objects made by clang 22: the bundle (and the compressed
    // bundle) is the .hip_fatbin section readelf shows; the picked size is
    // what llvm-objdump --offloading extracted.
    for (object, kind) in [("hip.o", "bundle"), ("hip-compress.o", "compressed")] {
        let (offset, size) = hip_fatbin_section(&format!("offload/{object}.sections"));
        let payload = extracted_size(&format!("offload/{object}.objdump-files"), gfx906);
        assert_single_container(
            &examples.run(&fixture(&format!("offload/{object}")), gfx906),
            &format!("container {kind} at {offset} size {size}"),
            &sorted_list(&format!("offload/{object}.hip_fatbin.list")),
            &format!("picked {gfx906} {payload} bytes"),
        );
    }

    // An OffloadBinary: its image has an entry ID made of kind, triple, arch.
    let single = fixture("offload/single.offbin");
    let size = std::fs::metadata(&single).unwrap().len();
    let image = std::fs::metadata(fixture("offload/inputs/single.o"))
        .unwrap()
        .len();
    let openmp = "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+";
    assert_single_container(
        &examples.run(&single, openmp),
        &format!("container offload_binary at 0 size {size}"),
        &[openmp.to_owned()],
        &format!("picked {openmp} {image} bytes"),
    );

    // An archive of host objects: every OffloadBinary llvm-objdump printed
    // an image for, hip.o's bundle, and its gfx906 code object picked.
    let (code, stdout, stderr) = examples.run(&fixture("offload/offload.a"), gfx906);
    assert_eq!(code, 0, "{stderr}");
    let objdump = std::fs::read_to_string(fixture("offload/offload.a.objdump")).unwrap();
    let images = objdump.matches("OFFLOADING IMAGE").count();
    assert_eq!(images, 18);
    assert_eq!(
        stdout.matches("container offload_binary at ").count(),
        images,
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("container bundle at ").count(),
        1,
        "{stdout}"
    );
    let payload = extracted_size("offload/hip.o.objdump-files", gfx906);
    assert!(
        stdout.ends_with(&format!("\npicked {gfx906} {payload} bytes\n")),
        "{stdout}"
    );
}

#[test]
fn examples_fail_with_the_documented_status() {
    let Some(compiler) = cxx() else { return };
    let examples = Examples::build(compiler, "fail");
    let temp = common::scratch_path;

    // Nothing compatible: the listing, then exit 2 with the notice.
    let target = "hipv4-amdgcn-amd-amdhsa--gfx1100";
    let (code, stdout, stderr) = examples.run(&fixture("offload/hip.o"), target);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(stderr, format!("no code object for {target}\n"));
    assert!(
        stdout.starts_with("container bundle at 4096 size 18160\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("picked"), "{stdout}");
    // OpenMP code is not taken for HIP (no -hip-openmp-compatible).
    let (code, _, stderr) = examples.run(
        &fixture("offload/single.offbin"),
        "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
    );
    assert_eq!(code, 2, "{stderr}");

    // A truncated bundle: the library's located error, exit 1.
    let truncated = temp("truncated.bundle");
    let data = std::fs::read(fixture("llvm22/hip-4096.bundle")).unwrap();
    std::fs::write(&truncated, &data[..5000]).unwrap();
    let (code, stdout, stderr) = examples.run(&truncated, "hipv4-amdgcn-amd-amdhsa--gfx906");
    let _ = std::fs::remove_file(&truncated);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with(
            "error: entry payload ends past the end of the input at offset 86: entry 1: "
        ),
        "{stderr}"
    );

    // A damaged zstd stream inside a host object: found, listed, and its
    // decompression fails at the stream's start (32 bytes into the CCOB at
    // 0x1000).
    let damaged = temp("damaged-hip-compress.o");
    let mut data = std::fs::read(fixture("offload/hip-compress.o")).unwrap();
    data[0x1000 + 100] ^= 0x55;
    std::fs::write(&damaged, &data).unwrap();
    let (code, stdout, stderr) = examples.run(&damaged, "hipv4-amdgcn-amd-amdhsa--gfx906");
    let _ = std::fs::remove_file(&damaged);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(stdout, "container compressed at 4096 size 2045\n");
    assert!(
        stderr.starts_with("error: corrupt compressed stream at offset 4128: corrupt zstd stream"),
        "{stderr}"
    );

    // Not an entry ID; a file that does not exist.
    let (code, _, stderr) = examples.run(&fixture("offload/hip.o"), "gfx906");
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error: invalid TARGET-ID 'gfx906': "),
        "{stderr}"
    );
    let (code, _, _) = examples.run(&temp("no-such-file"), "hipv4-amdgcn-amd-amdhsa--gfx906");
    assert_eq!(code, 1);
}
