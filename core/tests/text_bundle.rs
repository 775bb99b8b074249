//! Text bundles: LLVM 22's fixtures read and rewritten byte for byte, what LLVM
//! does with odd but readable files, one test per malformed class, and a
//! property-based round trip.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::PathBuf;

use clangoffload::text_bundle::{check_entry, write_text_bundle, Comment, Marker, TEXT_FILE_TYPES};
use clangoffload::{ErrorKind, TextBundle, TextEntry};
use proptest::prelude::*;

const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu-";
const DEV: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx906";
const START: &[u8] = b"\n// __CLANG_OFFLOAD_BUNDLE____START__ ";
const END: &[u8] = b"\n// __CLANG_OFFLOAD_BUNDLE____END__ ";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/text")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn entries<'d>(data: &'d [u8]) -> Vec<TextEntry<'d>> {
    TextBundle::parse(data, Comment::DoubleSlash)
        .unwrap_or_else(|e| panic!("{e}"))
        .entries()
        .map(Result::unwrap)
        .collect()
}

/// The strict error and the lenient walk: the good entries and the error.
fn rejected(data: &[u8]) -> (clangoffload::Error, Vec<TextEntry<'_>>) {
    let error = TextBundle::parse(data, Comment::DoubleSlash).expect_err("must be rejected");
    let mut walk = TextBundle::parse_lenient(data, Comment::DoubleSlash).entries();
    let mut good = Vec::new();
    for item in walk.by_ref() {
        match item {
            Ok(entry) => good.push(entry),
            Err(e) => {
                assert_eq!(e, error, "strict and lenient errors differ");
                assert!(walk.next().is_none(), "item after an error");
                assert!(walk.next().is_none(), "walk restarts");
                return (error, good);
            }
        }
    }
    panic!("lenient walk ended without the error {error}");
}

// ---------------------------------------------------------------------------
// LLVM 22's fixtures.

#[test]
fn text_types_and_comments() {
    let expected = [
        ("i", "//"),
        ("ii", "//"),
        ("cui", "//"),
        ("hipi", "//"),
        ("d", "#"),
        ("ll", ";"),
        ("s", "#"),
    ];
    assert_eq!(TEXT_FILE_TYPES.len(), expected.len());
    for (t, c) in expected {
        assert_eq!(
            Comment::for_file_type(t).map(Comment::as_str),
            Some(c),
            "{t}"
        );
    }
    for t in ["bc", "o", "a", "gch", "ast", "", "I", "i ", "hip"] {
        assert_eq!(Comment::for_file_type(t), None, "{t}");
    }
}

#[test]
fn llvm_fixtures_read_back_to_their_inputs() {
    for (t, comment) in TEXT_FILE_TYPES {
        let data = read(&format!("{t}.bundle"));
        let bundle = TextBundle::parse(&data, comment).unwrap_or_else(|e| panic!("{t}: {e}"));
        let list = String::from_utf8(read(&format!("{t}.list"))).unwrap();
        let ids: Vec<&str> = list.lines().collect();
        assert_eq!(bundle.entry_count(), Some(3), "{t}");
        let got: Vec<_> = bundle.entries().map(Result::unwrap).collect();
        assert_eq!(
            got.iter().map(|e| e.id_str().unwrap()).collect::<Vec<_>>(),
            ids,
            "{t}: IDs in LLVM's -list order"
        );
        let inputs = [
            read(&format!("inputs/host.{t}")),
            read(&format!("inputs/openmp.{t}")),
            read("inputs/empty"),
        ];
        for (i, (entry, input)) in got.iter().zip(&inputs).enumerate() {
            assert_eq!(entry.index(), i as u64);
            assert_eq!(entry.payload(), &input[..], "{t}: entry {i}");
            let at = entry.offset() as usize;
            assert!(std::ptr::eq(entry.payload().as_ptr(), data[at..].as_ptr()));
            assert_eq!(entry.end_marker_offset(), entry.offset() + entry.size());
        }
        // The bundler's files begin with a start marker and end with an end
        // marker line: nothing outside the entries.
        assert_eq!(got[0].start_offset(), 0, "{t}");
        assert_eq!(got[2].end_offset(), data.len() as u64, "{t}");
        assert_eq!(got[1].start_offset(), got[0].end_offset(), "{t}");
        // Markers of another comment are text.
        for other in [Comment::DoubleSlash, Comment::Hash, Comment::Semicolon] {
            if other != comment {
                assert!(
                    !TextBundle::is_text_bundle(&data, other),
                    "{t} as {other:?}"
                );
            }
        }
    }
}

