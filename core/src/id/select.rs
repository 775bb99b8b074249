//! Picking the entry to load: the bundler's first-compatible rule and the HIP
//! runtime's preference for a device.

use core::fmt::{self, Write};

use super::arch::AmdgpuArch;
use super::{BundleEntryId, FeatureSetting, TargetId, Triple};
#[cfg(feature = "alloc")]
use crate::bytes::to_u64;
#[cfg(feature = "alloc")]
use crate::CompressedBundle;
use crate::{Bundle, BundleEntry};

/// The entry whose ID is exactly `requested` if there is one (an exact match
/// always wins: asking for `gfx90a` never gives `gfx906` code that happens to
/// come first), else the first entry, in file order, whose code object is
/// compatible with `requested` ([`BundleEntryId::is_compatible_with`]).
/// Entries whose ID is not UTF-8 or does not parse are skipped; a damaged
/// descriptor ends the search.
pub fn first_compatible<'data>(
    bundle: &Bundle<'data>,
    requested: &BundleEntryId<'_>,
    hip_openmp_compatible: bool,
) -> Option<BundleEntry<'data>> {
    first_compatible_of(
        bundle.entries().map_while(Result::ok),
        requested,
        hip_openmp_compatible,
    )
}

/// [`first_compatible`] among `entries` (in their order): for callers that
/// hold a bundle's entries already.
pub fn first_compatible_of<'data, I>(
    entries: I,
    requested: &BundleEntryId<'_>,
    hip_openmp_compatible: bool,
) -> Option<BundleEntry<'data>>
where
    I: Iterator<Item = BundleEntry<'data>> + Clone,
{
    entries
        .clone()
        .find(|entry| is_exactly(entry.id(), requested))
        .or_else(|| {
            entries.clone().find(|entry| {
                entry
                    .id_str()
                    .and_then(|id| BundleEntryId::parse(id).ok())
                    .is_some_and(|id| id.is_compatible_with(requested, hip_openmp_compatible))
            })
        })
}

/// Whether `id` is the text of `requested`, compared as it is written out
/// (no allocation).
pub fn is_exactly(id: &[u8], requested: &BundleEntryId<'_>) -> bool {
    struct Compare<'a> {
        rest: &'a [u8],
    }
    impl Write for Compare<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            match self.rest.strip_prefix(s.as_bytes()) {
                Some(rest) => {
                    self.rest = rest;
                    Ok(())
                }
                None => Err(fmt::Error),
            }
        }
    }
    let mut compare = Compare { rest: id };
    write!(compare, "{requested}").is_ok() && compare.rest.is_empty()
}

/// Which of the HIP runtime's candidates an entry was chosen as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceMatch {
    /// Code for the device's own processor.
    Native,
    /// Code for the processor's generic family (`gfx9-generic`, ...).
    Generic,
    /// SPIR-V, compiled for the device at load time.
    SpirV,
}

const AMDHSA: Triple<'static> = Triple {
    arch: "amdgcn",
    vendor: "amd",
    os: "amdhsa",
    env: "",
};
const SPIRV: Triple<'static> = Triple {
    arch: "spirv64",
    vendor: "amd",
    os: "amdhsa",
    env: "",
};

/// The entry the HIP runtime would load on a device with target ID `device`
/// (e.g. `gfx90a:sramecc+:xnack-`): native code first, then the generic
/// family's, then SPIR-V. Within each, the runtime's rule, which AMD's comgr
/// (`amd_comgr_lookup_code_object`) applies: an entry of kind `hip`, `hipv4`
/// or `hcc`, for exactly `amdgcn-amd-amdhsa` (an entry with another
/// environment, such as `unknown`, is never loaded) or, as newer comgr
/// reads ISA names, `amdgpu<subarch>-amd-amdhsa` with a processor of that
/// sub-architecture ([`TargetId::parse_for_arch_upstream`]), whose target ID is
/// compatible with the device's; among those, the one whose target ID is
/// exactly the device's (the better code), else the first in file order.
/// (The bundler's rules, for [`first_compatible`], differ: they read an
/// `unknown` environment as none and refuse `hcc`.)
pub fn select_for_device<'data>(
    bundle: &Bundle<'data>,
    device: &TargetId<'_>,
) -> Option<(DeviceMatch, BundleEntry<'data>)> {
    let entries = || bundle.entries().map_while(Result::ok);
    let mut native = SmallStr::new();
    write!(native, "{}", device.canonical()).ok()?;
    if let Some(entry) = loadable(entries(), AMDHSA, device, native.as_str()) {
        return Some((DeviceMatch::Native, entry));
    }
    let generic = device
        .amdgpu_processor()
        .and_then(|p| p.generic)
        .and_then(super::processor::lookup_upstream);
    if let Some(generic) = generic {
        let device = device.with_processor(generic);
        let mut text = SmallStr::new();
        write!(text, "{}", device.canonical()).ok()?;
        if let Some(entry) = loadable(entries(), AMDHSA, &device, text.as_str()) {
            return Some((DeviceMatch::Generic, entry));
        }
    }
    let spirv = TargetId::parse_for_arch(SPIRV.arch, "amdgcnspirv").ok()?;
    loadable(entries(), SPIRV, &spirv, "amdgcnspirv").map(|entry| (DeviceMatch::SpirV, entry))
}

