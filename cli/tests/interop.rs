//! Our bundler against LLVM's: committed fixtures made by LLVM 22 (and older
//! versions), and live round trips when LLVM 22 is installed.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::os::unix::process::ExitStatusExt;

use common::*;

fn bundle_args(case: &Case, output: &std::path::Path) -> Vec<String> {
    let mut args = vec![
        format!("-type={}", case.file_type),
        format!("-bundle-align={}", case.align),
        format!("-targets={}", case.targets.join(",")),
    ];
    args.extend(
        case.inputs
            .iter()
            .map(|i| format!("-input={}", i.display())),
    );
    args.push(format!("-output={}", output.display()));
    args
}

#[test]
fn bundling_is_byte_identical_to_llvm_22() {
    let sb = Sandbox::new();
    for case in cases().into_iter().filter(|c| c.name != "duplicate-ids") {
        let out = sb.path(&format!("{}.bundle", case.name));
        let r = run(&sb.ours(), &bundle_args(&case, &out));
        assert!(
            r.status.success(),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&r.stderr)
        );
        let ours = std::fs::read(&out).unwrap();
        let llvm = std::fs::read(
            fixtures()
                .join("llvm22")
                .join(format!("{}.bundle", case.name)),
        )
        .unwrap();
        assert!(
            ours == llvm,
            "{}: our bundle differs from LLVM 22's",
            case.name
        );
    }
}

#[test]
fn list_matches_every_llvm_version() {
    let sb = Sandbox::new();
    for version in fixture_versions() {
        for case in cases() {
            let bundle = fixtures().join(format!("llvm{version}/{}.bundle", case.name));
            if !bundle.exists() {
                continue;
            }
            let r = run(
                &sb.ours(),
                &[
                    format!("-type={}", case.file_type),
                    "-list".into(),
                    format!("-input={}", bundle.display()),
                ],
            );
            assert!(r.status.success());
            let ours = sorted_lines(&r.stdout);
            let expected = std::fs::read(bundle.with_extension("list")).unwrap();
            assert_eq!(ours, sorted_lines(&expected), "llvm{version}/{}", case.name);
        }
    }
}

#[test]
fn unbundle_returns_the_inputs_for_every_llvm_version() {
    let sb = Sandbox::new();
    for version in fixture_versions() {
        for case in cases() {
            let bundle = fixtures().join(format!("llvm{version}/{}.bundle", case.name));
            if !bundle.exists() || case.name == "normalized" || case.name == "duplicate-ids" {
                continue; // their requests are not what was bundled: own tests
            }
            unbundle_and_compare(&sb.ours(), &case, &bundle, &sb, &format!("llvm{version}"));
        }
    }
}

