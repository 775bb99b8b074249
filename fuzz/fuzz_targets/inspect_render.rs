//! libFuzzer runs the `inspect_render` checks: `fuzz/checks/inspect_render.rs`
//! says what they assert (the CLI's tests replay the seeds and findings
//! through them).
#![no_main]

#[path = "../checks/inspect_render.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
