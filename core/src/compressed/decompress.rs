//! Bounded decoding, the layer on top: every check that needs no output
//! runs before a byte is written or allocated, the output is exactly the
//! declared size, and the hash is verified unless the caller opts out. It
//! chooses how a stream is decoded (on one thread as `whole` does, or with
//! the hash on a second as `overlap` does) and gives compressed bundles
//! their decoding methods.

use super::header::{CompressedBundle, COMPRESSED_MAGIC};
use super::md5::truncated_md5;
#[cfg(feature = "alloc")]
use super::md5::Hasher;
#[cfg(feature = "zstd")]
use super::stream::{max_window, CompressionMethod, ZstdDecoder};
use super::stream::{DecompressOptions, Limits};
#[cfg(feature = "zstd")]
use super::zstd;
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

// Where the rest of the crate has always found the shared stream types.
pub(crate) use super::stream::{Decoded, Stream};

impl Stream<'_> {
    /// Checks, then decodes into `out`, which must hold at least the declared
    /// size; returns the declared size and, if `hash` asks, the truncated MD5
    /// of the output.
    pub(crate) fn decode_into(
        &self,
        out: &mut [u8],
        options: &DecompressOptions,
        hash: bool,
    ) -> Result<(usize, Option<u64>)> {
        let size = self.check(&options.limits)?;
        let available = to_u64(out.len());
        let out = out.get_mut(..size).ok_or_else(|| {
            Error::new(
                ErrorKind::OutputTooSmall {
                    needed: self.declared,
                    available,
                },
                self.declared_at,
            )
        })?;
        let computed = self.decode_hashed(out, options, hash)?;
        Ok((size, computed))
    }

    /// Checks, then decodes into a new buffer of exactly the declared size,
    /// had from the allocator zeroed after the size passed the limits;
    /// returns it and, if `hash` asks, its truncated MD5.
    #[cfg(feature = "alloc")]
    pub(crate) fn decode_to_vec(
        &self,
        options: &DecompressOptions,
        hash: bool,
    ) -> Result<(alloc::vec::Vec<u8>, Option<u64>)> {
        let size = self.check(&options.limits)?;
        let mut out = crate::bytes::zeroed(to_u64(size))?;
        let computed = self.decode_hashed(&mut out, options, hash)?;
        Ok((out, computed))
    }

    /// Decodes into `out`, which [`Stream::check`] has sized, and hashes the
    /// output if `hash` asks: both at once on two cores where the build has
    /// threads, one after the other where it has not or that fails.
    fn decode_hashed(
        &self,
        out: &mut [u8],
        options: &DecompressOptions,
        hash: bool,
    ) -> Result<Option<u64>> {
        #[cfg(feature = "std")]
        if hash {
            if let Some(computed) = super::overlap::decode_hashed(self, out, options) {
                return Ok(Some(computed));
            }
        }
        self.decode(out, options)?;
        Ok(hash.then(|| truncated_md5(out)))
    }

    /// Walks the stream to its end ([`Stream::walk`]), handing `sink` every
    /// stretch; returns how many bytes it gave and their truncated MD5,
    /// hashed on a second thread where the build and the machine allow.
    #[cfg(feature = "alloc")]
    pub(crate) fn walk_hashed(
        &self,
        options: &DecompressOptions,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(u64, u64)> {
        #[cfg(feature = "std")]
        if let Some(walked) = super::overlap::walk_hashed(self, options, sink) {
            return walked;
        }
        let mut hasher = Hasher::new();
        let produced = self.walk(options, &mut |stretch| {
            sink(stretch);
            hasher.consume(stretch);
            core::ops::ControlFlow::Continue(())
        })?;
        Ok((produced, hasher.truncated()))
    }
}

impl<'data> CompressedBundle<'data> {
    /// Offset of the hash field in this version's header.
    fn hash_offset(&self) -> u64 {
        self.header_len.saturating_sub(8)
    }

    /// Every check that needs no decoding: the method is known and usable, the
    /// declared size is within `limits`, and (zstd) the frame header agrees
    /// with the declared size, its window is within the limit and the frame
    /// ends exactly at the end of the container. Returns the declared size.
    pub fn check(&self, limits: &Limits) -> Result<usize> {
        self.stream().check(limits)
    }

