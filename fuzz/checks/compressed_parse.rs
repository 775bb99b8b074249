//! Compressed-bundle headers from arbitrary bytes.
//!
//! Invariants checked:
//! - `CompressedBundle::parse` agrees with a model of the header written from
//!   the format's layout: same fields on success; on failure the same
//!   `ErrorKind` and offset (bad magic, truncated magic/version/field — the
//!   first field the input ends in —, unknown version, total size below the
//!   header or past the input), and the offset is ≤ the input length;
//! - on success the container is a prefix of the input (all of it for
//!   version 1, the total size for 2 and 3), `compressed()` is the suffix of
//!   `data()` after the header, `header_len` is 20/24/32 for version 1/2/3;
//! - `stream_len` never panics; `Ok(n)` has `header_len ≤ n ≤ data().len()`;
//!   errors lie inside the container; an unknown method is `UnknownMethod`;
//! - zstd: `stream_len` agrees with libzstd's `ZSTD_findFrameCompressedSize`
//!   except where the core is documented to be stricter (dictionary IDs,
//!   skippable frames, blocks over min(window, 128 KiB)) or libzstd is (window exponent
//!   over 31, which the core leaves to `check`);
//! - version 1 cut at its `stream_len` parses again to the same length (the
//!   end of a stream does not depend on the bytes after it);
//! - `check` never panics, returns the declared size or an error inside the
//!   container, and for zstd passes only if the frame ends at the container's end.

use clangoffload::compressed::StreamFault;
use clangoffload::{CompressedBundle, CompressionMethod, Error, ErrorKind, Field, Limits};

const LIMITS: Limits = Limits {
    max_uncompressed_size: 1 << 20,
};

fn le(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |n, &b| (n << 8) | u64::from(b))
}

/// The header as the format describes it.
#[derive(Debug)]
struct Model {
    version: u16,
    method: u16,
    header_len: u64,
    total: Option<u64>,
    uncompressed: u64,
    hash: u64,
    /// Where the container ends.
    end: usize,
}

fn truncated(field: Field, at: usize, needed: u64, len: usize) -> (ErrorKind, u64) {
    let available = (len - at) as u64;
    (
        ErrorKind::Truncated {
            field,
            needed,
            available,
        },
        at as u64,
    )
}

fn model(data: &[u8]) -> Result<Model, (ErrorKind, u64)> {
    let len = data.len();
    if !data.starts_with(b"CCOB") {
        if !data.is_empty() && b"CCOB".starts_with(data) {
            return Err(truncated(Field::CompressedMagic, 0, 4, len));
        }
        return Err((ErrorKind::BadMagic, 0));
    }
    if len < 6 {
        return Err(truncated(Field::Version, 4, 2, len));
    }
    let version = le(&data[4..6]) as u16;
    // (offset, field, size) after the magic and version.
    let fields: &[(usize, Field, u64)] = match version {
        1 => &[
            (6, Field::Method, 2),
            (8, Field::UncompressedSize, 4),
            (12, Field::Hash, 8),
        ],
        2 => &[
            (6, Field::Method, 2),
            (8, Field::TotalSize, 4),
            (12, Field::UncompressedSize, 4),
            (16, Field::Hash, 8),
        ],
        3 => &[
            (6, Field::Method, 2),
            (8, Field::TotalSize, 8),
            (16, Field::UncompressedSize, 8),
            (24, Field::Hash, 8),
        ],
        version => return Err((ErrorKind::UnsupportedVersion { version }, 4)),
    };
    for &(at, field, size) in fields {
        if len < at + size as usize {
            return Err(truncated(field, at, size, len));
        }
    }
    let read = |want: Field| {
        let &(at, _, size) = fields.iter().find(|(_, f, _)| *f == want)?;
        Some(le(&data[at..at + size as usize]))
    };
    let &(hash_at, _, _) = fields.last().unwrap();
    let header_len = hash_at as u64 + 8;
    let total = read(Field::TotalSize);
    let end = match total {
        None => len,
        Some(total) if total < header_len => {
            return Err((ErrorKind::BadTotalSize { total, header_len }, 8));
        }
        Some(total) if total > len as u64 => {
            return Err((
                ErrorKind::Truncated {
                    field: Field::CompressedData,
                    needed: total - header_len,
                    available: len as u64 - header_len,
                },
                header_len,
            ));
        }
        Some(total) => total as usize,
    };
    Ok(Model {
        version,
        method: read(Field::Method).unwrap() as u16,
        header_len,
        total,
        uncompressed: read(Field::UncompressedSize).unwrap(),
        hash: read(Field::Hash).unwrap(),
        end,
    })
}

fn check_error(e: &Error, len: usize) {
    assert!(
        e.offset() <= len as u64,
        "error offset {} past the input ({len} bytes): {e:?}",
        e.offset()
    );
    assert_eq!(e.entry(), None);
    let _ = e.to_string();
}

/// The window a zstd frame header declares: its content size for a single
/// segment, else what the window descriptor says.
fn window_size(frame: &[u8]) -> u64 {
    let descriptor = frame.get(4).copied().unwrap_or(0);
    if descriptor & 0x20 != 0 {
        return match zstd_safe::get_frame_content_size(frame) {
            Ok(Some(n)) => n,
            _ => 0,
        };
    }
    let w = frame.get(5).copied().unwrap_or(0);
    let base = 1u64 << (10 + u32::from(w >> 3));
    base + base / 8 * u64::from(w & 7)
}

