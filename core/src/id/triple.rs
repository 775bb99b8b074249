//! The 4-field target triple inside a bundle entry ID.

use core::fmt;

/// `<arch>-<vendor>-<os>-<env>`, borrowed from a bundle entry ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Triple<'a> {
    /// Architecture, e.g. `amdgcn`.
    pub arch: &'a str,
    /// Vendor, e.g. `amd`.
    pub vendor: &'a str,
    /// Operating system, e.g. `amdhsa`.
    pub os: &'a str,
    /// Environment; often empty (`amdgcn-amd-amdhsa-`).
    pub env: &'a str,
}

/// An empty component and `unknown` mean the same, as in LLVM's parsed triples.
fn same_component(a: &str, b: &str) -> bool {
    let unknown = |s: &str| s.is_empty() || s == "unknown";
    a == b || (unknown(a) && unknown(b))
}

impl<'a> Triple<'a> {
    /// Whether code for `self` runs on `other`: every component equal, with an
    /// empty vendor, OS or environment equal to `unknown`.
    pub fn is_compatible_with(&self, other: &Triple<'_>) -> bool {
        self.arch == other.arch
            && same_component(self.vendor, other.vendor)
            && same_component(self.os, other.os)
            && same_component(self.env, other.env)
    }

    /// Whether the architecture is one LLVM's triple parser knows.
    pub fn has_known_arch(&self) -> bool {
        is_known_arch(self.arch)
    }

    /// Whether the OS is `amdhsa`, whose triples the bundler writes with an
    /// empty environment.
    pub fn is_amdhsa(&self) -> bool {
        self.os == "amdhsa"
    }
}

impl fmt::Display for Triple<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}-{}", self.arch, self.vendor, self.os, self.env)
    }
}

/// Architecture names LLVM 22's `Triple` parses to a known architecture.
const ARCHES: &[&str] = &[
    "aarch64",
    "aarch64_32",
    "aarch64_be",
    "amd64",
    "amdgcn",
    "amdil",
    "amdil64",
    "arc",
    "arm",
    "arm64",
    "arm64_32",
    "arm64e",
    "arm64ec",
    "armeb",
    "avr",
    "bpf",
    "bpfeb",
    "bpfel",
    "csky",
    "dxil",
    "hexagon",
    "hsail",
    "hsail64",
    "i386",
    "i486",
    "i586",
    "i686",
    "i786",
    "i886",
    "i986",
    "kalimba",
    "lanai",
    "loongarch32",
    "loongarch64",
    "m68k",
    "mips",
    "mips64",
    "mips64el",
    "mipsel",
    "msp430",
    "nvptx",
    "nvptx64",
    "powerpc",
    "powerpc64",
    "powerpc64le",
    "powerpcle",
    "ppc",
    "ppc32",
    "ppc32le",
    "ppc64",
    "ppc64le",
    "ppcle",
    "r600",
    "renderscript32",
    "renderscript64",
    "riscv32",
    "riscv64",
    "s390x",
    "shave",
    "sparc",
    "sparc64",
    "sparcel",
    "sparcv9",
    "spir",
    "spir64",
    "spirv",
    "spirv32",
    "spirv64",
    "systemz",
    "tce",
    "tcele",
    "thumb",
    "thumbeb",
    "ve",
    "wasm32",
    "wasm64",
    "x86_64",
    "x86_64h",
    "xcore",
    "xtensa",
];

fn is_known_arch(arch: &str) -> bool {
    if ARCHES.contains(&arch) {
        return true;
    }
    // Sub-architecture spellings: armv7a, thumbv8m.main, mipsisa64r6el, ...
    const PREFIXES: &[&str] = &[
        "armv",
        "armebv",
        "thumbv",
        "thumbebv",
        "aarch64",
        "arm64",
        "mipsisa",
        "mipsr6",
        "mips64r6",
        "mipsn32",
        "spirv",
        "kalimba",
        "powerpcspe",
        "mipsallegrex",
    ];
    PREFIXES
        .iter()
        .any(|p| arch.starts_with(p) && arch.len() > p.len())
}
