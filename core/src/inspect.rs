//! What any file holds, container by container: the walk behind
//! `clangoffload inspect`, as data for a report.
//!
//! An archive is read member by member (a member that is an archive too,
//! member by member again); an ELF or COFF file section by section (`.llvm.offloading`,
//! `.hip_fatbin`, `.nv_fatbin`, bundle sections, and the HIP/CUDA wrapper
//! records with the fat binary each points at); anything else as containers
//! back to back. Each container comes with its header (a compressed bundle's
//! decoded and hashed), its entries — an AMDGPU code object checked against
//! the entry ID that names it — or its OffloadBinary images and their
//! strings. Damage is reported where it is found and the walk goes on where
//! the format allows: a container that cannot be read stops the walk of its
//! section only, a damaged section header that section only.
//!
//! Decoded bytes are not kept: what the report needs of them (entry IDs,
//! image strings) is copied, so a file of many large compressed bundles
//! costs the largest one, not their sum.
//!
//! ```
//! use clangoffload::bundler::Decoding;
//! use clangoffload::inspect::{inspect, NoteKind};
//!
//! let object = include_bytes!("../../tests/fixtures/offload/hip.o");
//! let found = inspect(object, Decoding::default());
//! let bundle = &found.containers[0];
//! assert_eq!(bundle.place.section, Some(&b".hip_fatbin"[..]));
//! let device = &bundle.entries[1];
//! assert_eq!(&*device.id, b"hipv4-amdgcn-amd-amdhsa--gfx906");
//! assert!(device.code_object.is_some_and(|c| c.id_agrees));
//! assert!(matches!(found.notes[0].kind, NoteKind::Wrapper { index: 0, .. }));
//! assert!(found.errors.is_empty());
//! ```

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::fmt;

use crate::archive::Archive;
use crate::bundle::BUNDLE_MAGIC;
use crate::bytes::to_u64;
use crate::coff::{CoffFile, MACHINE_AMD64, MACHINE_ARM64, MACHINE_ARMNT, MACHINE_I386};
use crate::compressed::truncated_md5;
use crate::compressed::Decoding;
use crate::container::{parse_container, Container, Containers};
use crate::elf::{AmdgpuTarget, ElfFile};
use crate::kind::ElfKind;
use crate::locate::{offload_sections, wrapper_targets, SectionKind, Wrapper};
use crate::object::{ObjectFile, Section};
use crate::offload_binary::{ImageKind, OffloadKind};
use crate::{Bundle, CompressedBundle, DecompressOptions, Error, FileKind, OffloadBinary, Result};

/// Everything [`inspect`] found, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inspection<'data> {
    /// The files read: the input first, then every archive member.
    pub files: Vec<InspectedFile<'data>>,
    /// Every container read, damaged ones included.
    pub containers: Vec<InspectedContainer<'data>>,
    /// What offload sections hold besides containers.
    pub notes: Vec<Note<'data>>,
    /// What could not be read outside any one container: an archive member
    /// header, an ELF file or section header, bytes where a container should
    /// start.
    pub errors: Vec<InspectionError<'data>>,
}

/// The input, or an archive member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectedFile<'data> {
    /// The member's name; `None` for the input.
    pub name: Option<&'data [u8]>,
    /// The archive it is a member of (an index into [`Inspection::files`]).
    pub parent: Option<usize>,
    /// What it is.
    pub kind: FileKind,
    /// The format name `llvm-objdump` prints for an object file.
    format: Option<&'static str>,
}

impl InspectedFile<'_> {
    /// For an object file, the format name `llvm-objdump` prints for it
    /// (`elf64-x86-64`, `elf64-amdgpu`, `coff-x86-64`, ...).
    pub fn objdump_format(&self) -> Option<&'static str> {
        self.format
    }
}

