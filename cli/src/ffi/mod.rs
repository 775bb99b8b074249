//! The one door to the library: safe calls to its C ABI, the same one C
//! programs link. Views become slices, handles free themselves, notes
//! (warnings, `-verbose` reports, whole error messages) come back through one
//! callback. Every rule is the library's; nothing here decides anything.

pub mod coverage;
pub mod cuda;
pub mod inspection;
pub mod job;
pub mod kpack;
pub mod kpack_split;
pub mod packaging;
pub mod select;
pub mod wrapping;

use crate::io::Input;
use crate::stdio::err;
use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

pub use c::{clangoffload_bytes as Bytes, clangoffload_status as Status};
pub use clangoffload_capi as c;

/// A view of bytes the library only reads during a call.
pub fn view(bytes: &[u8]) -> Bytes {
    Bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

/// # Safety
/// `v` must come from the library and view memory that outlives `'a` (the
/// input it borrows, or a handle alive for `'a`).
pub unsafe fn slice<'a>(v: Bytes) -> &'a [u8] {
    if v.ptr.is_null() || v.len == 0 {
        return &[];
    }
    // SAFETY: live memory of `len` bytes, as the caller promises.
    unsafe { std::slice::from_raw_parts(v.ptr, v.len) }
}

/// Text the library returns as static storage (status messages, kind
/// names): only for those functions, which never return NULL.
fn static_text(text: *const c_char) -> &'static str {
    // SAFETY: the library's name and message functions return static
    // NUL-terminated ASCII strings (never NULL).
    unsafe { CStr::from_ptr(text) }.to_str().unwrap_or_default()
}

/// A view of the library's static storage (a name it returns), as text.
pub fn static_view(view: Bytes) -> &'static str {
    // SAFETY: the library's name functions return views of static storage.
    let bytes = unsafe { slice(view) };
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The library's message for a status (or a status number).
pub fn status_message(status: impl Into<u32>) -> String {
    static_text(c::clangoffload_status_message(status.into())).to_owned()
}

/// An OffloadBinary image kind's name (`style` as the library takes it).
pub fn image_kind_name(kind: u16, style: u32) -> &'static str {
    static_text(c::clangoffload_image_kind_name(kind, style))
}

/// An offload kind's name as llvm-objdump prints it.
pub fn offload_kind_name(kind: u16) -> &'static str {
    static_text(c::clangoffload_offload_kind_name(kind))
}

/// A container kind's tag (`compressed`, `offload_binary`): JSON's `kind`.
pub fn container_kind_tag(kind: c::clangoffload_container_kind) -> &'static str {
    static_view(c::clangoffload_container_kind_tag(kind.into()))
}

/// A container kind's name as reports print it (`compressed bundle`).
pub fn container_kind_name(kind: c::clangoffload_container_kind) -> &'static str {
    static_view(c::clangoffload_container_kind_name(kind.into()))
}

/// Where a call's notes go: warnings and verbose reports to stderr as they
/// come (or held, for a call on another thread whose notes are printed in
/// order later), the error's whole message kept for the caller.
struct Sink<'a> {
    program: &'a str,
    error: Option<String>,
    /// Each failure the job reports once its outputs are written.
    failures: Vec<String>,
    /// The input the call reads, whose pages go as the library is done
    /// with them (`CLANGOFFLOAD_NOTE_DONE_WITH`).
    input: Option<&'a Input>,
}

unsafe extern "C" fn notify(context: *mut c_void, kind: u32, message: *const u8, len: usize) {
    // SAFETY: the library passes back the Sink given with the call, live
    // and reached by nothing else during this callback.
    let sink = unsafe { &mut *context.cast::<Sink>() };
    // SAFETY: the library passes a view of `len` bytes live during this
    // call.
    let text = unsafe { slice(Bytes { ptr: message, len }) };
    if kind == c::CLANGOFFLOAD_NOTE_DONE_WITH {
        if let Some(input) = sink.input {
            input.release_part(text);
        }
        return;
    }
    let text = String::from_utf8_lossy(text);
    match kind {
        c::CLANGOFFLOAD_NOTE_WARNING => {
            let program = sink.program;
            err!("{program}: warning: {text}\n");
        }
        c::CLANGOFFLOAD_NOTE_VERBOSE => err!("{text}"),
        c::CLANGOFFLOAD_NOTE_FAILURE => sink.failures.push(text.into_owned()),
        c::CLANGOFFLOAD_NOTE_ERROR => sink.error = Some(text.into_owned()),
        _ => {}
    }
}

