//! libFuzzer runs the `bitcode_symtab` checks: `fuzz/checks/bitcode_symtab.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/bitcode_symtab.rs"]
mod checks;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
