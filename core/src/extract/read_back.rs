//! Where a compressed bundle's decoded bytes can be had again once it is
//! decoded and let go: its outputs, read back from the sink that wrote
//! them, and the few bytes between them (the bundle's header, padding),
//! kept as they went by. What [`Extraction::stream`](super::Extraction::stream)
//! hashes a bundle from when its sink reads back.

use alloc::vec::Vec;
use core::ops::Range;

use super::ExtractionSink;
use crate::bytes::to_u64;

/// The most bytes outside its outputs a bundle keeps to be hashed later; a
/// bundle with more (one whose entries are not all extracted) is hashed as
/// it is decoded.
const KEEP: u64 = 1 << 20;

/// A decoded bundle, part by part, in order.
pub(super) struct Layout {
    parts: Vec<Part>,
    kept: Vec<u8>,
}

/// Bytes `range` of the decoded bundle, and where they are now.
struct Part {
    range: Range<u64>,
    source: Source,
}

enum Source {
    /// In output `output`, from `offset`.
    Output { output: usize, offset: u64 },
    /// In the kept bytes, from `offset`.
    Kept { offset: usize },
}

impl Layout {
    /// The layout of a bundle of `len` decoded bytes whose outputs lie at
    /// `outputs` (an output that another covers is read from the one that
    /// starts first); `None` if more than [`KEEP`] bytes lie outside them.
    pub(super) fn new(len: u64, outputs: &[(usize, Range<u64>)]) -> Option<Layout> {
        let mut sorted: Vec<&(usize, Range<u64>)> =
            outputs.iter().filter(|(_, r)| r.start < r.end).collect();
        sorted.sort_by_key(|(_, r)| r.start);
        let mut parts = Vec::new();
        let mut kept = 0u64;
        let mut at = 0u64;
        let mut keep = |parts: &mut Vec<Part>, range: Range<u64>| {
            if range.start >= range.end {
                return Some(());
            }
            let offset = usize::try_from(kept).ok()?;
            kept = kept.saturating_add(range.end.saturating_sub(range.start));
            parts.push(Part {
                range,
                source: Source::Kept { offset },
            });
            Some(())
        };
        for (output, range) in sorted {
            let end = range.end.min(len);
            if range.start > at {
                keep(&mut parts, at..range.start.min(len))?;
            }
            let from = range.start.max(at);
            if from < end {
                parts.push(Part {
                    range: from..end,
                    source: Source::Output {
                        output: *output,
                        offset: from.saturating_sub(range.start),
                    },
                });
            }
            at = at.max(end);
        }
        if at < len {
            keep(&mut parts, at..len)?;
        }
        (kept <= KEEP).then(|| Layout {
            parts,
            kept: Vec::new(),
        })
    }

    /// Keeps what of `bytes` (at `start` in the decoded bundle, following
    /// what came before) lies in no output.
    pub(super) fn keep(&mut self, start: u64, bytes: &[u8]) {
        let end = start.saturating_add(to_u64(bytes.len()));
        for part in &self.parts {
            if !matches!(part.source, Source::Kept { .. }) {
                continue;
            }
            let (from, to) = (part.range.start.max(start), part.range.end.min(end));
            if from < to {
                let local = |at: u64| usize::try_from(at.saturating_sub(start)).unwrap_or(0);
                self.kept
                    .extend_from_slice(bytes.get(local(from)..local(to)).unwrap_or_default());
            }
        }
    }

