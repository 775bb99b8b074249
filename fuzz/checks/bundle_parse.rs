//! Strict and lenient parsing of arbitrary bytes as a binary bundle.
//!
//! Invariants checked:
//! - no panic in `parse`, `parse_lenient`, `entries`, `validate`,
//!   `first_compatible`, `select_for_device`;
//! - every ID and payload slice lies inside the input, at the offset the
//!   entry reports; descriptors are contiguous, in order, from byte 32;
//! - the lenient walk terminates, yields at most one error, and only as its
//!   last item;
//! - strict parse succeeds exactly when the lenient walk has no error; then
//!   both walks yield the same entries and `header_len()` is the end of the
//!   descriptor table (≤ input length); when it fails, its error is the
//!   lenient one (or `CountTooLarge`);
//! - `validate()` only names entries that exist;
//! - a strictly parsed bundle rewritten with `write_bundle(.., 1)` parses to
//!   the same IDs and payloads;
//! - a walk resumed with `entries_from` at a position the walk reported
//!   yields exactly the rest of the full walk (the C ABI's cursor relies on
//!   it); at a position made up from the input it still terminates, reads
//!   only inside the input and never yields more entries than the header's
//!   count allows.

use clangoffload::bundle::{write_bundle, BundleDiagnostic};
use clangoffload::id::{first_compatible, select_for_device};
use clangoffload::{Bundle, BundleEntry, BundleEntryId, EntryPosition, ErrorKind, TargetId};

use super::within::within;

/// Smallest descriptor: 24 fixed bytes and a non-empty ID.
const MIN_DESCRIPTOR: usize = 25;

fn check_entry(data: &[u8], e: &BundleEntry<'_>, expected_index: u64, expected_desc: u64) {
    assert_eq!(e.index(), expected_index);
    assert_eq!(e.descriptor_offset(), expected_desc);
    let id = within(data, e.id());
    assert!(!e.id().is_empty());
    assert_eq!(
        id.start as u64,
        expected_desc + 24,
        "ID follows its descriptor"
    );
    let payload = within(data, e.payload());
    assert_ne!(e.offset(), 0);
    assert_eq!(payload.start as u64, e.offset(), "payload at its offset");
    assert_eq!(e.size(), e.payload().len() as u64);
    assert_eq!(e.id_str().is_some(), core::str::from_utf8(e.id()).is_ok());
}

/// Walks the entries, checking each; returns the good entries and the error
/// that ended the walk, if any.
fn walk<'d>(
    data: &'d [u8],
    bundle: &Bundle<'d>,
) -> (Vec<BundleEntry<'d>>, Option<clangoffload::Error>) {
    // Each good entry takes at least 25 bytes after the 32-byte header, so a
    // terminating walk yields at most this many items (+1 for an error).
    let limit = data.len().saturating_sub(32) / MIN_DESCRIPTOR + 1;
    let mut good = Vec::new();
    let mut error = None;
    let mut desc = 32u64;
    let mut iter = bundle.entries();
    for (n, item) in iter.by_ref().take(limit + 1).enumerate() {
        assert!(error.is_none(), "item after an error");
        assert!(n < limit, "lenient walk yields too many items");
        match item {
            Ok(e) => {
                check_entry(data, &e, n as u64, desc);
                desc = e.descriptor_offset() + 24 + e.id().len() as u64;
                good.push(e);
            }
            Err(err) => {
                assert_eq!(err.entry(), Some(n as u64), "error names its entry");
                assert!(err.offset() <= data.len() as u64 + 24);
                let _ = err.to_string();
                error = Some(err);
            }
        }
    }
    assert!(iter.next().is_none(), "lenient walk does not end");
    assert!(iter.next().is_none(), "lenient walk restarts");
    if error.is_none() {
        assert_eq!(good.len() as u64, bundle.entry_count());
    }
    (good, error)
}

/// Resumes the walk at some of the positions the full walk passed through
/// (first, middle, last, after the last) and at one taken from the input's
/// last 16 bytes.
fn check_resume(data: &[u8], bundle: &Bundle<'_>) {
    let limit = data.len().saturating_sub(32) / MIN_DESCRIPTOR + 1;
    let mut positions = Vec::new();
    let mut items = Vec::new();
    let mut iter = bundle.entries();
    loop {
        positions.push(iter.position());
        match iter.next() {
            Some(item) => items.push(item),
            None => break,
        }
        assert!(items.len() <= limit, "walk does not end");
    }
    let n = items.len();
    for k in [0, n / 2, n.saturating_sub(1), n] {
        let resumed: Vec<_> = bundle.entries_from(positions[k]).take(n - k + 1).collect();
        assert_eq!(resumed, items[k..], "walk resumed at entry {k} differs");
    }

    let made_up = match data.len().checked_sub(16).map(|at| &data[at..]) {
        Some(tail) => EntryPosition {
            index: u64::from_le_bytes(tail[..8].try_into().unwrap()),
            descriptor_offset: u64::from_le_bytes(tail[8..].try_into().unwrap())
                % (data.len() as u64 + 64),
        },
        None => return,
    };
    let most = bundle.entry_count().saturating_sub(made_up.index);
    let mut yielded = 0u64;
    for item in bundle.entries_from(made_up).take(limit + 2) {
        yielded += 1;
        assert!(yielded <= limit as u64 + 1, "made-up walk does not end");
        match item {
            Ok(e) => {
                within(data, e.id());
                within(data, e.payload());
                assert!(yielded <= most, "more entries than the count allows");
            }
            Err(err) => assert!(err.offset() <= data.len() as u64 + 64 + 24),
        }
    }
}

