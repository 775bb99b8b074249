//! `clangoffload inspect FILE [--json]`: every container in a file (one, or
//! several back to back as in a linked `.hip_fatbin`) with its header fields,
//! and for a compressed bundle its ratio, whether its hash matches and its
//! entries. A damaged container is reported and the walk goes on where its
//! extent allows. The JSON schema is in the README and is kept stable.

use std::fmt::Write as _;
use std::path::Path;

use super::Failure;
use crate::abi::{self, Bundle, CompressedHeader};
use crate::contents::{commas, hex, Decoding};
use crate::io::{os_message, Input};

/// What inspection found in one container.
struct Report {
    offset: u64,
    size: u64,
    compressed: Option<Compressed>,
    entries: Vec<EntryReport>,
    error: Option<String>,
}

struct Compressed {
    header: CompressedHeader,
    computed_hash: Option<u64>,
}

struct EntryReport {
    id: String,
    offset: u64,
    size: u64,
}

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, json) = match args {
        [file] => (file, false),
        [flag, file] | [file, flag] if flag == "--json" => (file, true),
        _ => return Err(Failure("usage: clangoffload inspect FILE [--json]".into())),
    };
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    let decoding = Decoding::from_env(false)?;
    let (reports, walk_error) = inspect(input.data(), &decoding);
    let text = if json {
        to_json(
            file,
            input.data().len() as u64,
            &reports,
            walk_error.as_deref(),
        )
    } else {
        to_text(&reports, walk_error.as_deref())
    };
    print!("{text}");
    if walk_error.is_some() || reports.iter().any(|r| r.error.is_some()) {
        return Err(Failure(format!("'{file}': damaged containers (see above)")));
    }
    Ok(())
}

fn inspect(data: &[u8], decoding: &Decoding) -> (Vec<Report>, Option<String>) {
    let mut reports = Vec::new();
    for container in abi::containers(data) {
        let container = match container {
            Ok(container) => container,
            Err(e) => {
                let message = format!("at offset {:#x}: {}", e.start, e.error.message);
                return (reports, Some(message));
            }
        };
        let mut report = Report {
            offset: container.offset,
            size: container.data.len() as u64,
            compressed: None,
            entries: Vec::new(),
            error: None,
        };
        let result = if container.compressed {
            inspect_compressed(container.data, decoding, &mut report)
        } else {
            entries_of(container.data, &mut report)
        };
        report.error = result.err();
        reports.push(report);
    }
    (reports, None)
}

fn inspect_compressed(data: &[u8], decoding: &Decoding, report: &mut Report) -> Result<(), String> {
    let header = abi::compressed_header(data).map_err(|e| e.message)?;
    report.compressed = Some(Compressed {
        header,
        computed_hash: None,
    });
    let bundle = abi::decompress_unverified(data, decoding.max_size).map_err(|e| e.message)?;
    let computed = abi::truncated_md5(&bundle);
    if let Some(c) = report.compressed.as_mut() {
        c.computed_hash = Some(computed);
    }
    entries_of(&bundle, report)?;
    if computed != header.hash {
        return Err(format!(
            "hash mismatch: stored {}, computed {}",
            hex(header.hash),
            hex(computed)
        ));
    }
    Ok(())
}

fn entries_of(bundle: &[u8], report: &mut Report) -> Result<(), String> {
    let parsed = Bundle::parse(bundle).map_err(|e| format!("malformed bundle: {e}"))?;
    report.entries = parsed
        .entries()
        .map(|e| EntryReport {
            id: String::from_utf8_lossy(e.id).into_owned(),
            offset: e.offset,
            size: e.payload.len() as u64,
        })
        .collect();
    Ok(())
}

/// Uncompressed over compressed size; `None` for an empty stream.
fn ratio(header: &CompressedHeader) -> Option<f64> {
    (header.compressed.len != 0)
        .then(|| header.uncompressed_size as f64 / header.compressed.len as f64)
}

