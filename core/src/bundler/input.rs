//! How the bundler reads an input: its containers in order (one, or several
//! back to back as in a linked `.hip_fatbin`), compressed ones decompressed
//! once, each under the size limit, their hash checked as the policy says.
//! A job that needs only entry tables (listing, choosing what to unbundle)
//! decodes each compressed bundle only as far as its table reaches, and
//! then whole only the containers it writes from ([`fill`]).

use alloc::vec::Vec;
use core::ops::Range;

use super::{BundlerError, Decoding, FileType, Note, Observer, Place, Warning};
use crate::bundler::error::CompressedProblem;
use crate::bytes::to_u64;
use crate::compressed::DecompressOptions;
use crate::container::{Container, Containers};
use crate::object_bundle::ObjectBundle;
use crate::text_bundle::{Comment, TextBundle};
use crate::{Bundle, ErrorKind, FileKind, Limits};

/// What decoding a compressed bundle found: LLVM's `-verbose` report of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedContainer {
    /// Its offset in the input.
    pub offset: u64,
    /// The header version.
    pub version: u16,
    /// The compression method's raw value.
    pub method: u16,
    /// The total size the header gives (versions 2 and 3).
    pub total_size: Option<u64>,
    /// The compressed stream's size.
    pub compressed_size: u64,
    /// The decompressed size.
    pub uncompressed_size: u64,
    /// The stored hash.
    pub stored_hash: u64,
    /// The hash of the decoded bytes, if it was computed.
    pub computed_hash: Option<u64>,
}

/// One container of an input, ready to be read as a bundle.
#[derive(Debug)]
pub(crate) struct Loaded<'data> {
    /// Offset of the container in the input.
    pub(crate) offset: u64,
    /// Where its bundle bytes are.
    pub(crate) bytes: LoadedBytes<'data>,
}

#[derive(Debug)]
pub(crate) enum LoadedBytes<'data> {
    /// A plain bundle, borrowed from the input.
    Input(&'data [u8]),
    /// A compressed bundle's decompressed bytes: a buffer of the plan.
    Decompressed(usize),
    /// A compressed bundle's header and entry table only: a buffer of the
    /// plan, until [`fill`] decodes it whole into the same buffer.
    Table {
        buffer: usize,
        compressed: crate::CompressedBundle<'data>,
    },
}

/// Decompressed buffers, kept until the job ends.
pub(crate) type Buffers = Vec<Vec<u8>>;

impl<'data> Loaded<'data> {
    /// The uncompressed bundle's bytes.
    pub(crate) fn bytes<'a>(&'a self, buffers: &'a Buffers) -> &'a [u8] {
        match self.bytes {
            LoadedBytes::Input(data) => data,
            LoadedBytes::Decompressed(i) | LoadedBytes::Table { buffer: i, .. } => {
                buffers.get(i).map_or(&[][..], Vec::as_slice)
            }
        }
    }

    /// The uncompressed bundle's length (a table's bundle is longer than
    /// the table).
    pub(crate) fn len(&self, buffers: &Buffers) -> usize {
        match self.bytes {
            LoadedBytes::Table { compressed, .. } => {
                usize::try_from(compressed.uncompressed_size()).unwrap_or(usize::MAX)
            }
            _ => self.bytes(buffers).len(),
        }
    }

    pub(crate) fn compressed(&self) -> bool {
        !matches!(self.bytes, LoadedBytes::Input(_))
    }

    /// Where a damaged bundle of this container is, for the message.
    pub(crate) fn place(&self) -> Place {
        match (self.compressed(), self.offset) {
            (false, 0) => Place::Start,
            (false, at) => Place::At(at),
            (true, at) => Place::InCompressed(at),
        }
    }

    /// Parses the container as a bundle.
    pub(crate) fn bundle<'a>(&'a self, buffers: &'a Buffers) -> Result<Bundle<'a>, BundlerError> {
        let bytes = self.bytes(buffers);
        let len = crate::bytes::to_u64(self.len(buffers));
        Bundle::parse_table(bytes, len).map_err(|error| BundlerError::MalformedBundle {
            error,
            place: self.place(),
        })
    }

    /// A payload at `range` of the container's bytes, as a piece source:
    /// the input's own bytes (with their offset in the input) or a range of
    /// a buffer.
    pub(crate) fn source(&self, range: Range<usize>) -> Source<'data> {
        match self.bytes {
            LoadedBytes::Input(data) => Source::Input {
                offset: self
                    .offset
                    .saturating_add(u64::try_from(range.start).unwrap_or(u64::MAX)),
                bytes: data.get(range).unwrap_or_default(),
            },
            LoadedBytes::Decompressed(buffer) | LoadedBytes::Table { buffer, .. } => {
                Source::Made { buffer, range }
            }
        }
    }
}

/// Where bytes come from: the input, or a buffer the job made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source<'data> {
    Input { offset: u64, bytes: &'data [u8] },
    Made { buffer: usize, range: Range<usize> },
}

