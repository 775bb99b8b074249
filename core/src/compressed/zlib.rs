//! zlib streams through miniz_oxide's core API: inflating needs no allocation
//! (the output is the caller's buffer), deflating writes into a `Vec` grown
//! with `try_reserve`.

use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_PARSE_ZLIB_HEADER, TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::stream::{Decoded, FrameError, StreamFault};
use crate::bytes::to_u64;

/// Inflates the zlib stream `input`, which must end exactly at its end, into
/// `out`.
pub(crate) fn inflate(input: &[u8], out: &mut [u8]) -> Result<Decoded, FrameError> {
    let mut state = DecompressorOxide::new();
    let flags = TINFL_FLAG_PARSE_ZLIB_HEADER | TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let (status, consumed, written) = decompress(&mut state, input, out, 0, flags);
    let consumed = to_u64(consumed);
    match status {
        TINFLStatus::Done => {
            let trailing = to_u64(input.len()).saturating_sub(consumed);
            if trailing != 0 {
                return Err((StreamFault::TrailingBytes { len: trailing }, consumed));
            }
            Ok(if written == out.len() {
                Decoded::Exact
            } else {
                Decoded::Short(to_u64(written))
            })
        }
        TINFLStatus::HasMoreOutput => Ok(Decoded::Long),
        status => Err((fault(status), consumed)),
    }
}

/// The length of the zlib stream at the start of `input`, found by inflating
/// it into a 32 KiB ring on the stack (deflate records no lengths).
pub(crate) fn stream_len(input: &[u8]) -> Result<u64, FrameError> {
    ring(input, &mut |_| core::ops::ControlFlow::Continue(())).map(|(_, len)| len)
}

/// Inflates the zlib stream `input`, which must end exactly at its end,
/// through a 32 KiB ring on the stack, handing `emit` each stretch of output
/// in order until it breaks. `true` when the stream ended, `false` when
/// `emit` stopped it.
#[cfg(feature = "alloc")]
pub(crate) fn walk(
    input: &[u8],
    emit: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
) -> Result<bool, FrameError> {
    let (ended, len) = ring(input, emit)?;
    let trailing = to_u64(input.len()).saturating_sub(len);
    if ended && trailing != 0 {
        return Err((StreamFault::TrailingBytes { len: trailing }, len));
    }
    Ok(ended)
}

/// Inflates the zlib stream at the start of `input` through a 32 KiB ring,
/// handing `emit` each stretch of output until it breaks: whether the
/// stream ended, and how much of `input` was taken.
fn ring(
    input: &[u8],
    emit: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
) -> Result<(bool, u64), FrameError> {
    const RING: usize = 32 * 1024;
    let mut ring = [0u8; RING];
    let mut state = DecompressorOxide::new();
    let (mut in_pos, mut out_pos) = (0usize, 0usize);
    loop {
        let rest = input.get(in_pos..).unwrap_or_default();
        let (status, consumed, written) = decompress(
            &mut state,
            rest,
            &mut ring,
            out_pos,
            TINFL_FLAG_PARSE_ZLIB_HEADER,
        );
        in_pos = in_pos.saturating_add(consumed);
        // The decoder writes up to the ring's end at most, so what it wrote
        // is one stretch.
        let stretch = ring
            .get(out_pos..out_pos.saturating_add(written))
            .unwrap_or_default();
        if !stretch.is_empty() && emit(stretch).is_break() {
            return Ok((false, to_u64(in_pos)));
        }
        out_pos = out_pos.wrapping_add(written) & (RING - 1);
        match status {
            TINFLStatus::Done => return Ok((true, to_u64(in_pos))),
            TINFLStatus::HasMoreOutput if consumed != 0 || written != 0 => {}
            status => return Err((fault(status), to_u64(in_pos))),
        }
    }
}

fn fault(status: TINFLStatus) -> StreamFault {
    match status {
        TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
            StreamFault::Truncated
        }
        TINFLStatus::Adler32Mismatch => StreamFault::ChecksumMismatch,
        _ => StreamFault::Malformed,
    }
}

