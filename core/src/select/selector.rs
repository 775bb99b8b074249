//! Every container of a file, found and named once, asked device by device.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::bundler::{BundlerError, Decoding, Observer};
use crate::cuda_fatbin::select::{candidates, Candidate};
use crate::cuda_fatbin::{
    select_for_device as cuda_select, CodeName, CudaMatch, EntryKind, Fatbin, Sm, SmVariant,
};
use crate::cuda_host::{cuobjdump_base, host_fatbins, CuobjdumpCounter, Listed};
use crate::extract::Extraction;
use crate::id::{IdError, TargetId};
use crate::{DecompressOptions, FileKind};

/// A device as `select` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device<'a> {
    /// An AMD GPU: a target ID (`gfx90a:sramecc+:xnack-`) or an HSA ISA
    /// name ([`crate::id::parse_device`]).
    Amdgpu(TargetId<'a>),
    /// An NVIDIA GPU: its SM number (`sm_89` is 89; a device has no `a` or
    /// `f` variant, so `sm_90a` names sm_90).
    Cuda(u32),
}

impl<'a> Device<'a> {
    /// `sm_<digits>[a|f]` for an NVIDIA device, else an AMD target ID or
    /// ISA name.
    pub fn parse(text: &'a str) -> Result<Self, IdError> {
        if text.starts_with("sm_") {
            return Sm::parse(text)
                .map(|sm| Device::Cuda(sm.number))
                .ok_or(IdError::UnknownProcessor);
        }
        crate::id::parse_device(text).map(Device::Amdgpu)
    }
}

impl core::fmt::Display for Device<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Device::Amdgpu(id) => write!(f, "{}", id.canonical()),
            Device::Cuda(sm) => write!(f, "sm_{sm}"),
        }
    }
}

/// How the chosen code runs on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// AMD code for the device's processor.
    Native,
    /// AMD code for the processor's generic family.
    Generic,
    /// SPIR-V, compiled for the device when loaded.
    SpirV,
    /// An NVIDIA cubin that runs as it is.
    Cubin,
    /// NVIDIA PTX, JIT-compiled when loaded.
    Ptx,
}

impl From<crate::id::DeviceMatch> for How {
    fn from(how: crate::id::DeviceMatch) -> Self {
        match how {
            crate::id::DeviceMatch::Native => How::Native,
            crate::id::DeviceMatch::Generic => How::Generic,
            crate::id::DeviceMatch::SpirV => How::SpirV,
        }
    }
}

impl From<CudaMatch> for How {
    fn from(how: CudaMatch) -> Self {
        match how {
            CudaMatch::Cubin => How::Cubin,
            CudaMatch::Ptx => How::Ptx,
        }
    }
}

impl How {
    /// Its name in `select`'s output.
    pub fn name(self) -> &'static str {
        match self {
            How::Native => "native",
            How::Generic => "generic",
            How::SpirV => "spirv",
            How::Cubin => "cubin",
            How::Ptx => "ptx",
        }
    }
}

