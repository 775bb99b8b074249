//! Extraction streamed: [`Extraction::stream`] writes every output of the
//! containers a sink asks for as their bytes are decoded, never holding a
//! decoded container longer than it is being decoded. Compressed bundles
//! are walked a stretch at a time, several side by side on the calling
//! thread, so that their hashes go through MD5 together
//! (`compressed::many`). A sink that can read back what it wrote lets each
//! thread hold only the bundle it decodes: hashes are then checked from the
//! outputs read back, several side by side (`compressed::later`).

use alloc::vec::Vec;
use core::cell::RefCell;
use core::ops::{ControlFlow, Range};

use super::read_back::Layout;
use super::{add_bundle, Extraction, Unit, What};
use crate::bundler::input::{decode_table, Budget, Loaded, LoadedBytes};
use crate::bundler::{BundlerError, CompressedProblem, Observer, Piece, Plan};
use crate::bytes::to_u64;
use crate::compressed::later::Queue;
use crate::compressed::many::{walk_many, Walked};
use crate::compressed::md5::Hasher;
use crate::compressed::DecompressOptions;
use crate::CompressedBundle;

/// Where [`Extraction::stream`] puts what it extracts.
pub trait ExtractionSink {
    /// The next container to extract (its index), or `None` when there is
    /// none left. Asked as the stream can take one more.
    fn next(&mut self) -> Option<usize>;

    /// The next `bytes` of `output` (numbered across the input, as
    /// [`Extraction::output_name`] numbers them), in order from its start;
    /// never empty (an output with no bytes gets no call). Breaking stops
    /// that output's container: nothing more is said of it.
    fn write(&mut self, output: usize, bytes: &[u8]) -> ControlFlow<()>;

    /// Container `container` is extracted: every byte of its outputs was
    /// written and, as the decoding policy says, its hash checked; or why
    /// not, in which case what was written of its outputs is incomplete or
    /// unverified and must not be kept.
    fn done(&mut self, container: usize, result: Result<(), BundlerError>);

    /// Whether [`read_back`](Self::read_back) gives back what was written.
    /// Then each compressed bundle is decoded alone (one held at a time)
    /// and its hash checked afterwards, from its outputs read back, with
    /// those of the next bundles side by side; its `done` comes after that.
    fn reads_back(&self) -> bool {
        false
    }

    /// Fills `bytes` with output `output`'s bytes from `offset`, as they
    /// were written; false if they cannot be had.
    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
        let _ = (output, offset, bytes);
        false
    }
}

/// A compressed bundle being streamed: where its outputs lie in its
/// decoded bytes, and how far the walk has come.
struct Flowing<'data> {
    container: usize,
    at: u64,
    compressed: CompressedBundle<'data>,
    outputs: Vec<(usize, Range<u64>)>,
    walked: u64,
    check: Check,
}

/// When a streamed bundle's hash is checked.
enum Check {
    /// As the walk decodes it (or never, as the policy says).
    Walked,
    /// As its bytes are told: too much of it lies outside its outputs to
    /// keep it for later.
    Told(Hasher),
    /// Once it is decoded, from its outputs read back.
    Later(Layout),
}

impl<'data> Extraction<'data> {
    /// Extracts the containers `sink` asks for, writing their outputs to it
    /// as their bytes are decoded, `lanes` compressed bundles at a time on
    /// this thread (1 to 4; each held whole while it is decoded, since a
    /// zstd frame may refer back to any byte it made: memory is `lanes`
    /// times the largest). A sink that [reads back](ExtractionSink::reads_back)
    /// has one bundle decoded at a time, and up to `lanes` hashed side by
    /// side from what it reads back. Calls on several threads, each with
    /// its own sink, share the work of one extraction. What
    /// [`plan`](Self::plan) plans, the same bytes, in order within each
    /// output.
    pub fn stream(&self, lanes: usize, sink: &mut dyn ExtractionSink, observer: &mut dyn Observer) {
        let verify = self.decoding.verify_hash;
        let later = verify && sink.reads_back();
        let streaming = Streaming {
            sink: RefCell::new(sink),
            observer: RefCell::new(observer),
            flowing: RefCell::new(Vec::new()),
            waiting: RefCell::new(Vec::new()),
            queue: RefCell::new(Queue::new(lanes)),
            verify,
            later,
        };
        let options = DecompressOptions {
            limits: crate::compressed::Limits {
                max_uncompressed_size: self.decoding.max_size,
            },
            verify_hash: false,
            ..DecompressOptions::default()
        };
        let mut next = || loop {
            let index = streaming.sink.borrow_mut().next()?;
            if let Some(compressed) = self.start(index, &streaming) {
                return Some((index, compressed));
            }
        };
        let mut told = |container: usize, walked: Walked<'_>| streaming.told(container, walked);
        let (walk_hashes, walk_lanes) = if later { (false, 1) } else { (verify, lanes) };
        walk_many(
            &options,
            walk_hashes,
            walk_lanes,
            &self.budget,
            &mut next,
            &mut told,
        );
        streaming.settle(true);
    }

