//! clang-offload-bundler's text bundles (`-type=i`, `ii`, `cui`, `hipi`, `d`,
//! `ll`, `s`): entries delimited by comment lines, with no header and no count.
//!
//! ```text
//! \n<C> __CLANG_OFFLOAD_BUNDLE____START__ <id>\n    start marker
//! <payload, verbatim>
//! \n<C> __CLANG_OFFLOAD_BUNDLE____END__ <id>\n      end marker
//! ...                                               one such triple per entry
//! ```
//! `<C>` is the comment of the file type ([`Comment`]). The bundler writes the
//! entries in `-targets` order, so its files begin with `\n`. A marker is only
//! a marker where it begins with that `\n`: one at byte 0, or one whose `\n`
//! already ended the previous marker line, is ordinary text. The ID is the
//! rest of the marker line, byte for byte (a CRLF file's IDs end in `\r`,
//! trailing spaces are kept); the payload runs from after the start line to
//! the `\n` that begins the end marker, which is not part of it. The last line
//! of a file may lack its `\n`.
//!
//! LLVM 22 reads these files loosely and sometimes dangerously (an end marker
//! before any start makes `-list` loop forever; a start without an end makes
//! `-unbundle` write its own heap into the output). Here the scan position
//! only moves forward, and [`TextBundle::parse`] rejects, with the offset of
//! the marker at fault: a start marker with no end marker after it, an end
//! marker with no open entry, a start marker inside an open entry, an end
//! marker naming another ID, and an empty ID. Text before the first entry,
//! between entries and after the last is ignored, as LLVM ignores it.
//!
//! A file with no marker at all is not a text bundle: LLVM takes it for the
//! host's own file. [`TextBundle::is_text_bundle`] tells that case apart, and
//! parsing such a file gives a bundle with no entries, not an error. A file
//! whose only markers are end markers *is* an error here
//! ([`ErrorKind::EndMarkerWithoutStart`]), although LLVM would take it for a
//! host file: it is a damaged bundle far more often than a source file that
//! happens to hold a marker line, and passing a damaged bundle whole to the
//! host compiler fails later and more obscurely.
//!
//! Duplicate IDs are not an error: entries come in file order and LLVM's
//! `-unbundle` takes the first.

use memchr::memmem::Finder;

use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

#[cfg(feature = "alloc")]
mod writer;

#[cfg(feature = "alloc")]
pub use writer::write_text_bundle;

/// The comment that starts a marker line, chosen by the file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comment {
    /// `//`: preprocessed C, C++, CUDA and HIP (`i`, `ii`, `cui`, `hipi`).
    DoubleSlash,
    /// `#`: assembly (`s`) and dependency files (`d`).
    Hash,
    /// `;`: LLVM IR (`ll`).
    Semicolon,
}

/// Every `-type` that clang-offload-bundler 22 bundles as text, with its
/// comment, in the order LLVM checks them. Any other type is binary, object or
/// invalid.
pub const TEXT_FILE_TYPES: [(&str, Comment); 7] = [
    ("i", Comment::DoubleSlash),
    ("ii", Comment::DoubleSlash),
    ("cui", Comment::DoubleSlash),
    ("hipi", Comment::DoubleSlash),
    ("d", Comment::Hash),
    ("ll", Comment::Semicolon),
    ("s", Comment::Hash),
];

/// The three strings a marker is made of, for one comment.
struct Markers {
    /// What every marker begins with: the search needle.
    prefix: &'static [u8],
    /// A start marker up to its ID.
    start: &'static [u8],
    /// An end marker up to its ID.
    end: &'static [u8],
}

/// What follows [`Markers::prefix`] in a start marker.
const START_TAIL: &[u8] = b"START__ ";
/// What follows [`Markers::prefix`] in an end marker.
const END_TAIL: &[u8] = b"END__ ";

macro_rules! markers {
    ($comment:literal) => {
        Markers {
            prefix: concat!("\n", $comment, " __CLANG_OFFLOAD_BUNDLE____").as_bytes(),
            start: concat!("\n", $comment, " __CLANG_OFFLOAD_BUNDLE____START__ ").as_bytes(),
            end: concat!("\n", $comment, " __CLANG_OFFLOAD_BUNDLE____END__ ").as_bytes(),
        }
    };
}

