//! The fuzz targets that run the tool's own code (`fuzz/replay.rs` names
//! them): every seed and every kept finding through the target's checks, on
//! stable Rust and without libFuzzer. The core's targets are replayed by
//! `core/tests/fuzz_replay.rs`.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../../fuzz/checks/inspect_render.rs"]
mod inspect_render;
#[path = "../../fuzz/replay.rs"]
mod replay;

#[test]
fn every_seed_and_finding_passes_the_cli_targets_checks() {
    assert_eq!(replay::REPLAYED_BY_THE_CLI, ["inspect_render"]);
    let count = replay::replay("inspect_render", inspect_render::check);
    assert!(count > 0, "inspect_render has no seeds");
}
