//! What the subcommands share about reading containers: the decompression
//! limit from the environment, the memory budget for decoding, and numbers
//! formatted as LLVM formats them.

use crate::failure::Failure;

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

/// What decoding may hold at once: `--memory-budget SIZE` if given, else
/// `CLANGOFFLOAD_MEMORY_BUDGET=SIZE`, else `None` (the library's default:
/// 256 MiB, or the largest single bundle's buffer when that is more).
pub fn memory_budget(flag: Option<&str>) -> Result<Option<u64>, Failure> {
    let env = std::env::var("CLANGOFFLOAD_MEMORY_BUDGET").ok();
    let (text, from) = match (flag, env.as_deref()) {
        (Some(text), _) => (text, "--memory-budget"),
        (None, Some(text)) => (text, "CLANGOFFLOAD_MEMORY_BUDGET"),
        (None, None) => return Ok(None),
    };
    size(text).map(Some).ok_or_else(|| {
        Failure(format!(
            "{from} {text}: expected a size in bytes, with K, M or G (KiB, MiB, GiB) if wanted"
        ))
    })
}

/// `4096`, `300M`, `300MiB`, `2G`: bytes, or 1024s of them.
fn size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.strip_suffix("iB").unwrap_or(unit) {
        "" => 0,
        "K" | "k" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    number
        .parse::<u64>()
        .ok()?
        .checked_mul(1 << shift)
        .filter(|&n| n > 0)
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

/// `CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE=<bytes>` raises the limit for all the
/// compressed bundles of one input together (0: the library's default).
pub fn max_decompressed_size() -> Result<u64, Failure> {
    match std::env::var("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE") {
        Ok(text) => text.parse().map_err(|_| {
            Failure(format!(
                "CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE={text}: expected a size in bytes"
            ))
        }),
        Err(_) => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_in_bytes_or_binary_units() {
        assert_eq!(size("4096"), Some(4096));
        assert_eq!(size("300M"), Some(300 << 20));
        assert_eq!(size("300MiB"), Some(300 << 20));
        assert_eq!(size("2G"), Some(2 << 30));
        assert_eq!(size("64k"), Some(64 << 10));
        for bad in ["", "0", "M", "12X", "1.5G", "-1", "99999999999999999999G"] {
            assert_eq!(size(bad), None, "{bad}");
        }
    }
}
