//! libFuzzer runs the `archive_parse` checks: `fuzz/checks/archive_parse.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/archive_parse.rs"]
mod checks;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
