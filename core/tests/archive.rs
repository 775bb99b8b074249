//! `ar` archives: reading every archive LLVM 22 made in
//! `tests/fixtures/archive` (see its README for the commands), writing them
//! back byte for byte, the device-archive member names, and one test per
//! class of malformed input.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::PathBuf;

use clangoffload::archive::{
    device_member_name, write_archive, write_archive_indexed, Archive, ArchiveLayout, Member,
    MemberKind, MemberSpec, NewMember, SymbolTableFormat,
};
use clangoffload::bitcode::BitcodeFileContents;
use clangoffload::{Bundle, CompressedBundle, DecompressOptions, ErrorKind, Field};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/archive")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn input(name: &str) -> Vec<u8> {
    read(&format!("inputs/{name}"))
}

/// The global symbols `llvm-nm -p -g --defined-only` printed for an input
/// when the fixtures were made: what LLVM's archive writer takes from it.
fn symbols(name: &str) -> Vec<Vec<u8>> {
    String::from_utf8(input(&format!("{name}.symbols")))
        .unwrap()
        .lines()
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

fn members<'d>(archive: &Archive<'d>) -> Vec<Member<'d>> {
    archive.members().map(|m| m.unwrap()).collect()
}

#[test]
fn names_match_llvm_ar_for_every_fixture() {
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("a") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let archive = Archive::parse(&data).unwrap();
        let listed = std::fs::read_to_string(path.with_extension("list")).unwrap();
        let names: Vec<String> = members(&archive)
            .iter()
            .map(|m| String::from_utf8(m.name().to_vec()).unwrap())
            .collect();
        assert_eq!(names, listed.lines().collect::<Vec<_>>(), "{path:?}");
        for m in members(&archive) {
            assert_eq!(m.kind(), MemberKind::Regular);
            let start = m.data_offset() as usize;
            assert_eq!(&data[start..start + m.data().len()], m.data());
            assert_eq!(m.size(), m.data().len() as u64);
        }
        seen += 1;
    }
    assert_eq!(seen, 16);
}

fn check_data(archive: &str, inputs: &[&str]) -> Vec<u8> {
    let data = read(archive);
    let parsed = Archive::parse(&data).unwrap();
    let got = members(&parsed);
    assert_eq!(got.len(), inputs.len(), "{archive}");
    for (m, name) in got.iter().zip(inputs) {
        assert_eq!(m.name(), name.as_bytes());
        let expected = input(name);
        // Darwin archives pad members to 8 bytes with '\n', inside their size.
        let (data, padding) = m.data().split_at(expected.len().min(m.data().len()));
        assert_eq!(data, expected, "{archive}: {name}");
        assert!(archive.starts_with("darwin") || padding.is_empty());
        assert!(padding.len() < 8 && padding.iter().all(|&b| b == b'\n'));
    }
    data
}

#[test]
fn gnu_archives_of_bundles() {
    let data = check_data(
        "gnu-bundles.a",
        &["fat.bc", "libdevice-with-a-long-name.bc", "devbc.bc"],
    );
    let archive = Archive::parse(&data).unwrap();
    assert!(archive.symbol_table().is_none());
    let names = archive.long_names().unwrap();
    assert_eq!(names.kind(), MemberKind::LongNames);
    assert_eq!(names.name(), b"//");
    // The table's padding to an even size is part of its data.
    assert_eq!(names.data(), b"libdevice-with-a-long-name.bc/\n\n");
    let first = members(&archive)[0];
    assert_eq!(first.index(), 1);
    let bundle = Bundle::parse(first.data()).unwrap();
    assert_eq!(bundle.entry_count(), 3);

    check_data("gnu-compressed.a", &["fatz.bc", "objz.o"]);
    let data = read("gnu-compressed.a");
    for m in members(&Archive::parse(&data).unwrap()) {
        let ccob = CompressedBundle::parse(m.data()).unwrap();
        let bundle = ccob.decompress(&DecompressOptions::default()).unwrap();
        Bundle::parse(&bundle).unwrap();
    }
}

