//! The committed ABI snapshot `capi/abi/clangoffload.abi` must describe the C
//! ABI that `include/clangoffload.h` declares, and the ABI may only break with
//! a new major version.
//!
//! Bless (rewrite) the snapshot after regenerating the header:
//!
//! ```sh
//! CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test header   # the header first
//! CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test abi      # then the snapshot
//! ```
//!
//! The snapshot is built from the header: every function signature
//! (parameter types, not names), every struct's size, alignment and fields
//! (offset, size, type), every enum's size and values, every `#define`
//! constant, every opaque struct's name, and the Cargo version. Sizes,
//! offsets and values are measured by a C probe program generated from the
//! parsed header and compiled with `cc` against `include/`, never guessed.
//! The format is in `capi/abi/README.md`.
//!
//! Differences from the committed snapshot are classified:
//! - compatible: a new function, struct, opaque struct, enum, enum value or
//!   constant, or only a new version line;
//! - incompatible: a removed item, a changed function signature, struct
//!   size, alignment, field offset, size or type, a field added to an
//!   existing struct, a changed enum size or value, a changed constant.
//!
//! "Major" is the first number of the version, also for 0.x versions: 0.1.0
//! and 0.9.0 are the same major (0), so an incompatible change in 0.x needs
//! 1.0.0. (Cargo treats 0.x minor versions as breaking; this test is
//! stricter: an ABI break always needs the first number to move.)
//!
//! With the snapshot's major equal to Cargo's, an incompatible difference
//! fails (and blessing refuses it) until the major version is bumped in
//! Cargo.toml (`workspace.package`); compatible differences fail until
//! blessed, so the snapshot stays complete. With another major, the test
//! fails until blessed, and blessing accepts anything.
//! `CLANGOFFLOAD_VERSION_MAJOR/MINOR/PATCH` are left out of the constants:
//! they are the `version` line.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

#[path = "../abi/header_model.rs"]
mod header_model;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use header_model::Header;

const BLESS: &str = "CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test abi";
const MAJOR_BUMP: &str = "an incompatible ABI change needs a new major version: bump the \
    version in Cargo.toml (workspace.package) and re-bless";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn snapshot_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("abi/clangoffload.abi")
}

// ---------------------------------------------------------------------------
// Measuring: a C probe generated from the parsed header.

/// The C program that prints, one per line, what the snapshot needs
/// measured: `struct NAME SIZE ALIGN`, `field NAME.FIELD OFFSET SIZE`,
/// `enum NAME SIZE`, `enumerator NAME.VARIANT VALUE`, `const NAME VALUE`.
fn probe_source(header: &Header) -> String {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"clangoffload.h\"\n\nint main(void) {\n",
    );
    for s in &header.structs {
        let n = &s.name;
        let _ = writeln!(
            c,
            "  printf(\"struct {n} %zu %zu\\n\", sizeof(struct {n}), _Alignof(struct {n}));"
        );
        for f in &s.fields {
            let m = &f.name;
            let _ = writeln!(
                c,
                "  printf(\"field {n}.{m} %zu %zu\\n\", offsetof(struct {n}, {m}), \
                 sizeof(((struct {n} *)0)->{m}));"
            );
        }
    }
    for e in &header.enums {
        let n = &e.name;
        let _ = writeln!(c, "  printf(\"enum {n} %zu\\n\", sizeof({n}));");
        for (v, _) in &e.variants {
            let _ = writeln!(
                c,
                "  printf(\"enumerator {n}.{v} %lld\\n\", (long long){v});"
            );
        }
    }
    for d in header
        .defines
        .iter()
        .filter(|d| !is_version_define(&d.name))
    {
        let n = &d.name;
        let _ = writeln!(
            c,
            "  if (({n}) < 0) printf(\"const {n} %lld\\n\", (long long)({n}));\n  \
             else printf(\"const {n} %llu\\n\", (unsigned long long)({n}));"
        );
    }
    c.push_str("  return 0;\n}\n");
    c
}

