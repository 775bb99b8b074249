//! `clangoffload inspect FILE [--json | --objdump]`: every container in a
//! file with its header fields. An ELF object, executable or shared library
//! is read section by section (`.llvm.offloading`, `.hip_fatbin`,
//! `.nv_fatbin`, bundle sections, and the HIP/CUDA wrapper records with the
//! fat binary each points at); an archive member by member; anything else
//! as containers back to back. Bundle entries holding AMDGPU code objects
//! are checked against the target ID the code object's header names. A
//! damaged container is reported and the walk goes on where its extent
//! allows. `--objdump` prints what `llvm-objdump --offloading` 22 prints for
//! the OffloadBinaries. The JSON schema is in the README.

use std::fmt::Write as _;
use std::path::Path;

use super::Failure;
use crate::abi::{self, Bundle, CompressedHeader, OffloadBinaries};
use crate::contents::{commas, hex, Decoding};
use crate::io::{os_message, Input};
use clangoffload_capi::clangoffload_file_kind_tag as FileKind;

/// What inspection found in one container.
struct Report {
    /// Where it is: the archive member and ELF section, if any.
    place: String,
    offset: u64,
    size: u64,
    kind: ContainerKind,
    compressed: Option<Compressed>,
    entries: Vec<EntryReport>,
    images: Vec<ImageReport>,
    error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ContainerKind {
    Bundle,
    Compressed,
    OffloadBinary,
}

impl ContainerKind {
    /// The name in the text report.
    fn text(self) -> &'static str {
        match self {
            ContainerKind::Bundle => "bundle",
            ContainerKind::Compressed => "compressed bundle",
            ContainerKind::OffloadBinary => "offload binary",
        }
    }

    /// The value of `kind` in the JSON report.
    fn json(self) -> &'static str {
        match self {
            ContainerKind::Bundle => "bundle",
            ContainerKind::Compressed => "compressed",
            ContainerKind::OffloadBinary => "offload_binary",
        }
    }
}

/// One image of an OffloadBinary.
struct ImageReport {
    version: u32,
    kind: &'static str,
    producer: &'static str,
    size: u64,
    strings: Vec<(String, String)>,
}

struct Compressed {
    header: CompressedHeader,
    computed_hash: Option<u64>,
}

struct EntryReport {
    id: String,
    offset: u64,
    size: u64,
    /// For an AMDGPU code object: the target ID its header names, and
    /// whether the entry ID agrees.
    code_object: Option<(String, bool)>,
}

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, mode) = match args {
        [file] => (file, ""),
        [flag, file] | [file, flag] if flag == "--json" || flag == "--objdump" => {
            (file, flag.as_str())
        }
        _ => {
            return Err(Failure(
                "usage: clangoffload inspect FILE [--json | --objdump]".into(),
            ))
        }
    };
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    let decoding = Decoding::from_env(false)?;
    let mut inspection = Inspection {
        reports: Vec::new(),
        notes: Vec::new(),
        errors: Vec::new(),
        decoding: &decoding,
    };
    inspection.file("", input.data());
    let Inspection {
        reports,
        notes,
        errors,
        ..
    } = inspection;
    let text = match mode {
        "--json" => to_json(file, input.data().len() as u64, &reports, &notes, &errors),
        "--objdump" => to_objdump(file, input.data(), &reports),
        _ => to_text(&reports, &notes, &errors),
    };
    print!("{text}");
    if reports.iter().any(|r| r.error.is_some()) || !errors.is_empty() {
        return Err(Failure(format!("'{file}': damaged containers (see above)")));
    }
    Ok(())
}

/// What inspecting one file gathers.
struct Inspection<'a> {
    reports: Vec<Report>,
    /// Lines about the file that are not about one container: wrapper
    /// records, NVIDIA fat binaries, bundle sections.
    notes: Vec<String>,
    /// What could not be read: walks that stopped, damaged headers.
    errors: Vec<String>,
    decoding: &'a Decoding,
}