const DOUBLE_SLASH: Markers = markers!("//");
const HASH: Markers = markers!("#");
const SEMICOLON: Markers = markers!(";");

impl Comment {
    /// The comment the bundler uses for a `-type`, or `None` if that type is
    /// not a text type.
    pub fn for_file_type(file_type: &str) -> Option<Comment> {
        TEXT_FILE_TYPES
            .iter()
            .find(|(name, _)| *name == file_type)
            .map(|&(_, comment)| comment)
    }

    /// The comment itself: `//`, `#` or `;`.
    pub fn as_str(self) -> &'static str {
        match self {
            Comment::DoubleSlash => "//",
            Comment::Hash => "#",
            Comment::Semicolon => ";",
        }
    }

    /// The comment of the first start marker in `data` that begins a line
    /// (or the file), if there is one: how a text bundle's style is found
    /// when no `-type` names it. One search, whatever the style.
    pub fn detect(data: &[u8]) -> Option<Comment> {
        const NEEDLE: &[u8] = b" __CLANG_OFFLOAD_BUNDLE____START__ ";
        memchr::memmem::find_iter(data, NEEDLE).find_map(|at| {
            let line = data.get(..at)?;
            let line = line
                .iter()
                .rposition(|&b| b == b'\n')
                .and_then(|nl| line.get(nl.checked_add(1)?..))
                .unwrap_or(line);
            [Comment::DoubleSlash, Comment::Hash, Comment::Semicolon]
                .into_iter()
                .find(|c| line == c.as_str().as_bytes())
        })
    }

    fn markers(self) -> &'static Markers {
        match self {
            Comment::DoubleSlash => &DOUBLE_SLASH,
            Comment::Hash => &HASH,
            Comment::Semicolon => &SEMICOLON,
        }
    }
}

/// One marker line as the pieces it is written from, so that a streaming
/// writer can emit start marker, payload and end marker without building the
/// bundle in memory: write [`Marker::parts`] in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker<'id> {
    head: &'static [u8],
    id: &'id [u8],
}

impl<'id> Marker<'id> {
    /// The start marker of entry `id`: `"\n" C " __CLANG_OFFLOAD_BUNDLE____START__ " id "\n"`.
    pub fn start(comment: Comment, id: &'id [u8]) -> Self {
        Marker {
            head: comment.markers().start,
            id,
        }
    }

    /// The end marker of entry `id`: `"\n" C " __CLANG_OFFLOAD_BUNDLE____END__ " id "\n"`.
    pub fn end(comment: Comment, id: &'id [u8]) -> Self {
        Marker {
            head: comment.markers().end,
            id,
        }
    }

    /// The marker's bytes in three pieces: the fixed head, the ID, `"\n"`.
    pub fn parts(&self) -> [&'id [u8]; 3] {
        [self.head, self.id, b"\n"]
    }

    /// The marker's length in bytes.
    pub fn size(&self) -> u64 {
        to_u64(self.head.len())
            .saturating_add(to_u64(self.id.len()))
            .saturating_add(1)
    }
}

/// Checks that an entry can be written so that it reads back as itself: the ID
/// is not empty and has no `\n`, and the payload holds no marker line (a start
/// or end marker, `\n` included, for this comment). LLVM writes such entries
/// anyway and then cannot read them back. Offsets in the error are within the
/// ID (for [`ErrorKind::EmptyId`], [`ErrorKind::NewlineInId`]) or within the
/// payload (for [`ErrorKind::MarkerInPayload`]).
pub fn check_entry(comment: Comment, id: &[u8], payload: &[u8]) -> Result<()> {
    if id.is_empty() {
        return Err(Error::new(ErrorKind::EmptyId, 0));
    }
    if let Some(at) = memchr::memchr(b'\n', id) {
        return Err(Error::new(ErrorKind::NewlineInId, to_u64(at)));
    }
    let scanner = Scanner::new(payload, comment);
    if let Some(marker) = scanner.find(0) {
        return Err(Error::new(
            ErrorKind::MarkerInPayload,
            to_u64(marker.offset),
        ));
    }
    Ok(())
}

