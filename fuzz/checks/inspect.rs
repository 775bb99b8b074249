//! `inspect` (the walk behind `clangoffload inspect` and the C ABI's
//! `clangoffload_inspect`) on arbitrary bytes: archives member by member, ELF
//! files section by section with their HIP/CUDA wrapper records, anything
//! else as containers back to back. Compressed containers decode under a
//! 1 MiB limit each.
//!
//! Invariants checked:
//! - no panic, and the walk ends;
//! - files: the input first, then members whose parent comes before them;
//! - every container's bytes lie inside the input, and it is placed in a
//!   file the inspection lists; a plain bundle's entries lie inside it;
//! - every error and note is placed in a listed file, every error offset
//!   lies inside the input, and every message can be written.

use clangoffload::bundler::Decoding;
use clangoffload::inspect::inspect;
use clangoffload::Container;

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let decoding = Decoding {
        max_size: 1 << 20,
        verify_hash: true,
        ..Decoding::default()
    };
    let found = inspect(data, decoding);
    assert!(found
        .files
        .first()
        .is_some_and(|f| f.name.is_none() && f.parent.is_none()));
    for (i, file) in found.files.iter().enumerate().skip(1) {
        assert!(file.parent.is_some_and(|p| p < i), "file {i}'s parent");
        assert!(file.name.is_some(), "member {i} has no name");
    }
    let files = found.files.len();
    for c in &found.containers {
        assert!(c.place.file < files);
        inside(data, c.container.data());
        if let Container::Bundle(bundle) = &c.container {
            for e in &c.entries {
                let end = e.offset.checked_add(e.size).expect("entry end");
                assert!(
                    end <= bundle.data().len() as u64 + c.offset,
                    "entry past its bundle"
                );
            }
        }
        if let Some(e) = &c.error {
            let _ = e.to_string();
        }
    }
    for e in &found.errors {
        assert!(e.place.file < files);
        assert!(e.offset.is_none_or(|o| o <= data.len() as u64));
        let _ = e.error.to_string();
    }
    for n in &found.notes {
        assert!(n.place.file < files);
    }
}

/// `part` is a slice of `data`.
fn inside(data: &[u8], part: &[u8]) {
    let start = data.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    assert!(part.is_empty() || (at >= start && at + part.len() <= start + data.len()));
}
