//! "Will it run on my GPU?": for a file of device code and a device,
//! whether its runtime loads code for the device from every container it
//! holds, which code, or why not ([`verdict`], from [`crate::select`]);
//! the devices the file's code targets ([`targets`]); and what fails only
//! at run time or costs users ([`findings`]). `clangoffload coverage` puts
//! these together over whole trees and wheels.

mod sparse;
mod split;
mod tree;

pub use crate::select::{Lookup, OpenArchive};
pub use sparse::SparseElf;
pub use split::cover_split_host;
pub use tree::Tree;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use crate::bundler::Piece;
use crate::cuda_fatbin::select::candidates;
use crate::cuda_fatbin::{CudaMatch, Sm, SmVariant};
use crate::extract::What;
use crate::select::{Device, How, Outcome, Selection, Selector};
use crate::{Bundle, BundleEntryId, FileKind};

/// Current GPUs, as their runtimes name them, asked about by default
/// beside the devices a tree's code targets: AMD Instinct and Radeon
/// (target IDs as HSA reports them, features included), NVIDIA from
/// Turing to Blackwell.
pub const CURRENT_GPUS: &[&str] = &[
    "gfx906:sramecc+:xnack-",
    "gfx908:sramecc+:xnack-",
    "gfx90a:sramecc+:xnack-",
    "gfx942:sramecc+:xnack-",
    "gfx950:sramecc+:xnack-",
    "gfx1030",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1151",
    "gfx1200",
    "gfx1201",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_89",
    "sm_90",
    "sm_100",
    "sm_120",
];

/// What a file gives one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the file holds code of the device's vendor at all.
    pub applies: bool,
    /// Whether every container of the device's vendor gives it code (a
    /// container without code for it leaves its kernels unlaunchable).
    pub loads: bool,
    /// The chosen code's IDs, each once, in file order (none if nothing
    /// loads).
    pub entries: Vec<String>,
    /// The least direct way any container's code runs (PTX before cubin;
    /// SPIR-V before generic before native).
    pub how: Option<How>,
    /// Why: the first container that gives nothing, or the first choice's
    /// reason.
    pub reason: String,
}

/// Whether a container of this kind holds the code of `device`'s vendor.
fn same_vendor(kind: FileKind, device: &Device<'_>) -> bool {
    (kind == FileKind::CudaFatbin) == matches!(device, Device::Cuda(_))
}

/// The verdict of a file without code of `device`'s vendor.
fn absent(device: &Device<'_>) -> Verdict {
    Verdict {
        applies: false,
        loads: false,
        entries: Vec::new(),
        how: None,
        reason: match device {
            Device::Cuda(_) => "no NVIDIA code in the file".into(),
            Device::Amdgpu(_) => "no AMD code in the file".into(),
        },
    }
}

/// How directly code runs: higher is less direct.
fn distance(how: How) -> u8 {
    match how {
        How::Native | How::Cubin => 0,
        How::Generic => 1,
        How::SpirV | How::Ptx => 2,
    }
}

/// The file's verdict for `device`, from what each container gives it
/// (`selection`, made for that device).
pub fn verdict(selection: &Selection<'_>, device: &Device<'_>) -> Verdict {
    let mut verdict = Verdict {
        applies: true,
        loads: false,
        entries: Vec::new(),
        how: None,
        reason: String::new(),
    };
    let ours = || {
        selection
            .containers
            .iter()
            .filter(|c| same_vendor(c.kind, device))
    };
    if ours().next().is_none() {
        return absent(device);
    }
    let mut short = None;
    for container in ours() {
        match &container.outcome {
            Outcome::Loads(chosen) => {
                let id = String::from_utf8_lossy(&chosen.id).into_owned();
                if !verdict.entries.contains(&id) {
                    verdict.entries.push(id);
                }
                if verdict
                    .how
                    .is_none_or(|h| distance(chosen.how) > distance(h))
                {
                    verdict.how = Some(chosen.how);
                }
                if verdict.reason.is_empty() {
                    verdict.reason.clone_from(&chosen.reason);
                }
            }
            Outcome::Nothing(why) => {
                short.get_or_insert_with(|| place(container.kind, container.offset, why));
            }
            Outcome::Failed(error) => {
                let mut text = String::new();
                let _ = write!(text, "{}", error.message("the file"));
                short.get_or_insert_with(|| place(container.kind, container.offset, &text));
            }
        }
    }
    match short {
        Some(why) => {
            verdict.entries.clear();
            verdict.how = None;
            verdict.reason = why;
        }
        None => verdict.loads = true,
    }
    verdict
}

/// "the <kind> at <offset>: <why>".
fn place(kind: FileKind, offset: u64, why: &str) -> String {
    let name = kind.container_name().unwrap_or("container");
    alloc::format!("the {name} at {offset:#x}: {why}")
}

