//! libFuzzer runs the `c_abi` checks: `fuzz/checks/c_abi.rs` says what they
//! assert (the CLI's tests replay the seeds and findings through them).
#![no_main]

#[path = "../checks/c_abi.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