fn is_version_define(name: &str) -> bool {
    name.starts_with("CLANGOFFLOAD_VERSION_")
}

/// Compiles and runs the probe; its lines by their first two words.
fn measure(header: &Header) -> BTreeMap<(String, String), Vec<String>> {
    // Under Cargo's CARGO_TARGET_TMPDIR, replaced by each run (as common.rs's
    // scratch_path, which this test does not include).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("clangoffload-abi-probe");
    std::fs::create_dir_all(&dir).expect("create the probe directory");
    let source = dir.join("probe.c");
    let program = dir.join("probe");
    std::fs::write(&source, probe_source(header)).expect("write the probe");
    // Warnings are not wanted here (`x < 0` on unsigned constants); the
    // header itself is checked with -Werror by tests/c_program.rs.
    let cc = Command::new("cc")
        .args(["-std=c11", "-w", "-I"])
        .arg(root().join("include"))
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .output()
        .expect("cc runs");
    assert!(
        cc.status.success(),
        "the ABI probe does not compile:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = Command::new(&program).output().expect("the probe runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.status.success(), "the ABI probe failed");
    String::from_utf8(run.stdout)
        .expect("probe output is UTF-8")
        .lines()
        .map(|line| {
            let mut words = line.split(' ').map(str::to_string);
            let kind = words.next().unwrap_or_default();
            let name = words.next().unwrap_or_default();
            ((kind, name), words.collect())
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The snapshot: lines of text, each one item.

/// Writes the snapshot of `header`, measured, with `version`.
fn snapshot_text(header: &Header, version: &str) -> String {
    let measured = measure(header);
    let get = |kind: &str, name: &str| -> &Vec<String> {
        measured
            .get(&(kind.to_string(), name.to_string()))
            .unwrap_or_else(|| panic!("the probe did not measure {kind} {name}"))
    };
    let mut out = String::from(
        "# The C ABI of include/clangoffload.h, measured (see capi/abi/README.md).\n\
         # Generated by capi/tests/abi.rs; do not edit. Bless with:\n",
    );
    let _ = writeln!(out, "# {BLESS}");
    let _ = writeln!(out, "version {version}");

    let mut consts: Vec<String> = header
        .defines
        .iter()
        .filter(|d| !is_version_define(&d.name))
        .map(|d| format!("const {} = {}", d.name, get("const", &d.name)[0]))
        .collect();
    consts.sort();
    out.extend(consts.iter().map(|l| format!("{l}\n")));

    let mut enums: Vec<&header_model::Enum> = header.enums.iter().collect();
    enums.sort_by(|a, b| a.name.cmp(&b.name));
    for e in enums {
        let _ = writeln!(out, "enum {} size {}", e.name, get("enum", &e.name)[0]);
        let mut values: Vec<(i128, &str)> = e
            .variants
            .iter()
            .map(|(v, _)| {
                let key = format!("{}.{v}", e.name);
                let value = get("enumerator", &key)[0].parse().expect("an enum value");
                (value, v.as_str())
            })
            .collect();
        values.sort();
        for (value, v) in values {
            let _ = writeln!(out, "enum {}.{v} = {value}", e.name);
        }
    }

    let mut functions: Vec<String> = header
        .functions
        .iter()
        .map(|f| format!("fn {}", f.signature()))
        .collect();
    functions.sort();
    out.extend(functions.iter().map(|l| format!("{l}\n")));

    let mut opaque: Vec<&String> = header.opaque.iter().collect();
    opaque.sort();
    for name in opaque {
        let _ = writeln!(out, "opaque {name}");
    }

    let mut aliases: Vec<&(String, String)> = header.aliases.iter().collect();
    aliases.sort();
    for (name, ty) in aliases {
        let _ = writeln!(out, "typedef {name} = {ty}");
    }

    let mut structs: Vec<&header_model::Struct> = header.structs.iter().collect();
    structs.sort_by(|a, b| a.name.cmp(&b.name));
    for s in structs {
        let m = get("struct", &s.name);
        let _ = writeln!(out, "struct {} size {} align {}", s.name, m[0], m[1]);
        // Fields in layout order: a struct reads top to bottom.
        for f in &s.fields {
            let key = format!("{}.{}", s.name, f.name);
            let m = get("field", &key);
            let _ = writeln!(
                out,
                "struct {key} offset {} size {} type {}",
                m[0],
                m[1],
                f.full_type()
            );
        }
    }
    out
}

/// The items of a snapshot: key (`fn NAME`, `struct NAME.FIELD`, ...) to
/// the rest of the line, and the version.
#[derive(Default)]
struct Snapshot {
    version: Option<(u64, u64, u64)>,
    items: BTreeMap<String, String>,
}

fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().splitn(3, '.');
    let mut next = || parts.next()?.split(['-', '+']).next()?.parse().ok();
    Some((next()?, next()?, next()?))
}

impl Snapshot {
    fn parse(text: &str) -> Snapshot {
        let mut snapshot = Snapshot::default();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(v) = line.strip_prefix("version ") {
                snapshot.version = parse_version(v);
                continue;
            }
            // The key is the kind and the name: `fn NAME` (up to `(`),
            // otherwise the first two words.
            let split = if line.starts_with("fn ") {
                line.find('(').unwrap_or(line.len())
            } else {
                line.match_indices(' ')
                    .nth(1)
                    .map_or(line.len(), |(i, _)| i)
            };
            let (key, rest) = line.split_at(split);
            snapshot
                .items
                .insert(key.to_string(), rest.trim().to_string());
        }
        snapshot
    }
}

// ---------------------------------------------------------------------------
// Classifying the differences.

/// Differences between a committed snapshot and the current one.
#[derive(Debug, Default, PartialEq)]
struct Diff {
    /// Items that break callers built against the committed snapshot.
    incompatible: Vec<String>,
    /// New items, and a new version line.
    compatible: Vec<String>,
}

/// The struct a field key (`struct NAME.FIELD`) belongs to (`struct NAME`).
fn field_owner(key: &str) -> Option<&str> {
    key.strip_prefix("struct ")?;
    key.split_once('.').map(|(owner, _)| owner)
}

fn classify(committed: &Snapshot, current: &Snapshot) -> Diff {
    let mut diff = Diff::default();
    for (key, old) in &committed.items {
        match current.items.get(key) {
            None => diff.incompatible.push(format!("removed: {key} {old}")),
            Some(new) if new != old => diff
                .incompatible
                .push(format!("changed: {key} {old} -> {key} {new}")),
            Some(_) => {}
        }
    }
    for (key, new) in &current.items {
        if committed.items.contains_key(key) {
            continue;
        }
        // A field added to a struct that existed changes the layout
        // callers allocate and fill.
        match field_owner(key) {
            Some(owner) if committed.items.contains_key(owner) => diff
                .incompatible
                .push(format!("field added to an existing struct: {key} {new}")),
            _ => diff.compatible.push(format!("added: {key} {new}")),
        }
    }
    if committed.version != current.version {
        let show = |v: Option<(u64, u64, u64)>| {
            v.map_or("none".to_string(), |(a, b, c)| format!("{a}.{b}.{c}"))
        };
        diff.compatible.push(format!(
            "version: {} -> {}",
            show(committed.version),
            show(current.version)
        ));
    }
    diff
}

/// What the test does with a difference.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Nothing changed.
    Same,
    /// Blessing writes the new snapshot; without it, fail with this message.
    NeedsBless(String),
    /// Fail with this message, blessing included.
    Refused(String),
}

