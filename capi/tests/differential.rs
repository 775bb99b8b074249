//! Differential test of the C ABI against the core: every fixture (and every
//! container, payload and archive member found inside one) goes through the
//! core Rust API and through the exported `clangoffload_*` functions, called
//! directly, and both must give the same entries (the same views into the
//! input: the same bytes at the same place), the same choices and the same
//! statuses. Damaged copies of the fixtures (cut short, with count, offset and
//! size fields changed) must give the status the capi maps the core error's
//! kind to, with an error record holding the core error's offset, entry and
//! message.
//!
//! Each test prints how many comparisons it made (`-- --nocapture`).

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::collections::{BTreeSet, HashSet};
use std::ffi::c_char;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::null_mut;
use std::sync::OnceLock;

use clangoffload::archive::{device_member_name, Archive};
use clangoffload::bundle::BundleDiagnostic;
use clangoffload::compressed::truncated_md5;
use clangoffload::elf::{AmdgpuTarget, ElfFile};
use clangoffload::id::{self, BundleEntryId, DeviceMatch, FeatureSetting, TargetId};
use clangoffload::locate::{offload_sections, SectionKind};
use clangoffload::object::ObjectFile;
use clangoffload::object_bundle::ObjectBundle;
use clangoffload::offload_binary::{binaries, write_offload_binary, NewImage, WriteOptions};
use clangoffload::scan::{scan, Found};
use clangoffload::text_bundle::Comment;
use clangoffload::{
    Bundle, BundleEntry, CompressedBundle, CompressionMethod, Container, Containers,
    DecompressOptions, Error, ErrorKind, IdError, Limits, OffloadBinary, OffloadEntry, TextBundle,
};
use clangoffload_capi::*;

// ===========================================================================
// Comparing
// ===========================================================================

/// Counts the comparisons a test makes; the first disagreement fails the test
/// with both answers and what was asked of which input.
struct Tally {
    test: &'static str,
    count: usize,
}

impl Tally {
    fn new(test: &'static str) -> Self {
        Tally { test, count: 0 }
    }

    /// One comparison: `c` from the C ABI, `core` from the core; `what` names
    /// the input and the query.
    #[track_caller]
    fn same<T: PartialEq + Debug>(&mut self, c: T, core: T, what: impl FnOnce() -> String) {
        self.count += 1;
        if c != core {
            panic!(
                "{}: the C ABI and the core disagree on {}\n  C ABI: {c:?}\n   core: {core:?}",
                self.test,
                what()
            );
        }
    }

    fn finish(self) {
        eprintln!("{}: {} comparisons", self.test, self.count);
        assert!(self.count > 0, "{} compared nothing", self.test);
    }
}

/// Bytes for a message: as text where they are text.
fn show(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

/// A failed call as its caller sees it: the status, and the error record if
/// the function wrote one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fault {
    status: clangoffload_status,
    record: Option<Record>,
}

/// The contents of a `clangoffload_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    status: u32,
    offset: u64,
    entry: u64,
    message: String,
}

impl Fault {
    /// A status with no error record.
    fn plain(status: clangoffload_status) -> Self {
        Fault {
            status,
            record: None,
        }
    }

    /// What the C ABI reports for a core error: the status the capi maps its
    /// kind to, and a record of its offset, entry and message (cut to the
    /// record's 255 bytes).
    fn core(e: &Error) -> Self {
        let status = clangoffload_status::from(e.kind());
        let text = e.to_string();
        let kept = &text.as_bytes()[..text.len().min(255)];
        Fault {
            status,
            record: Some(Record {
                status: status as u32,
                offset: e.offset(),
                entry: e.entry().unwrap_or(CLANGOFFLOAD_NO_ENTRY),
                message: String::from_utf8_lossy(kept).into_owned(),
            }),
        }
    }

    /// What the C ABI reports for an ID that does not parse.
    fn id(e: IdError) -> Self {
        Fault::plain(e.into())
    }
}

/// The `status` of an error record the C ABI has not written.
const UNWRITTEN: u32 = 0xDEAD_BEEF;

fn blank_error() -> clangoffload_error {
    clangoffload_error {
        status: UNWRITTEN,
        ..clangoffload_error::default()
    }
}

/// A C status with the record `err`, if the function wrote it.
fn c_fault(status: clangoffload_status, err: &clangoffload_error) -> Fault {
    let record = (err.status != UNWRITTEN).then(|| {
        let text: Vec<u8> = err
            .message
            .iter()
            .map(|&c| c.to_ne_bytes()[0])
            .take_while(|&b| b != 0)
            .collect();
        Record {
            status: err.status,
            offset: err.offset,
            entry: err.entry,
            message: String::from_utf8_lossy(&text).into_owned(),
        }
    });
    Fault { status, record }
}

/// Success is `OK` with no error record written.
fn c_outcome(status: clangoffload_status, err: &clangoffload_error) -> Result<(), Fault> {
    if status == clangoffload_status::Ok && err.status == UNWRITTEN {
        Ok(())
    } else {
        Err(c_fault(status, err))
    }
}

/// A status without out-parameters.
fn c_status(status: clangoffload_status) -> Result<(), Fault> {
    match status {
        clangoffload_status::Ok => Ok(()),
        status => Err(Fault::plain(status)),
    }
}

/// Calls `f` with an uninitialised out-record and a blank error record, and
/// returns the out-record if `f` succeeded.
fn c_out_err<R>(
    f: impl FnOnce(*mut R, *mut clangoffload_error) -> clangoffload_status,
) -> Result<R, Fault> {
    let mut out = MaybeUninit::<R>::uninit();
    let mut err = blank_error();
    let status = f(out.as_mut_ptr(), &mut err);
    c_outcome(status, &err)?;
    // SAFETY: on success every exported function has written its
    // out-parameter whole.
    Ok(unsafe { out.assume_init() })
}

/// [`c_out_err`] for a function without an error record.
fn c_out<R>(f: impl FnOnce(*mut R) -> clangoffload_status) -> Result<R, Fault> {
    c_out_err(|out, _| f(out))
}

/// The records of a walk by repeated calls to `step`, and the failure that
/// ended it. A walk still going after `max` steps is cut off there and
/// reported as ended by `OK`, which the core never gives.
fn c_walk_until<R>(max: usize, mut step: impl FnMut() -> Result<R, Fault>) -> (Vec<R>, Fault) {
    let mut records = Vec::new();
    for _ in 0..max {
        match step() {
            Ok(record) => records.push(record),
            Err(end) => return (records, end),
        }
    }
    (records, Fault::plain(clangoffload_status::Ok))
}

/// `bytes` as the C ABI takes a buffer: NULL when empty (allowed with a
/// length of 0), so that the empty inputs and queries check that too.
fn ptr(bytes: &[u8]) -> *const u8 {
    if bytes.is_empty() {
        std::ptr::null()
    } else {
        bytes.as_ptr()
    }
}

/// Where a view points and how many bytes it has. Equal views are the same
/// bytes at the same place; an empty view points nowhere in particular, so
/// its place is not compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct View {
    at: usize,
    len: usize,
}

fn view(bytes: &[u8]) -> View {
    View {
        at: if bytes.is_empty() {
            0
        } else {
            bytes.as_ptr() as usize
        },
        len: bytes.len(),
    }
}

fn cview(bytes: clangoffload_bytes) -> View {
    View {
        at: if bytes.len == 0 {
            0
        } else {
            bytes.ptr as usize
        },
        len: bytes.len,
    }
}

/// The bytes of a C view.
///
/// # Safety
/// `bytes` came from the C ABI and what it borrows is still alive.
unsafe fn cbytes<'a>(bytes: clangoffload_bytes) -> &'a [u8] {
    if bytes.len == 0 {
        &[]
    } else {
        // SAFETY: a view the C ABI made of live memory, as the caller promises.
        unsafe { std::slice::from_raw_parts(bytes.ptr, bytes.len) }
    }
}

/// A view that borrows either the input (`view` is its place) or memory a
/// handle owns (decompressed: `view` is `None` and only the bytes count).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    view: Option<View>,
    bytes: Vec<u8>,
}

fn span(bytes: &[u8], borrowed: bool) -> Span {
    Span {
        view: borrowed.then(|| view(bytes)),
        bytes: bytes.to_vec(),
    }
}

/// # Safety
/// As [`cbytes`].
unsafe fn cspan(bytes: clangoffload_bytes, borrowed: bool) -> Span {
    Span {
        view: borrowed.then(|| cview(bytes)),
        // SAFETY: forwarded to the caller.
        bytes: unsafe { cbytes(bytes) }.to_vec(),
    }
}

/// A handle from one of the `_parse` functions, released by its `_free` when
/// dropped; it borrows the parsed bytes for `'a`.
struct Handle<'a, T> {
    ptr: *mut T,
    free: unsafe extern "C" fn(*mut T),
    input: PhantomData<&'a [u8]>,
}

impl<T> Drop for Handle<'_, T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the matching `_parse` function and is
        // released once, here.
        unsafe { (self.free)(self.ptr) }
    }
}

/// Runs a `_parse` function (`parse` gets the handle slot and the error
/// record) into a handle that borrows `data`.
fn c_handle<'a, T>(
    _data: &'a [u8],
    free: unsafe extern "C" fn(*mut T),
    parse: impl FnOnce(*mut *mut T, *mut clangoffload_error) -> clangoffload_status,
) -> Result<Handle<'a, T>, Fault> {
    let ptr = c_out_err(parse)?;
    Ok(Handle {
        ptr,
        free,
        input: PhantomData,
    })
}

/// Records `0..=count` of a handle through `get`: every one the handle
/// holds, then the refusal one past the last.
fn c_indexed<R, O>(
    count: usize,
    mut get: impl FnMut(usize, *mut R) -> clangoffload_status,
    mut convert: impl FnMut(R) -> O,
) -> Vec<Result<O, Fault>> {
    (0..=count)
        .map(|i| c_out(|out| get(i, out)).map(&mut convert))
        .collect()
}

/// What a handle holds: its records by index (and the refusal past the
/// last), and its kept fault.
type Contents<T> = (Vec<Result<T, Fault>>, Result<(), Fault>);

/// The core's records as [`c_indexed`] reads them from a handle.
fn with_end<O>(items: Vec<O>) -> Vec<Result<O, Fault>> {
    let end = Fault::plain(clangoffload_status::IndexOutOfRange);
    items.into_iter().map(Ok).chain([Err(end)]).collect()
}

/// The good records of a checked walk and its first error: what a lenient
/// handle keeps.
type Checked<T> = (Vec<T>, Option<Fault>);

/// The core's walk `items` as [`Checked`] records.
fn split<T, O>(
    items: impl IntoIterator<Item = clangoffload::Result<T>>,
    mut convert: impl FnMut(&T) -> O,
) -> Checked<O> {
    let (mut good, mut fault) = (Vec::new(), None);
    for item in items {
        match item {
            Ok(item) => good.push(convert(&item)),
            Err(e) => {
                fault.get_or_insert_with(|| Fault::core(&e));
            }
        }
    }
    (good, fault)
}

/// A handle's kept fault: `OK` (no record) or the fault.
fn kept(fault: Option<Fault>) -> Result<(), Fault> {
    fault.map_or(Ok(()), Err)
}

/// What a function that writes text into the caller's buffer gave: the
/// length it asked for, the length it stored with the text, the text, and
/// whether a NUL followed it.
#[derive(Debug, PartialEq)]
struct Written {
    asked: usize,
    stored: usize,
    text: Vec<u8>,
    nul: bool,
}

/// What a text-writing function gives for `text`.
fn written(text: Vec<u8>) -> Written {
    Written {
        asked: text.len(),
        stored: text.len(),
        text,
        nul: true,
    }
}

