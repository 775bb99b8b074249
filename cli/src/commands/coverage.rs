//! `clangoffload coverage PATH... [--device TARGET]... [--json] [--html OUT]
//! [--verify]`: for every file holding device code under the paths (files,
//! directories walked, each directory and file once whatever the symbolic
//! links; wheels and ZIP archives read in place, member by member, nothing
//! unpacked), and every device, whether its runtime loads code for it,
//! which code, or why not: the library's verdicts (`clangoffload_cover`,
//! from `select`'s rule), kpack split hosts resolved as `select` resolves
//! them. Devices: those given, else the current GPUs the library lists and
//! every device some file targets. Output: a table of files by devices, or
//! `--json`, and with `--html` a page to look at. A file that cannot be
//! read is a finding, never the end of the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Failure;
use crate::ffi::coverage::{Cell, Coverage, SparseImage};
use crate::stdio::{err, outln};

struct Args {
    paths: Vec<PathBuf>,
    devices: Vec<String>,
    json: bool,
    html: Option<PathBuf>,
    verify: bool,
}

fn parse(args: &[String]) -> Result<Args, Failure> {
    let usage = || Failure(crate::help::usage(crate::help::COVERAGE));
    let mut parsed = Args {
        paths: Vec::new(),
        devices: Vec::new(),
        json: false,
        html: None,
        verify: false,
    };
    let mut words = crate::flags::words::Words::new(args);
    while let Some((flag, inline)) = words.next_word() {
        let mut value = || words.value(inline).ok_or_else(usage);
        match flag {
            "--device" => parsed.devices.push(value()?.to_owned()),
            "--json" => parsed.json = true,
            "--html" => parsed.html = Some(PathBuf::from(value()?)),
            "--verify" => parsed.verify = true,
            _ if !flag.starts_with('-') => parsed.paths.push(PathBuf::from(flag)),
            _ => return Err(usage()),
        }
    }
    if parsed.paths.is_empty() {
        return Err(usage());
    }
    Ok(parsed)
}

/// One file of device code (a wheel's member is one too) and what it gives
/// each device.
struct Row {
    /// Which PATH it was found under (its package).
    package: usize,
    name: String,
    error: Option<String>,
    /// By device name.
    cells: BTreeMap<String, Cell>,
    targets: Vec<(String, u64)>,
    findings: Vec<String>,
}

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    crate::io::keep_large_buffers_mapped();
    let files = walk(&args.paths)?;
    let given = !args.devices.is_empty();
    let mut coverage = Coverage::new(given.then_some(&args.devices[..]), args.verify)
        .map_err(|e| Failure(format!("coverage: {e}")))?;
    // What each walked file gave: the library's files of inputs `inputs`
    // (up to this count), or a row of its own.
    let mut gave = Vec::new();
    // The walked file of each input given the library.
    let mut inputs = Vec::new();
    let progress = Progress::new(files.len());
    for (n, (package, path, error)) in files.iter().enumerate() {
        progress.show(n, path);
        let name = path.display().to_string();
        let read = match error {
            Some(error) => Err(error.clone()),
            None => Read::open(path),
        };
        gave.push(match read {
            Err(error) => Gave::Row(Row::new(*package, name, Some(error))),
            Ok(read) if super::select::split_host(read.data()).is_some() => Gave::SplitHost,
            Ok(read) => {
                let first = coverage.file_count();
                read.add_to(&mut coverage, None, &name).map_err(Failure)?;
                inputs.push(n);
                Gave::Files(first..coverage.file_count())
            }
        });
    }
    // Files read before a later one brought a device of their vendor are
    // read again for it (the library says which).
    while let Some(input) = coverage.pending() {
        let Some((n, (_, path, _))) = inputs
            .get(input)
            .and_then(|&n| files.get(n).map(|file| (n, file)))
        else {
            break;
        };
        progress.show(n, path);
        let name = path.display().to_string();
        match Read::open(path) {
            Ok(read) => read.add_to(&mut coverage, Some(input), &name),
            Err(_) => coverage.add(Some(input), &[], None, &name),
        }
        .map_err(Failure)?;
    }
    // Split hosts last, once the list is whole: their archives give each
    // device's verdict (the library resolves them as the runtime does).
    for ((package, path, _), gave) in files.iter().zip(gave.iter_mut()) {
        if let Gave::SplitHost = gave {
            *gave = split_host(&mut coverage, *package, path)?;
        }
    }
    progress.done();
    let devices = coverage.devices();
    let covered = coverage.files();
    let mut rows = Vec::new();
    for ((package, _, _), gave) in files.iter().zip(gave) {
        match gave {
            Gave::Row(row) => rows.push(row),
            Gave::SplitHost => {}
            Gave::Files(range) => {
                rows.extend(covered.get(range).unwrap_or_default().iter().map(|f| {
                    Row {
                        package: *package,
                        cells: devices
                            .iter()
                            .cloned()
                            .zip(f.cells.iter().cloned())
                            .collect(),
                        name: f.name.clone(),
                        error: f.error.clone(),
                        targets: f.targets.clone(),
                        findings: f.findings.clone(),
                    }
                }));
            }
        }
    }
    let report = Report::new(&args, &devices, &rows);
    if args.json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        table(&report)?;
    }
    if let Some(html) = &args.html {
        std::fs::write(html, page(&report)).map_err(|e| {
            Failure(format!(
                "'{}': {}",
                html.display(),
                crate::io::os_message(&e)
            ))
        })?;
        err!("wrote {}\n", html.display());
    }
    Ok(())
}