#[test]
fn writer_is_byte_identical_to_llvm() {
    for (t, comment) in TEXT_FILE_TYPES {
        let data = read(&format!("{t}.bundle"));
        let list = String::from_utf8(read(&format!("{t}.list"))).unwrap();
        let inputs = [
            read(&format!("inputs/host.{t}")),
            read(&format!("inputs/openmp.{t}")),
            read("inputs/empty"),
        ];
        let pairs: Vec<(&[u8], &[u8])> = list
            .lines()
            .map(str::as_bytes)
            .zip(inputs.iter().map(Vec::as_slice))
            .collect();
        assert_eq!(pairs.len(), 3);
        let written = write_text_bundle(comment, &pairs).unwrap();
        assert!(written == data, "{t}: writer differs from LLVM 22");

        // The streaming pieces give the same bytes.
        let mut streamed = Vec::new();
        for (id, payload) in &pairs {
            check_entry(comment, id, payload).unwrap();
            let (start, end) = (Marker::start(comment, id), Marker::end(comment, id));
            for part in start.parts() {
                streamed.extend_from_slice(part);
            }
            streamed.extend_from_slice(payload);
            for part in end.parts() {
                streamed.extend_from_slice(part);
            }
            let sizes: u64 = start.size() + payload.len() as u64 + end.size();
            assert_eq!(
                sizes,
                start
                    .parts()
                    .iter()
                    .chain(&end.parts())
                    .map(|p| p.len() as u64)
                    .sum::<u64>()
                    + payload.len() as u64
            );
        }
        assert!(
            streamed == data,
            "{t}: streamed markers differ from LLVM 22"
        );
    }
}

#[test]
fn marker_pieces() {
    let m = Marker::start(Comment::Semicolon, b"x");
    assert_eq!(
        m.parts().concat(),
        b"\n; __CLANG_OFFLOAD_BUNDLE____START__ x\n".to_vec()
    );
    assert_eq!(m.size(), 39);
    let m = Marker::end(Comment::Hash, b"y");
    assert_eq!(
        m.parts().concat(),
        b"\n# __CLANG_OFFLOAD_BUNDLE____END__ y\n".to_vec()
    );
}

// ---------------------------------------------------------------------------
// Readable files: what LLVM 22 does with them, and so do we.

#[test]
fn no_marker_is_not_a_text_bundle() {
    for data in [
        &b""[..],
        b"int main() { return 0; }\n",
        b"\n// __CLANG_OFFLOAD_BUNDLE__ x\n",
    ] {
        assert!(!TextBundle::is_text_bundle(data, Comment::DoubleSlash));
        let bundle = TextBundle::parse(data, Comment::DoubleSlash).unwrap();
        assert_eq!(bundle.entry_count(), Some(0));
    }
}

#[test]
fn start_marker_at_byte_zero_is_text() {
    // No `\n` before it: LLVM finds no bundle (and -unbundle says "Can't find
    // bundles for ..."), as here.
    let data = cat(&[&START[1..], HOST, b"\nint h;\n"]);
    assert!(!TextBundle::is_text_bundle(&data, Comment::DoubleSlash));
    assert_eq!(entries(&data).len(), 0);
}

#[test]
fn payload_with_and_without_trailing_newline_and_empty() {
    let data = write_text_bundle(
        Comment::DoubleSlash,
        &[
            (HOST, b"int h;\n"),
            (DEV, b"int d;"),
            (b"openmp-x86_64-pc-linux-gnu-", b""),
        ],
    )
    .unwrap();
    let got = entries(&data);
    assert_eq!(got[0].payload(), b"int h;\n");
    assert_eq!(got[1].payload(), b"int d;");
    assert_eq!(got[2].payload(), b"");
    // An empty payload lies between the start line and the end marker's `\n`.
    assert_eq!(got[2].offset(), got[2].end_marker_offset());
    assert_eq!(data[got[2].offset() as usize], b'\n');
}

