//! NVIDIA fat binaries in host files: where a file keeps them, the names
//! `cuobjdump` gives what it extracts from them, and pruning them in place.
//! Above [`crate::cuda_fatbin`] (the container) and [`crate::locate`] (the
//! sections), which know nothing of each other.
//!
//! A raw fat binary is read as fat binaries back to back. In an ELF or
//! COFF/PE host, `cuobjdump -all` reads the `.nv_fatbin` sections first and
//! the `__nv_relfatbin` sections (old-style relocatable device code) after,
//! whatever the section order, by name and not through the
//! `.nvFatBinSegment` wrappers (an executable without them still lists
//! everything): so does [`host_fatbins`]. OffloadBinaries (a file, or
//! `.llvm.offloading`) give their `fatbinary` images for `nvptx64`, which
//! `cuobjdump` cannot read. A section or image that does not start with a
//! fat binary holds none (cuobjdump: "does not contain device code"). In an
//! `ar` archive (a static library from `nvcc -lib`), each member is read as
//! a file of its own, in archive order, and the numbers `cuobjdump` gives
//! what it extracts go on from one member to the next.

use alloc::string::String;
use alloc::vec::Vec;

use crate::archive::Archive;
use crate::bytes::range;
use crate::cuda_fatbin::{
    fatbins, layout_overflow, prune_in_place, ConcatMember, EntryKind, Fatbin, FatbinEntry, Sm,
    SmVariant,
};
use crate::locate::{offload_sections, SectionKind};
use crate::object::ObjectFile;
use crate::offload_binary::{binaries, ImageKind};
use crate::{DecompressOptions, FileKind, Result};

/// Where a fat binary was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FatbinSource<'data> {
    /// The input is fat binaries back to back.
    Raw,
    /// A host section (`.nv_fatbin`, `__nv_relfatbin`), by name.
    Section(&'data [u8]),
    /// A `fatbinary` image of an OffloadBinary for nvptx64 at this offset of
    /// the file, in this section (if in one).
    OffloadImage(Option<&'data [u8]>),
}

/// A fat binary (or the error where one should be) and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFatbin<'data> {
    /// Where it was found.
    pub source: FatbinSource<'data>,
    /// The name of the archive member it is in, if the file is an archive.
    pub member: Option<&'data [u8]>,
    /// Its offset in the file.
    pub offset: u64,
    /// The fat binary, or why it could not be read (a walk of back-to-back
    /// fat binaries stops at its first error).
    pub fatbin: Result<Fatbin<'data>>,
}

/// Every fat binary in `data`, in the order `cuobjdump -all` reads them:
/// a raw fat binary's back to back; a host's `.nv_fatbin` sections, then
/// its `__nv_relfatbin` sections; then the `fatbinary` images of
/// OffloadBinaries for nvptx64; in an archive, each member's in turn. A
/// host file (or member) that does not parse gives its error once; an
/// archive whose members cannot be walked on gives its error after the
/// members before it.
pub fn host_fatbins(data: &[u8]) -> Vec<HostFatbin<'_>> {
    let mut found = Vec::new();
    if Archive::is_archive(data) {
        in_archive(&mut found, data);
    } else {
        in_file(&mut found, data, Place::default());
    }
    found
}

/// Where the bytes being read lie: their offset in the file, and the
/// archive member they are, if any.
#[derive(Debug, Clone, Copy, Default)]
struct Place<'data> {
    base: u64,
    member: Option<&'data [u8]>,
}

impl<'data> Place<'data> {
    /// What was found at `offset` of these bytes (an error's offset is
    /// theirs too, and is moved to the file's).
    fn found(
        self,
        source: FatbinSource<'data>,
        offset: u64,
        fatbin: Result<Fatbin<'data>>,
    ) -> HostFatbin<'data> {
        HostFatbin {
            source,
            member: self.member,
            offset: self.base.saturating_add(offset),
            fatbin: fatbin.map_err(|error| error.shifted(self.base)),
        }
    }
}

/// A file that is not an archive, or an archive member.
fn in_file<'data>(found: &mut Vec<HostFatbin<'data>>, data: &'data [u8], place: Place<'data>) {
    match FileKind::detect(data) {
        _ if Fatbin::is_fatbin(data) => walk(found, FatbinSource::Raw, data, 0, place),
        FileKind::OffloadBinary => offload_images(found, None, data, 0, place),
        kind if kind.is_readable_object() => match ObjectFile::parse(data) {
            Ok(file) => in_object(found, &file, place),
            Err(error) => found.push(place.found(FatbinSource::Raw, 0, Err(error))),
        },
        _ => {}
    }
}

