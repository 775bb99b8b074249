//! Extracting images: `llvm-offload-binary <file> --image=<filter>...`.

use alloc::string::String;
use alloc::vec::Vec;

use super::images::{list, Image, Origin};
use super::{stem, PackagerError};
use crate::archive::write_archive_indexed;
use crate::bundler::{Note, Observer, Piece, Plan, Warning};
use crate::offload_binary::image_args::{image_arguments, ImageArgument};
use crate::offload_binary::OffloadKind;

/// What an output holds.
enum Content {
    /// One image.
    Image(Origin, u64, u64),
    /// An archive the job wrote.
    Archive(Vec<u8>),
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
/// call this once per filter. With no filter, the plan is empty but the
/// input is read (and its errors reported) all the same.
pub fn extract<'data>(
    data: &'data [u8],
    input_name: &[u8],
    filters: &[&[u8]],
    archive: bool,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, PackagerError> {
    let images = list(data)?;
    let mut outputs: Vec<(Vec<u8>, Content)> = Vec::new();
    {
        let all: Vec<Image<'_>> = images.iter().collect();
        for filter in filters {
            let filter = image_arguments(filter);
            let matched: Vec<&Image<'_>> = all.iter().filter(|i| matches(i, &filter)).collect();
            if matched.is_empty() {
                continue;
            }
            let file = filter
                .iter()
                .find(|a| a.key == b"file")
                .map(|a| a.value.clone());
            let content = |image: &Image<'_>| {
                let len = crate::bytes::to_u64(image.entry.image().len());
                Content::Image(image.origin, image.entry.image_offset(), len)
            };
            if archive {
                let file = file.ok_or(PackagerError::ArchiveWithoutFile)?;
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
                    outputs.push((automatic_name(input_name, image, index), content(image)));
                }
            }
        }
    }
    let mut plan =
        Plan::new(outputs.len(), images.into_buffers()).map_err(PackagerError::Writer)?;
    for (index, (name, content)) in outputs.into_iter().enumerate() {
        let piece = match content {
            Content::Image(Origin::Input(binary), offset, len) => {
                let offset = binary.saturating_add(offset);
                Piece::Input {
                    input: 0,
                    offset,
                    bytes: crate::bytes::range(data, offset, len).unwrap_or_default(),
                }
            }
            Content::Image(Origin::Buffer(buffer), offset, len) => {
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

/// Whether `image` passes every `key=value` of `filter`, as LLVM 22 matches.
fn matches(image: &Image<'_>, filter: &[ImageArgument<'_>]) -> bool {
    filter.iter().all(|arg| match arg.key {
        b"file" => true,
        b"kind" => image.entry.offload_kind() == OffloadKind::from_name(&arg.value),
        key => image.entry.string(key).unwrap_or_default() == arg.value.as_slice(),
    })
}

/// `<input stem>-<triple>-<arch>.<index>.<kind extension>`, as LLVM 22 names
/// extracted images, with `/` and NUL replaced by `_` so that the name stays
/// in its directory.
fn automatic_name(input_name: &[u8], image: &Image<'_>, index: usize) -> Vec<u8> {
    let entry = &image.entry;
    let mut name = Vec::new();
    for part in [
        stem(input_name),
        b"-",
        entry.triple().unwrap_or_default(),
        b"-",
        entry.arch().unwrap_or_default(),
        b".",
        alloc::format!("{index}").as_bytes(),
        b".",
        entry.image_kind().extension().as_bytes(),
    ] {
        name.extend(
            part.iter()
                .map(|&b| if b == b'/' || b == 0 { b'_' } else { b }),
        );
    }
    name
}
