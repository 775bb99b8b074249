//! Extracting every entry of every container in a file, each to a file of
//! its own named after where it came from (`clangoffload extract`), a
//! container at a time: [`Extraction`] finds the containers and names every
//! output from their entry tables alone (a compressed bundle's table is a
//! few KiB of its stream), then [`Extraction::plan`] decodes one container
//! and plans its outputs, so that a caller holds one container at a time
//! (or one per core: containers are independent, and `plan` may be called
//! from several threads at once).

use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

use crate::bundler::input::{self, Budget, Buffers, Loaded, LoadedBytes};
use crate::bundler::{
    bundle_warnings, BundlerError, CompressedProblem, Decoding, Observer, Place, Plan,
};
use crate::bytes::offset_in;
use crate::container::Container;
use crate::foreign::Foreign;
use crate::inspect::inspect;
use crate::{Bundle, CompressedBundle, FileKind};

#[cfg(feature = "zstd")]
mod read_back;
#[cfg(feature = "zstd")]
mod streamed;

pub use crate::naming::safe_name;
#[cfg(feature = "zstd")]
pub use streamed::ExtractionSink;

/// Every container of a file, found and named, each planned on demand. See
/// [`extract`] for what is extracted and how outputs are named.
#[derive(Debug)]
pub struct Extraction<'data> {
    pub(crate) units: Vec<Unit<'data>>,
    names: Vec<Vec<u8>>,
    pub(crate) decoding: Decoding,
    /// Damage found while finding the containers, in file order.
    failures: Vec<BundlerError>,
    /// What streaming may hold at once for decoding, across threads.
    #[cfg(feature = "std")]
    pub(crate) budget: crate::compressed::MemoryBudget,
}

/// One container and the outputs it gives.
#[derive(Debug)]
pub(crate) struct Unit<'data> {
    /// Where it is in the input.
    pub(crate) at: u64,
    /// How many bytes of the input it takes.
    size: u64,
    /// Its outputs' names start with this.
    pub(crate) prefix: String,
    /// Its outputs, by index across the whole file.
    pub(crate) outputs: Range<usize>,
    pub(crate) what: What<'data>,
}

impl Unit<'_> {
    /// What it is.
    pub(crate) fn kind(&self) -> FileKind {
        match self.what {
            What::Bundle(_) => FileKind::Bundle,
            What::Compressed(_) => FileKind::CompressedBundle,
            What::Images(_) => FileKind::OffloadBinary,
        }
    }
}

