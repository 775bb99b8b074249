//! NVIDIA `fatbinary` 13.5's options (its `--help`), as the `fatbinary`
//! personality reads them: every option it has, including the short
//! aliases, so that one it does not support is refused by name rather
//! than taken for an unknown one.

use super::{opt, Opt, Value};

/// Every option of `fatbinary` 13.5. Aliases are rows of their own
/// (`g` for `debug`, `c` for `device-c`, …); the command joins them.
pub const OPTIONS: &[Opt] = &[
    opt("32", Value::Bool),
    opt("64", Value::Bool),
    opt("cmdline", Value::Str),
    opt("compress", Value::Str),
    opt("compress-all", Value::Bool),
    opt("compress-mode", Value::Str),
    opt("concat", Value::Bool),
    opt("create", Value::Str),
    opt("debug", Value::Bool),
    opt("g", Value::Bool),
    opt("device-c", Value::Bool),
    opt("c", Value::Bool),
    opt("embedded-fatbin", Value::Str),
    opt("fatbin", Value::Str),
    opt("help", Value::Bool),
    opt("h", Value::Bool),
    opt("ident", Value::Str),
    opt("image2", Value::List),
    opt("image3", Value::List),
    opt("link", Value::Bool),
    opt("no-asm", Value::Bool),
    opt("options-file", Value::List),
    opt("optf", Value::List),
    opt("tileir-cmdline", Value::Str),
    opt("version", Value::Bool),
    opt("V", Value::Bool),
];

/// The options `fatbinary` has and this tool refuses, with why.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    ("concat", "--concat entries are read but not written"),
    (
        "embedded-fatbin",
        "the C include file of --embedded-fatbin is not written",
    ),
    (
        "fatbin",
        "the C include file of --embedded-fatbin is not written",
    ),
    (
        "image2",
        "--image2 (host objects, libraries) is not supported",
    ),
    ("options-file", "--options-file is not supported"),
    ("optf", "--options-file is not supported"),
    ("tileir-cmdline", "TileIR images are not supported"),
];

pub const HELP: &str = "\
Usage  : fatbinary [options]   (clangoffload's drop-in for NVIDIA's fatbinary 13.5)

Options
=======

--32 (-32), --64 (-64)         Entries for 32-bit or 64-bit code (default 64).
--create <file> (-create)      Write the fat binary to <file>.
--image3 kind=elf|ptx,sm=<sm>,file=<file> (-image3)
                               An image: a cubin or PTX for sm (80, 90a, 100f).
--compress <true|false>        Compress PTX and debug images (default true).
--compress-all (-compress-all) Compress every image.
--compress-mode <default|size|speed|balance|none>
                               zstd (default, balance, size) or LZ4 (speed).
--debug (-g)                   Debug code (flag 0x2; compressed).
--device-c (-c)                Relocatable code (cubins compressed).
--link (-link)                 Linked code (no change to the output).
--ident <name> (-ident)        The identifier stored with every image.
--cmdline <options> (-cmdline) The ptxas options stored with PTX images.
--no-asm (-no-asm)             Accepted (it only concerns --embedded-fatbin).
--help (-h), --version (-V)

Not supported (refused): --concat, --embedded-fatbin, --image2,
--options-file, --tileir-cmdline.
";
