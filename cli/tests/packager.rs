//! The clang-offload-packager / llvm-offload-binary drop-in, `inspect` on host
//! files and `scan`, against what LLVM 22 made (tests/fixtures/offload) and,
//! when it is installed, live against LLVM 22.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const LLVM_PACKAGER: &str = "/usr/lib/llvm-22/bin/llvm-offload-binary";

fn offload() -> PathBuf {
    fixtures().join("offload")
}

/// A temp dir with our binary linked as `llvm-offload-binary` and
/// `clang-offload-packager`.
fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["llvm-offload-binary", "clang-offload-packager"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_clangoffload"), dir.path().join(name))
            .unwrap();
    }
    dir
}

/// Runs `tool` in `dir` (the fixture folder unless given).
fn run_in(dir: &Path, tool: &Path, args: &[&str]) -> Output {
    Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn ok(r: &Output) -> String {
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8_lossy(&r.stdout).into_owned()
}

/// The `-o X.offbin ...` commands of the fixture log, as argument lists.
fn packaging_commands() -> Vec<(String, Vec<String>)> {
    let log = std::fs::read_to_string(offload().join("COMMANDS")).unwrap();
    log.lines()
        .filter(|l| l.contains(" -o ") && l.contains(".offbin") && !l.starts_with("cd "))
        .map(|l| {
            let words: Vec<String> = l
                .split(' ')
                .take_while(|w| !w.starts_with("2>"))
                .skip(1)
                .map(str::to_owned)
                .collect();
            let out = words[words.iter().position(|w| w == "-o").unwrap() + 1].clone();
            (out, words)
        })
        .collect()
}

#[test]
fn packaging_is_byte_identical_to_llvm_22() {
    let sb = sandbox();
    let commands = packaging_commands();
    assert!(commands.len() >= 6);
    for (out, words) in commands {
        let target = sb.path().join(&out);
        let args: Vec<String> = words
            .iter()
            .map(|w| {
                if *w == out {
                    target.display().to_string()
                } else {
                    w.clone()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&run_in(
            &offload(),
            &sb.path().join("llvm-offload-binary"),
            &args,
        ));
        let ours = std::fs::read(&target).unwrap();
        let llvm = std::fs::read(offload().join(&out)).unwrap();
        assert!(ours == llvm, "{out} differs from LLVM 22's");
    }
}

#[test]
fn the_packager_name_warns_as_llvm_does() {
    let sb = sandbox();
    let out = sb.path().join("alias.offbin");
    let r = run_in(
        &offload(),
        &sb.path().join("clang-offload-packager"),
        &[
            "-o",
            out.to_str().unwrap(),
            "--image=file=inputs/single.o,kind=openmp,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+",
        ],
    );
    ok(&r);
    let expected = std::fs::read(offload().join("packager-alias.stderr")).unwrap();
    assert_eq!(r.stderr, expected);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(offload().join("packager-alias.offbin")).unwrap()
    );
}

#[test]
fn automatic_extraction_names_and_bytes_match_llvm_22() {
    let sb = sandbox();
    let input = offload().join("multi.offbin");
    ok(&run_in(
        sb.path(),
        &sb.path().join("llvm-offload-binary"),
        &[input.to_str().unwrap(), "--image=kind=openmp"],
    ));
    let listing = std::fs::read_to_string(offload().join("multi.offbin.extract-names")).unwrap();
    let mut checked = 0;
    for line in listing.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, source)) = line.split_once('|') else {
            continue;
        };
        let ours = std::fs::read(sb.path().join(name))
            .unwrap_or_else(|e| panic!("{name} not written: {e}"));
        if let Ok(expected) = std::fs::read(offload().join(source)) {
            assert_eq!(ours, expected, "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 3, "{listing}");
}

#[test]
fn extraction_by_file_and_archive_from_host_objects() {
    let sb = sandbox();
    let tool = sb.path().join("llvm-offload-binary");
    let single = offload().join("inputs/single.o");
    // From an object with two embedded packages: the image named by file=.
    let out = sb.path().join("x.o");
    ok(&run_in(
        sb.path(),
        &tool,
        &[
            offload().join("embed2.o").to_str().unwrap(),
            &format!("--image=file={},arch=gfx90a:xnack+", out.display()),
        ],
    ));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&single).unwrap()
    );
    // Several matches for one file: LLVM's warning, the last one written.
    let r = run_in(
        sb.path(),
        &tool,
        &[
            offload().join("sizes.offbin").to_str().unwrap(),
            &format!("--image=file={},triple=amdgcn-amd-amdhsa", out.display()),
        ],
    );
    ok(&r);
    assert!(String::from_utf8_lossy(&r.stderr)
        .contains("warning: Multiple inputs match to a single file"));
    assert_eq!(std::fs::read(&out).unwrap().len(), 4096);
    // From an archive of objects, into an archive, as LLVM 22 writes it.
    // (Only non-ELF images: LLVM 22 indexes ELF-looking members and fails on
    // the fixture's fake ones.)
    let ours = sb.path().join("ours.a");
    ok(&run_in(
        sb.path(),
        &tool,
        &[
            offload().join("offload.a").to_str().unwrap(),
            "--archive",
            &format!("--image=file={},arch=sm_75", ours.display()),
        ],
    ));
    if Path::new(LLVM_PACKAGER).exists() {
        let llvm = sb.path().join("llvm.a");
        ok(&run_in(
            sb.path(),
            Path::new(LLVM_PACKAGER),
            &[
                offload().join("offload.a").to_str().unwrap(),
                "--archive",
                &format!("--image=file={},arch=sm_75", llvm.display()),
            ],
        ));
        assert!(
            std::fs::read(&ours).unwrap() == std::fs::read(&llvm).unwrap(),
            "--archive output differs from LLVM 22's"
        );
    }
}