/// The entry of `entries` the runtime loads for `device` (written `exact`)
/// on `triple`: see [`select_for_device`].
fn loadable<'data>(
    entries: impl Iterator<Item = BundleEntry<'data>> + Clone,
    triple: Triple<'_>,
    device: &TargetId<'_>,
    exact: &str,
) -> Option<BundleEntry<'data>> {
    let runs = |entry: &BundleEntry<'data>| {
        let id = entry
            .id_str()
            .and_then(|id| BundleEntryId::parse(id).ok())?;
        let ours =
            matches!(id.kind(), "hip" | "hipv4" | "hcc") && is_runtime_triple(id.triple(), triple);
        // Read as newer compilers write them, too.
        let target = TargetId::parse_for_arch_upstream(id.triple().arch, id.target_id()).ok()?;
        (ours && target.is_compatible_with(device)).then_some(id.target_id() == exact)
    };
    entries
        .clone()
        .find(|entry| runs(entry) == Some(true))
        .or_else(|| entries.clone().find(|entry| runs(entry).is_some()))
}

/// Whether the runtime takes code for `triple` where it looks for `want`:
/// the same triple, or, for `amdgcn-amd-amdhsa`, the same with the
/// architecture spelled `amdgpu<subarch>` (LLVM's main branch; comgr wants
/// the sub-architecture, a bare `amdgpu` it refuses).
fn is_runtime_triple(triple: Triple<'_>, want: Triple<'_>) -> bool {
    triple == want
        || (want == AMDHSA
            && is_hsa_arch_upstream(triple.arch)
            && Triple {
                arch: AMDHSA.arch,
                ..triple
            } == AMDHSA)
}

/// `amdgcn` or `amdgpu<subarch>`: the architectures of the runtime's ISA
/// names on LLVM's main branch.
fn is_hsa_arch_upstream(arch: &str) -> bool {
    arch == AMDHSA.arch || AmdgpuArch::parse_upstream(arch).is_some_and(AmdgpuArch::has_subarch)
}

/// Why the HIP runtime loads an entry on no device of a target ID (see
/// [`select_for_device`]): the first of its tests the entry fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch<'a> {
    /// Its kind is not one the runtime loads (`host`, `openmp`, ...).
    Kind(&'a str),
    /// Its triple is not the runtime's (`amdgcn-amd-amdhsa`).
    Triple(Triple<'a>),
    /// Its target ID does not parse for its triple.
    Unreadable(&'a str),
    /// Code for another processor (and not the device's generic family).
    Processor(&'a str),
    /// Code for the device's processor (or its generic family) with a
    /// feature setting the device does not have.
    Feature {
        /// `xnack` or `sramecc`.
        feature: &'static str,
        /// The code's setting.
        code: FeatureSetting,
        /// The device's.
        device: FeatureSetting,
    },
}

impl fmt::Display for Mismatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = |s: FeatureSetting| match s {
            FeatureSetting::On => "+",
            FeatureSetting::Off => "-",
            FeatureSetting::Any => " any",
        };
        match self {
            Mismatch::Kind(kind) => {
                write!(
                    f,
                    "is `{kind}` code (the HIP runtime loads hip, hipv4, hcc)"
                )
            }
            Mismatch::Triple(triple) => write!(f, "is for {triple}, not amdgcn-amd-amdhsa"),
            Mismatch::Unreadable(target) => {
                write!(f, "has target ID `{target}`, which does not parse")
            }
            Mismatch::Processor(processor) => write!(f, "is for {processor}"),
            Mismatch::Feature {
                feature,
                code,
                device,
            } => write!(
                f,
                "is built with {feature}{}, the device has {feature}{}",
                sign(*code),
                sign(*device)
            ),
        }
    }
}

/// Why the runtime would not load the entry of `kind`, `triple` and
/// `target` (its target ID) on `device` as native, generic or SPIR-V code;
/// `None` if it would. An OffloadBinary image has no kind (`None`).
pub fn mismatch<'a>(
    kind: Option<&'a str>,
    triple: Triple<'a>,
    target: &'a str,
    device: &TargetId<'_>,
) -> Option<Mismatch<'a>> {
    if let Some(kind) = kind.filter(|k| !matches!(*k, "hip" | "hipv4" | "hcc")) {
        return Some(Mismatch::Kind(kind));
    }
    if triple == SPIRV && target == "amdgcnspirv" {
        return None;
    }
    if !is_runtime_triple(triple, AMDHSA) {
        return Some(Mismatch::Triple(triple));
    }
    let Ok(code) = TargetId::parse_for_arch_upstream(triple.arch, target) else {
        return Some(Mismatch::Unreadable(target));
    };
    let generic = device
        .amdgpu_processor()
        .and_then(|p| p.generic)
        .and_then(super::processor::lookup_upstream)
        .filter(|g| g.name == code.processor());
    let against = match generic {
        Some(generic) => device.with_processor(generic),
        None if code.processor() == device.processor() => *device,
        None => return Some(Mismatch::Processor(code.processor())),
    };
    [
        ("xnack", code.xnack(), against.xnack()),
        ("sramecc", code.sramecc(), against.sramecc()),
    ]
    .into_iter()
    .find(|(_, code, device)| !code.satisfies(*device))
    .map(|(feature, code, device)| Mismatch::Feature {
        feature,
        code,
        device,
    })
}

