//! `clangoffload kpack split` against rocm-kpack's own splitter
//! (tests/fixtures/kpack: the hosts before, and its output in both
//! schemes): the same hosts byte for byte (but the non-PIE executable's
//! pointer, which rocm-kpack zeroes), the same archives where code objects
//! are stored, the same tables and code objects with zstd; our split hosts
//! read back through our archives give the code objects of the hosts
//! before the split; and the refusals.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use common::{clangoffload, fixtures};

fn kpack_dir() -> PathBuf {
    fixtures().join("kpack")
}

/// The hosts in the order rocm-kpack's splitter met them (which fixed the
/// archives' ordinals), under the prefix's directories.
const HOSTS: [&str; 7] = [
    "lib/libone.so",
    "lib/libskew.so",
    "lib/libtwoz.so",
    "lib/libtwo.so",
    "lib/libxnack.so",
    "bin/hip-pie",
    "bin/hip-nopie",
];

/// The inputs laid out as the splitter's artifact had them: `root/lib`,
/// `root/bin`.
fn artifact(root: &Path) {
    for host in HOSTS {
        let to = root.join(host);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let name = host.rsplit('/').next().unwrap();
        std::fs::copy(kpack_dir().join("inputs").join(name), &to).unwrap();
    }
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `kpack split` of every host under `root` into `out`.
fn split(root: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<OsString> = vec!["kpack".into(), "split".into()];
    args.extend(HOSTS.iter().map(|h| root.join(h).into_os_string()));
    for a in [
        "--group",
        "test_lib",
        "--prefix",
        "pkg/stage",
        "--root",
        root.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]
    .iter()
    .chain(extra)
    {
        args.push(a.into());
    }
    clangoffload(&args)
}

fn archive_name(arch: &str) -> String {
    format!("test_lib_{}.kpack", arch.replace(':', "_"))
}

const ARCHES: [&str; 4] = ["gfx906", "gfx90a", "gfx90a:xnack+", "gfx90a:xnack-"];

#[test]
fn the_split_is_rocm_kpacks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("art");
    artifact(&root);
    for scheme in ["none", "zstd"] {
        let out = tmp.path().join(scheme);
        let done = split(&root, &out, &["--scheme", scheme, "--keys", "rocm-kpack"]);
        assert!(done.status.success(), "{done:?}");
        // Every file written is announced: the hosts, then the archives.
        let mut want: Vec<String> = HOSTS
            .iter()
            .map(|h| out.join(h).display().to_string())
            .collect();
        want.extend(ARCHES.iter().map(|a| {
            out.join(format!(".kpack/test_lib_{a}.kpack"))
                .display()
                .to_string()
        }));
        assert_eq!(lines(&done.stdout), want, "{scheme}");
        for host in HOSTS {
            let ours = std::fs::read(out.join(host)).unwrap();
            let theirs = std::fs::read(kpack_dir().join(scheme).join(host)).unwrap();
            if host == "bin/hip-nopie" {
                // rocm-kpack zeroes the record's pointer (no relocation
                // fills it in a position-dependent executable); ours keeps
                // the marker's address: 8 bytes differ, nothing else.
                assert_eq!(ours.len(), theirs.len());
                let differ: Vec<usize> =
                    (0..ours.len()).filter(|&i| ours[i] != theirs[i]).collect();
                let at = differ[0] & !7;
                assert!(differ.iter().all(|&i| i >= at && i < at + 8), "{differ:?}");
                assert_eq!(&theirs[at..at + 8], &[0; 8]);
                assert_eq!(&ours[at - 8..at - 4], b"HIPK");
            } else {
                assert!(ours == theirs, "{scheme}/{host} differs from rocm-kpack's");
            }
            // The input is untouched.
            let name = host.rsplit('/').next().unwrap();
            assert!(
                std::fs::read(root.join(host)).unwrap()
                    == std::fs::read(kpack_dir().join("inputs").join(name)).unwrap()
            );
        }
        for arch in ARCHES {
            let ours = out.join(format!(".kpack/test_lib_{arch}.kpack"));
            let theirs = kpack_dir()
                .join(scheme)
                .join(".kpack")
                .join(archive_name(arch));
            if scheme == "none" {
                assert!(
                    std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
                    "{arch}: differs from rocm-kpack's"
                );
            } else {
                assert_eq!(entries(&ours), entries(&theirs), "{arch}");
            }
        }
    }
}

