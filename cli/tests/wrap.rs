//! `clangoffload wrap`: the C translation unit it writes compiles with strict
//! warnings, and linked with a stub runtime (`capi/tests/c/stub_runtime.c`,
//! which prints every registration call) it registers what
//! llvm-offload-wrapper 22's output registers; live against LLVM 22 when it is
//! installed: the same calls with the same arguments.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

fn ours() -> &'static str {
    env!("CARGO_BIN_EXE_clangoffload")
}

fn stub_runtime() -> PathBuf {
    fixtures().join("../../capi/tests/c/stub_runtime.c")
}

fn offload(name: &str) -> PathBuf {
    fixtures().join("offload").join(name)
}

fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

fn stderr(r: &std::process::Output) -> String {
    String::from_utf8_lossy(&r.stderr).into_owned()
}

/// `clangoffload wrap --kind=<kind> -o <dir>/<kind>.c <input>`, then
/// `cc -c` with strict warnings; returns the object.
fn wrap_and_compile(dir: &Path, kind: &str, input: &Path) -> PathBuf {
    let c_file = dir.join(format!("{kind}.c"));
    let r = run(
        Path::new(ours()),
        &[
            "wrap".into(),
            format!("--kind={kind}"),
            "-o".into(),
            c_file.display().to_string(),
            input.display().to_string(),
        ],
    );
    assert!(r.status.success(), "wrap failed: {}", stderr(&r));
    let object = dir.join(format!("{kind}.o"));
    compile(&c_file, &object);
    object
}

fn compile(c_file: &Path, object: &Path) {
    let r = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
        .arg(c_file)
        .arg("-o")
        .arg(object)
        .output()
        .expect("cc runs");
    assert!(r.status.success(), "cc -c failed: {}", stderr(&r));
}

/// Links `object` with the stub runtime (with offload entries of
/// `entry_kind`, if given), runs it and returns what it printed.
fn link_and_run(object: &Path, entry_kind: Option<u16>, fatbin_len: Option<usize>) -> String {
    let program = object.with_extension(format!("prog{}", entry_kind.unwrap_or(0)));
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror"]);
    if let Some(kind) = entry_kind {
        cc.arg(format!("-DENTRY_KIND={kind}"));
    }
    let r = cc
        .arg(object)
        .arg(stub_runtime())
        .arg("-o")
        .arg(&program)
        .output()
        .expect("cc runs");
    assert!(r.status.success(), "linking failed: {}", stderr(&r));
    let mut run = Command::new(&program);
    if let Some(len) = fatbin_len {
        run.arg(len.to_string());
    }
    let r = run.output().unwrap();
    assert!(r.status.success(), "the program failed: {}", stderr(&r));
    String::from_utf8(r.stdout).unwrap()
}

fn first_image(data: &[u8]) -> &[u8] {
    let binary = clangoffload::OffloadBinary::parse(data).unwrap();
    let entry = binary.entries().next().unwrap();
    entry.image()
}

fn openmp_lines(image: &[u8], entries: usize) -> String {
    let line = format!(
        "  image 0 size={} fnv={} aligned8=1 same_entries=1\n",
        image.len(),
        fnv1a(image)
    );
    format!(
        "tgt_register_lib images=1 entries={entries}\n{line}main\n\
         tgt_unregister_lib images=1 entries={entries}\n{line}"
    )
}

#[test]
fn openmp_registers_the_first_image_of_the_offload_binary() {
    let dir = tempfile::tempdir().unwrap();
    let input = offload("single.offbin");
    let data = std::fs::read(&input).unwrap();
    let image = first_image(&data);
    assert_eq!(image.len(), 200);
    let object = wrap_and_compile(dir.path(), "openmp", &input);
    assert_eq!(link_and_run(&object, None, None), openmp_lines(image, 0));
    // The entries of the program are the linker's, whatever their kind.
    assert_eq!(link_and_run(&object, Some(1), None), openmp_lines(image, 9));
}

#[test]
fn openmp_takes_the_first_binary_of_several() {
    let dir = tempfile::tempdir().unwrap();
    let input = offload("multi.offbin");
    let data = std::fs::read(&input).unwrap();
    let object = wrap_and_compile(dir.path(), "openmp", &input);
    assert_eq!(
        link_and_run(&object, None, None),
        openmp_lines(first_image(&data), 0)
    );
}

