//! Installing the C library as a user would (`make install`), then building
//! the examples against the installed tree three ways: `cc` with
//! `pkg-config --cflags --libs` (shared), `pkg-config --static` (static), and
//! a CMake project with `find_package(clangoffload)` (shared and static).
//! Also checks the exported symbols of both libraries against the header, the
//! static-link line README.md documents, DESTDIR staging and a program that
//! links a second Rust static library beside ours.
//!
//! Needs make, pkg-config and cmake (`.ci/run` installs them); prints a
//! notice and passes when one is missing.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{
    defined_globals, header_functions, make, root, run, scratch_dir, symbols, target_dir,
};

fn tools_present() -> bool {
    common::tools_present(
        &["make", "pkg-config", "cmake", "cc", "c++"],
        "install tests",
    )
}

/// Two installs made once for all tests: both library types under one
/// prefix, and the archive alone under another.
struct Installs {
    both: PathBuf,
    static_only: PathBuf,
}

fn installs() -> &'static Installs {
    static INSTALLS: OnceLock<Installs> = OnceLock::new();
    INSTALLS.get_or_init(|| {
        let dir = scratch_dir("install");
        let both = dir.join("usr");
        let static_only = dir.join("static");
        make(&["install"], &[("PREFIX", &both)]);
        make(
            &["install"],
            &[
                ("PREFIX", &static_only),
                ("LIBRARY_TYPES", Path::new("static")),
            ],
        );
        Installs { both, static_only }
    })
}

fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let out = run(Command::new("pkg-config")
        .args(args)
        .arg("clangoffload")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .env_remove("PKG_CONFIG_SYSROOT_DIR"));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Compiles one example with `flags` (a compiler driver's link line).
fn build_example(compiler: &str, source: &str, flags: &[String], out: &Path) {
    let std = if compiler == "cc" {
        "-std=c11"
    } else {
        "-std=c++17"
    };
    run(Command::new(compiler)
        .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(root().join("examples").join(source))
        .args(flags)
        .arg("-o")
        .arg(out));
}

/// The libraries a program or library needs at run time (DT_NEEDED).
fn needed(binary: &Path) -> Vec<String> {
    let out = run(Command::new("readelf").arg("-d").arg(binary));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next().map(String::from))
        .collect()
}

/// What the examples print for the fixture: one line per container and
/// entry, then the code object picked for gfx906.
const FIXTURE: &str = "tests/fixtures/llvm22/hip-4096.bundle";
const TARGET: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";

fn run_example(program: &Path, libdir: Option<&Path>) -> String {
    let mut cmd = Command::new(program);
    cmd.arg(root().join(FIXTURE)).arg(TARGET);
    if let Some(dir) = libdir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    let out = run(&mut cmd);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l == "picked hipv4-amdgcn-amd-amdhsa--gfx906 5000 bytes"),
        "{program:?} printed:\n{text}"
    );
    for id in std::fs::read_to_string(root().join("tests/fixtures/llvm22/hip-4096.list"))
        .unwrap()
        .lines()
    {
        assert!(
            text.lines().any(|l| l.trim() == format!("entry {id}")),
            "{program:?} did not list {id}:\n{text}"
        );
    }
    text
}

const EXAMPLES: [(&str, &str); 2] = [("cc", "list_and_pick.c"), ("c++", "list_and_pick.cpp")];

#[test]
fn pkg_config_shared_and_static_links_run() {
    if !tools_present() {
        return;
    }
    let installs = installs();
    let dir = scratch_dir("pkg-config");
    let mut outputs = BTreeSet::new();
    for (compiler, source) in EXAMPLES {
        // Shared: the plain link line.
        let flags = pkg_config(&installs.both, &["--cflags", "--libs"]);
        let shared = dir.join(format!("{source}.shared"));
        build_example(compiler, source, &flags, &shared);
        assert!(
            needed(&shared).contains(&"libclangoffload.so.0".to_string()),
            "{shared:?} does not load the shared library: {:?}",
            needed(&shared)
        );
        outputs.insert(run_example(&shared, Some(&installs.both.join("lib"))));

        // Static: the archive alone is installed, so the same -lclangoffload
        // finds it, and Libs.private adds what it needs.
        let flags = pkg_config(&installs.static_only, &["--static", "--cflags", "--libs"]);
        let private = pkg_config(&installs.static_only, &["--static", "--libs-only-l"]);
        assert!(private.contains(&"-lpthread".to_string()), "{private:?}");
        let fixed = dir.join(format!("{source}.static"));
        build_example(compiler, source, &flags, &fixed);
        assert!(
            !needed(&fixed).iter().any(|n| n.contains("clangoffload")),
            "{fixed:?} is not linked statically: {:?}",
            needed(&fixed)
        );
        outputs.insert(run_example(&fixed, None));
    }
    assert_eq!(outputs.len(), 1, "the builds disagree: {outputs:#?}");
}