fn method_name(method: u16) -> String {
    match method {
        0 => "zlib".into(),
        1 => "zstd".into(),
        other => format!("unknown ({other})"),
    }
}

fn to_text(reports: &[Report], walk_error: Option<&str>) -> String {
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        let kind = if r.compressed.is_some() {
            "compressed bundle"
        } else {
            "bundle"
        };
        let _ = writeln!(
            out,
            "container {i} at offset {:#x}: {kind}, {} bytes",
            r.offset,
            commas(r.size)
        );
        if let Some(c) = &r.compressed {
            let h = &c.header;
            let _ = writeln!(out, "  version:           {}", h.version);
            let _ = writeln!(out, "  method:            {}", method_name(h.method));
            if h.has_total_size {
                let _ = writeln!(out, "  total size:        {}", commas(h.total_size));
            }
            let _ = writeln!(
                out,
                "  compressed size:   {}",
                commas(h.compressed.len as u64)
            );
            let _ = writeln!(out, "  uncompressed size: {}", commas(h.uncompressed_size));
            if let Some(ratio) = ratio(h) {
                let _ = writeln!(out, "  ratio:             {ratio:.2}");
            }
            let verdict = match c.computed_hash {
                Some(computed) if computed == h.hash => "matches".to_owned(),
                Some(computed) => format!("MISMATCH, computed {}", hex(computed)),
                None => "not checked".to_owned(),
            };
            let _ = writeln!(out, "  hash:              {} ({verdict})", hex(h.hash));
        }
        if !r.entries.is_empty() {
            let _ = writeln!(out, "  entries:");
        }
        for e in &r.entries {
            let _ = writeln!(
                out,
                "    {:<48} offset {:#x} size {}",
                e.id,
                e.offset,
                commas(e.size)
            );
        }
        if let Some(error) = &r.error {
            let _ = writeln!(out, "  error: {error}");
        }
    }
    if let Some(error) = walk_error {
        let _ = writeln!(out, "error {error}");
    }
    out
}

/// A JSON string literal.
fn json_str(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_opt(value: Option<String>) -> String {
    value.unwrap_or_else(|| "null".into())
}

fn to_json(file: &str, size: u64, reports: &[Report], walk_error: Option<&str>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"schema\":1,\"file\":{},\"size\":{size},\"containers\":[",
        json_str(file)
    );
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let kind = if r.compressed.is_some() {
            "compressed"
        } else {
            "bundle"
        };
        let _ = write!(
            out,
            "{{\"offset\":{},\"size\":{},\"kind\":\"{kind}\",\"compressed\":",
            r.offset, r.size
        );
        match &r.compressed {
            Some(c) => {
                let h = &c.header;
                let _ = write!(
                    out,
                    "{{\"version\":{},\"method\":{},\"method_id\":{},\"total_size\":{},\"compressed_size\":{},\"uncompressed_size\":{},\"ratio\":{},\"hash\":\"{}\",\"computed_hash\":{},\"hash_matches\":{}}}",
                    h.version,
                    json_str(&method_name(h.method)),
                    h.method,
                    json_opt(h.has_total_size.then(|| h.total_size.to_string())),
                    h.compressed.len,
                    h.uncompressed_size,
                    json_opt(ratio(h).map(|r| format!("{r:.4}"))),
                    hex(h.hash),
                    json_opt(c.computed_hash.map(|x| format!("\"{}\"", hex(x)))),
                    json_opt(c.computed_hash.map(|x| (x == h.hash).to_string())),
                );
            }
            None => out += "null",
        }
        out += ",\"entries\":[";
        for (j, e) in r.entries.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"id\":{},\"offset\":{},\"size\":{}}}",
                json_str(&e.id),
                e.offset,
                e.size
            );
        }
        let _ = write!(
            out,
            "],\"error\":{}}}",
            json_opt(r.error.as_deref().map(json_str))
        );
    }
    let _ = writeln!(out, "],\"error\":{}}}", json_opt(walk_error.map(json_str)));
    out
}
