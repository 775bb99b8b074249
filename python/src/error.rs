//! Core's errors as Python exceptions: one hierarchy under
//! `clangoffload.Error` (a `ValueError`), every exception carrying the core
//! error's fields as attributes (`.kind`, `.offset`, `.entry`), its message
//! the core's.

use clangoffload::bundler::BundlerError;
use clangoffload::{Error, ErrorKind, IdError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    clangoffload,
    PyError,
    PyValueError,
    "What is wrong with an input: `.kind` (the core's error kind, e.g. \
     `\"Truncated\"`), `.offset` (the byte offset of the field at fault, or \
     None), `.entry` (the index of the entry at fault, or None)."
);
create_exception!(
    clangoffload,
    TruncatedError,
    PyError,
    "The input ends inside a field, or a field points past its end."
);
create_exception!(
    clangoffload,
    BadMagicError,
    PyError,
    "The bytes are not the container or file they were read as."
);
create_exception!(
    clangoffload,
    HashMismatchError,
    PyError,
    "A compressed bundle decoded to bytes whose hash is not the stored one."
);
create_exception!(
    clangoffload,
    LimitExceededError,
    PyError,
    "Decoding would exceed a size limit, or memory could not be reserved."
);
create_exception!(
    clangoffload,
    UnsupportedError,
    PyError,
    "A version, method or file variant this library does not read."
);
create_exception!(
    clangoffload,
    InvalidIdError,
    PyError,
    "A bundle entry ID or target ID that does not parse; `.offset` is where \
     in the string, where known."
);
create_exception!(
    clangoffload,
    BundlerFailure,
    PyError,
    "A bundler job refused its request (targets, alignment, missing entries)."
);

/// The exception class for a core error kind: the families callers branch
/// on; every other kind is a plain `Error`.
fn class_of<'py>(py: Python<'py>, kind: &ErrorKind) -> Bound<'py, pyo3::types::PyType> {
    use ErrorKind as K;
    match kind {
        K::Truncated { .. }
        | K::IdOutOfBounds { .. }
        | K::PayloadOutOfBounds { .. }
        | K::MemberOutOfBounds { .. }
        | K::SectionOutOfBounds { .. }
        | K::BinaryOutOfBounds { .. }
        | K::ImageOutOfBounds { .. }
        | K::EntryTableOutOfBounds { .. }
        | K::StringTableOutOfBounds { .. }
        | K::StringOutOfBounds { .. } => py.get_type::<TruncatedError>(),
        K::BadMagic
        | K::UnknownContainer
        | K::NotAnArchive
        | K::NotElf
        | K::NotOffloadBinary
        | K::NotCompressed
        | K::NotBitcode => py.get_type::<BadMagicError>(),
        K::HashMismatch { .. } => py.get_type::<HashMismatchError>(),
        K::SizeLimitExceeded { .. } | K::DecompressedTooLarge { .. } | K::OutOfMemory { .. } => {
            py.get_type::<LimitExceededError>()
        }
        K::UnsupportedVersion { .. }
        | K::UnknownMethod { .. }
        | K::MethodUnavailable { .. }
        | K::UnsupportedElf { .. }
        | K::UnsupportedCoff { .. }
        | K::UnsupportedBinaryVersion { .. }
        | K::ThinArchive => py.get_type::<UnsupportedError>(),
        _ => py.get_type::<PyError>(),
    }
}

/// The name of an enum value as its `Debug` shows it, without its fields
/// (`Truncated { .. }` → `Truncated`): the `.kind` Python sees.
fn variant_name(value: &impl core::fmt::Debug) -> String {
    let text = format!("{value:?}");
    let end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    text.get(..end).unwrap_or_default().to_owned()
}

/// Builds an exception of `class` with message `message` and the fields.
fn raise(
    class: Bound<'_, pyo3::types::PyType>,
    message: String,
    kind: String,
    offset: Option<u64>,
    entry: Option<u64>,
) -> PyErr {
    match class.call1((message,)) {
        Ok(exception) => {
            let set = || -> PyResult<()> {
                exception.setattr("kind", kind)?;
                exception.setattr("offset", offset)?;
                exception.setattr("entry", entry)?;
                Ok(())
            };
            match set() {
                Ok(()) => PyErr::from_value(exception),
                Err(error) => error,
            }
        }
        // Only when the class cannot be instantiated (out of memory).
        Err(error) => error,
    }
}

/// A core error, with `base` added to its offset (where the container it
/// was found in starts in the caller's buffer).
pub(crate) fn core_error(py: Python<'_>, error: &Error, base: u64) -> PyErr {
    let error = error.shifted(base);
    raise(
        class_of(py, &error.kind()),
        error.to_string(),
        variant_name(&error.kind()),
        Some(error.offset()),
        error.entry(),
    )
}

/// An ID that does not parse: the offset is where in `text` the fault is,
/// where the error says.
pub(crate) fn id_error(py: Python<'_>, error: &IdError, text: &str) -> PyErr {
    let at = match *error {
        IdError::MissingFeatureSign { at }
        | IdError::UnknownFeature { at }
        | IdError::DuplicateFeature { at } => u64::try_from(at).ok(),
        _ => None,
    };
    raise(
        py.get_type::<InvalidIdError>(),
        format!("'{text}': {error}"),
        variant_name(error),
        at,
        None,
    )
}

/// A bundler job's error: the core error behind it when there is one (so a
/// truncated input is a `TruncatedError` whichever job read it), else a
/// `BundlerFailure` with the bundler's message.
pub(crate) fn bundler_error(py: Python<'_>, error: &BundlerError) -> PyErr {
    if let Some(core) = error.core_error() {
        return core_error(py, core, 0);
    }
    if let BundlerError::Id(id) = error {
        return id_error(py, id, "target");
    }
    raise(
        py.get_type::<BundlerFailure>(),
        error.message("input").to_string(),
        variant_name(error),
        None,
        None,
    )
}

/// A device that names no SM (`sm_86`, `86`): an `InvalidIdError` of kind
/// `"InvalidSm"`.
pub(crate) fn invalid_sm(py: Python<'_>, text: &str) -> PyErr {
    raise(
        py.get_type::<InvalidIdError>(),
        format!("'{text}': not an SM (sm_86, 86)"),
        "InvalidSm".to_owned(),
        None,
        None,
    )
}
