//! Verified decoding on two cores: the decoder hands each finished stretch of
//! output to a second thread that hashes it, so checking the hash costs about
//! the longer of decoding and hashing instead of their sum.
//!
//! Into a buffer of the whole output ([`decode_hashed`]) only zstd decodes in
//! stretches (zlib's decoder reads back through the whole output it has
//! written). Whenever this does not apply or does not end in exactly the
//! declared output (no second core, no thread, a damaged or unusual stream),
//! the caller decodes again on its own, so every result and every error is
//! the sequential path's. A walk that keeps nothing ([`walk_hashed`]) hands
//! the second thread copies of its stretches, for both methods.

use alloc::vec::Vec;
use core::ops::ControlFlow;
use std::sync::mpsc;
use std::thread;

use super::md5::Hasher;
use super::stream::{max_window, CompressionMethod, Decoded, DecompressOptions, Stream};
use super::zstd;
use crate::bytes::to_u64;

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

/// Stretches a walk has in flight to the hashing thread: two, so that the
/// decoder fills one while the other is hashed.
const IN_FLIGHT: usize = 2;

/// Walks `stream` to its end ([`Stream::walk`]), handing `sink` every
/// stretch while a second thread hashes copies of them (memory for two
/// more stretches); how many bytes it gave and their truncated MD5, or
/// `None`, before decoding anything, if this does not apply (no second
/// core or thread, an output too small to gain).
pub(crate) fn walk_hashed(
    stream: &Stream<'_>,
    options: &DecompressOptions,
    sink: &mut dyn FnMut(&[u8]),
) -> Option<crate::Result<(u64, u64)>> {
    if stream.declared < to_u64(MIN_SIZE) || !two_cores() {
        return None;
    }
    thread::scope(|scope| {
        let (full, to_hash) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (give_back, returned) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let hasher = thread::Builder::new()
            .spawn_scoped(scope, move || {
                let mut hasher = Hasher::new();
                for stretch in to_hash {
                    hasher.consume(&stretch);
                    // Once the walk is over nobody takes it back.
                    let _ = give_back.send(stretch);
                }
                hasher.truncated()
            })
            .ok()?;
        let mut unused = IN_FLIGHT;
        let mut failed = None;
        let walked = stream.walk(options, &mut |stretch| {
            sink(stretch);
            let buffer = if unused > 0 {
                unused = unused.saturating_sub(1);
                Some(Vec::new())
            } else {
                returned.recv().ok()
            };
            // A buffer that does not come back, or cannot be sent, means the
            // hashing thread is gone: the hash is lost with it.
            let lost = || {
                crate::Error::new(
                    crate::ErrorKind::OutOfMemory {
                        requested: to_u64(stretch.len()),
                    },
                    0,
                )
            };
            let Some(mut buffer) = buffer else {
                failed = Some(lost());
                return ControlFlow::Break(());
            };
            buffer.clear();
            if let Err(error) = crate::bytes::extend(&mut buffer, stretch) {
                failed = Some(error);
                return ControlFlow::Break(());
            }
            if full.send(buffer).is_err() {
                failed = Some(lost());
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        drop(full);
        let hash = hasher.join();
        Some(match (walked, failed, hash) {
            (Err(error), ..) | (Ok(_), Some(error), _) => Err(error),
            (Ok(produced), None, Ok(hash)) => Ok((produced, hash)),
            (Ok(produced), None, Err(_)) => Err(crate::Error::new(
                crate::ErrorKind::OutOfMemory {
                    requested: produced,
                },
                0,
            )),
        })
    })
}
