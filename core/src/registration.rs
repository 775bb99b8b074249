//! Registration with the offload runtimes, as llvm-offload-wrapper 22 and
//! clang's host code do it (`llvm/Frontend/Offloading/Utility.h`,
//! `OffloadWrapper.cpp`): the records a host program hands to the runtime,
//! their constants, and (behind `alloc`) a C11 translation unit that embeds
//! an image and registers it, as llvm-offload-wrapper's bitcode does.
//!
//! ```text
//! __tgt_offload_entry (56 B)      __tgt_offload_entry legacy (32 B, before LLVM 20)
//!  0 u64  reserved = 0             0 ptr   addr
//!  8 u16  version = 1              8 ptr   name
//! 10 u16  kind (offload kind)     16 usize size
//! 12 u32  flags                   24 i32   flags
//! 16 ptr  addr                    28 i32   reserved
//! 24 ptr  symbol_name
//! 32 u64  size (0: a function)    __tgt_device_image (32 B): ImageStart, ImageEnd,
//! 40 u64  data                        EntriesBegin, EntriesEnd
//! 48 ptr  aux_addr                __tgt_bin_desc (32 B): i32 NumDeviceImages, (4 B pad),
//!                                     DeviceImages, HostEntriesBegin, HostEntriesEnd
//! fat binary wrapper record (HIP/CUDA; 24 B, 16 B on 32-bit hosts)
//!  0 u32 magic   4 u32 version = 1   8 ptr binary   16 ptr reserved = NULL
//! ```
//!
//! Offsets are for 64-bit little-endian hosts, whose layouts the structs here
//! spell out with explicit byte order. The entries of a linked program lie
//! between the linker-made symbols `__start_llvm_offload_entries` and
//! `__stop_llvm_offload_entries` (section [`OFFLOAD_ENTRIES_SECTION`]).
//!
//! The translation unit (`c_source`, with `alloc`) is written in three parts
//! so that a large image is never held as text: its head, the image as the
//! body of a C array initializer ([`write_hex`], in pieces of any multiple of
//! [`HEX_BYTES_PER_LINE`] bytes), then its tail.

use core::fmt;
use core::ops::Range;

use zerocopy::little_endian::{I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::offload_binary::{OffloadBinary, OffloadEntry, OffloadKind, FLAG_METADATA};
use crate::Error;

/// `__tgt_offload_entry` on a 64-bit little-endian host: one kernel or global
/// variable the host registers with the runtime (LLVM 20 and later). Its
/// first word is always 0, where the legacy layout ([`TgtOffloadEntryLegacy`])
/// has a non-NULL address: that is how a runtime tells the two apart (LLVM PR
/// #124018).
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TgtOffloadEntry {
    /// Always 0.
    pub reserved: U64,
    /// [`OFFLOAD_ENTRY_VERSION`].
    pub version: U16,
    /// The offload kind that made the entry (`OffloadKind::raw`).
    pub kind: U16,
    /// Kind-specific flags: `ENTRY_*` (CUDA/HIP) or `ENTRY_OMP_*` (OpenMP).
    pub flags: U32,
    /// The host address of the kernel stub or variable.
    pub addr: U64,
    /// The address of the symbol's NUL-terminated name on the device.
    pub symbol_name: U64,
    /// The variable's size in bytes; 0 for a function.
    pub size: U64,
    /// Kind-specific data (CUDA/HIP: managed variable alignment, surface or
    /// texture type).
    pub data: U64,
    /// Kind-specific second address (CUDA/HIP managed variables: the pointer
    /// variable).
    pub aux_addr: U64,
}
const _: () = assert!(core::mem::size_of::<TgtOffloadEntry>() == 56);

/// `__tgt_offload_entry` before LLVM 20 (`omp_offloading_entries`,
/// `cuda_offloading_entries`, `hip_offloading_entries`) on a 64-bit
/// little-endian host. Its first word, the address, is never 0.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TgtOffloadEntryLegacy {
    /// The host address of the kernel stub or variable.
    pub addr: U64,
    /// The address of the symbol's NUL-terminated name.
    pub name: U64,
    /// The variable's size; 0 for a function.
    pub size: U64,
    /// Flags.
    pub flags: I32,
    /// Reserved for the runtime.
    pub reserved: I32,
}
const _: () = assert!(core::mem::size_of::<TgtOffloadEntryLegacy>() == 32);

/// `__tgt_device_image` on a 64-bit little-endian host: one device image
/// given to `__tgt_register_lib` (OpenMP).
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TgtDeviceImage {
    /// The image's first byte.
    pub image_start: U64,
    /// One past the image's last byte.
    pub image_end: U64,
    /// The first offload entry of the program.
    pub entries_begin: U64,
    /// One past the last offload entry.
    pub entries_end: U64,
}
const _: () = assert!(core::mem::size_of::<TgtDeviceImage>() == 32);

/// `__tgt_bin_desc` on a 64-bit little-endian host: what an OpenMP wrapper's
/// constructor passes to `__tgt_register_lib` and its destructor to
/// `__tgt_unregister_lib`.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TgtBinDesc {
    /// Number of records at `device_images`.
    pub num_device_images: I32,
    /// Padding before the pointers.
    pub padding: [u8; 4],
    /// The device images.
    pub device_images: U64,
    /// The first offload entry of the program.
    pub host_entries_begin: U64,
    /// One past the last offload entry.
    pub host_entries_end: U64,
}
const _: () = assert!(core::mem::size_of::<TgtBinDesc>() == 32);