/// The symbol table entries as (name, index of the defining member).
fn table(archive: &Archive<'_>) -> Vec<(Vec<u8>, usize)> {
    let offsets: Vec<u64> = members(archive).iter().map(|m| m.header_offset()).collect();
    archive
        .symbol_table()
        .unwrap()
        .symbols()
        .map(|s| {
            let s = s.unwrap();
            let member = offsets
                .iter()
                .position(|&o| o == s.member_offset())
                .unwrap();
            (s.name().to_vec(), member)
        })
        .collect()
}

fn expected_table(per_member: &[(&str, usize)]) -> Vec<(Vec<u8>, usize)> {
    per_member
        .iter()
        .flat_map(|&(file, member)| symbols(file).into_iter().map(move |s| (s, member)))
        .collect()
}

#[test]
fn symbol_tables() {
    let data = check_data(
        "gnu-objects.a",
        &["hobj.o", "h.o", "host-object-long-name.o"],
    );
    let archive = Archive::parse(&data).unwrap();
    let symtab = archive.symbol_table().unwrap();
    assert_eq!(symtab.format(), SymbolTableFormat::Gnu);
    assert_eq!(symtab.member().name(), b"/");
    assert_eq!(symtab.member().header_offset(), 8);
    assert_eq!(
        table(&archive),
        expected_table(&[("hobj.o", 0), ("h.o", 1), ("h.o", 2)])
    );

    let data = check_data(
        "bsd.a",
        &["hobj.o", "fat.bc", "libdevice-with-a-long-name.bc"],
    );
    let archive = Archive::parse(&data).unwrap();
    assert_eq!(
        archive.symbol_table().unwrap().format(),
        SymbolTableFormat::Bsd
    );
    assert_eq!(
        archive.symbol_table().unwrap().member().name(),
        b"__.SYMDEF"
    );
    assert!(archive.long_names().is_none());
    assert_eq!(table(&archive), expected_table(&[("hobj.o", 0)]));
    // BSD names are at the start of the data, and not part of it.
    let first = members(&archive)[0];
    assert_eq!(first.header().name, *b"#1/12           ");
    assert_eq!(first.data_offset(), first.header_offset() + 60 + 12);

    for (file, format) in [
        ("gnu-sym64.a", SymbolTableFormat::Gnu64),
        ("darwin-sym64.a", SymbolTableFormat::Bsd64),
    ] {
        let data = check_data(file, &["h.o", "fat.bc"]);
        let archive = Archive::parse(&data).unwrap();
        assert_eq!(archive.symbol_table().unwrap().format(), format);
        assert_eq!(table(&archive), expected_table(&[("h.o", 0)]), "{file}");
    }
}

/// An input member rebuilt for the writer: name, data, symbols file.
struct Rebuilt {
    name: Vec<u8>,
    data: Vec<u8>,
    symbols: Option<Vec<Vec<u8>>>,
}

fn write(members: &[Rebuilt]) -> Vec<u8> {
    let symbols: Vec<Option<Vec<&[u8]>>> = members
        .iter()
        .map(|m| {
            m.symbols
                .as_ref()
                .map(|s| s.iter().map(Vec::as_slice).collect())
        })
        .collect();
    let new: Vec<NewMember<'_>> = members
        .iter()
        .zip(&symbols)
        .map(|(m, s)| NewMember {
            name: &m.name,
            data: &m.data,
            symbols: s.as_deref(),
        })
        .collect();
    let out = write_archive(&new).unwrap();
    // The streaming layout gives the same bytes.
    let specs: Vec<MemberSpec<'_>> = new.iter().map(NewMember::spec).collect();
    let layout = ArchiveLayout::new(&specs).unwrap();
    let mut streamed = layout.head().to_vec();
    for ((m, header), &offset) in new
        .iter()
        .zip(layout.member_headers())
        .zip(layout.member_offsets())
    {
        assert_eq!(offset, streamed.len() as u64);
        streamed.extend_from_slice(header);
        streamed.extend_from_slice(m.data);
        if m.data.len() % 2 == 1 {
            streamed.push(b'\n');
        }
    }
    assert_eq!(streamed, out);
    assert_eq!(layout.total_size(), out.len() as u64);
    out
}

/// What llvm-ar was given: the file's base name, its bytes, and its symbols
/// if it is an object file.
fn as_given(file: &str, object: bool) -> Rebuilt {
    Rebuilt {
        name: file.as_bytes().to_vec(),
        data: input(file),
        symbols: object.then(|| symbols(file)),
    }
}

