//! `clangoffload wrap --kind=openmp|hip|cuda [--triple=T] -o OUT.c INPUT`:
//! what llvm-offload-wrapper 22 does, as a C11 translation unit instead of
//! bitcode. Compiled for an ELF host and linked into a program, it embeds
//! INPUT and registers it with the offload runtime before `main`:
//!
//! * openmp: the whole input in `.llvm.offloading` (type
//!   `SHT_LLVM_OFFLOADING`, align 8); one `__tgt_device_image` whose
//!   `ImageStart`/`ImageEnd` bound the first image of the OffloadBinary (the
//!   whole input if it is none); a `__tgt_bin_desc`; a constructor (priority
//!   101) calling `__tgt_register_lib` and, at exit, `__tgt_unregister_lib`.
//! * hip / cuda: the input in `.hip_fatbin` / `.nv_fatbin`; the 24-byte
//!   wrapper record in `.hipFatBinSegment` / `.nvFatBinSegment`; a
//!   constructor calling `__hipRegisterFatBinary` / `__cudaRegisterFatBinary`,
//!   then registering every entry of its kind between
//!   `__start_llvm_offload_entries` and `__stop_llvm_offload_entries` exactly
//!   as LLVM's `.hip.globals_reg` does (CUDA then calls
//!   `__cudaRegisterFatBinaryEnd`), and at exit `__hip/__cudaUnregisterFatBinary`.
//!
//! The layouts are those of `clangoffload.h` (`__tgt_offload_entry`,
//! `__tgt_device_image`, `__tgt_bin_desc`, `clangoffload_fatbin_wrapper`);
//! the TU spells them out so that it compiles on its own.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use clangoffload_capi as c;

use super::Failure;
use crate::abi;
use crate::flags::{opt, parse_with_positionals, Opt, Value};
use crate::io::{os_message, Input};

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

/// The offload runtime a wrapper registers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    OpenMp,
    Hip,
    Cuda,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        match name {
            "openmp" => Some(Kind::OpenMp),
            "hip" => Some(Kind::Hip),
            "cuda" => Some(Kind::Cuda),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::OpenMp => "openmp",
            Kind::Hip => "hip",
            Kind::Cuda => "cuda",
        }
    }
}

/// The validated command line.
struct Args {
    kind: Kind,
    triple: String,
    output: String,
    input: String,
}

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let Some(args) = parse_args(program, args)? else {
        print!("{USAGE}");
        return Ok(());
    };
    let input = Input::open(Path::new(&args.input), false)
        .map_err(|e| Failure(format!("'{}': {}", args.input, os_message(&e))))?;
    let data = input.data();
    let text = match args.kind {
        Kind::OpenMp => openmp_unit(&args, data)?,
        Kind::Hip | Kind::Cuda => fatbin_unit(&args, data),
    };
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        out.write_all(text.head.as_bytes())?;
        write_hex_bytes(out, data)?;
        out.write_all(text.tail.as_bytes())?;
        out.flush()
    };
    let result = if args.output == "-" {
        write(&mut std::io::stdout().lock())
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
        Some(name) => Kind::from_name(name).ok_or_else(|| {
            Failure(format!(
                "for the --kind option: Cannot find option named '{name}'! (openmp, hip or cuda)"
            ))
        })?,
    };
    let triple = parsed
        .last("triple")
        .unwrap_or("x86_64-pc-linux-gnu")
        .to_owned();
    check_elf_triple(&triple)?;
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

/// Only ELF hosts: Mach-O and COFF name their sections and bound symbols
/// differently (`__NV_CUDA,__nv_fatbin`, `llvm_offload_entries$OE`).
fn check_elf_triple(triple: &str) -> Result<(), Failure> {
    let lower = triple.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    let format = if has(&["darwin", "macos", "ios", "tvos", "watchos", "xros", "apple"]) {
        "Mach-O"
    } else if has(&["windows", "win32", "mingw", "cygwin", "msvc", "uefi"]) {
        "COFF"
    } else if lower.is_empty() {
        "no"
    } else {
        return Ok(());
    };
    Err(Failure(format!(
        "--triple={triple}: {format} object format; only ELF hosts are supported"
    )))
}

