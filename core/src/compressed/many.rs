//! Many compressed bundles decoded on one thread, in turn, a stretch of each
//! at a time, so that their hashes go through MD5 side by side
//! ([`md5::consume_together`]): one MD5 is a chain of dependent steps that
//! leaves most of a core idle, and hashing costs more than decoding
//! (benches/README.md). Each bundle is walked as [`Stream::walk`] walks it,
//! with the same checks and errors.

use alloc::vec::Vec;
use core::ops::ControlFlow;

use super::budget::MemoryBudget;
use super::header::CompressedBundle;
use super::md5::{self, Hasher, LANES};
use super::stream::{
    max_window, CompressionMethod, Decoded, DecompressOptions, Stream, StreamFault, ZstdDecoder,
};
use super::zstd::libzstd::Filling;
use crate::bytes::to_u64;

/// What [`walk_many`] tells its sink about a bundle.
pub(crate) enum Walked<'a> {
    /// The next stretch of its decoded bytes.
    Stretch(&'a [u8]),
    /// It is decoded to its end: the truncated MD5 of its bytes (not yet
    /// compared with the stored one; `0` when not asked for), or why it
    /// could not be decoded. The last thing told about it.
    Done(crate::Result<u64>),
}

/// Walks every compressed bundle `next` gives (with an identifier of the
/// caller's), up to `lanes` at a time (at most [`LANES`]), telling `sink`
/// each one's stretches in order and then how it ended. A bundle whose
/// `sink` breaks is dropped, with no `Done`. `hash`: compute each bundle's
/// MD5. Each bundle in flight is decoded straight into a buffer of its
/// whole size (a zstd frame of one segment may refer back to any byte it
/// made), which the next bundle in its lane reuses; the buffers' bytes are
/// taken from `budget` before they are made, a bundle that does not fit
/// waiting for a lane to end (or, with none in flight, for room), so that
/// memory is bounded by bytes across every walk that shares the budget. Bundles that libzstd does not decode (zlib,
/// or a build that decodes zstd with ruzstd) are walked alone, through a
/// window, when their turn comes.
pub(crate) fn walk_many<'d>(
    options: &DecompressOptions,
    hash: bool,
    lanes: usize,
    budget: &MemoryBudget,
    next: &mut dyn FnMut() -> Option<(usize, CompressedBundle<'d>)>,
    sink: &mut dyn FnMut(usize, Walked<'_>) -> ControlFlow<()>,
) {
    let width = lanes.clamp(1, LANES);
    let mut flowing: Vec<Lane<'d>> = Vec::new();
    let mut buffers = Buffers {
        budget,
        spare: Vec::new(),
        held: 0,
    };
    // A bundle handed out that did not fit in the budget beside the lanes
    // in flight: it goes next, once one of them ends.
    let mut pending = None;
    let mut drained = false;
    loop {
        while flowing.len() < width {
            let Some((id, bundle)) = pending.take().or_else(|| {
                let got = (!drained).then(&mut *next).flatten();
                drained = got.is_none();
                got
            }) else {
                break;
            };
            let Some((buffer, input)) = buffers.admit(&bundle, options, flowing.is_empty()) else {
                pending = Some((id, bundle));
                break;
            };
            match Lane::start(id, bundle, options, hash, buffer, sink) {
                Ok(lane) => flowing.push(Lane { input, ..lane }),
                Err(buffer) => {
                    buffers.spare.push(buffer);
                    buffers.budget.give(input);
                }
            }
        }
        if flowing.is_empty() {
            break;
        }
        round(&mut flowing, &mut buffers.spare, buffers.budget, hash, sink);
    }
    buffers.budget.give(buffers.held);
}

/// A walk's decoding buffers: those no lane uses, and the budget bytes all
/// of them hold (each one's capacity, as taken).
struct Buffers<'b> {
    budget: &'b MemoryBudget,
    spare: Vec<Vec<u8>>,
    held: u64,
}

impl Buffers<'_> {
    /// A buffer with room for `bundle` decoded whole, and the bytes of its
    /// compressed input (whose pages are read while it is decoded), both
    /// taken from the budget (the input's to give back when its lane
    /// ends); or `None` if they do not fit beside the lanes in flight.
    /// `alone`: no lane is in flight, so the walk may wait for room, having
    /// given back every buffer it holds first (a thread that waits holds
    /// nothing, so none waits on another). A bundle that will not be
    /// decoded into a buffer (zlib, ruzstd, over the size limit) needs none.
    fn admit(
        &mut self,
        bundle: &CompressedBundle<'_>,
        options: &DecompressOptions,
        alone: bool,
    ) -> Option<(Vec<u8>, u64)> {
        // The largest spare is the likeliest to fit without growing.
        self.spare.sort_by_key(Vec::capacity);
        let buffer = self.spare.pop().unwrap_or_default();
        let len = bundle.uncompressed_size();
        let decoded_here = bundle.method() == CompressionMethod::Zstd
            && options.zstd_decoder == ZstdDecoder::Libzstd
            && len <= options.limits.max_uncompressed_size;
        if !decoded_here {
            return Some((buffer, 0));
        }
        let input = to_u64(bundle.data().len());
        let capacity = to_u64(buffer.capacity());
        let room = MemoryBudget::room_for(len);
        let grow = if len <= capacity {
            0
        } else {
            room.saturating_sub(capacity)
        };
        if self.budget.try_take(grow.saturating_add(input)) {
            self.held = self.held.saturating_add(grow);
            let buffer = if grow == 0 {
                buffer
            } else {
                grown(buffer, room, self)
            };
            return Some((buffer, input));
        }
        if !alone {
            self.spare.push(buffer);
            return None;
        }
        // Alone: give back all, then wait for the whole room.
        drop(buffer);
        self.spare.clear();
        self.budget.give(core::mem::take(&mut self.held));
        self.budget.take(room.saturating_add(input));
        self.held = room;
        Some((grown(Vec::new(), room, self), input))
    }
}

