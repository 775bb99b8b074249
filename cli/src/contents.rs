//! What an input file holds: its containers in order (one, or several back to
//! back as in a linked `.hip_fatbin`), compressed ones decompressed. Shared
//! by the bundler personality and the subcommands.

use std::cell::Cell;
use std::fmt::Write as _;
use std::time::Instant;

use std::path::Path;

use crate::abi::{self, Bundle, CompressedHeader, ContainerError, Status};
use crate::commands::Failure;
use crate::io::{os_message, Input};
use clangoffload_capi::clangoffload_file_kind_tag as Kind;

/// How to decode compressed bundles: from the environment, since the bundler
/// personality must keep LLVM's command line.
#[derive(Debug, Clone)]
pub struct Decoding {
    /// Largest decompressed size accepted, for all the compressed bundles of
    /// one input together (0: the library's default, 1 GiB).
    pub max_size: u64,
    /// Whether a hash mismatch is an error.
    pub verify_hash: bool,
    /// Whether to print LLVM's `-verbose` lines for each container.
    pub verbose: bool,
    /// Whether a compressed bundle must hold a binary bundle (not so for a
    /// compressed text bundle).
    pub binary_only: bool,
    /// Bytes decompressed so far under this limit: every [`load`] with the
    /// same `Decoding` counts against it, since what it returns is held
    /// (an archive's members all at once).
    pub used: Cell<u64>,
}

impl Decoding {
    /// `CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE=<bytes>` raises the limit;
    /// `CLANGOFFLOAD_SKIP_HASH_CHECK=1` accepts a wrong hash, as LLVM does.
    pub fn from_env(verbose: bool) -> Result<Self, Failure> {
        let max_size = match std::env::var("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE") {
            Ok(text) => text.parse().map_err(|_| {
                Failure(format!(
                    "CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE={text}: expected a size in bytes"
                ))
            })?,
            Err(_) => 0,
        };
        let skip = std::env::var("CLANGOFFLOAD_SKIP_HASH_CHECK").is_ok_and(|v| v == "1");
        Ok(Decoding {
            max_size,
            verify_hash: !skip,
            verbose,
            binary_only: true,
            used: Cell::new(0),
        })
    }
}

/// One container of an input, ready to be read as a bundle.
pub struct Loaded<'a> {
    /// Offset of the container in the input.
    pub offset: u64,
    /// The header, if the container was compressed.
    pub compressed: Option<CompressedHeader>,
    bytes: Bytes<'a>,
}

enum Bytes<'a> {
    /// A plain bundle, borrowed from the input.
    Input(&'a [u8]),
    /// A compressed bundle's decompressed bytes.
    Decompressed(Vec<u8>),
}

impl<'a> Loaded<'a> {
    /// A whole input taken as one container.

    /// The uncompressed bundle's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Input(data) => data,
            Bytes::Decompressed(data) => data,
        }
    }

    /// The offset in the input file of a payload at `offset` in
    /// [`Loaded::bytes`], when the bytes are the file's own.
    pub fn file_offset(&self, offset: u64) -> Option<u64> {
        match self.bytes {
            Bytes::Input(_) => Some(self.offset + offset),
            Bytes::Decompressed(_) => None,
        }
    }
}

/// For the subcommands: opens `file`, reads every container in it and calls
/// `each` with the input, the container and its bundle, in file order.
/// Warnings go to stderr under `program`'s name.
pub fn each_bundle(
    program: &str,
    file: &str,
    mut each: impl FnMut(&Input, &Loaded, &Bundle) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    if !starts_with_container(input.data()) {
        return Err(Failure(format!("'{file}': not an offload bundle")));
    }
    let warn = |message: &str| eprintln!("{program}: warning: '{file}': {message}");
    let contents = load(input.data(), &Decoding::from_env(false)?, &warn)
        .map_err(|Failure(e)| Failure(format!("'{file}': {e}")))?;
    for loaded in &contents {
        let bundle = Bundle::parse(loaded.bytes())
            .map_err(|e| Failure(format!("'{file}': malformed bundle: {e}")))?;
        each(&input, loaded, &bundle)?;
        for warning in bundle.diagnostics() {
            warn(&warning);
        }
    }
    Ok(())
}

