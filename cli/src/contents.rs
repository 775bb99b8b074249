//! What the subcommands share about reading containers: the decompression
//! limit from the environment, and numbers formatted as LLVM formats them.

use crate::commands::bundler::max_decompressed_size;
use crate::commands::Failure;

/// How to decode compressed bundles: from the environment, since the bundler
/// personality must keep LLVM's command line.
#[derive(Debug, Clone)]
pub struct Decoding {
    /// Largest decompressed size accepted, for all the compressed bundles of
    /// one input together (the library's default, 1 GiB, if 0).
    pub max_size: u64,
}

impl Decoding {
    /// `CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE=<bytes>` raises the limit.
    pub fn from_env(_verbose: bool) -> Result<Self, Failure> {
        Ok(Decoding {
            max_size: match max_decompressed_size()? {
                0 => clangoffload_capi::CLANGOFFLOAD_DEFAULT_MAX_DECOMPRESSED_SIZE,
                max => max,
            },
        })
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
        let left = digits.len().saturating_sub(i);
        if i > 0 && left % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