/// The code chosen, not read yet.
#[derive(Debug, Clone)]
enum Code<'data> {
    /// Bytes of the input, or of a decompressed container (an OffloadBinary
    /// image of a compressed binary).
    Bytes(Cow<'data, [u8]>),
    /// An entry of a compressed bundle, decoded when read.
    Compressed(crate::id::ChosenEntry<'data>),
    /// A fat binary entry (or a member of a concat entry), decoded when
    /// read.
    Cuda(Candidate<'data>),
}

/// What one container gives the device.
#[derive(Debug, Clone)]
pub enum Outcome<'data> {
    /// The code the runtime loads.
    Loads(Chosen<'data>),
    /// Nothing: why, in a sentence.
    Nothing(String),
    /// The container could not be read.
    Failed(BundlerError),
}

/// A code object chosen from a container.
#[derive(Debug, Clone)]
pub struct Chosen<'data> {
    /// Its entry ID: a bundle entry's, an OffloadBinary image's target ID,
    /// a fat binary entry's SM (`sm_86`, `compute_80`).
    pub id: Vec<u8>,
    /// How it runs.
    pub how: How,
    /// Why this one, in a sentence.
    pub reason: String,
    /// The name `extract` gives its file.
    pub output_name: Vec<u8>,
    /// Its output's index among `extract`'s outputs of the file (CUDA
    /// code: its place in its fat binary's listing).
    output: usize,
    code: Code<'data>,
}

impl<'data> Chosen<'data> {
    /// The code's bytes: borrowed where the input holds them, else decoded
    /// (a compressed bundle only as far as the code reaches, the hash
    /// checked only if `options` asks).
    pub fn code(&self, options: &DecompressOptions) -> crate::Result<Cow<'data, [u8]>> {
        match &self.code {
            Code::Bytes(bytes) => Ok(bytes.clone()),
            Code::Compressed(chosen) => {
                let mut out = alloc::vec![0u8; chosen.needed()];
                let size = chosen.decompress_into(&mut out, options)?.code.len();
                out.truncate(size);
                Ok(Cow::Owned(out))
            }
            Code::Cuda(candidate) => Ok(match candidate.entry.contents(options)? {
                // Stored: a view of the input.
                Cow::Borrowed(stored) => Cow::Borrowed(cuda_image(candidate, stored)?),
                Cow::Owned(decoded) => Cow::Owned(cuda_image(candidate, &decoded)?.to_vec()),
            }),
        }
    }
}

/// The image of a fat binary entry (or of its concat member) in its
/// decoded payload.
fn cuda_image<'d>(candidate: &Candidate<'_>, decoded: &'d [u8]) -> crate::Result<&'d [u8]> {
    let member = candidate
        .member
        .and_then(|m| candidate.entry.members().find(|x| x.index == m));
    match member {
        Some(member) => candidate.entry.member_image(&member, decoded),
        None => candidate.entry.image(decoded),
    }
}

/// One container and what it gives the device.
#[derive(Debug, Clone)]
pub struct Selected<'data> {
    /// What it is: a bundle, a compressed bundle, an OffloadBinary, a CUDA
    /// fat binary.
    pub kind: FileKind,
    /// Its offset in the file.
    pub offset: u64,
    /// What it gives.
    pub outcome: Outcome<'data>,
}

/// What a file's containers give a device.
#[derive(Debug, Clone, Default)]
pub struct Selection<'data> {
    /// Every container found, in file order.
    pub containers: Vec<Selected<'data>>,
    /// Damage found between them (no container to name), in file order.
    pub failures: Vec<BundlerError>,
}

impl Selection<'_> {
    /// Whether some container gives the device nothing, fails, or damage
    /// was found: what `select` exits non-zero for.
    pub fn falls_short(&self) -> bool {
        !self.failures.is_empty()
            || self
                .containers
                .iter()
                .any(|c| !matches!(c.outcome, Outcome::Loads(_)))
    }
}

/// Every container of `data` (a file whose name is `stem`) and what it
/// gives `device`: the bundles, compressed bundles and OffloadBinaries
/// `extract` finds (compressed bundles decoded only as far as their entry
/// tables, within `decoding`'s limit), then the CUDA fat binaries it finds,
/// each named as `extract` names it. An error only when the file holds no
/// container at all.
pub fn select<'data>(
    data: &'data [u8],
    stem: &[u8],
    device: &Device<'_>,
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Selection<'data>, BundlerError> {
    Selector::new(data, stem, decoding, observer).map(|s| s.select(device))
}

/// A CUDA fat binary with its entries as `extract` names them, or why it
/// cannot be read.
type FoundFatbin<'data> = Result<(Fatbin<'data>, Vec<Listed<'data>>), crate::Error>;