fn verdict(committed: &Snapshot, current: &Snapshot) -> Verdict {
    let diff = classify(committed, current);
    let list = |items: &[String]| items.iter().map(|i| format!("  {i}\n")).collect::<String>();
    let same_major = match (committed.version, current.version) {
        (Some(old), Some(new)) => old.0 == new.0,
        // No committed snapshot (or no version in it): the first bless.
        _ => false,
    };
    if diff.incompatible.is_empty() && diff.compatible.is_empty() {
        return Verdict::Same;
    }
    if same_major && !diff.incompatible.is_empty() {
        return Verdict::Refused(format!(
            "incompatible ABI changes (capi/abi/clangoffload.abi -> include/clangoffload.h):\n{}\
             {MAJOR_BUMP}",
            list(&diff.incompatible)
        ));
    }
    let reason = if same_major {
        "the ABI grew (compatible); the snapshot must list every item"
    } else {
        "the major version differs from the snapshot's"
    };
    Verdict::NeedsBless(format!(
        "{reason}: re-bless the ABI snapshot with `{BLESS}`\n{}{}",
        list(&diff.incompatible),
        list(&diff.compatible)
    ))
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn abi_snapshot_matches_the_header() {
    let text = std::fs::read_to_string(root().join("include/clangoffload.h"))
        .expect("read include/clangoffload.h");
    let header = header_model::parse(&text);
    let fresh = snapshot_text(&header, env!("CARGO_PKG_VERSION"));
    let path = snapshot_path();
    let committed_text = std::fs::read_to_string(&path).unwrap_or_default();
    let result = verdict(&Snapshot::parse(&committed_text), &Snapshot::parse(&fresh));
    let bless = std::env::var_os("CLANGOFFLOAD_BLESS").is_some();
    match result {
        Verdict::Refused(message) if bless => panic!("refusing to bless: {message}"),
        Verdict::Refused(message) | Verdict::NeedsBless(message) if !bless => panic!("{message}"),
        _ => {
            if bless && committed_text != fresh {
                std::fs::write(&path, &fresh).expect("write capi/abi/clangoffload.abi");
            }
            // Same items may still be written differently (comments, order).
            assert!(
                bless || committed_text == fresh,
                "capi/abi/clangoffload.abi is not in its canonical form: re-bless with `{BLESS}`"
            );
        }
    }
}

/// The value of `#define NAME VALUE` in the header text.
fn header_define(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|line| {
            let rest = line.trim().strip_prefix("#define ")?.trim();
            let (n, v) = rest.split_once(char::is_whitespace)?;
            (n == name).then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("include/clangoffload.h has no #define {name}"))
}

#[test]
fn header_version_agrees_with_cargo() {
    let text = std::fs::read_to_string(root().join("include/clangoffload.h"))
        .expect("read include/clangoffload.h");
    let pairs = [
        (
            "CLANGOFFLOAD_VERSION_MAJOR",
            env!("CARGO_PKG_VERSION_MAJOR"),
        ),
        (
            "CLANGOFFLOAD_VERSION_MINOR",
            env!("CARGO_PKG_VERSION_MINOR"),
        ),
        (
            "CLANGOFFLOAD_VERSION_PATCH",
            env!("CARGO_PKG_VERSION_PATCH"),
        ),
    ];
    for (name, cargo) in pairs {
        assert_eq!(
            header_define(&text, name),
            cargo,
            "{name} in include/clangoffload.h disagrees with Cargo.toml: update capi/src/lib.rs \
             and re-bless the header"
        );
    }
    // SAFETY: returns a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(clangoffload_capi::clangoffload_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

/// The classifier and the reader on synthetic snapshots and headers.
mod classifier {
    use super::*;

    const BASE: &str = "\
version 1.2.3
const A = 1
enum e size 4
enum e.E_ONE = 1
fn f(const uint8_t *, size_t) -> int
opaque h
struct s size 16 align 8
struct s.a offset 0 size 4 type uint32_t
struct s.b offset 8 size 8 type uint64_t
";

    fn edited(version: &str, from: &str, to: &str) -> Snapshot {
        let text = BASE.replace("version 1.2.3", &format!("version {version}"));
        assert!(from.is_empty() || text.contains(from), "{from}");
        Snapshot::parse(&text.replace(from, to))
    }

    fn incompatible(from: &str, to: &str) -> Vec<String> {
        let diff = classify(&Snapshot::parse(BASE), &edited("1.2.3", from, to));
        assert!(diff.compatible.is_empty(), "{diff:?}");
        diff.incompatible
    }

    #[test]
    fn unchanged_is_same() {
        let base = Snapshot::parse(BASE);
        assert_eq!(verdict(&base, &Snapshot::parse(BASE)), Verdict::Same);
    }

    #[test]
    fn removing_a_function_is_incompatible() {
        let found = incompatible("fn f(const uint8_t *, size_t) -> int\n", "");
        assert_eq!(found, ["removed: fn f (const uint8_t *, size_t) -> int"]);
    }

    #[test]
    fn changing_a_parameter_type_is_incompatible() {
        let found = incompatible("size_t) -> int", "uint32_t) -> int");
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("changed: fn f"), "{found:?}");
    }

    #[test]
    fn changing_a_return_type_is_incompatible() {
        assert_eq!(incompatible("-> int", "-> long").len(), 1);
    }

    #[test]
    fn changing_a_field_offset_is_incompatible() {
        let found = incompatible("s.b offset 8", "s.b offset 4");
        assert_eq!(
            found,
            ["changed: struct s.b offset 8 size 8 type uint64_t -> struct s.b offset 4 size 8 type uint64_t"]
        );
    }

    #[test]
    fn changing_a_field_type_is_incompatible() {
        assert_eq!(incompatible("type uint64_t", "type int64_t").len(), 1);
    }

    #[test]
    fn changing_a_struct_size_or_alignment_is_incompatible() {
        assert_eq!(incompatible("size 16 align 8", "size 24 align 8").len(), 1);
        assert_eq!(incompatible("size 16 align 8", "size 16 align 16").len(), 1);
    }

    #[test]
    fn removing_or_adding_a_field_of_an_existing_struct_is_incompatible() {
        let removed = incompatible("struct s.b offset 8 size 8 type uint64_t\n", "");
        assert!(removed[0].starts_with("removed: struct s.b"), "{removed:?}");
        let added = incompatible(
            "struct s.b offset 8 size 8 type uint64_t\n",
            "struct s.b offset 8 size 8 type uint64_t\nstruct s.c offset 4 size 4 type uint32_t\n",
        );
        assert!(added[0].starts_with("field added to an existing struct: struct s.c"));
    }

    #[test]
    fn changing_or_removing_an_enum_value_or_constant_is_incompatible() {
        assert_eq!(incompatible("E_ONE = 1", "E_ONE = 2").len(), 1);
        assert_eq!(incompatible("enum e.E_ONE = 1\n", "").len(), 1);
        assert_eq!(incompatible("enum e size 4", "enum e size 8").len(), 1);
        assert_eq!(incompatible("const A = 1", "const A = 2").len(), 1);
        assert_eq!(incompatible("const A = 1\n", "").len(), 1);
        assert_eq!(incompatible("opaque h\n", "").len(), 1);
    }

    #[test]
    fn additions_are_compatible() {
        let added = "const B = 2\nenum e.E_TWO = 2\nfn g(void) -> void\nopaque h2\n\
            struct t size 4 align 4\nstruct t.x offset 0 size 4 type uint32_t\n";
        let current = Snapshot::parse(&format!("{BASE}{added}"));
        let diff = classify(&Snapshot::parse(BASE), &current);
        assert!(diff.incompatible.is_empty(), "{diff:?}");
        assert_eq!(diff.compatible.len(), 6, "{diff:?}");
        // Not blessed: the snapshot must be rewritten.
        let Verdict::NeedsBless(message) = verdict(&Snapshot::parse(BASE), &current) else {
            panic!("additions need a bless");
        };
        assert!(message.contains("re-bless") && message.contains("added: fn g"));
    }

    #[test]
    fn a_new_version_alone_needs_a_bless() {
        let current = edited("1.3.0", "", "");
        let diff = classify(&Snapshot::parse(BASE), &current);
        assert_eq!(diff.compatible, ["version: 1.2.3 -> 1.3.0"]);
        assert!(matches!(
            verdict(&Snapshot::parse(BASE), &current),
            Verdict::NeedsBless(_)
        ));
    }

    #[test]
    fn an_incompatible_change_without_a_major_bump_is_refused() {
        for version in ["1.2.3", "1.3.0", "1.2.4"] {
            let current = edited(version, "s.b offset 8", "s.b offset 4");
            let Verdict::Refused(message) = verdict(&Snapshot::parse(BASE), &current) else {
                panic!("{version}: an incompatible change must be refused");
            };
            assert!(message.contains("struct s.b"), "{message}");
            assert!(message.contains(MAJOR_BUMP), "{message}");
        }
    }

    #[test]
    fn a_major_bump_lets_bless_through() {
        let current = edited("2.0.0", "fn f(const uint8_t *, size_t) -> int\n", "");
        let Verdict::NeedsBless(message) = verdict(&Snapshot::parse(BASE), &current) else {
            panic!("a new major version may break the ABI once blessed");
        };
        assert!(message.contains("major version differs") && message.contains("removed: fn f"));
    }

    #[test]
    fn zero_major_versions_count_as_major_zero() {
        let old = Snapshot::parse(&BASE.replace("version 1.2.3", "version 0.1.0"));
        let minor_bump = edited("0.2.0", "E_ONE = 1", "E_ONE = 5");
        assert!(matches!(verdict(&old, &minor_bump), Verdict::Refused(_)));
        let major_bump = edited("1.0.0", "E_ONE = 1", "E_ONE = 5");
        assert!(matches!(verdict(&old, &major_bump), Verdict::NeedsBless(_)));
    }

    #[test]
    fn a_missing_snapshot_is_blessed() {
        let current = Snapshot::parse(BASE);
        assert!(matches!(
            verdict(&Snapshot::default(), &current),
            Verdict::NeedsBless(_)
        ));
    }

    #[test]
    fn the_header_reader_knows_cbindgen_style() {
        let text = "/*\n * preamble\n */\n\n#ifndef G\n#define G\n\
            // A constant.\n#define K (1 << 3)\n\n\
            enum e\n#if defined(__cplusplus)\n  : uint32_t\n#endif\n {\n  // one\n  E_ONE = 1,\n  E_TWO = 2,\n};\n\
            #ifndef __cplusplus\n#if __STDC_VERSION__ >= 202311L\ntypedef enum e e;\n#else\ntypedef uint32_t e;\n#endif\n#endif\n\n\
            typedef struct o o;\n\n\
            typedef struct s {\n  // ptr\n  const uint8_t *ptr;\n  char msg[16];\n  e kind;\n} s;\n\n\
            #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n\
            // Doc.\nconst char *v(void);\n\n\
            int f(const struct s *a,\n      size_t n,\n      struct o **out);\n\n\
            #ifdef __cplusplus\n}  // extern \"C\"\n#endif\n#endif\n";
        let h = header_model::parse(text);
        assert!(h.preamble.contains("preamble"));
        assert_eq!(h.defines.len(), 1);
        assert_eq!(
            (h.defines[0].name.as_str(), h.defines[0].value.as_str()),
            ("K", "(1 << 3)")
        );
        assert_eq!(h.enums.len(), 1);
        assert_eq!(h.enums[0].underlying.as_deref(), Some("uint32_t"));
        assert_eq!(h.enums[0].variants.len(), 2);
        assert_eq!(h.opaque, ["o"]);
        assert!(h.aliases.is_empty(), "the enum's C typedef is the enum's");
        let s = &h.structs[0];
        let fields: Vec<String> = s
            .fields
            .iter()
            .map(|f| format!("{} {}", f.full_type(), f.name))
            .collect();
        assert_eq!(fields, ["const uint8_t * ptr", "char[16] msg", "e kind"]);
        let sigs: Vec<String> = h.functions.iter().map(|f| f.signature()).collect();
        assert_eq!(
            sigs,
            [
                "v(void) -> const char *",
                "f(const struct s *, size_t, struct o **) -> int"
            ]
        );
        assert_eq!(h.functions[0].doc, ["Doc."]);
    }
}
