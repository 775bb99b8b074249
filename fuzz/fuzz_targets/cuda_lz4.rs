//! libFuzzer runs the `cuda_lz4` checks: `fuzz/checks/cuda_lz4.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/cuda_lz4.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
