//! Walking arbitrary bytes as containers laid back to back (`Containers`).
//!
//! Invariants checked:
//! - the walk terminates: at most `len + 1` items, and none after an error
//!   (the iterator stays ended);
//! - offsets strictly increase; each container's bytes lie inside the input
//!   at its offset, are not empty, and do not overlap the previous one; the
//!   bytes skipped between containers (and after the last one, when the walk
//!   ends without an error) are all zero; each container starts at the first
//!   non-zero byte after the previous one;
//! - an error is reported at or after the first non-zero byte past the last
//!   container, and at most 24 bytes past the input (a bundle entry error
//!   names its descriptor field, which can lie past a short input, as in
//!   `bundle_parse`); bytes that start no container give `UnknownContainer`
//!   at that byte;
//! - each container is what parsing at its offset gives: a compressed bundle
//!   is the one `CompressedBundle::parse` reads there (for version 1 cut at
//!   its `stream_len`); a bundle parses strictly from its own bytes, which
//!   end at its extent; an OffloadBinary is the one `OffloadBinary::parse`
//!   reads there, its images inside its size.

use clangoffload::{Bundle, CompressedBundle, Container, Containers, ErrorKind, OffloadBinary};

fn check_container(data: &[u8], offset: usize, container: &Container<'_>) {
    let bytes = container.data();
    let base = data.as_ptr() as usize;
    assert_eq!(
        bytes.as_ptr() as usize,
        base + offset,
        "container not at its offset"
    );
    assert!(
        offset + bytes.len() <= data.len(),
        "container past the input"
    );
    assert!(!bytes.is_empty(), "empty container");
    let rest = &data[offset..];
    match container {
        Container::Compressed(c) => {
            let again = CompressedBundle::parse(rest).expect("compressed bundle parses again");
            assert_eq!(
                (c.version(), c.method(), c.header_len()),
                (again.version(), again.method(), again.header_len())
            );
            assert_eq!(
                (c.total_size(), c.uncompressed_size(), c.hash()),
                (again.total_size(), again.uncompressed_size(), again.hash())
            );
            match c.total_size() {
                Some(total) => {
                    assert_eq!(bytes.len() as u64, total);
                    assert_eq!(bytes, again.data());
                }
                None => {
                    let n = again.stream_len().expect("v1 stream_len");
                    assert_eq!(
                        bytes.len() as u64,
                        n,
                        "v1 cut elsewhere than its stream end"
                    );
                    assert_eq!(c.stream_len(), Ok(n));
                }
            }
        }
        Container::OffloadBinary(b) => {
            let again = OffloadBinary::parse(rest).expect("binary parses again");
            assert_eq!(again.data(), bytes);
            assert_eq!(b.size(), bytes.len() as u64);
            for e in b.entries() {
                assert!(e.image_offset() + e.image().len() as u64 <= b.size());
                for s in e.strings() {
                    let _ = (s.key, s.value);
                }
            }
        }
        Container::Bundle(b) => {
            assert!(Bundle::is_bundle(rest));
            let again = Bundle::parse(bytes).expect("bundle parses from its own bytes");
            assert_eq!(again.entry_count(), b.entry_count());
            assert_eq!(
                b.extent(),
                bytes.len(),
                "bundle cut elsewhere than its extent"
            );
            for e in b.entries() {
                let e = e.expect("entry of a walked bundle");
                let end = (e.offset() + e.size()) as usize;
                assert!(end <= bytes.len());
            }
        }
    }
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let len = data.len();
    let mut walk = Containers::new(data);
    // Where the previous container ended.
    let mut end = 0usize;
    let mut last_offset: Option<u64> = None;
    let mut items = 0usize;
    let mut failed = false;
    for item in walk.by_ref().take(len + 2) {
        items += 1;
        assert!(items <= len + 1, "walk yields more than len + 1 items");
        assert!(!failed, "item after an error");
        // The walker skips zeros only.
        let next = data[end..]
            .iter()
            .position(|&b| b != 0)
            .map(|p| end + p)
            .expect("an item where only zeros are left");
        match item {
            Ok((offset, container)) => {
                if let Some(last) = last_offset {
                    assert!(offset > last, "offsets not increasing");
                }
                last_offset = Some(offset);
                assert_eq!(
                    offset as usize, next,
                    "container not at the next non-zero byte"
                );
                check_container(data, next, &container);
                end = next + container.data().len();
            }
            Err(e) => {
                failed = true;
                assert!(
                    e.offset() >= next as u64,
                    "error {e:?} before its container at {next}"
                );
                assert!(
                    e.offset() <= len as u64 + 24,
                    "error {e:?} past the input ({len} bytes)"
                );
                let rest = &data[next..];
                let starts = CompressedBundle::is_compressed(rest)
                    || Bundle::is_bundle(rest)
                    || OffloadBinary::is_offload_binary(rest);
                if !starts {
                    assert_eq!(e.kind(), ErrorKind::UnknownContainer);
                    assert_eq!(e.offset(), next as u64);
                }
                let _ = e.to_string();
            }
        }
    }
    assert!(walk.next().is_none(), "walk does not end");
    assert!(walk.next().is_none(), "walk restarts");
    if !failed {
        assert!(
            data[end..].iter().all(|&b| b == 0),
            "walk ended before non-zero bytes at {end}"
        );
    }
}
