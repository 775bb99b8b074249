//! What a differential campaign against LLVM 22 found, each from a small
//! crafted input of the same shape, run through our bundler and (when it is
//! installed) LLVM 22's with the same arguments.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use clangoffload::archive::write_archive_indexed;
use clangoffload::bundle::write_bundle;
use common::*;

/// Runs `tool` in `dir` with `args`.
fn run_in(dir: &Path, tool: &Path, args: &[&str]) -> Output {
    std::process::Command::new(tool)
        .current_dir(dir)
        .args(args)
        .env("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1")
        .output()
        .unwrap()
}

/// Both tools (ours, and LLVM 22 when installed) succeed, write their first
/// output, and write the same bytes.
fn assert_both_write_the_same(results: &[(Output, Vec<Option<Vec<u8>>>)]) {
    for (out, written) in results {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && written[0].is_some(), "{stderr}");
    }
    assert!(results.windows(2).all(|w| w[0].1 == w[1].1));
}

/// Our result and, when LLVM 22 is installed, its result, for `args` run in
/// a directory holding `files`; each with the bytes of `outputs` afterwards.
fn both(
    files: &[(&str, &[u8])],
    args: &[&str],
    outputs: &[&str],
) -> Vec<(Output, Vec<Option<Vec<u8>>>)> {
    let mut tools = vec![Sandbox::new()];
    if llvm22().is_some() {
        tools.push(Sandbox::new());
    }
    tools
        .iter()
        .enumerate()
        .map(|(i, sb)| {
            for (name, bytes) in files {
                std::fs::write(sb.path(name), bytes).unwrap();
            }
            let tool = if i == 0 {
                sb.ours()
            } else {
                PathBuf::from(LLVM22)
            };
            let out = run_in(sb.dir.path(), &tool, args);
            let written = outputs
                .iter()
                .map(|o| std::fs::read(sb.path(o)).ok())
                .collect();
            (out, written)
        })
        .collect()
}

fn host_and(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut all: Vec<(&[u8], &[u8])> = vec![(b"host-x86_64-unknown-linux-gnu", b"H")];
    all.extend_from_slice(entries);
    write_bundle(&all, 1).unwrap()
}

/// 4: an archive member whose bundle has an entry ID with three `-` is
/// refused, as LLVM refuses it, not skipped (device code would be lost).
#[test]
fn an_invalid_id_in_an_archive_member_is_an_error() {
    let good = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"6")]);
    let bad = host_and(&[
        (b"hip-amdgcn-amd-amdhsa", b"X"),
        (b"hip-amdgcn-amd-amdhsa--gfx906", b"7"),
    ]);
    let lib = write_archive_indexed(&[(b"a.o", &good), (b"b.o", &bad)]).unwrap();
    let args = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=out.a",
    ];
    for (out, written) in both(&[("lib.a", &lib)], &args, &["out.a"]) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("error: Invalid bundle id read from code object"),
            "{stderr}"
        );
        assert_eq!(written, [None]);
    }
}

/// 5: a plain bundle followed by an OffloadBinary lists (and unbundles) the
/// bundle; the rest is ignored, with our warning.
#[test]
fn an_offload_binary_after_a_bundle_is_ignored() {
    let mut file = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"6")]);
    file.extend(std::fs::read(fixtures().join("offload/single.offbin")).unwrap());
    let list = ["-list", "-type=o", "-input=f.bin"];
    let results = both(&[("f.bin", &file)], &list, &[]);
    for (out, _) in &results {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            sorted_lines(&out.stdout),
            [
                "hip-amdgcn-amd-amdhsa--gfx906",
                "host-x86_64-unknown-linux-gnu"
            ]
        );
    }
    assert!(String::from_utf8_lossy(&results[0].0.stderr).contains("an OffloadBinary at offset"));
    let unbundle = [
        "-unbundle",
        "-type=o",
        "-input=f.bin",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=d",
    ];
    for (out, written) in both(&[("f.bin", &file)], &unbundle, &["d"]) {
        assert!(out.status.success());
        assert_eq!(written, [Some(b"6".to_vec())]);
    }
}

