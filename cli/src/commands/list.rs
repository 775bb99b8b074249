//! `clangoffload list FILE`: entry IDs in file order, one per line, from
//! every container in the file (compressed ones decompressed).

use std::io::Write;
use std::path::Path;

use super::Failure;
use crate::abi::Bundle;
use crate::contents::{load, starts_with_container, Decoding};
use crate::io::{os_message, Input};

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let [file] = args else {
        return Err(Failure("usage: clangoffload list FILE".into()));
    };
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    if !starts_with_container(input.data()) {
        return Err(Failure(format!("'{file}': not an offload bundle")));
    }
    let warn = |message: &str| eprintln!("{program}: warning: '{file}': {message}");
    let contents = load(input.data(), &Decoding::from_env(false)?, &warn)
        .map_err(|Failure(e)| Failure(format!("'{file}': {e}")))?;
    let mut out = std::io::stdout().lock();
    for loaded in &contents {
        let bundle = Bundle::parse(loaded.bytes())
            .map_err(|e| Failure(format!("'{file}': malformed bundle: {e}")))?;
        for entry in bundle.entries() {
            out.write_all(entry.id)?;
            out.write_all(b"\n")?;
        }
        for warning in bundle.diagnostics() {
            warn(&warning);
        }
    }
    out.flush()?;
    Ok(())
}
