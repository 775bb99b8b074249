//! One module per command.

pub mod bundler;
pub mod cuda;
pub mod extract;
pub mod fatbinary;
pub mod inspect;
pub mod list;
pub mod nvprune;
pub mod packager;
pub mod scan;
pub mod wrap;

use std::fmt::Display;

/// A command's failure: the message LLVM-style tools print after
/// `<program>: error: `.
#[derive(Debug)]
pub struct Failure(pub String);

impl<T: Display> From<T> for Failure {
    fn from(e: T) -> Self {
        Failure(e.to_string())
    }
}

/// Opens an input file (mapped), with the message LLVM's tools give when it
/// cannot be read.
pub fn open(file: &str) -> Result<crate::io::Input, Failure> {
    crate::io::Input::open(std::path::Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", crate::io::os_message(&e))))
}
