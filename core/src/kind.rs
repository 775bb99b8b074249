//! What a file is, from its first bytes: every magic this crate knows, in
//! one place. Readers, the bundler's rules, the C ABI and the tool all ask
//! here instead of checking magics of their own.

use crate::archive::{ARCHIVE_MAGIC, THIN_ARCHIVE_MAGIC};
use crate::bitcode::is_bitcode;
use crate::bundle::BUNDLE_MAGIC;
use crate::coff::CoffFile;
use crate::compressed::COMPRESSED_MAGIC;
use crate::cuda_fatbin::FATBIN_MAGIC_BYTES;
use crate::elf::ELF_MAGIC;
use crate::offload_binary::OFFLOAD_BINARY_MAGIC;
use crate::text_bundle::Comment;

/// The kind of a file or buffer, by its magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A binary offload bundle (`__CLANG_OFFLOAD_BUNDLE__`).
    Bundle,
    /// A compressed offload bundle (`CCOB`).
    CompressedBundle,
    /// An OffloadBinary (`10 FF 10 AD`).
    OffloadBinary,
    /// An NVIDIA CUDA fat binary (`50 ED 55 BA`).
    CudaFatbin,
    /// A text bundle: a start marker at the start of a line, in this comment
    /// style.
    TextBundle(Comment),
    /// An ELF file.
    Elf(ElfKind),
    /// A Mach-O file (which LLVM opens as an object; this crate does not
    /// read it).
    MachO,
    /// A COFF object or a PE image (DLL or executable).
    Coff(CoffKind),
    /// LLVM bitcode, bare (`BC C0 DE`) or in its wrapper (`DE C0 17 0B`).
    Bitcode,
    /// An `ar` archive.
    Archive,
    /// A thin `ar` archive (members outside the file).
    ThinArchive,
    /// Anything else.
    Other,
}

/// What an ELF file's identification and header say, read without reading
/// its sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfKind {
    /// `EI_CLASS`: 1 for 32-bit, 2 for 64-bit, others unknown.
    pub class: u8,
    /// `EI_DATA`: 1 little-endian, 2 big-endian, others unknown.
    pub encoding: u8,
    /// `e_machine`, in the file's byte order (0 if the header is cut short).
    pub machine: u16,
    /// Whether LLVM opens it as an object file: a known class and byte
    /// order, version 1, a whole file header, and a section header table
    /// of the class's entry size inside the file. LLVM takes a
    /// file that only starts with the ELF magic as plain data.
    pub is_object: bool,
}

/// What a COFF file's headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoffKind {
    /// Whether LLVM opens it as an object file: its headers and section
    /// table inside the file (a symbol table it cannot read is dropped).
    /// LLVM takes a file that only starts as COFF as plain data.
    pub is_object: bool,
}

const MACHO_MAGICS: [[u8; 4]; 4] = [
    [0xfe, 0xed, 0xfa, 0xce],
    [0xfe, 0xed, 0xfa, 0xcf],
    [0xce, 0xfa, 0xed, 0xfe],
    [0xcf, 0xfa, 0xed, 0xfe],
];

impl FileKind {
    /// The kind `data` starts as. Reads at most the first 64 bytes, except
    /// for a COFF file, whose headers are checked (a few fields each), and a
    /// file no magic names, which is searched once for a text bundle's start
    /// marker.
    pub fn detect(data: &[u8]) -> FileKind {
        if data.starts_with(BUNDLE_MAGIC) {
            FileKind::Bundle
        } else if data.starts_with(COMPRESSED_MAGIC) {
            FileKind::CompressedBundle
        } else if data.starts_with(OFFLOAD_BINARY_MAGIC) {
            FileKind::OffloadBinary
        } else if data.starts_with(FATBIN_MAGIC_BYTES) {
            FileKind::CudaFatbin
        } else if data.starts_with(ELF_MAGIC) {
            FileKind::Elf(ElfKind::read(data))
        } else if MACHO_MAGICS.iter().any(|m| data.starts_with(m)) {
            FileKind::MachO
        } else if CoffFile::is_coff(data) {
            FileKind::Coff(CoffKind {
                // LLVM opens big objects too; this crate refuses them.
                is_object: CoffFile::parse(data).map_or_else(
                    |e| {
                        e.kind()
                            == crate::ErrorKind::UnsupportedCoff {
                                what: crate::coff::CoffUnsupported::BigObject,
                            }
                    },
                    |_| true,
                ),
            })
        } else if is_bitcode(data) {
            FileKind::Bitcode
        } else if data.starts_with(ARCHIVE_MAGIC) {
            FileKind::Archive
        } else if data.starts_with(THIN_ARCHIVE_MAGIC) {
            FileKind::ThinArchive
        } else if let Some(comment) = Comment::detect(data) {
            FileKind::TextBundle(comment)
        } else {
            FileKind::Other
        }
    }