/// A 64-bit fat binary wrapper record, as clang and llvm-offload-wrapper emit
/// it into `.hipFatBinSegment` / `.nvFatBinSegment` and pass to
/// `__hipRegisterFatBinary` / `__cudaRegisterFatBinary`
/// (`__hip_fatbin_wrapper`, `__cuda_fatbin_wrapper`).
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FatbinWrapper64 {
    /// [`HIP_WRAPPER_MAGIC`], [`HIPK_WRAPPER_MAGIC`] or [`CUDA_WRAPPER_MAGIC`].
    pub magic: U32,
    /// [`FATBIN_WRAPPER_VERSION`].
    pub version: U32,
    /// Address of the fat binary.
    pub binary: U64,
    /// Unused (NULL).
    pub reserved: U64,
}
const _: () = assert!(core::mem::size_of::<FatbinWrapper64>() == 24);

/// A 32-bit fat binary wrapper record.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FatbinWrapper32 {
    /// The magic.
    pub magic: U32,
    /// [`FATBIN_WRAPPER_VERSION`].
    pub version: U32,
    /// Address of the fat binary.
    pub binary: U32,
    /// Unused (NULL).
    pub reserved: U32,
}
const _: () = assert!(core::mem::size_of::<FatbinWrapper32>() == 16);

/// `__tgt_offload_entry.version` of the current layout.
pub const OFFLOAD_ENTRY_VERSION: u16 = 1;

/// CUDA/HIP entry flags: the low three bits are the type.
pub const ENTRY_TYPE_MASK: u32 = 0x7;
/// CUDA/HIP entry type: a kernel (size 0) or a global variable.
pub const ENTRY_GLOBAL: u32 = 0x0;
/// CUDA/HIP entry type: a managed variable.
pub const ENTRY_MANAGED: u32 = 0x1;
/// CUDA/HIP entry type: a surface.
pub const ENTRY_SURFACE: u32 = 0x2;
/// CUDA/HIP entry type: a texture.
pub const ENTRY_TEXTURE: u32 = 0x3;
/// CUDA/HIP entry flag: the variable is `extern`.
pub const ENTRY_EXTERN: u32 = 0x8;
/// CUDA/HIP entry flag: the variable is `__constant__`.
pub const ENTRY_CONSTANT: u32 = 0x10;
/// CUDA/HIP entry flag: the texture reads normalized coordinates.
pub const ENTRY_NORMALIZED: u32 = 0x20;

/// OpenMP entry flag values (`declare target` clauses; the low bits are one
/// value, not a mask): `to`.
pub const ENTRY_OMP_TO: u32 = 0x0;
/// OpenMP: `link`.
pub const ENTRY_OMP_LINK: u32 = 0x1;
/// OpenMP: `enter`.
pub const ENTRY_OMP_ENTER: u32 = 0x2;
/// OpenMP: none of them.
pub const ENTRY_OMP_NONE: u32 = 0x3;
/// OpenMP flag: an indirect function.
pub const ENTRY_OMP_INDIRECT: u32 = 0x8;
/// OpenMP flag: the `requires` registration entry.
pub const ENTRY_OMP_REGISTER_REQUIRES: u32 = 0x10;
/// OpenMP flag: an indirect virtual table.
pub const ENTRY_OMP_INDIRECT_VTABLE: u32 = 0x20;

/// Magic of a HIP fat binary wrapper (`__hip_fatbin_wrapper`): bytes
/// `46 50 49 48`, "FPIH".
pub const HIP_WRAPPER_MAGIC: u32 = 0x4849_5046;
/// Magic of a ROCm kpack wrapper ("HIPK"): the pointer names msgpack
/// metadata naming the code objects.
pub const HIPK_WRAPPER_MAGIC: u32 = 0x4b50_4948;
/// Magic of a CUDA fat binary wrapper (`__cuda_fatbin_wrapper`).
pub const CUDA_WRAPPER_MAGIC: u32 = 0x4662_43b1;
/// The fat binary wrapper record's version.
pub const FATBIN_WRAPPER_VERSION: u32 = 1;

/// The section of a linked program's offload entries (ELF), bounded by
/// `__start_llvm_offload_entries` and `__stop_llvm_offload_entries`.
pub const OFFLOAD_ENTRIES_SECTION: &str = "llvm_offload_entries";
/// The section of an OpenMP wrapper's image (type `SHT_LLVM_OFFLOADING`).
pub const OFFLOADING_SECTION: &str = ".llvm.offloading";
/// The section of a HIP wrapper's fat binary.
pub const HIP_FATBIN_SECTION: &str = ".hip_fatbin";
/// The section of a CUDA wrapper's fat binary.
pub const CUDA_FATBIN_SECTION: &str = ".nv_fatbin";
/// The section of a HIP wrapper record.
pub const HIP_WRAPPER_SECTION: &str = ".hipFatBinSegment";
/// The section of a CUDA wrapper record.
pub const CUDA_WRAPPER_SECTION: &str = ".nvFatBinSegment";

