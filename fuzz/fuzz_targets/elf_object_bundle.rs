//! libFuzzer runs the `elf_object_bundle` checks: `fuzz/checks/elf_object_bundle.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/elf_object_bundle.rs"]
mod checks;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
