//! `-unbundle`: which entry goes to which output.
//!
//! A target with an entry of exactly its ID gets that entry. Then each other
//! entry, in file order, goes to the first still-open target (in `-targets`
//! order) it is compatible with, the IDs read as LLVM 22 reads them. LLVM
//! visits entries in its hash order instead; where several entries fit one
//! target the two may differ (see the differences table).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use super::input::{self, Budget, Buffers, Contents, Loaded, Source};
use super::targets::{check_targets, Mode};
use super::{BundlerError, Decoding, FileType, Note, Observer, Piece, Plan, Warning};
use crate::archive::{check_elf_member, device_member_name, write_archive_indexed, Archive};
use crate::id::as_read_by_bundler;
use crate::object_bundle::ObjectBundle;
use crate::{BundleEntryId, ErrorKind, FileKind};

/// What to unbundle.
#[derive(Debug, Clone, Copy)]
pub struct UnbundleRequest<'a> {
    /// How `-type` reads the input.
    pub file_type: FileType,
    /// `-targets`, as given; output `i` is for target `i`.
    pub targets: &'a [&'a str],
    /// `-allow-missing-bundles`.
    pub allow_missing: bool,
    /// `-hip-openmp-compatible`.
    pub hip_openmp_compatible: bool,
    /// `-check-input-archive` (archives only).
    pub check_input_archive: bool,
    /// How compressed bundles are decoded.
    pub decoding: Decoding,
}

impl Default for UnbundleRequest<'_> {
    fn default() -> Self {
        UnbundleRequest {
            file_type: FileType::Binary,
            targets: &[],
            allow_missing: false,
            hip_openmp_compatible: false,
            check_input_archive: false,
            decoding: Decoding::default(),
        }
    }
}

/// Plans `-unbundle` of `data`: output `i` of the plan is what target `i`
/// gets. On the plan, [`Plan::failure`] is the error LLVM reports after
/// writing the outputs it found (missing bundles, a missing host bundle).
pub fn unbundle<'data>(
    data: &'data [u8],
    request: &UnbundleRequest<'_>,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, BundlerError> {
    let targets = check_targets(request.targets, Mode::Unbundle)?;
    if request.file_type == FileType::Archive {
        let mut budget = Budget::new(request.decoding);
        return archive(data, request, &targets.normalized, &mut budget);
    }
    // Only the containers the outputs come from are decoded whole (fill).
    let mut budget = Budget::tables(request.decoding);
    let mut buffers = Buffers::new();
    let contents = input::read(data, request.file_type, &mut budget, &mut buffers, observer)?;
    let (assigned, found_host) = {
        let (candidates, cut) = candidates(&contents, &buffers, observer)?;
        // LLVM reads text and object entries in file order, as we do, and a
        // binary bundle's in hash order, so whether it reaches an invalid ID
        // (LLVM 16's `host-x86_64-unknown-linux`) before every target is
        // found is luck: there an invalid ID fails the job only when a target
        // is not found, the one case where LLVM surely reaches it.
        let hash_ordered = matches!(contents, Contents::Containers(_));
        let Assignment {
            assigned,
            found_host,
            used,
        } = assign(&candidates, cut, &targets.normalized, request, hash_ordered)?;
        // Of an ID that other containers hold too, only what is written is
        // worth a warning: one per ID, naming the containers passed over.
        for (candidate, _) in candidates.iter().zip(used).filter(|(_, used)| *used) {
            if let Some(repeated) = &candidate.repeated {
                observer.note(Note::Warning(Warning::IdInTwoContainers {
                    id: candidate.id.to_vec(),
                    ignored: repeated.ignored.clone(),
                    used: repeated.used,
                }));
            }
        }
        (assigned, found_host)
    };
    let mut plan = Plan::new(targets.normalized.len(), buffers)?;
    let open: Vec<usize> = (0..assigned.len())
        .filter(|&t| assigned.get(t).is_some_and(Option::is_none))
        .collect();
    if !request.allow_missing && !open.is_empty() {
        let mut missing: Vec<String> = open
            .iter()
            .filter_map(|&t| targets.normalized.get(t).cloned())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        plan.fail(BundlerError::MissingBundles(missing));
    } else if open.len() == assigned.len() {
        // Nothing matched: the input is taken to be the host's own file,
        // all of it, or decompressed if it is one compressed bundle (LLVM
        // reads one container only).
        let host_file = match &contents {
            Contents::Containers(loaded) => match loaded.as_slice() {
                [only] if only.compressed() => only.source(0..only.len(plan.buffers())),
                _ => Source::Input {
                    offset: 0,
                    bytes: data,
                },
            },
            _ => Source::Input {
                offset: 0,
                bytes: data,
            },
        };
        for (t, id) in targets.normalized.iter().enumerate() {
            if id.starts_with("host-") {
                plan.push_source(t, host_file.clone());
            }
        }
        fill(&contents, &mut plan, &budget, observer)?;
        return Ok(plan);
    } else if !(found_host || targets.host.is_none() || request.allow_missing) {
        plan.fail(BundlerError::MissingHostBundle);
    }
    for (t, source) in assigned.into_iter().enumerate() {
        match source {
            Some(Assigned::Source(source)) => plan.push_source(t, source),
            Some(Assigned::HostObject) => {
                if let Contents::Object(object) = &contents {
                    let host = object.host_object().map_err(BundlerError::Input)?;
                    let piece = plan.add_buffer(host);
                    plan.push(t, piece);
                }
            }
            Some(Assigned::Damaged(error)) => return Err(BundlerError::MalformedObject(error)),
            None => {}
        }
    }
    fill(&contents, &mut plan, &budget, observer)?;
    Ok(plan)
}