/// The format name `llvm-objdump` prints for a file, if it is an object.
fn objdump_format(kind: FileKind, data: &[u8]) -> Option<&'static str> {
    match kind {
        FileKind::Elf(elf) => Some(elf_format(elf)),
        FileKind::Coff(_) => Some(match CoffFile::parse(data).map(|f| f.header().machine) {
            Ok(MACHINE_AMD64) => "coff-x86-64",
            Ok(MACHINE_I386) => "coff-i386",
            Ok(MACHINE_ARM64) => "coff-arm64",
            Ok(MACHINE_ARMNT) => "coff-arm",
            _ => "coff-<unknown arch>",
        }),
        _ => None,
    }
}

fn elf_format(elf: ElfKind) -> &'static str {
    match (elf.class, elf.machine) {
        (2, 62) => "elf64-x86-64",
        (2, 224) => "elf64-amdgpu",
        (2, 183) => "elf64-littleaarch64",
        (1, 3) => "elf32-i386",
        (2, _) => "elf64-unknown",
        _ => "elf32-unknown",
    }
}

/// Where something was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place<'data> {
    /// The file (an index into [`Inspection::files`]).
    pub file: usize,
    /// The section (ELF or COFF), if in one.
    pub section: Option<&'data [u8]>,
}

/// One container and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct InspectedContainer<'data> {
    /// Where it is.
    pub place: Place<'data>,
    /// Its offset in its file.
    pub offset: u64,
    /// The container, cut to its extent; a compressed bundle's header.
    pub container: Container<'data>,
    /// A compressed bundle's: the hash of what it decoded to.
    pub computed_hash: Option<u64>,
    /// A bundle's (or a compressed bundle's) entries.
    pub entries: Vec<InspectedEntry<'data>>,
    /// An OffloadBinary's images.
    pub images: Vec<InspectedImage<'data>>,
    /// Why it could not be read whole.
    pub error: Option<ContainerError>,
}

/// One entry of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectedEntry<'data> {
    /// The entry ID (borrowed from the input, or copied from decoded bytes).
    pub id: Cow<'data, [u8]>,
    /// The payload's offset: in the file for a plain bundle, in the decoded
    /// bundle for a compressed one.
    pub offset: u64,
    /// The payload's size.
    pub size: u64,
    /// For an AMDGPU code object: what its header says.
    pub code_object: Option<CodeObject>,
}

/// An AMDGPU code object's target, checked against its entry's ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeObject {
    /// The target ID the code object's header names.
    pub target: AmdgpuTarget,
    /// Whether the entry ID ends with `-<target ID>`.
    pub id_agrees: bool,
}

/// One image of an OffloadBinary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectedImage<'data> {
    /// The format version of its binary (of the decompressed one for a
    /// compressed binary).
    pub version: u32,
    /// What the image is.
    pub image_kind: ImageKind,
    /// Which offload model made it.
    pub offload_kind: OffloadKind,
    /// The image's size.
    pub size: u64,
    /// Its key-value strings, in table order.
    pub strings: Vec<StringPair<'data>>,
}

/// A key and its value, borrowed from the input or copied from decoded bytes.
pub type StringPair<'data> = (Cow<'data, [u8]>, Cow<'data, [u8]>);

/// Why a container could not be read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerError {
    /// The bundle (a compressed bundle's decoded bytes included) does not
    /// parse.
    MalformedBundle(Error),
    /// The compressed bundle does not decode, or the OffloadBinary does not
    /// parse or decode.
    Unreadable(Error),
    /// The decoded bundle's hash is not the stored one (when the decoding
    /// verifies hashes).
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of the decoded bytes.
        computed: u64,
    },
}

impl ContainerError {
    /// The core error behind it, if any.
    pub fn core_error(&self) -> Option<&Error> {
        match self {
            ContainerError::MalformedBundle(e) | ContainerError::Unreadable(e) => Some(e),
            ContainerError::HashMismatch { .. } => None,
        }
    }
}

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContainerError::MalformedBundle(e) => write!(f, "malformed bundle: {e}"),
            ContainerError::Unreadable(e) => write!(f, "{e}"),
            // As LLVM's format_hex(n, 16): `0x` and at least 14 digits.
            ContainerError::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: stored {stored:#016x}, computed {computed:#016x}"
            ),
        }
    }
}

/// What an offload section holds besides containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note<'data> {
    /// The section.
    pub place: Place<'data>,
    /// What it holds.
    pub kind: NoteKind<'data>,
}

