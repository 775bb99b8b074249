//! libFuzzer runs the `compressed_decompress` checks: `fuzz/checks/compressed_decompress.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/compressed_decompress.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