/// Decodes whole the compressed containers the outputs come from.
fn fill(
    contents: &Contents<'_>,
    plan: &mut Plan<'_>,
    budget: &Budget,
    observer: &mut dyn Observer,
) -> Result<(), BundlerError> {
    match contents {
        Contents::Containers(loaded) => input::fill(loaded, plan, budget, observer),
        Contents::Text(loaded, _) => {
            input::fill(core::slice::from_ref(loaded), plan, budget, observer)
        }
        Contents::Object(_) => Ok(()),
    }
}

/// An entry unbundling may write: its ID and where its payload is.
struct Candidate<'a, 'data> {
    id: &'a [u8],
    payload: Assigned<'data>,
    /// Other containers back to back that hold this ID too.
    repeated: Option<Repeated>,
}

/// Where an ID that several containers hold is taken from, and the other
/// containers, by offset.
struct Repeated {
    used: u64,
    ignored: Vec<u64>,
}

/// Where a target's payload comes from.
#[derive(Debug, Clone)]
enum Assigned<'data> {
    Source(Source<'data>),
    /// The host object without its bundle sections.
    HostObject,
    /// A bundle section whose contents cannot be read: an error only for
    /// the target it goes to.
    Damaged(crate::Error),
}

/// The entries unbundling considers, in file order, and where reading them
/// stopped short: an object's section whose name cannot be read, which
/// fails the job only if some target is still open when it is reached.
fn candidates<'a, 'data>(
    contents: &'a Contents<'data>,
    buffers: &'a Buffers,
    observer: &mut dyn Observer,
) -> Result<(Vec<Candidate<'a, 'data>>, Option<BundlerError>), BundlerError> {
    match contents {
        Contents::Containers(loaded) => {
            Ok((container_candidates(loaded, buffers, observer)?, None))
        }
        Contents::Object(object) => Ok(object_candidates(object)),
        Contents::Text(loaded, comment) => input::text(loaded, *comment, buffers)?
            .entries()
            .map(|entry| {
                let entry = entry.map_err(BundlerError::MalformedTextBundle)?;
                Ok(Candidate {
                    id: entry.id(),
                    payload: Assigned::Source(loaded.source(range(entry.offset(), entry.size()))),
                    repeated: None,
                })
            })
            .collect::<Result<_, _>>()
            .map(|all| (all, None)),
    }
}

