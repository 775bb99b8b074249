//! kpack archives through the library (`clangoffload_kpack_*`): their
//! facts, entries and code objects as safe Rust values.

use super::{blank_error, bytes_out, c, check as check_status, record, view, Handle};

/// A kpack archive read by the library; borrows its bytes.
pub struct Kpack<'data> {
    handle: Handle<'data, c::clangoffload_kpack>,
}

/// What an archive says of itself.
pub struct Info<'a> {
    pub scheme: &'static str,
    pub format_version: u64,
    pub group_name: &'a [u8],
    pub arch_family: &'a [u8],
    pub toc_offset: u64,
}

/// One entry of the table of contents.
pub struct Entry<'a> {
    pub key: &'a [u8],
    pub arch: &'a [u8],
    /// The ID it is listed and named under (the library's rule: the bundle
    /// entry ID it came from, else its architecture).
    pub id: &'a [u8],
    pub ordinal: u64,
    pub original_size: u64,
    pub toc_offset: u64,
}

impl<'data> Kpack<'data> {
    /// The archive in `data`, or the library's located error.
    pub fn parse(data: &'data [u8]) -> Result<Self, String> {
        let handle = Handle::make(c::clangoffload_kpack_free, |out| {
            let mut err = blank_error();
            // SAFETY: data outlives the handle (`'data`); out and err are
            // writable.
            let status =
                unsafe { c::clangoffload_kpack_parse(data.as_ptr(), data.len(), out, &mut err) };
            check_status(status, &err)
        })?;
        Ok(Kpack { handle })
    }

    pub fn info(&self) -> Option<Info<'_>> {
        // SAFETY: the handle is live; the record is the library's to fill.
        let info = record(|out| unsafe { c::clangoffload_kpack_get_info(self.handle.ptr(), out) })?;
        Some(Info {
            scheme: match info.scheme {
                c::CLANGOFFLOAD_KPACK_ZSTD_PER_KERNEL => "zstd-per-kernel",
                _ => "none",
            },
            format_version: info.format_version,
            group_name: self.handle.bytes(info.group_name),
            arch_family: self.handle.bytes(info.arch_family),
            toc_offset: info.toc_offset,
        })
    }

    /// `gfx_arches`.
    pub fn arches(&self) -> Vec<&[u8]> {
        self.handle
            .list(
                c::clangoffload_kpack_arch_count,
                c::clangoffload_kpack_get_arch,
            )
            .into_iter()
            .map(|a| self.handle.bytes(a))
            .collect()
    }

    /// Every entry, in table order.
    pub fn entries(&self) -> Vec<Entry<'_>> {
        let ids = self.handle.list(
            c::clangoffload_kpack_entry_count,
            c::clangoffload_kpack_entry_id,
        );
        self.handle
            .list(
                c::clangoffload_kpack_entry_count,
                c::clangoffload_kpack_get_entry,
            )
            .into_iter()
            .zip(ids)
            .map(|(e, id)| Entry {
                key: self.handle.bytes(e.key),
                arch: self.handle.bytes(e.arch),
                id: self.handle.bytes(id),
                ordinal: e.ordinal,
                original_size: e.original_size,
                toc_offset: e.toc_offset,
            })
            .collect()
    }

    /// Entry `index`'s code object (at most `max_size` decoded; 0 for the
    /// library's default), or why it cannot be had.
    pub fn read(&self, index: usize, size: u64, max_size: u64) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.read_into(index, size, max_size, &mut out)?;
        Ok(out)
    }

    /// [`read`](Self::read) into `out`, whose memory is kept from one call
    /// to the next (only what it grows by is cleared).
    pub fn read_into(
        &self,
        index: usize,
        size: u64,
        max_size: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let len =
            usize::try_from(size).map_err(|_| format!("{size} bytes do not fit in memory"))?;
        // What the last call left is written over, not cleared first.
        out.truncate(len);
        out.try_reserve_exact(len.saturating_sub(out.len()))
            .map_err(|_| format!("{size} bytes do not fit in memory"))?;
        out.resize(len, 0);
        let (mut written, mut err) = (0usize, blank_error());
        // SAFETY: the handle is live; `out` is writable for its length.
        let status = unsafe {
            c::clangoffload_kpack_read(
                self.handle.ptr(),
                index,
                max_size,
                out.as_mut_ptr(),
                out.len(),
                &mut written,
                &mut err,
            )
        };
        check_status(status, &err)?;
        out.truncate(written);
        Ok(())
    }

    /// The file name `extract` gives entry `index` of an input named `stem`.
    pub fn output_name(&self, index: usize, stem: &str) -> Result<String, String> {
        let name = bytes_out(|buf, cap, len, _| {
            // SAFETY: the handle is live; `stem` is live for the call; buf
            // is NULL or writable for `cap` bytes.
            unsafe {
                c::clangoffload_kpack_output_name(
                    self.handle.ptr(),
                    index,
                    view(stem.as_bytes()),
                    buf,
                    cap,
                    len,
                )
            }
        })?;
        String::from_utf8(name).map_err(|e| e.to_string())
    }
}

