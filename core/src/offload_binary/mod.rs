//! OffloadBinary images (magic `10 FF 10 AD`), what clang-offload-packager and
//! llvm-offload-binary write and clang embeds in `.llvm.offloading` sections.
//!
//! ```text
//! header      v1/v2 (32 B)                  v3 (40 B)
//! 0           magic 10 FF 10 AD             magic
//! 4           u32 version                   u32 version = 3
//! 8           u64 size of this binary       u64 size
//! 16          u64 entries offset            u64 entries offset
//! 24          u64 entry size (v1) /         u64 entries count
//!                 entries count (v2)
//! 32                                        u64 inflated size (0: not compressed)
//!
//! entry (40 B): u16 image kind, u16 offload kind, u32 flags, u64 string
//!               entries offset, u64 string count, u64 image offset, u64 image size
//! string entry: u64 key offset, u64 value offset (v1: NUL-terminated values),
//!               + u64 value size (v2, v3: values may hold NULs)
//! ```
//! Every offset is absolute from the start of the binary. A version 1 binary
//! has exactly one entry. A compressed version 3 binary keeps its header and
//! holds one zlib or zstd stream of everything that followed the header, up
//! to the inflated size.
//!
//! [`OffloadBinary::parse`] checks every field once (table bounds with
//! checked multiplication, every string offset and terminator, every image
//! range) without touching image bytes; afterwards entries and strings are
//! read without further checks.

use core::fmt;

use memchr::{memchr, memrchr};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::back_to_back::BackToBack;
use crate::bytes::{range, to_u64, Cursor};
use crate::compressed::decompress::Stream;
use crate::compressed::CompressionMethod;
#[cfg(feature = "alloc")]
use crate::compressed::DecompressOptions;
use crate::{Bundle, CompressedBundle, Error, ErrorKind, Field, Result};

#[cfg(feature = "alloc")]
pub mod image_args;
#[cfg(feature = "alloc")]
mod validate;
#[cfg(feature = "alloc")]
mod writer;

#[cfg(feature = "alloc")]
pub use validate::{BinaryDiagnostic, MAX_COMPARED_KEY};
#[cfg(feature = "alloc")]
pub use writer::{write_offload_binary, NewImage, WriteOptions};

/// The magic that starts every OffloadBinary.
pub const OFFLOAD_BINARY_MAGIC: &[u8; 4] = &[0x10, 0xFF, 0x10, 0xAD];

/// Every binary, and every section holding binaries, is 8-byte aligned.
pub const ALIGNMENT: u64 = 8;

/// The header of a version 1 or 2 binary; version 3 adds
/// [`HeaderV3::inflated_size`].
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Header {
    /// [`OFFLOAD_BINARY_MAGIC`].
    pub magic: [u8; 4],
    /// 1, 2 or 3.
    pub version: U32,
    /// Size of the whole binary.
    pub size: U64,
    /// Absolute offset of the entry table.
    pub entries_offset: U64,
    /// Version 1: the size of the one entry (40). Versions 2 and 3: the
    /// number of entries.
    pub entries_field: U64,
}
const _: () = assert!(core::mem::size_of::<Header>() == 32);

/// The header of a version 3 binary.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct HeaderV3 {
    /// The version 1/2 fields.
    pub common: Header,
    /// Size of the binary once decompressed, header included; 0 if the
    /// binary is not compressed.
    pub inflated_size: U64,
}
const _: () = assert!(core::mem::size_of::<HeaderV3>() == 40);

/// An entry: one image and its strings.
#[derive(Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct EntryRecord {
    /// [`ImageKind`] as stored.
    pub image_kind: U16,
    /// [`OffloadKind`] as stored.
    pub offload_kind: U16,
    /// Flags; version 2 defines [`FLAG_METADATA`].
    pub flags: U32,
    /// Absolute offset of the string entries.
    pub string_offset: U64,
    /// Number of string entries.
    pub num_strings: U64,
    /// Absolute offset of the image.
    pub image_offset: U64,
    /// Size of the image.
    pub image_size: U64,
}
const _: () = assert!(core::mem::size_of::<EntryRecord>() == 40);

