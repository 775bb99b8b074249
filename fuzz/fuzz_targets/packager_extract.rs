//! libFuzzer runs the `packager_extract` checks: `fuzz/checks/packager_extract.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/packager_extract.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
