//! What each container of a file gives a device, through the library
//! (`clangoffload_select`): the choice, its reason and its code as safe
//! Rust values.

use super::{blank_error, c, check, Buffer, Handle};

/// The library's selection over a file's bytes; borrows them.
pub struct Selection<'data> {
    handle: Handle<'data, c::clangoffload_selection>,
}

/// One container and what it gives the device.
pub struct Selected<'a> {
    /// Its place among the selection's containers.
    pub index: usize,
    pub kind: &'a [u8],
    pub offset: u64,
    /// `native`, `generic`, `spirv`, `cubin`, `ptx`; `None` when nothing
    /// loads.
    pub how: Option<&'static str>,
    pub id: &'a [u8],
    pub output_name: &'a [u8],
    pub reason: &'a [u8],
    /// The container could not be read (`reason` is the error).
    pub failed: bool,
}

impl<'data> Selection<'data> {
    /// What each container of `data` (a file named `name`) gives `device`.
    pub fn new(data: &'data [u8], name: &str, device: &str) -> Result<Self, String> {
        let handle = Handle::make(c::clangoffload_selection_free, |out| {
            let mut err = blank_error();
            // SAFETY: `data` outlives the handle ('data); `name` and
            // `device` are read during the call; `out` and `err` are
            // writable.
            let status = unsafe {
                c::clangoffload_select(
                    data.as_ptr(),
                    data.len(),
                    name.as_ptr().cast(),
                    name.len(),
                    device.as_ptr().cast(),
                    device.len(),
                    0,
                    out,
                    &mut err,
                )
            };
            match status {
                c::clangoffload_status::NotFound => Err(format!(
                    "'{device}' is no device: give an AMD target ID (gfx90a:xnack+) or an NVIDIA SM (sm_89)"
                )),
                status => check(status, &err),
            }
        })?;
        Ok(Selection { handle })
    }

    /// Every container, in file order.
    pub fn containers(&self) -> Vec<Selected<'_>> {
        let records = self.handle.list(
            c::clangoffload_selection_count,
            c::clangoffload_selection_get,
        );
        records
            .into_iter()
            .enumerate()
            .map(|(index, r)| Selected {
                index,
                kind: self.handle.bytes(r.kind_name),
                offset: r.offset,
                how: r.loads.then(|| how_name(r.how)),
                id: self.handle.bytes(r.id),
                output_name: self.handle.bytes(r.output_name),
                reason: self.handle.bytes(r.reason),
                failed: r.error_status != 0,
            })
            .collect()
    }

    /// Damage found between containers: each its message.
    pub fn failures(&self) -> Vec<&[u8]> {
        self.handle
            .list(
                c::clangoffload_selection_failure_count,
                c::clangoffload_selection_get_failure,
            )
            .into_iter()
            .map(|v| self.handle.bytes(v))
            .collect()
    }

    /// The code container `index` gives the device (a compressed bundle
    /// decoded whole and its hash checked).
    pub fn read(&self, index: usize) -> Result<Buffer, String> {
        let (mut out, mut err) = (Buffer::empty(), blank_error());
        // SAFETY: the handle is live; `out` and `err` are writable.
        let status = unsafe {
            c::clangoffload_selection_read(self.handle.ptr(), index, 0, 0, &mut out.0, &mut err)
        };
        check(status, &err).map(|()| out)
    }
}

/// The library's name of a `CLANGOFFLOAD_SELECT_*` number.
pub fn how_name(how: u32) -> &'static str {
    super::static_view(c::clangoffload_select_how_name(how))
}
