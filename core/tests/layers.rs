//! The modules of each crate form layers: no import circle among the
//! top-level modules of core, capi, python or the CLI. A module's edges are
//! the `crate::` paths in its files (a name the crate root re-exports counts
//! for the module it comes from); comments are not code. A circle fails the
//! test with its modules named, so that the next move that tangles two
//! layers is seen where it is made.

// Test code: a panic is a failed test, and the sizes are small and known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::string_slice
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Edges = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The text of a file without its `//` comments (doc comments included).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment of each item of a `use` tree that starts at
/// `text` (after `crate::`): one name, or each name of a `{...}` group.
fn first_segments(text: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = text.strip_prefix('{') else {
        return vec![ident(text)];
    };
    // The group's top level: split at commas outside nested braces.
    let (mut depth, mut start, mut names) = (0usize, 0usize, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                names.push(ident(group[start..i].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(ident(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    names
}

/// The names `lib.rs` re-exports from each module (`pub use module::...`).
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for (at, _) in lib.match_indices("pub use ") {
        let rest = &lib[at + 8..];
        let Some((module, tree)) = rest.split_once("::") else {
            continue;
        };
        if module.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            continue;
        }
        for name in first_segments(tree.trim_start()) {
            map.insert(name, module.to_string());
        }
    }
    map
}

/// The crate's top-level modules and the modules each one imports.
fn edges(src: &Path) -> Edges {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            modules.insert(name, rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            modules.insert(name, vec![path]);
        }
    }
    let reexported = reexports(&code(&src.join("lib.rs")));
    let mut edges = Edges::new();
    for (module, files) in &modules {
        let targets = edges.entry(module.clone()).or_default();
        for file in files {
            let text = code(file);
            for (at, _) in text.match_indices("crate::") {
                for name in first_segments(&text[at + 7..]) {
                    let target = if modules.contains_key(&name) {
                        Some(&name)
                    } else {
                        reexported.get(&name)
                    };
                    if let Some(target) = target.filter(|t| *t != module) {
                        targets.insert(target.clone());
                    }
                }
            }
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's
/// algorithm; recursive: the graphs are a few dozen modules).
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

fn assert_layered(krate: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src");
    let edges = edges(&src);
    assert!(edges.len() > 5, "{krate}: too few modules read ({edges:?})");
    let found = circles(&edges);
    assert!(found.is_empty(), "{krate}: import circles among {found:?}");
}

#[test]
fn core_is_layered() {
    assert_layered("core");
}

#[test]
fn capi_is_layered() {
    assert_layered("capi");
}

#[test]
fn python_is_layered() {
    assert_layered("python");
}

#[test]
fn cli_is_layered() {
    assert_layered("cli");
}

#[test]
fn the_check_sees_a_circle() {
    let mut graph = Edges::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    graph.entry("d".into()).or_default().insert("a".into());
    assert_eq!(circles(&graph), [["a", "b", "c"]]);
    // And reads a group's names, nested groups and all.
    assert_eq!(
        first_segments("{bundler::{Plan, Piece}, id, Error};"),
        ["bundler", "id", "Error"]
    );
    // The real core has edges: error imports nothing, bundler imports some.
    let core = edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(core["error"].is_empty(), "{:?}", core["error"]);
    assert!(core["bundler"].contains("compressed"));
}
