//! Bundling: the file the bundler writes for its inputs and targets.

use alloc::vec::Vec;

use super::targets::{check_targets, Mode};
use super::{report, BundlerError, FileType, Note, Observer, Piece, Plan, Warning};
use crate::bundle::BundleLayout;
use crate::compressed::{compress, CompressOptions, CompressedBundle, CompressionMethod};
use crate::object::ObjectFile;
use crate::object_bundle::{write_object_bundle, HOST_MARKER};
use crate::text_bundle::write_text_bundle;
use crate::FileKind;

/// How to compress a bundle (`-compress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// zlib or zstd.
    pub method: CompressionMethod,
    /// The header version: 2 or 3.
    pub version: u16,
    /// The level; `None` for the method's default.
    pub level: Option<i32>,
}

/// What to bundle.
#[derive(Debug, Clone, Copy)]
pub struct BundleRequest<'a, 'data> {
    /// How `-type` writes the output.
    pub file_type: FileType,
    /// `-targets`, as given.
    pub targets: &'a [&'a str],
    /// The input for each target.
    pub inputs: &'a [&'data [u8]],
    /// `-bundle-align`.
    pub align: u64,
    /// `-compress`, if asked for (ignored for host objects).
    pub compression: Option<Compression>,
}

/// Plans the bundle the bundler writes: output 0 of the plan. With
/// `-type=o` and a host input that is an object file, the host object with
/// one section per target (the host's holding the host marker); otherwise a
/// text bundle for text types, or a binary bundle (each payload at an
/// `align`-aligned offset, read from the inputs without copying),
/// compressed if asked. Errors about the host object are about input
/// `host_input` (see [`host_input`]).
pub fn bundle<'data>(
    request: &BundleRequest<'_, 'data>,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, BundlerError> {
    if request.file_type == FileType::Archive {
        return Err(BundlerError::ArchiveBundling);
    }
    let targets = check_targets(request.targets, Mode::Bundle)?;
    let input = |i: usize| request.inputs.get(i).copied().unwrap_or_default();
    let mut plan = Plan::new(1, Vec::new())?;
    if let Some(host) = host_input(request) {
        let entries: Vec<(&[u8], &[u8])> = targets
            .normalized
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    id.as_bytes(),
                    if i == host { HOST_MARKER } else { input(i) },
                )
            })
            .collect();
        let carrier = input(host);
        if FileKind::detect(carrier) == FileKind::MachO {
            return Err(BundlerError::MachOObject);
        }
        let host = ObjectFile::parse(carrier).map_err(BundlerError::Input)?;
        if matches!(host, ObjectFile::Coff(coff) if coff.is_image()) {
            return Err(BundlerError::CoffObject);
        }
        let object = write_object_bundle(&host, &entries).map_err(BundlerError::Input)?;
        let piece = plan.add_buffer(object);
        plan.push(0, piece);
        return Ok(plan);
    }
    for (i, id) in targets.normalized.iter().enumerate() {
        if let Some(j) = targets
            .normalized
            .get(..i)
            .and_then(|before| before.iter().position(|b| b == id))
        {
            observer.note(Note::Warning(Warning::SameWrittenId {
                first: targets.given.get(j).cloned().unwrap_or_default(),
                second: targets.given.get(i).cloned().unwrap_or_default(),
                written: id.clone(),
            }));
        }
    }
    let entries: Vec<(&[u8], &[u8])> = targets
        .normalized
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_bytes(), input(i)))
        .collect();
    let bundle = if let FileType::Text(comment) = request.file_type {
        write_text_bundle(comment, &entries).map_err(BundlerError::Writer)?
    } else {
        if request.align == 0 {
            return Err(BundlerError::ZeroAlignment);
        }
        let layout = BundleLayout::new(
            entries
                .iter()
                .map(|(id, p)| (*id, crate::bytes::to_u64(p.len()))),
            request.align,
        )
        .map_err(BundlerError::Writer)?;
        if request.compression.is_none() {
            let header = plan.add_buffer(layout.header().to_vec());
            plan.push(0, header);
            let mut at = crate::bytes::to_u64(layout.header().len());
            for (i, (&(_, payload), &offset)) in entries.iter().zip(layout.offsets()).enumerate() {
                plan.push(0, Piece::Zeros(offset.saturating_sub(at)));
                plan.push(
                    0,
                    Piece::Input {
                        input: i,
                        offset: 0,
                        bytes: payload,
                    },
                );
                at = offset.saturating_add(crate::bytes::to_u64(payload.len()));
            }
            return Ok(plan);
        }
        crate::bundle::write_bundle(&entries, request.align).map_err(BundlerError::Writer)?
    };
    let bundle = match request.compression {
        Some(compression) => compress_bundle(&bundle, compression, observer)?,
        None => bundle,
    };
    let piece = plan.add_buffer(bundle);
    plan.push(0, piece);
    Ok(plan)
}

/// The input that carries the entries as sections: with `-type=o`, the host
/// target's input when it is an object file. (With no host target LLVM 22
/// takes input 0 and crashes; a binary bundle is what such inputs need.)
pub fn host_input(request: &BundleRequest<'_, '_>) -> Option<usize> {
    if request.file_type != FileType::Object {
        return None;
    }
    let host = request
        .targets
        .iter()
        .position(|t| t.starts_with("host-"))?;
    let data = request.inputs.get(host)?;
    FileKind::detect(data).is_object().then_some(host)
}

fn compress_bundle(
    bundle: &[u8],
    compression: Compression,
    observer: &mut dyn Observer,
) -> Result<Vec<u8>, BundlerError> {
    observer.note(Note::Compressing);
    let options = CompressOptions {
        version: compression.version,
        method: compression.method,
        level: compression.level,
    };
    let compressed = compress(bundle, &options).map_err(BundlerError::Writer)?;
    if let Ok(header) = CompressedBundle::parse(&compressed) {
        observer.note(Note::Compressed(report::Compression {
            version: header.version(),
            total_size: crate::bytes::to_u64(compressed.len()),
            method: header.method().raw(),
            level: compression
                .level
                .unwrap_or_else(|| CompressOptions::default_level(compression.method)),
            uncompressed_size: crate::bytes::to_u64(bundle.len()),
            compressed_size: crate::bytes::to_u64(header.compressed().len()),
            hash: header.hash(),
        }));
    }
    Ok(compressed)
}
