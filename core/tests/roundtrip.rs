//! Property tests: whatever we write, we read back unchanged.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use clangoffload::bundle::{write_bundle, BundleLayout};
use clangoffload::Bundle;
use proptest::prelude::*;

fn entries() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    prop::collection::vec(
        (
            prop::collection::vec(any::<u8>(), 1..40),
            prop::collection::vec(any::<u8>(), 0..300),
        ),
        0..12,
    )
}

proptest! {
    #[test]
    fn write_then_parse_gives_the_entries_back(entries in entries(), align in 1u64..5000) {
        let refs: Vec<(&[u8], &[u8])> = entries.iter().map(|(i, p)| (i.as_slice(), p.as_slice())).collect();
        let bytes = write_bundle(&refs, align).unwrap();
        let bundle = Bundle::parse(&bytes).unwrap();
        let got: Vec<_> = bundle.entries().map(|e| e.unwrap()).collect();
        prop_assert_eq!(got.len(), entries.len());
        for (entry, (id, payload)) in got.iter().zip(&entries) {
            prop_assert_eq!(entry.id(), id.as_slice());
            prop_assert_eq!(entry.payload(), payload.as_slice());
            prop_assert_eq!(entry.offset() % align, 0);
        }
        // Only duplicates can be reported: the layout never overlaps or pads at the end.
        for d in bundle.validate() {
            let is_duplicate = matches!(d, clangoffload::bundle::BundleDiagnostic::DuplicateId { .. });
            prop_assert!(is_duplicate, "{:?}", d);
        }
    }

    #[test]
    fn layout_matches_the_written_bundle(entries in entries(), align in 1u64..5000) {
        let refs: Vec<(&[u8], &[u8])> = entries.iter().map(|(i, p)| (i.as_slice(), p.as_slice())).collect();
        let layout = BundleLayout::new(refs.iter().map(|(i, p)| (*i, p.len() as u64)), align).unwrap();
        let bytes = write_bundle(&refs, align).unwrap();
        prop_assert_eq!(layout.total_size(), bytes.len() as u64);
        prop_assert_eq!(layout.header(), &bytes[..layout.header().len()]);
    }

    #[test]
    fn lenient_walk_of_any_prefix_never_fails_to_end(entries in entries(), cut in any::<prop::sample::Index>()) {
        let refs: Vec<(&[u8], &[u8])> = entries.iter().map(|(i, p)| (i.as_slice(), p.as_slice())).collect();
        let bytes = write_bundle(&refs, 8).unwrap();
        let prefix = &bytes[..cut.index(bytes.len() + 1)];
        if let Ok(bundle) = Bundle::parse_lenient(prefix) {
            let items: Vec<_> = bundle.entries().collect();
            prop_assert!(items.len() <= entries.len());
            // At most one error, and only at the end.
            if let Some(pos) = items.iter().position(|r| r.is_err()) {
                prop_assert_eq!(pos, items.len() - 1);
            }
        }
    }
}
