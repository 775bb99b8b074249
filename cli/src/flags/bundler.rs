//! clang-offload-bundler's options, help text, and the validated arguments
//! they turn into.

use super::{Opt, Value};

/// Every option LLVM 22's clang-offload-bundler accepts.
pub const OPTIONS: &[Opt] = &[
    Opt {
        name: "###",
        value: Value::Bool,
    },
    Opt {
        name: "allow-missing-bundles",
        value: Value::Bool,
    },
    Opt {
        name: "bundle-align",
        value: Value::Uint,
    },
    Opt {
        name: "check-input-archive",
        value: Value::Bool,
    },
    Opt {
        name: "compress",
        value: Value::Bool,
    },
    Opt {
        name: "compression-level",
        value: Value::Int,
    },
    Opt {
        name: "hip-openmp-compatible",
        value: Value::Bool,
    },
    Opt {
        name: "input",
        value: Value::List,
    },
    Opt {
        name: "inputs",
        value: Value::CommaList,
    },
    Opt {
        name: "list",
        value: Value::Bool,
    },
    Opt {
        name: "output",
        value: Value::List,
    },
    Opt {
        name: "outputs",
        value: Value::CommaList,
    },
    Opt {
        name: "targets",
        value: Value::CommaList,
    },
    Opt {
        name: "type",
        value: Value::Str,
    },
    Opt {
        name: "unbundle",
        value: Value::Bool,
    },
    Opt {
        name: "verbose",
        value: Value::Bool,
    },
    Opt {
        name: "h",
        value: Value::Bool,
    },
    Opt {
        name: "help",
        value: Value::Bool,
    },
    Opt {
        name: "help-list",
        value: Value::Bool,
    },
    Opt {
        name: "help-hidden",
        value: Value::Bool,
    },
    Opt {
        name: "help-list-hidden",
        value: Value::Bool,
    },
    Opt {
        name: "version",
        value: Value::Bool,
    },
];

/// `--help`, byte for byte as LLVM 22 prints it.
pub const HELP: &str = "OVERVIEW: A tool to bundle several input files of the specified type <type> 
referring to the same source file but different targets into a single 
one. The resulting file can also be unbundled into different files by 
this tool if -unbundle is provided.

USAGE: clang-offload-bundler [options]

OPTIONS:

Generic Options:

  --help                  - Display available options (--help-hidden for more)
  --help-list             - Display list of available options (--help-list-hidden for more)
  --version               - Display the version of this program

clang-offload-bundler options:

  --###                   - Print any external commands that are to be executed instead of actually executing them - for testing purposes.
  --allow-missing-bundles - Create empty files if bundles are missing when unbundling.
  --bundle-align=<uint>   - Alignment of bundle for binary files
  --check-input-archive   - Check if input heterogeneous archive is valid in terms of TargetID rules.
  --compress              - Compress output file when bundling.
  --compression-level=<n> - Specify the compression level (integer)
  --hip-openmp-compatible - Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa.
  --input=<string>        - Input file. Can be specified multiple times for multiple input files.
  --inputs=<string>       - [<input file>,...] (deprecated)
  --list                  - List bundle IDs in the bundled file.
  --output=<string>       - Output file. Can be specified multiple times for multiple output files.
  --outputs=<string>      - [<output file>,...] (deprecated)
  --targets=<string>      - [<offload kind>-<target triple>,...]
  --type=<string>         - Type of the files to be bundled/unbundled.
                            Current supported types are:
                              i    - cpp-output
                              ii   - c++-cpp-output
                              cui  - cuda-cpp-output
                              hipi - hip-cpp-output
                              d    - dependency
                              ll   - llvm
                              bc   - llvm-bc
                              s    - assembler
                              o    - object
                              a    - archive of objects
                              gch  - precompiled-header
                              ast  - clang AST file
  --unbundle              - Unbundle bundled file into several output files.
  --verbose               - Print debug information.
";
