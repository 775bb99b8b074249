//! Safe wrappers over the C ABI this tool ships: every call into the library
//! goes through here, so the CLI exercises exactly what C users get.

use std::ffi::{c_char, CStr};

pub use c::clangoffload_status as Status;
use c::{clangoffload_bytes, clangoffload_error};
use clangoffload_capi as c;

/// A failure reported by the library: its status and, where it has one, the
/// precise message with offsets.
#[derive(Debug, Clone)]
pub struct AbiError {
    pub status: Status,
    pub message: String,
}

impl AbiError {
    fn from_status(status: Status) -> Self {
        // SAFETY: status_message returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(c::clangoffload_status_message(status as u32)) };
        AbiError {
            status,
            message: text.to_string_lossy().into_owned(),
        }
    }

    fn from_record(status: Status, record: &clangoffload_error) -> Self {
        let bytes: Vec<u8> = record
            .message
            .iter()
            .take_while(|&&ch| ch != 0)
            .map(|&ch| ch.to_ne_bytes()[0])
            .collect();
        AbiError {
            status,
            message: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

impl std::fmt::Display for AbiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn check(status: Status) -> Result<(), AbiError> {
    if status == Status::Ok {
        Ok(())
    } else {
        Err(AbiError::from_status(status))
    }
}

fn empty_error() -> clangoffload_error {
    clangoffload_error {
        status: 0,
        offset: 0,
        entry: 0,
        message: [0; 256],
    }
}

/// # Safety
/// `view` must come from the library and borrow memory that outlives `'a`.
unsafe fn view<'a>(view: clangoffload_bytes) -> &'a [u8] {
    if view.ptr.is_null() || view.len == 0 {
        return &[];
    }
    // SAFETY: the library hands out views of live memory, as the caller promises.
    unsafe { std::slice::from_raw_parts(view.ptr, view.len) }
}

/// A parsed bundle, borrowing the bytes it was parsed from.
pub struct Bundle<'data> {
    handle: *mut c::clangoffload_bundle,
    _data: std::marker::PhantomData<&'data [u8]>,
}

/// One entry of a [`Bundle`].
#[derive(Debug, Clone, Copy)]
pub struct Entry<'data> {
    pub id: &'data [u8],
    pub payload: &'data [u8],
    pub offset: u64,
}

impl<'data> Bundle<'data> {
    /// Parses strictly (every descriptor checked).
    pub fn parse(data: &'data [u8]) -> Result<Self, AbiError> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: data is live for 'data, which the returned value cannot outlive.
        call(|err| unsafe {
            c::clangoffload_bundle_parse(data.as_ptr(), data.len(), 0, &mut handle, err)
        })?;
        Ok(Bundle {
            handle,
            _data: std::marker::PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        // SAFETY: the handle is live.
        unsafe { c::clangoffload_bundle_entry_count(self.handle) }
    }

    pub fn entry(&self, index: usize) -> Option<Entry<'data>> {
        let mut out = c::clangoffload_bundle_entry {
            id: clangoffload_bytes {
                ptr: std::ptr::null(),
                len: 0,
            },
            payload: clangoffload_bytes {
                ptr: std::ptr::null(),
                len: 0,
            },
            offset: 0,
            descriptor_offset: 0,
        };
        // SAFETY: the handle is live; out is a valid record.
        let status = unsafe { c::clangoffload_bundle_get_entry(self.handle, index, &mut out) };
        (status == Status::Ok).then(|| Entry {
            // SAFETY: the views borrow the parsed buffer, live for 'data.
            id: unsafe { view(out.id) },
            // SAFETY: as above.
            payload: unsafe { view(out.payload) },
            offset: out.offset,
        })
    }

    pub fn entries(&self) -> impl Iterator<Item = Entry<'data>> + '_ {
        (0..self.len()).filter_map(|i| self.entry(i))
    }
}

impl Drop for Bundle<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from parse and is released once.
        unsafe { c::clangoffload_bundle_free(self.handle) }
    }
}

