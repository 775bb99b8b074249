//! PTX as NVIDIA's `fatbinary` 13.5 stores it: it does not keep the PTX it
//! is given but a copy without comments and with less white space. The
//! rule, read off its output for clang's and hand-written PTX
//! (tests/fixtures/cuda; the tests here replay those cases):
//!
//! - `//` comments (up to, not including, the line's `\n` or `\r`) and
//!   `/* … */` comments (line breaks inside them included; the end is
//!   looked for from the opening `*`, so `/*/` is a comment) are removed;
//! - a run of spaces and tabs becomes its first character, and disappears
//!   at the start of a line (after `\n`, `\r`, `\f` or `\v`); a comment
//!   ends a run and is not the start of a line (`a /* c */ b` → `a  b`,
//!   `  /* c */  x` → ` x`);
//! - everything inside a `"…"` string is kept as it is, up to a `"` with
//!   no backslash just before it (line breaks do not end it; a backslash
//!   escapes nothing but a `"`, not even another backslash: `"a\\"` goes
//!   on); outside strings, `\"` opens no string;
//! - everything else, line breaks included, is kept.
//!
//! The text is then stored with a NUL after it (see the writer).

use alloc::vec::Vec;

use crate::bytes::{reserve, to_u64};
use crate::Result;

fn is_line_break(b: u8) -> bool {
    matches!(b, b'\n' | b'\r' | 0x0C | 0x0B)
}

/// The length of a string's rest (after its opening `"`), its closing `"`
/// included: the first `"` that no backslash is just before.
fn string_end(rest: &[u8]) -> usize {
    let mut at = 0;
    while let Some(&b) = rest.get(at) {
        at = at.saturating_add(match (b, rest.get(at.saturating_add(1))) {
            (b'\\', Some(b'"')) => 2,
            (b'"', _) => return at.saturating_add(1),
            _ => 1,
        });
    }
    rest.len()
}

/// `ptx` with comments removed and white space reduced as `fatbinary` does.
pub fn as_fatbinary_stores(ptx: &[u8]) -> Result<Vec<u8>> {
    let mut out = reserve(to_u64(ptx.len()))?;
    let mut line_start = true;
    let mut in_run = false;
    let mut rest = ptx;
    while let Some((&b, after)) = rest.split_first() {
        rest = after;
        match b {
            b'/' if rest.first() == Some(&b'/') => {
                let end = rest
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r')
                    .unwrap_or(rest.len());
                rest = rest.get(end..).unwrap_or_default();
                (line_start, in_run) = (false, false);
            }
            b'/' if rest.first() == Some(&b'*') => {
                // The end is looked for from the opening `*` on: `/*/` is a
                // whole comment.
                rest = memchr::memmem::find(rest, b"*/")
                    .and_then(|end| rest.get(end.saturating_add(2)..))
                    .unwrap_or_default();
                (line_start, in_run) = (false, false);
            }
            b'"' => {
                out.push(b);
                let end = string_end(rest);
                out.extend_from_slice(rest.get(..end).unwrap_or_default());
                rest = rest.get(end..).unwrap_or_default();
                (line_start, in_run) = (false, false);
            }
            b'\\' if rest.first() == Some(&b'"') => {
                // An escaped quote opens no string.
                out.extend_from_slice(b"\\\"");
                rest = rest.get(1..).unwrap_or_default();
                (line_start, in_run) = (false, false);
            }
            b' ' | b'\t' => {
                if !line_start && !in_run {
                    out.push(b);
                }
                in_run = true;
            }
            _ => {
                out.push(b);
                (line_start, in_run) = (is_line_break(b), false);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(ptx: &[u8], stored: &[u8]) {
        assert_eq!(
            as_fatbinary_stores(ptx).unwrap(),
            stored,
            "{}",
            alloc::string::String::from_utf8_lossy(ptx)
        );
    }

    /// Each pair: a line given to `fatbinary` 13.5 and what it stored.
    #[test]
    fn as_fatbinary_13_5_stores_it() {
        check(b"a /* c */ b\n", b"a  b\n");
        check(b"a/* c */b\n", b"ab\n");
        check(b"  /* c */  x\n", b" x\n");
        check(b"\t/* c */\ty\n", b"\ty\n");
        check(b"x // c\n", b"x \n");
        check(b"x// c\n", b"x\n");
        check(b".file 1 \"a//b.cu\"\n", b".file 1 \"a//b.cu\"\n");
        check(b".file 2 \"a /* q */  b\"\n", b".file 2 \"a /* q */  b\"\n");
        check(b" p \r q\r\n", b"p \rq\r\n");
        check(b"\x0c z \x0b w\n", b"\x0cz \x0bw\n");
        check(b"k  /* m\n  n */   j\n", b"k  j\n");
        check(b"t/**/u\n/* a */\n   \nend\n", b"tu\n\n\nend\n");
        check(
            b"\t.loc\t1 9 0                           // k.cu:9:0\n",
            b".loc\t1 9 0 \n",
        );
        check(b"// \"quoted // not\"\r\n", b"\r\n");
        check(
            b"\tmov.b64 \t%SPL, __local_depot0;\n",
            b"mov.b64 %SPL, __local_depot0;\n",
        );
        check(
            b".global .b8 s[4] = {1, 2,\t3, 4};   \n",
            b".global .b8 s[4] = {1, 2,\t3, 4}; \n",
        );
    }

    /// Cases from random PTX-like text given to `fatbinary` 13.5: the rule
    /// above gave its output for 550 such files of 10 to 400 bytes of
    /// blanks, line breaks, `/`, `*`, `"`, `\\`, `.`, `;` and letters.
    #[test]
    fn backslashes_quotes_and_odd_comments() {
        check(b"\"a\\\\\" \t b\n", b"\"a\\\\\" \t b\n");
        check(b"\\\\\"\x0c.\n*aa\"\x0c *\n", b"\\\\\"\x0c.\n*aa\"\x0c *\n");
        check(b"x \\\" \t y\n", b"x \\\" y\n");
        check(b"\"a\\\"b\" \t c\n", b"\"a\\\"b\" c\n");
        check(b";\\/*a\"a \t\r\"", b";\\");
        check(b"\r/*/\r..\n", b"\r\r..\n");
        check(b"a \\\n *\n", b"a \\\n*\n");
    }

    #[test]
    fn unterminated_comments_and_strings_end_the_text() {
        check(b"a /* b", b"a ");
        check(b"a \"b c", b"a \"b c");
        check(b"a // b", b"a ");
    }
}