    /// A container of this kind as reports name it (`bundle`, `compressed
    /// bundle`, `OffloadBinary`, `CUDA fat binary`); `None` for files that
    /// are no container of device code.
    pub fn container_name(self) -> Option<&'static str> {
        match self {
            FileKind::Bundle => Some("bundle"),
            FileKind::CompressedBundle => Some("compressed bundle"),
            FileKind::OffloadBinary => Some("OffloadBinary"),
            FileKind::CudaFatbin => Some("CUDA fat binary"),
            _ => None,
        }
    }

    /// A container kind's tag, the stable identifier machine-readable
    /// reports and the Python package use (`bundle`, `compressed`,
    /// `offload_binary`, `cuda_fatbin`: `inspect --json`'s `kind`,
    /// `Container.kind`); `None` for files that are no container.
    pub fn container_tag(self) -> Option<&'static str> {
        match self {
            FileKind::Bundle => Some("bundle"),
            FileKind::CompressedBundle => Some("compressed"),
            FileKind::OffloadBinary => Some("offload_binary"),
            FileKind::CudaFatbin => Some("cuda_fatbin"),
            _ => None,
        }
    }

    /// Whether the bytes start a binary bundle or a compressed bundle: what
    /// the bundler reads as a container of entries.
    pub fn is_bundle_container(self) -> bool {
        matches!(self, FileKind::Bundle | FileKind::CompressedBundle)
    }

    /// Whether LLVM opens the file as an object (`-type=o` reads its
    /// sections): an ELF object it can read, COFF or Mach-O.
    pub fn is_object(self) -> bool {
        match self {
            FileKind::Elf(elf) => elf.is_object,
            FileKind::Coff(coff) => coff.is_object,
            FileKind::MachO => true,
            _ => false,
        }
    }

    /// Whether this crate reads the file as an object (little-endian ELF
    /// with its section table inside the file, or COFF).
    pub fn is_readable_object(self) -> bool {
        match self {
            FileKind::Elf(elf) => elf.is_object && elf.encoding == 1,
            FileKind::Coff(coff) => coff.is_object,
            _ => false,
        }
    }

    /// A short name for messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Bundle => "bundle",
            FileKind::CompressedBundle => "compressed bundle",
            FileKind::OffloadBinary => "offload binary",
            FileKind::CudaFatbin => "CUDA fat binary",
            FileKind::TextBundle(_) => "text bundle",
            FileKind::Elf(_) => "ELF file",
            FileKind::MachO => "Mach-O file",
            FileKind::Coff(_) => "COFF object or PE image",
            FileKind::Bitcode => "LLVM bitcode",
            FileKind::Archive => "archive",
            FileKind::ThinArchive => "thin archive",
            FileKind::Other => "other",
        }
    }
}

