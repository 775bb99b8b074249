//! `list`, `extract` and `inspect` of kpack archives alone, on rocm-kpack's
//! own splitter's output (tests/fixtures/kpack, both schemes): the entries
//! its own reader lists (listing.txt), and every code object the bytes of
//! the bundle entry it was split from in the library before the split.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{clangoffload, fixtures};

fn kpack_dir() -> PathBuf {
    fixtures().join("kpack")
}

/// listing.txt: archive → its lines (key, arch, ordinal, size, md5).
fn listing() -> BTreeMap<String, Vec<Vec<String>>> {
    let text = std::fs::read_to_string(kpack_dir().join("listing.txt")).unwrap();
    let mut archives: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<String> = line.split(' ').map(str::to_owned).collect();
        archives
            .entry(f[0].clone())
            .or_default()
            .push(f[1..].to_vec());
    }
    archives
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The code objects of `library` before the split, as `extract` writes
/// them: for each architecture (the entry ID after its last `--`), in file
/// order, the bytes of each.
fn before_the_split(library: &str, out: &Path) -> BTreeMap<String, Vec<Vec<u8>>> {
    let input = kpack_dir().join("inputs").join(library);
    let dir = out.join(library);
    let done = clangoffload(&[
        "extract".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        dir.as_os_str(),
    ]);
    assert!(done.status.success(), "{done:?}");
    let mut by_arch: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for path in lines(&done.stdout) {
        let name = Path::new(&path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let Some((_, arch)) = name.rsplit_once("--") else {
            continue;
        };
        if name.contains(".host-") {
            continue;
        }
        by_arch
            .entry(arch.to_owned())
            .or_default()
            .push(std::fs::read(&path).unwrap());
    }
    by_arch
}

#[test]
fn every_entry_is_listed_and_extracted_as_before_the_split() {
    let out = tempfile::tempdir().unwrap();
    let mut originals: BTreeMap<String, BTreeMap<String, Vec<Vec<u8>>>> = BTreeMap::new();
    let mut checked = 0;
    for (archive, want) in listing() {
        let path = kpack_dir().join(&archive);
        let listed = clangoffload(&["list".as_ref(), path.as_os_str()]);
        assert!(listed.status.success(), "{listed:?}");
        let expected: Vec<String> = want
            .iter()
            .map(|w| format!("{}: hipv4-amdgcn-amd-amdhsa--{}", w[0], w[1]))
            .collect();
        assert_eq!(lines(&listed.stdout), expected, "{archive}");

        let dir = out.path().join(archive.replace('/', "_"));
        let done = clangoffload(&[
            "extract".as_ref(),
            path.as_os_str(),
            "-o".as_ref(),
            dir.as_os_str(),
        ]);
        assert!(done.status.success(), "{done:?}");
        let written = lines(&done.stdout);
        assert_eq!(written.len(), want.len(), "{archive}");
        for (file, w) in written.iter().zip(&want) {
            let bytes = std::fs::read(file).unwrap();
            assert_eq!(bytes.len().to_string(), w[3], "{file}");
            let md5 = clangoffload::compressed::truncated_md5(&bytes);
            assert_eq!(format!("{md5:016x}"), w[4], "{file}");
            // The same bytes as the library held before the split: key
            // `<prefix>/<dir>/<library>#<k>` is the k-th code object of
            // that architecture in the library's file order.
            let (binary, k) = w[0].rsplit_once('#').unwrap();
            let library = binary.rsplit('/').next().unwrap();
            let mine = originals
                .entry(library.to_owned())
                .or_insert_with(|| before_the_split(library, out.path()));
            let k: usize = k.parse().unwrap();
            assert_eq!(
                Some(&bytes),
                mine.get(&w[1]).and_then(|v| v.get(k)),
                "{file}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 40);
}

#[test]
fn a_damaged_entry_costs_only_itself() {
    let out = tempfile::tempdir().unwrap();
    let path = kpack_dir().join("zstd/.kpack/test_lib_gfx906.kpack");
    let mut data = std::fs::read(&path).unwrap();
    // The third frame's first bytes (after the count and two frames).
    let mut at = 64 + 4;
    for _ in 0..2 {
        let size = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        at += 4 + size;
    }
    for b in &mut data[at + 4..at + 12] {
        *b ^= 0xa5;
    }
    let damaged = out.path().join("damaged.kpack");
    std::fs::write(&damaged, &data).unwrap();
    let dir = out.path().join("x");
    let done = clangoffload(&[
        "extract".as_ref(),
        damaged.as_os_str(),
        "-o".as_ref(),
        dir.as_os_str(),
    ]);
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    let written = lines(&done.stdout);
    assert_eq!(written.len(), 8, "{written:?}");
    assert!(written.iter().all(|p| !p.contains(".2.pkg_stage")));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("entry 2 (pkg/stage/lib/libtwoz.so#0, gfx906; table at offset"),
        "{stderr}"
    );
    assert!(stderr.contains("not written"), "{stderr}");
    let inspected = clangoffload(&["inspect".as_ref(), "--verify".as_ref(), damaged.as_os_str()]);
    assert_eq!(inspected.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&inspected.stdout).contains("damaged:"));
}

#[test]
fn inspect_json_describes_the_archive() {
    let path = kpack_dir().join("zstd/.kpack/test_lib_gfx90a_xnack+.kpack");
    let done = clangoffload(&["inspect".as_ref(), "--json".as_ref(), path.as_os_str()]);
    assert!(done.status.success(), "{done:?}");
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let k = &report["kpack"];
    assert_eq!(k["scheme"], "zstd-per-kernel");
    assert_eq!(k["arches"], serde_json::json!(["gfx90a:xnack+"]));
    assert_eq!(k["group_name"], "test_lib");
    let entries = k["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["key"], "pkg/stage/lib/libxnack.so#0");
    assert_eq!(entries[0]["id"], "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
    assert_eq!(entries[0]["original_size"], 4592);
}

/// A split host read through to its archives (found from its marker,
/// relative to the host): `list` gives each record's IDs, `extract` each
/// code object, the bytes of the bundle entry the splitter keyed it by
/// (record k, architecture a: the k-th code object for a in the library
/// before the split). The executable whose pointer the split zeroed is an
/// error naming its record; `--kpack-path` names archives in place of the
/// marker's.
#[test]
fn a_split_host_reads_through_to_its_archives() {
    let out = tempfile::tempdir().unwrap();
    for scheme in ["none", "zstd"] {
        for host in [
            "lib/libone.so",
            "lib/libtwo.so",
            "lib/libtwoz.so",
            "lib/libxnack.so",
            "lib/libskew.so",
            "bin/hip-pie",
        ] {
            let library = host.rsplit('/').next().unwrap();
            let before = before_the_split(library, &out.path().join(scheme));
            let path = kpack_dir().join(scheme).join(host);
            let listed = clangoffload(&["list".as_ref(), path.as_os_str()]);
            assert!(listed.status.success(), "{listed:?}");
            let mut ids = lines(&listed.stdout);
            ids.sort();
            let mut want: Vec<String> = before
                .iter()
                .flat_map(|(arch, objects)| {
                    objects
                        .iter()
                        .map(move |_| format!("hipv4-amdgcn-amd-amdhsa--{arch}"))
                })
                .collect();
            want.sort();
            assert_eq!(ids, want, "{scheme}/{host}");

            let dir = out.path().join(format!("{scheme}-{library}"));
            let done = clangoffload(&[
                "extract".as_ref(),
                path.as_os_str(),
                "-o".as_ref(),
                dir.as_os_str(),
            ]);
            assert!(done.status.success(), "{done:?}");
            // The same files and lines on one thread or three.
            for jobs in ["1", "3"] {
                let again = out.path().join(format!("{scheme}-{library}-j{jobs}"));
                let other = clangoffload(&[
                    "extract".as_ref(),
                    path.as_os_str(),
                    "-o".as_ref(),
                    again.as_os_str(),
                    "-j".as_ref(),
                    jobs.as_ref(),
                ]);
                let moved = String::from_utf8_lossy(&other.stdout)
                    .replace(again.to_str().unwrap(), dir.to_str().unwrap());
                assert_eq!(
                    moved.as_bytes(),
                    &done.stdout[..],
                    "{scheme}/{host} -j {jobs}"
                );
            }
            let written = lines(&done.stdout);
            assert_eq!(written.len(), want.len(), "{scheme}/{host}");
            for file in written {
                let name = Path::new(&file)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let (left, id) = name.split_once(".hipv4-").unwrap();
                let arch = id.rsplit_once("--").unwrap().1;
                let k: usize = left.rsplit_once('_').unwrap().1.parse().unwrap();
                assert_eq!(
                    Some(&std::fs::read(&file).unwrap()),
                    before.get(arch).and_then(|v| v.get(k)),
                    "{file}"
                );
            }
        }
        let nopie = kpack_dir().join(scheme).join("bin/hip-nopie");
        let listed = clangoffload(&["list".as_ref(), nopie.as_os_str()]);
        assert_eq!(listed.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&listed.stderr).contains("HIPK record 0 at offset"));
    }
    let only = kpack_dir().join("zstd/.kpack/test_lib_gfx906.kpack");
    let host = kpack_dir().join("none/lib/libone.so");
    let listed = clangoffload(&[
        "list".as_ref(),
        "--kpack-path".as_ref(),
        only.as_os_str(),
        host.as_os_str(),
    ]);
    assert!(listed.status.success(), "{listed:?}");
    assert_eq!(lines(&listed.stdout), ["hipv4-amdgcn-amd-amdhsa--gfx906"]);
}

/// `inspect` of a split host: `.hip_fatbin` moved, each record's key and
/// the code objects its archives hold, the zeroed pointer named.
#[test]
fn inspect_shows_a_split_host_read_through() {
    let host = kpack_dir().join("zstd/lib/libtwo.so");
    let done = clangoffload(&["inspect".as_ref(), "--json".as_ref(), host.as_os_str()]);
    assert!(done.status.success(), "{done:?}");
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let k = &report["kpack"];
    assert_eq!(k["fatbin_moved"]["address"], 0x1000);
    let records = k["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["co_index"], i);
        assert_eq!(r["key"], format!("pkg/stage/lib/libtwo.so#{i}"));
        let ids: Vec<&str> = r["code_objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                "hipv4-amdgcn-amd-amdhsa--gfx906",
                "hipv4-amdgcn-amd-amdhsa--gfx90a"
            ]
        );
    }
    let nopie = kpack_dir().join("zstd/bin/hip-nopie");
    let done = clangoffload(&["inspect".as_ref(), nopie.as_os_str()]);
    let text = String::from_utf8_lossy(&done.stdout);
    assert!(
        text.contains(".hip_fatbin: moved to kpack archives"),
        "{text}"
    );
    assert!(
        text.contains("kpack record 0 (code object 0) at offset 0x11f0: no marker"),
        "{text}"
    );
}

/// `check` on rocm-kpack's output: each defect kpack.md reproduced is found
/// where it is (the zeroed pointer, libskew's record without gfx906, the
/// xnack archives shadowing the base one, libtwoz's stale bundle), and a
/// clean host with clean archives gives nothing and exit 0.
#[test]
fn check_finds_the_defects_the_runtime_hides() {
    let tree = kpack_dir().join("zstd");
    let done = clangoffload(&["check".as_ref(), tree.as_os_str()]);
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    let out = String::from_utf8_lossy(&done.stdout);
    for wanted in [
        "bin/hip-nopie': HIPK record 0 at offset 0x11f0: its pointer is 0",
        "lib/libskew.so': record 1 has no code object for gfx906",
        "lib/libtwo.so': record 1 on gfx90a:xnack-: rocm-kpack's shipped loader stops at",
        "lib/libtwoz.so': a container at offset 0x1000 left by the split",
    ] {
        assert!(out.contains(wanted), "{wanted}: {out}");
    }
    assert!(
        !out.contains("libxnack.so': record"),
        "libxnack's own archives hold it: {out}"
    );
    let host = tree.join("lib/libtwo.so");
    let base = tree.join(".kpack/test_lib_gfx90a.kpack");
    let other = tree.join(".kpack/test_lib_gfx906.kpack");
    let clean = clangoffload(&[
        "check".as_ref(),
        host.as_os_str(),
        "--kpack-path".as_ref(),
        base.as_os_str(),
        "--kpack-path".as_ref(),
        other.as_os_str(),
    ]);
    assert!(clean.status.success(), "{clean:?}");
    assert!(clean.stdout.is_empty());
}
