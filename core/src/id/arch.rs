//! Which architectures LLVM 22's `Triple` parser knows: the bundler rejects a
//! target whose first triple component is not one. Apart from the triple
//! normalisation (which needs an allocator) so that entry IDs can be checked
//! without one.

/// Architecture names `parseArch` matches exactly (its `StringSwitch`, plus
/// the exact names the ARM and BPF fallbacks accept). Case-sensitive.
#[rustfmt::skip]
pub(super) const ARCH_NAMES: &[&str] = &[
    // x86 and x86-64.
    "i386", "i486", "i586", "i686", "i786", "i886", "i986", "amd64", "x86_64", "x86_64h",
    // PowerPC.
    "powerpc", "powerpcspe", "ppc", "ppc32", "powerpcle", "ppcle", "ppc32le", "powerpc64", "ppu",
    "ppc64", "powerpc64le", "ppc64le",
    // ARM family names matched exactly; other `arm*`/`thumb*`/`aarch64*`
    // spellings (`armv7a`, `thumbv7m`) go through the ARM fallback.
    "xscale", "xscaleeb", "arm", "armeb", "thumb", "thumbeb", "aarch64", "aarch64_be",
    "aarch64_32", "aarch64_lfi", "arm64", "arm64_32", "arm64e", "arm64ec",
    // MIPS.
    "mips", "mipseb", "mipsallegrex", "mipsisa32r6", "mipsr6", "mipsel", "mipsallegrexel",
    "mipsisa32r6el", "mipsr6el", "mips64", "mips64eb", "mipsn32", "mipsisa64r6", "mips64r6",
    "mipsn32r6", "mips64el", "mipsn32el", "mipsisa64r6el", "mips64r6el", "mipsn32r6el",
    // GPUs and their IRs.
    "r600", "amdgcn", "nvptx", "nvptx64", "amdil", "amdil64", "hsail", "hsail64", "spir",
    "spir64", "spirv", "spirv1.5", "spirv1.6", "spirv32", "spirv32v1.0", "spirv32v1.1",
    "spirv32v1.2", "spirv32v1.3", "spirv32v1.4", "spirv32v1.5", "spirv32v1.6", "spirv64",
    "spirv64v1.0", "spirv64v1.1", "spirv64v1.2", "spirv64v1.3", "spirv64v1.4", "spirv64v1.5",
    "spirv64v1.6", "dxil", "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4",
    "dxilv1.5", "dxilv1.6", "dxilv1.7", "dxilv1.8", "dxilv1.9",
    // Everything else.
    "arc", "avr", "m68k", "msp430", "riscv32", "riscv64", "riscv32be", "riscv64be", "hexagon",
    "s390x", "systemz", "sparc", "sparcel", "sparcv9", "sparc64", "tce", "tcele", "xcore", "lanai",
    "renderscript32", "renderscript64", "shave", "ve", "wasm32", "wasm64", "csky", "loongarch32",
    "loongarch64", "xtensa",
    // BPF: `parseBPFArch` accepts exactly these.
    "bpf", "bpfel", "bpfeb", "bpf_le", "bpf_be",
];

/// Architecture prefixes `parseArch` accepts with any suffix (`kalimba3`).
const ARCH_PREFIXES: &[&str] = &["kalimba"];

/// Prefixes that send an otherwise unknown architecture to LLVM's ARM
/// sub-architecture parser.
const ARM_FAMILY_PREFIXES: &[&str] = &["arm", "thumb", "aarch64"];

/// Prefixes `ARM::getCanonicalArchName` strips, in its order (first match
/// wins, so `arm64_32` is tried before `arm64` and `arm`).
#[rustfmt::skip]
const ARM_CANONICAL_PREFIXES: &[&str] =
    &["arm64_32", "arm64e", "arm64", "aarch64_32", "arm", "thumb", "aarch64"];

/// Whether LLVM's `Triple` parser knows `arch` (exact, case-sensitive,
/// including the ARM/thumb/aarch64/BPF sub-arch spellings LLVM's `parseArch`
/// accepts). Does not allocate.
///
/// The bundler rejects a target whose first triple component fails this.
#[must_use]
pub fn is_known_arch(arch: &str) -> bool {
    ARCH_NAMES.contains(&arch)
        || ARCH_PREFIXES.iter().any(|p| arch.starts_with(p))
        || (ARM_FAMILY_PREFIXES.iter().any(|p| arch.starts_with(p))
            && is_known_arm_arch(arch.as_bytes()))
}

