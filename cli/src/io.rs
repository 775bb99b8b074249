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

/// Inputs smaller than this are faulted in by their reader: a thread would
/// cost more than it saves.
const POPULATE_MIN: usize = 16 << 20;

/// Maps the pages of `map` in order, a few MiB at a time, so that a reader
/// behind finds them mapped. Kernels before 5.14 refuse `MADV_POPULATE_READ`;
/// the reader then faults the pages in itself, as it would anyway.
fn populate(map: &memmap2::Mmap) {
    const STEP: usize = 4 << 20;
    for offset in (0..map.len()).step_by(STEP) {
        let len = STEP.min(map.len().saturating_sub(offset));
        if map
            .advise_range(memmap2::Advice::PopulateRead, offset, len)
            .is_err()
        {
            return;
        }
    }
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

    /// The open file, for an input that was not read whole.
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    pub fn data(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(map) => map,
            Bytes::Owned(v) => v,
        }
    }

    /// Runs `reader`, which goes through the input from start to end, over
    /// its bytes. For a large mapped input, a second thread meanwhile asks the
    /// kernel to map the pages ahead of the reader (`MADV_POPULATE_READ`), so
    /// that the kernel's work overlaps the reader's instead of stopping it at
    /// every fault: a scan then runs at about the speed of reading the file.
    pub fn read_through<'a, R>(&'a self, reader: impl FnOnce(&'a [u8]) -> R) -> R {
        match &self.bytes {
            Bytes::Mapped(map) if map.len() >= POPULATE_MIN => std::thread::scope(|scope| {
                scope.spawn(|| populate(map));
                reader(map)
            }),
            _ => reader(self.data()),
        }
    }

    /// Lets the pages of `len` bytes at `offset` go once they are no longer
    /// needed (a container written): the kernel maps a mapped file in large
    /// folios, so a reader that goes through a large file keeps all of it
    /// in its resident set otherwise. Whole pages inside the range only; a
    /// later read of them faults them in again, from the page cache.
    pub fn release(&self, offset: u64, len: u64) {
        let Bytes::Mapped(map) = &self.bytes else {
            return;
        };
        const PAGE: u64 = 4096;
        let down = |at: u64| at & !(PAGE - 1);
        let start = down(offset.saturating_add(PAGE - 1));
        let size = u64::try_from(map.len()).unwrap_or(u64::MAX);
        let end = down(offset.saturating_add(len).min(size));
        let (Ok(start), Ok(len)) = (
            usize::try_from(start),
            usize::try_from(end.saturating_sub(start)),
        ) else {
            return;
        };
        if len == 0 {
            return;
        }
        // SAFETY: the map is read-only and private, and never written, so
        // dropping its pages loses nothing: the next read of them maps the
        // same bytes again from the file. Readers on other threads only read
        // the same file bytes.
        let _ =
            unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len) };
    }

    /// [`Input::release`] of `part`, a slice of [`Input::data`] (anything
    /// else is ignored).
    // The part's place is its address's distance from the input's: the
    // only `as` here is pointer to address (`<*const u8>::addr` is newer
    // than the MSRV).
    #[allow(clippy::as_conversions)]
    pub fn release_part(&self, part: &[u8]) {
        let base = self.data().as_ptr() as usize;
        let Some(offset) = (part.as_ptr() as usize).checked_sub(base) else {
            return;
        };
        if offset.saturating_add(part.len()) <= self.data().len() {
            let wide = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
            self.release(wide(offset), wide(part.len()));
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

/// Creates `path` for writing: exclusively unless `force`.
pub fn create(path: &Path, force: bool) -> Result<std::fs::File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    options
        .open(path)
        .map_err(|e| format!("'{}': {}", path.display(), os_message(&e)))
}

/// Keeps every large buffer (128 KiB and up) a mapping of its own, given
/// back when freed. glibc raises its mmap threshold each time it frees
/// such a mapping (up to 32 MiB), and later buffers under it come from the
/// heap, where they fragment it and stay resident: `coverage` of a 2.6 GB
/// tree peaked at 69-75 MiB so, 36 MiB with the threshold fixed, in the
/// same time. Called before any other thread starts.
pub fn keep_large_buffers_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator tunable; no other thread
    // allocates yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}