/// An archive's table (key, architecture, ID, ordinal, size) and each code
/// object's bytes, as `inspect --json` and `extract` give them.
fn entries(archive: &Path) -> Vec<(String, String, String, u64, u64, Vec<u8>)> {
    let done = clangoffload(&["inspect".as_ref(), "--json".as_ref(), archive.as_os_str()]);
    assert!(done.status.success(), "{done:?}");
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let out = tempfile::tempdir().unwrap();
    let done = clangoffload(&[
        "extract".as_ref(),
        archive.as_os_str(),
        "-o".as_ref(),
        out.path().as_os_str(),
    ]);
    assert!(done.status.success(), "{done:?}");
    let files = lines(&done.stdout);
    let table = report["kpack"]["entries"].as_array().unwrap();
    assert_eq!(files.len(), table.len());
    table
        .iter()
        .zip(files)
        .map(|(e, file)| {
            (
                e["key"].as_str().unwrap().to_owned(),
                e["arch"].as_str().unwrap().to_owned(),
                e["id"].as_str().unwrap().to_owned(),
                e["ordinal"].as_u64().unwrap(),
                e["original_size"].as_u64().unwrap(),
                std::fs::read(file).unwrap(),
            )
        })
        .collect()
}

/// `extract` of `file` (a host before the split, or one split, read through
/// its archives): each architecture's code objects, sorted.
fn code_objects(file: &Path, out: &Path) -> BTreeMap<String, Vec<Vec<u8>>> {
    let done = clangoffload(&[
        "extract".as_ref(),
        file.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(done.status.success(), "{done:?}");
    let mut by_arch: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for path in lines(&done.stdout) {
        if path.contains(".host-") {
            continue;
        }
        let arch = path.rsplit_once("--").unwrap().1.to_owned();
        by_arch
            .entry(arch)
            .or_default()
            .push(std::fs::read(&path).unwrap());
    }
    for objects in by_arch.values_mut() {
        objects.sort();
    }
    by_arch
}

/// Keyed by record, every split host reads back (through the archives its
/// marker names) as the host it was: the same IDs and bytes, in both
/// schemes; `list` gives the same IDs.
#[test]
fn split_hosts_read_back_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("art");
    artifact(&root);
    for scheme in ["none", "zstd"] {
        let out = tmp.path().join(scheme);
        let done = split(&root, &out, &["--scheme", scheme, "--keys", "record"]);
        assert!(done.status.success(), "{done:?}");
        for host in HOSTS {
            let x = tmp
                .path()
                .join(format!("x-{scheme}-{}", host.replace('/', "-")));
            let before = code_objects(&root.join(host), &x.join("before"));
            let after = code_objects(&out.join(host), &x.join("after"));
            assert_eq!(before, after, "{scheme}/{host}");
            let listed = |f: &Path| {
                let done = clangoffload(&["list".as_ref(), f.as_os_str()]);
                assert!(done.status.success(), "{done:?}");
                let mut ids: Vec<String> = lines(&done.stdout)
                    .into_iter()
                    .filter(|l| !l.starts_with("host-"))
                    .collect();
                ids.sort();
                ids
            };
            assert_eq!(listed(&root.join(host)), listed(&out.join(host)), "{host}");
        }
    }
}

/// A host whose translation units hold different architectures is refused
/// by default, naming the record and the architecture, and nothing is
/// written; `--keys record` keys its code objects as the runtime asks.
#[test]
fn a_host_rocm_kpack_would_misnumber_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("art");
    artifact(&root);
    let out = tmp.path().join("out");
    let done = split(&root, &out, &[]);
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(stderr.contains("libskew.so"), "{stderr}");
    assert!(
        stderr.contains("record 1's gfx906 code object: rocm-kpack keys it #0"),
        "{stderr}"
    );
    assert!(stderr.contains("at offset"), "{stderr}");
    assert!(done.stdout.is_empty());
    assert!(!out.exists(), "nothing is written");

    let done = split(&root, &out, &["--keys", "record"]);
    assert!(done.status.success(), "{done:?}");
    let gfx906 = entries(&out.join(".kpack/test_lib_gfx906.kpack"));
    let keys: Vec<&str> = gfx906.iter().map(|e| e.0.as_str()).collect();
    assert!(keys.contains(&"pkg/stage/lib/libskew.so#1"), "{keys:?}");
    assert!(!keys.contains(&"pkg/stage/lib/libskew.so#0"), "{keys:?}");
}