#[test]
fn crlf_keeps_carriage_returns_in_ids_and_payloads() {
    // LLVM 22 lists `host-...-\r` and unbundles "int h;\r\n\r": its markers
    // begin at the `\n` of a `\r\n`.
    let crlf = |m: &[u8]| [b"\r", m].concat();
    let data = cat(&[
        &crlf(START),
        HOST,
        b"\r\nint h;\r\n",
        &crlf(END),
        HOST,
        b"\r\n",
    ]);
    let got = entries(&data);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id(), [HOST, b"\r"].concat());
    assert_eq!(got[0].payload(), b"int h;\r\n\r");
}

#[test]
fn id_is_the_rest_of_the_line_verbatim() {
    let id = [HOST, b"  "].concat();
    let data = cat(&[START, &id, b"\nint h;", END, &id, b"\n"]);
    let got = entries(&data);
    assert_eq!(got[0].id(), &id[..]);
    assert_eq!(got[0].payload(), b"int h;");
    let data = cat(&[START, b"\xff\xfe", b"\nx", END, b"\xff\xfe\n"]);
    let got = entries(&data);
    assert_eq!(got[0].id(), b"\xff\xfe");
    assert_eq!(got[0].id_str(), None);
}

#[test]
fn text_around_and_between_entries_is_ignored() {
    // LLVM 22 lists both and unbundles "int h;" and "int d;".
    let data = cat(&[
        b"prefix text\n",
        START,
        HOST,
        b"\nint h;",
        END,
        HOST,
        b"\nBETWEEN TEXT\n",
        START,
        DEV,
        b"\nint d;",
        END,
        DEV,
        b"\ntrailer",
    ]);
    let got = entries(&data);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].start_offset(), 12);
    assert_eq!(
        (got[0].payload(), got[1].payload()),
        (&b"int h;"[..], &b"int d;"[..])
    );
    assert!(got[1].start_offset() > got[0].end_offset());
    assert!((got[1].end_offset() as usize) < data.len());
}

#[test]
fn last_end_marker_may_lack_its_newline() {
    let data = cat(&[START, HOST, b"\nint h;", END, HOST]);
    let got = entries(&data);
    assert_eq!(got[0].payload(), b"int h;");
    assert_eq!(got[0].end_offset(), data.len() as u64);
}

#[test]
fn a_marker_needs_its_own_newline() {
    // An end marker right after the start line shares the line's `\n`: it is
    // payload, and the entry ends at the next end marker (LLVM 22 unbundles
    // the same bytes).
    let end_line = cat(&[&END[1..], HOST, b"\nmore"]);
    let data = cat(&[START, HOST, b"\n", &end_line, END, HOST, b"\n"]);
    let got = entries(&data);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].payload(), &end_line[..]);
}

#[test]
fn prefix_without_start_or_end_is_text() {
    let inner = b"int h;\n// __CLANG_OFFLOAD_BUNDLE____MIDDLE__ x\nint j;";
    let data = cat(&[START, HOST, b"\n", inner, END, HOST, b"\n"]);
    assert_eq!(entries(&data)[0].payload(), inner);
}

#[test]
fn duplicate_ids_are_kept_in_file_order() {
    let data = write_text_bundle(Comment::DoubleSlash, &[(HOST, b"A"), (HOST, b"B")]).unwrap();
    let got = entries(&data);
    assert_eq!((got[0].payload(), got[1].payload()), (&b"A"[..], &b"B"[..]));
}

// ---------------------------------------------------------------------------
// Malformed inputs, one test per class.

#[test]
fn start_without_end() {
    // LLVM 22: -list prints the ID, -unbundle writes its own heap memory
    // after the payload.
    let good = write_text_bundle(Comment::DoubleSlash, &[(DEV, b"int d;")]).unwrap();
    let data = cat(&[&good, START, HOST, b"\nint h;\n"]);
    let (e, good) = rejected(&data);
    assert_eq!(e.kind(), ErrorKind::MissingEndMarker);
    assert_eq!((e.offset(), e.entry()), (good[0].end_offset(), Some(1)));
    assert_eq!(good.len(), 1);
    assert_eq!(good[0].payload(), b"int d;");
}

