//! Entry IDs, target IDs, compatibility and selection, against what LLVM 22
//! does (verified with its tools; see README).

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use clangoffload::bundle::write_bundle;
use clangoffload::id::{
    first_compatible, normalize_entry_id, parse_device, select_for_device, BundleEntryId,
    DeviceMatch, FeatureSetting, IdError, TargetId,
};
use clangoffload::Bundle;

fn id(s: &str) -> BundleEntryId<'_> {
    BundleEntryId::parse(s).unwrap()
}

#[test]
fn entry_id_parts() {
    let e = id("hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+");
    assert_eq!(e.kind(), "hipv4");
    assert_eq!(e.triple().arch, "amdgcn");
    assert_eq!(e.triple().env, "");
    assert_eq!(e.target_id(), "gfx9-4-generic:xnack+");
    assert_eq!(
        e.to_string(),
        "hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+"
    );
    // Five components: no target ID; the fifth is the environment.
    let e = id("hip-amdgcn-amd-amdhsa-gfx906");
    assert_eq!((e.triple().env, e.target_id()), ("gfx906", ""));
    assert_eq!(
        BundleEntryId::parse("hip-amdgcn-amd"),
        Err(IdError::TooFewComponents { found: 3 })
    );
    assert_eq!(
        BundleEntryId::parse(""),
        Err(IdError::TooFewComponents { found: 1 })
    );
    assert!(id("host-x86_64-unknown-linux-gnu-").is_host());
}

#[test]
fn target_id_parse_and_canonical_form() {
    let t = TargetId::parse("gfx90a:xnack-:sramecc+").unwrap();
    assert_eq!(t.processor(), "gfx90a");
    assert_eq!(
        (t.xnack(), t.sramecc()),
        (FeatureSetting::Off, FeatureSetting::On)
    );
    assert_eq!(t.canonical().to_string(), "gfx90a:sramecc+:xnack-");
    assert_eq!(
        TargetId::parse("fiji").unwrap().canonical().to_string(),
        "gfx803"
    );
    assert_eq!(
        TargetId::parse("gfx906:").unwrap().canonical().to_string(),
        "gfx906"
    );
    assert_eq!(
        TargetId::parse("gfx906:xnack+:xnack-"),
        Err(IdError::DuplicateFeature { at: 14 })
    );
    assert_eq!(
        TargetId::parse("gfx906:xnack"),
        Err(IdError::MissingFeatureSign { at: 7 })
    );
    assert_eq!(
        TargetId::parse("gfx906::xnack+"),
        Err(IdError::MissingFeatureSign { at: 7 })
    );
    assert_eq!(
        TargetId::parse("gfx906:foo+"),
        Err(IdError::UnknownFeature { at: 7 })
    );
    assert_eq!(
        TargetId::parse("gfx1030:xnack+"),
        Err(IdError::UnsupportedFeature)
    );
    assert_eq!(
        TargetId::parse("gfx9-generic:sramecc+"),
        Err(IdError::UnsupportedFeature)
    );
    assert_eq!(TargetId::parse("gfx940"), Err(IdError::UnknownProcessor));
    assert_eq!(TargetId::parse(":xnack+"), Err(IdError::EmptyProcessor));
    assert!(TargetId::parse("gfx9-4-generic:sramecc+:xnack-").is_ok());
}

#[test]
fn any_in_the_code_object_accepts_on_and_off_not_the_reverse() {
    let t = |s| TargetId::parse(s).unwrap();
    assert!(t("gfx90a").is_compatible_with(&t("gfx90a:xnack+")));
    assert!(!t("gfx90a:xnack+").is_compatible_with(&t("gfx90a")));
    assert!(!t("gfx90a:xnack+").is_compatible_with(&t("gfx90a:xnack-")));
    assert!(t("gfx906:xnack+:sramecc-").is_compatible_with(&t("gfx906:sramecc-:xnack+")));
    assert!(t("fiji").is_compatible_with(&t("gfx803")));
    assert!(!t("gfx906").is_compatible_with(&t("gfx900")));
    // Conflicts are symmetric.
    assert!(t("gfx906:xnack+").conflicts_with(&t("gfx906")));
    assert!(t("gfx906").conflicts_with(&t("gfx906:xnack+")));
    assert!(!t("gfx906:xnack+").conflicts_with(&t("gfx906:xnack-")));
    assert!(!t("gfx906").conflicts_with(&t("gfx908:xnack+")));
}

