//! Several containers in one section (`tests/fixtures/multi`: linked HIP
//! libraries of three translation units, ELF and PE, plain and compressed
//! bundles back to back): `extract` writes one file per entry of every
//! container, each byte-identical to what LLVM 22's bundler unbundles from
//! that container, and the paths it prints are the files on disk; existing
//! files are not overwritten unless asked; a missing output directory is
//! made; a reader that goes away early costs no file and no panic.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

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
        if containers.last().is_none_or(|(at, _)| at != f[0]) {
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

#[test]
fn one_thread_or_several_write_the_same_files_and_print_the_same_lines() {
    for name in HOSTS {
        let mut runs = Vec::new();
        for threads in ["1", "2", "3"] {
            let dir = tempfile::tempdir().unwrap();
            let out = run(
                &ours(),
                &[
                    "extract".into(),
                    host(name),
                    "-o".into(),
                    dir.path().to_path_buf(),
                    "-j".into(),
                    threads.into(),
                ],
            );
            assert!(out.status.success(), "{name} -j {threads}: {out:?}");
            let stdout =
                String::from_utf8_lossy(&out.stdout).replace(&*dir.path().to_string_lossy(), "D");
            let files: Vec<(String, Vec<u8>)> = lines(&out.stdout)
                .iter()
                .map(|p| (p.clone(), std::fs::read(p).unwrap()))
                .map(|(p, bytes)| (p.replace(&*dir.path().to_string_lossy(), "D"), bytes))
                .collect();
            runs.push((stdout, out.stderr, files));
        }
        assert!(runs.windows(2).all(|w| w[0] == w[1]), "{name}");
    }
}

/// Three zlib compressed bundles back to back, each of three entries with
/// 200 KiB payloads, so that each one's entry table decodes from the first
/// stretch of its stream and its payloads from later ones.
fn three_compressed() -> (Vec<u8>, Vec<usize>) {
    use clangoffload::compressed::{compress, CompressOptions};
    let options = CompressOptions {
        version: 3,
        method: clangoffload::CompressionMethod::Zlib,
        level: None,
    };
    let mut file = Vec::new();
    let mut starts = Vec::new();
    for c in 0..3u32 {
        let payloads: Vec<Vec<u8>> = (0..3u32)
            .map(|e| {
                (0..50_000u32)
                    .flat_map(|i| (i * 7 + e * 131 + c).to_le_bytes())
                    .collect()
            })
            .collect();
        let ids = [
            &b"host-x86_64-unknown-linux-gnu-"[..],
            b"hipv4-amdgcn-amd-amdhsa--gfx906",
            b"hipv4-amdgcn-amd-amdhsa--gfx90a",
        ];
        let entries: Vec<(&[u8], &[u8])> = ids
            .iter()
            .copied()
            .zip(payloads.iter().map(Vec::as_slice))
            .collect();
        let bundle = clangoffload::bundle::write_bundle(&entries, 4096).unwrap();
        file.resize(file.len().next_multiple_of(4096), 0);
        starts.push(file.len());
        file.extend_from_slice(&compress(&bundle, &options).unwrap());
    }
    (file, starts)
}

#[test]
fn a_damaged_container_costs_its_own_outputs_only_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, starts) = three_compressed();
    let good = dir.path().join("good.bin");
    std::fs::write(&good, &bytes).unwrap();
    // The middle container's stream, damaged near its end (the table still
    // reads, the whole does not); or its stored hash (v3: bytes 24..32 of
    // the header), found wrong once its files are written and read back.
    let mut damaged_stream = bytes.clone();
    damaged_stream[starts[2] - 4096 - 2] ^= 0x5a;
    let mut wrong_hash = bytes.clone();
    wrong_hash[starts[1] + 24] ^= 1;
    for (case, (bytes, says)) in [
        (damaged_stream, "compressed bundle at offset"),
        (wrong_hash, "hash mismatch"),
    ]
    .into_iter()
    .enumerate()
    {
        let damaged = dir.path().join("damaged.bin");
        std::fs::write(&damaged, &bytes).unwrap();
        for threads in ["1", "2", "4"] {
            let out_dir = dir.path().join(format!("out{case}-{threads}"));
            let args = [
                "extract".into(),
                damaged.clone(),
                "-o".into(),
                out_dir.clone(),
                "-j".into(),
                threads.into(),
            ];
            let out = run(&ours(), &args);
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            let written: Vec<String> = lines(&out.stdout)
                .iter()
                .map(|p| {
                    Path::new(p)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            // Containers 0 and 2 whole, container 1 not at all, named as ever.
            let indices: Vec<&str> = written
                .iter()
                .map(|n| n["damaged.bin.".len()..].split('.').next().unwrap())
                .collect();
            assert_eq!(indices, ["0", "1", "2", "6", "7", "8"], "{written:?}");
            assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 6);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains(&format!(
                    "outputs 3..6 of the container at offset {:#x} not written",
                    starts[1]
                )),
                "{stderr}"
            );
            assert!(stderr.contains(says), "{stderr}");
            // What was written is what the undamaged file gives.
            let good_dir = dir.path().join(format!("good{case}-{threads}"));
            let args = [
                "extract".into(),
                good.clone(),
                "-o".into(),
                good_dir.clone(),
            ];
            assert!(run(&ours(), &args).status.success());
            for name in &written {
                let theirs = good_dir.join(name.replace("damaged.bin", "good.bin"));
                assert_eq!(
                    std::fs::read(out_dir.join(name)).unwrap(),
                    std::fs::read(theirs).unwrap()
                );
            }
        }
    }
}

/// `inspect --verify` decodes containers in parallel under a memory budget:
/// the same report for any budget (one smaller than any bundle decodes them
/// one at a time), every hash checked; `extract` writes the same files
/// under any budget; a budget that is no size is refused.
#[test]
fn any_memory_budget_gives_the_same_report_and_files() {
    for name in HOSTS {
        let verify = |budget: &str| {
            let mut args = vec!["inspect".into(), host(name), "--verify".into()];
            if !budget.is_empty() {
                args.extend(["--memory-budget".into(), budget.into()]);
            }
            let out = run(&ours(), &args);
            assert!(out.status.success(), "{name} {budget}: {out:?}");
            out.stdout
        };
        let whole = verify("");
        assert!(!String::from_utf8_lossy(&whole).contains("not checked"));
        for budget in ["1", "64K", "1G"] {
            assert_eq!(verify(budget), whole, "{name} --memory-budget {budget}");
        }
        let mut written = Vec::new();
        for budget in ["1", "1G"] {
            let dir = tempfile::tempdir().unwrap();
            let args = [
                "extract".into(),
                host(name),
                "-o".into(),
                dir.path().to_path_buf(),
                "--memory-budget".into(),
                budget.into(),
            ];
            let out = run(&ours(), &args);
            assert!(out.status.success(), "{name}: {out:?}");
            let files: Vec<Vec<u8>> = lines(&out.stdout)
                .iter()
                .map(|p| std::fs::read(p).unwrap())
                .collect();
            written.push(files);
        }
        assert_eq!(written[0], written[1], "{name}");
    }
    let out = run(
        &ours(),
        &[
            "inspect".into(),
            host(HOSTS[0]),
            "--verify".into(),
            "--memory-budget".into(),
            "lots".into(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--memory-budget lots: expected a size"));
}
