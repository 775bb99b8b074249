//! The panic boundary and the pointer checks every exported function uses.

use std::ffi::c_char;

use crate::status::clangoffload_status;

/// Runs an exported function's body, turning a panic into
/// `CLANGOFFLOAD_STATUS_PANIC` so that none crosses into C. The body returns
/// `Result<(), clangoffload_status>`; `?` on a failed check returns its status.
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
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// # Safety
/// As [`slice_arg`].
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
) -> Result<&'a str, clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let bytes = unsafe { slice_arg(ptr.cast(), len) }?;
    std::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
}

/// # Safety
/// If `ptr` is not NULL it must point to `n` readable values of `T` for `'a`.
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
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
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

/// Copies `text` into the caller's buffer `buf` of `cap` bytes with a NUL
/// after it and stores its length (without the NUL) in `*out_len`. When it
/// does not fit, stores the length needed and fails with `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `buf` must be NULL or writable for `cap` bytes; `out_len` as [`out_arg`].
pub(crate) unsafe fn write_text(
    text: &[u8],
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> Result<(), clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let out_len = unsafe { out_arg(out_len) }?;
    if text.len() >= cap || buf.is_null() {
        *out_len = text.len();
        return Err(clangoffload_status::BufferTooSmall);
    }
    // SAFETY: buf is writable for cap > text.len() bytes.
    let dest = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), cap) };
    let (body, rest) = dest.split_at_mut(text.len());
    body.copy_from_slice(text);
    if let Some(nul) = rest.first_mut() {
        *nul = 0;
    }
    *out_len = text.len();
    Ok(())
}