/// 6: bytes after a compressed bundle that start no container are ignored
/// with a warning, as after a plain one (LLVM accepts them after a zlib
/// bundle; after a zstd one it fails, a differences row).
#[test]
fn bytes_after_a_compressed_bundle_are_ignored() {
    let compressed = fixtures().join("compressed/synthetic/hip.zlib-v3.ccob");
    let mut file = std::fs::read(compressed).unwrap();
    file.push(b'\n');
    let list = ["-list", "-type=o", "-input=f.ccob"];
    let results = both(&[("f.ccob", &file)], &list, &[]);
    for (out, _) in &results {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sorted_lines(&out.stdout).len(), 4);
    }
    assert_eq!(
        sorted_lines(&results[0].0.stdout),
        sorted_lines(&results.last().unwrap().0.stdout)
    );
    assert!(String::from_utf8_lossy(&results[0].0.stderr).contains("start no known container"));
}

/// 7: a damaged section that holds no bundle (contents past the end of the
/// file) does not stop listing a host object or unbundling its device code,
/// in the object or in an archive; the host entry (the object rewritten)
/// still fails, as llvm-objcopy fails.
#[test]
fn a_damaged_unrelated_section_does_not_stop_listing() {
    let mut object = std::fs::read(fixtures().join("object/bundled-x86_64.o")).unwrap();
    let elf = clangoffload::elf::ElfFile::parse(&object).unwrap();
    let comment = (1..elf.section_count())
        .find(|&i| elf.section(i).unwrap().name() == b".comment")
        .unwrap();
    let header = elf.header().shoff as usize + comment as usize * 64;
    object[header + 24..header + 32].copy_from_slice(&0x10_0000u64.to_le_bytes());
    let lib = write_archive_indexed(&[(b"b7.o", &object)]).unwrap();
    let files: [(&str, &[u8]); 2] = [("b7.o", &object), ("lib.a", &lib)];
    let device = "hip-amdgcn-amd-amdhsa--gfx906";
    for (out, _) in both(&files, &["-list", "-type=o", "-input=b7.o"], &[]) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sorted_lines(&out.stdout).len(), 3);
    }
    let targets = format!("-targets={device}");
    let unbundle = ["-unbundle", "-type=o", "-input=b7.o", &targets, "-output=d"];
    let results = both(&files, &unbundle, &["d"]);
    assert!(results.iter().all(|(out, _)| out.status.success()));
    assert!(results.windows(2).all(|w| w[0].1 == w[1].1));
    let archive = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        &targets,
        "-output=d.a",
    ];
    for (out, written) in both(&files, &archive, &["d.a"]) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(written[0].is_some());
    }
    let host = [
        "-unbundle",
        "-type=o",
        "-input=b7.o",
        "-targets=host-x86_64-unknown-linux-gnu-",
        "-output=h",
    ];
    for (out, _) in both(&files, &host, &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
}