#[test]
fn bundle_entry_compatibility_rules() {
    let ok = |co, req| id(co).is_compatible_with(&id(req), false);
    // Exact match, including IDs whose target ID does not parse.
    assert!(ok(
        "host-x86_64-unknown-linux-gnu-",
        "host-x86_64-unknown-linux-gnu-"
    ));
    assert!(ok(
        "host-x86_64-unknown-linux-gnu",
        "host-x86_64-unknown-linux-gnu-"
    ));
    assert!(ok(
        "hip-amdgcn-amd-amdhsa--gfx906:foo+",
        "hip-amdgcn-amd-amdhsa--gfx906:foo+"
    ));
    assert!(!ok(
        "hip-amdgcn-amd-amdhsa--gfx906:foo+",
        "hip-amdgcn-amd-amdhsa--gfx906:foo+:xnack+"
    ));
    // hip and hipv4 are one family; unknown env equals empty env.
    assert!(ok(
        "hipv4-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+"
    ));
    assert!(!ok(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "openmp-amdgcn-amd-amdhsa--gfx906"
    ));
    assert!(id("hip-amdgcn-amd-amdhsa--gfx906")
        .is_compatible_with(&id("openmp-amdgcn-amd-amdhsa--gfx906"), true));
    assert!(id("openmp-amdgcn-amd-amdhsa--gfx906")
        .is_compatible_with(&id("HIPv4-amdgcn-amd-amdhsa--gfx906"), true));
    // Code-object features must be matched exactly by the request.
    assert!(!ok(
        "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
        "hip-amdgcn-amd-amdhsa--gfx906"
    ));
    assert!(ok(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa--gfx906:xnack+"
    ));
    // A missing target ID only matches exactly.
    assert!(!ok(
        "hip-amdgcn-amd-amdhsa--",
        "hip-amdgcn-amd-amdhsa--gfx906"
    ));
    // NVPTX processors are taken as written and carry no features.
    assert!(ok(
        "openmp-nvptx64-nvidia-cuda--sm_70",
        "openmp-nvptx64-nvidia-cuda-unknown-sm_70"
    ));
    assert!(!ok(
        "openmp-nvptx64-nvidia-cuda--sm_70",
        "openmp-nvptx64-nvidia-cuda--sm_75"
    ));
    assert!(!ok(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-pc-amdhsa--gfx906"
    ));
}