#[test]
fn openmp_packages_a_bare_image_its_header_names() {
    // An x86-64 object (the host plugin's device): packaged, the runtime
    // registers the object whole; the section is one llvm-objdump reads.
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures().join("object/x86_64.o");
    let data = std::fs::read(&input).unwrap();
    let object = wrap_and_compile(dir.path(), "openmp", &input);
    assert_eq!(link_and_run(&object, None, None), openmp_lines(&data, 0));
    let objdump = Path::new(LLVM_BIN).join("llvm-objdump");
    if objdump.exists() {
        let r = run(
            &objdump,
            &["--offloading".into(), object.display().to_string()],
        );
        let listed = String::from_utf8_lossy(&r.stdout);
        assert!(listed.contains("arch            generic"), "{listed}");
    }
    // Bytes whose header names no device: refused, saying how to package.
    let error = wrap_error(&[
        "--kind=openmp",
        "-o",
        &dir.path().join("x.c").display().to_string(),
        &offload("inputs/single.o").display().to_string(),
    ]);
    assert!(error.contains("package it first"), "{error}");
}

/// What the stub prints for the entries it defines with `-DENTRY_KIND`:
/// those of the wrapper's kind, in section order; the others passed over.
fn registrations(rt: &str) -> String {
    let mut lines = format!(
        "{rt}_register_function handle=ok addr=0x1000 name=kernel device_name=kernel limit=-1 rest_null=1\n\
         {rt}_register_var handle=ok addr=0x3000 name=device_var device_name=device_var extern=1 size=4 constant=0 global=0\n\
         {rt}_register_var handle=ok addr=0x4000 name=const_var device_name=const_var extern=0 size=64 constant=1 global=0\n\
         {rt}_register_managed_var handle=ok aux=0x6000 addr=0x5000 name=managed_var size=16 align=8\n"
    );
    if rt == "hip" {
        lines.push_str(
            "hip_register_surface handle=ok addr=0x8000 name=surface device_name=surface type=3 extern=1\n\
             hip_register_texture handle=ok addr=0x9000 name=texture device_name=texture type=2 normalized=1 extern=0\n",
        );
    }
    lines
}

fn fatbin_lines(rt: &str, magic: &str, data: &[u8], entries: bool) -> String {
    let first: String = data[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut out = format!(
        "{rt}_register_fatbin magic={magic} version=1 reserved_null=1 aligned8=1 first={first}\n"
    );
    if entries {
        out.push_str(&registrations(rt));
    }
    if rt == "cuda" {
        out.push_str("cuda_register_fatbin_end handle=ok\n");
    }
    out.push_str(&format!(
        "main\nfatbin fnv={}\n{rt}_unregister_fatbin handle=ok\n",
        fnv1a(data)
    ));
    out
}

#[test]
fn hip_registers_the_fat_binary_and_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures().join("llvm22/hip-4096.bundle");
    let data = std::fs::read(&input).unwrap();
    let object = wrap_and_compile(dir.path(), "hip", &input);
    let printed = link_and_run(&object, Some(4), Some(data.len()));
    assert_eq!(printed, fatbin_lines("hip", "48495046", &data, true));
    // With no entries the loop registers nothing.
    let printed = link_and_run(&object, None, Some(data.len()));
    assert_eq!(printed, fatbin_lines("hip", "48495046", &data, false));
}

#[test]
fn cuda_registers_the_fat_binary_and_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let input = offload("inputs/dev-sm70.fatbin");
    let data = std::fs::read(&input).unwrap();
    let object = wrap_and_compile(dir.path(), "cuda", &input);
    let printed = link_and_run(&object, Some(2), Some(data.len()));
    assert_eq!(printed, fatbin_lines("cuda", "466243b1", &data, true));
}

#[test]
fn a_megabyte_input_is_embedded_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::with_capacity(1 << 20);
    let mut x: u32 = 1;
    while data.len() < (1 << 20) + 5 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data.push(x.to_le_bytes()[0]);
    }
    let input = dir.path().join("big.bin");
    std::fs::write(&input, &data).unwrap();
    let object = wrap_and_compile(dir.path(), "hip", &input);
    let printed = link_and_run(&object, None, Some(data.len()));
    assert!(printed.contains(&format!("fatbin fnv={}\n", fnv1a(&data))));
}

