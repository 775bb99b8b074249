//! Extracting images: `llvm-offload-binary <file> --image=<filter>...`.

use alloc::string::String;
use alloc::vec::Vec;

use super::images::{list, Image, Origin};
use super::{file_name, stem, PackagerError};
use crate::archive::{check_elf_member, write_archive_indexed};
use crate::bundler::{Note, Observer, Piece, Plan, Warning};
use crate::offload_binary::image_args::{image_arguments, ImageArgument};
use crate::offload_binary::OffloadKind;
use crate::FileKind;

/// What an output holds.
enum Content {
    /// One image.
    Image(Located),
    /// An archive the job wrote.
    Archive(Vec<u8>),
}

/// Where bytes are: the input, or one of the plan's buffers (a decompressed
/// binary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Input,
    Buffer(usize),
}

/// A range of bytes of the input or of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Located {
    place: Place,
    offset: u64,
    len: u64,
}

/// Fails, as LLVM's archive writer does, for an image it takes for ELF but
/// cannot index.
fn check_indexable(image: &Image<'_>, input_name: &[u8]) -> Result<(), PackagerError> {
    check_elf_member(image.entry.image()).map_err(|error| {
        let located = Located::image(image);
        PackagerError::Unindexable {
            name: String::from_utf8_lossy(image.member.unwrap_or(input_name)).into_owned(),
            error: match located.place {
                Place::Input => error.shifted(located.offset),
                Place::Buffer(_) => error,
            },
        }
    })
}

impl Located {
    /// Where an image of [`list`] is.
    fn image(image: &Image<'_>) -> Self {
        let (place, base) = match image.origin {
            Origin::Input(binary) => (Place::Input, binary),
            Origin::Buffer(buffer) => (Place::Buffer(buffer), 0),
        };
        Located {
            place,
            offset: base.saturating_add(image.entry.image_offset()),
            len: crate::bytes::to_u64(image.entry.image().len()),
        }
    }

    fn bytes<'a>(&self, data: &'a [u8], buffers: &'a [Vec<u8>]) -> &'a [u8] {
        let whole = match self.place {
            Place::Input => data,
            Place::Buffer(i) => buffers.get(i).map_or(&[][..], Vec::as_slice),
        };
        crate::bytes::range(whole, self.offset, self.len).unwrap_or_default()
    }
}

/// Plans what llvm-offload-binary 22 writes for `data` (named `input_name`)
/// and each `--image` filter in `filters`, in order. A filter's `key=value`
/// pairs must all hold for an image to match: `file` is not compared, `kind`
/// compares the offload kind, and a key the image lacks reads as empty. For
/// each filter that matches images:
/// - with `archive` (`--archive`), one output named after its `file`, an
///   archive of the images with LLVM's symbol index, each member named after
///   the archive member or input it came from; a filter without `file` is
///   [`PackagerError::ArchiveWithoutFile`];
/// - else with a `file`, one output of that name: the last image matched
///   (with [`Warning::MultipleMatches`] if there are several);
/// - else one output per image, named `<input stem>-<triple>-<arch>.<i>.<kind
///   extension>` (`i` counting the filter's matches), with `/` and NUL
///   (which LLVM writes as they are) replaced by `_`.
///
/// LLVM reads the filters one at a time, writing each one's files before it
/// reads the next: to fail as it does, after the files of earlier filters,
/// call this once per filter.
///
/// With no filter, every image is extracted, as llvm-offload-binary does
/// after LLVM 22 (22 itself writes nothing): an image that is itself an
/// OffloadBinary is opened and its images extracted in its place, depth
/// first; each file is named `<input stem>-<triple>[-<arch>].<i>.<kind
/// extension>` (no `-` for an empty arch), `i` counting the files. A nested
/// binary that cannot be read is an error, as upstream makes it; so are
/// nested images that overlap so that extracting them all would write more
/// than the input holds ([`PackagerError::OverlappingImages`]; upstream
/// recurses without end into an image that is its own binary).
pub fn extract<'data>(
    data: &'data [u8],
    input_name: &[u8],
    filters: &[&[u8]],
    archive: bool,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, PackagerError> {
    let images = list(data)?;
    if filters.is_empty() {
        return extract_all(data, input_name, images);
    }
    let mut outputs: Vec<(Vec<u8>, Content)> = Vec::new();
    {
        let all: Vec<Image<'_>> = images.iter().collect();
        for filter in filters {
            let filter = image_arguments(filter);
            let matched: Vec<&Image<'_>> = all
                .iter()
                .filter(|i| matches(i, input_name, &filter))
                .collect();
            if matched.is_empty() {
                continue;
            }
            let file = filter
                .iter()
                .find(|a| a.key == b"file")
                .map(|a| a.value.clone());
            let content = |image: &Image<'_>| Content::Image(Located::image(image));
            if archive {
                let file = file.ok_or(PackagerError::ArchiveWithoutFile)?;
                for image in &matched {
                    check_indexable(image, input_name)?;
                }
                let members: Vec<(&[u8], &[u8])> = matched
                    .iter()
                    .map(|i| (i.member.unwrap_or(input_name), i.entry.image()))
                    .collect();
                let bytes = write_archive_indexed(&members).map_err(PackagerError::Writer)?;
                outputs.push((file, Content::Archive(bytes)));
            } else if let Some(file) = file {
                if matched.len() > 1 {
                    observer.note(Note::Warning(Warning::MultipleMatches {
                        file: String::from_utf8_lossy(&file).into_owned(),
                    }));
                }
                if let Some(last) = matched.last() {
                    outputs.push((file, content(last)));
                }
            } else {
                for (index, image) in matched.iter().enumerate() {
                    let name = Naming::of(&image.entry).name(input_name, index, true);
                    outputs.push((name, content(image)));
                }
            }
        }
    }
    plan(data, outputs, images.into_buffers())
}