/// What each LLVM version's clang bundles itself (`clang-hip.fatbin`: a HIP
/// device-only compile for gfx906 and gfx90a:xnack+) lists and unbundles to
/// what that version's bundler gave. LLVM 16's host ID,
/// `host-x86_64-unknown-linux`, is not a valid ID today: it must not stop the
/// device code objects from unbundling (LLVM 22 does unbundle them), and
/// asking for a host or a missing target is LLVM 22's error.
#[test]
fn clang_made_fat_binaries_of_every_llvm_version_list_and_unbundle_as_llvm() {
    let sb = Sandbox::new();
    let mut checked = 0;
    for version in fixture_versions() {
        let dir = fixtures().join(format!("llvm{version}"));
        let fatbin = dir.join("clang-hip.fatbin");
        if !fatbin.exists() {
            continue;
        }
        let input = format!("-input={}", fatbin.display());
        let listed = run(&sb.ours(), &["-type=o", "-list", &input]);
        assert!(listed.status.success(), "llvm{version}");
        let expected = std::fs::read(dir.join("clang-hip.list")).unwrap();
        assert_eq!(
            sorted_lines(&listed.stdout),
            sorted_lines(&expected),
            "llvm{version}"
        );

        let arches = [("gfx906", "gfx906"), ("gfx90a:xnack+", "gfx90a-xnack")];
        let targets: Vec<String> = arches
            .iter()
            .map(|(arch, _)| format!("hipv4-amdgcn-amd-amdhsa--{arch}"))
            .collect();
        let outputs: Vec<_> = arches
            .iter()
            .map(|(_, file)| sb.path(&format!("{version}-{file}.co")))
            .collect();
        let mut args = vec![
            "-type=o".to_owned(),
            "-unbundle".into(),
            input.clone(),
            format!("-targets={}", targets.join(",")),
        ];
        args.extend(outputs.iter().map(|o| format!("-output={}", o.display())));
        let r = run(&sb.ours(), &args);
        assert!(
            r.status.success(),
            "llvm{version}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        for ((_, file), output) in arches.iter().zip(&outputs) {
            let made = dir.join(format!("clang-hip.{file}.co"));
            assert!(
                std::fs::read(output).unwrap() == std::fs::read(made).unwrap(),
                "llvm{version}: {file}"
            );
        }

        // A target that is not there, or the host: found or refused as by LLVM 22.
        let host = String::from_utf8_lossy(&expected)
            .lines()
            .find(|l| l.starts_with("host-"))
            .unwrap()
            .to_owned();
        let host_valid = host.matches('-').count() >= 4;
        for target in [
            "hipv4-amdgcn-amd-amdhsa--gfx1100",
            "host-x86_64-unknown-linux-gnu",
        ] {
            let args = [
                "-type=o".to_owned(),
                "-unbundle".into(),
                input.clone(),
                format!("-targets={target}"),
                format!("-output={}", sb.path("other").display()),
                "-allow-missing-bundles".into(),
            ];
            let ours = run(&sb.ours(), &args);
            if host_valid {
                assert!(ours.status.success(), "llvm{version} {target}");
            } else {
                assert_eq!(ours.status.code(), Some(1), "llvm{version} {target}");
                assert!(String::from_utf8_lossy(&ours.stderr)
                    .contains("invalid bundle id read from the bundle"));
            }
            if let Some(llvm) = llvm22() {
                assert_eq!(
                    run(&llvm, &args).status.code(),
                    ours.status.code(),
                    "llvm{version} {target}: LLVM 22 differs"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 1, "no clang-hip.fatbin fixture");
}

/// Unbundles every target of `case` from `bundle` with `tool` and checks
/// each output equals the input it was bundled from.
fn unbundle_and_compare(
    tool: &std::path::Path,
    case: &Case,
    bundle: &std::path::Path,
    sb: &Sandbox,
    label: &str,
) {
    let outputs: Vec<_> = (0..case.targets.len())
        .map(|i| sb.path(&format!("{label}-{}-{i}", case.name)))
        .collect();
    let mut args = vec![
        format!("-type={}", case.file_type),
        "-unbundle".into(),
        format!("-input={}", bundle.display()),
        format!("-targets={}", case.targets.join(",")),
    ];
    args.extend(outputs.iter().map(|o| format!("-output={}", o.display())));
    let r = run(tool, &args);
    assert!(
        r.status.success(),
        "{label}/{}: {}",
        case.name,
        String::from_utf8_lossy(&r.stderr)
    );
    for (input, output) in case.inputs.iter().zip(&outputs) {
        assert!(
            std::fs::read(input).unwrap() == std::fs::read(output).unwrap(),
            "{label}/{}",
            case.name
        );
    }
}

#[test]
fn targets_normalising_to_one_id_are_written_correctly_and_warned_about() {
    // hip-amdgcn-amd-amdhsa-gfx906 (gfx906 taken as the environment) and
    // hip-amdgcn-amd-amdhsa--tahiti (alias dropped) both become
    // hip-amdgcn-amd-amdhsa--. LLVM 22 writes both descriptors but leaves the
    // first slot zero; we write each payload into its own slot and warn.
    let sb = Sandbox::new();
    let case = cases()
        .into_iter()
        .find(|c| c.name == "duplicate-ids")
        .unwrap();
    let out = sb.path("dup.bundle");
    let r = run(&sb.ours(), &bundle_args(&case, &out));
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("warning: targets 'hip-amdgcn-amd-amdhsa-gfx906' and 'hip-amdgcn-amd-amdhsa--tahiti' are both written as 'hip-amdgcn-amd-amdhsa--'"));
    let first = std::fs::read(&case.inputs[1]).unwrap();
    let second = std::fs::read(&case.inputs[2]).unwrap();
    let extract = |bundle: &std::path::Path, dir: &str| {
        let dir = sb.path(dir);
        std::fs::create_dir(&dir).unwrap();
        let r = run(
            std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload")),
            &[
                "extract".into(),
                bundle.display().to_string(),
                "-o".into(),
                dir.display().to_string(),
            ],
        );
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let name = bundle.file_name().unwrap().to_string_lossy().into_owned();
        (1..3)
            .map(|i| {
                std::fs::read(dir.join(format!("{name}.{i}.hip-amdgcn-amd-amdhsa--"))).unwrap()
            })
            .collect::<Vec<_>>()
    };
    let ours = extract(&out, "ours");
    assert!(
        ours[0] == first && ours[1] == second,
        "each payload in its own slot"
    );
    let llvm = extract(&fixtures().join("llvm22/duplicate-ids.bundle"), "llvm");
    assert!(
        llvm[0].iter().all(|&b| b == 0),
        "LLVM 22 leaves the first slot zero"
    );
    // Unbundling the duplicate: the last entry wins, as in LLVM 22, with a warning.
    let got = sb.path("got");
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            "-unbundle".into(),
            format!("-input={}", out.display()),
            "-targets=hip-amdgcn-amd-amdhsa--".into(),
            format!("-output={}", got.display()),
        ],
    );
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("entries 1 and 2 have the same ID"));
    assert!(std::fs::read(got).unwrap() == second);
    if let Some(llvm) = llvm22() {
        let theirs = sb.path("theirs");
        let r = run(
            &llvm,
            &[
                "-type=bc".into(),
                "-unbundle".into(),
                format!("-input={}", out.display()),
                "-targets=hip-amdgcn-amd-amdhsa--".into(),
                format!("-output={}", theirs.display()),
            ],
        );
        assert!(r.status.success());
        assert!(std::fs::read(theirs).unwrap() == second);
    }
}

