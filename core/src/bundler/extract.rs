//! Extracting every entry of every container in a file, each to a file of
//! its own named after where it came from (`clangoffload extract`).

use alloc::string::String;
use alloc::vec::Vec;

use super::input::{self, Budget, Buffers, Loaded, LoadedBytes};
use super::unbundle::bundle_warnings;
use super::{BundlerError, Decoding, Observer, Plan};
use crate::bytes::offset_in;
use crate::container::Container;
use crate::inspect::inspect;
use crate::FileKind;

/// Plans extracting every entry of every container [`inspect`] finds in
/// `data`, in file order, repeats included: bundles and compressed bundles
/// (back to back, in ELF sections, in archive members), and every image of
/// every OffloadBinary (alone, in `.llvm.offloading` sections, in archives,
/// nested ones opened, each the bytes llvm-offload-binary writes for it).
/// Output `i` is named `<stem>[.<member>].<i>.<entry ID>` for a bundle entry
/// and `<stem>[.<member>].<i>.<triple>[-<arch>][.<kind extension>]` for an
/// image, every part made safe as a file name ([`safe_name`]). Bundle
/// findings are warnings. A bundle whose payloads overlap so that
/// extracting them all would write more than the bundle holds is refused (a
/// small file could otherwise write terabytes).
///
/// A container that cannot be read does not stop the others: the plan
/// holds everything that can be read and reports the first damage as its
/// failure (written after the outputs, as LLVM's tools report errors).
pub fn extract<'data>(
    data: &'data [u8],
    stem: &[u8],
    decoding: Decoding,
    observer: &mut dyn Observer,
) -> Result<Plan<'data>, BundlerError> {
    let stem = safe_name(stem);
    let mut plan = Plan::new(0, Buffers::new())?;
    if FileKind::detect(data).is_bundle_container() {
        let mut buffers = Buffers::new();
        let mut budget = Budget::new(decoding);
        let loaded = input::load(data, &mut budget, true, &mut buffers, observer)?;
        let mut part = Plan::new(0, buffers)?;
        for container in &loaded {
            add_bundle(&mut part, container, &stem, 0, observer)?;
        }
        plan.append(part, 0);
        return Ok(plan);
    }
    // The walk only finds the containers: with no decoding budget it refuses
    // every compressed one at once, and each is decoded once, below, where
    // its damage is found again precisely.
    let walk = Decoding {
        max_size: 0,
        verify_hash: false,
        verbose: false,
    };
    let found = inspect(data, walk);
    let budget = Budget::new(decoding);
    let mut failure = None;
    for c in &found.containers {
        let member = found.files.get(c.place.file).and_then(|f| f.name);
        let prefix = match member {
            Some(member) => alloc::format!("{stem}.{}", safe_name(member)),
            None => stem.clone(),
        };
        let at = offset_in(data, c.container.data()).unwrap_or_default();
        let first = plan.output_count();
        let part = match &c.container {
            Container::Bundle(bundle) => {
                let loaded = Loaded {
                    offset: at,
                    bytes: LoadedBytes::Input(bundle.data()),
                };
                let mut part = Plan::new(0, Buffers::new())?;
                add_bundle(&mut part, &loaded, &prefix, first, observer).map(|()| (part, 0))
            }
            Container::Compressed(compressed) => {
                input::decode(at, compressed, &budget, true, observer).and_then(|bytes| {
                    let loaded = Loaded {
                        offset: at,
                        bytes: LoadedBytes::Decompressed(0),
                    };
                    let mut part = Plan::new(0, alloc::vec![bytes])?;
                    add_bundle(&mut part, &loaded, &prefix, first, observer).map(|()| (part, 0))
                })
            }
            Container::OffloadBinary(binary) => {
                images(binary.data(), &prefix, first, at).map(|part| (part, at))
            }
        };
        match part {
            Ok((part, shift)) => plan.append(part, shift),
            Err(error) => {
                failure.get_or_insert(error);
            }
        }
    }
    // Bytes that start no container are damage only after a container.
    let unknown = |e: &&crate::inspect::InspectionError<'_>| {
        matches!(e.error.kind(), crate::ErrorKind::UnknownContainer)
    };
    let first = found
        .errors
        .first()
        .filter(|e| !(found.containers.is_empty() && unknown(e)));
    if let Some(error) = first {
        failure.get_or_insert(BundlerError::Input(error.error));
    }
    match failure {
        Some(error) if plan.output_count() == 0 => return Err(error),
        Some(error) => plan.fail(error),
        None if plan.output_count() == 0 && found.containers.is_empty() => {
            return Err(BundlerError::NotAContainer)
        }
        None => {}
    }
    Ok(plan)
}

