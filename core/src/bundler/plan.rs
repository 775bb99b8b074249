//! What a job writes: for each output, the pieces it is made of.

use alloc::vec::Vec;
use core::ops::Range;

use super::input::{Buffers, Source};

/// A piece of an output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'data> {
    /// Bytes of an input: `input` is its index among the job's inputs (0 for
    /// jobs with one), `offset` where the bytes start in it, so that a
    /// caller holding the file can copy them file to file.
    Input {
        /// The input's index.
        input: usize,
        /// Where the bytes start in the input.
        offset: u64,
        /// The bytes.
        bytes: &'data [u8],
    },
    /// Bytes the job made (a decompressed bundle's, a host object, an
    /// archive, a header): a range of one of the plan's buffers.
    Made {
        /// The buffer's index.
        buffer: usize,
        /// The range of it.
        range: Range<usize>,
    },
    /// This many zero bytes (alignment padding).
    Zeros(u64),
}

impl Piece<'_> {
    /// How many bytes it writes.
    pub fn len(&self) -> u64 {
        match self {
            Piece::Input { bytes, .. } => crate::bytes::to_u64(bytes.len()),
            Piece::Made { range, .. } => crate::bytes::to_u64(range.len()),
            Piece::Zeros(n) => *n,
        }
    }

    /// Whether it writes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a job writes: one list of pieces per output, in the order the
/// outputs were asked for, and the buffers the `Made` pieces point into.
/// Borrows the inputs.
#[derive(Debug, Default)]
pub struct Plan<'data> {
    outputs: Vec<Vec<Piece<'data>>>,
    buffers: Buffers,
    failure: Option<super::BundlerError>,
    /// Output names, for jobs that choose them (extracting).
    names: Vec<Vec<u8>>,
}

impl<'data> Plan<'data> {
    pub(crate) fn new(outputs: usize, buffers: Buffers) -> Result<Self, crate::Error> {
        let mut list = Vec::new();
        list.try_reserve_exact(outputs).map_err(|_| {
            crate::Error::new(
                crate::ErrorKind::OutOfMemory {
                    requested: crate::bytes::to_u64(outputs),
                },
                0,
            )
        })?;
        list.resize_with(outputs, Vec::new);
        Ok(Plan {
            outputs: list,
            buffers,
            failure: None,
            names: Vec::new(),
        })
    }

    /// The error to report once the outputs are written: LLVM writes the
    /// outputs it found, then fails (missing bundles, a missing host
    /// bundle). Outputs with no pieces are then not written ([`Plan::writes`]).
    pub fn failure(&self) -> Option<&super::BundlerError> {
        self.failure.as_ref()
    }

    /// Whether output `index` is written: LLVM creates every output unless
    /// the job fails, and then only those it found something for.
    pub fn writes(&self, index: usize) -> bool {
        index < self.outputs.len() && (self.failure.is_none() || !self.output(index).is_empty())
    }

