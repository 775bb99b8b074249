//! Writing text bundles byte-identical to clang-offload-bundler's.

use alloc::vec::Vec;

use super::{check_entry, Comment, Marker};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

/// Writes a whole text bundle for `(ID, payload)` pairs into memory: per
/// entry, in order, its start marker, the payload verbatim and its end marker,
/// as the bundler does. IDs are written as given: use
/// [`crate::id::normalize_entry_id`] first to get the bundler's IDs.
///
/// Unlike LLVM, refuses entries that would not read back as themselves (see
/// [`super::check_entry`]); the error names the entry.
pub fn write_text_bundle(comment: Comment, entries: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    let mut total = 0u64;
    for (index, (id, payload)) in (0u64..).zip(entries) {
        check_entry(comment, id, payload).map_err(|e| e.in_entry(index))?;
        total = Marker::start(comment, id)
            .size()
            .checked_add(to_u64(payload.len()))
            .and_then(|n| n.checked_add(Marker::end(comment, id).size()))
            .and_then(|n| n.checked_add(total))
            .ok_or(Error::new(ErrorKind::LayoutOverflow, 0))?;
    }
    let mut out = crate::bytes::reserve(total)?;
    for (id, payload) in entries {
        let start = Marker::start(comment, id);
        let end = Marker::end(comment, id);
        for part in start
            .parts()
            .into_iter()
            .chain([*payload])
            .chain(end.parts())
        {
            out.extend_from_slice(part);
        }
    }
    Ok(out)
}