/// What a [`Note`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind<'data> {
    /// A section holding one entry of an object-flavour bundle.
    BundleEntry {
        /// The entry ID (the section name after the bundle magic).
        id: &'data [u8],
        /// Where the section's contents start in the file.
        offset: u64,
        /// Their size.
        size: u64,
    },
    /// An NVIDIA fat binary (`.nv_fatbin`), not read further.
    NvFatbin {
        /// Where the section's contents start in the file.
        offset: u64,
        /// Their size.
        size: u64,
    },
    /// A HIP or CUDA fat-binary wrapper record.
    Wrapper {
        /// The record's index in its section.
        index: usize,
        /// The record.
        wrapper: Wrapper,
        /// The fat binary its pointer (or the relocation that fills it)
        /// leads to, if found.
        target: Option<WrapperTarget<'data>>,
    },
}

/// Where a wrapper record leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrapperTarget<'data> {
    /// The section holding the fat binary.
    pub section: u32,
    /// The fat binary's offset in that section.
    pub offset: u64,
    /// The container there cut to its extent, or, when none parses, the
    /// rest of the section.
    pub container: &'data [u8],
}

/// Something that could not be read outside any one container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectionError<'data> {
    /// Where.
    pub place: Place<'data>,
    /// For bytes that start no readable container: where they start in the
    /// file (the walk of that section or file stopped there).
    pub offset: Option<u64>,
    /// What is wrong.
    pub error: Error,
}

/// Inspects `data`: an archive's members, an ELF file's offload sections, or
/// containers back to back. Compressed bundles and compressed OffloadBinaries
/// are decoded under `decoding.max_size` each, one at a time, and a
/// compressed bundle's hash always computed; a wrong one is a
/// [`ContainerError`] only with `decoding.verify_hash`.
pub fn inspect(data: &[u8], decoding: Decoding) -> Inspection<'_> {
    inspect_to(data, decoding, Depth::Whole)
}

/// How far [`inspect_to`] decodes a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Only its header and entry table (a few KiB of the stream): the
    /// entries' IDs, offsets and sizes, no hash
    /// ([`InspectedContainer::computed_hash`] is `None`) and no code-object
    /// check for payloads past the table.
    Tables,
    /// Whole: its hash computed and every code object checked.
    Whole,
}

/// [`inspect`], decoding compressed bundles as far as `depth` says.
pub fn inspect_to(data: &[u8], decoding: Decoding, depth: Depth) -> Inspection<'_> {
    let mut walk = Walk {
        depth,
        found: Inspection::default(),
        options: decoding.options(true),
        verify_hash: decoding.verify_hash,
    };
    walk.file(None, None, data);
    walk.found
}

struct Walk<'data> {
    depth: Depth,
    found: Inspection<'data>,
    options: DecompressOptions,
    verify_hash: bool,
}

impl<'data> Walk<'data> {
    /// Any file: the input (`name` `None`) or a member of archive `parent`.
    fn file(&mut self, name: Option<&'data [u8]>, parent: Option<usize>, data: &'data [u8]) {
        let file = self.found.files.len();
        let kind = FileKind::detect(data);
        self.found.files.push(InspectedFile {
            name,
            parent,
            kind,
            format: objdump_format(kind, data),
        });
        let place = Place {
            file,
            section: None,
        };
        match kind {
            FileKind::Archive => self.archive(place, data),
            FileKind::Elf(_) | FileKind::Coff(_) => self.object(place, data),
            // Read by crate::cuda_fatbin (host_fatbins), not as containers.
            FileKind::CudaFatbin => {}
            _ => self.containers(place, data, 0),
        }
    }

    fn error(&mut self, place: Place<'data>, offset: Option<u64>, error: Error) {
        self.found.errors.push(InspectionError {
            place,
            offset,
            error,
        });
    }

    fn note(&mut self, place: Place<'data>, kind: NoteKind<'data>) {
        self.found.notes.push(Note { place, kind });
    }

