//! Why the HIP runtime loads an entry on no device of a target ID
//! (`id::mismatch`), and the devices `select` reads.
#![cfg(feature = "alloc")]
#![allow(clippy::unwrap_used)]

use clangoffload::id::{mismatch, FeatureSetting, Mismatch, Triple};
use clangoffload::select::Device;
use clangoffload::TargetId;

const HSA: Triple<'static> = Triple {
    arch: "amdgcn",
    vendor: "amd",
    os: "amdhsa",
    env: "",
};

fn why<'a>(
    kind: Option<&'a str>,
    triple: Triple<'a>,
    target: &'a str,
    device: &str,
) -> Option<Mismatch<'a>> {
    mismatch(kind, triple, target, &TargetId::parse(device).unwrap())
}

#[test]
fn each_test_the_runtime_makes_is_named() {
    assert_eq!(
        why(Some("host"), HSA, "gfx906", "gfx906"),
        Some(Mismatch::Kind("host"))
    );
    assert_eq!(
        why(Some("openmp"), HSA, "gfx906", "gfx906"),
        Some(Mismatch::Kind("openmp"))
    );
    let unknown = Triple {
        env: "unknown",
        ..HSA
    };
    assert_eq!(
        why(Some("hip"), unknown, "gfx906", "gfx906"),
        Some(Mismatch::Triple(unknown))
    );
    assert_eq!(
        why(Some("hipv4"), HSA, "gfx906", "gfx90a"),
        Some(Mismatch::Processor("gfx906"))
    );
    assert_eq!(
        why(Some("hipv4"), HSA, "gfx90a:xnack+", "gfx90a:xnack-"),
        Some(Mismatch::Feature {
            feature: "xnack",
            code: FeatureSetting::On,
            device: FeatureSetting::Off
        })
    );
    assert_eq!(
        why(Some("hipv4"), HSA, "gfx9000", "gfx90a"),
        Some(Mismatch::Unreadable("gfx9000"))
    );
    // What runs: native, "any" features, the generic family, SPIR-V.
    assert_eq!(why(Some("hipv4"), HSA, "gfx90a", "gfx90a:xnack+"), None);
    assert_eq!(why(Some("hip"), HSA, "gfx9-generic", "gfx906:xnack-"), None);
    let spirv = Triple {
        arch: "spirv64",
        ..HSA
    };
    assert_eq!(why(Some("hip"), spirv, "amdgcnspirv", "gfx1100"), None);
    // The generic family with a feature the device lacks.
    assert_eq!(
        why(Some("hip"), HSA, "gfx9-generic:xnack+", "gfx906:xnack-"),
        Some(Mismatch::Feature {
            feature: "xnack",
            code: FeatureSetting::On,
            device: FeatureSetting::Off
        })
    );
    assert_eq!(Mismatch::Processor("gfx906").to_string(), "is for gfx906");
}

#[test]
fn devices_are_amd_target_ids_or_nvidia_sms() {
    assert_eq!(Device::parse("sm_89").unwrap(), Device::Cuda(89));
    // A device has no variant: sm_90a names sm_90.
    assert_eq!(Device::parse("sm_90a").unwrap(), Device::Cuda(90));
    assert!(Device::parse("sm_").is_err());
    assert!(matches!(
        Device::parse("amdgcn-amd-amdhsa--gfx90a:xnack+").unwrap(),
        Device::Amdgpu(_)
    ));
    assert_eq!(
        Device::parse("gfx90a:sramecc+:xnack-").unwrap().to_string(),
        "gfx90a:sramecc+:xnack-"
    );
    assert!(Device::parse("gfx9999").is_err());
}
