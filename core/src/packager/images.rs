//! Where an input's OffloadBinaries are, as LLVM 22's
//! `extractOffloadBinaries` finds them, and the images they hold.

use alloc::vec::Vec;

use super::PackagerError;
use crate::archive::{Archive, Members};
use crate::locate::{offload_sections, SectionKind};
use crate::object::ObjectFile;
use crate::offload_binary::binaries;
use crate::{DecompressOptions, FileKind, OffloadBinary, OffloadEntry};

/// The images of an input, in file order. Compressed binaries are
/// decompressed into buffers this keeps.
#[derive(Debug, Default)]
pub struct Images<'data> {
    binaries: Vec<Binary<'data>>,
    buffers: Vec<Vec<u8>>,
}

/// One OffloadBinary and where it was found.
#[derive(Debug, Clone, Copy)]
struct Binary<'data> {
    member: Option<&'data [u8]>,
    bytes: &'data [u8],
    origin: Origin,
}

/// Where a binary's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// In the input, at this offset.
    Input(u64),
    /// Decompressed, in this buffer.
    Buffer(usize),
}

/// One image of an input.
#[derive(Debug, Clone, Copy)]
pub struct Image<'a> {
    /// The (innermost) archive member it was found in, or `None` for the
    /// input itself: LLVM names the image's buffer after it, or after the
    /// input.
    pub member: Option<&'a [u8]>,
    /// Its binary's version (3 for a compressed one).
    pub version: u32,
    /// Whether its binary was compressed.
    pub compressed: bool,
    /// The entry: its kinds, strings and image.
    pub entry: OffloadEntry<'a>,
    /// Where its binary is.
    pub(crate) origin: Origin,
}

impl<'data> Images<'data> {
    /// Every image, in file order.
    pub fn iter(&self) -> impl Iterator<Item = Image<'_>> + '_ {
        self.binaries.iter().flat_map(move |binary| {
            let bytes = match binary.origin {
                Origin::Input(_) => binary.bytes,
                Origin::Buffer(i) => self.buffers.get(i).map_or(&[][..], Vec::as_slice),
            };
            // Checked when it was found.
            let parsed = OffloadBinary::parse(bytes).ok();
            parsed.into_iter().flat_map(move |parsed| {
                parsed.entries().map(move |entry| Image {
                    member: binary.member,
                    version: parsed.version(),
                    compressed: matches!(binary.origin, Origin::Buffer(_)),
                    entry,
                    origin: binary.origin,
                })
            })
        })
    }

    /// The decompressed binaries, for a plan that takes them over.
    pub(crate) fn into_buffers(self) -> Vec<Vec<u8>> {
        self.buffers
    }
}

/// The images of `data`: those of every OffloadBinary in an
/// `SHT_LLVM_OFFLOADING` section of an ELF file, in the members of an
/// archive (recursively), or in `data` itself if it is an OffloadBinary
/// (several back to back are read). Any other input holds none, but LLVM
/// bitcode is refused (LLVM reads its `llvm.embedded.objects`). The first
/// damaged binary is an error: every field of every binary is checked, and
/// compressed ones are decompressed (all of them within the default limit,
/// 1 GiB, together).
pub fn list(data: &[u8]) -> Result<Images<'_>, PackagerError> {
    let mut images = Images::default();
    let mut inflated_len = 0u64;
    for region in regions(data)? {
        for found in binaries(region.bytes) {
            // Errors are located in the input, not in the region.
            let in_input = |e: crate::Error| PackagerError::Binary(e.shifted(region.offset));
            let (offset, binary) = found.map_err(in_input)?;
            let origin = if binary.is_compressed() {
                let at = region.offset.saturating_add(offset);
                let shifted = |e: crate::Error| PackagerError::Binary(e.shifted(at));
                // One budget for the whole input, not one per binary.
                let mut options = DecompressOptions::default();
                options.limits.max_uncompressed_size = options
                    .limits
                    .max_uncompressed_size
                    .saturating_sub(inflated_len);
                let inflated = binary.decompress(&options).map_err(shifted)?;
                inflated_len = inflated_len.saturating_add(crate::bytes::to_u64(inflated.len()));
                OffloadBinary::parse(&inflated).map_err(shifted)?;
                images.buffers.push(inflated);
                Origin::Buffer(images.buffers.len().saturating_sub(1))
            } else {
                Origin::Input(region.offset.saturating_add(offset))
            };
            images.binaries.push(Binary {
                member: region.member,
                bytes: binary.data(),
                origin,
            });
        }
    }
    Ok(images)
}

/// Bytes of the input that hold OffloadBinaries back to back.
struct Region<'data> {
    member: Option<&'data [u8]>,
    offset: u64,
    bytes: &'data [u8],
}

/// The regions of `data` that hold OffloadBinaries, in file order. Nested
/// archives are walked with a stack of their own, not by recursion: a file
/// of archives inside archives cannot exhaust the call stack.
fn regions(data: &[u8]) -> Result<Vec<Region<'_>>, PackagerError> {
    let mut found = Vec::new();
    let mut archives: Vec<(Members<'_>, u64)> = Vec::new();
    visit(data, 0, None, &mut found, &mut archives)?;
    while let Some((members, base)) = archives.last_mut() {
        match members.next().map(|member| (member, *base)) {
            None => {
                archives.pop();
            }
            // A damaged header ends the archive, after the members before it.
            Some((Err(e), _)) => return Err(PackagerError::Container(e)),
            Some((Ok(member), base)) => visit(
                member.data(),
                base.saturating_add(member.data_offset()),
                Some(member.name()),
                &mut found,
                &mut archives,
            )?,
        }
    }
    Ok(found)
}

/// Adds the regions of `data` (at `offset` in the input, in `member`), or
/// for an archive, its members to walk.
fn visit<'data>(
    data: &'data [u8],
    offset: u64,
    member: Option<&'data [u8]>,
    found: &mut Vec<Region<'data>>,
    archives: &mut Vec<(Members<'data>, u64)>,
) -> Result<(), PackagerError> {
    match FileKind::detect(data) {
        FileKind::Elf(_) | FileKind::Coff(_) => {
            let object = ObjectFile::parse(data).map_err(PackagerError::Container)?;
            for section in offload_sections(&object) {
                let section = section.map_err(PackagerError::Container)?;
                if section.kind == SectionKind::OffloadBinaries {
                    found.push(Region {
                        member,
                        offset: offset.saturating_add(section.section.offset()),
                        bytes: section.section.data(),
                    });
                }
            }
        }
        FileKind::Archive => {
            let archive = Archive::parse(data).map_err(PackagerError::Container)?;
            archives.push((archive.members(), offset));
        }
        FileKind::OffloadBinary => found.push(Region {
            member,
            offset,
            bytes: data,
        }),
        FileKind::Bitcode => return Err(PackagerError::Bitcode),
        _ => {}
    }
    Ok(())
}
