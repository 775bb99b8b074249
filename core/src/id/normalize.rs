//! The entry IDs the bundler writes for the targets it is given.

use alloc::format;
use alloc::string::String;

use super::processor::PROCESSORS;
use super::triple_normalize::{is_amdhsa_os, normalize_triple, parsed_identity};
use super::{BundleEntryId, IdError};

/// NVIDIA processors clang 22 knows as offload architectures (in its table order).
const CUDA_ARCHS: &[&str] = &[
    "sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60",
    "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
    "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_101", "sm_101a", "sm_103", "sm_103a", "sm_110",
    "sm_110a", "sm_120", "sm_120a", "sm_121", "sm_121a",
];

/// Whether clang 22 knows `name` as an offload architecture (NVIDIA, AMDGPU,
/// SPIR-V, Intel, `generic`): the only target IDs the bundler keeps in the IDs
/// it writes. AMDGPU alias names are not among them.
pub fn is_offload_arch(name: &str) -> bool {
    CUDA_ARCHS.contains(&name)
        || PROCESSORS.iter().any(|p| p.name == name)
        || ["amdgcnspirv", "generic", "graniterapids", "bmg_g21"].contains(&name)
}

/// The ID clang-offload-bundler 22 writes for a `-targets` entry: the triple
/// normalised as LLVM's `Triple::normalize` does (components moved to their
/// slots, empty ones made `unknown`, Windows/Android spellings rewritten), to
/// four fields, or for `amdhsa` to three and an empty environment) and the target ID dropped unless its processor is a known
/// offload architecture. Features are kept as given.
///
/// ```
/// use clangoffload::id::normalize_entry_id;
/// assert_eq!(normalize_entry_id("hip-amdgcn-amd-amdhsa-unknown-gfx906").unwrap(),
///            "hip-amdgcn-amd-amdhsa--gfx906");
/// assert_eq!(normalize_entry_id("host-x86_64-unknown-linux-gnu").unwrap(),
///            "host-x86_64-unknown-linux-gnu-");
/// ```
pub fn normalize_entry_id(text: &str) -> Result<String, IdError> {
    let id = BundleEntryId::parse(text)?;
    let target_id = kept_target_id(&id);
    let t = id.triple();
    // The runtimes expect amdhsa triples with an empty environment.
    let amdhsa = is_amdhsa_os(t.os);
    let triple = normalize_triple([t.arch, t.vendor, t.os, t.env], amdhsa)
        .map_err(|()| IdError::UnsupportedShaderModel)?;
    let env = if amdhsa { "-" } else { "" };
    Ok(format!("{}-{triple}{env}-{target_id}", id.kind()))
}

/// An entry ID as clang-offload-bundler 22 reads it to match entries with
/// targets (its `OffloadTargetInfo`): the triple as LLVM's parsed values
/// (`cudafoo` is CUDA, an unknown environment such as
/// LLVM 16's `gfx906` in `hip-amdgcn-amd-amdhsa-gfx906` is no environment),
/// and the target ID dropped unless its processor is a known offload
/// architecture. [`BundleEntryId::is_compatible_with`] on two such views is
/// the bundler's test when unbundling.
///
/// ```
/// use clangoffload::id::as_read_by_bundler;
/// use clangoffload::BundleEntryId;
/// let stored = BundleEntryId::parse("hip-amdgcn-amd-amdhsa-gfx906").unwrap();
/// let requested = BundleEntryId::parse("hip-amdgcn-amd-amdhsa--").unwrap();
/// assert!(!stored.is_compatible_with(&requested, false));
/// assert!(as_read_by_bundler(&stored).is_compatible_with(&as_read_by_bundler(&requested), false));
/// ```
pub fn as_read_by_bundler<'a>(id: &BundleEntryId<'a>) -> BundleEntryId<'a> {
    BundleEntryId::from_parts(id.kind(), parsed_identity(id.triple()), kept_target_id(id))
}

/// The bundler keeps a target ID, when writing and when reading, only if its
/// processor is a known offload architecture.
fn kept_target_id<'a>(id: &BundleEntryId<'a>) -> &'a str {
    let processor = id.target_id().split(':').next().unwrap_or("");
    if is_offload_arch(processor) {
        id.target_id()
    } else {
        ""
    }
}
