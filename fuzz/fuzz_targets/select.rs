//! libFuzzer runs the `select` checks: `fuzz/checks/select.rs` says what
//! they assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/select.rs"]
mod checks;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
