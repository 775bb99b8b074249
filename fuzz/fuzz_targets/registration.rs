//! libFuzzer runs the `registration` checks: `fuzz/checks/registration.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/registration.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