fn check_validate(bundle: &Bundle<'_>, good: &[BundleEntry<'_>]) {
    let n = good.len() as u64;
    let len = bundle.data().len() as u64;
    for d in bundle.validate() {
        match d {
            BundleDiagnostic::DuplicateId { first, second } => {
                assert!(first < n && second < n && first != second);
                assert_eq!(good[first as usize].id(), good[second as usize].id());
            }
            BundleDiagnostic::OverlappingPayloads { first, second } => {
                assert!(first < n && second < n && first != second);
            }
            BundleDiagnostic::PayloadOverlapsHeader { entry, header_len } => {
                assert!(entry < n);
                assert!(good[entry as usize].offset() < header_len);
            }
            BundleDiagnostic::TrailingBytes {
                offset,
                len: trailing,
            } => {
                assert!(trailing > 0);
                assert_eq!(offset + trailing, len);
            }
            _ => {}
        }
    }
}

fn check_selection(bundle: &Bundle<'_>, good: &[BundleEntry<'_>]) {
    for requested in [
        "hipv4-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "openmp-nvptx64-nvidia-cuda--sm_90",
        "host-x86_64-unknown-linux-gnu-",
    ] {
        let requested = BundleEntryId::parse(requested).unwrap();
        for hip_openmp in [false, true] {
            if let Some(e) = first_compatible(bundle, &requested, hip_openmp) {
                assert!(good.contains(&e), "selected entry is a good entry");
                let id = BundleEntryId::parse(e.id_str().unwrap()).unwrap();
                assert!(id.is_compatible_with(&requested, hip_openmp));
            }
        }
    }
    for device in ["gfx906:sramecc+:xnack-", "gfx1030", "gfx942:xnack+"] {
        let device = TargetId::parse(device).unwrap();
        if let Some((_, e)) = select_for_device(bundle, &device) {
            assert!(good.contains(&e));
        }
    }
}

fn check_rewrite(good: &[BundleEntry<'_>]) {
    // Overlapping payloads can make the copy much larger than the input.
    let total: usize = good
        .iter()
        .map(|e| e.payload().len() + e.id().len() + 24)
        .sum();
    if total > 64 << 20 {
        return;
    }
    let pairs: Vec<(&[u8], &[u8])> = good.iter().map(|e| (e.id(), e.payload())).collect();
    let out = write_bundle(&pairs, 1).expect("rewrite of a parsed bundle");
    let again = Bundle::parse(&out).expect("rewritten bundle parses");
    let entries: Vec<_> = again.entries().map(|e| e.unwrap()).collect();
    assert_eq!(entries.len(), good.len());
    for (a, b) in entries.iter().zip(good) {
        assert_eq!(a.id(), b.id());
        assert_eq!(a.payload(), b.payload());
    }
    for d in again.validate() {
        assert!(
            matches!(d, BundleDiagnostic::DuplicateId { .. }),
            "rewritten bundle has {d:?}"
        );
    }
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let lenient = Bundle::parse_lenient(data);
    let strict = Bundle::parse(data);

    let lenient = match lenient {
        Ok(b) => b,
        Err(e) => {
            assert_eq!(
                strict.unwrap_err(),
                e,
                "strict and lenient header errors differ"
            );
            assert!(!data.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") || data.len() < 32);
            return;
        }
    };
    assert!(data.len() >= 32);
    assert!(std::ptr::eq(lenient.data(), data));
    assert_eq!(lenient.header_len(), None);

    let (good, error) = walk(data, &lenient);
    let _ = lenient.entries().count();
    check_resume(data, &lenient);

    match (&strict, error) {
        (Ok(bundle), None) => {
            assert_eq!(bundle.entry_count(), lenient.entry_count());
            let header_len = bundle.header_len().expect("strict parse knows header_len");
            assert!(header_len <= data.len() as u64, "header_len past the input");
            let expected = good
                .last()
                .map_or(32, |e| e.descriptor_offset() + 24 + e.id().len() as u64);
            assert_eq!(header_len, expected);
            let strict_entries: Vec<_> = bundle
                .entries()
                .map(|e| e.expect("strict bundle entry"))
                .collect();
            assert_eq!(strict_entries, good, "strict and lenient entries differ");
        }
        (Ok(_), Some(e)) => panic!("strict parse succeeded but lenient walk failed: {e}"),
        (Err(e), None) => panic!("strict parse failed ({e}) but lenient walk had no error"),
        (Err(strict_err), Some(lenient_err)) => {
            if !matches!(strict_err.kind(), ErrorKind::CountTooLarge { .. }) {
                assert_eq!(*strict_err, lenient_err, "strict and lenient errors differ");
            }
        }
    }

    check_validate(&lenient, &good);
    check_selection(&lenient, &good);
    if let Ok(bundle) = &strict {
        check_validate(bundle, &good);
        check_rewrite(&good);
    }
}
