//! `clangoffload coverage` over a tree assembled from the fixtures: HIP
//! libraries (bundles, compressed bundles, skewed TUs), CUDA objects, a
//! wheel (read in place), a kpack split install, a damaged library and a
//! text file. Every cell agrees with `select` on that file and device (a
//! wheel member taken out of the wheel for it); a damaged file is a finding,
//! not the end of the run; the page's matrix is the JSON's cells.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{clangoffload, fixtures};
use serde_json::Value;

const DEVICES: &[&str] = &[
    "gfx906:sramecc+:xnack-",
    "gfx90a:xnack+",
    "gfx90a:sramecc+:xnack-",
    "gfx1100",
    "sm_75",
    "sm_86",
    "sm_120",
];

/// The tree, and the path of its damaged library.
fn tree(root: &Path) -> PathBuf {
    let hip = root.join("pkg/hip");
    let cuda = root.join("pkg/cuda");
    std::fs::create_dir_all(&hip).unwrap();
    std::fs::create_dir_all(&cuda).unwrap();
    for lib in ["libone.so", "libtwoz.so", "libskew.so", "libxnack.so"] {
        std::fs::copy(fixtures().join("kpack/inputs").join(lib), hip.join(lib)).unwrap();
    }
    for obj in ["clang-multi-ptx.o", "nvcc-a-sm80.o"] {
        std::fs::copy(fixtures().join("cuda").join(obj), cuda.join(obj)).unwrap();
    }
    std::fs::copy(
        fixtures().join("coverage/sample-0.1-py3-none-linux_x86_64.whl"),
        root.join("pkg/sample-0.1-py3-none-linux_x86_64.whl"),
    )
    .unwrap();
    std::fs::write(hip.join("README.txt"), "no device code here\n").unwrap();
    // A compressed bundle cut short inside its stream.
    let whole = std::fs::read(fixtures().join("kpack/inputs/libtwoz.so")).unwrap();
    let at = whole.windows(4).position(|w| w == b"CCOB").unwrap();
    let mut damaged = whole.clone();
    damaged[at + 40..at + 120].fill(0xAB);
    std::fs::write(hip.join("libdamaged.so"), &damaged).unwrap();
    // A kpack split install: the zstd split's host and archives (real names).
    let stage = root.join("pkg/stage");
    for dir in ["lib", ".kpack"] {
        std::fs::create_dir_all(stage.join(dir)).unwrap();
    }
    std::fs::copy(
        fixtures().join("kpack/zstd/lib/libtwo.so"),
        stage.join("lib/libtwo-split.so"),
    )
    .unwrap();
    for file in std::fs::read_dir(fixtures().join("kpack/zstd/.kpack")).unwrap() {
        let file = file.unwrap();
        let name = file
            .file_name()
            .to_string_lossy()
            .replace("gfx90a_xnack", "gfx90a:xnack");
        std::fs::copy(file.path(), stage.join(".kpack").join(name)).unwrap();
    }
    hip.join("libdamaged.so")
}

