//! Every fuzz seed (`fuzz/seeds/<target>/`) and every finding kept as a
//! reproducer (`fuzz/artifacts-found/<target>/`) run through the same checks
//! libFuzzer runs (`fuzz/checks/`), on stable Rust and without libFuzzer: a
//! regression of a fixed finding fails `cargo test`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions,
    clippy::panic
)]

#[path = "../../fuzz/checks/mod.rs"]
#[allow(dead_code)]
mod checks;
#[path = "../../fuzz/replay.rs"]
mod replay;

use arbitrary::{Arbitrary, Unstructured};
use replay::{fuzz_dir, replay, REPLAYED_BY_THE_CLI};

/// libFuzzer's `&str` targets skip inputs that are not UTF-8.
fn text(check: fn(&str)) -> impl Fn(&[u8]) {
    move |bytes| {
        if let Ok(text) = std::str::from_utf8(bytes) {
            check(text);
        }
    }
}

/// libFuzzer's typed targets take `arbitrary_take_rest` of the bytes.
fn typed<T: for<'a> Arbitrary<'a>>(check: fn(T)) -> impl Fn(&[u8]) {
    move |bytes| {
        if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(bytes)) {
            check(input);
        }
    }
}

/// A target's name and its checks on raw bytes.
type Target<'a> = (&'a str, &'a dyn Fn(&[u8]));

#[test]
fn every_seed_and_finding_passes_its_targets_checks() {
    let targets: &[Target] = &[
        ("archive_parse", &checks::archive_parse::check),
        ("archive_unbundle", &checks::archive_unbundle::check),
        ("bitcode_symtab", &checks::bitcode_symtab::check),
        ("bundle_parse", &checks::bundle_parse::check),
        ("bundle_roundtrip", &typed(checks::bundle_roundtrip::check)),
        (
            "compressed_decompress",
            &checks::compressed_decompress::check,
        ),
        ("compressed_parse", &checks::compressed_parse::check),
        ("containers_walk", &checks::containers_walk::check),
        ("cuda_fatbin", &checks::cuda_fatbin::check),
        ("cuda_lz4", &checks::cuda_lz4::check),
        ("cuda_writer", &typed(checks::cuda_writer::check)),
        ("coff_locate", &checks::coff_locate::check),
        ("coff_object_bundle", &checks::coff_object_bundle::check),
        ("elf_locate", &checks::elf_locate::check),
        ("elf_object_bundle", &checks::elf_object_bundle::check),
        ("entry_id_parse", &text(checks::entry_id_parse::check)),
        ("extract_stream", &checks::extract_stream::check),
        ("inspect", &checks::inspect::check),
        ("kpack", &checks::kpack::check),
        ("kpack_resolve", &checks::kpack_resolve::check),
        ("offload_binary", &checks::offload_binary::check),
        ("packager_extract", &checks::packager_extract::check),
        ("registration", &checks::registration::check),
        ("scan", &checks::scan::check),
        ("select", &checks::select::check),
        ("target_id_compat", &text(checks::target_id_compat::check)),
        ("text_bundle", &checks::text_bundle::check),
        ("zip", &checks::zip::check),
    ];
    let kept = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .unwrap()
        .count();
    assert_eq!(
        targets.len() + REPLAYED_BY_THE_CLI.len(),
        kept,
        "a fuzz target is not replayed here or by the CLI's tests"
    );
    for (target, check) in targets {
        let count = replay(target, check);
        assert!(count > 0, "{target} has no seeds");
        println!("{target}: {count} inputs");
    }
}