/// The entries of bundles back to back. Within a bundle a repeated ID means
/// its last entry, as in LLVM 22. Across containers (which LLVM 22 cannot
/// read) the first container with an ID wins, and the others are recorded
/// (to be named in a warning if the entry is written).
fn container_candidates<'a, 'data>(
    containers: &'a [Loaded<'data>],
    buffers: &'a Buffers,
    observer: &mut dyn Observer,
) -> Result<Vec<Candidate<'a, 'data>>, BundlerError> {
    let bundles = containers
        .iter()
        .map(|l| l.bundle(buffers))
        .collect::<Result<Vec<_>, _>>()?;
    for bundle in &bundles {
        bundle_warnings(bundle, observer);
    }
    // Each ID's candidate (its index in `chosen`) and container's offset.
    let mut owner: BTreeMap<&[u8], (usize, u64)> = BTreeMap::new();
    let mut chosen: Vec<Candidate> = Vec::new();
    for (bundle, loaded) in bundles.iter().zip(containers) {
        for entry in last_of_each_id(bundle) {
            let first = owner
                .get(entry.id())
                .and_then(|&(i, used)| Some((chosen.get_mut(i)?, used)));
            match first {
                Some((first, used)) => {
                    first
                        .repeated
                        .get_or_insert(Repeated {
                            used,
                            ignored: Vec::new(),
                        })
                        .ignored
                        .push(loaded.offset);
                }
                None => {
                    owner.insert(entry.id(), (chosen.len(), loaded.offset));
                    chosen.push(Candidate {
                        id: entry.id(),
                        payload: Assigned::Source(
                            loaded.source(range(entry.offset(), entry.size())),
                        ),
                        repeated: None,
                    });
                }
            }
        }
    }
    Ok(chosen)
}

/// A bundle's findings, as warnings: a few say enough.
pub(crate) fn bundle_warnings(bundle: &crate::Bundle<'_>, observer: &mut dyn Observer) {
    const SHOWN: usize = 10;
    let found = bundle.validate();
    for diagnostic in found.iter().take(SHOWN) {
        observer.note(Note::Warning(Warning::Bundle(*diagnostic)));
    }
    if found.len() > SHOWN {
        observer.note(Note::Warning(Warning::MoreBundleFindings(
            found.len().saturating_sub(SHOWN),
        )));
    }
}

/// A bundle's entries with, for a repeated ID, only its last one (LLVM keys
/// entries by ID, so the last one read wins), in file order.
pub(crate) fn last_of_each_id<'data>(
    bundle: &crate::Bundle<'data>,
) -> Vec<crate::BundleEntry<'data>> {
    let all: Vec<_> = bundle.entries().map_while(Result::ok).collect();
    let last: BTreeMap<&[u8], usize> = all.iter().enumerate().map(|(i, e)| (e.id(), i)).collect();
    all.iter()
        .enumerate()
        .filter(|(i, e)| last.get(e.id()) == Some(i))
        .map(|(_, e)| *e)
        .collect()
}

/// An object's entries in section order, up to the first section whose
/// name cannot be read (LLVM stops walking sections once every target is
/// found, so a bad name after that is never met). A host entry holding the
/// host marker stands for the object itself, without its bundle sections.
/// (LLVM treats any one-zero-byte section so, whatever its ID.)
fn object_candidates<'a, 'data>(
    object: &'a ObjectBundle<'data>,
) -> (Vec<Candidate<'a, 'data>>, Option<BundlerError>) {
    let mut candidates = Vec::new();
    for found in object.entries_by_id() {
        let (id, entry) = match found {
            Ok(found) => found,
            Err(error) => return (candidates, Some(BundlerError::MalformedObject(error))),
        };
        let payload = match entry {
            Err(error) => Assigned::Damaged(error),
            Ok(entry) if entry.is_host_marker() && id.starts_with(b"host-") => Assigned::HostObject,
            Ok(entry) => Assigned::Source(Source::Input {
                offset: entry.offset(),
                bytes: entry.payload(),
            }),
        };
        candidates.push(Candidate {
            id,
            payload,
            repeated: None,
        });
    }
    (candidates, None)
}

