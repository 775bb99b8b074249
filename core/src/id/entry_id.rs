//! Bundle entry IDs: `<kind>-<arch>-<vendor>-<os>-<env>[-<target-id>]`.

use core::fmt;

use super::target_id::TargetId;
use super::triple::Triple;
use super::IdError;

/// A parsed bundle entry ID, borrowing its parts from the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BundleEntryId<'a> {
    text: &'a str,
    kind: &'a str,
    triple: Triple<'a>,
    target_id: &'a str,
}

/// Offload kinds the bundler accepts on its command line.
pub const OFFLOAD_KINDS: &[&str] = &["host", "openmp", "hip", "hipv4"];

impl<'a> BundleEntryId<'a> {
    /// Splits an ID at its first five `-`: a kind, a 4-field triple and an
    /// optional target ID, which may itself contain `-` (`gfx9-4-generic`).
    /// Fewer than five components is an error; components are not validated
    /// (readers accept any kind).
    pub fn parse(text: &'a str) -> Result<Self, IdError> {
        let mut parts = text.splitn(6, '-');
        let mut next = |found: usize| parts.next().ok_or(IdError::TooFewComponents { found });
        let kind = next(0)?;
        let arch = next(1)?;
        let vendor = next(2)?;
        let os = next(3)?;
        let env = next(4)?;
        let target_id = parts.next().unwrap_or("");
        Ok(BundleEntryId {
            text,
            kind,
            triple: Triple {
                arch,
                vendor,
                os,
                env,
            },
            target_id,
        })
    }

    /// Builds an ID from its parts; [`fmt::Display`] writes it out.
    pub fn from_parts(kind: &'a str, triple: Triple<'a>, target_id: &'a str) -> Self {
        BundleEntryId {
            text: "",
            kind,
            triple,
            target_id,
        }
    }

    /// The ID as parsed (empty for one built by [`BundleEntryId::from_parts`]).
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The offload kind: `host`, `openmp`, `hip`, `hipv4`, ...
    pub fn kind(&self) -> &'a str {
        self.kind
    }

    /// The target triple.
    pub fn triple(&self) -> Triple<'a> {
        self.triple
    }

    /// The target ID as written (empty if absent).
    pub fn target_id(&self) -> &'a str {
        self.target_id
    }

    /// Whether this is the host entry.
    pub fn is_host(&self) -> bool {
        self.kind == "host"
    }

    /// Whether the kind is one the bundler accepts on its command line.
    pub fn has_known_kind(&self) -> bool {
        OFFLOAD_KINDS.contains(&self.kind)
    }

    /// The target ID parsed for this ID's triple.
    pub fn parsed_target_id(&self) -> Result<TargetId<'a>, IdError> {
        TargetId::parse_for_arch(self.triple.arch, self.target_id)
    }

    /// Whether a code object stored under `self` may be given to a request
    /// for `requested`, by the bundler's rules: an exact match; or compatible
    /// kinds (equal, `hip`↔`hipv4`, and with `hip_openmp_compatible` any
    /// `hip*`↔`openmp`), compatible triples, the same processor, and every
    /// feature the code object sets set the same way in the request.
    pub fn is_compatible_with(
        &self,
        requested: &BundleEntryId<'_>,
        hip_openmp_compatible: bool,
    ) -> bool {
        let triples = self.triple.is_compatible_with(&requested.triple);
        if self.kind == requested.kind && triples && self.target_id == requested.target_id {
            return true;
        }
        if !kinds_compatible(self.kind, requested.kind, hip_openmp_compatible) || !triples {
            return false;
        }
        match (self.parsed_target_id(), requested.parsed_target_id()) {
            (Ok(ours), Ok(theirs)) => ours.is_compatible_with(&theirs),
            _ => false,
        }
    }
}

fn kinds_compatible(code_object: &str, requested: &str, hip_openmp_compatible: bool) -> bool {
    let hip_family = |k: &str| k == "hip" || k == "hipv4";
    if code_object == requested || (hip_family(code_object) && hip_family(requested)) {
        return true;
    }
    let hip_prefix = |k: &str| k.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("hip"));
    hip_openmp_compatible
        && ((hip_prefix(code_object) && requested == "openmp")
            || (code_object == "openmp" && hip_prefix(requested)))
}

impl fmt::Display for BundleEntryId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.text.is_empty() {
            return f.write_str(self.text);
        }
        write!(f, "{}-{}", self.kind, self.triple)?;
        if !self.target_id.is_empty() {
            write!(f, "-{}", self.target_id)?;
        }
        Ok(())
    }
}