#[test]
fn writer_matches_llvm_ar() {
    let bundles = [
        as_given("fat.bc", false),
        as_given("libdevice-with-a-long-name.bc", false),
        as_given("devbc.bc", false),
    ];
    assert_eq!(write(&bundles), read("gnu-bundles.a"));
    let compressed = [as_given("fatz.bc", false), as_given("objz.o", false)];
    assert_eq!(write(&compressed), read("gnu-compressed.a"));
    // host-object-long-name.o is a copy of h.o.
    let mut long = as_given("h.o", true);
    long.name = b"host-object-long-name.o".to_vec();
    let objects = [as_given("hobj.o", true), as_given("h.o", true), long];
    assert_eq!(write(&objects), read("gnu-objects.a"));

    // SYM64_THRESHOLD=0 llvm-ar cr gnu-sym64.a h.o fat.bc
    let (h, fat) = (input("h.o"), input("fat.bc"));
    let h_symbols = symbols("h.o");
    let h_symbols: Vec<&[u8]> = h_symbols.iter().map(Vec::as_slice).collect();
    let specs = [
        MemberSpec {
            name: b"h.o",
            size: h.len() as u64,
            symbols: Some(&h_symbols),
        },
        MemberSpec {
            name: b"fat.bc",
            size: fat.len() as u64,
            symbols: None,
        },
    ];
    let layout = ArchiveLayout::with_sym64_threshold(&specs, 0).unwrap();
    let mut out = layout.head().to_vec();
    for (header, data) in layout.member_headers().iter().zip([&h, &fat]) {
        out.extend_from_slice(header);
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    assert_eq!(out, read("gnu-sym64.a"));
    // LLVM switches when the last header would start at the threshold with a
    // 32-bit table.
    let small = ArchiveLayout::new(&specs).unwrap();
    assert_eq!(&small.head()[8..16], b"/       ");
    let last = small.member_offsets()[1];
    let below = ArchiveLayout::with_sym64_threshold(&specs, last + 1).unwrap();
    assert_eq!(below, small);
    let at = ArchiveLayout::with_sym64_threshold(&specs, last).unwrap();
    assert_eq!(&at.head()[8..16], b"/SYM64/ ");
    assert_eq!(at.member_offsets()[1], last + 4 + 4 * 3);
}

/// A device member of an unbundled archive: which input member and entry it
/// comes from, and the input file the payload was made from.
struct Device {
    member: &'static str,
    entry_id: &'static str,
    payload: &'static str,
    object: bool,
}

/// Rebuilds what `clang-offload-bundler -unbundle -type=a` wrote into
/// `output` from the members and entries it took, and compares.
fn check_unbundled(input_archive: &str, output: &str, devices: &[Device]) {
    let data = read(input_archive);
    let archive = Archive::parse(&data).unwrap();
    let inputs = members(&archive);
    let rebuilt: Vec<Rebuilt> = devices
        .iter()
        .map(|d| {
            let member = inputs
                .iter()
                .find(|m| m.name() == d.member.as_bytes())
                .unwrap();
            let payload = input(d.payload);
            // For binary bundles, the payload is also what the member holds.
            if let Ok(bundle) = Bundle::parse(member.data()) {
                let entry = bundle
                    .entries()
                    .map(|e| e.unwrap())
                    .find(|e| e.id() == d.entry_id.as_bytes())
                    .unwrap();
                assert_eq!(entry.payload(), payload);
            }
            Rebuilt {
                name: device_member_name(member.name(), d.entry_id),
                data: payload,
                symbols: d.object.then(|| symbols(d.payload)),
            }
        })
        .collect();
    let expected = read(output);
    let got = write(&rebuilt);
    assert!(
        got == expected,
        "{output}: writer output differs from LLVM's"
    );
}

const GFX906: &str = "openmp-amdgcn-amd-amdhsa--gfx906";
const GFX90A: &str = "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+";
const HIP906: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const HIP90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+";

fn device(member: &'static str, entry_id: &'static str, payload: &'static str) -> Device {
    let object = payload.ends_with(".o") || payload.ends_with(".bc");
    Device {
        member,
        entry_id,
        payload,
        object,
    }
}

#[test]
fn writer_and_names_match_the_bundlers_device_archives() {
    check_unbundled(
        "gnu-bundles.a",
        "unbundle-bundles-gfx906.a",
        &[
            device("fat.bc", GFX906, "gfx906.txt"),
            device("libdevice-with-a-long-name.bc", GFX906, "gfx906.txt"),
            // Bitcode: LLVM takes its symbols from the IR.
            device("devbc.bc", GFX906, "k-gfx906.bc"),
        ],
    );
    check_unbundled(
        "gnu-bundles.a",
        "unbundle-bundles-gfx90a-xnack.a",
        &[device("fat.bc", GFX90A, "gfx90a.txt")],
    );
    check_unbundled(
        "gnu-objects.a",
        "unbundle-objects-hip-gfx906.a",
        &[device("hobj.o", HIP906, "k-gfx906.o")],
    );
    check_unbundled(
        "gnu-objects.a",
        "unbundle-objects-openmp-gfx90a-xnack.a",
        &[device("hobj.o", HIP90A, "k-gfx90a-xnack.o")],
    );
    check_unbundled(
        "gnu-compressed.a",
        "unbundle-compressed-hip-gfx90a-xnack.a",
        &[
            device("fatz.bc", GFX90A, "gfx90a.txt"),
            device("objz.o", HIP90A, "k-gfx90a-xnack.o"),
        ],
    );
    check_unbundled(
        "gnu-compressed.a",
        "unbundle-compressed-openmp-gfx906.a",
        &[
            device("fatz.bc", GFX906, "gfx906.txt"),
            device("objz.o", HIP906, "k-gfx906.o"),
        ],
    );
    // -allow-missing-bundles with nothing to give: an empty archive.
    assert_eq!(read("unbundle-missing.a"), b"!<arch>\n");
    assert_eq!(write(&[]), b"!<arch>\n");
    assert_eq!(Archive::parse(b"!<arch>\n").unwrap().members().count(), 0);
}

/// Every archive the bundler wrote for `-type=a -unbundle`, rebuilt from its
/// own members by `write_archive_indexed`, which finds each member's symbols
/// itself: ELF objects and bitcode (from its symbol table) alike, in member
/// order, give LLVM's bytes, index included.
#[test]
fn indexed_writer_gives_the_bundlers_archives() {
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if !(name.starts_with("unbundle-") && name.ends_with(".a")) {
            continue;
        }
        let llvm = std::fs::read(&path).unwrap();
        let archive = Archive::parse(&llvm).unwrap();
        let parts: Vec<(&[u8], &[u8])> = members(&archive)
            .iter()
            .map(|m| (m.name(), m.data()))
            .collect();
        let ours = write_archive_indexed(&parts).unwrap();
        assert!(ours == llvm, "{name}: differs from LLVM's");
        seen += 1;
    }
    assert_eq!(seen, 9);
}