fn cmake_build(prefix: &Path, build: &Path, extra: &[&str]) {
    run(Command::new("cmake")
        .arg("-S")
        .arg(root().join("examples"))
        .arg("-B")
        .arg(build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .args(extra));
    run(Command::new("cmake").arg("--build").arg(build));
}

#[test]
fn cmake_find_package_shared_and_static_links_run() {
    if !tools_present() {
        return;
    }
    let installs = installs();
    let dir = scratch_dir("cmake");
    let mut outputs = BTreeSet::new();
    for (name, extra, is_static) in [
        ("shared", &[][..], false),
        ("static", &["-DCLANGOFFLOAD_USE_STATIC_LIBS=ON"][..], true),
    ] {
        let build = dir.join(name);
        cmake_build(&installs.both, &build, extra);
        for program in ["list_and_pick_c", "list_and_pick_cpp"] {
            let program = build.join(program);
            let links_so = needed(&program).contains(&"libclangoffload.so.0".to_string());
            assert_eq!(links_so, !is_static, "{program:?}: {:?}", needed(&program));
            // CMake gives the build tree an RPATH to the imported library.
            outputs.insert(run_example(&program, None));
        }
    }
    // A prefix with only the archive: clangoffload::clangoffload is static.
    let build = dir.join("static-only");
    cmake_build(&installs.static_only, &build, &[]);
    assert!(!needed(&build.join("list_and_pick_c"))
        .iter()
        .any(|n| n.contains("clangoffload")));
    outputs.insert(run_example(&build.join("list_and_pick_cpp"), None));
    assert_eq!(outputs.len(), 1, "the builds disagree: {outputs:#?}");
}

#[test]
fn destdir_stages_a_relocatable_tree_and_uninstall_removes_it() {
    if !tools_present() {
        return;
    }
    let stage = scratch_dir("destdir");
    make(
        &["install"],
        &[("DESTDIR", &stage), ("PREFIX", Path::new("/opt/co"))],
    );
    let prefix = stage.join("opt/co");
    let mut files: Vec<String> = walk(&stage)
        .iter()
        .map(|p| p.strip_prefix(&stage).unwrap().display().to_string())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "opt/co/include/clangoffload.h",
            "opt/co/include/clangoffload.hpp",
            "opt/co/lib/cmake/clangoffload/clangoffloadConfig.cmake",
            "opt/co/lib/cmake/clangoffload/clangoffloadConfigVersion.cmake",
            "opt/co/lib/libclangoffload.a",
            "opt/co/lib/libclangoffload.so",
            "opt/co/lib/libclangoffload.so.0",
            &format!(
                "opt/co/lib/libclangoffload.so.{}",
                env!("CARGO_PKG_VERSION")
            ),
            "opt/co/lib/pkgconfig/clangoffload.pc",
        ]
    );
    // DESTDIR is not written into the files: they name the final prefix.
    let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/clangoffload.pc")).unwrap();
    assert!(pc.lines().any(|l| l == "prefix=/opt/co"), "{pc}");
    assert!(
        pc.lines()
            .any(|l| l == format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{pc}"
    );
    assert!(!pc.contains(stage.to_str().unwrap()), "{pc}");
    // The CMake package finds its files from where it lies, so the staged
    // tree works as it is.
    let work = scratch_dir("destdir-builds");
    let build = work.join("build");
    cmake_build(&prefix, &build, &["-DCLANGOFFLOAD_USE_STATIC_LIBS=ON"]);
    run_example(&build.join("list_and_pick_c"), None);
    // A newer major version than installed is refused.
    let config = prefix.join("lib/cmake/clangoffload");
    let probe = work.join("probe");
    std::fs::create_dir_all(&probe).unwrap();
    std::fs::write(
        probe.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nfind_package(clangoffload 1.0 REQUIRED)\n",
    )
    .unwrap();
    let refused = Command::new("cmake")
        .arg("-S")
        .arg(&probe)
        .arg("-B")
        .arg(probe.join("b"))
        .arg(format!("-Dclangoffload_DIR={}", config.display()))
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "find_package(clangoffload 1.0) succeeded"
    );

    make(
        &["uninstall"],
        &[("DESTDIR", &stage), ("PREFIX", Path::new("/opt/co"))],
    );
    let left = walk(&stage);
    assert!(left.is_empty(), "uninstall left {left:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_symlink() || path.is_file() {
            files.push(path);
        } else if path.is_dir() {
            files.extend(walk(&path));
        }
    }
    files
}

