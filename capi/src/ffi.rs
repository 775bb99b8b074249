//! The panic boundary and the pointer checks every exported function uses.

use core::ffi::c_char;

#[cfg(feature = "alloc")]
use clangoffload::Error;

use crate::status::clangoffload_status;
#[cfg(feature = "alloc")]
use crate::status::{clangoffload_error, report};

/// Runs an exported function's body, turning a panic into
/// `CLANGOFFLOAD_STATUS_PANIC` so that none crosses into C. The body returns
/// `Result<(), clangoffload_status>`; `?` on a failed check returns its status.
#[cfg(feature = "std")]
macro_rules! ffi_guard {
    ($body:block) => {{
        let run = || -> Result<(), $crate::status::clangoffload_status> { $body };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(Ok(())) => $crate::status::clangoffload_status::Ok,
            Ok(Err(status)) => status,
            Err(_) => $crate::status::clangoffload_status::Panic,
        }
    }};
}

/// The embedded build is compiled with `panic = "abort"`: nothing can unwind
/// into C, and a panic (never expected) ends in the panic handler.
#[cfg(not(feature = "std"))]
macro_rules! ffi_guard {
    ($body:block) => {{
        let run = || -> Result<(), $crate::status::clangoffload_status> { $body };
        match run() {
            Ok(()) => $crate::status::clangoffload_status::Ok,
            Err(status) => status,
        }
    }};
}

/// A borrowed byte range: `len` bytes at `ptr`. `ptr` may be NULL only when
/// `len` is 0.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bytes {
    /// First byte.
    pub ptr: *const u8,
    /// Number of bytes.
    pub len: usize,
}

/// A length as a 64-bit offset (lossless: `usize` is at most 64 bits on every
/// target the library supports; saturates otherwise).
pub(crate) fn len_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

impl clangoffload_bytes {
    pub(crate) fn of(bytes: &[u8]) -> Self {
        clangoffload_bytes {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        }
    }

    /// # Safety
    /// `self` must describe readable memory that outlives `'a`, as the caller
    /// of the exported function promised.
    #[cfg(feature = "alloc")]
    pub(crate) unsafe fn as_slice<'a>(&self) -> Result<&'a [u8], clangoffload_status> {
        // SAFETY: forwarded to the caller.
        unsafe { slice_arg(self.ptr, self.len) }
    }
}

/// # Safety
/// If `ptr` is not NULL, `len` bytes at `ptr` must be readable for `'a`.
pub(crate) unsafe fn slice_arg<'a>(
    ptr: *const u8,
    len: usize,
) -> Result<&'a [u8], clangoffload_status> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(clangoffload_status::NullArgument)
        };
    }
    if isize::try_from(len).is_err() {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: non-NULL, length fits isize, readability promised by the caller.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The mutable twin of [`slice_arg`], for the functions that change the
/// caller's bytes in place.
///
/// # Safety
/// If `ptr` is not NULL, `len` bytes at `ptr` must be readable and writable
/// for `'a`, and used by nothing else meanwhile.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn mut_slice_arg<'a>(
    ptr: *mut u8,
    len: usize,
) -> Result<&'a mut [u8], clangoffload_status> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&mut [])
        } else {
            Err(clangoffload_status::NullArgument)
        };
    }
    if isize::try_from(len).is_err() {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: non-NULL, length fits isize, exclusive access promised by the
    // caller.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// # Safety
/// As [`slice_arg`].
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
) -> Result<&'a str, clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let bytes = unsafe { slice_arg(ptr.cast(), len) }?;
    core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
}

/// # Safety
/// If `ptr` is not NULL it must point to `n` readable values of `T` for `'a`.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn array_arg<'a, T>(
    ptr: *const T,
    n: usize,
) -> Result<&'a [T], clangoffload_status> {
    if ptr.is_null() {
        return if n == 0 {
            Ok(&[])
        } else {
            Err(clangoffload_status::NullArgument)
        };
    }
    if !ptr.is_aligned() {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: non-NULL and aligned; readability of n values promised by the caller.
    Ok(unsafe { core::slice::from_raw_parts(ptr, n) })
}

/// # Safety
/// If `ptr` is not NULL it must point to a writable, aligned `T`.
pub(crate) unsafe fn out_arg<'a, T>(ptr: *mut T) -> Result<&'a mut T, clangoffload_status> {
    if !ptr.is_aligned() {
        return Err(clangoffload_status::InvalidArgument);
    }
    // SAFETY: aligned; NULL is turned into None; writability promised by the caller.
    unsafe { ptr.as_mut() }.ok_or(clangoffload_status::NullArgument)
}

