//! libFuzzer runs the `kpack_resolve` checks: `fuzz/checks/kpack_resolve.rs`
//! says what they assert (`cargo test` replays the seeds and findings
//! through them).
#![no_main]

#[path = "../checks/kpack_resolve.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
