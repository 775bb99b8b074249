//! `include/clangoffload.h` must be what cbindgen makes of the sources, and
//! every function in it must be documented.
//!
//! Regenerate (bless) the header after changing `capi/src` or `cbindgen.toml`:
//!
//! ```sh
//! CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test header
//! ```
//!
//! The ABI snapshot is a separate test: `CLANGOFFLOAD_BLESS=1 cargo test -p
//! clangoffload-capi --test abi` (see `capi/abi/README.md`).
//!
//! The documentation rule (`every_function_is_documented`), checked on the
//! committed header: each function prototype has a comment right above it
//! with
//! - a paragraph starting `Ownership:` (who frees what, with which function,
//!   or that there is nothing to free / the result is static storage);
//! - a paragraph starting `NULL:` (which pointers may be NULL and what then);
//! - a paragraph starting `Lifetime:` when the function hands out something
//!   that borrows: it returns a pointer (which must then be said to be
//!   "static storage"), or it writes through a non-`const` pointer to a
//!   handle (`T **`) or to a struct holding pointers or views;
//! - a `# Safety` section when it takes any pointer.
//!
//! Thread safety is stated once, in the preamble (its `Thread safety:`
//! paragraph, checked here too), and per function only where one deviates.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

#[path = "../abi/header_model.rs"]
mod header_model;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use header_model::{Function, Header};

fn header_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/clangoffload.h")
}

fn generate() -> String {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(Path::new(crate_dir).join("cbindgen.toml"))
        .expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("header is UTF-8")
}

#[test]
fn committed_header_is_current() {
    let path = header_path();
    let fresh = generate();
    if std::env::var_os("CLANGOFFLOAD_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/clangoffload.h is stale: run CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test header"
    );
}

/// Names of the structs that hold a pointer, directly or through a field of
/// another such struct.
fn structs_holding_pointers(header: &Header) -> BTreeSet<String> {
    let mut holding = BTreeSet::new();
    loop {
        let before = holding.len();
        for s in &header.structs {
            let has = s.fields.iter().any(|f| {
                f.ty.contains('*')
                    || f.ty
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .any(|word| holding.contains(word))
            });
            if has {
                holding.insert(s.name.clone());
            }
        }
        if holding.len() == before {
            return holding;
        }
    }
}

/// What the rule finds missing in one prototype's comment.
fn missing_parts(p: &Function, holding: &BTreeSet<String>) -> Vec<&'static str> {
    let para = |label: &str| p.doc.iter().any(|l| l.starts_with(label));
    let text = p.doc.join(" ");
    let mut missing = Vec::new();
    if p.doc.is_empty() {
        return vec!["a doc comment"];
    }
    if !para("Ownership:") {
        missing.push("an `Ownership:` paragraph");
    }
    if !para("NULL:") {
        missing.push("a `NULL:` paragraph");
    }
    let takes_pointer = p.params.iter().any(|q| q.contains('*'));
    if takes_pointer && !para("# Safety") {
        missing.push("a `# Safety` section");
    }
    let returns_pointer = p.returns.contains('*');
    let hands_out_views = p.params.iter().any(|q| {
        let writable = q.contains('*') && !q.starts_with("const ");
        let handle = q.contains("**");
        let words = q.split(|c: char| !(c.is_alphanumeric() || c == '_'));
        handle || (writable && words.into_iter().any(|w| holding.contains(w)))
    });
    if (returns_pointer || hands_out_views) && !para("Lifetime:") {
        missing.push("a `Lifetime:` paragraph (it hands out a pointer or views)");
    }
    if returns_pointer && !text.contains("static storage") {
        missing.push("the words \"static storage\" (it returns a pointer)");
    }
    missing
}

#[test]
fn every_function_is_documented() {
    let text = std::fs::read_to_string(header_path()).expect("read include/clangoffload.h");
    let header = header_model::parse(&text);
    for label in ["Ownership:", "Lifetime:", "NULL:", "Thread safety:"] {
        assert!(
            header.preamble.contains(label),
            "the header preamble (cbindgen.toml `header`) lacks its `{label}` paragraph"
        );
    }
    let holding = structs_holding_pointers(&header);
    assert!(
        holding.contains("clangoffload_bytes") && holding.contains("clangoffload_bundle_entry"),
        "the struct parser found no view structs: {holding:?}"
    );
    let found = &header.functions;
    assert!(
        found.len() > 50 && found.iter().any(|p| p.name == "clangoffload_version"),
        "the prototype parser found only {} functions",
        found.len()
    );
    let failures: Vec<String> = found
        .iter()
        .filter_map(|p| {
            let missing = missing_parts(p, &holding);
            (!missing.is_empty()).then(|| format!("  {}: lacks {}", p.name, missing.join(", ")))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "functions whose doc comment in include/clangoffload.h is incomplete \
         (edit the `///` comment in capi/src, then re-bless the header):\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_doc_rule_catches_what_it_should() {
    let header = "typedef struct v {\n  const uint8_t *ptr;\n} v;\n\
        typedef struct w {\n  struct v inner;\n} w;\n\
        #ifdef __cplusplus\nextern \"C\" {\n#endif\n\
        // Does a thing.\n//\n// Ownership: nothing to free.\n//\n// NULL: `out` NULL fails.\n\
        int f(const uint8_t *data,\n      size_t len,\n      struct w *out);\n\n\
        // Ownership: static storage.\n// NULL: never.\n// Lifetime: static storage.\n\
        const char *g(void);\n\n\
        int h(uint32_t x);\n";
    let header = header_model::parse(header);
    let holding = structs_holding_pointers(&header);
    assert_eq!(holding, BTreeSet::from(["v".to_string(), "w".to_string()]));
    let found = &header.functions;
    let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["f", "g", "h"]);
    assert_eq!(found[0].params.len(), 3);
    let f = missing_parts(&found[0], &holding);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f[0].contains("# Safety") && f[1].contains("Lifetime:"));
    assert!(missing_parts(&found[1], &holding).is_empty());
    assert_eq!(missing_parts(&found[2], &holding), ["a doc comment"]);
}
