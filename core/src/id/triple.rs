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

    /// Whether the architecture is one LLVM 22's triple parser knows (exact
    /// and case-sensitive): the bundler rejects targets whose arch it does not.
    pub fn has_known_arch(&self) -> bool {
        super::arch::is_known_arch(self.arch)
    }
}

impl fmt::Display for Triple<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}-{}", self.arch, self.vendor, self.os, self.env)
    }
}