#[test]
fn both_libraries_export_exactly_the_header_functions() {
    if !tools_present() {
        return;
    }
    let lib = installs().both.join("lib");
    let api = header_functions();
    assert!(api.len() > 50, "header parse found only {api:?}");

    // The shared library: every export is an API function in version node
    // CLANGOFFLOAD_<major>.
    let node = format!("CLANGOFFLOAD_{}", env!("CARGO_PKG_VERSION_MAJOR"));
    let so = lib.join("libclangoffload.so.0");
    let mut exported = BTreeSet::new();
    for (bind, ndx, name) in symbols(&["--dyn-syms"], &so) {
        if ndx == "UND" || bind == "LOCAL" {
            continue;
        }
        if name == format!("{node}@@{node}") || name == node {
            continue;
        }
        let (bare, version) = name.split_once('@').unwrap_or((&name, ""));
        assert_eq!(
            version.trim_start_matches('@'),
            node,
            "{name} is not versioned {node}"
        );
        exported.insert(bare.to_string());
    }
    assert_eq!(
        exported, api,
        "libclangoffload.so exports differ from the header"
    );
    let soname = run(Command::new("readelf").arg("-d").arg(&so));
    assert!(String::from_utf8_lossy(&soname.stdout).contains("[libclangoffload.so.0]"));

    // The archive: one object whose only global definitions are the API, so
    // nothing of Rust's std can clash with another library.
    let archive = lib.join("libclangoffload.a");
    assert_eq!(
        defined_globals(&archive),
        api,
        "libclangoffload.a defines other globals"
    );
}

#[test]
fn readme_documents_the_static_link_line() {
    if !tools_present() {
        return;
    }
    let installs = installs();
    let line = pkg_config(&installs.static_only, &["--static", "--libs-only-l"]).join(" ");
    let line = line.trim_start_matches("-lclangoffload ").to_string();
    let native = std::fs::read_to_string(target_dir().join("capi/native-static-libs")).unwrap();
    assert_eq!(line, native.trim(), "Libs.private is not rustc's line");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("libclangoffload.a {line}")),
        "README.md does not show the static link line `libclangoffload.a {line}`"
    );
    // The documented line links a C program without pkg-config.
    let dir = scratch_dir("static-line");
    let program = dir.join("smoke");
    run(Command::new("cc")
        .arg(root().join("examples/list_and_pick.c"))
        .arg("-I")
        .arg(installs.both.join("include"))
        .arg(installs.both.join("lib/libclangoffload.a"))
        .args(line.split_whitespace())
        .arg("-o")
        .arg(&program));
    run_example(&program, None);
}

/// A second Rust static library, with its own copy of std, linked into the
/// same program as ours: the clash README.md describes does not happen with
/// the installed archive, whose Rust symbols are all local.
#[test]
fn a_second_rust_static_library_links_beside_ours() {
    if !tools_present() {
        return;
    }
    let installs = installs();
    let dir = scratch_dir("two-rust");
    std::fs::write(
        dir.join("other.rs"),
        "#[no_mangle]\npub extern \"C\" fn other_sum(n: u32) -> u64 {\n    \
         let v: Vec<u64> = (0..u64::from(n)).collect();\n    \
         std::panic::catch_unwind(|| v.iter().sum()).unwrap_or(0)\n}\n",
    )
    .unwrap();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    run(Command::new(rustc)
        .args(["--crate-type", "staticlib", "--edition", "2021", "-O"])
        .arg(dir.join("other.rs"))
        .arg("-o")
        .arg(dir.join("libother.a")));
    std::fs::write(
        dir.join("main.c"),
        "#include <clangoffload.h>\n#include <stdio.h>\n#include <string.h>\n\
         unsigned long long other_sum(unsigned n);\n\
         int main(void) {\n  \
         printf(\"%s %llu\\n\", clangoffload_version(), other_sum(10));\n  \
         clangoffload_bundle *b = NULL;\n  \
         const char bad[] = \"__CLANG_OFFLOAD_BUNDLE__\";\n  \
         clangoffload_status s = clangoffload_bundle_parse((const uint8_t *)bad, strlen(bad), 0, &b, NULL);\n  \
         printf(\"%s\\n\", clangoffload_status_message(s));\n  \
         return 0;\n}\n",
    )
    .unwrap();
    let native = std::fs::read_to_string(target_dir().join("capi/native-static-libs")).unwrap();
    let program = dir.join("main");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg(dir.join("main.c"))
        .arg("-I")
        .arg(installs.both.join("include"))
        .arg(installs.both.join("lib/libclangoffload.a"))
        .arg(dir.join("libother.a"))
        .args(native.split_whitespace())
        // What any Rust staticlib needs: its std pulls in code that names
        // libc functions newer than this glibc, unless unused code is dropped.
        .arg("-Wl,--gc-sections")
        .arg("-o")
        .arg(&program));
    let out = run(&mut Command::new(&program));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next(),
        Some(format!("{} 45", env!("CARGO_PKG_VERSION")).as_str())
    );
    assert!(
        text.lines().nth(1).is_some_and(|l| l.contains("truncated")),
        "{text}"
    );
}
