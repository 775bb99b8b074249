//! Text bundles (`-type` i, ii, cui, hipi, d, ll, s) through the bundler
//! drop-in, against the bundles clang-offload-bundler 22 made
//! (tests/fixtures/text, regenerate.sh regen_text).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use common::*;

const TYPES: [&str; 7] = ["i", "ii", "cui", "hipi", "d", "ll", "s"];
const TARGETS: &str =
    "host-x86_64-unknown-linux-gnu,openmp-x86_64-pc-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906";

fn text(name: &str) -> std::path::PathBuf {
    fixtures().join("text").join(name)
}

fn inputs(t: &str) -> [std::path::PathBuf; 3] {
    [
        text(&format!("inputs/host.{t}")),
        text(&format!("inputs/openmp.{t}")),
        text("inputs/empty"),
    ]
}

#[test]
fn bundling_every_text_type_is_byte_identical_to_llvm_22() {
    let sb = Sandbox::new();
    for t in TYPES {
        let out = sb.path(&format!("{t}.bundle"));
        let mut args = vec![format!("-type={t}"), format!("-targets={TARGETS}")];
        args.extend(inputs(t).iter().map(|p| format!("-input={}", p.display())));
        args.push(format!("-output={}", out.display()));
        let r = run(&sb.ours(), &args);
        assert!(
            r.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let ours = std::fs::read(&out).unwrap();
        assert!(
            ours == std::fs::read(text(&format!("{t}.bundle"))).unwrap(),
            "{t}"
        );
    }
}

#[test]
fn list_and_unbundle_give_back_what_llvm_22_bundled() {
    let sb = Sandbox::new();
    for t in TYPES {
        let bundle = text(&format!("{t}.bundle"));
        let r = run(
            &sb.ours(),
            &[
                format!("-type={t}"),
                "-list".into(),
                format!("-input={}", bundle.display()),
            ],
        );
        assert!(r.status.success());
        assert_eq!(
            r.stdout,
            std::fs::read(text(&format!("{t}.list"))).unwrap(),
            "{t}"
        );
        let outs = ["host", "openmp", "hip"].map(|n| sb.path(&format!("{n}.{t}")));
        let mut args = vec![
            format!("-type={t}"),
            "-unbundle".into(),
            format!("-targets={TARGETS}"),
            format!("-input={}", bundle.display()),
        ];
        args.extend(outs.iter().map(|p| format!("-output={}", p.display())));
        let r = run(&sb.ours(), &args);
        assert!(
            r.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        for (out, input) in outs.iter().zip(inputs(t)) {
            assert_eq!(
                std::fs::read(out).unwrap(),
                std::fs::read(input).unwrap(),
                "{t}"
            );
        }
    }
}

#[test]
fn a_start_marker_without_an_end_is_an_error_not_heap_bytes() {
    // LLVM 22 writes its own heap into the output here.
    let sb = Sandbox::new();
    let bad = sb.path("bad.ll");
    std::fs::write(
        &bad,
        "\n; __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\ndefine void @f() {\n",
    )
    .unwrap();
    let out = sb.path("out.ll");
    let r = run(
        &sb.ours(),
        &[
            "-type=ll".to_owned(),
            "-unbundle".into(),
            "-targets=host-x86_64-unknown-linux-gnu".into(),
            format!("-input={}", bad.display()),
            format!("-output={}", out.display()),
        ],
    );
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(stderr.contains("malformed text bundle"), "{stderr}");
    // An end marker before any start: LLVM's -list loops forever.
    std::fs::write(
        &bad,
        "\n; __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n",
    )
    .unwrap();
    let r = run(
        &sb.ours(),
        &[
            "-type=ll".to_owned(),
            "-list".into(),
            format!("-input={}", bad.display()),
        ],
    );
    assert_eq!(r.status.code(), Some(1));
}

#[test]
fn compressed_text_bundles_round_trip_and_llvm_reads_them() {
    let sb = Sandbox::new();
    let t = "s";
    let out = sb.path("z.s");
    let mut args = vec![
        "-type=s".to_owned(),
        "-compress".into(),
        format!("-targets={TARGETS}"),
    ];
    args.extend(inputs(t).iter().map(|p| format!("-input={}", p.display())));
    args.push(format!("-output={}", out.display()));
    let r = run(&sb.ours(), &args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(std::fs::read(&out).unwrap().starts_with(b"CCOB"));
    for tool in [Some(sb.ours()), llvm22()].into_iter().flatten() {
        let r = run(
            &tool,
            &[
                "-type=s".to_owned(),
                "-list".into(),
                format!("-input={}", out.display()),
            ],
        );
        assert!(r.status.success());
        assert_eq!(r.stdout, std::fs::read(text("s.list")).unwrap());
    }
}

#[test]
fn clangoffload_list_finds_the_comment_style_itself() {
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    for t in TYPES {
        let r = run(
            ours,
            &[
                "list".to_owned(),
                text(&format!("{t}.bundle")).display().to_string(),
            ],
        );
        assert!(r.status.success(), "{t}");
        assert_eq!(
            r.stdout,
            std::fs::read(text(&format!("{t}.list"))).unwrap(),
            "{t}"
        );
    }
}
