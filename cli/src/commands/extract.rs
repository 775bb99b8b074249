//! `clangoffload extract FILE [-o DIR]`: every entry of every container to its
//! own file, named `<file name>.<index>.<entry ID>` (index counted across the
//! containers, in file order) with the ID made safe as a file name.

use std::fs::File;
use std::path::{Path, PathBuf};

use std::io::Write;

use super::Failure;
use crate::contents::each_bundle;
use crate::io::os_message;

pub fn run(program: &str, args: &[String]) -> Result<(), Failure> {
    let (file, dir) = match args {
        [file] => (file, PathBuf::from(".")),
        [file, flag, dir] if flag == "-o" => (file, PathBuf::from(dir)),
        _ => return Err(Failure("usage: clangoffload extract FILE [-o DIR]".into())),
    };
    let stem = Path::new(file)
        .file_name()
        .map_or("bundle".into(), |n| n.to_string_lossy());
    let mut index = 0usize;
    each_bundle(program, file, |input, loaded, bundle| {
        // Payloads that do not overlap fit in the bundle; overlapping ones
        // could make a small file write terabytes.
        let budget = loaded.bytes().len() as u64;
        let mut written = 0u64;
        for (i, entry) in bundle.entries().enumerate() {
            written = written.saturating_add(entry.payload.len() as u64);
            if written > budget {
                return Err(Failure(format!(
                    "'{file}': entry {i} of the bundle at offset {:#x}: payloads overlap, and \
                     extracting them all would write more than the bundle's {budget} bytes; \
                     take single entries with `clangoffload bundler -unbundle`",
                    loaded.offset
                )));
            }
            let path = dir.join(format!(
                "{}.{index}.{}",
                safe_name(stem.as_bytes()),
                safe_name(entry.id)
            ));
            index += 1;
            let mut out = File::create(&path)
                .map_err(|e| Failure(format!("'{}': {}", path.display(), os_message(&e))))?;
            match loaded.file_offset(entry.offset) {
                Some(offset) => input.copy_range(offset, entry.payload.len() as u64, &mut out)?,
                None => out.write_all(entry.payload)?,
            }
            println!("{}", path.display());
        }
        Ok(())
    })
}

/// A file name that stays in its directory: only `[A-Za-z0-9._+:-]` is kept
/// (anything else, including `/` and NUL, becomes `_`), and it cannot start
/// with `.` (so `..` is impossible).
pub fn safe_name(raw: &[u8]) -> String {
    let mut name: String = raw
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'+' | b':' | b'-' => {
                char::from(b)
            }
            _ => '_',
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn names_from_ids_cannot_escape_the_directory() {
        assert_eq!(
            safe_name(b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+"),
            "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
        );
        assert_eq!(safe_name(b"../../etc/passwd"), "_.._.._etc_passwd");
        assert_eq!(safe_name(b".."), "_..");
        assert_eq!(safe_name(b"a\0b/c\xff"), "a_b_c_");
        assert_eq!(safe_name(b""), "_");
    }
}
