//! `clangoffload extract FILE [-o DIR]`: every entry of every container to its
//! own file — bundle entries as `<file name>[.<member>].<index>.<entry ID>`,
//! OffloadBinary images as `<file name>[.<member>].<index>.<triple>[-<arch>]
//! [.<ext>]` (index counted across the containers, in file order), every part
//! made safe as a file name. The library plans it
//! (`clangoffload_bundler_extract`): names and all.

use std::path::PathBuf;

use super::bundler::write_output;
use super::Failure;
use crate::ffi::job::Job;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, dir) = match args {
        [file] => (file, PathBuf::from(".")),
        [file, flag, dir] if flag == "-o" => (file, PathBuf::from(dir)),
        _ => return Err(Failure("usage: clangoffload extract FILE [-o DIR]".into())),
    };
    let input = super::open(file)?;
    let options = super::bundler::any_file(file)?;
    let job = Job::extract(program, input.data(), &options).map_err(Failure)?;
    for (i, output) in job.outputs().iter().enumerate() {
        let path = dir.join(String::from_utf8_lossy(output.name).as_ref());
        let path = path.to_string_lossy();
        write_output(&job, i, &path, &[&input])?;
        println!("{path}");
    }
    // Damage found on the way, reported once what could be read is written.
    job.failure()
        .map_or(Ok(()), |message| Err(Failure(message.into())))
}
