//! Containers and their entries as Python objects. A `Container` is a range
//! of its `File` plus the header fields `inspect` shows; it parses its bytes
//! again (a header read, no copy) whenever its entries are asked for, so no
//! Rust view outlives a call. A compressed bundle is decoded once, with the
//! GIL released, into a `bytes` the container keeps; its entries are views
//! of that.

use std::borrow::Cow;
use std::sync::OnceLock;

use clangoffload::bundler::Decoding;
use clangoffload::cuda_fatbin::host::{
    cuobjdump_base, host_fatbins, CuobjdumpCounter, FatbinSource, Listed,
};
use clangoffload::cuda_fatbin::select::select_for_device as select_cuda;
use clangoffload::cuda_fatbin::{CudaMatch, EntryKind, Fatbin, Sm};
use clangoffload::id::{select_in_compressed, select_in_fatbin, DeviceMatch};
use clangoffload::inspect::{bundle_entries, inspect_to, Depth, InspectedEntry};
use clangoffload::scan::{scan, Found};
use clangoffload::{
    offset_in, Bundle, CompressedBundle, Container as CoreContainer, DecompressOptions,
    OffloadBinary, TargetId,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::{Detached, Held};
use crate::error::{core_error, id_error, invalid_sm};
use crate::file::{slice, view, File};
use crate::ids::{base_processor, canonical_processor};
use crate::jobs::decompress_to_bytes;

/// What a container is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bundle,
    Compressed,
    OffloadBinary,
    /// An NVIDIA CUDA fat binary.
    CudaFatbin,
}

impl Kind {
    fn of(container: &CoreContainer<'_>) -> Kind {
        match container {
            CoreContainer::Bundle(_) => Kind::Bundle,
            CoreContainer::Compressed(_) => Kind::Compressed,
            CoreContainer::OffloadBinary(_) => Kind::OffloadBinary,
        }
    }

    /// The names `clangoffload inspect --json` uses.
    fn name(self) -> &'static str {
        match self {
            Kind::Bundle => "bundle",
            Kind::Compressed => "compressed",
            Kind::OffloadBinary => "offload_binary",
            Kind::CudaFatbin => "cuda_fatbin",
        }
    }
}

/// A compressed bundle's header, as read (nothing decoded).
#[derive(Debug, Clone, Copy)]
struct Header {
    version: u16,
    method: &'static str,
    method_id: u16,
    total_size: Option<u64>,
    compressed_size: usize,
    uncompressed_size: u64,
    ratio: f64,
    hash: u64,
}

/// One container: a bundle, a compressed bundle, an OffloadBinary, or (from
/// a scan or `File.cuda_fatbins`) a CUDA fat binary.
#[pyclass(frozen, module = "clangoffload")]
pub struct Container {
    file: Py<File>,
    kind: Kind,
    /// Where it starts in the file's bytes.
    start: usize,
    /// How many bytes it takes.
    len: usize,
    section: Option<String>,
    member: Option<String>,
    header: Option<Header>,
    /// The decoded bundle of a compressed one, once decoded.
    decoded: OnceLock<Py<PyBytes>>,
    /// A CUDA fat binary's place in `cuobjdump`'s numbering of the file's
    /// images (the count before it), when it was found as `cuobjdump` reads
    /// the file (`File.cuda_fatbins`).
    numbering: Option<CuobjdumpCounter>,
}

/// Text from bytes read from a file (names, IDs): UTF-8, else with
/// replacement characters.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn to_usize(n: u64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| PyValueError::new_err("offset does not fit in memory"))
}

