//! `clangoffload list FILE`: entry IDs in file order, one per line, from
//! every container in the file (compressed ones decompressed), from the bundle
//! sections of an ELF object, from a text bundle (any comment style), or from
//! every bundle member of an archive (`<member>: <id>`).

use std::io::Write;
use std::path::Path;

use super::{sniff, Failure, Sniffed};
use crate::abi;
use crate::contents::{each_bundle, load, starts_with_container, Decoding};
use crate::io::{os_message, Input};

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let [file] = args else {
        return Err(Failure("usage: clangoffload list FILE".into()));
    };
    let input = Input::open(Path::new(file), false)
        .map_err(|e| Failure(format!("'{file}': {}", os_message(&e))))?;
    let data = input.data();
    let mut out = std::io::stdout().lock();
    if starts_with_container(data) {
        each_bundle(program, file, |_, _, bundle| {
            for entry in bundle.entries() {
                out.write_all(entry.id)?;
                out.write_all(b"\n")?;
            }
            Ok(())
        })?;
    } else if let Some(ids) =
        other_ids(data).map_err(|Failure(e)| Failure(format!("'{file}': {e}")))?
    {
        for id in ids {
            out.write_all(&id)?;
            out.write_all(b"\n")?;
        }
    } else if let Ok(archive) = abi::Archive::parse(data) {
        for member in archive.members() {
            let ids = member_ids(member.data).map_err(|Failure(e)| {
                Failure(format!(
                    "'{file}': member '{}': {e}",
                    String::from_utf8_lossy(member.name)
                ))
            })?;
            for id in ids {
                out.write_all(member.name)?;
                out.write_all(b": ")?;
                out.write_all(&id)?;
                out.write_all(b"\n")?;
            }
        }
        if let Some(e) = archive.fault() {
            return Err(Failure(format!("'{file}': {e}")));
        }
    } else {
        return Err(Failure(format!("'{file}': not an offload bundle")));
    }
    out.flush()?;
    Ok(())
}

/// The IDs of an object-flavour or text bundle; `None` if `data` is neither.
fn other_ids(data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, Failure> {
    if sniff(data) == Sniffed::Object && data.starts_with(b"\x7fELF") {
        let object = abi::ObjectBundle::parse(data)?;
        return Ok(Some(
            object.entries().iter().map(|e| e.id.to_vec()).collect(),
        ));
    }
    // A text bundle's comment style is not in the file: take the one whose
    // markers it holds.
    for file_type in ["i", "s", "ll"] {
        let Some(comment) = abi::text_comment(file_type) else {
            continue;
        };
        if let Ok(text) = abi::TextBundle::parse(data, comment) {
            let entries = text.entries();
            if !entries.is_empty() {
                return Ok(Some(entries.iter().map(|e| e.id.to_vec()).collect()));
            }
        }
    }
    Ok(None)
}

/// The IDs of an archive member that is a bundle of any flavour; none for
/// another member.
fn member_ids(data: &[u8]) -> Result<Vec<Vec<u8>>, Failure> {
    if starts_with_container(data) {
        let mut ids = Vec::new();
        for loaded in load(data, &Decoding::from_env(false)?, &|_| {})? {
            let bundle = abi::Bundle::parse(loaded.bytes())?;
            ids.extend(bundle.entries().map(|e| e.id.to_vec()));
        }
        return Ok(ids);
    }
    Ok(other_ids(data)?.unwrap_or_default())
}