/// Whether the library reads `data` as a kpack archive (its magic).
pub fn is_kpack(data: &[u8]) -> bool {
    data.starts_with(b"KPAK")
}

/// A host's `HIPK` records, read by the library; borrows its bytes.
pub struct Host<'data> {
    handle: Handle<'data, c::clangoffload_kpack_host>,
}

/// One `HIPK` record and its marker.
pub struct Record<'a> {
    pub index: usize,
    pub co_index: u32,
    pub offset: u64,
    /// Why it has no marker (`None`: it has one).
    pub problem: Option<String>,
    pub kernel_name: &'a [u8],
    pub search_paths: Vec<&'a [u8]>,
}

impl<'data> Host<'data> {
    /// The records of the host in `data` (none for a host kpack did not
    /// split), or why it cannot be read.
    pub fn parse(data: &'data [u8]) -> Result<Self, String> {
        let handle = Handle::make(c::clangoffload_kpack_host_free, |out| {
            let mut err = blank_error();
            // SAFETY: data outlives the handle; out and err are writable.
            let status = unsafe {
                c::clangoffload_kpack_host_parse(data.as_ptr(), data.len(), out, &mut err)
            };
            check_status(status, &err)
        })?;
        Ok(Host { handle })
    }

    /// `.hip_fatbin`'s address and size where the split left it without
    /// bytes.
    pub fn moved_fatbin(&self) -> Option<(u64, u64)> {
        // SAFETY: the handle is live; the record is the library's to fill.
        let info =
            record(|out| unsafe { c::clangoffload_kpack_host_get_info(self.handle.ptr(), out) })?;
        (info.fatbin_moved != 0).then_some((info.fatbin_address, info.fatbin_size))
    }

    pub fn records(&self) -> Vec<Record<'_>> {
        self.handle
            .list(
                c::clangoffload_kpack_host_record_count,
                c::clangoffload_kpack_host_get_record,
            )
            .into_iter()
            .enumerate()
            .map(|(i, r)| Record {
                index: r.index,
                co_index: r.co_index,
                offset: r.offset,
                problem: (r.marker_status != 0).then(|| super::status_message(r.marker_status)),
                kernel_name: self.handle.bytes(r.kernel_name),
                search_paths: (0..r.search_path_count)
                    .filter_map(|p| {
                        // SAFETY: the handle is live; the record is the
                        // library's to fill.
                        record(|out| unsafe {
                            c::clangoffload_kpack_host_get_search_path(self.handle.ptr(), i, p, out)
                        })
                    })
                    .map(|b| self.handle.bytes(b))
                    .collect(),
            })
            .collect()
    }
}

/// The runtime's `ROCM_KPACK_*` variables: each value, if set.
#[derive(Default)]
pub struct Environment {
    pub disable: Option<Vec<u8>>,
    pub path: Option<Vec<u8>>,
    pub prefix: Option<Vec<u8>>,
}

impl Environment {
    /// `ROCM_KPACK_DISABLE`, `ROCM_KPACK_PATH` and `ROCM_KPACK_PATH_PREFIX`
    /// as this process has them.
    pub fn from_process() -> Self {
        let from_env = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
        Environment {
            disable: from_env("ROCM_KPACK_DISABLE"),
            path: from_env("ROCM_KPACK_PATH"),
            prefix: from_env("ROCM_KPACK_PATH_PREFIX"),
        }
    }