impl Container {
    /// A container found at `data` (a slice of `whole`).
    fn new(
        file: &Bound<'_, File>,
        whole: &[u8],
        container: &CoreContainer<'_>,
        section: Option<&[u8]>,
        member: Option<&[u8]>,
    ) -> PyResult<Container> {
        let data = container.data();
        let start = offset_in(whole, data)
            .ok_or_else(|| PyValueError::new_err("container outside the file"))?;
        let header = match container {
            CoreContainer::Compressed(c) => Some(Header {
                version: c.version(),
                method: c.method().name(),
                method_id: c.method().raw(),
                total_size: c.total_size(),
                compressed_size: c.compressed().len(),
                uncompressed_size: c.uncompressed_size(),
                ratio: c.ratio(),
                hash: c.hash(),
            }),
            _ => None,
        };
        Ok(Container {
            file: file.clone().unbind(),
            kind: Kind::of(container),
            start: to_usize(start)?,
            len: data.len(),
            section: section.map(text),
            member: member.map(text),
            header,
            decoded: OnceLock::new(),
            numbering: None,
        })
    }

    /// Every container `inspect` finds in the file (entry tables only: no
    /// compressed bundle is decoded past its table).
    pub(crate) fn all_in(file: &Bound<'_, File>) -> PyResult<Vec<Container>> {
        let py = file.py();
        let held = file.get().held()?;
        let whole = held.bytes();
        let found = inspect_to(whole, Decoding::default(), Depth::Tables);
        if let Some(error) = found.errors.first() {
            return Err(core_error(py, &error.error, 0));
        }
        found
            .containers
            .iter()
            .map(|c| {
                let member = found.files.get(c.place.file).and_then(|f| f.name);
                Container::new(file, whole, &c.container, c.place.section, member)
            })
            .collect()
    }

    /// A CUDA fat binary found at `at` of the file (its bytes a slice of
    /// the file's).
    fn of_fatbin(
        file: &Bound<'_, File>,
        at: u64,
        fatbin: &Fatbin<'_>,
        section: Option<&[u8]>,
        member: Option<&[u8]>,
        numbering: Option<CuobjdumpCounter>,
    ) -> PyResult<Container> {
        Ok(Container {
            file: file.clone().unbind(),
            kind: Kind::CudaFatbin,
            start: to_usize(at)?,
            len: fatbin.data().len(),
            section: section.map(text),
            member: member.map(text),
            header: None,
            decoded: OnceLock::new(),
            numbering,
        })
    }

    /// Every CUDA fat binary of the file, in the order `cuobjdump -all`
    /// reads them (a raw fat binary's back to back; a host's `.nv_fatbin`
    /// then `__nv_relfatbin` sections; OffloadBinaries' `fatbinary`
    /// images; each archive member's in turn); the first damaged one
    /// raises.
    pub(crate) fn cuda_in(file: &Bound<'_, File>) -> PyResult<Vec<Container>> {
        let py = file.py();
        let held = file.get().held()?;
        let mut counter = CuobjdumpCounter::default();
        let mut found = Vec::new();
        for host in host_fatbins(held.bytes()) {
            let fatbin = host.fatbin.map_err(|e| core_error(py, &e, 0))?;
            let section = match host.source {
                FatbinSource::Raw => None,
                FatbinSource::Section(name) => Some(name),
                FatbinSource::OffloadImage(section) => section,
            };
            found.push(Container::of_fatbin(
                file,
                host.offset,
                &fatbin,
                section,
                host.member,
                Some(counter),
            )?);
            // Numbered on: the names only, which no base changes.
            counter.list(&fatbin, "");
        }
        Ok(found)
    }

    /// Every container the scan finds anywhere in the file, CUDA fat
    /// binaries included.
    pub(crate) fn scanned_in(file: &Bound<'_, File>) -> PyResult<Vec<Container>> {
        let held = file.get().held()?;
        let whole = held.bytes();
        scan(whole)
            .filter_map(|found| match found {
                Found::Container(_, c) => Some(Container::new(file, whole, &c, None, None)),
                Found::CudaFatbin(at, fatbin) => {
                    Some(Container::of_fatbin(file, at, &fatbin, None, None, None))
                }
                Found::Rejected(..) => None,
            })
            .collect()
    }

