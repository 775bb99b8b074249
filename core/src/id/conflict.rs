//! Which targets cannot be bundled together.

use alloc::vec::Vec;

use super::BundleEntryId;

/// A target ID as the conflict rule sees it: the processor as written and the
/// set of feature names, signs ignored. `None` for a malformed feature list
/// (a feature without sign, or one given twice).
fn feature_names(target_id: &str) -> Option<(&str, Vec<&str>)> {
    let mut pieces = target_id.split(':');
    let processor = pieces.next()?;
    let mut names = Vec::new();
    for piece in pieces {
        // A trailing colon ends the list, as in LLVM.
        if piece.is_empty() {
            continue;
        }
        let name = piece.strip_suffix(['+', '-'])?;
        names.push(name);
    }
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    (names.len() == count).then_some((processor, names))
}

/// The first pair of targets that may not share a bundle or archive: within
/// one kind and triple (as written), two target IDs for the same processor
/// whose sets of feature names differ — a feature set in one and left as
/// "any" in the other. LLVM 22 checks only that the later ID adds no feature
/// to the first; we check both directions.
///
/// Targets are visited as the bundler visits them — groups by kind and triple
/// in sorted order, target IDs sorted and deduplicated within a group — and
/// each is checked against the first one of its processor, so where LLVM 22
/// reports a conflict the pair is the same, lower first. Returns indices into
/// `ids`. Malformed feature lists take no part.
pub fn find_conflicting_targets(ids: &[BundleEntryId<'_>]) -> Option<(usize, usize)> {
    let key = |i: usize| {
        ids.get(i).map(|id| {
            let t = id.triple();
            (id.kind(), t.arch, t.vendor, t.os, t.env, id.target_id())
        })
    };
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by_key(|&i| key(i));
    order.dedup_by_key(|i| key(*i));

    let mut firsts: Vec<(usize, &str, Vec<&str>)> = Vec::new();
    let mut group = None;
    for &i in &order {
        let this_group = key(i).map(|k| (k.0, k.1, k.2, k.3, k.4));
        if this_group != group {
            firsts.clear();
            group = this_group;
        }
        let Some((processor, names)) = ids.get(i).and_then(|id| feature_names(id.target_id()))
        else {
            continue;
        };
        match firsts.iter().find(|(_, p, _)| *p == processor) {
            Some((first, _, first_names)) if *first_names != names => return Some((*first, i)),
            Some(_) => {}
            None => firsts.push((i, processor, names)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    fn conflict(targets: &[&str]) -> Option<(String, String)> {
        let ids: Vec<_> = targets
            .iter()
            .map(|t| BundleEntryId::parse(t).unwrap())
            .collect();
        find_conflicting_targets(&ids).map(|(a, b)| (targets[a].into(), targets[b].into()))
    }

    const H: &str = "hip-amdgcn-amd-amdhsa--";

    fn ids(tids: &[&str]) -> Vec<String> {
        tids.iter().map(|t| format!("{H}{t}")).collect()
    }

    fn check(tids: &[&str], expected: Option<(&str, &str)>) {
        let owned = ids(tids);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let want = expected.map(|(a, b)| (format!("{H}{a}"), format!("{H}{b}")));
        assert_eq!(conflict(&refs), want, "{tids:?}");
    }

    #[test]
    fn same_pairs_as_llvm_where_it_reports_one() {
        check(
            &["gfx906:xnack+", "gfx906"],
            Some(("gfx906", "gfx906:xnack+")),
        );
        check(&["gfx906:xnack-", "gfx906:xnack+"], None);
        check(
            &["gfx906:xnack+:sramecc-", "gfx906:xnack+"],
            Some(("gfx906:xnack+", "gfx906:xnack+:sramecc-")),
        );
        check(
            &["gfx906:xnack+:sramecc-", "gfx906:sramecc+"],
            Some(("gfx906:sramecc+", "gfx906:xnack+:sramecc-")),
        );
        check(&["gfx906", "gfx906:foo+"], Some(("gfx906", "gfx906:foo+")));
        check(
            &["gfx906:", "gfx906:xnack+"],
            Some(("gfx906:", "gfx906:xnack+")),
        );
        check(&["gfx906", "gfx908:xnack+", "gfx90a:xnack+"], None);
    }

    #[test]
    fn symmetric_where_llvm_22_is_not() {
        // LLVM 22 accepts these: the first sorted ID has every feature of the others.
        check(
            &["gfx906:xnack+:sramecc-", "gfx906:xnack-"],
            Some(("gfx906:xnack+:sramecc-", "gfx906:xnack-")),
        );
        check(
            &["gfx906:sramecc+:xnack+", "gfx906:sramecc-", "gfx906:xnack-"],
            Some(("gfx906:sramecc+:xnack+", "gfx906:sramecc-")),
        );
    }

    #[test]
    fn groups_are_kind_and_triple_as_written() {
        assert_eq!(
            conflict(&[
                "hip-amdgcn-amd-amdhsa--gfx906",
                "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+"
            ]),
            None
        );
        assert_eq!(
            conflict(&[
                "hip-amdgcn-amd-amdhsa--gfx906",
                "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+"
            ]),
            None
        );
        assert_eq!(
            conflict(&[
                "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+",
                "hip-amdgcn-amd-amdhsa-unknown-gfx906"
            ]),
            Some((
                "hip-amdgcn-amd-amdhsa-unknown-gfx906".into(),
                "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+".into()
            ))
        );
    }

    #[test]
    fn malformed_feature_lists_take_no_part() {
        check(&["gfx906", "gfx906:xnack"], None);
        check(&["gfx906", "gfx906:xnack+:xnack-"], None);
        check(&["gfx906:xnack+", "gfx906:xnack-:"], None);
    }
}
