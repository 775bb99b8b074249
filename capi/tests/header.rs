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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

/// A function prototype and the comment lines right above it (without `//`).
struct Prototype {
    name: String,
    returns: String,
    params: Vec<String>,
    doc: Vec<String>,
}

/// Every prototype of the header, in order. cbindgen writes each as one
/// statement ending in `);`, possibly over several lines, after `//` comment
/// lines, inside `extern "C"`.
fn prototypes(header: &str) -> Vec<Prototype> {
    let mut found = Vec::new();
    let mut doc: Vec<String> = Vec::new();
    let mut statement = String::new();
    let mut in_functions = false;
    for line in header.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("extern \"C\"") {
            in_functions = true;
            continue;
        }
        if !in_functions {
            continue;
        }
        if statement.is_empty() {
            if let Some(text) = trimmed.strip_prefix("//") {
                doc.push(text.strip_prefix(' ').unwrap_or(text).to_string());
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('}') {
                doc.clear();
                continue;
            }
        }
        statement.push_str(trimmed);
        statement.push(' ');
        if trimmed.ends_with(';') {
            found.push(split_prototype(&statement, std::mem::take(&mut doc)));
            statement.clear();
        }
    }
    found
}

fn split_prototype(statement: &str, doc: Vec<String>) -> Prototype {
    let open = statement.find('(').expect("a prototype has parameters");
    let close = statement.rfind(')').expect("a prototype has parameters");
    let head = statement[..open].trim();
    let name_at = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let params = statement[open + 1..close]
        .split(',')
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .collect();
    Prototype {
        name: head[name_at..].to_string(),
        returns: head[..name_at].trim().to_string(),
        params,
        doc,
    }
}

/// Names of the structs (and opaque or scalar typedefs) that hold a pointer,
/// directly or through a field of another such struct.
fn structs_holding_pointers(header: &str) -> BTreeSet<String> {
    let mut bodies: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in header.lines() {
        let trimmed = line.trim();
        if let Some((_, body)) = current.as_mut() {
            if let Some(rest) = trimmed.strip_prefix('}') {
                let name = rest.trim().trim_end_matches(';').trim().to_string();
                let (_, body) = current.take().unwrap();
                bodies.push((name, body));
            } else if !trimmed.starts_with("//") {
                body.push_str(trimmed);
                body.push('\n');
            }
        } else if let Some(rest) = trimmed.strip_prefix("typedef struct ") {
            if rest.ends_with('{') {
                current = Some((String::new(), String::new()));
            }
        }
    }
    let mut holding = BTreeSet::new();
    loop {
        let before = holding.len();
        for (name, body) in &bodies {
            let has = body.contains('*')
                || body
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|word| holding.contains(word));
            if has {
                holding.insert(name.clone());
            }
        }
        if holding.len() == before {
            return holding;
        }
    }
}

/// What the rule finds missing in one prototype's comment.
fn missing_parts(p: &Prototype, holding: &BTreeSet<String>) -> Vec<&'static str> {
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
    let header = std::fs::read_to_string(header_path()).expect("read include/clangoffload.h");
    let preamble_end = header
        .find("*/")
        .expect("the header starts with its preamble");
    let preamble = &header[..preamble_end];
    for label in ["Ownership:", "Lifetime:", "NULL:", "Thread safety:"] {
        assert!(
            preamble.contains(label),
            "the header preamble (cbindgen.toml `header`) lacks its `{label}` paragraph"
        );
    }
    let holding = structs_holding_pointers(&header);
    assert!(
        holding.contains("clangoffload_bytes") && holding.contains("clangoffload_bundle_entry"),
        "the struct parser found no view structs: {holding:?}"
    );
    let found = prototypes(&header);
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
    let holding = structs_holding_pointers(header);
    assert_eq!(holding, BTreeSet::from(["v".to_string(), "w".to_string()]));
    let found = prototypes(header);
    let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["f", "g", "h"]);
    assert_eq!(found[0].params.len(), 3);
    let f = missing_parts(&found[0], &holding);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f[0].contains("# Safety") && f[1].contains("Lifetime:"));
    assert!(missing_parts(&found[1], &holding).is_empty());
    assert_eq!(missing_parts(&found[2], &holding), ["a doc comment"]);
}