#[test]
fn llvm_22_reads_what_we_write_and_we_read_what_it_writes() {
    let Some(_) = llvm22() else { return };
    let sb = sandbox();
    let ours = sb.path().join("ours.offbin");
    let single = offload().join("inputs/single.o");
    let bc = offload().join("inputs/dev-gfx908.bc");
    ok(&run_in(
        sb.path(),
        &sb.path().join("llvm-offload-binary"),
        &[
            "-o",
            ours.to_str().unwrap(),
            &format!(
                "--image=file={},kind=hip,triple=amdgcn-amd-amdhsa,arch=gfx90a,x=y",
                single.display()
            ),
            &format!(
                "--image=file={},kind=openmp,triple=amdgcn-amd-amdhsa,arch=gfx908",
                bc.display()
            ),
        ],
    ));
    let out = sb.path().join("back.bc");
    ok(&run_in(
        sb.path(),
        Path::new(LLVM_PACKAGER),
        &[
            ours.to_str().unwrap(),
            &format!("--image=file={},arch=gfx908", out.display()),
        ],
    ));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&bc).unwrap());
    let objdump = run_in(
        sb.path(),
        Path::new("/usr/lib/llvm-22/bin/llvm-objdump"),
        &["--offloading", ours.to_str().unwrap()],
    );
    let ours_dump = run_in(
        sb.path(),
        Path::new(env!("CARGO_BIN_EXE_clangoffload")),
        &["inspect", ours.to_str().unwrap(), "--objdump"],
    );
    assert_eq!(ok(&ours_dump), ok(&objdump));
}

#[test]
fn packager_errors_are_worded_as_llvm_words_them() {
    let sb = sandbox();
    let tool = sb.path().join("llvm-offload-binary");
    let argv0 = tool.display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (
            &["-o", "x", "--image=triple=t"],
            "error: 'file' is a required image arguments",
        ),
        (
            &["-o", "x", "--image=file=missing.o"],
            "error: No such file or directory",
        ),
        (
            &["-o", "x", "in"],
            "error: Packaging to an output file and extracting from an input file are mutually exclusive.",
        ),
        (&["missing.bin"], "error: 'missing.bin': No such file or directory"),
    ];
    for (args, message) in cases {
        let r = run_in(sb.path(), &tool, args);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(stderr.trim_end(), format!("{argv0}: {message}"), "{args:?}");
    }
    // No arguments: the help, exit 0.
    let r = run_in(sb.path(), &tool, &[]);
    assert!(ok(&r).starts_with("OVERVIEW: A utility for bundling several object files"));
}

/// A package whose first image's string count is huge: LLVM 22's tools
/// crash on it (they read string entries past the end).
fn crafted_package(sb: &Path) -> PathBuf {
    let mut data = std::fs::read(offload().join("single.offbin")).unwrap();
    data[48..56].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let path = sb.join("crafted.offbin");
    std::fs::write(&path, data).unwrap();
    path
}