/// The translation unit around the image bytes.
struct Unit {
    head: String,
    tail: String,
}

fn header_comment(args: &Args, data: &[u8]) -> String {
    let input = args.input.replace("*/", "*\\/");
    format!(
        "/* Generated by clangoffload {} wrap --kind={} --triple={} from '{input}'\n \
         * ({} bytes). Do not edit. It does what llvm-offload-wrapper 22's output\n \
         * does: compile it as C11 for an ELF host and link it into the program. */\n\
         #include <stddef.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n\
         struct __tgt_offload_entry {{\n  uint64_t reserved;\n  uint16_t version;\n  \
         uint16_t kind;\n  uint32_t flags;\n  void *addr;\n  char *symbol_name;\n  \
         uint64_t size;\n  uint64_t data;\n  void *aux_addr;\n}};\n\n\
         /* Bounds of the program's offload entries, defined by the linker; the\n \
         * empty array keeps the section, and so them, in existence. */\n\
         extern struct __tgt_offload_entry __start_llvm_offload_entries[]\n    \
         __attribute__((visibility(\"hidden\")));\n\
         extern struct __tgt_offload_entry __stop_llvm_offload_entries[]\n    \
         __attribute__((visibility(\"hidden\")));\n\
         __extension__ static const struct __tgt_offload_entry clangoffload_dummy_entries[0]\n    \
         __attribute__((section(\"llvm_offload_entries\"), aligned(8), used));\n\n",
        env!("CARGO_PKG_VERSION"),
        args.kind.name(),
        args.triple,
        data.len(),
    )
}

/// The image array's declaration up to its opening brace.
fn image_declaration(data: &[u8], section: &str, align: Option<u32>) -> String {
    let align = align.map_or(String::new(), |a| format!(", aligned({a})"));
    // C has no empty arrays: an empty input is one zero byte, bounded by 0..0.
    format!(
        "static const unsigned char clangoffload_image[{}]\n    \
         __attribute__((section(\"{section}\"){align}, used)) = {{\n",
        data.len().max(1)
    )
}

fn openmp_unit(args: &Args, data: &[u8]) -> Result<Unit, Failure> {
    let (start, end) = first_image_range(data)?;
    let mut head = header_comment(args, data);
    head.push_str(
        "struct __tgt_device_image {\n  void *ImageStart;\n  void *ImageEnd;\n  \
         struct __tgt_offload_entry *EntriesBegin;\n  struct __tgt_offload_entry *EntriesEnd;\n};\n\n\
         struct __tgt_bin_desc {\n  int32_t NumDeviceImages;\n  \
         struct __tgt_device_image *DeviceImages;\n  \
         struct __tgt_offload_entry *HostEntriesBegin;\n  \
         struct __tgt_offload_entry *HostEntriesEnd;\n};\n\n\
         void __tgt_register_lib(struct __tgt_bin_desc *desc);\n\
         void __tgt_unregister_lib(struct __tgt_bin_desc *desc);\n\n\
         /* The section gets LLVM's type SHT_LLVM_OFFLOADING (0x6fff4c0b), as in\n \
         * llvm-offload-wrapper's objects, where the linker wrapper and\n \
         * llvm-objdump --offloading look for it. */\n\
         __asm__(\".section .llvm.offloading,\\\"a\\\",@0x6fff4c0b\\n\\t.previous\");\n\n\
         /* The whole input. */\n",
    );
    head.push_str(&image_declaration(data, ".llvm.offloading", Some(8)));
    let mut tail = String::from("};\n\n");
    let _ = write!(
        tail,
        "/* Bytes {start}..{end}: the image of the OffloadBinary's first entry. */\n\
         static const struct __tgt_device_image clangoffload_device_images[1] = {{\n  \
         {{(void *)(clangoffload_image + {start}), (void *)(clangoffload_image + {end}),\n   \
         __start_llvm_offload_entries, __stop_llvm_offload_entries}},\n}};\n\n\
         static const struct __tgt_bin_desc clangoffload_descriptor = {{\n  \
         1, (struct __tgt_device_image *)clangoffload_device_images,\n  \
         __start_llvm_offload_entries,\n  \
         __stop_llvm_offload_entries,\n}};\n\n\
         static void clangoffload_descriptor_unreg(void) {{\n  \
         __tgt_unregister_lib((struct __tgt_bin_desc *)&clangoffload_descriptor);\n}}\n\n\
         __attribute__((constructor(101))) static void clangoffload_descriptor_reg(void) {{\n  \
         __tgt_register_lib((struct __tgt_bin_desc *)&clangoffload_descriptor);\n  \
         atexit(clangoffload_descriptor_unreg);\n}}\n"
    );
    Ok(Unit { head, tail })
}

