//! Several containers in one section (`tests/fixtures/multi`: linked HIP
//! libraries of three translation units, ELF and PE, plain and compressed
//! bundles back to back): `extract` writes one file per entry of every
//! container, each byte-identical to what LLVM 22's bundler unbundles from
//! that container, and the paths it prints are the files on disk; existing
//! files are not overwritten unless asked; a missing output directory is
//! made; a reader that goes away early costs no file and no panic.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{fixtures, run};

const HOSTS: [&str; 4] = [
    "libhip-compressed3.so",
    "libhip-mixed3.so",
    "hip-compressed3.dll",
    "hip-mixed3.dll",
];

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_clangoffload"))
}

fn host(name: &str) -> PathBuf {
    fixtures().join("multi").join(name)
}

/// What LLVM 22 unbundles from each container of `name`, containers in file
/// order: sets of `(entry ID, sha256)`.
fn llvm_containers(name: &str) -> Vec<BTreeSet<(String, String)>> {
    let text = std::fs::read_to_string(host(&format!("{name}.entries"))).unwrap();
    let mut containers: Vec<(String, BTreeSet<(String, String)>)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('|').collect();
        if containers.last().map_or(true, |(at, _)| at != f[0]) {
            containers.push((f[0].to_owned(), BTreeSet::new()));
        }
        let set = &mut containers.last_mut().unwrap().1;
        set.insert((f[1].to_owned(), f[2].to_owned()));
    }
    containers.into_iter().map(|(_, set)| set).collect()
}

fn sha256(path: &Path) -> String {
    let out = run(Path::new("sha256sum"), &[path]);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)[..64].to_owned()
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_entry_of_every_container_is_written_as_llvm_unbundles_it() {
    for name in HOSTS {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("new").join("dir");
        let args = ["extract".into(), host(name), "-o".into(), out_dir.clone()];
        let out = run(&ours(), &args);
        assert!(out.status.success(), "{name}: {out:?}");
        let printed = lines(&out.stdout);
        // Files on disk = paths printed = entries listed.
        let mut on_disk: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().path().display().to_string())
            .collect();
        on_disk.sort();
        let mut sorted = printed.clone();
        sorted.sort();
        assert_eq!(on_disk, sorted, "{name}");
        let listed = lines(&run(&ours(), &["list".into(), host(name)]).stdout);
        assert_eq!(printed.len(), listed.len(), "{name}");
        // Container by container, LLVM's entries and bytes.
        let containers = llvm_containers(name);
        assert_eq!(containers.len(), 3, "{name}");
        let mut paths = printed.iter();
        for (c, theirs) in containers.iter().enumerate() {
            let ours: BTreeSet<(String, String)> = paths
                .by_ref()
                .take(theirs.len())
                .map(|p| {
                    let file = Path::new(p).file_name().unwrap().to_string_lossy();
                    // <name>.<index>.<entry ID>
                    let id = file[name.len() + 1..].split_once('.').unwrap().1;
                    (id.to_owned(), sha256(Path::new(p)))
                })
                .collect();
            assert_eq!(&ours, theirs, "{name}: container {c}");
        }
        assert!(paths.next().is_none(), "{name}");
    }
}

#[test]
fn existing_files_are_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_path_buf();
    let file = host("libhip-mixed3.so");
    let args = ["extract".into(), file.clone(), "-o".into(), out_dir.clone()];
    assert!(run(&ours(), &args).status.success());
    let victim = out_dir.join("libhip-mixed3.so.4.hipv4-amdgcn-amd-amdhsa--gfx906");
    std::fs::write(&victim, b"mine").unwrap();
    let again = run(&ours(), &args);
    assert_eq!(again.status.code(), Some(1));
    assert!(again.stdout.is_empty(), "nothing written, nothing printed");
    let message = String::from_utf8_lossy(&again.stderr);
    assert!(
        message.contains("file exists") && message.contains("--force"),
        "{message}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
    let forced = run(
        &ours(),
        &[
            "extract".into(),
            file,
            "-o".into(),
            out_dir,
            "--force".into(),
        ],
    );
    assert!(forced.status.success(), "{forced:?}");
    assert_ne!(std::fs::read(&victim).unwrap(), b"mine");
}

#[test]
fn a_reader_that_goes_away_costs_no_file_and_no_panic() {
    for name in HOSTS {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(ours())
            .arg("extract")
            .arg(host(name))
            .arg("-o")
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -1`: read one line, then close the pipe.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(
            stderr.is_empty(),
            "{name}: quiet, as LLVM's tools: {stderr}"
        );
        // Killed by SIGPIPE as LLVM's tools are, or done before the pipe closed.
        use std::os::unix::process::ExitStatusExt;
        assert!(
            out.status.success() || out.status.signal() == Some(13),
            "{name}: {:?}",
            out.status
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 9, "{name}");
    }
}