/// Each regular member of an archive as a file of its own (a static
/// library's objects; nested archives are not opened, as cuobjdump opens
/// none).
fn in_archive<'data>(found: &mut Vec<HostFatbin<'data>>, data: &'data [u8]) {
    let members = Archive::parse(data).map(|archive| archive.members());
    let error = match members {
        Ok(members) => members
            .filter_map(|member| match member {
                Ok(member) => {
                    let place = Place {
                        base: member.data_offset(),
                        member: Some(member.name()),
                    };
                    in_file(found, member.data(), place);
                    None
                }
                Err(error) => Some(error),
            })
            .next(),
        Err(error) => Some(error),
    };
    if let Some(error) = error {
        found.push(Place::default().found(FatbinSource::Raw, error.offset(), Err(error)));
    }
}

/// The ranges of `data` (offset, size) that hold its fat binaries and
/// nothing else: the whole of a raw fat binary, or a host's `.nv_fatbin`
/// and `__nv_relfatbin` sections (the order of [`host_fatbins`]); none for
/// other files. A host file that does not parse is the error.
pub fn fatbin_sections(data: &[u8]) -> Result<Vec<(u64, u64)>> {
    if Fatbin::is_fatbin(data) {
        return Ok(alloc::vec![(0, crate::bytes::to_u64(data.len()))]);
    }
    if !FileKind::detect(data).is_readable_object() {
        return Ok(Vec::new());
    }
    let file = ObjectFile::parse(data)?;
    let sections: Vec<_> = offload_sections(&file).collect::<Result<_>>()?;
    let mut found = Vec::new();
    for kind in [SectionKind::NvFatbin, SectionKind::NvRelFatbin] {
        for s in sections.iter().filter(|s| s.kind == kind) {
            let size = crate::bytes::to_u64(s.section.data().len());
            found.push((s.section.offset(), size));
        }
    }
    Ok(found)
}

fn in_object<'data>(
    found: &mut Vec<HostFatbin<'data>>,
    file: &ObjectFile<'data>,
    place: Place<'data>,
) {
    let sections: Vec<_> = offload_sections(file).filter_map(Result::ok).collect();
    for kind in [SectionKind::NvFatbin, SectionKind::NvRelFatbin] {
        for s in sections.iter().filter(|s| s.kind == kind) {
            let section = &s.section;
            let source = FatbinSource::Section(section.name());
            walk(found, source, section.data(), section.offset(), place);
        }
    }
    for s in sections
        .iter()
        .filter(|s| s.kind == SectionKind::OffloadBinaries)
    {
        let section = &s.section;
        offload_images(
            found,
            Some(section.name()),
            section.data(),
            section.offset(),
            place,
        );
    }
}

/// The fat binaries back to back in `bytes`, found at `base` in the file. A
/// section or image that does not start (after zero bytes) with a fat
/// binary holds none, as cuobjdump has it ("does not contain device code"):
/// clang fed PTX in place of a fat binary (`-fcuda-include-gpubinary`) puts
/// the text in `.nv_fatbin`; bytes after a fat binary are damage.
fn walk<'data>(
    found: &mut Vec<HostFatbin<'data>>,
    source: FatbinSource<'data>,
    bytes: &'data [u8],
    base: u64,
    place: Place<'data>,
) {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    if !Fatbin::is_fatbin(bytes.get(start..).unwrap_or_default()) {
        return;
    }
    for item in fatbins(bytes) {
        let (offset, fatbin) = match item {
            Ok((offset, fatbin)) => (offset, Ok(fatbin)),
            Err(error) => (error.offset(), Err(error.shifted(base))),
        };
        found.push(place.found(source, base.saturating_add(offset), fatbin));
    }
}

/// The `fatbinary` images for nvptx64 of the OffloadBinaries in `bytes`.
fn offload_images<'data>(
    found: &mut Vec<HostFatbin<'data>>,
    section: Option<&'data [u8]>,
    bytes: &'data [u8],
    base: u64,
    place: Place<'data>,
) {
    for binary in binaries(bytes) {
        let Ok((at, binary)) = binary else {
            // The OffloadBinaries' own damage is theirs to report.
            break;
        };
        for entry in binary.entries() {
            let nvptx = entry.triple().is_some_and(|t| t.starts_with(b"nvptx"));
            if !nvptx || entry.image_kind() != ImageKind::Fatbinary {
                continue;
            }
            let image = entry.image();
            let offset = crate::bytes::offset_in(bytes, image)
                .unwrap_or(at)
                .saturating_add(base);
            walk(
                found,
                FatbinSource::OffloadImage(section),
                image,
                offset,
                place,
            );
        }
    }
}

