//! Packaging images: `llvm-offload-binary -o <file> --image=<arguments>...`.

use alloc::string::String;
use alloc::vec::Vec;

use super::{extension, PackagerError};
use crate::offload_binary::image_args::{image_arguments, ImageArgument};
use crate::offload_binary::{write_offload_binary, ImageKind, NewImage, OffloadKind, WriteOptions};
use crate::{CompressionMethod, FileKind};

/// One file to package: the `--image` argument that names it, its name as
/// given, and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct PackageImage<'a> {
    /// The whole `--image` argument (`file=...,triple=...,...`).
    pub argument: &'a [u8],
    /// The file's name as given (one of the argument's `file` values).
    pub file: &'a [u8],
    /// The file's bytes.
    pub data: &'a [u8],
}

/// How to write the package: upstream LLVM's options after LLVM 22's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Format<'a> {
    /// `--format-version` (default 1, what LLVM 22 writes and reads).
    pub version: Option<u32>,
    /// `--compress`: one compressed version 3 binary.
    pub compress: bool,
    /// `--compression-format` (default `zstd`).
    pub compression_format: Option<&'a [u8]>,
    /// `--compression-level` (default: the method's, see
    /// [`WriteOptions::default_level`]).
    pub compression_level: Option<i32>,
}

impl Format<'_> {
    /// The writer's options, once the options are checked: without
    /// `compress`, a version of 1, 2 or 3; with it, version 3 (whatever
    /// `version` says), `zlib` or `zstd`, and a level in the method's range
    /// (zlib 0 to 9, zstd -131072 to 22).
    pub fn write_options(&self) -> Result<WriteOptions, PackagerError> {
        if !self.compress {
            let version = self.version.unwrap_or(1);
            if !(1..=3).contains(&version) {
                return Err(PackagerError::FormatVersion(version));
            }
            return Ok(WriteOptions {
                version,
                compression: None,
            });
        }
        let method = match self.compression_format.unwrap_or(b"zstd") {
            b"zlib" => CompressionMethod::Zlib,
            b"zstd" => CompressionMethod::Zstd,
            other => {
                return Err(PackagerError::CompressionFormat(
                    String::from_utf8_lossy(other).into_owned(),
                ))
            }
        };
        if let Some(level) = self.compression_level {
            let (low, high) = PackagerError::level_range(method);
            if !(low..=high).contains(&level) {
                return Err(PackagerError::CompressionLevel { method, level });
            }
        }
        Ok(WriteOptions {
            version: 3,
            compression: Some((method, self.compression_level)),
        })
    }
}

/// The files an `--image` argument names, in order: the values of its
/// `file` keys (LLVM joins repeated keys with `,` and splits the result at
/// `,`). An argument without one is [`PackagerError::MissingFile`].
pub fn image_files(argument: &[u8]) -> Result<Vec<&[u8]>, PackagerError> {
    let files: Vec<&[u8]> = argument
        .split(|&b| b == b',')
        .filter_map(|part| match part.iter().position(|&b| b == b'=') {
            Some(at) if part.get(..at) == Some(b"file") => part.get(at.saturating_add(1)..),
            None if part == b"file" => Some(&[][..]),
            _ => None,
        })
        .collect();
    if files.is_empty() {
        return Err(PackagerError::MissingFile);
    }
    Ok(files)
}

/// The package llvm-offload-binary writes for `images` (in order), as
/// `format` says (checked first): each image gets its argument's offload
/// kind (`kind`), its other keys but `file` as strings (in the order LLVM
/// 22 writes them), and an image kind from the file's bytes when they are
/// LLVM bitcode, else from its name's extension (`o`, `bc`, `cubin`,
/// `fatbin`, `s`). Version 1 is byte-identical to LLVM 22's output.
pub fn package(images: &[PackageImage<'_>], format: &Format<'_>) -> Result<Vec<u8>, PackagerError> {
    let options = format.write_options()?;
    let arguments: Vec<Vec<ImageArgument<'_>>> =
        images.iter().map(|i| image_arguments(i.argument)).collect();
    let strings: Vec<Vec<(&[u8], &[u8])>> = arguments
        .iter()
        .map(|pairs| {
            pairs
                .iter()
                .filter(|a| a.key != b"file" && a.key != b"kind")
                .map(|a| (a.key, a.value.as_slice()))
                .collect()
        })
        .collect();
    let new: Vec<NewImage<'_>> = images
        .iter()
        .zip(&arguments)
        .zip(&strings)
        .map(|((image, pairs), strings)| NewImage {
            image_kind: if FileKind::detect(image.data) == FileKind::Bitcode {
                ImageKind::Bitcode
            } else {
                ImageKind::from_extension(extension(image.file))
            },
            offload_kind: pairs
                .iter()
                .find(|a| a.key == b"kind")
                .map_or(OffloadKind::None, |a| OffloadKind::from_name(&a.value)),
            flags: 0,
            strings,
            image: image.data,
        })
        .collect();
    write_offload_binary(&new, &options).map_err(PackagerError::Writer)
}
