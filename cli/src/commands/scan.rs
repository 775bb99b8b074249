//! `clangoffload scan FILE [--rejected]`: every bundle, compressed bundle,
//! OffloadBinary and CUDA fat binary anywhere in a file of any format (a
//! memory image, a core dump), one line each: offset, kind, size. With `--rejected`, also the
//! places where a magic starts no valid container, and why.

use crate::stdio::out;
use std::fmt::Write as _;

use super::Failure;
use crate::contents::commas;
use crate::ffi::{self, Status};

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, rejected) = match args {
        [file] => (file, false),
        [flag, file] | [file, flag] if flag == "--rejected" => (file, true),
        _ => return Err(Failure(crate::help::usage(crate::help::SCAN))),
    };
    let input = super::open(file)?;
    let hits = input.read_through(|data| ffi::scan(data, rejected));
    let mut out = String::new();
    for hit in hits {
        let kind = ffi::container_kind_name(hit.kind);
        if hit.status == u32::from(Status::Ok) {
            let _ = writeln!(
                out,
                "{:#x}\t{kind}\t{} bytes",
                hit.offset,
                commas(u64::try_from(hit.data.len()).unwrap_or(u64::MAX))
            );
        } else {
            let _ = writeln!(
                out,
                "{:#x}\trejected {kind}: {}",
                hit.offset,
                ffi::status_message(hit.status)
            );
        }
    }
    out!("{out}")?;
    Ok(())
}