    /// Every member, up to a damaged member header.
    fn archive(&mut self, place: Place<'data>, data: &'data [u8]) {
        let archive = match Archive::parse(data) {
            Ok(archive) => archive,
            Err(e) => return self.error(place, None, e),
        };
        for member in archive.members() {
            match member {
                Ok(member) => self.file(Some(member.name()), Some(place.file), member.data()),
                Err(e) => self.error(place, None, e),
            }
        }
    }

    /// Every offload section of an ELF or COFF file; a damaged section
    /// header is an error for that section only.
    fn object(&mut self, place: Place<'data>, data: &'data [u8]) {
        let object = match ObjectFile::parse(data) {
            Ok(object) => object,
            Err(e) => return self.error(place, None, e),
        };
        if let ObjectFile::Elf(elf) = &object {
            if let Err(e) = elf.check_null_section() {
                self.error(place, None, e);
            }
        }
        for found in offload_sections(&object) {
            let found = match found {
                Ok(found) => found,
                Err(e) => {
                    self.error(place, None, e);
                    continue;
                }
            };
            let section = found.section;
            let here = Place {
                section: Some(section.name()),
                ..place
            };
            let (offset, size) = (section.offset(), to_u64(section.data().len()));
            match found.kind {
                SectionKind::OffloadBinaries | SectionKind::HipFatbin => {
                    self.containers(here, section.data(), offset)
                }
                SectionKind::BundleEntry => {
                    let name = section.name();
                    let id = name.strip_prefix(&BUNDLE_MAGIC[..]).unwrap_or(name);
                    self.note(here, NoteKind::BundleEntry { id, offset, size });
                }
                SectionKind::NvFatbin | SectionKind::NvRelFatbin => {
                    self.note(here, NoteKind::NvFatbin { offset, size })
                }
                SectionKind::HipWrappers | SectionKind::CudaWrappers => {
                    for (index, (wrapper, target)) in
                        wrapper_targets(&object, &section).into_iter().enumerate()
                    {
                        let target =
                            target.map(|(section, offset)| wrapper_target(section, offset));
                        let kind = NoteKind::Wrapper {
                            index,
                            wrapper,
                            target,
                        };
                        self.note(here, kind);
                    }
                }
            }
        }
    }

    /// The containers back to back in `data`, which starts `base` bytes into
    /// its file; the walk stops at the first bytes that start none.
    fn containers(&mut self, place: Place<'data>, data: &'data [u8], base: u64) {
        let mut end = 0usize;
        for found in Containers::new(data) {
            match found {
                Ok((offset, container)) => {
                    end = usize::try_from(offset)
                        .unwrap_or(usize::MAX)
                        .saturating_add(container.data().len());
                    let inspected = self.container(place, base.saturating_add(offset), container);
                    self.found.containers.push(inspected);
                }
                Err(error) => {
                    // Where the walk stopped: past the zero padding after the
                    // last container.
                    let rest = data.get(end..).unwrap_or_default();
                    let start = end.saturating_add(rest.iter().take_while(|&&b| b == 0).count());
                    let offset = base.saturating_add(to_u64(start));
                    self.error(place, Some(offset), error);
                }
            }
        }
    }

