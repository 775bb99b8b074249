//! LLVM `cl::opt`-style command lines, driven by one table per tool
//! personality: `-name=value`, `--name=value`, `-name value`, boolean flags
//! with optional `=true/false/1/0`, comma-separated lists. Errors are worded
//! as LLVM's option parser words them.

pub mod bundler;
pub mod fatbinary;
pub mod nvprune;
pub mod packager;
pub mod response;
pub mod words;

/// How an option takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A flag: present, or `=true/false/1/0`.
    Bool,
    /// A string; the last occurrence wins.
    Str,
    /// A string each time it is given, kept in order.
    List,
    /// Like `List`, each value also split at commas.
    CommaList,
    /// An unsigned 32-bit number.
    Uint,
    /// A signed 32-bit number.
    Int,
}

/// One row of an option table.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    pub name: &'static str,
    pub value: Value,
    /// Left out of `--help` and of "Did you mean" suggestions.
    pub hidden: bool,
}

/// The options LLVM's tools act on while the command line is read, before
/// any other check: help and version.
pub const IMMEDIATE: &[&str] = &[
    "help",
    "help-list",
    "help-hidden",
    "help-list-hidden",
    "version",
];

/// A row for an option shown in `--help`.
pub const fn opt(name: &'static str, value: Value) -> Opt {
    Opt {
        name,
        value,
        hidden: false,
    }
}

/// A row for an option left out of `--help`.
pub const fn hidden(name: &'static str, value: Value) -> Opt {
    Opt {
        name,
        value,
        hidden: true,
    }
}

/// What was given for one option, in command-line order.
#[derive(Debug, Default, Clone)]
pub struct Given {
    pub values: Vec<String>,
    pub occurrences: usize,
}

/// The parsed command line: per option name, what was given.
#[derive(Debug, Default)]
pub struct Parsed {
    given: std::collections::HashMap<&'static str, Given>,
    /// Option names in the order they were given.
    order: Vec<&'static str>,
    /// Arguments that are not options, in order.
    pub positionals: Vec<String>,
}

impl Parsed {
    pub fn flag(&self, name: &str) -> bool {
        self.given
            .get(name)
            .and_then(|g| g.values.last())
            .is_some_and(|v| v == "true")
    }

    pub fn last(&self, name: &str) -> Option<&str> {
        self.given
            .get(name)
            .and_then(|g| g.values.last())
            .map(String::as_str)
    }

    pub fn list(&self, name: &str) -> &[String] {
        self.given.get(name).map_or(&[], |g| g.values.as_slice())
    }

    /// The first of `names` given as a true flag, in command-line order.
    pub fn first_flag(&self, names: &[&str]) -> Option<&'static str> {
        self.order
            .iter()
            .copied()
            .find(|n| names.contains(n) && self.flag(n))
    }

    pub fn occurrences(&self, name: &str) -> usize {
        self.given.get(name).map_or(0, |g| g.occurrences)
    }
}

/// How LLVM spells an option in its messages.
pub fn spelled(name: &str) -> String {
    if name.len() == 1 {
        format!("-{name}")
    } else {
        format!("--{name}")
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "" | "true" | "TRUE" | "True" | "1" => Some(true),
        "false" | "FALSE" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// Parses `args` against `table`, for a tool that takes no positional
/// arguments. Returns the parsed options, or the error lines LLVM would print
/// (each without the program-name prefix).
pub fn parse(table: &'static [Opt], args: &[String], argv0: &str) -> (Parsed, Vec<String>) {
    parse_with_positionals(table, args, argv0, 0)
}

/// Parses `args` against `table`, keeping up to `max_positionals` arguments
/// that are not options (a lone `-` is one).
pub fn parse_with_positionals(
    table: &'static [Opt],
    args: &[String],
    argv0: &str,
    max_positionals: usize,
) -> (Parsed, Vec<String>) {
    let mut parsed = Parsed::default();
    let mut errors = Vec::new();
    let mut i = 0;
    let mut positional_only = false;
    while let Some(arg) = args.get(i) {
        i = i.saturating_add(1);
        if arg == "--" && !positional_only {
            positional_only = true;
            continue;
        }
        let stripped = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'));
        let Some(stripped) = stripped.filter(|s| !s.is_empty() && !positional_only) else {
            if max_positionals == 0 {
                errors.push(format!(
                    "Unknown command line argument '{arg}'.  Try: '{argv0} --help'"
                ));
            } else {
                parsed.positionals.push(arg.clone());
            }
            continue;
        };
        let (name, inline) = match stripped.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (stripped, None),
        };
        let Some(opt) = table.iter().find(|o| o.name == name) else {
            errors.push(format!(
                "Unknown command line argument '{arg}'.  Try: '{argv0} --help'"
            ));
            if let Some(near) = nearest(table, name) {
                let value = inline.map(|v| format!("={v}")).unwrap_or_default();
                errors.push(format!("Did you mean '{}{value}'?", spelled(near)));
            }
            continue;
        };
        let value = match (opt.value, inline) {
            (Value::Bool, None) => "true".to_owned(),
            (Value::Bool, Some(v)) => match parse_bool(v) {
                Some(b) => b.to_string(),
                None => {
                    errors.push(format!(
                        "for the {} option: '{v}' is invalid value for boolean argument! Try 0 or 1",
                        spelled(opt.name)
                    ));
                    continue;
                }
            },
            (_, Some(v)) => v.to_owned(),
            (_, None) => match args.get(i) {
                Some(v) => {
                    i = i.saturating_add(1);
                    v.clone()
                }
                None => {
                    errors.push(format!(
                        "for the {} option: requires a value!",
                        spelled(opt.name)
                    ));
                    continue;
                }
            },
        };
        let bad_number = match opt.value {
            Value::Uint => value.parse::<u32>().is_err().then_some("uint"),
            Value::Int => value.parse::<i32>().is_err().then_some("integer"),
            _ => None,
        };
        if let Some(what) = bad_number {
            errors.push(format!(
                "for the {} option: '{value}' value invalid for {what} argument!",
                spelled(opt.name)
            ));
            continue;
        }
        parsed.order.push(opt.name);
        let given = parsed.given.entry(opt.name).or_default();
        given.occurrences = given.occurrences.saturating_add(1);
        match opt.value {
            Value::CommaList => given.values.extend(value.split(',').map(str::to_owned)),
            _ => given.values.push(value),
        }
    }
    if max_positionals != 0 && parsed.positionals.len() > max_positionals {
        errors.push(format!(
            "Too many positional arguments specified!\nCan specify at most {max_positionals} positional arguments: See: {argv0} --help"
        ));
    }
    (parsed, errors)
}

/// The option whose name is closest to `name` by edit distance.
fn nearest(table: &[Opt], name: &str) -> Option<&'static str> {
    table
        .iter()
        .filter(|o| !o.hidden)
        .map(|o| (edit_distance(o.name, name), o.name))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein distance, one row at a time (option names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = i;
        let mut left = i.saturating_add(1);
        let mut next_row = Vec::with_capacity(row.len());
        next_row.push(left);
        for (cb, up) in b.iter().zip(row.iter().skip(1)) {
            let cost = diag.saturating_add(usize::from(ca != *cb));
            left = cost.min(left.saturating_add(1)).min(up.saturating_add(1));
            diag = *up;
            next_row.push(left);
        }
        row = next_row;
    }
    row.last().copied().unwrap_or_default()
}
