//! Object-flavour bundles: a host object file (ELF or COFF) whose bundle
//! entries are sections named `__CLANG_OFFLOAD_BUNDLE__<entry id>`.
//!
//! clang-offload-bundler writes this flavour for `-type=o` (and reads it inside
//! `-type=a` archives) when the host input is an object file, through
//! llvm-objcopy. In ELF each entry is a `SHT_PROGBITS` section with only
//! `SHF_EXCLUDE` set (the linker drops it) and alignment 1; in COFF a section
//! that is readable and removed by the linker (`IMAGE_SCN_MEM_READ |
//! IMAGE_SCN_LNK_REMOVE`). The host entry's section holds a single zero byte,
//! because the host's code is the object itself. Entries are listed in
//! section order. Extracting the host entry gives the object without the
//! bundle sections.

use crate::bundle::BUNDLE_MAGIC;
use crate::object::{ObjectFile, Section};
use crate::Result;

#[cfg(feature = "alloc")]
use crate::{coff, elf};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// What the host entry's section holds.
pub const HOST_MARKER: &[u8] = &[0];

/// The bundle entries of an object file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectBundle<'data> {
    object: ObjectFile<'data>,
}

/// One entry: its ID and the section that holds its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectBundleEntry<'data> {
    id: &'data [u8],
    section: Section<'data>,
}

impl<'data> ObjectBundle<'data> {
    /// Parses the object's section table. An object with no bundle section is
    /// still an object bundle, one with no entries (the bundler takes such a
    /// file to be the host's own).
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        Ok(ObjectBundle {
            object: ObjectFile::parse(data)?,
        })
    }

    /// The object file.
    pub fn object(&self) -> &ObjectFile<'data> {
        &self.object
    }

    /// The entries in section order. A bundle section whose contents lie
    /// outside the file is an error for that entry only; another section's
    /// damage is not the bundle's (LLVM lists by section names).
    pub fn entries(&self) -> impl Iterator<Item = Result<ObjectBundleEntry<'data>>> + '_ {
        (1..self.object.section_end()).filter_map(|index| match self.object.section(index) {
            Ok(section) => {
                let id = bundle_id(&section)?;
                Some(Ok(ObjectBundleEntry { id, section }))
            }
            Err(e) => match self.object.section_name(index) {
                Ok(name) if !name.starts_with(&BUNDLE_MAGIC[..]) => None,
                _ => Some(Err(e)),
            },
        })
    }

    /// Every bundle section's ID and its entry, or why its contents cannot
    /// be read (LLVM lists a bundle section by its name, and fails only a
    /// job that needs its contents), in section order from section 0, as
    /// LLVM walks them. A section whose name cannot be read is an error of
    /// the walk, as in LLVM: it might be a bundle's; a reader that stops
    /// early (LLVM's `-unbundle`, once every target is found) never meets
    /// the names after it.
    pub fn entries_by_id(
        &self,
    ) -> impl Iterator<Item = Result<(&'data [u8], Result<ObjectBundleEntry<'data>>)>> + '_ {
        self.object.section_indices().filter_map(|index| {
            let name = match self.object.section_name(index) {
                Ok(name) => name,
                Err(e) => return Some(Err(e)),
            };
            let id = name.strip_prefix(&BUNDLE_MAGIC[..])?;
            let entry = self
                .object
                .section(index)
                .map(|section| ObjectBundleEntry { id, section });
            Some(Ok((id, entry)))
        })
    }

    /// The object without its bundle sections: what extracting the host
    /// entry gives.
    #[cfg(feature = "alloc")]
    pub fn host_object(&self) -> Result<Vec<u8>> {
        match &self.object {
            ObjectFile::Elf(elf) => {
                elf::rewrite_sections(elf, |s| !s.name().starts_with(BUNDLE_MAGIC), &[])
            }
            ObjectFile::Coff(coff) => {
                coff::rewrite_sections(coff, |s| !s.name().starts_with(BUNDLE_MAGIC), &[])
            }
        }
    }
}

impl<'data> ObjectBundleEntry<'data> {
    /// The entry ID: the section name after the bundle magic.
    pub fn id(&self) -> &'data [u8] {
        self.id
    }

    /// The payload: the section's contents.
    pub fn payload(&self) -> &'data [u8] {
        self.section.data()
    }

    /// Where the payload starts in the object.
    pub fn offset(&self) -> u64 {
        self.section.offset()
    }

    /// The section that holds the entry.
    pub fn section(&self) -> &Section<'data> {
        &self.section
    }

    /// Whether the section holds the host marker, a single zero byte: the
    /// host's payload is then the object itself.
    pub fn is_host_marker(&self) -> bool {
        self.payload() == HOST_MARKER
    }
}

/// The entry ID, if the section is a bundle entry.
fn bundle_id<'data>(section: &Section<'data>) -> Option<&'data [u8]> {
    section.name().strip_prefix(&BUNDLE_MAGIC[..])
}

/// Writes `host` with one bundle section per entry (ID, payload), in order,
/// flagged as clang-offload-bundler flags them. Pass [`HOST_MARKER`] as the
/// host entry's payload. Bundle sections already in `host` are kept (in
/// COFF, with the flags of an added one of the same name, as llvm-objcopy
/// sets them). A PE image is refused.
#[cfg(feature = "alloc")]
pub fn write_object_bundle(host: &ObjectFile, entries: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = Vec::new();
    for (id, _) in entries {
        let mut name = Vec::new();
        name.extend_from_slice(BUNDLE_MAGIC);
        name.extend_from_slice(id);
        names.push(name);
    }
    let named = names
        .iter()
        .zip(entries)
        .map(|(name, (_, data))| (&name[..], *data));
    match host {
        ObjectFile::Elf(elf) => {
            let sections: Vec<elf::NewSection> = named
                .map(|(name, data)| elf::NewSection {
                    name,
                    kind: elf::SHT_PROGBITS,
                    flags: elf::SHF_EXCLUDE,
                    addralign: 1,
                    data,
                })
                .collect();
            elf::rewrite_sections(elf, |_| true, &sections)
        }
        ObjectFile::Coff(coff) => {
            let sections: Vec<coff::NewSection> = named
                .map(|(name, data)| coff::NewSection {
                    name,
                    // What llvm-objcopy makes of `readonly,exclude`.
                    characteristics: coff::SCN_MEM_READ | coff::SCN_LNK_REMOVE,
                    data,
                })
                .collect();
            coff::rewrite_sections(coff, |_| true, &sections)
        }
    }
}
