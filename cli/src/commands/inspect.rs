//! `clangoffload inspect FILE [--json | --objdump]`: every container in a
//! file with its header fields, as the library's inspection finds them (an
//! ELF file section by section, an archive member by member, anything else
//! as containers back to back; damaged containers reported while the walk
//! goes on). This file only formats: text, JSON (the schema is in
//! docs/cli.md), or what `llvm-objdump --offloading` 22 prints for the
//! OffloadBinaries.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Serialize, Serializer};

use super::Failure;
use crate::contents::{commas, hex, Decoding};
use crate::ffi::cuda::CudaFatbins;
use crate::ffi::inspection::{self, Inspection, Kind, NoteKind, Place};

/// What the inspection found, as the report shows it.
#[derive(Serialize)]
struct Report<'a> {
    schema: u32,
    file: &'a str,
    size: usize,
    containers: Vec<ContainerReport<'a>>,
    notes: Vec<String>,
    #[serde(rename = "error", serialize_with = "joined")]
    errors: Vec<String>,
    /// CUDA fat binaries, every header field of every entry.
    cuda_fatbins: Vec<super::cuda::FatbinReport>,
    /// What the file is when it holds no container or fat binary at all.
    no_container: Option<String>,
    /// A host ROCm's kpack split: its records, markers and code objects.
    kpack: Option<super::kpack::HostReport>,
}

#[derive(Serialize)]
struct ContainerReport<'a> {
    place: String,
    offset: u64,
    size: usize,
    /// `bundle`, `compressed` or `offload_binary` (the library's tags).
    kind: &'static str,
    /// The name text reports print (`compressed bundle`).
    #[serde(skip)]
    name: &'static str,
    compressed: Option<CompressedReport>,
    entries: Vec<EntryReport<'a>>,
    images: Vec<ImageReport<'a>>,
    error: Option<Cow<'a, str>>,
    /// The file it is in (an index of the inspection's files).
    #[serde(skip)]
    file: usize,
}

#[derive(Serialize)]
struct CompressedReport {
    version: u16,
    method: String,
    method_id: u16,
    total_size: Option<u64>,
    compressed_size: usize,
    uncompressed_size: u64,
    #[serde(serialize_with = "four_places")]
    ratio: Option<f64>,
    hash: String,
    computed_hash: Option<String>,
    hash_matches: Option<bool>,
}

#[derive(Serialize)]
struct EntryReport<'a> {
    id: Cow<'a, str>,
    offset: u64,
    size: u64,
    code_object_target: Option<Cow<'a, str>>,
    target_matches: Option<bool>,
}

#[derive(Serialize)]
struct ImageReport<'a> {
    version: u32,
    kind: Cow<'a, str>,
    producer: Cow<'a, str>,
    size: u64,
    /// As they are; as text (bytes that are not UTF-8 replaced) in JSON.
    #[serde(serialize_with = "as_text")]
    strings: Vec<(&'a [u8], &'a [u8])>,
}

/// What [`render`] made of a file.
#[derive(Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The report, as printed.
    pub text: Vec<u8>,
    /// The damage found, one message per damaged container or file.
    pub damage: Vec<String>,
    /// The file holds no container at all; `damage` (or, for device code
    /// of its own, `text`) says what it is, in the words of `list` and
    /// `extract`.
    pub no_container: bool,
}

/// How damage to a CUDA fat binary starts, in the report's errors.
pub const CUDA_DAMAGE: &str = "CUDA fat binary: ";