/// Adds one output per entry of the bundle `container` holds to `part`
/// (which holds its buffer), each named `<prefix>.<i>.<entry ID>` with `i`
/// counting from `first` plus `part`'s outputs, so that names stay unique
/// across every container of a file.
fn add_bundle<'data>(
    part: &mut Plan<'data>,
    container: &Loaded<'data>,
    prefix: &str,
    first: usize,
    observer: &mut dyn Observer,
) -> Result<(), BundlerError> {
    let mut entries = Vec::new();
    {
        let bundle = container.bundle(part.buffers())?;
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
            entries.push((safe_name(entry.id()), start..start.saturating_add(size)));
        }
        bundle_warnings(&bundle, observer);
    }
    for (id, range) in entries {
        let index = part.add_output();
        part.push_source(index, container.source(range));
        part.name(
            index,
            alloc::format!("{prefix}.{}.{id}", first.saturating_add(index)).into_bytes(),
        );
    }
    Ok(())
}

/// One output per image of the OffloadBinaries back to back in `bytes` (at
/// `at` in the input), nested ones opened, named
/// `<prefix>.<i>.<triple>[-<arch>][.<ext>]` with `i` counting from `first`.
fn images<'data>(
    bytes: &'data [u8],
    prefix: &str,
    first: usize,
    at: u64,
) -> Result<Plan<'data>, BundlerError> {
    use crate::packager::PackagerError as P;
    let (mut part, namings) = crate::packager::every_image(bytes).map_err(|e| match e {
        P::Binary(e) | P::Container(e) | P::Writer(e) => BundlerError::Input(e.shifted(at)),
        P::OverlappingImages { holds, .. } => BundlerError::OverlappingPayloads {
            entry: 0,
            bundle_offset: at,
            budget: holds,
        },
        _ => BundlerError::NotAContainer,
    })?;
    for (index, naming) in namings.iter().enumerate() {
        let mut what = safe_name(&naming.triple);
        if !naming.arch.is_empty() {
            what.push('-');
            what.push_str(&safe_name(&naming.arch));
        }
        if !naming.extension.is_empty() {
            what.push('.');
            what.push_str(naming.extension);
        }
        let name = alloc::format!("{prefix}.{}.{what}", first.saturating_add(index));
        part.name(index, name.into_bytes());
    }
    Ok(part)
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
    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            &include_bytes!(concat!("../../../tests/fixtures/", $name))[..]
        };
    }

    fn names(plan: &Plan<'_>) -> Vec<String> {
        (0..plan.output_count())
            .map(|i| String::from_utf8_lossy(plan.output_name(i)).into_owned())
            .collect()
    }

    #[test]
    fn every_container_of_a_host_file_is_extracted() {
        // Bundles in `.hip_fatbin`: the host entry and both devices.
        let plan = extract(
            fixture!("offload/hip.o"),
            b"hip.o",
            Decoding::default(),
            &mut (),
        )
        .unwrap();
        assert_eq!(
            names(&plan),
            [
                "hip.o.0.host-x86_64-unknown-linux-gnu-",
                "hip.o.1.hipv4-amdgcn-amd-amdhsa--gfx906",
                "hip.o.2.hipv4-amdgcn-amd-amdhsa--gfx90a"
            ]
        );
        assert!(plan.failure().is_none());
        // OffloadBinary images in `.llvm.offloading`, the bytes
        // llvm-offload-binary writes for each (its own extraction of them).
        let data = fixture!("offload/embed.o");
        let plan = extract(data, b"embed.o", Decoding::default(), &mut ()).unwrap();
        let (theirs, _) = crate::packager::every_image(data).unwrap();
        assert_eq!(plan.output_count(), theirs.output_count());
        for i in 0..plan.output_count() {
            assert_eq!(
                plan.output_bytes(i).unwrap(),
                theirs.output_bytes(i).unwrap()
            );
            assert!(names(&plan)[i].starts_with(&alloc::format!("embed.o.{i}.")));
        }
        assert_eq!(names(&plan)[0], "embed.o.0.amdgcn-amd-amdhsa-gfx908.o");
    }

    #[test]
    fn a_compressed_bundle_in_a_section_is_decoded_once_and_checked() {
        // hip-compress.o: a compressed bundle in `.hip_fatbin`. Its entries
        // are the bytes extracting the compressed bundle alone gives.
        let data = fixture!("offload/hip-compress.o");
        let at = data.windows(4).position(|w| w == b"CCOB").unwrap();
        let alone = extract(&data[at..], b"ccob", Decoding::default(), &mut ()).unwrap();
        let plan = extract(data, b"hip-compress.o", Decoding::default(), &mut ()).unwrap();
        assert_eq!(plan.output_count(), 3);
        for i in 0..3 {
            assert_eq!(
                plan.output_bytes(i).unwrap(),
                alone.output_bytes(i).unwrap()
            );
        }
        assert!(plan.failure().is_none());
        // A wrong hash is found by that one decoding.
        let mut damaged = data.to_vec();
        let hash = at + if damaged[at + 4] == 3 { 24 } else { 16 };
        damaged[hash] ^= 1;
        let err = extract(&damaged, b"d.o", Decoding::default(), &mut ()).unwrap_err();
        assert!(
            alloc::format!("{}", err.message("d.o")).contains("hash"),
            "{err:?}"
        );
    }

    #[test]
    fn names_are_unique_across_the_containers_of_a_section() {
        // Three bundles back to back in `.hip_fatbin` (ELF) and `.hip_fat`
        // (PE), compressed and not: the index counts across them.
        for (file, data) in [
            ("so", fixture!("multi/libhip-compressed3.so")),
            ("so", fixture!("multi/libhip-mixed3.so")),
            ("dll", fixture!("multi/hip-compressed3.dll")),
            ("dll", fixture!("multi/hip-mixed3.dll")),
        ] {
            let plan = extract(data, file.as_bytes(), Decoding::default(), &mut ()).unwrap();
            let names = names(&plan);
            assert_eq!(names.len(), 9, "{file}");
            for (i, name) in names.iter().enumerate() {
                assert!(name.starts_with(&alloc::format!("{file}.{i}.")), "{name}");
            }
            assert!(plan.failure().is_none());
        }
    }

    #[test]
    fn archive_members_name_their_outputs() {
        let plan = extract(
            fixture!("offload/offload.a"),
            b"offload.a",
            Decoding::default(),
            &mut (),
        )
        .unwrap();
        let names = names(&plan);
        assert!(!names.is_empty());
        assert!(names
            .iter()
            .all(|n| n.starts_with("offload.a.") && !n.contains('/')));
        assert!(plan.failure().is_none());
    }

    #[test]
    fn damage_is_reported_after_what_can_be_read() {
        // A good binary, then a damaged one.
        let good = fixture!("offload/single.offbin");
        let mut data = good.to_vec();
        data.extend_from_slice(&good[..40]);
        let plan = extract(&data, b"two", Decoding::default(), &mut ()).unwrap();
        assert_eq!(plan.output_count(), 1);
        assert_eq!(
            plan.output_bytes(0).unwrap(),
            extract(good, b"one", Decoding::default(), &mut ())
                .unwrap()
                .output_bytes(0)
                .unwrap()
        );
        assert!(plan.failure().is_some());
        // Nothing readable at all: the error itself.
        assert!(extract(&good[..40], b"cut", Decoding::default(), &mut ()).is_err());
        assert!(matches!(
            extract(b"plain text", b"t", Decoding::default(), &mut ()),
            Err(BundlerError::NotAContainer)
        ));
    }

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