    /// Starts container `index`: a compressed bundle to walk, returned with
    /// its outputs' places noted; any other written whole (or its failure
    /// told) here.
    fn start(
        &self,
        index: usize,
        streaming: &Streaming<'_, 'data>,
    ) -> Option<CompressedBundle<'data>> {
        let sink = &streaming.sink;
        let Some(unit) = self.units.get(index) else {
            sink.borrow_mut().done(index, Ok(()));
            return None;
        };
        let mut observer = streaming.observer.borrow_mut();
        let What::Compressed(compressed) = unit.what else {
            let planned = self.plan(index, &mut **observer);
            let result = planned.and_then(|plan| write_plan(&plan, unit, &mut **sink.borrow_mut()));
            if let Ok(Some(())) | Err(_) = &result {
                sink.borrow_mut().done(index, result.map(|_| ()));
            }
            return None;
        };
        match self.outputs_of(index, unit, compressed, &mut **observer) {
            Ok(outputs) => {
                let check = match streaming.later {
                    false => Check::Walked,
                    true => match Layout::new(compressed.uncompressed_size(), &outputs) {
                        Some(layout) => Check::Later(layout),
                        None => Check::Told(Hasher::new()),
                    },
                };
                streaming.flowing.borrow_mut().push(Flowing {
                    container: index,
                    at: unit.at,
                    compressed,
                    outputs,
                    walked: 0,
                    check,
                });
                Some(compressed)
            }
            Err(error) => {
                sink.borrow_mut().done(index, Err(error));
                None
            }
        }
    }

    /// Where the outputs of compressed container `index` lie in its decoded
    /// bytes, from its entry table alone, by the rule [`Extraction::plan`]
    /// follows.
    fn outputs_of(
        &self,
        index: usize,
        unit: &Unit<'data>,
        compressed: CompressedBundle<'data>,
        observer: &mut dyn Observer,
    ) -> Result<Vec<(usize, Range<u64>)>, BundlerError> {
        let budget = Budget::new(self.decoding);
        let table = decode_table(unit.at, &compressed, &budget, true)?;
        let loaded = Loaded {
            offset: unit.at,
            bytes: LoadedBytes::Table {
                buffer: 0,
                compressed,
            },
        };
        let first = unit.outputs.start;
        let mut part = Plan::new(0, alloc::vec![table])?;
        add_bundle(&mut part, &loaded, &unit.prefix, first, observer)?;
        if part.output_count() != unit.outputs.len() {
            return Err(self.miscounted(index, part.output_count()));
        }
        (0..part.output_count())
            .map(|i| {
                let range = match part.output(i) {
                    [] => 0..0,
                    [Piece::Made { range, .. }] => to_u64(range.start)..to_u64(range.end),
                    _ => return Err(self.miscounted(index, part.output_count())),
                };
                Ok((first.saturating_add(i), range))
            })
            .collect()
    }
}