    /// The container's bytes, from a live export.
    fn bytes<'h>(&self, held: &'h Held) -> PyResult<&'h [u8]> {
        slice(held.bytes(), self.start, self.len)
    }

    /// The decoded bundle of a compressed container: decoded once, straight
    /// into a new `bytes`, with the GIL released, under the default 1 GiB
    /// limit, the hash checked unless the file was opened with
    /// `verify_hash=False`.
    fn decoded<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if let Some(done) = self.decoded.get() {
            return Ok(done.bind(py).clone());
        }
        let held = self.file.get().held()?;
        let input = Detached::new(&held, self.bytes(&held)?);
        let options = self.file.get().decompress_options();
        let bytes = decompress_to_bytes(py, &input, &options, to_u64(self.start))?;
        // Two threads may decode at once; the first one's bytes are kept.
        let kept = self.decoded.get_or_init(|| bytes.unbind());
        Ok(kept.bind(py).clone())
    }

    /// The entries of a bundle held in `bundle_bytes`, whose views are
    /// `owner[base + offset : ...]`; offsets reported as `shown_base +
    /// offset` (the file offset for a plain bundle, the decoded bundle's own
    /// for a compressed one).
    fn bundle_entries(
        py: Python<'_>,
        bundle_bytes: &[u8],
        owner: &Owner,
        base: usize,
        error_base: u64,
    ) -> PyResult<Vec<Entry>> {
        let bundle = Bundle::parse(bundle_bytes).map_err(|e| core_error(py, &e, error_base))?;
        let entries = bundle_entries(&bundle).map_err(|e| core_error(py, &e, error_base))?;
        entries
            .iter()
            .enumerate()
            .map(|(index, e)| Entry::of_bundle(py, index, e, owner, base))
            .collect()
    }

    /// An OffloadBinary's images as entries.
    fn images(&self, py: Python<'_>) -> PyResult<Vec<Entry>> {
        let held = self.file.get().held()?;
        let data = self.bytes(&held)?;
        let base = to_u64(self.start);
        let binary = OffloadBinary::parse(data).map_err(|e| core_error(py, &e, base))?;
        let owner = Owner::File(self.file.clone_ref(py));
        if binary.is_compressed() {
            // A compressed binary (version 3) is small and rare: decoded here,
            // under the GIL, then read like any other.
            let inflated = binary
                .decompress(&self.file.get().decompress_options())
                .map_err(|e| core_error(py, &e, base))?;
            let inflated = PyBytes::new(py, &inflated);
            let binary =
                OffloadBinary::parse(inflated.as_bytes()).map_err(|e| core_error(py, &e, 0))?;
            let owner = Owner::Decoded(inflated.clone().unbind());
            return image_entries(py, &binary, inflated.as_bytes(), &owner);
        }
        image_entries(py, &binary, held.bytes(), &owner)
    }
}

/// Entries for every image of `binary`, which lies in `whole` (the bytes
/// of `owner`).
fn image_entries(
    py: Python<'_>,
    binary: &OffloadBinary<'_>,
    whole: &[u8],
    owner: &Owner,
) -> PyResult<Vec<Entry>> {
    binary
        .entries()
        .enumerate()
        .map(|(index, image)| {
            let start = offset_in(whole, image.image())
                .ok_or_else(|| PyValueError::new_err("image outside its binary"))?;
            let arch = image.arch().map(text).unwrap_or_default();
            Ok(Entry {
                index: Some(index),
                id: arch.clone(),
                offset: start,
                size: to_u64(image.image().len()),
                owner: owner.clone_ref(py),
                start: to_usize(start)?,
                code_object_target: None,
                target_matches: None,
                how: None,
                cuda: None,
                image: Some(Image {
                    triple: image.triple().map(text).unwrap_or_default(),
                    arch,
                    image_kind: image.image_kind().objdump_name(),
                    offload_kind: image.offload_kind().name(),
                    strings: image
                        .strings()
                        .map(|s| (text(s.key), text(s.value)))
                        .collect(),
                }),
            })
        })
        .collect()
}

