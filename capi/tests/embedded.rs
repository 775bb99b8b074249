//! The embedded build (`make embedded`, `make embedded-alloc`): `no_std`,
//! `panic = "abort"`, linked into a C program whose malloc counts calls.
//! Without an allocator the library must not even name malloc; with one it
//! allocates only through the program's two hooks.

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

use common::{defined_globals, header_functions, make, root, run, target_dir, undefined};

/// What C code needs to provide to any Rust `no_std` archive: the memory
/// functions the compiler emits calls to, and `abort` for a panic.
const C_RUNTIME: [&str; 6] = ["abort", "bcmp", "memcmp", "memcpy", "memmove", "memset"];

const HOOKS: [&str; 2] = ["clangoffload_embedded_alloc", "clangoffload_embedded_free"];

/// The functions the allocator-free build must have: parse, list, find the
/// compatible entry, choose the runtime's code object, decompress zlib into
/// the caller's buffer, find containers in memory.
const ALLOCATOR_FREE: [&str; 14] = [
    "clangoffload_bundle_next_entry",
    "clangoffload_bundle_find_compatible_entry",
    "clangoffload_bundle_select_entry_for_device",
    "clangoffload_fatbin_select_for_device",
    "clangoffload_compressed_parse",
    "clangoffload_compressed_decompressed_size",
    "clangoffload_compressed_decompress",
    "clangoffload_containers_next",
    "clangoffload_scan_next",
    "clangoffload_scan_cursor_next",
    "clangoffload_container_extent",
    "clangoffload_elf_offload_section_next",
    "clangoffload_target_id_parse",
    "clangoffload_entry_id_is_compatible",
];

fn have_make() -> bool {
    common::tools_present(&["make", "cc"], "embedded tests")
}

fn build(alloc: bool) -> PathBuf {
    if alloc {
        make(&["embedded-alloc"], &[]);
        target_dir().join("capi-embedded-alloc/libclangoffload.a")
    } else {
        make(&["embedded"], &[]);
        target_dir().join("capi-embedded/libclangoffload.a")
    }
}

fn run_program(archive: &Path, alloc: bool) -> String {
    let exe = common::scratch_path(&format!("embedded-{alloc}"));
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("capi/tests/c/embedded.c"))
        .arg(archive)
        .arg("-o")
        .arg(&exe);
    if alloc {
        cc.arg("-DWITH_ALLOCATOR");
    }
    run(&mut cc);
    let fixtures = root().join("tests/fixtures");
    let out = run(Command::new(&exe).args([
        fixtures.join("llvm22/hip-4096.bundle"),
        fixtures.join("compressed/synthetic/hip.zlib-v3.ccob"),
        fixtures.join("compressed/llvm22/hip.v3.ccob"),
        fixtures.join("offload/hip-compress.o"),
    ]));
    let _ = std::fs::remove_file(&exe);
    String::from_utf8(out.stdout).unwrap()
}

fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect()
}

/// The IDs of a listing file (LLVM's `-list`, whose order is a hash's).
fn list(path: &str) -> BTreeSet<String> {
    std::fs::read_to_string(root().join("tests/fixtures").join(path))
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The IDs the program printed after `prefix`, each followed by a size.
fn ids(text: &str, prefix: &str) -> BTreeSet<String> {
    lines_with(text, prefix)
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
        .collect()
}

/// Checks what the C program printed for the parts that need no allocator.
fn check_common(text: &str) {
    assert_eq!(
        ids(text, "bundle entry "),
        list("llvm22/hip-4096.list"),
        "{text}"
    );
    // File order, with each payload's size.
    assert_eq!(
        lines_with(text, "bundle entry "),
        [
            "host-x86_64-unknown-linux-gnu- 0",
            "hipv4-amdgcn-amd-amdhsa--gfx906 5000",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ 7001"
        ]
    );
    assert_eq!(
        lines_with(text, "compatible "),
        ["hipv4-amdgcn-amd-amdhsa--gfx906 at 4096"],
        "{text}"
    );
    assert_eq!(
        lines_with(text, "device "),
        ["hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ match 1"],
        "{text}"
    );
    assert_eq!(lines_with(text, "target "), ["gfx90a:sramecc-:xnack+"]);
    let bundle = std::fs::metadata(root().join("tests/fixtures/compressed/llvm22/hip.bundle"))
        .unwrap()
        .len();
    assert_eq!(
        lines_with(text, "zlib size "),
        [format!("{bundle} {bundle}")]
    );
    assert_eq!(ids(text, "zlib entry "), list("compressed/llvm22/hip.list"));
    // The host object holds one compressed bundle in its .hip_fatbin.
    assert_eq!(
        lines_with(text, "scan kind "),
        ["2 at 4096 size 2045"],
        "{text}"
    );
    assert_eq!(lines_with(text, "scan_next hits "), ["1"], "{text}");
    assert_eq!(lines_with(text, "mallocs "), ["0"], "{text}");
}

#[test]
fn the_allocator_free_build_parses_lists_finds_and_inflates_without_malloc() {
    if !have_make() {
        return;
    }
    let archive = build(false);
    let needs = undefined(&archive);
    let extra: BTreeSet<_> = needs
        .iter()
        .filter(|n| !C_RUNTIME.contains(&n.as_str()))
        .collect();
    assert!(extra.is_empty(), "the embedded archive needs {extra:?}");
    let api = defined_globals(&archive);
    assert!(api.is_subset(&header_functions()), "{api:?}");
    for f in ALLOCATOR_FREE {
        assert!(api.contains(f), "{f} is missing from the embedded build");
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for f in &api {
        assert!(
            readme.contains(f.as_str()),
            "README.md does not list {f} as embedded"
        );
    }

    let text = run_program(&archive, false);
    check_common(&text);
    // Choosing in a compressed bundle decodes it whole into the buffer.
    let bundle = std::fs::metadata(root().join("tests/fixtures/compressed/llvm22/hip.bundle"))
        .unwrap()
        .len();
    assert_eq!(
        lines_with(&text, "fatbin "),
        [format!(
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ needed {bundle} code 15528 at start 0"
        )],
        "{text}"
    );
    // zstd needs an allocator; without one it is reported, not attempted.
    assert_eq!(
        lines_with(&text, "zstd: "),
        ["compression method not available in this build"],
        "{text}"
    );
}

#[test]
fn the_allocator_build_decodes_zstd_through_the_programs_hooks() {
    if !have_make() {
        return;
    }
    let archive = build(true);
    let needs = undefined(&archive);
    let extra: BTreeSet<_> = needs
        .iter()
        .filter(|n| !C_RUNTIME.contains(&n.as_str()) && !HOOKS.contains(&n.as_str()))
        .collect();
    assert!(extra.is_empty(), "the embedded archive needs {extra:?}");
    assert!(defined_globals(&archive).contains("clangoffload_bundle_parse"));

    let text = run_program(&archive, true);
    check_common(&text);
    // Choosing in a compressed bundle decodes the code object alone, into
    // the start of the buffer, its ID (38 bytes) after it.
    assert_eq!(
        lines_with(&text, "fatbin "),
        ["hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+ needed 15566 code 15528 at start 1"],
        "{text}"
    );
    let bundle = std::fs::metadata(root().join("tests/fixtures/compressed/llvm22/hip.bundle"))
        .unwrap()
        .len();
    assert_eq!(
        lines_with(&text, "zstd size "),
        [bundle.to_string()],
        "{text}"
    );
    assert_eq!(
        ids(&text, "zstd entry "),
        list("compressed/llvm22/hip.list")
    );
    assert_eq!(lines_with(&text, "allocs "), ["balanced"], "{text}");
}
