//! One module per command.

pub mod bundler;
pub mod extract;
pub mod inspect;
pub mod list;
pub mod packager;
pub mod scan;
pub mod wrap;

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
    } else if is_elf_object(data) || MACHO.iter().any(|m| data.starts_with(m)) {
        Sniffed::Object
    } else {
        Sniffed::Other
    }
}

/// Whether `data` is an ELF file LLVM would open as an object: a known class
/// and byte order, and a section header table inside the file. (LLVM treats a
/// file that merely starts with `\x7fELF` as plain data.)
fn is_elf_object(data: &[u8]) -> bool {
    let Some(ident) = data.get(..16) else {
        return false;
    };
    if &ident[..4] != b"\x7fELF" || ident[6] != 1 {
        return false;
    }
    let little = match ident[5] {
        1 => true,
        2 => false,
        _ => return false,
    };
    let read = |at: usize, n: usize| -> Option<u64> {
        let bytes = data.get(at..at + n)?;
        let mut v = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            let shift = if little { 8 * i } else { 8 * (n - 1 - i) };
            v |= u64::from(b) << shift;
        }
        Some(v)
    };
    // (e_shoff, e_shentsize, e_shnum) for ELF32 and ELF64.
    let fields = match ident[4] {
        1 => (read(32, 4), read(46, 2), read(48, 2)),
        2 => (read(40, 8), read(58, 2), read(60, 2)),
        _ => return false,
    };
    let (Some(shoff), Some(shentsize), Some(shnum)) = fields else {
        return false;
    };
    shentsize
        .checked_mul(shnum)
        .and_then(|n| n.checked_add(shoff))
        .is_some_and(|end| end <= data.len() as u64)
}
