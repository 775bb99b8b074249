//! AMDGPU names LLVM's main branch knows and LLVM 22 does not: processors
//! (gfx1154, gfx1170–gfx1172, gfx1310, gfx11-7-generic, gfx12-5-generic,
//! gfx13-generic; gfx1250/gfx1251 with `sramecc`, their `xnack` always on and
//! so never in a target ID) and the `amdgpu<subarch>` triple architecture
//! (`amdgpu9.0a`, the family `amdgpu9`). Read where we read code (code
//! objects' `e_flags`, the runtime's choice of code object for a device),
//! while the target IDs the bundler checks and writes stay LLVM 22's.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use clangoffload::bundle::write_bundle;
use clangoffload::elf::{AmdgpuTarget, ElfFile};
use clangoffload::id::{
    normalize_entry_id, parse_device, select_for_device, BundleEntryId, DeviceMatch, IdError,
    TargetId,
};
use clangoffload::Bundle;

fn bundle(ids: &[&str]) -> Vec<u8> {
    let entries: Vec<(&[u8], &[u8])> = ids
        .iter()
        .map(|id| (id.as_bytes(), id.as_bytes()))
        .collect();
    write_bundle(&entries, 8).unwrap()
}

fn chosen(data: &[u8], device: &str) -> Option<(DeviceMatch, String)> {
    let bundle = Bundle::parse(data).unwrap();
    let device = parse_device(device).unwrap();
    select_for_device(&bundle, &device).map(|(how, e)| (how, e.id_str().unwrap().to_owned()))
}

const NEW: &[&str] = &[
    "gfx1154",
    "gfx1170",
    "gfx1171",
    "gfx1172",
    "gfx1310",
    "gfx11-7-generic",
    "gfx12-5-generic",
    "gfx13-generic",
];

#[test]
fn new_processors_are_read_but_not_by_the_bundler() {
    for name in NEW {
        assert_eq!(
            TargetId::parse(name),
            Err(IdError::UnknownProcessor),
            "{name}"
        );
        let id = TargetId::parse_upstream(name).unwrap();
        assert_eq!(id.canonical().to_string(), *name);
        // None of them has on/off xnack modes or sramecc.
        for feature in ["xnack+", "sramecc-"] {
            let text = format!("{name}:{feature}");
            assert_eq!(
                TargetId::parse_upstream(&text),
                Err(IdError::UnsupportedFeature),
                "{text}"
            );
        }
    }
}

#[test]
fn gfx1250_has_sramecc_and_xnack_always_on() {
    for name in ["gfx1250", "gfx1251"] {
        // LLVM 22: no features at all.
        let sramecc = format!("{name}:sramecc+");
        assert!(TargetId::parse(&sramecc).is_err());
        let id = TargetId::parse_upstream(&sramecc).unwrap();
        assert_eq!(id.canonical().to_string(), sramecc);
        // Upstream: FEATURE_XNACK without FEATURE_XNACK_ON_OFF_MODES.
        assert_eq!(
            TargetId::parse_upstream(&format!("{name}:xnack+")),
            Err(IdError::UnsupportedFeature)
        );
    }
}