/// What one walked file gave.
enum Gave {
    /// Its own row: it could not be read.
    Row(Row),
    /// A kpack split host, covered once the list is whole.
    SplitHost,
    /// These of the library's files.
    Files(std::ops::Range<usize>),
}

impl Row {
    fn new(package: usize, name: String, error: Option<String>) -> Row {
        Row {
            package,
            name,
            error,
            cells: BTreeMap::new(),
            targets: Vec::new(),
            findings: Vec::new(),
        }
    }
}

/// A file opened for coverage: mapped, and a large ELF file read only
/// where coverage looks (its headers, small sections, fat binary headers)
/// instead: the pages a reader of a mapped file touches stay in its
/// resident set.
struct Read {
    input: crate::io::Input,
    sparse: Option<SparseImage>,
}

impl Read {
    fn open(path: &Path) -> Result<Read, String> {
        let input = crate::io::Input::open(path, false).map_err(|e| crate::io::os_message(&e))?;
        let size = u64::try_from(input.data().len()).unwrap_or(u64::MAX);
        let sparse = (size > clangoffload_capi::CLANGOFFLOAD_COVERAGE_SPARSE_ABOVE)
            .then(|| input.file().and_then(|file| SparseImage::read(file, size)))
            .flatten();
        Ok(Read { input, sparse })
    }

    /// The file's bytes as mapped.
    fn data(&self) -> &[u8] {
        self.input.data()
    }

    /// Gives the file to `coverage` (input `again` again, if set).
    fn add_to(
        &self,
        coverage: &mut Coverage,
        again: Option<usize>,
        name: &str,
    ) -> Result<(), String> {
        match &self.sparse {
            Some(image) => coverage.add(again, image.data(), None, name),
            None => coverage.add(again, self.data(), Some(&self.input), name),
        }
    }
}

/// Covers the kpack split host at `path` for every device of the list:
/// the library's file, or its own row where it cannot be read.
fn split_host(coverage: &mut Coverage, package: usize, path: &Path) -> Result<Gave, Failure> {
    let name = path.display().to_string();
    let read = match Read::open(path) {
        Ok(read) => read,
        Err(error) => return Ok(Gave::Row(Row::new(package, name, Some(error)))),
    };
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real.parent().map(Path::as_os_str).unwrap_or_default();
    let index = coverage.file_count();
    let added = coverage
        .add_split_host(read.data(), &name, dir.as_encoded_bytes())
        .map_err(Failure)?;
    Ok(match added {
        true => Gave::Files(index..index.saturating_add(1)),
        false => Gave::Row(Row::new(
            package,
            name,
            Some("no longer a kpack split host".into()),
        )),
    })
}