/// How `inspect` prints what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The text report.
    Text,
    /// One JSON object (`--json`).
    Json,
    /// What `llvm-objdump --offloading` prints (`--objdump`).
    Objdump,
}

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let usage = || Failure(crate::help::usage(crate::help::INSPECT));
    let (mut file, mut mode, mut verify, mut budget) = (None, Mode::Text, false, None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--json" if mode == Mode::Text => mode = Mode::Json,
            "--objdump" if mode == Mode::Text => mode = Mode::Objdump,
            "--verify" => verify = true,
            "--memory-budget" => budget = Some(rest.next().ok_or_else(usage)?.as_str()),
            _ if arg.starts_with("--memory-budget=") => {
                budget = arg.strip_prefix("--memory-budget=");
            }
            _ if file.is_none() => file = Some(arg),
            _ => return Err(usage()),
        }
    }
    let file = file.ok_or_else(usage)?;
    let input = super::open(file)?;
    let max_size = Decoding::from_env(false)?.max_size;
    if crate::ffi::kpack::is_kpack(input.data()) && mode != Mode::Objdump {
        let damage =
            super::kpack::inspect(file, input.data(), mode == Mode::Json, verify, max_size)?;
        if !damage.is_empty() {
            return Err(Failure(format!(
                "'{file}': damaged entries:\n  {}",
                damage.join("\n  ")
            )));
        }
        return Ok(());
    }
    let inspection = if verify {
        // Every core, under the budget, each bundle's pages let go once
        // it is checked.
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let budget = crate::contents::memory_budget(budget)?;
        Inspection::verified(&input, max_size, threads, budget)?
    } else {
        Inspection::new(input.data(), max_size, false)?
    };
    let Rendered {
        text,
        damage,
        no_container,
    } = render_found(file, input.data(), &inspection, mode)?;
    crate::stdio::out_bytes(&text)?;
    if let ([only], true) = (damage.as_slice(), no_container) {
        return Err(Failure(format!("'{file}': {only}")));
    }
    if !damage.is_empty() {
        if mode == Mode::Objdump {
            // Stdout is llvm-objdump's, which has no place for them.
            return Err(Failure(format!(
                "'{file}': damaged containers:\n  {}",
                damage.join("\n  ")
            )));
        }
        return Err(Failure(format!("'{file}': damaged containers (see above)")));
    }
    Ok(())
}

/// What `clangoffload inspect` prints for `data`, read from a file named
/// `file`, decoding each compressed container to at most `max_size` bytes,
/// whole (its hash checked, its code objects too) when `verify` asks, else
/// only its header and entry table; and the damage found, one message per
/// damaged container or file (the tool then fails after printing).
pub fn render(
    file: &str,
    data: &[u8],
    max_size: u64,
    verify: bool,
    mode: Mode,
) -> Result<Rendered, Failure> {
    render_found(file, data, &Inspection::new(data, max_size, verify)?, mode)
}

/// [`render`] of what `inspection` found in `data`.
fn render_found(
    file: &str,
    data: &[u8],
    inspection: &Inspection,
    mode: Mode,
) -> Result<Rendered, Failure> {
    let files = inspection.files();
    let mut report = report(file, data.len(), inspection, &files);
    if mode != Mode::Objdump {
        report.kpack = super::kpack::host_report(file, data)?;
    }
    let cuda = super::cuda::read(file, data)?;
    // llvm-objdump's view of such a file is an empty one.
    if mode != Mode::Objdump && holds_nothing(data, inspection, cuda.as_ref()) {
        return no_container(report, data, mode);
    }
    // llvm-objdump's output has no place for CUDA fat binaries.
    if let Some(cuda) = cuda.as_ref().filter(|_| mode != Mode::Objdump) {
        report.cuda_fatbins = super::cuda::reports(cuda);
        // Marked, so that the --objdump view (which leaves fat binaries out)
        // can be told apart: its damage is the rest.
        report
            .errors
            .extend(cuda.fault().map(|f| format!("{CUDA_DAMAGE}{f}")));
    }
    let text = match mode {
        Mode::Json => (serde_json::to_string(&report)? + "\n").into_bytes(),
        Mode::Objdump => to_objdump(&report, &files, inspection),
        Mode::Text => to_text(&report).into_bytes(),
    };
    let damage = report
        .containers
        .iter()
        .filter_map(|c| c.error.as_deref())
        .chain(report.errors.iter().map(String::as_str))
        .map(str::to_owned)
        .collect();
    Ok(Rendered {
        text,
        damage,
        no_container: false,
    })
}