/// Calls a function that writes text into the caller's buffer: first with
/// no buffer (it must ask for the length), then with room for exactly the
/// text and its NUL. What it wrote, or the status that refused it.
fn c_text(
    mut call: impl FnMut(*mut c_char, usize, *mut usize) -> clangoffload_status,
) -> Result<Written, clangoffload_status> {
    let mut asked = 0;
    let probe = call(null_mut(), 0, &mut asked);
    if probe != clangoffload_status::BufferTooSmall {
        return Err(probe);
    }
    let mut buf = vec![0x55 as c_char; asked + 1];
    let mut stored = 0;
    match call(buf.as_mut_ptr(), buf.len(), &mut stored) {
        clangoffload_status::Ok => {}
        status => return Err(status),
    }
    let text = buf[..stored.min(asked)]
        .iter()
        .map(|&c| c.to_ne_bytes()[0])
        .collect();
    Ok(Written {
        asked,
        stored,
        text,
        nul: buf.get(stored) == Some(&0),
    })
}

/// Copies a buffer the C ABI allocated and releases it.
fn c_buffer(
    f: impl FnOnce(*mut clangoffload_buffer, *mut clangoffload_error) -> clangoffload_status,
) -> Result<Vec<u8>, Fault> {
    let mut buffer = c_out_err(f)?;
    let bytes = if buffer.ptr.is_null() {
        Vec::new()
    } else {
        // SAFETY: a buffer of `len` bytes the C ABI just made, not yet freed.
        unsafe { std::slice::from_raw_parts(buffer.ptr, buffer.len) }.to_vec()
    };
    // SAFETY: the record as the library filled it, released once.
    unsafe { clangoffload_buffer_free(&mut buffer) };
    Ok(bytes)
}

// ===========================================================================
// Inputs
// ===========================================================================

/// One input: where it came from and its bytes.
struct Input {
    label: String,
    data: Vec<u8>,
}

/// Every file under tests/fixtures, in path order.
fn fixture_files() -> &'static [Input] {
    static FILES: OnceLock<Vec<Input>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut paths = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        let files: Vec<Input> = paths
            .into_iter()
            .map(|path| Input {
                label: path.strip_prefix(&root).unwrap().display().to_string(),
                data: std::fs::read(&path).unwrap(),
            })
            .collect();
        assert!(files.len() > 100, "tests/fixtures not found");
        files
    })
}

/// The inputs of each format: the fixture files picked by magic, and what
/// the core finds inside them (bundle payloads, decompressed bundles,
/// archive members, the offload sections of ELF files and the containers in
/// them, OffloadBinary images). Each distinct content once.
#[derive(Default)]
struct Corpus {
    bundles: Vec<Input>,
    compressed: Vec<Input>,
    offload: Vec<Input>,
    elf: Vec<Input>,
    archives: Vec<Input>,
    text: Vec<Input>,
    /// Contents of `.hip_fatbin` sections: containers back to back.
    fatbins: Vec<Input>,
    seen: HashSet<Vec<u8>>,
}

/// How deep [`Corpus::add`] looks inside containers.
const MAX_DEPTH: u32 = 3;

impl Corpus {
    fn add(&mut self, label: String, data: &[u8], depth: u32) {
        if data.is_empty() || !self.seen.insert(data.to_vec()) {
            return;
        }
        let deeper = depth < MAX_DEPTH;
        let input = |label| Input {
            label,
            data: data.to_vec(),
        };
        if Bundle::is_bundle(data) {
            if let (true, Ok(bundle)) = (deeper, Bundle::parse_lenient(data)) {
                for entry in bundle.entries().map_while(Result::ok) {
                    let label = format!("{label} | entry {}", show(entry.id()));
                    self.add(label, entry.payload(), depth + 1);
                }
            }
            self.bundles.push(input(label));
        } else if CompressedBundle::is_compressed(data) {
            let inflated = CompressedBundle::parse(data)
                .and_then(|c| c.decompress(&DecompressOptions::default()));
            if let (true, Ok(inflated)) = (deeper, inflated) {
                self.add(format!("{label} | decompressed"), &inflated, depth + 1);
            }
            self.compressed.push(input(label));
        } else if OffloadBinary::is_offload_binary(data) {
            let plain = binaries(data)
                .map_while(Result::ok)
                .filter(|(_, binary)| deeper && !binary.is_compressed());
            for (offset, binary) in plain {
                for entry in binary.entries() {
                    let label = format!("{label} | image {} at {offset:#x}", entry.index());
                    self.add(label, entry.image(), depth + 1);
                }
            }
            if depth == 0 {
                for (how, bytes) in rewritten_offload(data) {
                    self.add(format!("{label} | rewritten as {how}"), &bytes, depth + 1);
                }
            }
            self.offload.push(input(label));
        } else if Archive::is_archive(data) {
            if let (true, Ok(archive)) = (deeper, Archive::parse(data)) {
                for member in archive.members().map_while(Result::ok) {
                    let label = format!("{label} | member {}", show(member.name()));
                    self.add(label, member.data(), depth + 1);
                }
            }
            self.archives.push(input(label));
        } else if ElfFile::is_elf(data) {
            if let (true, Ok(elf)) = (deeper, ElfFile::parse(data)) {
                self.add_sections(&label, &elf, depth);
            }
            self.elf.push(input(label));
        }
    }

    fn add_sections(&mut self, label: &str, elf: &ElfFile<'_>, depth: u32) {
        for found in offload_sections(&ObjectFile::Elf(*elf)).flatten() {
            let (section, bytes) = (found.section, found.section.data());
            let label = format!("{label} | section {}", show(section.name()));
            match found.kind {
                SectionKind::HipFatbin => {
                    for (offset, container) in Containers::new(bytes).map_while(Result::ok) {
                        let label = format!("{label} +{offset:#x}");
                        self.add(label, container.data(), depth + 1);
                    }
                    if !bytes.is_empty() && self.seen.insert(bytes.to_vec()) {
                        self.fatbins.push(Input {
                            label,
                            data: bytes.to_vec(),
                        });
                    }
                }
                SectionKind::OffloadBinaries | SectionKind::BundleEntry => {
                    self.add(label, bytes, depth + 1)
                }
                _ => {}
            }
        }
    }
}

/// The images of the OffloadBinaries in `data` written again by the core as
/// versions 2 and 3, compressed and not, and all of those back to back with
/// zero padding, so that handles holding several binaries, later versions
/// and decompressed entries are compared too.
fn rewritten_offload(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let entries: Vec<OffloadEntry<'_>> = binaries(data)
        .map_while(Result::ok)
        .filter(|(_, binary)| !binary.is_compressed())
        .flat_map(|(_, binary)| binary.entries())
        .collect();
    let strings: Vec<Vec<(&[u8], &[u8])>> = entries
        .iter()
        .map(|e| e.strings().map(|s| (s.key, s.value)).collect())
        .collect();
    let images: Vec<NewImage<'_>> = entries
        .iter()
        .zip(&strings)
        .map(|(e, strings)| NewImage {
            image_kind: e.image_kind(),
            offload_kind: e.offload_kind(),
            flags: e.flags(),
            strings,
            image: e.image(),
        })
        .collect();
    let mut out = Vec::new();
    let mut all = Vec::new();
    for (how, version, compression) in [
        ("version 2", 2, None),
        ("version 3", 3, None),
        ("version 3, zlib", 3, Some((CompressionMethod::Zlib, None))),
        ("version 3, zstd", 3, Some((CompressionMethod::Zstd, None))),
    ] {
        let options = WriteOptions {
            version,
            compression,
        };
        let bytes = write_offload_binary(&images, &options).unwrap();
        all.extend_from_slice(&bytes);
        all.resize(all.len().next_multiple_of(8) + 8, 0);
        out.push((how.to_string(), bytes));
    }
    out.push(("each of those, back to back".to_string(), all));
    out
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut corpus = Corpus::default();
        for file in fixture_files() {
            if file.label.starts_with("text/") {
                corpus.text.push(Input {
                    label: file.label.clone(),
                    data: file.data.clone(),
                });
            } else {
                corpus.add(file.label.clone(), &file.data, 0);
            }
        }
        for (format, inputs) in [
            ("bundles", &corpus.bundles),
            ("compressed bundles", &corpus.compressed),
            ("OffloadBinaries", &corpus.offload),
            ("ELF files", &corpus.elf),
            ("archives", &corpus.archives),
            ("text files", &corpus.text),
            ("fat binaries", &corpus.fatbins),
        ] {
            eprintln!("corpus: {} {format}", inputs.len());
            assert!(!inputs.is_empty(), "no {format} among the fixtures");
        }
        corpus
    })
}

/// Whether an input is a fixture file itself (not found inside one).
fn is_file(input: &Input) -> bool {
    !input.label.contains(" | ")
}

/// Every input of every format and every fixture file.
fn everything() -> impl Iterator<Item = &'static Input> {
    let c = corpus();
    fixture_files().iter().chain(
        [
            &c.bundles,
            &c.compressed,
            &c.offload,
            &c.elf,
            &c.archives,
            &c.fatbins,
        ]
        .into_iter()
        .flatten()
        .filter(|input| !is_file(input)),
    )
}

/// Damaged copies of `data`: cut to each length in `cuts` (those shorter
/// than it), and with each patch `(offset, bytes)` that fits and changes it.
fn damaged(label: &str, data: &[u8], cuts: &[usize], patches: &[(usize, Vec<u8>)]) -> Vec<Input> {
    let len = data.len();
    let cuts: BTreeSet<usize> = cuts
        .iter()
        .chain(&[0, 1, len / 2, len.saturating_sub(1)])
        .copied()
        .filter(|&cut| cut < len)
        .collect();
    let mut out: Vec<Input> = cuts
        .into_iter()
        .map(|cut| Input {
            label: format!("{label} cut to {cut} bytes"),
            data: data[..cut].to_vec(),
        })
        .collect();
    for (at, bytes) in patches {
        let Some(old) = data.get(*at..at + bytes.len()) else {
            continue;
        };
        if old != &bytes[..] {
            let mut copy = data.to_vec();
            copy[*at..at + bytes.len()].copy_from_slice(bytes);
            out.push(Input {
                label: format!("{label} with {:#x}.. set to {bytes:02x?}", at),
                data: copy,
            });
        }
    }
    out
}

/// Lengths around each of `fields` (offsets where something starts or ends).
fn around(fields: impl IntoIterator<Item = u64>) -> Vec<usize> {
    fields
        .into_iter()
        .filter_map(|f| usize::try_from(f).ok())
        .flat_map(|f| [f.saturating_sub(1), f, f.saturating_add(1)])
        .collect()
}

fn le64(at: u64, value: u64) -> (usize, Vec<u8>) {
    (at as usize, value.to_le_bytes().to_vec())
}

fn le32(at: u64, value: u32) -> (usize, Vec<u8>) {
    (at as usize, value.to_le_bytes().to_vec())
}

fn le16(at: u64, value: u16) -> (usize, Vec<u8>) {
    (at as usize, value.to_le_bytes().to_vec())
}

/// The byte at `at` with its bits flipped.
fn flip(data: &[u8], at: u64) -> Option<(usize, Vec<u8>)> {
    let at = usize::try_from(at).ok()?;
    data.get(at).map(|b| (at, vec![!b]))
}

/// Bundle entry IDs to ask about: every ID in the fixtures, IDs made of
/// every kind, triple and target ID below, and strings that are no ID.
fn entry_id_queries() -> &'static [Vec<u8>] {
    static IDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids: BTreeSet<Vec<u8>> = fixture_entry_ids();
        for kind in ["hip", "hipv4", "openmp", "host"] {
            for triple in [
                "amdgcn-amd-amdhsa-",
                "amdgcn-amd-amdhsa-unknown",
                "spirv64-amd-amdhsa-",
                "nvptx64-nvidia-cuda-",
                "x86_64-unknown-linux-gnu",
            ] {
                for target in [
                    "",
                    "gfx906",
                    "gfx90a",
                    "gfx90a:xnack+",
                    "gfx90a:xnack-",
                    "gfx90a:sramecc+:xnack-",
                    "gfx1030",
                    "gfx9-generic",
                    "amdgcnspirv",
                    "sm_70",
                    "gfx9999",
                    "gfx90a:xnack",
                    "gfx90a:bogus+",
                ] {
                    let id = match target {
                        "" => format!("{kind}-{triple}"),
                        _ => format!("{kind}-{triple}-{target}"),
                    };
                    ids.insert(id.into_bytes());
                }
            }
        }
        for bad in [
            &b""[..],
            b"hip",
            b"hip-amdgcn-amd-amdhsa",
            b"-----",
            b"hip-amdgcn-amd-amdhsa--",
            b"hip-amdgcn-amd-amdhsa--gfx90a:",
            b"hip-amdgcn-amd-amdhsa--:xnack+",
            b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+:xnack-",
            b"hip-amdgcn-amd-amdhsa--gfx9\xff6",
            b"hip-amdgcn-amd-amdhsa--gfx906\n",
            b"hip-amdgcn-amd-amdhsa--gfx906\0",
            b"cuda-nvptx64-nvidia-cuda--sm_70",
            b"hipv4-amdgcn-amd-amdhsa-elf-gfx906",
        ] {
            ids.insert(bad.to_vec());
        }
        ids.into_iter().collect()
    })
}

