//! The error that carries what is wrong with a bitcode file; the fault and
//! the limit on abbreviations are the error's words, defined with it.

use crate::{Error, ErrorKind};

pub use crate::error::{BitcodeFault, MAX_ABBREVS};

pub(super) fn malformed(fault: BitcodeFault, offset: u64) -> Error {
    Error::new(ErrorKind::MalformedBitcode { fault }, offset)
}