/// A file's containers found and named once, to ask what each gives one
/// device after another ([`select`] for one).
#[derive(Debug)]
pub struct Selector<'data> {
    extraction: Option<Extraction<'data>>,
    /// The CUDA fat binaries, each with its entries as `extract` names them.
    fatbins: Vec<(u64, FoundFatbin<'data>)>,
    /// Damage found while finding them.
    failures: Vec<BundlerError>,
    decoding: Decoding,
}

impl<'data> Selector<'data> {
    /// Finds every container of `data`, as [`select`] does; an error only
    /// when the file holds none.
    pub fn new(
        data: &'data [u8],
        stem: &[u8],
        decoding: Decoding,
        observer: &mut dyn Observer,
    ) -> Result<Self, BundlerError> {
        let found = host_fatbins(data);
        let mut failures = Vec::new();
        let extraction = match Extraction::new(data, stem, decoding, observer) {
            Ok(extraction) => {
                failures.extend(extraction.failures().iter().cloned());
                Some(extraction)
            }
            // A file of CUDA fat binaries alone holds no bundle.
            Err(BundlerError::NotAContainer(_)) if !found.is_empty() => None,
            Err(error) if found.is_empty() => return Err(error),
            Err(error) => {
                failures.push(error);
                None
            }
        };
        let base = cuobjdump_base(core::str::from_utf8(stem).unwrap_or_default());
        let mut counter = CuobjdumpCounter::default();
        let fatbins = found
            .into_iter()
            .map(|f| {
                let listed = f.fatbin.map(|fatbin| (fatbin, counter.list(&fatbin, base)));
                (f.offset, listed)
            })
            .collect();
        Ok(Selector {
            extraction,
            fatbins,
            failures,
            decoding,
        })
    }

    /// Whether the file holds no container but damaged ones.
    pub fn is_empty(&self) -> bool {
        self.extraction
            .as_ref()
            .is_none_or(|e| e.container_count() == 0)
            && self.fatbins.is_empty()
    }