/// Every regular file under `paths`, each once, in sorted order, with the
/// index of the path it was found under, and why it cannot be walked where
/// it cannot (a broken link, a directory that cannot be read): those are
/// findings, not the end of the run. A directory reached twice (by a
/// symbolic link) is walked once; a file reached twice is covered once. A
/// PATH that does not exist is an error.
fn walk(paths: &[PathBuf]) -> Result<Vec<(usize, PathBuf, Option<String>)>, Failure> {
    let mut seen = std::collections::HashSet::new();
    let mut files = Vec::new();
    for (package, path) in paths.iter().enumerate() {
        if let Err(e) = std::fs::metadata(path) {
            let message = crate::io::os_message(&e);
            return Err(Failure(format!("'{}': {message}", path.display())));
        }
        let mut stack = vec![path.clone()];
        let mut found = Vec::new();
        while let Some(path) = stack.pop() {
            let real = match std::fs::canonicalize(&path) {
                Ok(real) => real,
                Err(e) => {
                    found.push((path, Some(crate::io::os_message(&e))));
                    continue;
                }
            };
            if !seen.insert(real.clone()) {
                continue;
            }
            if real.is_dir() {
                match std::fs::read_dir(&path) {
                    Ok(read) => {
                        let mut entries: Vec<PathBuf> =
                            read.filter_map(|e| e.ok().map(|e| e.path())).collect();
                        entries.sort();
                        stack.extend(entries.into_iter().rev());
                    }
                    Err(e) => found.push((path, Some(crate::io::os_message(&e)))),
                }
            } else if real.is_file() {
                found.push((path, None));
            }
        }
        found.sort();
        files.extend(found.into_iter().map(|(p, e)| (package, p, e)));
    }
    Ok(files)
}

/// A progress line on a terminal's standard error, for long trees.
struct Progress {
    total: usize,
    shown: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        use std::io::IsTerminal;
        Progress {
            total,
            shown: std::io::stderr().is_terminal() && total > 1,
        }
    }

    fn show(&self, n: usize, path: &Path) {
        if self.shown {
            let name = path.display().to_string();
            let tail: String = name
                .chars()
                .rev()
                .take(50)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            err!("\r\x1b[K[{}/{}] {tail}", n.saturating_add(1), self.total);
        }
    }

    fn done(&self) {
        if self.shown {
            err!("\r\x1b[K");
        }
    }
}

/// What `--json` prints and the page shows.
#[derive(Serialize)]
struct Report {
    devices: Vec<String>,
    files: Vec<FileReport>,
    /// One per file and device.
    cells: Vec<CellReport>,
    /// Per package: devices some of its files load code for and others not.
    gaps: Vec<Gap>,
}

#[derive(Serialize)]
struct FileReport {
    file: String,
    package: String,
    error: Option<String>,
    targets: Vec<TargetReport>,
    findings: Vec<String>,
}

#[derive(Serialize)]
struct TargetReport {
    target: String,
    bytes: u64,
}

#[derive(Serialize)]
struct CellReport {
    file: String,
    device: String,
    /// Whether the file holds code of the device's vendor at all.
    applies: bool,
    loads: bool,
    entry: Option<String>,
    how: Option<&'static str>,
    reason: String,
}

#[derive(Serialize)]
struct Gap {
    package: String,
    device: String,
    loading: Vec<String>,
    not_loading: Vec<String>,
}

impl Report {
    fn new(args: &Args, devices: &[String], rows: &[Row]) -> Self {
        let package = |i: usize| {
            args.paths
                .get(i)
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let mut cells = Vec::new();
        for row in rows.iter().filter(|r| r.error.is_none()) {
            for device in devices {
                let cell = row.cells.get(device);
                cells.push(CellReport {
                    file: row.name.clone(),
                    device: device.clone(),
                    applies: cell.is_some_and(|c| c.applies),
                    loads: cell.is_some_and(|c| c.loads),
                    entry: cell.and_then(|c| c.entry.clone()),
                    how: cell.and_then(|c| c.how),
                    reason: cell.map(|c| c.reason.clone()).unwrap_or_default(),
                });
            }
        }
        let mut gaps = Vec::new();
        for (index, _) in args.paths.iter().enumerate() {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|r| r.package == index && r.error.is_none())
                .collect();
            for device in devices {
                // Only files with code of the device's vendor can lack it.
                let (loading, not_loading): (Vec<&&Row>, Vec<&&Row>) = mine
                    .iter()
                    .filter(|r| r.cells.get(device).is_some_and(|c| c.applies))
                    .partition(|r| r.cells.get(device).is_some_and(|c| c.loads));
                if !loading.is_empty() && !not_loading.is_empty() {
                    gaps.push(Gap {
                        package: package(index),
                        device: device.clone(),
                        loading: loading.iter().map(|r| r.name.clone()).collect(),
                        not_loading: not_loading.iter().map(|r| r.name.clone()).collect(),
                    });
                }
            }
        }
        Report {
            devices: devices.to_vec(),
            files: rows
                .iter()
                .map(|r| FileReport {
                    file: r.name.clone(),
                    package: package(r.package),
                    error: r.error.clone(),
                    targets: r
                        .targets
                        .iter()
                        .map(|(target, bytes)| TargetReport {
                            target: target.clone(),
                            bytes: *bytes,
                        })
                        .collect(),
                    findings: r.findings.clone(),
                })
                .collect(),
            cells,
            gaps,
        }
    }

