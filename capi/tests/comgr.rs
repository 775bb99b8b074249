//! AMD's code object manager (comgr, `libamd-comgr-dev`) is the HIP runtime's
//! choice of code object: `amd_comgr_lookup_code_object`. A C program asks
//! it and our `clangoffload_bundle_select_entry_for_device` the same question
//! for every bundle fixture (LLVM-made, of several versions, compressed ones
//! decompressed first, since comgr 5.2 reads no compressed bundle; and
//! crafted ones) and a broad list of devices, named as HSA names them.
//! Disagreement is allowed only in documented classes:
//! - comgr does not list the device's ISA (it is newer than comgr 5.2);
//! - we load generic or SPIR-V code, which comgr 5.2 does not know;
//! - both are loadable and ours has exactly the device's target ID where
//!   comgr takes the first compatible one (the better code for the device).
//!
//! Skipped (with a notice) where comgr's header or library is missing.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use clangoffload::bundle::write_bundle;
use clangoffload::{Bundle, CompressedBundle, DecompressOptions};
use common::{build_c, root};

const DEVICES: &[&str] = &[
    "gfx803",
    "gfx900",
    "gfx900:xnack-",
    "gfx900:xnack+",
    "gfx906",
    "gfx906:xnack-",
    "gfx906:sramecc+:xnack-",
    "gfx906:sramecc-:xnack+",
    "gfx908",
    "gfx908:sramecc+:xnack-",
    "gfx90a",
    "gfx90a:xnack+",
    "gfx90a:xnack-",
    "gfx90a:sramecc+:xnack+",
    "gfx90a:sramecc-:xnack-",
    "gfx940",
    "gfx942",
    "gfx1010",
    "gfx1030",
    "gfx1031",
    "gfx1100",
    "gfx1101",
    "gfx1151",
    "gfx1200",
];

/// The bundles to ask about, as (name, uncompressed bytes).
fn bundles() -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for dir in [
        "llvm22",
        "llvm19",
        "llvm16",
        "compressed/llvm22",
        "compressed/llvm19",
        "compressed/synthetic",
    ] {
        let Ok(entries) = std::fs::read_dir(root().join("tests/fixtures").join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let bytes = match CompressedBundle::parse(&data) {
                Ok(compressed) => match compressed.decompress(&DecompressOptions::default()) {
                    Ok(bytes) => bytes,
                    Err(_) => continue,
                },
                Err(_) => data,
            };
            if Bundle::parse(&bytes).is_ok() {
                found.push((
                    format!("{dir}/{}", path.file_name().unwrap().to_string_lossy()),
                    bytes,
                ));
            }
        }
    }
    // The classes the runtime treats apart from the bundler.
    let crafted: &[(&str, &[&str])] = &[
        (
            "unknown-environment",
            &[
                "hip-amdgcn-amd-amdhsa-unknown-gfx906",
                "hip-amdgcn-amd-amdhsa--gfx908",
            ],
        ),
        (
            "hcc",
            &[
                "hcc-amdgcn-amd-amdhsa--gfx906",
                "hip-amdgcn-amd-amdhsa--gfx90a",
            ],
        ),
        (
            "exact-after-compatible",
            &[
                "hipv4-amdgcn-amd-amdhsa--gfx90a",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            ],
        ),
        (
            "features",
            &[
                "hipv4-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-",
                "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+",
            ],
        ),
        (
            "generic",
            &[
                "hipv4-amdgcn-amd-amdhsa--gfx9-generic",
                "hipv4-amdgcn-amd-amdhsa--gfx1030",
            ],
        ),
        (
            "spirv",
            &[
                "hip-spirv64-amd-amdhsa--amdgcnspirv",
                "hipv4-amdgcn-amd-amdhsa--gfx906",
            ],
        ),
        (
            "openmp",
            &[
                "openmp-amdgcn-amd-amdhsa--gfx906",
                "hipv4-amdgcn-amd-amdhsa--gfx908",
            ],
        ),
    ];
    for (name, ids) in crafted {
        let mut entries: Vec<(&[u8], &[u8])> = vec![(b"host-x86_64-unknown-linux-gnu-", b"")];
        let payloads: Vec<Vec<u8>> = (0..ids.len())
            .map(|i| vec![b'0' + i as u8; 64 + i])
            .collect();
        for (id, payload) in ids.iter().zip(&payloads) {
            entries.push((id.as_bytes(), payload));
        }
        found.push((
            format!("crafted/{name}"),
            write_bundle(&entries, 4096).unwrap(),
        ));
    }
    found
}

