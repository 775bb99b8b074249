//! `clangoffload wrap --kind=openmp|hip|cuda [--triple=T] -o OUT.c INPUT`:
//! what llvm-offload-wrapper 22 does, as a C11 translation unit instead of
//! bitcode, which compiled for an ELF host and linked into a program embeds
//! INPUT and registers it with the offload runtime before `main`. The unit is
//! the library's (`clangoffload_wrap_c_source`, core's `registration`); this
//! command parses the flags, reads INPUT and writes the unit.

use crate::stdio::out;
use std::io::Write;

use super::Failure;
use crate::ffi::wrapping::{self, check_triple, Source, KINDS};
use crate::flags::{opt, parse_with_positionals, Opt, Value};
use crate::io::os_message;

const OPTIONS: &[Opt] = &[
    opt("kind", Value::Str),
    opt("triple", Value::Str),
    opt("o", Value::Str),
    opt("help", Value::Bool),
    opt("h", Value::Bool),
];

const USAGE: &str = "\
USAGE: clangoffload wrap --kind=openmp|hip|cuda [--triple=<triple>] -o <out.c> <input>

Writes a C11 translation unit that embeds <input> and registers it with the
OpenMP, HIP or CUDA offload runtime, as llvm-offload-wrapper's bitcode does.
ELF hosts only; --triple (default x86_64-pc-linux-gnu) is checked for that.
-o - writes to standard output.
";

/// The validated command line.
struct Args {
    /// The runtime, as the offload kind the library takes.
    kind: u16,
    triple: String,
    output: String,
    input: String,
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let Some(args) = parse_args(program, args)? else {
        out!("{USAGE}")?;
        return Ok(());
    };
    let input = super::open(&args.input)?;
    // What the library embeds: for OpenMP a bare device image is packaged.
    let packaged = wrapping::device_binary(args.kind, input.data()).map_err(Failure)?;
    let data = packaged.as_ref().map_or(input.data(), |b| b.bytes());
    let source = Source::new(args.kind, &args.triple, &args.input, data).map_err(Failure)?;
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        source.write(out, data)?;
        out.flush()
    };
    let result = if args.output == "-" {
        write(&mut crate::stdio::Stdout)
    } else {
        std::fs::File::create(&args.output).and_then(|mut file| write(&mut file))
    };
    result.map_err(|e| Failure(format!("'{}': {}", args.output, os_message(&e))))
}

/// The arguments, checked before any I/O; `None` when help was asked for.
fn parse_args(program: &str, args: &[String]) -> Result<Option<Args>, Failure> {
    let (parsed, errors) = parse_with_positionals(OPTIONS, args, program, 1);
    if let Some(first) = errors.first() {
        return Err(Failure(first.clone()));
    }
    if parsed.flag("help") || parsed.flag("h") {
        return Ok(None);
    }
    let kind = match parsed.last("kind") {
        None => {
            return Err(Failure(
                "for the --kind option: must be specified at least once!".into(),
            ))
        }
        Some(name) => KINDS
            .iter()
            .find(|(known, _)| *known == name)
            .map(|&(_, kind)| kind)
            .ok_or_else(|| {
                Failure(format!(
                    "for the --kind option: Cannot find option named '{name}'! (openmp, hip or cuda)"
                ))
            })?,
    };
    let triple = parsed
        .last("triple")
        .unwrap_or("x86_64-pc-linux-gnu")
        .to_owned();
    check_triple(&triple).map_err(|e| Failure(format!("--triple={triple}: {e}")))?;
    let output = parsed
        .last("o")
        .filter(|o| !o.is_empty())
        .ok_or_else(|| Failure("no output file given (-o <out.c>)".into()))?
        .to_owned();
    let [input] = parsed.positionals.as_slice() else {
        return Err(Failure(format!(
            "Not enough positional command line arguments specified! (the input file)\n{USAGE}"
        )));
    };
    Ok(Some(Args {
        kind,
        triple,
        output,
        input: input.clone(),
    }))
}