/// Runs a call that takes a notes callback; its error is the whole message.
/// `Ok` holds the failures the job it made reports once written.
pub fn with_notes(
    program: &str,
    call: impl FnOnce(c::clangoffload_notify_fn, *mut c_void) -> Status,
) -> Result<Vec<String>, String> {
    notes(program, None, call)
}

/// [`with_notes`] for a call that reads `input` and says which parts of it
/// it is done with (`CLANGOFFLOAD_NOTIFY_DONE_WITH`): their pages go.
pub fn with_notes_on(
    program: &str,
    input: &Input,
    call: impl FnOnce(c::clangoffload_notify_fn, *mut c_void) -> Status,
) -> Result<Vec<String>, String> {
    notes(program, Some(input), call)
}

fn notes(
    program: &str,
    input: Option<&Input>,
    call: impl FnOnce(c::clangoffload_notify_fn, *mut c_void) -> Status,
) -> Result<Vec<String>, String> {
    let mut sink = Sink {
        program,
        error: None,
        failures: Vec::new(),
        input,
    };
    match call(Some(notify), std::ptr::from_mut(&mut sink).cast()) {
        Status::Ok => Ok(sink.failures),
        status => Err(sink.error.unwrap_or_else(|| status_message(status))),
    }
}

/// A record the library fills when it returns OK.
pub fn record<T>(get: impl FnOnce(*mut T) -> Status) -> Option<T> {
    let mut out = MaybeUninit::uninit();
    // SAFETY: on OK the library has written the whole record.
    (get(out.as_mut_ptr()) == Status::Ok).then(|| unsafe { out.assume_init() })
}

/// An error record to be filled.
pub fn blank_error() -> c::clangoffload_error {
    c::clangoffload_error {
        status: 0,
        offset: 0,
        entry: 0,
        message: [0; 256],
    }
}

/// A status as a result, with the error record's message (or the
/// status's).
pub fn check(status: Status, err: &c::clangoffload_error) -> Result<(), String> {
    if status == Status::Ok {
        return Ok(());
    }
    let message: Vec<u8> = err
        .message
        .iter()
        .take_while(|&&ch| ch != 0)
        .map(|&ch| ch.to_ne_bytes()[0])
        .collect();
    match String::from_utf8_lossy(&message) {
        m if m.is_empty() => Err(status_message(status)),
        m => Err(m.into_owned()),
    }
}

/// The bytes a function writes into a caller buffer: asked for the length
/// first (`call` with no buffer), then given a buffer of that length.
/// `call(buf, cap, &mut len, &mut err)`.
pub fn bytes_out(
    mut call: impl FnMut(*mut u8, usize, &mut usize, &mut c::clangoffload_error) -> Status,
) -> Result<Vec<u8>, String> {
    let (mut len, mut err) = (0, blank_error());
    match call(std::ptr::null_mut(), 0, &mut len, &mut err) {
        Status::BufferTooSmall => {}
        status => return check(status, &err).map(|()| Vec::new()),
    }
    let mut out = vec![0u8; len];
    let status = call(out.as_mut_ptr(), out.len(), &mut len, &mut err);
    check(status, &err)?;
    out.truncate(len);
    Ok(out)
}

/// Bytes the library allocated, released when dropped.
pub struct Buffer(pub c::clangoffload_buffer);