/// What [`assign`] gave the targets.
struct Assignment<'data> {
    /// Each target's payload (none if not found).
    assigned: Vec<Option<Assigned<'data>>>,
    /// Whether the host's entry was found.
    found_host: bool,
    /// Which candidates were given to a target.
    used: Vec<bool>,
}

/// Gives each target the first entry compatible with it, in entry order.
/// `cut` is what stopped the reading of entries short: the job's error if
/// a target is still open after the last entry.
fn assign<'data>(
    candidates: &[Candidate<'_, 'data>],
    cut: Option<BundlerError>,
    normalized: &[String],
    request: &UnbundleRequest<'_>,
    hash_ordered: bool,
) -> Result<Assignment<'data>, BundlerError> {
    let mut assigned: Vec<Option<Assigned>> = normalized.iter().map(|_| None).collect();
    let mut found_host = false;
    // An exact ID always wins over a merely compatible one, whatever the
    // order: asking for gfx90a never gives gfx906 code that comes first.
    let mut taken = alloc::vec![false; candidates.len()];
    for (t, target) in normalized.iter().enumerate() {
        let given = request.targets.get(t).copied().unwrap_or_default();
        let exact = candidates.iter().enumerate().position(|(i, c)| {
            !taken.get(i).copied().unwrap_or(true)
                && (c.id == target.as_bytes() || c.id == given.as_bytes())
        });
        if let (Some(i), Some(place)) = (exact, assigned.get_mut(t)) {
            if let (Some(candidate), Some(flag)) = (candidates.get(i), taken.get_mut(i)) {
                *place = Some(candidate.payload.clone());
                *flag = true;
                found_host |= candidate.id.starts_with(b"host-");
            }
        }
    }
    let mut open: Vec<usize> = (0..normalized.len())
        .filter(|&t| assigned.get(t).is_some_and(Option::is_none))
        .collect();
    let mut invalid_seen = false;
    let exact = taken.clone();
    for ((candidate, _), flag) in candidates
        .iter()
        .zip(&exact)
        .zip(taken.iter_mut())
        .filter(|((_, &exact), _)| !exact)
    {
        if open.is_empty() {
            break;
        }
        // Bytes are opaque to LLVM: one that is not UTF-8 only makes its
        // component unknown, as U+FFFD does here.
        let id = String::from_utf8_lossy(candidate.id);
        if BundleEntryId::parse(&id).is_err() {
            if !hash_ordered {
                return Err(BundlerError::InvalidBundleId);
            }
            invalid_seen = true;
            continue;
        }
        let slot = open.iter().position(|&t| {
            normalized
                .get(t)
                .is_some_and(|target| matches_target(&id, target, request.hip_openmp_compatible))
        });
        let Some(slot) = slot else { continue };
        let target = open.remove(slot);
        if let Some(place) = assigned.get_mut(target) {
            *place = Some(candidate.payload.clone());
        }
        *flag = true;
        found_host |= id.starts_with("host-");
    }
    if invalid_seen && !open.is_empty() {
        return Err(BundlerError::InvalidBundleId);
    }
    if let Some(error) = cut.filter(|_| !open.is_empty()) {
        return Err(error);
    }
    Ok(Assignment {
        assigned,
        found_host,
        used: taken,
    })
}

