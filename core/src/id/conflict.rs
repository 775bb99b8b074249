//! Which targets cannot be bundled together.

use alloc::vec::Vec;

use super::{BundleEntryId, TargetId};

/// The first pair of targets that may not share a bundle or archive: within
/// one kind and triple, two target IDs for the same processor where a feature
/// is set in one and left as "any" in the other
/// ([`TargetId::conflicts_with`], symmetric).
///
/// Targets are visited as the bundler visits them — groups by kind and triple
/// in sorted order, target IDs sorted and deduplicated within a group — and
/// each is checked against the first one of its processor, so where LLVM 22
/// reports a conflict the pair is the same, lower first. Returns indices into
/// `ids`. Target IDs that do not parse take no part.
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

    let mut firsts: Vec<(usize, TargetId<'_>)> = Vec::new();
    let mut group = None;
    for &i in &order {
        let id = ids.get(i)?;
        let this_group = key(i).map(|k| (k.0, k.1, k.2, k.3, k.4));
        if this_group != group {
            firsts.clear();
            group = this_group;
        }
        let Ok(target) = id.parsed_target_id() else {
            continue;
        };
        match firsts
            .iter()
            .find(|(_, t)| t.processor() == target.processor())
        {
            Some((first, t)) if t.conflicts_with(&target) => return Some((*first, i)),
            Some(_) => {}
            None => firsts.push((i, target)),
        }
    }
    None
}