    /// The name the job chose for output `index` (empty if none).
    pub fn output_name(&self, index: usize) -> &[u8] {
        self.names.get(index).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn name(&mut self, index: usize, name: Vec<u8>) {
        if self.names.len() <= index {
            self.names.resize_with(index.saturating_add(1), Vec::new);
        }
        if let Some(slot) = self.names.get_mut(index) {
            *slot = name;
        }
    }

    pub(crate) fn fail(&mut self, error: super::BundlerError) {
        self.failure = Some(error);
    }

    /// How many outputs the plan has.
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    /// The pieces of output `index`, in order (none past the end).
    pub fn output(&self, index: usize) -> &[Piece<'data>] {
        self.outputs.get(index).map_or(&[], Vec::as_slice)
    }

    /// The bytes of a piece; `None` for zeros.
    pub fn bytes<'a>(&'a self, piece: &'a Piece<'data>) -> Option<&'a [u8]> {
        match piece {
            Piece::Input { bytes, .. } => Some(bytes),
            Piece::Made { buffer, range } => Some(
                self.buffers
                    .get(*buffer)
                    .and_then(|b| b.get(range.clone()))
                    .unwrap_or_default(),
            ),
            Piece::Zeros(_) => None,
        }
    }

    /// The size of output `index`.
    pub fn output_size(&self, index: usize) -> u64 {
        self.output(index)
            .iter()
            .map(|piece| match piece {
                Piece::Zeros(n) => *n,
                _ => self
                    .bytes(piece)
                    .map_or(0, |b| crate::bytes::to_u64(b.len())),
            })
            .fold(0, u64::saturating_add)
    }

    /// Output `index` as one byte vector (for tests and small outputs).
    pub fn output_bytes(&self, index: usize) -> Result<Vec<u8>, crate::Error> {
        let mut out = crate::bytes::reserve(self.output_size(index))?;
        for piece in self.output(index) {
            match (piece, self.bytes(piece)) {
                (_, Some(bytes)) => out.extend_from_slice(bytes),
                (Piece::Zeros(n), None) => {
                    let n = usize::try_from(*n).unwrap_or(usize::MAX);
                    crate::bytes::grow(&mut out, n)?;
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Appends a piece to output `index`.
    pub(crate) fn push(&mut self, index: usize, piece: Piece<'data>) {
        if let Some(output) = self.outputs.get_mut(index) {
            output.push(piece);
        }
    }

    /// Appends bytes from `source` (input 0 or a buffer) to output `index`.
    pub(crate) fn push_source(&mut self, index: usize, source: Source<'data>) {
        self.push(
            index,
            match source {
                Source::Input { offset, bytes } => Piece::Input {
                    input: 0,
                    offset,
                    bytes,
                },
                Source::Made { buffer, range } => Piece::Made { buffer, range },
            },
        );
    }

    /// Adds a buffer the plan owns; returns a piece of all of it.
    pub(crate) fn add_buffer(&mut self, bytes: Vec<u8>) -> Piece<'data> {
        let range = 0..bytes.len();
        self.buffers.push(bytes);
        Piece::Made {
            buffer: self.buffers.len().saturating_sub(1),
            range,
        }
    }

    /// Adds an empty output; returns its index.
    pub(crate) fn add_output(&mut self) -> usize {
        self.outputs.push(Vec::new());
        self.outputs.len().saturating_sub(1)
    }

    /// Appends the outputs of `other` (made from a part of the input that
    /// starts at `offset`), its buffers taken over.
    pub(crate) fn append(&mut self, other: Plan<'data>, offset: u64) {
        let first_buffer = self.buffers.len();
        self.buffers.extend(other.buffers);
        for (index, pieces) in other.outputs.into_iter().enumerate() {
            let at = self.outputs.len();
            self.outputs.push(
                pieces
                    .into_iter()
                    .map(|piece| match piece {
                        Piece::Input {
                            input,
                            offset: o,
                            bytes,
                        } => Piece::Input {
                            input,
                            offset: o.saturating_add(offset),
                            bytes,
                        },
                        Piece::Made { buffer, range } => Piece::Made {
                            buffer: buffer.saturating_add(first_buffer),
                            range,
                        },
                        zeros => zeros,
                    })
                    .collect(),
            );
            self.name(at, other.names.get(index).cloned().unwrap_or_default());
        }
    }

    /// Whether some output has a piece of buffer `buffer`.
    pub(crate) fn uses_buffer(&self, buffer: usize) -> bool {
        self.outputs
            .iter()
            .flatten()
            .any(|piece| matches!(piece, Piece::Made { buffer: b, .. } if *b == buffer))
    }

    /// Puts `bytes` in place of buffer `buffer` (a compressed bundle decoded
    /// whole where only its table was).
    pub(crate) fn set_buffer(&mut self, buffer: usize, bytes: Vec<u8>) {
        if let Some(slot) = self.buffers.get_mut(buffer) {
            *slot = bytes;
        }
    }

    /// The buffers, for readers of loaded containers.
    pub(crate) fn buffers(&self) -> &Buffers {
        &self.buffers
    }
}