/// Whether the bundler gives an entry stored under `code_object` to a
/// request for `target`: both read as LLVM 22 reads them, then compatible
/// by the bundler's rules. IDs that do not parse match nothing.
pub fn matches_target(code_object: &str, target: &str, hip_openmp_compatible: bool) -> bool {
    match (
        BundleEntryId::parse(code_object),
        BundleEntryId::parse(target),
    ) {
        (Ok(co), Ok(req)) => as_read_by_bundler(&co)
            .is_compatible_with(&as_read_by_bundler(&req), hip_openmp_compatible),
        _ => false,
    }
}

/// A payload's range in its container, saturated (readers checked it).
fn range(offset: u64, size: u64) -> Range<usize> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    start..start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX))
}

/// `-type=a -unbundle`: one archive per target holding, for every member
/// that is a bundle (binary, compressed or object), a copy of each entry
/// compatible with the target, named as LLVM names it.
fn archive<'data>(
    data: &'data [u8],
    request: &UnbundleRequest<'_>,
    normalized: &[String],
    budget: &mut Budget,
) -> Result<Plan<'data>, BundlerError> {
    let archive = Archive::parse(data).map_err(|e| match e.kind() {
        ErrorKind::NotAnArchive => BundlerError::NotAnArchive,
        _ => BundlerError::Input(e),
    })?;
    let mut buffers = Buffers::new();
    let mut members: Vec<Vec<(Vec<u8>, Source<'data>)>> =
        normalized.iter().map(|_| Vec::new()).collect();
    let mut fault = None;
    for member in archive.members() {
        let member = match member {
            Ok(member) => member,
            Err(e) => {
                fault = Some(e);
                break;
            }
        };
        let in_member = |error: BundlerError| BundlerError::Member {
            name: member.name().to_vec(),
            error: alloc::boxed::Box::new(error),
        };
        let wanted = |id: &[u8]| {
            core::str::from_utf8(id).is_ok_and(|id| {
                normalized
                    .iter()
                    .any(|t| matches_target(id, t, request.hip_openmp_compatible))
            })
        };
        let entries = member_entries(
            member.data(),
            member.data_offset(),
            budget,
            &mut buffers,
            &wanted,
        )
        .map_err(in_member)?;
        // LLVM reads every entry of every member before matching any.
        if let Some((id, _)) = entries
            .iter()
            .find(|(id, _)| BundleEntryId::parse(&String::from_utf8_lossy(id)).is_err())
        {
            return Err(BundlerError::InvalidCodeObjectId {
                member: member.name().to_vec(),
                id: id.clone(),
            });
        }
        let ids: Vec<&str> = entries
            .iter()
            .filter_map(|(id, _)| core::str::from_utf8(id).ok())
            .collect();
        if request.check_input_archive {
            if let Some((a, b)) = conflict(&ids) {
                return Err(BundlerError::ConflictingTargetIds {
                    member: member.name().to_vec(),
                    ids: (a.into(), b.into()),
                });
            }
        }
        for (id, source) in &entries {
            let (Ok(id), Some(source)) = (core::str::from_utf8(id), source) else {
                continue;
            };
            for (target, out) in normalized.iter().zip(members.iter_mut()) {
                if matches_target(id, target, request.hip_openmp_compatible) {
                    let name = device_member_name(member.name(), id);
                    // LLVM writes such a name, and its output archive then
                    // cannot be read back.
                    if name.contains(&b'\n') {
                        let error =
                            crate::Error::new(ErrorKind::InvalidMemberName, member.header_offset());
                        return Err(in_member(BundlerError::Input(error)));
                    }
                    out.push((name, source.clone()));
                }
            }
        }
    }
    if let Some(e) = fault {
        return Err(BundlerError::Input(e));
    }
    if request.check_input_archive {
        archive.check_final_padding().map_err(BundlerError::Input)?;
    }
    for (t, found) in members.iter().enumerate() {
        if found.is_empty() && !request.allow_missing {
            return Err(BundlerError::NoCompatibleCodeObject {
                target: request.targets.get(t).copied().unwrap_or_default().into(),
            });
        }
    }
    let mut archives = Vec::new();
    for found in &members {
        let pairs: Vec<(&[u8], &[u8])> = found
            .iter()
            .map(|(name, source)| (name.as_slice(), source_bytes(source, &buffers)))
            .collect();
        // LLVM's writer fails on a member it takes for ELF and cannot open.
        for (i, (_, data)) in pairs.iter().enumerate() {
            check_elf_member(data).map_err(|e| unindexable(e, found.get(i)))?;
        }
        archives.push(write_archive_indexed(&pairs).map_err(BundlerError::Input)?);
    }
    let mut plan = Plan::new(normalized.len(), Buffers::new())?;
    for (t, bytes) in archives.into_iter().enumerate() {
        let piece: Piece = plan.add_buffer(bytes);
        plan.push(t, piece);
    }
    Ok(plan)
}

