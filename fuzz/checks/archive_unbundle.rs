//! `clang-offload-bundler -type=a -unbundle` on arbitrary bytes, through
//! core's own plan (`bundler::unbundle`, the code the tool and the C ABI
//! run), and the list view of the same bytes (`bundler::list_all`).
//!
//! The first byte picks the flags (allow missing bundles, HIP/OpenMP
//! compatible, check input archive) and which of a few targets are asked
//! for; the rest is the archive. Compressed members decode under a 1 MiB
//! budget for the whole input.
//!
//! Invariants checked:
//! - no panic, and every walk terminates;
//! - a plan has one output per target, each one archive piece that parses
//!   back as an archive whose member names are non-empty and hold no `:`;
//! - an input piece lies inside the input;
//! - listing the same bytes never panics, and every listed ID can be read.

use clangoffload::archive::Archive;
use clangoffload::bundler::{self, Decoding, FileType, Piece, UnbundleRequest};

const LIMIT: u64 = 1 << 20;

const TARGETS: [&str; 4] = [
    "hip-amdgcn-amd-amdhsa--gfx906",
    "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
    "openmp-amdgcn-amd-amdhsa--gfx906",
    "host-x86_64-unknown-linux-gnu",
];

/// The checks, on one input.
pub fn check(input: &[u8]) {
    let Some((&choice, data)) = input.split_first() else {
        return;
    };
    let targets: Vec<&str> = TARGETS
        .iter()
        .enumerate()
        .filter(|(i, _)| choice & (1 << i) != 0)
        .map(|(_, t)| *t)
        .collect();
    let decoding = Decoding {
        max_size: LIMIT,
        ..Decoding::default()
    };
    let request = UnbundleRequest {
        file_type: FileType::Archive,
        targets: &targets,
        allow_missing: choice & 0x10 != 0,
        hip_openmp_compatible: choice & 0x20 != 0,
        check_input_archive: choice & 0x40 != 0,
        decoding,
    };
    if let Ok(plan) = bundler::unbundle(data, &request, &mut ()) {
        assert_eq!(plan.output_count(), targets.len());
        for output in 0..plan.output_count() {
            for piece in plan.output(output) {
                if let Piece::Input { offset, bytes, .. } = piece {
                    let end = offset.checked_add(bytes.len() as u64);
                    assert!(end.is_some_and(|end| end <= data.len() as u64));
                }
            }
            let bytes = plan.output_bytes(output).expect("an output fits in memory");
            let archive = Archive::parse(&bytes).expect("a written archive parses");
            for member in archive.members() {
                let member = member.expect("a written member parses");
                assert!(!member.name().is_empty() && !member.name().contains(&b':'));
            }
        }
    }
    if let Ok(listed) = bundler::list_all(data, decoding, &mut ()) {
        // Every listed ID is read back through the list's own accessor.
        assert_eq!(listed.iter().count(), listed.len());
    }
}