#[test]
fn start_line_cut_at_end_of_file() {
    // LLVM 22 finds no bundle here; we refuse a cut marker.
    let data = cat(&[START, HOST]);
    assert!(TextBundle::is_text_bundle(&data, Comment::DoubleSlash));
    let (e, good) = rejected(&data);
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::MissingEndMarker, 0, Some(0))
    );
    assert!(good.is_empty());
}

#[test]
fn end_before_start() {
    // LLVM 22: -list loops forever, printing the ID.
    let data = cat(&[END, HOST, b"\n", START, HOST, b"\nint h;\n"]);
    let (e, good) = rejected(&data);
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::EndMarkerWithoutStart, 0, None)
    );
    assert!(good.is_empty());
}

#[test]
fn end_without_any_start() {
    // LLVM 22 takes this for a host file; we call it a damaged bundle.
    let data = cat(&[b"int x;", END, HOST, b"\n"]);
    assert!(TextBundle::is_text_bundle(&data, Comment::DoubleSlash));
    let (e, _) = rejected(&data);
    assert_eq!(
        (e.kind(), e.offset()),
        (ErrorKind::EndMarkerWithoutStart, 6)
    );
}

#[test]
fn stray_end_between_entries() {
    let first = write_text_bundle(Comment::DoubleSlash, &[(HOST, b"A")]).unwrap();
    let data = cat(&[&first, END, DEV, b"\n", START, DEV, b"\nB", END, DEV, b"\n"]);
    let (e, good) = rejected(&data);
    assert_eq!(
        (e.kind(), e.offset()),
        (ErrorKind::EndMarkerWithoutStart, first.len() as u64)
    );
    assert_eq!(good.len(), 1);
}

#[test]
fn start_right_after_an_end_line_is_lost() {
    // The end line's `\n` cannot also begin the next start marker: LLVM 22
    // silently drops the second entry; its end marker is then a stray one.
    let first = write_text_bundle(Comment::DoubleSlash, &[(HOST, b"A")]).unwrap();
    let data = cat(&[&first, &START[1..], DEV, b"\nB", END, DEV, b"\n"]);
    let (e, good) = rejected(&data);
    assert_eq!(e.kind(), ErrorKind::EndMarkerWithoutStart);
    assert_eq!(good.len(), 1);
}

#[test]
fn nested_start() {
    // LLVM 22: -list shows only the outer ID; -unbundle gives the outer
    // entry the inner one's start marker and payload.
    let data = cat(&[
        START,
        HOST,
        b"\nint h;",
        START,
        DEV,
        b"\nint d;",
        END,
        DEV,
        b"\n",
        END,
        HOST,
        b"\n",
    ]);
    let (e, good) = rejected(&data);
    let inner = (START.len() + HOST.len() + 7) as u64;
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::NestedStartMarker, inner, Some(0))
    );
    assert!(good.is_empty());
}

#[test]
fn end_naming_another_id() {
    // LLVM 22 does not look at the end marker's ID.
    let data = cat(&[START, HOST, b"\nint h;", END, DEV, b"\n"]);
    let (e, _) = rejected(&data);
    let end = (START.len() + HOST.len() + 7) as u64;
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::EndMarkerIdMismatch, end, Some(0))
    );
    // A CRLF end line against an LF start line differs too.
    let data = cat(&[START, HOST, b"\nint h;", END, HOST, b"\r\n"]);
    assert_eq!(rejected(&data).0.kind(), ErrorKind::EndMarkerIdMismatch);
}

#[test]
fn empty_id() {
    // LLVM 22: -list prints an empty line, -unbundle "invalid bundle id".
    let data = cat(&[START, b"\nint h;", END, b"\n"]);
    let (e, _) = rejected(&data);
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::EmptyId, 0, Some(0))
    );
}

#[test]
fn errors_display_their_offset() {
    let data = cat(&[START, HOST, b"\nint h;"]);
    let e = TextBundle::parse(&data, Comment::DoubleSlash).unwrap_err();
    assert_eq!(
        e.to_string(),
        "entry 0: text bundle start marker without a matching end marker (at offset 0x0)"
    );
}

// ---------------------------------------------------------------------------
// The writer refuses what would not read back.