#[test]
fn llvm_22_reads_what_we_write() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    for case in cases() {
        let out = sb.path(&format!("{}.ours", case.name));
        assert!(run(&sb.ours(), &bundle_args(&case, &out)).status.success());
        let listed = run(
            &llvm,
            &[
                format!("-type={}", case.file_type),
                "-list".into(),
                format!("-input={}", out.display()),
            ],
        );
        assert!(listed.status.success());
        assert_eq!(
            sorted_lines(&listed.stdout),
            sorted_lines(
                &std::fs::read(fixtures().join(format!("llvm22/{}.list", case.name))).unwrap()
            )
        );
        if case.name == "normalized" || case.name == "duplicate-ids" {
            continue;
        }
        unbundle_and_compare(&llvm, &case, &out, &sb, "llvm");
    }
}

#[test]
fn live_bundles_from_llvm_22_match_ours_for_more_alignments() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let case = &cases()[0];
    for align in ["1", "2", "7", "64", "65536"] {
        let (a, b) = (
            sb.path(&format!("llvm-{align}")),
            sb.path(&format!("ours-{align}")),
        );
        let mut c = Case {
            name: case.name.clone(),
            file_type: case.file_type.clone(),
            align: align.into(),
            targets: case.targets.clone(),
            inputs: case.inputs.clone(),
        };
        assert!(run(&llvm, &bundle_args(&c, &a)).status.success());
        assert!(run(&sb.ours(), &bundle_args(&c, &b)).status.success());
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "align {align}"
        );
        c.name.clear();
    }
}

