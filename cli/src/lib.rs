//! The `clangoffload` tool: inspect, list, bundle and unbundle LLVM
//! offloading containers. Invoked as `clang-offload-bundler` it is a drop-in
//! for LLVM's tool. Everything goes through the library's C ABI.
//!
//! A library so that the benches time the tool's own file reading ([`io`])
//! and the fuzz targets run its output rendering ([`render_inspection`]);
//! `src/main.rs` only calls [`main`].

mod commands;
mod contents;
mod failure;
mod ffi;
mod flags;
mod help;
pub mod io;
mod stdio;

pub use commands::inspect::{
    render as render_inspection, Mode as InspectMode, Rendered, CUDA_DAMAGE,
};
pub use commands::Failure;

use std::path::Path;

/// Runs the tool on the process's arguments; returns its exit status.
pub fn main() -> i32 {
    // Arguments that are not UTF-8 are read lossily rather than panicking.
    let mut args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let argv0 = if args.is_empty() {
        "clangoffload".to_owned()
    } else {
        args.remove(0)
    };
    let name = Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let status = match name.as_deref() {
        Some("clang-offload-bundler") => commands::bundler::main(&argv0, &args),
        Some("fatbinary") => commands::fatbinary::main(&args),
        Some("nvprune") => commands::nvprune::main(&args),
        Some(name) if is_packager(name) => commands::packager::main(&argv0, &args),
        _ => dispatch(&argv0, &args),
    };
    stdio::finish(status)
}

/// Whether the tool was invoked as LLVM's packager: `llvm-offload-binary`,
/// or a name whose stem ends in `clang-offload-packager` (as LLVM checks).
fn is_packager(name: &str) -> bool {
    name == "llvm-offload-binary" || is_legacy_packager(name)
}

/// Whether a program name's stem ends in `clang-offload-packager`: LLVM's
/// deprecated name for the packager, which it warns about.
pub(crate) fn is_legacy_packager(name: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    stem.ends_with("clang-offload-packager")
}

fn dispatch(argv0: &str, args: &[String]) -> i32 {
    let Some((command, rest)) = args.split_first() else {
        stdio::err!("{}", help::TOOL);
        return 1;
    };
    if let Some(text) = help::of(command) {
        if rest.iter().any(|a| a == "--help" || a == "-h") {
            let _ = stdio::out!("{text}");
            return 0;
        }
    }
    let run = match command.as_str() {
        "bundler" => return commands::bundler::main("clang-offload-bundler", rest),
        "packager" => return commands::packager::main("llvm-offload-binary", rest),
        "fatbinary" => return commands::fatbinary::main(rest),
        "nvprune" => return commands::nvprune::main(rest),
        "list" => commands::list::run(argv0, rest),
        "extract" => commands::extract::run(argv0, rest),
        "inspect" => commands::inspect::run(argv0, rest),
        "scan" => commands::scan::run(argv0, rest),
        "check" => commands::check::run(argv0, rest),
        "kpack" => commands::kpack_split::run(argv0, rest),
        "select" => commands::select::run(argv0, rest),
        "coverage" => commands::coverage::run(argv0, rest),
        "wrap" => commands::wrap::run(argv0, rest),
        "--help" | "-h" | "help" => {
            let _ = stdio::out!("{}", help::TOOL);
            return 0;
        }
        "--version" | "-V" => {
            let _ = stdio::outln!("clangoffload {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        other => Err(commands::Failure(format!(
            "unknown command '{other}'; see clangoffload --help"
        ))),
    };
    match run {
        Ok(()) => 0,
        Err(commands::Failure(message)) => {
            stdio::errln!("{argv0}: error: {message}");
            1
        }
    }
}