/// Where the core may disagree with `ZSTD_findFrameCompressedSize`, and why.
fn zstd_oracle(frame: &[u8], ours: &Result<u64, Error>, header_len: u64) {
    let theirs = zstd_safe::find_frame_compressed_size(frame);
    let descriptor = frame.get(4).copied().unwrap_or(0);
    let skippable = frame.len() >= 4 && frame[1..4] == [0x2a, 0x4d, 0x18] && frame[0] >> 4 == 5;
    match (ours, theirs) {
        (Ok(n), Ok(m)) => assert_eq!(
            n - header_len,
            m as u64,
            "frame length differs from libzstd's"
        ),
        (Err(_), Err(_)) => {}
        (Ok(n), Err(code)) => {
            // libzstd refuses a window exponent over 31 in the frame header;
            // the core reads the header and leaves windows to `check`.
            let single_segment = descriptor & 0x20 != 0;
            let window = frame.get(5).copied().unwrap_or(0);
            assert!(
                !single_segment && (window >> 3) + 10 > 31,
                "core finds a {n}-byte stream, libzstd says {}",
                zstd_safe::get_error_name(code)
            );
        }
        (Err(e), Ok(m)) => {
            let ErrorKind::CorruptStream { fault, .. } = e.kind() else {
                panic!("unexpected {e:?}")
            };
            let at = (e.offset() - header_len) as usize;
            let why = match fault {
                // Skippable frame, or a dictionary ID.
                StreamFault::Unsupported => skippable || descriptor & 3 != 0,
                // The block header at the error offset is either over
                // min(window, 128 KiB) (libzstd lets raw and RLE ones
                // through), or an empty compressed block: libzstd's one-shot
                // decoder, LLVM's, refuses that, but measuring a frame reads
                // only block headers (finding empty-compressed-block).
                StreamFault::Malformed => frame.get(at..at + 3).is_some_and(|b| {
                    let block = le(b);
                    let empty_compressed = block == 2 << 1 || block == (2 << 1 | 1);
                    empty_compressed || block >> 3 > window_size(frame).min(128 * 1024)
                }),
                _ => false,
            };
            assert!(why, "core refuses ({e}) a {m}-byte frame libzstd accepts");
        }
    }
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    assert_eq!(
        CompressedBundle::is_compressed(data),
        data.starts_with(b"CCOB")
    );
    let parsed = CompressedBundle::parse(data);
    let model = model(data);
    let b = match (parsed, model) {
        (Ok(b), Ok(m)) => {
            assert_eq!(b.version(), m.version);
            assert_eq!(b.method(), CompressionMethod::from_raw(m.method));
            assert_eq!(b.method().raw(), m.method);
            assert_eq!(b.header_len(), m.header_len);
            assert_eq!(b.total_size(), m.total);
            assert_eq!(b.uncompressed_size(), m.uncompressed);
            assert_eq!(b.hash(), m.hash);
            assert_eq!(b.data().len(), m.end);
            b
        }
        (Err(e), Err((kind, offset))) => {
            assert_eq!((e.kind(), e.offset()), (kind, offset), "error differs");
            check_error(&e, data.len());
            return;
        }
        (Ok(b), Err(e)) => panic!("parsed {b:?}, model says {e:?}"),
        (Err(e), Ok(m)) => panic!("parse failed ({e:?}), model says {m:?}"),
    };

    // The container and its compressed bytes.
    let container = b.data();
    assert!(std::ptr::eq(container.as_ptr(), data.as_ptr()));
    assert!(container.len() <= data.len());
    assert_eq!(
        b.header_len(),
        match b.version() {
            1 => 20,
            2 => 24,
            3 => 32,
            v => panic!("version {v}"),
        }
    );
    match b.total_size() {
        Some(total) => assert_eq!(total, container.len() as u64),
        None => assert_eq!(container.len(), data.len()),
    }
    let compressed = b.compressed();
    assert_eq!(
        compressed,
        &container[b.header_len() as usize..],
        "compressed() is not the suffix after the header"
    );
    assert!(std::ptr::eq(
        compressed.as_ptr_range().end,
        container.as_ptr_range().end
    ));
    let _ = b.ratio();

    // Where the stream ends.
    let stream_len = b.stream_len();
    match &stream_len {
        Ok(n) => {
            assert!(
                b.header_len() <= *n && *n <= container.len() as u64,
                "stream_len {n} outside [{}, {}]",
                b.header_len(),
                container.len()
            );
        }
        Err(e) => {
            check_error(e, container.len());
            if let CompressionMethod::Unknown(method) = b.method() {
                assert_eq!(e.kind(), ErrorKind::UnknownMethod { method });
            } else {
                assert!(
                    matches!(e.kind(), ErrorKind::CorruptStream { method, .. } if method == b.method()),
                    "{e:?}"
                );
                assert!(e.offset() >= b.header_len());
            }
        }
    }
    if b.method() == CompressionMethod::Zstd {
        zstd_oracle(compressed, &stream_len, b.header_len());
    }
    if let (1, Ok(n)) = (b.version(), &stream_len) {
        let cut = CompressedBundle::parse(&data[..*n as usize]).expect("v1 cut at its stream");
        assert_eq!(cut.stream_len().as_ref(), Ok(n), "v1 stream end moved");
    }

    // Checks that need no decoding.
    match b.check(&LIMITS) {
        Ok(size) => {
            assert_eq!(size as u64, b.uncompressed_size());
            assert!(size as u64 <= LIMITS.max_uncompressed_size);
            if b.method() == CompressionMethod::Zstd {
                assert_eq!(
                    stream_len,
                    Ok(container.len() as u64),
                    "check passed a zstd frame that does not fill its container"
                );
            } else {
                assert_eq!(b.method(), CompressionMethod::Zlib);
            }
        }
        Err(e) => check_error(&e, container.len()),
    }
}
