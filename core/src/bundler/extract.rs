//! Extracting every entry of every bundle in a file, each to a file of its
//! own named after where it came from (`clangoffload extract`).

use alloc::string::String;
use alloc::vec::Vec;

use super::input::{self, Budget, Buffers};
use super::unbundle::bundle_warnings;
use super::{BundlerError, Decoding, Observer, Place, Plan};
use crate::FileKind;

/// Plans extracting every entry of every bundle and compressed bundle in
/// `data`, in file order, repeats included: output `i` is entry `i`, named
/// `<stem>.<i>.<entry ID>` with both parts made safe as file names
/// ([`safe_name`]). Bundle findings are warnings. A bundle whose payloads
/// overlap so that extracting them all would write more than the bundle
/// holds is refused (a small file could otherwise write terabytes).
pub fn extract<'data>(
    data: &'data [u8],
    stem: &[u8],
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, BundlerError> {
    if !FileKind::detect(data).is_bundle_container() {
        return Err(BundlerError::NotAContainer);
    }
    let mut buffers = Buffers::new();
    let loaded = input::load(
        data,
        &mut Budget::new(decoding),
        true,
        &mut buffers,
        observer,
    )?;
    let mut entries = Vec::new();
    for container in &loaded {
        let bundle = crate::Bundle::parse(container.bytes(&buffers)).map_err(|error| {
            BundlerError::MalformedBundle {
                error,
                place: Place::Start,
            }
        })?;
        let budget = crate::bytes::to_u64(bundle.data().len());
        let mut written = 0u64;
        for (entry_index, entry) in bundle.entries().map_while(Result::ok).enumerate() {
            written = written.saturating_add(entry.size());
            if written > budget {
                return Err(BundlerError::OverlappingPayloads {
                    entry: entry_index,
                    bundle_offset: container.offset,
                    budget,
                });
            }
            let start = usize::try_from(entry.offset()).unwrap_or(usize::MAX);
            let size = usize::try_from(entry.size()).unwrap_or(usize::MAX);
            let name = alloc::format!(
                "{}.{}.{}",
                safe_name(stem),
                entries.len(),
                safe_name(entry.id())
            );
            entries.push((name, container.source(start..start.saturating_add(size))));
        }
        bundle_warnings(&bundle, observer);
    }
    let mut plan = Plan::new(entries.len(), buffers)?;
    for (i, (name, source)) in entries.into_iter().enumerate() {
        plan.push_source(i, source);
        plan.name(i, name.into_bytes());
    }
    Ok(plan)
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
