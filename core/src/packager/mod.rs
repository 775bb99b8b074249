//! llvm-offload-binary's (and clang-offload-packager's) behaviour as data:
//! which inputs hold OffloadBinaries and where, which images an `--image`
//! filter matches, what extracting them writes and under which names, and
//! what packaging writes for a list of `--image` arguments. Every rule LLVM
//! 22's tool applies lives here, so that the C ABI offers the jobs the
//! `clangoffload` tool runs.
//!
//! Extracting returns a bundler [`Plan`](crate::bundler::Plan): one named
//! output per file to write. Writing the files is the caller's: this crate
//! does no I/O.
//!
//! ```
//! use clangoffload::packager::{self, Format, PackageImage};
//!
//! // llvm-offload-binary -o out --image=file=a.o,kind=openmp,triple=t,arch=x
//! let argument = b"file=a.o,kind=openmp,triple=t,arch=x";
//! assert_eq!(packager::image_files(argument)?, [&b"a.o"[..]]);
//! let image = PackageImage { argument, file: b"a.o", data: b"code" };
//! let package = packager::package(&[image], &Format::default())?;
//!
//! // llvm-offload-binary out --image=arch=x: one file, named after the input.
//! let filters: &[&[u8]] = &[b"arch=x"];
//! let plan = packager::extract(&package, b"dir/out", filters, false, &mut ())?;
//! assert_eq!(plan.output_name(0), b"out-t-x.0.o");
//! assert_eq!(plan.output_bytes(0)?, b"code");
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

mod error;
mod extract;
mod images;
mod package;

pub use error::PackagerError;
pub use extract::extract;
pub(crate) use extract::{every_image, Naming};
pub use images::{list, Image, Images};
pub use package::{image_files, package, Format, PackageImage};

/// LLVM's `sys::path::filename` on POSIX: what follows the last `/`.
fn file_name(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// LLVM's `sys::path::stem`: the file name without its last extension
/// (`.` and `..` stay whole).
fn stem(path: &[u8]) -> &[u8] {
    let name = file_name(path);
    if name == b"." || name == b".." {
        return name;
    }
    match name.iter().rposition(|&b| b == b'.') {
        Some(at) => name.get(..at).unwrap_or(name),
        None => name,
    }
}

/// LLVM's `sys::path::extension` without its dot (empty if none).
fn extension(path: &[u8]) -> &[u8] {
    let name = file_name(path);
    if name == b"." || name == b".." {
        return &[];
    }
    match name.iter().rposition(|&b| b == b'.') {
        Some(at) => name.get(at.saturating_add(1)..).unwrap_or_default(),
        None => &[],
    }
}

#[cfg(test)]
mod tests;
