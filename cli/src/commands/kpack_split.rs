//! `clangoffload kpack split HOST... --group NAME [--prefix P | --kernel-name N]
//! [--root DIR] [--scheme none|zstd] [--keys strict|record|rocm-kpack] [-o DIR]
//! [--force]`: ROCm's kpack split, as rocm-kpack's artifact splitter names
//! things. Each HOST is written to `DIR/<its path under ROOT>`, rewritten by
//! the library (`clangoffload_kpack_split_host`); its code objects go to
//! `DIR/.kpack/<group>_<arch>.kpack`, one archive per architecture for all
//! the hosts, in the order given (`clangoffload_kpack_writer_*`). Inputs
//! are never written; outputs are created exclusively unless `--force`.
//! Every file written is printed. Nothing is written unless every host can
//! be split.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use super::Failure;
use crate::ffi::kpack_split::{search_path, Keys, Split, Writer};
use crate::io::{file_identity, os_message, Input};
use crate::stdio::outln;

struct Args {
    hosts: Vec<PathBuf>,
    group: String,
    prefix: Option<String>,
    kernel_name: Option<String>,
    root: Option<PathBuf>,
    zstd: bool,
    keys: Keys,
    out: PathBuf,
    force: bool,
}

fn parse(args: &[String]) -> Result<Args, Failure> {
    let usage = || Failure(crate::help::usage(crate::help::KPACK));
    let mut parsed = Args {
        hosts: Vec::new(),
        group: String::new(),
        prefix: None,
        kernel_name: None,
        root: None,
        zstd: true,
        keys: Keys::Strict,
        out: PathBuf::from("."),
        force: false,
    };
    let mut group = None;
    let mut rest = args.iter();
    match rest.next().map(String::as_str) {
        Some("split") => {}
        Some(other) => {
            return Err(Failure(format!(
                "unknown kpack command '{other}'; see clangoffload kpack --help"
            )))
        }
        None => return Err(usage()),
    }
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| rest.next().cloned())
                .ok_or_else(usage)
        };
        match name {
            "--group" => group = Some(value()?),
            "--prefix" => parsed.prefix = Some(value()?),
            "--kernel-name" => parsed.kernel_name = Some(value()?),
            "--root" => parsed.root = Some(PathBuf::from(value()?)),
            "-o" => parsed.out = PathBuf::from(value()?),
            "--scheme" => {
                parsed.zstd = match value()?.as_str() {
                    "zstd" | "zstd-per-kernel" => true,
                    "none" => false,
                    other => {
                        return Err(Failure(format!(
                            "--scheme '{other}': expected none or zstd"
                        )))
                    }
                }
            }
            "--keys" => {
                parsed.keys = match value()?.as_str() {
                    "strict" => Keys::Strict,
                    "record" => Keys::Record,
                    "rocm-kpack" => Keys::PerArch,
                    other => {
                        return Err(Failure(format!(
                            "--keys '{other}': expected strict, record or rocm-kpack"
                        )))
                    }
                }
            }
            "--force" => parsed.force = true,
            _ if name.starts_with('-') && name.len() > 1 => {
                return Err(Failure(format!("unknown option '{name}'; {}", usage().0)))
            }
            _ => parsed.hosts.push(PathBuf::from(arg)),
        }
    }
    parsed.group = group.ok_or_else(|| Failure(format!("--group is required; {}", usage().0)))?;
    if parsed.hosts.is_empty() {
        return Err(usage());
    }
    if parsed.kernel_name.is_some() && (parsed.hosts.len() > 1 || parsed.prefix.is_some()) {
        return Err(Failure(
            "--kernel-name names one host, without --prefix".to_owned(),
        ));
    }
    Ok(parsed)
}