    fn container(
        &self,
        place: Place<'data>,
        offset: u64,
        container: Container<'data>,
    ) -> InspectedContainer<'data> {
        let mut inspected = InspectedContainer {
            place,
            offset,
            container,
            computed_hash: None,
            entries: Vec::new(),
            images: Vec::new(),
            error: None,
        };
        let read = match container {
            Container::Bundle(bundle) => {
                entries(&bundle, Cow::Borrowed).map(|entries| inspected.entries = entries)
            }
            Container::Compressed(compressed) => self.decode(&compressed, &mut inspected),
            Container::OffloadBinary(binary) => self
                .images(&binary)
                .map(|images| inspected.images = images)
                .map_err(ContainerError::Unreadable),
        };
        inspected.error = read.err();
        inspected
    }

    /// Decodes a compressed bundle, hashes what it decoded to, and reads its
    /// entries (copying their IDs: the decoded bytes are dropped).
    fn decode(
        &self,
        compressed: &CompressedBundle<'data>,
        inspected: &mut InspectedContainer<'data>,
    ) -> core::result::Result<(), ContainerError> {
        let options = DecompressOptions {
            verify_hash: false,
            ..self.options
        };
        if self.depth == Depth::Tables {
            let table = compressed
                .decompress_table(&options)
                .map_err(ContainerError::Unreadable)?;
            let parsed = Bundle::parse_table(&table, compressed.uncompressed_size())
                .map_err(ContainerError::MalformedBundle)?;
            inspected.entries = entries(&parsed, |id: &[u8]| Cow::Owned(id.to_vec()))?;
            return Ok(());
        }
        decode_whole(compressed, &options, self.verify_hash, inspected)
    }

    /// The images of an OffloadBinary (decompressed first if compressed);
    /// those of a compressed one have their strings copied.
    fn images(&self, binary: &OffloadBinary<'data>) -> Result<Vec<InspectedImage<'data>>> {
        if !binary.is_compressed() {
            return Ok(images(binary, Cow::Borrowed));
        }
        let inflated = binary.decompress(&self.options)?;
        let inner = OffloadBinary::parse(&inflated)?;
        Ok(images(&inner, |s: &[u8]| Cow::Owned(s.to_vec())))
    }
}

/// A compressed bundle decoded whole: its hash computed (and checked if
/// `verify_hash`), its entries read (their IDs copied: the decoded bytes
/// are dropped) and their code objects checked.
fn decode_whole<'data>(
    compressed: &CompressedBundle<'data>,
    options: &DecompressOptions,
    verify_hash: bool,
    inspected: &mut InspectedContainer<'data>,
) -> core::result::Result<(), ContainerError> {
    let (bundle, computed) = compressed
        .decompress_hashed(options, true)
        .map_err(ContainerError::Unreadable)?;
    let computed = computed.unwrap_or_else(|| truncated_md5(&bundle));
    inspected.computed_hash = Some(computed);
    let parsed = Bundle::parse(&bundle).map_err(ContainerError::MalformedBundle)?;
    inspected.entries = entries(&parsed, |id: &[u8]| Cow::Owned(id.to_vec()))?;
    let stored = compressed.hash();
    if verify_hash && computed != stored {
        return Err(ContainerError::HashMismatch { stored, computed });
    }
    Ok(())
}

