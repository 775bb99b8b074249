//! Coverage of a file (or each member of a wheel) for a list of devices,
//! through the library (`clangoffload_cover`), as safe Rust values.

use super::{c, Handle};

/// A file of device code and what it gives each device.
pub struct CoveredFile {
    pub name: String,
    /// Why it could not be read (then it has nothing else).
    pub error: Option<String>,
    /// One cell per device, in the order asked.
    pub cells: Vec<Cell>,
    /// The devices its code targets, with their bytes of code.
    pub targets: Vec<(String, u64)>,
    pub findings: Vec<String>,
}

/// A file's verdict for one device.
#[derive(Clone)]
pub struct Cell {
    /// Whether the file holds code of the device's vendor at all.
    pub applies: bool,
    pub loads: bool,
    /// `native`, `generic`, `spirv`, `cubin`, `ptx`.
    pub how: Option<&'static str>,
    /// The chosen code's IDs, joined by ", ".
    pub entry: Option<String>,
    pub reason: String,
}

/// Coverage of many inputs for one device list (`clangoffload_coverage_*`):
/// the devices given, or the current GPUs and every device some file's
/// code targets.
pub struct Coverage {
    handle: Handle<'static, c::clangoffload_coverage>,
}

/// The library's callback letting go of a mapped input's pages, if `input`
/// is the data's.
fn release_of(
    input: Option<&crate::io::Input>,
) -> (c::clangoffload_done_with_fn, *mut std::ffi::c_void) {
    match input {
        Some(input) => (
            Some(super::inspection::release),
            std::ptr::from_ref(input).cast_mut().cast(),
        ),
        None => (None, std::ptr::null_mut()),
    }
}

impl Coverage {
    /// For `devices`, or (`None`) the growing default list; `verify`
    /// checks compressed bundles' hashes.
    pub fn new(devices: Option<&[String]>, verify: bool) -> Result<Self, String> {
        let views: Vec<c::clangoffload_bytes> = devices
            .unwrap_or_default()
            .iter()
            .map(|d| super::view(d.as_bytes()))
            .collect();
        let mut flags = if verify {
            c::CLANGOFFLOAD_COVERAGE_VERIFY
        } else {
            0
        };
        if devices.is_none() {
            flags |= c::CLANGOFFLOAD_COVERAGE_CURRENT_GPUS;
        }
        let handle = Handle::make(c::clangoffload_coverage_free, |out| {
            // SAFETY: the views are live for the call; `out` is writable.
            let status =
                unsafe { c::clangoffload_coverage_new(views.as_ptr(), views.len(), flags, 0, out) };
            match status {
                super::Status::Ok => Ok(()),
                super::Status::NotFound => Err("a device is no AMD target ID or NVIDIA SM".into()),
                status => Err(super::status_message(status)),
            }
        })?;
        Ok(Coverage { handle })
    }

    /// Covers `data` (a file named `name`, or a wheel), input number
    /// `again` given again if set; `input`, if the data is its, lets go of
    /// the pages the library is done with.
    pub fn add(
        &mut self,
        again: Option<usize>,
        data: &[u8],
        input: Option<&crate::io::Input>,
        name: &str,
    ) -> Result<(), String> {
        let (release, context) = release_of(input);
        let ptr = self.handle.ptr_mut();
        let status = match again {
            // SAFETY: a live handle used by nothing else during the call;
            // the data and name live for the call; `release` may be called
            // with `input`, which outlives the call.
            Some(number) => unsafe {
                c::clangoffload_coverage_add_again(
                    ptr,
                    number,
                    data.as_ptr(),
                    data.len(),
                    name.as_ptr().cast(),
                    name.len(),
                    release,
                    context,
                )
            },
            // SAFETY: as above.
            None => unsafe {
                c::clangoffload_coverage_add(
                    ptr,
                    data.as_ptr(),
                    data.len(),
                    name.as_ptr().cast(),
                    name.len(),
                    release,
                    context,
                    std::ptr::null_mut(),
                )
            },
        };
        match status {
            super::Status::Ok => Ok(()),
            status => Err(super::status_message(status)),
        }
    }

    /// Covers the kpack split host `data` named `name`, whose real
    /// directory is `dir`, for every device of the list, its archives
    /// opened (mapped) as the library asks, in the environment this process
    /// has; false when it is no split host.
    pub fn add_split_host(&mut self, data: &[u8], name: &str, dir: &[u8]) -> Result<bool, String> {
        let environment = super::kpack::Environment::from_process();
        let given = environment.view();
        let mut opened = super::kpack::Opened::default();
        let ptr = self.handle.ptr_mut();
        // SAFETY: a live handle used by nothing else during the call; every
        // view is live for the call; `open_archive` is called with a pointer
        // to `opened`, which outlives the call, and the bytes it hands out
        // stay mapped until `opened` is dropped after it.
        let status = unsafe {
            c::clangoffload_coverage_add_split_host(
                ptr,
                data.as_ptr(),
                data.len(),
                name.as_ptr().cast(),
                name.len(),
                super::view(dir),
                &given,
                0,
                Some(super::kpack::open_archive),
                std::ptr::from_mut(&mut opened).cast(),
                std::ptr::null_mut(),
            )
        };
        match status {
            super::Status::Ok => Ok(true),
            super::Status::NotFound => Ok(false),
            status => Err(super::status_message(status)),
        }
    }