impl ElfKind {
    fn read(data: &[u8]) -> ElfKind {
        let byte = |at: usize| data.get(at).copied().unwrap_or(0);
        let (class, encoding) = (byte(4), byte(5));
        let little = encoding == 1;
        let field = |at: usize, n: usize| -> Option<u64> {
            let bytes = data.get(at..at.checked_add(n)?)?;
            let fold = |v: u64, b: &u8| (v << 8) | u64::from(*b);
            Some(if little {
                bytes.iter().rev().fold(0, fold)
            } else {
                bytes.iter().fold(0, fold)
            })
        };
        let machine = field(18, 2).and_then(|m| u16::try_from(m).ok());
        // (e_shoff, e_shentsize, e_shnum) for ELF32 and ELF64, then the
        // class's file header size, section header size, and where in a
        // section header its sh_size is and how wide.
        let (table, [header_size, entry_size], [size_at, size_width]) = match class {
            1 => (
                Some((field(32, 4), field(46, 2), field(48, 2))),
                [52, 40],
                [20, 4],
            ),
            2 => (
                Some((field(40, 8), field(58, 2), field(60, 2))),
                [64, 64],
                [32, 8],
            ),
            _ => (None, [0, 0], [0, 0]),
        };
        let table_end = table.and_then(|(offset, size, count)| {
            let offset = offset?;
            if offset == 0 {
                return Some(0);
            }
            // A count of 0 is section 0's sh_size; its header must fit.
            let count = match count? {
                0 => usize::try_from(offset)
                    .ok()
                    .and_then(|at| field(at.checked_add(size_at)?, size_width))
                    .unwrap_or(0),
                count => count,
            };
            size?.checked_mul(count.max(1))?.checked_add(offset)
        });
        // LLVM's reader checks a table's entry size (there is no table at
        // offset 0).
        let table_shape =
            table.is_some_and(|(offset, size, _)| offset == Some(0) || size == Some(entry_size));
        let len = u64::try_from(data.len()).unwrap_or(u64::MAX);
        ElfKind {
            class,
            encoding,
            machine: machine.unwrap_or(0),
            is_object: matches!(encoding, 1 | 2)
                && byte(6) == 1
                && len >= header_size
                && table_shape
                && table_end.is_some_and(|end| end <= len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_magic_is_told_apart() {
        assert_eq!(
            FileKind::detect(b"__CLANG_OFFLOAD_BUNDLE__\0"),
            FileKind::Bundle
        );
        assert_eq!(FileKind::detect(b"CCOB\x03\0"), FileKind::CompressedBundle);
        assert_eq!(
            FileKind::detect(&[0x10, 0xff, 0x10, 0xad, 1]),
            FileKind::OffloadBinary
        );
        assert_eq!(FileKind::detect(b"!<arch>\n"), FileKind::Archive);
        assert_eq!(FileKind::detect(b"!<thin>\n"), FileKind::ThinArchive);
        assert_eq!(FileKind::detect(b"BC\xc0\xde\x35"), FileKind::Bitcode);
        assert_eq!(FileKind::detect(&[0xcf, 0xfa, 0xed, 0xfe]), FileKind::MachO);
        assert_eq!(FileKind::detect(b""), FileKind::Other);
        assert_eq!(FileKind::detect(b"CCO"), FileKind::Other);
        assert_eq!(
            FileKind::detect(b"\n// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64--\n"),
            FileKind::TextBundle(Comment::DoubleSlash)
        );
        assert_eq!(
            FileKind::detect(b"; __CLANG_OFFLOAD_BUNDLE____START__ a\n"),
            FileKind::TextBundle(Comment::Semicolon)
        );
        assert_eq!(
            FileKind::detect(b"# __CLANG_OFFLOAD_BUNDLE____START__ a\n"),
            FileKind::TextBundle(Comment::Hash)
        );
        assert_eq!(
            FileKind::detect(b"int x;\n# __CLANG_OFFLOAD_BUNDLE____START__ a\n"),
            FileKind::TextBundle(Comment::Hash)
        );
        assert_eq!(
            FileKind::detect(b"x // __CLANG_OFFLOAD_BUNDLE____START__ a\n"),
            FileKind::Other
        );
        assert_eq!(FileKind::detect(b"int x;\n"), FileKind::Other);
    }

    /// A 128-byte ELF64 header whose one section header ends at
    /// `section_table_end`.
    fn elf64(section_table_end: u64) -> [u8; 128] {
        let mut data = [0u8; 128];
        data[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        data[18] = 62;
        data[40..48].copy_from_slice(&(section_table_end - 64).to_le_bytes());
        data[58] = 64;
        data[60] = 1;
        data
    }

    #[test]
    fn an_elf_file_is_an_object_when_its_section_table_is_inside() {
        let inside = elf64(128);
        let FileKind::Elf(elf) = FileKind::detect(&inside) else {
            panic!("not ELF");
        };
        assert_eq!((elf.class, elf.encoding, elf.machine), (2, 1, 62));
        assert!(elf.is_object && FileKind::detect(&inside).is_readable_object());
        let outside = elf64(129);
        assert!(!FileKind::detect(&outside).is_object());
        // Cut inside the header: still ELF, not an object.
        let cut = &inside[..20];
        assert!(matches!(FileKind::detect(cut), FileKind::Elf(e) if !e.is_object));
        let mut overflow = elf64(128);
        overflow[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(!FileKind::detect(&overflow).is_object());
        // A section header size that is not the class's: not an object to
        // LLVM either.
        let mut entry_size = elf64(128);
        entry_size[58] = 0;
        assert!(!FileKind::detect(&entry_size).is_object());
        // e_shnum 0: the count is section 0's sh_size.
        let mut counted = elf64(128);
        counted[60] = 0;
        assert!(FileKind::detect(&counted).is_object());
        counted[64 + 32] = 2;
        assert!(!FileKind::detect(&counted).is_object());
    }
}