    /// The library's view of it, borrowing it.
    pub fn view(&self) -> c::clangoffload_kpack_environment {
        let value = |v: &Option<Vec<u8>>| (v.is_some(), view(v.as_deref().unwrap_or_default()));
        let (has_disable, disable) = value(&self.disable);
        let (has_path, path) = value(&self.path);
        let (has_prefix, prefix) = value(&self.prefix);
        c::clangoffload_kpack_environment {
            has_disable,
            disable,
            has_path,
            path,
            has_prefix,
            prefix,
        }
    }
}

/// Which loader's rule resolution follows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Loader {
    /// rocm-kpack's shipped loader: the first archive listing a candidate
    /// architecture decides.
    FirstCandidate,
    /// rocm-systems#9953's: every candidate in turn (the default).
    FallThrough,
}

impl Loader {
    /// The library's flags for it.
    pub fn flags(self) -> u32 {
        match self {
            Loader::FirstCandidate => c::CLANGOFFLOAD_KPACK_FIRST_CANDIDATE,
            Loader::FallThrough => 0,
        }
    }
}

/// A record of a split host, or a binary key of an archive alone, and what
/// it gives the device: the library's choice.
pub struct KpackChoice {
    /// The record's file offset (a key of an archive alone: none).
    pub offset: Option<u64>,
    pub key: Vec<u8>,
    pub loads: bool,
    /// `native` or `generic` when it loads.
    pub how: Option<&'static str>,
    /// The code object's ID.
    pub id: Vec<u8>,
    /// The archive that holds it, as opened, and its entry there.
    pub path: Vec<u8>,
    pub entry: usize,
    /// The record cannot be read (it has no marker).
    pub unreadable: bool,
    /// Why this code, or why none.
    pub reason: String,
}

/// The archive files the library asked for, each mapped under the path it
/// asked by and kept until this is dropped.
#[derive(Default)]
pub struct Opened(Vec<(Vec<u8>, crate::io::Input)>);

impl Opened {
    /// The bytes of the archive opened at `path`.
    pub fn get(&self, path: &[u8]) -> Option<&[u8]> {
        self.0
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, i)| i.data())
    }
}

/// The library's archive reader (`clangoffload_kpack_open_fn`): maps the
/// file at `path` and keeps the mapping in the `Opened` at `context`.
///
/// # Safety
/// `context` points to a live `Opened` used by nothing else during the
/// call; `path` readable for `path_len` bytes; `out` writable.
pub(super) unsafe extern "C" fn open_archive(
    context: *mut std::ffi::c_void,
    path: *const u8,
    path_len: usize,
    out: *mut c::clangoffload_bytes,
) -> bool {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: the `Opened` the caller passed, as the library promises to
    // pass `context` unchanged.
    let Some(opened) = (unsafe { context.cast::<Opened>().as_mut() }) else {
        return false;
    };
    // SAFETY: readable for `path_len` bytes, as the library promises.
    let path = unsafe { std::slice::from_raw_parts(path, path_len) };
    let file = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
    let Ok(input) = crate::io::Input::open(file, false) else {
        return false;
    };
    // SAFETY: writable, as the library promises; the view is of the
    // mapping `opened` keeps until it is dropped, after the call that
    // asked returns.
    unsafe { out.write(view(input.data())) };
    opened.0.push((path.to_vec(), input));
    true
}

