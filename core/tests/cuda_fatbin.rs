//! Every CUDA fixture (tests/fixtures/cuda, made by regenerate.sh there with
//! clang 22 and NVIDIA's tools) read as `cuobjdump -all` reads it: the ELF
//! and PTX files it lists, in its order and with its names, and the SHA-256
//! of what it extracts (MANIFEST.sha256), compared with what this crate
//! lists and extracts. Where cuobjdump is installed (CUOBJDUMP, or on PATH),
//! its live output is compared too; otherwise that part says NOTICE and is
//! skipped.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clangoffload::cuda_fatbin::{EntryKind, Fatbin, Sm};
use clangoffload::cuda_host::{cuobjdump_base, host_fatbins, CuobjdumpCounter};
use clangoffload::DecompressOptions;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cuda")
}

/// One extracted file: its cuobjdump name and bytes.
type Extracted = (String, Vec<u8>);

/// What cuobjdump -all -xelf all / -xptx all would write for `file`, in its
/// listing order (ELF and PTX interleaved in file order).
fn extract(name: &str, data: &[u8]) -> Vec<Extracted> {
    let base = cuobjdump_base(name);
    let mut counter = CuobjdumpCounter::default();
    let mut out = Vec::new();
    let options = DecompressOptions::default();
    for found in host_fatbins(data) {
        let fatbin: Fatbin<'_> = found.fatbin.expect("fixture fat binaries are whole");
        for entry in fatbin.entries() {
            // cuobjdump extracts neither LTO-IR (whose nvcc -dlto payload is
            // flagged zstd but is not a zstd frame) nor unknown kinds.
            if !matches!(
                entry.kind(),
                EntryKind::Elf | EntryKind::Ptx | EntryKind::Concat
            ) {
                continue;
            }
            let decoded = entry.decompress(&options).unwrap();
            if entry.kind() == EntryKind::Concat {
                for member in entry.members() {
                    let image = entry.member_image(&member, &decoded).unwrap().to_vec();
                    let id = member.identifier();
                    if let Some(n) = counter.next_name(base, id, member.kind(), member.sm()) {
                        out.push((n, image));
                    }
                }
                continue;
            }
            let sm: Sm = entry.sm();
            if let Some(n) = counter.next_name(base, entry.identifier(), entry.kind(), sm) {
                out.push((n, entry.image(&decoded).unwrap().to_vec()));
            }
        }
    }
    out
}

fn sha256(data: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum (coreutils) is needed");
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// MANIFEST.sha256: fixture -> (extracted name -> hash).
fn manifest() -> BTreeMap<String, BTreeMap<String, String>> {
    let text = std::fs::read_to_string(dir().join("MANIFEST.sha256")).unwrap();
    let mut map: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for line in text.lines() {
        let (hash, rest) = line.split_once("  ").unwrap();
        let (fixture, name) = rest.split_once(": ").unwrap();
        map.entry(fixture.into())
            .or_default()
            .insert(name.into(), hash.into());
    }
    map
}

/// The names cuobjdump listed (-lelf, then -lptx), from FIXTURE.cuobjdump.txt.
fn listed(fixture: &str) -> (Vec<String>, Vec<String>) {
    let path = dir().join(format!("{fixture}.cuobjdump.txt"));
    let text = std::fs::read_to_string(path).unwrap();
    let names = |prefix: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(|l| l.split_once(": ").unwrap().1.to_owned())
            .collect::<Vec<_>>()
    };
    (names("ELF file"), names("PTX file"))
}

fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".cuobjdump.txt"))
        .map(|n| n.trim_end_matches(".cuobjdump.txt").to_owned())
        .collect();
    names.sort();
    names
}

/// cuobjdump's listing names an `f` ELF without its suffix: compare names
/// as it lists them (the extracted names, from the manifest, are exact).
#[test]
fn every_fixture_lists_and_extracts_as_cuobjdump() {
    let manifest = manifest();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 30, "fixtures missing: {fixtures:?}");
    let mut compared = 0;
    for fixture in &fixtures {
        let data = std::fs::read(dir().join(fixture)).unwrap();
        let ours = extract(fixture, &data);
        // cuobjdump does not read OffloadBinaries (a deliberate difference,
        // docs/differences.md): this one's fatbinary image is raw-zstd's.
        let reference = match fixture.strip_suffix(".offbin") {
            Some(_) => "raw-zstd.fatbin",
            None => fixture.as_str(),
        };
        let rename =
            |n: &String| n.replacen("raw-zstd.", &format!("{}.", cuobjdump_base(fixture)), 1);
        let (elf, ptx) = listed(reference);
        let (elf, ptx): (Vec<String>, Vec<String>) = (
            elf.iter().map(rename).collect(),
            ptx.iter().map(rename).collect(),
        );
        let names = |ext: &str| -> Vec<String> {
            ours.iter()
                .filter(|(n, _)| n.ends_with(ext))
                .map(|(n, _)| n.clone())
                .collect()
        };
        assert_eq!(names(".cubin"), elf, "{fixture}: ELF listing");
        assert_eq!(names(".ptx"), ptx, "{fixture}: PTX listing");
        let expected: BTreeMap<String, String> = manifest
            .get(reference)
            .into_iter()
            .flatten()
            .map(|(n, h)| (rename(n), h.clone()))
            .collect();
        let got: BTreeMap<String, String> = ours
            .iter()
            .map(|(n, bytes)| (n.clone(), sha256(bytes)))
            .collect();
        assert_eq!(got, expected, "{fixture}: extracted bytes");
        compared += got.len();
    }
    assert!(compared >= 80, "only {compared} images compared");
}

/// With cuobjdump present, its live listing and extraction of every fixture
/// agree too: the same names and the same bytes (so the committed listings
/// and manifest are not stale, and the comparison holds for this cuobjdump).
#[test]
fn live_cuobjdump_agrees_when_present() {
    let tool = std::env::var("CUOBJDUMP").unwrap_or_else(|_| "cuobjdump".into());
    if Command::new(&tool).arg("--version").output().is_err() {
        eprintln!("NOTICE: cuobjdump not found (set CUOBJDUMP): live comparison skipped");
        return;
    }
    let scratch = std::env::temp_dir().join(format!("cuobjdump-live-{}", std::process::id()));
    for fixture in fixtures() {
        let path = dir().join(&fixture);
        let out = Command::new(&tool)
            .args(["-all", "-lelf"])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let live: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("ELF file"))
            .map(|l| l.split_once(": ").unwrap().1.to_owned())
            .collect();
        assert_eq!(live, listed(&fixture).0, "{fixture}");
        if fixture.ends_with(".offbin") {
            continue; // cuobjdump cannot read OffloadBinaries
        }
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        for what in ["-xelf", "-xptx"] {
            Command::new(&tool)
                .args(["-all", what, "all"])
                .arg(&path)
                .current_dir(&scratch)
                .output()
                .unwrap();
        }
        let mut theirs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&scratch)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        theirs.sort();
        let data = std::fs::read(&path).unwrap();
        let mut ours = extract(&fixture, &data);
        ours.sort();
        assert!(
            ours == theirs,
            "{fixture}: extracted files differ from cuobjdump's"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