/// The HIP -fgpu-rdc device bitcode (clang 22, two processors): each
/// member's symbol table, filtered as LLVM's archive writer filters, is the
/// index LLVM wrote for it; what the filter leaves out is there too.
#[test]
fn hip_rdc_bitcode_symbol_tables_are_llvm_s_index() {
    for output in ["unbundle-hip-rdc-gfx906.a", "unbundle-hip-rdc-gfx90a.a"] {
        let data = read(output);
        let archive = Archive::parse(&data).unwrap();
        let index = table(&archive);
        let members = members(&archive);
        assert_eq!(members.len(), 2);
        for (i, m) in members.iter().enumerate() {
            let contents = BitcodeFileContents::parse(m.data()).unwrap();
            assert_eq!(contents.module_count(), 1);
            let symtab = contents.current_symtab().unwrap().unwrap();
            assert_eq!((symtab.version(), symtab.producer()), (3, &b"22.1.8"[..]));
            let ours: Vec<Vec<u8>> = symtab
                .defined_global_symbols()
                .map(<[u8]>::to_vec)
                .collect();
            let llvm: Vec<Vec<u8>> = index
                .iter()
                .filter(|(_, member)| *member == i)
                .map(|(name, _)| name.clone())
                .collect();
            assert_eq!(ours, llvm, "{output}: member {i}");
        }
        let flags = |member: usize, name: &[u8]| {
            let contents = BitcodeFileContents::parse(members[member].data()).unwrap();
            let symtab = contents.current_symtab().unwrap().unwrap();
            let symbol = symtab.symbols().find(|s| s.name() == name).unwrap();
            (
                symbol.is_global(),
                symbol.is_undefined(),
                symbol.is_format_specific(),
                symbol.is_weak(),
            )
        };
        // rdc-a: the static function is local, the call into rdc-b undefined.
        assert_eq!(flags(0, b"_ZL6hiddeni"), (false, false, false, false));
        assert_eq!(flags(0, b"_Z12defined_in_bi"), (true, true, false, false));
        assert_eq!(flags(0, b"llvm.compiler.used"), (true, false, true, false));
        assert_eq!(flags(0, b"c_alias"), (true, false, false, false));
        // rdc-b: the weak function is indexed, rdc-a's variable is not.
        assert_eq!(flags(1, b"_Z7weak_fni"), (true, false, false, true));
        assert_eq!(flags(1, b"counter"), (true, true, false, false));
    }
}