/// The devices the file's code is built for, each once, in file order,
/// with the bytes of code for each: the target IDs of its HIP code objects
/// (generic ones name no device) and the SMs of its cubins (`sm_90`; a
/// device has no `a` or `f`). PTX targets no one device: it runs on every
/// later one.
pub fn targets(selector: &Selector<'_>, decoding: crate::bundler::Decoding) -> Vec<(String, u64)> {
    let mut found: Vec<(String, u64)> = Vec::new();
    let mut add = |target: String, bytes: u64| match found.iter_mut().find(|(t, _)| *t == target) {
        Some((_, total)) => *total = total.saturating_add(bytes),
        None => found.push((target, bytes)),
    };
    if let Some(extraction) = selector.extraction() {
        for unit in extraction.units() {
            for (target, bytes) in unit_targets(&unit.what, decoding) {
                add(target, bytes);
            }
        }
    }
    for (_, found) in selector.fatbins() {
        let Ok((fatbin, _)) = found else { continue };
        for c in candidates(fatbin).filter(|c| c.kind == CudaMatch::Cubin) {
            add(
                alloc::format!("sm_{}", c.sm.number),
                c.entry.uncompressed_size().max(c.entry.payload_size()),
            );
        }
    }
    found
}

/// The AMD target IDs one container's code objects are built for, with the
/// size of each code object.
fn unit_targets(what: &What<'_>, decoding: crate::bundler::Decoding) -> Vec<(String, u64)> {
    let of_id = |id: &[u8], size: u64| -> Option<(String, u64)> {
        let parsed = BundleEntryId::parse(core::str::from_utf8(id).ok()?).ok()?;
        let hip = matches!(parsed.kind(), "hip" | "hipv4" | "hcc");
        let target = parsed.target_id();
        (hip && parsed.triple().arch.starts_with("amdgcn") && !target.is_empty())
            .then(|| (target.into(), size))
    };
    let of_bundle = |bundle: &Bundle<'_>| -> Vec<Option<(String, u64)>> {
        bundle
            .entries()
            .map_while(Result::ok)
            .map(|e| of_id(e.id(), e.size()))
            .collect()
    };
    let found: Vec<Option<(String, u64)>> = match what {
        What::Bundle(bytes) => Bundle::parse(bytes)
            .map(|b| of_bundle(&b))
            .unwrap_or_default(),
        What::Compressed(compressed) => {
            let options = decoding.options(false);
            compressed
                .decompress_table(&options)
                .ok()
                .and_then(|table| {
                    let bundle =
                        Bundle::parse_table(&table, compressed.uncompressed_size()).ok()?;
                    Some(of_bundle(&bundle))
                })
                .unwrap_or_default()
        }
        What::Images(bytes) => crate::extract::image_plan(bytes, 0)
            .map(|(plan, namings)| {
                namings
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.triple.starts_with(b"amdgcn"))
                    .map(|(i, n)| {
                        let size = plan.output(i).iter().map(Piece::len).sum();
                        Some((String::from(core::str::from_utf8(&n.arch).ok()?), size))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    found
        .into_iter()
        .flatten()
        .filter(|(t, _)| !t.contains("generic"))
        .collect()
}

/// What fails only at run time, or costs users, in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A compressed bundle whose hash does not verify: the HIP runtime
    /// refuses it (`hipErrorInvalidImage`).
    HashMismatch {
        /// Its file offset.
        offset: u64,
        /// Why, in the library's words.
        error: String,
    },
    /// A bundle stored uncompressed: a compressed one is several times
    /// smaller.
    Uncompressed {
        /// Its file offset.
        offset: u64,
        /// Its size.
        size: u64,
    },
    /// A CUDA fat binary with cubins and no PTX: no GPU after the newest
    /// cubin's family can run it (no JIT).
    NoPtx {
        /// Its file offset.
        offset: u64,
        /// Its newest cubin's SM.
        newest: Sm,
    },
    /// A container that cannot be read.
    Unreadable {
        /// Its file offset.
        offset: u64,
        /// Why.
        error: String,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::HashMismatch { offset, error } => write!(
                f,
                "compressed bundle at {offset:#x} does not verify (the HIP runtime refuses it: hipErrorInvalidImage): {error}"
            ),
            Finding::Uncompressed { offset, size } => write!(
                f,
                "bundle at {offset:#x} is stored uncompressed ({size} bytes; --offload-compress makes it several times smaller)"
            ),
            Finding::NoPtx { offset, newest } => write!(
                f,
                "CUDA fat binary at {offset:#x} has cubins and no PTX: nothing runs on GPUs after {newest}'s family"
            ),
            Finding::Unreadable { offset, error } => {
                write!(f, "container at {offset:#x} cannot be read: {error}")
            }
        }
    }
}

/// The findings of a file: uncompressed bundles, fat binaries without
/// PTX, containers that cannot be read, and (`verify`) compressed bundles
/// whose hash does not verify (each decoded whole through MD5, nothing
/// kept).
pub fn findings(
    selector: &Selector<'_>,
    decoding: crate::bundler::Decoding,
    verify: bool,
) -> Vec<Finding> {
    let mut found = Vec::new();
    if let Some(extraction) = selector.extraction() {
        for (index, unit) in extraction.units().iter().enumerate() {
            let offset = unit.at;
            match &unit.what {
                What::Bundle(_) => {
                    let size = extraction.container(index).map_or(0, |c| c.size);
                    found.push(Finding::Uncompressed { offset, size });
                }
                What::Compressed(compressed) if verify => {
                    let options = decoding.options(true);
                    if let Err(error) = compressed.decompress_range(0, &mut [], &options, true) {
                        let mut text = String::new();
                        let _ = write!(text, "{error}");
                        found.push(Finding::HashMismatch {
                            offset,
                            error: text,
                        });
                    }
                }
                _ => {}
            }
        }
        for failure in extraction.failures() {
            let mut text = String::new();
            let _ = write!(text, "{}", failure.message("the file"));
            let offset = failure.core_error().map_or(0, crate::Error::offset);
            found.push(Finding::Unreadable {
                offset,
                error: text,
            });
        }
    }
    for (offset, fatbin) in selector.fatbins() {
        match fatbin {
            Ok((fatbin, _)) => {
                let all: Vec<_> = candidates(fatbin).collect();
                let newest = all
                    .iter()
                    .filter(|c| c.kind == CudaMatch::Cubin)
                    .map(|c| c.sm)
                    .max_by_key(|sm| (sm.number, sm.variant != SmVariant::Plain));
                if let (Some(newest), false) =
                    (newest, all.iter().any(|c| c.kind == CudaMatch::Ptx))
                {
                    found.push(Finding::NoPtx { offset, newest });
                }
            }
            Err(error) => {
                let mut text = String::new();
                let _ = write!(text, "{error}");
                found.push(Finding::Unreadable {
                    offset,
                    error: text,
                });
            }
        }
    }
    found
}

/// One file of device code, covered: its verdict for each device asked
/// about, the devices it targets and its findings.
#[derive(Debug, Clone)]
pub struct Covered {
    /// Its name: the path given, or `<archive>!<member>` for a member of a
    /// ZIP archive (a wheel).
    pub name: String,
    /// One verdict per device, in the order asked.
    pub verdicts: Vec<Verdict>,
    /// The devices its code targets, with its bytes of code for each
    /// ([`targets`]).
    pub targets: Vec<(String, u64)>,
    /// What fails only at run time, or costs users.
    pub findings: Vec<Finding>,
    /// Why it could not be read at all (then nothing else is set).
    pub error: Option<String>,
    /// The verdicts for the devices it targets that were not asked about,
    /// in [`targets`](Self::targets) order, when the reading asks for them
    /// (a [`Tree`] growing its list does; [`cover`] does not).
    pub own: Vec<(String, Verdict)>,
}

/// Covers the file `data` named `name` for `devices`: a ZIP archive (a
/// wheel) member by member, each decoded in turn (at most `decoding`'s
/// limit each) and let go before the next, `done_with` told of each piece
/// of a member's stored bytes as it is inflated (a caller reading a mapped
/// file lets those pages go); any other file as it is. A deflated ELF64
/// member over [`SPARSE_ABOVE`] bytes is inflated twice and only what
/// coverage reads of it is kept (its headers, small sections, fat binary
/// headers): a 551 MB library in 34 MiB. Files and members without
/// device code give nothing; one that cannot be read gives its error, never
/// an abort of the rest.
pub fn cover(
    data: &[u8],
    name: &str,
    devices: &[Device<'_>],
    decoding: crate::bundler::Decoding,
    verify: bool,
    done_with: &dyn Fn(&[u8]),
) -> Vec<Covered> {
    cover_with(
        data,
        name,
        devices,
        &Reading::new(decoding, verify),
        done_with,
    )
}

/// [`cover`] with every deflated ELF64 member read sparsely, its large
/// sections all walked and no payload kept: the sparse reading on inputs
/// as small as a fuzzer's. For the fuzz targets: on crafted files (records
/// that point inside a payload) its reports may differ from `cover`'s.
#[doc(hidden)]
pub fn cover_sparsest(
    data: &[u8],
    name: &str,
    devices: &[Device<'_>],
    decoding: crate::bundler::Decoding,
    verify: bool,
    done_with: &dyn Fn(&[u8]),
) -> Vec<Covered> {
    let reading = Reading {
        sparse: (
            0,
            sparse::Policy {
                large: 0,
                payload_kept: 0,
            },
        ),
        ..Reading::new(decoding, verify)
    };
    cover_with(data, name, devices, &reading, done_with)
}

/// A deflated member larger than this is read in two passes, holding only
/// what coverage reads of it (`sparse.rs`), when it is an ELF64 file.
pub const SPARSE_ABOVE: u64 = 16 << 20;

/// How [`cover_with`] reads its input.
struct Reading<'a> {
    decoding: crate::bundler::Decoding,
    verify: bool,
    /// Deflated ELF64 members over `sparse.0` bytes are read sparsely as
    /// `sparse.1` says.
    sparse: (u64, sparse::Policy),
    /// The devices asked about by name, when each file's verdicts for the
    /// devices it targets beyond them are asked for too ([`Covered::own`]).
    own_beyond: Option<&'a [&'a str]>,
    /// Whether to read the file or member of this name (a member not
    /// wanted is not decoded).
    wanted: &'a dyn Fn(&str) -> bool,
}

impl Reading<'_> {
    /// [`cover`]'s: every member, large ones sparsely, no own verdicts.
    fn new(decoding: crate::bundler::Decoding, verify: bool) -> Self {
        Reading {
            decoding,
            verify,
            sparse: (SPARSE_ABOVE, sparse::Policy::DEFAULT),
            own_beyond: None,
            wanted: &|_| true,
        }
    }
}

