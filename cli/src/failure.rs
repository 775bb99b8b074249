//! How a command fails: one message, printed after the program's name.

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