/// A version 1 string entry: both strings end with a NUL.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct StringEntryV1 {
    /// Absolute offset of the key.
    pub key_offset: U64,
    /// Absolute offset of the value.
    pub value_offset: U64,
}
const _: () = assert!(core::mem::size_of::<StringEntryV1>() == 16);

/// A version 2/3 string entry: the value has an explicit size.
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct StringEntryV2 {
    /// Absolute offset of the key, which ends with a NUL.
    pub key_offset: U64,
    /// Absolute offset of the value.
    pub value_offset: U64,
    /// Size of the value, which may contain NULs.
    pub value_size: U64,
}
const _: () = assert!(core::mem::size_of::<StringEntryV2>() == 24);

/// Entry flag (version 2): the entry carries metadata only, no image.
pub const FLAG_METADATA: u32 = 1;

const ENTRY_SIZE: u64 = 40;

/// What an image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// 0: unknown.
    None,
    /// 1: an object file (`o`).
    Object,
    /// 2: LLVM bitcode (`bc`).
    Bitcode,
    /// 3: a CUDA cubin (`cubin`).
    Cubin,
    /// 4: a CUDA fat binary (`fatbin`).
    Fatbinary,
    /// 5: PTX assembly (`s`).
    Ptx,
    /// 6: SPIR-V (`spv`; LLVM 22 defines it but never maps a name to it).
    Spirv,
    /// Any other value, kept as stored.
    Unknown(u16),
}

impl ImageKind {
    /// The kind a stored value names.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            0 => ImageKind::None,
            1 => ImageKind::Object,
            2 => ImageKind::Bitcode,
            3 => ImageKind::Cubin,
            4 => ImageKind::Fatbinary,
            5 => ImageKind::Ptx,
            6 => ImageKind::Spirv,
            other => ImageKind::Unknown(other),
        }
    }

    /// The stored value.
    pub fn raw(self) -> u16 {
        match self {
            ImageKind::None => 0,
            ImageKind::Object => 1,
            ImageKind::Bitcode => 2,
            ImageKind::Cubin => 3,
            ImageKind::Fatbinary => 4,
            ImageKind::Ptx => 5,
            ImageKind::Spirv => 6,
            ImageKind::Unknown(raw) => raw,
        }
    }

    /// The kind LLVM 22 gives a file extension (`o`, `bc`, `cubin`,
    /// `fatbin`, `s`); anything else, `spv` included, is `None`.
    pub fn from_extension(extension: &[u8]) -> Self {
        match extension {
            b"o" => ImageKind::Object,
            b"bc" => ImageKind::Bitcode,
            b"cubin" => ImageKind::Cubin,
            b"fatbin" => ImageKind::Fatbinary,
            b"s" => ImageKind::Ptx,
            _ => ImageKind::None,
        }
    }

    /// The extension LLVM 22 gives extracted images of this kind: empty for
    /// kinds it has no name for (SPIR-V included).
    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::Object => "o",
            ImageKind::Bitcode => "bc",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbinary => "fatbin",
            ImageKind::Ptx => "s",
            _ => "",
        }
    }

    /// How `llvm-objdump --offloading` names the kind.
    pub fn objdump_name(self) -> &'static str {
        match self {
            ImageKind::Object => "elf",
            ImageKind::Bitcode => "llvm ir",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbinary => "fatbinary",
            ImageKind::Ptx => "ptx",
            _ => "<none>",
        }
    }
}

/// Which offload model produced an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OffloadKind {
    /// 0.
    None,
    /// 1: OpenMP.
    OpenMp,
    /// 2: CUDA.
    Cuda,
    /// 4: HIP.
    Hip,
    /// 8: SYCL.
    Sycl,
    /// Any other value, kept as stored.
    Unknown(u16),
}