/// The plan that writes `outputs`, taking over `buffers`.
fn plan(
    data: &[u8],
    outputs: Vec<(Vec<u8>, Content)>,
    buffers: Vec<Vec<u8>>,
) -> Result<Plan<'_>, PackagerError> {
    let mut plan = Plan::new(outputs.len(), buffers).map_err(PackagerError::Writer)?;
    for (index, (name, content)) in outputs.into_iter().enumerate() {
        let piece = match content {
            Content::Image(Located {
                place: Place::Input,
                offset,
                len,
            }) => Piece::Input {
                input: 0,
                offset,
                bytes: crate::bytes::range(data, offset, len).unwrap_or_default(),
            },
            Content::Image(Located {
                place: Place::Buffer(buffer),
                offset,
                len,
            }) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let end = usize::try_from(len).map_or(usize::MAX, |l| start.saturating_add(l));
                Piece::Made {
                    buffer,
                    range: start..end,
                }
            }
            Content::Archive(bytes) => plan.add_buffer(bytes),
        };
        plan.push(index, piece);
        plan.name(index, name);
    }
    Ok(plan)
}

/// An image found while extracting everything: where it is, what names it,
/// and the size of the binary it is in.
struct Found {
    at: Located,
    naming: Naming,
    binary_len: u64,
}

/// Every image of `images`, nested binaries opened (see [`extract`]).
fn extract_all<'data>(
    data: &'data [u8],
    input_name: &[u8],
    images: super::Images<'data>,
) -> Result<Plan<'data>, PackagerError> {
    let (mut plan, namings) = leaves(data, images)?;
    for (index, naming) in namings.iter().enumerate() {
        plan.name(index, naming.name(input_name, index, false));
    }
    Ok(plan)
}

/// Every image in `data` (an OffloadBinary, binaries back to back, an ELF
/// file or an archive of them), nested binaries opened, as what
/// llvm-offload-binary after 22 writes with no filter: one unnamed output per
/// image, with what names it.
pub(crate) fn every_image(data: &[u8]) -> Result<(Plan<'_>, Vec<Naming>), PackagerError> {
    leaves(data, list(data)?)
}

/// The images that hold no binary, in file order, one output each. Depth
/// first with a stack of our own: nesting cannot exhaust the call stack.
fn leaves<'data>(
    data: &'data [u8],
    images: super::Images<'data>,
) -> Result<(Plan<'data>, Vec<Naming>), PackagerError> {
    let mut stack: Vec<Found> = images
        .iter()
        .map(|image| Found {
            at: Located::image(&image),
            naming: Naming::of(&image.entry),
            binary_len: u64::MAX,
        })
        .collect();
    stack.reverse();
    let mut buffers = images.into_buffers();
    let inflated = total_len(&buffers);
    // What the input holds, with every binary decompressed from it; what is
    // left of the decompression budget for the input as a whole.
    let mut holds = crate::bytes::to_u64(data.len()).saturating_add(inflated);
    let mut budget =
        crate::compressed::Limits::DEFAULT_MAX_UNCOMPRESSED_SIZE.saturating_sub(inflated);
    let too_large = |written, holds| PackagerError::OverlappingImages { written, holds };
    // A binary or an entry takes at least 40 bytes of a file that is not
    // hostile: more visits than that mean overlapping images.
    let mut visits = 0u64;
    let (mut outputs, mut namings, mut written) = (Vec::new(), Vec::new(), 0u64);
    while let Some(found) = stack.pop() {
        visits = visits.saturating_add(1);
        if visits > (holds / 32).saturating_add(16) {
            return Err(too_large(written, holds));
        }
        let bytes = found.at.bytes(data, &buffers);
        if FileKind::detect(bytes) != FileKind::OffloadBinary {
            written = written.saturating_add(found.at.len);
            if written > holds {
                return Err(too_large(written, holds));
            }
            outputs.push((Vec::new(), Content::Image(found.at)));
            namings.push(found.naming);
            continue;
        }
        if found.at.len >= found.binary_len {
            // The image is the binary that holds it.
            return Err(too_large(u64::MAX, holds));
        }
        let (inner, inflated) = nested(bytes, found.at, buffers.len(), budget)?;
        let added = total_len(&inflated);
        holds = holds.saturating_add(added);
        budget = budget.saturating_sub(added);
        buffers.extend(inflated);
        stack.extend(inner.into_iter().rev());
    }
    Ok((plan(data, outputs, buffers)?, namings))
}

