//! The structures an offload wrapper hands to the offload runtimes, laid out
//! exactly as LLVM 22 lays them out (`llvm/Frontend/Offloading/Utility.h`,
//! `OffloadWrapper.cpp`), and the functions that fill them from a buffer.
//!
//! ```text
//! __tgt_offload_entry (56 B)      __tgt_offload_entry_legacy (32 B, before LLVM 20)
//!  0 u64  reserved = 0             0 ptr   addr
//!  8 u16  version = 1              8 ptr   name
//! 10 u16  kind (offload kind bit) 16 usize size
//! 12 u32  flags                   24 i32   flags
//! 16 ptr  addr                    28 i32   reserved
//! 24 ptr  symbol_name
//! 32 u64  size (0: a function)    __tgt_device_image (32 B): ImageStart, ImageEnd,
//! 40 u64  data                        EntriesBegin, EntriesEnd
//! 48 ptr  aux_addr                __tgt_bin_desc (32 B): i32 NumDeviceImages, (4 B pad),
//!                                     DeviceImages, HostEntriesBegin, HostEntriesEnd
//! __tgt_image_info (32 B)         clangoffload_fatbin_wrapper (24 B, HIP/CUDA)
//!  0 i32 version                   0 u32 magic
//!  4 i32 image_number              4 u32 version = 1
//!  8 i32 number_images             8 ptr binary
//! 16 ptr offload_arch             16 ptr reserved = NULL
//! 24 ptr compile_opts
//! ```
//! Offsets are for 64-bit hosts. The entries of a linked program lie between
//! the linker-made symbols `__start_llvm_offload_entries` and
//! `__stop_llvm_offload_entries` (section `llvm_offload_entries`).

use core::ffi::{c_char, c_void};

use clangoffload::container::Container;
use clangoffload::locate::WrapperKind;
use clangoffload::registration;
use clangoffload::scan::{scan, Found};

use crate::ffi::{out_arg, slice_arg};
use crate::status::clangoffload_status;

/// An offload entry as LLVM 20 and later emit it into `llvm_offload_entries`:
/// one kernel or global variable the host registers with the runtime. Its
/// first word is always 0, where the legacy layout
/// (`__tgt_offload_entry_legacy`) has a non-NULL address: that is how a
/// runtime tells the two apart (LLVM PR #124018).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_offload_entry {
    /// Always 0.
    pub reserved: u64,
    /// `CLANGOFFLOAD_OFFLOAD_ENTRY_VERSION` (1).
    pub version: u16,
    /// The offload kind that made the entry: `CLANGOFFLOAD_ENTRY_KIND_*`.
    pub kind: u16,
    /// Kind-specific flags: `CLANGOFFLOAD_ENTRY_*` (CUDA/HIP) or
    /// `CLANGOFFLOAD_ENTRY_OMP_*` (OpenMP).
    pub flags: u32,
    /// The host address of the kernel stub or variable.
    pub addr: *mut c_void,
    /// The symbol's NUL-terminated name on the device.
    pub symbol_name: *mut c_char,
    /// The variable's size in bytes; 0 for a function.
    pub size: u64,
    /// Kind-specific data (HIP/CUDA: managed variable alignment, surface or
    /// texture type).
    pub data: u64,
    /// Kind-specific second address (HIP/CUDA managed variables: the pointer
    /// variable).
    pub aux_addr: *mut c_void,
}

/// The offload entry before LLVM 20 (`omp_offloading_entries`,
/// `cuda_offloading_entries`, `hip_offloading_entries`). Its first word, the
/// address, is never NULL, unlike `__tgt_offload_entry`'s.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_offload_entry_legacy {
    /// The host address of the kernel stub or variable.
    pub addr: *mut c_void,
    /// The symbol's NUL-terminated name.
    pub name: *mut c_char,
    /// The variable's size; 0 for a function.
    pub size: usize,
    /// Flags.
    pub flags: i32,
    /// Reserved for the runtime.
    pub reserved: i32,
}

