//! `clangoffload list FILE`: entry IDs in file order, one per line, from
//! every container in the file (compressed ones decompressed), from the bundle
//! sections of an ELF object, from a text bundle (any comment style), or from
//! every bundle member of an archive (`<member>: <id>`). Which files hold what
//! is the library's rule (`clangoffload_bundler_list` with no type).

use std::io::Write;

use super::Failure;
use crate::ffi::job::Job;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let [file] = args else {
        return Err(Failure("usage: clangoffload list FILE".into()));
    };
    let input = super::open(file)?;
    let options = super::bundler::any_file(file)?;
    let listed = Job::list(program, &input, &options).map_err(Failure)?;
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    for (member, id) in listed.listed() {
        if !member.is_empty() {
            out.write_all(member)?;
            out.write_all(b": ")?;
        }
        out.write_all(id)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
