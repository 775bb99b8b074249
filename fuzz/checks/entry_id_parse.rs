//! Bundle entry IDs from arbitrary strings.
//!
//! Invariants checked:
//! - no panic in `BundleEntryId::parse`, `normalize_entry_id`,
//!   `parsed_target_id`, `is_offload_arch`;
//! - parse succeeds exactly when the string has at least four `-`;
//! - `Display` and `as_str` of a parsed ID are the input; the kind, triple and
//!   target ID rebuilt with `from_parts` parse back to the same parts;
//! - `normalize_entry_id` fails with parse's error when parse fails; when
//!   parse succeeds it succeeds (except on a DXIL shader model LLVM rejects),
//!   keeps the kind and the kept target ID, and its output parses (it is not
//!   idempotent, as LLVM's is not: see below);
//! - `parsed_target_id` on an AMDGPU triple is `TargetId::parse` of the target ID;
//! - an ID is compatible with itself.

use clangoffload::id::{is_offload_arch, normalize_entry_id, BundleEntryId, IdError, TargetId};

/// The checks, on one input.
pub fn check(text: &str) {
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
    let _ = (id.is_host(), id.has_known_kind(), t.has_known_arch());

    let rebuilt = BundleEntryId::from_parts(id.kind(), t, id.target_id()).to_string();
    let reparsed = BundleEntryId::parse(&rebuilt).expect("rebuilt ID parses");
    assert_eq!(
        (reparsed.kind(), reparsed.triple(), reparsed.target_id()),
        (id.kind(), t, id.target_id())
    );

    // The target ID the bundler keeps: only a known offload architecture's.
    let processor = id.target_id().split(':').next().unwrap_or("");
    let kept = if is_offload_arch(processor) {
        id.target_id()
    } else {
        ""
    };
    match normalized {
        Ok(normalized) => {
            assert!(
                normalized.starts_with(&format!("{}-", id.kind())),
                "{normalized:?} lost the kind of {text:?}"
            );
            assert!(
                normalized.ends_with(&format!("-{kept}")),
                "{normalized:?} does not end in the kept target ID {kept:?}"
            );
            let n = BundleEntryId::parse(&normalized).expect("normalized ID parses");
            assert_eq!(n.kind(), id.kind());
            // Normalising is not idempotent, and must not be: LLVM 22's
            // bundler picks the three-field `amdhsa` form from the OS slot
            // *before* `Triple::normalize` moves components, so
            // `hipv4-amdgcn-a6_64-unknmd-amdhsa--` becomes
            // `hipv4-amdgcn-a6_64-amdhsa-unknmd-`, which becomes
            // `hipv4-amdgcn-a6_64-amdhsa--` (checked with clang-offload-bundler 22).
            let _ = normalize_entry_id(&normalized);
        }
        // LLVM 22 aborts on a DXIL shader model it does not know.
        Err(IdError::UnsupportedShaderModel) => {
            assert!(text.contains("dxil") && text.contains("shadermodel"));
        }
        Err(e) => panic!("{text:?} parses but does not normalize: {e}"),
    }

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
}
