//! libFuzzer runs the `containers_walk` checks: `fuzz/checks/containers_walk.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/containers_walk.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
