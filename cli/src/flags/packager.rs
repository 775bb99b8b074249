//! llvm-offload-binary's (clang-offload-packager's) options and help text.

use super::{hidden, opt, Opt, Value};

/// Every option LLVM 22's llvm-offload-binary accepts, and ours after it.
pub const OPTIONS: &[Opt] = &[
    opt("archive", Value::Bool),
    opt("image", Value::List),
    opt("o", Value::Str),
    opt("help", Value::Bool),
    opt("help-list", Value::Bool),
    opt("version", Value::Bool),
    hidden("h", Value::Bool),
    hidden("help-hidden", Value::Bool),
    hidden("help-list-hidden", Value::Bool),
    hidden("print-options", Value::Bool),
    hidden("print-all-options", Value::Bool),
    // Upstream LLVM's later options, and our list mode.
    hidden("compress", Value::Bool),
    hidden("compression-format", Value::Str),
    hidden("compression-level", Value::Int),
    hidden("format-version", Value::Uint),
    hidden("list", Value::Bool),
];

const OVERVIEW: &str = "\
OVERVIEW: A utility for bundling several object files into a single binary.
The output binary can then be embedded into the host section table
to create a fatbinary containing offloading code.

USAGE: {program} [options] Extract from <file>.

OPTIONS:
";

const OURS: &str = "
clangoffload additions:

  --compress                  - Write one compressed version 3 binary (upstream LLVM's format)
  --compression-format=<zlib|zstd> - Compression method (default zstd)
  --compression-level=<int>   - Compression level (default zlib 6, zstd 5)
  --format-version=<1|2|3>    - Format version to write (default 1, what LLVM 22 reads)
  --list                      - List every image of <file> with its strings
";

/// What a help option prints: LLVM 22's text, byte for byte, with the
/// program name as invoked, then (for `--help`) our additions.
pub fn help(option: &str, program: &str) -> String {
    let head = OVERVIEW.replace("{program}", program);
    let generic_hidden = "  --help-hidden               - Display all available options\n  --help-list-hidden          - Display list of all available options\n  --print-all-options         - Print all option values after command line parsing\n  --print-options             - Print non-default options after command line parsing\n";
    match option {
        "help" | "help-hidden" => {
            let hidden = if option == "help-hidden" {
                generic_hidden
            } else {
                ""
            };
            format!(
                "{head}\nGeneric Options:\n\n  --help                      - Display available options (--help-hidden for more)\n{hidden}  --help-list                 - Display list of available options (--help-list-hidden for more)\n  --version                   - Display the version of this program\n\nllvm-offload-binary options:\n\n  --archive                   - Write extracted files to a static archive\n  --image=<<key>=<value>,...> - List of key and value arguments. Required keywords are 'file' and 'triple'.\n  -o <file>                   - Write output to <file>.\n{OURS}"
            )
        }
        _ => format!(
            "{head}  --archive                   - Write extracted files to a static archive\n  --help                      - Display available options (--help-hidden for more)\n  --image=<<key>=<value>,...> - List of key and value arguments. Required keywords are 'file' and 'triple'.\n  -o <file>                   - Write output to <file>.\n  --version                   - Display the version of this program\n"
        ),
    }
}
