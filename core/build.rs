//! Sets `clangoffload_avx512` when the compiler has AVX-512's intrinsics
//! (stable from Rust 1.89; the crate builds with 1.87): MD5 then hashes
//! its lanes with AVX-512VL on processors that have it, chosen at run time
//! (src/compressed/md5.rs).

use std::process::Command;

/// The first Rust with AVX-512's intrinsics and target features.
const AVX512_MINOR: u32 = 89;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(clangoffload_avx512)");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok());
    if version.as_deref().and_then(minor).unwrap_or(0) >= AVX512_MINOR {
        println!("cargo:rustc-cfg=clangoffload_avx512");
    }
}

/// The minor version of Rust 1 in `rustc 1.M.P (...)`.
fn minor(version: &str) -> Option<u32> {
    let number = version.split_whitespace().nth(1)?;
    let mut parts = number.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
