//! Reading inputs without copying them (and lending their descriptors, so the
//! library copies payloads file to file).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// An input file's bytes: mapped when it is a regular file (so parsing and
/// listing touch only the header pages), read otherwise (pipes, devices).
pub struct Input {
    file: Option<File>,
    bytes: Bytes,
}

enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// The (device, inode) of a file, to tell when an output would overwrite an
/// input.
pub fn file_identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Input {
    /// Opens `path`; `in_memory` reads it whole (for an input that is also
    /// about to be overwritten as an output).
    pub fn open(path: &Path, in_memory: bool) -> io::Result<Input> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() > 0 && !in_memory {
            // SAFETY: the map is read-only and private to this process. It
            // stays valid while the file is unchanged; a file truncated by
            // someone else while we read it is outside what we guard against.
            let map = unsafe { memmap2::Mmap::map(&file) }?;
            return Ok(Input {
                file: Some(file),
                bytes: Bytes::Mapped(map),
            });
        }
        let mut owned = Vec::new();
        file.read_to_end(&mut owned)?;
        Ok(Input {
            file: None,
            bytes: Bytes::Owned(owned),
        })
    }

    pub fn data(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(map) => map,
            Bytes::Owned(v) => v,
        }
    }

    /// The open file, for copying from it file to file (regular files).
    pub fn fd(&self) -> Option<RawFd> {
        self.file.as_ref().map(AsRawFd::as_raw_fd)
    }
}

/// An I/O error as LLVM words it: the OS message without Rust's
/// " (os error N)" suffix.
pub fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