/// Whether the inspection found nothing at all in `data`: no container,
/// note or fat binary, and no damage but the first bytes after any zeros
/// starting none.
pub fn holds_nothing(data: &[u8], found: &Inspection, cuda: Option<&CudaFatbins<'_>>) -> bool {
    let unknown = |e: &inspection::Error| {
        let zeros = usize::try_from(e.offset).ok().and_then(|at| data.get(..at));
        e.status == inspection::UNKNOWN_CONTAINER
            && zeros.is_some_and(|z| z.iter().all(|&b| b == 0))
    };
    found.containers().is_empty()
        && found.notes().is_empty()
        && found.errors().iter().all(unknown)
        && cuda.is_none()
}

/// The report of a file that holds nothing: what it is (the library's
/// words, as `list` and `extract` say them). A raw code object or cubin is
/// shown (on stdout, no damage); anything else is the one damage.
fn no_container(mut report: Report<'_>, data: &[u8], mode: Mode) -> Result<Rendered, Failure> {
    let (sentence, device_code) = crate::ffi::inspection::describe(data);
    report.errors.clear();
    report.no_container = Some(sentence.clone());
    let text = match mode {
        Mode::Json => (serde_json::to_string(&report)? + "\n").into_bytes(),
        Mode::Text if device_code => format!("{sentence}\n").into_bytes(),
        Mode::Text | Mode::Objdump => Vec::new(),
    };
    let damage = if device_code {
        Vec::new()
    } else {
        vec![sentence]
    };
    Ok(Rendered {
        text,
        damage,
        no_container: true,
    })
}

fn report<'a>(
    file: &'a str,
    size: usize,
    found: &'a Inspection,
    files: &[inspection::File],
) -> Report<'a> {
    let place = |place: &Place| {
        let mut text = member_path(found, files, place.file);
        if place.has_section {
            let _ = write!(text, "[{}]", found.text(place.section));
        }
        text
    };
    let containers = found
        .containers()
        .iter()
        .enumerate()
        .map(|(i, c)| ContainerReport {
            place: place(&c.place),
            offset: c.offset,
            size: c.data.len,
            kind: crate::ffi::container_kind_tag(c.kind),
            name: crate::ffi::container_kind_name(c.kind),
            compressed: (c.kind == Kind::Compressed).then(|| compressed(found, c)),
            entries: found
                .entries(i, c)
                .iter()
                .map(|e| EntryReport {
                    id: found.text(e.id),
                    offset: e.offset,
                    size: e.size,
                    code_object_target: e.is_code_object.then(|| found.text(e.code_object_target)),
                    target_matches: e.is_code_object.then_some(e.target_matches),
                })
                .collect(),
            images: found
                .images(i, c)
                .iter()
                .enumerate()
                .map(|(j, image)| ImageReport {
                    version: image.version,
                    kind: found.text(image.image_kind_name),
                    producer: found.text(image.offload_kind_name),
                    size: image.size,
                    strings: found.strings(i, j, image.string_count),
                })
                .collect(),
            error: (c.error_status != 0).then(|| found.text(c.error)),
            file: c.place.file,
        })
        .collect();
    let notes = found
        .notes()
        .iter()
        .map(|n| {
            let size = commas(n.size);
            let here = place(&n.place);
            match n.kind {
                NoteKind::BundleEntry => format!(
                    "{here}: object bundle entry {}, {size} bytes at offset {:#x}",
                    found.text(n.id),
                    n.offset
                ),
                NoteKind::NvFatbin => format!(
                    "{here}: NVIDIA fat binary section, {size} bytes at offset {:#x}",
                    n.offset
                ),
                NoteKind::Wrapper => {
                    let w = &n.wrapper;
                    let target = match w.resolved {
                        0 => "pointer not resolved".to_owned(),
                        _ => format!(
                            "points at section {} offset {:#x} ({} bytes)",
                            w.target_section,
                            w.target_offset,
                            commas(u64::try_from(w.target.len).unwrap_or(u64::MAX))
                        ),
                    };
                    format!(
                        "{here}: wrapper {}: {} ({:#010x}) version {}, {target}",
                        n.wrapper_index,
                        found.text(n.wrapper_name),
                        w.magic,
                        w.version
                    )
                }
            }
        })
        .collect();
    let errors = found
        .errors()
        .iter()
        .map(|e| {
            let (place, message) = (place(&e.place), found.text(e.message));
            match e.has_offset {
                true => format!("{}at offset {:#x}: {message}", spaced(&place), e.offset),
                false => format!("{place}: {message}"),
            }
        })
        .collect();
    Report {
        schema: 1,
        file,
        size,
        containers,
        notes,
        errors,
        cuda_fatbins: Vec::new(),
        no_container: None,
        kpack: None,
    }
}