/// Whether `data` starts with a bundle or a compressed bundle.
pub fn starts_with_container(data: &[u8]) -> bool {
    matches!(
        crate::job::kind(data),
        Kind::Bundle | Kind::CompressedBundle
    )
}

/// Every container in `data`, compressed ones decompressed (and checked
/// against their hash unless `decoding` says not to). The first damaged
/// container ends the walk with an error naming its offset.
pub fn load<'a>(
    data: &'a [u8],
    decoding: &Decoding,
    warn: &dyn Fn(&str),
) -> Result<Vec<Loaded<'a>>, Failure> {
    let mut loaded: Vec<Loaded> = Vec::new();
    // Every decompressed bundle is held until the end, so the limit is for
    // the whole input: many small bombs must not add up to more than one.
    let limit = match decoding.max_size {
        0 => abi::DEFAULT_MAX_DECOMPRESSED_SIZE,
        max => max,
    };
    for container in abi::containers(data) {
        let container = match container {
            Ok(container) => container,
            // Bytes after a plain bundle that start no container, or a
            // damaged one: LLVM reads the bundle and ignores them, so do we,
            // with a warning.
            Err(e) if loaded.last().is_some_and(|l| l.compressed.is_none()) => {
                let left = data.len() as u64 - e.start;
                let what = match e.error.status {
                    Status::UnknownContainer => "start no known container".to_owned(),
                    _ => format!("are not a readable container ({})", malformed(data, e).0),
                };
                warn(&format!(
                    "{left} bytes after the bundle at offset {:#x} {what}; ignored",
                    loaded.last().map_or(0, |l| l.offset)
                ));
                break;
            }
            Err(e) => return Err(malformed(data, e)),
        };
        let at = |message: String| {
            Failure(format!(
                "{} at offset {:#x}: {message}",
                if container.compressed {
                    "compressed bundle"
                } else {
                    "bundle"
                },
                container.offset
            ))
        };
        if container.offload_binary {
            return Err(Failure(format!(
                "an OffloadBinary at offset {:#x}, not a bundle; see clangoffload packager",
                container.offset
            )));
        }
        if !container.compressed {
            if decoding.verbose {
                eprintln!("Uncompressed bundle.");
            }
            loaded.push(Loaded {
                offset: container.offset,
                compressed: None,
                bytes: Bytes::Input(container.data),
            });
            continue;
        }
        let header = abi::compressed_header(container.data).map_err(|e| at(e.message))?;
        let start = Instant::now();
        let used = decoding.used.get();
        let left = limit.saturating_sub(used);
        let bytes = abi::decompress_unverified(container.data, left).map_err(|e| {
            if e.status == Status::SizeLimitExceeded && used > 0 {
                at(format!(
                    "{}: earlier compressed bundles of this input took {used} of its \
                     {limit} bytes (CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE)",
                    e.message
                ))
            } else {
                at(e.message)
            }
        })?;
        decoding.used.set(used + bytes.len() as u64);
        let seconds = start.elapsed().as_secs_f64();
        // MD5 runs slower than zstd decodes: hash only when asked to.
        let computed = if decoding.verify_hash || decoding.verbose {
            abi::truncated_md5(&bytes)
        } else {
            header.hash
        };
        if decoding.verbose {
            eprint!("{}", decompress_report(&header, computed, seconds));
        }
        if decoding.verify_hash && computed != header.hash {
            return Err(at(format!(
                "hash mismatch: stored {}, computed {} (set CLANGOFFLOAD_SKIP_HASH_CHECK=1 to accept it)",
                hex(header.hash),
                hex(computed)
            )));
        }
        if decoding.binary_only && crate::job::kind(&bytes) != Kind::Bundle {
            return Err(at(
                "decompresses to something other than a binary bundle".into()
            ));
        }
        loaded.push(Loaded {
            offset: container.offset,
            compressed: Some(header),
            bytes: Bytes::Decompressed(bytes),
        });
    }
    Ok(loaded)
}

