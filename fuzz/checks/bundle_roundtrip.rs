//! Arbitrary (ID, payload) pairs and alignment → `write_bundle` → `Bundle::parse`.
//!
//! Invariants checked:
//! - `write_bundle` succeeds for non-empty IDs and any alignment ≥ 1, and
//!   rejects alignment 0;
//! - the output starts with `BundleLayout::header()`, is `total_size()` long,
//!   has each payload at its layout offset and zeros in the gaps;
//! - layout offsets are multiples of the alignment, in order, after the
//!   header, and payloads do not overlap;
//! - strict parse succeeds and returns the same IDs, payloads and offsets;
//!   `header_len()` is the layout's header length;
//! - `validate()` reports nothing but the duplicate IDs the input has.

use arbitrary::Arbitrary;
use clangoffload::bundle::{write_bundle, BundleDiagnostic, BundleLayout};
use clangoffload::{Bundle, ErrorKind};
use std::collections::BTreeMap;

/// `align` first so that `entries` takes the rest of the input; the seed
/// generator (`examples/gen_seeds.rs`) writes this encoding.
#[derive(Debug, Arbitrary)]
pub struct Input {
    pub align: u16,
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// The checks, on one input.
pub fn check(input: Input) {
    let align = u64::from(input.align % 8192) + 1;
    // The reader rejects empty IDs, so the writer is only fuzzed with real ones.
    let entries: Vec<(&[u8], &[u8])> = input
        .entries
        .iter()
        .filter(|(id, _)| !id.is_empty())
        .map(|(id, p)| (id.as_slice(), p.as_slice()))
        .collect();

    assert_eq!(
        write_bundle(&entries, 0).unwrap_err().kind(),
        ErrorKind::ZeroAlignment
    );

    let layout = BundleLayout::new(entries.iter().map(|(id, p)| (*id, p.len() as u64)), align)
        .expect("layout");
    let out = write_bundle(&entries, align).expect("write_bundle");

    // Layout.
    let header = layout.header();
    let expected_header: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    assert_eq!(header.len(), expected_header);
    assert_eq!(layout.offsets().len(), entries.len());
    assert_eq!(out.len() as u64, layout.total_size());
    assert!(out.starts_with(header));
    let mut end = header.len() as u64;
    for (&offset, (_, payload)) in layout.offsets().iter().zip(&entries) {
        assert_eq!(
            offset % align,
            0,
            "offset {offset} not a multiple of {align}"
        );
        assert!(
            offset >= end,
            "payload at {offset} overlaps what ends at {end}"
        );
        assert!(offset - end < align, "padding of a whole alignment unit");
        let start = offset as usize;
        assert!(
            out[end as usize..start].iter().all(|&b| b == 0),
            "gap not zero"
        );
        assert_eq!(&out[start..start + payload.len()], *payload);
        end = offset + payload.len() as u64;
    }
    assert_eq!(
        end,
        layout.total_size(),
        "no padding after the last payload"
    );

    // Read back.
    let bundle = Bundle::parse(&out).expect("written bundle parses");
    assert_eq!(bundle.entry_count(), entries.len() as u64);
    assert_eq!(bundle.header_len(), Some(header.len() as u64));
    let parsed: Vec<_> = bundle.entries().map(|e| e.expect("entry")).collect();
    assert_eq!(parsed.len(), entries.len());
    for ((e, (id, payload)), &offset) in parsed.iter().zip(&entries).zip(layout.offsets()) {
        assert_eq!(e.id(), *id);
        assert_eq!(e.payload(), *payload);
        assert_eq!(e.offset(), offset);
    }

    // Diagnostics: only duplicates, as many as there are repeated IDs.
    let mut counts: BTreeMap<&[u8], usize> = BTreeMap::new();
    for (id, _) in &entries {
        *counts.entry(id).or_default() += 1;
    }
    let repeats: usize = counts.values().map(|n| n - 1).sum();
    let mut duplicates = 0;
    for d in bundle.validate() {
        match d {
            BundleDiagnostic::DuplicateId { first, second } => {
                assert!(first < second);
                assert_eq!(entries[first as usize].0, entries[second as usize].0);
                duplicates += 1;
            }
            other => panic!("unexpected diagnostic {other:?}"),
        }
    }
    assert_eq!(duplicates, repeats);
}
