//! The fuzz targets that run the C ABI or the tool's own code
//! (`fuzz/replay.rs` names them): every seed and every kept finding through
//! the target's checks, on stable Rust and without libFuzzer. The core's
//! targets are replayed by `core/tests/fuzz_replay.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions,
    clippy::panic
)]

#[path = "../../fuzz/checks/c_abi.rs"]
mod c_abi;
#[path = "../../fuzz/checks/inspect_render.rs"]
mod inspect_render;
#[path = "../../fuzz/replay.rs"]
mod replay;

/// A target's name and its checks.
type Target = (&'static str, fn(&[u8]));

#[test]
fn every_seed_and_finding_passes_the_cli_targets_checks() {
    let targets: [Target; 2] = [
        ("c_abi", c_abi::check),
        ("inspect_render", inspect_render::check),
    ];
    assert_eq!(
        targets.map(|(name, _)| name),
        replay::REPLAYED_BY_THE_CLI,
        "a target named in fuzz/replay.rs is not replayed here"
    );
    for (target, check) in targets {
        let count = replay::replay(target, check);
        assert!(count > 0, "{target} has no seeds");
        println!("{target}: {count} inputs");
    }
}
