//! The command-line tool's file reading, as a library so that the benches
//! time the same code the tool runs.

pub mod io;
