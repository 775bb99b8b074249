//! Decoding one zstd frame into a buffer of exactly the declared size.
//!
//! Two decoders: libzstd (feature `zstd`), which decodes straight into the
//! output and is the faster one, and ruzstd (feature `alloc`), pure Rust,
//! for builds without a C library. Both get a frame whose header and extent
//! [`super::zstd_frame`] has already checked, and a window cap (libzstd's
//! one-shot decoding writes into the output and keeps no window of its own).
//!
//! [`decode_chunked`] hands each stretch of output to a callback as soon as
//! it is final, so that it can be hashed while the rest is decoded. libzstd
//! then streams straight into the output (its stable output buffer, the
//! crate's one `unsafe` module: safe Rust cannot say that another thread
//! reads the finished part of the buffer libzstd is writing); ruzstd streams
//! through its own window anyway.

use super::stream::{Decoded, FrameError, ZstdDecoder};

/// Decodes `frame` into `out`, or `None` if this build lacks `decoder`.
pub(crate) fn decode(
    decoder: ZstdDecoder,
    frame: &[u8],
    out: &mut [u8],
    max_window: u64,
) -> Option<Result<Decoded, FrameError>> {
    let _ = (&frame, &out, max_window);
    match decoder {
        #[cfg(feature = "zstd")]
        ZstdDecoder::Libzstd => Some(libzstd::decode(frame, out)),
        #[cfg(feature = "alloc")]
        ZstdDecoder::Ruzstd => Some(ruzstd_decoder::decode(frame, out, max_window)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Decodes `frame` into `out` as [`decode`] does, handing `emit` each
/// stretch of output, in order, once it is final; `None` if this build lacks
/// `decoder`.
#[cfg(feature = "std")]
pub(crate) fn decode_chunked<'o>(
    decoder: ZstdDecoder,
    frame: &[u8],
    out: &'o mut [u8],
    max_window: u64,
    emit: &mut dyn FnMut(&'o [u8]),
) -> Option<Result<Decoded, FrameError>> {
    match decoder {
        #[cfg(feature = "zstd")]
        ZstdDecoder::Libzstd => Some(libzstd::decode_chunked(frame, out, max_window, emit)),
        ZstdDecoder::Ruzstd => Some(ruzstd_decoder::decode_chunked(frame, out, max_window, emit)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Decodes `frame` front to back through a buffer of one stretch, handing
/// `emit` each stretch of output in order until it breaks; `None` if this
/// build lacks `decoder`. `true` when the frame ended, `false` when `emit`
/// stopped it.
#[cfg(feature = "alloc")]
pub(crate) fn walk(
    decoder: ZstdDecoder,
    frame: &[u8],
    max_window: u64,
    emit: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
) -> Option<Result<bool, FrameError>> {
    let _ = (&frame, max_window, &emit);
    match decoder {
        #[cfg(feature = "zstd")]
        ZstdDecoder::Libzstd => Some(libzstd::walk(frame, max_window, emit)),
        ZstdDecoder::Ruzstd => Some(ruzstd_decoder::walk(frame, max_window, emit)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// How much output a walk hands over at a time.
#[cfg(feature = "alloc")]
pub(crate) const STRETCH: usize = 256 << 10;

/// Splits the first `n` bytes off `rest`, which a decoder has just written,
/// and hands them to `emit`.
#[cfg(feature = "alloc")]
fn emit_front<'o>(rest: &mut &'o mut [u8], n: usize, emit: &mut dyn FnMut(&'o [u8])) -> Option<()> {
    let (done, tail) = core::mem::take(rest).split_at_mut_checked(n)?;
    *rest = tail;
    if !done.is_empty() {
        emit(done);
    }
    Some(())
}

#[cfg(feature = "zstd")]
pub(crate) mod libzstd {
    use super::super::stream::{CompressionMethod, StreamFault};
    use super::{Decoded, FrameError};
    use crate::bytes::to_u64;
    use zstd_safe::{get_error_name, DCtx, ErrorCode};

    pub(crate) fn decode(frame: &[u8], out: &mut [u8]) -> Result<Decoded, FrameError> {
        let mut context = DCtx::try_create().ok_or((StreamFault::Malformed, 0))?;
        match context.decompress(out, frame) {
            Ok(written) if written == out.len() => Ok(Decoded::Exact),
            Ok(written) => Ok(Decoded::Short(to_u64(written))),
            Err(code) => failed(code),
        }
    }

    /// A libzstd error as an outcome: running out of output room means the
    /// frame holds more than the buffer.
    fn failed(code: ErrorCode) -> Result<Decoded, FrameError> {
        if get_error_name(code).contains("too small") {
            Ok(Decoded::Long)
        } else {
            Err(fault(code))
        }
    }

    fn fault(code: ErrorCode) -> FrameError {
        if get_error_name(code).contains("checksum") {
            (StreamFault::ChecksumMismatch, 0)
        } else {
            (StreamFault::Malformed, 0)
        }
    }

    /// Decodes the start of `frame` straight into `out` (libzstd's stable
    /// output buffer: no window of its own, which for a frame of one
    /// segment would be as large as the whole content), until `enough` says
    /// the output so far suffices, `out` is full or the frame ends. Returns
    /// how much of `out` is written.
    pub(crate) fn decode_prefix(
        frame: &[u8],
        out: &mut [u8],
        max_window: u64,
        enough: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<usize, FrameError> {
        let mut written = 0;
        // Stopped, at the frame's end, or `out` full (`Long`): what is
        // written is the prefix either way.
        steps(frame, out, max_window, &mut |all, _| {
            written = all.len();
            if enough(all) {
                core::ops::ControlFlow::Break(())
            } else {
                core::ops::ControlFlow::Continue(())
            }
        })?;
        Ok(written)
    }

    /// [`super::walk`] with libzstd's buffered streaming decoder: it keeps
    /// the window (at most `max_window`) itself and copies each stretch of
    /// output into one buffer of `STRETCH` bytes.
    pub(crate) fn walk(
        frame: &[u8],
        max_window: u64,
        emit: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
    ) -> Result<bool, FrameError> {
        let mut walker = Walker::new(frame, max_window)?;
        let mut stretch = alloc::vec![0u8; super::STRETCH];
        loop {
            let (written, ended) = walker.fill(&mut stretch)?;
            let done = stretch.get(..written).unwrap_or_default();
            if !done.is_empty() && emit(done).is_break() {
                return Ok(false);
            }
            if ended {
                return Ok(true);
            }
        }
    }

    /// One frame decoded by libzstd's buffered streaming decoder, a buffer
    /// at a time, whenever its owner asks: several frames can be decoded in
    /// turn on one thread, each keeping its own window (at most
    /// `max_window`).
    pub(crate) struct Walker<'f> {
        context: DCtx<'static>,
        frame: &'f [u8],
        /// How much of the frame libzstd has taken.
        consumed: usize,
    }

    impl<'f> Walker<'f> {
        pub(crate) fn new(frame: &'f [u8], max_window: u64) -> Result<Self, FrameError> {
            use zstd_safe::DParameter;
            let malformed = (StreamFault::Malformed, 0);
            let mut context = DCtx::try_create().ok_or(malformed)?;
            let window_log = max_window.max(2).ilog2().min(31);
            context
                .set_parameter(DParameter::WindowLogMax(window_log))
                .map_err(|_| malformed)?;
            Ok(Walker {
                context,
                frame,
                consumed: 0,
            })
        }

        /// Decodes into `out` until it is full or the frame ends: how much
        /// it wrote, and whether the frame ended. A frame that stops
        /// before its end is malformed.
        pub(crate) fn fill(&mut self, out: &mut [u8]) -> Result<(usize, bool), FrameError> {
            use zstd_safe::{InBuffer, OutBuffer};
            let frame = self.frame;
            let mut input = InBuffer::around(frame);
            input.set_pos(self.consumed);
            let room = out.len();
            let mut output = OutBuffer::around(out);
            loop {
                let before = (input.pos(), output.pos());
                let hint = self
                    .context
                    .decompress_stream(&mut output, &mut input)
                    .map_err(fault)?;
                self.consumed = input.pos();
                if hint == 0 {
                    return Ok((output.pos(), true));
                }
                if output.pos() == room {
                    return Ok((output.pos(), false));
                }
                if (input.pos(), output.pos()) == before && input.pos() == frame.len() {
                    // The frame stops before its end.
                    return Err((StreamFault::Malformed, to_u64(frame.len())));
                }
            }
        }
    }

    /// How much of the frame one streaming call is given: small enough that
    /// the hash starts early and ends soon after the decoding (about 256 KiB
    /// of output at the ratios zstd reaches on device code).
    pub(super) const IN_STEP: usize = 64 << 10;

    /// Streaming decoding for [`super::decode_chunked`], straight into `out`:
    /// libzstd's stable output buffer, so it keeps no window of its own (a
    /// second copy of the output) and refers back into what it has written.
    /// The frame is fed `IN_STEP` bytes at a time and whatever each call
    /// finishes goes to `emit`. A frame that stops making progress is
    /// malformed (the caller has checked its extent, so this is a guard).
    pub(crate) fn decode_chunked<'o>(
        frame: &[u8],
        out: &'o mut [u8],
        max_window: u64,
        emit: &mut dyn FnMut(&'o [u8]),
    ) -> Result<Decoded, FrameError> {
        let ended = steps(frame, out, max_window, &mut |all, from| {
            emit(all.get(from..).unwrap_or_default());
            core::ops::ControlFlow::Continue(())
        })?;
        // `each` never stops it, so it always ends with an outcome.
        Ok(ended.unwrap_or(Decoded::Long))
    }

    /// Feeds `frame` to libzstd `IN_STEP` bytes at a time, decoding straight
    /// into `out`, and after each step that wrote something hands `each`
    /// the whole output so far (final: libzstd never writes it again) and
    /// where the new part starts. How it ended: `None` if `each` stopped
    /// it, else as one-shot decoding ends (`Long` when `out` is full). A
    /// frame that stops making progress is malformed.
    fn steps<'o>(
        frame: &[u8],
        out: &'o mut [u8],
        max_window: u64,
        each: &mut dyn FnMut(&'o [u8], usize) -> core::ops::ControlFlow<()>,
    ) -> Result<Option<Decoded>, FrameError> {
        let mut stream = stable::Stream::new(out, max_window).ok_or((StreamFault::Malformed, 0))?;
        let mut fed = 0usize;
        loop {
            fed = frame.len().min(fed.saturating_add(IN_STEP));
            let before = (stream.consumed(), stream.written());
            let status = stream.step(frame, fed);
            if stream.written() > before.1 && each(stream.finished(0), before.1).is_break() {
                return Ok(None);
            }
            if let Some(ended) = outcome(status, &stream, before, fed == frame.len())? {
                return Ok(Some(ended));
            }
        }
    }

    /// How a step of `stream` that returned `status` leaves the frame:
    /// ended (as one-shot decoding ends), going on (`None`), or malformed
    /// when the whole frame was fed (`all_fed`) and the step moved nothing
    /// from where it was `before` (consumed, written).
    fn outcome(
        status: Result<usize, ErrorCode>,
        stream: &stable::Stream<'_>,
        before: (usize, usize),
        all_fed: bool,
    ) -> Result<Option<Decoded>, FrameError> {
        match status {
            Err(code) => failed(code).map(Some),
            Ok(0) if stream.written() == stream.len() => Ok(Some(Decoded::Exact)),
            Ok(0) => Ok(Some(Decoded::Short(to_u64(stream.written())))),
            Ok(_) if all_fed && (stream.consumed(), stream.written()) == before => {
                Err((StreamFault::Malformed, 0))
            }
            Ok(_) => Ok(None),
        }
    }

    /// One frame decoded straight into a buffer of exactly its size that it
    /// owns, a step at a time whenever its owner asks, so that several
    /// frames can be decoded in turn on one thread; the buffer is given
    /// back for the next frame.
    pub(crate) struct Filling<'f> {
        owned: stable::Owned,
        frame: &'f [u8],
        fed: usize,
    }

    impl<'f> Filling<'f> {
        /// A decoder of `frame` into `buffer`, whose length must be the
        /// declared size; the buffer back if libzstd cannot have one.
        pub(crate) fn new(
            frame: &'f [u8],
            buffer: alloc::vec::Vec<u8>,
            max_window: u64,
        ) -> Result<Self, alloc::vec::Vec<u8>> {
            let owned = stable::Owned::new(buffer, max_window)?;
            Ok(Filling {
                owned,
                frame,
                fed: 0,
            })
        }

        /// Feeds the next `IN_STEP` bytes of the frame: how the frame ended,
        /// once it has ([`Decoded`], as one-shot decoding ends).
        pub(crate) fn step(&mut self) -> Result<Option<Decoded>, FrameError> {
            let frame = self.frame;
            self.fed = frame.len().min(self.fed.saturating_add(IN_STEP));
            let stream = self.owned.stream();
            let before = (stream.consumed(), stream.written());
            let status = stream.step(frame, self.fed);
            outcome(status, stream, before, self.fed == frame.len())
        }

        /// The output from `from` to what is written: final.
        pub(crate) fn finished(&self, from: usize) -> &[u8] {
            self.owned.finished(from)
        }

        /// The buffer, for the next frame.
        pub(crate) fn into_buffer(self) -> alloc::vec::Vec<u8> {
            self.owned.into_buffer()
        }
    }

    /// libzstd's streaming decoder writing into one buffer that stays put
    /// between calls (`ZSTD_d_stableOutBuffer`): one of the core's two unsafe
    /// modules (the other is scan::search's `cpu`). It saves the hashed
    /// decoding of a large bundle a second copy of the output and its page
    /// faults (benches/README.md); the hash thread reads what is finished
    /// while libzstd writes the rest of the same buffer, which safe Rust
    /// cannot say.
    #[allow(unsafe_code)]
    mod stable {
        use core::marker::PhantomData;
        use core::ptr::NonNull;
        use zstd_safe::ErrorCode;
        use zstd_sys::{
            ZSTD_DCtx, ZSTD_DCtx_setParameter, ZSTD_createDCtx, ZSTD_dParameter,
            ZSTD_decompressStream, ZSTD_freeDCtx, ZSTD_inBuffer, ZSTD_isError, ZSTD_outBuffer,
        };

        /// One frame being decoded into the buffer `Stream::new` took.
        pub(super) struct Stream<'o> {
            context: NonNull<ZSTD_DCtx>,
            /// The output buffer (`dst`, `size`) and how much of it is written
            /// (`pos`); libzstd requires `dst` and `size` unchanged between calls.
            output: ZSTD_outBuffer,
            consumed: usize,
            /// The buffer is borrowed, mutably, for as long as what
            /// [`Stream::finished`] hands out lives.
            buffer: PhantomData<&'o mut [u8]>,
        }

        impl<'o> Stream<'o> {
            /// A decoder for one frame into `out`, with at most `max_window`
            /// bytes of window; `None` if libzstd cannot have one.
            pub(super) fn new(out: &'o mut [u8], max_window: u64) -> Option<Self> {
                // SAFETY: no arguments; a null result is handled.
                let context = NonNull::new(unsafe { ZSTD_createDCtx() })?;
                let output = ZSTD_outBuffer {
                    dst: out.as_mut_ptr().cast(),
                    size: out.len(),
                    pos: 0,
                };
                // From here `out` is reached only through `output.dst`.
                let stream = Stream {
                    context,
                    output,
                    consumed: 0,
                    buffer: PhantomData,
                };
                let window_log = i32::try_from(max_window.max(2).ilog2().min(31)).ok()?;
                stream.set(ZSTD_dParameter::ZSTD_d_windowLogMax, window_log)?;
                // ZSTD_d_stableOutBuffer (zstd.h, experimental parameter 2).
                stream.set(ZSTD_dParameter::ZSTD_d_experimentalParam2, 1)?;
                Some(stream)
            }

            fn set(&self, parameter: ZSTD_dParameter, value: i32) -> Option<()> {
                // SAFETY: `context` is a live context this stream owns.
                let code =
                    unsafe { ZSTD_DCtx_setParameter(self.context.as_ptr(), parameter, value) };
                // SAFETY: a pure function of its argument.
                (unsafe { ZSTD_isError(code) } == 0).then_some(())
            }

            /// Decodes what the first `fed` bytes of `frame` allow: libzstd's
            /// hint (0 once the frame is decoded and flushed) or its error.
            /// Every call gets the same frame (libzstd copies what it keeps
            /// of a partial block, so the frame need not outlive the call).
            pub(super) fn step(&mut self, frame: &[u8], fed: usize) -> Result<usize, ErrorCode> {
                let mut input = ZSTD_inBuffer {
                    src: frame.as_ptr().cast(),
                    size: fed.min(frame.len()),
                    pos: self.consumed.min(fed),
                };
                // SAFETY: `context` is live; `input` describes readable bytes
                // of `frame`; `output` is the buffer borrowed by `new` for 'o,
                // unchanged since (as the stable output buffer requires), of
                // which libzstd writes only `[pos, size)`: it never rewrites
                // what it has written, so the `finished` slices other threads
                // may be reading are not written.
                let code = unsafe {
                    ZSTD_decompressStream(self.context.as_ptr(), &mut self.output, &mut input)
                };
                self.consumed = input.pos;
                // SAFETY: a pure function of its argument.
                if unsafe { ZSTD_isError(code) } != 0 {
                    Err(code)
                } else {
                    Ok(code)
                }
            }

            /// How much of the frame libzstd has taken.
            pub(super) fn consumed(&self) -> usize {
                self.consumed
            }

            /// How much of the output is written.
            pub(super) fn written(&self) -> usize {
                self.output.pos
            }

            /// The output buffer's length.
            pub(super) fn len(&self) -> usize {
                self.output.size
            }

            /// The output from `from` to what is written: final, as libzstd
            /// writes nothing before `pos` again.
            pub(super) fn finished(&self, from: usize) -> &'o [u8] {
                let from = from.min(self.output.pos);
                // SAFETY: `from <= pos <= size`, so the offset stays inside
                // (or one past the end of) the buffer `new` borrowed, one
                // allocation.
                let start = unsafe { self.output.dst.cast::<u8>().add(from) };
                // SAFETY: `[from, pos)` lies inside the buffer `new` borrowed
                // for 'o (`pos <= size`), is initialized (written by libzstd,
                // and the buffer was a `&mut [u8]`), and is not written again
                // while the stream lives (see `step`) nor after (the borrow
                // went to the stream), so it may be shared for 'o.
                unsafe { core::slice::from_raw_parts(start, self.output.pos.saturating_sub(from)) }
            }
        }

        /// A [`Stream`] into a buffer it owns and gives back at the end,
        /// so that one buffer serves frame after frame without being had
        /// from the allocator (and faulted in) again.
        pub(super) struct Owned {
            // Declared before `buffer`, so dropped first: libzstd writes
            // into the buffer only while the stream lives.
            stream: Stream<'static>,
            /// Not reached while `stream` lives, but by `into_buffer`, which
            /// ends the stream first.
            buffer: alloc::vec::Vec<u8>,
        }

        impl Owned {
            /// A decoder for one frame into all of `buffer`; the buffer
            /// back if libzstd cannot have one.
            pub(super) fn new(
                mut buffer: alloc::vec::Vec<u8>,
                max_window: u64,
            ) -> Result<Self, alloc::vec::Vec<u8>> {
                // SAFETY: the slice is the vector's initialized elements, in
                // its heap allocation, which stays put when the vector (or
                // this struct) moves, and is reached only through the stream
                // until `into_buffer` ends it; `'static` never leaves this
                // struct: `finished` ties what it lends to `&self`.
                let out: &'static mut [u8] =
                    unsafe { core::slice::from_raw_parts_mut(buffer.as_mut_ptr(), buffer.len()) };
                match Stream::new(out, max_window) {
                    Some(stream) => Ok(Owned { stream, buffer }),
                    None => Err(buffer),
                }
            }

            pub(super) fn stream(&mut self) -> &mut Stream<'static> {
                &mut self.stream
            }

            /// The output from `from` to what is written, lent for as long
            /// as `self` is.
            pub(super) fn finished(&self, from: usize) -> &[u8] {
                self.stream.finished(from)
            }

            /// Ends the stream and gives the buffer back.
            pub(super) fn into_buffer(self) -> alloc::vec::Vec<u8> {
                let Owned { stream, buffer } = self;
                drop(stream);
                buffer
            }
        }

        impl Drop for Stream<'_> {
            fn drop(&mut self) {
                // SAFETY: `context` came from ZSTD_createDCtx and is freed once.
                unsafe { ZSTD_freeDCtx(self.context.as_ptr()) };
            }
        }
    }

    /// Compresses `input` as one frame at `level`, content size recorded, no
    /// checksum; with long-distance matching as clang-offload-bundler does
    /// (`long_distance`), or without as NVIDIA's `fatbinary` does.
    pub(crate) fn compress(
        input: &[u8],
        level: i32,
        long_distance: bool,
    ) -> Result<alloc::vec::Vec<u8>, crate::Error> {
        use zstd_safe::{compress_bound, CCtx, CParameter};
        let failed = |_| {
            crate::Error::new(
                crate::ErrorKind::CorruptStream {
                    method: CompressionMethod::Zstd,
                    fault: StreamFault::Malformed,
                },
                0,
            )
        };
        let mut context = CCtx::try_create().ok_or_else(|| failed(0))?;
        context
            .set_parameter(CParameter::CompressionLevel(level))
            .map_err(failed)?;
        context
            .set_parameter(CParameter::EnableLongDistanceMatching(long_distance))
            .map_err(failed)?;
        let mut out = crate::bytes::reserve(crate::bytes::to_u64(compress_bound(input.len())))?;
        context.compress2(&mut out, input).map_err(failed)?;
        Ok(out)
    }
}

#[cfg(feature = "alloc")]
pub(crate) mod ruzstd_decoder {
    use super::super::stream::StreamFault;
    use super::{Decoded, FrameError};
    use crate::bytes::to_u64;
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
    use ruzstd::io::Read;

    /// Output is drained every this many bytes, so memory stays at the window
    /// plus one step whatever the frame inflates to.
    const STEP: usize = 1 << 20;

    pub(crate) fn decode(
        frame: &[u8],
        out: &mut [u8],
        max_window: u64,
    ) -> Result<Decoded, FrameError> {
        decode_chunked(frame, out, max_window, &mut |_| {})
    }

    /// A frame being decoded by ruzstd: the decoder and what is left of the
    /// frame, with ruzstd's errors (which locate nothing) mapped to a
    /// malformed stream at the first byte not yet consumed.
    struct Frame<'f> {
        decoder: FrameDecoder,
        frame: &'f [u8],
        source: &'f [u8],
    }

    impl<'f> Frame<'f> {
        /// Reads the frame header, with the window capped at `max_window`.
        fn new(frame: &'f [u8], max_window: u64) -> Result<Self, FrameError> {
            let mut decoder = FrameDecoder::new();
            decoder.set_max_window_size(max_window);
            let mut source = frame;
            let init = decoder.init(&mut source);
            let this = Frame {
                decoder,
                frame,
                source,
            };
            init.map_err(|_| this.malformed())?;
            Ok(this)
        }

        fn malformed(&self) -> FrameError {
            let at = self.frame.len().saturating_sub(self.source.len());
            (StreamFault::Malformed, to_u64(at))
        }

        /// Decodes up to [`STEP`] more bytes into ruzstd's window; `true`
        /// once the last block is decoded.
        fn step(&mut self) -> Result<bool, FrameError> {
            let strategy = BlockDecodingStrategy::UptoBytes(STEP);
            let step = self.decoder.decode_blocks(&mut self.source, strategy);
            step.map_err(|_| self.malformed())
        }

        /// Moves decoded bytes out of the window into `out`; how many.
        fn read(&mut self, out: &mut [u8]) -> Result<usize, FrameError> {
            let read = self.decoder.read(out);
            read.map_err(|_| self.malformed())
        }

        /// The frame's checksum, if it has one (the low 32 bits of the XXH64
        /// ruzstd computes of what it hands out), against the output.
        fn check_checksum(&self) -> Result<(), FrameError> {
            if let Some(stored) = self.decoder.get_checksum_from_data() {
                if self.decoder.get_calculated_checksum() != Some(stored) {
                    return Err((StreamFault::ChecksumMismatch, to_u64(self.frame.len())));
                }
            }
            Ok(())
        }
    }

    /// [`super::walk`] with ruzstd, which keeps its window itself.
    pub(crate) fn walk(
        frame: &[u8],
        max_window: u64,
        emit: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
    ) -> Result<bool, FrameError> {
        let mut frame = Frame::new(frame, max_window)?;
        let mut stretch = alloc::vec![0u8; super::STRETCH];
        loop {
            let finished = frame.step()?;
            loop {
                let n = frame.read(&mut stretch)?;
                let done = stretch.get(..n).unwrap_or_default();
                if done.is_empty() {
                    break;
                }
                if emit(done).is_break() {
                    return Ok(false);
                }
            }
            if finished {
                break;
            }
        }
        frame.check_checksum()?;
        Ok(true)
    }

    /// [`decode`], handing `emit` each stretch of output once it is final.
    pub(crate) fn decode_chunked<'o>(
        frame: &[u8],
        mut rest: &'o mut [u8],
        max_window: u64,
        emit: &mut dyn FnMut(&'o [u8]),
    ) -> Result<Decoded, FrameError> {
        let mut frame = Frame::new(frame, max_window)?;
        let mut written = 0u64;
        loop {
            let finished = frame.step()?;
            let n = frame.read(rest)?;
            super::emit_front(&mut rest, n, emit).ok_or_else(|| frame.malformed())?;
            written = written.saturating_add(to_u64(n));
            if frame.decoder.can_collect() != 0 {
                return Ok(Decoded::Long);
            }
            if finished {
                break;
            }
        }
        frame.check_checksum()?;
        Ok(if rest.is_empty() {
            Decoded::Exact
        } else {
            Decoded::Short(written)
        })
    }
}

#[cfg(all(test, feature = "zstd"))]
mod tests {
    use super::*;
    use crate::compressed::StreamFault;
    use alloc::vec;
    use alloc::vec::Vec;

    /// 3 MiB of 4-bit noise (about 2:1 under zstd), so the frame spans many
    /// `IN_STEP`s, with runs copied from earlier output so that blocks refer
    /// back across them.
    fn content() -> Vec<u8> {
        let mut state = 0x9e37_79b9u32;
        let mut out = Vec::with_capacity(3 << 20);
        while out.len() < 3 << 20 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            if state.is_multiple_of(16) && out.len() > 1 << 20 {
                let from = out.len() - (1 << 20) + (state as usize >> 12) % 4096;
                out.extend_from_within(from..from + 300);
            } else {
                out.push((state >> 7) as u8 & 0x0f);
            }
        }
        out
    }

    fn frame(content: &[u8], checksum: bool) -> Vec<u8> {
        use zstd_safe::{CCtx, CParameter};
        let mut context = CCtx::create();
        context
            .set_parameter(CParameter::ChecksumFlag(checksum))
            .unwrap();
        let mut out = Vec::with_capacity(zstd_safe::compress_bound(content.len()));
        context.compress2(&mut out, content).unwrap();
        out
    }

    /// Decodes with [`libzstd::decode_chunked`] into a buffer of `len`
    /// bytes, checking that the stretches handed out are the buffer's, in
    /// order, back to back.
    fn chunked(frame: &[u8], len: usize) -> (Result<Decoded, FrameError>, Vec<u8>, usize) {
        let mut out = vec![0u8; len];
        let base = out.as_ptr() as usize;
        let mut next = base;
        let mut emitted = Vec::new();
        let mut calls = 0;
        let result = libzstd::decode_chunked(frame, &mut out, 1 << 27, &mut |chunk| {
            assert_eq!(chunk.as_ptr() as usize, next);
            next += chunk.len();
            emitted.extend_from_slice(chunk);
            calls += 1;
        });
        assert_eq!(emitted, out[..emitted.len()]);
        (result, emitted, calls)
    }

    #[test]
    fn streaming_into_the_output_gives_the_one_shot_bytes_in_stretches() {
        let content = content();
        for checksum in [false, true] {
            let frame = frame(&content, checksum);
            assert!(frame.len() > 4 * libzstd::IN_STEP);
            let (result, emitted, calls) = chunked(&frame, content.len());
            assert_eq!(result, Ok(Decoded::Exact));
            assert!(emitted == content, "checksum {checksum}");
            assert!(calls > 4, "{calls} stretches");
        }
    }

    #[test]
    fn streaming_reports_short_long_and_damaged_frames_as_one_shot_decoding_does() {
        let content = content();
        let frame = frame(&content, true);
        let (short, emitted, _) = chunked(&frame, content.len() + 1);
        assert_eq!(short, Ok(Decoded::Short(content.len() as u64)));
        assert!(emitted == content);
        let (long, emitted, _) = chunked(&frame, content.len() - 1);
        assert_eq!(long, Ok(Decoded::Long));
        assert!(content.starts_with(&emitted));
        let mut damaged = frame.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        let (checksum, emitted, _) = chunked(&damaged, content.len());
        assert_eq!(checksum, Err((StreamFault::ChecksumMismatch, 0)));
        assert!(content.starts_with(&emitted));
        let (cut, _, _) = chunked(&frame[..frame.len() / 2], content.len());
        assert_eq!(cut, Err((StreamFault::Malformed, 0)));
        for input in [&frame[..], &damaged, &frame[..frame.len() / 2]] {
            let mut out = vec![0u8; content.len()];
            let one_shot = libzstd::decode(input, &mut out);
            let (streamed, _, _) = chunked(input, content.len());
            assert_eq!(one_shot.is_ok(), streamed.is_ok());
        }
    }
}
