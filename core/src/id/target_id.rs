//! Target IDs: `<processor>(:<feature>(+|-))*`, e.g. `gfx90a:sramecc+:xnack-`.

use core::fmt;

use super::arch::AmdgpuArch;
use super::processor::{self, Processor};
use super::IdError;

/// The setting of one target feature in a target ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FeatureSetting {
    /// Not given: code for either setting ("any").
    #[default]
    Any,
    /// `+`
    On,
    /// `-`
    Off,
}

impl FeatureSetting {
    /// Whether code built with `self` may run where `requested` is asked for:
    /// "any" accepts everything, on/off only themselves.
    pub fn satisfies(self, requested: FeatureSetting) -> bool {
        self == FeatureSetting::Any || self == requested
    }

    fn sign(self) -> Option<char> {
        match self {
            FeatureSetting::Any => None,
            FeatureSetting::On => Some('+'),
            FeatureSetting::Off => Some('-'),
        }
    }
}

/// A parsed target ID. AMDGPU processors are resolved to their canonical name
/// (aliases such as `fiji` included); other processors (`sm_90a`,
/// `amdgcnspirv`) are kept as written and may carry no features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetId<'a> {
    text: &'a str,
    processor: &'a str,
    amdgpu: Option<&'static Processor>,
    xnack: FeatureSetting,
    sramecc: FeatureSetting,
}

/// Splits `processor:features` and checks each feature's form. The processor is
/// returned as written.
fn split_features(text: &str) -> Result<(&str, FeatureSetting, FeatureSetting), IdError> {
    let split = split_any_features(text)?;
    if split.0.is_empty() {
        return Err(IdError::EmptyProcessor);
    }
    Ok(split)
}

/// [`split_features`] that lets the processor be empty.
fn split_any_features(text: &str) -> Result<(&str, FeatureSetting, FeatureSetting), IdError> {
    let (processor, mut rest) = match text.split_once(':') {
        Some((p, f)) => (p, Some(f)),
        None => (text, None),
    };
    let (mut xnack, mut sramecc) = (FeatureSetting::Any, FeatureSetting::Any);
    let mut at = processor.len().saturating_add(1);
    while let Some(features) = rest {
        let (one, next) = match features.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (features, None),
        };
        // LLVM stops at an empty remainder, so a trailing colon is accepted.
        if one.is_empty() && next.is_none() {
            break;
        }
        let setting = match one.as_bytes().last() {
            Some(b'+') => FeatureSetting::On,
            Some(b'-') => FeatureSetting::Off,
            _ => return Err(IdError::MissingFeatureSign { at }),
        };
        let name = one.get(..one.len().saturating_sub(1)).unwrap_or("");
        let slot = match name {
            "xnack" => &mut xnack,
            "sramecc" => &mut sramecc,
            _ => return Err(IdError::UnknownFeature { at }),
        };
        if *slot != FeatureSetting::Any {
            return Err(IdError::DuplicateFeature { at });
        }
        *slot = setting;
        at = at.saturating_add(one.len()).saturating_add(1);
        rest = next;
    }
    Ok((processor, xnack, sramecc))
}

impl<'a> TargetId<'a> {
    /// Parses an AMDGPU target ID: a processor LLVM knows (or its alias), each
    /// of `sramecc`/`xnack` at most once with a sign, and only features the
    /// processor supports.
    pub fn parse(text: &'a str) -> Result<Self, IdError> {
        Self::parse_in(text, processor::lookup)
    }

    /// [`TargetId::parse`] with the processors LLVM's main branch knows
    /// ([`processor::UPSTREAM`]): for reading what newer compilers wrote.
    pub fn parse_upstream(text: &'a str) -> Result<Self, IdError> {
        Self::parse_in(text, processor::lookup_upstream)
    }

    fn parse_in(
        text: &'a str,
        lookup: fn(&str) -> Option<&'static Processor>,
    ) -> Result<Self, IdError> {
        let (processor, xnack, sramecc) = split_features(text)?;
        Self::with_features(text, lookup(processor), xnack, sramecc)
    }

    /// The target ID `text` of `amdgpu` with these features, if it has them.
    fn with_features(
        text: &'a str,
        amdgpu: Option<&'static Processor>,
        xnack: FeatureSetting,
        sramecc: FeatureSetting,
    ) -> Result<Self, IdError> {
        let Some(amdgpu) = amdgpu else {
            return Err(IdError::UnknownProcessor);
        };
        if (xnack != FeatureSetting::Any && !amdgpu.xnack)
            || (sramecc != FeatureSetting::Any && !amdgpu.sramecc)
        {
            return Err(IdError::UnsupportedFeature);
        }
        Ok(TargetId {
            text,
            processor: amdgpu.name,
            amdgpu: Some(amdgpu),
            xnack,
            sramecc,
        })
    }

    /// Parses the target ID of a bundle entry ID for its triple, as the
    /// bundler does: AMDGPU triples (`amdgcn`, `r600`) by [`TargetId::parse`];
    /// any other triple takes the processor as written and no features.
    pub fn parse_for_arch(arch: &str, text: &'a str) -> Result<Self, IdError> {
        if is_amdgpu_arch(arch) {
            return Self::parse(text);
        }
        Self::parse_other(text)
    }