/// The entry IDs of every bundle, object bundle and text bundle.
fn fixture_entry_ids() -> BTreeSet<Vec<u8>> {
    let c = corpus();
    let mut ids = BTreeSet::new();
    for input in &c.bundles {
        if let Ok(bundle) = Bundle::parse_lenient(&input.data) {
            ids.extend(
                bundle
                    .entries()
                    .map_while(Result::ok)
                    .map(|e| e.id().to_vec()),
            );
        }
    }
    for input in &c.elf {
        if let Ok(object) = ObjectBundle::parse(&input.data) {
            ids.extend(object.entries().flatten().map(|e| e.id().to_vec()));
        }
    }
    for input in &c.text {
        if let Some(comment) = Comment::detect(&input.data) {
            let text = TextBundle::parse_lenient(&input.data, comment);
            ids.extend(
                text.entries()
                    .map_while(Result::ok)
                    .map(|e| e.id().to_vec()),
            );
        }
    }
    assert!(ids.len() > 10, "the fixtures hold few entry IDs: {ids:?}");
    ids
}

/// AMDGPU target IDs to ask about: every one in a fixture entry ID, others
/// with and without features, generic ones, unknown ones and bad strings.
fn device_queries() -> &'static [Vec<u8>] {
    static DEVICES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let mut devices: BTreeSet<Vec<u8>> = fixture_entry_ids()
            .iter()
            .filter_map(|id| BundleEntryId::parse(std::str::from_utf8(id).ok()?).ok())
            .map(|id| id.target_id().as_bytes().to_vec())
            .filter(|target| !target.is_empty())
            .collect();
        for device in [
            &b"gfx906"[..],
            b"gfx906:xnack+",
            b"gfx906:sramecc-",
            b"gfx908",
            b"gfx90a",
            b"gfx90a:xnack+",
            b"gfx90a:xnack-",
            b"gfx90a:sramecc+:xnack-",
            b"gfx90a:xnack-:sramecc+",
            b"gfx942",
            b"gfx1030",
            b"gfx1100",
            b"gfx1101",
            b"gfx803",
            b"gfx9-generic",
            b"gfx9-4-generic",
            b"gfx10-3-generic",
            b"gfx11-generic",
            b"gfx9999",
            b"sm_70",
            b"amdgcnspirv",
            b"",
            b":xnack+",
            b"gfx90a:",
            b"gfx90a:xnack",
            b"gfx90a:xnack+:xnack-",
            b"gfx90a:foo+",
            b"gfx1030:xnack+",
            b"gfx90\xffa",
            b"GFX906",
            b"gfx906\0",
        ] {
            devices.insert(device.to_vec());
        }
        devices.into_iter().collect()
    })
}

/// The few queries asked of every damaged bundle.
const DAMAGED_IDS: &[&[u8]] = &[
    b"hipv4-amdgcn-amd-amdhsa--gfx906",
    b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
    b"openmp-amdgcn-amd-amdhsa--gfx906",
    b"host-x86_64-unknown-linux-gnu",
    b"hip",
];
const DAMAGED_DEVICES: &[&[u8]] = &[b"gfx906", b"gfx90a:xnack+", b"gfx1100", b"gfx9-generic"];

// ===========================================================================
// Binary bundles
// ===========================================================================

/// A bundle entry as either side gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryRec {
    id: View,
    payload: View,
    offset: u64,
    descriptor_offset: u64,
}

impl From<&BundleEntry<'_>> for EntryRec {
    fn from(e: &BundleEntry<'_>) -> Self {
        EntryRec {
            id: view(e.id()),
            payload: view(e.payload()),
            offset: e.offset(),
            descriptor_offset: e.descriptor_offset(),
        }
    }
}

impl From<clangoffload_bundle_entry> for EntryRec {
    fn from(e: clangoffload_bundle_entry) -> Self {
        EntryRec {
            id: cview(e.id),
            payload: cview(e.payload),
            offset: e.offset,
            descriptor_offset: e.descriptor_offset,
        }
    }
}

fn device_match(how: DeviceMatch) -> clangoffload_device_match {
    match how {
        DeviceMatch::Native => clangoffload_device_match::Native,
        DeviceMatch::Generic => clangoffload_device_match::Generic,
        DeviceMatch::SpirV => clangoffload_device_match::Spirv,
    }
}

/// A query as the C ABI reads it: UTF-8 first, then the ID.
fn core_entry_id(query: &[u8]) -> Result<BundleEntryId<'_>, Fault> {
    let text =
        std::str::from_utf8(query).map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8))?;
    BundleEntryId::parse(text).map_err(Fault::id)
}

fn core_target_id(query: &[u8]) -> Result<TargetId<'_>, Fault> {
    let text =
        std::str::from_utf8(query).map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8))?;
    TargetId::parse(text).map_err(Fault::id)
}

/// What the selection calls take as a requested entry ID: a target ID that
/// is malformed fails with its status, an unknown processor finds nothing.
fn core_requested(query: &[u8]) -> Result<BundleEntryId<'_>, Fault> {
    let requested = core_entry_id(query)?;
    if !requested.target_id().is_empty() {
        match requested.parsed_target_id() {
            Ok(_) | Err(id::IdError::UnknownProcessor) => {}
            Err(e) => return Err(Fault::id(e)),
        }
    }
    Ok(requested)
}

/// What the runtime's selection calls take as a device: a target ID or an
/// HSA ISA name; an unknown processor finds nothing.
fn core_device(query: &[u8]) -> Result<TargetId<'_>, Fault> {
    let text =
        std::str::from_utf8(query).map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8))?;
    match id::parse_device(text) {
        Err(id::IdError::UnknownProcessor) => Err(Fault::plain(clangoffload_status::NotFound)),
        other => other.map_err(Fault::id),
    }
}

type BundleHandle<'a> = Handle<'a, clangoffload_bundle>;

fn c_bundle(data: &[u8], flags: u32) -> Result<BundleHandle<'_>, Fault> {
    c_handle(data, clangoffload_bundle_free, |out, err| {
        // SAFETY: `data` is readable for its length and outlives the handle;
        // `out` and `err` are writable.
        unsafe { clangoffload_bundle_parse(ptr(data), data.len(), flags, out, err) }
    })
}

/// Everything a bundle handle tells without a query.
#[derive(Debug, PartialEq)]
struct BundleContents {
    entries: Vec<Result<EntryRec, Fault>>,
    fault: Result<(), Fault>,
    header_len: u64,
    diagnostics: Result<Vec<(u32, u64, u64)>, Fault>,
}

fn c_bundle_contents(h: &BundleHandle<'_>) -> BundleContents {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_bundle_entry_count(h.ptr) };
    let entries = c_indexed(
        count,
        // SAFETY: a live handle; `out` is writable.
        |i, out| unsafe { clangoffload_bundle_get_entry(h.ptr, i, out) },
        EntryRec::from,
    );
    // SAFETY: a live handle; `err` is writable.
    let fault = c_out_err(|_: *mut (), err| unsafe { clangoffload_bundle_fault(h.ptr, err) });
    BundleContents {
        entries,
        fault,
        // SAFETY: a live handle.
        header_len: unsafe { clangoffload_bundle_header_len(h.ptr) },
        diagnostics: c_diagnostics(h),
    }
}

/// The diagnostics, counted first and then read into an array that fits.
fn c_diagnostics(h: &BundleHandle<'_>) -> Result<Vec<(u32, u64, u64)>, Fault> {
    let mut count = 0;
    // SAFETY: a live handle; no array (`cap` 0); `count` is writable.
    c_status(unsafe { clangoffload_bundle_validate(h.ptr, null_mut(), 0, &mut count) })?;
    let mut found: Vec<clangoffload_bundle_diagnostic> = Vec::with_capacity(count);
    let mut total = 0;
    // SAFETY: a live handle; `found` has room for `count` records; `total`
    // is writable.
    c_status(unsafe {
        clangoffload_bundle_validate(h.ptr, found.as_mut_ptr(), count, &mut total)
    })?;
    // SAFETY: the call filled the first `total` records, up to `count`.
    unsafe { found.set_len(total.min(count)) };
    Ok(found.iter().map(|d| (d.kind as u32, d.a, d.b)).collect())
}

fn core_bundle_contents(bundle: &Bundle<'_>) -> BundleContents {
    let (entries, fault) = split(bundle.entries(), |e| EntryRec::from(e));
    let diagnostics = bundle
        .validate()
        .into_iter()
        .map(|d| match d {
            BundleDiagnostic::DuplicateId { first, second } => (1, first, second),
            BundleDiagnostic::OverlappingPayloads { first, second } => (2, first, second),
            BundleDiagnostic::PayloadOverlapsHeader { entry, header_len } => (3, entry, header_len),
            BundleDiagnostic::TrailingBytes { offset, len } => (4, offset, len),
            other => panic!("a diagnostic this test does not know: {other:?}"),
        })
        .collect();
    BundleContents {
        entries: with_end(entries),
        fault: kept(fault),
        header_len: bundle.header_len().unwrap_or(0),
        diagnostics: Ok(diagnostics),
    }
}

fn c_find(h: &BundleHandle<'_>, query: &[u8], flags: u32) -> Result<usize, Fault> {
    c_out(|index| {
        // SAFETY: a live handle; `query` is readable for its length.
        unsafe {
            clangoffload_bundle_find_compatible(h.ptr, ptr(query).cast(), query.len(), flags, index)
        }
    })
}

fn core_find(bundle: &Bundle<'_>, query: &[u8], flags: u32) -> Result<usize, Fault> {
    let requested = core_requested(query)?;
    let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
    id::first_compatible(bundle, &requested, hip_openmp)
        .map(|e| e.index() as usize)
        .ok_or(Fault::plain(clangoffload_status::NotFound))
}

fn c_select(
    h: &BundleHandle<'_>,
    device: &[u8],
) -> Result<(usize, clangoffload_device_match), Fault> {
    c_out(|out: *mut (usize, clangoffload_device_match)| {
        // SAFETY: `out` points to a writable tuple; only the address of
        // its field is taken.
        let index = unsafe { std::ptr::addr_of_mut!((*out).0) };
        // SAFETY: as above.
        let how = unsafe { std::ptr::addr_of_mut!((*out).1) };
        // SAFETY: a live handle; `device` is readable for its length; the two
        // outputs are fields of the writable `out`, written together on
        // success.
        unsafe {
            clangoffload_bundle_select_for_device(
                h.ptr,
                ptr(device).cast(),
                device.len(),
                index,
                how,
            )
        }
    })
}

fn core_select(
    bundle: &Bundle<'_>,
    device: &[u8],
) -> Result<(usize, clangoffload_device_match), Fault> {
    let device = core_device(device)?;
    let (how, entry) = id::select_for_device(bundle, &device)
        .ok_or(Fault::plain(clangoffload_status::NotFound))?;
    Ok((entry.index() as usize, device_match(how)))
}

/// The allocation-free walk: its entries, the status that ended it and what
/// one more call gives.
fn c_walk(data: &[u8]) -> (Vec<EntryRec>, Fault, Fault) {
    let mut cursor = clangoffload_bundle_cursor::default();
    let mut next = || {
        c_out_err(|out, err| {
            // SAFETY: `data` is readable for its length; the cursor, `out`
            // and `err` are writable.
            unsafe { clangoffload_bundle_next_entry(ptr(data), data.len(), &mut cursor, out, err) }
        })
    };
    // Each entry takes a descriptor of at least 24 bytes.
    let (entries, end) = c_walk_until(data.len() / 24 + 2, || next().map(EntryRec::from));
    let again = next()
        .err()
        .unwrap_or(Fault::plain(clangoffload_status::Ok));
    (entries, end, again)
}