#[test]
fn writer_refuses_entries_that_would_not_read_back() {
    let w = |entries: &[(&[u8], &[u8])]| write_text_bundle(Comment::Hash, entries).unwrap_err();
    let e = w(&[(HOST, b"ok"), (b"", b"x")]);
    assert_eq!((e.kind(), e.entry()), (ErrorKind::EmptyId, Some(1)));
    let e = w(&[(b"a-b-c-d-\n", b"x")]);
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::NewlineInId, 8, Some(0))
    );
    let e = w(&[(HOST, b"x\n# __CLANG_OFFLOAD_BUNDLE____END__ y\n")]);
    assert_eq!(
        (e.kind(), e.offset(), e.entry()),
        (ErrorKind::MarkerInPayload, 1, Some(0))
    );
    let e = w(&[(HOST, b"\n# __CLANG_OFFLOAD_BUNDLE____START__ ")]);
    assert_eq!((e.kind(), e.offset()), (ErrorKind::MarkerInPayload, 0));
    // Another comment's markers, a marker without its `\n`, and a prefix
    // followed by other text are fine.
    for payload in [
        &b"\n// __CLANG_OFFLOAD_BUNDLE____END__ y\n"[..],
        b"# __CLANG_OFFLOAD_BUNDLE____END__ y\n",
        b"\n# __CLANG_OFFLOAD_BUNDLE____ENDX\n",
        b"x\n# __CLANG_OFFLOAD_BUNDLE____END__",
    ] {
        let data = write_text_bundle(Comment::Hash, &[(HOST, payload)]).unwrap();
        let bundle = TextBundle::parse(&data, Comment::Hash).unwrap();
        assert_eq!(bundle.entries().next().unwrap().unwrap().payload(), payload);
    }
}

// ---------------------------------------------------------------------------
// Round trip.

/// Bytes drawn mostly from marker pieces, so that near-markers are common.
fn text() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"// ".to_vec()),
        Just(b"# ".to_vec()),
        Just(b"__CLANG_OFFLOAD_BUNDLE____".to_vec()),
        Just(b"START__ ".to_vec()),
        Just(b"END__ ".to_vec()),
        prop::collection::vec(any::<u8>(), 0..4),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

fn comment() -> impl Strategy<Value = Comment> {
    prop_oneof![
        Just(Comment::DoubleSlash),
        Just(Comment::Hash),
        Just(Comment::Semicolon)
    ]
}

proptest! {
    #[test]
    fn round_trip(comment in comment(), raw in prop::collection::vec((text(), text()), 0..5)) {
        let pairs: Vec<(&[u8], &[u8])> = raw
            .iter()
            .map(|(id, payload)| (id.as_slice(), payload.as_slice()))
            .filter(|(id, payload)| check_entry(comment, id, payload).is_ok())
            .collect();
        let data = write_text_bundle(comment, &pairs).unwrap();
        let bundle = TextBundle::parse(&data, comment).unwrap();
        prop_assert_eq!(bundle.entry_count(), Some(pairs.len() as u64));
        prop_assert_eq!(TextBundle::is_text_bundle(&data, comment), !pairs.is_empty());
        let mut at = 0u64;
        for (entry, (id, payload)) in bundle.entries().map(Result::unwrap).zip(&pairs) {
            prop_assert_eq!(entry.id(), *id);
            prop_assert_eq!(entry.payload(), *payload);
            prop_assert_eq!(entry.start_offset(), at);
            at = entry.end_offset();
        }
        prop_assert_eq!(at, data.len() as u64);
    }

    #[test]
    fn any_input_walks_forward_and_ends(comment in comment(), data in text()) {
        let strict = TextBundle::parse(&data, comment);
        let mut last_end = 0u64;
        let mut walk = TextBundle::parse_lenient(&data, comment).entries();
        let mut error = None;
        for item in walk.by_ref() {
            prop_assert!(error.is_none());
            match item {
                Ok(e) => {
                    prop_assert!(e.start_offset() >= last_end);
                    prop_assert!(e.end_offset() > e.end_marker_offset());
                    last_end = e.end_offset();
                }
                Err(e) => error = Some(e),
            }
        }
        prop_assert!(walk.next().is_none());
        prop_assert_eq!(strict.err(), error);
    }
}