/// Deflates `input` as a zlib stream at `level` (0–9, zlib's meaning; -1 is
/// zlib's default, 6).
#[cfg(feature = "alloc")]
pub(crate) fn deflate(input: &[u8], level: i32) -> crate::Result<alloc::vec::Vec<u8>> {
    use super::stream::CompressionMethod;
    use miniz_oxide::deflate::core::{
        compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
    };

    let level = if level < 0 { 6 } else { level.min(9) };
    let mut state = CompressorOxide::new(create_comp_flags_from_zip_params(level, 15, 0));
    // Incompressible data grows by 5 bytes per 64 KiB stored block, plus the
    // zlib header and Adler-32.
    let bound = input
        .len()
        .saturating_add(input.len() / 8192)
        .saturating_add(64);
    let mut out = alloc::vec::Vec::new();
    crate::bytes::grow(&mut out, bound)?;
    let (mut in_pos, mut out_len) = (0usize, 0usize);
    loop {
        if out_len == out.len() {
            let more = out.len().max(4096);
            crate::bytes::grow(&mut out, more)?;
        }
        let rest = input.get(in_pos..).unwrap_or_default();
        let dest = out.get_mut(out_len..).unwrap_or_default();
        let (status, consumed, written) = compress(&mut state, rest, dest, TDEFLFlush::Finish);
        in_pos = in_pos.saturating_add(consumed);
        out_len = out_len.saturating_add(written);
        match status {
            TDEFLStatus::Done => {
                out.truncate(out_len);
                return Ok(out);
            }
            TDEFLStatus::Okay => {}
            TDEFLStatus::BadParam | TDEFLStatus::PutBufFailed => {
                return Err(crate::Error::new(
                    crate::ErrorKind::CorruptStream {
                        method: CompressionMethod::Zlib,
                        fault: StreamFault::Malformed,
                    },
                    0,
                ));
            }
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    fn sample() -> alloc::vec::Vec<u8> {
        (0..100_000u32)
            .flat_map(|i| (i / 7).to_le_bytes())
            .collect()
    }

    #[test]
    fn inflates_exactly_into_the_declared_size() {
        let data = sample();
        let z = deflate(&data, 6).unwrap();
        let mut out = alloc::vec![0u8; data.len()];
        assert!(matches!(inflate(&z, &mut out), Ok(Decoded::Exact)));
        assert_eq!(out, data);
        assert_eq!(stream_len(&z), Ok(to_u64(z.len())));
        let mut short = alloc::vec![0u8; data.len() - 1];
        assert!(matches!(inflate(&z, &mut short), Ok(Decoded::Long)));
        let mut long = alloc::vec![0u8; data.len() + 1];
        assert!(matches!(inflate(&z, &mut long), Ok(Decoded::Short(n)) if n == to_u64(data.len())));
    }

    #[test]
    fn finds_the_end_of_a_stream_followed_by_other_bytes() {
        let data = sample();
        let mut z = deflate(&data, 1).unwrap();
        let len = to_u64(z.len());
        z.extend_from_slice(b"CCOB and more");
        assert_eq!(stream_len(&z), Ok(len));
        let mut out = alloc::vec![0u8; data.len()];
        assert_eq!(
            inflate(&z, &mut out).err(),
            Some((StreamFault::TrailingBytes { len: 13 }, len))
        );
    }

    #[test]
    fn damaged_streams_are_faults() {
        let data = sample();
        let z = deflate(&data, 6).unwrap();
        let mut out = alloc::vec![0u8; data.len()];
        let cut = &z[..z.len() / 2];
        assert!(matches!(
            inflate(cut, &mut out),
            Err((StreamFault::Truncated, _))
        ));
        assert!(matches!(stream_len(cut), Err((StreamFault::Truncated, _))));
        let mut bad_adler = z.clone();
        *bad_adler.last_mut().unwrap() ^= 1;
        assert!(matches!(
            inflate(&bad_adler, &mut out),
            Err((StreamFault::ChecksumMismatch, _))
        ));
        assert!(inflate(b"\x78\x9c\xff\xff\xff", &mut out).is_err());
    }
}