/// LLVM's ARM fallback (`parseARMArch`) reduced to what decides whether it
/// returns a known architecture; `arch` starts with `arm`, `thumb` or
/// `aarch64`. Which ARM arch it is (endianness, ISA, the v6-M special case)
/// cannot make it unknown, and the bundler never rewrites the spelling, so
/// only the canonical-name check and the "Thumb needs v4+" rule matter.
fn is_known_arm_arch(arch: &[u8]) -> bool {
    match arm_canonical_arch_name(arch) {
        None => false,
        Some(canonical) => {
            let thumb = arch.starts_with(b"thumb");
            !(thumb && (canonical.starts_with(b"v2") || canonical.starts_with(b"v3")))
        }
    }
}

/// `ARM::getCanonicalArchName`: strips the family prefix and an `eb`
/// (big-endian) marker, then requires `v<digit>...` or nothing. `None` is
/// LLVM's empty "error" result. Works on bytes, as LLVM's `StringRef` does.
fn arm_canonical_arch_name(arch: &[u8]) -> Option<&[u8]> {
    let prefix = ARM_CANONICAL_PREFIXES
        .iter()
        .find(|p| arch.starts_with(p.as_bytes()));
    let mut offset = prefix.map(|p| p.len());
    if prefix == Some(&"aarch64") {
        // AArch64 spells big-endian `_be`, never `eb`.
        if contains_eb(arch) {
            return None;
        }
        if tail(arch, 7).starts_with(b"_be") {
            offset = offset.map(|o| o.saturating_add(3));
        }
    }
    let mut rest = arch;
    match offset {
        Some(o) if tail(arch, o).starts_with(b"eb") => offset = Some(o.saturating_add(2)),
        _ => {
            if let Some(stripped) = rest.strip_suffix(b"eb") {
                rest = stripped;
            }
        }
    }
    if let Some(o) = offset {
        rest = tail(rest, o);
    }
    if rest.is_empty() {
        return Some(arch);
    }
    if offset.is_some() {
        let v_digit = rest.first() == Some(&b'v') && rest.get(1).is_some_and(u8::is_ascii_digit);
        // A one-byte remainder (`armx`) slips through this check in LLVM.
        if (rest.len() >= 2 && !v_digit) || contains_eb(rest) {
            return None;
        }
    }
    Some(rest)
}

/// `StringRef::substr(from)`: empty when `from` is past the end.
fn tail(bytes: &[u8], from: usize) -> &[u8] {
    bytes.get(from..).unwrap_or(&[])
}

fn contains_eb(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"eb")
}

use super::processor::{Processor, PROCESSORS, UPSTREAM};

/// LLVM's main branch names the GCN architecture `amdgpu` (`amdgcn` stays as
/// its legacy spelling) and gives it sub-architectures written after the
/// name: `amdgpu9.0a` (one processor, `gfx90a`) or `amdgpu9` (a family).
/// LLVM 22 knows neither spelling, so [`is_known_arch`] (what the bundler
/// checks) stays without them; readers of what newer compilers wrote use
/// these.
///
/// Each family (`Triple::AMDGPUSubArch*`, grouped as `AMDGPUMajorFamilies` in
/// llvm/lib/TargetParser/AMDGPUTargetParser.cpp) with its members, by the
/// spelling after `amdgpu` that `Triple::getArchName` writes. A family that
/// is one processor (`8.10`, `9.08`, `9.0a`) has no other members.
#[rustfmt::skip]
const AMDGPU_SUBARCH_FAMILIES: &[(&str, &[&str])] = &[
    ("6", &["6.00", "6.01", "6.02"]),
    ("7", &["7.00", "7.01", "7.02", "7.03", "7.04", "7.05"]),
    ("8", &["8.01", "8.02", "8.03", "8.05"]),
    ("8.10", &[]),
    ("9", &["9.00", "9.02", "9.04", "9.06", "9.09", "9.0c"]),
    ("9.08", &[]),
    ("9.0a", &[]),
    ("9.4", &["9.42", "9.50"]),
    ("10.1", &["10.10", "10.11", "10.12", "10.13"]),
    ("10.3", &["10.30", "10.31", "10.32", "10.33", "10.34", "10.35", "10.36"]),
    ("11", &["11.00", "11.01", "11.02", "11.03", "11.50", "11.51", "11.52", "11.53", "11.54"]),
    ("11.7", &["11.70", "11.71", "11.72"]),
    ("12", &["12.00", "12.01"]),
    ("12.5", &["12.50", "12.51"]),
    ("13", &["13.10"]),
];

