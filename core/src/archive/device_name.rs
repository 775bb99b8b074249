//! The names clang-offload-bundler gives the members of the per-target
//! archives it writes for `-type=a -unbundle` (heterogeneous device archives).

use alloc::vec::Vec;

use crate::id::{is_offload_arch, BundleEntryId};

/// The name of the output member for the bundle entry `entry_id` (as stored
/// in the bundle) of the input member `member_name`, as clang-offload-bundler
/// 22 names it:
///
/// `<stem><-><entry_id><stem><ext>` with every `:` replaced by `_`, where
/// `stem` and `ext` are LLVM's `sys::path::stem` and `extension` of the
/// member name's last path component (`filename`), and `ext` is `.bc` if the
/// entry's target ID contains `gfx`, `.cubin` if it contains `sm_`, else the
/// member's own extension. The target ID is the part after the entry ID's
/// fifth `-`, counted only if its processor is one clang knows
/// ([`is_offload_arch`]).
///
/// ```
/// use clangoffload::archive::device_member_name;
/// assert_eq!(
///     device_member_name(b"fat.bc", "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+"),
///     b"fat-openmp-amdgcn-amd-amdhsa--gfx90a_xnack+fat.bc"
/// );
/// assert_eq!(
///     device_member_name(b"lib/x.o", "openmp-x86_64-unknown-linux-gnu-"),
///     b"x-openmp-x86_64-unknown-linux-gnu-x.o"
/// );
/// ```
///
/// The result is a member name, not a path: it can contain `/` (from a
/// member named `/`) and must not be joined to a directory.
pub fn device_member_name(member_name: &[u8], entry_id: &str) -> Vec<u8> {
    let file = file_name(member_name);
    let (stem, own_ext) = split_extension(file);
    let target_id = BundleEntryId::parse(entry_id)
        .map(|id| id.target_id())
        .unwrap_or("");
    let processor = target_id.split(':').next().unwrap_or("");
    let known = !processor.is_empty() && is_offload_arch(processor);
    let ext: &[u8] = if known && target_id.contains("gfx") {
        b".bc"
    } else if known && target_id.contains("sm_") {
        b".cubin"
    } else {
        own_ext
    };
    let mut name = Vec::new();
    for part in [stem, b"-", entry_id.as_bytes(), stem, ext] {
        name.extend(part.iter().map(|&b| if b == b':' { b'_' } else { b }));
    }
    name
}

/// LLVM's `sys::path::filename` for POSIX paths: the last component, `.`
/// after a trailing `/`, the root `/` for a path of slashes, and a
/// `//net`-style network name whole.
fn file_name(path: &[u8]) -> &[u8] {
    let is_sep = |b: &u8| *b == b'/';
    let root_dir = root_dir_start(path);
    // Separators at the end, but not the root directory.
    let mut end = path.len();
    while let Some(last) = end.checked_sub(1) {
        if Some(last) == root_dir || !path.get(last).is_some_and(is_sep) {
            break;
        }
        end = last;
    }
    let trailing_sep = path.last().is_some_and(is_sep);
    let past_root = match (root_dir, end.checked_sub(1)) {
        (None, _) => true,
        (Some(root), Some(last)) => last > root,
        (Some(_), None) => false,
    };
    if trailing_sep && past_root {
        return b".";
    }
    let head = path.get(..end).unwrap_or_default();
    let start = filename_pos(head);
    head.get(start..).unwrap_or_default()
}

/// Where the root directory's separator is: at 0 for `/x`, after the network
/// name for `//net/x`, none for a relative path.
fn root_dir_start(path: &[u8]) -> Option<usize> {
    match path {
        [b'/', b'/', third, ..] if path.len() > 3 && *third != b'/' => {
            let rest = path.get(2..)?;
            memchr::memchr(b'/', rest).and_then(|pos| pos.checked_add(2))
        }
        [b'/', ..] => Some(0),
        _ => None,
    }
}

/// Start of the last component of `path` (which has no trailing separator
/// unless it is the root).
fn filename_pos(path: &[u8]) -> usize {
    if path.last() == Some(&b'/') {
        return path.len().saturating_sub(1);
    }
    match memchr::memrchr(b'/', path) {
        None => 0,
        Some(1) if path.first() == Some(&b'/') => 0,
        Some(pos) => pos.saturating_add(1),
    }
}

/// LLVM's `stem` and `extension` of a file name: split at the last `.`,
/// except that `.` and `..` have no extension.
fn split_extension(file: &[u8]) -> (&[u8], &[u8]) {
    if file == b"." || file == b".." {
        return (file, b"");
    }
    match memchr::memrchr(b'.', file) {
        Some(dot) => file.split_at(dot),
        None => (file, b""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_like_llvm() {
        // Each pair was checked with clang-offload-bundler 22 (the stem it
        // printed in the output member's name).
        for (path, file) in [
            (&b"dir/x.o"[..], &b"x.o"[..]),
            (b"x/", b"."),
            (b"a//b.o", b"b.o"),
            (b"..", b".."),
            (b".", b"."),
            (b"trail.o/", b"."),
            (b"/", b"/"),
            (b"//", b"/"),
            (b"///", b"/"),
            (b"/x/", b"."),
            (b"a/.", b"."),
            (b"//x", b"//x"),
            (b"//x.o", b"//x.o"),
            (b"//net/y.o", b"y.o"),
            (b"/a.o", b"a.o"),
            (b"", b""),
        ] {
            assert_eq!(file_name(path), file, "{:?}", core::str::from_utf8(path));
        }
    }

    #[test]
    fn extensions_like_llvm() {
        assert_eq!(split_extension(b"a.b.c"), (&b"a.b"[..], &b".c"[..]));
        assert_eq!(split_extension(b".hidden"), (&b""[..], &b".hidden"[..]));
        assert_eq!(split_extension(b"..."), (&b".."[..], &b"."[..]));
        assert_eq!(split_extension(b"a."), (&b"a"[..], &b"."[..]));
        assert_eq!(split_extension(b"nodot"), (&b"nodot"[..], &b""[..]));
        assert_eq!(split_extension(b".."), (&b".."[..], &b""[..]));
    }
}
