//! `clangoffload`: see the library (`src/lib.rs`), which is the whole tool.

fn main() {
    std::process::exit(clangoffload_cli::main());
}