/// Whether the runtime loads an OffloadBinary image for `triple` and `arch`
/// on `device`: `None` if not; else whether `arch` is exactly the device's
/// target ID (the image it prefers).
fn image_runs(triple: &[u8], arch: &[u8], device: &TargetId<'_>) -> Option<bool> {
    let arch = core::str::from_utf8(arch).ok()?;
    let triple = core::str::from_utf8(triple).ok()?;
    // Not the runtime's triple: nothing to choose.
    let hsa_arch = triple.strip_suffix("-amd-amdhsa")?;
    let target = TargetId::parse_for_arch_upstream(hsa_arch, arch).ok()?;
    let ours = is_hsa_arch_upstream(hsa_arch);
    (ours && target.is_compatible_with(device)).then(|| {
        let mut exact = SmallStr::new();
        write!(exact, "{}", device.canonical()).is_ok() && arch == exact.as_str()
    })
}

/// Of OffloadBinary images given as (triple, arch) in file order, the one
/// the runtime loads on `device` (see [`crate::select::select_in_fatbin`]): its index.
pub fn select_image<'a>(
    images: impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    device: &TargetId<'_>,
) -> Option<usize> {
    let runs = |(triple, arch): (&[u8], &[u8])| image_runs(triple, arch, device);
    images
        .clone()
        .position(|i| runs(i) == Some(true))
        .or_else(|| images.clone().position(|i| runs(i).is_some()))
}

/// What a runtime loads from a fat binary: how it matched, the code object,
/// and its ID (a bundle entry's; an OffloadBinary image's target ID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loadable<'a> {
    /// Which of the runtime's candidates it was chosen as.
    pub how: DeviceMatch,
    /// The code object.
    pub code: &'a [u8],
    /// Its bundle entry ID, or an OffloadBinary image's target ID.
    pub id: &'a [u8],
    /// Where the code starts: in `data`, or in the decompressed bundle for a
    /// compressed one.
    pub offset: u64,
}

/// The entry of a compressed bundle that the HIP runtime loads on `device`
/// ([`select_for_device`]), chosen from the bundle's header and entry table
/// alone ([`CompressedBundle::decompress_table`]): none of the code is
/// decoded yet. [`ChosenEntry::decompress_into`] then decodes only as far as
/// the chosen code object reaches, or the whole stream through MD5 without
/// keeping it when the hash is to be checked. What the runtime's loaders do
/// (LLVM's and HIP's check no hash), at the cost of the bundle up to the
/// chosen entry rather than all of it. `Ok(None)` if nothing fits.
///
/// Not so with ruzstd ([`ZstdDecoder::Ruzstd`](crate::compressed::ZstdDecoder),
/// builds without libzstd) on a zstd frame whose window covers the bundle,
/// as LLVM's do: ruzstd hands out no byte still inside its window before
/// the frame ends, so both steps decode (and hold) the whole bundle.
#[cfg(feature = "alloc")]
pub fn select_in_compressed<'data>(
    compressed: &CompressedBundle<'data>,
    device: &TargetId<'_>,
    options: &crate::DecompressOptions,
) -> crate::Result<Option<ChosenEntry<'data>>> {
    let table = compressed.decompress_table(options)?;
    let bundle = Bundle::parse_table(&table, compressed.uncompressed_size())?;
    let Some((how, entry)) = select_for_device(&bundle, device) else {
        return Ok(None);
    };
    let mut id = alloc::vec::Vec::new();
    crate::bytes::extend(&mut id, entry.id())?;
    Ok(Some(ChosenEntry {
        compressed: *compressed,
        how,
        id,
        offset: entry.offset(),
        // Inside the declared size, which `decompress_table` checked fits
        // in memory.
        size: usize::try_from(entry.size()).unwrap_or(usize::MAX),
        descriptor_offset: entry.descriptor_offset(),
    }))
}