fn coverage(args: &[&str]) -> Value {
    let mut all = vec!["coverage"];
    all.extend_from_slice(args);
    for device in DEVICES {
        all.extend(["--device", device]);
    }
    all.push("--json");
    let out = clangoffload(&all);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What `select` says `file` gives `device`: whether every container of
/// the device's vendor gives code, and the chosen IDs; `None` when the file
/// has no code of that vendor.
fn select(file: &Path, device: &str) -> Option<(bool, BTreeSet<String>)> {
    let out = clangoffload(&[
        "select".as_ref(),
        file.as_os_str(),
        "--device".as_ref(),
        device.as_ref(),
        "--json".as_ref(),
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cuda = device.starts_with("sm_");
    let ours: Vec<&Value> = report["choices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| (c["kind"] == "CUDA fat binary") == cuda)
        .collect();
    if ours.is_empty() {
        return None;
    }
    let loads = ours.iter().all(|c| c["loads"] == true);
    let entries = ours
        .iter()
        .filter_map(|c| c["entry"].as_str().map(str::to_owned))
        .collect();
    Some((loads, if loads { entries } else { BTreeSet::new() }))
}

/// `file` itself, or a wheel member taken out into `scratch`.
fn on_disk(file: &str, scratch: &Path) -> PathBuf {
    let Some((wheel, member)) = file.split_once('!') else {
        return PathBuf::from(file);
    };
    let data = std::fs::read(wheel).unwrap();
    let zip = clangoffload::zip::Zip::parse(&data).unwrap();
    let found = zip
        .members()
        .map(Result::unwrap)
        .find(|m| m.name == member.as_bytes())
        .unwrap();
    let out = scratch.join(member.rsplit('/').next().unwrap());
    std::fs::write(&out, found.contents(1 << 30).unwrap()).unwrap();
    out
}

#[test]
fn every_cell_agrees_with_select_on_that_file_and_device() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let pkg = tmp.path().join("pkg");
    let report = coverage(&[pkg.to_str().unwrap()]);
    let files: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    // 4 + 1 damaged HIP libraries, 2 CUDA objects, 3 wheel members, the
    // split host; not the text file.
    assert_eq!(files.len(), 11, "{files:#?}");
    assert!(files
        .iter()
        .any(|f| f.ends_with(".whl!sample/lib/libtwoz.so")));
    assert!(!files.iter().any(|f| f.ends_with("README.txt")));
    let cells = report["cells"].as_array().unwrap();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut checked = 0;
    for cell in cells {
        let (file, device) = (
            cell["file"].as_str().unwrap(),
            cell["device"].as_str().unwrap(),
        );
        let path = on_disk(file, &scratch);
        let want = select(&path, device);
        let got_entries: BTreeSet<String> = cell["entry"]
            .as_str()
            .map(|e| e.split(", ").map(str::to_owned).collect())
            .unwrap_or_default();
        match want {
            None => assert_eq!(cell["loads"], false, "{file} {device}: {cell}"),
            Some((loads, entries)) => {
                assert_eq!(cell["loads"], loads, "{file} {device}: {cell}");
                assert_eq!(got_entries, entries, "{file} {device}");
            }
        }
        assert!(!cell["reason"].as_str().unwrap().is_empty(), "{cell}");
        checked += 1;
    }
    assert_eq!(
        checked,
        11 * DEVICES.len(),
        "one cell per readable file and device"
    );
    // What the cells say for a few files, as the runtimes decide.
    let cell = |suffix: &str, device: &str| {
        cells
            .iter()
            .find(|c| c["file"].as_str().unwrap().ends_with(suffix) && c["device"] == device)
            .unwrap()
    };
    assert_eq!(
        cell("hip/libxnack.so", "gfx90a:xnack+")["entry"],
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
    );
    // TU0 of libskew has no gfx906 code: its kernels cannot launch there.
    assert_eq!(
        cell("hip/libskew.so", "gfx906:sramecc+:xnack-")["loads"],
        false
    );
    assert_eq!(cell("cuda/clang-multi-ptx.o", "sm_120")["how"], "ptx");
    assert_eq!(cell("cuda/clang-multi-ptx.o", "sm_86")["entry"], "sm_80");
    assert_eq!(
        cell("stage/lib/libtwo-split.so", "gfx906:sramecc+:xnack-")["loads"],
        true
    );
    assert_eq!(cell("stage/lib/libtwo-split.so", "gfx1100")["loads"], false);
}

#[test]
fn damage_and_costs_are_findings_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let damaged = tree(tmp.path());
    let report = coverage(&[tmp.path().join("pkg").to_str().unwrap(), "--verify"]);
    let files = report["files"].as_array().unwrap();
    let of = |suffix: &str| {
        files
            .iter()
            .find(|f| f["file"].as_str().unwrap().ends_with(suffix))
            .unwrap()
    };
    let bad = of(damaged.file_name().unwrap().to_str().unwrap());
    let said = format!("{}{}", bad["error"], bad["findings"]);
    assert!(said.contains("0x"), "a located error: {said}");
    assert!(of("hip/libone.so")["findings"][0]
        .as_str()
        .unwrap()
        .contains("stored uncompressed"));
    let nvcc = of("cuda/nvcc-a-sm80.o");
    assert_eq!(nvcc["targets"][0]["target"], "sm_80");
    assert!(nvcc["targets"][0]["bytes"].as_u64().unwrap() > 0);
    // libskew lacks gfx906 code that the other HIP libraries have.
    let gaps = report["gaps"].as_array().unwrap();
    assert!(gaps.iter().any(|g| g["device"] == "gfx906:sramecc+:xnack-"
        && g["not_loading"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().ends_with("libskew.so"))));
}

#[test]
fn the_page_shows_the_jsons_cells() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let pkg = tmp.path().join("pkg");
    let page = tmp.path().join("coverage.html");
    let report = coverage(&[pkg.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script src") && !html.contains("http://") && !html.contains("https://")
    );
    let unescape = |s: &str| {
        s.replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let mut shown = Vec::new();
    for td in html.split("<td class=\"").skip(1) {
        let attr = |name: &str| {
            let start = td.find(&format!("{name}=\"")).map(|i| i + name.len() + 2)?;
            let end = td[start..].find('"')? + start;
            Some(unescape(&td[start..end]))
        };
        if let (Some(file), Some(device), Some(loads)) =
            (attr("data-file"), attr("data-device"), attr("data-loads"))
        {
            shown.push((file, device, loads == "true"));
        }
    }
    let cells: Vec<(String, String, bool)> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_owned(),
                c["device"].as_str().unwrap().to_owned(),
                c["loads"].as_bool().unwrap(),
            )
        })
        .collect();
    let readable: Vec<_> = shown
        .iter()
        .filter(|(file, _, _)| cells.iter().any(|c| &c.0 == file))
        .cloned()
        .collect();
    assert_eq!(readable, cells);
}