#[test]
fn newer_devices_get_their_code_or_their_family_s() {
    let data = bundle(&[
        "host-x86_64-unknown-linux-gnu-",
        "hipv4-amdgcn-amd-amdhsa--gfx11-7-generic",
        "hipv4-amdgcn-amd-amdhsa--gfx1310",
        "hipv4-amdgcn-amd-amdhsa--gfx12-5-generic",
        "hipv4-amdgcn-amd-amdhsa--gfx1250:sramecc-",
        "hipv4-amdgcn-amd-amdhsa--gfx1100",
    ]);
    let native = |id: &str| Some((DeviceMatch::Native, id.to_owned()));
    let generic = |id: &str| Some((DeviceMatch::Generic, id.to_owned()));
    assert_eq!(
        chosen(&data, "gfx1310"),
        native("hipv4-amdgcn-amd-amdhsa--gfx1310")
    );
    assert_eq!(
        chosen(&data, "gfx1172"),
        generic("hipv4-amdgcn-amd-amdhsa--gfx11-7-generic")
    );
    assert_eq!(
        chosen(&data, "gfx1250:sramecc-"),
        native("hipv4-amdgcn-amd-amdhsa--gfx1250:sramecc-")
    );
    // sramecc- code never runs where sramecc is on; the generic code, which
    // has no sramecc, does.
    assert_eq!(
        chosen(&data, "gfx1250:sramecc+"),
        generic("hipv4-amdgcn-amd-amdhsa--gfx12-5-generic")
    );
    assert_eq!(
        chosen(&data, "gfx1251"),
        generic("hipv4-amdgcn-amd-amdhsa--gfx12-5-generic")
    );
    // gfx1154 is of the gfx11 family, whose generic code is not here.
    assert_eq!(chosen(&data, "gfx1154"), None);
}

#[test]
fn amdgpu_subarch_triples_are_read() {
    let data = bundle(&[
        "host-x86_64-unknown-linux-gnu-",
        // Not loaded: a bare `amdgpu`, an unknown sub-architecture, a
        // processor of another sub-architecture.
        "hipv4-amdgpu-amd-amdhsa--gfx90a",
        "hipv4-amdgpufoo-amd-amdhsa--gfx90a",
        "hipv4-amdgpu9.00-amd-amdhsa--gfx90a",
        "hipv4-amdgpu9-amd-amdhsa--gfx90a",
        "hipv4-amdgpu9.0a-amd-amdhsa--gfx90a:xnack+",
        // No processor: the sub-architecture's own.
        "hipv4-amdgpu11.70-amd-amdhsa--",
        // A family's generic processor under a member's sub-architecture.
        "hipv4-amdgpu12.50-amd-amdhsa--gfx12-5-generic",
        "hipv4-amdgpu9-amd-amdhsa--gfx906",
    ]);
    let native = |id: &str| Some((DeviceMatch::Native, id.to_owned()));
    assert_eq!(chosen(&data, "gfx90a:xnack-"), None);
    assert_eq!(
        chosen(&data, "gfx90a:xnack+"),
        native("hipv4-amdgpu9.0a-amd-amdhsa--gfx90a:xnack+")
    );
    assert_eq!(
        chosen(&data, "gfx1170"),
        native("hipv4-amdgpu11.70-amd-amdhsa--")
    );
    assert_eq!(
        chosen(&data, "gfx1251"),
        Some((
            DeviceMatch::Generic,
            "hipv4-amdgpu12.50-amd-amdhsa--gfx12-5-generic".to_owned()
        ))
    );
    assert_eq!(
        chosen(&data, "amdgpu9.06-amd-amdhsa--gfx906"),
        native("hipv4-amdgpu9-amd-amdhsa--gfx906")
    );
}

/// Some of AMD comgr's `parse-isa-name` cases for the `amdgpu<subarch>`
/// spelling (ROCm/llvm-project amd/comgr/test-lit/parse-isa-name.c), less
/// those for gfx1250's xnack, which the ROCm fork refuses as main does.
#[test]
fn isa_names_as_comgr_reads_them() {
    for ok in [
        "amdgpu8.03-amd-amdhsa--gfx803",
        "amdgpu9.0a-amd-amdhsa--gfx90a:xnack+:sramecc-",
        "amdgpu9-amd-amdhsa--gfx9-generic",
        "amdgpu9.4-amd-amdhsa--gfx9-4-generic:xnack+:sramecc+",
        "amdgpu9.5-amd-amdhsa--gfx950",
        "amdgpu10-amd-amdhsa--gfx1012",
        "amdgpu9-amd-amdhsa--gfx906:sramecc+",
        "amdgpu12-amd-amdhsa--gfx1201",
        "amdgpu12.50-amd-amdhsa--gfx1250",
        "amdgpu9.00-amd-amdhsa--:xnack+",
        "amdgcn-amd-amdhsa--gfx1010:xnack+",
    ] {
        assert!(parse_device(ok).is_ok(), "{ok}");
    }
    for bad in [
        "amdgpu9-amd-amdhsa--gfx908",
        "amdgpu9-amd-amdhsa--gfx90a",
        "amdgpu11-amd-amdhsa--gfx1200",
        "amdgpu9.00-amd-amdhsa--gfx900:sramecc+",
        "amdgpu12.50-amd-amdhsa--gfx1250:xnack+",
        "amdgpu9.00-amd-amdhsa--gfx803",
        "amdgpu12.50-amd-amdhsa--gfx1251",
        "amdgpufoo-amd-amdhsa--gfx803",
        "amdgpu-amd-amdhsa--gfx900",
        "amdgcn-amd-amdhsa--",
    ] {
        assert!(parse_device(bad).is_err(), "{bad}");
    }
    assert_eq!(
        parse_device("amdgpu9.00-amd-amdhsa--:xnack+")
            .unwrap()
            .canonical()
            .to_string(),
        "gfx900:xnack+"
    );
}