    /// [`TargetId::parse_for_arch`] as LLVM's main branch reads it
    /// (`AMDGPU::TargetID::parse`): its processors
    /// ([`TargetId::parse_upstream`]), and its AMDGPU triple architecture
    /// spelled `amdgpu<subarch>` besides `amdgcn` (`amdgpu9.0a`, or the
    /// family `amdgpu9`). Under a sub-architecture only its processors are
    /// valid (`AMDGPU::isCPUValidForSubArch`), and a target ID that names
    /// none (empty or `generic`, features allowed: `:xnack+`) names the
    /// sub-architecture's own. Any other processor, or any target ID under
    /// a bare `amdgpu` or an unknown sub-architecture (`amdgpufoo`), is
    /// [`IdError::UnknownProcessor`], as upstream and AMD's comgr refuse
    /// them.
    pub fn parse_for_arch_upstream(arch: &str, text: &'a str) -> Result<Self, IdError> {
        let Some(amdgpu_arch) = AmdgpuArch::parse_upstream(arch) else {
            return Self::parse_other(text);
        };
        let (processor, xnack, sramecc) = split_any_features(text)?;
        let amdgpu = if amdgpu_arch.has_subarch() && matches!(processor, "" | "generic") {
            amdgpu_arch.own_processor()
        } else if processor.is_empty() {
            return Err(IdError::EmptyProcessor);
        } else {
            processor::lookup_upstream(processor).filter(|p| amdgpu_arch.is_valid_processor(p.name))
        };
        Self::with_features(text, amdgpu, xnack, sramecc)
    }

    /// A non-AMDGPU triple's target ID: the processor as written, no
    /// features.
    fn parse_other(text: &'a str) -> Result<Self, IdError> {
        let (processor, xnack, sramecc) = split_features(text)?;
        if xnack != FeatureSetting::Any || sramecc != FeatureSetting::Any {
            return Err(IdError::UnsupportedFeature);
        }
        Ok(TargetId {
            text,
            processor,
            amdgpu: None,
            xnack,
            sramecc,
        })
    }

    /// The target ID as written.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The processor: canonical for AMDGPU, as written otherwise.
    pub fn processor(&self) -> &'a str {
        self.processor
    }

    /// The AMDGPU processor, if the ID names one.
    pub fn amdgpu_processor(&self) -> Option<&'static Processor> {
        self.amdgpu
    }

    /// The `xnack` setting.
    pub fn xnack(&self) -> FeatureSetting {
        self.xnack
    }

    /// The `sramecc` setting.
    pub fn sramecc(&self) -> FeatureSetting {
        self.sramecc
    }

    /// The canonical form: canonical processor, features sorted
    /// (`gfx90a:sramecc+:xnack-`).
    pub fn canonical(&self) -> CanonicalTargetId<'a> {
        CanonicalTargetId(*self)
    }

    /// Whether code built for `self` may run where `requested` is asked for:
    /// same processor, and every feature `self` sets is set the same way in
    /// `requested` ("any" in the code object accepts on or off, not the
    /// reverse).
    pub fn is_compatible_with(&self, requested: &TargetId<'_>) -> bool {
        self.processor == requested.processor
            && self.xnack.satisfies(requested.xnack)
            && self.sramecc.satisfies(requested.sramecc)
    }

    /// Whether the two IDs cannot live in one bundle: the same processor with a
    /// feature that one of them sets and the other leaves as "any". Symmetric
    /// (LLVM 22 checks only one direction).
    pub fn conflicts_with(&self, other: &TargetId<'_>) -> bool {
        let differ = |a: FeatureSetting, b: FeatureSetting| {
            (a == FeatureSetting::Any) != (b == FeatureSetting::Any)
        };
        self.processor == other.processor
            && (differ(self.xnack, other.xnack) || differ(self.sramecc, other.sramecc))
    }

    /// A target ID for another processor with this ID's features, keeping
    /// only the features `processor` supports: how the HIP runtime forms the
    /// generic candidate for a device.
    pub fn with_processor(&self, processor: &'static Processor) -> TargetId<'static> {
        let keep = |on: bool, s: FeatureSetting| if on { s } else { FeatureSetting::Any };
        TargetId {
            text: "",
            processor: processor.name,
            amdgpu: Some(processor),
            xnack: keep(processor.xnack, self.xnack),
            sramecc: keep(processor.sramecc, self.sramecc),
        }
    }
}

pub(crate) fn is_amdgpu_arch(arch: &str) -> bool {
    arch == "amdgcn" || arch == "r600"
}

/// Displays a target ID in canonical form; see [`TargetId::canonical`].
#[derive(Debug, Clone, Copy)]
pub struct CanonicalTargetId<'a>(TargetId<'a>);

impl fmt::Display for CanonicalTargetId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = &self.0;
        f.write_str(id.processor)?;
        if let Some(sign) = id.sramecc.sign() {
            write!(f, ":sramecc{sign}")?;
        }
        if let Some(sign) = id.xnack.sign() {
            write!(f, ":xnack{sign}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TargetId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.is_empty() {
            self.canonical().fmt(f)
        } else {
            f.write_str(self.text)
        }
    }
}
