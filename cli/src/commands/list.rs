//! `clangoffload list FILE`: entry IDs in file order, one per line, from
//! every container in the file (compressed ones decompressed).

use std::io::Write;

use super::Failure;
use crate::contents::each_bundle;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let [file] = args else {
        return Err(Failure("usage: clangoffload list FILE".into()));
    };
    let mut out = std::io::stdout().lock();
    each_bundle(program, file, |_, _, bundle| {
        for entry in bundle.entries() {
            out.write_all(entry.id)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })?;
    out.flush()?;
    Ok(())
}
