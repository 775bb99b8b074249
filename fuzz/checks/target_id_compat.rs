//! Target IDs and entry-ID compatibility from arbitrary strings.
//!
//! Invariants checked, for target IDs that parse:
//! - `Display` is the input; the canonical form re-parses to the same
//!   (processor, xnack, sramecc), is its own canonical form, and behaves the
//!   same under `is_compatible_with` / `conflicts_with`;
//! - compatibility is reflexive and transitive, and implies the same processor;
//! - `conflicts_with` is symmetric, irreflexive and implies the same processor;
//! - `parse_for_arch("amdgcn" | "r600", s)` is `parse(s)`.
//!
//! For entry IDs: `is_compatible_with` never panics and is reflexive, also
//! on IDs as the bundler reads them (`as_read_by_bundler`, which is
//! idempotent, keeps the kind, and keeps each component or empties it);
//! `find_conflicting_targets` returns a real conflicting pair (same kind and
//! triple as written, same processor, different sets of feature names — the
//! rule as its documentation states it), and returns `None` only if no such
//! pair exists.

use clangoffload::id::{as_read_by_bundler, find_conflicting_targets, BundleEntryId, TargetId};
use std::collections::BTreeSet;

/// The input is text split into lines: three target IDs, an arch for
/// `parse_for_arch`, two entry IDs, then any number of entry IDs for
/// `find_conflicting_targets`. A trailing newline turns on
/// `hip_openmp_compatible`. Plain lines keep seeds and dictionaries simple.
struct Input<'a> {
    a: &'a str,
    b: &'a str,
    c: &'a str,
    arch: &'a str,
    hip_openmp: bool,
    entry_a: &'a str,
    entry_b: &'a str,
    entry_ids: Vec<&'a str>,
}

impl<'a> Input<'a> {
    fn split(text: &'a str) -> Self {
        let hip_openmp = text.ends_with('\n');
        let mut lines = text.split('\n');
        let mut next = || lines.next().unwrap_or("");
        let (a, b, c, arch, entry_a, entry_b) = (next(), next(), next(), next(), next(), next());
        Input {
            a,
            b,
            c,
            arch,
            hip_openmp,
            entry_a,
            entry_b,
            entry_ids: lines.take(64).collect(),
        }
    }
}

fn triple(
    t: &TargetId<'_>,
) -> (
    String,
    clangoffload::id::FeatureSetting,
    clangoffload::id::FeatureSetting,
) {
    (t.processor().to_owned(), t.xnack(), t.sramecc())
}

fn check_one(text: &str, t: &TargetId<'_>) {
    assert_eq!(t.to_string(), text);
    assert_eq!(t.as_str(), text);
    assert!(t.amdgpu_processor().is_some());
    assert!(t.is_compatible_with(t), "{text} not compatible with itself");
    assert!(!t.conflicts_with(t), "{text} conflicts with itself");

    let canonical = t.canonical().to_string();
    let c = TargetId::parse(&canonical)
        .unwrap_or_else(|e| panic!("canonical {canonical:?} of {text:?} does not parse: {e}"));
    assert_eq!(
        triple(&c),
        triple(t),
        "canonical {canonical:?} of {text:?} differs"
    );
    assert_eq!(
        c.canonical().to_string(),
        canonical,
        "canonical form not stable"
    );
    assert!(c.is_compatible_with(t) && t.is_compatible_with(&c));
    assert!(!c.conflicts_with(t) && !t.conflicts_with(&c));

    for arch in ["amdgcn", "r600"] {
        assert_eq!(TargetId::parse_for_arch(arch, text).as_ref(), Ok(t));
    }
}

fn check_pair(a: &TargetId<'_>, b: &TargetId<'_>) {
    let ab = a.is_compatible_with(b);
    if ab {
        assert_eq!(a.processor(), b.processor());
    }
    let conflict = a.conflicts_with(b);
    assert_eq!(
        conflict,
        b.conflicts_with(a),
        "conflicts_with not symmetric"
    );
    if conflict {
        assert_eq!(a.processor(), b.processor());
    }
    // Compatibility only depends on the parsed parts.
    let (ca, cb) = (a.canonical().to_string(), b.canonical().to_string());
    let (ca, cb) = (TargetId::parse(&ca).unwrap(), TargetId::parse(&cb).unwrap());
    assert_eq!(ca.is_compatible_with(&cb), ab);
    assert_eq!(ca.conflicts_with(&cb), conflict);
}

/// The conflict rule's view of a target ID, written from its documentation:
/// the processor as written and the set of feature names (signs ignored,
/// empty pieces skipped); `None` if a feature has no sign or is given twice.
fn feature_names(target_id: &str) -> Option<(&str, BTreeSet<&str>)> {
    let mut pieces = target_id.split(':');
    let processor = pieces.next()?;
    let mut names = BTreeSet::new();
    for piece in pieces.filter(|p| !p.is_empty()) {
        let name = piece
            .strip_suffix('+')
            .or_else(|| piece.strip_suffix('-'))?;
        if !names.insert(name) {
            return None;
        }
    }
    Some((processor, names))
}

