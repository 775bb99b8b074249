//! Reading inputs without copying them and writing payload ranges at copy
//! speed.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
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

    /// Writes `len` bytes at `offset` to `out`: file to file in the kernel
    /// (`copy_file_range`) when the input is a regular file.
    pub fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        if let Some(mut file) = self.file.as_ref() {
            file.seek(SeekFrom::Start(offset))?;
            let copied = io::copy(&mut file.take(len), out)?;
            if copied != len {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "input file shrank while reading",
                ));
            }
            return Ok(());
        }
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(start, n)| self.data().get(start..start.checked_add(n)?));
        match range {
            Some(bytes) => out.write_all(bytes),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "range past the end of the input",
            )),
        }
    }
}

/// Writes `n` zero bytes.
pub fn write_zeros(out: &mut impl Write, mut n: u64) -> io::Result<()> {
    const ZEROS: [u8; 8192] = [0; 8192];
    while n > 0 {
        let chunk = usize::try_from(n).map_or(ZEROS.len(), |n| n.min(ZEROS.len()));
        out.write_all(ZEROS.get(..chunk).unwrap_or_default())?;
        n = n.saturating_sub(u64::try_from(chunk).unwrap_or(n));
    }
    Ok(())
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