    /// Decompresses into the start of `out`, which must hold at least the
    /// declared size, and returns the declared size. Allocates nothing for
    /// zlib; zstd needs the `alloc` feature (ruzstd keeps its window on the
    /// heap) or the `zstd` feature (libzstd's decoder state).
    pub fn decompress_into(&self, out: &mut [u8], options: &DecompressOptions) -> Result<usize> {
        let (size, computed) = self
            .stream()
            .decode_into(out, options, options.verify_hash)?;
        self.verify(out.get(..size).unwrap_or_default(), options, computed)?;
        Ok(size)
    }

    /// Decompresses into a new buffer of exactly the declared size, reserved
    /// with `try_reserve_exact` after the size passed `options.limits`.
    #[cfg(feature = "alloc")]
    pub fn decompress(&self, options: &DecompressOptions) -> Result<alloc::vec::Vec<u8>> {
        Ok(self.decompress_hashed(options, false)?.0)
    }

    /// As [`CompressedBundle::decompress`], and returns the hash of the
    /// output when it was computed: when `options.verify_hash` or `hash`
    /// asks for it. The output is hashed once, whatever both ask.
    #[cfg(feature = "alloc")]
    pub fn decompress_hashed(
        &self,
        options: &DecompressOptions,
        hash: bool,
    ) -> Result<(alloc::vec::Vec<u8>, Option<u64>)> {
        let (out, computed) = self
            .stream()
            .decode_to_vec(options, options.verify_hash || hash)?;
        self.verify(&out, options, computed)?;
        Ok((out, computed))
    }