/// One device image given to `__tgt_register_lib` (OpenMP).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub struct __tgt_device_image {
    /// The image's first byte.
    pub ImageStart: *mut c_void,
    /// One past the image's last byte.
    pub ImageEnd: *mut c_void,
    /// The first offload entry of the program.
    pub EntriesBegin: *mut __tgt_offload_entry,
    /// One past the last offload entry.
    pub EntriesEnd: *mut __tgt_offload_entry,
}

/// What an OpenMP wrapper's constructor passes to `__tgt_register_lib` and
/// its destructor to `__tgt_unregister_lib`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub struct __tgt_bin_desc {
    /// Number of records at `DeviceImages`.
    pub NumDeviceImages: i32,
    /// The device images.
    pub DeviceImages: *mut __tgt_device_image,
    /// The first offload entry of the program.
    pub HostEntriesBegin: *mut __tgt_offload_entry,
    /// One past the last offload entry.
    pub HostEntriesEnd: *mut __tgt_offload_entry,
}

/// Per-image target information of the AMD multi-image OpenMP wrapper
/// (`__tgt_register_image_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_image_info {
    /// The version of this struct.
    pub version: i32,
    /// The image's number in the library, from 0.
    pub image_number: i32,
    /// Number of images in the library.
    pub number_images: i32,
    /// The NUL-terminated target ID the image was compiled for.
    pub offload_arch: *mut c_char,
    /// Reserved (compile options).
    pub compile_opts: *mut c_char,
}

/// The record a HIP or CUDA host object keeps in `.hipFatBinSegment` /
/// `.nvFatBinSegment` and passes to `__hipRegisterFatBinary` /
/// `__cudaRegisterFatBinary` (clang's `__hip_fatbin_wrapper`,
/// `__cuda_fatbin_wrapper`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_fatbin_wrapper {
    /// `CLANGOFFLOAD_FATBIN_MAGIC_HIP`, `_HIPK` or `_CUDA`.
    pub magic: u32,
    /// `CLANGOFFLOAD_FATBIN_WRAPPER_VERSION` (1).
    pub version: u32,
    /// The fat binary: for HIP an offload bundle or compressed bundle in
    /// `.hip_fatbin`; for HIPK the kpack metadata; for CUDA an NVIDIA fat
    /// binary in `.nv_fatbin`.
    pub binary: *const c_void,
    /// NULL.
    pub reserved: *mut c_void,
}

#[cfg(target_pointer_width = "64")]
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<__tgt_offload_entry>() == 56);
    assert!(offset_of!(__tgt_offload_entry, aux_addr) == 48);
    assert!(size_of::<__tgt_offload_entry_legacy>() == 32);
    assert!(size_of::<__tgt_device_image>() == 32);
    assert!(size_of::<__tgt_bin_desc>() == 32);
    assert!(offset_of!(__tgt_bin_desc, DeviceImages) == 8);
    assert!(size_of::<__tgt_image_info>() == 32);
    assert!(size_of::<clangoffload_fatbin_wrapper>() == 24);
};