impl OffloadKind {
    /// The kind a stored value names.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            0 => OffloadKind::None,
            1 => OffloadKind::OpenMp,
            2 => OffloadKind::Cuda,
            4 => OffloadKind::Hip,
            8 => OffloadKind::Sycl,
            other => OffloadKind::Unknown(other),
        }
    }

    /// The stored value.
    pub fn raw(self) -> u16 {
        match self {
            OffloadKind::None => 0,
            OffloadKind::OpenMp => 1,
            OffloadKind::Cuda => 2,
            OffloadKind::Hip => 4,
            OffloadKind::Sycl => 8,
            OffloadKind::Unknown(raw) => raw,
        }
    }

    /// The kind a `kind=` argument names (`openmp`, `cuda`, `hip`, `sycl`);
    /// anything else is `None`, as in LLVM 22.
    pub fn from_name(name: &[u8]) -> Self {
        match name {
            b"openmp" => OffloadKind::OpenMp,
            b"cuda" => OffloadKind::Cuda,
            b"hip" => OffloadKind::Hip,
            b"sycl" => OffloadKind::Sycl,
            _ => OffloadKind::None,
        }
    }

    /// The kind's name, as `llvm-objdump --offloading` prints it
    /// (`none` for unknown values).
    pub fn name(self) -> &'static str {
        match self {
            OffloadKind::OpenMp => "openmp",
            OffloadKind::Cuda => "cuda",
            OffloadKind::Hip => "hip",
            OffloadKind::Sycl => "sycl",
            _ => "none",
        }
    }
}

/// A parsed OffloadBinary over a borrowed buffer, cut to its own size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadBinary<'data> {
    data: &'data [u8],
    version: u32,
    entries_offset: u64,
    entry_count: u64,
    inflated_size: u64,
}

/// One entry of a binary: an image and its key-value strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadEntry<'data> {
    binary: OffloadBinary<'data>,
    index: u64,
    record: &'data EntryRecord,
}

/// One key-value string of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadString<'data> {
    /// The key, without its NUL.
    pub key: &'data [u8],
    /// The value: without its NUL (version 1), or exactly the stored size.
    pub value: &'data [u8],
}

impl<'data> OffloadBinary<'data> {
    /// Whether `data` starts with the OffloadBinary magic.
    pub fn is_offload_binary(data: &[u8]) -> bool {
        data.starts_with(OFFLOAD_BINARY_MAGIC)
    }

    /// The size a binary at the start of `data` declares, from its header
    /// alone (magic, version and size checked; `data` may end before the
    /// size): what a reader of an image of unknown length needs first.
    pub fn declared_size(data: &[u8]) -> Result<u64> {
        Ok(Self::header_fields(data)?.1)
    }

    /// Checks the magic, version and size, and returns (version, size,
    /// header length).
    fn read_header(data: &[u8]) -> Result<(u32, u64, u64)> {
        let (version, size, header_len) = Self::header_fields(data)?;
        if size > to_u64(data.len()) {
            return Err(Error::new(
                ErrorKind::BinaryOutOfBounds {
                    size,
                    len: to_u64(data.len()),
                },
                8,
            ));
        }
        Ok((version, size, header_len))
    }

    /// The magic, version and size checked against the header alone.
    fn header_fields(data: &[u8]) -> Result<(u32, u64, u64)> {
        if !Self::is_offload_binary(data) {
            return Err(Error::new(ErrorKind::NotOffloadBinary, 0));
        }
        let mut cursor = Cursor::at(data, 0);
        let header = cursor.read::<Header>().ok_or_else(|| {
            Error::truncated(Field::OffloadBinaryHeader, 32, to_u64(data.len()), 0)
        })?;
        let version = header.version.get();
        let header_len = match version {
            1 | 2 => 32,
            3 => 40,
            _ => {
                return Err(Error::new(
                    ErrorKind::UnsupportedBinaryVersion { version },
                    4,
                ))
            }
        };
        // The size first: the 32 bytes read say whether the binary is
        // shorter than its version's header, and a reader of unknown length
        // must not be sent past a binary's declared end for the rest.
        let size = header.size.get();
        if size < header_len {
            return Err(Error::new(
                ErrorKind::BinarySizeTooSmall { size, header_len },
                8,
            ));
        }
        if to_u64(data.len()) < header_len {
            return Err(Error::truncated(
                Field::OffloadBinaryHeader,
                header_len,
                to_u64(data.len()),
                0,
            ));
        }
        Ok((version, size, header_len))
    }