    fn cell(&self, file: &str, device: &str) -> Option<&CellReport> {
        self.cells
            .iter()
            .find(|c| c.file == file && c.device == device)
    }
}

/// One character for a cell of the table.
fn mark(cell: Option<&CellReport>) -> char {
    match cell {
        Some(c) if c.loads => match c.how {
            Some("generic") => 'G',
            Some("spirv") => 'S',
            Some("ptx") => 'P',
            Some("cubin") => 'C',
            _ => 'N',
        },
        Some(c) if !c.applies => ' ',
        Some(_) => '.',
        None => '!',
    }
}

/// The terminal table: devices numbered above, files down the side (cut to
/// fit 80 columns), a mark per cell, totals, then findings and gaps.
fn table(report: &Report) -> Result<(), Failure> {
    const NAME: usize = 80 - 3 * 19 - 1;
    let width = (80usize.saturating_sub(NAME) / 3).max(1);
    for chunk in 0..report.devices.len().div_ceil(width) {
        let devices: Vec<(usize, &String)> = report
            .devices
            .iter()
            .enumerate()
            .skip(chunk.saturating_mul(width))
            .take(width)
            .collect();
        for (n, device) in &devices {
            outln!("{:>3} {device}", n.saturating_add(1))?;
        }
        let mut head = format!("{:<NAME$}", "file");
        for (n, _) in &devices {
            head.push_str(&format!("{:>3}", n.saturating_add(1)));
        }
        outln!("{head}")?;
        for file in &report.files {
            let name = cut(
                short_name(&file.file, &file.package),
                NAME.saturating_sub(1),
            );
            let mut line = format!("{name:<NAME$}");
            for (_, device) in &devices {
                let m = if file.error.is_some() {
                    '!'
                } else {
                    mark(report.cell(&file.file, device))
                };
                line.push_str(&format!("{m:>3}"));
            }
            outln!("{line}")?;
        }
        let mut totals = format!("{:<NAME$}", "loads");
        for (_, device) in &devices {
            let n = report
                .cells
                .iter()
                .filter(|c| c.device == **device && c.loads)
                .count();
            totals.push_str(&format!("{n:>3}"));
        }
        outln!("{totals}")?;
        outln!("")?;
    }
    outln!(
        "{} files with device code; N native, G generic, S SPIR-V, C cubin, P PTX (JIT), . nothing, blank: the other vendor's device, ! unreadable",
        report.files.len()
    )?;
    for file in &report.files {
        if let Some(error) = &file.error {
            outln!("{}: {error}", file.file)?;
        }
        for finding in &file.findings {
            outln!("{}: {finding}", file.file)?;
        }
    }
    for gap in &report.gaps {
        outln!(
            "{}: {} loads code from {} of {} files; not from: {}",
            gap.package,
            gap.device,
            gap.loading.len(),
            gap.loading.len().saturating_add(gap.not_loading.len()),
            gap.not_loading.join(", ")
        )?;
    }
    Ok(())
}

/// A file's name below the PATH it was found under (a wheel member's
/// `!` part kept), as the table and the page show it.
fn short_name<'a>(file: &'a str, package: &str) -> &'a str {
    file.strip_prefix(package)
        .map(|rest| rest.trim_start_matches('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(file)
}

/// `text` cut from the left to `width` characters.
fn cut(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_owned();
    }
    let keep: String = text
        .chars()
        .skip(count.saturating_sub(width).saturating_add(1))
        .collect();
    format!("…{keep}")
}

