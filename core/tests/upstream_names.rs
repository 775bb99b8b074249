//! AMDGPU names LLVM's main branch knows and LLVM 22 does not (gfx1154,
//! gfx1170–gfx1172, gfx1310, gfx11-7-generic, gfx12-5-generic,
//! gfx13-generic; gfx1250/gfx1251 with `xnack` and `sramecc`): read where we
//! read code (the runtime's choice of code object for a device), while the
//! target IDs the bundler checks and writes stay LLVM 22's.

#![allow(clippy::unwrap_used)]

use clangoffload::bundle::write_bundle;
use clangoffload::id::{parse_device, select_for_device, DeviceMatch, TargetId};
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

#[test]
fn newer_devices_get_their_code_or_their_family_s() {
    let data = bundle(&[
        "host-x86_64-unknown-linux-gnu-",
        "hipv4-amdgcn-amd-amdhsa--gfx11-7-generic",
        "hipv4-amdgcn-amd-amdhsa--gfx1310",
        "hipv4-amdgcn-amd-amdhsa--gfx12-5-generic:xnack-",
        "hipv4-amdgcn-amd-amdhsa--gfx1100",
    ]);
    assert_eq!(
        chosen(&data, "gfx1310"),
        Some((
            DeviceMatch::Native,
            "hipv4-amdgcn-amd-amdhsa--gfx1310".into()
        ))
    );
    assert_eq!(
        chosen(&data, "gfx1172"),
        Some((
            DeviceMatch::Generic,
            "hipv4-amdgcn-amd-amdhsa--gfx11-7-generic".into()
        ))
    );
    assert_eq!(
        chosen(&data, "gfx1251:xnack-"),
        Some((
            DeviceMatch::Generic,
            "hipv4-amdgcn-amd-amdhsa--gfx12-5-generic:xnack-".into()
        ))
    );
    // xnack- code never runs where xnack is on.
    assert_eq!(chosen(&data, "gfx1250:xnack+"), None);
    // gfx1154 is of the gfx11 family, whose generic code is not here.
    assert_eq!(chosen(&data, "gfx1154"), None);
}

#[test]
fn the_bundler_s_target_ids_stay_llvm_22_s() {
    for name in ["gfx1170", "gfx1310", "gfx12-5-generic", "gfx1250:xnack+"] {
        assert!(TargetId::parse(name).is_err(), "{name}");
        assert!(TargetId::parse_upstream(name).is_ok(), "{name}");
    }
    assert_eq!(
        TargetId::parse("gfx1250").unwrap().canonical().to_string(),
        "gfx1250"
    );
}
