//! The packager's rules on files LLVM 22's llvm-offload-binary made and read
//! (`tests/fixtures/offload/COMMANDS` says how).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::*;
use crate::bundler::{Note, Piece, Plan};
use crate::CompressionMethod;

macro_rules! fixture {
    ($name:literal) => {
        &include_bytes!(concat!("../../../tests/fixtures/offload/", $name))[..]
    };
}

/// Runs `extract` and returns its plan and the warnings it gave.
fn extract_all<'d>(
    data: &'d [u8],
    input: &str,
    filters: &[&str],
    archive: bool,
) -> Result<(Plan<'d>, Vec<String>), PackagerError> {
    let filters: Vec<&[u8]> = filters.iter().map(|f| f.as_bytes()).collect();
    let mut warnings = Vec::new();
    let mut observer = |note: Note| {
        if let Note::Warning(w) = note {
            warnings.push(w.message(input).to_string());
        }
    };
    let plan = extract(data, input.as_bytes(), &filters, archive, &mut observer)?;
    // Every piece of the input is where it says it is: callers copy file
    // ranges by offset.
    for i in 0..plan.output_count() {
        for piece in plan.output(i) {
            if let Piece::Input { offset, bytes, .. } = piece {
                let at = usize::try_from(*offset).unwrap();
                assert_eq!(&data[at..at + bytes.len()], *bytes);
            }
        }
    }
    Ok((plan, warnings))
}

fn outputs(plan: &Plan<'_>) -> Vec<(String, Vec<u8>)> {
    (0..plan.output_count())
        .map(|i| {
            (
                String::from_utf8_lossy(plan.output_name(i)).into_owned(),
                plan.output_bytes(i).unwrap(),
            )
        })
        .collect()
}

#[test]
fn automatic_names_and_bytes_are_llvm_22s() {
    // llvm-offload-binary multi.offbin --image=kind=openmp
    let (plan, warnings) = extract_all(
        fixture!("multi.offbin"),
        "multi.offbin",
        &["kind=openmp"],
        false,
    )
    .unwrap();
    assert!(warnings.is_empty());
    let expected: [(&str, &[u8]); 4] = [
        (
            "multi-amdgcn-amd-amdhsa-gfx908.0.o",
            fixture!("inputs/dev-gfx908.o"),
        ),
        (
            "multi-amdgcn-amd-amdhsa-gfx908:sramecc+:xnack-.1.bc",
            fixture!("inputs/dev-gfx908.bc"),
        ),
        (
            "multi-nvptx64-nvidia-cuda-sm_75.2.",
            fixture!("inputs/dev-sm75.ptx"),
        ),
        ("multi-spirv64-intel-.3.", fixture!("inputs/dev.spv")),
    ];
    let ours = outputs(&plan);
    assert_eq!(ours.len(), expected.len());
    for ((name, bytes), (want_name, want)) in ours.iter().zip(expected) {
        assert_eq!(name, want_name);
        assert_eq!(bytes, want, "{name}");
    }
    // The stem is the input's file name without directory and extension.
    let (plan, _) = extract_all(
        fixture!("multi.offbin"),
        "dir/x.y.offbin",
        &["arch=sm_75"],
        false,
    )
    .unwrap();
    assert_eq!(plan.output_name(0), b"x.y-nvptx64-nvidia-cuda-sm_75.0.");
}

