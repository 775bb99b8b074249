//! libFuzzer runs the `kpack` checks: `fuzz/checks/kpack.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/kpack.rs"]
mod checks;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