fn core_walk(data: &[u8]) -> (Vec<EntryRec>, Fault, Fault) {
    let end = Fault::plain(clangoffload_status::End);
    let bundle = match Bundle::parse_lenient(data).and_then(|b| b.check_entry_count().map(|()| b)) {
        Ok(bundle) => bundle,
        // A bad header is reported by every call.
        Err(e) => return (Vec::new(), Fault::core(&e), Fault::core(&e)),
    };
    let mut entries = Vec::new();
    for entry in bundle.entries() {
        match entry {
            Ok(entry) => entries.push(EntryRec::from(&entry)),
            Err(e) => return (entries, Fault::core(&e), end),
        }
    }
    (entries, end.clone(), end)
}

fn c_find_entry(data: &[u8], query: &[u8], flags: u32) -> Result<EntryRec, Fault> {
    c_out_err(|out, err| {
        // SAFETY: `data` and `query` are readable for their lengths; `out`
        // and `err` are writable.
        unsafe {
            clangoffload_bundle_find_compatible_entry(
                ptr(data),
                data.len(),
                ptr(query).cast(),
                query.len(),
                flags,
                out,
                err,
            )
        }
    })
    .map(EntryRec::from)
}

fn core_find_entry(data: &[u8], query: &[u8], flags: u32) -> Result<EntryRec, Fault> {
    let requested = core_requested(query)?;
    let bundle = Bundle::parse(data).map_err(|e| Fault::core(&e))?;
    let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
    id::first_compatible(&bundle, &requested, hip_openmp)
        .map(|e| EntryRec::from(&e))
        .ok_or(Fault::plain(clangoffload_status::NotFound))
}

fn c_select_entry(
    data: &[u8],
    device: &[u8],
) -> Result<(EntryRec, clangoffload_device_match), Fault> {
    c_out_err(
        |out: *mut (clangoffload_bundle_entry, clangoffload_device_match), err| {
            // SAFETY: `out` points to a writable tuple; only the address of
            // its field is taken.
            let entry = unsafe { std::ptr::addr_of_mut!((*out).0) };
            // SAFETY: as above.
            let how = unsafe { std::ptr::addr_of_mut!((*out).1) };
            // SAFETY: `data` and `device` are readable for their lengths;
            // the outputs are fields of the writable `out`, written together
            // on success; `err` is writable.
            unsafe {
                clangoffload_bundle_select_entry_for_device(
                    ptr(data),
                    data.len(),
                    ptr(device).cast(),
                    device.len(),
                    entry,
                    how,
                    err,
                )
            }
        },
    )
    .map(|(entry, how)| (EntryRec::from(entry), how))
}

fn core_select_entry(
    data: &[u8],
    device: &[u8],
) -> Result<(EntryRec, clangoffload_device_match), Fault> {
    let device = core_device(device)?;
    let bundle = Bundle::parse(data).map_err(|e| Fault::core(&e))?;
    let (how, entry) = id::select_for_device(&bundle, &device)
        .ok_or(Fault::plain(clangoffload_status::NotFound))?;
    Ok((EntryRec::from(&entry), device_match(how)))
}

const FIND_FLAGS: [u32; 2] = [0, CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE];

/// Every bundle function on one input: the strict and the lenient handle
/// (contents, find, select), the cursor walk and the handle-free find and
/// select, for each of `ids` and `devices`.
fn compare_bundle<Q: AsRef<[u8]>>(
    t: &mut Tally,
    label: &str,
    data: &[u8],
    ids: &[Q],
    devices: &[Q],
) {
    for (mode, parse_flags) in [("strict", 0), ("lenient", CLANGOFFLOAD_PARSE_LENIENT)] {
        let core = if parse_flags == 0 {
            Bundle::parse(data)
        } else {
            Bundle::parse_lenient(data)
        }
        .map_err(|e| Fault::core(&e));
        let c = c_bundle(data, parse_flags);
        t.same(c.as_ref().err(), core.as_ref().err(), || {
            format!("{label}: bundle_parse ({mode})")
        });
        let (Ok(h), Ok(bundle)) = (c, core) else {
            continue;
        };
        t.same(c_bundle_contents(&h), core_bundle_contents(&bundle), || {
            format!("{label}: the entries, fault, header length and diagnostics ({mode})")
        });
        for query in ids.iter().map(AsRef::as_ref) {
            for flags in FIND_FLAGS {
                t.same(
                    c_find(&h, query, flags),
                    core_find(&bundle, query, flags),
                    || {
                        format!(
                            "{label}: bundle_find_compatible({}, flags {flags}) ({mode})",
                            show(query)
                        )
                    },
                );
            }
        }
        for device in devices.iter().map(AsRef::as_ref) {
            t.same(c_select(&h, device), core_select(&bundle, device), || {
                format!(
                    "{label}: bundle_select_for_device({}) ({mode})",
                    show(device)
                )
            });
        }
    }
    t.same(c_walk(data), core_walk(data), || {
        format!("{label}: the walk by bundle_next_entry")
    });
    for query in ids.iter().map(AsRef::as_ref) {
        for flags in FIND_FLAGS {
            t.same(
                c_find_entry(data, query, flags),
                core_find_entry(data, query, flags),
                || {
                    format!(
                        "{label}: bundle_find_compatible_entry({}, flags {flags})",
                        show(query)
                    )
                },
            );
        }
    }
    for device in devices.iter().map(AsRef::as_ref) {
        t.same(
            c_select_entry(data, device),
            core_select_entry(data, device),
            || format!("{label}: bundle_select_entry_for_device({})", show(device)),
        );
    }
}

#[test]
fn bundles() {
    let mut t = Tally::new("bundles");
    let (ids, devices) = (entry_id_queries(), device_queries());
    for input in &corpus().bundles {
        compare_bundle(&mut t, &input.label, &input.data, ids, devices);
    }
    t.finish();
}

/// A bundle cut inside its header, descriptors and payloads, with its count
/// and each descriptor's offset, size and ID length changed.
fn damaged_bundles(input: &Input) -> Vec<Input> {
    let data = &input.data;
    let len = data.len() as u64;
    let entries: Vec<BundleEntry<'_>> = Bundle::parse_lenient(data)
        .map(|b| b.entries().map_while(Result::ok).collect())
        .unwrap_or_default();
    let count = entries.len() as u64;
    let mut fields = vec![8, 24, 32];
    let mut patches = vec![
        (3, b"x".to_vec()),
        le64(24, 0),
        le64(24, count + 1),
        le64(24, count.saturating_sub(1)),
        le64(24, len / 24),
        le64(24, u64::MAX),
    ];
    for e in &entries {
        let d = e.descriptor_offset();
        let id_end = d + 24 + e.id().len() as u64;
        fields.extend([
            d,
            d + 8,
            d + 16,
            d + 24,
            id_end,
            e.offset(),
            e.offset() + e.size(),
        ]);
        patches.extend([
            le64(d, 0),
            le64(d, len),
            le64(d, (len - e.size()) + 1),
            le64(d, u64::MAX),
            le64(d + 8, len + 1),
            le64(d + 8, u64::MAX),
            le64(d + 16, 0),
            le64(d + 16, len),
            le64(d + 16, u64::MAX),
        ]);
    }
    damaged(&input.label, data, &around(fields), &patches)
}

#[test]
fn damaged_bundles_give_the_core_errors() {
    let mut t = Tally::new("damaged bundles");
    for input in corpus().bundles.iter().filter(|i| is_file(i)) {
        for variant in damaged_bundles(input) {
            compare_bundle(
                &mut t,
                &variant.label,
                &variant.data,
                DAMAGED_IDS,
                DAMAGED_DEVICES,
            );
        }
    }
    t.finish();
}

// ===========================================================================
// Entry IDs and target IDs
// ===========================================================================

/// A parsed entry ID: views of the query text and the two flags.
#[derive(Debug, PartialEq)]
struct IdParts {
    parts: [View; 6],
    known_kind: bool,
    known_arch: bool,
}

fn c_entry_id_parse(query: &[u8]) -> Result<IdParts, Fault> {
    c_out(|out| {
        // SAFETY: `query` is readable for its length; `out` is writable.
        unsafe { clangoffload_entry_id_parse(ptr(query).cast(), query.len(), out) }
    })
    .map(|id: clangoffload_entry_id| IdParts {
        parts: [id.kind, id.arch, id.vendor, id.os, id.env, id.target_id].map(cview),
        known_kind: id.known_kind,
        known_arch: id.known_arch,
    })
}

fn core_entry_id_parse(query: &[u8]) -> Result<IdParts, Fault> {
    let id = core_entry_id(query)?;
    let t = id.triple();
    Ok(IdParts {
        parts: [id.kind(), t.arch, t.vendor, t.os, t.env, id.target_id()]
            .map(|s| view(s.as_bytes())),
        known_kind: id.has_known_kind(),
        known_arch: t.has_known_arch(),
    })
}

fn c_normalize(query: &[u8]) -> Result<Written, Fault> {
    c_text(|buf, cap, len| {
        // SAFETY: `query` is readable for its length; `buf` is NULL or
        // writable for `cap` bytes; `len` is writable.
        unsafe { clangoffload_entry_id_normalize(ptr(query).cast(), query.len(), buf, cap, len) }
    })
    .map_err(Fault::plain)
}

fn core_normalize(query: &[u8]) -> Result<Written, Fault> {
    let text =
        std::str::from_utf8(query).map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8))?;
    id::normalize_entry_id(text)
        .map(|text| written(text.into_bytes()))
        .map_err(Fault::id)
}

fn c_is_compatible(code_object: &[u8], requested: &[u8], flags: u32) -> Result<bool, Fault> {
    c_out(|out| {
        // SAFETY: both strings are readable for their lengths; `out` is
        // writable.
        unsafe {
            clangoffload_entry_id_is_compatible(
                ptr(code_object).cast(),
                code_object.len(),
                ptr(requested).cast(),
                requested.len(),
                flags,
                out,
            )
        }
    })
}

/// Both strings are checked for UTF-8 before either is parsed.
fn core_is_compatible(code_object: &[u8], requested: &[u8], flags: u32) -> Result<bool, Fault> {
    let utf8 =
        |s| std::str::from_utf8(s).map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8));
    let (code_object, requested) = (utf8(code_object)?, utf8(requested)?);
    let code_object = BundleEntryId::parse(code_object).map_err(Fault::id)?;
    let requested = BundleEntryId::parse(requested).map_err(Fault::id)?;
    let (code_object, requested) = if flags & CLANGOFFLOAD_AS_BUNDLER != 0 {
        (
            id::as_read_by_bundler(&code_object),
            id::as_read_by_bundler(&requested),
        )
    } else {
        (code_object, requested)
    };
    let hip_openmp = flags & CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE != 0;
    Ok(code_object.is_compatible_with(&requested, hip_openmp))
}

#[test]
fn entry_ids() {
    let mut t = Tally::new("entry IDs");
    let ids = entry_id_queries();
    for query in ids {
        t.same(c_entry_id_parse(query), core_entry_id_parse(query), || {
            format!("entry_id_parse({})", show(query))
        });
        t.same(c_normalize(query), core_normalize(query), || {
            format!("entry_id_normalize({})", show(query))
        });
    }
    let flag_sets = [
        0,
        CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE,
        CLANGOFFLOAD_AS_BUNDLER,
        CLANGOFFLOAD_AS_BUNDLER | CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE,
    ];
    for code_object in ids {
        for requested in ids {
            for flags in flag_sets {
                t.same(
                    c_is_compatible(code_object, requested, flags),
                    core_is_compatible(code_object, requested, flags),
                    || {
                        format!(
                            "entry_id_is_compatible({}, {}, flags {flags})",
                            show(code_object),
                            show(requested)
                        )
                    },
                );
            }
        }
    }
    t.finish();
}

