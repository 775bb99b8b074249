//! libFuzzer runs the `elf_locate` checks: `fuzz/checks/elf_locate.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/elf_locate.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