/// The caller's buffer `buf` of `cap` bytes for a text of `len` bytes: its
/// first `len + 1` bytes (text and NUL), with `*out_len` set to `len`. When
/// they do not fit, `*out_len` still gets the length needed and the status is
/// `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `buf` must be NULL or writable for `cap` bytes; `out_len` as [`out_arg`].
unsafe fn text_buffer<'a>(
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> Result<&'a mut [u8], clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let out_len = unsafe { out_arg(out_len) }?;
    *out_len = len;
    if len >= cap || buf.is_null() {
        return Err(clangoffload_status::BufferTooSmall);
    }
    // SAFETY: buf is non-NULL and writable for cap > len bytes.
    let dest = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), cap) };
    dest.get_mut(..=len)
        .ok_or(clangoffload_status::BufferTooSmall)
}

/// Copies `text` into the caller's buffer `buf` of `cap` bytes with a NUL
/// after it and stores its length (without the NUL) in `*out_len`. When it
/// does not fit, stores the length needed and fails with `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `buf` must be NULL or writable for `cap` bytes; `out_len` as [`out_arg`].
#[cfg(feature = "alloc")]
pub(crate) unsafe fn write_text(
    text: &[u8],
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> Result<(), clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let dest = unsafe { text_buffer(text.len(), buf, cap, out_len) }?;
    let (body, nul) = dest.split_at_mut(text.len());
    body.copy_from_slice(text);
    nul.fill(0);
    Ok(())
}

/// Copies `bytes` (a file the library made) into the caller's buffer `out`
/// of `cap` bytes and stores their length in `*out_len`. When they do not
/// fit, or `out` is NULL (a question for the length), stores the length
/// needed and fails with `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `out` must be NULL or writable for `cap` bytes and not overlap `bytes`;
/// `out_len` as [`out_arg`].
#[cfg(feature = "alloc")]
pub(crate) unsafe fn write_bytes(
    bytes: &[u8],
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> Result<(), clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let out_len = unsafe { out_arg(out_len) }?;
    *out_len = bytes.len();
    if bytes.len() > cap || out.is_null() {
        return Err(clangoffload_status::BufferTooSmall);
    }
    // SAFETY: out is writable for cap >= bytes.len() bytes, as the caller
    // promises, and does not overlap `bytes`.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

/// The tail of every function that makes a file into the caller's buffer:
/// the core's result `made` written as [`write_bytes`] writes it, or its
/// error reported into `*err` (may be NULL).
///
/// # Safety
/// `out` must be NULL or writable for `cap` bytes; `out_len` as
/// [`out_arg`]; `err` NULL or writable.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn write_made(
    made: Result<alloc::vec::Vec<u8>, Error>,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
    err: *mut clangoffload_error,
) -> Result<(), clangoffload_status> {
    // SAFETY: `err` is NULL or writable, as the caller promises.
    let bytes = made.map_err(|e| unsafe { report(&e, err) })?;
    // SAFETY: `out` is NULL or writable for `cap` bytes (not overlapping
    // this fresh buffer) and `out_len` writable, as the caller promises.
    unsafe { write_bytes(&bytes, out, cap, out_len) }
}

/// [`write_text`] of `value`'s `Display` text, formatted straight into the
/// caller's buffer (no allocation): measured first, then written.
///
/// # Safety
/// As [`write_text`].
pub(crate) unsafe fn write_display(
    value: &dyn core::fmt::Display,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> Result<(), clangoffload_status> {
    use core::fmt::Write;

    /// Counts the bytes and copies those that fit into `dest`.
    struct Sink<'a> {
        dest: &'a mut [u8],
        len: usize,
    }
    impl Write for Sink<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            if let Some(room) = self.dest.get_mut(self.len..) {
                for (d, b) in room.iter_mut().zip(s.bytes()) {
                    *d = b;
                }
            }
            self.len = self.len.saturating_add(s.len());
            Ok(())
        }
    }

    let mut measure = Sink {
        dest: &mut [],
        len: 0,
    };
    write!(measure, "{value}").map_err(|_| clangoffload_status::InvalidArgument)?;
    // SAFETY: forwarded to the caller.
    let dest = unsafe { text_buffer(measure.len, buf, cap, out_len) }?;
    // The text fills all but the last byte, which stays for the NUL.
    let mut sink = Sink { dest, len: 0 };
    write!(sink, "{value}").map_err(|_| clangoffload_status::InvalidArgument)?;
    if let Some(nul) = sink.dest.last_mut() {
        *nul = 0;
    }
    Ok(())
}