#[derive(Debug)]
pub(crate) enum What<'data> {
    Bundle(&'data [u8]),
    Compressed(CompressedBundle<'data>),
    /// OffloadBinaries back to back.
    Images(&'data [u8]),
}

impl<'data> Extraction<'data> {
    /// Finds every container [`inspect`] finds in `data` and names each
    /// output, decoding compressed bundles only as far as their entry
    /// tables. Damage that leaves other containers readable is kept, every
    /// piece of it ([`failures`](Self::failures)), to report once they are
    /// written; an error when nothing at all can be read.
    pub fn new(
        data: &'data [u8],
        stem: &[u8],
        decoding: Decoding,
        observer: &mut dyn Observer,
    ) -> Result<Self, BundlerError> {
        let stem = safe_name(stem);
        let mut extraction = Extraction {
            units: Vec::new(),
            names: Vec::new(),
            decoding,
            failures: Vec::new(),
            #[cfg(feature = "std")]
            budget: crate::compressed::MemoryBudget::new(0),
        };
        if FileKind::detect(data).is_bundle_container() {
            // The bundler's reading: what follows the containers is a
            // warning, damage among them an error.
            let mut buffers = Buffers::new();
            let mut budget = Budget {
                decoding,
                tables: true,
            };
            let loaded = input::load(data, &mut budget, true, &mut buffers, observer)?;
            for container in &loaded {
                let what = match container.bytes {
                    LoadedBytes::Input(bundle) => What::Bundle(bundle),
                    LoadedBytes::Table { compressed, .. } => What::Compressed(compressed),
                    LoadedBytes::Decompressed(_) => continue,
                };
                let ids = table_ids(container, &buffers)?;
                extraction.add(container.offset, &stem, what, ids);
            }
            return Ok(extraction);
        }
        // The walk only finds the containers: with no decoding budget it
        // refuses every compressed one at once; each one's table is read
        // below, where its damage is found again precisely.
        let walk = Decoding {
            max_size: 0,
            verify_hash: false,
            verbose: false,
        };
        let found = inspect(data, walk);
        for c in &found.containers {
            let member = found.files.get(c.place.file).and_then(|f| f.name);
            let prefix = match member {
                Some(member) => alloc::format!("{stem}.{}", safe_name(member)),
                None => stem.clone(),
            };
            let at = offset_in(data, c.container.data()).unwrap_or_default();
            let named = match &c.container {
                Container::Bundle(bundle) => Bundle::parse(bundle.data())
                    .map_err(|error| BundlerError::MalformedBundle {
                        error,
                        place: Place::At(at),
                    })
                    .map(|b| (What::Bundle(bundle.data()), ids(&b))),
                Container::Compressed(compressed) => {
                    let ids = compressed_ids(at, compressed, decoding);
                    observer.done_with(compressed.data());
                    ids.map(|ids| (What::Compressed(*compressed), ids))
                }
                Container::OffloadBinary(binary) => {
                    let first = extraction.names.len();
                    images(binary.data(), &prefix, first, at).map(|part| {
                        let names = (0..part.output_count())
                            .map(|i| part.output_name(i).to_vec())
                            .collect();
                        (What::Images(binary.data()), Named::Whole(names))
                    })
                }
            };
            match named {
                Ok((what, ids)) => extraction.add(at, &prefix, what, ids),
                Err(error) => extraction.failures.push(error),
            }
        }
        // Bytes that start no container are damage only after a container.
        let unknown = |e: &&crate::inspect::InspectionError<'_>| {
            matches!(e.error.kind(), crate::ErrorKind::UnknownContainer)
        };
        let skip = usize::from(
            found.containers.is_empty() && found.errors.first().is_some_and(|e| unknown(&e)),
        );
        let damage = found.errors.iter().skip(skip);
        extraction
            .failures
            .extend(damage.map(|e| BundlerError::Input(e.error)));
        #[cfg(feature = "std")]
        extraction.set_memory_budget(None);
        if extraction.names.is_empty() {
            if let Some(error) = extraction.failures.drain(..).next() {
                return Err(error);
            }
            if found.containers.is_empty() {
                return Err(BundlerError::NotAContainer(Foreign::identify(data)));
            }
        }
        Ok(extraction)
    }

    /// Adds a container and names its outputs.
    fn add(&mut self, at: u64, prefix: &str, what: What<'data>, named: Named) {
        let first = self.names.len();
        match named {
            Named::Ids(ids) => {
                for (i, id) in ids.iter().enumerate() {
                    self.names
                        .push(entry_name(prefix, first.saturating_add(i), id));
                }
            }
            Named::Whole(names) => self.names.extend(names),
        }
        let size = match what {
            What::Bundle(bytes) | What::Images(bytes) => bytes.len(),
            What::Compressed(compressed) => compressed.data().len(),
        };
        self.units.push(Unit {
            at,
            size: crate::bytes::to_u64(size),
            prefix: prefix.into(),
            outputs: first..self.names.len(),
            what,
        });
    }

    /// The containers found, in file order.
    pub(crate) fn units(&self) -> &[Unit<'data>] {
        &self.units
    }

    /// How many containers were found.
    pub fn container_count(&self) -> usize {
        self.units.len()
    }

    /// How many outputs all of them give.
    pub fn output_count(&self) -> usize {
        self.names.len()
    }

    /// The name of output `index` (empty past the end).
    pub fn output_name(&self, index: usize) -> &[u8] {
        self.names.get(index).map_or(&[], Vec::as_slice)
    }

    /// Where container `index` is in the input and which outputs it gives
    /// (`None` past the end).
    pub fn container(&self, index: usize) -> Option<ExtractedContainer> {
        self.units.get(index).map(|u| ExtractedContainer {
            offset: u.at,
            size: u.size,
            outputs: u.outputs.clone(),
        })
    }

    /// Sets what [`stream`](Self::stream) may hold at once for decoding,
    /// in bytes, across every thread that streams this extraction: `None`
    /// for the default, [`MemoryBudget::DEFAULT`] or the largest single
    /// compressed bundle's buffer (its decoded size and an eighth), whichever
    /// is more. Compressed bundles are admitted by their declared sizes: a
    /// bundle larger than the budget is decoded alone.
    ///
    /// [`MemoryBudget::DEFAULT`]: crate::compressed::MemoryBudget::DEFAULT
    #[cfg(feature = "std")]
    pub fn set_memory_budget(&mut self, bytes: Option<u64>) {
        use crate::compressed::MemoryBudget;
        let largest = self
            .units
            .iter()
            .filter_map(|u| match u.what {
                What::Compressed(c) => Some(c.uncompressed_size()),
                _ => None,
            })
            .filter(|&size| size <= self.decoding.max_size)
            .max()
            .unwrap_or(0);
        let total = bytes.unwrap_or_else(|| MemoryBudget::default_for(largest));
        self.budget = crate::compressed::MemoryBudget::new(total);
    }

    /// What [`stream`](Self::stream) may hold at once for decoding.
    #[cfg(feature = "std")]
    pub fn memory_budget(&self) -> u64 {
        self.budget.total()
    }

    /// The first damage found while finding the containers, to report once
    /// the others are written.
    pub fn failure(&self) -> Option<&BundlerError> {
        self.failures.first()
    }

    /// Every piece of damage found while finding the containers, in file
    /// order: one container's damage never hides another's.
    pub fn failures(&self) -> &[BundlerError] {
        &self.failures
    }

    /// Decodes container `index` (a compressed bundle whole, hashed as the
    /// decoding policy says) and plans its outputs: output `i` of the plan is
    /// output `first + i` of the file, with the same name. Nothing is kept
    /// between calls; calls for different containers are independent.
    pub fn plan(
        &self,
        index: usize,
        observer: &mut dyn Observer,
    ) -> Result<Plan<'data>, BundlerError> {
        let Some(unit) = self.units.get(index) else {
            return Ok(Plan::default());
        };
        let first = unit.outputs.start;
        let mut plan = Plan::new(0, Buffers::new())?;
        match unit.what {
            What::Bundle(bundle) => {
                let loaded = Loaded {
                    offset: unit.at,
                    bytes: LoadedBytes::Input(bundle),
                };
                add_bundle(&mut plan, &loaded, &unit.prefix, first, observer)?;
            }
            What::Compressed(compressed) => {
                let budget = Budget::new(self.decoding);
                let bytes = input::decode(unit.at, &compressed, &budget, true, observer)?;
                let loaded = Loaded {
                    offset: unit.at,
                    bytes: LoadedBytes::Decompressed(0),
                };
                let mut part = Plan::new(0, alloc::vec![bytes])?;
                add_bundle(&mut part, &loaded, &unit.prefix, first, observer)?;
                plan.append(part, 0);
            }
            What::Images(bytes) => {
                let part = images(bytes, &unit.prefix, first, unit.at)?;
                plan.append(part, unit.at);
            }
        }
        if plan.output_count() != unit.outputs.len() {
            return Err(self.miscounted(index, plan.output_count()));
        }
        Ok(plan)
    }

    /// Container `index` planned with `count` outputs, where its entry
    /// table, read first, gave another count: only a decoder that is not
    /// deterministic on this stream could do that.
    pub(crate) fn miscounted(&self, index: usize, count: usize) -> BundlerError {
        let (at, max) = self
            .units
            .get(index)
            .map_or((0, 0), |unit| (unit.at, unit.outputs.len()));
        BundlerError::Input(crate::Error::new(
            crate::ErrorKind::CountTooLarge {
                count: crate::bytes::to_u64(count),
                max: crate::bytes::to_u64(max),
            },
            at,
        ))
    }
}