/// Numbers `cuobjdump` gives extracted files: ELF and PTX counted apart,
/// from 1, over the whole file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CuobjdumpCounter {
    elf: u64,
    ptx: u64,
}

impl CuobjdumpCounter {
    /// The name `cuobjdump -xelf all`/`-xptx all` gives the next image of
    /// `kind` (only ELF and PTX are extracted: `None` for others). `base` is
    /// the input's file name without directory and extension; an image with
    /// an identifier is named after it instead (without its extension), and
    /// unnumbered. `cuobjdump` keeps an `a` suffix but drops an `f` suffix
    /// in ELF names, and keeps both in PTX names.
    pub fn next_name(
        &mut self,
        base: &str,
        identifier: Option<&[u8]>,
        kind: EntryKind,
        sm: Sm,
    ) -> Option<String> {
        let (counter, extension, keep_family) = match kind {
            EntryKind::Elf => (&mut self.elf, "cubin", false),
            EntryKind::Ptx => (&mut self.ptx, "ptx", true),
            _ => return None,
        };
        *counter = counter.saturating_add(1);
        let sm = match sm.variant {
            SmVariant::Family if !keep_family => Sm {
                variant: SmVariant::Plain,
                ..sm
            },
            _ => sm,
        };
        Some(match identifier {
            Some(identifier) => {
                let identifier = String::from_utf8_lossy(identifier);
                let stem = identifier.rsplit_once('.').map_or(&*identifier, |(s, _)| s);
                alloc::format!("{stem}.{sm}.{extension}")
            }
            None => alloc::format!("{base}.{counter}.{sm}.{extension}"),
        })
    }
}

/// An entry of a fat binary as `cuobjdump -all` lists it: an entry, or a
/// member of a `--concat` entry (listed after its entry), with the name its
/// image is extracted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed<'data> {
    /// The entry (a member's: its concat entry).
    pub entry: FatbinEntry<'data>,
    /// The member of the concat entry, if this is one.
    pub member: Option<ConcatMember<'data>>,
    /// Its kind (a member's own).
    pub kind: EntryKind,
    /// Its SM (a member's own).
    pub sm: Sm,
    /// Its identifier (a member's own).
    pub identifier: Option<&'data [u8]>,
    /// The name `cuobjdump -xelf all`/`-xptx all` writes its image to;
    /// `None` for kinds it does not extract.
    pub name: Option<String>,
}

impl CuobjdumpCounter {
    /// Every entry of `fatbin`, each followed by its concat members, named
    /// in turn (see [`CuobjdumpCounter::next_name`]; `base` as there).
    pub fn list<'data>(&mut self, fatbin: &Fatbin<'data>, base: &str) -> Vec<Listed<'data>> {
        let mut listed = Vec::new();
        for entry in fatbin.entries() {
            let mut push = |member: Option<ConcatMember<'data>>, kind, sm, identifier| {
                let name = self.next_name(base, identifier, kind, sm);
                listed.push(Listed {
                    entry,
                    member,
                    kind,
                    sm,
                    identifier,
                    name,
                });
            };
            push(None, entry.kind(), entry.sm(), entry.identifier());
            for m in entry.members() {
                push(Some(m), m.kind(), m.sm(), m.identifier());
            }
        }
        listed
    }
}

/// The file name `cuobjdump` uses as `base`: `path`'s last component
/// without its extension.
pub fn cuobjdump_base(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

/// Prunes every fat binary of a file in place, as [`prune_in_place`] does
/// for one section: a raw fat binary (several back to back), or the
/// `.nv_fatbin` and `__nv_relfatbin` sections of an ELF or COFF/PE host,
/// whose other bytes do not change. Returns how many fat binaries changed;
/// a file holding none gives 0. All or nothing: on an error (reported at
/// its offset in the file) `file` is left as it was.
pub fn prune_file_in_place(
    file: &mut [u8],
    keep: &dyn Fn(EntryKind, Sm) -> bool,
    options: &DecompressOptions,
) -> Result<usize> {
    let mut pruned = Vec::new();
    let mut changed = 0usize;
    for (offset, size) in fatbin_sections(file)? {
        let mut section = range(file, offset, size)
            .ok_or_else(layout_overflow)?
            .to_vec();
        let n = prune_in_place(&mut section, keep, options).map_err(|e| e.shifted(offset))?;
        if n > 0 {
            changed = changed.saturating_add(n);
            pruned.push((offset, section));
        }
    }
    for (offset, section) in pruned {
        let start = usize::try_from(offset).map_err(|_| layout_overflow())?;
        start
            .checked_add(section.len())
            .and_then(|end| file.get_mut(start..end))
            .ok_or_else(layout_overflow)?
            .copy_from_slice(&section);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests;