#[test]
fn the_openmp_object_is_what_llvm_objdump_reads() {
    let objdump = Path::new(LLVM_BIN).join("llvm-objdump");
    if !objdump.exists() {
        eprintln!("NOTICE: {} not found; skipped", objdump.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let object = wrap_and_compile(dir.path(), "openmp", &offload("single.offbin"));
    let r = run(&objdump, &["--offloading".as_ref(), object.as_os_str()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let printed = String::from_utf8(r.stdout).unwrap();
    let expected = std::fs::read_to_string(offload("single.offbin.objdump")).unwrap();
    // After the "<file>:\tfile format elf64-x86-64" header: the image, as
    // llvm-objdump prints the raw OffloadBinary.
    let (_, body) = printed.split_once("elf64-x86-64\n").unwrap();
    assert_eq!(body, expected);
}

/// LLVM's bitcode, compiled by clang 22 and linked with the same stub, makes
/// the same calls with the same arguments as our C.
#[test]
fn the_same_calls_as_llvm_offload_wrapper_22() {
    let tool = Path::new(LLVM_BIN).join("llvm-offload-wrapper");
    let clang = Path::new(LLVM_BIN).join("clang");
    if !tool.exists() || !clang.exists() {
        eprintln!("NOTICE: {} not found; skipped", tool.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("openmp", offload("multi.offbin"), 1),
        // A bare code object: llvm-offload-wrapper embeds it as it is, we
        // package it (a differences row); the runtime gets the same image.
        ("openmp", fixtures().join("archive/inputs/k-gfx906.o"), 1),
        ("hip", fixtures().join("llvm22/hip-4096.bundle"), 4),
        ("cuda", offload("cuda-ptx.offbin"), 2),
    ];
    for (kind, input, entry_kind) in cases {
        let len = std::fs::metadata(&input).unwrap().len() as usize;
        let fatbin_len = (kind != "openmp").then_some(len);
        let ours = wrap_and_compile(dir.path(), kind, &input);
        let bitcode = dir.path().join(format!("{kind}-llvm.bc"));
        let r = run(
            &tool,
            &[
                format!("--kind={kind}"),
                "-o".into(),
                bitcode.display().to_string(),
                input.display().to_string(),
            ],
        );
        assert!(r.status.success(), "{}", stderr(&r));
        let theirs = dir.path().join(format!("{kind}-llvm.o"));
        let r = run(
            &clang,
            &[
                "-c".as_ref(),
                bitcode.as_os_str(),
                "-o".as_ref(),
                theirs.as_os_str(),
            ],
        );
        assert!(r.status.success(), "{}", stderr(&r));
        assert_eq!(
            link_and_run(&ours, Some(entry_kind), fatbin_len),
            link_and_run(&theirs, Some(entry_kind), fatbin_len),
            "{kind} {}",
            input.display()
        );
    }
}

fn wrap_error(args: &[&str]) -> String {
    let r = run(Path::new(ours()), &[&["wrap"][..], args].concat());
    assert!(!r.status.success(), "{args:?} succeeded");
    stderr(&r)
}

#[test]
fn bad_command_lines_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.c").display().to_string();
    let input = offload("single.offbin").display().to_string();
    let cases: [(&[&str], &str); 8] = [
        (
            &["-o", &out, &input],
            "for the --kind option: must be specified at least once!",
        ),
        (
            &["--kind=sycl", "-o", &out, &input],
            "for the --kind option: Cannot find option named 'sycl'!",
        ),
        (&["--kind=hip", &input], "no output file given"),
        (
            &["--kind=hip", "-o", &out],
            "Not enough positional command line arguments specified!",
        ),
        (
            &["--kind=hip", "-o", &out, "/nonexistent/input"],
            "'/nonexistent/input': No such file or directory",
        ),
        (
            &[
                "--kind=cuda",
                "--triple=x86_64-apple-darwin",
                "-o",
                &out,
                &input,
            ],
            "Mach-O object format; only ELF hosts are supported",
        ),
        (
            &[
                "--kind=openmp",
                "--triple=x86_64-pc-windows-msvc",
                "-o",
                &out,
                &input,
            ],
            "COFF object format; only ELF hosts are supported",
        ),
        (&["--kind=hip", "--bogus", "-o", &out, &input], "'--bogus'"),
    ];
    for (args, message) in cases {
        let text = wrap_error(args);
        assert!(text.contains(message), "{args:?}: {text}");
        assert!(text.contains("clangoffload: error: "), "{text}");
    }
    assert!(
        !Path::new(&out).exists(),
        "nothing written on a bad command line"
    );
}

#[test]
fn a_compressed_offload_binary_is_refused_for_openmp() {
    use clangoffload::compressed::CompressionMethod;
    use clangoffload::offload_binary::{
        write_offload_binary, ImageKind, NewImage, OffloadKind, WriteOptions,
    };
    let image = NewImage {
        image_kind: ImageKind::Object,
        offload_kind: OffloadKind::OpenMp,
        flags: 0,
        strings: &[],
        image: b"an image",
    };
    let options = WriteOptions {
        version: 3,
        compression: Some((CompressionMethod::Zlib, None)),
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("v3.offbin");
    std::fs::write(&input, write_offload_binary(&[image], &options).unwrap()).unwrap();
    let out = dir.path().join("out.c").display().to_string();
    let text = wrap_error(&["--kind=openmp", "-o", &out, &input.display().to_string()]);
    assert!(text.contains("compressed (version 3)"), "{text}");
}