/// Bitcode whose symbol table another LLVM wrote: LLVM 22 reads the symbols
/// from the IR, we leave the member unindexed (docs/differences.md); the
/// rest of the archive is LLVM's.
#[test]
fn bitcode_with_a_table_llvm_would_rebuild_is_not_indexed() {
    let llvm = read("unbundle-hip-rdc-gfx906.a");
    let archive = Archive::parse(&llvm).unwrap();
    let mut parts: Vec<(Vec<u8>, Vec<u8>)> = members(&archive)
        .iter()
        .map(|m| (m.name().to_vec(), m.data().to_vec()))
        .collect();
    // The producer is the string table's "22.1.8" (the identification
    // block spells "LLVM22.1.8" as 6-bit characters, not bytes).
    let data = &mut parts[1].1;
    let at = data.windows(6).rposition(|w| w == b"22.1.8").unwrap();
    data[at..at + 2].copy_from_slice(b"21");
    let contents = BitcodeFileContents::parse(data).unwrap();
    assert_eq!(contents.current_symtab().unwrap(), None);
    let pairs: Vec<(&[u8], &[u8])> = parts
        .iter()
        .map(|(n, d)| (n.as_slice(), d.as_slice()))
        .collect();
    let ours = write_archive_indexed(&pairs).unwrap();
    let ours = Archive::parse(&ours).unwrap();
    let index = table(&ours);
    let llvm_index = table(&archive);
    assert!(index.iter().all(|(_, member)| *member == 0));
    assert_eq!(
        index,
        llvm_index
            .into_iter()
            .filter(|(_, member)| *member == 0)
            .collect::<Vec<_>>()
    );
}

