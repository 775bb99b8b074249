//! Containers as Python objects. A `Container` is a range of its file's
//! bytes plus the header fields `inspect` shows; it parses its bytes again
//! (a header read, no copy) whenever its entries are asked for, so no Rust
//! view outlives a call. A compressed bundle is decoded once, with the GIL
//! released, into a `bytes` the container keeps; its entries are views of
//! that. Its entries are `entry::Entry`s; a CUDA fat binary's are read by
//! `cuda`.

use std::sync::{Arc, OnceLock};

use clangoffload::bundler::Decoding;
use clangoffload::cuda_fatbin::Fatbin;
use clangoffload::cuda_host::{host_fatbins, CuobjdumpCounter, FatbinSource};
use clangoffload::id::select_in_compressed;
use clangoffload::inspect::{bundle_entries, inspect_to, Depth};
use clangoffload::scan::{scan, Found};
use clangoffload::select::select_in_fatbin;
use clangoffload::{
    offset_in, Bundle, CompressedBundle, Container as CoreContainer, DecompressOptions, FileKind,
    OffloadBinary, TargetId,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::{decompress_to_bytes, Detached, Held};
use crate::cuda::FatbinAt;
use crate::entry::{image_entries, Entry, Owner};
use crate::error::{core_error, id_error};
use crate::source::{slice, text, to_u64, to_usize, view, Source};

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

    /// Core's tag for the kind (`bundle`, `compressed`, `offload_binary`,
    /// `cuda_fatbin`): the names Python has always given (`Container.kind`),
    /// the same `clangoffload inspect --json` prints.
    fn name(self) -> &'static str {
        let kind = match self {
            Kind::Bundle => FileKind::Bundle,
            Kind::Compressed => FileKind::CompressedBundle,
            Kind::OffloadBinary => FileKind::OffloadBinary,
            Kind::CudaFatbin => FileKind::CudaFatbin,
        };
        kind.container_tag().unwrap_or_default()
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
    file: Arc<Source>,
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

impl Container {
    /// A container found at `data` (a slice of `whole`).
    fn new(
        file: &Arc<Source>,
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
            file: Arc::clone(file),
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
    pub(crate) fn all_in(py: Python<'_>, file: &Arc<Source>) -> PyResult<Vec<Container>> {
        let held = file.held()?;
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
        file: &Arc<Source>,
        at: u64,
        fatbin: &Fatbin<'_>,
        section: Option<&[u8]>,
        member: Option<&[u8]>,
        numbering: Option<CuobjdumpCounter>,
    ) -> PyResult<Container> {
        Ok(Container {
            file: Arc::clone(file),
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
    pub(crate) fn cuda_in(py: Python<'_>, file: &Arc<Source>) -> PyResult<Vec<Container>> {
        let held = file.held()?;
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
    pub(crate) fn scanned_in(file: &Arc<Source>) -> PyResult<Vec<Container>> {
        let held = file.held()?;
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

    /// A CUDA fat binary container, for `cuda` to read.
    fn fatbin(&self) -> FatbinAt<'_> {
        FatbinAt {
            file: &self.file,
            start: self.start,
            len: self.len,
            numbering: self.numbering,
        }
    }

    /// The decoded bundle of a compressed container: decoded once, straight
    /// into a new `bytes`, with the GIL released, under the default 1 GiB
    /// limit, the hash checked unless the file was opened with
    /// `verify_hash=False`.
    fn decoded<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if let Some(done) = self.decoded.get() {
            return Ok(done.bind(py).clone());
        }
        let held = self.file.held()?;
        let input = Detached::new(&held, self.bytes(&held)?);
        let options = self.file.decompress_options();
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
        let held = self.file.held()?;
        let data = self.bytes(&held)?;
        let base = to_u64(self.start);
        let binary = OffloadBinary::parse(data).map_err(|e| core_error(py, &e, base))?;
        let owner = Owner::File(Arc::clone(&self.file));
        if binary.is_compressed() {
            // A compressed binary (version 3) is small and rare: decoded here,
            // under the GIL, then read like any other.
            let inflated = binary
                .decompress(&self.file.decompress_options())
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
        view(&self.file.object(py)?, self.start, self.len)
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
                let held = self.file.held()?;
                let owner = Owner::File(Arc::clone(&self.file));
                let base = to_u64(self.start);
                Container::bundle_entries(py, self.bytes(&held)?, &owner, self.start, base)
            }
            Kind::Compressed => {
                let decoded = self.decoded(py)?;
                let owner = Owner::Decoded(decoded.clone().unbind());
                Container::bundle_entries(py, decoded.as_bytes(), &owner, 0, 0)
            }
            Kind::OffloadBinary => self.images(py),
            Kind::CudaFatbin => self.fatbin().entries(py, None),
        }
    }

    /// The code object the HIP runtime loads on `device` (a target ID such
    /// as `gfx90a:sramecc+:xnack-`, or `amdgcn-amd-amdhsa--gfx90a`), as the C
    /// ABI's `clangoffload_fatbin_select_for_device` chooses it: native code
    /// first, then the processor's generic family, then SPIR-V (`.how`
    /// says which). A compressed bundle is decoded only as far as the chosen
    /// entry (hash checked over the whole stream), with the GIL released.
    /// For a CUDA fat binary, `device` is an SM (`sm_86`, `86`) and the
    /// choice the CUDA driver's (see `cuda::FatbinAt::select`). None if nothing fits.
    fn select_for_device(&self, py: Python<'_>, device: &str) -> PyResult<Option<Entry>> {
        if self.kind == Kind::CudaFatbin {
            return self.fatbin().select(py, device);
        }
        let target =
            clangoffload::id::parse_device(device).map_err(|e| id_error(py, &e, device))?;
        let options = self.file.decompress_options();
        if self.kind == Kind::Compressed {
            return self.select_compressed(py, &target, &options);
        }
        let held = self.file.held()?;
        let whole = held.bytes();
        let base = to_u64(self.start);
        let picked = select_in_fatbin(self.bytes(&held)?, &target, &mut [], &options)
            .map_err(|e| core_error(py, &e, base))?;
        let Some(picked) = picked else {
            return Ok(None);
        };
        let start = offset_in(whole, picked.code)
            .ok_or_else(|| PyValueError::new_err("code object outside the file"))?;
        Ok(Some(Entry::chosen(
            text(picked.id),
            start,
            to_u64(picked.code.len()),
            Owner::File(Arc::clone(&self.file)),
            to_usize(start)?,
            picked.how,
        )))
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
        let held = self.file.held()?;
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
        Ok(Some(Entry::chosen(
            text(chosen.id()),
            chosen.offset(),
            chosen.size(),
            Owner::Decoded(code.unbind()),
            0,
            chosen.how(),
        )))
    }
}
