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
