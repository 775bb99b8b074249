//! libFuzzer runs the `bundle_roundtrip` checks: `fuzz/checks/bundle_roundtrip.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/bundle_roundtrip.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|input: checks::Input| checks::check(input));