#[test]
fn device_member_names_match_the_bundler() {
    // Names clang-offload-bundler 22 gave to the members of the archives it
    // wrote for -unbundle -type=a from archives whose members had these
    // names (made with a script, since llvm-ar stores base names), for
    // entries stored as these IDs.
    let x86 = "openmp-x86_64-unknown-linux-gnu-";
    let sm70 = "openmp-nvptx64-nvidia-cuda-unknown-sm_70";
    let spirv = "hip-spirv64-amd-amdhsa--amdgcnspirv";
    for (member, id, expected) in [
        (
            "fat.bc",
            GFX90A,
            "fat-openmp-amdgcn-amd-amdhsa--gfx90a_xnack+fat.bc",
        ),
        (
            "noext",
            GFX90A,
            "noext-openmp-amdgcn-amd-amdhsa--gfx90a_xnack+noext.bc",
        ),
        (
            "a.b.c",
            GFX906,
            "a.b-openmp-amdgcn-amd-amdhsa--gfx906a.b.bc",
        ),
        (
            "multi.dot.o",
            x86,
            "multi.dot-openmp-x86_64-unknown-linux-gnu-multi.dot.o",
        ),
        ("nodot", x86, "nodot-openmp-x86_64-unknown-linux-gnu-nodot"),
        (".hidden", x86, "-openmp-x86_64-unknown-linux-gnu-.hidden"),
        (
            "co:lon.o",
            x86,
            "co_lon-openmp-x86_64-unknown-linux-gnu-co_lon.o",
        ),
        (
            "multi.dot.o",
            spirv,
            "multi.dot-hip-spirv64-amd-amdhsa--amdgcnspirvmulti.dot.o",
        ),
        (
            "multi.dot.o",
            sm70,
            "multi.dot-openmp-nvptx64-nvidia-cuda-unknown-sm_70multi.dot.cubin",
        ),
        (
            ".hidden",
            sm70,
            "-openmp-nvptx64-nvidia-cuda-unknown-sm_70.cubin",
        ),
        ("dir/x.o", x86, "x-openmp-x86_64-unknown-linux-gnu-x.o"),
        ("x/", x86, ".-openmp-x86_64-unknown-linux-gnu-."),
        ("a//b.o", x86, "b-openmp-x86_64-unknown-linux-gnu-b.o"),
        ("..", x86, "..-openmp-x86_64-unknown-linux-gnu-.."),
        (
            "..",
            sm70,
            "..-openmp-nvptx64-nvidia-cuda-unknown-sm_70...cubin",
        ),
        (
            "dir/../up.o",
            x86,
            "up-openmp-x86_64-unknown-linux-gnu-up.o",
        ),
        ("/", x86, "/-openmp-x86_64-unknown-linux-gnu-/"),
        (
            "//",
            sm70,
            "/-openmp-nvptx64-nvidia-cuda-unknown-sm_70/.cubin",
        ),
        ("//x", x86, "//x-openmp-x86_64-unknown-linux-gnu-//x"),
        ("//net/y.o", x86, "y-openmp-x86_64-unknown-linux-gnu-y.o"),
        ("//x.o", x86, "//x-openmp-x86_64-unknown-linux-gnu-//x.o"),
        ("a.", x86, "a-openmp-x86_64-unknown-linux-gnu-a."),
        ("...", x86, "..-openmp-x86_64-unknown-linux-gnu-..."),
        (
            "x.tar.gz",
            x86,
            "x.tar-openmp-x86_64-unknown-linux-gnu-x.tar.gz",
        ),
        // Target IDs count only with a processor clang knows.
        (
            "m.o",
            "openmp-amdgcn-amd-amdhsa--gfx9999",
            "m-openmp-amdgcn-amd-amdhsa--gfx9999m.o",
        ),
        (
            "m.o",
            "openmp-x86_64-unknown-linux-gnu-gfx906",
            "m-openmp-x86_64-unknown-linux-gnu-gfx906m.bc",
        ),
    ] {
        assert_eq!(
            String::from_utf8(device_member_name(member.as_bytes(), id)).unwrap(),
            expected,
            "{member} {id}"
        );
    }
}

// ---------------------------------------------------------------------------
// Malformed archives: each class of fault, with its kind, offset and member.

fn header(name: &str, size: &str) -> Vec<u8> {
    let mut h = format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).into_bytes();
    assert_eq!(h.len(), 60);
    h.truncate(60);
    h
}

fn archive(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for p in parts {
        out.extend_from_slice(p);
    }
    out
}

/// The first item of `members()`, which must be an error; then the end.
fn first_error(data: &[u8]) -> clangoffload::Error {
    let parsed = Archive::parse(data).unwrap();
    let mut it = parsed.members();
    let err = it.next().unwrap().unwrap_err();
    assert!(it.next().is_none());
    assert!(it.next().is_none());
    err
}

#[test]
fn not_an_archive() {
    let err = Archive::parse(b"\x7fELF\x02\x01\x01").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotAnArchive);
    assert_eq!(err.offset(), 0);
    assert_eq!(
        Archive::parse(b"").unwrap_err().kind(),
        ErrorKind::NotAnArchive
    );
    let err = Archive::parse(b"!<ar").unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::Truncated {
            field: Field::ArchiveMagic,
            needed: 8,
            available: 4
        }
    );
}

#[test]
fn thin_archive() {
    let data = [b"!<thin>\n".as_slice(), &header("/0", "0")].concat();
    let err = Archive::parse(&data).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ThinArchive);
    assert!(err.to_string().contains("thin"));
}

#[test]
fn truncated_header() {
    let err = first_error(&archive(&[&header("a.o/", "2")[..30]]));
    assert_eq!(
        err.kind(),
        ErrorKind::Truncated {
            field: Field::MemberHeader,
            needed: 60,
            available: 30
        }
    );
    assert_eq!((err.offset(), err.entry()), (8, Some(0)));
}

