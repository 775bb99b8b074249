//! `@file` arguments, expanded as LLVM's command-line library expands them for
//! its tools on Unix: the file's text split the GNU way (whitespace separates,
//! `'` and `"` quote, `\` escapes the next character), in place of the
//! argument; `@file` arguments in it expanded in turn, relative to the
//! working directory; a file that does not exist left as the argument it is.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One expanded file: its identity, and where its arguments end.
struct Expanded {
    path: String,
    end: usize,
}

/// `args` with every `@file` expanded, or LLVM's message for a file that
/// cannot be read or includes itself.
pub fn expand(args: &[String]) -> Result<Vec<String>, String> {
    let mut args = args.to_vec();
    let mut open: Vec<Expanded> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        open.retain(|file| file.end > i);
        let Some(name) = arg.strip_prefix('@') else {
            i = i.saturating_add(1);
            continue;
        };
        let path = absolute(name)?;
        let status = match fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                i = i.saturating_add(1);
                continue;
            }
            status => status.map_err(|e| cannot_open(&path, &e))?,
        };
        if let Some(outer) = open.iter().find(|f| same_file(&f.path, &status)) {
            return Err(format!("recursive expansion of: '{}'", outer.path));
        }
        let tokens = tokenize(&read_text(&path)?);
        for file in &mut open {
            file.end = file.end.saturating_add(tokens.len()).saturating_sub(1);
        }
        open.push(Expanded {
            path,
            end: i.saturating_add(tokens.len()),
        });
        args.splice(i..=i, tokens);
    }
    Ok(args)
}

/// A relative name joined to the working directory, as LLVM prints it.
fn absolute(name: &str) -> Result<String, String> {
    if Path::new(name).is_absolute() {
        return Ok(name.to_owned());
    }
    let dir =
        std::env::current_dir().map_err(|_| format!("cannot get absolute path for: {name}"))?;
    Ok(dir.join(name).to_string_lossy().into_owned())
}

fn same_file(path: &str, status: &fs::Metadata) -> bool {
    fs::metadata(path).is_ok_and(|m| m.dev() == status.dev() && m.ino() == status.ino())
}

fn cannot_open(path: &str, e: &io::Error) -> String {
    format!(
        "cannot not open file '{path}': {}",
        crate::io::os_message(e)
    )
}

/// The file's text: a UTF-16 file (by its byte order mark) converted, a
/// UTF-8 byte order mark dropped.
fn read_text(path: &str) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|e| cannot_open(path, &e))?;
    let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|pair| unit(pair.try_into().unwrap_or_default()))
            .collect();
        String::from_utf16(&units).map_err(|_| "Could not convert UTF16 to UTF8".to_owned())
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => Ok(String::from_utf8_lossy(rest).into_owned()),
        all => Ok(String::from_utf8_lossy(all).into_owned()),
    }
}

/// Splits text as LLVM's `TokenizeGNUCommandLine` does: a backslash takes the
/// next character as it is (a lone one at the end is itself), quotes group
/// until the same quote (an unterminated one runs to the end).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut token = String::new();
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            ' ' | '\t' | '\r' | '\n' if !token.is_empty() => {
                tokens.push(std::mem::take(&mut token))
            }
            ' ' | '\t' | '\r' | '\n' => {}
            '\\' => token.push(chars.next().unwrap_or('\\')),
            '"' | '\'' => {
                while let Some(inner) = chars.next().filter(|&c| c != ch) {
                    match inner {
                        '\\' => token.push(chars.next().unwrap_or('\\')),
                        _ => token.push(inner),
                    }
                }
            }
            _ => token.push(ch),
        }
    }
    if !token.is_empty() {
        tokens.push(token);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::{read_text, tokenize};

    #[test]
    fn byte_order_marks_are_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("args.rsp");
        let path = path.to_str().unwrap();
        let utf16 = |bom: [u8; 2], unit: fn(u16) -> [u8; 2]| {
            let mut bytes = bom.to_vec();
            bytes.extend("-list é".encode_utf16().flat_map(unit));
            bytes
        };
        for bytes in [
            utf16([0xFF, 0xFE], u16::to_le_bytes),
            utf16([0xFE, 0xFF], u16::to_be_bytes),
            b"\xEF\xBB\xBF-list \xC3\xA9".to_vec(),
        ] {
            std::fs::write(path, bytes).unwrap();
            assert_eq!(read_text(path).unwrap(), "-list é");
        }
        std::fs::write(path, [0xFF, 0xFE, 0x00, 0xD8]).unwrap();
        assert_eq!(
            read_text(path).unwrap_err(),
            "Could not convert UTF16 to UTF8"
        );
    }

    #[test]
    fn text_splits_the_gnu_way() {
        let cases: &[(&str, &[&str])] = &[
            ("-a  -b\n\t-c\r\n", &["-a", "-b", "-c"]),
            ("-ty\"pe=o\" '-x y'", &["-type=o", "-x y"]),
            ("a\\ b c\\\\d \\'e", &["a b", "c\\d", "'e"]),
            ("\"a\\\"b\" 'c\\'d'", &["a\"b", "c'd"]),
            ("-input=x\\\n", &["-input=x\n"]),
            ("-x \\", &["-x", "\\"]),
            ("-type=\"o -input=x", &["-type=o -input=x"]),
            ("\"\" '' x\"\"", &["x"]),
            ("# not a comment", &["#", "not", "a", "comment"]),
        ];
        for (text, want) in cases {
            assert_eq!(tokenize(text), *want, "{text:?}");
        }
    }
}