/// Calls a library function that writes bytes into a caller buffer,
/// growing the buffer once if it is too small.
fn bytes_out(
    mut call: impl FnMut(*mut c_char, usize, &mut usize) -> Status,
) -> Result<Vec<u8>, AbiError> {
    let mut buf = vec![0u8; 128];
    let mut len = 0usize;
    let mut status = call(buf.as_mut_ptr().cast(), buf.len(), &mut len);
    if status == Status::BufferTooSmall {
        buf = vec![0u8; len.saturating_add(1)];
        status = call(buf.as_mut_ptr().cast(), buf.len(), &mut len);
    }
    check(status)?;
    buf.truncate(len);
    Ok(buf)
}

/// As [`bytes_out`], for UTF-8 text.
fn text_out(
    call: impl FnMut(*mut c_char, usize, &mut usize) -> Status,
) -> Result<String, AbiError> {
    String::from_utf8(bytes_out(call)?).map_err(|_| AbiError::from_status(Status::InvalidUtf8))
}

/// Turns a failed call with an error record into an [`AbiError`].
fn record_error(status: Status, err: &clangoffload_error) -> AbiError {
    if err.status == 0 {
        AbiError::from_status(status)
    } else {
        AbiError::from_record(status, err)
    }
}

/// The header of a compressed bundle.
pub type CompressedHeader = c::clangoffload_compressed_header;

pub fn compressed_header(data: &[u8]) -> Result<CompressedHeader, AbiError> {
    let empty = clangoffload_bytes {
        ptr: std::ptr::null(),
        len: 0,
    };
    let mut out = CompressedHeader {
        version: 0,
        method: 0,
        header_len: 0,
        has_total_size: false,
        total_size: 0,
        uncompressed_size: 0,
        hash: 0,
        container: empty,
        compressed: empty,
    };
    let mut err = empty_error();
    // SAFETY: data is live for the call; out and err are valid records.
    let status =
        unsafe { c::clangoffload_compressed_parse(data.as_ptr(), data.len(), &mut out, &mut err) };
    if status != Status::Ok {
        return Err(record_error(status, &err));
    }
    Ok(out)
}

/// Decompresses a compressed bundle into a new buffer, with the hash left for
/// the caller to check (so that it can report both hashes).
pub fn decompress_unverified(data: &[u8], max_size: u64) -> Result<Vec<u8>, AbiError> {
    let mut size = 0usize;
    let mut err = empty_error();
    // SAFETY: data is live; size and err are valid records.
    let status = unsafe {
        c::clangoffload_compressed_decompressed_size(
            data.as_ptr(),
            data.len(),
            max_size,
            &mut size,
            &mut err,
        )
    };
    if status != Status::Ok {
        return Err(record_error(status, &err));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(size)
        .map_err(|_| AbiError::from_status(Status::OutOfMemory))?;
    out.resize(size, 0);
    let mut written = 0usize;
    // SAFETY: data is live; out is writable for its length and separate from data.
    let status = unsafe {
        c::clangoffload_compressed_decompress(
            data.as_ptr(),
            data.len(),
            max_size,
            c::CLANGOFFLOAD_SKIP_HASH_CHECK,
            out.as_mut_ptr(),
            out.len(),
            &mut written,
            &mut err,
        )
    };
    if status != Status::Ok {
        return Err(record_error(status, &err));
    }
    out.truncate(written);
    Ok(out)
}

pub fn truncated_md5(data: &[u8]) -> u64 {
    let mut hash = 0u64;
    // SAFETY: data is live; hash is writable.
    unsafe { c::clangoffload_truncated_md5(data.as_ptr(), data.len(), &mut hash) };
    hash
}

/// A container that could not be read, and where it starts.
#[derive(Debug, Clone)]
pub struct ContainerError {
    pub start: u64,
    pub error: AbiError,
}

/// One container of a sequence, borrowed from the buffer walked.
#[derive(Debug, Clone, Copy)]
pub struct Container<'a> {
    pub compressed: bool,
    pub offload_binary: bool,
    pub offset: u64,
    pub data: &'a [u8],
}

