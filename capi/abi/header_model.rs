//! A small reader of the C header cbindgen writes (`include/clangoffload.h`),
//! shared by `capi/tests/header.rs` (doc rules) and `capi/tests/abi.rs` (ABI
//! snapshot) through `#[path]`.
//!
//! It knows cbindgen's output style and nothing more, and says so loudly
//! (a panic naming the line) when it meets something else:
//! - `// ...` comment lines right above an item are its doc comment;
//! - `#define NAME VALUE` constants (defines without a value are skipped);
//! - `enum NAME` (optionally `: uint32_t` between `#if`s) `{ VARIANT = VALUE, ... };`,
//!   also `typedef enum [NAME] { ... } NAME;`;
//! - `typedef struct NAME { TYPE FIELD; TYPE FIELD[N]; ... } NAME;` (also
//!   `struct NAME { ... };`) and opaque `typedef struct NAME NAME;`;
//! - `typedef TYPE NAME;` aliases (those naming an enum are the C side of
//!   cbindgen's enum typedefs and are folded into the enum);
//! - function prototypes, possibly over several lines, ending in `;`.
//!
//! Preprocessor lines other than `#define` are ignored, so both branches of
//! an `#if` are read: cbindgen only uses them for the enum's underlying type
//! and for `extern "C"`.
#![allow(dead_code)]

/// One `#define NAME VALUE`.
pub struct Define {
    pub name: String,
    pub value: String,
    pub doc: Vec<String>,
}

/// One enum and its enumerators (values as written, if written).
pub struct Enum {
    pub name: String,
    pub underlying: Option<String>,
    pub variants: Vec<(String, Option<String>)>,
    pub doc: Vec<String>,
}

/// One struct field: `ty name[array]`.
pub struct Field {
    pub name: String,
    /// Normalized type, e.g. `const uint8_t *`.
    pub ty: String,
    /// The array length as written, e.g. `256` for `char message[256]`.
    pub array: Option<String>,
}

impl Field {
    /// The type with its array suffix, e.g. `char[256]`.
    pub fn full_type(&self) -> String {
        match &self.array {
            Some(n) => format!("{}[{n}]", self.ty),
            None => self.ty.clone(),
        }
    }
}

/// A struct with a body.
pub struct Struct {
    pub name: String,
    pub fields: Vec<Field>,
    pub doc: Vec<String>,
}

/// A function prototype.
pub struct Function {
    pub name: String,
    /// Normalized return type.
    pub returns: String,
    /// Each parameter as written, whitespace normalized (`void` alone is no
    /// parameter).
    pub params: Vec<String>,
    pub doc: Vec<String>,
}

impl Function {
    /// The parameter types, names dropped: `const uint8_t *data` gives
    /// `const uint8_t *`.
    pub fn param_types(&self) -> Vec<String> {
        self.params.iter().map(|p| strip_param_name(p)).collect()
    }

    /// `NAME(TYPES) -> RETURNS`, the ABI of the function: parameter names
    /// are not part of it.
    pub fn signature(&self) -> String {
        let types = self.param_types();
        let params = if types.is_empty() {
            "void".to_string()
        } else {
            types.join(", ")
        };
        format!("{}({params}) -> {}", self.name, self.returns)
    }
}

/// Everything the header declares.
#[derive(Default)]
pub struct Header {
    /// The text of the leading `/* ... */` block.
    pub preamble: String,
    pub defines: Vec<Define>,
    pub enums: Vec<Enum>,
    pub structs: Vec<Struct>,
    /// Opaque structs (`typedef struct NAME NAME;`), by name.
    pub opaque: Vec<String>,
    /// `typedef TYPE NAME;` aliases that are not an enum's: (name, type).
    pub aliases: Vec<(String, String)>,
    pub functions: Vec<Function>,
}