#[pymethods]
impl Container {
    /// `"bundle"`, `"compressed"`, `"offload_binary"` or `"cuda_fatbin"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.name()
    }

    /// Where it starts in the file.
    #[getter]
    fn offset(&self) -> usize {
        self.start
    }

    /// How many bytes of the file it takes.
    #[getter]
    fn size(&self) -> usize {
        self.len
    }

    /// The ELF/COFF section it is in, or None.
    #[getter]
    fn section(&self) -> Option<&str> {
        self.section.as_deref()
    }

    /// The archive member it is in, or None.
    #[getter]
    fn member(&self) -> Option<&str> {
        self.member.as_deref()
    }

    /// A compressed bundle's header version (1, 2 or 3); None otherwise.
    #[getter]
    fn version(&self) -> Option<u16> {
        self.header.map(|h| h.version)
    }

    /// A compressed bundle's method (`"zlib"`, `"zstd"`, `"unknown"`).
    #[getter]
    fn method(&self) -> Option<&'static str> {
        self.header.map(|h| h.method)
    }

    /// A compressed bundle's total size field (None in version 1).
    #[getter]
    fn total_size(&self) -> Option<u64> {
        self.header.and_then(|h| h.total_size)
    }

    /// A compressed bundle's declared uncompressed size.
    #[getter]
    fn uncompressed_size(&self) -> Option<u64> {
        self.header.map(|h| h.uncompressed_size)
    }

    /// A compressed bundle's stored hash (the low 64 bits of MD5, as LLVM
    /// stores them).
    #[getter]
    fn hash(&self) -> Option<u64> {
        self.header.map(|h| h.hash)
    }

    /// A compressed bundle's method field as stored (0 zlib, 1 zstd).
    #[getter]
    fn method_id(&self) -> Option<u16> {
        self.header.map(|h| h.method_id)
    }

    /// The size of a compressed bundle's stream (after its header).
    #[getter]
    fn compressed_size(&self) -> Option<usize> {
        self.header.map(|h| h.compressed_size)
    }

    /// A compressed bundle's uncompressed over compressed size.
    #[getter]
    fn ratio(&self) -> Option<f64> {
        self.header.map(|h| h.ratio)
    }

    /// A `memoryview` of the container's bytes in the file (compressed for
    /// a compressed bundle).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        view(&self.file.get().source(py)?, self.start, self.len)
    }

    /// The bundle's bytes: a view of the file for a plain bundle, the
    /// decoded bytes (hash checked) for a compressed one. None for an
    /// OffloadBinary or a CUDA fat binary.
    fn bundle<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.kind {
            Kind::Bundle => self.data(py).map(Some),
            Kind::Compressed => Ok(Some(self.decoded(py)?.into_any())),
            Kind::OffloadBinary | Kind::CudaFatbin => Ok(None),
        }
    }

    /// The entries, in file order: a bundle's (views of the file), a
    /// compressed bundle's (decoded once with the GIL released, hash
    /// checked; views of the decoded bytes), or an OffloadBinary's images
    /// (`.id` the image's target ID, with `.image` details), or a CUDA fat
    /// binary's (images as cuobjdump extracts them, `--concat` members after
    /// their entry).
    pub(crate) fn entries(&self, py: Python<'_>) -> PyResult<Vec<Entry>> {
        match self.kind {
            Kind::Bundle => {
                let held = self.file.get().held()?;
                let owner = Owner::File(self.file.clone_ref(py));
                let base = to_u64(self.start);
                Container::bundle_entries(py, self.bytes(&held)?, &owner, self.start, base)
            }
            Kind::Compressed => {
                let decoded = self.decoded(py)?;
                let owner = Owner::Decoded(decoded.clone().unbind());
                Container::bundle_entries(py, decoded.as_bytes(), &owner, 0, 0)
            }
            Kind::OffloadBinary => self.images(py),
            Kind::CudaFatbin => self.cuda_entries(py, None),
        }
    }

    /// The code object the HIP runtime loads on `device` (a target ID such
    /// as `gfx90a:sramecc+:xnack-`, or `amdgcn-amd-amdhsa--gfx90a`), as the C
    /// ABI's `clangoffload_fatbin_select_for_device` chooses it: native code
    /// first, then the processor's generic family, then SPIR-V (`.how`
    /// says which). A compressed bundle is decoded only as far as the chosen
    /// entry (hash checked over the whole stream), with the GIL released.
    /// For a CUDA fat binary, `device` is an SM (`sm_86`, `86`) and the
    /// choice the CUDA driver's (see `select_in_cuda`). None if nothing fits.
    fn select_for_device(&self, py: Python<'_>, device: &str) -> PyResult<Option<Entry>> {
        if self.kind == Kind::CudaFatbin {
            return self.select_in_cuda(py, device);
        }
        let target =
            clangoffload::id::parse_device(device).map_err(|e| id_error(py, &e, device))?;
        let options = self.file.get().decompress_options();
        if self.kind == Kind::Compressed {
            return self.select_compressed(py, &target, &options);
        }
        let held = self.file.get().held()?;
        let whole = held.bytes();
        let base = to_u64(self.start);
        let picked = select_in_fatbin(self.bytes(&held)?, &target, &mut [], &options)
            .map_err(|e| core_error(py, &e, base))?;
        let Some(picked) = picked else {
            return Ok(None);
        };
        let start = offset_in(whole, picked.code)
            .ok_or_else(|| PyValueError::new_err("code object outside the file"))?;
        Ok(Some(Entry {
            index: None,
            id: text(picked.id),
            offset: start,
            size: to_u64(picked.code.len()),
            owner: Owner::File(self.file.clone_ref(py)),
            start: to_usize(start)?,
            code_object_target: None,
            target_matches: None,
            how: Some(how_name(picked.how)),
            image: None,
            cuda: None,
        }))
    }

    fn __repr__(&self) -> String {
        let place = match (&self.member, &self.section) {
            (Some(m), Some(s)) => format!(" in {m}({s})"),
            (Some(m), None) => format!(" in {m}"),
            (None, Some(s)) => format!(" in {s}"),
            (None, None) => String::new(),
        };
        format!(
            "<clangoffload.Container {} at {:#x}, {} bytes{place}>",
            self.kind.name(),
            self.start,
            self.len
        )
    }
}

