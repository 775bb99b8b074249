//! Bounded decoding: every check that needs no output runs before a byte is
//! written or allocated, the output is exactly the declared size, and the
//! hash is verified unless the caller opts out.

use super::zstd::ZstdDecoder;
use super::zstd_frame::{self, ZstdFrameHeader};
use super::{zlib, zstd, CompressedBundle, CompressionMethod, StreamFault, COMPRESSED_MAGIC};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

/// How large a decompressed bundle may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest uncompressed size accepted, in bytes. A header declaring
    /// more is refused before anything is allocated or decoded, and no zstd
    /// window larger than this (rounded up to a power of two) is accepted.
    pub max_uncompressed_size: u64,
}

impl Limits {
    /// The default limit: 1 GiB. Real HIP bundles are far smaller per
    /// compressed bundle, while a hostile one declaring many GiB is refused
    /// cheaply. Raise it for the rare multi-GiB bundle.
    pub const DEFAULT_MAX_UNCOMPRESSED_SIZE: u64 = 1 << 30;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_uncompressed_size: Self::DEFAULT_MAX_UNCOMPRESSED_SIZE,
        }
    }
}

/// How to decompress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecompressOptions {
    /// Size limits.
    pub limits: Limits,
    /// Whether to check the stored truncated MD5 against the output (on by
    /// default: LLVM's zstd frames carry no checksum, so this is the only
    /// integrity check there is). Turn it off only if the caller verifies the
    /// bytes some other way: without it, a damaged zstd stream can decode
    /// without error, and libzstd and ruzstd do not always give the same
    /// bytes for it (their Huffman checks differ).
    pub verify_hash: bool,
    /// The zstd decoder; the default is the fastest this build has.
    pub zstd_decoder: ZstdDecoder,
}

impl Default for DecompressOptions {
    fn default() -> Self {
        DecompressOptions {
            limits: Limits::default(),
            verify_hash: true,
            zstd_decoder: ZstdDecoder::default(),
        }
    }
}

/// How decoding into a buffer of the declared size ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// The stream ended after filling the buffer exactly.
    Exact,
    /// The stream ended after this many bytes, fewer than the buffer holds.
    Short(u64),
    /// The stream has more to give than the buffer holds.
    Long,
}

/// The largest zstd window accepted: the size limit rounded up to a power of
/// two (zstd windows are at least 1 KiB). Smaller caps would refuse frames a
/// streaming compressor wrote for small bundles; decoders keep at most the
/// output they have produced, so memory follows the declared size regardless.
pub(crate) fn max_window(limits: &Limits) -> u64 {
    limits
        .max_uncompressed_size
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
        .max(1 << 10)
}

/// The hash a compressed bundle stores: the first 8 bytes of the MD5 of the
/// uncompressed bundle, read as a little-endian integer.
pub fn truncated_md5(data: &[u8]) -> u64 {
    let mut hasher = super::md5::Hasher::new();
    hasher.consume(data);
    hasher.truncated()
}

/// [`truncated_md5`] of each of `messages`, computed side by side: the
/// whole blocks they have in common go through MD5 together (up to eight in
/// AVX-512VL's lanes where the processor has them; else two as two
/// interleaved chains of steps, three or four in SSE2's lanes), which costs
/// less than hashing them one after the other (benches/README.md); the
/// rest of each is hashed alone. For a caller that checks many bundles.
#[cfg(feature = "zstd")]
pub fn truncated_md5s(messages: &[&[u8]]) -> alloc::vec::Vec<u64> {
    use super::md5::{consume_blocks_together, Hasher};
    let mut hashers: alloc::vec::Vec<Hasher> = messages.iter().map(|_| Hasher::new()).collect();
    let mut pairs: alloc::vec::Vec<(&mut Hasher, &[u8])> =
        hashers.iter_mut().zip(messages.iter().copied()).collect();
    // Longest first, so that messages of like length share lanes.
    pairs.sort_by_key(|(_, message)| core::cmp::Reverse(message.len()));
    for group in pairs.chunks_mut(super::md5::width()) {
        let common = consume_blocks_together(group);
        for (hasher, message) in group.iter_mut() {
            hasher.consume(message.get(common..).unwrap_or_default());
        }
    }
    drop(pairs);
    hashers.into_iter().map(Hasher::truncated).collect()
}