/// 8: two targets naming processors LLVM does not know, with entries of
/// exactly those IDs in the other order: each gets its own entry (LLVM 22
/// writes one output empty; the exact-ID row of the differences table).
#[test]
fn unknown_processors_get_their_exact_entries() {
    let file = host_and(&[
        (b"hip-amdgcn-amd-amdhsa--gfx9998", b"8"),
        (b"hip-amdgcn-amd-amdhsa--gfx9999", b"9"),
    ]);
    let sb = Sandbox::new();
    std::fs::write(sb.path("f.bundle"), &file).unwrap();
    let out = run_in(
        sb.dir.path(),
        &sb.ours(),
        &[
            "-unbundle",
            "-type=o",
            "-input=f.bundle",
            "-targets=hip-amdgcn-amd-amdhsa--gfx9999,hip-amdgcn-amd-amdhsa--gfx9998",
            "-output=o1",
            "-output=o2",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(sb.path("o1")).unwrap(), b"9");
    assert_eq!(std::fs::read(sb.path("o2")).unwrap(), b"8");
}

/// A bundle section whose contents lie past the end of the file (found by
/// the differential tester): LLVM lists every ID by section name and fails
/// only a job that needs that entry, in the object and as an archive
/// member; so do we.
#[test]
fn a_damaged_bundle_section_fails_only_the_job_that_needs_it() {
    let mut object = std::fs::read(fixtures().join("object/bundled-x86_64.o")).unwrap();
    let elf = clangoffload::elf::ElfFile::parse(&object).unwrap();
    let openmp = (1..elf.section_count())
        .find(|&i| {
            elf.section(i)
                .unwrap()
                .name()
                .ends_with(b"openmp-x86_64-pc-linux-gnu-")
        })
        .unwrap();
    let header = elf.header().shoff as usize + openmp as usize * 64;
    object[header + 24..header + 32].copy_from_slice(&0x10_0000u64.to_le_bytes());
    let lib = write_archive_indexed(&[(b"b.o", &object)]).unwrap();
    let files: [(&str, &[u8]); 2] = [("b.o", &object), ("lib.a", &lib)];
    for (out, _) in both(&files, &["-list", "-type=o", "-input=b.o"], &[]) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sorted_lines(&out.stdout).len(), 3);
    }
    let device = [
        "-unbundle",
        "-type=o",
        "-input=b.o",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=d",
    ];
    let results = both(&files, &device, &["d"]);
    assert!(results
        .iter()
        .all(|(out, written)| out.status.success() && written[0].is_some()));
    let damaged = [
        "-unbundle",
        "-type=o",
        "-input=b.o",
        "-targets=openmp-x86_64-pc-linux-gnu",
        "-output=o",
    ];
    for (out, _) in both(&files, &damaged, &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
    // The same in an archive: only a target that takes the entry fails.
    let gfx906 = "-targets=hip-amdgcn-amd-amdhsa--gfx906";
    let member = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        gfx906,
        "-output=d.a",
    ];
    let results = both(&files, &member, &["d.a"]);
    assert_both_write_the_same(&results);
    let openmp = "-targets=openmp-x86_64-pc-linux-gnu";
    let member = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        openmp,
        "-output=o.a",
    ];
    for (out, _) in both(&files, &member, &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
}

/// `bundled-x86_64.o` with `patch` applied to the section header of the
/// first section whose name ends with `name` (its bytes, 64 of them).
fn object_with_header(name: &[u8], patch: impl Fn(&mut [u8])) -> Vec<u8> {
    let mut object = std::fs::read(fixtures().join("object/bundled-x86_64.o")).unwrap();
    let elf = clangoffload::elf::ElfFile::parse(&object).unwrap();
    let index = (0..elf.section_count())
        .find(|&i| elf.section(i).unwrap().name().ends_with(name))
        .unwrap();
    let header = elf.header().shoff as usize + index as usize * 64;
    patch(&mut object[header..header + 64]);
    object
}

fn set_sh_name(header: &mut [u8], offset: u32) {
    header[..4].copy_from_slice(&offset.to_le_bytes());
}

/// Section names as LLVM's object reader reads them (found by the
/// differential tester): section 0's name is read too, so a bad one fails
/// every job; a bad name is met only by a walk that reaches it, and
/// `-unbundle` stops once every target is found; name offset 0 is the empty
/// name even in a file without a name table.
#[test]
fn section_names_are_read_as_llvm_reads_them() {
    let null_named = object_with_header(b"", |h| set_sh_name(h, 0xffff_ffff));
    let last_named = object_with_header(b"hip-amdgcn-amd-amdhsa--gfx906", |h| {
        set_sh_name(h, 0xffff_ff83);
    });
    let lib = write_archive_indexed(&[(b"n.o", &null_named), (b"l.o", &last_named)]).unwrap();
    let mut unnamed = std::fs::read(fixtures().join("object/bundled-x86_64.o")).unwrap();
    let elf = clangoffload::elf::ElfFile::parse(&unnamed).unwrap();
    let (shoff, count) = (elf.header().shoff as usize, elf.section_count() as usize);
    for i in 0..count {
        set_sh_name(&mut unnamed[shoff + i * 64..], 0);
    }
    unnamed[62..64].copy_from_slice(&0u16.to_le_bytes()); // e_shstrndx
    let files: [(&str, &[u8]); 4] = [
        ("n.o", &null_named),
        ("l.o", &last_named),
        ("lib.a", &lib),
        ("u.o", &unnamed),
    ];
    let openmp = "-targets=openmp-x86_64-pc-linux-gnu-";
    let refused: [&[&str]; 4] = [
        &["-list", "-type=o", "-input=n.o"],
        &["-unbundle", "-type=o", "-input=n.o", openmp, "-output=o"],
        &["-list", "-type=o", "-input=l.o"],
        &[
            "-unbundle",
            "-type=a",
            "-input=lib.a",
            openmp,
            "-output=o.a",
        ],
    ];
    for args in refused {
        for (out, _) in both(&files, args, &[]) {
            assert_eq!(out.status.code(), Some(1), "{args:?}");
        }
    }
    let early = ["-unbundle", "-type=o", "-input=l.o", openmp, "-output=o"];
    let results = both(&files, &early, &["o"]);
    for (out, written) in &results {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(written[0].as_deref(), Some(&b"openmp payload\n"[..]));
    }
    for (out, _) in both(&files, &["-list", "-type=o", "-input=u.o"], &[]) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && out.stdout.is_empty(), "{stderr}");
    }
}

