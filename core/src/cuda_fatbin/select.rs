//! Which code of a fat binary the CUDA driver loads on a device, as NVIDIA
//! documents it:
//!
//! - A cubin runs on a device of the same major compute capability and a
//!   minor one at least its own: `sm_80` code on sm_80, sm_86, sm_87, sm_89,
//!   never on sm_90 or sm_75 (CUDA C++ Programming Guide, "Binary
//!   Compatibility").
//! - Arch-specific code (`sm_90a`, `sm_100a`) runs only on exactly that SM
//!   (Programming Guide, "Feature Availability": architecture-specific
//!   features "are not forward compatible").
//! - Family-specific code (`sm_100f`) runs on the SMs of its family: the same
//!   major, a minor at least its own (`sm_100f` on sm_100 and sm_103; CUDA
//!   12.9 release notes and the Programming Guide's "family-specific
//!   features").
//! - Failing a cubin, PTX is JIT-compiled: PTX for a compute capability not
//!   above the device's, of any major ("PTX Compatibility"). `compute_90a`
//!   PTX only on exactly sm_90, `compute_100f` PTX only within its family,
//!   as for cubins.
//!
//! Where several candidates run, the documents give no order; this crate
//! takes (and documents in docs/architecture.md) the closest: the cubin of
//! the highest SM, at an equal SM the more specific code (`a`, then `f`,
//! then plain), then the first in file order; failing a cubin, the PTX of
//! the highest compute capability, the same tie-breaks. The members of
//! `--concat` entries are candidates like any entry.

use super::{EntryKind, Fatbin, FatbinEntry, Sm, SmVariant};

/// How the chosen code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CudaMatch {
    /// A cubin for the device's SM (or a compatible one).
    Cubin,
    /// PTX, to be JIT-compiled for the device.
    Ptx,
}

/// Whether code of kind `kind` for `code` can run on a device of SM
/// `device` (its number; a device has no variant).
pub fn runs_on(kind: CudaMatch, code: Sm, device: u32) -> bool {
    let device = Sm {
        number: device,
        variant: SmVariant::Plain,
    };
    match (code.variant, kind) {
        (SmVariant::Arch, _) => code.number == device.number,
        (SmVariant::Family, _) | (SmVariant::Plain, CudaMatch::Cubin) => {
            code.major() == device.major() && code.minor() <= device.minor()
        }
        (SmVariant::Plain, CudaMatch::Ptx) => code.number <= device.number,
    }
}

/// One candidate: an entry, or a member of a concat entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate<'data> {
    /// The entry.
    pub entry: FatbinEntry<'data>,
    /// The member of a concat entry, by index.
    pub member: Option<u64>,
    /// Its SM.
    pub sm: Sm,
    /// Cubin or PTX.
    pub kind: CudaMatch,
}

/// Every cubin and PTX of `fatbin`, concat members included, in file order.
pub fn candidates<'a, 'data: 'a>(
    fatbin: &'a Fatbin<'data>,
) -> impl Iterator<Item = Candidate<'data>> + 'a {
    fatbin.entries().flat_map(|entry| {
        let whole = code_kind(entry.kind()).map(|kind| Candidate {
            entry,
            member: None,
            sm: entry.sm(),
            kind,
        });
        let members = entry.members().filter_map(move |member| {
            code_kind(member.kind()).map(|kind| Candidate {
                entry,
                member: Some(member.index),
                sm: member.sm(),
                kind,
            })
        });
        whole.into_iter().chain(members)
    })
}

fn code_kind(kind: EntryKind) -> Option<CudaMatch> {
    match kind {
        EntryKind::Elf => Some(CudaMatch::Cubin),
        EntryKind::Ptx => Some(CudaMatch::Ptx),
        _ => None,
    }
}

/// The code the driver would load on a device of SM `device` (the number:
/// 86 for sm_86): the closest cubin that runs there, else the closest PTX
/// (see the module's documentation); `None` if nothing runs.
pub fn select_for_device<'data>(fatbin: &Fatbin<'data>, device: u32) -> Option<Candidate<'data>> {
    [CudaMatch::Cubin, CudaMatch::Ptx]
        .into_iter()
        .find_map(|kind| {
            candidates(fatbin)
                .filter(|c| c.kind == kind && runs_on(kind, c.sm, device))
                // The highest SM, the most specific variant, the first of equals.
                .fold(None, |best: Option<Candidate<'data>>, c| match best {
                    Some(b) if (b.sm.number, b.sm.variant) >= (c.sm.number, c.sm.variant) => {
                        Some(b)
                    }
                    _ => Some(c),
                })
        })
}
