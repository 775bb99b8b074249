//! Locating offload sections, wrapper records and code-object targets in
//! arbitrary bytes read as an ELF file.
//!
//! Invariants checked:
//! - no panic in `ElfFile::parse`, `offload_sections`, `wrappers`,
//!   `wrapper_target`, `wrapper_targets`, `locate_address`, `AmdgpuTarget::from_header`, or the
//!   container walk over each section that holds containers;
//! - every section's contents, and every wrapper target, lie inside the file;
//! - a target ID, when one is derived, parses as a target ID.

use clangoffload::container::Containers;
use clangoffload::elf::{AmdgpuTarget, ElfFile};
use clangoffload::locate::{
    locate_address, offload_sections, wrapper_target, wrapper_targets, wrappers, SectionKind,
};
use clangoffload::object::ObjectFile;
use clangoffload::TargetId;

fn inside(data: &[u8], part: &[u8]) {
    let (base, at) = (data.as_ptr() as usize, part.as_ptr() as usize);
    assert!(part.is_empty() || (at >= base && at + part.len() <= base + data.len()));
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let Ok(elf) = ElfFile::parse(data) else {
        return;
    };
    if let Some(target) = AmdgpuTarget::from_header(elf.header()) {
        let text = target.to_string();
        assert!(TargetId::parse(&text).is_ok(), "{text}");
    }
    locate(data, &elf.into());
}

/// The locating checks on an ELF or COFF file (shared with `coff_locate`).
pub fn locate(data: &[u8], object: &ObjectFile<'_>) {
    for section in offload_sections(object).take(64) {
        let Ok(section) = section else { continue };
        inside(data, section.section.data());
        if section.kind.holds_containers() {
            for (_, container) in Containers::new(section.section.data()).take(64).flatten() {
                inside(data, container.data());
            }
        }
        if matches!(
            section.kind,
            SectionKind::HipWrappers | SectionKind::CudaWrappers
        ) {
            for (_, target) in wrapper_targets(object, &section.section).iter().take(64) {
                if let Some((target, offset)) = target {
                    inside(data, target.data());
                    assert!(*offset < target.data().len() as u64);
                }
            }
            for record in wrappers(section.section.data(), object.class()).take(64) {
                if let Some((target, offset)) = wrapper_target(object, &section.section, &record) {
                    inside(data, target.data());
                    assert!(offset < target.data().len() as u64);
                }
                if let Some((target, offset)) = locate_address(object, record.binary) {
                    inside(data, target.data());
                    assert!(offset < target.data().len() as u64);
                }
            }
        }
    }
}