#[test]
fn the_bundler_s_names_stay_llvm_22_s() {
    // LLVM 22's parser knows no `amdgpu` architecture: the bundler refuses it.
    for id in [
        "hipv4-amdgpu9.0a-amd-amdhsa--gfx90a",
        "hipv4-amdgpu-amd-amdhsa--gfx90a",
    ] {
        assert!(!BundleEntryId::parse(id).unwrap().triple().has_known_arch());
    }
    // What we write for LLVM 22's names is what LLVM 22 writes; a newer
    // processor is no offload architecture of LLVM 22, so its target ID is
    // dropped as LLVM 22's bundler drops it.
    for (given, written) in [
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx1250",
            "hipv4-amdgcn-amd-amdhsa--gfx1250",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx12-generic",
            "hipv4-amdgcn-amd-amdhsa--gfx12-generic",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx1170",
            "hipv4-amdgcn-amd-amdhsa--",
        ),
    ] {
        assert_eq!(normalize_entry_id(given).unwrap(), written);
    }
    for name in [
        "gfx90a:sramecc+:xnack-",
        "fiji",
        "gfx1250",
        "gfx9-4-generic",
    ] {
        assert_eq!(
            TargetId::parse(name).unwrap().canonical().to_string(),
            TargetId::parse_upstream(name)
                .unwrap()
                .canonical()
                .to_string()
        );
    }
    assert_eq!(
        TargetId::parse("fiji").unwrap().canonical().to_string(),
        "gfx803"
    );
}

#[test]
fn new_machines_in_e_flags() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/offload/hip.o");
    let mut header = ElfFile::parse(&std::fs::read(path).unwrap())
        .unwrap()
        .header()
        .to_owned();
    header.machine = 224;
    header.os_abi = 64;
    header.abi_version = 4;
    let generic = 1 << 24;
    for (flags, id) in [
        (0x050, "gfx1310"),
        (0x057, "gfx1154"),
        (0x05c, "gfx1172"),
        (0x05d, "gfx1170"),
        (0x05e, "gfx1171"),
        (0x05a | 0x800, "gfx1251:sramecc-"),
        (0x049 | 0x100 | 0x400, "gfx1250"),
        (0x05b | generic, "gfx12-5-generic"),
        (0x062 | generic, "gfx11-7-generic"),
        (0x063 | generic, "gfx13-generic"),
    ] {
        header.flags = flags;
        let target = AmdgpuTarget::from_header(&header).unwrap();
        assert_eq!(target.to_string(), id);
        // Each names a target ID LLVM's main branch reads.
        assert!(TargetId::parse_upstream(id).is_ok(), "{id}");
    }
    // sramecc set on a processor without it names no target ID.
    for flags in [0x05b | generic | 0xc00, 0x050 | 0x800] {
        header.flags = flags;
        assert!(AmdgpuTarget::from_header(&header).is_none(), "{flags:#x}");
    }
}