/// Spellings `Triple::parseSubArch` also takes for a family (`amdgpu9.5` is
/// the `gfx9-4-generic` family, `amdgpu10` the `gfx10-1-generic` one).
const AMDGPU_SUBARCH_ALIASES: &[(&str, &str)] = &[("9.5", "9.4"), ("10", "10.1")];

/// An AMDGPU sub-architecture of LLVM's main branch (`Triple::SubArchType`),
/// by its canonical spelling after `amdgpu` (`9.0a`, `9`), with the family
/// it belongs to (itself for a family).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AmdgpuSubArch {
    spelling: &'static str,
    family: &'static str,
}

impl AmdgpuSubArch {
    fn all() -> impl Iterator<Item = Self> {
        AMDGPU_SUBARCH_FAMILIES
            .iter()
            .flat_map(|(family, members)| {
                core::iter::once(*family)
                    .chain(members.iter().copied())
                    .map(|spelling| AmdgpuSubArch { spelling, family })
            })
    }

    /// The sub-architecture spelled `suffix` after `amdgpu`, as
    /// `Triple::parseSubArch` reads it (exact, case-sensitive).
    fn parse(suffix: &str) -> Option<Self> {
        let suffix = AMDGPU_SUBARCH_ALIASES
            .iter()
            .find(|(alias, _)| *alias == suffix)
            .map_or(suffix, |(_, canonical)| canonical);
        Self::all().find(|s| s.spelling == suffix)
    }

    /// The sub-architecture of a canonical processor name
    /// (`AMDGPU::getSubArch`): `gfx90a` is `9.0a` (the name's digits with a
    /// dot before minor and stepping), `gfx9-4-generic` the family `9.4`.
    fn of_processor(name: &str) -> Option<Self> {
        let rest = name.strip_prefix("gfx")?;
        Self::all().find(|s| match rest.strip_suffix("-generic") {
            Some(family) => {
                s.spelling == s.family
                    && family.len() == s.spelling.len()
                    && family
                        .bytes()
                        .zip(s.spelling.bytes())
                        .all(|(n, t)| n == t || (n == b'-' && t == b'.'))
            }
            None => rest.bytes().eq(s.spelling.bytes().filter(|b| *b != b'.')),
        })
    }

    /// `AMDGPU::isSubArchCompatible`: the same sub-architecture, or one is
    /// the family the other belongs to.
    fn is_compatible_with(self, other: Self) -> bool {
        let is_family = |s: Self| s.spelling == s.family;
        self == other || ((is_family(self) || is_family(other)) && self.family == other.family)
    }
}

/// An AMDGPU triple architecture as LLVM's main branch reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AmdgpuArch {
    /// `amdgcn` (the legacy spelling) or `r600`: no sub-architecture, so
    /// any processor of the architecture.
    Any,
    /// `amdgpu<subarch>`.
    SubArch(AmdgpuSubArch),
    /// `amdgpu` bare or with a suffix that is no sub-architecture
    /// (`amdgpufoo`): `Triple::parseArch` takes it as `amdgpu` (a prefix
    /// match), but `AMDGPU::TargetID::parse` refuses any target ID under it
    /// ("unrecognized subarch suffixes", which a bare `amdgpu` is too, not
    /// being spelled `amdgcn`), and so does AMD's comgr.
    Unrecognized,
}