/// Collapses whitespace and sets `*` apart: `const  uint8_t*` gives
/// `const uint8_t *`, `struct x**` gives `struct x **`.
pub fn normalize_type(ty: &str) -> String {
    let spaced = ty.replace('*', " * ");
    let joined = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = joined;
    while out.contains("* *") {
        out = out.replace("* *", "**");
    }
    out
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// Splits `TYPE NAME` at the last identifier; `None` if there is no name.
fn split_declarator(decl: &str) -> Option<(String, String)> {
    let decl = decl.trim();
    let at = decl.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let (ty, name) = (&decl[..=at], &decl[at + 1..]);
    const NOT_NAMES: [&str; 6] = ["struct", "enum", "union", "const", "unsigned", "signed"];
    let ty = ty.trim();
    if !is_ident(name) || ty.is_empty() || NOT_NAMES.contains(&ty.rsplit(' ').next()?) {
        return None;
    }
    Some((normalize_type(ty), name.to_string()))
}

fn strip_param_name(param: &str) -> String {
    assert!(
        !param.contains('(') && !param.contains('['),
        "header_model: unsupported parameter syntax `{param}` (function pointer or array)"
    );
    match split_declarator(param) {
        Some((ty, _)) => ty,
        None => normalize_type(param),
    }
}

fn parse_field(line: &str) -> Field {
    let decl = line.trim().trim_end_matches(';').trim();
    assert!(
        !decl.contains('(') && !decl.contains(':') && !decl.contains('{'),
        "header_model: unsupported field syntax `{line}` (function pointer, bit-field or nested type)"
    );
    let (decl, array) = match decl.strip_suffix(']') {
        Some(rest) => {
            let open = rest.rfind('[').expect("array field has `[`");
            (&rest[..open], Some(rest[open + 1..].trim().to_string()))
        }
        None => (decl, None),
    };
    let (ty, name) = split_declarator(decl)
        .unwrap_or_else(|| panic!("header_model: cannot read the field `{line}`"));
    Field { name, ty, array }
}

fn parse_function(statement: &str, doc: Vec<String>) -> Function {
    let open = statement
        .find('(')
        .unwrap_or_else(|| panic!("header_model: not a prototype: `{statement}`"));
    let close = statement
        .rfind(')')
        .unwrap_or_else(|| panic!("header_model: not a prototype: `{statement}`"));
    let (returns, name) = split_declarator(&statement[..open])
        .unwrap_or_else(|| panic!("header_model: no function name in `{statement}`"));
    let params = statement[open + 1..close]
        .split(',')
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .collect();
    Function {
        name,
        returns,
        params,
        doc,
    }
}

/// What is being read across lines.
enum Block {
    None,
    Comment,
    Enum(Enum, bool),
    Struct(Struct, bool),
    Statement(String),
    /// A function pointer typedef read across lines.
    FnTypedef(String),
}

/// `typedef RET (*NAME)(PARAMS);` as the alias (NAME, `RET (*)(TYPES)`),
/// the parameter names dropped.
fn parse_fn_typedef(statement: &str) -> (String, String) {
    let parts = (|| {
        let rest = statement.trim().strip_prefix("typedef ")?;
        let (ret, rest) = rest.split_once("(*")?;
        let (name, rest) = rest.split_once(')')?;
        let params = rest
            .trim()
            .trim_end_matches(';')
            .trim()
            .strip_prefix('(')?
            .strip_suffix(')')?;
        Some((ret, name, params))
    })();
    let (ret, name, params) =
        parts.unwrap_or_else(|| panic!("header_model: cannot read the typedef `{statement}`"));
    let types: Vec<String> = params
        .split(',')
        .map(|p| strip_param_name(&p.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect();
    (
        name.trim().to_string(),
        format!("{} (*)({})", normalize_type(ret.trim()), types.join(", ")),
    )
}

/// Reads the header. Panics, naming the line, on what it does not know.
pub fn parse(text: &str) -> Header {
    let mut header = Header::default();
    let mut doc: Vec<String> = Vec::new();
    let mut block = Block::None;
    let mut seen_preamble = false;
    for line in text.lines() {
        let t = line.trim();
        block = match block {
            Block::Comment => {
                if !seen_preamble {
                    header.preamble.push_str(line);
                    header.preamble.push('\n');
                }
                if t.contains("*/") {
                    seen_preamble = true;
                    Block::None
                } else {
                    Block::Comment
                }
            }
            Block::Enum(mut e, typedef) => {
                if let Some(rest) = t.strip_prefix('}') {
                    if typedef {
                        let name = rest.trim().trim_end_matches(';').trim();
                        e.name = name.to_string();
                    }
                    header.enums.push(e);
                    Block::None
                } else {
                    if let Some(ty) = t.strip_prefix(':') {
                        e.underlying = Some(normalize_type(ty));
                    } else if !(t.is_empty()
                        || t.starts_with("//")
                        || t.starts_with('#')
                        || t == "{")
                    {
                        let item = t.trim_end_matches(',');
                        let (name, value) = match item.split_once('=') {
                            Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
                            None => (item.trim(), None),
                        };
                        assert!(
                            is_ident(name),
                            "header_model: cannot read the enumerator `{line}`"
                        );
                        e.variants.push((name.to_string(), value));
                    }
                    Block::Enum(e, typedef)
                }
            }
            Block::Struct(mut s, typedef) => {
                if let Some(rest) = t.strip_prefix('}') {
                    if typedef {
                        let name = rest.trim().trim_end_matches(';').trim();
                        if !name.is_empty() {
                            s.name = name.to_string();
                        }
                    }
                    header.structs.push(s);
                    Block::None
                } else {
                    if !(t.is_empty() || t.starts_with("//") || t.starts_with('#')) {
                        s.fields.push(parse_field(t));
                    }
                    Block::Struct(s, typedef)
                }
            }
            Block::FnTypedef(mut statement) => {
                statement.push(' ');
                statement.push_str(t);
                if t.ends_with(';') {
                    header.aliases.push(parse_fn_typedef(&statement));
                    doc.clear();
                    Block::None
                } else {
                    Block::FnTypedef(statement)
                }
            }
            Block::Statement(mut statement) => {
                statement.push(' ');
                statement.push_str(t);
                if t.ends_with(';') {
                    header
                        .functions
                        .push(parse_function(&statement, std::mem::take(&mut doc)));
                    Block::None
                } else {
                    Block::Statement(statement)
                }
            }
            Block::None => {
                if t.starts_with("/*") {
                    if !seen_preamble {
                        header.preamble.push_str(line);
                        header.preamble.push('\n');
                    }
                    if t.contains("*/") {
                        seen_preamble = true;
                        Block::None
                    } else {
                        Block::Comment
                    }
                } else if let Some(c) = t.strip_prefix("//") {
                    doc.push(c.strip_prefix(' ').unwrap_or(c).to_string());
                    Block::None
                } else if t.is_empty() {
                    doc.clear();
                    Block::None
                } else if let Some(rest) = t.strip_prefix("#define ") {
                    let rest = rest.trim();
                    let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    // A define with no value (the include guard) is no constant.
                    let value = value.trim();
                    let item_doc = std::mem::take(&mut doc);
                    if !value.is_empty() {
                        header.defines.push(Define {
                            name: name.to_string(),
                            value: value.to_string(),
                            doc: item_doc,
                        });
                    }
                    Block::None
                } else if t.starts_with('#') || t.starts_with('}') || t.starts_with("extern \"C\"")
                {
                    Block::None
                } else if let Some(rest) =
                    t.strip_prefix("typedef enum").filter(|r| !r.ends_with(';'))
                {
                    let name = rest.trim().trim_end_matches('{').trim().to_string();
                    let e = Enum {
                        name,
                        underlying: None,
                        variants: Vec::new(),
                        doc: std::mem::take(&mut doc),
                    };
                    Block::Enum(e, true)
                } else if let Some(rest) = t.strip_prefix("enum ").filter(|r| !r.ends_with(';')) {
                    let name = rest.trim().trim_end_matches('{').trim();
                    assert!(
                        is_ident(name),
                        "header_model: cannot read the enum `{line}`"
                    );
                    let e = Enum {
                        name: name.to_string(),
                        underlying: None,
                        variants: Vec::new(),
                        doc: std::mem::take(&mut doc),
                    };
                    Block::Enum(e, false)
                } else if let Some(rest) = t.strip_prefix("typedef struct ") {
                    if let Some(name) = rest.strip_suffix('{') {
                        let s = Struct {
                            name: name.trim().to_string(),
                            fields: Vec::new(),
                            doc: std::mem::take(&mut doc),
                        };
                        Block::Struct(s, true)
                    } else {
                        let words: Vec<&str> =
                            rest.trim_end_matches(';').split_whitespace().collect();
                        assert!(
                            words.len() == 2 && words[0] == words[1],
                            "header_model: cannot read the typedef `{line}`"
                        );
                        header.opaque.push(words[0].to_string());
                        doc.clear();
                        Block::None
                    }
                } else if let Some(name) =
                    t.strip_prefix("struct ").and_then(|r| r.strip_suffix('{'))
                {
                    let s = Struct {
                        name: name.trim().to_string(),
                        fields: Vec::new(),
                        doc: std::mem::take(&mut doc),
                    };
                    Block::Struct(s, false)
                } else if t.starts_with("typedef ") && t.contains("(*") {
                    if t.ends_with(';') {
                        header.aliases.push(parse_fn_typedef(t));
                        doc.clear();
                        Block::None
                    } else {
                        Block::FnTypedef(t.to_string())
                    }
                } else if let Some(rest) = t.strip_prefix("typedef ") {
                    let (ty, name) =
                        split_declarator(rest.trim_end_matches(';')).unwrap_or_else(|| {
                            panic!("header_model: cannot read the typedef `{line}`")
                        });
                    let names_enum =
                        ty.starts_with("enum ") || header.enums.iter().any(|e| e.name == name);
                    if !names_enum {
                        header.aliases.push((name, ty));
                    }
                    doc.clear();
                    Block::None
                } else if t.ends_with(';') {
                    header
                        .functions
                        .push(parse_function(t, std::mem::take(&mut doc)));
                    Block::None
                } else {
                    Block::Statement(t.to_string())
                }
            }
        };
    }
    assert!(
        matches!(block, Block::None),
        "header_model: the header ends inside a declaration"
    );
    header
}