fn check_as_read_by_bundler(e: &BundleEntryId<'_>, hip_openmp: bool) {
    let r = as_read_by_bundler(e);
    assert_eq!(r.kind(), e.kind());
    assert!(r.target_id().is_empty() || r.target_id() == e.target_id());
    let (t, rt) = (e.triple(), r.triple());
    for (part, read) in [
        (t.arch, rt.arch),
        (t.vendor, rt.vendor),
        (t.os, rt.os),
        (t.env, rt.env),
    ] {
        // A name it starts with, or an object format it ends with.
        let kept = part.starts_with(read) || part.ends_with(read);
        let windows = (read, part.get(..7)) == ("win32", Some("windows"));
        assert!(read.is_empty() || kept || windows, "{part} read as {read}");
    }
    let again = as_read_by_bundler(&r);
    assert_eq!(
        (again.triple(), again.target_id()),
        (rt, r.target_id()),
        "not idempotent"
    );
    assert!(
        r.is_compatible_with(&r, hip_openmp),
        "{r} not compatible with itself"
    );
}

fn check_entry_ids(ids: &[&str]) {
    let parsed: Vec<BundleEntryId<'_>> = ids
        .iter()
        .filter_map(|s| BundleEntryId::parse(s).ok())
        .collect();
    // A pair that may not share a bundle: same kind and triple as written,
    // well-formed feature lists, same processor, different feature names.
    let conflict = |i: usize, j: usize| {
        let (x, y) = (&parsed[i], &parsed[j]);
        x.kind() == y.kind()
            && x.triple() == y.triple()
            && match (feature_names(x.target_id()), feature_names(y.target_id())) {
                (Some((px, nx)), Some((py, ny))) => px == py && nx != ny,
                _ => false,
            }
    };
    match find_conflicting_targets(&parsed) {
        Some((i, j)) => {
            assert!(i < parsed.len() && j < parsed.len() && i != j);
            assert!(
                conflict(i, j),
                "reported pair {i},{j} does not conflict: {parsed:?}"
            );
        }
        None => {
            for i in 0..parsed.len() {
                for j in i + 1..parsed.len() {
                    assert!(!conflict(i, j), "missed conflict {i},{j}: {parsed:?}");
                }
            }
        }
    }
}

/// The checks, on one input.
pub fn check(text: &str) {
    let input = Input::split(text);
    let parsed: Vec<(&str, Result<TargetId<'_>, _>)> = [input.a, input.b, input.c]
        .into_iter()
        .map(|s| (s, TargetId::parse(s)))
        .collect();
    let good: Vec<TargetId<'_>> = parsed
        .iter()
        .filter_map(|(s, t)| {
            let t = t.as_ref().ok()?;
            check_one(s, t);
            Some(*t)
        })
        .collect();
    for x in &good {
        for y in &good {
            check_pair(x, y);
            for z in &good {
                if x.is_compatible_with(y) && y.is_compatible_with(z) {
                    assert!(x.is_compatible_with(z), "compatibility not transitive");
                }
            }
        }
    }

    // Non-AMDGPU triples: processor as written, no features.
    if let Ok(t) = TargetId::parse_for_arch(input.arch, input.a) {
        assert!(t.is_compatible_with(&t));
        if input.arch != "amdgcn" && input.arch != "r600" {
            assert!(t.amdgpu_processor().is_none());
            assert_eq!(t.xnack(), Default::default());
            assert_eq!(t.sramecc(), Default::default());
        }
        let _ = t.canonical().to_string();
    }

    // Entry IDs.
    let ea = BundleEntryId::parse(input.entry_a);
    let eb = BundleEntryId::parse(input.entry_b);
    if let (Ok(ea), Ok(eb)) = (&ea, &eb) {
        let _ = ea.is_compatible_with(eb, input.hip_openmp);
        let _ = eb.is_compatible_with(ea, input.hip_openmp);
    }
    for e in [&ea, &eb].into_iter().flatten() {
        if e.parsed_target_id().is_ok() {
            assert!(
                e.is_compatible_with(e, input.hip_openmp),
                "{e} not compatible with itself"
            );
        }
        let _ = e.is_compatible_with(e, !input.hip_openmp);
        check_as_read_by_bundler(e, input.hip_openmp);
    }
    if let (Ok(ea), Ok(eb)) = (&ea, &eb) {
        let (ra, rb) = (as_read_by_bundler(ea), as_read_by_bundler(eb));
        let _ = ra.is_compatible_with(&rb, input.hip_openmp);
        if ea.as_str() == eb.as_str() {
            assert!(ra.is_compatible_with(&rb, input.hip_openmp));
        }
    }
    let mut ids = input.entry_ids;
    ids.push(input.entry_a);
    ids.push(input.entry_b);
    check_entry_ids(&ids);
}