/// [`inspect`] on `threads` threads: the file walked as [`Depth::Tables`]
/// walks it, then every compressed bundle decoded whole (as
/// [`Depth::Whole`] decodes it: the same report) by whichever thread is
/// free, each admitted by its declared decompressed size (and its
/// compressed one) under a budget of `budget` bytes (`None`:
/// [`default_for`](crate::compressed::MemoryBudget::default_for) the
/// largest; a thread that waits for room holds none; a bundle larger than
/// the budget is decoded alone), and `done_with` told of each bundle's input
/// bytes once it is decoded, so that a caller who mapped the file can let
/// go of their pages. Memory is bounded by the budget, not by the file.
#[cfg(feature = "std")]
pub fn inspect_parallel<'data>(
    data: &'data [u8],
    decoding: Decoding,
    threads: usize,
    budget: Option<u64>,
    done_with: &(dyn Fn(&'data [u8]) + Sync),
) -> Inspection<'data> {
    use crate::compressed::MemoryBudget;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let mut found = inspect_to(data, decoding, Depth::Tables);
    let options = decoding.options(false);
    let todo: Vec<Mutex<&mut InspectedContainer<'data>>> = found
        .containers
        .iter_mut()
        .filter(|c| matches!(c.container, Container::Compressed(_)))
        .map(Mutex::new)
        .collect();
    let largest = todo
        .iter()
        .filter_map(|slot| match slot.lock().ok()?.container {
            Container::Compressed(c) => Some(c.uncompressed_size().min(decoding.max_size)),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let budget = MemoryBudget::new(budget.unwrap_or_else(|| MemoryBudget::default_for(largest)));
    let next = AtomicUsize::new(0);
    let work = || {
        while let Some(slot) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
            let mut guard = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let inspected = &mut **guard;
            let Container::Compressed(compressed) = inspected.container else {
                continue;
            };
            // Its decoded bytes, and the compressed ones read meanwhile.
            let room =
                MemoryBudget::room_for(compressed.uncompressed_size().min(decoding.max_size))
                    .saturating_add(crate::bytes::to_u64(compressed.data().len()));
            budget.take(room);
            // As the whole walk would have found it: its table's reading
            // (or damage) replaced.
            inspected.entries.clear();
            let decoded = decode_whole(&compressed, &options, decoding.verify_hash, inspected);
            budget.give(room);
            inspected.error = decoded.err();
            done_with(compressed.data());
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.clamp(1, todo.len().max(1)) {
            scope.spawn(work);
        }
        work();
    });
    drop(todo);
    found
}

/// A bundle's entries as [`inspect`] reports them: each ID borrowed, each
/// payload that is an AMDGPU code object checked against its ID; the first
/// damaged descriptor is the error. For callers that hold the bundle (a
/// decoded one, or one they found themselves) and want what the report says
/// of it.
///
/// ```
/// use clangoffload::inspect::bundle_entries;
/// use clangoffload::Bundle;
///
/// let bundle = Bundle::parse(include_bytes!("../../tests/fixtures/llvm22/clang-hip.fatbin"))?;
/// let entries = bundle_entries(&bundle)?;
/// let device = entries.iter().find(|e| e.id.ends_with(b"--gfx906")).unwrap();
/// assert!(device.code_object.is_some_and(|c| c.id_agrees));
/// assert!(entries.iter().all(|e| e.id.starts_with(b"host") != e.code_object.is_some()));
/// # Ok::<(), clangoffload::Error>(())
/// ```
pub fn bundle_entries<'data>(bundle: &Bundle<'data>) -> Result<Vec<InspectedEntry<'data>>> {
    entries(bundle, Cow::Borrowed).map_err(|error| match error {
        ContainerError::MalformedBundle(e) | ContainerError::Unreadable(e) => e,
        // `entries` reports malformed descriptors only.
        ContainerError::HashMismatch { stored, computed } => {
            Error::new(crate::ErrorKind::HashMismatch { stored, computed }, 0)
        }
    })
}

/// A bundle's entries, each ID kept as `keep` says, each payload that is an
/// AMDGPU code object checked against its ID.
fn entries<'b, 'data>(
    bundle: &Bundle<'b>,
    keep: impl Fn(&'b [u8]) -> Cow<'data, [u8]>,
) -> core::result::Result<Vec<InspectedEntry<'data>>, ContainerError> {
    bundle
        .entries()
        .map(|entry| {
            let entry = entry.map_err(ContainerError::MalformedBundle)?;
            let code_object = ElfFile::parse(entry.payload())
                .ok()
                .and_then(|elf| AmdgpuTarget::from_header(elf.header()))
                .map(|target| CodeObject {
                    target,
                    id_agrees: entry.id().ends_with(alloc::format!("-{target}").as_bytes()),
                });
            Ok(InspectedEntry {
                id: keep(entry.id()),
                offset: entry.offset(),
                size: entry.size(),
                code_object,
            })
        })
        .collect()
}

/// A binary's images, each string kept as `keep` says.
fn images<'b, 'data>(
    binary: &OffloadBinary<'b>,
    keep: impl Fn(&'b [u8]) -> Cow<'data, [u8]>,
) -> Vec<InspectedImage<'data>> {
    binary
        .entries()
        .map(|entry| InspectedImage {
            version: binary.version(),
            image_kind: entry.image_kind(),
            offload_kind: entry.offload_kind(),
            size: to_u64(entry.image().len()),
            strings: entry
                .strings()
                .map(|s| (keep(s.key), keep(s.value)))
                .collect(),
        })
        .collect()
}