/// One call of [`Extraction::stream`]: its sink and observer, the bundles
/// being walked, and those whose hash waits.
struct Streaming<'s, 'data> {
    sink: RefCell<&'s mut dyn ExtractionSink>,
    observer: RefCell<&'s mut dyn Observer>,
    flowing: RefCell<Vec<Flowing<'data>>>,
    /// Decoded bundles whose hash is checked later, in `queue`.
    waiting: RefCell<Vec<Flowing<'data>>>,
    queue: RefCell<Queue>,
    /// Hashes are checked (the decoding policy).
    verify: bool,
    /// Hashes are checked from outputs read back.
    later: bool,
}

impl Streaming<'_, '_> {
    /// What the walk tells of `container`: its next bytes, written; or its
    /// end, its hash checked now or queued.
    fn told(&self, container: usize, walked: Walked<'_>) -> ControlFlow<()> {
        let mut all = self.flowing.borrow_mut();
        let Some(place) = all.iter().position(|f| f.container == container) else {
            return ControlFlow::Break(());
        };
        let Some(flow) = all.get_mut(place) else {
            return ControlFlow::Break(());
        };
        let result = match walked {
            Walked::Stretch(bytes) => {
                let flow_on = flow.write(bytes, &mut **self.sink.borrow_mut());
                if flow_on.is_break() {
                    all.swap_remove(place);
                }
                return flow_on;
            }
            Walked::Done(result) => result,
        };
        let mut flow = all.swap_remove(place);
        drop(all);
        self.observer.borrow_mut().done_with(flow.compressed.data());
        let result = match core::mem::replace(&mut flow.check, Check::Walked) {
            Check::Later(layout) if result.is_ok() => {
                flow.check = Check::Later(layout);
                self.queue.borrow_mut().push(container, flow.walked);
                self.waiting.borrow_mut().push(flow);
                self.settle(false);
                return ControlFlow::Continue(());
            }
            Check::Told(hasher) => result.map(|_| hasher.truncated()),
            _ => result,
        };
        let checked = flow.checked(result, self.verify);
        self.sink.borrow_mut().done(container, checked);
        ControlFlow::Continue(())
    }

    /// Checks the hashes of queued bundles, side by side, while every lane
    /// has one (or, `all`, until none is left), and says each is done.
    fn settle(&self, all: bool) {
        loop {
            let mut queue = self.queue.borrow_mut();
            if !all && !queue.full() {
                return;
            }
            let mut unread = None;
            let ended = {
                let waiting = self.waiting.borrow();
                let mut sink = self.sink.borrow_mut();
                queue.next_done(&mut |id, at, out| {
                    let Some(Flowing {
                        check: Check::Later(layout),
                        ..
                    }) = waiting.iter().find(|f| f.container == id)
                    else {
                        return false;
                    };
                    layout
                        .read(at, out, &mut **sink)
                        .map_err(|output| unread = output)
                        .is_ok()
                })
            };
            drop(queue);
            let Some((container, hash)) = ended else {
                return;
            };
            let mut waiting = self.waiting.borrow_mut();
            let Some(place) = waiting.iter().position(|f| f.container == container) else {
                continue;
            };
            let flow = waiting.swap_remove(place);
            drop(waiting);
            let result = match hash {
                Some(hash) => flow.checked(Ok(hash), true),
                None => Err(BundlerError::Compressed {
                    offset: flow.at,
                    problem: CompressedProblem::Unverifiable { output: unread },
                }),
            };
            self.sink.borrow_mut().done(container, result);
        }
    }
}

impl Flowing<'_> {
    /// Hands `sink` the parts of the next decoded `bytes` that belong to
    /// outputs.
    fn write(&mut self, bytes: &[u8], sink: &mut dyn ExtractionSink) -> ControlFlow<()> {
        let start = self.walked;
        let end = start.saturating_add(to_u64(bytes.len()));
        self.walked = end;
        match &mut self.check {
            Check::Walked => {}
            Check::Told(hasher) => hasher.consume(bytes),
            Check::Later(layout) => layout.keep(start, bytes),
        }
        for (output, range) in &self.outputs {
            let (from, to) = (range.start.max(start), range.end.min(end));
            if from >= to {
                continue;
            }
            let local = |at: u64| usize::try_from(at.saturating_sub(start)).unwrap_or(usize::MAX);
            let part = bytes.get(local(from)..local(to)).unwrap_or_default();
            sink.write(*output, part)?;
        }
        ControlFlow::Continue(())
    }

    /// How the walk ended, with the hash compared as the policy says.
    fn checked(&self, result: crate::Result<u64>, verify: bool) -> Result<(), BundlerError> {
        let fail = |problem| BundlerError::Compressed {
            offset: self.at,
            problem,
        };
        let computed = result.map_err(|error| fail(CompressedProblem::Decode(error)))?;
        let stored = self.compressed.hash();
        if verify && computed != stored {
            return Err(fail(CompressedProblem::HashMismatch { stored, computed }));
        }
        Ok(())
    }
}

