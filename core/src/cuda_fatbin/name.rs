//! The names NVIDIA's tools give code: `sm_90a` for a cubin, `compute_90a`
//! for PTX, `lto_90a` for LTO IR (`nvcc -gencode arch=compute_90a,code=sm_90a`,
//! `nvprune -arch`, `cuobjdump`, `fatbinary --image3`), read and written
//! here once for every caller.

use core::fmt;

use super::{EntryKind, Sm, SmVariant};

/// Code of a kind for an SM, as its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeName {
    /// `Elf` (`sm_`), `Ptx` (`compute_`) or `LtoIr` (`lto_`).
    pub kind: EntryKind,
    /// The SM and its variant.
    pub sm: Sm,
}

impl CodeName {
    /// `sm_XX`, `compute_XX` or `lto_XX`, each with an optional `a` or `f`
    /// suffix; `None` for anything else (a bare number names no kind).
    pub fn parse(text: &str) -> Option<Self> {
        let (kind, rest) = [
            ("sm_", EntryKind::Elf),
            ("compute_", EntryKind::Ptx),
            ("lto_", EntryKind::LtoIr),
        ]
        .into_iter()
        .find_map(|(prefix, kind)| Some((kind, text.strip_prefix(prefix)?)))?;
        let sm = Sm::parse(rest)?;
        Some(CodeName { kind, sm })
    }

    /// The prefix of a kind's names: `compute_` for PTX, `lto_` for LTO
    /// IR, `sm_` for every other kind (a cubin's, and what NVIDIA's tools
    /// show for the rest).
    pub fn prefix(kind: EntryKind) -> &'static str {
        match kind {
            EntryKind::Ptx => "compute_",
            EntryKind::LtoIr => "lto_",
            _ => "sm_",
        }
    }
}

impl fmt::Display for CodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.sm.variant {
            SmVariant::Plain => "",
            SmVariant::Family => "f",
            SmVariant::Arch => "a",
        };
        write!(f, "{}{}{suffix}", Self::prefix(self.kind), self.sm.number)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn names_read_and_write_back() {
        for (text, kind, number, variant) in [
            ("sm_90a", EntryKind::Elf, 90, SmVariant::Arch),
            ("compute_100f", EntryKind::Ptx, 100, SmVariant::Family),
            ("lto_80", EntryKind::LtoIr, 80, SmVariant::Plain),
        ] {
            let name = CodeName::parse(text).unwrap();
            assert_eq!(
                (name.kind, name.sm.number, name.sm.variant),
                (kind, number, variant)
            );
            assert_eq!(name.to_string(), text);
        }
        for bad in ["86", "sm_", "compute_x", "ptx_80", "sm_90b", "SM_90"] {
            assert_eq!(CodeName::parse(bad), None, "{bad}");
        }
    }
}