/// A host's path under the root (its file name without one), as the
/// splitter names it: plain components only.
fn relative(host: &Path, root: Option<&Path>) -> Result<PathBuf, Failure> {
    let shown = || host.display().to_string();
    let clean = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    };
    let rel = match root {
        Some(root) => clean(host)
            .strip_prefix(clean(root))
            .map_err(|_| {
                Failure(format!(
                    "'{}' is not under --root '{}'",
                    shown(),
                    root.display()
                ))
            })?
            .to_path_buf(),
        None => PathBuf::from(
            host.file_name()
                .ok_or_else(|| Failure(format!("'{}' names no file", shown())))?,
        ),
    };
    if rel.as_os_str().is_empty() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(Failure(format!(
            "'{}': its path under --root must be plain names",
            shown()
        )));
    }
    Ok(rel)
}

/// One host as it is to be split.
struct Host {
    path: PathBuf,
    rel: PathBuf,
    kernel_name: String,
    search_path: Vec<u8>,
    input: Input,
}

pub fn run(_program: &str, args: &[String]) -> Result<(), Failure> {
    let args = parse(args)?;
    let mut hosts = Vec::new();
    for path in &args.hosts {
        let rel = relative(path, args.root.as_deref())?;
        let rel_text = rel
            .to_str()
            .ok_or_else(|| Failure(format!("'{}': not UTF-8", rel.display())))?
            .to_owned();
        let kernel_name = match (&args.kernel_name, &args.prefix) {
            (Some(name), _) => name.clone(),
            (None, Some(prefix)) => format!("{}/{rel_text}", prefix.trim_end_matches('/')),
            (None, None) => rel_text,
        };
        let depth = rel.components().count().saturating_sub(1);
        let search_path = search_path(args.group.as_bytes(), depth).map_err(Failure)?;
        let input = Input::open(path, false)
            .map_err(|e| Failure(format!("'{}': {}", path.display(), os_message(&e))))?;
        hosts.push(Host {
            path: path.clone(),
            rel,
            kernel_name,
            search_path,
            input,
        });
    }
    // Every host split first (and dropped): nothing is written unless all
    // can be; the architectures name the archives.
    let mut arches: Vec<Vec<u8>> = Vec::new();
    for host in &hosts {
        let split = split_of(host, args.keys)?;
        for object in split.code_objects() {
            if !arches.contains(&object.arch) {
                arches.push(object.arch);
            }
        }
    }
    let kpack_dir = args.out.join(".kpack");
    let archive_paths: Vec<PathBuf> = arches
        .iter()
        .map(|arch| {
            let arch = String::from_utf8_lossy(arch);
            kpack_dir.join(format!("{}_{arch}.kpack", args.group))
        })
        .collect();
    let host_paths: Vec<PathBuf> = hosts.iter().map(|h| args.out.join(&h.rel)).collect();
    for (i, path) in host_paths.iter().enumerate() {
        if host_paths
            .get(..i)
            .is_some_and(|before| before.contains(path))
        {
            return Err(Failure(format!(
                "'{}' would be written twice (a HOST given twice?)",
                path.display()
            )));
        }
    }
    let inputs: Vec<_> = hosts
        .iter()
        .filter_map(|h| file_identity(&h.path))
        .collect();
    for path in host_paths.iter().chain(&archive_paths) {
        if file_identity(path).is_some_and(|id| inputs.contains(&id)) {
            return Err(Failure(format!(
                "'{}' is an input: inputs are never written",
                path.display()
            )));
        }
        if !args.force && path.exists() {
            return Err(Failure(format!(
                "'{}' exists (--force to overwrite)",
                path.display()
            )));
        }
    }
    std::fs::create_dir_all(&kpack_dir).map_err(|e| dir_error(&kpack_dir, &e))?;
    let mut archives: Vec<Archive> = Vec::new();
    for (arch, path) in arches.iter().zip(&archive_paths) {
        archives.push(Archive::create(
            &args.group,
            arch,
            args.zstd,
            path,
            args.force,
        )?);
    }
    let source_prefix = args.prefix.as_deref().map(|p| p.trim_end_matches('/'));
    for (host, out) in hosts.iter().zip(&host_paths) {
        let mut split = split_of(host, args.keys)?;
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).map_err(|e| dir_error(dir, &e))?;
        }
        let mut file = crate::io::create(out, args.force).map_err(Failure)?;
        file.write_all(split.host())
            .map_err(|e| Failure(format!("'{}': {}", out.display(), os_message(&e))))?;
        copy_mode(&host.path, &file);
        drop(file);
        outln!("{}", out.display())?;
        let objects = split.code_objects();
        for (index, object) in objects.iter().enumerate() {
            let archive = archives
                .iter_mut()
                .find(|a| a.arch == object.arch)
                .ok_or_else(|| Failure("an architecture without an archive".to_owned()))?;
            let code = split
                .code(index)
                .map_err(|e| Failure(format!("'{}': {e}", host.path.display())))?;
            let mut metadata: Vec<(&[u8], &[u8])> = vec![(b"target", &object.id)];
            if let Some(prefix) = source_prefix {
                metadata.push((b"source_prefix", prefix.as_bytes()));
            }
            archive.add(&object.key, &object.arch, code, &metadata)?;
            // The bundle is done with once its last code object is stored.
            let last = objects
                .get(index.saturating_add(1))
                .is_none_or(|next| next.record != object.record);
            if last {
                host.input.release(object.unit_offset, object.unit_size);
            }
        }
    }
    for archive in archives {
        let path = archive.finish()?;
        outln!("{}", path.display())?;
    }
    Ok(())
}

