//! Verified decoding on two cores: the decoder hands each finished stretch of
//! output to a second thread that hashes it, so checking the hash costs about
//! the longer of decoding and hashing instead of their sum.
//!
//! Only zstd decodes in stretches (zlib's decoder reads back through the whole
//! output it has written). Whenever this does not apply or does not end in
//! exactly the declared output (no second core, no thread, a damaged or
//! unusual stream), the caller decodes again on its own, so every result and
//! every error is the sequential path's.

use std::sync::mpsc;
use std::thread;

use super::decompress::{max_window, Decoded, DecompressOptions, Stream};
use super::md5::Hasher;
use super::{zstd, CompressionMethod};

/// Outputs smaller than this are hashed after decoding: starting a thread
/// costs more than it saves.
const MIN_SIZE: usize = 256 << 10;

/// Decodes `stream` into `out`, which [`Stream::check`] has sized, while a
/// second thread hashes it. The truncated MD5 of `out`, or `None` if this
/// did not apply or the stream did not decode to exactly `out`.
pub(crate) fn decode_hashed(
    stream: &Stream<'_>,
    out: &mut [u8],
    options: &DecompressOptions,
) -> Option<u64> {
    if stream.method != CompressionMethod::Zstd || out.len() < MIN_SIZE || !two_cores() {
        return None;
    }
    thread::scope(move |scope| {
        let (send, receive) = mpsc::channel::<&[u8]>();
        let hasher = thread::Builder::new()
            .spawn_scoped(scope, move || {
                let mut hasher = Hasher::new();
                for chunk in receive {
                    hasher.consume(chunk);
                }
                hasher.truncated()
            })
            .ok()?;
        let window = max_window(&options.limits);
        let mut emit = |chunk| {
            // A hasher that is gone shows when it is joined.
            let _ = send.send(chunk);
        };
        let decoded =
            zstd::decode_chunked(options.zstd_decoder, stream.bytes, out, window, &mut emit);
        drop(send);
        let hash = hasher.join().ok()?;
        matches!(decoded, Some(Ok(Decoded::Exact))).then_some(hash)
    })
}

fn two_cores() -> bool {
    thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}