    /// Parses the binary at the start of `data` and checks every entry and
    /// string it declares. Bytes after its declared size are not part of it
    /// (see [`binaries`] for several back to back).
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let (version, size, _) = Self::read_header(data)?;
        let data = range(data, 0, size).unwrap_or(data);
        let header = Header::ref_from_prefix(data)
            .map_err(|_| Error::truncated(Field::OffloadBinaryHeader, 32, to_u64(data.len()), 0))?
            .0;
        let entries_offset = header.entries_offset.get();
        let (entry_count, inflated_size) = match version {
            1 => {
                // LLVM 22 checks the otherwise unused field all the same.
                let (entry_size, size) = (header.entries_field.get(), to_u64(data.len()));
                if entry_size > size.saturating_sub(32) {
                    return Err(Error::new(
                        ErrorKind::EntrySizeOutOfBounds { entry_size, size },
                        24,
                    ));
                }
                (1, 0)
            }
            2 => (header.entries_field.get(), 0),
            _ => {
                let v3 = HeaderV3::ref_from_prefix(data)
                    .map_err(|_| {
                        Error::truncated(Field::OffloadBinaryHeader, 40, to_u64(data.len()), 0)
                    })?
                    .0;
                (header.entries_field.get(), v3.inflated_size.get())
            }
        };
        let binary = OffloadBinary {
            data,
            version,
            entries_offset,
            entry_count,
            inflated_size,
        };
        if !binary.is_compressed() {
            binary.check_entries()?;
        }
        Ok(binary)
    }

    fn check_entries(&self) -> Result<()> {
        let size = to_u64(self.data.len());
        let table = self
            .entry_count
            .checked_mul(ENTRY_SIZE)
            .and_then(|len| range(self.data, self.entries_offset, len));
        if table.is_none() {
            return Err(Error::new(
                ErrorKind::EntryTableOutOfBounds {
                    offset: self.entries_offset,
                    count: self.entry_count,
                    size,
                },
                if self.version == 1 { 16 } else { 24 },
            ));
        }
        // One backward search tells whether a string at any offset has a NUL
        // after it: it does if it starts at or before the last NUL.
        let last_nul = memrchr(0, self.data).map(to_u64);
        for index in 0..self.entry_count {
            let entry = self.entry_at(index)?;
            entry.check(last_nul).map_err(|e| e.in_entry(index))?;
        }
        Ok(())
    }

    fn entry_at(&self, index: u64) -> Result<OffloadEntry<'data>> {
        let offset = index
            .checked_mul(ENTRY_SIZE)
            .and_then(|at| at.checked_add(self.entries_offset))
            .ok_or(Error::new(ErrorKind::LayoutOverflow, 16))?;
        let bytes = range(self.data, offset, ENTRY_SIZE).ok_or(Error::truncated(
            Field::OffloadEntry,
            ENTRY_SIZE,
            to_u64(self.data.len()).saturating_sub(offset),
            offset,
        ))?;
        let record = EntryRecord::ref_from_bytes(bytes)
            .map_err(|_| Error::new(ErrorKind::LayoutOverflow, offset))?;
        Ok(OffloadEntry {
            binary: *self,
            index,
            record,
        })
    }

    /// The binary's bytes, from its magic to its declared size.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The format version: 1, 2 or 3.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The declared size of the binary.
    pub fn size(&self) -> u64 {
        to_u64(self.data.len())
    }

    /// Absolute offset of the entry table (of the decompressed binary, if
    /// compressed).
    pub fn entries_offset(&self) -> u64 {
        self.entries_offset
    }

    /// Number of entries (of the decompressed binary, if compressed).
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// Whether this is a compressed version 3 binary: its entries can only be
    /// read from [`OffloadBinary::decompress`]'s output.
    pub fn is_compressed(&self) -> bool {
        self.inflated_size != 0
    }

    /// The size of the decompressed binary, header included (version 3; 0 if
    /// not compressed).
    pub fn inflated_size(&self) -> u64 {
        self.inflated_size
    }

    /// The entries in table order; none for a compressed binary.
    pub fn entries(&self) -> OffloadEntries<'data> {
        OffloadEntries {
            binary: *self,
            next: 0,
            end: if self.is_compressed() {
                0
            } else {
                self.entry_count
            },
        }
    }

    /// The compressed stream of a compressed binary: zstd if it starts with
    /// the zstd magic, zlib otherwise.
    fn stream(&self) -> Option<Stream<'data>> {
        if !self.is_compressed() {
            return None;
        }
        let bytes = self.data.get(40..).unwrap_or_default();
        let method = if bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            CompressionMethod::Zstd
        } else {
            CompressionMethod::Zlib
        };
        Some(Stream {
            method,
            bytes,
            declared: self.inflated_size.saturating_sub(40),
            base: 40,
            declared_at: 32,
            method_at: 40,
        })
    }

    /// The compression method of a compressed binary.
    pub fn compression(&self) -> Option<CompressionMethod> {
        self.stream().map(|s| s.method)
    }

    /// Decompresses a compressed binary into a new buffer holding the whole
    /// uncompressed binary (its header with the inflated size cleared, then
    /// the decoded bytes), which [`OffloadBinary::parse`] reads. The size is
    /// checked against `options.limits` before anything is allocated.
    #[cfg(feature = "alloc")]
    pub fn decompress(&self, options: &DecompressOptions) -> Result<alloc::vec::Vec<u8>> {
        let stream = self
            .stream()
            .ok_or(Error::new(ErrorKind::NotCompressed, 32))?;
        if self.entries_offset != 40 {
            return Err(Error::new(
                ErrorKind::EntryTableOutOfBounds {
                    offset: self.entries_offset,
                    count: self.entry_count,
                    size: self.inflated_size,
                },
                16,
            ));
        }
        if self.inflated_size < 40 {
            return Err(Error::new(
                ErrorKind::BinarySizeTooSmall {
                    size: self.inflated_size,
                    header_len: 40,
                },
                32,
            ));
        }
        let (body, _) = stream.decode_to_vec(options, false)?;
        let mut out = crate::bytes::reserve(self.inflated_size)?;
        out.extend_from_slice(self.data.get(..40).unwrap_or_default());
        out.extend_from_slice(&body);
        let inflated = self.inflated_size.to_le_bytes();
        if let Some(size) = out.get_mut(8..16) {
            size.copy_from_slice(&inflated);
        }
        if let Some(field) = out.get_mut(32..40) {
            field.fill(0);
        }
        Ok(out)
    }
}