/// `(member)` for each archive member the file is in, outermost first.
fn member_path(found: &Inspection, files: &[inspection::File], index: usize) -> String {
    match files.get(index) {
        // A member's archive comes before it.
        Some(file) if file.has_name && file.parent < index => {
            let path = member_path(found, files, file.parent);
            format!("{path}({})", found.text(file.name))
        }
        _ => String::new(),
    }
}

/// A place before more words: followed by a space unless empty.
fn spaced(place: &str) -> String {
    match place {
        "" => String::new(),
        place => format!("{place} "),
    }
}

fn compressed(found: &Inspection, c: &inspection::Container) -> CompressedReport {
    let h = &c.compressed;
    let method = found.text(c.method_name);
    CompressedReport {
        version: h.version,
        method: match method.as_ref() {
            "unknown" => format!("unknown ({})", h.method),
            known => known.to_owned(),
        },
        method_id: h.method,
        total_size: h.has_total_size.then_some(h.total_size),
        compressed_size: h.compressed.len,
        uncompressed_size: h.uncompressed_size,
        ratio: (h.compressed.len != 0).then_some(c.ratio),
        hash: hex(h.hash),
        computed_hash: c.has_computed_hash.then(|| hex(c.computed_hash)),
        hash_matches: c.has_computed_hash.then_some(c.computed_hash == h.hash),
    }
}

/// The ratio with four decimals, as a JSON number.
fn four_places<S: Serializer>(ratio: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    let raw = ratio.map(|r| serde_json::value::RawValue::from_string(format!("{r:.4}")));
    raw.transpose()
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// Key-value pairs of bytes as pairs of text.
fn as_text<S: Serializer>(pairs: &[(&[u8], &[u8])], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        pairs
            .iter()
            .map(|(k, v)| (String::from_utf8_lossy(k), String::from_utf8_lossy(v))),
    )
}

/// Every error, in one string (`null` if none).
fn joined<S: Serializer>(errors: &[String], s: S) -> Result<S::Ok, S::Error> {
    (!errors.is_empty()).then(|| errors.join("; ")).serialize(s)
}