/// The object format of a host triple's objects, as far as registration
/// cares: only ELF hosts are supported, because Mach-O and COFF name their
/// sections and bound symbols differently (`__NV_CUDA,__nv_fatbin`,
/// `llvm_offload_entries$OE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFormat {
    /// ELF (everything not named below).
    Elf,
    /// Mach-O: an Apple OS or vendor.
    MachO,
    /// COFF: Windows, MinGW, Cygwin, UEFI.
    Coff,
    /// No triple at all.
    Empty,
}

impl HostFormat {
    /// The object format of `triple`'s objects, from the words in it (any
    /// case).
    pub fn of(triple: &str) -> HostFormat {
        const MACHO: &[&str] = &["darwin", "macos", "ios", "tvos", "watchos", "xros", "apple"];
        const COFF: &[&str] = &["windows", "win32", "mingw", "cygwin", "msvc", "uefi"];
        let has = |words: &[&str]| {
            words.iter().any(|word| {
                triple
                    .as_bytes()
                    .windows(word.len())
                    .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
            })
        };
        if has(MACHO) {
            HostFormat::MachO
        } else if has(COFF) {
            HostFormat::Coff
        } else if triple.is_empty() {
            HostFormat::Empty
        } else {
            HostFormat::Elf
        }
    }

    /// The format's name in messages (`no` for an empty triple).
    pub fn name(self) -> &'static str {
        match self {
            HostFormat::Elf => "ELF",
            HostFormat::MachO => "Mach-O",
            HostFormat::Coff => "COFF",
            HostFormat::Empty => "no",
        }
    }
}

/// Why no registration code can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistrationError {
    /// The host triple's objects are not ELF.
    NotElfHost(HostFormat),
    /// An offload kind without a runtime registration (only OpenMP, CUDA
    /// and HIP have one).
    UnsupportedKind(OffloadKind),
    /// The input starts with the OffloadBinary magic but is no valid
    /// OffloadBinary.
    InvalidOffloadBinary(Error),
    /// The input's OffloadBinary is compressed (version 3): its image exists
    /// only once decompressed, which LLVM's runtimes do not do.
    CompressedOffloadBinary,
    /// The input's OffloadBinary has no entry with an image (none at all, or
    /// metadata only).
    NoImage,
    /// An OpenMP wrapper's input is a bare device image, not an OffloadBinary
    /// (the runtime's tools could not read its section), and its header does
    /// not say which device it is for ([`device_binary`] packages the ones
    /// that do).
    BareImage,
    /// Writing the OffloadBinary around a bare image failed.
    Writer(Error),
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistrationError::NotElfHost(format) => write!(
                f,
                "{} object format; only ELF hosts are supported",
                format.name()
            ),
            RegistrationError::UnsupportedKind(kind) => write!(
                f,
                "no runtime registration for offload kind {} (openmp, hip or cuda)",
                kind.name()
            ),
            RegistrationError::InvalidOffloadBinary(error) => write!(
                f,
                "the input starts with the OffloadBinary magic but is not a valid \
                 OffloadBinary: {error}"
            ),
            RegistrationError::CompressedOffloadBinary => f.write_str(
                "the OffloadBinary is compressed (version 3): its image exists only once \
                 decompressed, which LLVM's runtimes do not do",
            ),
            RegistrationError::NoImage => {
                f.write_str("the OffloadBinary has no image (no entry, or metadata entries only)")
            }
            RegistrationError::BareImage => f.write_str(
                "the input is not an OffloadBinary and its header does not say which device \
                 it is for: package it first (llvm-offload-binary -o image.offbin \
                 --image=file=<input>,triple=<triple>,arch=<arch>,kind=openmp)",
            ),
            RegistrationError::Writer(error) => {
                write!(f, "cannot write the OffloadBinary: {error}")
            }
        }
    }
}

impl core::error::Error for RegistrationError {}

/// Checks that `triple` names an ELF host ([`HostFormat::of`]).
pub fn check_host_triple(triple: &str) -> Result<(), RegistrationError> {
    match HostFormat::of(triple) {
        HostFormat::Elf => Ok(()),
        other => Err(RegistrationError::NotElfHost(other)),
    }
}

/// The entries of `binary` that are device images: all but the
/// metadata-only ones (version 2 and later, flag [`FLAG_METADATA`]).
pub fn device_images<'data>(
    binary: &OffloadBinary<'data>,
) -> impl Iterator<Item = OffloadEntry<'data>> {
    let metadata_flag = if binary.version() >= 2 {
        FLAG_METADATA
    } else {
        0
    };
    binary
        .entries()
        .filter(move |entry| entry.flags() & metadata_flag == 0)
}

/// Where an OpenMP wrapper points `ImageStart`/`ImageEnd` in `data`: at the
/// first device image ([`device_images`]) of the OffloadBinary `data` starts
/// with, or at the whole of `data` when it starts with no OffloadBinary.
pub fn first_image_range(data: &[u8]) -> Result<Range<usize>, RegistrationError> {
    if !OffloadBinary::is_offload_binary(data) {
        return Ok(0..data.len());
    }
    let binary = OffloadBinary::parse(data).map_err(RegistrationError::InvalidOffloadBinary)?;
    if binary.is_compressed() {
        return Err(RegistrationError::CompressedOffloadBinary);
    }
    let entry = device_images(&binary)
        .next()
        .ok_or(RegistrationError::NoImage)?;
    // The binary starts at `data[0]`, so the image's offset in it is its
    // offset in `data`; parsing checked that the image lies inside (the
    // clamping never applies).
    let start = usize::try_from(entry.image_offset()).map_or(data.len(), |s| s.min(data.len()));
    let end = start.saturating_add(entry.image().len()).min(data.len());
    Ok(start..end)
}