// The header needs literals; they are the core's (`registration`), and so
// are the 64-bit layouts.
const _: () = {
    use clangoffload::registration as r;
    assert!(CLANGOFFLOAD_OFFLOAD_ENTRY_VERSION == r::OFFLOAD_ENTRY_VERSION);
    assert!(CLANGOFFLOAD_ENTRY_TYPE_MASK == r::ENTRY_TYPE_MASK);
    assert!(CLANGOFFLOAD_ENTRY_GLOBAL == r::ENTRY_GLOBAL);
    assert!(CLANGOFFLOAD_ENTRY_MANAGED == r::ENTRY_MANAGED);
    assert!(CLANGOFFLOAD_ENTRY_SURFACE == r::ENTRY_SURFACE);
    assert!(CLANGOFFLOAD_ENTRY_TEXTURE == r::ENTRY_TEXTURE);
    assert!(CLANGOFFLOAD_ENTRY_EXTERN == r::ENTRY_EXTERN);
    assert!(CLANGOFFLOAD_ENTRY_CONSTANT == r::ENTRY_CONSTANT);
    assert!(CLANGOFFLOAD_ENTRY_NORMALIZED == r::ENTRY_NORMALIZED);
    assert!(CLANGOFFLOAD_ENTRY_OMP_TO == r::ENTRY_OMP_TO);
    assert!(CLANGOFFLOAD_ENTRY_OMP_LINK == r::ENTRY_OMP_LINK);
    assert!(CLANGOFFLOAD_ENTRY_OMP_ENTER == r::ENTRY_OMP_ENTER);
    assert!(CLANGOFFLOAD_ENTRY_OMP_NONE == r::ENTRY_OMP_NONE);
    assert!(CLANGOFFLOAD_ENTRY_OMP_INDIRECT == r::ENTRY_OMP_INDIRECT);
    assert!(CLANGOFFLOAD_ENTRY_OMP_REGISTER_REQUIRES == r::ENTRY_OMP_REGISTER_REQUIRES);
    assert!(CLANGOFFLOAD_ENTRY_OMP_INDIRECT_VTABLE == r::ENTRY_OMP_INDIRECT_VTABLE);
    assert!(CLANGOFFLOAD_FATBIN_MAGIC_HIP == r::HIP_WRAPPER_MAGIC);
    assert!(CLANGOFFLOAD_FATBIN_MAGIC_HIPK == r::HIPK_WRAPPER_MAGIC);
    assert!(CLANGOFFLOAD_FATBIN_MAGIC_CUDA == r::CUDA_WRAPPER_MAGIC);
    assert!(CLANGOFFLOAD_FATBIN_WRAPPER_VERSION == r::FATBIN_WRAPPER_VERSION);
};
#[cfg(target_pointer_width = "64")]
const _: () = {
    use clangoffload::registration as r;
    use core::mem::size_of;
    assert!(size_of::<__tgt_offload_entry>() == size_of::<r::TgtOffloadEntry>());
    assert!(size_of::<__tgt_offload_entry_legacy>() == size_of::<r::TgtOffloadEntryLegacy>());
    assert!(size_of::<__tgt_device_image>() == size_of::<r::TgtDeviceImage>());
    assert!(size_of::<__tgt_bin_desc>() == size_of::<r::TgtBinDesc>());
    assert!(size_of::<clangoffload_fatbin_wrapper>() == size_of::<r::FatbinWrapper64>());
};

/// `__tgt_offload_entry.version` of the current layout.
pub const CLANGOFFLOAD_OFFLOAD_ENTRY_VERSION: u16 = 1;

/// `__tgt_offload_entry.kind` of an OpenMP entry.
pub const CLANGOFFLOAD_ENTRY_KIND_OPENMP: u16 = 1;
/// `__tgt_offload_entry.kind` of a CUDA entry.
pub const CLANGOFFLOAD_ENTRY_KIND_CUDA: u16 = 2;
/// `__tgt_offload_entry.kind` of a HIP entry.
pub const CLANGOFFLOAD_ENTRY_KIND_HIP: u16 = 4;
/// `__tgt_offload_entry.kind` of a SYCL entry.
pub const CLANGOFFLOAD_ENTRY_KIND_SYCL: u16 = 8;

/// CUDA/HIP entry flags: the low three bits are the type.
pub const CLANGOFFLOAD_ENTRY_TYPE_MASK: u32 = 0x7;
/// CUDA/HIP entry type: a kernel (size 0) or a global variable.
pub const CLANGOFFLOAD_ENTRY_GLOBAL: u32 = 0x0;
/// CUDA/HIP entry type: a managed variable.
pub const CLANGOFFLOAD_ENTRY_MANAGED: u32 = 0x1;
/// CUDA/HIP entry type: a surface.
pub const CLANGOFFLOAD_ENTRY_SURFACE: u32 = 0x2;
/// CUDA/HIP entry type: a texture.
pub const CLANGOFFLOAD_ENTRY_TEXTURE: u32 = 0x3;
/// CUDA/HIP entry flag: the variable is `extern`.
pub const CLANGOFFLOAD_ENTRY_EXTERN: u32 = 0x8;
/// CUDA/HIP entry flag: the variable is `__constant__`.
pub const CLANGOFFLOAD_ENTRY_CONSTANT: u32 = 0x10;
/// CUDA/HIP entry flag: the texture reads normalized coordinates.
pub const CLANGOFFLOAD_ENTRY_NORMALIZED: u32 = 0x20;

