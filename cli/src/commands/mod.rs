//! One module per command.

pub mod bundler;
pub mod extract;
pub mod list;

use std::fmt::Display;

/// A command's failure: the message LLVM-style tools print after
/// `<program>: error: `.
#[derive(Debug)]
pub struct Failure(pub String);

impl<T: Display> From<T> for Failure {
    fn from(e: T) -> Self {
        Failure(e.to_string())
    }
}

/// What kind of container a buffer starts with, by its magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Bundle,
    CompressedBundle,
    Object,
    Other,
}

pub fn sniff(data: &[u8]) -> Sniffed {
    const MACHO: &[[u8; 4]] = &[
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
    ];
    if data.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") {
        Sniffed::Bundle
    } else if data.starts_with(b"CCOB") {
        Sniffed::CompressedBundle
    } else if data.starts_with(b"\x7fELF") || MACHO.iter().any(|m| data.starts_with(m)) {
        Sniffed::Object
    } else {
        Sniffed::Other
    }
}