fn feature(setting: FeatureSetting) -> clangoffload_feature {
    match setting {
        FeatureSetting::Any => clangoffload_feature::Any,
        FeatureSetting::On => clangoffload_feature::On,
        FeatureSetting::Off => clangoffload_feature::Off,
    }
}

type TargetParts = (Vec<u8>, clangoffload_feature, clangoffload_feature);

fn c_target_id_parse(query: &[u8]) -> Result<TargetParts, Fault> {
    c_out(|out| {
        // SAFETY: `query` is readable for its length; `out` is writable.
        unsafe { clangoffload_target_id_parse(ptr(query).cast(), query.len(), out) }
    })
    .map(|id: clangoffload_target_id| {
        // SAFETY: the processor name is static storage.
        let processor = unsafe { cbytes(id.processor) }.to_vec();
        (processor, id.xnack, id.sramecc)
    })
}

fn core_target_id_parse(query: &[u8]) -> Result<TargetParts, Fault> {
    let id = core_target_id(query)?;
    Ok((
        id.processor().as_bytes().to_vec(),
        feature(id.xnack()),
        feature(id.sramecc()),
    ))
}

fn c_canonicalize(query: &[u8]) -> Result<Written, Fault> {
    c_text(|buf, cap, len| {
        // SAFETY: `query` is readable for its length; `buf` is NULL or
        // writable for `cap` bytes; `len` is writable.
        unsafe {
            clangoffload_target_id_canonicalize(ptr(query).cast(), query.len(), buf, cap, len)
        }
    })
    .map_err(Fault::plain)
}

fn core_canonicalize(query: &[u8]) -> Result<Written, Fault> {
    Ok(written(
        core_target_id(query)?.canonical().to_string().into_bytes(),
    ))
}

fn c_target_is_compatible(code_object: &[u8], requested: &[u8]) -> Result<bool, Fault> {
    c_out(|out| {
        // SAFETY: both strings are readable for their lengths; `out` is
        // writable.
        unsafe {
            clangoffload_target_id_is_compatible(
                ptr(code_object).cast(),
                code_object.len(),
                ptr(requested).cast(),
                requested.len(),
                out,
            )
        }
    })
}

/// Each string is checked for UTF-8 and parsed before the next.
fn core_target_is_compatible(code_object: &[u8], requested: &[u8]) -> Result<bool, Fault> {
    let code_object = core_target_id(code_object)?;
    let requested = core_target_id(requested)?;
    Ok(code_object.is_compatible_with(&requested))
}

#[test]
fn target_ids() {
    let mut t = Tally::new("target IDs");
    let devices = device_queries();
    for query in devices {
        t.same(
            c_target_id_parse(query),
            core_target_id_parse(query),
            || format!("target_id_parse({})", show(query)),
        );
        t.same(c_canonicalize(query), core_canonicalize(query), || {
            format!("target_id_canonicalize({})", show(query))
        });
        for requested in devices {
            t.same(
                c_target_is_compatible(query, requested),
                core_target_is_compatible(query, requested),
                || {
                    format!(
                        "target_id_is_compatible({}, {})",
                        show(query),
                        show(requested)
                    )
                },
            );
        }
    }
    t.finish();
}

// ===========================================================================
// Compressed bundles
// ===========================================================================

/// A compressed bundle's header as either side gives it.
#[derive(Debug, Clone, PartialEq)]
struct HeaderRec {
    version: u16,
    method: u16,
    header_len: u32,
    total_size: Option<u64>,
    uncompressed_size: u64,
    hash: u64,
    container: View,
    compressed: View,
}

fn c_compressed_header(data: &[u8]) -> Result<HeaderRec, Fault> {
    c_out_err(|out, err| {
        // SAFETY: `data` is readable for its length; `out` and `err` are
        // writable.
        unsafe { clangoffload_compressed_parse(ptr(data), data.len(), out, err) }
    })
    .map(|h: clangoffload_compressed_header| HeaderRec {
        version: h.version,
        method: h.method,
        header_len: h.header_len,
        total_size: h.has_total_size.then_some(h.total_size),
        uncompressed_size: h.uncompressed_size,
        hash: h.hash,
        container: cview(h.container),
        compressed: cview(h.compressed),
    })
}

fn core_compressed_header(data: &[u8]) -> Result<HeaderRec, Fault> {
    let c = CompressedBundle::parse(data).map_err(|e| Fault::core(&e))?;
    Ok(HeaderRec {
        version: c.version(),
        method: c.method().raw(),
        header_len: c.header_len() as u32,
        total_size: c.total_size(),
        uncompressed_size: c.uncompressed_size(),
        hash: c.hash(),
        container: view(c.data()),
        compressed: view(c.compressed()),
    })
}

fn c_decompressed_size(data: &[u8], max: u64) -> Result<usize, Fault> {
    c_out_err(|out, err| {
        // SAFETY: `data` is readable for its length; `out` and `err` are
        // writable.
        unsafe { clangoffload_compressed_decompressed_size(ptr(data), data.len(), max, out, err) }
    })
}

/// `max` as the C ABI reads it: 0 is the default limit.
fn limits(max: u64) -> Limits {
    match max {
        CLANGOFFLOAD_DEFAULT_LIMIT => Limits::default(),
        max => Limits {
            max_uncompressed_size: max,
        },
    }
}

fn core_decompressed_size(data: &[u8], max: u64) -> Result<usize, Fault> {
    CompressedBundle::parse(data)
        .and_then(|c| c.check(&limits(max)))
        .map_err(|e| Fault::core(&e))
}

/// Decompression into a buffer of `cap` bytes: the output, or the fault; and
/// the length stored (the output's, or the size needed), if any.
type Decompressed = (Result<Vec<u8>, Fault>, Option<usize>);

fn c_decompress(data: &[u8], max: u64, flags: u32, cap: usize) -> Decompressed {
    let mut out = vec![0u8; cap];
    let mut len = usize::MAX;
    let mut err = blank_error();
    // SAFETY: `data` is readable for its length; `out` is writable for `cap`
    // bytes and apart from `data`; `len` and `err` are writable.
    let status = unsafe {
        clangoffload_compressed_decompress(
            ptr(data),
            data.len(),
            max,
            flags,
            out.as_mut_ptr(),
            cap,
            &mut len,
            &mut err,
        )
    };
    let stored = (len != usize::MAX).then_some(len);
    let result = c_outcome(status, &err).map(|()| out[..len].to_vec());
    (result, stored)
}

fn decompress_options(max: u64, flags: u32) -> DecompressOptions {
    DecompressOptions {
        limits: limits(max),
        verify_hash: flags & CLANGOFFLOAD_SKIP_HASH_CHECK == 0,
        ..DecompressOptions::default()
    }
}

fn core_decompress(data: &[u8], max: u64, flags: u32, cap: usize) -> Decompressed {
    let c = match CompressedBundle::parse(data) {
        Ok(c) => c,
        Err(e) => return (Err(Fault::core(&e)), None),
    };
    let mut out = vec![0u8; cap];
    match c.decompress_into(&mut out, &decompress_options(max, flags)) {
        Ok(n) => (Ok(out[..n].to_vec()), Some(n)),
        Err(e) => match e.kind() {
            ErrorKind::OutputTooSmall { needed, .. } => (
                Err(Fault::plain(clangoffload_status::BufferTooSmall)),
                Some(needed as usize),
            ),
            _ => (Err(Fault::core(&e)), None),
        },
    }
}

/// The core's allocating decompression, a second path to the same bytes.
fn core_decompress_vec(data: &[u8], max: u64, flags: u32) -> Result<Vec<u8>, Fault> {
    CompressedBundle::parse(data)
        .and_then(|c| c.decompress(&decompress_options(max, flags)))
        .map_err(|e| Fault::core(&e))
}

/// The largest output buffer a test call gets.
const MAX_CAP: u64 = 1 << 20;

/// The header, the size check under several limits, and decompression with
/// and without the hash check into a buffer of the declared size and one
/// byte short.
fn compare_compressed(t: &mut Tally, label: &str, data: &[u8]) {
    let header = core_compressed_header(data);
    t.same(c_compressed_header(data), header.clone(), || {
        format!("{label}: compressed_parse")
    });
    let size = header.map_or(0, |h| h.uncompressed_size);
    for max in [
        CLANGOFFLOAD_DEFAULT_LIMIT,
        size,
        size.saturating_sub(1).max(1),
    ] {
        t.same(
            c_decompressed_size(data, max),
            core_decompressed_size(data, max),
            || format!("{label}: compressed_decompressed_size(max {max})"),
        );
    }
    let full = size.min(MAX_CAP) as usize;
    for flags in [0, CLANGOFFLOAD_SKIP_HASH_CHECK] {
        for cap in [full, full.saturating_sub(1)] {
            let c = c_decompress(data, 0, flags, cap);
            t.same(&c, &core_decompress(data, 0, flags, cap), || {
                format!("{label}: compressed_decompress(flags {flags}, {cap}-byte buffer)")
            });
            if cap as u64 == size {
                t.same(c.0, core_decompress_vec(data, 0, flags), || {
                    format!("{label}: compressed_decompress(flags {flags}) against CompressedBundle::decompress")
                });
            }
        }
    }
}

#[test]
fn compressed_bundles() {
    let mut t = Tally::new("compressed bundles");
    for input in &corpus().compressed {
        compare_compressed(&mut t, &input.label, &input.data);
    }
    for input in everything() {
        let mut hash = 0u64;
        // SAFETY: `data` is readable for its length; `hash` is writable.
        let status =
            unsafe { clangoffload_truncated_md5(ptr(&input.data), input.data.len(), &mut hash) };
        t.same(
            (status, hash),
            (clangoffload_status::Ok, truncated_md5(&input.data)),
            || format!("{}: truncated_md5", input.label),
        );
    }
    t.finish();
}

/// A compressed bundle cut inside its header and stream, with its version,
/// method, sizes and hash changed and its stream damaged.
fn damaged_compressed(input: &Input) -> Vec<Input> {
    let data = &input.data;
    let len = data.len() as u64;
    let Ok(c) = CompressedBundle::parse(data) else {
        return Vec::new();
    };
    let (header, size) = (c.header_len(), c.uncompressed_size());
    let mut patches = vec![
        le16(4, 0),
        le16(4, 4),
        le16(4, u16::MAX),
        le16(6, 2),
        le16(6, u16::MAX),
    ];
    let small = |v: u64| v.min(u64::from(u32::MAX)) as u32;
    match c.version() {
        1 => patches.extend([le32(8, 0), le32(8, small(size + 1)), le32(8, u32::MAX)]),
        2 => patches.extend([
            le32(8, 0),
            le32(8, 23),
            le32(8, small(len + 1)),
            le32(8, u32::MAX),
            le32(12, 0),
            le32(12, small(size.saturating_sub(1))),
            le32(12, small(size + 1)),
            le32(12, u32::MAX),
        ]),
        _ => patches.extend([
            le64(8, 0),
            le64(8, 31),
            le64(8, len + 1),
            le64(8, u64::MAX),
            le64(16, 0),
            le64(16, size.saturating_sub(1)),
            le64(16, size + 1),
            le64(16, u64::MAX),
        ]),
    }
    patches.extend(flip(data, header - 8));
    patches.extend(flip(data, header));
    patches.extend(flip(data, header + (len - header) / 2));
    patches.extend(flip(data, len - 1));
    let cuts = around([4, 6, 8, 12, 16, 20, 24, 32, header + 4, len - 4]);
    damaged(&input.label, data, &cuts, &patches)
}

#[test]
fn damaged_compressed_bundles_give_the_core_errors() {
    let mut t = Tally::new("damaged compressed bundles");
    for input in corpus().compressed.iter().filter(|i| is_file(i)) {
        for variant in damaged_compressed(input) {
            compare_compressed(&mut t, &variant.label, &variant.data);
        }
    }
    t.finish();
}

// ===========================================================================
// Containers: the walk over containers back to back, and the scan
// ===========================================================================

fn container_kind(container: &Container<'_>) -> clangoffload_container_kind {
    match container {
        Container::Bundle(_) => clangoffload_container_kind::Bundle,
        Container::Compressed(_) => clangoffload_container_kind::Compressed,
        Container::OffloadBinary(_) => clangoffload_container_kind::OffloadBinary,
    }
}

