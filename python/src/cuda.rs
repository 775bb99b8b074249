//! A CUDA fat binary's entries as Python sees them: each image as
//! `cuobjdump` extracts it (a view of the file when stored, decoded with
//! the GIL released otherwise), named as core names them, and the code the
//! CUDA driver loads on a device.

use std::borrow::Cow;
use std::sync::Arc;

use clangoffload::cuda_fatbin::select::select_for_device as select_cuda;
use clangoffload::cuda_fatbin::{CodeName, Fatbin, Sm};
use clangoffload::cuda_host::{cuobjdump_base, CuobjdumpCounter, Listed};
use clangoffload::offset_in;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::{Detached, Held};
use crate::entry::{Cuda, Entry, Owner};
use crate::error::{core_error, invalid_sm};
use crate::source::{slice, to_u64, to_usize, Source};

/// Where a CUDA fat binary container lies: `len` bytes at `start` of
/// `file`, and its place in `cuobjdump`'s numbering of the file's images
/// when it was found as `cuobjdump` reads the file.
pub(crate) struct FatbinAt<'a> {
    pub(crate) file: &'a Arc<Source>,
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) numbering: Option<CuobjdumpCounter>,
}

impl FatbinAt<'_> {
    /// The fat binary's bytes, from a live export.
    fn bytes<'h>(&self, held: &'h Held) -> PyResult<&'h [u8]> {
        slice(held.bytes(), self.start, self.len)
    }
}

/// A CUDA entry's contents: viewed in the file when stored, else decoded
/// into a `bytes` the entries keep.
enum Contents<'py, 'a> {
    Stored(&'a [u8]),
    Decoded(Bound<'py, PyBytes>),
}

impl FatbinAt<'_> {
    /// The entries of a CUDA fat binary (each `--concat` entry followed by
    /// its members), as `cuobjdump` lists them; each one's data is its
    /// image as `cuobjdump` extracts it (a view of the file when stored,
    /// decoded with the GIL released otherwise).
    /// `only`: the one entry wanted (its offset, and member index), the
    /// others neither decoded nor built.
    pub(crate) fn entries(
        &self,
        py: Python<'_>,
        only: Option<(u64, Option<u64>)>,
    ) -> PyResult<Vec<Entry>> {
        let held = self.file.held()?;
        let base = to_u64(self.start);
        let located = |e: clangoffload::Error| core_error(py, &e, base);
        // Parsed from bytes that may be decoded with the GIL released (a
        // writable source's copied).
        let data = Detached::new(&held, self.bytes(&held)?);
        let fatbin = Fatbin::parse(data.bytes()).map_err(located)?;
        // cuobjdump's names: known for the fat binaries of a file opened by
        // path, found as cuobjdump reads it.
        let base = self.numbering.and(self.file.path()).map(cuobjdump_base);
        let mut counter = self.numbering.unwrap_or_default();
        let options = self.file.decompress_options();
        // The last entry's contents (its members lie in them), by offset.
        let mut last: Option<(u64, Contents<'_, '_>)> = None;
        let mut entries = Vec::new();
        for (index, listed) in counter
            .list(&fatbin, base.unwrap_or_default())
            .into_iter()
            .enumerate()
        {
            let entry = listed.entry;
            if only.is_some_and(|o| o != (entry.offset(), listed.member.map(|m| m.index))) {
                continue;
            }
            if last.as_ref().is_none_or(|(at, _)| *at != entry.offset()) {
                let contents = match data
                    .release(py, |_| entry.contents(&options))
                    .map_err(located)?
                {
                    Cow::Borrowed(stored) => Contents::Stored(stored),
                    Cow::Owned(bytes) => Contents::Decoded(PyBytes::new(py, &bytes)),
                };
                last = Some((entry.offset(), contents));
            }
            let Some((_, contents)) = &last else {
                continue;
            };
            let bytes = match contents {
                Contents::Decoded(d) => d.as_bytes(),
                Contents::Stored(stored) => stored,
            };
            let image = match &listed.member {
                Some(member) => entry.member_image(member, bytes),
                None => entry.image(bytes),
            }
            .map_err(located)?;
            let (owner, within) = match contents {
                Contents::Decoded(d) => {
                    (Owner::Decoded(d.clone().unbind()), offset_in(bytes, image))
                }
                // Its place in the file: in the fat binary, from its start.
                Contents::Stored(_) => (
                    Owner::File(Arc::clone(self.file)),
                    offset_in(data.bytes(), image)
                        .and_then(|at| at.checked_add(to_u64(self.start))),
                ),
            };
            let start = within.ok_or_else(|| PyValueError::new_err("image outside its entry"))?;
            let named = base.is_some();
            let entry = entry_of(index, &listed, named, owner, to_usize(start)?, image.len());
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The code the CUDA driver loads on a device of SM `device` (`sm_86`
    /// or `86`), by its rule: the closest cubin that runs there, else the
    /// closest PTX (`.how`: `"cubin"` or `"ptx"`); None if nothing runs.
    pub(crate) fn select(&self, py: Python<'_>, device: &str) -> PyResult<Option<Entry>> {
        let sm = Sm::parse(device).ok_or_else(|| invalid_sm(py, device))?;
        let held = self.file.held()?;
        let base = to_u64(self.start);
        let fatbin = Fatbin::parse(self.bytes(&held)?).map_err(|e| core_error(py, &e, base))?;
        let Some(chosen) = select_cuda(&fatbin, sm.number) else {
            return Ok(None);
        };
        let how = clangoffload::select::How::from(chosen.kind).name();
        // The chosen one alone, as the entries list it.
        let wanted = (chosen.entry.offset(), chosen.member);
        let mut entry = self.entries(py, Some(wanted))?.into_iter().next();
        if let Some(entry) = &mut entry {
            entry.how = Some(how);
        }
        Ok(entry)
    }
}

/// A CUDA fat binary's entry (or concat member) `index`, its image `len`
/// bytes at `start` of `owner`, named by core (`CodeName`: `sm_90a` for a
/// cubin, `compute_90a` for PTX, `lto_90a` for LTO-IR).
fn entry_of(
    index: usize,
    listed: &Listed<'_>,
    named: bool,
    owner: Owner,
    start: usize,
    len: usize,
) -> Entry {
    Entry {
        index: Some(index),
        id: CodeName {
            kind: listed.kind,
            sm: listed.sm,
        }
        .to_string(),
        offset: to_u64(start),
        size: to_u64(len),
        owner,
        start,
        code_object_target: None,
        target_matches: None,
        how: None,
        image: None,
        cuda: Some(Cuda {
            kind: listed.kind.name(),
            sm: listed.sm.to_string(),
            compression: match listed.entry.is_opaque() {
                true => "opaque",
                false => listed.entry.compression().name(),
            },
            name: listed.name.clone().filter(|_| named),
        }),
    }
}