/// An archive that ends right after an odd-sized last member, without its
/// padding byte (found by the differential tester): LLVM's bundler
/// unbundles it, and refuses it with `-check-input-archive`, whose walk
/// reports the step past that member ("offset to next archive member past
/// the end of the archive"); so do we.
#[test]
fn a_missing_final_padding_byte_fails_only_the_archive_check() {
    let mut bundle = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"odd")]);
    if bundle.len().is_multiple_of(2) {
        bundle = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"even")]);
    }
    let mut lib = write_archive_indexed(&[(b"a.o", &bundle)]).unwrap();
    assert_eq!(lib.pop(), Some(b'\n'));
    let files: [(&str, &[u8]); 1] = [("lib.a", &lib)];
    let targets = "-targets=hip-amdgcn-amd-amdhsa--gfx906";
    let unbundle = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        targets,
        "-output=d.a",
    ];
    let results = both(&files, &unbundle, &["d.a"]);
    assert_both_write_the_same(&results);
    let checked = [&unbundle[..], &["-check-input-archive"]].concat();
    for (out, _) in both(&files, &checked, &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
}

/// An object whose null section's `sh_size` runs past the end of the file
/// (found by the differential tester, as an archive member):
/// `llvm-objdump --offloading` reads every section's contents, this one
/// too, and fails; so does `inspect --objdump`, naming the section.
#[test]
fn a_damaged_null_section_fails_objdump_offloading() {
    let mut object = std::fs::read(fixtures().join("offload/embed2.o")).unwrap();
    let elf = clangoffload::elf::ElfFile::parse(&object).unwrap();
    let size = elf.header().shoff as usize + 32;
    object[size..size + 8].copy_from_slice(&0xd868u64.to_le_bytes());
    let sb = Sandbox::new();
    std::fs::write(sb.path("e.o"), &object).unwrap();
    let tool = Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let ours = run_in(sb.dir.path(), tool, &["inspect", "--objdump", "e.o"]);
    assert_eq!(ours.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(stderr.contains("entry 0: section contents ["), "{stderr}");
    let objdump = Path::new("/usr/lib/llvm-22/bin/llvm-objdump");
    if objdump.exists() {
        let theirs = run_in(sb.dir.path(), objdump, &["--offloading", "e.o"]);
        assert_eq!(theirs.status.code(), Some(1));
    }
}

/// A host object LLVM's object reader does not open (a section header
/// size that is not the class's, found by the differential tester; a
/// section count read from section 0 that runs the table past the end) is,
/// as in LLVM, a file with no bundles: it lists nothing and a host target
/// gets the whole file.
#[test]
fn an_object_llvm_does_not_open_is_a_file_with_no_bundles() {
    let object = std::fs::read(fixtures().join("object/bundled-x86_64.o")).unwrap();
    let mut entry_size = object.clone();
    entry_size[58..60].copy_from_slice(&0u16.to_le_bytes());
    let mut counted = object.clone();
    counted[60..62].copy_from_slice(&0u16.to_le_bytes());
    let shoff = u64::from_le_bytes(object[40..48].try_into().unwrap()) as usize;
    counted[shoff + 32..shoff + 40].copy_from_slice(&1000u64.to_le_bytes());
    for damaged in [entry_size, counted] {
        one_without_bundles(&damaged);
    }
}

fn one_without_bundles(damaged: &[u8]) {
    let files: [(&str, &[u8]); 1] = [("d.o", damaged)];
    for (out, _) in both(&files, &["-list", "-type=o", "-input=d.o"], &[]) {
        assert!(out.status.success() && out.stdout.is_empty());
    }
    let unbundle = [
        "-unbundle",
        "-type=o",
        "-input=d.o",
        "-targets=host-x86_64-unknown-linux-gnu-,hip-amdgcn-amd-amdhsa--gfx906",
        "-output=h",
        "-output=d",
        "-allow-missing-bundles",
    ];
    for (out, written) in both(&files, &unbundle, &["h", "d"]) {
        assert!(out.status.success());
        assert_eq!(written[0].as_deref(), Some(damaged));
        assert_eq!(written[1].as_deref(), Some(&[][..]));
    }
}

/// `-type=a` with an archive member whose name holds a line break (found
/// by the differential tester): LLVM writes it into the output archive,
/// which then cannot be read back; we refuse, naming the member.
#[test]
fn a_member_name_with_a_line_break_is_refused() {
    let bundle = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"6")]);
    let mut lib = write_archive_indexed(&[(b"fXt.o", &bundle)]).unwrap();
    let at = lib.windows(6).position(|w| w == b"fXt.o/").unwrap();
    lib[at + 1] = b'\n';
    let files: [(&str, &[u8]); 1] = [("lib.a", &lib)];
    let args = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=d.a",
    ];
    let results = both(&files, &args, &["d.a"]);
    let (ours, _) = &results[0];
    assert_eq!(ours.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(stderr.contains("member 'f\nt.o'"), "{stderr}");
    if let Some((llvm, written)) = results.get(1) {
        assert!(llvm.status.success());
        let written = written[0].as_deref().unwrap();
        assert!(clangoffload::archive::Archive::parse(written)
            .unwrap()
            .members()
            .any(|m| m.is_err()));
    }
}

