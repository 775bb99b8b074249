//! Structural mutations: edits of the fields the map found, truncations at
//! field boundaries, concatenations, and containers rebuilt by the core's
//! writers with changed entry IDs (the ID rules) or a damaged inner bundle
//! (compressed bundles, whose bytes cannot be edited in place).

use clangoffload::compressed::{compress, CompressOptions};
use clangoffload::{Bundle, CompressedBundle, CompressionMethod, DecompressOptions};

use super::fields::{self, le, Enc, Field, Region};
use super::rng::Rng;

/// One edit of an input. Offsets are in the unedited input.
#[derive(Clone, Debug)]
pub enum Edit {
    /// Replace `remove` bytes at `at` with `insert`.
    Splice {
        at: usize,
        remove: usize,
        insert: Vec<u8>,
        what: String,
    },
    /// Keep the first `len` bytes.
    Truncate { len: usize, what: String },
    /// Add bytes at the end.
    Append { bytes: Vec<u8>, what: String },
}

impl Edit {
    pub fn describe(&self) -> String {
        match self {
            Edit::Splice {
                at,
                remove,
                insert,
                what,
            } => {
                let shown: String = if insert.len() <= 40 {
                    format!("{:?}", String::from_utf8_lossy(insert))
                } else {
                    format!("{} bytes", insert.len())
                };
                format!("{what}: {remove} bytes at {at:#x} -> {shown}")
            }
            Edit::Truncate { len, what } => format!("truncate to {len} bytes ({what})"),
            Edit::Append { bytes, what } => format!("append {} bytes ({what})", bytes.len()),
        }
    }
}

/// `base` with `edits` applied: splices from the last offset back (so each
/// offset still means the unedited input's), then truncations, then appends.
pub fn apply(base: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut data = base.to_vec();
    let mut splices: Vec<&Edit> = edits
        .iter()
        .filter(|e| matches!(e, Edit::Splice { .. }))
        .collect();
    splices.sort_by_key(|e| match e {
        Edit::Splice { at, .. } => std::cmp::Reverse(*at),
        _ => unreachable!(),
    });
    for edit in splices {
        if let Edit::Splice {
            at, remove, insert, ..
        } = edit
        {
            let at = (*at).min(data.len());
            let end = at.saturating_add(*remove).min(data.len());
            data.splice(at..end, insert.iter().copied());
        }
    }
    for edit in edits {
        if let Edit::Truncate { len, .. } = edit {
            data.truncate(*len);
        }
    }
    for edit in edits {
        if let Edit::Append { bytes, .. } = edit {
            data.extend_from_slice(bytes);
        }
    }
    data
}

/// 1 to 4 edits of `data` (whose field map is `map`); `others` are the other
/// seeds' bytes, for concatenations; `ids` are IDs worth writing in.
pub fn generate(
    rng: &mut Rng,
    data: &[u8],
    map: &fields::Map,
    others: &[&[u8]],
    ids: &[String],
) -> Vec<Edit> {
    let mut count = 1;
    while count < 4 && rng.one_in(3) {
        count += 1;
    }
    let mut edits = Vec::new();
    for _ in 0..count {
        let roll = rng.below(100);
        let edit = if roll < 62 || map.fields.is_empty() && map.regions.is_empty() {
            field_edit(rng, data, map, ids)
        } else if roll < 74 {
            truncation(rng, data, map)
        } else if roll < 84 {
            Some(concatenation(rng, data, others))
        } else {
            rebuild(rng, data, map, ids)
        };
        edits.extend(edit);
    }
    if edits.is_empty() {
        edits.push(truncation(rng, data, map).unwrap_or(Edit::Truncate {
            len: data.len() / 2,
            what: "half".into(),
        }));
    }
    edits
}