/// Text made safe inside HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One self-contained page: the matrix as a colour map whose cells say why
/// on hover, bytes of code per architecture as bars, the findings.
fn page(report: &Report) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clangoffload coverage</title>\n<style>\
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
table.matrix{border-collapse:collapse}\
.matrix th,.matrix td{border:1px solid #ccc;padding:2px 6px;font-size:12px}\
.matrix th.device{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}\
td.native,td.cubin{background:#2e7d32;color:#fff}td.generic{background:#7cb342}\
td.spirv,td.ptx{background:#fbc02d}td.none{background:#e53935;color:#fff}td.unreadable{background:#555;color:#fff}\
td.other{background:#eee}\
.bar{background:#1565c0;height:12px;display:inline-block}.chart td{padding:1px 6px}\
</style></head><body>\n<h1>Device code coverage</h1>\n",
    );
    html.push_str(&format!(
        "<p>{} files with device code, {} devices. Hover a cell for the runtime's reason.</p>\n",
        report.files.len(),
        report.devices.len()
    ));
    html.push_str("<table class=\"matrix\" id=\"matrix\"><thead><tr><th>file</th>");
    for device in &report.devices {
        html.push_str(&format!("<th class=\"device\">{}</th>", escape(device)));
    }
    html.push_str("</tr></thead><tbody>\n");
    for file in &report.files {
        html.push_str(&format!(
            "<tr><th title=\"{}\">{}</th>",
            escape(&file.file),
            escape(short_name(&file.file, &file.package))
        ));
        for device in &report.devices {
            let cell = report.cell(&file.file, device);
            let (class, text, title) = match (cell, &file.error) {
                (_, Some(error)) => ("unreadable", "!".to_owned(), error.clone()),
                (Some(c), None) if c.loads => (
                    c.how.unwrap_or("native"),
                    c.how.unwrap_or("native").to_owned(),
                    format!("{}: {}", c.entry.clone().unwrap_or_default(), c.reason),
                ),
                (Some(c), None) if !c.applies => ("other", String::new(), c.reason.clone()),
                (Some(c), None) => ("none", "–".to_owned(), c.reason.clone()),
                (None, None) => ("none", "–".to_owned(), String::new()),
            };
            html.push_str(&format!(
                "<td class=\"{class}\" data-file=\"{}\" data-device=\"{}\" data-loads=\"{}\" title=\"{}\">{}</td>",
                escape(&file.file),
                escape(device),
                cell.is_some_and(|c| c.loads),
                escape(&title),
                escape(&text)
            ));
        }
        html.push_str("</tr>\n");
    }
    html.push_str(
        "</tbody></table>\n<h2>Bytes of code per architecture</h2>\n<table class=\"chart\">",
    );
    let mut bytes: BTreeMap<&str, u64> = BTreeMap::new();
    for file in &report.files {
        for t in &file.targets {
            let total = bytes.entry(t.target.as_str()).or_default();
            *total = total.saturating_add(t.bytes);
        }
    }
    let most = bytes.values().copied().max().unwrap_or(1).max(1);
    for (target, total) in &bytes {
        let width = total.saturating_mul(400).checked_div(most).unwrap_or(0);
        html.push_str(&format!(
            "<tr><td>{}</td><td><span class=\"bar\" style=\"width:{width}px\"></span></td><td>{total}</td></tr>",
            escape(target)
        ));
    }
    html.push_str("</table>\n<h2>Findings</h2>\n<ul>");
    for file in &report.files {
        for finding in file.error.iter().chain(&file.findings) {
            html.push_str(&format!(
                "<li><b>{}</b>: {}</li>",
                escape(short_name(&file.file, &file.package)),
                escape(finding)
            ));
        }
    }
    for gap in &report.gaps {
        html.push_str(&format!(
            "<li><b>{}</b>: {} loads code from {} of {} files; not from {}</li>",
            escape(&gap.package),
            escape(&gap.device),
            gap.loading.len(),
            gap.loading.len().saturating_add(gap.not_loading.len()),
            escape(&gap.not_loading.join(", "))
        ));
    }
    html.push_str("</ul>\n</body></html>\n");
    html
}