/// `-type=a` where an entry going to the output is an ELF file whose
/// section header table runs past its end, or whose symbols' string table
/// does (found by the differential tester): LLVM's archive writer cannot
/// index it and fails, naming the output member; so do we.
#[test]
fn an_unindexable_elf_entry_fails_the_device_archive() {
    let device = std::fs::read(fixtures().join("object/amdgcn.o")).unwrap();
    let mut table = device.clone();
    table[40..48].copy_from_slice(&0x0800_0000_0000_0fd8u64.to_le_bytes());
    let elf = clangoffload::elf::ElfFile::parse(&device).unwrap();
    let symtab = (1..elf.section_count())
        .map(|i| elf.section(i).unwrap())
        .find(|s| s.header().kind == clangoffload::elf::SHT_SYMTAB)
        .unwrap();
    let strings = elf.header().shoff as usize + symtab.header().link as usize * 64;
    let mut names = device.clone();
    names[strings + 32..strings + 40].copy_from_slice(&0x351cu64.to_le_bytes());
    for damaged in [table, names] {
        one_unindexable(&damaged);
    }
}

fn one_unindexable(device: &[u8]) {
    let bundle = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", device)]);
    let lib = write_archive_indexed(&[(b"b.o", &bundle)]).unwrap();
    let files: [(&str, &[u8]); 1] = [("lib.a", &lib)];
    let args = [
        "-unbundle",
        "-type=a",
        "-input=lib.a",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=d.a",
    ];
    for (out, _) in both(&files, &args, &[]) {
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("'b-hip-amdgcn-amd-amdhsa--gfx906b.bc':"),
            "{stderr}"
        );
    }
}