/// An output member LLVM's archive writer cannot index, named as LLVM
/// names it, with the error's offset in the input where the member's bytes
/// are the input's.
fn unindexable(error: crate::Error, member: Option<&(Vec<u8>, Source<'_>)>) -> BundlerError {
    match member {
        Some((name, source)) => {
            let base = match source {
                Source::Input { offset, .. } => *offset,
                Source::Made { .. } => 0,
            };
            BundlerError::Member {
                name: name.clone(),
                error: alloc::boxed::Box::new(BundlerError::Input(error.shifted(base))),
            }
        }
        None => BundlerError::Input(error),
    }
}

fn source_bytes<'a>(source: &'a Source<'_>, buffers: &'a Buffers) -> &'a [u8] {
    match source {
        Source::Input { bytes, .. } => bytes,
        Source::Made { buffer, range } => buffers
            .get(*buffer)
            .and_then(|b| b.get(range.clone()))
            .unwrap_or_default(),
    }
}

/// The first pair of IDs that may not be in one archive member (IDs that do
/// not parse are skipped).
fn conflict<'a>(ids: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let parsed: Vec<(usize, BundleEntryId)> = ids
        .iter()
        .enumerate()
        .filter_map(|(i, id)| Some((i, BundleEntryId::parse(id).ok()?)))
        .collect();
    let only: Vec<BundleEntryId> = parsed.iter().map(|(_, id)| *id).collect();
    let (a, b) = crate::id::find_conflicting_targets(&only)?;
    Some((*ids.get(parsed.get(a)?.0)?, *ids.get(parsed.get(b)?.0)?))
}

/// An archive member's entry: its ID and payload, or no payload for an
/// object's entry no target wants (its section is named, not read).
type MemberEntry<'data> = (Vec<u8>, Option<Source<'data>>);

