//! LLVM's `-verbose` lines for compressed bundles, formatted as
//! clang-offload-bundler 22 formats them (sizes with `,` between groups of
//! three digits, hashes as `llvm::format_hex(n, 16)`, speeds in MiB/s
//! labelled MB/s). The caller measures the time: this crate has no clock.

use core::fmt;

use super::DecodedContainer;
use crate::CompressionMethod;

/// What compressing a bundle made, for its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The header version written.
    pub version: u16,
    /// The whole compressed bundle's size.
    pub total_size: u64,
    /// The method's raw value.
    pub method: u16,
    /// The level used.
    pub level: i32,
    /// The bundle's size before compression.
    pub uncompressed_size: u64,
    /// The compressed stream's size.
    pub compressed_size: u64,
    /// The stored hash.
    pub hash: u64,
}

/// The lines LLVM prints after decompressing a bundle in `seconds`.
pub fn decompression(decoded: &DecodedContainer, seconds: f64) -> impl fmt::Display + '_ {
    Report(move |f: &mut fmt::Formatter<'_>| {
        let computed = decoded.computed_hash.unwrap_or(decoded.stored_hash);
        writeln!(f, "Compressed bundle format version: {}", decoded.version)?;
        if let Some(total) = decoded.total_size {
            writeln!(f, "Total file size (from header): {} bytes", Commas(total))?;
        }
        writeln!(f, "Decompression method: {}", method_name(decoded.method))?;
        writeln!(
            f,
            "Size before decompression: {} bytes",
            Commas(decoded.compressed_size)
        )?;
        writeln!(
            f,
            "Size after decompression: {} bytes",
            Commas(decoded.uncompressed_size)
        )?;
        rates(
            f,
            decoded.uncompressed_size,
            decoded.compressed_size,
            seconds,
            "Decompression",
        )?;
        writeln!(f, "Stored hash: {}", Hex(decoded.stored_hash))?;
        writeln!(f, "Recalculated hash: {}", Hex(computed))?;
        let same = if computed == decoded.stored_hash {
            "Yes"
        } else {
            "No"
        };
        writeln!(f, "Hashes match: {same}")
    })
}

/// The lines LLVM prints after compressing a bundle in `seconds`.
pub fn compression(made: &Compression, seconds: f64) -> impl fmt::Display + '_ {
    Report(move |f: &mut fmt::Formatter<'_>| {
        writeln!(f, "Compressed bundle format version: {}", made.version)?;
        writeln!(
            f,
            "Total file size (including headers): {} bytes",
            Commas(made.total_size)
        )?;
        writeln!(f, "Compression method used: {}", method_name(made.method))?;
        writeln!(f, "Compression level: {}", made.level)?;
        writeln!(
            f,
            "Binary size before compression: {} bytes",
            Commas(made.uncompressed_size)
        )?;
        writeln!(
            f,
            "Binary size after compression: {} bytes",
            Commas(made.compressed_size)
        )?;
        rates(
            f,
            made.uncompressed_size,
            made.compressed_size,
            seconds,
            "Compression",
        )?;
        writeln!(f, "Truncated MD5 hash: {}", Hex(made.hash))
    })
}

struct Report<F>(F);

impl<F: Fn(&mut fmt::Formatter<'_>) -> fmt::Result> fmt::Display for Report<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.0)(f)
    }
}

fn method_name(raw: u16) -> &'static str {
    match CompressionMethod::from_raw(raw) {
        CompressionMethod::Unknown(_) => "unknown",
        method => method.name(),
    }
}

/// The rate, ratio and speed lines.
#[allow(clippy::as_conversions)] // sizes as f64 for a rate, as LLVM computes it
fn rates(
    f: &mut fmt::Formatter<'_>,
    uncompressed: u64,
    compressed: u64,
    seconds: f64,
    what: &str,
) -> fmt::Result {
    let rate = uncompressed as f64 / compressed as f64;
    let speed = if seconds > 0.0 {
        uncompressed as f64 / (1024.0 * 1024.0) / seconds
    } else {
        0.0
    };
    writeln!(f, "Compression rate: {rate:.2}")?;
    writeln!(f, "Compression ratio: {:.2}%", 100.0 / rate)?;
    writeln!(f, "{what} speed: {speed:.2} MB/s")
}

/// `llvm::format_hex(n, 16)`: `0x` and at least 14 lowercase hex digits.
struct Hex(u64);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#016x}", self.0)
    }
}

/// A number with `,` between groups of three digits.
struct Commas(u64);

impl fmt::Display for Commas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut groups = [0u16; 7];
        let mut n = self.0;
        let mut count = 0usize;
        for group in groups.iter_mut() {
            *group = u16::try_from(n % 1000).unwrap_or(0);
            n /= 1000;
            count = count.saturating_add(1);
            if n == 0 {
                break;
            }
        }
        let mut first = true;
        for group in groups.iter().take(count).rev() {
            if first {
                write!(f, "{group}")?;
                first = false;
            } else {
                write!(f, ",{group:03}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn numbers_are_formatted_as_llvm_formats_them() {
        assert_eq!(Commas(0).to_string(), "0");
        assert_eq!(Commas(999).to_string(), "999");
        assert_eq!(Commas(8069).to_string(), "8,069");
        assert_eq!(Commas(1_234_567).to_string(), "1,234,567");
        assert_eq!(Commas(u64::MAX).to_string(), "18,446,744,073,709,551,615");
        assert_eq!(Hex(0x521b3f7798bcda76).to_string(), "0x521b3f7798bcda76");
        assert_eq!(Hex(0x4b2008fd98c1dd4).to_string(), "0x4b2008fd98c1dd4");
        assert_eq!(Hex(1).to_string(), "0x00000000000001");
    }

    #[test]
    fn rates_are_formatted_as_llvm_formats_them() {
        let made = Compression {
            version: 3,
            total_size: 8069,
            method: 1,
            level: 3,
            uncompressed_size: 45_283,
            compressed_size: 8_037,
            hash: 1,
        };
        let text = compression(&made, 0.0).to_string();
        assert!(text.contains(
            "Compression rate: 5.63\nCompression ratio: 17.75%\nCompression speed: 0.00 MB/s\n"
        ));
        assert!(text.contains("Compression method used: zstd\n"));
    }
}