/// Input bytes on one line of the image's initializer text.
pub const HEX_BYTES_PER_LINE: usize = 16;

/// The length of [`write_hex`]'s text for `len` bytes: a space before each
/// line, `" 0xNN,"` per byte, a newline after each line. `None` if it
/// overflows.
pub fn hex_len(len: usize) -> Option<usize> {
    let lines = len.div_ceil(HEX_BYTES_PER_LINE);
    len.checked_mul(6)?.checked_add(lines.checked_mul(2)?)
}

/// Writes `data` into `out` as (part of) the body of a C array initializer,
/// [`HEX_BYTES_PER_LINE`] bytes a line (`  0x7f, 0x45, ...,\n`), and returns
/// the number of bytes written ([`hex_len`]), or `None` (and writes nothing)
/// when `out` is shorter. Pieces of `data` that are multiples of
/// [`HEX_BYTES_PER_LINE`] bytes, written one after the other, give the text
/// of the whole.
pub fn write_hex(data: &[u8], out: &mut [u8]) -> Option<usize> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digit = |nibble: u8| DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0');
    let len = hex_len(data.len())?;
    let mut rest = out.get_mut(..len)?;
    for line in data.chunks(HEX_BYTES_PER_LINE) {
        let (text, after) =
            core::mem::take(&mut rest).split_at_mut_checked(hex_len(line.len())?)?;
        let (first, text) = text.split_first_mut()?;
        let (last, cells) = text.split_last_mut()?;
        *first = b' ';
        *last = b'\n';
        for (cell, &byte) in cells.chunks_exact_mut(6).zip(line) {
            cell.copy_from_slice(&[b' ', b'0', b'x', digit(byte >> 4), digit(byte & 15), b',']);
        }
        rest = after;
    }
    Some(len)
}

#[cfg(feature = "alloc")]
pub use source::{c_source, device_binary, WrapOptions, WrapperSource};

#[cfg(feature = "alloc")]
mod source {
    use alloc::string::String;
    use core::fmt::Write;

    use super::*;
    use crate::elf::SHT_LLVM_OFFLOADING;