/// Command lines LLVM 22 rejects; ours must print the same message and exit 1.
const INVALID: &[&[&str]] = &[
    &[],
    &["-type=o"],
    &["-type=o", "-input=IN", "-output=x"],
    &["-type=o", "-input=IN", "-input=IN", "-list"],
    &["-type=o", "-input=IN", "-list", "-output=x"],
    &["-type=o", "-input=IN", "-list", "-targets=host-x86_64-unknown-linux-gnu"],
    &["-type=o", "-input=IN", "-list", "-unbundle"],
    &["-type=o", "-unbundle", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906", "-output=x"],
    &["-type=o", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906", "-output=x"],
    &["-type=o", "-input=IN", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,host-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd", "-output=x"],
    &["-type=o", "-input=IN", "-targets=foo-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-targets=foo-blah-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,host-aarch64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-targets=openmp-amdgcn-amd-amdhsa--gfx906", "-output=x"],
    &["-type=zz", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=a", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu", "-bundle-align=abc", "-output=x"],
    &["-type=o", "-input=NOPE", "-targets=host-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-inputs=IN", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu", "-output=x"],
    &["-type=o", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu", "-check-input-archive", "-output=x"],
    &["-type=o", "-input=IN", "-targets", ],
    &["-type=o", "-unbundle=foo"],
    &["-type=o", "-input=IN", "-input=IN", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx906:xnack+", "-output=x"],
    &["-type=o", "-unbundle", "-input=BUNDLE", "-targets=hip-amdgcn-amd-amdhsa--gfx908,hip-amdgcn-amd-amdhsa--gfx90a,hip-amdgcn-amd-amdhsa--gfx1030", "-output=a", "-output=b", "-output=c"],
    &["-type=o", "-unbundle", "-input=BUNDLE", "-targets=hip-amdgcn-amd-amdhsa--gfx908,hip-amdgcn-amd-amdhsa--gfx90a", "-output=a", "-output=b"],
    &["-type=o", "-unbundle", "-input=IN", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906", "-output=a", "-output=b"],
    &["-typ=bc"],
    &["-type=o", "-list", "-input=IN", "--", "stray"],
    &["-type=o", "-list", "-input=IN", "stray"],
    &["-type=o", "-list", "-input=IN", "--list=maybe"],
    &["-type=o", "-targets=host-x86_64-unknown-linux-gnu", "-outputs=x", "-output=x", "-input=IN"],
];

#[test]
fn help_variants_match_llvm_22() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    for args in [
        &["--help-list"][..],
        &["--help-hidden"],
        &["--help-list-hidden"],
        &["-type=o", "-h"],
        &["--help-list", "--help"],
    ] {
        let (ours, theirs) = (run(&sb.ours(), args), run(&llvm, args));
        assert!(ours.stdout == theirs.stdout, "{args:?}");
        assert_eq!(ours.status.code(), theirs.status.code());
    }
}

#[test]
fn an_output_that_is_also_an_input_is_read_first() {
    let sb = Sandbox::new();
    let (host, dev) = (sb.path("host"), sb.path("dev"));
    std::fs::copy(fixtures().join("inputs/host.bc"), &host).unwrap();
    std::fs::copy(fixtures().join("inputs/gfx906.co"), &dev).unwrap();
    let targets = "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906".to_owned();
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            targets.clone(),
            format!("-input={}", host.display()),
            format!("-input={}", dev.display()),
            format!("-output={}", host.display()),
        ],
    );
    assert!(r.status.success());
    let out2 = sb.path("dev2");
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            "-unbundle".into(),
            targets,
            format!("-input={}", host.display()),
            format!("-output={}", host.display()),
            format!("-output={}", out2.display()),
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        std::fs::read(&host).unwrap() == std::fs::read(fixtures().join("inputs/host.bc")).unwrap()
    );
    assert!(std::fs::read(&out2).unwrap() == std::fs::read(&dev).unwrap());
}

#[test]
fn errors_match_llvm_22_word_for_word() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let input = fixtures().join("inputs/host.bc");
    let bundle = fixtures().join("llvm22/hip-4096.bundle");
    for case in INVALID {
        let args: Vec<String> = case
            .iter()
            .map(|a| {
                a.replace("=IN", &format!("={}", input.display()))
                    .replace("=BUNDLE", &format!("={}", bundle.display()))
                    .replace("=NOPE", "=/nonexistent/input")
                    .replace("-output=", &format!("-output={}/", sb.dir.path().display()))
            })
            .collect();
        let theirs = run(&llvm, &args);
        let ours = run(&sb.ours(), &args);
        let clean = |o: &std::process::Output, tool: &std::path::Path| {
            String::from_utf8_lossy(&o.stderr).replace(&tool.display().to_string(), "TOOL")
        };
        assert_eq!(ours.status.code(), theirs.status.code(), "{case:?}");
        assert_eq!(clean(&ours, &sb.ours()), clean(&theirs, &llvm), "{case:?}");
    }
}

/// Each class of malformed bundle: exit 1 with a located message, never a signal.
#[test]
fn malformed_bundles_fail_cleanly() {
    let sb = Sandbox::new();
    let good = std::fs::read(fixtures().join("llvm22/openmp.bundle")).unwrap();
    let desc = 32; // first descriptor
    let set =
        |data: &mut Vec<u8>, at: usize, v: u64| data[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    cases.push((
        "truncated count",
        good[..28].to_vec(),
        "truncated entry count",
    ));
    cases.push(("truncated descriptor", good[..40].to_vec(), "cannot fit"));
    let mut c = good.clone();
    set(&mut c, 24, 1 << 63);
    cases.push((
        "huge count",
        c,
        "entry count 9223372036854775808 cannot fit",
    ));
    let mut c = good.clone();
    set(&mut c, desc + 8, 1 << 40);
    cases.push(("payload past end", c, "ends past the end"));
    let mut c = good.clone();
    set(&mut c, desc + 8, u64::MAX);
    cases.push(("payload wraps", c, "overflows"));
    let mut c = good.clone();
    set(&mut c, desc + 16, u64::MAX);
    cases.push(("id length wraps", c, "entry ID length"));
    let mut c = good.clone();
    set(&mut c, desc, 0);
    cases.push(("offset 0", c, "offset is 0"));
    let mut c = good.clone();
    set(&mut c, desc + 16, 0);
    cases.push(("empty id", c, "empty entry ID"));
    for (what, data, message) in cases {
        let path = sb.path("bad");
        std::fs::write(&path, &data).unwrap();
        for args in [
            vec![
                "-type=bc".to_owned(),
                "-list".into(),
                format!("-input={}", path.display()),
            ],
            vec![
                "-type=bc".into(),
                "-unbundle".into(),
                format!("-input={}", path.display()),
                "-targets=host-x86_64-unknown-linux-gnu".into(),
                format!("-output={}", sb.path("o").display()),
            ],
        ] {
            let r = run(&sb.ours(), &args);
            assert_eq!(r.status.signal(), None, "{what}");
            assert_eq!(r.status.code(), Some(1), "{what}");
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.contains("malformed bundle") && err.contains(message),
                "{what}: {err}"
            );
        }
    }
}

#[test]
fn zero_alignment_is_an_error_not_a_crash() {
    let sb = Sandbox::new();
    let input = fixtures().join("inputs/host.bc");
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            "-bundle-align=0".into(),
            "-targets=host-x86_64-unknown-linux-gnu".into(),
            format!("-input={}", input.display()),
            format!("-output={}", sb.path("o").display()),
        ],
    );
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("-bundle-align=0"));
}