/// One compressed stream inside a container, with the facts needed to check
/// and decode it and to place its errors: shared by compressed bundles and
/// compressed OffloadBinaries, so there is one bounded decoder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stream<'data> {
    /// zlib or zstd.
    pub(crate) method: CompressionMethod,
    /// The stream, which must end exactly at the end of this slice.
    pub(crate) bytes: &'data [u8],
    /// The size the container declares for the decoded bytes.
    pub(crate) declared: u64,
    /// Offset in the container of the first stream byte.
    pub(crate) base: u64,
    /// Offset in the container of the declared-size field.
    pub(crate) declared_at: u64,
    /// Offset in the container of the method field.
    pub(crate) method_at: u64,
}

impl Stream<'_> {
    /// Every check that needs no decoding: the method is known and usable, the
    /// declared size is within `limits`, and (zstd) the frame header agrees
    /// with the declared size, its window is within the limit and the frame
    /// ends exactly at the end of the stream. Returns the declared size.
    pub(crate) fn check(&self, limits: &Limits) -> Result<usize> {
        let size = self.check_header(limits)?;
        if self.method == CompressionMethod::Zstd {
            self.check_zstd_extent()?;
        }
        Ok(size)
    }

    /// [`Stream::check`] but for the zstd frame's extent, which takes
    /// reading every block header of the frame: a walk that stops early
    /// (an entry table) touches only the stream's first pages.
    pub(crate) fn check_header(&self, limits: &Limits) -> Result<usize> {
        let declared = self.declared;
        let too_large = |limit| {
            Error::new(
                ErrorKind::SizeLimitExceeded {
                    size: declared,
                    limit,
                },
                self.declared_at,
            )
        };
        if declared > limits.max_uncompressed_size {
            return Err(too_large(limits.max_uncompressed_size));
        }
        let size = usize::try_from(declared).map_err(|_| too_large(to_u64(usize::MAX)))?;
        match self.method {
            CompressionMethod::Zlib => Ok(size),
            CompressionMethod::Zstd => {
                self.check_zstd_header(limits)?;
                Ok(size)
            }
            CompressionMethod::Unknown(_) => Err(self.method_error()),
        }
    }

    fn check_zstd_header(&self, limits: &Limits) -> Result<()> {
        let frame = self.bytes;
        let header = ZstdFrameHeader::parse(frame).map_err(|(fault, at)| self.error(fault, at))?;
        if let Some(content) = header.content_size() {
            if content != self.declared {
                return Err(Error::new(
                    ErrorKind::ContentSizeMismatch {
                        declared: self.declared,
                        frame: content,
                    },
                    self.base,
                ));
            }
        }
        let max = max_window(limits);
        if header.window_size() > max {
            let fault = StreamFault::WindowTooLarge {
                window: header.window_size(),
                max,
            };
            return Err(self.error(fault, 4));
        }
        Ok(())
    }

    /// The zstd frame ends exactly at the end of the stream (its blocks
    /// checked as LLVM's one-shot libzstd checks them).
    fn check_zstd_extent(&self) -> Result<()> {
        let frame = self.bytes;
        let len = zstd_frame::frame_len(frame).map_err(|(fault, at)| self.error(fault, at))?;
        let trailing = to_u64(frame.len()).saturating_sub(len);
        if trailing != 0 {
            return Err(self.error(StreamFault::TrailingBytes { len: trailing }, len));
        }
        Ok(())
    }

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

    /// Decodes into `out`, which [`Stream::check`] has sized.
    fn decode(&self, out: &mut [u8], options: &DecompressOptions) -> Result<()> {
        let frame = self.bytes;
        let decoded = match self.method {
            CompressionMethod::Zlib => zlib::inflate(frame, out),
            CompressionMethod::Zstd => zstd::decode(
                options.zstd_decoder,
                frame,
                out,
                max_window(&options.limits),
            )
            .ok_or_else(|| self.method_error())?,
            CompressionMethod::Unknown(_) => return Err(self.method_error()),
        }
        .map_err(|(fault, at)| self.error(fault, at))?;
        let declared = self.declared;
        match decoded {
            Decoded::Exact => Ok(()),
            Decoded::Long => Err(self.too_long()),
            Decoded::Short(actual) => Err(Error::new(
                ErrorKind::DecompressedTooSmall { declared, actual },
                self.declared_at,
            )),
        }
    }

    /// Checks, then decodes the stream front to back, handing `sink` each
    /// stretch of output in order, until `sink` breaks: memory for one
    /// stretch and the decoder's window (at most the limit), whatever the
    /// stream inflates to. Returns how many bytes were decoded. Decoded to
    /// its end, the stream must give exactly the declared size; more is an
    /// error as soon as it shows.
    #[cfg(feature = "alloc")]
    pub(crate) fn walk(
        &self,
        options: &DecompressOptions,
        sink: &mut dyn FnMut(&[u8]) -> core::ops::ControlFlow<()>,
    ) -> Result<u64> {
        use core::ops::ControlFlow;
        self.check_header(&options.limits)?;
        let declared = self.declared;
        let mut produced = 0u64;
        let mut too_long = false;
        let ended = {
            let mut emit = |stretch: &[u8]| {
                let len = to_u64(stretch.len());
                if len > declared.saturating_sub(produced) {
                    too_long = true;
                    return ControlFlow::Break(());
                }
                produced = produced.saturating_add(len);
                sink(stretch)
            };
            match self.method {
                CompressionMethod::Zlib => zlib::walk(self.bytes, &mut emit),
                CompressionMethod::Zstd => zstd::walk(
                    options.zstd_decoder,
                    self.bytes,
                    max_window(&options.limits),
                    &mut emit,
                )
                .ok_or_else(|| self.method_error())?,
                CompressionMethod::Unknown(_) => return Err(self.method_error()),
            }
            .map_err(|error| self.walk_fault(error))?
        };
        if too_long {
            return Err(self.too_long());
        }
        self.walk_end(ended, produced)?;
        Ok(produced)
    }

    #[cfg(feature = "alloc")]
    /// A decoder's fault in a walk, located: for a damaged zstd frame,
    /// where its blocks go wrong, if they do, says more than the decoder
    /// (libzstd locates nothing).
    pub(crate) fn walk_fault(&self, (fault, at): super::zstd_frame::FrameError) -> Error {
        match self.method {
            CompressionMethod::Zstd => self.check_zstd_extent().err(),
            _ => None,
        }
        .unwrap_or_else(|| self.error(fault, at))
    }

    /// More output than the declared size.
    pub(crate) fn too_long(&self) -> Error {
        Error::new(
            ErrorKind::DecompressedTooLarge {
                declared: self.declared,
            },
            self.declared_at,
        )
    }

    #[cfg(feature = "alloc")]
    /// The checks at the end of a walk that gave `produced` bytes: at the
    /// stream's end (`ended`), the zstd frame's extent and blocks as
    /// [`Stream::check`] has them, so that a walk to the end refuses what
    /// one-shot decoding does, and exactly the declared size.
    pub(crate) fn walk_end(&self, ended: bool, produced: u64) -> Result<()> {
        if ended && self.method == CompressionMethod::Zstd {
            self.check_zstd_extent()?;
        }
        if ended && produced != self.declared {
            return Err(Error::new(
                ErrorKind::DecompressedTooSmall {
                    declared: self.declared,
                    actual: produced,
                },
                self.declared_at,
            ));
        }
        Ok(())
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
        let mut hasher = super::md5::Hasher::new();
        let produced = self.walk(options, &mut |stretch| {
            sink(stretch);
            hasher.consume(stretch);
            core::ops::ControlFlow::Continue(())
        })?;
        Ok((produced, hasher.truncated()))
    }

    /// Why the method cannot decode: unknown, or not in this build.
    fn method_error(&self) -> Error {
        let kind = match self.method {
            CompressionMethod::Unknown(method) => ErrorKind::UnknownMethod { method },
            method => ErrorKind::MethodUnavailable { method },
        };
        Error::new(kind, self.method_at)
    }

    /// An error in the stream, at `at` bytes into it.
    pub(crate) fn error(&self, fault: StreamFault, at: u64) -> Error {
        Error::new(
            ErrorKind::CorruptStream {
                method: self.method,
                fault,
            },
            self.base.saturating_add(at),
        )
    }
}

impl<'data> CompressedBundle<'data> {
    /// The compressed stream and where its header fields are.
    pub(crate) fn stream(&self) -> Stream<'data> {
        Stream {
            method: self.method,
            bytes: self.compressed(),
            declared: self.uncompressed_size,
            base: self.header_len,
            declared_at: match self.version {
                1 => 8,
                2 => 12,
                _ => 16,
            },
            method_at: 6,
        }
    }

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
        if self.method != CompressionMethod::Zstd
            || options.zstd_decoder != super::ZstdDecoder::Libzstd
        {
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