    /// What to wrap, and how the translation unit describes it.
    #[derive(Debug, Clone, Copy)]
    pub struct WrapOptions<'a> {
        /// The runtime to register with: [`OffloadKind::OpenMp`],
        /// [`OffloadKind::Hip`] or [`OffloadKind::Cuda`].
        pub kind: OffloadKind,
        /// The host triple; only ELF hosts ([`check_host_triple`]).
        pub triple: &'a str,
        /// The input's name, for the leading comment.
        pub input_name: &'a str,
    }

    /// A C11 translation unit that embeds an image and registers it, around
    /// the image bytes: write [`head`](Self::head), the image through
    /// [`write_hex`], then [`tail`](Self::tail).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct WrapperSource {
        /// Everything up to the image array's opening brace and newline.
        pub head: String,
        /// Everything after the image bytes, from the closing brace.
        pub tail: String,
    }

    /// The translation unit llvm-offload-wrapper 22's output amounts to, for
    /// the image `data`, compiled for an ELF host and linked into a program:
    ///
    /// * OpenMP: the whole of `data` in `.llvm.offloading` (type
    ///   `SHT_LLVM_OFFLOADING`, align 8); one `__tgt_device_image` whose
    ///   `ImageStart`/`ImageEnd` bound [`first_image_range`]; a
    ///   `__tgt_bin_desc`; a constructor (priority 101) calling
    ///   `__tgt_register_lib` and, at exit, `__tgt_unregister_lib`.
    /// * HIP / CUDA: `data` in `.hip_fatbin` / `.nv_fatbin`; the 24-byte
    ///   wrapper record in `.hipFatBinSegment` / `.nvFatBinSegment`; a
    ///   constructor calling `__hipRegisterFatBinary` /
    ///   `__cudaRegisterFatBinary`, then registering every entry of its kind
    ///   between `__start_llvm_offload_entries` and
    ///   `__stop_llvm_offload_entries` exactly as LLVM's `.hip.globals_reg`
    ///   does (CUDA then calls `__cudaRegisterFatBinaryEnd`), and at exit
    ///   `__hip/__cudaUnregisterFatBinary`.
    ///
    /// The layouts are spelled out so that the unit compiles on its own.
    pub fn c_source(
        options: &WrapOptions<'_>,
        data: &[u8],
    ) -> Result<WrapperSource, RegistrationError> {
        check_host_triple(options.triple)?;
        let mut source = match options.kind {
            OffloadKind::OpenMp => openmp_unit(options, data)?,
            OffloadKind::Hip | OffloadKind::Cuda => fatbin_unit(options, data),
            other => return Err(RegistrationError::UnsupportedKind(other)),
        };
        // C has no empty arrays: an empty input is one zero byte (bounded by
        // 0..0 for OpenMP).
        if data.is_empty() {
            source.tail.insert_str(0, "  0\n");
        }
        Ok(source)
    }

    fn header_comment(options: &WrapOptions<'_>, data: &[u8]) -> String {
        let input = options.input_name.replace("*/", "*\\/");
        let mut text = String::new();
        let _ = write!(
            text,
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
             __attribute__((section(\"{OFFLOAD_ENTRIES_SECTION}\"), aligned(8), used));\n\n",
            env!("CARGO_PKG_VERSION"),
            options.kind.name(),
            options.triple,
            data.len(),
        );
        text
    }

    /// The image array's declaration up to its opening brace.
    fn image_declaration(text: &mut String, data: &[u8], section: &str, align: Option<u32>) {
        let _ = write!(
            text,
            "static const unsigned char clangoffload_image[{}]\n    \
             __attribute__((section(\"{section}\")",
            data.len().max(1)
        );
        if let Some(align) = align {
            let _ = write!(text, ", aligned({align})");
        }
        text.push_str(", used)) = {\n");
    }

    /// What a wrapper of `kind` embeds for `data`: `data` itself for HIP and
    /// CUDA (a fat binary) and when it is an OffloadBinary (or empty); else,
    /// for OpenMP, a bare device image whose ELF
    /// header names its device, a version 1 OffloadBinary holding it as an
    /// object image of `kind`, as clang-linker-wrapper packages the images it
    /// links: `triple` and `arch` from the header (x86-64, AArch64 and
    /// little-endian PowerPC 64 as `<cpu>-unknown-linux-gnu`, arch `generic`,
    /// the host plugins' devices; an AMDGPU code object as
    /// `amdgcn-amd-amdhsa` and its target ID). Any other input is
    /// [`RegistrationError::BareImage`].
    pub fn device_binary(
        data: &[u8],
        kind: OffloadKind,
    ) -> Result<alloc::borrow::Cow<'_, [u8]>, RegistrationError> {
        use crate::offload_binary::{write_offload_binary, ImageKind, NewImage, WriteOptions};
        if kind != OffloadKind::OpenMp || data.is_empty() || OffloadBinary::is_offload_binary(data)
        {
            return Ok(alloc::borrow::Cow::Borrowed(data));
        }
        let (triple, arch) = device_of(data).ok_or(RegistrationError::BareImage)?;
        let strings: [(&[u8], &[u8]); 2] =
            [(b"triple", triple.as_bytes()), (b"arch", arch.as_bytes())];
        let image = NewImage {
            image_kind: ImageKind::Object,
            offload_kind: kind,
            flags: 0,
            strings: &strings,
            image: data,
        };
        write_offload_binary(&[image], &WriteOptions::default())
            .map(alloc::borrow::Cow::Owned)
            .map_err(RegistrationError::Writer)
    }

    /// The (triple, arch) a device image's ELF header names, if it does.
    fn device_of(data: &[u8]) -> Option<(&'static str, String)> {
        let crate::FileKind::Elf(elf) = crate::FileKind::detect(data) else {
            return None;
        };
        let generic = |triple| Some((triple, String::from("generic")));
        match (elf.machine, elf.class, elf.encoding) {
            (62, 2, 1) => generic("x86_64-unknown-linux-gnu"),
            (183, 2, 1) => generic("aarch64-unknown-linux-gnu"),
            (21, 2, 1) => generic("powerpc64le-unknown-linux-gnu"),
            (224, _, _) => {
                let file = crate::elf::ElfFile::parse(data).ok()?;
                let target = crate::elf::AmdgpuTarget::from_header(file.header())?;
                Some(("amdgcn-amd-amdhsa", alloc::format!("{target}")))
            }
            _ => None,
        }
    }

    fn openmp_unit(
        options: &WrapOptions<'_>,
        data: &[u8],
    ) -> Result<WrapperSource, RegistrationError> {
        // A bare image in `.llvm.offloading` runs, but no tool can read the
        // section again: refuse it ([`device_binary`] packages it).
        if !data.is_empty() && !OffloadBinary::is_offload_binary(data) {
            return Err(RegistrationError::BareImage);
        }
        let Range { start, end } = first_image_range(data)?;
        let mut head = header_comment(options, data);
        let _ = write!(
            head,
            "struct __tgt_device_image {{\n  void *ImageStart;\n  void *ImageEnd;\n  \
             struct __tgt_offload_entry *EntriesBegin;\n  struct __tgt_offload_entry *EntriesEnd;\n}};\n\n\
             struct __tgt_bin_desc {{\n  int32_t NumDeviceImages;\n  \
             struct __tgt_device_image *DeviceImages;\n  \
             struct __tgt_offload_entry *HostEntriesBegin;\n  \
             struct __tgt_offload_entry *HostEntriesEnd;\n}};\n\n\
             void __tgt_register_lib(struct __tgt_bin_desc *desc);\n\
             void __tgt_unregister_lib(struct __tgt_bin_desc *desc);\n\n\
             /* The section gets LLVM's type SHT_LLVM_OFFLOADING ({SHT_LLVM_OFFLOADING:#x}), as in\n \
             * llvm-offload-wrapper's objects, where the linker wrapper and\n \
             * llvm-objdump --offloading look for it. */\n\
             __asm__(\".section {OFFLOADING_SECTION},\\\"a\\\",@{SHT_LLVM_OFFLOADING:#x}\\n\\t.previous\");\n\n\
             /* The whole input. */\n"
        );
        image_declaration(&mut head, data, OFFLOADING_SECTION, Some(8));
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
        Ok(WrapperSource { head, tail })
    }

    fn fatbin_unit(options: &WrapOptions<'_>, data: &[u8]) -> WrapperSource {
        let hip = options.kind == OffloadKind::Hip;
        let (rt, magic, image_section, wrapper_section) = if hip {
            (
                "hip",
                HIP_WRAPPER_MAGIC,
                HIP_FATBIN_SECTION,
                HIP_WRAPPER_SECTION,
            )
        } else {
            (
                "cuda",
                CUDA_WRAPPER_MAGIC,
                CUDA_FATBIN_SECTION,
                CUDA_WRAPPER_SECTION,
            )
        };
        let kind = options.kind.raw();
        let mut head = header_comment(options, data);
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
        if hip {
            head.push_str(
                "void __hipRegisterSurface(void **handle, void *addr, char *name, char *device_name,\n    \
                 int type, int is_extern);\n\
                 void __hipRegisterTexture(void **handle, void *addr, char *name, char *device_name,\n    \
                 int type, int normalized, int is_extern);\n",
            );
        } else {
            head.push_str("void __cudaRegisterFatBinaryEnd(void **handle);\n");
        }
        head.push_str("\n/* The input, verbatim. */\n");
        image_declaration(&mut head, data, image_section, None);

        // The flag bits as shifts, for the C code's `(flags >> n) & 1`.
        let (extern_bit, constant_bit, normalized_bit) = (
            ENTRY_EXTERN.trailing_zeros(),
            ENTRY_CONSTANT.trailing_zeros(),
            ENTRY_NORMALIZED.trailing_zeros(),
        );
        let mut tail = String::from("};\n\n");
        let _ = write!(
            tail,
            "static const struct clangoffload_fatbin_wrapper clangoffload_fatbin_wrapper\n    \
             __attribute__((section(\"{wrapper_section}\"), aligned(8), used)) = {{\n  \
             0x{magic:08x}u, {FATBIN_WRAPPER_VERSION}, clangoffload_image, NULL,\n}};\n\n\
             static void **clangoffload_binary_handle;\n\n\
             /* Every entry of kind {kind} ({rt}): size 0 is a kernel, otherwise the\n \
             * type in the low flag bits says what to register. */\n\
             static void clangoffload_globals_reg(void **handle) {{\n  \
             struct __tgt_offload_entry *entry = __start_llvm_offload_entries;\n  \
             for (; entry != __stop_llvm_offload_entries; ++entry) {{\n    \
             if (entry->kind != {kind})\n      continue;\n    \
             int is_extern = (entry->flags >> {extern_bit}) & 1;\n    \
             int data = (int)(uint32_t)entry->data;\n"
        );
        if hip {
            let _ = writeln!(
                tail,
                "    int normalized = (entry->flags >> {normalized_bit}) & 1;"
            );
        }
        let _ = write!(
            tail,
            "    if (entry->size == 0) {{\n      \
             __{rt}RegisterFunction(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
             -1, NULL, NULL, NULL, NULL, NULL);\n      continue;\n    }}\n    \
             switch (entry->flags & {ENTRY_TYPE_MASK}) {{\n    \
             case {ENTRY_GLOBAL}:\n      \
             __{rt}RegisterVar(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
             is_extern, entry->size, (entry->flags >> {constant_bit}) & 1, 0);\n      break;\n    \
             case {ENTRY_MANAGED}:\n      \
             __{rt}RegisterManagedVar(handle, entry->aux_addr, entry->addr, entry->symbol_name,\n          \
             entry->size, data);\n      break;\n"
        );
        if hip {
            let _ = write!(
                tail,
                "    case {ENTRY_SURFACE}:\n      \
                 __hipRegisterSurface(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
                 data, is_extern);\n      break;\n    \
                 case {ENTRY_TEXTURE}:\n      \
                 __hipRegisterTexture(handle, entry->addr, entry->symbol_name, entry->symbol_name,\n          \
                 data, normalized, is_extern);\n      break;\n",
            );
        }
        tail.push_str("    default:\n      break;\n");
        let end_call = if hip {
            ""
        } else {
            "  __cudaRegisterFatBinaryEnd(handle);\n"
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
        WrapperSource { head, tail }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    fn hex(data: &[u8]) -> alloc::string::String {
        let mut out = alloc::vec![0xaa; hex_len(data.len()).unwrap() + 3];
        let n = write_hex(data, &mut out).unwrap();
        assert_eq!(out[n..], [0xaa; 3], "nothing written past the text");
        out.truncate(n);
        alloc::string::String::from_utf8(out).unwrap()
    }

    #[test]
    fn hex_lines() {
        assert_eq!(hex(&[0, 0xff, 0x10]), "  0x00, 0xff, 0x10,\n");
        assert_eq!(hex(&[]), "");
        let data: alloc::vec::Vec<u8> = (0..=40).collect();
        let whole = hex(&data);
        assert_eq!(whole.lines().count(), 3);
        assert!(whole.starts_with("  0x00, 0x01,"));
        assert!(whole.ends_with(" 0x28,\n"));
        // Pieces of whole lines give the whole.
        let pieces = [hex(&data[..16]), hex(&data[16..32]), hex(&data[32..])].concat();
        assert_eq!(pieces, whole);
        assert_eq!(whole.len(), hex_len(data.len()).unwrap());
    }

    #[test]
    fn hex_refuses_a_short_buffer() {
        let mut out = [0u8; 19];
        assert_eq!(write_hex(&[1, 2, 3], &mut out), None);
        assert_eq!(out, [0; 19]);
        assert_eq!(hex_len(usize::MAX), None);
    }

    #[test]
    fn host_formats() {
        assert_eq!(HostFormat::of("x86_64-pc-linux-gnu"), HostFormat::Elf);
        assert_eq!(HostFormat::of("aarch64-unknown-freebsd"), HostFormat::Elf);
        assert_eq!(HostFormat::of("x86_64-apple-darwin"), HostFormat::MachO);
        assert_eq!(HostFormat::of("arm64-Apple-iOS"), HostFormat::MachO);
        assert_eq!(HostFormat::of("x86_64-pc-windows-msvc"), HostFormat::Coff);
        assert_eq!(HostFormat::of("X86_64-W64-MINGW32"), HostFormat::Coff);
        assert_eq!(HostFormat::of(""), HostFormat::Empty);
        let e = check_host_triple("x86_64-apple-darwin").unwrap_err();
        assert_eq!(
            alloc::format!("{e}"),
            "Mach-O object format; only ELF hosts are supported"
        );
    }

    #[test]
    fn entry_kinds_are_offload_kinds() {
        // `__tgt_offload_entry.kind` holds the offload kind's stored value.
        assert_eq!(OffloadKind::OpenMp.raw(), 1);
        assert_eq!(OffloadKind::Cuda.raw(), 2);
        assert_eq!(OffloadKind::Hip.raw(), 4);
        assert_eq!(OffloadKind::Sycl.raw(), 8);
    }

    mod source {
        use super::*;
        use crate::compressed::CompressionMethod;
        use crate::offload_binary::{write_offload_binary, ImageKind, NewImage, WriteOptions};
        use alloc::vec::Vec;

        fn image(bytes: &[u8], flags: u32) -> NewImage<'_> {
            NewImage {
                image_kind: ImageKind::Object,
                offload_kind: OffloadKind::OpenMp,
                flags,
                strings: &[],
                image: bytes,
            }
        }

        fn v2(images: &[NewImage<'_>]) -> Vec<u8> {
            let options = WriteOptions {
                version: 2,
                compression: None,
            };
            write_offload_binary(images, &options).unwrap()
        }

        fn options(kind: OffloadKind) -> WrapOptions<'static> {
            WrapOptions {
                kind,
                triple: "x86_64-pc-linux-gnu",
                input_name: "in*/put.bin",
            }
        }

        #[test]
        fn the_first_image_of_the_binary_or_the_whole_input() {
            let data = v2(&[image(b"meta", FLAG_METADATA), image(b"code!", 0)]);
            let range = first_image_range(&data).unwrap();
            assert_eq!(&data[range], b"code!");
            let v1 =
                write_offload_binary(&[image(b"one", FLAG_METADATA)], &WriteOptions::default())
                    .unwrap();
            assert_eq!(
                &v1[first_image_range(&v1).unwrap()],
                b"one",
                "no metadata flag in v1"
            );
            assert_eq!(first_image_range(b"\x7fELF...").unwrap(), 0..7);
            assert_eq!(first_image_range(b"").unwrap(), 0..0);
        }

        #[test]
        fn binaries_without_a_plain_image_are_refused() {
            let meta = v2(&[image(b"meta", FLAG_METADATA)]);
            assert_eq!(first_image_range(&meta), Err(RegistrationError::NoImage));
            let compressed = write_offload_binary(
                &[image(b"code", 0)],
                &WriteOptions {
                    version: 3,
                    compression: Some((CompressionMethod::Zlib, None)),
                },
            )
            .unwrap();
            assert_eq!(
                first_image_range(&compressed),
                Err(RegistrationError::CompressedOffloadBinary)
            );
            let damaged = first_image_range(&[0x10, 0xff, 0x10, 0xad, 1]).unwrap_err();
            assert!(matches!(
                damaged,
                RegistrationError::InvalidOffloadBinary(_)
            ));
            assert!(alloc::format!("{damaged}").starts_with(
                "the input starts with the OffloadBinary magic but is not a valid OffloadBinary: "
            ));
        }

        #[test]
        fn an_openmp_unit_bounds_the_first_image() {
            let data = v2(&[image(b"code!", 0)]);
            let range = first_image_range(&data).unwrap();
            let unit = c_source(&options(OffloadKind::OpenMp), &data).unwrap();
            assert!(unit.head.starts_with(
                "/* Generated by clangoffload 0.1.0 wrap --kind=openmp --triple=x86_64-pc-linux-gnu from 'in*\\/put.bin'\n"
            ));
            assert!(unit.head.contains(
                "__asm__(\".section .llvm.offloading,\\\"a\\\",@0x6fff4c0b\\n\\t.previous\");"
            ));
            assert!(unit.head.ends_with(&alloc::format!(
                "clangoffload_image[{}]\n    __attribute__((section(\".llvm.offloading\"), aligned(8), used)) = {{\n",
                data.len()
            )));
            assert!(unit.tail.starts_with("};\n\n"));
            assert!(unit.tail.contains(&alloc::format!(
                "{{(void *)(clangoffload_image + {}), (void *)(clangoffload_image + {}),",
                range.start,
                range.end
            )));
            assert!(unit.tail.contains(
                "__attribute__((constructor(101))) static void clangoffload_descriptor_reg"
            ));
        }

        #[test]
        fn fat_binary_units() {
            let hip = c_source(&options(OffloadKind::Hip), b"bundle").unwrap();
            assert!(hip
                .head
                .contains("__attribute__((section(\".hip_fatbin\"), used)) = {\n"));
            assert!(hip.head.contains("void __hipRegisterTexture("));
            assert!(hip.tail.contains("__attribute__((section(\".hipFatBinSegment\"), aligned(8), used)) = {\n  0x48495046u, 1, clangoffload_image, NULL,"));
            assert!(hip.tail.contains("if (entry->kind != 4)"));
            assert!(hip
                .tail
                .contains("int normalized = (entry->flags >> 5) & 1;"));
            assert!(!hip.tail.contains("__cudaRegisterFatBinaryEnd"));
            let cuda = c_source(&options(OffloadKind::Cuda), b"fatbin").unwrap();
            assert!(cuda
                .head
                .contains("__attribute__((section(\".nv_fatbin\"), used)) = {\n"));
            assert!(cuda
                .tail
                .contains("0x466243b1u, 1, clangoffload_image, NULL,"));
            assert!(cuda.tail.contains("if (entry->kind != 2)"));
            assert!(cuda
                .tail
                .contains("switch (entry->flags & 7) {\n    case 0:"));
            assert!(cuda
                .tail
                .contains("  __cudaRegisterFatBinaryEnd(handle);\n  atexit("));
            assert!(!cuda.tail.contains("case 2:"));
        }

        #[test]
        fn an_empty_input_is_one_zero_byte() {
            for kind in [OffloadKind::OpenMp, OffloadKind::Hip] {
                let unit = c_source(&options(kind), b"").unwrap();
                assert!(unit.head.contains("clangoffload_image[1]\n"));
                assert!(unit.tail.starts_with("  0\n};\n\n"));
            }
            let unit = c_source(&options(OffloadKind::OpenMp), b"").unwrap();
            assert!(unit
                .tail
                .contains("(clangoffload_image + 0), (void *)(clangoffload_image + 0)"));
        }

        #[test]
        fn a_bare_image_is_packaged_or_refused() {
            // An x86-64 object (the host plugin's device) and an AMDGPU code
            // object: packaged, the image whole, the device from the header.
            for (data, triple, arch) in [
                (
                    &include_bytes!("../../tests/fixtures/object/x86_64.o")[..],
                    &b"x86_64-unknown-linux-gnu"[..],
                    &b"generic"[..],
                ),
                (
                    include_bytes!("../../tests/fixtures/archive/inputs/k-gfx90a-xnack.o"),
                    b"amdgcn-amd-amdhsa",
                    b"gfx90a:xnack+",
                ),
            ] {
                let binary = device_binary(data, OffloadKind::OpenMp).unwrap();
                let parsed = OffloadBinary::parse(&binary).unwrap();
                let entry = parsed.entries().next().unwrap();
                assert_eq!(entry.image(), data);
                assert_eq!((entry.triple(), entry.arch()), (Some(triple), Some(arch)));
                assert_eq!(entry.offload_kind(), OffloadKind::OpenMp);
                // The wrapper takes the binary, not the bare image.
                assert!(c_source(&options(OffloadKind::OpenMp), &binary).is_ok());
                assert_eq!(
                    c_source(&options(OffloadKind::OpenMp), data),
                    Err(RegistrationError::BareImage)
                );
            }
            // HIP and CUDA embed a fat binary as it is.
            let data = &include_bytes!("../../tests/fixtures/object/x86_64.o")[..];
            assert!(matches!(
                device_binary(data, OffloadKind::Hip),
                Ok(alloc::borrow::Cow::Borrowed(_))
            ));
            // An OffloadBinary is embedded as it is; other bytes are refused.
            let package = v2(&[image(b"code!", 0)]);
            assert!(matches!(
                device_binary(&package, OffloadKind::OpenMp),
                Ok(alloc::borrow::Cow::Borrowed(_))
            ));
            assert_eq!(
                device_binary(b"junk", OffloadKind::OpenMp),
                Err(RegistrationError::BareImage)
            );
            assert!(alloc::format!("{}", RegistrationError::BareImage).contains("package it first"));
        }

        #[test]
        fn refusals() {
            let sycl = c_source(&options(OffloadKind::Sycl), b"x").unwrap_err();
            assert_eq!(sycl, RegistrationError::UnsupportedKind(OffloadKind::Sycl));
            let darwin = WrapOptions {
                triple: "x86_64-apple-darwin",
                ..options(OffloadKind::Hip)
            };
            assert_eq!(
                c_source(&darwin, b"x"),
                Err(RegistrationError::NotElfHost(HostFormat::MachO))
            );
        }
    }
}