/// A relocation section whose entry size is not its type's (found by the
/// differential tester: the host entry's section turned `SHT_RELA`):
/// llvm-objcopy refuses to rewrite the object, so the host entry fails,
/// as it does in LLVM; the device entries are still unbundled.
#[test]
fn a_bad_relocation_entry_size_fails_the_host_entry() {
    let object = object_with_header(b"host-x86_64-unknown-linux-gnu-", |h| {
        h[4..8].copy_from_slice(&4u32.to_le_bytes());
    });
    let files: [(&str, &[u8]); 1] = [("r.o", &object)];
    let host = [
        "-unbundle",
        "-type=o",
        "-input=r.o",
        "-targets=host-x86_64-unknown-linux-gnu-",
        "-output=h",
    ];
    for (out, _) in both(&files, &host, &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
    let device = [
        "-unbundle",
        "-type=o",
        "-input=r.o",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-output=d",
    ];
    let results = both(&files, &device, &["d"]);
    assert!(results.iter().all(|(out, _)| out.status.success()));
    assert!(results.windows(2).all(|w| w[0].1 == w[1].1));
}

/// The host entry's rewrite as llvm-objcopy does it (found by the
/// differential tester): a relocation section is aligned to the address
/// size whatever its sh_addralign says, and a symbol table whose size is
/// not whole entries is refused.
#[test]
fn the_host_rewrite_follows_llvm_objcopy() {
    let object = std::fs::read(fixtures().join("object/bundled-i386.o")).unwrap();
    let shoff = u32::from_le_bytes(object[32..36].try_into().unwrap()) as usize;
    let count = u16::from_le_bytes(object[48..50].try_into().unwrap()) as usize;
    let header_of = |kind: u32| {
        (0..count)
            .map(|i| shoff + i * 40)
            .find(|&h| u32::from_le_bytes(object[h + 4..h + 8].try_into().unwrap()) == kind)
            .unwrap()
    };
    let mut aligned = object.clone();
    let rel = header_of(9);
    aligned[rel + 32..rel + 36].copy_from_slice(&8u32.to_le_bytes());
    let mut partial = object.clone();
    let symtab = header_of(2);
    let size = u32::from_le_bytes(object[symtab + 20..symtab + 24].try_into().unwrap());
    partial[symtab + 20..symtab + 24].copy_from_slice(&(size - 2).to_le_bytes());
    let files: [(&str, &[u8]); 2] = [("a.o", &aligned), ("p.o", &partial)];
    let host = |input: &'static str| {
        [
            "-unbundle",
            "-type=o",
            input,
            "-targets=host-x86_64-unknown-linux-gnu-",
            "-output=h",
        ]
    };
    let results = both(&files, &host("-input=a.o"), &["h"]);
    assert_both_write_the_same(&results);
    for (out, _) in both(&files, &host("-input=p.o"), &[]) {
        assert_eq!(out.status.code(), Some(1));
    }
}

/// More of llvm-objcopy's rewrite (found by the differential tester): the
/// symbol table is aligned to the address size whatever its sh_addralign
/// says, and a `SHT_NOBITS` section's sh_offset is not bounded (it has no
/// contents): the host entry comes out byte for byte as LLVM's.
#[test]
fn the_host_rewrite_follows_llvm_objcopy_for_symtab_and_nobits() {
    let symtab = object_with_header(b".symtab", |h| {
        h[48..56].copy_from_slice(&7u64.to_le_bytes());
    });
    let bss = object_with_header(b".bss", |h| {
        h[24..32].copy_from_slice(&0x8000_0000_0000_0000u64.to_le_bytes());
    });
    for object in [symtab, bss] {
        let files: [(&str, &[u8]); 1] = [("o.o", &object)];
        let args = [
            "-unbundle",
            "-type=o",
            "-input=o.o",
            "-targets=host-x86_64-unknown-linux-gnu-,hip-amdgcn-amd-amdhsa--gfx906",
            "-output=h",
            "-output=d",
        ];
        let results = both(&files, &args, &["h", "d"]);
        assert_both_write_the_same(&results);
    }
}

/// An archive member whose bundle has a descriptor past its end (found by
/// the differential tester, in a compressed member): refused as a
/// malformed bundle, worded as for a bundle given alone (LLVM silently
/// ends the header there: the bad-descriptor row).
#[test]
fn a_bad_descriptor_in_an_archive_member_is_a_malformed_bundle() {
    let mut bundle = host_and(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"6")]);
    // Entry 0's size: after the magic, the count and its offset.
    bundle[40..48].copy_from_slice(&0xf7u64.to_le_bytes());
    let lib = write_archive_indexed(&[(b"b.bc", &bundle)]).unwrap();
    let sb = Sandbox::new();
    std::fs::write(sb.path("lib.a"), &lib).unwrap();
    let out = run_in(
        sb.dir.path(),
        &sb.ours(),
        &[
            "-unbundle",
            "-type=a",
            "-input=lib.a",
            "-targets=hip-amdgcn-amd-amdhsa--gfx906",
            "-output=d.a",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("member 'b.bc': malformed bundle"),
        "{stderr}"
    );
}
