//! The bundler's jobs, whole: what a file is, `-list`, `-unbundle` and
//! bundling with clang-offload-bundler 22's rules (core's `bundler`), so a C
//! build tool or runtime does in one call what the `clangoffload` tool does.
//! A job returns a `clangoffload_job`: for each output, the pieces it is made
//! of, to write where the caller likes (or with `clangoffload_job_write_fd`
//! / `_write_path`).
//!
//! One module per part: `kind` (what a file is), `options` (what a job
//! reads, and the shell every one-input job runs in), `notify` (notes to
//! the caller), `jobs` (the jobs), `job` (a job's outputs, read by index),
//! `write` (outputs to descriptors and paths), `extraction` (a container
//! at a time) and `stream` (an extraction to the caller's callbacks).

mod extraction;
mod job;
mod jobs;
mod kind;
mod notify;
mod options;
mod stream;
#[cfg(feature = "std")]
mod write;

pub use extraction::*;
pub use job::*;
pub use jobs::*;
pub use kind::*;
pub use notify::*;
pub use options::*;
pub use stream::*;
#[cfg(feature = "std")]
pub use write::*;