/// The images of the binaries back to back in `bytes` (an image at `at`),
/// in order, and the binaries decompressed for them, to be buffers from
/// `next_buffer` on (`budget` bytes at most together).
fn nested(
    bytes: &[u8],
    at: Located,
    next_buffer: usize,
    budget: u64,
) -> Result<(Vec<Found>, Vec<Vec<u8>>), PackagerError> {
    let (mut found, mut inflated) = (Vec::new(), Vec::new());
    for item in crate::offload_binary::binaries(bytes) {
        let shifted = |e: crate::Error| PackagerError::Binary(e.shifted(at.offset));
        let (offset, binary) = item.map_err(shifted)?;
        let base = at.offset.saturating_add(offset);
        let shifted = |e: crate::Error| PackagerError::Binary(e.shifted(base));
        let (place, base, whole) = if binary.is_compressed() {
            let mut options = crate::DecompressOptions::default();
            options.limits.max_uncompressed_size = budget.saturating_sub(total_len(&inflated));
            inflated.push(binary.decompress(&options).map_err(shifted)?);
            let index = inflated.len().saturating_sub(1);
            let bytes = inflated.get(index).map_or(&[][..], Vec::as_slice);
            (Place::Buffer(next_buffer.saturating_add(index)), 0, bytes)
        } else {
            (at.place, base, binary.data())
        };
        let parsed = crate::OffloadBinary::parse(whole).map_err(shifted)?;
        for entry in parsed.entries() {
            found.push(Found {
                at: Located {
                    place,
                    offset: base.saturating_add(entry.image_offset()),
                    len: crate::bytes::to_u64(entry.image().len()),
                },
                naming: Naming::of(&entry),
                binary_len: crate::bytes::to_u64(whole.len()),
            });
        }
    }
    Ok((found, inflated))
}

/// Whether `image` passes every `key=value` of `filter`, as LLVM 22 matches,
/// and, as later LLVM does, `member` naming the archive member (or, outside
/// an archive, the input file) it is in.
fn matches(image: &Image<'_>, input_name: &[u8], filter: &[ImageArgument<'_>]) -> bool {
    filter.iter().all(|arg| match arg.key {
        b"file" => true,
        b"kind" => image.entry.offload_kind() == OffloadKind::from_name(&arg.value),
        b"member" => file_name(image.member.unwrap_or(input_name)) == arg.value.as_slice(),
        key => image.entry.string(key).unwrap_or_default() == arg.value.as_slice(),
    })
}

/// The bytes of `buffers` together.
fn total_len(buffers: &[Vec<u8>]) -> u64 {
    buffers
        .iter()
        .map(|b| crate::bytes::to_u64(b.len()))
        .fold(0, u64::saturating_add)
}

/// What an extracted image's name is made of.
pub(crate) struct Naming {
    pub(crate) triple: Vec<u8>,
    pub(crate) arch: Vec<u8>,
    pub(crate) extension: &'static str,
}

impl Naming {
    fn of(entry: &crate::OffloadEntry<'_>) -> Self {
        Naming {
            triple: entry.triple().unwrap_or_default().to_vec(),
            arch: entry.arch().unwrap_or_default().to_vec(),
            extension: entry.image_kind().extension(),
        }
    }

    /// `<input stem>-<triple>-<arch>.<index>.<kind extension>`, as LLVM 22
    /// names extracted images (after 22, with no `-<arch>` for an empty arch
    /// unless `always_arch`), with `/` and NUL replaced by `_` so that the
    /// name stays in its directory.
    fn name(&self, input_name: &[u8], index: usize, always_arch: bool) -> Vec<u8> {
        let dash: &[u8] = if always_arch || !self.arch.is_empty() {
            b"-"
        } else {
            b""
        };
        let mut name = Vec::new();
        for part in [
            stem(input_name),
            b"-",
            &self.triple,
            dash,
            &self.arch,
            b".",
            alloc::format!("{index}").as_bytes(),
            b".",
            self.extension.as_bytes(),
        ] {
            name.extend(
                part.iter()
                    .map(|&b| if b == b'/' || b == 0 { b'_' } else { b }),
            );
        }
        name
    }
}