impl Buffer {
    pub fn empty() -> Buffer {
        Buffer(c::clangoffload_buffer {
            ptr: std::ptr::null_mut(),
            len: 0,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        if self.0.ptr.is_null() {
            return &[];
        }
        // SAFETY: the library filled the buffer; it lives until drop.
        unsafe { std::slice::from_raw_parts(self.0.ptr, self.0.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the buffer came from the library (or is empty) and is
        // released once.
        unsafe { c::clangoffload_buffer_free(&mut self.0) }
    }
}

/// One container (or, asked for, a rejected magic) found by [`scan`].
pub struct ScanHit<'a> {
    pub kind: c::clangoffload_container_kind,
    /// OK, or (a status number) why the magic there starts no container.
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
    let mut cursor = c::clangoffload_scan_cursor::default();
    let mut hits = Vec::new();
    // SAFETY: data is live for the call; cursor is the library's; each hit's
    // view borrows `data`.
    while let Some(hit) = record(|out| unsafe {
        c::clangoffload_scan_cursor_next(data.as_ptr(), data.len(), flags, &mut cursor, out)
    }) {
        hits.push(ScanHit {
            kind: hit.kind,
            status: hit.status,
            offset: hit.offset,
            // SAFETY: the view borrows `data`.
            data: unsafe { slice(hit.data) },
        });
    }
    hits
}

/// A handle the library made (a job, an inspection, an image list), freed
/// with its `_free` function when dropped. What it hands out borrows it or
/// the input it was made from (`'data`).
pub struct Handle<'data, T> {
    ptr: *mut T,
    free: unsafe extern "C" fn(*mut T),
    _data: PhantomData<&'data [u8]>,
}

/// A library function that fills record `index` of a handle's list.
pub type Get<T, R> = unsafe extern "C" fn(*const T, usize, *mut R) -> Status;
/// The same for record `index` (a `usize` or a `u64`) of list `parent`.
pub type GetNested<T, I, R> = unsafe extern "C" fn(*const T, usize, I, *mut R) -> Status;

impl<'data, T> Handle<'data, T> {
    /// Takes the handle `make` stores (a call returning OK), to be freed with
    /// `free`; the handle may borrow memory that lives for `'data`.
    pub fn make(
        free: unsafe extern "C" fn(*mut T),
        make: impl FnOnce(&mut *mut T) -> Result<(), String>,
    ) -> Result<Self, String> {
        let mut ptr = std::ptr::null_mut();
        make(&mut ptr)?;
        Ok(Handle {
            ptr,
            free,
            _data: PhantomData,
        })
    }

    pub fn ptr(&self) -> *const T {
        self.ptr
    }

    /// The handle, to be changed: only while nothing else uses it.
    pub fn ptr_mut(&mut self) -> *mut T {
        self.ptr
    }

    /// Every record of a list: `count` of them, each from `get`.
    pub fn list<R>(
        &self,
        count: unsafe extern "C" fn(*const T) -> usize,
        get: Get<T, R>,
    ) -> Vec<R> {
        let mut records = Vec::new();
        // SAFETY: the handle is live while `self` is, and `count` is its
        // list's count function.
        let n = unsafe { count(self.ptr) };
        for i in 0..n {
            let mut out = MaybeUninit::uninit();
            // SAFETY: the handle is live, `i` below the count, and `out` a
            // writable record.
            let status = unsafe { get(self.ptr, i, out.as_mut_ptr()) };
            if status == Status::Ok {
                // SAFETY: on OK `get` has written the whole record.
                records.push(unsafe { out.assume_init() });
            }
        }
        records
    }

    /// The `count` records of list `parent`.
    pub fn nested<I: TryFrom<usize>, R>(
        &self,
        parent: usize,
        count: usize,
        get: GetNested<T, I, R>,
    ) -> Vec<R> {
        let mut records = Vec::new();
        for i in (0..count).filter_map(|i| I::try_from(i).ok()) {
            let mut out = MaybeUninit::uninit();
            // SAFETY: the handle is live while `self` is, and `out` a
            // writable record; `get` checks `parent` and `i`.
            let status = unsafe { get(self.ptr, parent, i, out.as_mut_ptr()) };
            if status == Status::Ok {
                // SAFETY: on OK `get` has written the whole record.
                records.push(unsafe { out.assume_init() });
            }
        }
        records
    }

    /// The bytes a view of one of this handle's records names: in the
    /// input (`'data`) or in the handle.
    pub fn bytes(&self, v: Bytes) -> &[u8] {
        // SAFETY: the library's views of this handle's records name live
        // memory of the input or of the handle, both outliving `&self`.
        unsafe { slice(v) }
    }
}

impl<T> Drop for Handle<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the handle came from the library and is released once, by
        // its own free function.
        unsafe { (self.free)(self.ptr) }
    }
}