/// A compressed bundle's entry chosen for a device by
/// [`select_in_compressed`], its code object not decoded yet: how it
/// matched, its ID (a copy: the decoded table it came from is gone), and
/// where its code lies in the decompressed bundle.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenEntry<'data> {
    compressed: CompressedBundle<'data>,
    how: DeviceMatch,
    id: alloc::vec::Vec<u8>,
    offset: u64,
    size: usize,
    descriptor_offset: u64,
}

#[cfg(feature = "alloc")]
impl ChosenEntry<'_> {
    /// Which of the runtime's candidates it was chosen as.
    pub fn how(&self) -> DeviceMatch {
        self.how
    }

    /// Its bundle entry ID.
    pub fn id(&self) -> &[u8] {
        &self.id
    }

    /// Where its code object starts in the decompressed bundle.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The size of its code object.
    pub fn size(&self) -> u64 {
        to_u64(self.size)
    }

    /// The bytes [`decompress_into`](Self::decompress_into) needs: the code
    /// object, then the ID.
    pub fn needed(&self) -> usize {
        self.size.saturating_add(self.id.len())
    }

    /// Decodes the code object into the start of `out` and copies the ID
    /// right after it (`out` must hold [`needed`](Self::needed) bytes, else
    /// [`OutputTooSmall`](crate::ErrorKind::OutputTooSmall) before anything
    /// is decoded); the bytes after those are left as they are. Decodes the
    /// bundle only as far as the code reaches unless `options.verify_hash`
    /// asks for the hash: then the rest is streamed through MD5 without
    /// being kept, and a hash other than the stored one is refused. Memory:
    /// one stretch of output and the decoder's window (zlib 32 KiB; libzstd
    /// the frame's window, which holds at most what was decoded; ruzstd, see
    /// [`select_in_compressed`]); the other entries are never kept. The
    /// record's views borrow `out`; its `offset` is where the code starts
    /// in the decompressed bundle.
    pub fn decompress_into<'out>(
        &self,
        out: &'out mut [u8],
        options: &crate::DecompressOptions,
    ) -> crate::Result<Loadable<'out>> {
        let needed = self.needed();
        let available = out.len();
        let room = out.get_mut(..needed).ok_or_else(|| {
            crate::Error::new(
                crate::ErrorKind::OutputTooSmall {
                    needed: to_u64(needed),
                    available: to_u64(available),
                },
                // The size field of the entry's descriptor.
                self.descriptor_offset.saturating_add(8),
            )
        })?;
        let (code, id) = room.split_at_mut_checked(self.size).unwrap_or_default();
        self.compressed
            .decompress_range(self.offset, code, options, options.verify_hash)?;
        id.copy_from_slice(&self.id);
        Ok(Loadable {
            how: self.how,
            code,
            id,
            offset: self.offset,
        })
    }
}

/// A device as the runtime names it: a target ID (`gfx90a:xnack+`), or an
/// HSA ISA name (`amdgcn-amd-amdhsa--gfx90a:xnack+`), as HSA and comgr give
/// it; newer comgr also spells the architecture `amdgpu<subarch>`
/// (`amdgpu9.0a-amd-amdhsa--gfx90a`), whose processor must then be of that
/// sub-architecture.
pub fn parse_device(text: &str) -> Result<TargetId<'_>, super::IdError> {
    match text.split_once("-amd-amdhsa--") {
        Some((arch, id)) if is_hsa_arch_upstream(arch) => {
            TargetId::parse_for_arch_upstream(arch, id)
        }
        _ => TargetId::parse_upstream(text),
    }
}

/// A fixed buffer long enough for any canonical AMDGPU target ID.
struct SmallStr {
    buf: [u8; 64],
    len: usize,
}

impl SmallStr {
    fn new() -> Self {
        SmallStr {
            buf: [0; 64],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        self.buf
            .get(..self.len)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or("")
    }
}

impl Write for SmallStr {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
