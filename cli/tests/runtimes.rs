//! What we write, loaded by a real offload runtime: LLVM 22's OpenMP
//! runtime (libomptarget) offloading to its host plugin, which `dlopen`s the
//! device image from the executable's OffloadBinary and runs the kernels as
//! a separate device. Programs are built by clang 22 with our binary as its
//! `llvm-offload-binary`, and linked with registration code from
//! `clangoffload wrap` instead of clang-linker-wrapper's; each must print its
//! checked result under `OMP_TARGET_OFFLOAD=MANDATORY` (no host fallback)
//! with the kernel launches `LIBOMPTARGET_INFO` reports.
//!
//! Needs `clang-22`, `libomp-22-dev`, `liboffload-22-dev` (`.ci/run`
//! installs them); skipped with a NOTICE otherwise.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";
const LLVM_LIB: &str = "/usr/lib/llvm-22/lib";
const OPENMP: &[&str] = &[
    "-fopenmp",
    "-fopenmp-targets=x86_64-unknown-linux-gnu",
    "-O1",
];

/// A program with one target region summing an array on the device.
const ONE_TU: &str = r#"
#include <omp.h>
#include <stdio.h>
int main(void) {
  int n = 1000, sum = 0, initial = -1, a[1000];
  for (int i = 0; i < n; i++) a[i] = i;
#pragma omp target map(tofrom: sum, initial) map(to: a)
  {
    initial = omp_is_initial_device();
    for (int i = 0; i < n; i++) sum += a[i];
  }
  printf("sum=%d initial=%d\n", sum, initial);
  return !(sum == 499500 && initial == 0);
}
"#;

/// A shared library with its own target region, for an executable that
/// has one too.
const LIBRARY: &str = r#"
int scaled(int x) {
  int y = 0;
#pragma omp target map(tofrom: y)
  y = 3 * x;
  return y;
}
"#;

const EXECUTABLE: &str = r#"
#include <omp.h>
#include <stdio.h>
int scaled(int x);
int main(void) {
  int initial = -1, z = 0;
#pragma omp target map(tofrom: initial, z)
  {
    initial = omp_is_initial_device();
    z = 5;
  }
  int y = scaled(z);
  printf("y=%d initial=%d\n", y, initial);
  return !(y == 15 && initial == 0);
}
"#;

/// Whether clang 22 and LLVM's offload runtime are installed.
fn runtime_present() -> bool {
    let present = Path::new(CLANG).exists()
        && Path::new(LLVM_LIB).join("libomptarget.so").exists()
        && Path::new(LLVM_LIB).join("libomp.so").exists();
    if !present {
        eprintln!(
            "NOTICE: clang-22 / libomp-22-dev / liboffload-22-dev not installed; \
             real-runtime tests skipped"
        );
    }
    present
}