#[test]
fn help_is_llvm_22_byte_for_byte() {
    let sb = Sandbox::new();
    let ours = run(&sb.ours(), &["--help"]);
    assert!(ours.status.success());
    assert!(String::from_utf8_lossy(&ours.stdout).starts_with(
        "OVERVIEW: A tool to bundle several input files of the specified type <type> \n"
    ));
    if let Some(llvm) = llvm22() {
        assert_eq!(ours.stdout, run(&llvm, &["--help"]).stdout);
    }
}

#[test]
fn ids_that_are_not_utf8_are_listed_as_bytes_and_matched_as_llvm_does() {
    let sb = Sandbox::new();
    let mut data = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    let id = b"hip-amdgcn-amd-amdhsa--gfx906\xff/../x";
    data.extend_from_slice(&1u64.to_le_bytes());
    data.extend_from_slice(&(32 + 24 + id.len() as u64).to_le_bytes());
    data.extend_from_slice(&3u64.to_le_bytes());
    data.extend_from_slice(&(id.len() as u64).to_le_bytes());
    data.extend_from_slice(id);
    data.extend_from_slice(b"abc");
    let path = sb.path("nonutf8");
    std::fs::write(&path, &data).unwrap();
    let listed = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            "-list".into(),
            format!("-input={}", path.display()),
        ],
    );
    assert!(listed.status.success());
    assert_eq!(listed.stdout, [&id[..], b"\n"].concat());
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".into(),
            "-unbundle".into(),
            format!("-input={}", path.display()),
            "-targets=hip-amdgcn-amd-amdhsa--gfx906".into(),
            format!("-output={}", sb.path("o").display()),
        ],
    );
    // To LLVM the bytes are opaque: `gfx906\xff/../x` is no processor it
    // knows, so the entry has no target ID and cannot be gfx906.
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr)
        .contains("Can't find bundles for hip-amdgcn-amd-amdhsa--gfx906"));
    // extract keeps the file inside the directory.
    let dir = sb.path("x");
    std::fs::create_dir(&dir).unwrap();
    let r = run(
        std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload")),
        &[
            "extract".into(),
            path.display().to_string(),
            "-o".into(),
            dir.display().to_string(),
        ],
    );
    assert!(r.status.success());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["nonutf8.0.hip-amdgcn-amd-amdhsa--gfx906__.._x"]);
}