impl Container {
    /// `select_for_device` of a compressed bundle: the entry chosen from
    /// the decoded entry table, then only its code object decoded, into a
    /// new `bytes` that the entry's view keeps; both steps with the GIL
    /// released.
    fn select_compressed(
        &self,
        py: Python<'_>,
        device: &TargetId<'_>,
        options: &DecompressOptions,
    ) -> PyResult<Option<Entry>> {
        let held = self.file.get().held()?;
        let input = Detached::new(&held, self.bytes(&held)?);
        let base = to_u64(self.start);
        let located = |e: clangoffload::Error| core_error(py, &e, base);
        let chosen = input
            .release(py, |bytes| {
                select_in_compressed(&CompressedBundle::parse(bytes)?, device, options)
            })
            .map_err(located)?;
        let Some(chosen) = chosen else {
            return Ok(None);
        };
        let mut decoding = Ok(());
        let code = PyBytes::new_with(py, chosen.needed(), |out| {
            // Into a new `bytes` nobody else sees yet, from `input`'s bytes.
            decoding = input.release(py, |_| chosen.decompress_into(out, options).map(|_| ()));
            Ok(())
        })?;
        decoding.map_err(located)?;
        Ok(Some(Entry {
            index: None,
            id: text(chosen.id()),
            offset: chosen.offset(),
            size: chosen.size(),
            owner: Owner::Decoded(code.unbind()),
            start: 0,
            code_object_target: None,
            target_matches: None,
            how: Some(how_name(chosen.how())),
            image: None,
            cuda: None,
        }))
    }
}