fn pick_field<'m>(rng: &mut Rng, map: &'m fields::Map) -> Option<&'m Field> {
    if map.fields.is_empty() {
        return None;
    }
    let hot: Vec<&Field> = map.fields.iter().filter(|f| f.hot).collect();
    if !hot.is_empty() && !rng.one_in(5) {
        Some(hot[rng.below(hot.len())])
    } else {
        Some(rng.pick(&map.fields))
    }
}

fn field_edit(rng: &mut Rng, data: &[u8], map: &fields::Map, ids: &[String]) -> Option<Edit> {
    let field = pick_field(rng, map)?;
    let what = field.what.clone();
    let at = field.at;
    let (remove, insert) = match field.enc {
        Enc::Le(w) => (w, le_value(rng, data, map, field, w)),
        Enc::Dec(w) => (w, dec_value(rng, data, field, w)),
        Enc::Bytes(n) => bytes_value(rng, data.get(at..at + n)?, ids),
        Enc::Line(n) => line_value(rng, data.get(at..at + n)?, ids),
    };
    Some(Edit::Splice {
        at,
        remove,
        insert,
        what,
    })
}

fn le_value(rng: &mut Rng, data: &[u8], map: &fields::Map, field: &Field, w: usize) -> Vec<u8> {
    let v = le(data, field.at, w).unwrap_or(0);
    let len = data.len() as u64;
    let bits = 8 * w as u32;
    let mask = if w >= 8 { u64::MAX } else { (1u64 << bits) - 1 };
    let other = {
        let les: Vec<&Field> = map
            .fields
            .iter()
            .filter(|f| matches!(f.enc, Enc::Le(_)))
            .collect();
        let f = les[rng.below(les.len())];
        le(data, f.at, f.enc.len()).unwrap_or(0)
    };
    let value = match rng.below(17) {
        0 => 0,
        1 => 1,
        2 => v.wrapping_add(1),
        3 => v.wrapping_sub(1),
        4 => v.wrapping_add(1 + rng.below(64) as u64),
        5 => v.wrapping_sub(1 + rng.below(64) as u64),
        6 => v.wrapping_mul(2),
        7 => len,
        8 => len.wrapping_sub(v),
        9 => len + 1 + rng.below(16) as u64,
        10 => mask,
        11 => 1u64 << (bits - 1),
        12 => v ^ (1u64 << rng.below(bits as usize)),
        13 => rng.next_u64(),
        14 => v.wrapping_add(1 << 32),
        15 => other,
        _ => mask - v,
    } & mask;
    value.to_le_bytes()[..w].to_vec()
}

fn dec_value(rng: &mut Rng, data: &[u8], field: &Field, w: usize) -> Vec<u8> {
    let old = data.get(field.at..field.at + w).unwrap_or_default();
    let v: u64 = std::str::from_utf8(old)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let text = match rng.below(12) {
        0 => "0".to_owned(),
        1 => (v + 1).to_string(),
        2 => v.saturating_sub(1).to_string(),
        3 => (v + 1 + rng.below(300) as u64).to_string(),
        4 => v.saturating_sub(1 + rng.below(300) as u64).to_string(),
        5 => (v + data.len() as u64).to_string(),
        6 => "9".repeat(w),
        7 => "-1".to_owned(),
        8 => format!("{v}x"),
        9 => String::new(),
        10 => format!(" {v}"),
        _ => (v * 2).to_string(),
    };
    let mut bytes = text.into_bytes();
    bytes.resize(w, b' ');
    bytes.truncate(w);
    bytes
}