/// Runs `tool args` with its heap capped at `heap_mib` (RLIMIT_DATA: the
/// input is mapped read-only and shared, which the cap does not count) and
/// killed after `seconds`; stdout and stderr go to files. Returns the status,
/// stderr and stdout.
fn run_bounded(
    sb: &Sandbox,
    tool: &std::path::Path,
    args: &[String],
    heap_mib: u64,
    seconds: u64,
) -> (std::process::ExitStatus, String, String) {
    let (out, err) = (sb.path("bounded.out"), sb.path("bounded.err"));
    let mut child = std::process::Command::new("sh")
        .args(["-c", "ulimit -d \"$1\" && shift && exec \"$@\"", "sh"])
        .arg((heap_mib * 1024).to_string())
        .arg(tool)
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed().as_secs() >= seconds {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?}: still running after {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let text = |path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    (status, text(&err), text(&out))
}

/// A bundle of `n` descriptors with IDs made by `id`, every payload the
/// whole region after the table (`payload` bytes), optionally followed by
/// one descriptor whose payload lies past the end.
fn crafted(n: usize, id: impl Fn(usize) -> String, payload: usize, bad_last: bool) -> Vec<u8> {
    let ids: Vec<String> = (0..n).map(id).collect();
    let table: usize = 32 + ids.iter().map(|i| 24 + i.len()).sum::<usize>() + 24 + 3;
    let count = n as u64 + u64::from(bad_last);
    let mut data = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    data.extend_from_slice(&count.to_le_bytes());
    let mut descriptor = |offset: u64, size: u64, id: &[u8]| {
        data.extend_from_slice(&offset.to_le_bytes());
        data.extend_from_slice(&size.to_le_bytes());
        data.extend_from_slice(&(id.len() as u64).to_le_bytes());
        data.extend_from_slice(id);
    };
    for id in &ids {
        descriptor(table as u64, payload as u64, id.as_bytes());
    }
    if bad_last {
        descriptor(table as u64, u64::MAX / 2, b"bad");
    }
    data.resize(table + payload, 0x5a);
    data
}

/// Hostile bundles (a count of 2^63, 100,000 descriptors all naming one
/// 8 MiB payload, as many repeating one ID, a bad descriptor after them)
/// are listed, unbundled, inspected and extracted with the heap capped at
/// 64 MiB and within 60 s each (a debug build): memory and time follow the
/// input's size, never the sizes it claims.
#[test]
fn hostile_bundles_stay_within_bounded_time_and_memory() {
    let sb = Sandbox::new();
    let ours = sb.ours();
    let cli = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let n = 100_000;
    // The last is the one unbundled (LLVM drops an unknown processor from
    // a requested ID).
    let distinct = |i: usize| match i {
        99_999 => "openmp-nvptx64-nvidia-cuda--sm_90".to_owned(),
        _ => format!("openmp-nvptx64-nvidia-cuda--sm_x{i}"),
    };
    let same = |_| "hipv4-amdgcn-amd-amdhsa--gfx906".to_owned();
    let mut huge_count = std::fs::read(fixtures().join("llvm22/openmp.bundle")).unwrap();
    huge_count[24..32].copy_from_slice(&(1u64 << 63).to_le_bytes());
    let files = [
        ("huge-count", huge_count),
        ("distinct", crafted(n, distinct, 8 << 20, false)),
        ("same", crafted(n, same, 8 << 20, false)),
        ("bad-last", crafted(n, distinct, 8 << 20, true)),
    ];
    for (name, data) in &files {
        let path = sb.path(name);
        std::fs::write(&path, data).unwrap();
        let input = format!("-input={}", path.display());
        let dir = sb.path(&format!("{name}.x"));
        std::fs::create_dir(&dir).unwrap();
        let last = if *name == "same" {
            same(0)
        } else {
            distinct(n - 1)
        };
        let runs: [(&std::path::Path, Vec<String>); 5] = [
            (&ours, vec!["-type=o".into(), "-list".into(), input.clone()]),
            (
                &ours,
                vec![
                    "-type=o".into(),
                    "-unbundle".into(),
                    input.clone(),
                    format!("-targets={last}"),
                    format!("-output={}", sb.path("one").display()),
                ],
            ),
            (cli, vec!["list".into(), path.display().to_string()]),
            (
                cli,
                vec![
                    "inspect".into(),
                    "--json".into(),
                    path.display().to_string(),
                ],
            ),
            (
                cli,
                vec![
                    "extract".into(),
                    path.display().to_string(),
                    "-o".into(),
                    dir.display().to_string(),
                ],
            ),
        ];
        for (tool, args) in runs {
            let (status, stderr, stdout) = run_bounded(&sb, tool, &args, 64, 60);
            let what = format!("{name}: {args:?}");
            assert!(stderr.lines().count() <= 12, "{what}: warnings are capped");
            assert_eq!(status.signal(), None, "{what}: {stderr}");
            let ok = status.success();
            match (*name, args[0].as_str(), args[1].as_str()) {
                ("huge-count", ..) | ("bad-last", ..) => {
                    assert!(!ok, "{what}");
                    assert_eq!(status.code(), Some(1), "{what}");
                    let located = if *name == "huge-count" {
                        "entry count 9223372036854775808 cannot fit"
                    } else {
                        "entry 100000"
                    };
                    // inspect reports it in its JSON and goes on.
                    assert!(
                        stderr.contains(located) || stdout.contains(located),
                        "{what}: {stderr}"
                    );
                }
                // Every payload is the same 8 MiB: only the first fits the
                // bundle's size, so the extraction is refused before
                // anything is written.
                (_, "extract", _) => {
                    assert_eq!(status.code(), Some(1), "{what}");
                    assert!(stderr.contains("entry 1 of the bundle"), "{what}: {stderr}");
                    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{what}");
                }
                _ => assert!(ok, "{what}: {stderr}"),
            }
            if ok && args[1] == "-list" {
                // LLVM lists a repeated ID once.
                let lines = if *name == "same" { 1 } else { n };
                assert_eq!(stdout.lines().count(), lines, "{what}");
            }
            if ok && args[1] == "-unbundle" {
                assert_eq!(std::fs::metadata(sb.path("one")).unwrap().len(), 8 << 20);
            }
        }
    }
}

/// Entries are matched with targets as LLVM 22 reads both (`OffloadTargetInfo`):
/// triple components as its parsed values, an unknown processor dropped,
/// bytes that are not UTF-8 opaque. Each case was a difference found by a
/// differential run against LLVM 22 on mutated bundles; with LLVM 22
/// installed each is also checked against it.
#[test]
fn entries_are_matched_with_targets_as_llvm_22_reads_them() {
    use clangoffload::bundle::write_bundle;
    let sb = Sandbox::new();
    let host = "host-x86_64-unknown-linux-gnu-";
    let gfx906 = "hip-amdgcn-amd-amdhsa--gfx906";
    let compressed_empty = {
        use clangoffload::compressed::{compress, CompressOptions};
        let options = CompressOptions {
            version: 3,
            method: clangoffload::CompressionMethod::Zlib,
            level: None,
        };
        compress(&write_bundle(&[], 1).unwrap(), &options).unwrap()
    };
    let bundle = |entries: &[(&[u8], &[u8])]| write_bundle(entries, 1).unwrap();
    let unmatched = [
        bundle(&[(b"openmp-x86_64-pc-linux-gnu-", b"X")]),
        b"trailing\0\0".to_vec(),
    ]
    .concat();
    // (what, file, targets, -allow-missing-bundles, expected outputs or None for exit 1)
    type Case<'a> = (&'a str, Vec<u8>, Vec<&'a str>, bool, Option<Vec<&'a [u8]>>);
    let cases: Vec<Case> = vec![
        (
            "LLVM 16's spelling, asked for as written",
            bundle(&[(b"hip-amdgcn-amd-amdhsa-gfx906", b"DEV")]),
            vec!["hip-amdgcn-amd-amdhsa-gfx906"],
            false,
            Some(vec![b"DEV"]),
        ),
        (
            "LLVM 16's spelling with a missing host: no host fallback",
            bundle(&[(b"hip-amdgcn-amd-amdhsa-gfx906", b"DEV")]),
            vec![host, "hip-amdgcn-amd-amdhsa-gfx906"],
            true,
            Some(vec![b"", b"DEV"]),
        ),
        (
            "an OS that starts with cuda is CUDA",
            bundle(&[(b"openmp-nvptx64-nvidia-cudafoo--sm_70", b"DEV")]),
            vec!["openmp-nvptx64-nvidia-cuda--sm_70"],
            false,
            Some(vec![b"DEV"]),
        ),
        (
            "a byte that is not UTF-8 makes an ID no match, not invalid",
            bundle(&[
                (host.as_bytes(), b"HOST"),
                (b"hip-amdgcn-amd-amdhsa--gfx90\xff", b"DEV"),
            ]),
            vec![host, gfx906],
            true,
            Some(vec![b"HOST", b""]),
        ),
        (
            "no entry at all in a compressed file: the host gets it decompressed",
            compressed_empty,
            vec![host, gfx906],
            true,
            Some(vec![&b"__CLANG_OFFLOAD_BUNDLE__\0\0\0\0\0\0\0\0"[..], b""]),
        ),
        (
            "no entry matches: the host gets the whole file, bytes after the bundle too",
            unmatched.clone(),
            vec![host, gfx906],
            true,
            Some(vec![&unmatched[..], b""]),
        ),
        (
            "an exact ID wins over an earlier compatible one (LLVM 14's IDs)",
            bundle(&[
                (b"hip-amdgcn-amd-amdhsa-gfx906", b"906"),
                (b"hip-amdgcn-amd-amdhsa-gfx90a", b"90a"),
            ]),
            vec!["hip-amdgcn-amd-amdhsa-gfx90a"],
            false,
            Some(vec![b"90a"]),
        ),
        (
            "an exact ID wins over an earlier compatible kind",
            bundle(&[
                (b"hip-amdgcn-amd-amdhsa--gfx906", b"hip"),
                (b"hipv4-amdgcn-amd-amdhsa--gfx906", b"hipv4"),
            ]),
            vec!["hipv4-amdgcn-amd-amdhsa--gfx906"],
            false,
            Some(vec![b"hipv4"]),
        ),
        (
            "an ID LLVM cannot split, with the target missing",
            bundle(&[(b"hip-amdgcn-amd", b"DEV")]),
            vec![gfx906],
            true,
            None,
        ),
    ];
    for (what, data, targets, allow_missing, expected) in cases {
        let input = sb.path("input");
        std::fs::write(&input, &data).unwrap();
        let outputs: Vec<_> = (0..targets.len())
            .map(|i| sb.path(&format!("out{i}")))
            .collect();
        let mut args = vec![
            "-type=bc".to_owned(),
            "-unbundle".into(),
            format!("-input={}", input.display()),
            format!("-targets={}", targets.join(",")),
        ];
        args.extend(outputs.iter().map(|o| format!("-output={}", o.display())));
        if allow_missing {
            args.push("-allow-missing-bundles".into());
        }
        let mut results = vec![("ours", sb.ours())];
        results.extend(llvm22().map(|llvm| ("LLVM 22", llvm)));
        for (tool_name, tool) in results {
            for o in &outputs {
                let _ = std::fs::remove_file(o);
            }
            let r = run(&tool, &args);
            let stderr = String::from_utf8_lossy(&r.stderr);
            match &expected {
                None => {
                    assert_eq!(r.status.code(), Some(1), "{tool_name}: {what}");
                    assert!(
                        stderr.contains("invalid bundle id read from the bundle"),
                        "{what}"
                    );
                }
                Some(bytes) => {
                    assert!(r.status.success(), "{tool_name}: {what}: {stderr}");
                    for (o, want) in outputs.iter().zip(bytes) {
                        assert_eq!(&std::fs::read(o).unwrap(), want, "{tool_name}: {what}");
                    }
                }
            }
        }
    }

    // Where LLVM's hash order gives a compatible entry although an exact one
    // exists, we give the exact one (docs/differences.md).
    for (entries, target, want) in [
        (
            [
                (&b"hip-amdgcn-amd-amdhsa-gfx906"[..], &b"906"[..]),
                (b"hip-amdgcn-amd-amdhsa-gfx90a", b"90a"),
            ],
            "hip-amdgcn-amd-amdhsa-gfx906",
            &b"906"[..],
        ),
        (
            [
                (b"hip-amdgcn-amd-amdhsa--gfx906", b"hip"),
                (b"hipv4-amdgcn-amd-amdhsa--gfx906", b"hipv4"),
            ],
            "hip-amdgcn-amd-amdhsa--gfx906",
            b"hip",
        ),
    ] {
        let input = sb.path("exact");
        std::fs::write(&input, bundle(&entries)).unwrap();
        let output = sb.path("exact.out");
        let r = run(
            &sb.ours(),
            &[
                "-type=bc".to_owned(),
                "-unbundle".into(),
                format!("-input={}", input.display()),
                format!("-targets={target}"),
                format!("-output={}", output.display()),
            ],
        );
        assert!(r.status.success(), "{target}");
        assert_eq!(std::fs::read(&output).unwrap(), want, "{target}");
    }

    // Damaged bytes after a plain bundle are ignored, as LLVM ignores them.
    let mut trailing = std::fs::read(fixtures().join("llvm22/openmp.bundle")).unwrap();
    trailing.extend_from_slice(b"CCOB\0\0\0\0");
    let input = sb.path("trailing");
    std::fs::write(&input, &trailing).unwrap();
    let r = run(
        &sb.ours(),
        &[
            "-type=bc".to_owned(),
            "-list".into(),
            format!("-input={}", input.display()),
        ],
    );
    assert!(r.status.success());
    assert_eq!(r.stdout.iter().filter(|&&b| b == b'\n').count(), 3);
    assert!(String::from_utf8_lossy(&r.stderr)
        .contains("8 bytes after the bundle at offset 0x0 are not a readable container"));
}
