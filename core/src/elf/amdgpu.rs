//! The target ID an AMDGPU code object was built for, read from its ELF
//! header (`e_flags`), so that a bundle entry's ID can be checked against the
//! code object it names.

use core::fmt;

use super::{FileHeader, ELFOSABI_AMDGPU_HSA, EM_AMDGPU};

/// `e_flags` bits naming the processor.
const MACH_MASK: u32 = 0xff;
const XNACK_MASK: u32 = 0x300;
const SRAMECC_MASK: u32 = 0xc00;

/// Processor names by `EF_AMDGPU_MACH_*` value: LLVM 22's `ELF.h`, and those
/// LLVM's main branch added since (0x50 gfx1310, 0x57 gfx1154, 0x5b–0x5e
/// gfx12-5-generic and gfx1170–gfx1172, 0x62 gfx11-7-generic, 0x63
/// gfx13-generic), read as newer compilers write them.
const PROCESSORS: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x50, "gfx1310"),
    (0x51, "gfx9-generic"),
    (0x52, "gfx10-1-generic"),
    (0x53, "gfx10-3-generic"),
    (0x54, "gfx11-generic"),
    (0x55, "gfx1152"),
    (0x57, "gfx1154"),
    (0x58, "gfx1153"),
    (0x59, "gfx12-generic"),
    (0x5a, "gfx1251"),
    (0x5b, "gfx12-5-generic"),
    (0x5c, "gfx1172"),
    (0x5d, "gfx1170"),
    (0x5e, "gfx1171"),
    (0x5f, "gfx9-4-generic"),
    (0x62, "gfx11-7-generic"),
    (0x63, "gfx13-generic"),
];

/// How a code object sets one target feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    Unsupported,
    /// Built to run either way ("any"): the target ID leaves it out.
    Any,
    /// Built for the feature off (`-`).
    Off,
    /// Built for the feature on (`+`).
    On,
}

impl FeatureSetting {
    /// Code object v4+ encoding: 0 unsupported, 1 any, 2 off, 3 on.
    fn from_v4(field: u32) -> Self {
        match field {
            1 => FeatureSetting::Any,
            2 => FeatureSetting::Off,
            3 => FeatureSetting::On,
            _ => FeatureSetting::Unsupported,
        }
    }

    /// The sign in a target ID, if the feature appears there.
    pub fn sign(self) -> Option<char> {
        match self {
            FeatureSetting::On => Some('+'),
            FeatureSetting::Off => Some('-'),
            _ => None,
        }
    }
}

/// What an AMDGPU code object's header says it was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AmdgpuTarget {
    /// The processor (`gfx90a`, `gfx9-generic`, ...).
    pub processor: &'static str,
    /// The `sramecc` setting.
    pub sramecc: FeatureSetting,
    /// The `xnack` setting.
    pub xnack: FeatureSetting,
    /// The generic version (bits 24..31) of a generic processor's code object.
    pub generic_version: u8,
}

impl AmdgpuTarget {
    /// The target of an AMDGPU HSA code object (v4, v5 or v6: `EI_ABIVERSION`
    /// 2 to 4, the only ones whose features have an "any" setting), or `None`
    /// for any other file, an unknown processor, or a feature set on or off
    /// that the processor does not have.
    pub fn from_header(header: &FileHeader) -> Option<Self> {
        if header.machine != EM_AMDGPU
            || header.os_abi != ELFOSABI_AMDGPU_HSA
            || !(2..=4).contains(&header.abi_version)
        {
            return None;
        }
        let mach = header.flags & MACH_MASK;
        let processor = PROCESSORS
            .iter()
            .find(|(value, _)| *value == mach)
            .map(|(_, name)| *name)?;
        let target = AmdgpuTarget {
            processor,
            sramecc: FeatureSetting::from_v4((header.flags & SRAMECC_MASK) >> 10),
            xnack: FeatureSetting::from_v4((header.flags & XNACK_MASK) >> 8),
            generic_version: header.flags.to_le_bytes()[3],
        };
        target.names_valid_target_id().then_some(target)
    }

    /// Whether every feature set on or off is one the processor has: a header
    /// that sets `sramecc` off on `gfx703` names no target ID clang accepts
    /// (LLVM never writes one). "Any" is not checked: LLVM 22 writes it for
    /// `gfx1250`, which clang's target IDs give no features, and it stays out
    /// of the target ID. `xnack` set on or off is read where the hardware has
    /// it even if target IDs cannot carry it (LLVM's main branch:
    /// [`XNACK_ALWAYS_ON`](crate::id::processor::XNACK_ALWAYS_ON)), as the
    /// header records it.
    fn names_valid_target_id(&self) -> bool {
        use crate::id::processor::{lookup_upstream, XNACK_ALWAYS_ON};
        let Some(known) = lookup_upstream(self.processor) else {
            return false;
        };
        let xnack = known.xnack || XNACK_ALWAYS_ON.contains(&known.name);
        (known.sramecc || self.sramecc.sign().is_none()) && (xnack || self.xnack.sign().is_none())
    }
}

impl fmt::Display for AmdgpuTarget {
    /// The canonical target ID: the processor, then the features that are
    /// on or off, alphabetically (`gfx90a:sramecc+:xnack-`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor)?;
        for (name, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            if let Some(sign) = setting.sign() {
                write!(f, ":{name}{sign}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::PROCESSORS;

    /// A processor the target ID table lacks would never name a target.
    #[test]
    fn every_processor_has_target_id_features() {
        for (_, name) in PROCESSORS {
            assert!(
                crate::id::processor::lookup_upstream(name).is_some(),
                "{name}"
            );
        }
    }
}
