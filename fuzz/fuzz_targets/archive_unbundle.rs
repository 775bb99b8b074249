//! The core of `clang-offload-bundler -type=a -unbundle` on arbitrary bytes:
//! parse an archive, read each member as a bundle (plain, compressed or
//! object), name each entry's output member, write the entries as an archive
//! and read it back.
//!
//! For each member: one starting with the bundle magic is `Bundle::parse`d;
//! one starting with `CCOB` is `CompressedBundle::parse`d and decompressed
//! under a 1 MiB limit (hash verified, as by default), the output
//! `Bundle::parse`d; an ELF one is an `ObjectBundle`, whose host-marker entry
//! with a `host-` ID stands for `host_object()`. Within a bundle a repeated ID
//! means its last entry (as in LLVM and the CLI). Each entry whose ID is UTF-8
//! becomes the member `device_member_name(member name, ID)`.
//!
//! Invariants checked:
//! - no panic; the member walk and every entry walk terminate;
//! - member names and data, entry IDs and payloads lie inside the input
//!   (inside the decompressed buffer for a compressed member); a compressed
//!   member's container lies inside the member; a decompression gives exactly
//!   the declared size, at most the limit;
//! - output member names are non-empty and hold no `:`;
//! - no unbounded allocation: decompression is bounded by the limit and the
//!   entries' copies by a budget (32 MiB, past which the round trip is
//!   skipped: overlapping entries can legitimately describe far more output
//!   than input);
//! - `write_archive` of the (name, payload) pairs fails exactly when a name
//!   holds `\n`; otherwise it parses back to the same names and data, in
//!   order, with no error.
#![no_main]

use clangoffload::archive::{device_member_name, write_archive, Archive, NewMember};
use clangoffload::bundle::BUNDLE_MAGIC;
use clangoffload::compressed::COMPRESSED_MAGIC;
use clangoffload::elf::ElfFile;
use clangoffload::object_bundle::ObjectBundle;
use clangoffload::{Bundle, CompressedBundle, DecompressOptions, Limits};
use libfuzzer_sys::fuzz_target;

const LIMIT: u64 = 1 << 20;
/// Largest total of copied IDs and payloads the target keeps.
const BUDGET: usize = 32 << 20;

fn within(data: &[u8], part: &[u8]) -> std::ops::Range<usize> {
    let base = data.as_ptr() as usize;
    let start = part.as_ptr() as usize;
    assert!(
        part.is_empty() || (start >= base && start + part.len() <= base + data.len()),
        "slice outside its buffer"
    );
    start.wrapping_sub(base)..start.wrapping_sub(base) + part.len()
}

/// Copies of (ID, payload) pairs, within a byte budget.
struct Collected {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    used: usize,
    over: bool,
}

impl Collected {
    fn push(&mut self, id: &[u8], payload: &[u8]) {
        let need = id.len() + payload.len();
        if self.over || self.used + need > BUDGET {
            self.over = true;
            return;
        }
        self.used += need;
        self.pairs.push((id.to_vec(), payload.to_vec()));
    }
}

/// The entries of a binary bundle in `buf`, the last of each ID.
fn bundle_entries(buf: &[u8], out: &mut Collected) {
    let Ok(bundle) = Bundle::parse(buf) else {
        return;
    };
    let mut entries = Vec::new();
    for entry in bundle.entries().take(buf.len() + 1) {
        match entry {
            Ok(e) => {
                within(buf, e.id());
                let range = within(buf, e.payload());
                assert_eq!(e.payload().len() as u64, e.size());
                if e.size() != 0 {
                    assert_eq!(range.start as u64, e.offset());
                }
                entries.push(e);
            }
            Err(err) => {
                let _ = err.to_string();
                break;
            }
        }
    }
    assert!(entries.len() <= buf.len());
    for (i, e) in entries.iter().enumerate() {
        if entries[i + 1..].iter().all(|later| later.id() != e.id()) {
            out.push(e.id(), e.payload());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(archive) = Archive::parse(data) else {
        return;
    };
    let options = DecompressOptions {
        limits: Limits {
            max_uncompressed_size: LIMIT,
        },
        ..DecompressOptions::default()
    };
    let mut outputs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut used = 0usize;
    let mut over = false;
    let limit = data.len() / 60 + 1;
    let mut walked = 0;
    for item in archive.members().take(limit + 1) {
        walked += 1;
        assert!(walked <= limit, "member walk yields too many items");
        let member = match item {
            Ok(m) => m,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        };
        within(data, member.name());
        let d = member.data();
        within(data, d);
        let mut entries = Collected {
            pairs: Vec::new(),
            used,
            over,
        };
        if d.starts_with(&BUNDLE_MAGIC[..]) {
            bundle_entries(d, &mut entries);
        } else if d.starts_with(&COMPRESSED_MAGIC[..]) {
            if let Ok(c) = CompressedBundle::parse(d) {
                within(d, c.data());
                within(d, c.compressed());
                match c.decompress(&options) {
                    Ok(bytes) => {
                        assert_eq!(bytes.len() as u64, c.uncompressed_size());
                        assert!(c.uncompressed_size() <= LIMIT);
                        bundle_entries(&bytes, &mut entries);
                    }
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            }
        } else if ElfFile::is_elf(d) {
            if let Ok(object) = ObjectBundle::parse(d) {
                let mut host: Option<Option<Vec<u8>>> = None;
                // As in `elf_object_bundle`: a huge `sh_addralign` makes a
                // huge host object; those are not rewritten.
                let huge_align = object
                    .elf()
                    .sections()
                    .flatten()
                    .any(|s| s.header().addralign > 1 << 20);
                for entry in object.entries() {
                    let Ok(entry) = entry else { continue };
                    within(d, entry.id());
                    within(d, entry.payload());
                    if entry.is_host_marker() && entry.id().starts_with(b"host-") {
                        let host = host.get_or_insert_with(|| {
                            (!huge_align).then(|| object.host_object().ok()).flatten()
                        });
                        // The CLI fails the whole command when the host
                        // object cannot be written; here the entry is left out.
                        if let Some(h) = host {
                            entries.push(entry.id(), h);
                        }
                    } else {
                        entries.push(entry.id(), entry.payload());
                    }
                }
            }
        }
        used = entries.used;
        over = entries.over;
        for (id, payload) in entries.pairs {
            let Ok(id) = std::str::from_utf8(&id) else {
                continue;
            };
            let name = device_member_name(member.name(), id);
            assert!(!name.is_empty());
            assert!(!name.contains(&b':'));
            outputs.push((name, payload));
        }
    }
    if over {
        return;
    }

    let new: Vec<NewMember<'_>> = outputs
        .iter()
        .map(|(name, payload)| NewMember {
            name,
            data: payload,
            symbols: None,
        })
        .collect();
    let bad_name = outputs.iter().any(|(name, _)| name.contains(&b'\n'));
    let bytes = match write_archive(&new) {
        Ok(bytes) => {
            assert!(!bad_name, "write_archive took a name with a newline");
            bytes
        }
        Err(e) => {
            assert!(bad_name, "write_archive failed: {e}");
            return;
        }
    };
    let again = Archive::parse(&bytes).expect("written archive parses");
    let back: Vec<_> = again
        .members()
        .map(|m| m.expect("written member reads back"))
        .collect();
    assert_eq!(back.len(), outputs.len());
    for (m, (name, payload)) in back.iter().zip(&outputs) {
        assert_eq!(m.name(), &name[..], "member name");
        assert!(m.data() == &payload[..], "member data");
    }
});