#[test]
fn outputs_are_created_exclusively_and_inputs_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("art");
    artifact(&root);
    let out = tmp.path().join("out");
    let one = |out: &Path, extra: &[&str]| {
        let mut args: Vec<OsString> = vec!["kpack".into(), "split".into()];
        args.push(root.join("lib/libone.so").into());
        for a in ["--group", "g", "--root", root.to_str().unwrap(), "-o"] {
            args.push(a.into());
        }
        args.push(out.into());
        args.extend(extra.iter().map(OsString::from));
        clangoffload(&args)
    };
    assert!(one(&out, &[]).status.success());
    let again = one(&out, &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists (--force to overwrite)"));
    let forced = one(&out, &["--force"]);
    assert!(forced.status.success(), "{forced:?}");
    // The marker names the binary by its path under the root, one level down.
    let host = std::fs::read(out.join("lib/libone.so")).unwrap();
    let needle = b"../.kpack/g_@GFXARCH@.kpack";
    assert!(host.windows(needle.len()).any(|w| w == needle));
    assert!(out.join(".kpack/g_gfx906.kpack").is_file());
    // A host given twice: refused before anything is written.
    let twice = tmp.path().join("twice");
    let mut args: Vec<OsString> = vec!["kpack".into(), "split".into()];
    args.push(root.join("lib/libone.so").into());
    args.push(root.join("lib/libone.so").into());
    for a in ["--group", "g", "-o", twice.to_str().unwrap()] {
        args.push(a.into());
    }
    let done = clangoffload(&args);
    assert_eq!(done.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&done.stderr).contains("written twice"));
    assert!(!twice.exists());
    // The input as an output: refused, even with --force.
    let onto = one(&root, &["--force"]);
    assert_eq!(onto.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&onto.stderr).contains("is an input"));
    assert!(
        std::fs::read(root.join("lib/libone.so")).unwrap()
            == std::fs::read(kpack_dir().join("inputs/libone.so")).unwrap()
    );
}

#[test]
fn malformed_hosts_give_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let input = std::fs::read(kpack_dir().join("inputs/libtwo.so")).unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("cut", input[..input.len() / 2].to_vec(), "at offset"),
        (
            "text",
            b"not a host".to_vec(),
            "not a 64-bit little-endian x86-64 ELF",
        ),
        (
            "split",
            std::fs::read(kpack_dir().join("none/lib/libtwo.so")).unwrap(),
            "split already",
        ),
        (
            "archive",
            std::fs::read(kpack_dir().join("none/.kpack/test_lib_gfx906.kpack")).unwrap(),
            "ELF",
        ),
    ];
    for (name, bytes, says) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = tmp.path().join(format!("out-{name}"));
        let done = clangoffload(&[
            "kpack".as_ref(),
            "split".as_ref(),
            path.as_os_str(),
            "--group".as_ref(),
            "g".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(done.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(!out.exists(), "{name}");
    }
    // Usage errors.
    let done = clangoffload(&["kpack", "split", "x"]);
    assert!(String::from_utf8_lossy(&done.stderr).contains("--group is required"));
    let done = clangoffload(&["kpack", "join"]);
    assert!(String::from_utf8_lossy(&done.stderr).contains("unknown kpack command"));
}