impl Inspection<'_> {
    /// Any file: an archive's members, an ELF file's offload sections, or
    /// containers back to back.
    fn file(&mut self, place: &str, data: &[u8]) {
        if crate::job::kind(data) == FileKind::Archive {
            match abi::Archive::parse(data) {
                Ok(archive) => {
                    for member in archive.members() {
                        let name = String::from_utf8_lossy(member.name);
                        self.file(&format!("{place}({name})"), member.data);
                    }
                    if let Some(fault) = archive.fault() {
                        self.errors.push(format!("{place}: {fault}"));
                    }
                }
                Err(e) => self.errors.push(format!("{place}: {e}")),
            }
        } else if crate::job::kind(data) == FileKind::Elf {
            self.elf(place, data);
        } else {
            self.containers(place, data, 0);
        }
    }

    fn elf(&mut self, place: &str, data: &[u8]) {
        use clangoffload_capi::clangoffload_section_kind as Kind;
        for section in abi::offload_sections(data) {
            let section = match section {
                Ok(section) => section,
                Err(e) => {
                    self.errors.push(format!("{place}: {e}"));
                    continue;
                }
            };
            let name = String::from_utf8_lossy(section.name);
            let here = format!("{place}[{name}]");
            match section.kind {
                Kind::OffloadBinaries | Kind::HipFatbin => {
                    self.containers(&here, section.data, section.offset)
                }
                Kind::BundleEntry => {
                    let id = name.trim_start_matches("__CLANG_OFFLOAD_BUNDLE__");
                    self.notes.push(format!(
                        "{here}: object bundle entry {id}, {} bytes at offset {:#x}",
                        commas(section.data.len() as u64),
                        section.offset
                    ));
                }
                Kind::NvFatbin => self.notes.push(format!(
                    "{here}: NVIDIA fat binary, {} bytes at offset {:#x} (not parsed)",
                    commas(section.data.len() as u64),
                    section.offset
                )),
                Kind::HipWrappers | Kind::CudaWrappers => self.wrappers(&here, data, section.index),
            }
        }
    }

    fn wrappers(&mut self, here: &str, data: &[u8], section: u32) {
        let records = match abi::wrapper_records(data, section) {
            Ok(records) => records,
            Err(e) => return self.errors.push(format!("{here}: {e}")),
        };
        for (i, record) in records.iter().enumerate() {
            let magic = match record.magic {
                0x4849_5046 => "HIPF",
                0x4b50_4948 => "HIPK",
                0x4662_43b1 => "CUDA",
                _ => "unknown magic",
            };
            let target = match record.target {
                Some((index, offset, bytes)) => format!(
                    "points at section {index} offset {offset:#x} ({} bytes)",
                    commas(bytes.len() as u64)
                ),
                None => "pointer not resolved".to_owned(),
            };
            self.notes.push(format!(
                "{here}: wrapper {i}: {magic} ({:#010x}) version {}, {target}",
                record.magic, record.version
            ));
        }
    }

    /// Containers back to back in `data`, which starts `base` bytes into the
    /// file.
    fn containers(&mut self, place: &str, data: &[u8], base: u64) {
        for container in abi::containers(data) {
            let container = match container {
                Ok(container) => container,
                Err(e) => {
                    let place = if place.is_empty() {
                        String::new()
                    } else {
                        format!("{place} ")
                    };
                    self.errors.push(format!(
                        "{place}at offset {:#x}: {}",
                        base + e.start,
                        e.error.message
                    ));
                    return;
                }
            };
            let mut report = Report {
                place: place.to_owned(),
                offset: base + container.offset,
                size: container.data.len() as u64,
                kind: ContainerKind::Bundle,
                compressed: None,
                entries: Vec::new(),
                images: Vec::new(),
                error: None,
            };
            let result = if container.offload_binary {
                report.kind = ContainerKind::OffloadBinary;
                images_of(container.data, self.decoding, &mut report)
            } else if container.compressed {
                report.kind = ContainerKind::Compressed;
                inspect_compressed(container.data, self.decoding, &mut report)
            } else {
                entries_of(container.data, &mut report)
            };
            report.error = result.err();
            self.reports.push(report);
        }
    }
}