#[test]
fn bad_size_digits() {
    for size in ["12a", " 12", "", "-1", "1 2"] {
        let err = first_error(&archive(&[&header("a.o/", size), b"xx"]));
        assert_eq!(
            err.kind(),
            ErrorKind::BadDecimal {
                field: Field::MemberSize
            },
            "{size:?}"
        );
        assert_eq!(err.offset(), 8 + 48);
    }
}

#[test]
fn size_past_end() {
    let err = first_error(&archive(&[&header("a.o/", "3"), b"xx"]));
    assert_eq!(
        err.kind(),
        ErrorKind::MemberOutOfBounds {
            offset: 68,
            size: 3,
            len: 70
        }
    );
    assert_eq!((err.offset(), err.entry()), (8 + 48, Some(0)));
}

#[test]
fn size_overflow() {
    // The largest size the field holds, far past the end: no wrap-around.
    let err = first_error(&archive(&[&header("a.o/", "9999999999")]));
    assert_eq!(
        err.kind(),
        ErrorKind::MemberOutOfBounds {
            offset: 68,
            size: 9_999_999_999,
            len: 68
        }
    );
    // The largest BSD name length and long-name offset the name field holds.
    let err = first_error(&archive(&[&header("#1/9999999999999", "2"), b"ab"]));
    assert_eq!(
        err.kind(),
        ErrorKind::BsdNameOutOfBounds {
            len: 9_999_999_999_999,
            size: 2
        }
    );
    let err = first_error(&archive(&[
        &header("//", "4"),
        b"a/\n\n",
        &header("/999999999999999", "0"),
    ]));
    assert_eq!(
        err.kind(),
        ErrorKind::LongNameOutOfBounds {
            offset: 999_999_999_999_999,
            len: 4
        }
    );
    assert_eq!(err.entry(), Some(1));
}

#[test]
fn bad_terminator() {
    let mut h = header("a.o/", "0");
    h[58] = b'\'';
    let err = first_error(&archive(&[&h]));
    assert_eq!(err.kind(), ErrorKind::BadMemberTerminator);
    assert_eq!(err.offset(), 8 + 58);
}

#[test]
fn long_name_reference_out_of_range() {
    let table: &[u8] = b"a-long-member-name.o/\n";
    let data = archive(&[&header("//", "22"), table, &header("/22", "0")]);
    let err = first_error(&data);
    assert_eq!(
        err.kind(),
        ErrorKind::LongNameOutOfBounds {
            offset: 22,
            len: 22
        }
    );
    assert_eq!((err.offset(), err.entry()), (8 + 60 + 22 + 1, Some(1)));
    // In range but not at a "/\n"-terminated name.
    let data = archive(&[&header("//", "4"), b"abcd", &header("/1", "0")]);
    assert_eq!(
        first_error(&data).kind(),
        ErrorKind::UnterminatedLongName { offset: 1 }
    );
    // A good reference into the middle of a name is that name's tail.
    let data = archive(&[&header("//", "22"), table, &header("/2", "0")]);
    let parsed = Archive::parse(&data).unwrap();
    assert_eq!(members(&parsed)[0].name(), b"long-member-name.o");
}

#[test]
fn missing_long_name_table() {
    let err = first_error(&archive(&[&header("/0", "0")]));
    assert_eq!(err.kind(), ErrorKind::MissingLongNameTable { offset: 0 });
    assert_eq!((err.offset(), err.entry()), (9, Some(0)));
    let err = first_error(&archive(&[&header("/x", "0")]));
    assert_eq!(
        err.kind(),
        ErrorKind::BadDecimal {
            field: Field::LongNameOffset
        }
    );
}

#[test]
fn bsd_name_length_past_the_member() {
    let err = first_error(&archive(&[&header("#1/5", "4"), b"abcd"]));
    assert_eq!(
        err.kind(),
        ErrorKind::BsdNameOutOfBounds { len: 5, size: 4 }
    );
    assert_eq!(err.offset(), 8 + 3);
    let err = first_error(&archive(&[&header("#1/x", "4"), b"abcd"]));
    assert_eq!(
        err.kind(),
        ErrorKind::BadDecimal {
            field: Field::NameLength
        }
    );
    // A name as long as the member leaves empty data.
    let data = archive(&[&header("#1/4", "4"), b"ab\0\0"]);
    let parsed = Archive::parse(&data).unwrap();
    let m = members(&parsed)[0];
    assert_eq!(
        (m.name(), m.data(), m.data_offset()),
        (&b"ab"[..], &b""[..], 72)
    );
}