#[test]
fn normalization_as_the_bundler_writes_ids() {
    for (given, written) in [
        (
            "hip-amdgcn-amd-amdhsa-unknown-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        ("hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--"),
        ("hip-amdgcn-amd-amdhsa--tahiti", "hip-amdgcn-amd-amdhsa--"),
        (
            "hip-amdgcn-amd-amdhsa--gfx908:xnack++",
            "hip-amdgcn-amd-amdhsa--gfx908:xnack++",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+",
            "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+",
        ),
        (
            "openmp-nvptx64-nvidia-cuda-sm_70",
            "openmp-nvptx64-nvidia-cuda-sm_70-",
        ),
        (
            "openmp-nvptx64-nvidia-cuda--sm_70",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
        ),
        (
            "host-x86_64-unknown-linux-gnu",
            "host-x86_64-unknown-linux-gnu-",
        ),
        (
            "openmp-spirv64-intel-unknown-unknown-bmg_g21",
            "openmp-spirv64-intel-unknown-unknown-bmg_g21",
        ),
        (
            "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv",
            "hip-spirv64-amd-amdhsa--amdgcnspirv",
        ),
    ] {
        assert_eq!(normalize_entry_id(given).unwrap(), written, "{given}");
    }
}

fn hip_bundle(ids: &[&str]) -> Vec<u8> {
    let payloads: Vec<Vec<u8>> = (0..ids.len()).map(|i| vec![i as u8; 4]).collect();
    let entries: Vec<(&[u8], &[u8])> = ids
        .iter()
        .zip(&payloads)
        .map(|(i, p)| (i.as_bytes(), p.as_slice()))
        .collect();
    write_bundle(&entries, 1).unwrap()
}

#[test]
fn first_compatible_is_file_order() {
    let data = hip_bundle(&[
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+",
    ]);
    let bundle = Bundle::parse(&data).unwrap();
    let got =
        first_compatible(&bundle, &id("hip-amdgcn-amd-amdhsa--gfx906:xnack+"), false).unwrap();
    assert_eq!(
        got.index(),
        0,
        "no best-match ranking: the first compatible wins"
    );
    assert!(first_compatible(&bundle, &id("hip-amdgcn-amd-amdhsa--gfx908"), false).is_none());
}

#[test]
fn device_selection_prefers_native_then_generic_then_spirv() {
    let data = hip_bundle(&[
        "hip-spirv64-amd-amdhsa--amdgcnspirv",
        "hipv4-amdgcn-amd-amdhsa--gfx9-generic:xnack-",
        "hipv4-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-",
        "hipv4-amdgcn-amd-amdhsa--gfx11-generic",
        "openmp-amdgcn-amd-amdhsa--gfx1100",
    ]);
    let bundle = Bundle::parse(&data).unwrap();
    let pick = |device: &str| {
        select_for_device(&bundle, &TargetId::parse(device).unwrap())
            .map(|(how, e)| (how, e.index()))
    };
    assert_eq!(
        pick("gfx906:sramecc+:xnack-"),
        Some((DeviceMatch::Native, 2))
    );
    // sramecc- rules out the native entry; the generic one keeps xnack- only.
    assert_eq!(
        pick("gfx906:sramecc-:xnack-"),
        Some((DeviceMatch::Generic, 1))
    );
    assert_eq!(pick("gfx900:xnack+"), Some((DeviceMatch::SpirV, 0)));
    assert_eq!(
        pick("gfx1100"),
        Some((DeviceMatch::Generic, 3)),
        "OpenMP entries are not HIP code"
    );
    assert_eq!(pick("gfx90a"), Some((DeviceMatch::SpirV, 0)));
    let no_spirv = hip_bundle(&["hipv4-amdgcn-amd-amdhsa--gfx906"]);
    let bundle = Bundle::parse(&no_spirv).unwrap();
    assert!(select_for_device(&bundle, &TargetId::parse("gfx90a").unwrap()).is_none());
}

/// How the bundler reads stored IDs when unbundling: components as LLVM's
/// parsed triple values, an unknown processor dropped.
#[test]
fn ids_as_read_by_the_bundler() {
    use clangoffload::id::as_read_by_bundler;
    let compatible = |stored: &str, requested: &str| {
        let (s, r) = (
            BundleEntryId::parse(stored).unwrap(),
            BundleEntryId::parse(requested).unwrap(),
        );
        as_read_by_bundler(&s).is_compatible_with(&as_read_by_bundler(&r), false)
    };
    // An unknown environment, vendor or OS is no value at all.
    assert!(compatible(
        "hip-amdgcn-amd-amdhsa-gfx906",
        "hip-amdgcn-amd-amdhsa--"
    ));
    assert!(compatible(
        "host-x86_64-unk~own-linux-gnu",
        "host-x86_64-unknown-linux-gnu"
    ));
    assert!(compatible(
        "openmp-x86_64-pc-elf-gnu",
        "openmp-x86_64-pc--gnu"
    ));
    // OS and environment are prefixes; windows and win32 are one OS.
    assert!(compatible(
        "openmp-nvptx64-nvidia-cudafoo--sm_70",
        "openmp-nvptx64-nvidia-cuda--sm_70"
    ));
    assert!(compatible(
        "host-x86_64-pc-windows-msvc",
        "host-x86_64-pc-win32-msvc19"
    ));
    assert!(!compatible(
        "host-x86_64-pc-linux-gnu",
        "host-x86_64-pc-linux-musl"
    ));
    assert!(!compatible(
        "host-x86_64-pc-linux-gnueabi",
        "host-x86_64-pc-linux-gnu"
    ));
    // A target ID whose processor is no offload architecture is dropped.
    assert!(compatible(
        "hip-amdgcn-amd-amdhsa--tahiti",
        "hip-amdgcn-amd-amdhsa--"
    ));
    assert!(!compatible(
        "hip-amdgcn-amd-amdhsa--tahiti",
        "hip-amdgcn-amd-amdhsa--gfx600"
    ));
    // An object format at the end of the environment counts unless it is
    // the triple's default.
    assert!(compatible(
        "openmp-x86_64-pc-linux-elf",
        "openmp-x86_64-pc-linux-"
    ));
    assert!(compatible(
        "openmp-x86_64-pc-linux-fooelf",
        "openmp-x86_64-pc-linux-elf"
    ));
    assert!(compatible(
        "openmp-x86_64-pc-linux-gnuelf",
        "openmp-x86_64-pc-linux-gnu"
    ));
    assert!(!compatible(
        "openmp-x86_64-pc-linux-coff",
        "openmp-x86_64-pc-linux-"
    ));
    assert!(!compatible(
        "hip-spirv64-amd-amdhsa-elf-amdgcnspirv",
        "hip-spirv64-amd-amdhsa--amdgcnspirv"
    ));
    assert!(compatible(
        "openmp-spirv64-intel-unknown-spirv",
        "openmp-spirv64-intel-unknown-"
    ));
    // Known values still have to agree.
    assert!(!compatible(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdpal--gfx906"
    ));
    assert!(!compatible(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hip-amdgcn-amd-amdhsa--gfx908"
    ));
    assert!(compatible(
        "hip-amdgcn-amd-amdhsa--gfx906",
        "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+"
    ));
}

/// The runtime's loading rule (AMD comgr's, the HIP runtime's), not the
/// bundler's: `hcc` entries load, an `unknown` environment never does, an
/// exact target ID beats an earlier compatible one, and the device may be
/// given as HSA names it.
#[test]
fn device_selection_follows_the_runtime() {
    let data = hip_bundle(&[
        "hip-amdgcn-amd-amdhsa-unknown-gfx906",
        "hip-amdgcn-amd-amdhsa--gfx90a",
        "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
        "hcc-amdgcn-amd-amdhsa--gfx1030",
    ]);
    let bundle = Bundle::parse(&data).unwrap();
    let pick = |device: &str| {
        select_for_device(&bundle, &parse_device(device).unwrap()).map(|(how, e)| (how, e.index()))
    };
    assert_eq!(
        pick("gfx906"),
        None,
        "an unknown environment is never loaded"
    );
    assert_eq!(pick("gfx1030"), Some((DeviceMatch::Native, 3)), "hcc loads");
    assert_eq!(
        pick("gfx90a:xnack+"),
        Some((DeviceMatch::Native, 2)),
        "the exact one"
    );
    assert_eq!(
        pick("amdgcn-amd-amdhsa--gfx90a:xnack+"),
        Some((DeviceMatch::Native, 2))
    );
    assert_eq!(pick("gfx90a:xnack-"), Some((DeviceMatch::Native, 1)));
    // The bundler's rule still reads the unknown environment as none.
    let bundler = first_compatible(&bundle, &id("hip-amdgcn-amd-amdhsa--gfx906"), false);
    assert_eq!(bundler.map(|e| e.index()), Some(0));
    assert!(parse_device("amdgcn-amd-amdhsa--").is_err());
}
