//! Bundle entry IDs from arbitrary strings.
//!
//! Invariants checked:
//! - no panic in `BundleEntryId::parse`, `normalize_entry_id`,
//!   `parsed_target_id`, `is_offload_arch`;
//! - parse succeeds exactly when the string has at least four `-`;
//! - `Display` and `as_str` of a parsed ID are the input; the kind, triple and
//!   target ID rebuilt with `from_parts` parse back to the same parts;
//! - `normalize_entry_id` succeeds exactly when parse does, its output parses,
//!   and normalising is idempotent;
//! - `parsed_target_id` on an AMDGPU triple is `TargetId::parse` of the target ID;
//! - an ID is compatible with itself.
#![no_main]

use clangoffload::id::{is_offload_arch, normalize_entry_id, BundleEntryId, TargetId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let parsed = BundleEntryId::parse(text);
    let normalized = normalize_entry_id(text);
    let _ = is_offload_arch(text);
    assert_eq!(parsed.is_ok(), text.matches('-').count() >= 4);

    let id = match parsed {
        Ok(id) => id,
        Err(e) => {
            assert_eq!(
                normalized.unwrap_err(),
                e,
                "parse and normalize errors differ"
            );
            let _ = e.to_string();
            return;
        }
    };
    assert_eq!(id.to_string(), text, "Display is not the input");
    assert_eq!(id.as_str(), text);
    let t = id.triple();
    for part in [id.kind(), t.arch, t.vendor, t.os, t.env] {
        assert!(!part.contains('-'));
    }
    assert!(id.triple().is_compatible_with(&t));
    let _ = (
        id.is_host(),
        id.has_known_kind(),
        t.has_known_arch(),
        t.is_amdhsa(),
    );

    let rebuilt = BundleEntryId::from_parts(id.kind(), t, id.target_id()).to_string();
    let reparsed = BundleEntryId::parse(&rebuilt).expect("rebuilt ID parses");
    assert_eq!(
        (reparsed.kind(), reparsed.triple(), reparsed.target_id()),
        (id.kind(), t, id.target_id())
    );

    let normalized = normalized.expect("parse ok but normalize failed");
    BundleEntryId::parse(&normalized).expect("normalized ID parses");
    assert_eq!(
        normalize_entry_id(&normalized).expect("normalize normalized"),
        normalized,
        "normalize is not idempotent"
    );

    let target = id.parsed_target_id();
    if let Ok(target) = &target {
        let _ = (target.canonical().to_string(), target.to_string());
    }
    if t.arch == "amdgcn" || t.arch == "r600" {
        assert_eq!(target, TargetId::parse(id.target_id()));
    }
    for hip_openmp in [false, true] {
        assert!(
            id.is_compatible_with(&id, hip_openmp),
            "not compatible with itself"
        );
    }
});