/// Where a container of an [`Extraction`] is and which outputs it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedContainer {
    /// Its offset in the input.
    pub offset: u64,
    /// How many bytes of the input it takes.
    pub size: u64,
    /// Its outputs, numbered across the whole input.
    pub outputs: Range<usize>,
}

/// How a container's outputs are named: after its entries' IDs, or whole
/// (OffloadBinary images).
enum Named {
    Ids(Vec<Vec<u8>>),
    Whole(Vec<Vec<u8>>),
}

/// The IDs of a bundle's entries, in order.
fn ids(bundle: &Bundle<'_>) -> Named {
    Named::Ids(
        bundle
            .entries()
            .map_while(Result::ok)
            .map(|e| e.id().to_vec())
            .collect(),
    )
}

/// The IDs of a container the bundler's reading loaded.
fn table_ids(container: &Loaded<'_>, buffers: &Buffers) -> Result<Named, BundlerError> {
    container.bundle(buffers).map(|b| ids(&b))
}

/// The IDs of a compressed bundle, from its entry table alone.
fn compressed_ids(
    at: u64,
    compressed: &CompressedBundle<'_>,
    decoding: Decoding,
) -> Result<Named, BundlerError> {
    let fail = |error| BundlerError::Compressed {
        offset: at,
        problem: CompressedProblem::Decode(error),
    };
    let options = decoding.options(false);
    let table = compressed.decompress_table(&options).map_err(fail)?;
    if !Bundle::is_bundle(&table) {
        return Err(BundlerError::Compressed {
            offset: at,
            problem: CompressedProblem::NotBinaryBundle,
        });
    }
    let bundle = Bundle::parse_table(&table, compressed.uncompressed_size()).map_err(|error| {
        BundlerError::MalformedBundle {
            error,
            place: Place::InCompressed(at),
        }
    })?;
    Ok(ids(&bundle))
}

