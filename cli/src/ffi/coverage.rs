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

/// Covers `data` (a file named `name`, or a wheel) for `devices`; checks
/// compressed bundles' hashes when `verify` asks.
pub fn cover(
    input: &crate::io::Input,
    name: &str,
    devices: &[&str],
    verify: bool,
) -> Result<Vec<CoveredFile>, String> {
    let data = input.data();
    let views: Vec<c::clangoffload_bytes> =
        devices.iter().map(|d| super::view(d.as_bytes())).collect();
    let flags = if verify {
        c::CLANGOFFLOAD_COVERAGE_VERIFY
    } else {
        0
    };
    let handle = Handle::make(c::clangoffload_coverage_free, |out| {
        // SAFETY: every input is live for the call; `release` may be
        // called with `input`, which outlives the call; `out` is writable.
        let status = unsafe {
            c::clangoffload_cover(
                data.as_ptr(),
                data.len(),
                name.as_ptr().cast(),
                name.len(),
                views.as_ptr(),
                views.len(),
                flags,
                0,
                Some(super::inspection::release),
                std::ptr::from_ref(input).cast_mut().cast(),
                out,
            )
        };
        match status {
            super::Status::Ok => Ok(()),
            super::Status::NotFound => Err("a device is no AMD target ID or NVIDIA SM".into()),
            status => Err(super::status_message(status)),
        }
    })?;
    let text = |v: c::clangoffload_bytes| String::from_utf8_lossy(handle.bytes(v)).into_owned();
    let files = handle.list(
        c::clangoffload_coverage_file_count,
        c::clangoffload_coverage_get_file,
    );
    Ok(files
        .iter()
        .enumerate()
        .map(|(i, f)| CoveredFile {
            name: text(f.name),
            error: (!f.readable).then(|| text(f.error)),
            cells: (0..if f.readable { devices.len() } else { 0 })
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
            targets: (0..f.target_count)
                .filter_map(|t| {
                    super::record(|out| {
                        // SAFETY: a live handle; `out` writable.
                        unsafe { c::clangoffload_coverage_get_target(handle.ptr(), i, t, out) }
                    })
                })
                .map(|t| (text(t.target), t.bytes))
                .collect(),
            findings: (0..f.finding_count)
                .filter_map(|n| {
                    super::record(|out| {
                        // SAFETY: a live handle; `out` writable.
                        unsafe { c::clangoffload_coverage_get_finding(handle.ptr(), i, n, out) }
                    })
                })
                .map(text)
                .collect(),
        })
        .collect())
}

/// The devices asked about when none are given: current AMD and NVIDIA
/// GPUs, as the library lists them.
pub fn current_gpus() -> Vec<String> {
    let mut out = Vec::new();
    for i in 0.. {
        let Some(name) = super::record(|out| {
            // SAFETY: `out` writable.
            unsafe { c::clangoffload_coverage_current_gpu(i, out) }
        }) else {
            break;
        };
        // SAFETY: a view of the library's static storage.
        out.push(String::from_utf8_lossy(unsafe { super::slice(name) }).into_owned());
    }
    out
}