/// Writes what `plan` (of a container that is not compressed) plans for
/// each output of `unit`, in order: `Some` when all was written, `None`
/// when the sink stopped it.
fn write_plan(
    plan: &Plan<'_>,
    unit: &Unit<'_>,
    sink: &mut dyn ExtractionSink,
) -> Result<Option<()>, BundlerError> {
    const ZEROS: [u8; 4096] = [0; 4096];
    for (i, output) in unit.outputs.clone().enumerate() {
        for piece in plan.output(i) {
            let flow = match piece {
                Piece::Zeros(mut left) => {
                    let mut flow = ControlFlow::Continue(());
                    while left > 0 && flow.is_continue() {
                        let n = usize::try_from(left).unwrap_or(usize::MAX).min(ZEROS.len());
                        flow = sink.write(output, ZEROS.get(..n).unwrap_or_default());
                        left = left.saturating_sub(to_u64(n));
                    }
                    flow
                }
                // An empty piece (an empty output's) is no write: the sink
                // hears of bytes only.
                other => match plan.bytes(other).unwrap_or_default() {
                    [] => ControlFlow::Continue(()),
                    bytes => sink.write(output, bytes),
                },
            };
            if flow.is_break() {
                return Ok(None);
            }
        }
    }
    Ok(Some(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundler::Decoding;
    use crate::compressed::MemoryBudget;
    use crate::extract::extract;
    use alloc::vec;

    macro_rules! fixture {
        ($name:literal) => {
            &include_bytes!(concat!("../../../tests/fixtures/", $name))[..]
        };
    }

    /// Gathers what a stream writes, asking for `order`.
    struct Gathered {
        order: Vec<usize>,
        asked: usize,
        outputs: Vec<Vec<u8>>,
        done: Vec<(usize, Result<(), BundlerError>)>,
        /// Stop the container of this output at its first write.
        stop_at: Option<usize>,
        /// Read back what was written; of this output, nothing.
        read_back: Option<Option<usize>>,
    }

    impl ExtractionSink for Gathered {
        fn next(&mut self) -> Option<usize> {
            let index = self.order.get(self.asked).copied();
            self.asked += 1;
            index
        }
        fn write(&mut self, output: usize, bytes: &[u8]) -> ControlFlow<()> {
            assert!(!bytes.is_empty(), "a write of no bytes (output {output})");
            if self.stop_at == Some(output) {
                return ControlFlow::Break(());
            }
            self.outputs[output].extend_from_slice(bytes);
            ControlFlow::Continue(())
        }
        fn done(&mut self, container: usize, result: Result<(), BundlerError>) {
            self.done.push((container, result));
        }
        fn reads_back(&self) -> bool {
            self.read_back.is_some()
        }
        fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
            let from = offset as usize;
            let held = self.outputs[output].get(from..from + bytes.len());
            match held {
                Some(held) if self.read_back != Some(Some(output)) => {
                    bytes.copy_from_slice(held);
                    true
                }
                _ => false,
            }
        }
    }

    fn stream(data: &[u8], order: Vec<usize>, stop_at: Option<usize>) -> Gathered {
        stream_reading_back(data, order, stop_at, None)
    }

    fn stream_reading_back(
        data: &[u8],
        order: Vec<usize>,
        stop_at: Option<usize>,
        read_back: Option<Option<usize>>,
    ) -> Gathered {
        let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
        let mut gathered = Gathered {
            order,
            asked: 0,
            outputs: vec![Vec::new(); extraction.output_count()],
            done: Vec::new(),
            stop_at,
            read_back,
        };
        extraction.stream(2, &mut gathered, &mut ());
        gathered
    }

    #[test]
    fn a_stream_writes_what_the_whole_extraction_plans() {
        for data in [
            fixture!("multi/libhip-compressed3.so"),
            fixture!("multi/hip-mixed3.dll"),
            fixture!("compressed/concat/hip.hip_fatbin"),
            fixture!("compressed/synthetic/hip.zlib-v3.ccob"),
            fixture!("compressed/llvm22/big.v3.ccob"),
            fixture!("offload/offload.a"),
            // An OffloadBinary image of no bytes: no write for it.
            fixture!("offload/embed2.o"),
        ] {
            let whole = extract(data, b"f", Decoding::default(), &mut ()).unwrap();
            let count = Extraction::new(data, b"f", Decoding::default(), &mut ())
                .unwrap()
                .container_count();
            // Backwards, so that lanes fill and empty out of file order;
            // hashes checked as decoded, and from outputs read back.
            for read_back in [None, Some(None)] {
                let gathered =
                    stream_reading_back(data, (0..count).rev().collect(), None, read_back);
                let mut done: Vec<usize> = gathered.done.iter().map(|(c, _)| *c).collect();
                done.sort_unstable();
                assert_eq!(done, (0..count).collect::<Vec<_>>());
                for (container, result) in &gathered.done {
                    assert!(result.is_ok(), "container {container}: {result:?}");
                }
                assert_eq!(gathered.outputs.len(), whole.output_count());
                for (i, bytes) in gathered.outputs.iter().enumerate() {
                    assert_eq!(bytes, &whole.output_bytes(i).unwrap(), "output {i}");
                }
            }
        }
    }

    /// A wrong stored hash, a damaged stream: that container is done with
    /// an error, the others are extracted whole.
    #[test]
    fn damage_in_one_compressed_bundle_costs_its_own_outputs_only() {
        let data = fixture!("multi/libhip-compressed3.so");
        let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
        let second = extraction.container(1).unwrap().offset as usize;
        let size = extraction.container(1).unwrap().size as usize;
        drop(extraction);
        // v3: the hash is at 24..32 of the header; the stream starts at 32.
        let mut wrong_hash = data.to_vec();
        wrong_hash[second + 24] ^= 1;
        let mut damaged = data.to_vec();
        for b in &mut damaged[second + size / 2..second + size / 2 + 64] {
            *b ^= 0x5a;
        }
        for (input, hash, read_back) in [
            (&wrong_hash, true, None),
            (&damaged, false, None),
            (&wrong_hash, true, Some(None)),
            (&damaged, false, Some(None)),
        ] {
            let gathered = stream_reading_back(input, vec![0, 1, 2], None, read_back);
            for (container, result) in &gathered.done {
                match (container, result) {
                    // Damage in the stream shows in decoding or in the hash.
                    (1, Err(BundlerError::Compressed { problem, .. })) => {
                        assert!(!hash || matches!(problem, CompressedProblem::HashMismatch { .. }))
                    }
                    (1, other) => panic!("container 1: {other:?}"),
                    (_, result) => assert!(result.is_ok()),
                }
            }
            assert_eq!(gathered.done.len(), 3);
        }
    }

    /// Hands out containers from a shared counter, as the tool's threads do.
    struct Shared<'a> {
        next: &'a core::sync::atomic::AtomicUsize,
        count: usize,
        gathered: Gathered,
    }

    impl ExtractionSink for Shared<'_> {
        fn next(&mut self) -> Option<usize> {
            let index = self.next.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
            (index < self.count).then_some(index)
        }
        fn write(&mut self, output: usize, bytes: &[u8]) -> ControlFlow<()> {
            self.gathered.write(output, bytes)
        }
        fn done(&mut self, container: usize, result: Result<(), BundlerError>) {
            self.gathered.done(container, result);
        }
    }

    /// Three threads of four lanes each, under budgets from less than one
    /// bundle to all of them: the same bytes as one thread, every bundle
    /// admitted by its size (the budget never exceeded but by a bundle
    /// alone), nothing held at the end.
    #[test]
    fn threads_under_a_memory_budget_write_the_same_and_hold_no_more() {
        let data = fixture!("multi/libhip-compressed3.so");
        let whole = extract(data, b"f", Decoding::default(), &mut ()).unwrap();
        // Each bundle's uncompressed size, and what it takes of the budget:
        // its buffer and its compressed input.
        let (decoded, sizes): (Vec<u64>, Vec<u64>) = {
            let e = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
            e.units
                .iter()
                .filter_map(|u| match u.what {
                    What::Compressed(c) => Some((
                        c.uncompressed_size(),
                        MemoryBudget::room_for(c.uncompressed_size()) + c.data().len() as u64,
                    )),
                    _ => None,
                })
                .unzip()
        };
        let largest = *sizes.iter().max().unwrap();
        for total in [1, largest, largest + 1, sizes.iter().sum::<u64>()] {
            let mut extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
            extraction.set_memory_budget(Some(total));
            let count = extraction.container_count();
            let next = core::sync::atomic::AtomicUsize::new(0);
            let mut outputs = vec![Vec::new(); extraction.output_count()];
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..3)
                    .map(|_| {
                        let (extraction, next) = (&extraction, &next);
                        s.spawn(move || {
                            let mut sink = Shared {
                                next,
                                count,
                                gathered: Gathered {
                                    order: Vec::new(),
                                    asked: 0,
                                    outputs: vec![Vec::new(); extraction.output_count()],
                                    done: Vec::new(),
                                    stop_at: None,
                                    read_back: None,
                                },
                            };
                            extraction.stream(4, &mut sink, &mut ());
                            sink.gathered
                        })
                    })
                    .collect();
                for worker in workers {
                    let gathered = worker.join().unwrap();
                    assert!(gathered.done.iter().all(|(_, r)| r.is_ok()));
                    for (i, bytes) in gathered.outputs.into_iter().enumerate() {
                        outputs[i].extend(bytes);
                    }
                }
            });
            for (i, bytes) in outputs.iter().enumerate() {
                assert_eq!(
                    bytes,
                    &whole.output_bytes(i).unwrap(),
                    "output {i}, budget {total}"
                );
            }
            assert_eq!(extraction.budget.used(), 0);
            assert!(
                extraction.budget.peak() <= total.max(largest),
                "budget {total}"
            );
        }
        // The default: 256 MiB or the largest bundle's room.
        let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
        assert_eq!(
            extraction.memory_budget(),
            MemoryBudget::default_for(*decoded.iter().max().unwrap())
        );
    }

    /// An output that cannot be read back: its bundle is done with an
    /// error naming it, the others are checked.
    #[test]
    fn an_output_not_read_back_leaves_its_bundle_unverified() {
        let data = fixture!("multi/libhip-compressed3.so");
        let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
        let holder = (0..3)
            .find(|&c| extraction.container(c).unwrap().outputs.contains(&4))
            .unwrap();
        let gathered = stream_reading_back(data, vec![0, 1, 2], None, Some(Some(4)));
        assert_eq!(gathered.done.len(), 3);
        for (container, result) in &gathered.done {
            match result {
                Err(BundlerError::Compressed {
                    problem: CompressedProblem::Unverifiable { output: Some(4) },
                    ..
                }) => assert_eq!(*container, holder),
                other => assert!(other.is_ok() && *container != holder, "{other:?}"),
            }
        }
    }

    #[test]
    fn a_sink_that_stops_a_container_hears_no_more_of_it() {
        let data = fixture!("multi/libhip-compressed3.so");
        let gathered = stream(data, vec![0, 1, 2], Some(4));
        let extraction = Extraction::new(data, b"f", Decoding::default(), &mut ()).unwrap();
        let stopped = (0..3)
            .find(|&c| extraction.container(c).unwrap().outputs.contains(&4))
            .unwrap();
        assert!(gathered
            .done
            .iter()
            .all(|(c, r)| *c != stopped && r.is_ok()));
        assert_eq!(gathered.done.len(), 2);
    }
}
