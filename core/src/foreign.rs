//! What a file is when it holds no offload container: the words `list`,
//! `extract` and `inspect` all use, naming what we recognise (a raw AMDGPU
//! code object and its target ID, a CUDA cubin and its SM, a kpack archive,
//! MessagePack data such as rocBLAS' Tensile `.dat` files) so that a user
//! who points the tool at the wrong file learns what it is. Reads headers
//! only, except for MessagePack, which is walked once to its end without
//! allocating.

use core::fmt;

use crate::elf::{AmdgpuTarget, ElfFile, EM_AMDGPU, EM_CUDA};
use crate::kind::FileKind;

/// The magic of a kpack archive (ROCm 7's split device code).
pub use crate::kpack::KPACK_MAGIC;

/// What `list`, `extract` and `inspect` say of a file that holds no
/// offload container or CUDA fat binary: that, then what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoContainer(pub Foreign);

impl fmt::Display for NoContainer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no offload container or CUDA fat binary: {}", self.0)
    }
}

/// What a file that holds no offload container is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Foreign {
    /// No bytes at all.
    Empty,
    /// An AMDGPU code object, with the target its header names (`None`
    /// when the header names none we know).
    AmdgpuCodeObject(Option<AmdgpuTarget>),
    /// An NVIDIA cubin for this SM (`sm_80`: 80).
    Cubin {
        /// The SM its header names.
        sm: u32,
    },
    /// A kpack archive of this format version.
    Kpack {
        /// The version in its header.
        version: u32,
    },
    /// One MessagePack value filling the whole file.
    Msgpack,
    /// Another ELF file (a host without offload sections), by `e_machine`.
    Elf {
        /// `e_machine`.
        machine: u16,
    },
    /// A COFF object or PE image without offload sections.
    Coff,
    /// A Mach-O file (not read by this crate).
    MachO,
    /// LLVM bitcode.
    Bitcode,
    /// An `ar` archive none of whose members holds a container.
    Archive,
    /// Bytes of no format we know.
    Unknown {
        /// How many.
        len: u64,
    },
}

impl Foreign {
    /// What `data` is, by its headers (for MessagePack, its whole walk).
    pub fn identify(data: &[u8]) -> Foreign {
        match FileKind::detect(data) {
            _ if data.is_empty() => Foreign::Empty,
            FileKind::Elf(elf) => identify_elf(data, elf.machine),
            FileKind::Coff(_) => Foreign::Coff,
            FileKind::MachO => Foreign::MachO,
            FileKind::Bitcode => Foreign::Bitcode,
            FileKind::Archive | FileKind::ThinArchive => Foreign::Archive,
            _ if data.starts_with(KPACK_MAGIC) => Foreign::Kpack {
                version: u32_at(data, 4).unwrap_or(0),
            },
            _ if crate::msgpack::is_one_value(data) => Foreign::Msgpack,
            _ => Foreign::Unknown {
                len: crate::bytes::to_u64(data.len()),
            },
        }
    }

    /// Whether the file is device code of its own (a raw code object or
    /// cubin), which `inspect` shows rather than refuses.
    pub fn is_device_code(&self) -> bool {
        matches!(self, Foreign::AmdgpuCodeObject(_) | Foreign::Cubin { .. })
    }
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn identify_elf(data: &[u8], machine: u16) -> Foreign {
    match machine {
        EM_AMDGPU => Foreign::AmdgpuCodeObject(
            ElfFile::parse(data)
                .ok()
                .and_then(|f| AmdgpuTarget::from_header(f.header())),
        ),
        // The SM is in e_flags: bits 8..15 from ELF ABI version 8 (EI_OSABI
        // 0x41, CUDA 12.8 on), bits 0..7 before.
        EM_CUDA => {
            let flags = u32_at(data, 0x30).unwrap_or(0);
            let sm = if data.get(7) == Some(&0x41) {
                (flags >> 8) & 0xff
            } else {
                flags & 0xff
            };
            Foreign::Cubin { sm }
        }
        machine => Foreign::Elf { machine },
    }
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Foreign::Empty => f.write_str("the file is empty"),
            Foreign::AmdgpuCodeObject(Some(target)) => write!(
                f,
                "it is an AMDGPU code object for amdgcn-amd-amdhsa--{target}"
            ),
            Foreign::AmdgpuCodeObject(None) => {
                f.write_str("it is an AMDGPU code object whose header names no target ID we know")
            }
            Foreign::Cubin { sm } => {
                write!(f, "it is a CUDA cubin for sm_{sm}")
            }
            Foreign::Kpack { version } => write!(
                f,
                "it is a kpack archive (ROCm 7 split device code, version {version})"
            ),
            Foreign::Msgpack => f.write_str(
                "it is MessagePack data (such as a Tensile library's .dat file), not device code",
            ),
            Foreign::Elf { machine } => write!(
                f,
                "it is an ELF file (e_machine {machine}) with no offload section"
            ),
            Foreign::Coff => f.write_str("it is a COFF/PE file with no offload section"),
            Foreign::MachO => f.write_str("it is a Mach-O file, which is not read"),
            Foreign::Bitcode => f.write_str("it is LLVM bitcode"),
            Foreign::Archive => f.write_str("it is an archive none of whose members holds one"),
            Foreign::Unknown { len } => write!(f, "its {len} bytes are of no format we know"),
        }
    }
}