/// How a job decodes an input's compressed bundles: each under
/// `decoding.max_size`, and whole or only as far as their entry tables.
pub(crate) struct Budget {
    pub(crate) decoding: Decoding,
    /// Decode only entry tables (the job calls [`fill`] for what it writes).
    pub(crate) tables: bool,
}

impl Budget {
    pub(crate) fn new(decoding: Decoding) -> Self {
        Budget {
            decoding,
            tables: false,
        }
    }

    /// A budget for a job that needs only entry tables. With `-verbose`
    /// every container is decoded whole, as LLVM reports each one's hash.
    pub(crate) fn tables(decoding: Decoding) -> Self {
        Budget {
            decoding,
            tables: !decoding.verbose,
        }
    }
}

/// Every container in `data`, compressed ones decompressed into `buffers`
/// (and checked as `budget` says). What follows a bundle and is not one —
/// bytes that start no container, an OffloadBinary, and after a plain
/// bundle a damaged container — is a warning, as LLVM ignores it; any other
/// damage ends the walk with an error. `binary_only`: a compressed
/// bundle must hold a binary bundle (not a text one).
pub(crate) fn load<'data>(
    data: &'data [u8],
    budget: &mut Budget,
    binary_only: bool,
    buffers: &mut Buffers,
    observer: &mut dyn Observer,
) -> Result<Vec<Loaded<'data>>, BundlerError> {
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut end = 0usize;
    for container in Containers::new(data) {
        let (offset, container) = match container {
            Ok(found) => found,
            Err(error) => {
                // Where the walk stopped: past the zero padding after the
                // last container.
                let rest = data.get(end..).unwrap_or_default();
                let start =
                    to_u64(end.saturating_add(rest.iter().take_while(|&&b| b == 0).count()));
                let unknown = matches!(error.kind(), ErrorKind::UnknownContainer);
                let what = usize::try_from(start)
                    .ok()
                    .and_then(|s| data.get(s..))
                    .map(FileKind::detect)
                    .filter(|k| k.is_bundle_container());
                let unreadable = BundlerError::Unreadable {
                    offset: start,
                    what,
                    error,
                };
                // Damage after a compressed bundle ends the walk: it looks
                // like more bundles, which we read and LLVM does not.
                if let Some(last) = loaded.last().filter(|l| !l.compressed() || unknown) {
                    observer.note(Note::Warning(Warning::TrailingBytes {
                        len: to_u64(data.len()).saturating_sub(start),
                        bundle_offset: last.offset,
                        damaged: (!unknown).then(|| alloc::boxed::Box::new(unreadable)),
                    }));
                    break;
                }
                return Err(unreadable);
            }
        };
        end = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .saturating_add(container.data().len());
        match container {
            Container::OffloadBinary(_) => {
                let not_bundle = BundlerError::OffloadBinaryNotBundle { offset };
                let Some(last) = loaded.last() else {
                    return Err(not_bundle);
                };
                // After a bundle LLVM reads the bundle and ignores the rest.
                observer.note(Note::Warning(Warning::TrailingBytes {
                    len: to_u64(data.len()).saturating_sub(offset),
                    bundle_offset: last.offset,
                    damaged: Some(alloc::boxed::Box::new(not_bundle)),
                }));
                break;
            }
            Container::Bundle(bundle) => {
                if budget.decoding.verbose {
                    observer.note(Note::Uncompressed { offset });
                }
                loaded.push(Loaded {
                    offset,
                    bytes: LoadedBytes::Input(bundle.data()),
                });
            }
            Container::Compressed(compressed) if budget.tables => {
                let table = decode_table(offset, &compressed, budget, binary_only)?;
                observer.done_with(compressed.data());
                buffers.push(table);
                loaded.push(Loaded {
                    offset,
                    bytes: LoadedBytes::Table {
                        buffer: buffers.len().saturating_sub(1),
                        compressed,
                    },
                });
            }
            Container::Compressed(compressed) => {
                let bytes = decode(offset, &compressed, budget, binary_only, observer)?;
                observer.done_with(compressed.data());
                buffers.push(bytes);
                loaded.push(Loaded {
                    offset,
                    bytes: LoadedBytes::Decompressed(buffers.len().saturating_sub(1)),
                });
            }
        }
    }
    Ok(loaded)
}

/// What decoding one compressed bundle may produce: `max_size` for each.
fn options(budget: &Budget) -> DecompressOptions {
    DecompressOptions {
        limits: Limits {
            max_uncompressed_size: budget.decoding.max_size,
        },
        verify_hash: false,
        ..DecompressOptions::default()
    }
}

/// Decodes one compressed bundle's header and entry table only (no hash:
/// it covers the whole bundle), and checks what it holds.
pub(crate) fn decode_table(
    offset: u64,
    compressed: &crate::CompressedBundle<'_>,
    budget: &Budget,
    binary_only: bool,
) -> Result<Vec<u8>, BundlerError> {
    let fail = |problem| BundlerError::Compressed { offset, problem };
    let table = compressed
        .decompress_table(&options(budget))
        .map_err(|error| fail(CompressedProblem::Decode(error)))?;
    if binary_only && !Bundle::is_bundle(&table) {
        return Err(fail(CompressedProblem::NotBinaryBundle));
    }
    Ok(table)
}

