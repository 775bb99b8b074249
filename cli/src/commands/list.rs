//! `clangoffload list FILE`: entry IDs in file order, one per line, from
//! every container in the file (compressed ones decompressed), from the bundle
//! sections of an ELF object, from a text bundle (any comment style), or from
//! every bundle member of an archive (`<member>: <id>`). Which files hold what
//! is the library's rule (`clangoffload_bundler_list` with no type). Then
//! the entries of CUDA fat binaries, as cuobjdump names them when it
//! extracts them (`cuda.rs`). A kpack archive: `<binary key>: <ID>` per
//! entry (`kpack.rs`). A file with none of these says so, and what it is
//! (the library's words, as `extract` and `inspect` say them), and fails.

use std::io::Write;

use super::Failure;
use crate::ffi::job::Job;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let usage = || Failure(crate::help::usage(crate::help::LIST));
    let (mut file, mut kpack_paths) = (None, Vec::new());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--kpack-path" => kpack_paths.push(rest.next().ok_or_else(usage)?.as_str()),
            _ if arg.starts_with("--kpack-path=") => {
                kpack_paths.extend(arg.strip_prefix("--kpack-path="));
            }
            _ if file.is_none() => file = Some(arg.as_str()),
            _ => return Err(usage()),
        }
    }
    let file = file.ok_or_else(usage)?;
    let input = super::open(file)?;
    if crate::ffi::kpack::is_kpack(input.data()) {
        return super::kpack::list(file, input.data());
    }
    if let Some((through, _archives)) =
        super::kpack::read_through(file, input.data(), &kpack_paths)?
    {
        let errors = super::kpack::list_host(&through)?;
        return super::extract::outcome(program, &errors);
    }
    let cuda = super::cuda::read(file, input.data())?;
    let options = super::bundler::any_file(file)?;
    let listed = match Job::list(program, &input, &options) {
        Ok(listed) => Some(listed),
        // A file of CUDA fat binaries only is no bundle: not an error here.
        Err(_) if cuda.is_some() => None,
        Err(e) => return Err(Failure(e)),
    };
    let mut out = std::io::BufWriter::new(crate::stdio::Stdout);
    let mut any = false;
    for (member, id) in listed.iter().flat_map(|l| l.listed()) {
        any = true;
        if !member.is_empty() {
            out.write_all(member)?;
            out.write_all(b": ")?;
        }
        out.write_all(id)?;
        out.write_all(b"\n")?;
    }
    if let Some(cuda) = &cuda {
        for line in super::cuda::list_lines(cuda) {
            any = true;
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    if let Some(fault) = cuda.as_ref().and_then(|c| c.fault()) {
        return Err(Failure(format!("'{file}': {fault}")));
    }
    if !any {
        return Err(Failure(nothing_listed(file, input.data(), cuda.as_ref())?));
    }
    Ok(())
}

/// Why a file gives nothing to list: it holds no container at all (what it
/// is, in the words `extract` and `inspect` use), or only containers that
/// have no IDs (OffloadBinaries: `inspect` shows them).
fn nothing_listed(
    file: &str,
    data: &[u8],
    cuda: Option<&crate::ffi::cuda::CudaFatbins<'_>>,
) -> Result<String, Failure> {
    let found = crate::ffi::inspection::Inspection::new(data, 0, false)?;
    Ok(if super::inspect::holds_nothing(data, &found, cuda) {
        format!("'{file}': {}", crate::ffi::inspection::describe(data).0)
    } else {
        format!(
            "'{file}': no bundle entry or CUDA fat binary entry to list (inspect shows every container)"
        )
    })
}