/// The entries of an archive member, in file order; none if the member is
/// not a bundle. Within a bundle a repeated ID means its last entry, as in
/// LLVM. `base` is the member's offset in the archive. An object's entry is
/// read only if some target is `wanted` for it (so that a damaged section,
/// or damage the host entry's rewrite trips on, fails only a job that needs
/// it, as in LLVM).
fn member_entries<'data>(
    data: &'data [u8],
    base: u64,
    budget: &mut Budget,
    buffers: &mut Buffers,
    wanted: &dyn Fn(&[u8]) -> bool,
) -> Result<Vec<MemberEntry<'data>>, BundlerError> {
    let kind = FileKind::detect(data);
    let mut entries = Vec::new();
    if kind.is_object() && matches!(kind, FileKind::Elf(_) | FileKind::Coff(_)) {
        let object = ObjectBundle::parse(data)?;
        // Every section is named, as LLVM walks them all; a bundle section's
        // contents are read only if some target wants its entry.
        for found in object.entries_by_id() {
            let (id, entry) = found?;
            if !wanted(id) {
                entries.push((id.to_vec(), None));
                continue;
            }
            let entry = entry?;
            let host = entry.is_host_marker() && id.starts_with(b"host-");
            let source = if host {
                buffers.push(object.host_object()?);
                let buffer = buffers.len().saturating_sub(1);
                Source::Made {
                    buffer,
                    range: 0..buffers.get(buffer).map_or(0, Vec::len),
                }
            } else {
                Source::Input {
                    offset: base.saturating_add(entry.offset()),
                    bytes: entry.payload(),
                }
            };
            entries.push((id.to_vec(), Some(source)));
        }
        return Ok(entries);
    }
    if !kind.is_bundle_container() {
        return Ok(entries);
    }
    for loaded in input::load(data, budget, true, buffers, &mut ())? {
        let bundle = loaded.bundle(buffers)?;
        for entry in last_of_each_id(&bundle) {
            let source = match loaded.source(range(entry.offset(), entry.size())) {
                Source::Input { offset, bytes } => Source::Input {
                    offset: base.saturating_add(offset),
                    bytes,
                },
                made => made,
            };
            entries.push((entry.id().to_vec(), Some(source)));
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::write_bundle;

    fn unbundled(entries: &[(&[u8], &[u8])], targets: &[&str]) -> Vec<Vec<u8>> {
        let data = write_bundle(entries, 1).unwrap();
        let request = UnbundleRequest {
            file_type: FileType::Binary,
            targets,
            allow_missing: true,
            ..UnbundleRequest::default()
        };
        let plan = unbundle(&data, &request, &mut ()).unwrap();
        (0..targets.len())
            .map(|t| plan.output_bytes(t).unwrap())
            .collect()
    }

    #[test]
    fn an_exact_id_wins_over_an_earlier_compatible_one() {
        // LLVM 14's driver wrote IDs without a target-ID field: the
        // processor reads as the environment.
        let old = [
            (&b"hip-amdgcn-amd-amdhsa-gfx906"[..], &b"906"[..]),
            (b"hip-amdgcn-amd-amdhsa-gfx90a", b"90a"),
        ];
        assert_eq!(unbundled(&old, &["hip-amdgcn-amd-amdhsa-gfx90a"]), [b"90a"]);
        assert_eq!(unbundled(&old, &["hip-amdgcn-amd-amdhsa-gfx906"]), [b"906"]);
        let kinds = [
            (&b"hip-amdgcn-amd-amdhsa--gfx906"[..], &b"hip"[..]),
            (b"hipv4-amdgcn-amd-amdhsa--gfx906", b"hipv4"),
        ];
        assert_eq!(
            unbundled(&kinds, &["hipv4-amdgcn-amd-amdhsa--gfx906"]),
            [b"hipv4"]
        );
        assert_eq!(
            unbundled(&kinds, &["hip-amdgcn-amd-amdhsa--gfx906"]),
            [b"hip"]
        );
        // Both asked for: each gets its own.
        assert_eq!(
            unbundled(
                &kinds,
                &[
                    "hipv4-amdgcn-amd-amdhsa--gfx906",
                    "hip-amdgcn-amd-amdhsa--gfx906"
                ]
            ),
            [&b"hipv4"[..], b"hip"]
        );
        // No exact entry: the first compatible one, as before.
        let features = [
            (&b"hip-amdgcn-amd-amdhsa--gfx90a"[..], &b"any"[..]),
            (b"hip-amdgcn-amd-amdhsa--gfx90a:xnack-", b"minus"),
        ];
        assert_eq!(
            unbundled(&features, &["hip-amdgcn-amd-amdhsa--gfx90a:xnack+"]),
            [b"any"]
        );
    }

    #[test]
    fn only_what_is_written_from_repeated_containers_is_warned_once_per_id() {
        let one = |tag: &'static [u8]| {
            write_bundle(
                &[
                    (b"host-x86_64-unknown-linux-gnu-", b""),
                    (b"hip-amdgcn-amd-amdhsa--gfx906", tag),
                    (b"hip-amdgcn-amd-amdhsa--gfx90a", tag),
                ],
                8,
            )
            .unwrap()
        };
        let mut data = one(b"first");
        let second = u64::try_from(data.len()).unwrap();
        data.extend(one(b"second"));
        let third = u64::try_from(data.len()).unwrap();
        data.extend(one(b"third"));
        let targets = ["hip-amdgcn-amd-amdhsa--gfx90a"];
        let request = UnbundleRequest {
            file_type: FileType::Binary,
            targets: &targets,
            allow_missing: true,
            ..UnbundleRequest::default()
        };
        let mut warned = Vec::new();
        let plan = unbundle(&data, &request, &mut |note| {
            if let Note::Warning(w) = note {
                warned.push(w);
            }
        })
        .unwrap();
        assert_eq!(plan.output_bytes(0).unwrap(), b"first");
        // gfx906 and the host, not asked for, go unmentioned.
        assert_eq!(
            warned,
            [Warning::IdInTwoContainers {
                id: b"hip-amdgcn-amd-amdhsa--gfx90a".to_vec(),
                ignored: alloc::vec![second, third],
                used: 0,
            }]
        );
        assert_eq!(
            alloc::format!("{}", warned[0].message("f")),
            "'f': 'hip-amdgcn-amd-amdhsa--gfx90a' is also in the containers at offsets \
             0x%SECOND%, 0x%THIRD%; using the one at offset 0x0"
                .replace("%SECOND%", &alloc::format!("{second:x}"))
                .replace("%THIRD%", &alloc::format!("{third:x}"))
        );
    }

    #[test]
    fn an_archive_member_with_an_invalid_id_is_refused_as_llvm_refuses_it() {
        let good = write_bundle(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"6")], 1).unwrap();
        // Three `-`: LLVM 22 says "Invalid bundle id read from code object"
        // however the other entries match; four are enough.
        for (id, valid) in [
            (&b"hip-amdgcn-amd-amdhsa"[..], false),
            (b"openmp-x86_64-unknown-linux", false),
            (b"hip-amdgcn-amd-amdhsa-gfx906", true),
        ] {
            let member =
                write_bundle(&[(id, b"X"), (b"hip-amdgcn-amd-amdhsa--gfx906", b"7")], 1).unwrap();
            let lib = write_archive_indexed(&[(b"a.o", &good), (b"b.o", &member)]).unwrap();
            let targets = ["hip-amdgcn-amd-amdhsa--gfx906"];
            let request = UnbundleRequest {
                file_type: FileType::Archive,
                targets: &targets,
                allow_missing: true,
                ..UnbundleRequest::default()
            };
            match unbundle(&lib, &request, &mut ()) {
                Ok(_) => assert!(valid, "{id:?} accepted"),
                Err(e) => {
                    assert!(!valid, "{id:?} refused");
                    let message = alloc::format!("{}", e.message("lib.a"));
                    assert!(message.starts_with("Invalid bundle id read from code object"));
                    assert!(message.contains("'b.o'"), "{message}");
                }
            }
        }
    }

    #[test]
    fn a_failing_job_writes_only_the_outputs_it_found() {
        let data = write_bundle(&[(b"host-x86_64-unknown-linux-gnu", b"h")], 1).unwrap();
        let targets = [
            "host-x86_64-unknown-linux-gnu",
            "hip-amdgcn-amd-amdhsa--gfx90a",
        ];
        let mut request = UnbundleRequest {
            file_type: FileType::Binary,
            targets: &targets,
            ..UnbundleRequest::default()
        };
        let plan = unbundle(&data, &request, &mut ()).unwrap();
        assert!(plan.failure().is_some());
        assert_eq!(
            [plan.writes(0), plan.writes(1), plan.writes(2)],
            [true, false, false]
        );
        request.allow_missing = true;
        let plan = unbundle(&data, &request, &mut ()).unwrap();
        assert!(plan.failure().is_none());
        assert_eq!(
            [plan.writes(0), plan.writes(1), plan.writes(2)],
            [true, true, false]
        );
    }
}