/// OpenMP entry flag values (`declare target` clauses; the low bits are one
/// value, not a mask): `to`.
pub const CLANGOFFLOAD_ENTRY_OMP_TO: u32 = 0x0;
/// OpenMP: `link`.
pub const CLANGOFFLOAD_ENTRY_OMP_LINK: u32 = 0x1;
/// OpenMP: `enter`.
pub const CLANGOFFLOAD_ENTRY_OMP_ENTER: u32 = 0x2;
/// OpenMP: none of them.
pub const CLANGOFFLOAD_ENTRY_OMP_NONE: u32 = 0x3;
/// OpenMP flag: an indirect function.
pub const CLANGOFFLOAD_ENTRY_OMP_INDIRECT: u32 = 0x8;
/// OpenMP flag: the `requires` registration entry.
pub const CLANGOFFLOAD_ENTRY_OMP_REGISTER_REQUIRES: u32 = 0x10;
/// OpenMP flag: an indirect virtual table.
pub const CLANGOFFLOAD_ENTRY_OMP_INDIRECT_VTABLE: u32 = 0x20;

/// `clangoffload_fatbin_wrapper.magic` of HIP (bytes `46 50 49 48`, "FPIH").
pub const CLANGOFFLOAD_FATBIN_MAGIC_HIP: u32 = 0x4849_5046;
/// `clangoffload_fatbin_wrapper.magic` of ROCm kpack (`HIPK`): the binary is
/// msgpack metadata naming the code objects.
pub const CLANGOFFLOAD_FATBIN_MAGIC_HIPK: u32 = 0x4B50_4948;
/// `clangoffload_fatbin_wrapper.magic` of CUDA.
pub const CLANGOFFLOAD_FATBIN_MAGIC_CUDA: u32 = 0x4662_43B1;
/// `clangoffload_fatbin_wrapper.version` LLVM writes.
pub const CLANGOFFLOAD_FATBIN_WRAPPER_VERSION: u32 = 1;

/// Fills `out` with one `__tgt_device_image` per image of every OffloadBinary
/// found anywhere in the `len` bytes at `data` (a raw `.offbin`, a host object
/// or executable with `.llvm.offloading`, an archive...), in file order, as
/// llvm-offload-wrapper does for one: `ImageStart`/`ImageEnd` bound the image
/// inside `data` (zero-copy), `EntriesBegin`/`EntriesEnd` are
/// `entries_begin`/`entries_end` as given (usually
/// `__start_llvm_offload_entries`/`__stop_llvm_offload_entries`). Stores the
/// number of records in `*count`.
///
/// Not images, so left out: metadata-only entries (version 2 flag
/// `OIF_Metadata`), magics that start no valid OffloadBinary, and compressed
/// (version 3) binaries, whose images exist only once decompressed. The number
/// of compressed binaries left out is stored in `*skipped_compressed` unless it
/// is NULL (also on `BUFFER_TOO_SMALL`).
///
/// When more than `capacity` records would be written, nothing is written to
/// `out`, the number needed is stored in `*count` and the status is
/// `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`: call with `out` NULL and `capacity`
/// 0 to ask for the count first.
///
/// Ownership: the records are written into the caller's array; nothing is
/// allocated and nothing to free. The entry pointers are copied, never
/// dereferenced.
///
/// Lifetime: `ImageStart`/`ImageEnd` point into `data`, which must stay alive
/// and unchanged while the records are used (for a runtime: for as long as the
/// images are registered).
///
/// NULL: `data` may be NULL only when `len` is 0; `entries_begin` and
/// `entries_end` may be NULL (stored as given); `out` may be NULL only when
/// `capacity` is 0; `count` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `skipped_compressed` may be NULL.
///
/// # Safety
/// `data` is NULL (only with `len` 0) or readable for `len` bytes; `out` is
/// NULL (only with `capacity` 0) or writable for `capacity` records; `count` is
/// NULL or writable; `skipped_compressed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_device_images_fill(
    data: *const u8,
    len: usize,
    entries_begin: *mut __tgt_offload_entry,
    entries_end: *mut __tgt_offload_entry,
    out: *mut __tgt_device_image,
    capacity: usize,
    count: *mut usize,
    skipped_compressed: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for `len` bytes, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let count = unsafe { out_arg(count) }?;
        if out.is_null() && capacity != 0 {
            return Err(clangoffload_status::NullArgument);
        }
        if !out.is_aligned() || (!skipped_compressed.is_null() && !skipped_compressed.is_aligned())
        {
            return Err(clangoffload_status::InvalidArgument);
        }
        let (needed, skipped) = device_images(data, |_, _| {});
        // SAFETY: NULL or writable, as the caller promises.
        if let Some(slot) = unsafe { skipped_compressed.as_mut() } {
            *slot = skipped;
        }
        *count = needed;
        if needed > capacity {
            return Err(clangoffload_status::BufferTooSmall);
        }
        device_images(data, |index, image| {
            let start = image.as_ptr_range();
            let record = __tgt_device_image {
                ImageStart: start.start.cast_mut().cast(),
                ImageEnd: start.end.cast_mut().cast(),
                EntriesBegin: entries_begin,
                EntriesEnd: entries_end,
            };
            // SAFETY: index < needed <= capacity, so the offset stays inside
            // the caller's array of `capacity` records at `out`.
            let slot = unsafe { out.add(index) };
            // SAFETY: `out` is writable for `capacity` aligned records, as
            // the caller promises, and `slot` is one of them.
            unsafe { slot.write(record) };
        });
        Ok(())
    })
}

