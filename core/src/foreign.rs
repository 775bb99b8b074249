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
pub const KPACK_MAGIC: &[u8; 4] = b"KPAK";

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
            _ if msgpack::is_one_value(data) => Foreign::Msgpack,
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

/// MessagePack, only as far as telling whether bytes are one whole value.
mod msgpack {
    /// How deep maps and arrays may nest before the walk gives up (real
    /// files nest a few levels).
    const DEPTH: usize = 64;

    /// Whether `data` is exactly one MessagePack value, a map or an array
    /// (a lone scalar is too weak a sign). Walked iteratively, with the
    /// items still to read at each level on a fixed stack.
    pub(super) fn is_one_value(data: &[u8]) -> bool {
        if !matches!(data.first(), Some(0x80..=0x9f | 0xdc..=0xdf)) {
            return false;
        }
        let mut pending = [0u64; DEPTH];
        let mut depth = 0;
        let mut at = 0usize;
        // The top level holds one value.
        pending[0] = 1;
        loop {
            while depth > 0 && pending.get(depth) == Some(&0) {
                depth = depth.saturating_sub(1);
            }
            match pending.get_mut(depth) {
                Some(0) | None => return at == data.len(),
                Some(left) => *left = left.saturating_sub(1),
            }
            let Some((len, items)) = value(data, at) else {
                return false;
            };
            at = match at.checked_add(len) {
                Some(end) if end <= data.len() => end,
                _ => return false,
            };
            if items > 0 {
                depth = depth.saturating_add(1);
                match pending.get_mut(depth) {
                    Some(slot) => *slot = items,
                    None => return false,
                }
            }
        }
    }

    /// The value at `at`: the bytes of its header and scalar contents, and
    /// how many values it holds (a map's keys and values).
    fn value(data: &[u8], at: usize) -> Option<(usize, u64)> {
        let tag = *data.get(at)?;
        let n = |width: usize| -> Option<u64> {
            let start = at.checked_add(1)?;
            let bytes = data.get(start..start.checked_add(width)?)?;
            Some(bytes.iter().fold(0, |v, &b| (v << 8) | u64::from(b)))
        };
        let sized = |width: usize| -> Option<(usize, u64)> {
            let len = usize::try_from(n(width)?).ok()?;
            Some((1usize.checked_add(width)?.checked_add(len)?, 0))
        };
        let counted =
            |width: usize, per: u64| Some((width.saturating_add(1), n(width)?.checked_mul(per)?));
        match tag {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => Some((1, 0)),
            0x80..=0x8f => Some((1, u64::from(tag & 0x0f).saturating_mul(2))),
            0x90..=0x9f => Some((1, u64::from(tag & 0x0f))),
            0xa0..=0xbf => Some((usize::from(tag & 0x1f).saturating_add(1), 0)),
            0xc4 | 0xd9 => sized(1),
            0xc5 | 0xda => sized(2),
            0xc6 | 0xdb => sized(4),
            // ext 8/16/32: a size, a type byte, the data.
            0xc7 => sized(1).map(|(len, _)| (len.saturating_add(1), 0)),
            0xc8 => sized(2).map(|(len, _)| (len.saturating_add(1), 0)),
            0xc9 => sized(4).map(|(len, _)| (len.saturating_add(1), 0)),
            0xca => Some((5, 0)),
            0xcb => Some((9, 0)),
            0xcc | 0xd0 => Some((2, 0)),
            0xcd | 0xd1 => Some((3, 0)),
            0xce | 0xd2 => Some((5, 0)),
            0xcf | 0xd3 => Some((9, 0)),
            // fixext 1, 2, 4, 8, 16: a type byte and the data.
            0xd4 => Some((3, 0)),
            0xd5 => Some((4, 0)),
            0xd6 => Some((6, 0)),
            0xd7 => Some((10, 0)),
            0xd8 => Some((18, 0)),
            0xdc => counted(2, 1),
            0xdd => counted(4, 1),
            0xde => counted(2, 2),
            0xdf => counted(4, 2),
            // 0xc1 is never used.
            _ => None,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::is_one_value;

        #[test]
        fn whole_values_only() {
            // {"abc": 1, "def": [2, 3.0f32]}
            let good = b"\x82\xa3abc\x01\xa3def\x92\x02\xca\x40\x40\x00\x00";
            assert!(is_one_value(good));
            for cut in 1..good.len() {
                assert!(!is_one_value(&good[..cut]), "{cut}");
            }
            let mut longer = good.to_vec();
            longer.push(0);
            assert!(!is_one_value(&longer));
            // A scalar alone, a reserved byte, and nesting past the limit.
            assert!(!is_one_value(b"\x01"));
            assert!(!is_one_value(b"\x81\xc1\x01"));
            assert!(!is_one_value(&[0x91; 100]));
            // A map of 2^32-1 pairs in a few bytes: refused at the end of
            // the data, not walked.
            assert!(!is_one_value(b"\xdf\xff\xff\xff\xff\x01\x01"));
        }
    }
}