/// Where llvm-offload-wrapper points `ImageStart`/`ImageEnd`: at the first
/// entry's image when the input starts with an OffloadBinary, else at the
/// whole input. The library finds the image (the first record
/// `clangoffload_device_images_fill` makes).
fn first_image_range(data: &[u8]) -> Result<(usize, usize), Failure> {
    const MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];
    if !data.starts_with(&MAGIC) {
        return Ok((0, data.len()));
    }
    let (images, skipped) =
        abi::device_image_ranges(data).map_err(|e| Failure(format!("finding the images: {e}")))?;
    let declared = data
        .get(8..16)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes);
    match images.first().copied() {
        Some((start, end)) if u64::try_from(end).is_ok_and(|end| end <= declared) => {
            Ok((start, end))
        }
        _ if skipped > 0 => Err(Failure(
            "the OffloadBinary is compressed (version 3): its image exists only once \
             decompressed, which LLVM's runtimes do not do"
                .into(),
        )),
        _ => Err(Failure(
            "the input starts with the OffloadBinary magic but is not a valid OffloadBinary".into(),
        )),
    }
}

fn fatbin_unit(args: &Args, data: &[u8]) -> Unit {
    let (rt, magic, image_section, wrapper_section, kind) = match args.kind {
        Kind::Hip => (
            "hip",
            c::CLANGOFFLOAD_FATBIN_MAGIC_HIP,
            ".hip_fatbin",
            ".hipFatBinSegment",
            c::CLANGOFFLOAD_ENTRY_KIND_HIP,
        ),
        _ => (
            "cuda",
            c::CLANGOFFLOAD_FATBIN_MAGIC_CUDA,
            ".nv_fatbin",
            ".nvFatBinSegment",
            c::CLANGOFFLOAD_ENTRY_KIND_CUDA,
        ),
    };
    let mut head = header_comment(args, data);
    let _ = write!(
        head,
        "struct clangoffload_fatbin_wrapper {{\n  uint32_t magic;\n  uint32_t version;\n  \
         const void *binary;\n  void *reserved;\n}};\n\n\
         /* The runtime's entry points, as llvm-offload-wrapper declares them. */\n\
         void **__{rt}RegisterFatBinary(void *wrapper);\n\
         void __{rt}UnregisterFatBinary(void **handle);\n\
         int __{rt}RegisterFunction(void **handle, void *addr, char *name, char *device_name,\n    \
         int thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim, int *wsize);\n\
         void __{rt}RegisterVar(void **handle, void *addr, char *name, char *device_name,\n    \
         int is_extern, size_t size, int is_constant, int is_global);\n\
         void __{rt}RegisterManagedVar(void **handle, void *aux_addr, void *addr, char *name,\n    \
         size_t size, int align);\n"
    );
    match args.kind {
        Kind::Hip => head.push_str(
            "void __hipRegisterSurface(void **handle, void *addr, char *name, char *device_name,\n    \
             int type, int is_extern);\n\
             void __hipRegisterTexture(void **handle, void *addr, char *name, char *device_name,\n    \
             int type, int normalized, int is_extern);\n",
        ),
        _ => head.push_str("void __cudaRegisterFatBinaryEnd(void **handle);\n"),
    }
    head.push_str("\n/* The input, verbatim. */\n");
    head.push_str(&image_declaration(data, image_section, None));

    let mut tail = String::from("};\n\n");
    let _ = write!(
        tail,
        "static const struct clangoffload_fatbin_wrapper clangoffload_fatbin_wrapper\n    \
         __attribute__((section(\"{wrapper_section}\"), aligned(8), used)) = {{\n  \
         0x{magic:08x}u, 1, clangoffload_image, NULL,\n}};\n\n\
         static void **clangoffload_binary_handle;\n\n\
         /* Every entry of kind {kind} ({rt}): size 0 is a kernel, otherwise the\n \
         * type in the low flag bits says what to register. */\n\
         static void clangoffload_globals_reg(void **handle) {{\n  \
         struct __tgt_offload_entry *entry = __start_llvm_offload_entries;\n  \
         for (; entry != __stop_llvm_offload_entries; ++entry) {{\n    \
         if (entry->kind != {kind})\n      continue;\n    \
         int is_extern = (entry->flags >> 3) & 1;\n    \
         int data = (int)(uint32_t)entry->data;\n"
    );
    if args.kind == Kind::Hip {
        tail.push_str("    int normalized = (entry->flags >> 5) & 1;\n");
    }
    let _ = write!(
        tail,
        "    if (entry->size == 0) {{\n      \
         __{rt}RegisterFunction(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
         -1, NULL, NULL, NULL, NULL, NULL);\n      continue;\n    }}\n    \
         switch (entry->flags & 7) {{\n    \
         case 0:\n      \
         __{rt}RegisterVar(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
         is_extern, entry->size, (entry->flags >> 4) & 1, 0);\n      break;\n    \
         case 1:\n      \
         __{rt}RegisterManagedVar(handle, entry->aux_addr, entry->addr, entry->symbol_name,\n          \
         entry->size, data);\n      break;\n"
    );
    if args.kind == Kind::Hip {
        tail.push_str(
            "    case 2:\n      \
             __hipRegisterSurface(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
             data, is_extern);\n      break;\n    \
             case 3:\n      \
             __hipRegisterTexture(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
             data, normalized, is_extern);\n      break;\n",
        );
    }
    tail.push_str("    default:\n      break;\n");
    let end_call = if args.kind == Kind::Cuda {
        "  __cudaRegisterFatBinaryEnd(handle);\n"
    } else {
        ""
    };
    let _ = write!(
        tail,
        "    }}\n  }}\n}}\n\n\
         static void clangoffload_fatbin_unreg(void) {{\n  \
         __{rt}UnregisterFatBinary(clangoffload_binary_handle);\n}}\n\n\
         __attribute__((constructor(101))) static void clangoffload_fatbin_reg(void) {{\n  \
         void **handle = __{rt}RegisterFatBinary((void *)&clangoffload_fatbin_wrapper);\n  \
         clangoffload_binary_handle = handle;\n  \
         clangoffload_globals_reg(handle);\n\
         {end_call}  \
         atexit(clangoffload_fatbin_unreg);\n}}\n"
    );
    Unit { head, tail }
}

