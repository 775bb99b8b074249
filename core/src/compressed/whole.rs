//! One stream decoded on one thread, the reference every other strategy
//! agrees with: the checks that need no decoding, decoding into a buffer of
//! the whole output, and a walk front to back that keeps one stretch.

#[cfg(feature = "alloc")]
use super::stream::FrameError;
use super::stream::{
    max_window, CompressionMethod, Decoded, DecompressOptions, Limits, Stream, StreamFault,
};
use super::zstd_frame::{self, ZstdFrameHeader};
use super::{zlib, zstd};
use crate::bytes::to_u64;
use crate::{Error, ErrorKind, Result};

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
    pub(super) fn check_zstd_extent(&self) -> Result<()> {
        let frame = self.bytes;
        let len = zstd_frame::frame_len(frame).map_err(|(fault, at)| self.error(fault, at))?;
        let trailing = to_u64(frame.len()).saturating_sub(len);
        if trailing != 0 {
            return Err(self.error(StreamFault::TrailingBytes { len: trailing }, len));
        }
        Ok(())
    }

    /// Decodes into `out`, which [`Stream::check`] has sized.
    pub(super) fn decode(&self, out: &mut [u8], options: &DecompressOptions) -> Result<()> {
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
    pub(crate) fn walk_fault(&self, (fault, at): FrameError) -> Error {
        match self.method {
            CompressionMethod::Zstd => self.check_zstd_extent().err(),
            _ => None,
        }
        .unwrap_or_else(|| self.error(fault, at))
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
}