/// The OffloadBinaries back to back in `data` (a raw file, or the contents of
/// a `.llvm.offloading` section), each with its offset, skipping zero padding
/// between and after them (LLVM 22 rejects padding after the last). A damaged
/// binary, or another kind of container, ends the walk with a located error;
/// the binaries before it are still yielded.
pub fn binaries(data: &[u8]) -> impl Iterator<Item = Result<(u64, OffloadBinary<'_>)>> {
    BackToBack::at(data, 0, binary_at, |binary| binary.data().len())
}

/// The OffloadBinary at the start of `data`. Another kind of container there
/// is [`ErrorKind::NotOffloadBinary`] once it parses (a damaged one says what
/// is wrong with it), and bytes that start none
/// [`ErrorKind::UnknownContainer`]: what a walk over every kind would meet.
fn binary_at(data: &[u8]) -> Result<OffloadBinary<'_>> {
    if OffloadBinary::is_offload_binary(data) {
        return OffloadBinary::parse(data);
    }
    if CompressedBundle::is_compressed(data) {
        CompressedBundle::parse_to_extent(data)?;
    } else if Bundle::is_bundle(data) {
        Bundle::parse_to_extent(data)?;
    } else {
        return Err(Error::new(ErrorKind::UnknownContainer, 0));
    }
    Err(Error::new(ErrorKind::NotOffloadBinary, 0))
}

