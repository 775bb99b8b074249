//! MessagePack read in place: one value at a time from a cursor, strings and
//! binaries as slices of the input, maps and arrays as counts the caller
//! walks, anything unwanted skipped with a bounded depth. No allocation, no
//! recursion, every length checked against the input: what a kpack
//! archive's table of contents and marker need, and what tells a Tensile
//! `.dat` apart from unknown bytes.
//!
//! Why not a crate: `rmp`'s no_std layer reads markers and lengths but has
//! no bounded skip, no positions for errors and no zero-copy strings over a
//! borrowed slice; `rmpv` and `rmp-serde` allocate per value. The format
//! fits in the table below.

/// How deep maps and arrays may nest before a skip gives up (real files
/// nest a few levels).
pub(crate) const DEPTH: usize = 64;

/// One MessagePack value's head: scalars whole, strings and binaries as
/// slices, maps and arrays as how many items follow (a map's pairs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value<'a> {
    Nil,
    Bool(bool),
    /// A non-negative integer.
    Uint(u64),
    /// A negative integer.
    Int(i64),
    Float,
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Ext,
    Array(u64),
    /// This many key-value pairs.
    Map(u64),
}

/// Why a value cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The input ends inside the value.
    Truncated,
    /// Byte 0xc1, which MessagePack never uses.
    Reserved,
    /// Maps and arrays nest deeper than [`DEPTH`].
    TooDeep,
}

/// A position in MessagePack bytes.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, at: 0 }
    }

    /// A cursor at `at` (a position an earlier reader of `data` gave).
    pub(crate) fn at(data: &'a [u8], at: usize) -> Self {
        Reader { data, at }
    }

    /// Where the next value starts.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// The bytes after the last value read.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data.get(self.at..).unwrap_or_default()
    }

    /// The next value's head; on a fault the cursor stays where it was.
    pub(crate) fn next(&mut self) -> Result<Value<'a>, Fault> {
        let (len, value) = head(self.data, self.at)?;
        self.at = self.at.checked_add(len).ok_or(Fault::Truncated)?;
        Ok(value)
    }

    /// Skips the next value whole (a map or an array with everything in
    /// it), iteratively, with the items still to read at each level on a
    /// fixed stack.
    pub(crate) fn skip(&mut self) -> Result<(), Fault> {
        let start = self.at;
        let skipped = self.skip_from_here();
        if skipped.is_err() {
            self.at = start;
        }
        skipped
    }

    fn skip_from_here(&mut self) -> Result<(), Fault> {
        let mut pending = [0u64; DEPTH];
        let mut depth = 0usize;
        pending[0] = 1;
        loop {
            while depth > 0 && pending.get(depth) == Some(&0) {
                depth = depth.saturating_sub(1);
            }
            match pending.get_mut(depth) {
                Some(0) | None => return Ok(()),
                Some(left) => *left = left.saturating_sub(1),
            }
            let items = match self.next()? {
                Value::Array(n) => n,
                Value::Map(n) => n.checked_mul(2).ok_or(Fault::Truncated)?,
                _ => 0,
            };
            // Each item takes a byte at least: a count past the input is
            // refused here, not walked.
            if items > crate::bytes::to_u64(self.rest().len()) {
                return Err(Fault::Truncated);
            }
            if items > 0 {
                depth = depth.saturating_add(1);
                *pending.get_mut(depth).ok_or(Fault::TooDeep)? = items;
            }
        }
    }
}

/// Whether `data` is exactly one MessagePack value, a map or an array (a
/// lone scalar is too weak a sign).
pub(crate) fn is_one_value(data: &[u8]) -> bool {
    if !matches!(data.first(), Some(0x80..=0x9f | 0xdc..=0xdf)) {
        return false;
    }
    let mut reader = Reader::new(data);
    reader.skip().is_ok() && reader.rest().is_empty()
}