/// The fat binary at `offset` of `section`: the container there cut to its
/// extent, or the rest of the section when none parses.
fn wrapper_target(section: Section<'_>, offset: u64) -> WrapperTarget<'_> {
    let rest = usize::try_from(offset)
        .ok()
        .and_then(|at| section.data().get(at..))
        .unwrap_or_default();
    WrapperTarget {
        section: section.index(),
        offset,
        container: parse_container(rest).map_or(rest, |c| c.data()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::WrapperKind;

    const DEFAULT: Decoding = Decoding {
        max_size: crate::Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE,
        verify_hash: true,
        verbose: false,
    };
    const FATBIN: &[u8] = include_bytes!("../../tests/fixtures/compressed/concat/hip.hip_fatbin");

    fn offsets(found: &Inspection<'_>) -> Vec<u64> {
        found.containers.iter().map(|c| c.offset).collect()
    }

    /// Decoding on several threads under any budget reports what the
    /// whole walk reports, damage included, and tells of every compressed
    /// bundle's bytes once.
    #[cfg(feature = "std")]
    #[test]
    fn parallel_decoding_under_a_budget_reports_what_the_whole_walk_does() {
        let mut damaged = FATBIN.to_vec();
        // The second bundle's stream and the third's stored hash.
        damaged[8192 + 200] ^= 0x5a;
        damaged[16384 + 24] ^= 1;
        let archive = include_bytes!("../../tests/fixtures/archive/gnu-compressed.a");
        for data in [FATBIN, &damaged[..], &archive[..]] {
            let whole = inspect(data, DEFAULT);
            for (threads, total) in [(1, 1), (2, 1), (3, 1 << 20), (4, 1 << 30)] {
                let told = std::sync::Mutex::new(Vec::new());
                let tell = |bytes: &[u8]| told.lock().unwrap().push(bytes.as_ptr() as usize);
                let found = inspect_parallel(data, DEFAULT, threads, Some(total), &tell);
                assert_eq!(found, whole, "{threads} threads, budget {total}");
                let compressed = whole
                    .containers
                    .iter()
                    .filter(|c| matches!(c.container, Container::Compressed(_)))
                    .count();
                assert_eq!(told.lock().unwrap().len(), compressed);
            }
        }
    }

    #[test]
    fn compressed_bundles_back_to_back_are_decoded_and_hashed() {
        let found = inspect(FATBIN, DEFAULT);
        assert_eq!(offsets(&found), [0, 8192, 16384, 24576]);
        for c in &found.containers[..3] {
            let Container::Compressed(header) = c.container else {
                panic!("{c:?}")
            };
            assert_eq!(c.computed_hash, Some(header.hash()));
            assert_eq!(c.error, None);
        }
        assert!(matches!(
            found.containers[3].container,
            Container::Bundle(_)
        ));
        let counts: Vec<usize> = found.containers.iter().map(|c| c.entries.len()).collect();
        assert_eq!(counts, [4, 3, 3, 3]);
        // IDs of decoded bundles are copies; those of the plain one borrow.
        assert!(matches!(found.containers[0].entries[0].id, Cow::Owned(_)));
        assert!(matches!(
            found.containers[3].entries[0].id,
            Cow::Borrowed(_)
        ));
        assert_eq!(found.files.len(), 1);
        assert!(found.notes.is_empty() && found.errors.is_empty());
    }

    #[test]
    fn damage_is_reported_and_the_walk_goes_on() {
        let mut fatbin = FATBIN.to_vec();
        fatbin[8192 + 16] ^= 0xff; // the second container's hash (v2: at 16)
        let found = inspect(&fatbin, DEFAULT);
        assert_eq!(found.containers.len(), 4);
        let error = found.containers[1].error.as_ref().unwrap();
        assert!(matches!(error, ContainerError::HashMismatch { .. }));
        assert!(alloc::format!("{error}").starts_with("hash mismatch: stored 0x"));
        assert_eq!(found.containers[2].error, None);
        // Not verified: the mismatch is only data.
        let lenient = Decoding {
            verify_hash: false,
            ..DEFAULT
        };
        assert_eq!(inspect(&fatbin, lenient).containers[1].error, None);

        // A header that cannot be read ends the walk with a located error.
        fatbin[16384 + 4] = 9;
        let found = inspect(&fatbin, DEFAULT);
        assert_eq!(found.containers.len(), 2);
        let [error] = &found.errors[..] else {
            panic!("{:?}", found.errors)
        };
        assert_eq!(error.offset, Some(0x4000));
        assert!(matches!(
            error.error.kind(),
            crate::ErrorKind::UnsupportedVersion { version: 9 }
        ));
    }

    #[test]
    fn a_decoding_limit_is_a_container_error() {
        let small = Decoding {
            max_size: 1000,
            ..DEFAULT
        };
        let found = inspect(FATBIN, small);
        assert!(matches!(
            found.containers[0].error,
            Some(ContainerError::Unreadable(_))
        ));
        assert_eq!(found.containers[3].error, None);
    }

    #[test]
    fn host_objects_are_read_section_by_section() {
        let found = inspect(
            include_bytes!("../../tests/fixtures/offload/hip.o"),
            DEFAULT,
        );
        let [bundle] = &found.containers[..] else {
            panic!("{:?}", found.containers)
        };
        assert_eq!(bundle.offset, 0x1000);
        let checked: Vec<_> = bundle
            .entries
            .iter()
            .map(|e| e.code_object.map(|c| (c.target.processor, c.id_agrees)))
            .collect();
        assert_eq!(
            checked,
            [None, Some(("gfx906", true)), Some(("gfx90a", true))]
        );
        let [note] = &found.notes[..] else {
            panic!("{:?}", found.notes)
        };
        assert_eq!(note.place.section, Some(&b".hipFatBinSegment"[..]));
        let NoteKind::Wrapper {
            wrapper, target, ..
        } = note.kind
        else {
            panic!("{note:?}")
        };
        assert_eq!(wrapper.kind, WrapperKind::Hip);
        assert_eq!(target.map(|t| t.container.len()), Some(18_160));
        assert_eq!(found.files[0].objdump_format(), Some("elf64-x86-64"));

        let cuda = inspect(
            include_bytes!("../../tests/fixtures/offload/cuda.o"),
            DEFAULT,
        );
        assert!(cuda
            .notes
            .iter()
            .any(|n| matches!(n.kind, NoteKind::NvFatbin { .. })));
        assert!(cuda.notes.iter().any(|n| matches!(
            n.kind,
            NoteKind::Wrapper { wrapper, .. } if wrapper.kind == WrapperKind::Cuda
        )));

        let rdc = inspect(
            include_bytes!("../../tests/fixtures/offload/hip-rdc.o"),
            DEFAULT,
        );
        assert!(rdc.notes.iter().any(|n| matches!(
            n.kind,
            NoteKind::BundleEntry {
                id: b"hip-amdgcn-amd-amdhsa--gfx906",
                ..
            }
        )));
    }

    #[test]
    fn archives_are_read_member_by_member() {
        let found = inspect(
            include_bytes!("../../tests/fixtures/offload/offload.a"),
            DEFAULT,
        );
        assert_eq!(found.files[0].kind, FileKind::Archive);
        assert!(found.files[1..].iter().all(|f| f.parent == Some(0)));
        let omp = found
            .files
            .iter()
            .position(|f| f.name == Some(&b"omp.o"[..]))
            .unwrap();
        let images: Vec<_> = found
            .containers
            .iter()
            .filter(|c| c.place.file == omp)
            .flat_map(|c| &c.images)
            .collect();
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].offload_kind, OffloadKind::OpenMp);
        assert!(images[0]
            .strings
            .iter()
            .any(|(k, v)| &**k == b"arch" && &**v == b"gfx90a"));
    }

    #[test]
    fn a_damaged_offload_binary_is_a_container_error() {
        let mut binary = include_bytes!("../../tests/fixtures/offload/single.offbin").to_vec();
        binary[48..56].copy_from_slice(&(1u64 << 60).to_le_bytes());
        let found = inspect(&binary, DEFAULT);
        // The container walk already refuses it.
        assert!(found.containers.is_empty());
        assert_eq!(found.errors[0].offset, Some(0));

        let multi = inspect(
            include_bytes!("../../tests/fixtures/offload/multi.offbin"),
            DEFAULT,
        );
        let images: usize = multi.containers.iter().map(|c| c.images.len()).sum();
        assert_eq!(images, 9);
        assert_eq!(multi.files[0].objdump_format(), None);
    }
}
