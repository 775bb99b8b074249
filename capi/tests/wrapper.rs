//! Builds `tests/c/wrapper.c` against the static library (plain and under
//! ASan + UBSan) and runs it: the offload runtime structures have LLVM's
//! layout, and `clangoffload_device_images_fill` finds the images of LLVM 22's
//! files in place.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use clangoffload::compressed::CompressionMethod;
use clangoffload::offload_binary::{
    write_offload_binary, ImageKind, NewImage, OffloadKind, WriteOptions,
};

use common::{assert_success, build_c, root, run_c, SANITIZERS};

fn image(bytes: &[u8]) -> NewImage<'_> {
    NewImage {
        image_kind: ImageKind::Object,
        offload_kind: OffloadKind::OpenMp,
        flags: 0,
        strings: &[],
        image: bytes,
    }
}

/// A v1 binary ("first"), a compressed v3 binary, a v1 binary ("second"),
/// back to back and 8-aligned.
fn mixed_file(name: &str) -> std::path::PathBuf {
    let v1 = |bytes| write_offload_binary(&[image(bytes)], &WriteOptions::default()).unwrap();
    let v3 = write_offload_binary(
        &[image(b"compressed")],
        &WriteOptions {
            version: 3,
            compression: Some((CompressionMethod::Zlib, None)),
        },
    )
    .unwrap();
    let mut data = Vec::new();
    for part in [v1(b"first"), v3, v1(b"second")] {
        data.extend_from_slice(&part);
        data.resize(data.len().next_multiple_of(8), 0);
    }
    let path = common::scratch_path(&format!("wrapper-mixed-{name}.offbin"));
    std::fs::write(&path, data).unwrap();
    path
}

fn compile_and_run(extra: &[&str], name: &str) {
    let program = build_c(
        &["capi/tests/c/wrapper.c"],
        extra,
        &format!("wrapper-{name}"),
    );
    let mixed = mixed_file(name);
    let run = run_c(&program, &[&root().join("tests/fixtures"), &mixed]);
    let _ = std::fs::remove_file(&mixed);
    assert_success(&run, &format!("wrapper.c ({name})"));
}

#[test]
fn c_wrapper_structures_and_device_images() {
    compile_and_run(&[], "plain");
}

#[test]
fn c_wrapper_structures_and_device_images_under_sanitizers() {
    compile_and_run(SANITIZERS, "asan");
}