/// A directory holding our binary as `llvm-offload-binary`, for clang's -B.
fn our_tools(dir: &Path) -> PathBuf {
    let tools = dir.join("ourbin");
    std::fs::create_dir_all(&tools).unwrap();
    let link = tools.join("llvm-offload-binary");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_clangoffload"), link).unwrap();
    }
    tools
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a built program on the real runtime, offloading mandatory; returns
/// its output and the number of kernel launches the runtime reported.
fn offload(dir: &Path, program: &str) -> (String, usize) {
    let out = Command::new(dir.join(program))
        .current_dir(dir)
        .env("OMP_TARGET_OFFLOAD", "MANDATORY")
        .env("LIBOMPTARGET_INFO", "-1")
        .env("LD_LIBRARY_PATH", format!("{}:{LLVM_LIB}", dir.display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program}: {stdout}{stderr}");
    let launches = stderr.matches("Launching kernel").count();
    (stdout, launches)
}

/// The packager's output clang kept with -save-temps (`*-openmp-*.out`).
fn packaged(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().ends_with(".out") && p.to_string_lossy().contains("-openmp-")
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn openmp_programs_packaged_by_us_offload_on_the_real_runtime() {
    if !runtime_present() {
        return;
    }
    for (name, extra) in [("one-tu", &[][..]), ("lto", &["-foffload-lto"][..])] {
        // One directory and one source file for both builds: the kernels'
        // names hold the source file's identity.
        let dir = tempfile::tempdir().unwrap();
        let tools = format!("-B{}", our_tools(dir.path()).display());
        std::fs::write(dir.path().join("t.c"), ONE_TU).unwrap();
        let mut args: Vec<&str> = OPENMP.to_vec();
        args.extend(extra);
        args.extend(["-save-temps", "t.c", "-o", "t"]);
        run(dir.path(), CLANG, &args);
        let theirs = packaged(dir.path());
        let mut with_ours = vec![tools.as_str()];
        with_ours.extend(&args);
        run(dir.path(), CLANG, &with_ours);
        let ours_out = packaged(dir.path());
        assert!(!theirs.is_empty(), "{name}: clang kept no packager output");
        assert!(
            ours_out == theirs,
            "{name}: our packager's output differs from LLVM 22's"
        );
        let (stdout, launches) = offload(dir.path(), "t");
        assert_eq!(stdout, "sum=499500 initial=0\n", "{name}");
        // `extract` writes the executable's device image as LLVM's
        // packager extracts it.
        let out = dir.path().join("extracted");
        std::fs::create_dir(&out).unwrap();
        let listed = run(
            dir.path(),
            env!("CARGO_BIN_EXE_clangoffload"),
            &["extract", "t", "-o", "extracted"],
        );
        let files: Vec<&str> = std::str::from_utf8(&listed.stdout)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(files.len(), 1, "{name}: {files:?}");
        run(
            dir.path(),
            "/usr/lib/llvm-22/bin/llvm-offload-binary",
            &["t", "--image=kind=openmp,file=llvm.img"],
        );
        assert!(
            std::fs::read(dir.path().join(files[0])).unwrap()
                == std::fs::read(dir.path().join("llvm.img")).unwrap(),
            "{name}: extract differs from llvm-offload-binary's extraction"
        );
        assert_eq!(launches, 1, "{name}: kernel launches");
        println!("{name}: {launches} launch");
    }
}

#[test]
fn a_shared_library_and_an_executable_packaged_by_us_offload() {
    if !runtime_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tools = format!("-B{}", our_tools(dir.path()).display());
    std::fs::write(dir.path().join("lib.c"), LIBRARY).unwrap();
    std::fs::write(dir.path().join("main.c"), EXECUTABLE).unwrap();
    let mut lib = vec![tools.as_str()];
    lib.extend(OPENMP);
    lib.extend(["-fPIC", "-shared", "lib.c", "-o", "libscaled.so"]);
    run(dir.path(), CLANG, &lib);
    let mut exe = vec![tools.as_str()];
    exe.extend(OPENMP);
    exe.extend(["main.c", "-L.", "-lscaled", "-o", "main"]);
    run(dir.path(), CLANG, &exe);
    let (stdout, launches) = offload(dir.path(), "main");
    assert_eq!(stdout, "y=15 initial=0\n");
    assert_eq!(
        launches, 2,
        "a launch in the executable and one in the library"
    );
}

/// Links `object` (a host object clang compiled for offloading) into
/// `output` (`-shared` for a library) with our registration code instead of
/// clang-linker-wrapper: our packager extracts the device object, clang
/// links it into the device image the host plugin loads, our packager
/// packages it (or, `bare`, `clangoffload wrap` does), `clangoffload wrap`
/// writes the registration unit, whose `.llvm.offloading` section
/// llvm-objdump reads.
fn link_with_our_registration(dir: &Path, object: &str, output: &str, extra: &[&str], bare: bool) {
    let ours = env!("CARGO_BIN_EXE_clangoffload");
    let stem = object.trim_end_matches(".o");
    let (device, image, package, unit, registration) = (
        format!("{stem}.dev.o"),
        format!("{stem}.dev.so"),
        format!("{stem}.offbin"),
        format!("{stem}.reg.c"),
        format!("{stem}.reg.o"),
    );
    run(
        dir,
        ours,
        &[
            "packager",
            object,
            &format!("--image=kind=openmp,file={device}"),
        ],
    );
    run(
        dir,
        CLANG,
        &[
            "--target=x86_64-unknown-linux-gnu",
            "-shared",
            "-Wl,-Bsymbolic",
            &device,
            "-o",
            &image,
            &format!("-L{LLVM_LIB}"),
            "-lomp",
            "-lomptarget",
        ],
    );
    let wrapped = if bare {
        image.clone()
    } else {
        let file = format!(
            "--image=file={image},triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp"
        );
        run(dir, ours, &["packager", "-o", &package, &file]);
        package
    };
    run(dir, ours, &["wrap", "--kind=openmp", "-o", &unit, &wrapped]);
    run(
        dir,
        CLANG,
        &["-O1", "-fPIC", "-c", &unit, "-o", &registration],
    );
    let objdump = run(
        dir,
        "/usr/lib/llvm-22/bin/llvm-objdump",
        &["--offloading", &registration],
    );
    let listed = String::from_utf8_lossy(&objdump.stdout);
    assert!(
        listed.contains("triple          x86_64-unknown-linux-gnu"),
        "{listed}"
    );
    let rpath = format!("-Wl,-rpath,{LLVM_LIB}");
    let lib = format!("-L{LLVM_LIB}");
    let mut link = vec!["-fopenmp", object, registration.as_str()];
    link.extend(extra);
    link.extend(["-o", output, lib.as_str(), "-lomptarget", rpath.as_str()]);
    run(dir, CLANG, &link);
}

#[test]
fn programs_registered_by_clangoffload_wrap_offload() {
    if !runtime_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("t.c"), ONE_TU).unwrap();
    std::fs::write(dir.join("lib.c"), LIBRARY).unwrap();
    std::fs::write(dir.join("main.c"), EXECUTABLE).unwrap();
    let compile = |source: &str, object: &str, pic: bool| {
        let mut args: Vec<&str> = OPENMP.to_vec();
        if pic {
            args.push("-fPIC");
        }
        args.extend(["-c", source, "-o", object]);
        run(dir, CLANG, &args);
    };
    compile("t.c", "t.o", false);
    // The device image given bare: `wrap` packages it.
    link_with_our_registration(dir, "t.o", "t", &[], true);
    let (stdout, launches) = offload(dir, "t");
    assert_eq!((stdout.as_str(), launches), ("sum=499500 initial=0\n", 1));
    compile("lib.c", "lib.o", true);
    link_with_our_registration(dir, "lib.o", "libscaled.so", &["-shared"], false);
    compile("main.c", "main.o", false);
    link_with_our_registration(dir, "main.o", "main", &["-L.", "-lscaled"], false);
    let (stdout, launches) = offload(dir, "main");
    assert_eq!((stdout.as_str(), launches), ("y=15 initial=0\n", 2));
}