/// An entry's output name: `<prefix>.<index>.<ID made safe>`.
fn entry_name(prefix: &str, index: usize, id: &[u8]) -> Vec<u8> {
    alloc::format!("{prefix}.{index}.{}", safe_name(id)).into_bytes()
}

/// Plans extracting every entry of every container [`inspect`] finds in
/// `data`, in file order, repeats included: bundles and compressed bundles
/// (back to back, in ELF sections, in archive members), and every image of
/// every OffloadBinary (alone, in `.llvm.offloading` sections, in archives,
/// nested ones opened, each the bytes llvm-offload-binary writes for it).
/// Output `i` is named `<stem>[.<member>].<i>.<entry ID>` for a bundle entry
/// and `<stem>[.<member>].<i>.<triple>[-<arch>][.<kind extension>]` for an
/// image, `i` counting every output of the file (so names are unique across
/// its containers), every part made safe as a file name ([`safe_name`]).
/// Bundle findings are warnings. A bundle whose payloads overlap so that
/// extracting them all would write more than the bundle holds is refused (a
/// small file could otherwise write terabytes).
///
/// A container that cannot be read does not stop the others: the plan
/// holds everything that can be read and reports the first damage as its
/// failure (written after the outputs, as LLVM's tools report errors).
/// This plan holds every decoded container at once; [`Extraction`] plans
/// one container at a time.
pub fn extract<'data>(
    data: &'data [u8],
    stem: &[u8],
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, BundlerError> {
    let extraction = Extraction::new(data, stem, decoding, observer)?;
    let mut plan = Plan::new(0, Buffers::new())?;
    let mut failure = None;
    for index in 0..extraction.container_count() {
        match extraction.plan(index, observer) {
            Ok(part) => plan.append(part, 0),
            Err(error) => {
                failure.get_or_insert(error);
            }
        }
    }
    if let Some(error) = failure.or_else(|| extraction.failures.into_iter().next()) {
        if plan.output_count() == 0 {
            return Err(error);
        }
        plan.fail(error);
    }
    Ok(plan)
}

/// Adds one output per entry of the bundle `container` holds to `part`
/// (which holds its buffer), each named `<prefix>.<i>.<entry ID>` with `i`
/// counting from `first` plus `part`'s outputs, so that names stay unique
/// across every container of a file.
pub(crate) fn add_bundle<'data>(
    part: &mut Plan<'data>,
    container: &Loaded<'data>,
    prefix: &str,
    first: usize,
    observer: &mut dyn Observer,
) -> Result<(), BundlerError> {
    let mut entries = Vec::new();
    {
        let bundle = container.bundle(part.buffers())?;
        // The bundle's whole size, also when only its table is read.
        let budget = bundle.size();
        let mut written = 0u64;
        for (entry_index, entry) in bundle.entries().map_while(Result::ok).enumerate() {
            written = written.saturating_add(entry.size());
            if written > budget {
                return Err(BundlerError::OverlappingPayloads {
                    entry: entry_index,
                    bundle_offset: container.offset,
                    budget,
                });
            }
            let start = usize::try_from(entry.offset()).unwrap_or(usize::MAX);
            let size = usize::try_from(entry.size()).unwrap_or(usize::MAX);
            let name = entry_name(prefix, first.saturating_add(entries.len()), entry.id());
            entries.push((name, start..start.saturating_add(size)));
        }
        bundle_warnings(&bundle, observer);
    }
    for (id, range) in entries {
        let index = part.add_output();
        part.push_source(index, container.source(range));
        part.name(index, id);
    }
    Ok(())
}