#[test]
fn directories_reached_twice_are_walked_once() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    std::os::unix::fs::symlink(tmp.path().join("pkg/hip"), tmp.path().join("pkg/again")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("pkg"), tmp.path().join("pkg/hip/loop")).unwrap();
    // A broken link is a finding of its own; the rest is covered.
    std::os::unix::fs::symlink(
        tmp.path().join("nowhere"),
        tmp.path().join("pkg/hip/broken"),
    )
    .unwrap();
    let report = coverage(&[tmp.path().join("pkg").to_str().unwrap()]);
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 12);
    let broken = files
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("broken"))
        .unwrap();
    assert!(
        broken["error"].as_str().unwrap().contains("No such file"),
        "{broken}"
    );
    let missing = clangoffload(&["coverage", tmp.path().join("absent").to_str().unwrap()]);
    assert!(!missing.status.success());
}

#[test]
fn the_default_list_gives_what_asking_for_its_devices_gives() {
    // Without --device each file is read once, and again only where a
    // later file brought a device of its vendor: the report is the one the
    // final list asked for outright gives (the kpack split host, the
    // wheel, damaged and plain files among them).
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let pkg = tmp.path().join("pkg");
    let default = clangoffload(&["coverage", pkg.to_str().unwrap(), "--json"]);
    assert!(default.status.success(), "{default:?}");
    let default: Value = serde_json::from_slice(&default.stdout).unwrap();
    let devices: Vec<&str> = default["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    // Devices the fixtures target beyond the current GPUs joined the list.
    assert!(devices.contains(&"gfx90a:xnack+"), "{devices:?}");
    let mut args = vec!["coverage", pkg.to_str().unwrap(), "--json"];
    for device in &devices {
        args.extend(["--device", device]);
    }
    let given = clangoffload(&args);
    assert!(given.status.success(), "{given:?}");
    let given: Value = serde_json::from_slice(&given.stdout).unwrap();
    assert_eq!(default, given);
    assert!(default["cells"].as_array().unwrap().len() >= 10 * devices.len());
}