    /// How many files of device code it holds.
    pub fn file_count(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { c::clangoffload_coverage_file_count(self.handle.ptr()) }
    }

    /// The first input to give again, if any.
    pub fn pending(&mut self) -> Option<usize> {
        let ptr = self.handle.ptr_mut();
        super::record(|out| {
            // SAFETY: a live handle used by nothing else; `out` writable.
            unsafe { c::clangoffload_coverage_pending(ptr, out) }
        })
    }

    /// The devices, in the order of each file's cells.
    pub fn devices(&self) -> Vec<String> {
        self.handle
            .list(
                c::clangoffload_coverage_device_count,
                c::clangoffload_coverage_get_device,
            )
            .into_iter()
            .map(|d| String::from_utf8_lossy(self.handle.bytes(d)).into_owned())
            .collect()
    }

    /// Every file of device code, in the order read.
    pub fn files(&self) -> Vec<CoveredFile> {
        let handle = &self.handle;
        let devices = self.devices().len();
        let text = |v: c::clangoffload_bytes| String::from_utf8_lossy(handle.bytes(v)).into_owned();
        let files = handle.list(
            c::clangoffload_coverage_file_count,
            c::clangoffload_coverage_get_file,
        );
        files
            .iter()
            .enumerate()
            .map(|(i, f)| CoveredFile {
                name: text(f.name),
                error: (!f.readable).then(|| text(f.error)),
                cells: (0..if f.readable { devices } else { 0 })
                    .filter_map(|d| {
                        super::record(|out| {
                            // SAFETY: a live handle; `out` writable.
                            unsafe { c::clangoffload_coverage_get_cell(handle.ptr(), i, d, out) }
                        })
                    })
                    .map(|cell| Cell {
                        applies: cell.applies,
                        loads: cell.loads,
                        how: cell.loads.then(|| super::select::how_name(cell.how)),
                        entry: cell.loads.then(|| text(cell.entries)),
                        reason: text(cell.reason),
                    })
                    .collect(),
                targets: handle
                    .nested(i, f.target_count, c::clangoffload_coverage_get_target)
                    .into_iter()
                    .map(|t| (text(t.target), t.bytes))
                    .collect(),
                findings: handle
                    .nested(i, f.finding_count, c::clangoffload_coverage_get_finding)
                    .into_iter()
                    .map(text)
                    .collect(),
            })
            .collect()
    }
}

/// What coverage reads of a large ELF file, read from it range by range as
/// the library asks (`clangoffload_sparse_elf_*`): the rest of the file is
/// never read into memory.
pub struct SparseImage {
    handle: Handle<'static, c::clangoffload_sparse_elf>,
    image: c::clangoffload_bytes,
}

impl SparseImage {
    /// The image of `file` (`size` bytes); `None` if the library does not
    /// read it so (no ELF64 file, or no memory for an image of its size) or
    /// a read fails: then cover the file itself.
    pub fn read(file: &std::fs::File, size: u64) -> Option<SparseImage> {
        use std::os::unix::fs::FileExt;
        let mut handle = Handle::make(c::clangoffload_sparse_elf_free, |out| {
            // SAFETY: `out` is writable.
            match unsafe { c::clangoffload_sparse_elf_new(size, out) } {
                super::Status::Ok => Ok(()),
                status => Err(super::status_message(status)),
            }
        })
        .ok()?;
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let (mut offset, mut len) = (0u64, 0u64);
            // SAFETY: the handle is live; both numbers are writable.
            let status =
                unsafe { c::clangoffload_sparse_elf_missing(handle.ptr(), &mut offset, &mut len) };
            match status {
                super::Status::Ok => {}
                super::Status::End => break,
                _ => return None,
            }
            let want = usize::try_from(len).unwrap_or(usize::MAX).min(buffer.len());
            let piece = buffer.get_mut(..want)?;
            let read = file.read_at(piece, offset).ok().filter(|&n| n > 0)?;
            let piece = piece.get(..read)?;
            // SAFETY: the handle is live and only used here; the piece is
            // readable for its length.
            let status = unsafe {
                c::clangoffload_sparse_elf_give(
                    handle.ptr_mut(),
                    offset,
                    piece.as_ptr(),
                    piece.len(),
                )
            };
            if status != super::Status::Ok {
                return None;
            }
        }
        let mut image = super::view(&[]);
        // SAFETY: the handle is live; `image` is writable.
        let status = unsafe { c::clangoffload_sparse_elf_image(handle.ptr_mut(), &mut image) };
        (status == super::Status::Ok).then_some(SparseImage { handle, image })
    }

    /// The image: the file's size, holding what coverage reads.
    pub fn data(&self) -> &[u8] {
        self.handle.bytes(self.image)
    }
}
