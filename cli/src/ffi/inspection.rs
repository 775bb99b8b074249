//! A safe view of the C ABI's inspection (`clangoffload_inspect`): its
//! records, and the text their views name, borrowed from the inspected
//! buffer or the handle.

use std::borrow::Cow;

use super::{c, record, Status};
use c::clangoffload_inspection as Handle;

pub use c::{
    clangoffload_bytes as Bytes, clangoffload_container_kind as Kind,
    clangoffload_inspected_container as Container, clangoffload_inspected_entry as Entry,
    clangoffload_inspected_file as File, clangoffload_inspected_image as Image,
    clangoffload_inspection_error as Error, clangoffload_inspection_note as Note,
    clangoffload_inspection_note_kind as NoteKind, clangoffload_inspection_place as Place,
};

/// Lets go of the pages of a part of the input the library is done with.
pub(super) unsafe extern "C" fn release(
    context: *mut std::ffi::c_void,
    data: *const u8,
    len: usize,
) {
    // SAFETY: the context is the `Input` given with the call, live during
    // it, only read (its release is `&self`, safe from any thread).
    let input = unsafe { &*context.cast_const().cast::<crate::io::Input>() };
    // SAFETY: the part is `len` bytes of the input's data, live and not
    // written during this call.
    let part = unsafe { std::slice::from_raw_parts(data, len) };
    input.release_part(part);
}

/// An error record's status for bytes that start no known container.
// A fieldless `repr(u32)` enum's value: exact.
#[allow(clippy::as_conversions)]
pub const UNKNOWN_CONTAINER: u32 = Status::UnknownContainer as u32;

/// What the library found in a buffer that outlives it.
pub struct Inspection<'data>(super::Handle<'data, Handle>);

impl<'data> Inspection<'data> {
    /// Inspects `data`, decoding each compressed container to at most
    /// `max_size` bytes: whole when `verify` asks (a wrong hash is then an
    /// error of its container), else only as far as its entry table.
    pub fn new(data: &'data [u8], max_size: u64, verify: bool) -> Result<Self, String> {
        let flags = if verify {
            0
        } else {
            c::CLANGOFFLOAD_INSPECT_TABLES_ONLY
        };
        super::Handle::make(c::clangoffload_inspection_free, |out| {
            // SAFETY: `data` is readable and outlives the handle (which
            // borrows it for 'data); `out` is writable.
            match unsafe {
                c::clangoffload_inspect(data.as_ptr(), data.len(), flags, max_size, out)
            } {
                Status::Ok => Ok(()),
                status => Err(format!("cannot inspect: {status:?}")),
            }
        })
        .map(Inspection)
    }

    /// Inspects `input` with every compressed container decoded whole and
    /// its hash checked, on `threads` threads under a memory budget of
    /// `budget` bytes (`None`: the library's default), letting go of each
    /// container's pages once it is checked.
    pub fn verified(
        input: &'data crate::io::Input,
        max_size: u64,
        threads: usize,
        budget: Option<u64>,
    ) -> Result<Self, String> {
        let data = input.data();
        super::Handle::make(c::clangoffload_inspection_free, |out| {
            // SAFETY: `data` is readable and outlives the handle (which
            // borrows it for 'data); `release` may be called from any
            // thread with `input`, which outlives the call; `out` is
            // writable.
            match unsafe {
                c::clangoffload_inspect_parallel(
                    data.as_ptr(),
                    data.len(),
                    0,
                    max_size,
                    threads,
                    budget.unwrap_or(0),
                    Some(release),
                    std::ptr::from_ref(input).cast_mut().cast(),
                    out,
                )
            } {
                Status::Ok => Ok(()),
                status => Err(format!("cannot inspect: {status:?}")),
            }
        })
        .map(Inspection)
    }

    pub fn files(&self) -> Vec<File> {
        self.0.list(
            c::clangoffload_inspection_file_count,
            c::clangoffload_inspection_get_file,
        )
    }

    pub fn containers(&self) -> Vec<Container> {
        self.0.list(
            c::clangoffload_inspection_container_count,
            c::clangoffload_inspection_get_container,
        )
    }

    pub fn notes(&self) -> Vec<Note> {
        self.0.list(
            c::clangoffload_inspection_note_count,
            c::clangoffload_inspection_get_note,
        )
    }

    pub fn errors(&self) -> Vec<Error> {
        self.0.list(
            c::clangoffload_inspection_error_count,
            c::clangoffload_inspection_get_error,
        )
    }

    /// The entries of container `index` (its record says how many).
    pub fn entries(&self, index: usize, container: &Container) -> Vec<Entry> {
        self.0.nested(
            index,
            container.entry_count,
            c::clangoffload_inspection_get_entry,
        )
    }

    /// The images of container `index` (its record says how many).
    pub fn images(&self, index: usize, container: &Container) -> Vec<Image> {
        self.0.nested(
            index,
            container.image_count,
            c::clangoffload_inspection_get_image,
        )
    }

    /// The key-value strings of image `image` of container `container`, as
    /// the bytes they are.
    pub fn strings(&self, container: usize, image: usize, count: usize) -> Vec<(&[u8], &[u8])> {
        (0..count)
            .filter_map(|i| {
                let pair = record(|out| {
                    // SAFETY: the handle is live; `out` is writable.
                    unsafe {
                        c::clangoffload_inspection_get_string(
                            self.0.ptr(),
                            container,
                            image,
                            i,
                            out,
                        )
                    }
                })?;
                Some((self.0.bytes(pair.key), self.0.bytes(pair.value)))
            })
            .collect()
    }

    /// The text a view of one of this inspection's records names (bytes
    /// that are not UTF-8 replaced).
    pub fn text(&self, view: Bytes) -> Cow<'_, str> {
        String::from_utf8_lossy(self.0.bytes(view))
    }
}

/// What `data` is when it holds no container, in the library's words
/// (`clangoffload_file_describe`), and whether it is device code of its
/// own (a raw code object or cubin).
pub fn describe(data: &[u8]) -> (String, bool) {
    let (mut len, mut device_code) = (0, false);
    let mut call = |buf: &mut [u8], len: &mut usize| {
        // SAFETY: `data` is live for the call; `buf` is writable for its
        // length (or NULL with 0); `len` and `device_code` are writable.
        unsafe {
            c::clangoffload_file_describe(
                data.as_ptr(),
                data.len(),
                if buf.is_empty() {
                    std::ptr::null_mut()
                } else {
                    buf.as_mut_ptr().cast()
                },
                buf.len(),
                len,
                &mut device_code,
            )
        }
    };
    let _ = call(&mut [], &mut len);
    // The text and its NUL.
    let mut buf = vec![0u8; len.saturating_add(1)];
    if call(&mut buf, &mut len) != Status::Ok {
        return (String::new(), device_code);
    }
    buf.truncate(len);
    (String::from_utf8_lossy(&buf).into_owned(), device_code)
}
