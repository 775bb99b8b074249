//! One module per command.

pub mod bundler;
pub mod check;
pub mod coverage;
pub mod cuda;
pub mod extract;
pub mod fatbinary;
pub mod inspect;
pub mod kpack;
pub mod kpack_split;
pub mod list;
pub mod nvprune;
pub mod packager;
pub mod scan;
pub mod select;
pub mod wrap;

pub use crate::failure::Failure;

/// Opens an input file (mapped), with the message LLVM's tools give when it
/// cannot be read.
pub fn open(file: &str) -> Result<crate::io::Input, Failure> {
    crate::io::Input::open(std::path::Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", crate::io::os_message(&e))))
}

/// An NVIDIA tool's drop-in (`fatbinary`, `nvprune`) after its arguments
/// are parsed: `--help`/`-h` prints `help`, `--version`/`-V` names the tool
/// it stands in for (`compatible`), otherwise `run`; any error as NVIDIA's
/// tools print theirs (`TOOL fatal   : …` per line) with exit status 1.
pub fn nvidia_tool(
    tool: &str,
    compatible: &str,
    help: &str,
    (parsed, errors): (crate::flags::Parsed, Vec<String>),
    run: impl FnOnce(&crate::flags::Parsed) -> Result<(), Failure>,
) -> i32 {
    use crate::stdio::{errln, out, outln};
    if parsed.flag("help") || parsed.flag("h") {
        let _ = out!("{help}");
        return 0;
    }
    if parsed.flag("version") || parsed.flag("V") {
        let version = env!("CARGO_PKG_VERSION");
        let _ = outln!("{tool}: clangoffload {version} ({compatible} compatible)");
        return 0;
    }
    let result = if errors.is_empty() {
        run(&parsed)
    } else {
        Err(Failure(errors.join("\n")))
    };
    match result {
        Ok(()) => 0,
        Err(Failure(message)) => {
            for line in message.lines() {
                errln!("{tool} fatal   : {line}");
            }
            1
        }
    }
}
