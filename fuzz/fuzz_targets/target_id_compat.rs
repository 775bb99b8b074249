//! libFuzzer runs the `target_id_compat` checks: `fuzz/checks/target_id_compat.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/target_id_compat.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|text: &str| checks::check(text));
