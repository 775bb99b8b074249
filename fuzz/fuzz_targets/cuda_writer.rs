//! libFuzzer runs the `cuda_writer` checks: `fuzz/checks/cuda_writer.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/cuda_writer.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|input: checks::Input| checks::check(input));
