//! NVIDIA `nvprune`'s options, as the `nvprune` personality reads them.

use super::{opt, Opt, Value};

/// `nvprune`'s options (CUDA documentation, "nvprune"), aliases as rows of
/// their own.
pub const OPTIONS: &[Opt] = &[
    opt("arch", Value::CommaList),
    opt("generate-code", Value::List),
    opt("gencode", Value::List),
    opt("output-file", Value::Str),
    opt("o", Value::Str),
    opt("no-relocatable-elf", Value::Bool),
    opt("options-file", Value::List),
    opt("optf", Value::List),
    opt("help", Value::Bool),
    opt("h", Value::Bool),
    opt("version", Value::Bool),
    opt("V", Value::Bool),
];

pub const HELP: &str = "\
Usage  : nvprune [options] -o <outfile> <infile>   (clangoffload's drop-in for NVIDIA's nvprune)

Keeps only the device code named by -arch / -gencode in a fat binary
(.fatbin: written pruned) or in a host object's .nv_fatbin and
__nv_relfatbin sections (pruned in place: the object keeps its layout).

Options
=======

--arch <arch>,... (-arch)      Code to keep: sm_XX[a|f] keeps that cubin,
                               compute_XX[a|f] that PTX.
--generate-code arch=compute_XX,code=<code>[,...] (-gencode)
                               Keeps each code (sm_YY: cubin; compute_XX: PTX;
                               code=[sm_YY,compute_XX] for both).
--output-file <file> (-o)      The output file (may be the input).
--help (-h), --version (-V)

Entries that are neither cubins nor PTX (LTO-IR) are kept.
Not supported (refused): archives, --no-relocatable-elf, --options-file.
";
