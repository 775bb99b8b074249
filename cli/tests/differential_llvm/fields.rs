//! Where the structural fields of an input are: a map of every header field
//! of every container found in it (bundles, compressed bundles, text bundle
//! markers, archive member headers, OffloadBinaries, ELF section headers),
//! nested containers included (an archive member's bundle, an object's
//! offload sections). Mutations pick fields from this map.

pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const CCOB_MAGIC: &[u8] = b"CCOB";
pub const OFFLOAD_MAGIC: &[u8] = &[0x10, 0xFF, 0x10, 0xAD];
pub const ARCHIVE_MAGIC: &[u8] = b"!<arch>\n";
pub const ELF_MAGIC: &[u8] = b"\x7fELF";
const TEXT_START: &[u8] = b"__CLANG_OFFLOAD_BUNDLE____START__";
const TEXT_END: &[u8] = b"__CLANG_OFFLOAD_BUNDLE____END__";

/// How a field is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    /// A little-endian integer of this many bytes.
    Le(usize),
    /// An `ar` header's space-padded ASCII decimal of this width.
    Dec(usize),
    /// Bytes: an ID, a name, a string.
    Bytes(usize),
    /// A whole text bundle marker line, its newline included.
    Line(usize),
}

impl Enc {
    pub fn len(self) -> usize {
        match self {
            Enc::Le(n) | Enc::Dec(n) | Enc::Bytes(n) | Enc::Line(n) => n,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Field {
    pub at: usize,
    pub enc: Enc,
    pub what: String,
    /// Part of an offloading container (not an unrelated ELF section).
    pub hot: bool,
}

/// A whole container that a mutation may rebuild with the core's writers.
#[derive(Clone, Copy, Debug)]
pub enum Region {
    Bundle { at: usize, len: usize },
    Compressed { at: usize, len: usize },
}

#[derive(Default, Debug)]
pub struct Map {
    pub fields: Vec<Field>,
    pub regions: Vec<Region>,
}

impl Map {
    fn push(&mut self, at: usize, enc: Enc, what: String, hot: bool) {
        self.fields.push(Field { at, enc, what, hot });
    }
}

pub fn le(data: &[u8], at: usize, width: usize) -> Option<u64> {
    let bytes = data.get(at..at.checked_add(width)?)?;
    Some(
        bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
    )
}

/// The fields of `data`, a whole input.
pub fn map(data: &[u8]) -> Map {
    let mut map = Map::default();
    if find(data, TEXT_START).is_some() || find(data, TEXT_END).is_some() {
        text_markers(data, &mut map);
    } else {
        sequence(data, 0, 0, "", &mut map);
    }
    map
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Containers back to back with zero padding between them.
fn sequence(data: &[u8], base: usize, depth: u32, name: &str, map: &mut Map) {
    let mut pos = 0;
    let mut index = 0;
    while pos < data.len() && index < 16 {
        while data.get(pos) == Some(&0) {
            pos += 1;
        }
        if pos >= data.len() {
            break;
        }
        let prefix = if index == 0 && pos == 0 {
            name.to_owned()
        } else {
            format!("{name}container {index} ")
        };
        match container(&data[pos..], base + pos, depth, &prefix, map) {
            Some(used) if used > 0 => pos += used,
            _ => break,
        }
        index += 1;
    }
}

/// The container at the start of `data`; how many bytes it spans, or `None`
/// when it is the rest of the input (or unknown).
fn container(data: &[u8], base: usize, depth: u32, name: &str, map: &mut Map) -> Option<usize> {
    if depth > 3 {
        return None;
    }
    if data.starts_with(BUNDLE_MAGIC) {
        Some(bundle(data, base, name, map))
    } else if data.starts_with(CCOB_MAGIC) {
        compressed(data, base, name, map)
    } else if data.starts_with(OFFLOAD_MAGIC) {
        offload_binary(data, base, name, map)
    } else if data.starts_with(ARCHIVE_MAGIC) {
        archive(data, base, depth, name, map);
        None
    } else if data.starts_with(ELF_MAGIC) {
        elf(data, base, depth, name, map);
        None
    } else {
        None
    }
}

fn bundle(data: &[u8], base: usize, name: &str, map: &mut Map) -> usize {
    map.push(base, Enc::Bytes(24), format!("{name}bundle magic"), true);
    map.push(
        base + 24,
        Enc::Le(8),
        format!("{name}bundle entry count"),
        true,
    );
    let count = le(data, 24, 8).unwrap_or(0).min(64);
    let mut pos = 32usize;
    let mut end = pos;
    for i in 0..count {
        if pos + 24 > data.len() {
            break;
        }
        let offset = le(data, pos, 8).unwrap_or(0);
        let size = le(data, pos + 8, 8).unwrap_or(0);
        let id_len = le(data, pos + 16, 8).unwrap_or(0);
        map.push(
            base + pos,
            Enc::Le(8),
            format!("{name}bundle entry {i} offset"),
            true,
        );
        map.push(
            base + pos + 8,
            Enc::Le(8),
            format!("{name}bundle entry {i} size"),
            true,
        );
        map.push(
            base + pos + 16,
            Enc::Le(8),
            format!("{name}bundle entry {i} ID length"),
            true,
        );
        let Some(id_end) = usize::try_from(id_len)
            .ok()
            .and_then(|n| (pos + 24).checked_add(n))
            .filter(|&e| e <= data.len())
        else {
            break;
        };
        if id_len > 0 {
            map.push(
                base + pos + 24,
                Enc::Bytes(id_len as usize),
                format!("{name}bundle entry {i} ID"),
                true,
            );
        }
        pos = id_end;
        if let Some(e) = offset
            .checked_add(size)
            .and_then(|e| usize::try_from(e).ok())
        {
            if e <= data.len() {
                end = end.max(e);
            }
        }
    }
    let len = end.max(pos).min(data.len());
    map.regions.push(Region::Bundle { at: base, len });
    len
}

fn compressed(data: &[u8], base: usize, name: &str, map: &mut Map) -> Option<usize> {
    let version = le(data, 4, 2)?;
    map.push(base, Enc::Bytes(4), format!("{name}CCOB magic"), true);
    map.push(base + 4, Enc::Le(2), format!("{name}CCOB version"), true);
    map.push(base + 6, Enc::Le(2), format!("{name}CCOB method"), true);
    let (total, header) = match version {
        1 => {
            map.push(
                base + 8,
                Enc::Le(4),
                format!("{name}CCOB uncompressed size"),
                true,
            );
            map.push(base + 12, Enc::Le(8), format!("{name}CCOB hash"), true);
            (None, 20)
        }
        2 => {
            map.push(base + 8, Enc::Le(4), format!("{name}CCOB total size"), true);
            map.push(
                base + 12,
                Enc::Le(4),
                format!("{name}CCOB uncompressed size"),
                true,
            );
            map.push(base + 16, Enc::Le(8), format!("{name}CCOB hash"), true);
            (le(data, 8, 4), 24)
        }
        _ => {
            map.push(base + 8, Enc::Le(8), format!("{name}CCOB total size"), true);
            map.push(
                base + 16,
                Enc::Le(8),
                format!("{name}CCOB uncompressed size"),
                true,
            );
            map.push(base + 24, Enc::Le(8), format!("{name}CCOB hash"), true);
            (le(data, 8, 8), 32)
        }
    };
    let len = total
        .and_then(|t| usize::try_from(t).ok())
        .filter(|&t| t >= header && t <= data.len())
        .unwrap_or(data.len());
    map.regions.push(Region::Compressed { at: base, len });
    Some(len)
}

fn offload_binary(data: &[u8], base: usize, name: &str, map: &mut Map) -> Option<usize> {
    let f = |map: &mut Map, at: usize, w: usize, what: &str| {
        if at + w <= data.len() {
            map.push(
                base + at,
                Enc::Le(w),
                format!("{name}OffloadBinary {what}"),
                true,
            );
        }
    };
    map.push(
        base,
        Enc::Bytes(4),
        format!("{name}OffloadBinary magic"),
        true,
    );
    f(map, 4, 4, "version");
    f(map, 8, 8, "size");
    f(map, 16, 8, "entry offset");
    f(map, 24, 8, "entry size");
    let entry = usize::try_from(le(data, 16, 8)?).ok()?;
    if entry.checked_add(40).is_some_and(|e| e <= data.len()) {
        f(map, entry, 2, "image kind");
        f(map, entry + 2, 2, "offload kind");
        f(map, entry + 4, 4, "flags");
        f(map, entry + 8, 8, "string offset");
        f(map, entry + 16, 8, "string count");
        f(map, entry + 24, 8, "image offset");
        f(map, entry + 32, 8, "image size");
        let strings = le(data, entry + 8, 8).and_then(|s| usize::try_from(s).ok());
        let count = le(data, entry + 16, 8).unwrap_or(0).min(16) as usize;
        if let Some(strings) = strings {
            for i in 0..count {
                let at = strings + 16 * i;
                if at + 16 > data.len() {
                    break;
                }
                f(map, at, 8, &format!("string {i} key offset"));
                f(map, at + 8, 8, &format!("string {i} value offset"));
                for (which, off) in [("key", at), ("value", at + 8)] {
                    if let Some(s) = le(data, off, 8).and_then(|s| usize::try_from(s).ok()) {
                        if let Some(rest) = data.get(s..) {
                            let n = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                            if n > 0 {
                                map.push(
                                    base + s,
                                    Enc::Bytes(n),
                                    format!("{name}OffloadBinary string {i} {which}"),
                                    true,
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    le(data, 8, 8)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|&s| s > 0 && s <= data.len())
}

fn archive(data: &[u8], base: usize, depth: u32, name: &str, map: &mut Map) {
    map.push(base, Enc::Bytes(8), format!("{name}archive magic"), true);
    let mut pos = 8;
    let mut index = 0;
    while pos + 60 <= data.len() && index < 64 {
        let member = format!("{name}member {index} ");
        map.push(base + pos, Enc::Bytes(16), format!("{member}name"), true);
        map.push(
            base + pos + 16,
            Enc::Dec(12),
            format!("{member}date"),
            false,
        );
        map.push(base + pos + 40, Enc::Dec(8), format!("{member}mode"), false);
        map.push(base + pos + 48, Enc::Dec(10), format!("{member}size"), true);
        map.push(
            base + pos + 58,
            Enc::Bytes(2),
            format!("{member}header end"),
            true,
        );
        let header_name = &data[pos..pos + 16];
        let size = std::str::from_utf8(&data[pos + 48..pos + 58])
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        let Some(size) = size else { break };
        let start = pos + 60;
        let Some(end) = start.checked_add(size).filter(|&e| e <= data.len()) else {
            break;
        };
        let mut content_start = start;
        if let Some(n) = header_name
            .strip_prefix(b"#1/")
            .and_then(|n| std::str::from_utf8(n).ok())
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            content_start = (start + n).min(end);
            if n > 0 {
                map.push(
                    base + start,
                    Enc::Bytes(n.min(end - start)),
                    format!("{member}long name"),
                    true,
                );
            }
        }
        if header_name.starts_with(b"// ") && end > start {
            map.push(
                base + start,
                Enc::Bytes(end - start),
                format!("{member}long name table"),
                true,
            );
        } else if !header_name.starts_with(b"/ ")
            && !header_name.starts_with(b"/SYM64/")
            && !header_name.starts_with(b"__.SYMDEF")
        {
            sequence(
                &data[content_start..end],
                base + content_start,
                depth + 1,
                &member,
                map,
            );
        }
        pos = end + (end & 1);
        index += 1;
    }
}

fn elf(data: &[u8], base: usize, depth: u32, name: &str, map: &mut Map) {
    let wide = data.get(4) == Some(&2);
    if data.get(5) != Some(&1) {
        return;
    }
    let (shoff_at, shnum_at, strndx_at, entsize) = if wide {
        (0x28, 0x3C, 0x3E, 64)
    } else {
        (0x20, 0x30, 0x32, 40)
    };
    let w = if wide { 8 } else { 4 };
    map.push(
        base + shoff_at,
        Enc::Le(w),
        format!("{name}ELF e_shoff"),
        true,
    );
    map.push(
        base + shnum_at,
        Enc::Le(2),
        format!("{name}ELF e_shnum"),
        true,
    );
    map.push(
        base + strndx_at,
        Enc::Le(2),
        format!("{name}ELF e_shstrndx"),
        true,
    );
    let (Some(shoff), Some(shnum), Some(strndx)) = (
        le(data, shoff_at, w).and_then(|v| usize::try_from(v).ok()),
        le(data, shnum_at, 2),
        le(data, strndx_at, 2),
    ) else {
        return;
    };
    // (offset field, size field, name field) positions within a header.
    let (off_at, size_at, align_at) = if wide { (24, 32, 48) } else { (16, 20, 32) };
    let header = |i: usize| {
        shoff
            .checked_add(i * entsize)
            .filter(|h| h + entsize <= data.len())
    };
    let section = |i: usize| -> Option<(usize, usize)> {
        let h = header(i)?;
        let off = usize::try_from(le(data, h + off_at, w)?).ok()?;
        let size = usize::try_from(le(data, h + size_at, w)?).ok()?;
        (off.checked_add(size)? <= data.len()).then_some((off, size))
    };
    let strtab = section(strndx as usize);
    for i in 0..(shnum as usize).min(128) {
        let Some(h) = header(i) else { break };
        let sh_name = le(data, h, 4).unwrap_or(0) as usize;
        let sh_type = le(data, h + 4, 4).unwrap_or(0);
        let section_name: &[u8] = strtab
            .and_then(|(o, s)| data.get(o + sh_name..o + s))
            .map(|n| &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())])
            .unwrap_or_default();
        let offload = section_name.starts_with(BUNDLE_MAGIC)
            || section_name == b".llvm.offloading"
            || section_name == b".hip_fatbin";
        let label = format!(
            "{name}section {i} ({}) ",
            String::from_utf8_lossy(section_name)
        );
        map.push(base + h, Enc::Le(4), format!("{label}sh_name"), offload);
        map.push(base + h + 4, Enc::Le(4), format!("{label}sh_type"), offload);
        map.push(
            base + h + off_at,
            Enc::Le(w),
            format!("{label}sh_offset"),
            offload,
        );
        map.push(
            base + h + size_at,
            Enc::Le(w),
            format!("{label}sh_size"),
            offload,
        );
        map.push(
            base + h + align_at,
            Enc::Le(w),
            format!("{label}sh_addralign"),
            offload,
        );
        if offload {
            if let Some(((o, _), _)) = strtab.map(|s| (s, ())) {
                if !section_name.is_empty() {
                    map.push(
                        base + o + sh_name,
                        Enc::Bytes(section_name.len()),
                        format!("{label}name"),
                        true,
                    );
                }
            }
            if sh_type != 8 {
                if let Some((o, s)) = section(i) {
                    sequence(&data[o..o + s], base + o, depth + 1, &label, map);
                }
            }
        }
    }
}

fn text_markers(data: &[u8], map: &mut Map) {
    let mut pos = 0;
    let mut index = 0;
    while pos < data.len() {
        let end = data[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |n| pos + n + 1);
        let line = &data[pos..end];
        let what = if find(line, TEXT_START).is_some() {
            Some("start")
        } else if find(line, TEXT_END).is_some() {
            Some("end")
        } else {
            None
        };
        if let Some(what) = what {
            map.push(
                pos,
                Enc::Line(end - pos),
                format!("text marker {index} ({what})"),
                true,
            );
            index += 1;
        }
        pos = end;
    }
}
