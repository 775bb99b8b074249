//! A safe view of the C ABI's inspection (`clangoffload_inspect`): its
//! records, and the text their views name, borrowed from the inspected
//! buffer or the handle.

use std::borrow::Cow;
use std::marker::PhantomData;

use super::{c, record, Status};
use c::clangoffload_inspection as Handle;

pub use c::{
    clangoffload_bytes as Bytes, clangoffload_container_kind as Kind,
    clangoffload_inspected_container as Container, clangoffload_inspected_entry as Entry,
    clangoffload_inspected_file as File, clangoffload_inspected_image as Image,
    clangoffload_inspection_error as Error, clangoffload_inspection_note as Note,
    clangoffload_inspection_note_kind as NoteKind, clangoffload_inspection_place as Place,
};

/// What the library found in a buffer that outlives it.
pub struct Inspection<'data> {
    handle: *mut Handle,
    _data: PhantomData<&'data [u8]>,
}

impl<'data> Inspection<'data> {
    /// Inspects `data`, decoding each compressed container to at most
    /// `max_size` bytes. A wrong hash is an error of its container.
    pub fn new(data: &'data [u8], max_size: u64) -> Result<Self, String> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: `data` is readable and outlives the handle (which borrows
        // it for 'data); `handle` is writable.
        let status =
            unsafe { c::clangoffload_inspect(data.as_ptr(), data.len(), 0, max_size, &mut handle) };
        match status {
            Status::Ok => Ok(Inspection {
                handle,
                _data: PhantomData,
            }),
            status => Err(format!("cannot inspect: {status:?}")),
        }
    }

    pub fn files(&self) -> Vec<File> {
        self.records(
            c::clangoffload_inspection_file_count,
            c::clangoffload_inspection_get_file,
        )
    }

    pub fn containers(&self) -> Vec<Container> {
        self.records(
            c::clangoffload_inspection_container_count,
            c::clangoffload_inspection_get_container,
        )
    }

    pub fn notes(&self) -> Vec<Note> {
        self.records(
            c::clangoffload_inspection_note_count,
            c::clangoffload_inspection_get_note,
        )
    }

    pub fn errors(&self) -> Vec<Error> {
        self.records(
            c::clangoffload_inspection_error_count,
            c::clangoffload_inspection_get_error,
        )
    }

    /// The entries of container `index` (its record says how many).
    pub fn entries(&self, index: usize, container: &Container) -> Vec<Entry> {
        self.nested(
            index,
            container.entry_count,
            c::clangoffload_inspection_get_entry,
        )
    }

    /// The images of container `index` (its record says how many).
    pub fn images(&self, index: usize, container: &Container) -> Vec<Image> {
        self.nested(
            index,
            container.image_count,
            c::clangoffload_inspection_get_image,
        )
    }

    /// The key-value strings of image `image` of container `container`, as
    /// text.
    pub fn strings(
        &self,
        container: usize,
        image: usize,
        count: usize,
    ) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
        (0..count)
            .filter_map(|i| {
                let pair = record(|out| {
                    // SAFETY: the handle is live; `out` is writable.
                    unsafe {
                        c::clangoffload_inspection_get_string(self.handle, container, image, i, out)
                    }
                })?;
                Some((self.text(pair.key), self.text(pair.value)))
            })
            .collect()
    }

    /// The text a view of one of this inspection's records names (bytes
    /// that are not UTF-8 replaced).
    pub fn text(&self, view: Bytes) -> Cow<'_, str> {
        if view.ptr.is_null() || view.len == 0 {
            return Cow::Borrowed("");
        }
        // SAFETY: the library's views name live memory of the inspected
        // buffer (alive for 'data) or of the handle (alive for &self).
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(view.ptr, view.len) })
    }

    /// Every record of a top-level list.
    fn records<T>(
        &self,
        count: unsafe extern "C" fn(*const Handle) -> usize,
        get: unsafe extern "C" fn(*const Handle, usize, *mut T) -> Status,
    ) -> Vec<T> {
        // SAFETY: the handle is live.
        let count = unsafe { count(self.handle) };
        (0..count)
            .filter_map(|i| {
                // SAFETY: the handle is live; `out` is writable.
                record(|out| unsafe { get(self.handle, i, out) })
            })
            .collect()
    }

    /// The `count` records of container `index`'s list.
    fn nested<T>(
        &self,
        index: usize,
        count: usize,
        get: unsafe extern "C" fn(*const Handle, usize, usize, *mut T) -> Status,
    ) -> Vec<T> {
        (0..count)
            .filter_map(|i| {
                // SAFETY: the handle is live; `out` is writable.
                record(|out| unsafe { get(self.handle, index, i, out) })
            })
            .collect()
    }
}

impl Drop for Inspection<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from clangoffload_inspect and is freed once.
        unsafe { c::clangoffload_inspection_free(self.handle) }
    }
}
