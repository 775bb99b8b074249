//! libFuzzer runs the `offload_binary` checks: `fuzz/checks/offload_binary.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/offload_binary.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
