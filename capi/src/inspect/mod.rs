//! Inspection of any file, whole (core's `inspect`): every archive member,
//! ELF offload section and container, each container with its header, its
//! entries (AMDGPU code objects checked against their IDs) or its
//! OffloadBinary images, the wrapper records and other notes, and what is
//! damaged, reported as data while the walk goes on. What
//! `clangoffload inspect` prints, for a C program to read.
//!
//! `walk` makes an inspection (`clangoffload_inspect`, `_parallel`) and
//! frees it, `inspection` is the handle, `records` reads it by index as C
//! records.

mod inspection;
mod records;
#[cfg(test)]
mod tests;
mod walk;

pub use inspection::*;
pub use records::*;
pub use walk::*;