    /// The extraction's containers, with where each lies.
    pub(crate) fn extraction(&self) -> Option<&Extraction<'data>> {
        self.extraction.as_ref()
    }

    /// The CUDA fat binaries, each at its file offset.
    pub(crate) fn fatbins(&self) -> impl Iterator<Item = (u64, &FoundFatbin<'data>)> + '_ {
        self.fatbins.iter().map(|(offset, found)| (*offset, found))
    }

    /// What each container gives `device`, in file order.
    pub fn select(&self, device: &Device<'_>) -> Selection<'data> {
        let mut selection = Selection {
            containers: Vec::new(),
            failures: self.failures.clone(),
        };
        if let Some(extraction) = &self.extraction {
            for unit in extraction.units() {
                let outcome = match device {
                    Device::Amdgpu(target) => amd::choose(extraction, unit, target, self.decoding),
                    Device::Cuda(_) => Outcome::Nothing(
                        "AMD code: nothing for an NVIDIA device (give an AMD target ID)".into(),
                    ),
                };
                selection.containers.push(Selected {
                    kind: unit.kind(),
                    offset: unit.at,
                    outcome,
                });
            }
        }
        for (offset, found) in &self.fatbins {
            let outcome = match (found, device) {
                (Ok((fatbin, listed)), Device::Cuda(sm)) => cuda(fatbin, listed, *sm),
                (Ok(_), Device::Amdgpu(_)) => Outcome::Nothing(
                    "a CUDA fat binary: nothing for an AMD device (give sm_XX)".into(),
                ),
                (Err(error), _) => Outcome::Failed(BundlerError::Input(*error)),
            };
            selection.containers.push(Selected {
                kind: FileKind::CudaFatbin,
                offset: *offset,
                outcome,
            });
        }
        // Extraction's containers and the fat binaries, in file order.
        selection.containers.sort_by_key(|c| c.offset);
        selection
    }
}

/// What the CUDA driver loads from `fatbin` on SM `sm`; `listed` are its
/// entries as `extract` names them.
fn cuda<'data>(fatbin: &Fatbin<'data>, listed: &[Listed<'data>], sm: u32) -> Outcome<'data> {
    let Some(chosen) = cuda_select(fatbin, sm) else {
        let mut why = alloc::format!("no cubin or PTX runs on sm_{sm}:");
        let mut any = false;
        for c in candidates(fatbin) {
            any = true;
            let _ = write!(why, " {} {};", code_name(c.kind, c.sm), not_running(&c, sm));
        }
        if !any {
            why.push_str(" it holds neither");
        }
        return Outcome::Nothing(why.trim_end_matches(';').into());
    };
    let output = listed.iter().position(|l| {
        l.entry.offset() == chosen.entry.offset() && l.member.map(|m| m.index) == chosen.member
    });
    let name = output
        .and_then(|i| listed.get(i))
        .and_then(|l| l.name.clone())
        .unwrap_or_default();
    let how = How::from(chosen.kind);
    let reason = match chosen.kind {
        CudaMatch::Cubin => cubin_reason(chosen.sm, sm),
        CudaMatch::Ptx => alloc::format!(
            "no cubin runs on sm_{sm}; {} PTX is JIT-compiled for it (the highest that runs)",
            code_name(CudaMatch::Ptx, chosen.sm)
        ),
    };
    Outcome::Loads(Chosen {
        id: code_name(chosen.kind, chosen.sm).into_bytes(),
        how,
        reason,
        output_name: name.into_bytes(),
        output: output.unwrap_or_default(),
        code: Code::Cuda(chosen),
    })
}

/// `sm_86` for a cubin, `compute_80` for PTX.
fn code_name(kind: CudaMatch, sm: Sm) -> String {
    let kind = match kind {
        CudaMatch::Cubin => EntryKind::Elf,
        CudaMatch::Ptx => EntryKind::Ptx,
    };
    alloc::format!("{}", CodeName { kind, sm })
}

/// Why a cubin of SM `code` was chosen for a device of SM `device`.
fn cubin_reason(code: Sm, device: u32) -> String {
    match code.variant {
        SmVariant::Arch => alloc::format!("{code} cubin: code for exactly sm_{device}"),
        SmVariant::Family => alloc::format!(
            "{code} cubin: family-specific code runs on its family (major {}, minor {} and up)",
            code.major(),
            code.minor()
        ),
        SmVariant::Plain if code.number == device => {
            alloc::format!("{code} cubin: the device's own SM")
        }
        SmVariant::Plain => alloc::format!(
            "{code} cubin: runs on sm_{device} (the same major, a lower minor; the closest cubin that runs)"
        ),
    }
}

/// Why code `c` does not run on SM `device`.
fn not_running(c: &Candidate<'_>, device: u32) -> &'static str {
    let device_major = device.checked_div(10).unwrap_or(0);
    match (c.sm.variant, c.kind) {
        (SmVariant::Arch, _) => "is for exactly its own SM",
        (_, CudaMatch::Cubin) | (SmVariant::Family, _) if c.sm.major() != device_major => {
            "another major"
        }
        (_, CudaMatch::Cubin) | (SmVariant::Family, _) => "a higher minor",
        (SmVariant::Plain, CudaMatch::Ptx) => "above the device",
    }
}

/// The HIP runtime's choice from one of an extraction's containers.
mod amd {
    use alloc::borrow::Cow;
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::fmt::Write;

    use super::{Chosen, Code, How, Outcome};
    use crate::bundler::{BundlerError, CompressedProblem, Decoding, Piece, Place};
    use crate::extract::{Extraction, Unit, What};
    use crate::id::{mismatch, select_for_device, select_image, DeviceMatch, TargetId, Triple};
    use crate::{Bundle, BundleEntryId, CompressedBundle};

    /// What `unit` of an extraction gives `device`.
    pub(super) fn choose<'data>(
        names: &Extraction<'data>,
        unit: &Unit<'data>,
        device: &TargetId<'_>,
        decoding: Decoding,
    ) -> Outcome<'data> {
        let result = match &unit.what {
            What::Bundle(bytes) => plain(unit, bytes, device),
            What::Compressed(compressed) => compressed_bundle(unit, compressed, device, decoding),
            What::Images(bytes) => images(unit, bytes, device),
        };
        let mut outcome = result.unwrap_or_else(Outcome::Failed);
        if let Outcome::Loads(chosen) = &mut outcome {
            chosen.output_name = names.output_name(chosen.output).to_vec();
        }
        outcome
    }

    /// The entry of an uncompressed bundle: its payload is the code.
    fn plain<'data>(
        unit: &Unit<'data>,
        bytes: &'data [u8],
        device: &TargetId<'_>,
    ) -> Result<Outcome<'data>, BundlerError> {
        let bundle = Bundle::parse(bytes).map_err(|error| BundlerError::MalformedBundle {
            error,
            place: Place::At(unit.at),
        })?;
        Ok(match pick(&bundle, device) {
            Ok((position, how, entry)) => loads(
                unit,
                position,
                entry.id(),
                how,
                device,
                Code::Bytes(Cow::Borrowed(entry.payload())),
            ),
            Err(why) => Outcome::Nothing(why),
        })
    }

    /// The entry of a compressed bundle, chosen from its table; its code is
    /// decoded when read.
    fn compressed_bundle<'data>(
        unit: &Unit<'data>,
        compressed: &CompressedBundle<'data>,
        device: &TargetId<'_>,
        decoding: Decoding,
    ) -> Result<Outcome<'data>, BundlerError> {
        let fail = |error| BundlerError::Compressed {
            offset: unit.at,
            problem: CompressedProblem::Decode(error),
        };
        let options = decoding.options(false);
        let table = compressed.decompress_table(&options).map_err(fail)?;
        let bundle =
            Bundle::parse_table(&table, compressed.uncompressed_size()).map_err(|error| {
                BundlerError::MalformedBundle {
                    error,
                    place: Place::InCompressed(unit.at),
                }
            })?;
        let (position, how, entry) = match pick(&bundle, device) {
            Ok(picked) => picked,
            Err(why) => return Ok(Outcome::Nothing(why)),
        };
        let chosen = crate::id::select_in_compressed(compressed, device, &options)
            .map_err(fail)?
            .ok_or_else(|| fail(crate::Error::new(crate::ErrorKind::UnknownContainer, 0)))?;
        Ok(loads(
            unit,
            position,
            entry.id(),
            how,
            device,
            Code::Compressed(chosen),
        ))
    }

    /// The image of OffloadBinaries back to back that the runtime loads.
    fn images<'data>(
        unit: &Unit<'data>,
        bytes: &'data [u8],
        device: &TargetId<'_>,
    ) -> Result<Outcome<'data>, BundlerError> {
        let (plan, namings) = crate::extract::image_plan(bytes, unit.at)?;
        let pairs = namings.iter().map(|n| (&n.triple[..], &n.arch[..]));
        let Some(index) = select_image(pairs, device) else {
            let rejected = namings.iter().map(|n| {
                let triple = core::str::from_utf8(&n.triple).unwrap_or_default();
                let arch = core::str::from_utf8(&n.arch).unwrap_or_default();
                let why = mismatch(None, split_triple(triple), arch, device);
                (
                    alloc::format!("{triple}-{arch}"),
                    why.map(|w| alloc::format!("{w}")),
                )
            });
            return Ok(Outcome::Nothing(none_runs(rejected, device)));
        };
        let pieces = plan.output(index);
        let code = match pieces {
            [Piece::Input { bytes, .. }] => Cow::Borrowed(*bytes),
            _ => {
                let mut code = Vec::new();
                for piece in pieces {
                    match plan.bytes(piece) {
                        Some(bytes) => crate::bytes::extend(&mut code, bytes)?,
                        None => {
                            let Piece::Zeros(n) = piece else { continue };
                            let n = usize::try_from(*n).unwrap_or(usize::MAX);
                            crate::bytes::grow(&mut code, n)?;
                        }
                    }
                }
                Cow::Owned(code)
            }
        };
        let arch = namings.get(index).map_or(&[][..], |n| &n.arch[..]);
        Ok(loads(
            unit,
            index,
            arch,
            DeviceMatch::Native,
            device,
            Code::Bytes(code),
        ))
    }

    /// `arch-vendor-os[-env]` as a triple.
    fn split_triple(text: &str) -> Triple<'_> {
        let mut parts = text.splitn(4, '-');
        let mut next = || parts.next().unwrap_or_default();
        Triple {
            arch: next(),
            vendor: next(),
            os: next(),
            env: next(),
        }
    }

    /// The entry of `bundle` the runtime loads on `device`: its position,
    /// how it matched and the entry; else why none runs.
    fn pick<'b>(
        bundle: &Bundle<'b>,
        device: &TargetId<'_>,
    ) -> Result<(usize, DeviceMatch, crate::BundleEntry<'b>), String> {
        let entries = || bundle.entries().map_while(Result::ok);
        match select_for_device(bundle, device) {
            Some((how, entry)) => {
                let at = entry.descriptor_offset();
                let position = entries()
                    .position(|e| e.descriptor_offset() == at)
                    .unwrap_or_default();
                Ok((position, how, entry))
            }
            None => Err(none_runs(
                entries().map(|e| {
                    let id = String::from_utf8_lossy(e.id()).into_owned();
                    let why = match e.id_str().map(BundleEntryId::parse) {
                        Some(Ok(parsed)) => mismatch(
                            Some(parsed.kind()),
                            parsed.triple(),
                            parsed.target_id(),
                            device,
                        )
                        .map(|w| alloc::format!("{w}")),
                        _ => Some("not an entry ID".into()),
                    };
                    (id, why)
                }),
                device,
            )),
        }
    }

    /// "none of N entries runs on DEVICE: `id` why; ..."
    fn none_runs(
        rejected: impl Iterator<Item = (String, Option<String>)>,
        device: &TargetId<'_>,
    ) -> String {
        let mut why = String::new();
        let mut count = 0usize;
        for (id, reason) in rejected {
            count = count.saturating_add(1);
            let reason = reason.unwrap_or_else(|| "runs, but was not reached".into());
            let _ = write!(why, "; `{id}` {reason}");
        }
        if count == 0 {
            return "the container holds no entry".into();
        }
        alloc::format!(
            "none of its {count} entries runs on {}{why}",
            device.canonical()
        )
    }

    /// The code chosen: entry `position` of the unit, whose ID (or image
    /// target ID) is `id`.
    fn loads<'data>(
        unit: &Unit<'data>,
        position: usize,
        id: &[u8],
        how: DeviceMatch,
        device: &TargetId<'_>,
        code: Code<'data>,
    ) -> Outcome<'data> {
        let text = String::from_utf8_lossy(id);
        let target = BundleEntryId::parse(&text).map_or(&*text, |p| p.target_id());
        let wanted = alloc::format!("{}", device.canonical());
        let reason = match how {
            DeviceMatch::Native if target == wanted => {
                alloc::format!("native: `{target}` is the device's own target ID")
            }
            DeviceMatch::Native => alloc::format!(
                "native: `{target}` runs on {wanted} (a feature it leaves open); no code for exactly {wanted}"
            ),
            DeviceMatch::Generic => alloc::format!(
                "generic: no code for {}; `{target}` is its generic family's",
                device.processor()
            ),
            DeviceMatch::SpirV => alloc::format!(
                "SPIR-V: no native or generic code; compiled for {wanted} when loaded"
            ),
        };
        let how = How::from(how);
        Outcome::Loads(Chosen {
            id: id.to_vec(),
            how,
            reason,
            output: unit.outputs.start.saturating_add(position),
            output_name: Vec::new(),
            code,
        })
    }
}