/// A replacement for the bytes `old`: `(how many bytes it replaces, new bytes)`.
fn bytes_value(rng: &mut Rng, old: &[u8], ids: &[String]) -> (usize, Vec<u8>) {
    let mut new = old.to_vec();
    const BYTES: &[u8] = b"-\0\nx_:+/ \xff";
    match rng.below(7) {
        0 | 1 => {
            let dashes: Vec<usize> = (0..new.len()).filter(|&i| new[i] == b'-').collect();
            let i = if !dashes.is_empty() && rng.one_in(2) {
                *rng.pick(&dashes)
            } else {
                rng.below(new.len())
            };
            new[i] = *rng.pick(BYTES);
        }
        2 => new.fill(0),
        3 if !ids.is_empty() => {
            let id = rng.pick(ids).as_bytes();
            if rng.one_in(2) {
                return (old.len(), id.to_vec());
            }
            new = id.to_vec();
            new.resize(old.len(), b'-');
        }
        4 => {
            new.remove(rng.below(new.len()));
        }
        5 => new.insert(rng.below(new.len() + 1), *rng.pick(BYTES)),
        _ => {
            let i = rng.below(new.len());
            new[i] = new[i].wrapping_add(1);
        }
    }
    (old.len(), new)
}

fn line_value(rng: &mut Rng, line: &[u8], ids: &[String]) -> (usize, Vec<u8>) {
    let text = String::from_utf8_lossy(line).into_owned();
    let new = match rng.below(8) {
        0 => String::new(),
        1 => format!("{text}{text}"),
        2 if text.contains("____START__") => text.replace("____START__", "____END__"),
        2 => text.replace("____END__", "____START__"),
        3 if !ids.is_empty() => {
            let cut = text.find("__ ").map_or(text.len(), |i| i + 3);
            format!("{}{}\n", &text[..cut], rng.pick(ids))
        }
        4 => text.trim_end_matches('\n').to_owned(),
        5 => format!("x{text}"),
        6 => text.replacen(' ', "", 1),
        _ => format!("{text}garbage\n"),
    };
    (line.len(), new.into_bytes())
}

fn truncation(rng: &mut Rng, data: &[u8], map: &fields::Map) -> Option<Edit> {
    let field = pick_field(rng, map)?;
    let (len, where_) = match rng.below(3) {
        0 => (field.at, "start"),
        1 => (field.at + field.enc.len(), "end"),
        _ => (field.at + field.enc.len() / 2, "middle"),
    };
    (len < data.len()).then(|| Edit::Truncate {
        len,
        what: format!("at the {where_} of {}", field.what),
    })
}

fn concatenation(rng: &mut Rng, data: &[u8], others: &[&[u8]]) -> Edit {
    let (second, which) = if others.is_empty() || rng.one_in(3) {
        (data, "itself".to_owned())
    } else {
        let i = rng.below(others.len());
        (others[i], format!("seed #{i}"))
    };
    let pad = match rng.below(4) {
        0 => 0,
        1 => (8 - data.len() % 8) % 8,
        2 => (4096 - data.len() % 4096) % 4096,
        _ => 1 + rng.below(7),
    };
    let mut bytes = vec![0u8; pad];
    bytes.extend_from_slice(second);
    Edit::Append {
        bytes,
        what: format!("{which} after {pad} zero bytes"),
    }
}

/// A container rewritten by the core's writer with its entries changed.
fn rebuild(rng: &mut Rng, data: &[u8], map: &fields::Map, ids: &[String]) -> Option<Edit> {
    let region = *rng.pick(map.regions.as_slice().get(..).filter(|r| !r.is_empty())?);
    match region {
        Region::Bundle { at, len } => {
            let old = data.get(at..at + len)?;
            let (new, what) = rebuild_bundle(rng, old, ids)?;
            Some(Edit::Splice {
                at,
                remove: len,
                insert: new,
                what: format!("bundle at {at:#x} rebuilt: {what}"),
            })
        }
        Region::Compressed { at, len } => {
            let old = data.get(at..at + len)?;
            let ccob = CompressedBundle::parse(old).ok()?;
            let inner = ccob.decompress(&DecompressOptions::default()).ok()?;
            let (new_inner, what) = if rng.one_in(2) {
                rebuild_bundle(rng, &inner, ids)?
            } else {
                let inner_map = fields::map(&inner);
                let edit = field_edit(rng, &inner, &inner_map, ids)
                    .or_else(|| truncation(rng, &inner, &inner_map))?;
                let what = edit.describe();
                (apply(&inner, &[edit]), what)
            };
            let version = le(old, 4, 2).unwrap_or(3) as u16;
            let options = CompressOptions {
                version: if version == 2 { 2 } else { 3 },
                method: CompressionMethod::Zlib,
                level: None,
            };
            let new = compress(&new_inner, &options).ok()?;
            Some(Edit::Splice {
                at,
                remove: len,
                insert: new,
                what: format!("compressed bundle at {at:#x} recompressed (zlib) with its bundle changed: {what}"),
            })
        }
    }
}