#[test]
fn images_are_found_in_archive_members_and_elf_sections() {
    // llvm-offload-binary offload.a --image=kind=openmp: numbered in match
    // order (the listing in the fixture is sorted by name).
    let (plan, _) =
        extract_all(fixture!("offload.a"), "offload.a", &["kind=openmp"], false).unwrap();
    let ours = outputs(&plan);
    let names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "offload-amdgcn-amd-amdhsa-gfx908.0.o",
            "offload-amdgcn-amd-amdhsa-gfx908:sramecc+:xnack-.1.bc",
            "offload-nvptx64-nvidia-cuda-sm_75.2.",
            "offload-spirv64-intel-.3.",
            "offload-amdgcn-amd-amdhsa-gfx90a:xnack+.4.o",
            "offload-amdgcn-amd-amdhsa-gfx90a.5.o",
            "offload-amdgcn-amd-amdhsa-gfx90a.6.bc",
            "offload-amdgcn-amd-amdhsa-gfx90a.7.bc",
        ]
    );
    assert_eq!(ours[4].1, fixture!("inputs/single.o"));
    assert_eq!(ours[5].1, fixture!("inputs/size0.o"));
    // The images know the member they are in.
    let images = list(fixture!("offload.a")).unwrap();
    let members: Vec<&[u8]> = images.iter().filter_map(|i| i.member).collect();
    assert_eq!(members.len(), images.iter().count());
    assert!(members.contains(&&b"omp.o"[..]), "{members:?}");
}

#[test]
fn a_file_gets_the_last_match_with_llvms_warning() {
    // An object with two embedded packages: the image that file= names.
    let (plan, warnings) = extract_all(
        fixture!("embed2.o"),
        "embed2.o",
        &["file=x.o,arch=gfx90a:xnack+"],
        false,
    )
    .unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        outputs(&plan),
        [("x.o".to_string(), fixture!("inputs/single.o").to_vec())]
    );
    // Several matches: the last one, and the warning.
    let (plan, warnings) = extract_all(
        fixture!("sizes.offbin"),
        "sizes.offbin",
        &["file=out,triple=amdgcn-amd-amdhsa"],
        false,
    )
    .unwrap();
    assert_eq!(warnings, ["Multiple inputs match to a single file, 'out'"]);
    assert_eq!(
        outputs(&plan),
        [("out".to_string(), fixture!("inputs/size4096.o").to_vec())]
    );
}

#[test]
fn filters_compare_kinds_and_strings_and_missing_keys_read_as_empty() {
    let data = fixture!("keys.offbin");
    let count = |filter: &str| {
        extract_all(data, "k", &[filter], false)
            .unwrap()
            .0
            .output_count()
    };
    assert_eq!(count("kind=cuda"), 1);
    // An unknown kind names no kind: it matches the images of no kind
    // (`kind=bogus`, and `kind=openmp,kind=hip` stored as `openmp,hip`).
    assert_eq!(count("kind=bogus"), 2);
    assert_eq!(count("foo=bar"), 1);
    // A key an image lacks reads as empty: `empty=` matches every image, and
    // `arch=` the one stored empty and the three without.
    assert_eq!(count("empty="), 6);
    assert_eq!(count("arch="), 4);
    assert_eq!(count("eq=a=b"), 1);
    // Repeated keys were stored joined.
    assert_eq!(count("feature=+a,feature=+b"), 1);
    // `file` is never compared.
    assert_eq!(count("file=anything,foo=bar"), 1);
    assert_eq!(count("nothing=here"), 0);
    // No filter: every image (as LLVM after 22 does).
    assert_eq!(
        extract_all(data, "k", &[], false).unwrap().0.output_count(),
        list(data).unwrap().iter().count()
    );
    assert!(extract_all(b"\x10\xff\x10\xad\x0a", "k", &[], false).is_err());
}

