//! libFuzzer runs the `archive_unbundle` checks: `fuzz/checks/archive_unbundle.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/archive_unbundle.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