/// Decodes whole the compressed bundles among `loaded` that only their
/// tables were decoded of and whose bytes `plan` writes, each into the
/// buffer its table was in, hashed as the policy says: a job decodes only
/// the containers it writes from.
pub(crate) fn fill(
    loaded: &[Loaded<'_>],
    plan: &mut super::Plan<'_>,
    budget: &Budget,
    observer: &mut dyn Observer,
) -> Result<(), BundlerError> {
    for container in loaded {
        if let LoadedBytes::Table { buffer, compressed } = container.bytes {
            if plan.uses_buffer(buffer) {
                let bytes = decode(container.offset, &compressed, budget, true, observer)?;
                observer.done_with(compressed.data());
                plan.set_buffer(buffer, bytes);
            }
        }
    }
    Ok(())
}

/// Decodes one compressed bundle under the limit, hashing it once if the
/// policy asks, and checks what it holds.
pub(crate) fn decode(
    offset: u64,
    compressed: &crate::CompressedBundle<'_>,
    budget: &Budget,
    binary_only: bool,
    observer: &mut dyn Observer,
) -> Result<Vec<u8>, BundlerError> {
    let fail = |problem| BundlerError::Compressed { offset, problem };
    observer.note(Note::Decoding { offset });
    let hash = budget.decoding.verify_hash || budget.decoding.verbose;
    let (bytes, computed) = compressed
        .decompress_hashed(&options(budget), hash)
        .map_err(|error| fail(CompressedProblem::Decode(error)))?;
    observer.note(Note::Decoded(DecodedContainer {
        offset,
        version: compressed.version(),
        method: compressed.method().raw(),
        total_size: compressed.total_size(),
        compressed_size: u64::try_from(compressed.compressed().len()).unwrap_or(u64::MAX),
        uncompressed_size: compressed.uncompressed_size(),
        stored_hash: compressed.hash(),
        computed_hash: computed,
    }));
    if let Some(computed) = computed.filter(|_| budget.decoding.verify_hash) {
        if computed != compressed.hash() {
            return Err(fail(CompressedProblem::HashMismatch {
                stored: compressed.hash(),
                computed,
            }));
        }
    }
    if binary_only && !Bundle::is_bundle(&bytes) {
        return Err(fail(CompressedProblem::NotBinaryBundle));
    }
    Ok(bytes)
}

/// What an input holds for the bundler, as `-type` reads it.
#[derive(Debug)]
pub(crate) enum Contents<'data> {
    /// Bundles and compressed bundles, decompressed; none for a file that
    /// holds no bundle (the bundler takes it to be the host's own file).
    Containers(Vec<Loaded<'data>>),
    /// A host object whose entries are sections (`-type=o`).
    Object(ObjectBundle<'data>),
    /// A text bundle (maybe decompressed) and its markers' comment.
    Text(Loaded<'data>, Comment),
}

/// Reads `data` as `file_type` says (not for archives).
pub(crate) fn read<'data>(
    data: &'data [u8],
    file_type: FileType,
    budget: &mut Budget,
    buffers: &mut Buffers,
    observer: &mut dyn Observer,
) -> Result<Contents<'data>, BundlerError> {
    let kind = FileKind::detect(data);
    if file_type == FileType::Object && kind.is_object() {
        if kind == FileKind::MachO {
            return Err(BundlerError::MachOObject);
        }
        // A damaged bundle section fails only a job that needs it.
        return ObjectBundle::parse(data)
            .map(Contents::Object)
            .map_err(BundlerError::MalformedObject);
    }
    let comment = match file_type {
        FileType::Text(comment) => Some(comment),
        _ => None,
    };
    if !kind.is_bundle_container() {
        return Ok(match comment {
            Some(comment) => Contents::Text(
                Loaded {
                    offset: 0,
                    bytes: LoadedBytes::Input(data),
                },
                comment,
            ),
            None => Contents::Containers(Vec::new()),
        });
    }
    // A text bundle has no table to stop at: it is decoded whole.
    budget.tables &= comment.is_none();
    let mut loaded = load(data, budget, comment.is_none(), buffers, observer)?;
    match comment {
        // A compressed text bundle: LLVM reads the first container only.
        Some(comment) if !loaded.is_empty() => Ok(Contents::Text(loaded.swap_remove(0), comment)),
        _ => Ok(Contents::Containers(loaded)),
    }
}

/// Parses a loaded text container, strictly.
pub(crate) fn text<'a>(
    loaded: &'a Loaded,
    comment: Comment,
    buffers: &'a Buffers,
) -> Result<TextBundle<'a>, BundlerError> {
    TextBundle::parse(loaded.bytes(buffers), comment).map_err(BundlerError::MalformedTextBundle)
}
