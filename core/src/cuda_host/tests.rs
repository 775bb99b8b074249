//! Fat binaries found in hosts (ELF, COFF, archives) that `fatbinary` 13.5
//! and clang made (tests/fixtures/cuda/regenerate.sh), and pruned in place.

extern crate std;
use std::prelude::rust_2021::*;

use super::*;
use crate::cuda_fatbin::{EntryKind, Sm};
use crate::{DecompressOptions, ErrorKind};

const STORED: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-stored.fatbin");
const LZ4: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-lz4.fatbin");
const THREE: &[u8] = include_bytes!("../../../tests/fixtures/cuda/raw-three-concatenated.fatbin");

#[test]
fn a_section_that_starts_no_fat_binary_holds_none() {
    // clang's old-driver object fed PTX in place of a fat binary.
    let object = include_bytes!("../../../tests/fixtures/offload/cuda.o");
    assert!(host_fatbins(object).is_empty());
    // A fat binary followed by other bytes is damage.
    let mut data = STORED.to_vec();
    data.extend_from_slice(b"junk");
    let found = host_fatbins(&data);
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].fatbin.unwrap_err().kind(), ErrorKind::NotFatbin);
}

#[test]
fn coff_objects_hold_fat_binaries_in_the_same_sections() {
    use crate::coff::CoffFile;
    use crate::coff::{rewrite_sections, NewSection};
    let stubs = include_bytes!("../../../tests/fixtures/coff/stubs.obj");
    let file = CoffFile::parse(stubs).unwrap();
    // Initialized, readable data, as a Windows host's .nv_fatbin is.
    let data = 0x4000_0040;
    let object = rewrite_sections(
        &file,
        |_| true,
        &[
            NewSection {
                name: b"__nv_relfatbin",
                characteristics: data,
                data: LZ4,
            },
            NewSection {
                name: b".nv_fatbin",
                characteristics: data,
                data: THREE,
            },
        ],
    )
    .unwrap();
    let found = host_fatbins(&object);
    let names: Vec<_> = found
        .iter()
        .map(|f| match f.source {
            FatbinSource::Section(name) => name,
            _ => b"?",
        })
        .collect();
    // .nv_fatbin's three first, whatever the section order, then __nv_relfatbin.
    assert_eq!(
        names,
        [
            &b".nv_fatbin"[..],
            b".nv_fatbin",
            b".nv_fatbin",
            b"__nv_relfatbin"
        ]
    );
    assert!(found.iter().all(|f| f.fatbin.is_ok()));
}

#[test]
fn archive_members_are_read_one_after_the_other() {
    use crate::archive::{write_archive, NewMember};
    let member = |name: &'static [u8], data: &'static [u8]| NewMember {
        name,
        data,
        symbols: None,
    };
    // A damaged ELF member between two good ones (its section name table
    // index names no section): its error is located in the archive, and the
    // member after it is still read.
    let mut damaged = include_bytes!("../../../tests/fixtures/cuda/clang-sm80.o").to_vec();
    damaged[62..64].copy_from_slice(&254u16.to_le_bytes());
    let damaged: &'static [u8] = damaged.leak();
    let archive = write_archive(&[
        member(b"three.fatbin", THREE),
        member(b"bad.o", damaged),
        member(b"lz4.fatbin", LZ4),
        member(b"notes.txt", b"no device code here\n"),
    ])
    .unwrap();
    let found = host_fatbins(&archive);
    let members: Vec<_> = found.iter().map(|f| f.member.unwrap()).collect();
    assert_eq!(
        members,
        [
            &b"three.fatbin"[..],
            b"three.fatbin",
            b"three.fatbin",
            b"bad.o",
            b"lz4.fatbin"
        ]
    );
    let three_at = find(&archive, THREE);
    for (f, at) in found.iter().zip([0, 1, 2]) {
        let fatbin = f.fatbin.as_ref().unwrap();
        assert_eq!(
            &archive[usize::try_from(f.offset).unwrap()..][..fatbin.data().len()],
            fatbin.data()
        );
        assert!(f.offset >= three_at, "{at}");
    }
    let bad = found[3].fatbin.as_ref().unwrap_err();
    let bad_at = find(&archive, damaged);
    assert_eq!(bad.offset(), bad_at + 62, "{bad}");
    // At the member's data (THREE holds a copy of LZ4 too: no search).
    let lz4_member = crate::archive::Archive::parse(&archive)
        .unwrap()
        .members()
        .map(|m| m.unwrap())
        .find(|m| m.name() == b"lz4.fatbin")
        .unwrap();
    assert_eq!(found[4].offset, lz4_member.data_offset());
    assert_eq!(found[4].fatbin.as_ref().unwrap().data(), LZ4);
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> u64 {
    let at = hay.windows(needle.len()).position(|w| w == needle).unwrap();
    u64::try_from(at).unwrap()
}

#[test]
fn a_damaged_archive_reports_after_the_members_before_the_damage() {
    use crate::archive::{write_archive, NewMember};
    let archive = write_archive(&[
        NewMember {
            name: b"one.fatbin",
            data: STORED,
            symbols: None,
        },
        NewMember {
            name: b"two.fatbin",
            data: STORED,
            symbols: None,
        },
    ])
    .unwrap();
    // The second member's header cut short.
    let second = usize::try_from(find(&archive, b"two.fatbin")).unwrap();
    let cut = &archive[..second + 20];
    let found = host_fatbins(cut);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].member, Some(&b"one.fatbin"[..]));
    assert!(found[0].fatbin.is_ok());
    let error = found[1].fatbin.as_ref().unwrap_err();
    assert_eq!(found[1].member, None);
    assert!(
        error.offset() >= u64::try_from(second).unwrap() - 8,
        "{error}"
    );
}

#[test]
fn prune_file_in_place_prunes_host_sections() {
    let mut file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/cuda/clang-multi-ptx.o"
    ))
    .unwrap();
    let before = file.clone();
    let options = DecompressOptions::default();
    let keep = |kind: EntryKind, sm: Sm| kind == EntryKind::Elf && sm.number == 80;
    assert_eq!(prune_file_in_place(&mut file, &keep, &options).unwrap(), 1);
    assert_eq!(file.len(), before.len());
    let found = host_fatbins(&file);
    let fatbin = found[0].fatbin.unwrap();
    let kept: Vec<_> = fatbin
        .entries()
        .map(|e| (e.kind(), e.sm().number))
        .collect();
    assert_eq!(kept, [(EntryKind::Elf, 80)]);
    // Nothing outside the section moved.
    let (offset, size) = fatbin_sections(&file).unwrap()[0];
    let (start, end) = (offset as usize, (offset + size) as usize);
    assert_eq!(file[..start], before[..start]);
    assert_eq!(file[end..], before[end..]);
    // Pruning again changes nothing; a file with no fat binary neither.
    assert_eq!(prune_file_in_place(&mut file, &keep, &options).unwrap(), 0);
    let mut plain = b"not a fat binary".to_vec();
    assert_eq!(prune_file_in_place(&mut plain, &keep, &options).unwrap(), 0);
}