/// How a code object was chosen, as Python sees it.
fn how_name(how: DeviceMatch) -> &'static str {
    match how {
        DeviceMatch::Native => "native",
        DeviceMatch::Generic => "generic",
        DeviceMatch::SpirV => "spirv",
    }
}

/// What keeps an entry's bytes: the file, or decoded bytes.
pub(crate) enum Owner {
    File(Py<File>),
    Decoded(Py<PyBytes>),
}

impl Owner {
    fn clone_ref(&self, py: Python<'_>) -> Owner {
        match self {
            Owner::File(f) => Owner::File(f.clone_ref(py)),
            Owner::Decoded(b) => Owner::Decoded(b.clone_ref(py)),
        }
    }

    fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Owner::File(f) => f.get().source(py),
            Owner::Decoded(b) => Ok(b.bind(py).clone().into_any()),
        }
    }
}

/// An OffloadBinary image's details.
struct Image {
    triple: String,
    arch: String,
    image_kind: &'static str,
    offload_kind: &'static str,
    strings: Vec<(String, String)>,
}

/// One entry of a bundle (or one image of an OffloadBinary).
#[pyclass(frozen, module = "clangoffload")]
pub struct Entry {
    /// Its index in its container; None for a code object chosen by
    /// `select_for_device` (the runtime's rule gives the code, not where).
    index: Option<usize>,
    id: String,
    offset: u64,
    size: u64,
    owner: Owner,
    /// Where its bytes start in the owner.
    start: usize,
    code_object_target: Option<String>,
    target_matches: Option<bool>,
    how: Option<&'static str>,
    image: Option<Image>,
    cuda: Option<Cuda>,
}

impl Entry {
    /// A CUDA fat binary's entry (or concat member) `index`, its image
    /// `len` bytes at `start` of `owner`.
    fn of_cuda(
        index: usize,
        listed: &Listed<'_>,
        named: bool,
        owner: Owner,
        start: usize,
        len: usize,
    ) -> Entry {
        Entry {
            index: Some(index),
            id: cuda_id(listed.kind, listed.sm),
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

    fn of_bundle(
        py: Python<'_>,
        index: usize,
        entry: &InspectedEntry<'_>,
        owner: &Owner,
        base: usize,
    ) -> PyResult<Entry> {
        let start = to_usize(entry.offset)?
            .checked_add(base)
            .ok_or_else(|| PyValueError::new_err("entry offset overflows"))?;
        Ok(Entry {
            index: Some(index),
            id: text(&entry.id),
            offset: to_u64(start),
            size: entry.size,
            owner: owner.clone_ref(py),
            start,
            code_object_target: entry.code_object.map(|c| c.target.to_string()),
            target_matches: entry.code_object.map(|c| c.id_agrees),
            how: None,
            image: None,
            cuda: None,
        })
    }

    /// The processor its code is for (see the `processor` getter).
    fn processor_name(&self) -> Option<String> {
        if self.cuda.is_some() {
            return None;
        }
        if self.image.is_some() {
            return TargetId::parse(&self.id)
                .ok()
                .map(|t| canonical_processor(&t));
        }
        base_processor(&self.id)
    }

    /// Whether `File.extract` takes this entry: compatible with `target` by
    /// the bundler's rules, and for the processor `arch` names.
    pub(crate) fn is_selected(&self, target: Option<&str>, arch: Option<&str>) -> bool {
        let by_target =
            target.is_none_or(|t| clangoffload::bundler::matches_target(&self.id, t, false));
        let by_arch = arch.is_none_or(|a| {
            let wanted = TargetId::parse(a).ok().map(|t| canonical_processor(&t));
            wanted.is_some() && self.processor_name() == wanted
        });
        by_target && by_arch
    }
}

#[pymethods]
impl Entry {
    /// The entry ID (an OffloadBinary image's target ID).
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// Its index in its container (None for a code object chosen by
    /// `select_for_device`).
    #[getter]
    fn index(&self) -> Option<usize> {
        self.index
    }

    /// Where its bytes start: in the file for a plain bundle or an
    /// OffloadBinary, in the decoded bundle for a compressed one.
    #[getter]
    fn offset(&self) -> u64 {
        self.offset
    }

    /// Its size.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    /// Its bytes, as a `memoryview`: of the file (no copy) for a plain
    /// bundle or an OffloadBinary, of the decoded bytes for a compressed
    /// bundle. It keeps what it views alive; `bytes(entry.data)` copies.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let len = to_usize(self.size)?;
        view(&self.owner.object(py)?, self.start, len)
    }

    /// For an AMDGPU code object: the target ID its ELF header names.
    #[getter]
    fn code_object_target(&self) -> Option<&str> {
        self.code_object_target.as_deref()
    }

    /// For an AMDGPU code object: whether the entry ID ends with
    /// `-<code_object_target>`.
    #[getter]
    fn target_matches(&self) -> Option<bool> {
        self.target_matches
    }

    /// For an entry chosen by `select_for_device`: `"native"`,
    /// `"generic"` or `"spirv"`.
    #[getter]
    fn how(&self) -> Option<&'static str> {
        self.how
    }

