//! `clangoffload list FILE`: entry IDs in file order, one per line.

use std::io::Write;
use std::path::Path;

use super::{sniff, Failure, Sniffed};
use crate::abi::Bundle;
use crate::io::{os_message, Input};

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let [file] = args else {
        return Err(Failure("usage: clangoffload list FILE".into()));
    };
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    match sniff(input.data()) {
        Sniffed::Bundle => {}
        Sniffed::CompressedBundle => {
            return Err(Failure(format!(
                "'{file}': compressed bundles are not supported yet"
            )))
        }
        _ => return Err(Failure(format!("'{file}': not an offload bundle"))),
    }
    let bundle = Bundle::parse(input.data())
        .map_err(|e| Failure(format!("'{file}': malformed bundle: {e}")))?;
    let mut out = std::io::stdout().lock();
    for entry in bundle.entries() {
        out.write_all(entry.id)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    for warning in bundle.diagnostics() {
        eprintln!("{program}: warning: '{file}': {warning}");
    }
    Ok(())
}