/// `buffer` let go and had anew with capacity `room`, whose bytes the
/// budget already counts in place of its own (given back if it cannot be
/// had: decoding then fails for want of memory).
fn grown(buffer: Vec<u8>, room: u64, buffers: &mut Buffers<'_>) -> Vec<u8> {
    drop(buffer);
    let mut fresh = Vec::new();
    let had = usize::try_from(room)
        .ok()
        .is_some_and(|room| fresh.try_reserve_exact(room).is_ok());
    if !had {
        buffers.held = buffers.held.saturating_sub(room);
        buffers.budget.give(room);
    }
    fresh
}

/// One bundle being walked.
struct Lane<'d> {
    id: usize,
    stream: Stream<'d>,
    filling: Filling<'d>,
    /// How much of the output the sink has had.
    told: usize,
    /// Where the last fill's stretch starts.
    from: usize,
    hasher: Hasher,
    /// How much of the output the hasher has had: it follows `told` by
    /// whole blocks, as far as every lane has come (with no hash, `told`).
    hashed: usize,
    /// How the walk ended (or `None` while it goes on).
    ended: Option<crate::Result<()>>,
    /// The budget bytes its compressed input holds, given back when it ends.
    input: u64,
}

impl<'d> Lane<'d> {
    /// A lane for `bundle` decoding into `buffer`, or the buffer back once
    /// the bundle has been walked alone or has failed before decoding
    /// anything (told to `sink`).
    fn start(
        id: usize,
        bundle: CompressedBundle<'d>,
        options: &DecompressOptions,
        hash: bool,
        buffer: Vec<u8>,
        sink: &mut dyn FnMut(usize, Walked<'_>) -> ControlFlow<()>,
    ) -> Result<Self, Vec<u8>> {
        let stream = bundle.stream();
        if stream.method != CompressionMethod::Zstd || options.zstd_decoder != ZstdDecoder::Libzstd
        {
            walk_alone(id, &stream, options, hash, sink);
            return Err(buffer);
        }
        let fail = |error, buffer, sink: &mut dyn FnMut(usize, Walked<'_>) -> ControlFlow<()>| {
            let _ = sink(id, Walked::Done(Err(error)));
            Err(buffer)
        };
        let size = match stream.check_header(&options.limits) {
            Ok(size) => size,
            Err(error) => return fail(error, buffer, sink),
        };
        let buffer = match sized(buffer, size) {
            Ok(buffer) => buffer,
            Err(error) => return fail(error, Vec::new(), sink),
        };
        match Filling::new(stream.bytes, buffer, max_window(&options.limits)) {
            Ok(filling) => Ok(Lane {
                id,
                stream,
                filling,
                told: 0,
                from: 0,
                hasher: Hasher::new(),
                hashed: 0,
                ended: None,
                input: 0,
            }),
            Err(buffer) => fail(stream.error(StreamFault::Malformed, 0), buffer, sink),
        }
    }

    /// Decodes until [`STRETCH`] bytes wait to be hashed, or the walk is
    /// over (`ended`, as [`Stream::walk`] would end it), and tells what is
    /// new: a lane ahead of the others decodes less, so that they hash
    /// side by side as far as possible.
    fn fill(&mut self) {
        self.from = self.told;
        while self.ended.is_none() && self.filling.finished(self.hashed).len() < STRETCH {
            self.ended = match self.filling.step() {
                Ok(None) => None,
                Ok(Some(Decoded::Exact)) => Some(self.stream.walk_end(true, self.stream.declared)),
                Ok(Some(Decoded::Short(actual))) => Some(self.stream.walk_end(true, actual)),
                Ok(Some(Decoded::Long)) => Some(Err(self.stream.too_long())),
                Err(error) => Some(Err(self.stream.walk_fault(error))),
            };
        }
        // A walk that failed tells no more bytes.
        if !matches!(self.ended, Some(Err(_))) {
            self.told = self
                .from
                .saturating_add(self.filling.finished(self.from).len());
        }
    }

    /// The last fill's new bytes.
    fn stretch(&self) -> &[u8] {
        let new = self.told.saturating_sub(self.from);
        self.filling
            .finished(self.from)
            .get(..new)
            .unwrap_or_default()
    }
}

/// `buffer` at exactly `len` bytes: cut, or grown. Grown past its
/// capacity, it is let go first and had anew, an eighth larger, so that
/// two buffers are never held at once (nor the old bytes copied) and the
/// next bundle, a little larger, still fits.
fn sized(mut buffer: Vec<u8>, len: usize) -> crate::Result<Vec<u8>> {
    if len > buffer.capacity() {
        buffer = Vec::new();
        let requested = MemoryBudget::room_for(to_u64(len));
        let room = usize::try_from(requested).unwrap_or(usize::MAX);
        let out_of_memory = || crate::Error::new(crate::ErrorKind::OutOfMemory { requested }, 0);
        buffer
            .try_reserve_exact(room)
            .map_err(|_| out_of_memory())?;
    }
    buffer.resize(len, 0);
    buffer.truncate(len);
    Ok(buffer)
}

/// About how much each lane decodes in a round.
const STRETCH: usize = 256 << 10;

/// One stretch of every lane: decoded, told, hashed together as far as
/// they all have come; lanes whose walk is over hash the rest alone, are
/// told how it ended and leave, their buffers kept for the next bundles.
fn round<'d>(
    lanes: &mut Vec<Lane<'d>>,
    spare: &mut Vec<Vec<u8>>,
    budget: &MemoryBudget,
    hash: bool,
    sink: &mut dyn FnMut(usize, Walked<'_>) -> ControlFlow<()>,
) {
    let mut dropped = Vec::new();
    for (index, lane) in lanes.iter_mut().enumerate() {
        lane.fill();
        let stretch = lane.stretch();
        if !stretch.is_empty() && sink(lane.id, Walked::Stretch(stretch)).is_break() {
            dropped.push(index);
        }
    }
    if hash {
        let mut pairs: Vec<(&mut Hasher, &[u8])> = lanes
            .iter_mut()
            .map(|lane| {
                let new = lane.told.saturating_sub(lane.hashed);
                let bytes = lane
                    .filling
                    .finished(lane.hashed)
                    .get(..new)
                    .unwrap_or_default();
                (&mut lane.hasher, bytes)
            })
            .collect();
        let common = md5::consume_blocks_together(&mut pairs);
        let alone = lanes.len() == 1 || common == 0;
        for lane in lanes.iter_mut() {
            lane.hashed = lane.hashed.saturating_add(common);
            // A lane with no partner (alone, or beside one that ended)
            // hashes its whole blocks by itself, so that it never waits on
            // one; beside a partner, what it has more waits for the next
            // round (its fill decodes nothing while a stretch waits).
            let waiting = lane.filling.finished(lane.hashed);
            if alone && waiting.len() >= STRETCH {
                let whole = waiting.get(..waiting.len() & !63).unwrap_or_default();
                lane.hasher.consume(whole);
                lane.hashed = lane.hashed.saturating_add(whole.len());
            }
        }
    } else {
        // Nothing waits to be hashed: each round decodes a stretch.
        for lane in lanes.iter_mut() {
            lane.hashed = lane.told;
        }
    }
    let mut kept = Vec::with_capacity(lanes.len());
    for (index, lane) in core::mem::take(lanes).into_iter().enumerate() {
        if dropped.contains(&index) {
            budget.give(lane.input);
            spare.push(lane.filling.into_buffer());
            continue;
        }
        match lane.ended {
            None => kept.push(lane),
            Some(result) => {
                let mut hasher = lane.hasher;
                let done = result.map(|()| {
                    if !hash {
                        return 0;
                    }
                    let rest = lane.told.saturating_sub(lane.hashed);
                    hasher.consume(
                        lane.filling
                            .finished(lane.hashed)
                            .get(..rest)
                            .unwrap_or_default(),
                    );
                    hasher.truncated()
                });
                budget.give(lane.input);
                spare.push(lane.filling.into_buffer());
                let _ = sink(lane.id, Walked::Done(done));
            }
        }
    }
    *lanes = kept;
}

/// Walks one bundle to its end on its own ([`Stream::walk`]), hashing it
/// as it goes if `hash` asks.
fn walk_alone(
    id: usize,
    stream: &Stream<'_>,
    options: &DecompressOptions,
    hash: bool,
    sink: &mut dyn FnMut(usize, Walked<'_>) -> ControlFlow<()>,
) {
    let mut hasher = Hasher::new();
    let mut dropped = false;
    let walked = stream.walk(options, &mut |stretch| {
        if sink(id, Walked::Stretch(stretch)).is_break() {
            dropped = true;
            return ControlFlow::Break(());
        }
        if hash {
            hasher.consume(stretch);
        }
        ControlFlow::Continue(())
    });
    if !dropped {
        let done = walked.map(|_| if hash { hasher.truncated() } else { 0 });
        let _ = sink(id, Walked::Done(done));
    }
}