    /// The processor its code is for (`gfx90a`; aliases resolved, features
    /// dropped), or None if the ID names none.
    #[getter]
    fn processor(&self) -> Option<String> {
        self.processor_name()
    }

    /// Whether clang-offload-bundler gives this entry to a request for
    /// `target` (both IDs read as LLVM 22 reads them).
    #[pyo3(signature = (target, hip_openmp_compatible=false))]
    fn matches(&self, target: &str, hip_openmp_compatible: bool) -> bool {
        clangoffload::bundler::matches_target(&self.id, target, hip_openmp_compatible)
    }

    /// An OffloadBinary image's triple; None for a bundle entry.
    #[getter]
    fn triple(&self) -> Option<&str> {
        self.image.as_ref().map(|i| i.triple.as_str())
    }

    /// An OffloadBinary image's architecture string (its target ID).
    #[getter]
    fn arch(&self) -> Option<&str> {
        self.image.as_ref().map(|i| i.arch.as_str())
    }

    /// An OffloadBinary image's kind (`elf`, `bitcode`, ...); a CUDA
    /// entry's (`elf`, `ptx`, `ltoir`, `concat`, `unknown`).
    #[getter]
    fn image_kind(&self) -> Option<&'static str> {
        match (&self.image, &self.cuda) {
            (Some(i), _) => Some(i.image_kind),
            (None, Some(c)) => Some(c.kind),
            (None, None) => None,
        }
    }

    /// A CUDA entry's SM (`sm_90a`, for PTX too).
    #[getter]
    fn sm(&self) -> Option<&str> {
        self.cuda.as_ref().map(|c| c.sm.as_str())
    }

    /// How a CUDA entry is stored: `"none"`, `"lz4"`, `"zstd"`,
    /// `"lz4+zstd"` (both flags), or `"opaque"` (nvcc `-dlto`'s LTO-IR,
    /// whose bytes are given as stored).
    #[getter]
    fn compression(&self) -> Option<&'static str> {
        self.cuda.as_ref().map(|c| c.compression)
    }

    /// The file name `cuobjdump -xelf all`/`-xptx all` writes a CUDA
    /// entry's image to (for entries of ``File.cuda_fatbins()`` of a file
    /// opened by path; None for other kinds, or when unknown).
    #[getter]
    fn cuobjdump_name(&self) -> Option<&str> {
        self.cuda.as_ref().and_then(|c| c.name.as_deref())
    }

    /// An OffloadBinary image's offload kind (`hip`, `openmp`, `cuda`, ...).
    #[getter]
    fn offload_kind(&self) -> Option<&'static str> {
        self.image.as_ref().map(|i| i.offload_kind)
    }

    /// An OffloadBinary image's key-value strings, in table order.
    #[getter]
    fn strings(&self) -> Option<Vec<(String, String)>> {
        self.image.as_ref().map(|i| i.strings.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "<clangoffload.Entry {:?} at {:#x}, {} bytes>",
            self.id, self.offset, self.size
        )
    }
}