    /// Fills `out` with the decoded bytes from `at`: what the sink gives
    /// back of its outputs, and the kept bytes. `Err` names the output that
    /// could not be read back (or `None` if the bytes asked for lie past
    /// the layout's end).
    pub(super) fn read(
        &self,
        at: u64,
        out: &mut [u8],
        sink: &mut dyn ExtractionSink,
    ) -> Result<(), Option<usize>> {
        let end = at.saturating_add(to_u64(out.len()));
        let first = self.parts.partition_point(|p| p.range.end <= at);
        let mut filled = at;
        for part in self.parts.get(first..).unwrap_or_default() {
            if filled >= end {
                break;
            }
            let to = part.range.end.min(end);
            let local = |x: u64| usize::try_from(x.saturating_sub(at)).unwrap_or(usize::MAX);
            let Some(into) = out.get_mut(local(filled)..local(to)) else {
                return Err(None);
            };
            let within = filled.saturating_sub(part.range.start);
            match part.source {
                Source::Output { output, offset } => {
                    if !sink.read_back(output, offset.saturating_add(within), into) {
                        return Err(Some(output));
                    }
                }
                Source::Kept { offset } => {
                    let from = offset.saturating_add(usize::try_from(within).unwrap_or(usize::MAX));
                    let bytes = self.kept.get(from..from.saturating_add(into.len()));
                    into.copy_from_slice(bytes.ok_or(None)?);
                }
            }
            filled = to;
        }
        if filled < end {
            return Err(None);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundler::BundlerError;
    use alloc::vec;
    use core::ops::ControlFlow;

    /// Outputs held in memory, read back as written.
    struct Written(Vec<Vec<u8>>);

    impl ExtractionSink for Written {
        fn next(&mut self) -> Option<usize> {
            None
        }
        fn write(&mut self, _: usize, _: &[u8]) -> ControlFlow<()> {
            ControlFlow::Continue(())
        }
        fn done(&mut self, _: usize, _: Result<(), BundlerError>) {}
        fn reads_back(&self) -> bool {
            true
        }
        fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
            let from = offset as usize;
            match self
                .0
                .get(output)
                .and_then(|o| o.get(from..from + bytes.len()))
            {
                Some(held) => {
                    bytes.copy_from_slice(held);
                    true
                }
                None => false,
            }
        }
    }

    /// A bundle of 100 bytes whose outputs overlap, leave gaps and repeat:
    /// every stretch of it read back is the decoded bytes, however it was
    /// told.
    #[test]
    fn a_bundle_reads_back_as_it_was_decoded() {
        let decoded: Vec<u8> = (0..100u8).map(|b| b.wrapping_mul(37)).collect();
        let outputs = vec![
            (7, 10..30),
            (8, 20..40),
            (9, 50..50),
            (10, 60..90),
            (11, 60..70),
        ];
        let mut sink = Written(vec![Vec::new(); 12]);
        for (output, range) in &outputs {
            sink.0[*output] = decoded[range.start as usize..range.end as usize].to_vec();
        }
        for stretch in [1, 7, 64, 100] {
            let mut layout = Layout::new(100, &outputs).unwrap();
            for (i, chunk) in decoded.chunks(stretch).enumerate() {
                layout.keep((i * stretch) as u64, chunk);
            }
            for at in 0..100 {
                for len in 0..=100 - at {
                    let mut out = vec![0; len];
                    layout.read(at as u64, &mut out, &mut sink).unwrap();
                    assert_eq!(out, decoded[at..at + len], "at {at}, len {len}");
                }
            }
            let mut past = [0u8; 2];
            assert_eq!(layout.read(99, &mut past, &mut sink), Err(None));
        }
        // An output gone: named.
        let mut layout = Layout::new(100, &outputs).unwrap();
        layout.keep(0, &decoded);
        sink.0[10].clear();
        let mut out = vec![0; 100];
        assert_eq!(layout.read(0, &mut out, &mut sink), Err(Some(10)));
    }

    #[test]
    fn a_bundle_mostly_outside_its_outputs_is_not_kept() {
        assert!(Layout::new(KEEP + 1, &[]).is_none());
        assert!(Layout::new(KEEP, &[]).is_some());
        assert!(Layout::new(3 * KEEP, &[(0, 0..2 * KEEP)]).is_some());
        assert!(Layout::new(3 * KEEP, &[(0, 1..2 * KEEP)]).is_none());
    }
}
