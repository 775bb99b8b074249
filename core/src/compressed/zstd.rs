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
//! then streams through its own window (one more copy of the output, which
//! costs less than the hash it lets run alongside); ruzstd streams anyway.

use super::decompress::Decoded;
use super::zstd_frame::FrameError;

/// Which zstd decoder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZstdDecoder {
    /// libzstd through the `zstd` crate (feature `zstd`): decodes straight
    /// into the output, several times faster than ruzstd on large bundles.
    Libzstd,
    /// ruzstd (feature `alloc`): pure Rust, for builds without a C library.
    Ruzstd,
}

impl Default for ZstdDecoder {
    /// The faster decoder this build has.
    fn default() -> Self {
        if cfg!(feature = "zstd") {
            ZstdDecoder::Libzstd
        } else {
            ZstdDecoder::Ruzstd
        }
    }
}

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
    use super::{Decoded, FrameError};
    use crate::bytes::to_u64;
    use crate::compressed::StreamFault;
    use zstd_safe::{get_error_name, DCtx, DParameter, ErrorCode, InBuffer, OutBuffer};

    pub(crate) fn decode(frame: &[u8], out: &mut [u8]) -> Result<Decoded, FrameError> {
        let mut context = DCtx::try_create().ok_or((StreamFault::Malformed, 0))?;
        match context.decompress(out, frame) {
            Ok(written) if written == out.len() => Ok(Decoded::Exact),
            Ok(written) => Ok(Decoded::Short(to_u64(written))),
            Err(code) if get_error_name(code).contains("too small") => Ok(Decoded::Long),
            Err(code) => Err(fault(code)),
        }
    }

    fn fault(code: ErrorCode) -> FrameError {
        if get_error_name(code).contains("checksum") {
            (StreamFault::ChecksumMismatch, 0)
        } else {
            (StreamFault::Malformed, 0)
        }
    }

    /// How much output one streaming call may write: small enough that the
    /// hash starts early and ends soon after the decoding.
    const CHUNK: usize = 256 << 10;

    /// Streaming decoding for [`super::decode_chunked`]. A frame that stops
    /// making progress is malformed (the caller has checked its extent, so
    /// this is a guard, not a case).
    pub(crate) fn decode_chunked<'o>(
        frame: &[u8],
        mut rest: &'o mut [u8],
        max_window: u64,
        emit: &mut dyn FnMut(&'o [u8]),
    ) -> Result<Decoded, FrameError> {
        let malformed = (StreamFault::Malformed, 0);
        let mut context = DCtx::try_create().ok_or(malformed)?;
        let window_log = max_window.max(2).ilog2().min(31);
        context
            .set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(fault)?;
        let mut input = InBuffer::around(frame);
        let mut written = 0u64;
        while !rest.is_empty() {
            let before = input.pos();
            let room = rest.len().min(CHUNK);
            let mut window = OutBuffer::around(rest.get_mut(..room).unwrap_or_default());
            let pending = context
                .decompress_stream(&mut window, &mut input)
                .map_err(fault)?;
            let produced = window.pos();
            super::emit_front(&mut rest, produced, emit).ok_or(malformed)?;
            written = written.saturating_add(to_u64(produced));
            if pending == 0 {
                return Ok(if rest.is_empty() {
                    Decoded::Exact
                } else {
                    Decoded::Short(written)
                });
            }
            if produced == 0 && input.pos() == before {
                return Err(malformed);
            }
        }
        // The output is full: the frame must end without another byte.
        let mut probe = [0u8; 1];
        loop {
            let before = input.pos();
            let mut window = OutBuffer::around(&mut probe[..]);
            let pending = context
                .decompress_stream(&mut window, &mut input)
                .map_err(fault)?;
            if window.pos() != 0 {
                return Ok(Decoded::Long);
            }
            if pending == 0 {
                return Ok(Decoded::Exact);
            }
            if input.pos() == before {
                return Err(malformed);
            }
        }
    }

    /// Compresses `input` as one frame the way clang-offload-bundler does:
    /// the given level, long-distance matching, content size recorded.
    pub(crate) fn compress(input: &[u8], level: i32) -> Result<alloc::vec::Vec<u8>, crate::Error> {
        use zstd_safe::{compress_bound, CCtx, CParameter};
        let failed = |_| {
            crate::Error::new(
                crate::ErrorKind::CorruptStream {
                    method: crate::compressed::CompressionMethod::Zstd,
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
            .set_parameter(CParameter::EnableLongDistanceMatching(true))
            .map_err(failed)?;
        let mut out = crate::bytes::reserve(crate::bytes::to_u64(compress_bound(input.len())))?;
        context.compress2(&mut out, input).map_err(failed)?;
        Ok(out)
    }
}

#[cfg(feature = "alloc")]
pub(crate) mod ruzstd_decoder {
    use super::{Decoded, FrameError};
    use crate::bytes::to_u64;
    use crate::compressed::StreamFault;
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

    /// [`decode`], handing `emit` each stretch of output once it is final.
    pub(crate) fn decode_chunked<'o>(
        frame: &[u8],
        mut rest: &'o mut [u8],
        max_window: u64,
        emit: &mut dyn FnMut(&'o [u8]),
    ) -> Result<Decoded, FrameError> {
        let mut decoder = FrameDecoder::new();
        decoder.set_max_window_size(max_window);
        let mut source = frame;
        let at = |source: &[u8]| to_u64(frame.len().saturating_sub(source.len()));
        decoder
            .init(&mut source)
            .map_err(|_| (StreamFault::Malformed, at(source)))?;
        let mut written = 0u64;
        loop {
            let finished = decoder
                .decode_blocks(&mut source, BlockDecodingStrategy::UptoBytes(STEP))
                .map_err(|_| (StreamFault::Malformed, at(source)))?;
            let n = decoder
                .read(rest)
                .map_err(|_| (StreamFault::Malformed, at(source)))?;
            super::emit_front(&mut rest, n, emit).ok_or((StreamFault::Malformed, at(source)))?;
            written = written.saturating_add(to_u64(n));
            if decoder.can_collect() != 0 {
                return Ok(Decoded::Long);
            }
            if finished {
                break;
            }
        }
        // ruzstd hashes what it hands out; the frame's checksum, if any, is
        // the low 32 bits of XXH64.
        if let Some(stored) = decoder.get_checksum_from_data() {
            if decoder.get_calculated_checksum() != Some(stored) {
                return Err((StreamFault::ChecksumMismatch, to_u64(frame.len())));
            }
        }
        Ok(if rest.is_empty() {
            Decoded::Exact
        } else {
            Decoded::Short(written)
        })
    }
}
