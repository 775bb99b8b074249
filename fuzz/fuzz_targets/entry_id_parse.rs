//! libFuzzer runs the `entry_id_parse` checks: `fuzz/checks/entry_id_parse.rs` says what they
//! assert (`cargo test` replays the seeds and findings through them).
#![no_main]

#[path = "../checks/entry_id_parse.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|text: &str| checks::check(text));