type ContainerRec = (clangoffload_container_kind, u64, View);

/// The tag and name of each container kind are core's, for the same
/// kind; other numbers have none.
#[test]
fn container_kind_tags_and_names_are_cores() {
    let text = |b: clangoffload_bytes| {
        // SAFETY: a view of the library's static storage.
        let bytes = unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
        std::str::from_utf8(bytes).unwrap().to_string()
    };
    for (kind, file_kind) in [
        (
            clangoffload_container_kind::Bundle,
            clangoffload::FileKind::Bundle,
        ),
        (
            clangoffload_container_kind::Compressed,
            clangoffload::FileKind::CompressedBundle,
        ),
        (
            clangoffload_container_kind::OffloadBinary,
            clangoffload::FileKind::OffloadBinary,
        ),
        (
            clangoffload_container_kind::CudaFatbin,
            clangoffload::FileKind::CudaFatbin,
        ),
    ] {
        assert_eq!(u32::from(kind), kind as u32);
        let tag = text(clangoffload_container_kind_tag(kind as u32));
        assert_eq!(Some(tag.as_str()), file_kind.container_tag());
        assert_eq!(
            text(clangoffload_container_kind_name(kind as u32)),
            file_kind.name()
        );
    }
    for other in [0, 5, u32::MAX] {
        assert_eq!(clangoffload_container_kind_tag(other).len, 0);
        assert_eq!(clangoffload_container_kind_name(other).len, 0);
    }
}

/// The containers, the status that ended the walk and where the cursor was
/// left.
type Walk<T> = (Vec<T>, Fault, u64);

fn c_containers(data: &[u8]) -> Walk<ContainerRec> {
    let mut cursor = 0u64;
    let (found, end) = c_walk_until(data.len() + 1, || {
        c_out_err(|out, err| {
            // SAFETY: `data` is readable for its length; the cursor, `out`
            // and `err` are writable.
            unsafe { clangoffload_containers_next(ptr(data), data.len(), &mut cursor, out, err) }
        })
        .map(|c: clangoffload_container| (c.kind, c.offset, cview(c.data)))
    });
    (found, end, cursor)
}

fn core_containers(data: &[u8]) -> Walk<ContainerRec> {
    let mut found = Vec::new();
    for item in Containers::new(data) {
        match item {
            Ok((offset, c)) => found.push((container_kind(&c), offset, view(c.data()))),
            Err(e) => return (found, Fault::core(&e), data.len() as u64),
        }
    }
    (
        found,
        Fault::plain(clangoffload_status::End),
        data.len() as u64,
    )
}

/// A scan hit: kind, status, offset and (for a valid container) its bytes.
type Hit = (clangoffload_container_kind, u32, u64, Option<View>);

fn c_scan(data: &[u8], flags: u32) -> Walk<Hit> {
    let mut cursor = clangoffload_scan_cursor::default();
    let (hits, end) = c_walk_until(data.len() + 1, || {
        c_out(|out| {
            // SAFETY: `data` is readable for its length; the cursor and
            // `out` are writable.
            unsafe { clangoffload_scan_cursor_next(ptr(data), data.len(), flags, &mut cursor, out) }
        })
        .map(|h: clangoffload_scan_hit| {
            let valid = h.status == clangoffload_status::Ok as u32;
            (h.kind, h.status, h.offset, valid.then(|| cview(h.data)))
        })
    });
    (hits, end, cursor.offset)
}

fn core_scan(data: &[u8], flags: u32) -> Walk<Hit> {
    let by_magic = |offset: u64| {
        let rest = &data[offset as usize..];
        if rest.starts_with(clangoffload::compressed::COMPRESSED_MAGIC) {
            clangoffload_container_kind::Compressed
        } else if rest.starts_with(clangoffload::cuda_fatbin::FATBIN_MAGIC_BYTES) {
            clangoffload_container_kind::CudaFatbin
        } else if rest.starts_with(clangoffload::bundle::BUNDLE_MAGIC) {
            clangoffload_container_kind::Bundle
        } else {
            clangoffload_container_kind::OffloadBinary
        }
    };
    let hits = scan(data)
        .filter_map(|found| match found {
            Found::Container(offset, c) => {
                Some((container_kind(&c), 0, offset, Some(view(c.data()))))
            }
            Found::CudaFatbin(offset, f) => Some((
                clangoffload_container_kind::CudaFatbin,
                0,
                offset,
                Some(view(f.data())),
            )),
            Found::Rejected(offset, e) if flags & CLANGOFFLOAD_SCAN_REJECTED != 0 => Some((
                by_magic(offset),
                clangoffload_status::from(e.kind()) as u32,
                offset,
                None,
            )),
            Found::Rejected(..) => None,
        })
        .collect();
    (
        hits,
        Fault::plain(clangoffload_status::End),
        data.len() as u64,
    )
}

#[test]
fn containers_and_scans() {
    let mut t = Tally::new("containers and scans");
    for input in everything() {
        let (label, data) = (&input.label, &input.data[..]);
        t.same(c_containers(data), core_containers(data), || {
            format!("{label}: the walk by containers_next")
        });
        for flags in [0, CLANGOFFLOAD_SCAN_REJECTED] {
            t.same(c_scan(data, flags), core_scan(data, flags), || {
                format!("{label}: the scan by scan_next (flags {flags})")
            });
        }
    }
    t.finish();
}

// ===========================================================================
// OffloadBinaries
// ===========================================================================

/// One entry of an OffloadBinaries handle: the record, every string by
/// index (and the refusal past the last), and the value of every key it has
/// and of a few it may not have.
#[derive(Debug, Clone, PartialEq)]
struct OffloadRec {
    binary_index: usize,
    binary_offset: u64,
    version: u32,
    compressed: bool,
    kinds: (u16, u16, u32),
    image: Span,
    image_offset: u64,
    string_count: u64,
    triple: Span,
    arch: Span,
    strings: Vec<Result<(Span, Span), Fault>>,
    lookups: Vec<(Vec<u8>, Result<Span, Fault>)>,
}

/// Keys every entry is asked for, besides its own.
const KEYS: &[&[u8]] = &[b"triple", b"arch", b"kind", b"feature", b"nope", b""];
/// Strings read by index, at most.
const MAX_STRINGS: u64 = 1 << 12;

fn keys_of(strings: &[Result<(Span, Span), Fault>]) -> Vec<Vec<u8>> {
    let own = strings.iter().flatten().map(|(key, _)| key.bytes.clone());
    let keys: BTreeSet<Vec<u8>> = KEYS.iter().map(|k| k.to_vec()).chain(own).collect();
    keys.into_iter().collect()
}

fn core_offload_rec(
    (binary_index, binary_offset): (usize, u64),
    binary: &OffloadBinary<'_>,
    compressed: bool,
    entry: &OffloadEntry<'_>,
) -> OffloadRec {
    let borrowed = !compressed;
    let strings: Vec<_> = (0..=entry.string_count().min(MAX_STRINGS))
        .map(|i| {
            entry
                .string_at(i)
                .map(|s| (span(s.key, borrowed), span(s.value, borrowed)))
                .ok_or(Fault::plain(clangoffload_status::IndexOutOfRange))
        })
        .collect();
    let lookups = keys_of(&strings)
        .into_iter()
        .map(|key| {
            let value = entry
                .string(&key)
                .map(|v| span(v, borrowed))
                .ok_or(Fault::plain(clangoffload_status::NotFound));
            (key, value)
        })
        .collect();
    OffloadRec {
        binary_index,
        binary_offset,
        version: binary.version(),
        compressed,
        kinds: (
            entry.image_kind().raw(),
            entry.offload_kind().raw(),
            entry.flags(),
        ),
        image: span(entry.image(), borrowed),
        image_offset: entry.image_offset(),
        string_count: entry.string_count(),
        triple: span(entry.triple().unwrap_or_default(), borrowed),
        arch: span(entry.arch().unwrap_or_default(), borrowed),
        strings,
        lookups,
    }
}

/// The entries of every binary up to the first damaged one, and its error
/// (for a compressed binary, at the binary's offset plus the error's).
fn core_offload(data: &[u8], max: u64) -> Checked<OffloadRec> {
    let options = DecompressOptions {
        limits: limits(max),
        ..DecompressOptions::default()
    };
    let mut recs = Vec::new();
    for (index, found) in binaries(data).enumerate() {
        let (offset, binary) = match found {
            Ok(found) => found,
            Err(e) => return (recs, Some(Fault::core(&e))),
        };
        let at = (index, offset);
        if binary.is_compressed() {
            let inflated = match binary.decompress(&options) {
                Ok(inflated) => inflated,
                Err(e) => return (recs, Some(Fault::core(&e.shifted(offset)))),
            };
            let inner = match OffloadBinary::parse(&inflated) {
                Ok(inner) => inner,
                Err(e) => return (recs, Some(Fault::core(&e.shifted(offset)))),
            };
            recs.extend(
                inner
                    .entries()
                    .map(|e| core_offload_rec(at, &inner, true, &e)),
            );
        } else {
            recs.extend(
                binary
                    .entries()
                    .map(|e| core_offload_rec(at, &binary, false, &e)),
            );
        }
    }
    (recs, None)
}

type OffloadHandle<'a> = Handle<'a, clangoffload_offload_binaries>;

fn c_offload(data: &[u8], max: u64, flags: u32) -> Result<OffloadHandle<'_>, Fault> {
    c_handle(data, clangoffload_offload_binaries_free, |out, err| {
        // SAFETY: `data` is readable for its length and outlives the handle;
        // `out` and `err` are writable.
        unsafe { clangoffload_offload_binaries_parse(ptr(data), data.len(), max, flags, out, err) }
    })
}

fn c_offload_rec(h: &OffloadHandle<'_>, index: usize, e: clangoffload_offload_entry) -> OffloadRec {
    // SAFETY: the views of a live handle's entry borrow the input or the
    // handle, both alive while `h` is.
    let span = |bytes| unsafe { cspan(bytes, e.compressed == 0) };
    let strings: Vec<_> = (0..=e.string_count.min(MAX_STRINGS))
        .map(|i| {
            // SAFETY: a live handle; `out` is writable.
            c_out(|out| unsafe { clangoffload_offload_binaries_get_string(h.ptr, index, i, out) })
                .map(|s: clangoffload_string_pair| (span(s.key), span(s.value)))
        })
        .collect();
    let lookups = keys_of(&strings)
        .into_iter()
        .map(|key| {
            let value = c_out(|out| {
                // SAFETY: a live handle; `key` is readable for its length;
                // `out` is writable.
                unsafe {
                    clangoffload_offload_binaries_find_string(
                        h.ptr,
                        index,
                        ptr(&key),
                        key.len(),
                        out,
                    )
                }
            });
            (key, value.map(span))
        })
        .collect();
    OffloadRec {
        binary_index: e.binary_index,
        binary_offset: e.binary_offset,
        version: e.version,
        compressed: e.compressed != 0,
        kinds: (e.image_kind, e.offload_kind, e.flags),
        image: span(e.image),
        image_offset: e.image_offset,
        string_count: e.string_count,
        triple: span(e.triple),
        arch: span(e.arch),
        strings,
        lookups,
    }
}

fn c_offload_contents(h: &OffloadHandle<'_>) -> Contents<OffloadRec> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_offload_binaries_entry_count(h.ptr) };
    let entries = c_indexed(
        count,
        // SAFETY: a live handle; `out` is writable.
        |i, out| unsafe { clangoffload_offload_binaries_get_entry(h.ptr, i, out) },
        |e| e,
    )
    .into_iter()
    .enumerate()
    .map(|(i, e)| e.map(|e| c_offload_rec(h, i, e)))
    .collect();
    // SAFETY: a live handle; `err` is writable.
    let fault =
        c_out_err(|_: *mut (), err| unsafe { clangoffload_offload_binaries_fault(h.ptr, err) });
    (entries, fault)
}