fn split_of<'a>(host: &'a Host, keys: Keys) -> Result<Split<'a>, Failure> {
    Split::new(
        host.input.data(),
        host.kernel_name.as_bytes(),
        std::slice::from_ref(&host.search_path),
        keys,
    )
    .map_err(|e| {
        let hint = if e.contains("rocm-kpack keys it") {
            " (--keys record keys it as the runtime looks it up; --keys rocm-kpack as rocm-kpack does)"
        } else {
            ""
        };
        Failure(format!("'{}': {e}{hint}", host.path.display()))
    })
}

fn dir_error(dir: &Path, e: &std::io::Error) -> Failure {
    Failure(format!("'{}': {}", dir.display(), os_message(e)))
}

/// The host's permission bits on its split copy (rocm-kpack keeps them).
fn copy_mode(from: &Path, to: &File) {
    if let Ok(meta) = std::fs::metadata(from) {
        let _ = to.set_permissions(meta.permissions());
    }
}

/// One archive file being written.
struct Archive {
    arch: Vec<u8>,
    path: PathBuf,
    file: BufWriter<File>,
    writer: Writer,
}

impl Archive {
    fn create(
        group: &str,
        arch: &[u8],
        zstd: bool,
        path: &Path,
        force: bool,
    ) -> Result<Archive, Failure> {
        let writer = Writer::new(group.as_bytes(), arch, zstd).map_err(Failure)?;
        let file = crate::io::create(path, force).map_err(Failure)?;
        let mut file = BufWriter::with_capacity(1 << 20, file);
        let zeros = vec![0u8; usize::try_from(writer.prefix_len).unwrap_or(0)];
        file.write_all(&zeros).map_err(|e| io_error(path, &e))?;
        Ok(Archive {
            arch: arch.to_vec(),
            path: path.to_path_buf(),
            file,
            writer,
        })
    }

    fn add(
        &mut self,
        key: &[u8],
        arch: &[u8],
        code: &[u8],
        metadata: &[(&[u8], &[u8])],
    ) -> Result<(), Failure> {
        let bytes = self
            .writer
            .add(key, arch, code, metadata)
            .map_err(|e| Failure(format!("'{}': {e}", self.path.display())))?;
        self.file
            .write_all(bytes)
            .map_err(|e| io_error(&self.path, &e))
    }

    fn finish(mut self) -> Result<PathBuf, Failure> {
        let (prefix, toc) = self
            .writer
            .finish()
            .map_err(|e| Failure(format!("'{}': {e}", self.path.display())))?;
        self.file
            .write_all(&toc)
            .map_err(|e| io_error(&self.path, &e))?;
        let mut file = self
            .file
            .into_inner()
            .map_err(|e| io_error(&self.path, e.error()))?;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(&prefix))
            .map_err(|e| io_error(&self.path, &e))?;
        Ok(self.path)
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> Failure {
    Failure(format!("'{}': {}", path.display(), os_message(e)))
}
