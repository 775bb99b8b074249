//! `clangoffload extract FILE [-o DIR]`: every entry of every container to its
//! own file, named `<file name>.<index>.<entry ID>` (index counted across the
//! containers, in file order) with the ID made safe as a file name. The
//! library plans it (`clangoffload_bundler_extract`): names and all.

use std::fs::File;
use std::path::PathBuf;

use super::bundler::write_pieces;
use super::Failure;
use crate::ffi::job::Job;
use crate::io::os_message;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, dir) = match args {
        [file] => (file, PathBuf::from(".")),
        [file, flag, dir] if flag == "-o" => (file, PathBuf::from(dir)),
        _ => return Err(Failure("usage: clangoffload extract FILE [-o DIR]".into())),
    };
    let input = super::open(file)?;
    let options = super::bundler::any_file(file)?;
    let plan = Job::extract(program, input.data(), &options).map_err(Failure)?;
    for output in plan.outputs() {
        let path = dir.join(String::from_utf8_lossy(output.name).as_ref());
        let mut out = File::create(&path)
            .map_err(|e| Failure(format!("'{}': {}", path.display(), os_message(&e))))?;
        write_pieces(&mut out, &output.pieces, &[&input])?;
        println!("{}", path.display());
    }
    Ok(())
}