/// The value whose head is at `at`: how many bytes its head (and a
/// scalar's or string's contents) take, and what it is.
fn head<'a>(data: &'a [u8], at: usize) -> Result<(usize, Value<'a>), Fault> {
    let tag = *data.get(at).ok_or(Fault::Truncated)?;
    let n = |width: usize| -> Result<u64, Fault> {
        let start = at.checked_add(1).ok_or(Fault::Truncated)?;
        let end = start.checked_add(width).ok_or(Fault::Truncated)?;
        let bytes = data.get(start..end).ok_or(Fault::Truncated)?;
        Ok(bytes.iter().fold(0, |v, &b| (v << 8) | u64::from(b)))
    };
    // A string, binary or ext: `skip` bytes (a type byte for ext), then
    // the contents, after a `width`-byte length.
    let sized = |width: usize, skip: usize| -> Result<(usize, &'a [u8]), Fault> {
        let len = usize::try_from(n(width)?).map_err(|_| Fault::Truncated)?;
        let start = at
            .checked_add(1)
            .and_then(|s| s.checked_add(width))
            .and_then(|s| s.checked_add(skip))
            .ok_or(Fault::Truncated)?;
        let end = start.checked_add(len).ok_or(Fault::Truncated)?;
        let contents = data.get(start..end).ok_or(Fault::Truncated)?;
        Ok((end.saturating_sub(at), contents))
    };
    let fixed = |len: usize, value: Value<'static>| -> Result<(usize, Value<'a>), Fault> {
        match at.checked_add(len) {
            Some(end) if end <= data.len() => Ok((len, value)),
            _ => Err(Fault::Truncated),
        }
    };
    let signed = |width: usize| -> Result<Value<'static>, Fault> {
        let raw = n(width)?;
        let bits = u32::try_from(width.saturating_mul(8)).unwrap_or(64);
        let shift = 64u32.saturating_sub(bits);
        // Sign-extend the `width`-byte two's complement value.
        let value = i64::from_ne_bytes((raw << shift).to_ne_bytes()) >> shift;
        Ok(match u64::try_from(value) {
            Ok(v) => Value::Uint(v),
            Err(_) => Value::Int(value),
        })
    };
    let str_of = |r: Result<(usize, &'a [u8]), Fault>| r.map(|(l, s)| (l, Value::Str(s)));
    let bin_of = |r: Result<(usize, &'a [u8]), Fault>| r.map(|(l, s)| (l, Value::Bin(s)));
    let ext_of = |r: Result<(usize, &'a [u8]), Fault>| r.map(|(l, _)| (l, Value::Ext));
    match tag {
        0x00..=0x7f => Ok((1, Value::Uint(u64::from(tag)))),
        0xe0..=0xff => Ok((1, Value::Int(i64::from(i8::from_ne_bytes([tag]))))),
        0x80..=0x8f => Ok((1, Value::Map(u64::from(tag & 0x0f)))),
        0x90..=0x9f => Ok((1, Value::Array(u64::from(tag & 0x0f)))),
        0xa0..=0xbf => {
            let len = usize::from(tag & 0x1f);
            let start = at.checked_add(1).ok_or(Fault::Truncated)?;
            let end = start.checked_add(len).ok_or(Fault::Truncated)?;
            let s = data.get(start..end).ok_or(Fault::Truncated)?;
            Ok((len.saturating_add(1), Value::Str(s)))
        }
        0xc0 => Ok((1, Value::Nil)),
        0xc1 => Err(Fault::Reserved),
        0xc2 => Ok((1, Value::Bool(false))),
        0xc3 => Ok((1, Value::Bool(true))),
        0xc4 => bin_of(sized(1, 0)),
        0xc5 => bin_of(sized(2, 0)),
        0xc6 => bin_of(sized(4, 0)),
        0xc7 => ext_of(sized(1, 1)),
        0xc8 => ext_of(sized(2, 1)),
        0xc9 => ext_of(sized(4, 1)),
        0xca => fixed(5, Value::Float),
        0xcb => fixed(9, Value::Float),
        0xcc => Ok((2, Value::Uint(n(1)?))),
        0xcd => Ok((3, Value::Uint(n(2)?))),
        0xce => Ok((5, Value::Uint(n(4)?))),
        0xcf => Ok((9, Value::Uint(n(8)?))),
        0xd0 => Ok((2, signed(1)?)),
        0xd1 => Ok((3, signed(2)?)),
        0xd2 => Ok((5, signed(4)?)),
        0xd3 => Ok((9, signed(8)?)),
        // fixext 1, 2, 4, 8, 16: a type byte and the data.
        0xd4 => fixed(3, Value::Ext),
        0xd5 => fixed(4, Value::Ext),
        0xd6 => fixed(6, Value::Ext),
        0xd7 => fixed(10, Value::Ext),
        0xd8 => fixed(18, Value::Ext),
        0xd9 => str_of(sized(1, 0)),
        0xda => str_of(sized(2, 0)),
        0xdb => str_of(sized(4, 0)),
        0xdc => Ok((3, Value::Array(n(2)?))),
        0xdd => Ok((5, Value::Array(n(4)?))),
        0xde => Ok((3, Value::Map(n(2)?))),
        0xdf => Ok((5, Value::Map(n(4)?))),
    }
}

/// MessagePack written as Python's `msgpack` (1.x, `use_bin_type=True`)
/// writes it: every number and length in its smallest form, strings as
/// `str` (str8 included). What rocm-kpack's archives are written with.
#[cfg(feature = "alloc")]
pub(crate) mod write {
    use alloc::vec::Vec;

    /// A non-negative integer.
    pub(crate) fn uint(out: &mut Vec<u8>, n: u64) {
        match n {
            0..=0x7f => out.push(u8::try_from(n).unwrap_or(0)),
            0x80..=0xff => {
                out.push(0xcc);
                out.push(u8::try_from(n).unwrap_or(0));
            }
            0x100..=0xffff => {
                out.push(0xcd);
                out.extend_from_slice(&u16::try_from(n).unwrap_or(0).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0xce);
                out.extend_from_slice(&u32::try_from(n).unwrap_or(0).to_be_bytes());
            }
            _ => {
                out.push(0xcf);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
    }

    /// A length-prefixed head: `fix` (the fixed form's tag, for lengths up
    /// to `fix_max`), else the 8-bit (if `tag8`), 16-bit and 32-bit forms.
    fn head(out: &mut Vec<u8>, len: usize, fix: u8, fix_max: usize, tag8: Option<u8>, tag16: u8) {
        let tag32 = tag16.saturating_add(1);
        if len <= fix_max {
            out.push(fix | u8::try_from(len).unwrap_or(0));
        } else if let (Some(tag), Ok(n)) = (tag8, u8::try_from(len)) {
            out.push(tag);
            out.push(n);
        } else if let Ok(n) = u16::try_from(len) {
            out.push(tag16);
            out.extend_from_slice(&n.to_be_bytes());
        } else {
            out.push(tag32);
            out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
        }
    }

    /// A string.
    pub(crate) fn str(out: &mut Vec<u8>, s: &[u8]) {
        head(out, s.len(), 0xa0, 31, Some(0xd9), 0xda);
        out.extend_from_slice(s);
    }

    /// A map's head: `pairs` key-value pairs follow.
    pub(crate) fn map(out: &mut Vec<u8>, pairs: usize) {
        head(out, pairs, 0x80, 15, None, 0xde);
    }

    /// An array's head: `items` values follow.
    pub(crate) fn array(out: &mut Vec<u8>, items: usize) {
        head(out, items, 0x90, 15, None, 0xdc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_values_only() {
        // {"abc": 1, "def": [2, 3.0f32]}
        let good = b"\x82\xa3abc\x01\xa3def\x92\x02\xca\x40\x40\x00\x00";
        assert!(is_one_value(good));
        for cut in 1..good.len() {
            assert!(!is_one_value(&good[..cut]), "{cut}");
        }
        let mut longer = good.to_vec();
        longer.push(0);
        assert!(!is_one_value(&longer));
        // A scalar alone, a reserved byte, and nesting past the limit.
        assert!(!is_one_value(b"\x01"));
        assert!(!is_one_value(b"\x81\xc1\x01"));
        assert!(!is_one_value(&[0x91; 100]));
        // A map of 2^32-1 pairs in a few bytes: refused at once, not walked.
        assert!(!is_one_value(b"\xdf\xff\xff\xff\xff\x01\x01"));
    }

    #[test]
    fn every_head_reads_as_written() {
        let cases: &[(&[u8], Value<'_>)] = &[
            (b"\x05", Value::Uint(5)),
            (b"\xff", Value::Int(-1)),
            (b"\xcc\xc8", Value::Uint(200)),
            (b"\xcd\x01\x00", Value::Uint(256)),
            (b"\xce\x00\x01\x00\x00", Value::Uint(65536)),
            (
                b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00",
                Value::Uint(1 << 32),
            ),
            (b"\xd0\x80", Value::Int(-128)),
            (b"\xd1\xff\x00", Value::Int(-256)),
            (b"\xd2\x00\x00\x00\x07", Value::Uint(7)),
            (b"\xd3\xff\xff\xff\xff\xff\xff\xff\xfe", Value::Int(-2)),
            (b"\xa2hi", Value::Str(b"hi")),
            (b"\xd9\x02hi", Value::Str(b"hi")),
            (b"\xda\x00\x02hi", Value::Str(b"hi")),
            (b"\xdb\x00\x00\x00\x02hi", Value::Str(b"hi")),
            (b"\xc4\x01\x09", Value::Bin(b"\x09")),
            (b"\xc0", Value::Nil),
            (b"\xc3", Value::Bool(true)),
            (b"\xcb\0\0\0\0\0\0\0\0", Value::Float),
            (b"\xd4\x01\x02", Value::Ext),
            (b"\xc7\x01\x05\x09", Value::Ext),
            (b"\x93", Value::Array(3)),
            (b"\xdc\x01\x00", Value::Array(256)),
            (b"\x81", Value::Map(1)),
            (b"\xdf\x00\x01\x00\x00", Value::Map(65536)),
        ];
        for (bytes, want) in cases {
            let mut reader = Reader::new(bytes);
            assert_eq!(reader.next(), Ok(*want), "{bytes:02x?}");
            assert!(reader.rest().is_empty(), "{bytes:02x?}");
            // Cut anywhere: truncated, and the cursor stays.
            for cut in 0..bytes.len() {
                let mut reader = Reader::new(&bytes[..cut]);
                assert_eq!(
                    reader.next(),
                    Err(Fault::Truncated),
                    "{bytes:02x?} at {cut}"
                );
                assert_eq!(reader.position(), 0);
            }
        }
    }

    /// What is written reads back as written, in the smallest form.
    #[cfg(feature = "alloc")]
    #[test]
    fn what_is_written_reads_back() {
        use alloc::vec::Vec;
        let numbers = [
            0u64,
            127,
            128,
            255,
            256,
            65535,
            65536,
            u32::MAX as u64,
            1 << 32,
        ];
        let lengths = [0usize, 31, 32, 255, 256, 65535, 65536];
        for n in numbers {
            let mut out = Vec::new();
            write::uint(&mut out, n);
            let mut reader = Reader::new(&out);
            assert_eq!(reader.next(), Ok(Value::Uint(n)));
            let want = match n {
                0..=127 => 1,
                128..=255 => 2,
                256..=65535 => 3,
                65536..=0xffff_ffff => 5,
                _ => 9,
            };
            assert_eq!(out.len(), want, "{n}");
        }
        for len in lengths {
            let text = alloc::vec![b'x'; len];
            let mut out = Vec::new();
            write::str(&mut out, &text);
            write::map(&mut out, len);
            write::array(&mut out, len);
            let mut reader = Reader::new(&out);
            assert_eq!(reader.next(), Ok(Value::Str(&text)));
            assert_eq!(reader.next(), Ok(Value::Map(len as u64)));
            assert_eq!(reader.next(), Ok(Value::Array(len as u64)));
            assert!(reader.rest().is_empty());
        }
    }

    #[test]
    fn a_skip_passes_one_whole_value() {
        // [{"a": [1, {"b": "c"}]}, 7], then 9.
        let data = b"\x92\x81\xa1a\x92\x01\x81\xa1b\xa1c\x07\x09";
        let mut reader = Reader::new(data);
        reader.skip().unwrap();
        assert_eq!(reader.next(), Ok(Value::Uint(9)));
        let deep = [0x91u8; DEPTH + 1];
        let mut reader = Reader::new(&deep);
        assert_eq!(reader.skip(), Err(Fault::TooDeep));
        assert_eq!(reader.position(), 0);
    }
}