/// Copies `items` into the caller's array `out` of `capacity` records and
/// stores their number in `*count`. When they do not fit, nothing is copied
/// and the status is `BUFFER_TOO_SMALL` (call with `out` NULL and `capacity`
/// 0 to learn the number).
///
/// # Safety
/// `out` must be NULL (only with `capacity` 0) or writable for `capacity`
/// records; `count` as [`out_arg`].
#[cfg(feature = "alloc")]
pub(crate) unsafe fn fill_array<T: Copy>(
    items: &[T],
    out: *mut T,
    capacity: usize,
    count: *mut usize,
) -> Result<(), clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let count = unsafe { out_arg(count) }?;
    if (out.is_null() && capacity != 0) || !out.is_aligned() {
        return Err(if out.is_null() {
            clangoffload_status::NullArgument
        } else {
            clangoffload_status::InvalidArgument
        });
    }
    *count = items.len();
    if items.len() > capacity {
        return Err(clangoffload_status::BufferTooSmall);
    }
    if !items.is_empty() {
        // SAFETY: `out` is writable for `capacity` >= items.len() aligned
        // records, as the caller promises, and does not overlap `items`.
        unsafe { core::ptr::copy_nonoverlapping(items.as_ptr(), out, items.len()) };
    }
    Ok(())
}

/// # Safety
/// `ptr` must be NULL or point to a live handle of type `T`.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn handle_arg<'a, T>(ptr: *const T) -> Result<&'a T, clangoffload_status> {
    // SAFETY: forwarded to the caller.
    unsafe { ptr.as_ref() }.ok_or(clangoffload_status::NullArgument)
}

/// The three arguments every job over an input takes, checked in the order
/// each job reports them: the input (`data`, `len`), its options, and where
/// the new handle goes.
///
/// # Safety
/// `data` readable for `len` bytes for the job's life (or NULL with 0);
/// `options` NULL or readable; `out` NULL or writable.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn job_args<'a, O, T>(
    data: *const u8,
    len: usize,
    options: *const O,
    out: *mut T,
) -> Result<(&'static [u8], &'a O, &'a mut T), clangoffload_status> {
    // SAFETY: readable for the job's life, as the caller promises.
    let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
    // SAFETY: readable, as the caller promises.
    let options = unsafe { handle_arg(options) }?;
    // SAFETY: writable, as the caller promises.
    let out = unsafe { out_arg(out) }?;
    Ok((data, options, out))
}

/// Moves a new handle to the caller.
#[cfg(feature = "alloc")]
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    alloc::boxed::Box::into_raw(alloc::boxed::Box::new(value))
}

/// Releases a handle made by [`into_handle`]; NULL is allowed.
///
/// # Safety
/// `ptr` is NULL or came from [`into_handle`] and is released once.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn free_handle<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: from Box::into_raw in into_handle, released once, as the
        // caller promises.
        drop(unsafe { alloc::boxed::Box::from_raw(ptr) });
    }
}

/// The good items of a walk that checks as it goes, in order, and the first
/// error. Without `lenient` that error is reported into `*err` (may be NULL)
/// and returned as the status instead.
///
/// # Safety
/// `err` must be NULL or writable.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn collect_checked<T>(
    items: impl IntoIterator<Item = Result<T, Error>>,
    lenient: bool,
    err: *mut clangoffload_error,
) -> Result<(alloc::vec::Vec<T>, Option<Error>), clangoffload_status> {
    let mut good = alloc::vec::Vec::new();
    let mut fault = None;
    for item in items {
        match item {
            Ok(item) => {
                good.try_reserve(1)
                    .map_err(|_| clangoffload_status::OutOfMemory)?;
                good.push(item);
            }
            // SAFETY: `err` is NULL or writable, as the caller promises.
            Err(e) if !lenient => return Err(unsafe { report(&e, err) }),
            Err(e) => {
                fault.get_or_insert(e);
            }
        }
    }
    Ok((good, fault))
}

/// A handle's kept fault as a status, with details in `*err` (may be NULL).
///
/// # Safety
/// `err` must be NULL or writable.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn report_fault(
    fault: Option<&Error>,
    err: *mut clangoffload_error,
) -> Result<(), clangoffload_status> {
    match fault {
        // SAFETY: NULL or writable, as the caller promises.
        Some(e) => Err(unsafe { report(e, err) }),
        None => Ok(()),
    }
}
