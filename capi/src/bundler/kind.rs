//! What a file is, by its magic (`clangoffload_file_kind_detect`), and
//! what a file that holds no container is, in the tool's words
//! (`clangoffload_file_describe`).

use core::ffi::c_char;

use clangoffload::foreign::{Foreign, NoContainer};
use clangoffload::FileKind;

use crate::ffi::{out_arg, slice_arg, write_display};
use crate::status::clangoffload_status;

/// What a file is, by its magic (`clangoffload_file_kind_detect`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_file_kind_tag {
    /// Anything else.
    Other = 0,
    /// A binary bundle.
    Bundle = 1,
    /// A compressed bundle (`CCOB`).
    CompressedBundle = 2,
    /// An OffloadBinary.
    OffloadBinary = 3,
    /// A text bundle (`text_comment` says which comment its markers use).
    TextBundle = 4,
    /// An ELF file (`elf_*` say more).
    Elf = 5,
    /// A Mach-O file.
    MachO = 6,
    /// LLVM bitcode.
    Bitcode = 7,
    /// An `ar` archive.
    Archive = 8,
    /// A thin `ar` archive.
    ThinArchive = 9,
    /// A COFF object or a PE image (not read yet).
    Coff = 10,
    /// An NVIDIA CUDA fat binary.
    CudaFatbin = 11,
}

/// What `clangoffload_file_kind_detect` found.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_file_kind {
    /// The kind.
    pub kind: clangoffload_file_kind_tag,
    /// ELF only: `EI_CLASS` (1: 32-bit, 2: 64-bit).
    pub elf_class: u8,
    /// ELF only: `EI_DATA` (1: little-endian, 2: big-endian).
    pub elf_encoding: u8,
    /// ELF only: `e_machine`.
    pub elf_machine: u16,
    /// Whether LLVM opens the file as an object (`-type=o` reads sections).
    pub is_object: bool,
    /// Text bundles only: the comment, `'/'` (`//`), `'#'` or `';'`; else 0.
    pub text_comment: u8,
}

/// Says what the `len` bytes at `data` are, from their magic (every magic
/// this library knows; a text bundle by its first start marker).
///
/// Ownership: nothing to free; `*out` is a plain record. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` must not be NULL.
///
/// # Safety
/// `data` must be readable for `len` bytes; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_file_kind_detect(
    data: *const u8,
    len: usize,
    out: *mut clangoffload_file_kind,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = file_kind(FileKind::detect(data));
        Ok(())
    })
}

/// Writes what the `len` bytes at `data` are when they hold no offload
/// container or CUDA fat binary, in the words `clangoffload list`, `extract`
/// and `inspect` use (`no offload container or CUDA fat binary: ` and what
/// it is): a raw AMDGPU code object with its target ID, a CUDA
/// cubin with its SM, a kpack archive, MessagePack data (Tensile's `.dat`),
/// another ELF, COFF or Mach-O file, bitcode, an archive, or bytes of no
/// known format (`it is an AMDGPU code object for
/// amdgcn-amd-amdhsa--gfx906`). Reads headers only,
/// except MessagePack, which is walked once without allocating.
/// `*out_device_code` (if not NULL) says whether the file is device code of
/// its own (a code object or cubin).
///
/// Ownership: the text is copied into the caller's `buf`, as
/// `clangoffload_target_id_canonicalize` does (NUL-terminated; `*out_len`
/// its length; `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL` with the length
/// needed when `cap` is too small); nothing to free. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0; `buf` NULL asks for the
/// length; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `out_device_code` may be NULL.
///
/// # Safety
/// `data` must be readable for `len` bytes; `buf` NULL or writable for `cap`
/// bytes; `out_len` and `out_device_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_file_describe(
    data: *const u8,
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
    out_device_code: *mut bool,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        let foreign = Foreign::identify(data);
        // SAFETY: NULL or writable, as the caller promises.
        if let Ok(device_code) = unsafe { out_arg(out_device_code) } {
            *device_code = foreign.is_device_code();
        }
        // SAFETY: buf writable for cap bytes, out_len writable, as promised.
        unsafe { write_display(&NoContainer(foreign), buf, cap, out_len) }
    })
}

fn file_kind(kind: FileKind) -> clangoffload_file_kind {
    use clangoffload_file_kind_tag as T;
    let mut out = clangoffload_file_kind {
        kind: T::Other,
        elf_class: 0,
        elf_encoding: 0,
        elf_machine: 0,
        is_object: kind.is_object(),
        text_comment: 0,
    };
    out.kind = match kind {
        FileKind::Bundle => T::Bundle,
        FileKind::CompressedBundle => T::CompressedBundle,
        FileKind::OffloadBinary => T::OffloadBinary,
        FileKind::TextBundle(comment) => {
            out.text_comment = comment.as_str().as_bytes().first().copied().unwrap_or(0);
            T::TextBundle
        }
        FileKind::Elf(elf) => {
            out.elf_class = elf.class;
            out.elf_encoding = elf.encoding;
            out.elf_machine = elf.machine;
            T::Elf
        }
        FileKind::MachO => T::MachO,
        FileKind::Coff(_) => T::Coff,
        FileKind::Bitcode => T::Bitcode,
        FileKind::Archive => T::Archive,
        FileKind::ThinArchive => T::ThinArchive,
        FileKind::CudaFatbin => T::CudaFatbin,
        _ => T::Other,
    };
    out
}