/// The containers laid back to back in `data`; the walk ends at the first
/// error.
pub fn containers(data: &[u8]) -> impl Iterator<Item = Result<Container<'_>, ContainerError>> + '_ {
    let mut cursor = 0u64;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let empty = clangoffload_bytes {
            ptr: std::ptr::null(),
            len: 0,
        };
        let mut out = c::clangoffload_container {
            kind: c::clangoffload_container_kind::Bundle,
            offset: 0,
            data: empty,
        };
        let mut err = empty_error();
        let padding = data
            .get(cursor as usize..)
            .map_or(0, |rest| rest.iter().take_while(|&&b| b == 0).count());
        let start = cursor + padding as u64;
        // SAFETY: data is live; cursor, out and err are valid records.
        let status = unsafe {
            c::clangoffload_containers_next(
                data.as_ptr(),
                data.len(),
                &mut cursor,
                &mut out,
                &mut err,
            )
        };
        match status {
            Status::Ok => Some(Ok(Container {
                compressed: out.kind == c::clangoffload_container_kind::Compressed,
                offload_binary: out.kind == c::clangoffload_container_kind::OffloadBinary,
                offset: out.offset,
                // SAFETY: the view borrows `data`.
                data: unsafe { view(out.data) },
            })),
            Status::End => {
                done = true;
                None
            }
            status => {
                done = true;
                Some(Err(ContainerError {
                    start,
                    error: record_error(status, &err),
                }))
            }
        }
    })
}

/// Runs a library call that fills an error record on failure.
fn call(f: impl FnOnce(&mut clangoffload_error) -> Status) -> Result<(), AbiError> {
    let mut err = empty_error();
    match f(&mut err) {
        Status::Ok => Ok(()),
        status => Err(record_error(status, &err)),
    }
}

const NO_BYTES: clangoffload_bytes = clangoffload_bytes {
    ptr: std::ptr::null(),
    len: 0,
};

/// An `ar` archive, borrowing the bytes it was parsed from.
pub struct Archive<'data> {
    handle: *mut c::clangoffload_archive,
    _data: std::marker::PhantomData<&'data [u8]>,
}

/// One member of an [`Archive`]. The name is bytes from the file, never a
/// path.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveMember<'data> {
    pub name: &'data [u8],
    pub data: &'data [u8],
}

impl<'data> Archive<'data> {
    pub fn parse(data: &'data [u8]) -> Result<Self, AbiError> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: data is live for 'data, which the returned value cannot outlive.
        call(|err| unsafe {
            c::clangoffload_archive_parse(data.as_ptr(), data.len(), &mut handle, err)
        })?;
        Ok(Archive {
            handle,
            _data: std::marker::PhantomData,
        })
    }

    /// The members read, in file order.
    pub fn members(&self) -> Vec<ArchiveMember<'data>> {
        // SAFETY: the handle is live.
        let count = unsafe { c::clangoffload_archive_member_count(self.handle) };
        (0..count)
            .filter_map(|i| {
                let mut out = c::clangoffload_archive_member {
                    name: NO_BYTES,
                    data: NO_BYTES,
                    header_offset: 0,
                    data_offset: 0,
                };
                // SAFETY: the handle is live; out is a valid record.
                let status =
                    unsafe { c::clangoffload_archive_get_member(self.handle, i, &mut out) };
                (status == Status::Ok).then(|| ArchiveMember {
                    // SAFETY: the views borrow the parsed buffer, live for 'data.
                    name: unsafe { view(out.name) },
                    // SAFETY: as above.
                    data: unsafe { view(out.data) },
                })
            })
            .collect()
    }

    /// The damaged member header that ended the walk, if any.
    pub fn fault(&self) -> Option<AbiError> {
        // SAFETY: the handle is live; err is a valid record.
        call(|err| unsafe { c::clangoffload_archive_fault(self.handle, err) }).err()
    }
}

impl Drop for Archive<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from parse and is released once.
        unsafe { c::clangoffload_archive_free(self.handle) }
    }
}

/// The OffloadBinaries back to back in a buffer, with their entries.
pub struct OffloadBinaries<'data> {
    handle: *mut c::clangoffload_offload_binaries,
    _data: std::marker::PhantomData<&'data [u8]>,
}

/// One image of an [`OffloadBinaries`], borrowing it.
#[derive(Debug, Clone)]
pub struct OffloadImage<'a> {
    pub version: u32,
    pub image_kind: u16,
    pub offload_kind: u16,
    pub image: &'a [u8],
    pub strings: Vec<(&'a [u8], &'a [u8])>,
}