fn rebuild_bundle(rng: &mut Rng, old: &[u8], ids: &[String]) -> Option<(Vec<u8>, String)> {
    let bundle = Bundle::parse(old).ok()?;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = bundle
        .entries()
        .map(|e| e.map(|e| (e.id().to_vec(), e.payload().to_vec())))
        .collect::<Result<_, _>>()
        .ok()?;
    if entries.is_empty() {
        return None;
    }
    let k = rng.below(entries.len());
    let what = match rng.below(6) {
        0 => {
            let old_id = String::from_utf8_lossy(&entries[k].0).into_owned();
            let new_id = id_variant(rng, &old_id, ids);
            entries[k].0 = new_id.clone().into_bytes();
            format!("entry {k} ID {old_id:?} -> {new_id:?}")
        }
        1 => {
            let copy = (entries[k].0.clone(), b"duplicate".to_vec());
            let i = rng.below(entries.len() + 1);
            entries.insert(i, copy);
            format!("entry {k}'s ID repeated as entry {i}")
        }
        2 if entries.len() > 1 => {
            entries.remove(k);
            format!("entry {k} removed")
        }
        3 if entries.len() > 1 => {
            let j = rng.below(entries.len());
            entries.swap(k, j);
            format!("entries {k} and {j} swapped")
        }
        4 => {
            entries[k].1.clear();
            format!("entry {k} emptied")
        }
        _ => {
            let j = rng.below(entries.len());
            entries[k].0 = entries[j].0.clone();
            format!("entry {k} takes entry {j}'s ID")
        }
    };
    let align = *rng.pick(&[1u64, 8, 4096]);
    let pairs: Vec<(&[u8], &[u8])> = entries
        .iter()
        .map(|(i, p)| (i.as_slice(), p.as_slice()))
        .collect();
    let new = clangoffload::bundle::write_bundle(&pairs, align).ok()?;
    Some((new, format!("{what}, align {align}")))
}

/// An entry ID near `id`: another kind, processor, feature or triple spelling.
pub fn id_variant(rng: &mut Rng, id: &str, ids: &[String]) -> String {
    match rng.below(10) {
        0 => id.replacen("hipv4-", "hip-", 1),
        1 => id.replacen("hip-", "hipv4-", 1),
        2 => id
            .replacen("hipv4-", "openmp-", 1)
            .replacen("hip-", "openmp-", 1),
        3 => format!("{id}:xnack{}", if rng.one_in(2) { '+' } else { '-' }),
        4 => format!("{id}:sramecc+"),
        5 => {
            let cut = id.match_indices('-').nth(3).map_or(id.len(), |(i, _)| i);
            id[..cut].to_owned()
        }
        6 => id
            .replace("gfx906", "gfx90a")
            .replace("gfx90a:xnack+", "gfx906"),
        7 => id
            .replace("-unknown-", "--")
            .replace("-linux-gnu", "-linux"),
        8 if !ids.is_empty() => rng.pick(ids).clone(),
        _ => {
            let cut = id.rfind('-').map_or(0, |i| i + 1);
            format!(
                "{}{}",
                &id[..cut],
                rng.pick(&[
                    "gfx906",
                    "gfx1100",
                    "gfx9-generic",
                    "sm_70",
                    "tahiti",
                    "gfx9999",
                    ""
                ])
            )
        }
    }
}