    /// The first bytes of the decompressed bundle, as far as its header and
    /// entry table reach, decoding no further: all that listing, inspecting
    /// and choosing an entry need ([`Bundle::parse_table`](crate::Bundle::parse_table)
    /// reads them, with [`uncompressed_size`](Self::uncompressed_size) as
    /// the bundle's length). What is held is the table, never the payloads
    /// behind it. The hash covers the whole bundle, so it is not checked:
    /// [`hash_streamed`](Self::hash_streamed) checks it without keeping the
    /// bytes. Holds the whole bundle only when it is not a binary bundle or
    /// its table reaches its end.
    #[cfg(feature = "alloc")]
    pub fn decompress_table(&self, options: &DecompressOptions) -> Result<alloc::vec::Vec<u8>> {
        use core::ops::ControlFlow;
        let declared = self.uncompressed_size;
        #[cfg(feature = "zstd")]
        if let Some(table) = self.table_straight(options)? {
            return Ok(table);
        }
        let mut table = alloc::vec::Vec::new();
        let mut scan = crate::bundle::TableScan::default();
        let mut failed = None;
        self.stream().walk(options, &mut |stretch| {
            if let Err(error) = crate::bytes::extend(&mut table, stretch) {
                failed = Some(error);
                return ControlFlow::Break(());
            }
            if scan.done(&table, declared) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        if let Some(error) = failed {
            return Err(error);
        }
        self.verify(
            &table,
            &DecompressOptions {
                verify_hash: false,
                ..*options
            },
            None,
        )?;
        Ok(table)
    }

    /// [`decompress_table`](Self::decompress_table) for zstd with libzstd:
    /// straight into a buffer of at most 256 KiB (two blocks; a table of 28
    /// entries takes 1.5 KiB), so that libzstd allocates no window (for a
    /// frame of one segment, the size of the whole bundle). `None` when this
    /// does not apply, or the table is larger than that.
    #[cfg(feature = "zstd")]
    fn table_straight(&self, options: &DecompressOptions) -> Result<Option<alloc::vec::Vec<u8>>> {
        const MAX: u64 = 256 << 10;
        if self.method != CompressionMethod::Zstd || options.zstd_decoder != ZstdDecoder::Libzstd {
            return Ok(None);
        }
        let stream = self.stream();
        stream.check_header(&options.limits)?;
        let declared = self.uncompressed_size;
        let mut out = crate::bytes::zeroed(declared.min(MAX))?;
        let mut scan = crate::bundle::TableScan::default();
        let mut complete = false;
        let written = zstd::libzstd::decode_prefix(
            stream.bytes,
            &mut out,
            max_window(&options.limits),
            &mut |prefix| {
                complete = scan.done(prefix, declared);
                complete
            },
        )
        .map_err(|(fault, at)| {
            stream
                .check_zstd_extent()
                .err()
                .unwrap_or_else(|| stream.error(fault, at))
        })?;
        if !complete {
            // A table past 1 MiB, or a frame that ends before its table:
            // the walk decodes on, or says precisely what is wrong.
            return Ok(None);
        }
        out.truncate(written);
        self.verify(
            &out,
            &DecompressOptions {
                verify_hash: false,
                ..*options
            },
            None,
        )?;
        Ok(Some(out))
    }

    /// Decodes the whole stream through MD5 without keeping it (memory for
    /// one stretch and the decoder's window), checking that it gives exactly
    /// the declared size; returns the truncated MD5, and refuses one other
    /// than the stored hash when `options.verify_hash` asks.
    #[cfg(feature = "alloc")]
    pub fn hash_streamed(&self, options: &DecompressOptions) -> Result<u64> {
        let mut first = [0u8; 4];
        let mut seen = 0usize;
        let (_, computed) = self.stream().walk_hashed(options, &mut |stretch| {
            for (slot, byte) in first.iter_mut().skip(seen).zip(stretch) {
                *slot = *byte;
                seen = seen.saturating_add(1);
            }
        })?;
        self.verify(
            first.get(..seen).unwrap_or_default(),
            options,
            Some(computed),
        )?;
        Ok(computed)
    }

    /// Decodes the bytes of the decompressed bundle from `start` into `out`
    /// (its length is how many), decoding only as far as they reach unless
    /// `hash` asks for the truncated MD5 of the whole bundle: then the rest
    /// goes through MD5 without being kept, the hash is returned and, if
    /// `options.verify_hash` asks, checked. A range past the declared size
    /// is an error before anything is decoded.
    #[cfg(feature = "alloc")]
    pub fn decompress_range(
        &self,
        start: u64,
        out: &mut [u8],
        options: &DecompressOptions,
        hash: bool,
    ) -> Result<Option<u64>> {
        use core::ops::ControlFlow;
        let end = start.saturating_add(to_u64(out.len()));
        if end > self.uncompressed_size {
            return Err(Error::new(
                ErrorKind::OutputTooSmall {
                    needed: end,
                    available: self.uncompressed_size,
                },
                self.stream().declared_at,
            ));
        }
        let mut at = 0u64;
        let mut first = [0u8; 4];
        // Keeps the part of each stretch inside [start, end), and the first
        // bytes for the nested-bundle check; says where the stretch ends.
        let mut keep = |stretch: &[u8]| {
            let stretch_end = at.saturating_add(to_u64(stretch.len()));
            for (i, byte) in first.iter_mut().enumerate() {
                if let Some(b) = usize::try_from(to_u64(i).wrapping_sub(at))
                    .ok()
                    .and_then(|j| stretch.get(j))
                {
                    *byte = *b;
                }
            }
            let from = start.max(at);
            let to = end.min(stretch_end);
            if from < to {
                let src = usize::try_from(from.saturating_sub(at)).unwrap_or(usize::MAX)
                    ..usize::try_from(to.saturating_sub(at)).unwrap_or(usize::MAX);
                let dst = usize::try_from(from.saturating_sub(start)).unwrap_or(usize::MAX)
                    ..usize::try_from(to.saturating_sub(start)).unwrap_or(usize::MAX);
                if let (Some(d), Some(s)) = (out.get_mut(dst), stretch.get(src)) {
                    d.copy_from_slice(s);
                }
            }
            at = stretch_end;
            stretch_end
        };
        let computed = if hash {
            let (_, computed) = self.stream().walk_hashed(options, &mut |stretch| {
                keep(stretch);
            })?;
            Some(computed)
        } else {
            self.stream().walk(options, &mut |stretch| {
                if keep(stretch) >= end {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })?;
            None
        };
        let seen = usize::try_from(at.min(4)).unwrap_or(0);
        self.verify(first.get(..seen).unwrap_or_default(), options, computed)?;
        Ok(computed)
    }

    /// Refuses a nested compressed bundle and, if `options` asks, a
    /// `computed` hash other than the stored one.
    fn verify(&self, out: &[u8], options: &DecompressOptions, computed: Option<u64>) -> Result<()> {
        if out.starts_with(COMPRESSED_MAGIC) {
            return Err(Error::new(
                ErrorKind::NestedCompressedBundle,
                self.header_len,
            ));
        }
        if let Some(computed) = computed.filter(|_| options.verify_hash) {
            if computed != self.hash {
                return Err(Error::new(
                    ErrorKind::HashMismatch {
                        stored: self.hash,
                        computed,
                    },
                    self.hash_offset(),
                ));
            }
        }
        Ok(())
    }
}