impl<'data> OffloadBinaries<'data> {
    /// Parses every binary in `data`; with `lenient`, the binaries before a
    /// damaged one are kept and [`OffloadBinaries::fault`] tells what ended
    /// the walk.
    pub fn parse(data: &'data [u8], lenient: bool, max_size: u64) -> Result<Self, AbiError> {
        let mut handle = std::ptr::null_mut();
        let flags = if lenient {
            c::CLANGOFFLOAD_PARSE_LENIENT
        } else {
            0
        };
        // SAFETY: data is live for 'data, which the returned value cannot outlive.
        call(|err| unsafe {
            c::clangoffload_offload_binaries_parse(
                data.as_ptr(),
                data.len(),
                max_size,
                flags,
                &mut handle,
                err,
            )
        })?;
        Ok(OffloadBinaries {
            handle,
            _data: std::marker::PhantomData,
        })
    }

    /// The images of every binary, in file order.
    pub fn images(&self) -> Vec<OffloadImage<'_>> {
        // SAFETY: the handle is live.
        let count = unsafe { c::clangoffload_offload_binaries_entry_count(self.handle) };
        (0..count).filter_map(|i| self.image(i)).collect()
    }

    fn image(&self, index: usize) -> Option<OffloadImage<'_>> {
        let mut out = c::clangoffload_offload_entry {
            binary_index: 0,
            binary_offset: 0,
            version: 0,
            compressed: 0,
            image_kind: 0,
            offload_kind: 0,
            flags: 0,
            image: NO_BYTES,
            image_offset: 0,
            string_count: 0,
            triple: NO_BYTES,
            arch: NO_BYTES,
        };
        // SAFETY: the handle is live; out is a valid record.
        let status =
            unsafe { c::clangoffload_offload_binaries_get_entry(self.handle, index, &mut out) };
        if status != Status::Ok {
            return None;
        }
        let strings = (0..out.string_count)
            .map_while(|s| {
                let mut pair = c::clangoffload_string_pair {
                    key: NO_BYTES,
                    value: NO_BYTES,
                };
                // SAFETY: the handle is live; pair is a valid record.
                let status = unsafe {
                    c::clangoffload_offload_binaries_get_string(self.handle, index, s, &mut pair)
                };
                // SAFETY: the views borrow the buffer or the handle, both
                // live as long as &self.
                (status == Status::Ok).then(|| unsafe { (view(pair.key), view(pair.value)) })
            })
            .collect();
        Some(OffloadImage {
            version: out.version,
            image_kind: out.image_kind,
            offload_kind: out.offload_kind,
            // SAFETY: as above.
            image: unsafe { view(out.image) },
            strings,
        })
    }
}

impl Drop for OffloadBinaries<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from parse and is released once.
        unsafe { c::clangoffload_offload_binaries_free(self.handle) }
    }
}

/// An image kind's extension (`style` 0) or objdump name (`style` 1).
pub fn image_kind_name(kind: u16, style: u32) -> &'static str {
    // SAFETY: the library returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(c::clangoffload_image_kind_name(kind, style)) }
        .to_str()
        .unwrap_or("")
}

/// An offload kind's name as objdump prints it.
pub fn offload_kind_name(kind: u16) -> &'static str {
    // SAFETY: the library returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(c::clangoffload_offload_kind_name(kind)) }
        .to_str()
        .unwrap_or("none")
}

/// A section of an ELF file holding offload data.
#[derive(Debug, Clone, Copy)]
pub struct OffloadSection<'data> {
    pub kind: c::clangoffload_section_kind,
    pub index: u32,
    pub name: &'data [u8],
    pub data: &'data [u8],
    pub offset: u64,
}

/// The offload sections of an ELF file, in section order; a damaged section
/// header is an error item and the walk goes on.
pub fn offload_sections(data: &[u8]) -> Vec<Result<OffloadSection<'_>, AbiError>> {
    let mut found = Vec::new();
    let mut index = 0u32;
    loop {
        let mut out = c::clangoffload_offload_section {
            kind: c::clangoffload_section_kind::OffloadBinaries,
            section_index: 0,
            name: NO_BYTES,
            data: NO_BYTES,
            offset: 0,
        };
        // SAFETY: data is live; index, out and err are valid records.
        let result = call(|err| unsafe {
            c::clangoffload_elf_offload_section_next(
                data.as_ptr(),
                data.len(),
                &mut index,
                &mut out,
                err,
            )
        });
        match result {
            Ok(()) => found.push(Ok(OffloadSection {
                kind: out.kind,
                index: out.section_index,
                // SAFETY: the views borrow `data`.
                name: unsafe { view(out.name) },
                // SAFETY: as above.
                data: unsafe { view(out.data) },
                offset: out.offset,
            })),
            Err(e) if e.status == Status::End => break,
            // After an error about the whole file the next call gives END.
            Err(e) => found.push(Err(e)),
        }
    }
    found
}