#[test]
fn archives_need_a_file_and_name_members_after_their_source() {
    let data = fixture!("multi.offbin");
    // A filter that matches nothing needs no file.
    assert!(extract_all(data, "m.offbin", &["arch=none"], true).is_ok());
    assert_eq!(
        extract_all(data, "m.offbin", &["arch=sm_70"], true).unwrap_err(),
        PackagerError::ArchiveWithoutFile
    );
    let (plan, _) = extract_all(data, "m.offbin", &["file=lib.a,kind=hip"], true).unwrap();
    assert_eq!(plan.output_name(0), b"lib.a");
    let bytes = plan.output_bytes(0).unwrap();
    let archive = crate::archive::Archive::parse(&bytes).unwrap();
    let members: Vec<_> = archive.members().map(Result::unwrap).collect();
    assert_eq!(members.len(), 2);
    assert!(members.iter().all(|m| m.name() == b"m.offbin"));
    assert_eq!(members[1].data(), fixture!("inputs/bitcode-magic.o"));
    // The sm_70 cubin is ELF's magic and noise: LLVM 22's archive writer
    // cannot read it and fails ("invalid e_shentsize"), naming the input.
    match extract_all(data, "m.offbin", &["file=lib.a,arch=sm_70"], true).unwrap_err() {
        PackagerError::Unindexable { name, error } => {
            assert_eq!(name, "m.offbin");
            let cubin = fixture!("inputs/dev-sm70.cubin");
            let at = data.windows(cubin.len()).position(|w| w == cubin).unwrap();
            assert_eq!(error.offset(), at as u64 + 58);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn names_cannot_leave_the_directory() {
    let image = PackageImage {
        argument: b"file=a.o,triple=../../x\0y,arch=a/b",
        file: b"a.o",
        data: b"code",
    };
    // Version 2: values may hold NULs.
    let version_2 = Format {
        version: Some(2),
        ..Format::default()
    };
    let package = package(&[image], &version_2).unwrap();
    let (plan, _) = extract_all(&package, "in", &["kind="], false).unwrap();
    assert_eq!(plan.output_name(0), b"in-.._.._x_y-a_b.0.o");
}

#[test]
fn refused_and_damaged_inputs_are_errors_as_data() {
    let e = list(fixture!("embed.bc")).unwrap_err();
    assert_eq!(e, PackagerError::Bitcode);
    let e = list(b"\x10\xff\x10\xad\x0a").unwrap_err();
    assert!(e.names_input());
    assert_eq!(
        e.message("mal").to_string(),
        "Invalid data was encountered while parsing the file: 'mal': truncated OffloadBinary \
         header: needs 32 bytes, 5 left (at offset 0x0)"
    );
    // Anything else holds no images.
    assert_eq!(list(b"plain text").unwrap().iter().count(), 0);
    // A damaged archive member header, after the good members.
    let mut archive = fixture!("offload.a").to_vec();
    let last = archive.len() - 2;
    archive.truncate(last);
    assert!(matches!(list(&archive), Err(PackagerError::Container(_))));
}

#[test]
fn nested_archives_are_read_in_file_order() {
    let inner = crate::archive::write_archive_indexed(&[
        (b"a.offbin", fixture!("single.offbin")),
        (b"b.offbin", fixture!("sizes.offbin")),
    ])
    .unwrap();
    let outer = crate::archive::write_archive_indexed(&[
        (b"inner.a", &inner),
        (b"c.offbin", fixture!("single.offbin")),
    ])
    .unwrap();
    let images = list(&outer).unwrap();
    let members: Vec<&[u8]> = images.iter().map(|i| i.member.unwrap()).collect();
    assert_eq!(
        members,
        [
            &b"a.offbin"[..],
            b"b.offbin",
            b"b.offbin",
            b"b.offbin",
            b"b.offbin",
            b"c.offbin"
        ]
    );
    let (plan, _) = extract_all(&outer, "o.a", &["arch=gfx90a:xnack+"], false).unwrap();
    assert_eq!(plan.output_count(), 2);
    assert_eq!(plan.output_bytes(1).unwrap(), fixture!("inputs/single.o"));
}

#[test]
fn packages_are_byte_identical_to_llvm_22s() {
    let image = |argument: &'static str, file: &'static str, data: &'static [u8]| PackageImage {
        argument: argument.as_bytes(),
        file: file.as_bytes(),
        data,
    };
    let single = [image(
        "file=inputs/single.o,kind=openmp,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+",
        "inputs/single.o",
        fixture!("inputs/single.o"),
    )];
    assert_eq!(
        package(&single, &Format::default()).unwrap(),
        fixture!("single.offbin")
    );
    let keys = [
        image(
            "file=inputs/dev-sm70.cubin,kind=cuda,triple=nvptx64-nvidia-cuda,arch=sm_70,feature=+ptx,foo=bar",
            "inputs/dev-sm70.cubin",
            fixture!("inputs/dev-sm70.cubin"),
        ),
        image(
            "file=inputs/dev-gfx908.o,kind=hip,triple=amdgcn-amd-amdhsa,arch=gfx908,empty=,eq=a=b,feature=+a,feature=+b",
            "inputs/dev-gfx908.o",
            fixture!("inputs/dev-gfx908.o"),
        ),
        image(
            "file=inputs/dev.spv,kind=sycl,triple=spirv64-unknown-unknown,arch=",
            "inputs/dev.spv",
            fixture!("inputs/dev.spv"),
        ),
        image(
            "file=inputs/dev-noext,kind=bogus,triple=x86_64-unknown-linux-gnu",
            "inputs/dev-noext",
            fixture!("inputs/dev-noext"),
        ),
        image(
            "file=inputs/dev-noext,kind=openmp,kind=hip,triple=amdgcn-amd-amdhsa",
            "inputs/dev-noext",
            fixture!("inputs/dev-noext"),
        ),
        image("file=inputs/single.o,kind=openmp", "inputs/single.o", fixture!("inputs/single.o")),
    ];
    assert_eq!(
        package(&keys, &Format::default()).unwrap(),
        fixture!("keys.offbin")
    );
    // Bitcode by its magic whatever the extension; the extension otherwise.
    let kinds = [
        image("file=x.o", "x.o", fixture!("inputs/bitcode-magic.o")),
        image("file=x.cubin", "dir.s/x.cubin", b"\x7fELF"),
        image("file=x", "dir.o/x", b"text"),
    ];
    let package = package(&kinds, &Format::default()).unwrap();
    let kinds: Vec<_> = list(&package)
        .unwrap()
        .iter()
        .map(|i| i.entry.image_kind())
        .collect();
    use crate::offload_binary::ImageKind;
    assert_eq!(
        kinds,
        [ImageKind::Bitcode, ImageKind::Cubin, ImageKind::None]
    );
}

#[test]
fn image_files_are_the_file_values() {
    assert_eq!(image_files(b"file=a,triple=t").unwrap(), [&b"a"[..]]);
    assert_eq!(
        image_files(b"file=a,x=1,file=b").unwrap(),
        [&b"a"[..], b"b"]
    );
    assert_eq!(image_files(b"file=,file").unwrap(), [&b""[..], b""]);
    assert_eq!(image_files(b"file=a=b").unwrap(), [&b"a=b"[..]]);
    assert_eq!(
        image_files(b"triple=t").unwrap_err(),
        PackagerError::MissingFile
    );
    assert_eq!(
        image_files(b"files=a").unwrap_err(),
        PackagerError::MissingFile
    );
    assert_eq!(
        PackagerError::MissingFile.to_string(),
        "'file' is a required image arguments"
    );
}

#[test]
fn format_options_are_checked_with_llvms_words() {
    let message = |format: Format<'_>| format.write_options().unwrap_err().to_string();
    let version = |v| Format {
        version: Some(v),
        ..Format::default()
    };
    assert_eq!(version(2).write_options().unwrap().version, 2);
    assert_eq!(
        message(version(4)),
        "invalid format version 4; expected 1, 2 or 3"
    );
    assert_eq!(
        message(version(0)),
        "invalid format version 0; expected 1, 2 or 3"
    );
    let compress = |format: Option<&'static [u8]>, level| Format {
        version: Some(1),
        compress: true,
        compression_format: format,
        compression_level: level,
    };
    let options = compress(None, None).write_options().unwrap();
    assert_eq!(options.version, 3);
    assert_eq!(options.compression, Some((CompressionMethod::Zstd, None)));
    assert_eq!(
        message(compress(Some(b""), None)),
        "invalid compression format ''; expected 'zlib' or 'zstd'"
    );
    assert_eq!(
        message(compress(Some(b"zlib"), Some(10))),
        "invalid zlib compression level 10; expected a value in [0, 9]"
    );
    assert_eq!(
        message(compress(None, Some(23))),
        "invalid zstd compression level 23; expected a value in [-131072, 22]"
    );
    assert!(compress(None, Some(-131_072)).write_options().is_ok());
}

#[test]
fn compressed_packages_extract_from_the_decompressed_bytes() {
    let image = PackageImage {
        argument: b"file=a.o,triple=x-y-z,arch=abc",
        file: b"a.o",
        data: fixture!("inputs/single.o"),
    };
    let format = Format {
        compress: true,
        compression_format: Some(b"zlib"),
        ..Format::default()
    };
    let package = package(&[image, image], &format).unwrap();
    let images = list(&package).unwrap();
    assert!(images.iter().all(|i| i.compressed && i.version == 3));
    assert_eq!(images.iter().count(), 2);
    let (plan, _) = extract_all(&package, "p", &["arch=abc"], false).unwrap();
    assert_eq!(plan.output_count(), 2);
    assert!(matches!(plan.output(1), [Piece::Made { .. }]));
    assert_eq!(plan.output_bytes(1).unwrap(), fixture!("inputs/single.o"));
}

#[test]
fn path_helpers_are_llvms() {
    assert_eq!(stem(b"a/b.c.d"), b"b.c");
    assert_eq!(stem(b".hidden"), b"");
    assert_eq!(stem(b".."), b"..");
    assert_eq!(stem(b"noext"), b"noext");
    assert_eq!(extension(b"a.b/c"), b"");
    assert_eq!(extension(b"x.cubin"), b"cubin");
    assert_eq!(extension(b"x."), b"");
    assert_eq!(extension(b".."), b"");
}

/// A package of `images` (file name, argument, bytes), version `version`.
fn packaged(images: &[(&str, &str, &[u8])], version: u32) -> Vec<u8> {
    let images: Vec<PackageImage<'_>> = images
        .iter()
        .map(|&(file, argument, data)| PackageImage {
            argument: argument.as_bytes(),
            file: file.as_bytes(),
            data,
        })
        .collect();
    let format = Format {
        version: Some(version),
        ..Format::default()
    };
    package(&images, &format).unwrap()
}

#[test]
fn with_no_filter_every_image_is_extracted_nested_ones_opened() {
    // llvm-offload-binary -o t5 --image=file=a,arch=abc,triple=x-y-z
    //   --image=file=b,arch=def,triple=x-y-z
    let t5 = packaged(
        &[
            ("a", "file=a,arch=abc,triple=x-y-z", b"AAAA"),
            ("b", "file=b,arch=def,triple=x-y-z", b"BBBBBB"),
        ],
        1,
    );
    // t7: t5 nested, then a plain image with no arch.
    let t7 = packaged(
        &[
            ("t5", "file=t5,arch=nested,triple=x-y-z", &t5),
            ("c.o", "file=c.o,triple=x-y-z", b"\x7fELF-not-really"),
        ],
        1,
    );
    let (plan, _) = extract_all(&t7, "dir/t7.bin", &[], false).unwrap();
    assert_eq!(
        outputs(&plan),
        [
            ("t7-x-y-z-abc.0.".to_string(), b"AAAA".to_vec()),
            ("t7-x-y-z-def.1.".to_string(), b"BBBBBB".to_vec()),
            ("t7-x-y-z.2.o".to_string(), b"\x7fELF-not-really".to_vec()),
        ]
    );
    // A filter takes the nested binary as it is, named as LLVM 22 names.
    let (plan, _) = extract_all(&t7, "t7", &["arch=nested"], false).unwrap();
    assert_eq!(
        outputs(&plan),
        [("t7-x-y-z-nested.0.".to_string(), t5.clone())]
    );
    // Nested in a compressed (version 3) binary, and compressed inside.
    let t5z = packaged(&[("a", "file=a,arch=abc,triple=x-y-z", b"AAAA")], 3);
    let outer = packaged(&[("t5z", "file=t5z,arch=n,triple=x-y-z", &t5z)], 3);
    let (plan, _) = extract_all(&outer, "o", &[], false).unwrap();
    assert_eq!(
        outputs(&plan),
        [("o-x-y-z-abc.0.".to_string(), b"AAAA".to_vec())]
    );
}

#[test]
fn a_damaged_nested_binary_is_located_and_self_nesting_is_refused() {
    let bad = b"\x10\xff\x10\xad\x0a";
    let outer = packaged(&[("bad", "file=bad,arch=nested,triple=x-y-z", bad)], 1);
    let e = extract_all(&outer, "t9", &[], false).unwrap_err();
    let at = outer.windows(5).position(|w| w == bad).unwrap();
    assert_eq!(e.core_error().unwrap().offset(), at as u64);
    assert!(e
        .message("t9")
        .to_string()
        .starts_with("Invalid data was encountered while parsing the file: 't9': "));
    // An image that is its own binary: upstream recurses without end.
    let mut own = packaged(&[("x", "file=x,triple=t", b"12345678")], 1);
    let size = own.len() as u64;
    own[64..72].copy_from_slice(&size.to_le_bytes()); // image size
    own[56..64].copy_from_slice(&0u64.to_le_bytes()); // image offset
    assert!(matches!(
        extract_all(&own, "own", &[], false),
        Err(PackagerError::OverlappingImages { .. })
    ));
}

#[test]
fn images_shared_by_entries_cannot_multiply_without_end() {
    // Version 2 entries may share an image: a binary whose two entries are
    // the same nested binary, which does the same, and so on, would write
    // 2^depth images.
    let mut level = packaged(&[("a", "file=a,triple=t", b"leaf")], 2);
    for _ in 0..40 {
        let two = packaged(
            &[
                ("n", "file=n,triple=t", &level),
                ("n", "file=n,triple=t", b""),
            ],
            2,
        );
        level = share_first_image(two);
    }
    assert!(matches!(
        extract_all(&level, "deep", &[], false),
        Err(PackagerError::OverlappingImages { .. })
    ));
}

/// A version 2 binary whose second entry points at its first entry's image.
fn share_first_image(mut binary: Vec<u8>) -> Vec<u8> {
    let entries = u64::from_le_bytes(binary[16..24].try_into().unwrap()) as usize;
    let first = binary[entries + 24..entries + 40].to_vec();
    binary[entries + 40 + 24..entries + 40 + 40].copy_from_slice(&first);
    binary
}

#[test]
fn member_selects_an_archive_member_or_the_input() {
    let a = packaged(
        &[("c", "file=c,triple=x-y-z,arch=gfx90a,kind=openmp", b"aaaa")],
        1,
    );
    let b = packaged(
        &[("c", "file=c,triple=x-y-z,arch=gfx90a,kind=openmp", b"bbbb")],
        1,
    );
    let lib = crate::archive::write_archive_indexed(&[(b"a.o", &a), (b"b.o", &b)]).unwrap();
    for (member, want) in [("a.o", b"aaaa"), ("b.o", b"bbbb")] {
        let filter = alloc::format!("member={member},triple=x-y-z,kind=openmp,file=out");
        let (plan, warnings) = extract_all(&lib, "lib.a", &[&filter], false).unwrap();
        assert_eq!(outputs(&plan), [("out".to_string(), want.to_vec())]);
        assert!(warnings.is_empty());
    }
    let (_, warnings) = extract_all(&lib, "lib.a", &["triple=x-y-z,file=both"], false).unwrap();
    assert_eq!(warnings.len(), 1);
    // Outside an archive, the member is the input file.
    let (plan, _) = extract_all(&a, "dir/a.o", &["member=a.o,file=x"], false).unwrap();
    assert_eq!(plan.output_count(), 1);
}
