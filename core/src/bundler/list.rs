//! Listing entry IDs: `-list` as the bundler prints it, and every ID of
//! any file this crate reads as bundles (the `clangoffload list` view).

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::input::{self, Budget, Buffers, Contents, Loaded, Source};
use super::unbundle::bundle_warnings;
use super::{BundlerError, Decoding, FileType, Observer};
use crate::archive::Archive;
use crate::foreign::Foreign;
use crate::locate::{offload_sections, SectionKind};
use crate::object_bundle::ObjectBundle;
use crate::text_bundle::{Comment, TextBundle};
use crate::FileKind;

/// Listed entry IDs, each with the archive member it is in (if any), in
/// file order. IDs of compressed bundles live in buffers the list keeps.
#[derive(Debug, Default)]
pub struct Listed<'data> {
    entries: Vec<(Option<&'data [u8]>, Source<'data>)>,
    buffers: Buffers,
}

impl<'data> Listed<'data> {
    /// How many IDs were listed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// ID `index` and the archive member it is in.
    pub fn get(&self, index: usize) -> Option<(Option<&'data [u8]>, &[u8])> {
        let (member, source) = self.entries.get(index)?;
        let id = match source {
            Source::Input { bytes, .. } => bytes,
            Source::Made { buffer, range } => self.buffers.get(*buffer)?.get(range.clone())?,
        };
        Some((*member, id))
    }

    /// Every (member, ID), in order.
    pub fn iter(&self) -> impl Iterator<Item = (Option<&'data [u8]>, &[u8])> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    fn push(&mut self, member: Option<&'data [u8]>, source: Source<'data>) {
        self.entries.push((member, source));
    }
}

/// `-list`: the IDs of `data` read as `file_type` says, in file order; a
/// binary bundle's repeated ID once (LLVM keys entries by ID).
pub fn list<'data>(
    data: &'data [u8],
    file_type: FileType,
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Listed<'data>, BundlerError> {
    let mut listed = Listed::default();
    let mut budget = Budget::tables(decoding);
    let file_type = match file_type {
        // LLVM lists an archive as a binary bundle.
        FileType::Archive => FileType::Binary,
        other => other,
    };
    let contents = input::read(data, file_type, &mut budget, &mut listed.buffers, observer)?;
    match &contents {
        Contents::Containers(loaded) => {
            for container in loaded {
                let mut seen = BTreeSet::new();
                let bundle = container.bundle(&listed.buffers)?;
                let ids: Vec<Source> = bundle
                    .entries()
                    .map_while(Result::ok)
                    .filter(|e| seen.insert(e.id()))
                    .map(|e| id_source(container, e.descriptor_offset().saturating_add(24), e.id()))
                    .collect();
                for id in ids {
                    listed.push(None, id);
                }
            }
        }
        Contents::Object(object) => object_ids(object, None, &mut listed)?,
        Contents::Text(loaded, comment) => {
            let ids: Vec<Source> = input::text(loaded, *comment, &listed.buffers)?
                .entries()
                .map_while(Result::ok)
                // The ID ends the start marker's line, just before the payload.
                .map(|e| {
                    let at = e
                        .offset()
                        .saturating_sub(crate::bytes::to_u64(e.id().len()).saturating_add(1));
                    id_source(loaded, at, e.id())
                })
                .collect();
            for id in ids {
                listed.push(None, id);
            }
        }
    }
    Ok(listed)
}

