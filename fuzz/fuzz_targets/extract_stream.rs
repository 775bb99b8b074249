//! libFuzzer runs the `extract_stream` checks: `fuzz/checks/extract_stream.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/extract_stream.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