/// A CUDA entry's contents: viewed in the file when stored, else decoded
/// into a `bytes` the entries keep.
enum Contents<'py, 'a> {
    Stored(&'a [u8]),
    Decoded(Bound<'py, PyBytes>),
}

/// A CUDA fat binary entry's details.
struct Cuda {
    kind: &'static str,
    sm: String,
    compression: &'static str,
    /// The file name `cuobjdump` extracts its image to.
    name: Option<String>,
}

/// A CUDA entry's ID: `sm_90a` for a cubin, `compute_90a` for PTX,
/// `lto_90` for LTO-IR (nvcc's names for the three), the SM otherwise.
fn cuda_id(kind: EntryKind, sm: Sm) -> String {
    let sm = sm.to_string();
    let number = sm.strip_prefix("sm_").unwrap_or(&sm);
    match kind {
        EntryKind::Ptx => format!("compute_{number}"),
        EntryKind::LtoIr => format!("lto_{number}"),
        _ => sm,
    }
}

impl Container {
    /// The entries of a CUDA fat binary (each `--concat` entry followed by
    /// its members), as `cuobjdump` lists them; each one's data is its
    /// image as `cuobjdump` extracts it (a view of the file when stored,
    /// decoded with the GIL released otherwise).
    /// `only`: the one entry wanted (its offset, and member index), the
    /// others neither decoded nor built.
    fn cuda_entries(
        &self,
        py: Python<'_>,
        only: Option<(u64, Option<u64>)>,
    ) -> PyResult<Vec<Entry>> {
        let held = self.file.get().held()?;
        let base = to_u64(self.start);
        let located = |e: clangoffload::Error| core_error(py, &e, base);
        // Parsed from bytes that may be decoded with the GIL released (a
        // writable source's copied).
        let data = Detached::new(&held, self.bytes(&held)?);
        let fatbin = Fatbin::parse(data.bytes()).map_err(located)?;
        // cuobjdump's names: known for the fat binaries of a file opened by
        // path, found as cuobjdump reads it.
        let base = self
            .numbering
            .and(self.file.get().path())
            .map(cuobjdump_base);
        let mut counter = self.numbering.unwrap_or_default();
        let options = self.file.get().decompress_options();
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
                    Owner::File(self.file.clone_ref(py)),
                    offset_in(data.bytes(), image)
                        .and_then(|at| at.checked_add(to_u64(self.start))),
                ),
            };
            let start = within.ok_or_else(|| PyValueError::new_err("image outside its entry"))?;
            let named = base.is_some();
            let entry = Entry::of_cuda(index, &listed, named, owner, to_usize(start)?, image.len());
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The code the CUDA driver loads on a device of SM `device` (`sm_86`
    /// or `86`), by its rule: the closest cubin that runs there, else the
    /// closest PTX (`.how`: `"cubin"` or `"ptx"`); None if nothing runs.
    fn select_in_cuda(&self, py: Python<'_>, device: &str) -> PyResult<Option<Entry>> {
        let sm = Sm::parse(device).ok_or_else(|| invalid_sm(py, device))?;
        let held = self.file.get().held()?;
        let base = to_u64(self.start);
        let fatbin = Fatbin::parse(self.bytes(&held)?).map_err(|e| core_error(py, &e, base))?;
        let Some(chosen) = select_cuda(&fatbin, sm.number) else {
            return Ok(None);
        };
        let how = match chosen.kind {
            CudaMatch::Cubin => "cubin",
            CudaMatch::Ptx => "ptx",
        };
        // The chosen one alone, as the entries list it.
        let wanted = (chosen.entry.offset(), chosen.member);
        let mut entry = self.cuda_entries(py, Some(wanted))?.into_iter().next();
        if let Some(entry) = &mut entry {
            entry.how = Some(how);
        }
        Ok(entry)
    }
}