fn compare_offload(t: &mut Tally, label: &str, data: &[u8]) {
    for max in [CLANGOFFLOAD_DEFAULT_LIMIT, 64] {
        compare_handles(
            t,
            &format!("{label}: offload_binaries_parse(max {max})"),
            |flags| c_offload(data, max, flags),
            c_offload_contents,
            core_offload(data, max),
        );
    }
}

#[test]
fn offload_binaries() {
    let mut t = Tally::new("OffloadBinaries");
    for input in &corpus().offload {
        compare_offload(&mut t, &input.label, &input.data);
    }
    t.finish();
}

/// OffloadBinaries cut inside headers, entry tables and strings, with their
/// version, size, table offset, entry count and each entry's string and
/// image fields changed.
fn damaged_offload(input: &Input) -> Vec<Input> {
    let data = &input.data;
    let len = data.len() as u64;
    let (mut fields, mut patches) = (Vec::new(), Vec::new());
    for (offset, binary) in binaries(data).map_while(Result::ok) {
        let table = offset + binary.entries_offset();
        let end = offset + binary.size();
        fields.extend([offset + 8, offset + 32, offset + 40, table, table + 40, end]);
        patches.extend([
            le32(offset + 4, 0),
            le32(offset + 4, 9),
            le64(offset + 8, 0),
            le64(offset + 8, 31),
            le64(offset + 8, len + 1),
            le64(offset + 8, u64::MAX),
            le64(offset + 16, 0),
            le64(offset + 16, len),
            le64(offset + 16, u64::MAX),
            le64(offset + 24, 1000),
            le64(offset + 24, u64::MAX),
        ]);
        patches.extend(flip(data, end - 1));
        if binary.is_compressed() {
            patches.extend(flip(data, end - 2));
            continue;
        }
        let records = if binary.version() == 1 {
            1
        } else {
            binary.entry_count()
        };
        for i in 0..records.min(16) {
            let record = table + 40 * i;
            patches.extend([
                le64(record + 8, len),
                le64(record + 8, u64::MAX),
                le64(record + 16, 1000),
                le64(record + 16, u64::MAX),
                le64(record + 24, len),
                le64(record + 24, u64::MAX),
                le64(record + 32, len + 1),
                le64(record + 32, u64::MAX),
            ]);
        }
    }
    damaged(&input.label, data, &around(fields), &patches)
}

#[test]
fn damaged_offload_binaries_give_the_core_errors() {
    let mut t = Tally::new("damaged OffloadBinaries");
    for input in corpus().offload.iter() {
        for variant in damaged_offload(input) {
            compare_offload(&mut t, &variant.label, &variant.data);
        }
    }
    t.finish();
}

// ===========================================================================
// Text bundles
// ===========================================================================

const COMMENTS: [(u32, Comment); 3] = [
    (CLANGOFFLOAD_COMMENT_DOUBLE_SLASH, Comment::DoubleSlash),
    (CLANGOFFLOAD_COMMENT_HASH, Comment::Hash),
    (CLANGOFFLOAD_COMMENT_SEMICOLON, Comment::Semicolon),
];

#[derive(Debug, Clone, PartialEq)]
struct TextRec {
    id: View,
    payload: View,
    offset: u64,
    start_offset: u64,
    end_offset: u64,
}

type TextHandle<'a> = Handle<'a, clangoffload_text_bundle>;

fn c_text_bundle(data: &[u8], comment: u32, flags: u32) -> Result<TextHandle<'_>, Fault> {
    c_handle(data, clangoffload_text_bundle_free, |out, err| {
        // SAFETY: `data` is readable for its length and outlives the handle;
        // `out` and `err` are writable.
        unsafe { clangoffload_text_bundle_parse(ptr(data), data.len(), comment, flags, out, err) }
    })
}

fn c_text_contents(h: &TextHandle<'_>) -> Contents<TextRec> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_text_bundle_entry_count(h.ptr) };
    let entries = c_indexed(
        count,
        // SAFETY: a live handle; `out` is writable.
        |i, out| unsafe { clangoffload_text_bundle_get_entry(h.ptr, i, out) },
        |e: clangoffload_text_bundle_entry| TextRec {
            id: cview(e.id),
            payload: cview(e.payload),
            offset: e.offset,
            start_offset: e.start_offset,
            end_offset: e.end_offset,
        },
    );
    // SAFETY: a live handle; `err` is writable.
    let fault = c_out_err(|_: *mut (), err| unsafe { clangoffload_text_bundle_fault(h.ptr, err) });
    (entries, fault)
}

fn core_text(data: &[u8], comment: Comment) -> Checked<TextRec> {
    split(TextBundle::parse_lenient(data, comment).entries(), |e| {
        TextRec {
            id: view(e.id()),
            payload: view(e.payload()),
            offset: e.offset(),
            start_offset: e.start_offset(),
            end_offset: e.end_offset(),
        }
    })
}

/// A format read through a handle: the strict parse fails at the first
/// fault, the lenient one keeps it; both hold the good records.
/// `c_parse(flags)` and `c_contents` read the C side; `core` is the core's
/// records and first fault.
fn compare_handles<H, T: Clone + PartialEq + Debug>(
    t: &mut Tally,
    what: &str,
    mut c_parse: impl FnMut(u32) -> Result<H, Fault>,
    c_contents: impl Fn(&H) -> Contents<T>,
    (records, fault): Checked<T>,
) {
    let strict = c_parse(0);
    t.same(strict.as_ref().err(), fault.as_ref(), || {
        format!("{what}, strict")
    });
    if let Ok(h) = strict {
        t.same(c_contents(&h), (with_end(records.clone()), Ok(())), || {
            format!("{what}, strict: the records")
        });
    }
    match c_parse(CLANGOFFLOAD_PARSE_LENIENT) {
        Ok(h) => t.same(c_contents(&h), (with_end(records), kept(fault)), || {
            format!("{what}, lenient: the records and the fault")
        }),
        Err(f) => t.same(Err(f), Ok(()), || format!("{what}, lenient")),
    }
}

#[test]
fn text_bundles() {
    let mut t = Tally::new("text bundles");
    for input in &corpus().text {
        compare_text(&mut t, &input.label, &input.data, &COMMENTS);
    }
    for name in [
        "i", "ii", "cui", "hipi", "d", "ll", "s", "o", "a", "bc", "", "I", "s ",
    ] {
        let c = c_out(|out| {
            // SAFETY: `name` is readable for its length; `out` is writable.
            unsafe { clangoffload_text_comment_for_type(ptr(name.as_bytes()), name.len(), out) }
        });
        let core = Comment::for_file_type(name)
            .map(|comment| COMMENTS.iter().find(|(_, c)| *c == comment).unwrap().0)
            .ok_or(Fault::plain(clangoffload_status::NotFound));
        t.same(c, core, || format!("text_comment_for_type({name:?})"));
    }
    t.finish();
}

fn compare_text(t: &mut Tally, label: &str, data: &[u8], comments: &[(u32, Comment)]) {
    for &(kind, comment) in comments {
        compare_handles(
            t,
            &format!("{label}: text_bundle_parse(comment {kind})"),
            |flags| c_text_bundle(data, kind, flags),
            c_text_contents,
            core_text(data, comment),
        );
    }
}

/// A text bundle cut around its markers, with marker and ID bytes changed.
fn damaged_text(input: &Input) -> Vec<(Input, u32, Comment)> {
    let data = &input.data;
    let Some(comment) = Comment::detect(data) else {
        return Vec::new();
    };
    let kind = COMMENTS.iter().find(|(_, c)| *c == comment).unwrap().0;
    let (mut fields, mut patches) = (Vec::new(), Vec::new());
    for e in TextBundle::parse_lenient(data, comment)
        .entries()
        .map_while(Result::ok)
    {
        fields.extend([
            e.start_offset() + 2,
            e.offset(),
            e.end_marker_offset(),
            e.end_offset(),
        ]);
        for at in [
            e.start_offset() + 4,
            e.offset() - 2,
            e.end_marker_offset() + 5,
            e.end_offset() - 2,
        ] {
            patches.extend(flip(data, at));
        }
        patches.push((e.start_offset() as usize, b"x".to_vec()));
    }
    damaged(&input.label, data, &around(fields), &patches)
        .into_iter()
        .map(|v| (v, kind, comment))
        .collect()
}

#[test]
fn damaged_text_bundles_give_the_core_errors() {
    let mut t = Tally::new("damaged text bundles");
    for input in &corpus().text {
        for (variant, kind, comment) in damaged_text(input) {
            compare_text(&mut t, &variant.label, &variant.data, &[(kind, comment)]);
        }
    }
    t.finish();
}

// ===========================================================================
// Object bundles, offload sections and AMDGPU targets of ELF files
// ===========================================================================

#[derive(Debug, Clone, PartialEq)]
struct ObjectRec {
    id: View,
    payload: View,
    offset: u64,
    section_index: u32,
    host_marker: bool,
}

type ObjectHandle<'a> = Handle<'a, clangoffload_object_bundle>;

fn c_object(data: &[u8], flags: u32) -> Result<ObjectHandle<'_>, Fault> {
    c_handle(data, clangoffload_object_bundle_free, |out, err| {
        // SAFETY: `data` is readable for its length and outlives the handle;
        // `out` and `err` are writable.
        unsafe { clangoffload_object_bundle_parse(ptr(data), data.len(), flags, out, err) }
    })
}

fn c_object_contents(h: &ObjectHandle<'_>) -> Contents<ObjectRec> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_object_bundle_entry_count(h.ptr) };
    let entries = c_indexed(
        count,
        // SAFETY: a live handle; `out` is writable.
        |i, out| unsafe { clangoffload_object_bundle_get_entry(h.ptr, i, out) },
        |e: clangoffload_object_bundle_entry| ObjectRec {
            id: cview(e.id),
            payload: cview(e.payload),
            offset: e.offset,
            section_index: e.section_index,
            host_marker: e.host_marker != 0,
        },
    );
    // SAFETY: a live handle; `err` is writable.
    let fault =
        c_out_err(|_: *mut (), err| unsafe { clangoffload_object_bundle_fault(h.ptr, err) });
    (entries, fault)
}

/// The object without its bundle sections, or why not.
type HostObject = Result<Vec<u8>, Fault>;

fn c_host_object(h: &ObjectHandle<'_>) -> HostObject {
    // SAFETY: a live handle; `out` and `err` are writable.
    c_buffer(|out, err| unsafe { clangoffload_object_bundle_host_object(h.ptr, out, err) })
}

/// The object bundle's entries (errors for single sections do not end
/// them) and, for an object that parses, the host object.
fn core_object(data: &[u8]) -> Result<(Checked<ObjectRec>, HostObject), Fault> {
    let object = ObjectBundle::parse(data).map_err(|e| Fault::core(&e))?;
    let entries = split(object.entries(), |e| ObjectRec {
        id: view(e.id()),
        payload: view(e.payload()),
        offset: e.offset(),
        section_index: e.section().index(),
        host_marker: e.is_host_marker(),
    });
    Ok((entries, object.host_object().map_err(|e| Fault::core(&e))))
}

type SectionRec = (clangoffload_section_kind, u32, View, View, u64);

fn section_kind(kind: SectionKind) -> clangoffload_section_kind {
    match kind {
        SectionKind::OffloadBinaries => clangoffload_section_kind::OffloadBinaries,
        SectionKind::HipFatbin => clangoffload_section_kind::HipFatbin,
        SectionKind::NvFatbin => clangoffload_section_kind::NvFatbin,
        SectionKind::BundleEntry => clangoffload_section_kind::BundleEntry,
        SectionKind::HipWrappers => clangoffload_section_kind::HipWrappers,
        SectionKind::CudaWrappers => clangoffload_section_kind::CudaWrappers,
        SectionKind::NvRelFatbin => clangoffload_section_kind::NvRelFatbin,
    }
}

/// Every step of the offload-section walk, going on after errors, and the
/// status that ended it.
type SectionWalk = (Vec<Result<SectionRec, Fault>>, Fault);

