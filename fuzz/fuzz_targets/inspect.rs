//! libFuzzer runs the `inspect` checks: `fuzz/checks/inspect.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/inspect.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