/// `--archive` with an image that starts as ELF but whose section header
/// size is wrong: LLVM's archive writer cannot index it and fails, naming
/// the image's buffer (here the input), and writes nothing; so do we (the
/// bundler's `-type=a` does the same, through the same rule).
#[test]
fn an_unindexable_image_fails_the_archive_as_in_llvm() {
    let sb = sandbox();
    let mut image = b"\x7fELF\x02\x01\x01".to_vec();
    image.resize(64, 0);
    image[40..48].copy_from_slice(&64u64.to_le_bytes()); // e_shoff
    image[58..60].copy_from_slice(&19641u16.to_le_bytes()); // e_shentsize
    image[60..62].copy_from_slice(&1u16.to_le_bytes()); // e_shnum
    std::fs::write(sb.path().join("bad.o"), &image).unwrap();
    let tool = sb.path().join("llvm-offload-binary");
    ok(&run_in(
        sb.path(),
        &tool,
        &[
            "-o",
            "pkg.bin",
            "--image=file=bad.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp",
        ],
    ));
    let package = std::fs::read(sb.path().join("pkg.bin")).unwrap();
    let at = package.windows(64).position(|w| w == &image[..]).unwrap() + 58;
    let extract = [
        "pkg.bin",
        "--archive",
        "--image=file=out.a,triple=x86_64-unknown-linux-gnu",
    ];
    let r = run_in(sb.path(), &tool, &extract);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.starts_with(&format!("{}: error: 'pkg.bin': ", tool.display()))
            && stderr.contains(&format!("(at offset {at:#x})")),
        "{stderr}"
    );
    assert!(!sb.path().join("out.a").exists());
    let llvm = Path::new(LLVM_PACKAGER);
    if llvm.exists() {
        let theirs = run_in(sb.path(), llvm, &extract);
        assert_eq!(theirs.status.code(), Some(1));
        let said = String::from_utf8_lossy(&theirs.stderr);
        assert!(
            said.contains("error: 'pkg.bin': invalid e_shentsize"),
            "{said}"
        );
        assert!(!sb.path().join("out.a").exists());
    }
}

#[test]
fn crafted_packages_get_located_errors() {
    let sb = sandbox();
    let crafted = crafted_package(sb.path());
    let r = run_in(
        sb.path(),
        &sb.path().join("llvm-offload-binary"),
        &[crafted.to_str().unwrap(), "--image=kind=openmp"],
    );
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("string entries at offset") && stderr.contains("entry 0"),
        "{stderr}"
    );
    // inspect reports it and still exits 1, never by a signal.
    let r = run_in(
        sb.path(),
        Path::new(env!("CARGO_BIN_EXE_clangoffload")),
        &["inspect", crafted.to_str().unwrap()],
    );
    assert_eq!(r.status.code(), Some(1));
}

/// Damaged binaries given with no `--image` (which extracts every image):
/// LLVM's words first, then where and what, exit 1; LLVM 22 says the same
/// words and exits 1 too.
#[test]
fn damaged_binaries_are_errors_in_llvms_words() {
    let sb = sandbox();
    let good = std::fs::read(offload().join("single.offbin")).unwrap();
    let mut entry_size = good.clone();
    entry_size[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    let cases = [
        (
            "trunc40.bin",
            good[..40].to_vec(),
            "Invalid data was encountered while parsing the file",
            "0x8",
        ),
        (
            "magic5.bin",
            b"\x10\xff\x10\xad\x0a".to_vec(),
            "Invalid data was encountered while parsing the file",
            "0x0",
        ),
        (
            "esize.bin",
            entry_size,
            "The end of the file was unexpectedly encountered",
            "0x18",
        ),
    ];
    for (name, bytes, words, offset) in cases {
        let path = sb.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let r = run_in(sb.path(), &sb.path().join("llvm-offload-binary"), &[name]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "{}: error: {words}: '{name}': ",
                sb.path().join("llvm-offload-binary").display()
            )),
            "{name}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("(at offset {offset})")),
            "{name}: {stderr}"
        );
        assert!(r.stdout.is_empty(), "{name}: nothing extracted");
        let llvm = Path::new(LLVM_PACKAGER);
        if llvm.exists() {
            let theirs = run_in(sb.path(), llvm, &[name]);
            assert_eq!(theirs.status.code(), Some(1), "LLVM 22 on {name}");
            let said = String::from_utf8_lossy(&theirs.stderr);
            assert!(
                said.ends_with(&format!("error: {words}\n")),
                "LLVM 22 on {name}: {said}"
            );
        }
    }
}

#[test]
fn inspect_objdump_prints_what_llvm_objdump_prints() {
    for name in [
        "single.offbin",
        "multi.offbin",
        "keys.offbin",
        "sizes.offbin",
        "embed.o",
        "embed2.o",
        "omp.o",
        "hip-rdc-new-driver.o",
        "cuda-rdc-new-driver.o",
    ] {
        let r = run_in(
            &offload(),
            Path::new(env!("CARGO_BIN_EXE_clangoffload")),
            &["inspect", name, "--objdump"],
        );
        let expected = std::fs::read_to_string(offload().join(format!("{name}.objdump"))).unwrap();
        assert_eq!(ok(&r), expected, "{name}");
    }
}