impl<'data> OffloadEntry<'data> {
    /// Position of the entry in the table.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The stored record.
    pub fn record(&self) -> &'data EntryRecord {
        self.record
    }

    /// What the image holds.
    pub fn image_kind(&self) -> ImageKind {
        ImageKind::from_raw(self.record.image_kind.get())
    }

    /// Which offload model produced the image.
    pub fn offload_kind(&self) -> OffloadKind {
        OffloadKind::from_raw(self.record.offload_kind.get())
    }

    /// The entry's flags, as stored.
    pub fn flags(&self) -> u32 {
        self.record.flags.get()
    }

    /// Absolute offset of the image in the binary.
    pub fn image_offset(&self) -> u64 {
        self.record.image_offset.get()
    }

    /// The image bytes, borrowed from the input.
    pub fn image(&self) -> &'data [u8] {
        range(
            self.binary.data,
            self.record.image_offset.get(),
            self.record.image_size.get(),
        )
        .unwrap_or_default()
    }

    /// Number of key-value strings.
    pub fn string_count(&self) -> u64 {
        self.record.num_strings.get()
    }

    /// The key-value strings in table order.
    pub fn strings(&self) -> OffloadStrings<'data> {
        OffloadStrings {
            entry: *self,
            next: 0,
        }
    }

    /// String `index` (table order), read directly.
    pub fn string_at(&self, index: u64) -> Option<OffloadString<'data>> {
        (index < self.string_count()).then(|| {
            let (key, value, value_size) = self.string_fields(index);
            OffloadString {
                key: self.nul_terminated(key),
                value: self.value(value, value_size),
            }
        })
    }

    /// The value of the last string whose key is `key` (a repeated key's
    /// last value, as LLVM reads them into a map); only that value is read.
    pub fn string(&self, key: &[u8]) -> Option<&'data [u8]> {
        (0..self.string_count()).rev().find_map(|index| {
            let (key_at, value, value_size) = self.string_fields(index);
            (self.nul_terminated(key_at) == key).then(|| self.value(value, value_size))
        })
    }

    /// The `triple` string, if present.
    pub fn triple(&self) -> Option<&'data [u8]> {
        self.string(b"triple")
    }

    /// The `arch` string (a target ID for AMDGPU), if present.
    pub fn arch(&self) -> Option<&'data [u8]> {
        self.string(b"arch")
    }

    fn string_entry_size(&self) -> u64 {
        if self.binary.version == 1 {
            16
        } else {
            24
        }
    }

    /// Checks the image range and every string; `last_nul` is the offset of
    /// the binary's last NUL byte.
    fn check(&self, last_nul: Option<u64>) -> Result<()> {
        let size = self.binary.size();
        let at = self.record_offset();
        let (offset, image_size) = (self.image_offset(), self.record.image_size.get());
        if range(self.binary.data, offset, image_size).is_none() {
            return Err(Error::new(
                ErrorKind::ImageOutOfBounds {
                    offset,
                    size: image_size,
                    binary_size: size,
                },
                at.saturating_add(24),
            ));
        }
        let (strings, count) = (self.record.string_offset.get(), self.string_count());
        let table = count
            .checked_mul(self.string_entry_size())
            .and_then(|len| range(self.binary.data, strings, len));
        if table.is_none() {
            return Err(Error::new(
                ErrorKind::StringTableOutOfBounds {
                    offset: strings,
                    count,
                    size,
                },
                at.saturating_add(8),
            ));
        }
        for index in 0..count {
            let entry_at = strings.saturating_add(index.saturating_mul(self.string_entry_size()));
            let (key, value, value_size) = self.string_fields(index);
            check_terminated(key, last_nul, size, entry_at)?;
            match value_size {
                None => check_terminated(value, last_nul, size, entry_at.saturating_add(8))?,
                Some(len) => {
                    if range(self.binary.data, value, len).is_none() {
                        return Err(Error::new(
                            ErrorKind::StringOutOfBounds {
                                offset: value,
                                size: len,
                                binary_size: size,
                            },
                            entry_at.saturating_add(8),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn record_offset(&self) -> u64 {
        self.binary
            .entries_offset
            .saturating_add(self.index.saturating_mul(ENTRY_SIZE))
    }

    /// Key offset, value offset and (versions 2, 3) value size of string
    /// `index`, which [`OffloadEntry::check`] has bounded.
    fn string_fields(&self, index: u64) -> (u64, u64, Option<u64>) {
        let at = self
            .record
            .string_offset
            .get()
            .saturating_add(index.saturating_mul(self.string_entry_size()));
        let mut cursor = Cursor::at(self.binary.data, usize::try_from(at).unwrap_or(usize::MAX));
        if self.binary.version == 1 {
            match cursor.read::<StringEntryV1>() {
                Some(e) => (e.key_offset.get(), e.value_offset.get(), None),
                None => (u64::MAX, u64::MAX, None),
            }
        } else {
            match cursor.read::<StringEntryV2>() {
                Some(e) => (
                    e.key_offset.get(),
                    e.value_offset.get(),
                    Some(e.value_size.get()),
                ),
                None => (u64::MAX, u64::MAX, Some(0)),
            }
        }
    }

    /// A value: up to its NUL (version 1) or of its stored size.
    fn value(&self, offset: u64, size: Option<u64>) -> &'data [u8] {
        match size {
            None => self.nul_terminated(offset),
            Some(len) => range(self.binary.data, offset, len).unwrap_or_default(),
        }
    }

    fn nul_terminated(&self, offset: u64) -> &'data [u8] {
        let rest = range(
            self.binary.data,
            offset,
            self.binary.size().saturating_sub(offset),
        )
        .unwrap_or_default();
        rest.get(..memchr(0, rest).unwrap_or(rest.len()))
            .unwrap_or_default()
    }
}

/// Checks that a NUL-terminated string at `offset` lies in the binary and
/// ends inside it. `field_at` is where its offset is stored.
fn check_terminated(offset: u64, last_nul: Option<u64>, size: u64, field_at: u64) -> Result<()> {
    if offset >= size {
        return Err(Error::new(
            ErrorKind::StringOutOfBounds {
                offset,
                size: 1,
                binary_size: size,
            },
            field_at,
        ));
    }
    match last_nul {
        Some(nul) if offset <= nul => Ok(()),
        _ => Err(Error::new(
            ErrorKind::UnterminatedString { offset },
            field_at,
        )),
    }
}

/// Iterator over a binary's entries.
#[derive(Debug, Clone)]
pub struct OffloadEntries<'data> {
    binary: OffloadBinary<'data>,
    next: u64,
    end: u64,
}

impl<'data> Iterator for OffloadEntries<'data> {
    type Item = OffloadEntry<'data>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let entry = self.binary.entry_at(self.next).ok();
        self.next = self.next.saturating_add(1);
        entry
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.end.saturating_sub(self.next)).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// Iterator over an entry's strings.
#[derive(Debug, Clone)]
pub struct OffloadStrings<'data> {
    entry: OffloadEntry<'data>,
    next: u64,
}

impl<'data> Iterator for OffloadStrings<'data> {
    type Item = OffloadString<'data>;

    fn next(&mut self) -> Option<Self::Item> {
        let string = self.entry.string_at(self.next)?;
        self.next = self.next.saturating_add(1);
        Some(string)
    }
}

impl fmt::Display for ImageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageKind::Unknown(raw) => write!(f, "unknown ({raw})"),
            ImageKind::None => f.write_str("none"),
            ImageKind::Spirv => f.write_str("spv"),
            kind => f.write_str(kind.extension()),
        }
    }
}

#[cfg(test)]
mod tests;
