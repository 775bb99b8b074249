//! One damaged entry among many (a CUDA fat binary's image, a compressed
//! bundle in an archive): every other entry is written and its path
//! printed, the damage is a located error, the exit status is 1, and the
//! files and lines are the same for `-j 1`, `-j 2` and `-j 4`. (Compressed
//! bundles back to back: `multi.rs`.)

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod common;

use std::path::Path;
use std::process::Output;

use common::{clangoffload, fixtures, Sandbox};

/// What one run did: exit status, the paths printed (file names), the
/// files written with their bytes, stderr.
type Run = (Option<i32>, Vec<String>, Vec<(String, Vec<u8>)>, String);

/// What `extract -j N` of `input` into a fresh `out<N>` did: exit status,
/// the paths printed (as file names), the files in the directory with
/// their bytes, and stderr.
fn extract(sb: &Sandbox, input: &Path, threads: &str) -> Run {
    let dir = sb.path(&format!("out{threads}"));
    let args = [
        "extract".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        dir.as_os_str(),
        "-j".as_ref(),
        threads.as_ref(),
    ];
    let out: Output = clangoffload(&args);
    let printed = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            Path::new(l)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&*dir.to_string_lossy(), "D");
    (out.status.code(), printed, files, stderr)
}

/// Runs `extract` with 1, 2 and 4 threads: the same result each time,
/// exit 1, every file in the directory printed; returns one run's.
fn same_for_every_thread_count(sb: &Sandbox, input: &Path) -> (Vec<String>, String) {
    let runs: Vec<_> = ["1", "2", "4"]
        .iter()
        .map(|j| extract(sb, input, j))
        .collect();
    for (status, printed, files, stderr) in &runs {
        assert_eq!(*status, Some(1), "{stderr}");
        let mut names: Vec<&String> = files.iter().map(|(n, _)| n).collect();
        let mut listed: Vec<&String> = printed.iter().collect();
        names.sort();
        listed.sort();
        assert_eq!(names, listed, "every file written is printed, and no other");
    }
    assert!(runs.windows(2).all(|w| w[0] == w[1]));
    let (_, printed, _, stderr) = runs.into_iter().next().unwrap();
    (printed, stderr)
}

#[test]
fn a_damaged_cuda_image_costs_only_itself() {
    let sb = Sandbox::new();
    // Three fat binaries (stored, LZ4, zstd) of a cubin and PTX each; the
    // first cubin's ELF magic zeroed.
    let mut data = std::fs::read(fixtures().join("cuda/raw-three-concatenated.fatbin")).unwrap();
    data[16 + 64] = 0;
    let input = sb.path("three.fatbin");
    std::fs::write(&input, &data).unwrap();
    let (printed, stderr) = same_for_every_thread_count(&sb, &input);
    assert_eq!(
        printed,
        [
            "three.1.sm_80.ptx",
            "three.2.sm_80.cubin",
            "three.2.sm_80.ptx",
            "three.3.sm_80.cubin",
            "three.3.sm_80.ptx"
        ]
    );
    assert!(
        stderr.contains(
            "CUDA fat binary at offset 0x0, entry at offset 0x10 (elf sm_80): entry 0: not an ELF file"
        ) && stderr.contains("(at offset 0x50)")
            && stderr.contains("'D/three.1.sm_80.cubin' not written"),
        "{stderr}"
    );
}

#[test]
fn a_damaged_cuda_image_in_a_host_names_its_section_and_file_offset() {
    let sb = Sandbox::new();
    let mut data = std::fs::read(fixtures().join("cuda/nvcc-two-tu.so")).unwrap();
    // The first ELF entry of the first fat binary: its cubin's magic.
    let fatbin = data
        .windows(4)
        .position(|w| w == [0x50, 0xed, 0x55, 0xba])
        .unwrap();
    let header = u32::from_le_bytes(data[fatbin + 16 + 4..fatbin + 16 + 8].try_into().unwrap());
    let cubin = fatbin + 16 + usize::try_from(header).unwrap();
    assert_eq!(&data[cubin..cubin + 4], b"\x7fELF");
    data[cubin] = 0;
    let input = sb.path("two.so");
    std::fs::write(&input, &data).unwrap();
    let (printed, stderr) = same_for_every_thread_count(&sb, &input);
    assert!(!printed.is_empty());
    assert!(
        stderr.contains(&format!(
            "[.nv_fatbin]: CUDA fat binary at offset {fatbin:#x}"
        )) && stderr.contains(&format!("(at offset {cubin:#x})")),
        "{stderr}"
    );
}

#[test]
fn a_damaged_member_of_an_archive_costs_only_its_own_entries() {
    let sb = Sandbox::new();
    let mut data = std::fs::read(fixtures().join("archive/gnu-compressed.a")).unwrap();
    // The first member's compressed stream.
    let ccob = data.windows(4).position(|w| w == b"CCOB").unwrap();
    data[ccob + 0x40] ^= 0x5a;
    let input = sb.path("lib.a");
    std::fs::write(&input, &data).unwrap();
    let (printed, stderr) = same_for_every_thread_count(&sb, &input);
    assert_eq!(
        printed,
        [
            "lib.a.objz.o.0.host-x86_64-unknown-linux-gnu-",
            "lib.a.objz.o.1.hipv4-amdgcn-amd-amdhsa--gfx906",
            "lib.a.objz.o.2.hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
        ]
    );
    assert!(
        stderr.contains(&format!("compressed bundle at offset {ccob:#x}")),
        "{stderr}"
    );
}