/// A fat-binary wrapper record and where its pointer leads.
#[derive(Debug, Clone, Copy)]
pub struct WrapperRecord<'data> {
    pub magic: u32,
    pub version: u32,
    /// (section index, offset in it, the container there) when found.
    pub target: Option<(u32, u64, &'data [u8])>,
}

/// The wrapper records of section `section` of the ELF file `data`.
pub fn wrapper_records(data: &[u8], section: u32) -> Result<Vec<WrapperRecord<'_>>, AbiError> {
    let blank = c::clangoffload_fatbin_wrapper_record {
        magic: 0,
        version: 0,
        binary_address: 0,
        resolved: 0,
        target_section: 0,
        target_offset: 0,
        target: NO_BYTES,
    };
    let mut records = Vec::new();
    let mut count = 0usize;
    loop {
        let mut err = empty_error();
        // SAFETY: data is live; `records` has room for its length; count
        // and err are valid records.
        let status = unsafe {
            c::clangoffload_fatbin_wrappers(
                data.as_ptr(),
                data.len(),
                section,
                records.as_mut_ptr(),
                records.len(),
                &mut count,
                &mut err,
            )
        };
        match status {
            Status::BufferTooSmall if count > records.len() => records = vec![blank; count],
            Status::Ok => break,
            status => return Err(record_error(status, &err)),
        }
    }
    Ok(records
        .iter()
        .take(count)
        .map(|out| WrapperRecord {
            magic: out.magic,
            version: out.version,
            // SAFETY: the view borrows `data`.
            target: (out.resolved != 0).then(|| {
                (out.target_section, out.target_offset, unsafe {
                    view(out.target)
                })
            }),
        })
        .collect())
}

/// The target ID an AMDGPU code object's header names, if it is one.
pub fn amdgpu_target_id(code_object: &[u8]) -> Option<String> {
    text_out(|buf, cap, len| {
        let mut err = empty_error();
        // SAFETY: code_object is live; buf is writable for cap bytes.
        unsafe {
            c::clangoffload_amdgpu_target_id(
                code_object.as_ptr(),
                code_object.len(),
                buf,
                cap,
                len,
                &mut err,
            )
        }
    })
    .ok()
}

/// One container found by [`scan`].
#[derive(Debug, Clone, Copy)]
pub struct ScanHit<'a> {
    pub kind: c::clangoffload_container_kind,
    /// `Status::Ok`, or why the magic there starts no container.
    pub status: u32,
    pub offset: u64,
    pub data: &'a [u8],
}

/// Every container anywhere in `data`, with (if `rejected`) the magics that
/// start none.
pub fn scan(data: &[u8], rejected: bool) -> Vec<ScanHit<'_>> {
    let flags = if rejected {
        c::CLANGOFFLOAD_SCAN_REJECTED
    } else {
        0
    };
    let mut cursor = 0u64;
    let mut hits = Vec::new();
    loop {
        let mut out = c::clangoffload_scan_hit {
            kind: c::clangoffload_container_kind::Bundle,
            status: 0,
            offset: 0,
            data: NO_BYTES,
        };
        // SAFETY: data is live; cursor and out are valid records.
        let status = unsafe {
            c::clangoffload_scan_next(data.as_ptr(), data.len(), flags, &mut cursor, &mut out)
        };
        if status != Status::Ok {
            break;
        }
        hits.push(ScanHit {
            kind: out.kind,
            status: out.status,
            offset: out.offset,
            // SAFETY: the view borrows `data`.
            data: unsafe { view(out.data) },
        });
    }
    hits
}

/// The static message of a status value.
pub fn status_message(status: u32) -> String {
    // SAFETY: status_message returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(c::clangoffload_status_message(status)) }
        .to_string_lossy()
        .into_owned()
}