/// Every entry ID in `data`, in file order, repeats included: every bundle
/// and compressed bundle back to back, an object's bundle sections and the
/// bundles in its `.hip_fatbin` sections (ELF or COFF, PE images too), a
/// text bundle in any comment style, or each archive member that is one of
/// these (with the member's name). Bundle findings are warnings.
pub fn list_all<'data>(
    data: &'data [u8],
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Listed<'data>, BundlerError> {
    let mut listed = Listed::default();
    let mut budget = Budget::tables(decoding);
    if FileKind::detect(data).is_bundle_container() {
        containers(data, None, &mut budget, &mut listed, observer)?;
    } else if other_ids(data, None, &mut budget, &mut listed, observer)? {
    } else if let Ok(archive) = Archive::parse(data) {
        for member in archive.members() {
            let member = member.map_err(BundlerError::Input)?;
            let name = member.name();
            let in_member = |error| BundlerError::Member {
                name: name.to_vec(),
                error: alloc::boxed::Box::new(error),
            };
            let member_data = member.data();
            if FileKind::detect(member_data).is_bundle_container() {
                containers(member_data, Some(name), &mut budget, &mut listed, &mut ())
                    .map_err(in_member)?;
            } else {
                other_ids(member_data, Some(name), &mut budget, &mut listed, observer)
                    .map_err(in_member)?;
            }
        }
    } else {
        return Err(BundlerError::NotAContainer(Foreign::identify(data)));
    }
    Ok(listed)
}

/// The IDs of every container in `data`.
fn containers<'data>(
    data: &'data [u8],
    member: Option<&'data [u8]>,
    budget: &mut Budget,
    listed: &mut Listed<'data>,
    observer: &mut dyn Observer,
) -> Result<(), BundlerError> {
    let loaded = input::load(data, budget, true, &mut listed.buffers, observer)?;
    for container in &loaded {
        let bundle = container
            .bundle(&listed.buffers)
            .map_err(|error| match error {
                BundlerError::MalformedBundle { error, .. } => BundlerError::MalformedBundle {
                    error,
                    place: super::Place::Start,
                },
                other => other,
            })?;
        let ids: Vec<Source> = bundle
            .entries()
            .map_while(Result::ok)
            .map(|e| id_source(container, e.descriptor_offset().saturating_add(24), e.id()))
            .collect();
        bundle_warnings(&bundle, observer);
        for id in ids {
            listed.push(member, id);
        }
    }
    Ok(())
}

/// The IDs of an object-flavour or text bundle, and of the bundles in an
/// object's `.hip_fatbin` sections; false if `data` is neither.
fn other_ids<'data>(
    data: &'data [u8],
    member: Option<&'data [u8]>,
    budget: &mut Budget,
    listed: &mut Listed<'data>,
    observer: &mut dyn Observer,
) -> Result<bool, BundlerError> {
    if FileKind::detect(data).is_readable_object() {
        let object = ObjectBundle::parse(data)?;
        object_ids(&object, member, listed)?;
        for found in offload_sections(object.object()) {
            let found = found.map_err(BundlerError::MalformedObject)?;
            if found.kind == SectionKind::HipFatbin {
                containers(found.section.data(), member, budget, listed, observer)?;
            }
        }
        return Ok(true);
    }
    // A CUDA fat binary is none of these, and its payloads can be large:
    // do not search them for text markers.
    if FileKind::detect(data) == FileKind::CudaFatbin {
        return Ok(false);
    }
    // A text bundle's comment style is not in the file: take the one whose
    // markers it holds.
    for comment in [Comment::DoubleSlash, Comment::Hash, Comment::Semicolon] {
        if let Ok(text) = TextBundle::parse(data, comment) {
            let ids: Vec<&[u8]> = text
                .entries()
                .map_while(Result::ok)
                .map(|e| e.id())
                .collect();
            if !ids.is_empty() {
                for id in ids {
                    listed.push(member, input_source(id));
                }
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn object_ids<'data>(
    object: &ObjectBundle<'data>,
    member: Option<&'data [u8]>,
    listed: &mut Listed<'data>,
) -> Result<(), BundlerError> {
    // By section name, as LLVM lists: damaged contents do not hide an ID.
    for found in object.entries_by_id() {
        let (id, _) = found.map_err(BundlerError::MalformedObject)?;
        listed.push(member, input_source(id));
    }
    Ok(())
}

/// An ID borrowed from the input.
fn input_source(id: &[u8]) -> Source<'_> {
    Source::Input {
        offset: 0,
        bytes: id,
    }
}

/// Where an ID at `offset` of a loaded container is: in the input, or in
/// the buffer the container was decompressed into.
fn id_source<'data>(container: &Loaded<'data>, offset: u64, id: &[u8]) -> Source<'data> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    container.source(start..start.saturating_add(id.len()))
}