/// Writes `data` as the body of a C array initializer, 16 bytes a line, in
/// large blocks (a multi-megabyte input is written in a few hundred calls).
fn write_hex_bytes(out: &mut dyn Write, data: &[u8]) -> std::io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    const LINE: usize = 16;
    if data.is_empty() {
        return out.write_all(b"  0\n");
    }
    let mut block = Vec::with_capacity(1 << 20);
    for line in data.chunks(LINE) {
        block.extend_from_slice(b" ");
        for &byte in line {
            block.extend_from_slice(&[
                b' ',
                b'0',
                b'x',
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 15)],
                b',',
            ]);
        }
        block.push(b'\n');
        if block.len() >= (1 << 20) - 128 {
            out.write_all(&block)?;
            block.clear();
        }
    }
    out.write_all(&block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines() {
        let mut out = Vec::new();
        write_hex_bytes(&mut out, &[0, 0xff, 0x10]).unwrap();
        assert_eq!(out, b"  0x00, 0xff, 0x10,\n");
    }

    #[test]
    fn triples() {
        assert!(check_elf_triple("x86_64-pc-linux-gnu").is_ok());
        assert!(check_elf_triple("aarch64-unknown-freebsd").is_ok());
        assert!(check_elf_triple("x86_64-apple-darwin").is_err());
        assert!(check_elf_triple("x86_64-pc-windows-msvc").is_err());
    }
}
