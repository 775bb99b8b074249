//! How extracted files are named where a name comes from the input: the
//! one rule that keeps such a name inside its directory, used by every job
//! that names a file after an entry, an image or a kpack key.

use alloc::string::String;

/// A file name that stays in its directory: only `[A-Za-z0-9._+:-]` is kept
/// (anything else, including `/` and NUL, becomes `_`), and it cannot start
/// with `.` (so `..` is impossible).
pub fn safe_name(raw: &[u8]) -> String {
    let mut name: String = raw
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'+' | b':' | b'-' => {
                char::from(b)
            }
            _ => '_',
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name
}
