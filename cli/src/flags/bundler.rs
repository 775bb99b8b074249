//! clang-offload-bundler's options, help text, and the validated arguments
//! they turn into.

use super::{hidden, opt, Opt, Value};

/// Every option LLVM 22's clang-offload-bundler accepts.
pub const OPTIONS: &[Opt] = &[
    opt("###", Value::Bool),
    opt("allow-missing-bundles", Value::Bool),
    opt("bundle-align", Value::Uint),
    opt("check-input-archive", Value::Bool),
    opt("compress", Value::Bool),
    opt("compression-level", Value::Int),
    opt("hip-openmp-compatible", Value::Bool),
    opt("input", Value::List),
    opt("inputs", Value::CommaList),
    opt("list", Value::Bool),
    opt("output", Value::List),
    opt("outputs", Value::CommaList),
    opt("targets", Value::CommaList),
    opt("type", Value::Str),
    opt("unbundle", Value::Bool),
    opt("verbose", Value::Bool),
    opt("help", Value::Bool),
    opt("help-list", Value::Bool),
    opt("version", Value::Bool),
    hidden("h", Value::Bool),
    hidden("help-hidden", Value::Bool),
    hidden("help-list-hidden", Value::Bool),
    hidden("print-options", Value::Bool),
    hidden("print-all-options", Value::Bool),
];

/// What each help option prints, byte for byte as LLVM 22 prints it (`-h`
/// prints the flat list).
pub const HELP: &[(&str, &str)] = &[
    ("help", include_str!("bundler_help/help.txt")),
    ("help-list", include_str!("bundler_help/help-list.txt")),
    ("h", include_str!("bundler_help/help-list.txt")),
    ("help-hidden", include_str!("bundler_help/help-hidden.txt")),
    (
        "help-list-hidden",
        include_str!("bundler_help/help-list-hidden.txt"),
    ),
];