/// Whether a marker line opens or closes an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkerKind {
    Start,
    End,
}

/// A marker line found in the input.
#[derive(Debug, Clone, Copy)]
struct MarkerLine<'data> {
    kind: MarkerKind,
    /// Offset of the `\n` that begins the marker.
    offset: usize,
    /// The rest of the line after the marker, without its `\n`.
    id: &'data [u8],
    /// Whether the line ends with `\n` rather than at the end of the input.
    terminated: bool,
    /// First byte after the line.
    next: usize,
}

/// Finds marker lines; the one place that searches the input.
#[derive(Debug, Clone)]
struct Scanner<'data> {
    data: &'data [u8],
    finder: Finder<'static>,
}

impl<'data> Scanner<'data> {
    fn new(data: &'data [u8], comment: Comment) -> Self {
        Scanner {
            data,
            finder: Finder::new(comment.markers().prefix),
        }
    }

    /// The first start or end marker that begins at or after `from`. A prefix
    /// followed by anything else is text. Occurrences of the prefix cannot
    /// overlap (its only `\n` is its first byte), so skipping a whole prefix
    /// misses none, and every step moves forward.
    fn find(&self, from: usize) -> Option<MarkerLine<'data>> {
        let mut pos = from;
        loop {
            let offset = pos.checked_add(self.finder.find(self.data.get(pos..)?)?)?;
            let after = offset.checked_add(self.finder.needle().len())?;
            let tail = self.data.get(after..)?;
            let (kind, tail_len) = if tail.starts_with(START_TAIL) {
                (MarkerKind::Start, START_TAIL.len())
            } else if tail.starts_with(END_TAIL) {
                (MarkerKind::End, END_TAIL.len())
            } else {
                pos = after;
                continue;
            };
            let id_start = after.checked_add(tail_len)?;
            let line = self.data.get(id_start..)?;
            let (id, terminated, next) = match memchr::memchr(b'\n', line) {
                Some(len) => (
                    line.get(..len)?,
                    true,
                    id_start.checked_add(len)?.checked_add(1)?,
                ),
                None => (line, false, self.data.len()),
            };
            return Some(MarkerLine {
                kind,
                offset,
                id,
                terminated,
                next,
            });
        }
    }
}

/// A text bundle: a borrowed buffer and the comment its markers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextBundle<'data> {
    data: &'data [u8],
    comment: Comment,
    /// Known once [`TextBundle::parse`] has walked every entry.
    entry_count: Option<u64>,
}

/// One entry of a text bundle: its ID and payload, both borrowed from the
/// input, and where its markers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEntry<'data> {
    index: u64,
    id: &'data [u8],
    start_offset: u64,
    offset: u64,
    payload: &'data [u8],
    end_offset: u64,
}

impl<'data> TextBundle<'data> {
    /// Whether `data` holds a start or end marker for `comment`. If not, it is
    /// not a text bundle (LLVM treats it as the host's own file) and parsing
    /// it gives no entries. Searches the whole input when there is no marker.
    pub fn is_text_bundle(data: &[u8], comment: Comment) -> bool {
        Scanner::new(data, comment).find(0).is_some()
    }

    /// Parses a text bundle and checks the whole file: every start marker has
    /// a non-empty ID and a matching end marker before the next start marker,
    /// and every end marker closes an entry. Only marker lines are searched
    /// for; payloads are not copied.
    pub fn parse(data: &'data [u8], comment: Comment) -> Result<Self> {
        let mut bundle = Self::parse_lenient(data, comment);
        let mut count = 0u64;
        for entry in bundle.entries() {
            entry?;
            count = count.saturating_add(1);
        }
        bundle.entry_count = Some(count);
        Ok(bundle)
    }

    /// Takes `data` as a text bundle without checking anything (there is no
    /// header to check): entries are checked as [`TextBundle::entries`]
    /// reaches them, so the good entries in front of a bad one can be used.
    pub fn parse_lenient(data: &'data [u8], comment: Comment) -> Self {
        TextBundle {
            data,
            comment,
            entry_count: None,
        }
    }

    /// The whole input buffer.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The comment the markers use.
    pub fn comment(&self) -> Comment {
        self.comment
    }

