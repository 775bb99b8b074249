//! libFuzzer runs the `coff_locate` checks: `fuzz/checks/coff_locate.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/coff_locate.rs"]
mod checks;
#[path = "../checks/elf_locate.rs"]
#[allow(dead_code)] // its `check` is elf_locate's target's
mod elf_locate;
#[path = "../checks/within.rs"]
mod within;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