/// What each `HIPK` record of the split host `data`, whose real directory
/// is `dir`, gives `device`, resolved by the library as the runtime
/// resolves it (its archives mapped as it asks, and returned with the
/// choices); `None` when it is no split host.
pub fn select_split_host(
    data: &[u8],
    device: &str,
    dir: &[u8],
    environment: &Environment,
    loader: Loader,
) -> Result<Option<(Vec<KpackChoice>, Opened)>, String> {
    let given = environment.view();
    let mut opened = Opened::default();
    let mut status = super::Status::Ok;
    let made = Handle::make(c::clangoffload_kpack_selection_free, |out| {
        // SAFETY: every view is live for the call; `open_archive` is called
        // with a pointer to `opened`, which outlives the call, and the
        // bytes it hands out stay mapped until `opened` is dropped; out is
        // writable.
        status = unsafe {
            c::clangoffload_select_split_host(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                view(dir),
                &given,
                loader.flags(),
                Some(open_archive),
                std::ptr::from_mut(&mut opened).cast(),
                out,
            )
        };
        check_status(status, &blank_error())
    });
    match made {
        Ok(handle) => Ok(Some((choices(&handle), opened))),
        Err(_) if status == super::Status::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What each binary key of `kpack` (the archive file at `path`) gives
/// `device`, resolved in it alone.
pub fn select_kpack(
    kpack: &Kpack<'_>,
    path: &[u8],
    device: &str,
    environment: &Environment,
    loader: Loader,
) -> Result<Vec<KpackChoice>, String> {
    let given = environment.view();
    let handle = Handle::make(c::clangoffload_kpack_selection_free, |out| {
        // SAFETY: the archive handle and every view are live for the call;
        // out is writable.
        let status = unsafe {
            c::clangoffload_select_kpack(
                kpack.handle.ptr(),
                view(path),
                device.as_ptr().cast(),
                device.len(),
                &given,
                loader.flags(),
                out,
            )
        };
        check_status(status, &blank_error())
    })?;
    Ok(choices(&handle))
}

/// Every choice of a selection, copied out of it.
fn choices(handle: &Handle<'_, c::clangoffload_kpack_selection>) -> Vec<KpackChoice> {
    handle
        .list(
            c::clangoffload_kpack_selection_count,
            c::clangoffload_kpack_selection_get,
        )
        .into_iter()
        .map(|r| KpackChoice {
            offset: r.has_offset.then_some(r.offset),
            key: handle.bytes(r.key).to_vec(),
            loads: r.loads,
            how: r.loads.then(|| super::select::how_name(r.how)),
            id: handle.bytes(r.id).to_vec(),
            path: handle.bytes(r.path).to_vec(),
            entry: r.entry,
            unreadable: r.unreadable,
            reason: String::from_utf8_lossy(handle.bytes(r.reason)).into_owned(),
        })
        .collect()
}

/// The key the runtime looks a record's code object up by.
pub fn binary_key(kernel_name: &[u8], co_index: u32) -> Vec<u8> {
    bytes_out(|buf, cap, len, _| {
        // SAFETY: the name is live for the call; buf is NULL or writable for
        // `cap` bytes.
        unsafe { c::clangoffload_kpack_binary_key(view(kernel_name), co_index, buf, cap, len) }
    })
    .unwrap_or_default()
}

/// Whether search path `path` names an archive called `name`.
pub fn names(path: &[u8], name: &[u8]) -> bool {
    // SAFETY: both views are live for the call.
    unsafe { c::clangoffload_kpack_search_path_names(view(path), view(name)) }
}

/// One finding of `check`, with what it names.
pub struct Finding {
    pub kind: u32,
    pub record: usize,
    pub archive: usize,
    pub base: usize,
    pub entry: usize,
    pub offset: u64,
    pub status: u32,
    pub text: Vec<u8>,
}

/// The library's findings for a host (`data`) and its archives (each with
/// its file name), in the runtime's candidate order.
pub fn check(data: &[u8], archives: &[(&[u8], &Kpack<'_>)]) -> Result<Vec<Finding>, String> {
    let handles: Vec<*const c::clangoffload_kpack> =
        archives.iter().map(|(_, k)| k.handle.ptr()).collect();
    let names: Vec<c::clangoffload_bytes> = archives.iter().map(|(n, _)| view(n)).collect();
    let findings = Handle::make(c::clangoffload_kpack_findings_free, |out| {
        let mut err = blank_error();
        // SAFETY: data, the handles and the names are live for the call;
        // out and err are writable.
        let status = unsafe {
            c::clangoffload_kpack_check(
                data.as_ptr(),
                data.len(),
                handles.as_ptr(),
                names.as_ptr(),
                handles.len(),
                out,
                &mut err,
            )
        };
        check_status(status, &err)
    })?;
    Ok(findings
        .list(
            c::clangoffload_kpack_findings_count,
            c::clangoffload_kpack_findings_get,
        )
        .into_iter()
        .map(|f| Finding {
            kind: f.kind,
            record: f.record,
            archive: f.archive,
            base: f.base,
            entry: f.entry,
            offset: f.offset,
            status: f.status,
            text: findings.bytes(f.text).to_vec(),
        })
        .collect())
}