#[test]
fn good_members_before_an_error_are_yielded() {
    let data = read("gnu-bundles.a");
    let parsed = Archive::parse(&data).unwrap();
    let all = members(&parsed);
    let cut = &data[..all[2].data_offset() as usize + 10];
    let parsed = Archive::parse(cut).unwrap();
    let items: Vec<_> = parsed.members().collect();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].as_ref().unwrap().name(), b"fat.bc");
    assert_eq!(
        items[1].as_ref().unwrap().name(),
        b"libdevice-with-a-long-name.bc"
    );
    let err = items[2].as_ref().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::MemberOutOfBounds { .. }));
    assert_eq!(err.entry(), Some(3));
    assert_eq!(err.offset(), all[2].header_offset() + 48);
}

#[test]
fn special_members_are_skipped_and_short_names_resolved() {
    let data = archive(&[
        &header("/", "4"),
        &[0, 0, 0, 0],
        &header("a.o/", "1"),
        b"x\n",
        &header("__.SYMDEF/", "0"),
        &header("b.o", "0"),
        &header("#x/", "0"),
        &header("//", "0"),
    ]);
    let parsed = Archive::parse(&data).unwrap();
    assert_eq!(
        parsed.symbol_table().unwrap().symbols().count(),
        0,
        "an empty table"
    );
    let names: Vec<_> = members(&parsed).iter().map(|m| m.name().to_vec()).collect();
    assert_eq!(names, [&b"a.o"[..], b"__.SYMDEF", b"b.o", b"#x"]);
    assert_eq!(members(&parsed)[0].data(), b"x");
}

#[test]
fn symbol_table_faults() {
    let data = archive(&[&header("/", "8"), &[0, 0, 0, 9, 0, 0, 0, 8]]);
    let parsed = Archive::parse(&data).unwrap();
    let err = parsed
        .symbol_table()
        .unwrap()
        .symbols()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::SymbolCountTooLarge { count: 9, max: 1 }
    );
    let data = archive(&[&header("/", "8"), &[0, 0, 0, 1, 0, 0, 0, 8]]);
    let parsed = Archive::parse(&data).unwrap();
    let mut symbols = parsed.symbol_table().unwrap().symbols();
    let err = symbols.next().unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SymbolNameOutOfBounds);
    assert_eq!(err.offset(), 8 + 60 + 8);
    assert!(symbols.next().is_none());
}

#[test]
fn writer_refuses_what_cannot_be_read_back() {
    let bad = |name: &'static [u8], symbol: &'static [u8]| {
        let symbols: &[&[u8]] = &[symbol];
        let err = write_archive(&[
            NewMember {
                name: b"ok",
                data: b"",
                symbols: None,
            },
            NewMember {
                name,
                data: b"",
                symbols: Some(symbols),
            },
        ])
        .unwrap_err();
        assert_eq!(err.entry(), Some(1));
        err.kind()
    };
    assert_eq!(bad(b"", b"s"), ErrorKind::InvalidMemberName);
    assert_eq!(bad(b"a\nb", b"s"), ErrorKind::InvalidMemberName);
    assert_eq!(bad(b"a", b"s\0t"), ErrorKind::InvalidSymbolName);
}

/// An odd-sized last member without its padding byte is read, and
/// `check_final_padding` reports the missing byte where it should be.
#[test]
fn a_missing_final_padding_byte_is_read_and_reported() {
    let whole = write_archive(&[NewMember {
        name: b"odd.o",
        data: b"abc",
        symbols: None,
    }])
    .unwrap();
    assert_eq!(
        Archive::parse(&whole).unwrap().check_final_padding(),
        Ok(())
    );
    let cut = &whole[..whole.len() - 1];
    let archive = Archive::parse(cut).unwrap();
    assert_eq!(members(&archive)[0].data(), b"abc");
    let err = archive.check_final_padding().unwrap_err();
    assert_eq!(err.offset(), cut.len() as u64);
    assert_eq!(
        err.kind(),
        ErrorKind::Truncated {
            field: Field::MemberPadding,
            needed: 1,
            available: 0
        }
    );
}