fn images_of(data: &[u8], decoding: &Decoding, report: &mut Report) -> Result<(), String> {
    let binaries = OffloadBinaries::parse(data, false, decoding.max_size).map_err(|e| e.message)?;
    report.images = binaries
        .images()
        .into_iter()
        .map(|image| ImageReport {
            version: image.version,
            kind: abi::image_kind_name(image.image_kind, 1),
            producer: abi::offload_kind_name(image.offload_kind),
            size: image.image.len() as u64,
            strings: image
                .strings
                .iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(k).into_owned(),
                        String::from_utf8_lossy(v).into_owned(),
                    )
                })
                .collect(),
        })
        .collect();
    Ok(())
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
        .map(|e| {
            let id = String::from_utf8_lossy(e.id).into_owned();
            let code_object = abi::amdgpu_target_id(e.payload).map(|target| {
                // The entry names the code object's target if its last ID
                // field (after the empty environment) is that target ID.
                let agrees = id.ends_with(&format!("-{target}"));
                (target, agrees)
            });
            EntryReport {
                id,
                offset: e.offset,
                size: e.payload.len() as u64,
                code_object,
            }
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

fn to_text(reports: &[Report], notes: &[String], errors: &[String]) -> String {
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        let place = if r.place.is_empty() {
            String::new()
        } else {
            format!("{} ", r.place)
        };
        let _ = writeln!(
            out,
            "container {i} {place}at offset {:#x}: {}, {} bytes",
            r.offset,
            r.kind.text(),
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
            let _ = write!(
                out,
                "    {:<48} offset {:#x} size {}",
                e.id,
                e.offset,
                commas(e.size)
            );
            match &e.code_object {
                Some((target, true)) => {
                    let _ = write!(out, " (code object {target})");
                }
                Some((target, false)) => {
                    let _ = write!(out, " (MISMATCH: code object is {target})");
                }
                None => {}
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
                let _ = write!(out, " {key}={}", value.escape_debug());
            }
            out.push('\n');
        }
        if let Some(error) = &r.error {
            let _ = writeln!(out, "  error: {error}");
        }
    }
    for note in notes {
        let _ = writeln!(out, "{note}");
    }
    for error in errors {
        let _ = writeln!(out, "error {error}");
    }
    out
}

/// What `llvm-objdump --offloading` 22 prints for the OffloadBinaries: per
/// ELF file (archive members included) a header line, then its images,
/// numbered from 0; raw binaries without a header. (Its lines for bundles go
/// with the files it writes, which inspecting does not.)
fn to_objdump(file: &str, data: &[u8], reports: &[Report]) -> String {
    let mut out = String::new();
    let images_of = |out: &mut String, place: &str| {
        let mut index = 0;
        for r in reports.iter().filter(|r| r.place.starts_with(place)) {
            for image in &r.images {
                objdump_image(out, index, image);
                index += 1;
            }
        }
    };
    if crate::job::kind(data) == FileKind::Archive {
        let Ok(archive) = abi::Archive::parse(data) else {
            return out;
        };
        for member in archive.members() {
            if crate::job::kind(member.data) == FileKind::Elf {
                let name = String::from_utf8_lossy(member.name);
                let _ = writeln!(
                    out,
                    "\n{file}({name}):\tfile format {}",
                    elf_format(member.data)
                );
                images_of(&mut out, &format!("({name})"));
            }
        }
    } else {
        if crate::job::kind(data) == FileKind::Elf {
            let _ = writeln!(out, "\n{file}:\tfile format {}", elf_format(data));
        }
        images_of(&mut out, "");
    }
    out
}

fn objdump_image(out: &mut String, index: usize, image: &ImageReport) {
    let string = |key: &str| {
        image
            .strings
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    };
    let _ = write!(
        out,
        "\nOFFLOADING IMAGE [{index}]:\n{:<16}{}\n{:<16}{}\n{:<16}{}\n{:<16}{}\n",
        "kind",
        image.kind,
        "arch",
        string("arch"),
        "triple",
        string("triple"),
        "producer",
        image.producer
    );
}

/// The format name llvm-objdump prints for an ELF file.
fn elf_format(data: &[u8]) -> &'static str {
    let machine = data
        .get(18..20)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    match (data.get(4), machine) {
        (Some(2), 62) => "elf64-x86-64",
        (Some(2), 224) => "elf64-amdgpu",
        (Some(2), 183) => "elf64-littleaarch64",
        (Some(1), 3) => "elf32-i386",
        (Some(2), _) => "elf64-unknown",
        _ => "elf32-unknown",
    }
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

fn to_json(
    file: &str,
    size: u64,
    reports: &[Report],
    notes: &[String],
    errors: &[String],
) -> String {
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
        let _ = write!(
            out,
            "{{\"place\":{},\"offset\":{},\"size\":{},\"kind\":{},\"compressed\":",
            json_str(&r.place),
            r.offset,
            r.size,
            json_str(r.kind.json())
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
                "{{\"id\":{},\"offset\":{},\"size\":{},\"code_object_target\":{},\"target_matches\":{}}}",
                json_str(&e.id),
                e.offset,
                e.size,
                json_opt(e.code_object.as_ref().map(|(t, _)| json_str(t))),
                json_opt(e.code_object.as_ref().map(|(_, m)| m.to_string())),
            );
        }
        out += "],\"images\":[";
        for (j, image) in r.images.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let strings: Vec<String> = image
                .strings
                .iter()
                .map(|(k, v)| format!("[{},{}]", json_str(k), json_str(v)))
                .collect();
            let _ = write!(
                out,
                "{{\"version\":{},\"kind\":{},\"producer\":{},\"size\":{},\"strings\":[{}]}}",
                image.version,
                json_str(image.kind),
                json_str(image.producer),
                image.size,
                strings.join(",")
            );
        }
        let _ = write!(
            out,
            "],\"error\":{}}}",
            json_opt(r.error.as_deref().map(json_str))
        );
    }
    let notes: Vec<String> = notes.iter().map(|n| json_str(n)).collect();
    let error = (!errors.is_empty()).then(|| json_str(&errors.join("; ")));
    let _ = writeln!(
        out,
        "],\"notes\":[{}],\"error\":{}}}",
        notes.join(","),
        json_opt(error)
    );
    out
}