/// [`cover`] as `reading` says.
fn cover_with(
    data: &[u8],
    name: &str,
    devices: &[Device<'_>],
    reading: &Reading<'_>,
    done_with: &dyn Fn(&[u8]),
) -> Vec<Covered> {
    if !crate::zip::Zip::is_zip(data) {
        if !(reading.wanted)(name) {
            return Vec::new();
        }
        return cover_one(data, name, devices, reading)
            .into_iter()
            .collect();
    }
    let zip = match crate::zip::Zip::parse(data) {
        Ok(zip) => zip,
        Err(error) => return alloc::vec![failed(name, &error)],
    };
    let max_size = reading.decoding.max_size;
    let mut covered = Vec::new();
    for member in zip.members() {
        let member = match member {
            Ok(member) => member,
            Err(error) => {
                covered.push(failed(name, &error));
                break;
            }
        };
        let inner = alloc::format!("{name}!{}", String::from_utf8_lossy(member.name));
        if member.is_dir() || !(reading.wanted)(&inner) {
            continue;
        }
        let image = if member.method == 8 && member.size > reading.sparse.0 {
            sparse::sparse_image(&member, max_size, done_with, reading.sparse.1)
        } else {
            Ok(None)
        };
        let bytes = match image {
            Ok(Some(image)) => Ok(alloc::borrow::Cow::Owned(image)),
            Ok(None) => member.contents_releasing(max_size, done_with),
            Err(error) => Err(error),
        };
        match bytes {
            Ok(bytes) => covered.extend(cover_one(&bytes, &inner, devices, reading)),
            Err(error) => covered.push(failed(&inner, &error)),
        }
    }
    covered
}

/// A file that could not be read.
fn failed(name: &str, error: &dyn fmt::Display) -> Covered {
    let mut text = String::new();
    let _ = write!(text, "{error}");
    Covered {
        name: name.into(),
        verdicts: Vec::new(),
        targets: Vec::new(),
        findings: Vec::new(),
        error: Some(text),
        own: Vec::new(),
    }
}

/// One file (not an archive of files): `None` when it holds no device
/// code.
fn cover_one(
    data: &[u8],
    name: &str,
    devices: &[Device<'_>],
    reading: &Reading<'_>,
) -> Option<Covered> {
    use crate::bundler::BundlerError;
    let decoding = reading.decoding;
    let stem = name.rsplit(['/', '!']).next().unwrap_or(name);
    let selector = match Selector::new(data, stem.as_bytes(), decoding, &mut ()) {
        Ok(selector) => selector,
        Err(BundlerError::NotAContainer(_)) => return None,
        Err(error) => {
            let mut text = String::new();
            let _ = write!(text, "{}", error.message(name));
            return Some(failed(name, &text));
        }
    };
    if selector.is_empty() {
        return None;
    }
    let targets = targets(&selector, decoding);
    let own = match reading.own_beyond {
        Some(asked) => targets
            .iter()
            .filter(|(target, _)| !asked.contains(&target.as_str()))
            .filter_map(|(target, _)| {
                let device = Device::parse(target).ok()?;
                Some((target.clone(), verdict(&selector.select(&device), &device)))
            })
            .collect(),
        None => Vec::new(),
    };
    Some(Covered {
        name: name.into(),
        verdicts: devices
            .iter()
            .map(|device| verdict(&selector.select(device), device))
            .collect(),
        findings: findings(&selector, decoding, reading.verify),
        targets,
        error: None,
        own,
    })
}

#[cfg(all(test, feature = "std"))]
mod tests;
