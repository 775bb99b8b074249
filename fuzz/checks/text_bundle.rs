//! Strict and lenient parsing of arbitrary bytes as a text bundle. The first
//! byte picks the comment (`//`, `#`, `;`), the rest is the file.
//!
//! Invariants checked:
//! - no panic in `parse`, `parse_lenient`, `entries`, `is_text_bundle`;
//! - the lenient walk terminates, yields at most one error, only as its last
//!   item, and stays ended; its entries are in file order and do not overlap;
//! - every ID and payload slice lies inside the input where the entry says:
//!   the start marker line (head, ID, `\n`) at `start_offset`, the payload at
//!   `offset`, the end marker (head, same ID) at `end_marker_offset`, and
//!   `end_offset` past its line; error offsets lie inside the input;
//! - strict parse succeeds exactly when the lenient walk has no error, and
//!   then yields the same entries and counts them; when it fails its error is
//!   the lenient one; `is_text_bundle` is false exactly for an empty success;
//! - the good entries before an error are what a strict parse of the input
//!   cut at the last good entry's end gives;
//! - a strictly parsed bundle passes `check_entry`, rewritten with
//!   `write_text_bundle` parses to the same IDs and payloads, and is the input
//!   byte for byte when the input has nothing outside its entries.

use clangoffload::text_bundle::{check_entry, write_text_bundle, Comment, Marker};
use clangoffload::{TextBundle, TextEntry};

use super::within::within;

fn check_entry_layout(data: &[u8], comment: Comment, e: &TextEntry<'_>, index: u64, after: u64) {
    assert_eq!(e.index(), index);
    assert!(!e.id().is_empty());
    assert!(!e.id().contains(&b'\n'));
    assert!(e.start_offset() >= after, "entries overlap or go back");
    let start = e.start_offset() as usize;
    let [head, id, nl] = Marker::start(comment, e.id()).parts();
    assert!(data[start..].starts_with(head));
    assert_eq!(
        within(data, e.id()).start,
        start + head.len(),
        "ID follows the start head"
    );
    assert_eq!(&data[start + head.len()..][..id.len()], id);
    assert_eq!(data[start + head.len() + id.len()], nl[0]);
    let payload = within(data, e.payload());
    assert_eq!(payload.start as u64, e.offset());
    assert_eq!(e.offset(), (start + head.len() + id.len() + 1) as u64);
    assert_eq!(e.size(), e.payload().len() as u64);
    assert_eq!(e.end_marker_offset(), payload.end as u64);
    let [end_head, end_id, _] = Marker::end(comment, e.id()).parts();
    let end_line = &data[payload.end..e.end_offset() as usize];
    assert!(end_line.starts_with(end_head));
    let rest = &end_line[end_head.len()..];
    assert!(rest == end_id || rest.strip_suffix(b"\n") == Some(end_id));
    if rest == end_id {
        assert_eq!(
            e.end_offset(),
            data.len() as u64,
            "only the last line may lack its newline"
        );
    }
    assert_eq!(e.id_str().is_some(), core::str::from_utf8(e.id()).is_ok());
}

/// Walks the entries, checking each; returns the good entries and the error
/// that ended the walk, if any.
fn walk<'d>(
    data: &'d [u8],
    comment: Comment,
    bundle: &TextBundle<'d>,
) -> (Vec<TextEntry<'d>>, Option<clangoffload::Error>) {
    // Each good entry takes at least two marker lines of 20+ bytes.
    let limit = data.len() / 40 + 1;
    let mut good: Vec<TextEntry<'d>> = Vec::new();
    let mut error = None;
    let mut iter = bundle.entries();
    for (n, item) in iter.by_ref().take(limit + 1).enumerate() {
        assert!(error.is_none(), "item after an error");
        assert!(n < limit, "lenient walk yields too many items");
        match item {
            Ok(e) => {
                let after = good.last().map_or(0, |g| g.end_offset());
                check_entry_layout(data, comment, &e, n as u64, after);
                good.push(e);
            }
            Err(err) => {
                assert!(
                    err.offset() < data.len() as u64,
                    "error offset outside the input"
                );
                if let Some(entry) = err.entry() {
                    assert_eq!(entry, n as u64, "error names its entry");
                }
                let _ = err.to_string();
                error = Some(err);
            }
        }
    }
    assert!(iter.next().is_none(), "lenient walk does not end");
    assert!(iter.next().is_none(), "lenient walk restarts");
    (good, error)
}

fn check_rewrite(data: &[u8], comment: Comment, good: &[TextEntry<'_>]) {
    let pairs: Vec<(&[u8], &[u8])> = good.iter().map(|e| (e.id(), e.payload())).collect();
    for (id, payload) in &pairs {
        check_entry(comment, id, payload).expect("a parsed entry can be written");
    }
    let out = write_text_bundle(comment, &pairs).expect("rewrite of a parsed bundle");
    let again = TextBundle::parse(&out, comment).expect("rewritten bundle parses");
    let entries: Vec<_> = again.entries().map(|e| e.unwrap()).collect();
    assert_eq!(entries.len(), good.len());
    for (a, b) in entries.iter().zip(good) {
        assert_eq!(a.id(), b.id());
        assert_eq!(a.payload(), b.payload());
    }
    let tight = good
        .first()
        .map_or(data.is_empty(), |first| first.start_offset() == 0)
        && good
            .windows(2)
            .all(|w| w[0].end_offset() == w[1].start_offset())
        && good
            .last()
            .is_none_or(|last| last.end_offset() == data.len() as u64 && data.ends_with(b"\n"));
    if tight {
        assert!(
            out == data,
            "rewrite of a bundle with nothing outside its entries differs"
        );
    }
}

/// The checks, on one input.
pub fn check(input: &[u8]) {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    let comment = [Comment::DoubleSlash, Comment::Hash, Comment::Semicolon][selector as usize % 3];

    let strict = TextBundle::parse(data, comment);
    let lenient = TextBundle::parse_lenient(data, comment);
    assert!(std::ptr::eq(lenient.data(), data));
    assert_eq!(lenient.comment(), comment);
    assert_eq!(lenient.entry_count(), None);

    let (good, error) = walk(data, comment, &lenient);
    match (&strict, error) {
        (Ok(bundle), None) => {
            assert_eq!(bundle.entry_count(), Some(good.len() as u64));
            let strict_entries: Vec<_> = bundle
                .entries()
                .map(|e| e.expect("strict bundle entry"))
                .collect();
            assert_eq!(strict_entries, good, "strict and lenient entries differ");
            assert_eq!(TextBundle::is_text_bundle(data, comment), !good.is_empty());
            check_rewrite(data, comment, &good);
        }
        (Ok(_), Some(e)) => panic!("strict parse succeeded but lenient walk failed: {e}"),
        (Err(e), None) => panic!("strict parse failed ({e}) but lenient walk had no error"),
        (Err(strict_err), Some(lenient_err)) => {
            assert_eq!(*strict_err, lenient_err, "strict and lenient errors differ");
            assert!(TextBundle::is_text_bundle(data, comment));
            let cut = good.last().map_or(0, |e| e.end_offset() as usize);
            let prefix = TextBundle::parse(&data[..cut], comment)
                .expect("the input up to the last good entry parses");
            let prefix_entries: Vec<_> = prefix.entries().map(|e| e.unwrap()).collect();
            assert_eq!(
                prefix_entries, good,
                "good entries are not the strict prefix"
            );
        }
    }
}