/// One output per image of the OffloadBinaries back to back in `bytes` (at
/// `at` in the input), nested ones opened, named
/// `<prefix>.<i>.<triple>[-<arch>][.<ext>]` with `i` counting from `first`.
fn images<'data>(
    bytes: &'data [u8],
    prefix: &str,
    first: usize,
    at: u64,
) -> Result<Plan<'data>, BundlerError> {
    let (mut part, namings) = image_plan(bytes, at)?;
    for (index, naming) in namings.iter().enumerate() {
        let mut what = safe_name(&naming.triple);
        if !naming.arch.is_empty() {
            what.push('-');
            what.push_str(&safe_name(&naming.arch));
        }
        if !naming.extension.is_empty() {
            what.push('.');
            what.push_str(naming.extension);
        }
        let name = alloc::format!("{prefix}.{}.{what}", first.saturating_add(index));
        part.name(index, name.into_bytes());
    }
    Ok(part)
}

/// One unnamed output per image of the OffloadBinaries back to back in
/// `bytes` (at `at` in the input), nested ones opened, with the triple,
/// architecture and kind that name each.
pub(crate) fn image_plan(
    bytes: &[u8],
    at: u64,
) -> Result<(Plan<'_>, Vec<crate::packager::Naming>), BundlerError> {
    use crate::packager::PackagerError as P;
    crate::packager::every_image(bytes).map_err(|e| match e {
        P::Binary(e) | P::Container(e) | P::Writer(e) => BundlerError::Input(e.shifted(at)),
        P::OverlappingImages { holds, .. } => BundlerError::OverlappingPayloads {
            entry: 0,
            bundle_offset: at,
            budget: holds,
        },
        _ => BundlerError::NotAContainer(Foreign::identify(bytes)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            &include_bytes!(concat!("../../../tests/fixtures/", $name))[..]
        };
    }

    fn names(plan: &Plan<'_>) -> Vec<String> {
        (0..plan.output_count())
            .map(|i| String::from_utf8_lossy(plan.output_name(i)).into_owned())
            .collect()
    }

    #[test]
    fn every_container_of_a_host_file_is_extracted() {
        // Bundles in `.hip_fatbin`: the host entry and both devices.
        let plan = extract(
            fixture!("offload/hip.o"),
            b"hip.o",
            Decoding::default(),
            &mut (),
        )
        .unwrap();
        assert_eq!(
            names(&plan),
            [
                "hip.o.0.host-x86_64-unknown-linux-gnu-",
                "hip.o.1.hipv4-amdgcn-amd-amdhsa--gfx906",
                "hip.o.2.hipv4-amdgcn-amd-amdhsa--gfx90a"
            ]
        );
        assert!(plan.failure().is_none());
        // OffloadBinary images in `.llvm.offloading`, the bytes
        // llvm-offload-binary writes for each (its own extraction of them).
        let data = fixture!("offload/embed.o");
        let plan = extract(data, b"embed.o", Decoding::default(), &mut ()).unwrap();
        let (theirs, _) = crate::packager::every_image(data).unwrap();
        assert_eq!(plan.output_count(), theirs.output_count());
        for i in 0..plan.output_count() {
            assert_eq!(
                plan.output_bytes(i).unwrap(),
                theirs.output_bytes(i).unwrap()
            );
            assert!(names(&plan)[i].starts_with(&alloc::format!("embed.o.{i}.")));
        }
        assert_eq!(names(&plan)[0], "embed.o.0.amdgcn-amd-amdhsa-gfx908.o");
    }

    #[test]
    fn a_compressed_bundle_in_a_section_is_decoded_once_and_checked() {
        // hip-compress.o: a compressed bundle in `.hip_fatbin`. Its entries
        // are the bytes extracting the compressed bundle alone gives.
        let data = fixture!("offload/hip-compress.o");
        let at = data.windows(4).position(|w| w == b"CCOB").unwrap();
        let alone = extract(&data[at..], b"ccob", Decoding::default(), &mut ()).unwrap();
        let plan = extract(data, b"hip-compress.o", Decoding::default(), &mut ()).unwrap();
        assert_eq!(plan.output_count(), 3);
        for i in 0..3 {
            assert_eq!(
                plan.output_bytes(i).unwrap(),
                alone.output_bytes(i).unwrap()
            );
        }
        assert!(plan.failure().is_none());
        // A wrong hash is found by that one decoding.
        let mut damaged = data.to_vec();
        let hash = at + if damaged[at + 4] == 3 { 24 } else { 16 };
        damaged[hash] ^= 1;
        let err = extract(&damaged, b"d.o", Decoding::default(), &mut ()).unwrap_err();
        assert!(
            alloc::format!("{}", err.message("d.o")).contains("hash"),
            "{err:?}"
        );
    }

    #[test]
    fn names_are_unique_across_the_containers_of_a_section() {
        // Three bundles back to back in `.hip_fatbin` (ELF) and `.hip_fat`
        // (PE), compressed and not: the index counts across them.
        for (file, data) in [
            ("so", fixture!("multi/libhip-compressed3.so")),
            ("so", fixture!("multi/libhip-mixed3.so")),
            ("dll", fixture!("multi/hip-compressed3.dll")),
            ("dll", fixture!("multi/hip-mixed3.dll")),
        ] {
            let plan = extract(data, file.as_bytes(), Decoding::default(), &mut ()).unwrap();
            let names = names(&plan);
            assert_eq!(names.len(), 9, "{file}");
            for (i, name) in names.iter().enumerate() {
                assert!(name.starts_with(&alloc::format!("{file}.{i}.")), "{name}");
            }
            assert!(plan.failure().is_none());
        }
    }

    #[test]
    fn an_extraction_names_every_output_first_and_plans_one_container_at_a_time() {
        fn shared<T: Sync>(_: &T) {}
        for data in [
            fixture!("multi/libhip-compressed3.so"),
            fixture!("multi/hip-mixed3.dll"),
            fixture!("compressed/concat/hip.hip_fatbin"),
            fixture!("offload/offload.a"),
        ] {
            let whole = extract(data, b"f", Decoding::default(), &mut ()).unwrap();
            let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
            shared(&extraction);
            assert_eq!(extraction.output_count(), whole.output_count());
            let mut next = 0;
            for index in 0..extraction.container_count() {
                let outputs = extraction.container(index).unwrap().outputs;
                assert_eq!(outputs.start, next);
                next = outputs.end;
                let plan = extraction.plan(index, &mut ()).unwrap();
                assert_eq!(plan.output_count(), outputs.len());
                for (i, output) in outputs.enumerate() {
                    assert_eq!(plan.output_name(i), extraction.output_name(output));
                    assert_eq!(plan.output_name(i), whole.output_name(output));
                    assert_eq!(
                        plan.output_bytes(i).unwrap(),
                        whole.output_bytes(output).unwrap()
                    );
                }
            }
            assert_eq!(next, extraction.output_count());
            assert!(extraction.container(extraction.container_count()).is_none());
        }
    }

    #[test]
    fn archive_members_name_their_outputs() {
        let plan = extract(
            fixture!("offload/offload.a"),
            b"offload.a",
            Decoding::default(),
            &mut (),
        )
        .unwrap();
        let names = names(&plan);
        assert!(!names.is_empty());
        assert!(names
            .iter()
            .all(|n| n.starts_with("offload.a.") && !n.contains('/')));
        assert!(plan.failure().is_none());
    }

    #[test]
    fn damage_is_reported_after_what_can_be_read() {
        // A good binary, then a damaged one.
        let good = fixture!("offload/single.offbin");
        let mut data = good.to_vec();
        data.extend_from_slice(&good[..40]);
        let plan = extract(&data, b"two", Decoding::default(), &mut ()).unwrap();
        assert_eq!(plan.output_count(), 1);
        assert_eq!(
            plan.output_bytes(0).unwrap(),
            extract(good, b"one", Decoding::default(), &mut ())
                .unwrap()
                .output_bytes(0)
                .unwrap()
        );
        assert!(plan.failure().is_some());
        // Nothing readable at all: the error itself.
        assert!(extract(&good[..40], b"cut", Decoding::default(), &mut ()).is_err());
        assert!(matches!(
            extract(b"plain text", b"t", Decoding::default(), &mut ()),
            Err(BundlerError::NotAContainer(_))
        ));
    }

    #[test]
    fn names_from_ids_cannot_escape_the_directory() {
        assert_eq!(
            safe_name(b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+"),
            "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
        );
        assert_eq!(safe_name(b"../../etc/passwd"), "_.._.._etc_passwd");
        assert_eq!(safe_name(b".."), "_..");
        assert_eq!(safe_name(b"a\0b/c\xff"), "a_b_c_");
        assert_eq!(safe_name(b""), "_");
    }
}