impl AmdgpuArch {
    /// The AMDGPU architecture `arch` names on LLVM's main branch, if any.
    pub(crate) fn parse_upstream(arch: &str) -> Option<Self> {
        if arch == "amdgcn" || arch == "r600" {
            return Some(AmdgpuArch::Any);
        }
        let suffix = arch.strip_prefix("amdgpu")?;
        Some(AmdgpuSubArch::parse(suffix).map_or(AmdgpuArch::Unrecognized, AmdgpuArch::SubArch))
    }

    /// `AMDGPU::isCPUValidForSubArch`: whether code for the canonical
    /// processor `name` may sit under this architecture: any under no
    /// sub-architecture; under `amdgpu<subarch>` its own processor, its
    /// family's members, or, under one processor's sub-architecture, its
    /// family's generic processor.
    pub(crate) fn is_valid_processor(self, name: &str) -> bool {
        match self {
            AmdgpuArch::Any => true,
            AmdgpuArch::Unrecognized => false,
            AmdgpuArch::SubArch(subarch) => AmdgpuSubArch::of_processor(name)
                .is_some_and(|of_processor| of_processor.is_compatible_with(subarch)),
        }
    }

    /// Whether this is a sub-architecture (not `amdgcn`, `r600`, a bare or an
    /// unknown `amdgpu`).
    pub(crate) fn has_subarch(self) -> bool {
        matches!(self, AmdgpuArch::SubArch(_))
    }

    /// The processor a target ID under this architecture names when it
    /// names none (empty, or `generic`): the sub-architecture's own
    /// (`AMDGPU::getGPUKindFromSubArch`), `gfx90a` for `amdgpu9.0a`,
    /// `gfx9-generic` for `amdgpu9`; none for `amdgpu6`, `amdgpu7` and
    /// `amdgpu8`, families without a generic processor.
    pub(crate) fn own_processor(self) -> Option<&'static Processor> {
        let AmdgpuArch::SubArch(subarch) = self else {
            return None;
        };
        UPSTREAM
            .iter()
            .chain(PROCESSORS)
            .find(|p| AmdgpuSubArch::of_processor(p.name) == Some(subarch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_processor_has_its_subarch_and_family() {
        for p in UPSTREAM.iter().chain(PROCESSORS) {
            let subarch = AmdgpuSubArch::of_processor(p.name).expect(p.name);
            let arch = AmdgpuArch::SubArch(subarch);
            assert_eq!(arch.own_processor().map(|o| o.name), Some(p.name));
            assert!(arch.is_valid_processor(p.name));
            // The generic family the runtime falls back to is the one whose
            // major sub-architecture the processor's belongs to.
            if let Some(generic) = p.generic {
                let family = AmdgpuSubArch::of_processor(generic).unwrap();
                assert_eq!(family.spelling, subarch.family, "{}", p.name);
                assert!(arch.is_valid_processor(generic), "{}", p.name);
            }
        }
    }

    #[test]
    fn subarch_spellings() {
        let parse = AmdgpuArch::parse_upstream;
        assert_eq!(parse("x86_64"), None);
        assert_eq!(parse("amdgcn"), Some(AmdgpuArch::Any));
        assert_eq!(parse("amdgpu"), Some(AmdgpuArch::Unrecognized));
        assert_eq!(parse("amdgpu9.0A"), Some(AmdgpuArch::Unrecognized));
        assert_eq!(parse("amdgpu9.5"), parse("amdgpu9.4"));
        assert_eq!(parse("amdgpu10"), parse("amdgpu10.1"));
        let name = |arch| {
            parse(arch)
                .and_then(AmdgpuArch::own_processor)
                .map(|p| p.name)
        };
        assert_eq!(name("amdgpu9.0a"), Some("gfx90a"));
        assert_eq!(name("amdgpu8.10"), Some("gfx810"));
        assert_eq!(name("amdgpu11.7"), Some("gfx11-7-generic"));
        assert_eq!(name("amdgpu8"), None);
        // Families that are one processor take no other.
        let amdgpu908 = parse("amdgpu9.08").unwrap();
        assert!(amdgpu908.is_valid_processor("gfx908"));
        assert!(!amdgpu908.is_valid_processor("gfx9-generic"));
        assert!(!parse("amdgpu8").unwrap().is_valid_processor("gfx810"));
        assert!(parse("amdgpu8").unwrap().is_valid_processor("gfx805"));
    }
}
