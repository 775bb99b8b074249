//! Where a view a parser returned lies in its input: every parser here is
//! zero-copy, so every view must be a subslice of the bytes it was given.
//! Check modules reach it as `super::within`: `checks/mod.rs` declares it
//! for the replay test, and each fuzz target that needs it declares it
//! beside its check module.

use core::ops::Range;

/// The offsets of `part` in `data`; panics when `part` is not inside `data`,
/// even when it is empty (an empty payload must still sit at its offset).
pub fn within(data: &[u8], part: &[u8]) -> Range<usize> {
    let base = data.as_ptr() as usize;
    let start = part.as_ptr() as usize;
    assert!(
        start >= base && start + part.len() <= base + data.len(),
        "slice [{start:#x}, +{}) outside input [{base:#x}, +{})",
        part.len(),
        data.len()
    );
    start - base..start - base + part.len()
}

/// As [`within`], for views that are `&[]` when empty (a section or table
/// that is absent has no place): an empty `part` gives `0..0`.
#[allow(dead_code)] // not every check module reads such views
pub fn within_or_empty(data: &[u8], part: &[u8]) -> Range<usize> {
    if part.is_empty() {
        return 0..0;
    }
    within(data, part)
}