/// What `clangoffload_cover` says `bytes` give each of `DEVICES`: whether
/// code loads, and the chosen IDs (a device the library does not know
/// loads nothing, as `select` says).
fn coverage_cells(bytes: &[u8]) -> Vec<(bool, String)> {
    use clangoffload_capi::*;
    DEVICES
        .iter()
        .map(|device| {
            let view = clangoffload_bytes {
                ptr: device.as_ptr(),
                len: device.len(),
            };
            let mut handle = std::ptr::null_mut();
            let name = "bundle";
            // SAFETY: every input is live for the call; `handle` writable.
            let status = unsafe {
                clangoffload_cover(
                    bytes.as_ptr(),
                    bytes.len(),
                    name.as_ptr().cast(),
                    name.len(),
                    &view,
                    1,
                    0,
                    0,
                    None,
                    std::ptr::null_mut(),
                    &mut handle,
                )
            };
            if status == clangoffload_capi::status::clangoffload_status::NotFound {
                return (false, String::new());
            }
            assert_eq!(status, clangoffload_capi::status::clangoffload_status::Ok);
            // SAFETY: a live handle.
            assert_eq!(unsafe { clangoffload_coverage_file_count(handle) }, 1);
            let mut cell = std::mem::MaybeUninit::uninit();
            // SAFETY: a live handle; `cell` writable.
            let status = unsafe { clangoffload_coverage_get_cell(handle, 0, 0, cell.as_mut_ptr()) };
            assert_eq!(status, clangoffload_capi::status::clangoffload_status::Ok);
            // SAFETY: written by the call above.
            let cell = unsafe { cell.assume_init() };
            // SAFETY: a view of the live handle.
            let entries = unsafe { std::slice::from_raw_parts(cell.entries.ptr, cell.entries.len) };
            let found = (cell.loads, String::from_utf8_lossy(entries).into_owned());
            // SAFETY: released once.
            unsafe { clangoffload_coverage_free(handle) };
            found
        })
        .collect()
}

#[test]
fn comgr_and_we_load_the_same_code_object() {
    let header = Path::new("/usr/include/amd_comgr.h");
    let library = Path::new("/usr/lib/x86_64-linux-gnu/libamd_comgr.so");
    if !header.exists() || !library.exists() {
        eprintln!("NOTICE: libamd-comgr-dev not installed; comgr comparison skipped");
        return;
    }
    // The library as an input after the program (an absolute path stays
    // as it is), so that the linker resolves the program's calls to it.
    let program = build_c(
        &["capi/tests/c/comgr.c", &library.display().to_string()],
        &[],
        "comgr",
    );
    let file = common::scratch_path("comgr.bundle");
    let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (name, bytes) in bundles() {
        std::fs::write(&file, &bytes).unwrap();
        let out = Command::new(&program)
            .arg(&file)
            .args(DEVICES)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bundle = Bundle::parse(&bytes).unwrap();
        let id_at = |offset: u64| {
            bundle
                .entries()
                .map_while(Result::ok)
                .find(|e| e.offset() == offset)
                .map(|e| String::from_utf8_lossy(e.id()).into_owned())
                .unwrap_or_default()
        };
        let cells = coverage_cells(&bytes);
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let (device, known) = (f[0], f[1] == "1");
            let comgr = (f[3] != "0").then(|| f[2].parse::<u64>().unwrap());
            let ours = (f[5] != "0").then(|| f[4].parse::<u64>().unwrap());
            let how = f[6];
            let class = if comgr == ours {
                "same"
            } else if !known {
                "device unknown to comgr 5.2"
            } else if comgr.is_none() && (how == "2" || how == "3") {
                "generic or SPIR-V code (comgr 5.2 has neither)"
            } else if comgr.is_some()
                && ours.is_some()
                && id_at(ours.unwrap()).ends_with(&format!("--{device}"))
            {
                "our exact target ID over comgr's first compatible"
            } else {
                wrong.push(format!(
                    "{name} on {device}: comgr {:?} ({}), ours {:?} ({})",
                    comgr,
                    comgr.map(id_at).unwrap_or_default(),
                    ours,
                    ours.map(id_at).unwrap_or_default()
                ));
                "DISAGREEMENT"
            };
            *classes.entry(class).or_default() += 1;
            // `coverage` of the same bytes gives the same code for the
            // device as the runtime's choice above (and so as comgr's, in
            // every class but the documented ones).
            let index = DEVICES.iter().position(|d| *d == device).unwrap();
            let (loads, entries) = &cells[index];
            assert_eq!(*loads, ours.is_some(), "{name} on {device}: coverage");
            if let Some(ours) = ours {
                // An empty host payload can share the chosen one's offset.
                let at_offset: Vec<String> = bundle
                    .entries()
                    .map_while(Result::ok)
                    .filter(|e| e.offset() == ours)
                    .map(|e| String::from_utf8_lossy(e.id()).into_owned())
                    .collect();
                assert!(
                    at_offset.contains(entries),
                    "{name} on {device}: coverage {entries}"
                );
            }
            if comgr == ours {
                *classes
                    .entry("coverage's cell is comgr's choice")
                    .or_default() += 1;
            }
        }
    }
    let _ = std::fs::remove_file(&file);
    for (class, count) in &classes {
        println!("{count:5}  {class}");
    }
    assert!(
        wrong.is_empty(),
        "comgr and we disagree:\n{}",
        wrong.join("\n")
    );
    assert!(
        classes.get("same").copied().unwrap_or(0) > 100,
        "{classes:?}"
    );
}