fn c_sections(data: &[u8]) -> SectionWalk {
    let mut index = 0u32;
    c_walk_until(usize::from(u16::MAX) + 2, || {
        let step = c_out_err(|out, err| {
            // SAFETY: `data` is readable for its length; `index`, `out` and
            // `err` are writable.
            unsafe {
                clangoffload_elf_offload_section_next(ptr(data), data.len(), &mut index, out, err)
            }
        });
        match step {
            Err(end) if end.status == clangoffload_status::End => Err(end),
            step => Ok(step.map(|s: clangoffload_offload_section| {
                (
                    s.kind,
                    s.section_index,
                    cview(s.name),
                    cview(s.data),
                    s.offset,
                )
            })),
        }
    })
}

fn core_sections(data: &[u8]) -> SectionWalk {
    let end = Fault::plain(clangoffload_status::End);
    let elf = match ObjectFile::parse(data) {
        Ok(elf) => elf,
        Err(e) => return (vec![Err(Fault::core(&e))], end),
    };
    let steps = (1..elf.section_end())
        .filter_map(|i| match elf.section(i) {
            Err(e) => Some(Err(Fault::core(&e))),
            Ok(s) => SectionKind::of(&s).map(|kind| {
                Ok((
                    section_kind(kind),
                    i,
                    view(s.name()),
                    view(s.data()),
                    s.offset(),
                ))
            }),
        })
        .collect();
    (steps, end)
}

fn c_amdgpu_target(data: &[u8]) -> Result<Written, Fault> {
    let mut err = blank_error();
    c_text(|buf, cap, len| {
        // SAFETY: `data` is readable for its length; `buf` is NULL or
        // writable for `cap` bytes; `len` and `err` are writable.
        unsafe { clangoffload_amdgpu_target_id(ptr(data), data.len(), buf, cap, len, &mut err) }
    })
    .map_err(|status| c_fault(status, &err))
}

fn core_amdgpu_target(data: &[u8]) -> Result<Written, Fault> {
    let elf = ElfFile::parse(data).map_err(|e| Fault::core(&e))?;
    AmdgpuTarget::from_header(elf.header())
        .map(|target| written(target.to_string().into_bytes()))
        .ok_or(Fault::plain(clangoffload_status::NotFound))
}

fn compare_elf(t: &mut Tally, label: &str, data: &[u8]) {
    match core_object(data) {
        Err(fault) => {
            for flags in [0, CLANGOFFLOAD_PARSE_LENIENT] {
                t.same(c_object(data, flags).err(), Some(fault.clone()), || {
                    format!("{label}: object_bundle_parse(flags {flags})")
                });
            }
        }
        Ok((entries, host)) => {
            compare_handles(
                t,
                &format!("{label}: object_bundle_parse"),
                |flags| c_object(data, flags),
                c_object_contents,
                entries,
            );
            if let Ok(h) = c_object(data, CLANGOFFLOAD_PARSE_LENIENT) {
                t.same(c_host_object(&h), host, || {
                    format!("{label}: object_bundle_host_object")
                });
            }
        }
    }
    t.same(c_sections(data), core_sections(data), || {
        format!("{label}: the walk by elf_offload_section_next")
    });
    t.same(c_amdgpu_target(data), core_amdgpu_target(data), || {
        format!("{label}: amdgpu_target_id")
    });
}

#[test]
fn elf_files() {
    let mut t = Tally::new("ELF files");
    for input in &corpus().elf {
        compare_elf(&mut t, &input.label, &input.data);
    }
    t.finish();
}

/// Where a little-endian ELF file's section table fields are: in the file
/// header (`e_*`) and in a section header (`sh_*`), and how wide the
/// address-sized ones (`e_shoff`, `sh_offset`, `sh_size`) are.
struct ElfLayout {
    width: usize,
    e_shoff: u64,
    e_shentsize: u64,
    e_shnum: u64,
    e_shstrndx: u64,
    sh_offset: u64,
    sh_size: u64,
}

const ELF64: ElfLayout = ElfLayout {
    width: 8,
    e_shoff: 0x28,
    e_shentsize: 0x3A,
    e_shnum: 0x3C,
    e_shstrndx: 0x3E,
    sh_offset: 0x18,
    sh_size: 0x20,
};

const ELF32: ElfLayout = ElfLayout {
    width: 4,
    e_shoff: 0x20,
    e_shentsize: 0x2E,
    e_shnum: 0x30,
    e_shstrndx: 0x32,
    sh_offset: 0x10,
    sh_size: 0x14,
};

/// An ELF file cut inside its header and section table, with its section
/// table's place and size changed, and each offload section's name, offset
/// and size.
fn damaged_elf(input: &Input) -> Vec<Input> {
    let data = &input.data;
    let len = data.len() as u64;
    let layout = match data.get(4..6) {
        Some([2, 1]) => &ELF64,
        Some([1, 1]) => &ELF32,
        _ => return Vec::new(),
    };
    let Ok(elf) = ElfFile::parse(data) else {
        return Vec::new();
    };
    let read = |at: u64, n: usize| {
        let mut bytes = [0u8; 8];
        bytes[..n].copy_from_slice(&data[at as usize..at as usize + n]);
        u64::from_le_bytes(bytes)
    };
    let word = |at: u64, value: u64| (at as usize, value.to_le_bytes()[..layout.width].to_vec());
    let shoff = read(layout.e_shoff, layout.width);
    let entsize = read(layout.e_shentsize, 2);
    let shnum = u64::from(elf.section_count());
    let mut fields = vec![16, 52, 64, shoff, shoff + entsize * shnum];
    let mut patches = vec![
        word(layout.e_shoff, len),
        word(layout.e_shoff, u64::MAX),
        le16(layout.e_shnum, u16::MAX),
        le16(layout.e_shnum, 0),
        le16(layout.e_shstrndx, 0xfffe),
        le16(layout.e_shstrndx, shnum as u16),
        le16(layout.e_shentsize, 1),
    ];
    for found in offload_sections(&ObjectFile::Elf(elf)).flatten() {
        let header = shoff + entsize * u64::from(found.section.index());
        let (offset, size) = (found.section.offset(), found.section.data().len() as u64);
        fields.extend([header, offset, offset + size]);
        patches.extend([
            le32(header, u32::MAX),
            word(header + layout.sh_offset, len),
            word(header + layout.sh_offset, u64::MAX),
            word(header + layout.sh_size, len + 1),
            word(header + layout.sh_size, u64::MAX),
        ]);
    }
    damaged(&input.label, data, &around(fields), &patches)
}

#[test]
fn damaged_elf_files_give_the_core_errors() {
    let mut t = Tally::new("damaged ELF files");
    for input in corpus().elf.iter().filter(|i| is_file(i)) {
        for variant in damaged_elf(input) {
            compare_elf(&mut t, &variant.label, &variant.data);
        }
    }
    t.finish();
}

// ===========================================================================
// Archives
// ===========================================================================

#[derive(Debug, Clone, PartialEq)]
struct MemberRec {
    name: View,
    data: View,
    header_offset: u64,
    data_offset: u64,
}

type ArchiveHandle<'a> = Handle<'a, clangoffload_archive>;

fn c_archive(data: &[u8]) -> Result<ArchiveHandle<'_>, Fault> {
    c_handle(data, clangoffload_archive_free, |out, err| {
        // SAFETY: `data` is readable for its length and outlives the handle;
        // `out` and `err` are writable.
        unsafe { clangoffload_archive_parse(ptr(data), data.len(), out, err) }
    })
}

fn c_archive_contents(h: &ArchiveHandle<'_>) -> Contents<MemberRec> {
    // SAFETY: a live handle.
    let count = unsafe { clangoffload_archive_member_count(h.ptr) };
    let members = c_indexed(
        count,
        // SAFETY: a live handle; `out` is writable.
        |i, out| unsafe { clangoffload_archive_get_member(h.ptr, i, out) },
        |m: clangoffload_archive_member| MemberRec {
            name: cview(m.name),
            data: cview(m.data),
            header_offset: m.header_offset,
            data_offset: m.data_offset,
        },
    );
    // SAFETY: a live handle; `err` is writable.
    let fault = c_out_err(|_: *mut (), err| unsafe { clangoffload_archive_fault(h.ptr, err) });
    (members, fault)
}

fn core_archive(data: &[u8]) -> Result<Contents<MemberRec>, Fault> {
    let archive = Archive::parse(data).map_err(|e| Fault::core(&e))?;
    let (members, fault) = split(archive.members(), |m| MemberRec {
        name: view(m.name()),
        data: view(m.data()),
        header_offset: m.header_offset(),
        data_offset: m.data_offset(),
    });
    Ok((with_end(members), kept(fault)))
}

fn c_device_member_name(member: &[u8], entry_id: &[u8]) -> Result<Written, Fault> {
    c_text(|buf, cap, len| {
        // SAFETY: both strings are readable for their lengths; `buf` is NULL
        // or writable for `cap` bytes; `len` is writable.
        unsafe {
            clangoffload_device_member_name(
                ptr(member),
                member.len(),
                ptr(entry_id).cast(),
                entry_id.len(),
                buf,
                cap,
                len,
            )
        }
    })
    .map_err(Fault::plain)
}

fn core_device_member_name(member: &[u8], entry_id: &[u8]) -> Result<Written, Fault> {
    let entry_id = std::str::from_utf8(entry_id)
        .map_err(|_| Fault::plain(clangoffload_status::InvalidUtf8))?;
    Ok(written(device_member_name(member, entry_id)))
}

fn compare_archive(t: &mut Tally, label: &str, data: &[u8], entry_ids: &[&[u8]]) {
    let core = core_archive(data);
    let c = c_archive(data);
    t.same(c.as_ref().err(), core.as_ref().err(), || {
        format!("{label}: archive_parse")
    });
    let (Ok(h), Ok(core)) = (c, core) else {
        return;
    };
    let contents = c_archive_contents(&h);
    let names = Archive::parse(data).map(|a| {
        a.members()
            .map_while(Result::ok)
            .map(|m| m.name())
            .collect()
    });
    for name in names.unwrap_or_else(|_| Vec::new()) {
        for entry_id in entry_ids {
            t.same(
                c_device_member_name(name, entry_id),
                core_device_member_name(name, entry_id),
                || {
                    format!(
                        "{label}: device_member_name({}, {})",
                        show(name),
                        show(entry_id)
                    )
                },
            );
        }
    }
    t.same(contents, core, || {
        format!("{label}: the members and the fault")
    });
}

const MEMBER_IDS: &[&[u8]] = &[
    b"hip-amdgcn-amd-amdhsa--gfx906",
    b"openmp-amdgcn-amd-amdhsa--gfx90a:xnack+",
    b"host-x86_64-unknown-linux-gnu",
    b"x",
    b"hip-amdgcn-amd-amdhsa--gfx9\xff6",
];

#[test]
fn archives() {
    let mut t = Tally::new("archives");
    for input in corpus().archives.iter().chain(&corpus().bundles) {
        compare_archive(&mut t, &input.label, &input.data, MEMBER_IDS);
    }
    t.finish();
}

/// An archive cut around its member headers, with each header's size,
/// terminator and name changed (long-name and BSD references out of range).
fn damaged_archive(input: &Input) -> Vec<Input> {
    let data = &input.data;
    let Ok(archive) = Archive::parse(data) else {
        return Vec::new();
    };
    let mut headers: Vec<u64> = vec![8];
    headers.extend(archive.long_names().map(|m| m.header_offset()));
    headers.extend(
        archive
            .members()
            .map_while(Result::ok)
            .map(|m| m.header_offset()),
    );
    let mut fields = Vec::new();
    let mut patches = Vec::new();
    for &h in &headers {
        fields.extend([h, h + 16, h + 48, h + 58, h + 60]);
        let at = h as usize;
        patches.extend([
            (at + 48, b"9999999999".to_vec()),
            (at + 48, b"12x4567890".to_vec()),
            (at + 58, b"xx".to_vec()),
            (at, b"/99999          ".to_vec()),
            (at, b"#1/99999        ".to_vec()),
        ]);
    }
    damaged(&input.label, data, &around(fields), &patches)
}

#[test]
fn damaged_archives_give_the_core_errors() {
    let mut t = Tally::new("damaged archives");
    for input in corpus().archives.iter().filter(|i| is_file(i)) {
        for variant in damaged_archive(input) {
            compare_archive(&mut t, &variant.label, &variant.data, &[]);
        }
    }
    t.finish();
}