fn to_text(report: &Report) -> String {
    let mut out = String::new();
    for (i, r) in report.containers.iter().enumerate() {
        let kind = r.name;
        let _ = writeln!(
            out,
            "container {i} {}at offset {:#x}: {kind}, {} bytes",
            spaced(&r.place),
            r.offset,
            commas(u64::try_from(r.size).unwrap_or(u64::MAX))
        );
        if let Some(h) = &r.compressed {
            let _ = writeln!(out, "  version:           {}", h.version);
            let _ = writeln!(out, "  method:            {}", h.method);
            if let Some(total) = h.total_size {
                let _ = writeln!(out, "  total size:        {}", commas(total));
            }
            let _ = writeln!(
                out,
                "  compressed size:   {}",
                commas(u64::try_from(h.compressed_size).unwrap_or(u64::MAX))
            );
            let _ = writeln!(out, "  uncompressed size: {}", commas(h.uncompressed_size));
            if let Some(ratio) = h.ratio {
                let _ = writeln!(out, "  ratio:             {ratio:.2}");
            }
            let verdict = match (&h.computed_hash, h.hash_matches) {
                (_, Some(true)) => "matches".to_owned(),
                (Some(computed), _) => format!("MISMATCH, computed {computed}"),
                (None, _) => "not checked: --verify decodes the bundle whole".to_owned(),
            };
            let _ = writeln!(out, "  hash:              {} ({verdict})", h.hash);
        }
        if !r.entries.is_empty() {
            let _ = writeln!(out, "  entries:");
        }
        for e in &r.entries {
            let _ = write!(
                out,
                "    {:<48} offset {:#x} size {}",
                e.id,
                e.offset,
                commas(e.size)
            );
            match (&e.code_object_target, e.target_matches) {
                (Some(target), Some(true)) => {
                    let _ = write!(out, " (code object {target})");
                }
                (Some(target), _) => {
                    let _ = write!(out, " (MISMATCH: code object is {target})");
                }
                (None, _) => {}
            }
            out.push('\n');
        }
        for (j, image) in r.images.iter().enumerate() {
            let _ = write!(
                out,
                "  image {j}: v{} {} {} {} bytes",
                image.version,
                image.producer,
                image.kind,
                commas(image.size)
            );
            for (key, value) in &image.strings {
                let (key, value) = (String::from_utf8_lossy(key), String::from_utf8_lossy(value));
                let _ = write!(out, " {key}={}", value.escape_debug());
            }
            out.push('\n');
        }
        if let Some(error) = &r.error {
            let _ = writeln!(out, "  error: {error}");
        }
    }
    super::cuda::text(&report.cuda_fatbins, &mut out);
    for note in &report.notes {
        let _ = writeln!(out, "{note}");
    }
    if let Some(kpack) = &report.kpack {
        out.push_str(&super::kpack::host_text(kpack));
        for finding in &kpack.errors {
            let _ = writeln!(out, "kpack: {finding}");
        }
    }
    for error in &report.errors {
        let _ = writeln!(out, "error {error}");
    }
    out
}

/// What `llvm-objdump --offloading` 22 prints for the OffloadBinaries: for
/// an ELF file, and for each ELF member of an archive, a header line, then
/// its images numbered from 0; for a raw file its images without a header.
/// (Its lines for bundles go with the files it writes, which inspecting does
/// not.)
fn to_objdump(report: &Report, files: &[inspection::File], found: &Inspection) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, file) in files.iter().enumerate() {
        // The input, or an object in it (llvm-objdump reads no deeper).
        if file.has_name && !(file.parent == 0 && file.is_elf) {
            continue;
        }
        if file.is_elf {
            let header = format!(
                "\n{}{}:\tfile format {}\n",
                report.file,
                member_path(found, files, i),
                found.text(file.objdump_format)
            );
            out.extend(header.bytes());
        }
        let images = report
            .containers
            .iter()
            .filter(|c| c.file == i)
            .flat_map(|c| &c.images);
        for (index, image) in images.enumerate() {
            // A repeated key's last value, as LLVM reads them; its bytes as
            // they are, as llvm-objdump prints them.
            let string = |key: &[u8]| {
                image
                    .strings
                    .iter()
                    .rfind(|(k, _)| *k == key)
                    .map_or(&[][..], |(_, v)| *v)
            };
            let field = |out: &mut Vec<u8>, name: &str, value: &[u8]| {
                out.extend(format!("{name:<16}").bytes());
                out.extend(value);
                out.push(b'\n');
            };
            out.extend(format!("\nOFFLOADING IMAGE [{index}]:\n").bytes());
            field(&mut out, "kind", image.kind.as_bytes());
            field(&mut out, "arch", string(b"arch"));
            field(&mut out, "triple", string(b"triple"));
            field(&mut out, "producer", image.producer.as_bytes());
        }
    }
    out
}