/// Calls `each(index, image)` for every image of every uncompressed
/// OffloadBinary in `data`, in file order; returns the number of images and
/// the number of compressed binaries passed over.
fn device_images(data: &[u8], mut each: impl FnMut(usize, &[u8])) -> (usize, usize) {
    let (mut images, mut compressed) = (0usize, 0usize);
    for found in scan(data) {
        let Found::Container(_, Container::OffloadBinary(binary)) = found else {
            continue;
        };
        if binary.is_compressed() {
            compressed = compressed.saturating_add(1);
            continue;
        }
        for entry in registration::device_images(&binary) {
            each(images, entry.image());
            images = images.saturating_add(1);
        }
    }
    (images, compressed)
}

/// Checks a HIP/CUDA fat-binary wrapper record as a runtime receives it in
/// `__hipRegisterFatBinary` / `__cudaRegisterFatBinary`: a known magic
/// (`CLANGOFFLOAD_FATBIN_MAGIC_*`), version 1 and a non-NULL binary. Stores the
/// magic in `*magic` on success. Anything wrong (a misaligned `wrapper`
/// included) gives `CLANGOFFLOAD_STATUS_INVALID_ARGUMENT`. Reads only the
/// 24-byte record, not the binary.
///
/// Ownership: nothing is allocated and nothing to free; `*magic` is a plain
/// value.
///
/// NULL: a NULL `wrapper` gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`; `magic`
/// may be NULL (not stored); the record's `binary` NULL is `INVALID_ARGUMENT`.
///
/// # Safety
/// `wrapper` is NULL or points to a readable record; `magic` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_fatbin_wrapper_check(
    wrapper: *const clangoffload_fatbin_wrapper,
    magic: *mut u32,
) -> clangoffload_status {
    ffi_guard!({
        if !wrapper.is_null() && !wrapper.is_aligned() {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: NULL or readable, as the caller promises.
        let wrapper = unsafe { wrapper.as_ref() }.ok_or(clangoffload_status::NullArgument)?;
        if matches!(
            WrapperKind::from_magic(wrapper.magic),
            WrapperKind::Unknown(_)
        ) || wrapper.version != CLANGOFFLOAD_FATBIN_WRAPPER_VERSION
            || wrapper.binary.is_null()
        {
            return Err(clangoffload_status::InvalidArgument);
        }
        if !magic.is_null() {
            // SAFETY: writable, as the caller promises.
            *unsafe { out_arg(magic) }? = wrapper.magic;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clangoffload::compressed::CompressionMethod;
    use clangoffload::offload_binary::{
        write_offload_binary, ImageKind, NewImage, OffloadKind, WriteOptions,
    };

    fn image(bytes: &[u8]) -> NewImage<'_> {
        NewImage {
            image_kind: ImageKind::Object,
            offload_kind: OffloadKind::OpenMp,
            flags: 0,
            strings: &[],
            image: bytes,
        }
    }

    fn fill(
        data: &[u8],
        cap: usize,
    ) -> (clangoffload_status, Vec<__tgt_device_image>, usize, usize) {
        let blank = __tgt_device_image {
            ImageStart: std::ptr::null_mut(),
            ImageEnd: std::ptr::null_mut(),
            EntriesBegin: std::ptr::null_mut(),
            EntriesEnd: std::ptr::null_mut(),
        };
        let mut out = vec![blank; cap];
        let (mut count, mut skipped) = (usize::MAX, usize::MAX);
        // SAFETY: `data` is live for the call; `out` is writable for `cap`
        // records (NULL when there are none); `count` and `skipped` are
        // writable locals; NULL entries are allowed.
        let status = unsafe {
            clangoffload_device_images_fill(
                data.as_ptr(),
                data.len(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                if cap == 0 {
                    std::ptr::null_mut()
                } else {
                    out.as_mut_ptr()
                },
                cap,
                &mut count,
                &mut skipped,
            )
        };
        (status, out, count, skipped)
    }

    #[test]
    fn images_of_uncompressed_binaries_only_in_file_order() {
        let v1 = write_offload_binary(&[image(b"first image")], &WriteOptions::default()).unwrap();
        let v3 = write_offload_binary(
            &[image(b"compressed")],
            &WriteOptions {
                version: 3,
                compression: Some((CompressionMethod::Zlib, None)),
            },
        )
        .unwrap();
        let v2 = write_offload_binary(
            &[image(b"second"), image(b"third!")],
            &WriteOptions {
                version: 2,
                compression: None,
            },
        )
        .unwrap();
        let mut data = Vec::new();
        for part in [&v1, &v3, &v2] {
            data.extend_from_slice(part);
            data.resize(data.len().next_multiple_of(8), 0);
        }
        let (status, _, count, skipped) = fill(&data, 0);
        assert_eq!(
            (status, count, skipped),
            (clangoffload_status::BufferTooSmall, 3, 1)
        );
        let (status, out, count, _) = fill(&data, 4);
        assert_eq!((status, count), (clangoffload_status::Ok, 3));
        let range = data.as_ptr_range();
        let texts: Vec<&[u8]> = out[..3]
            .iter()
            .map(|r| {
                let (s, e) = (
                    r.ImageStart.cast::<u8>().cast_const(),
                    r.ImageEnd.cast::<u8>().cast_const(),
                );
                assert!(range.start <= s && s <= e && e <= range.end);
                // SAFETY: `s` and `e` lie in `data`, one allocation, `s`
                // first (asserted just above).
                let len = usize::try_from(unsafe { e.offset_from(s) }).unwrap();
                // SAFETY: `[s, e)` is `len` initialized bytes of `data`,
                // which outlives `texts`.
                unsafe { std::slice::from_raw_parts(s, len) }
            })
            .collect();
        assert_eq!(texts, [&b"first image"[..], b"second", b"third!"]);
        assert!(out[3].ImageStart.is_null(), "nothing past count is written");
    }

    #[test]
    fn fatbin_wrapper_check() {
        let bytes = [0u8; 4];
        let mut w = clangoffload_fatbin_wrapper {
            magic: CLANGOFFLOAD_FATBIN_MAGIC_HIP,
            version: 1,
            binary: bytes.as_ptr().cast(),
            reserved: std::ptr::null_mut(),
        };
        let mut magic = 0;
        assert_eq!(
            // SAFETY: `w` and `magic` are live locals.
            unsafe { clangoffload_fatbin_wrapper_check(&w, &mut magic) },
            clangoffload_status::Ok
        );
        assert_eq!(magic, CLANGOFFLOAD_FATBIN_MAGIC_HIP);
        w.version = 2;
        assert_eq!(
            // SAFETY: `w` is a live local; a NULL magic is allowed.
            unsafe { clangoffload_fatbin_wrapper_check(&w, std::ptr::null_mut()) },
            clangoffload_status::InvalidArgument
        );
        assert_eq!(
            // SAFETY: a NULL wrapper is refused before `magic` is written.
            unsafe { clangoffload_fatbin_wrapper_check(std::ptr::null(), &mut magic) },
            clangoffload_status::NullArgument
        );
    }
}