/// The message for a container the walk could not read.
fn malformed(data: &[u8], e: ContainerError) -> Failure {
    let rest = data.get(e.start as usize..).unwrap_or_default();
    let what = if crate::job::kind(rest) == Kind::CompressedBundle {
        "malformed compressed bundle"
    } else if crate::job::kind(rest) == Kind::Bundle {
        "malformed bundle"
    } else {
        return Failure(e.error.message);
    };
    if e.start == 0 {
        Failure(format!("{what}: {}", e.error.message))
    } else {
        Failure(format!(
            "{what} at offset {:#x}: {}",
            e.start, e.error.message
        ))
    }
}

/// LLVM's `-verbose` lines for a decompressed bundle.
fn decompress_report(header: &CompressedHeader, computed: u64, seconds: f64) -> String {
    let mut out = String::new();
    let before = header.compressed.len as u64;
    let after = header.uncompressed_size;
    let _ = writeln!(out, "Compressed bundle format version: {}", header.version);
    if header.has_total_size {
        let _ = writeln!(
            out,
            "Total file size (from header): {} bytes",
            commas(header.total_size)
        );
    }
    let _ = writeln!(out, "Decompression method: {}", method_name(header.method));
    let _ = writeln!(out, "Size before decompression: {} bytes", commas(before));
    let _ = writeln!(out, "Size after decompression: {} bytes", commas(after));
    out += &rates(after, before, seconds, "Decompression");
    let _ = writeln!(out, "Stored hash: {}", hex(header.hash));
    let _ = writeln!(out, "Recalculated hash: {}", hex(computed));
    let _ = writeln!(
        out,
        "Hashes match: {}",
        if computed == header.hash { "Yes" } else { "No" }
    );
    out
}

/// The rate, ratio and speed lines, formatted as LLVM formats them (speed in
/// MiB/s, labelled MB/s).
fn rates(uncompressed: u64, compressed: u64, seconds: f64, what: &str) -> String {
    let rate = uncompressed as f64 / compressed as f64;
    let speed = if seconds > 0.0 {
        uncompressed as f64 / (1024.0 * 1024.0) / seconds
    } else {
        0.0
    };
    format!(
        "Compression rate: {rate:.2}\nCompression ratio: {:.2}%\n{what} speed: {speed:.2} MB/s\n",
        100.0 / rate
    )
}

fn method_name(method: u16) -> &'static str {
    match method {
        0 => "zlib",
        1 => "zstd",
        _ => "unknown",
    }
}

/// `llvm::format_hex(n, 16)`: `0x` and at least 14 lowercase hex digits.
pub fn hex(n: u64) -> String {
    format!("{n:#016x}")
}

/// A number with `,` between groups of three digits.
pub fn commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_formatted_as_llvm_formats_them() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(8069), "8,069");
        assert_eq!(commas(1_234_567), "1,234,567");
        assert_eq!(hex(0x521b3f7798bcda76), "0x521b3f7798bcda76");
        assert_eq!(hex(0x4b2008fd98c1dd4), "0x4b2008fd98c1dd4");
        assert_eq!(hex(1), "0x00000000000001");
        assert_eq!(
            rates(45_283, 8_037, 0.0, "Compression"),
            "Compression rate: 5.63\nCompression ratio: 17.75%\nCompression speed: 0.00 MB/s\n"
        );
        assert!(rates(0, 9, 1.0, "Compression").contains("ratio: inf%"));
    }
}