/// String values that are not UTF-8 are printed as the bytes they are, as
/// llvm-objdump prints them (a damaged `arch` of LLVM 22's single.offbin).
#[test]
fn inspect_objdump_prints_strings_as_their_bytes() {
    let sb = sandbox();
    let mut data = std::fs::read(offload().join("single.offbin")).unwrap();
    let at = data.windows(6).position(|w| w == b"gfx90a").unwrap();
    data[at + 3] = 0xff;
    let path = sb.path().join("raw.offbin");
    std::fs::write(&path, &data).unwrap();
    let r = run_in(
        sb.path(),
        Path::new(env!("CARGO_BIN_EXE_clangoffload")),
        &["inspect", "raw.offbin", "--objdump"],
    );
    assert!(r.status.success());
    assert!(r.stdout.windows(16).any(|w| w == b"arch            "));
    assert!(
        r.stdout.windows(6).any(|w| w == b"gfx\xff0a"),
        "{:?}",
        r.stdout
    );
    let objdump = Path::new("/usr/lib/llvm-22/bin/llvm-objdump");
    if objdump.exists() {
        let theirs = run_in(sb.path(), objdump, &["--offloading", "raw.offbin"]);
        assert!(theirs.status.success());
        assert_eq!(r.stdout, theirs.stdout);
    }
}

#[test]
fn inspect_finds_every_container_of_host_files() {
    let tool = PathBuf::from(env!("CARGO_BIN_EXE_clangoffload"));
    let text = |name: &str| ok(&run_in(&offload(), &tool, &["inspect", name]));
    let hip = text("hip.o");
    assert!(
        hip.contains("[.hip_fatbin] at offset 0x1000: bundle"),
        "{hip}"
    );
    assert!(hip.contains("(code object gfx90a)"), "{hip}");
    assert!(
        hip.contains("HIPF (0x48495046) version 1, points at section"),
        "{hip}"
    );
    let mixed = text("libhip-mixed.so");
    assert!(mixed.contains("compressed bundle"), "{mixed}");
    assert!(text("hip-exe").contains("points at section"));
    assert!(text("hip-rdc.o").contains("object bundle entry hip-amdgcn-amd-amdhsa--gfx906"));
    let cuda = text("cuda.o");
    assert!(
        cuda.contains("NVIDIA fat binary") && cuda.contains("CUDA (0x466243b1)"),
        "{cuda}"
    );
    // embed.o's OffloadBinary carries inputs/dev-sm70.fatbin as an nvptx64
    // `fatbinary` image: the fat binary magic, then random bytes. Read as a
    // member of the archive as it is alone: everything is reported, and
    // that damage is located and fails the command.
    let archive = run_in(&offload(), &tool, &["inspect", "offload.a"]);
    let (out, err) = (
        String::from_utf8_lossy(&archive.stdout),
        String::from_utf8_lossy(&archive.stderr),
    );
    assert!(out.contains("(omp.o)[.llvm.offloading]"), "{out}");
    assert!(
        out.contains("(cuda-rdc-new-driver.o)[.llvm.offloading]"),
        "{out}"
    );
    assert!(
        out.contains("error CUDA fat binary: fat binary header [0x10, ")
            && out.contains("(at offset 0x834)"),
        "{out}"
    );
    assert!(
        !archive.status.success() && err.contains("damaged containers"),
        "{err}"
    );
    let json = ok(&run_in(
        &offload(),
        &tool,
        &["inspect", "embed2.o", "--json"],
    ));
    assert!(json.starts_with("{\"schema\":1,"), "{json}");
    assert!(json.contains("\"kind\":\"offload_binary\""), "{json}");
}

#[test]
fn scan_finds_containers_in_any_file() {
    let tool = PathBuf::from(env!("CARGO_BIN_EXE_clangoffload"));
    let out = ok(&run_in(&offload(), &tool, &["scan", "libhip-mixed.so"]));
    assert_eq!(
        out,
        "0x1000\tbundle\t18,160 bytes\n0x6000\tcompressed bundle\t2,047 bytes\n"
    );
    let out = ok(&run_in(&offload(), &tool, &["scan", "offload.a"]));
    assert!(
        out.lines().filter(|l| l.contains("offload binary")).count() >= 10,
        "{out}"
    );
    assert!(out.contains("\tbundle\t"), "{out}");
}
