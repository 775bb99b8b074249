//! `cuda_fatbin`: NVIDIA fat binaries in any bytes, as `clangoffload list`,
//! `inspect` and `extract` read them (`host_fatbins`: raw fat binaries back
//! to back, ELF/COFF hosts, OffloadBinary images). No panic; every fat
//! binary, entry header, payload, identifier and options view lies inside
//! the input; entries follow one another without gap to the fat size;
//! every entry decodes (under 1 MiB) to exactly its declared size or fails
//! with an error located inside the input and naming that entry; an
//! image is a prefix of the decoded bytes; concat members lie in the decoded
//! bytes; selection returns a candidate that runs by the documented rule;
//! pruning with everything kept changes nothing, with nothing kept leaves
//! no ELF or PTX, and a pruned fat binary parses.

use clangoffload::cuda_fatbin::select::{runs_on, select_for_device};
use clangoffload::cuda_fatbin::{prune, EntryKind, Fatbin, FatbinEntry};
use clangoffload::cuda_host::host_fatbins;
use clangoffload::{DecompressOptions, Limits};

use super::within::within;

fn options() -> DecompressOptions {
    DecompressOptions {
        limits: Limits {
            max_uncompressed_size: 1 << 20,
        },
        ..DecompressOptions::default()
    }
}

pub fn check(data: &[u8]) {
    for found in host_fatbins(data) {
        let Ok(fatbin) = found.fatbin else {
            let e = found.fatbin.unwrap_err();
            assert!(e.offset() <= data.len() as u64 + 64, "{e}");
            continue;
        };
        within(data, fatbin.data());
        check_fatbin(&fatbin);
    }
}

fn check_fatbin(fatbin: &Fatbin<'_>) {
    let bytes = fatbin.data();
    let mut next = 16usize;
    for entry in fatbin.entries() {
        let header = within(bytes, entry.header_bytes());
        assert_eq!(header.start, next);
        assert_eq!(header.start as u64, entry.offset());
        let payload = within(bytes, entry.payload());
        assert_eq!(payload.start, header.end);
        next = payload.end;
        if let Some(identifier) = entry.identifier() {
            within(entry.header_bytes(), identifier);
        }
        if let Some(options) = entry.options() {
            within(entry.header_bytes(), options);
        }
        check_decoding(bytes, &entry);
    }
    assert_eq!(next, bytes.len(), "entries end at the fat size");
    for device in [70, 75, 80, 86, 90, 100, 103, 120, 121] {
        if let Some(c) = select_for_device(fatbin, device) {
            assert!(runs_on(c.kind, c.sm, device));
        }
    }
    let options = options();
    if let Ok(kept) = prune(fatbin, &|_, _| true, &options) {
        assert!(kept.is_none(), "keeping everything changes nothing");
    }
    if let Ok(Some(pruned)) = prune(fatbin, &|_, _| false, &options) {
        let pruned = Fatbin::parse(&pruned).expect("a pruned fat binary parses");
        assert!(pruned
            .entries()
            .all(|e| !matches!(e.kind(), EntryKind::Elf | EntryKind::Ptx)
                && e.members().count() == 0
                || e.kind() == EntryKind::Concat));
    }
}

fn check_decoding(bytes: &[u8], entry: &FatbinEntry<'_>) {
    match entry.decompress(&options()) {
        Ok(decoded) => {
            assert_eq!(decoded.len() as u64, entry.decoded_len());
            if let Ok(image) = entry.image(&decoded) {
                assert!(decoded.starts_with(image));
            }
            for member in entry.members() {
                assert!(
                    member.data(&decoded).is_some(),
                    "members lie in the decoded bytes"
                );
                let _ = entry.member_image(&member, &decoded);
            }
            // Into a buffer one byte short: refused, nothing decoded past it.
            if !decoded.is_empty() && entry.compressed() != entry.payload() {
                let mut short = vec![0u8; decoded.len() - 1];
                assert!(entry.decompress_into(&mut short, &options()).is_err());
            }
        }
        Err(e) => {
            assert_eq!(e.entry(), Some(entry.index()), "{e}");
            assert!(e.offset() <= bytes.len() as u64, "{e}");
        }
    }
}