    /// The number of entries, if [`TextBundle::parse`] has checked them all.
    /// `Some(0)` means the input holds no marker: it is not a text bundle.
    pub fn entry_count(&self) -> Option<u64> {
        self.entry_count
    }

    /// The entries in file order, found as the iterator reaches them; after an
    /// error the iterator ends.
    pub fn entries(&self) -> TextEntryIter<'data> {
        TextEntryIter {
            scanner: Scanner::new(self.data, self.comment),
            pos: 0,
            next_index: 0,
        }
    }
}

impl<'data> TextEntry<'data> {
    /// Position of the entry in the file.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The entry ID exactly as written on the start marker line (bytes: IDs
    /// need not be UTF-8; trailing spaces and a CRLF file's `\r` are kept).
    pub fn id(&self) -> &'data [u8] {
        self.id
    }

    /// The entry ID if it is UTF-8.
    pub fn id_str(&self) -> Option<&'data str> {
        core::str::from_utf8(self.id).ok()
    }

    /// Offset of the payload: the byte after the start marker line.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Payload size in bytes.
    pub fn size(&self) -> u64 {
        to_u64(self.payload.len())
    }

    /// The payload, borrowed from the input.
    pub fn payload(&self) -> &'data [u8] {
        self.payload
    }

    /// Offset of the `\n` that begins the start marker.
    pub fn start_offset(&self) -> u64 {
        self.start_offset
    }

    /// Offset of the `\n` that begins the end marker, right after the payload.
    pub fn end_marker_offset(&self) -> u64 {
        self.offset.saturating_add(self.size())
    }

    /// Offset just past the end marker line (its `\n` included, if it has
    /// one): where the entry ends.
    pub fn end_offset(&self) -> u64 {
        self.end_offset
    }
}

/// Iterator over a text bundle's entries in file order; see
/// [`TextBundle::entries`].
#[derive(Debug, Clone)]
pub struct TextEntryIter<'data> {
    scanner: Scanner<'data>,
    /// Where the search for the next start marker begins.
    pos: usize,
    next_index: u64,
}

impl<'data> TextEntryIter<'data> {
    /// Reads the entry that `start` opens; also returns where the entry ends.
    fn read_entry(
        &self,
        start: MarkerLine<'data>,
        index: u64,
    ) -> Result<(TextEntry<'data>, usize)> {
        let at = |kind, offset: usize| Error::new(kind, to_u64(offset)).in_entry(index);
        if start.kind == MarkerKind::End {
            return Err(Error::new(
                ErrorKind::EndMarkerWithoutStart,
                to_u64(start.offset),
            ));
        }
        if !start.terminated {
            return Err(at(ErrorKind::MissingEndMarker, start.offset));
        }
        if start.id.is_empty() {
            return Err(at(ErrorKind::EmptyId, start.offset));
        }
        let Some(end) = self.scanner.find(start.next) else {
            return Err(at(ErrorKind::MissingEndMarker, start.offset));
        };
        match end.kind {
            MarkerKind::Start => return Err(at(ErrorKind::NestedStartMarker, end.offset)),
            MarkerKind::End if end.id != start.id => {
                return Err(at(ErrorKind::EndMarkerIdMismatch, end.offset))
            }
            MarkerKind::End => {}
        }
        let payload = self
            .scanner
            .data
            .get(start.next..end.offset)
            .ok_or_else(|| at(ErrorKind::MissingEndMarker, start.offset))?;
        let entry = TextEntry {
            index,
            id: start.id,
            start_offset: to_u64(start.offset),
            offset: to_u64(start.next),
            payload,
            end_offset: to_u64(end.next),
        };
        Ok((entry, end.next))
    }
}

impl<'data> Iterator for TextEntryIter<'data> {
    type Item = Result<TextEntry<'data>>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.scanner.find(self.pos)?;
        let index = self.next_index;
        Some(match self.read_entry(start, index) {
            Ok((entry, next)) => {
                self.pos = next;
                self.next_index = index.saturating_add(1);
                Ok(entry)
            }
            Err(error) => {
                // Nothing after an error can be trusted to line up: end here.
                self.pos = self.scanner.data.len();
                Err(error)
            }
        })
    }
}
