//! Decoding one zstd frame into a buffer of exactly the declared size.
//!
//! Two decoders: libzstd (feature `zstd`), which decodes straight into the
//! output and is the faster one, and ruzstd (feature `alloc`), pure Rust,
//! for builds without a C library. Both get a frame whose header and extent
//! [`super::zstd_frame`] has already checked, and a window cap (libzstd's
//! one-shot decoding writes into the output and keeps no window of its own).

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

#[cfg(feature = "zstd")]
pub(crate) mod libzstd {
    use super::{Decoded, FrameError};
    use crate::bytes::to_u64;
    use crate::compressed::StreamFault;
    use zstd_safe::{get_error_name, DCtx};

    pub(crate) fn decode(frame: &[u8], out: &mut [u8]) -> Result<Decoded, FrameError> {
        let mut context = DCtx::try_create().ok_or((StreamFault::Malformed, 0))?;
        match context.decompress(out, frame) {
            Ok(written) if written == out.len() => Ok(Decoded::Exact),
            Ok(written) => Ok(Decoded::Short(to_u64(written))),
            Err(code) => {
                let name = get_error_name(code);
                if name.contains("too small") {
                    Ok(Decoded::Long)
                } else if name.contains("checksum") {
                    Err((StreamFault::ChecksumMismatch, 0))
                } else {
                    Err((StreamFault::Malformed, 0))
                }
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
        let mut decoder = FrameDecoder::new();
        decoder.set_max_window_size(max_window);
        let mut source = frame;
        let at = |source: &[u8]| to_u64(frame.len().saturating_sub(source.len()));
        decoder
            .init(&mut source)
            .map_err(|_| (StreamFault::Malformed, at(source)))?;
        let mut written = 0usize;
        loop {
            let finished = decoder
                .decode_blocks(&mut source, BlockDecodingStrategy::UptoBytes(STEP))
                .map_err(|_| (StreamFault::Malformed, at(source)))?;
            let rest = out.get_mut(written..).unwrap_or_default();
            let n = decoder
                .read(rest)
                .map_err(|_| (StreamFault::Malformed, at(source)))?;
            written = written.saturating_add(n);
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
        Ok(if written == out.len() {
            Decoded::Exact
        } else {
            Decoded::Short(to_u64(written))
        })
    }
}
