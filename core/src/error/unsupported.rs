//! Why a well-formed object file is not one this crate handles; re-exported
//! by `elf` and `coff`.

/// Why a well-formed ELF file is not one this reader handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElfUnsupported {
    /// `EI_CLASS` is neither 1 nor 2.
    Class(u8),
    /// The file is big-endian (`ELFDATA2MSB`).
    BigEndian,
    /// `EI_DATA` is neither 1 nor 2.
    Encoding(u8),
    /// `e_shentsize` is not the class's section header size.
    SectionHeaderSize(u16),
    /// `e_phentsize` is not the class's program header size.
    ProgramHeaderSize(u16),
    /// A symbol table's `sh_entsize` is not the class's symbol size.
    SymbolSize(u64),
    /// A section alignment above 1 MiB, which a rewrite does not honour.
    Alignment(u64),
    /// More than one `SHT_SYMTAB` section, which llvm-objcopy refuses to
    /// rewrite.
    MultipleSymbolTables,
    /// A relocation section's `sh_entsize` is not its type's entry size,
    /// which llvm-objcopy refuses.
    RelocationSize(u64),
    /// The section-name table or a symbol table's string table (this
    /// section) is not a non-allocated `SHT_STRTAB`, which llvm-objcopy
    /// refuses to rewrite: it rebuilds both tables, and an allocated one is
    /// part of the memory image.
    NotAStringTable(u32),
    /// The symbol table a group or a relocation section names (this
    /// section) is not the kind it must be (`SHT_SYMTAB`; `SHT_DYNSYM` for
    /// an allocated relocation section), which llvm-objcopy refuses.
    NotASymbolTable(u32),
}

impl core::fmt::Display for ElfUnsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ElfUnsupported::Class(c) => write!(f, "ELF class {c}"),
            ElfUnsupported::BigEndian => f.write_str("big-endian ELF"),
            ElfUnsupported::Encoding(e) => write!(f, "ELF data encoding {e}"),
            ElfUnsupported::SectionHeaderSize(n) => write!(f, "section header size {n}"),
            ElfUnsupported::ProgramHeaderSize(n) => write!(f, "program header size {n}"),
            ElfUnsupported::SymbolSize(n) => write!(f, "symbol size {n}"),
            ElfUnsupported::Alignment(n) => write!(f, "section alignment {n:#x} (over 1 MiB)"),
            ElfUnsupported::MultipleSymbolTables => {
                f.write_str("more than one SHT_SYMTAB section (llvm-objcopy refuses it too)")
            }
            ElfUnsupported::RelocationSize(n) => {
                write!(f, "relocation entry size {n} (llvm-objcopy refuses it too)")
            }
            ElfUnsupported::NotAStringTable(n) => write!(
                f,
                "section {n} serves as a string table but is not a non-allocated SHT_STRTAB \
                 (llvm-objcopy refuses it too)"
            ),
            ElfUnsupported::NotASymbolTable(n) => write!(
                f,
                "section {n} serves as a symbol table but is not of the kind the \
                 section naming it needs (llvm-objcopy refuses it too)"
            ),
        }
    }
}

/// Why a well-formed COFF file is not one this crate handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CoffUnsupported {
    /// A big object (`-mbig-obj`: more than 65279 sections).
    BigObject,
    /// An optional header that is neither PE32 nor PE32+.
    OptionalHeaderMagic(u16),
    /// A PE image where an object is to be rewritten (llvm-objcopy rewrites
    /// images too; this crate writes objects only).
    ImageRewrite,
    /// A `.file` symbol whose name ends in zero-filled auxiliary records,
    /// which llvm-objcopy shortens (renumbering every later symbol).
    FileSymbolPadding,
}

impl core::fmt::Display for CoffUnsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            CoffUnsupported::BigObject => f.write_str("COFF big object"),
            CoffUnsupported::OptionalHeaderMagic(m) => {
                write!(f, "optional header magic {m:#x} (neither PE32 nor PE32+)")
            }
            CoffUnsupported::ImageRewrite => f.write_str("rewriting a PE image"),
            CoffUnsupported::FileSymbolPadding => {
                f.write_str(".file symbol with empty auxiliary records")
            }
        }
    }
}
