//! kpack's split of a host: its code objects planned into archives (one per
//! architecture, keyed `<kernel_name>#<n>`) and the host rewritten as
//! rocm-kpack's `kpack_offload_binary` rewrites it (ROCm/rocm-kpack
//! e348328, `elf/kpack_transform.py`), byte for byte:
//!
//! ```text
//! 1. the marker {"kpack_search_paths": [...], "kernel_name": ...} appended
//!    as section .rocm_kpack_ref (last index), the name table copied to the
//!    end with its name, the section header table written after them
//! 2. the marker copied to the next page and given its own PT_LOAD (R) at
//!    the first page after every PT_LOAD; the program header table moved
//!    to the end of the file (PT_PHDR with it) in a PT_LOAD of its own,
//!    room for a multiple of 16 headers
//! 3. each HIPF record k: magic HIPK, pointer at the marker (through the
//!    R_X86_64_RELATIVE relocation that fills it, its addend rewritten),
//!    the code object index k in its last field
//! 4. .hip_fatbin: its whole pages (less one when it ends on a page)
//!    cut from the file, the section NOBITS, its PT_LOAD split around it
//!    (a zero-fill segment in its place), every later offset moved down;
//!    the program headers rewritten in place, or moved again if they no
//!    longer fit
//! ```
//!
//! Where rocm-kpack is wrong this module does otherwise (docs/differences.md,
//! "rocm-kpack"):
//!
//! * an executable that is not position-independent (`ET_EXEC`) has no
//!   relocation to fill a record's pointer, and rocm-kpack leaves it 0 (the
//!   runtime stops: "HIPK metadata is null"); here the pointer holds the
//!   marker's address, as the `HIPF` record held its bundle's;
//! * a record of a position-independent file whose pointer no relocation
//!   fills would be left 0 there too: refused here;
//! * rocm-kpack keys code objects by a per-architecture counter, the
//!   runtime looks them up by the record's index: when translation units
//!   hold different architectures (or one twice) the two differ and the
//!   runtime gets another unit's code. [`KeyRule::Strict`] (the default)
//!   refuses such a host naming the first record and architecture that
//!   differ; [`KeyRule::Record`] keys by record, as the runtime looks up;
//!   [`KeyRule::PerArch`] is rocm-kpack's counter.
//!
//! Nothing here holds more than the host's tables, one decoded compressed
//! bundle's entry table and the rewritten host: the code objects are read
//! (and compressed bundles decoded) one bundle at a time by the caller,
//! through [`HostSplit::bundle`].

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::FromBytes;

use super::{ShortName, SplitFault};
use crate::bytes::to_u64;
use crate::compressed::DecompressOptions;
use crate::container::{Container, Containers};
use crate::elf::{FileHeader64, ProgramHeader64, SectionHeader64};
use crate::msgpack::write;
use crate::{Bundle, Error, ErrorKind, Result};

const PAGE: u64 = 0x1000;
const PT_LOAD: u32 = 1;
const PT_PHDR: u32 = 6;
const PF_R: u32 = 4;
const SHT_PROGBITS: u32 = 1;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u64 = 2;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
const R_X86_64_RELATIVE: u64 = 8;
const HIPF: u32 = 0x4849_5046;
const HIPK: u32 = 0x4B50_4948;
const RECORD: u64 = 24;
const PHDR_SIZE: u64 = 56;
const SHDR_SIZE: u64 = 64;
const RELA_SIZE: u64 = 24;
/// rocm-kpack moves the program header table with room for a multiple of
/// this many headers.
const SPARE_SLOTS: u64 = 16;

/// The marker's section.
pub const MARKER_SECTION: &[u8] = b".rocm_kpack_ref";

/// How code objects are keyed in the archives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyRule {
    /// By record index where that is also rocm-kpack's per-architecture
    /// counter; a host where the two differ is refused.
    #[default]
    Strict,
    /// By the index of the record whose bundle holds the code object: what
    /// the runtime looks up (`<kernel_name>#<record index>`).
    Record,
    /// rocm-kpack's per-architecture counter: the n-th code object of an
    /// architecture in the host is `#n`, whichever record it belongs to.
    PerArch,
}

fn fail(fault: SplitFault, offset: u64) -> Error {
    Error::new(ErrorKind::KpackSplit { fault }, offset)
}

/// What the split writes into the host.
#[derive(Debug, Clone, Copy)]
pub struct SplitOptions<'a> {
    /// The marker's `kernel_name`: the binary's name in the archives'
    /// keys (rocm-kpack: `<artifact prefix>/<path under it>`).
    pub kernel_name: &'a [u8],
    /// The marker's `kpack_search_paths` (rocm-kpack: one,
    /// `../` per directory level, then `.kpack/<group>_@GFXARCH@.kpack`).
    pub search_paths: &'a [&'a [u8]],
    /// How code objects are keyed.
    pub keys: KeyRule,
}

/// The search path rocm-kpack's artifact splitter writes for a binary
/// `depth` directories below its prefix: `../` that many times, then
/// `.kpack/<group>_@GFXARCH@.kpack`.
pub fn search_path(group: &[u8], depth: usize) -> Vec<u8> {
    let mut path = Vec::new();
    for _ in 0..depth {
        path.extend_from_slice(b"../");
    }
    path.extend_from_slice(b".kpack/");
    path.extend_from_slice(group);
    path.push(b'_');
    path.extend_from_slice(crate::kpack::GFXARCH);
    path.extend_from_slice(b".kpack");
    path
}

/// The marker's bytes, as Python's msgpack writes rocm-kpack's dict.
pub fn marker_bytes(kernel_name: &[u8], search_paths: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    write::map(&mut out, 2);
    write::str(&mut out, b"kpack_search_paths");
    write::array(&mut out, search_paths.len());
    for path in search_paths {
        write::str(&mut out, path);
    }
    write::str(&mut out, b"kernel_name");
    write::str(&mut out, kernel_name);
    out
}

/// One code object of a split: which record's bundle holds it, its entry
/// ID, its key in the archive of its architecture, and where it lies in
/// the (decoded) bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitCodeObject {
    /// The record (and bundle) index.
    pub record: u64,
    /// The bundle entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`).
    pub id: Vec<u8>,
    /// Where the architecture starts in `id` (after its last `--`).
    arch_at: usize,
    /// `<kernel_name>#<n>`.
    pub key: Vec<u8>,
    /// Offset of its bytes in the bundle (decoded, for a compressed one).
    pub offset: u64,
    /// Its size.
    pub size: u64,
}

impl SplitCodeObject {
    /// The architecture: the entry ID after its last `--`, as rocm-kpack
    /// names archives and keys entries.
    pub fn arch(&self) -> &[u8] {
        self.id.get(self.arch_at..).unwrap_or_default()
    }

    /// Its bytes in `bundle` (what [`HostSplit::bundle`] gave).
    pub fn bytes<'b>(&self, bundle: &'b [u8]) -> Result<&'b [u8]> {
        crate::bytes::range(bundle, self.offset, self.size).ok_or_else(|| {
            Error::new(
                ErrorKind::OutputTooSmall {
                    needed: self.offset.saturating_add(self.size),
                    available: to_u64(bundle.len()),
                },
                self.offset,
            )
        })
    }
}

/// One translation unit: its record's bundle in `.hip_fatbin`.
#[derive(Debug, Clone)]
pub struct SplitUnit<'data> {
    /// Its file offset.
    pub offset: u64,
    container: Container<'data>,
}

impl<'data> SplitUnit<'data> {
    /// Whether its bundle is compressed.
    pub fn is_compressed(&self) -> bool {
        matches!(self.container, Container::Compressed(_))
    }

    /// Its bytes in the input.
    pub fn data(&self) -> &'data [u8] {
        self.container.data()
    }
}

/// A host's split: the rewritten host, and the code objects to store.
#[derive(Debug, Clone)]
pub struct HostSplit<'data> {
    /// The host as rocm-kpack rewrites it (but for the differences in the
    /// module's documentation).
    pub host: Vec<u8>,
    /// Each record's bundle, in record order.
    pub units: Vec<SplitUnit<'data>>,
    /// Every code object, in bundle order then entry order (host entries
    /// left out): the order rocm-kpack stores them in.
    pub code_objects: Vec<SplitCodeObject>,
    /// The marker's address.
    pub marker_address: u64,
    /// The marker's bytes.
    pub marker: Vec<u8>,
    /// Bytes cut from the file (whole pages of `.hip_fatbin`).
    pub removed: u64,
}

impl<'data> HostSplit<'data> {
    /// Unit `index`'s bundle as a plain bundle: borrowed from the input,
    /// or a compressed one decoded into `scratch` (one at a time).
    pub fn bundle<'s>(
        &self,
        index: usize,
        scratch: &'s mut Vec<u8>,
        options: &DecompressOptions,
    ) -> Result<&'s [u8]>
    where
        'data: 's,
    {
        let unit = self.units.get(index).ok_or_else(|| {
            fail(
                SplitFault::RecordCount {
                    records: to_u64(index),
                    bundles: to_u64(self.units.len()),
                },
                0,
            )
        })?;
        match &unit.container {
            Container::Compressed(compressed) => {
                *scratch = compressed
                    .decompress(options)
                    .map_err(|e| e.shifted(unit.offset))?;
                Ok(scratch.as_slice())
            }
            other => Ok(other.data()),
        }
    }
}

/// An ELF64 section header in native integers.
#[derive(Debug, Clone, Copy, Default)]
struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    addralign: u64,
    entsize: u64,
}

impl Shdr {
    fn read(bytes: &[u8]) -> Option<Shdr> {
        let h = SectionHeader64::ref_from_prefix(bytes).ok()?.0;
        Some(Shdr {
            name: h.sh_name.get(),
            kind: h.sh_type.get(),
            flags: h.sh_flags.get(),
            addr: h.sh_addr.get(),
            offset: h.sh_offset.get(),
            size: h.sh_size.get(),
            link: h.sh_link.get(),
            info: h.sh_info.get(),
            addralign: h.sh_addralign.get(),
            entsize: h.sh_entsize.get(),
        })
    }

    fn bytes(&self) -> [u8; 64] {
        let h = SectionHeader64 {
            sh_name: U32::new(self.name),
            sh_type: U32::new(self.kind),
            sh_flags: U64::new(self.flags),
            sh_addr: U64::new(self.addr),
            sh_offset: U64::new(self.offset),
            sh_size: U64::new(self.size),
            sh_link: U32::new(self.link),
            sh_info: U32::new(self.info),
            sh_addralign: U64::new(self.addralign),
            sh_entsize: U64::new(self.entsize),
        };
        let mut out = [0u8; 64];
        out.copy_from_slice(zerocopy::IntoBytes::as_bytes(&h));
        out
    }
}

/// An ELF64 program header in native integers.
#[derive(Debug, Clone, Copy, Default)]
struct Phdr {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    paddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

impl Phdr {
    fn read(bytes: &[u8]) -> Option<Phdr> {
        let h = ProgramHeader64::ref_from_prefix(bytes).ok()?.0;
        Some(Phdr {
            kind: h.p_type.get(),
            flags: h.p_flags.get(),
            offset: h.p_offset.get(),
            vaddr: h.p_vaddr.get(),
            paddr: h.p_paddr.get(),
            filesz: h.p_filesz.get(),
            memsz: h.p_memsz.get(),
            align: h.p_align.get(),
        })
    }

    fn bytes(&self) -> [u8; 56] {
        let h = ProgramHeader64 {
            p_type: U32::new(self.kind),
            p_flags: U32::new(self.flags),
            p_offset: U64::new(self.offset),
            p_vaddr: U64::new(self.vaddr),
            p_paddr: U64::new(self.paddr),
            p_filesz: U64::new(self.filesz),
            p_memsz: U64::new(self.memsz),
            p_align: U64::new(self.align),
        };
        let mut out = [0u8; 56];
        out.copy_from_slice(zerocopy::IntoBytes::as_bytes(&h));
        out
    }

    fn load(flags: u32, offset: u64, vaddr: u64, size: u64, align: u64) -> Phdr {
        Phdr {
            kind: PT_LOAD,
            flags,
            offset,
            vaddr,
            paddr: vaddr,
            filesz: size,
            memsz: size,
            align,
        }
    }

    fn contains(&self, vaddr: u64) -> bool {
        self.vaddr <= vaddr && vaddr < self.vaddr.saturating_add(self.memsz)
    }
}

/// The file as the rewrite goes: the input (patched, less one removed
/// range) then appended bytes. Offsets are the current file's.
struct Image<'a> {
    input: &'a [u8],
    /// Writes into the input, at input offsets, in order.
    patches: Vec<(u64, Vec<u8>)>,
    tail: Vec<u8>,
    /// The removed range: where it was (now where what followed it is), and
    /// its size.
    removed: Option<(u64, u64)>,
}

fn overflow(at: u64) -> Error {
    Error::new(ErrorKind::LayoutOverflow, at)
}

fn add(a: u64, b: u64) -> Result<u64> {
    a.checked_add(b).ok_or_else(|| overflow(a))
}

fn sub(a: u64, b: u64) -> Result<u64> {
    a.checked_sub(b).ok_or_else(|| overflow(a))
}

fn mul(a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b).ok_or_else(|| overflow(a))
}

fn round_up(value: u64) -> Result<u64> {
    Ok(add(value, PAGE - 1)? & !(PAGE - 1))
}

fn round_down(value: u64) -> u64 {
    value & !(PAGE - 1)
}

/// The least offset at or after `offset` with `vaddr`'s place in a page.
fn page_align_offset(offset: u64, vaddr: u64) -> Result<u64> {
    let (want, have) = (vaddr & (PAGE - 1), offset & (PAGE - 1));
    if have == want {
        Ok(offset)
    } else if have < want {
        Ok(round_down(offset) | want)
    } else {
        Ok(round_up(offset)? | want)
    }
}

impl<'a> Image<'a> {
    fn input_len(&self) -> u64 {
        to_u64(self.input.len()).saturating_sub(self.removed.map_or(0, |(_, s)| s))
    }

    fn len(&self) -> u64 {
        self.input_len().saturating_add(to_u64(self.tail.len()))
    }

    /// The input offset of current offset `at` (in the input part).
    fn original(&self, at: u64) -> u64 {
        match self.removed {
            Some((start, size)) if at >= start => at.saturating_add(size),
            _ => at,
        }
    }

    fn write(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let end = add(at, to_u64(bytes.len()))?;
        if end > self.len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        let input_len = self.input_len();
        if at >= input_len {
            let from = usize::try_from(at.saturating_sub(input_len)).map_err(|_| overflow(at))?;
            let to = from.saturating_add(bytes.len());
            self.tail
                .get_mut(from..to)
                .ok_or_else(|| overflow(at))?
                .copy_from_slice(bytes);
            return Ok(());
        }
        if end > input_len
            || self
                .removed
                .is_some_and(|(start, _)| at < start && end > start)
        {
            // Never asked for: a write across the end of the input or the cut.
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        self.patches.push((self.original(at), bytes.to_vec()));
        Ok(())
    }

    fn read(&self, at: u64, len: u64) -> Result<Vec<u8>> {
        let end = add(at, len)?;
        if end > self.len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        let mut out = Vec::new();
        let input_len = self.input_len();
        if at < input_len {
            let stop = end.min(input_len);
            if self
                .removed
                .is_some_and(|(start, _)| at < start && stop > start)
            {
                return Err(fail(SplitFault::Unmapped { address: at }, at));
            }
            let from = self.original(at);
            let size = stop.saturating_sub(at);
            let bytes = crate::bytes::range(self.input, from, size).ok_or_else(|| overflow(at))?;
            out.extend_from_slice(bytes);
            for (offset, patch) in &self.patches {
                overlay(&mut out, from, *offset, patch);
            }
        }
        if end > input_len {
            let from = at.max(input_len).saturating_sub(input_len);
            let bytes =
                crate::bytes::range(&self.tail, from, end.saturating_sub(at.max(input_len)))
                    .ok_or_else(|| overflow(at))?;
            out.extend_from_slice(bytes);
        }
        Ok(out)
    }

    fn read_u32(&self, at: u64) -> Result<u32> {
        let bytes = self.read(at, 4)?;
        let array: [u8; 4] = bytes.as_slice().try_into().map_err(|_| overflow(at))?;
        Ok(u32::from_le_bytes(array))
    }

    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = self.len();
        crate::bytes::extend(&mut self.tail, bytes)?;
        Ok(at)
    }

    fn pad_to(&mut self, offset: u64) -> Result<()> {
        let len = self.len();
        if offset > len {
            let more = usize::try_from(offset.saturating_sub(len)).map_err(|_| overflow(len))?;
            let new_len = self.tail.len().saturating_add(more);
            self.tail.resize(new_len, 0);
        }
        Ok(())
    }

    fn remove(&mut self, at: u64, size: u64) -> Result<()> {
        if self.removed.is_some() || add(at, size)? > self.input_len() {
            return Err(fail(SplitFault::Unmapped { address: at }, at));
        }
        self.removed = Some((at, size));
        Ok(())
    }

    fn finish(self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let len = usize::try_from(self.len()).map_err(|_| overflow(0))?;
        out.try_reserve_exact(len).map_err(|_| {
            Error::new(
                ErrorKind::OutOfMemory {
                    requested: to_u64(len),
                },
                0,
            )
        })?;
        let (cut, size) = self.removed.unwrap_or((to_u64(self.input.len()), 0));
        let before = crate::bytes::range(self.input, 0, cut).ok_or_else(|| overflow(cut))?;
        out.extend_from_slice(before);
        let after = add(cut, size)?;
        let rest = self
            .input
            .get(usize::try_from(after).map_err(|_| overflow(after))?..)
            .unwrap_or_default();
        out.extend_from_slice(rest);
        for (offset, patch) in &self.patches {
            // Patches are at input offsets: move those after the cut down.
            if *offset >= after {
                overlay(&mut out, size, *offset, patch);
            } else if add(*offset, to_u64(patch.len()))? <= cut {
                overlay(&mut out, 0, *offset, patch);
            }
        }
        out.extend_from_slice(&self.tail);
        Ok(out)
    }
}

/// Writes `patch`, at input offset `at`, over `out`, which holds the input
/// from offset `base` on (for `base` > `at`: `out` starts `base` earlier).
fn overlay(out: &mut [u8], base: u64, at: u64, patch: &[u8]) {
    for (i, byte) in patch.iter().enumerate() {
        let Some(place) = at.checked_add(to_u64(i)).and_then(|p| p.checked_sub(base)) else {
            continue;
        };
        if let Some(slot) = usize::try_from(place).ok().and_then(|p| out.get_mut(p)) {
            *slot = *byte;
        }
    }
}

/// The ELF header fields the rewrite changes, and where they are.
#[derive(Debug, Clone, Copy)]
struct Header {
    kind: u16,
    phoff: u64,
    phnum: u64,
    shoff: u64,
    shnum: u64,
    shstrndx: u64,
}

/// The rewrite's state: rocm-kpack's `ElfSurgery` and its lists.
struct Surgery<'a> {
    image: Image<'a>,
    header: Header,
    phdrs: Vec<Phdr>,
    shdrs: Vec<Shdr>,
    names: Vec<Vec<u8>>,
}

impl<'a> Surgery<'a> {
    fn write_header(&mut self) -> Result<()> {
        let h = self.header;
        let phnum = u16::try_from(h.phnum).map_err(|_| overflow(56))?;
        let shnum = u16::try_from(h.shnum).map_err(|_| overflow(60))?;
        self.image.write(32, &h.phoff.to_le_bytes())?;
        self.image.write(40, &h.shoff.to_le_bytes())?;
        self.image.write(56, &phnum.to_le_bytes())?;
        self.image.write(60, &shnum.to_le_bytes())?;
        Ok(())
    }

    fn write_shdr(&mut self, index: usize) -> Result<()> {
        let shdr = *self.shdrs.get(index).ok_or_else(|| overflow(0))?;
        let at = add(self.header.shoff, mul(to_u64(index), SHDR_SIZE)?)?;
        self.image.write(at, &shdr.bytes())
    }

    fn find(&self, name: &[u8]) -> Option<usize> {
        self.names.iter().position(|n| n.as_slice() == name)
    }

    /// The first program header (of any type) holding `vaddr`, as
    /// rocm-kpack looks.
    fn phdr_at(&self, vaddr: u64) -> Option<(usize, Phdr)> {
        self.phdrs
            .iter()
            .copied()
            .enumerate()
            .find(|(_, p)| p.contains(vaddr))
    }

    fn offset_of(&self, vaddr: u64) -> Result<u64> {
        let (_, p) = self
            .phdr_at(vaddr)
            .ok_or_else(|| fail(SplitFault::Unmapped { address: vaddr }, 0))?;
        add(p.offset, sub(vaddr, p.vaddr)?)
    }

    /// The least file offset of contents after the program header table:
    /// rocm-kpack's room for the table where it is.
    fn min_content_offset(&self) -> u64 {
        let phoff = self.header.phoff;
        let mut min = self.image.len();
        for s in &self.shdrs {
            if s.kind != 0 && s.offset > phoff {
                min = min.min(s.offset);
            }
        }
        for p in &self.phdrs {
            if p.kind == PT_LOAD && p.filesz > 0 && p.offset > phoff {
                min = min.min(p.offset);
            }
        }
        min
    }

    /// rocm-kpack's `ProgramHeaderManager.apply` for `list`: in place if it
    /// fits (and the table is not growing), else moved to the end.
    fn apply_phdrs(&mut self, mut list: Vec<Phdr>) -> Result<()> {
        let required = mul(to_u64(list.len()), PHDR_SIZE)?;
        let available = self.min_content_offset().saturating_sub(self.header.phoff);
        if required <= available {
            if to_u64(list.len()) > self.header.phnum {
                return Err(fail(SplitFault::PhdrRoom, 32));
            }
            for (i, p) in list.iter().enumerate() {
                let at = add(self.header.phoff, mul(to_u64(i), PHDR_SIZE)?)?;
                self.image.write(at, &p.bytes())?;
            }
            self.header.phnum = to_u64(list.len());
            self.phdrs = list;
            return self.write_header();
        }
        let vaddr = round_up(max_load_end(&list))?;
        let offset = page_align_offset(self.image.len(), vaddr)?;
        self.image.pad_to(offset)?;
        let needed = add(to_u64(list.len()), 1)?;
        let capacity = mul(add(needed, SPARE_SLOTS - 1)? / SPARE_SLOTS, SPARE_SLOTS)?;
        let size = mul(capacity, PHDR_SIZE)?;
        if let Some(p) = list.iter_mut().find(|p| p.kind == PT_PHDR) {
            *p = Phdr {
                offset,
                vaddr,
                paddr: vaddr,
                filesz: size,
                memsz: size,
                ..*p
            };
        }
        list.push(Phdr::load(PF_R, offset, vaddr, size, PAGE));
        let mut table = Vec::new();
        for p in &list {
            table.extend_from_slice(&p.bytes());
        }
        table.resize(usize::try_from(size).map_err(|_| overflow(offset))?, 0);
        self.image.append(&table)?;
        self.header.phoff = offset;
        self.header.phnum = to_u64(list.len());
        self.phdrs = list;
        self.write_header()
    }
}

fn max_load_end(list: &[Phdr]) -> u64 {
    list.iter()
        .filter(|p| p.kind == PT_LOAD)
        .map(|p| p.vaddr.saturating_add(p.memsz))
        .max()
        .unwrap_or(0)
}

fn read_header(data: &[u8]) -> Result<Header> {
    let unsupported = |expected| fail(SplitFault::Unsupported { expected }, 0);
    let elf64 = "a 64-bit little-endian x86-64 ELF file";
    let h = FileHeader64::ref_from_prefix(data)
        .map_err(|_| unsupported(elf64))?
        .0;
    if !data.starts_with(crate::elf::ELF_MAGIC)
        || h.e_ident.get(4) != Some(&2)
        || h.e_ident.get(5) != Some(&1)
        || h.e_machine.get() != EM_X86_64
    {
        return Err(unsupported(elf64));
    }
    let kind = h.e_type.get();
    if kind != ET_DYN && kind != ET_EXEC {
        return Err(fail(
            SplitFault::Unsupported {
                expected: "a shared object or an executable",
            },
            16,
        ));
    }
    let entsizes = |field: U16, want: u64, at| {
        if u64::from(field.get()) == want {
            Ok(())
        } else {
            Err(fail(
                SplitFault::Unsupported {
                    expected: "an ELF file with 56-byte program and 64-byte section headers",
                },
                at,
            ))
        }
    };
    entsizes(h.e_phentsize, PHDR_SIZE, 54)?;
    entsizes(h.e_shentsize, SHDR_SIZE, 58)?;
    let (shnum, shstrndx) = (h.e_shnum.get(), h.e_shstrndx.get());
    if shnum == 0 || shstrndx >= shnum || h.e_phnum.get() == 0xffff {
        return Err(fail(
            SplitFault::Unsupported {
                expected: "an ELF file with its section and program header counts in its header",
            },
            60,
        ));
    }
    Ok(Header {
        kind,
        phoff: h.e_phoff.get(),
        phnum: u64::from(h.e_phnum.get()),
        shoff: h.e_shoff.get(),
        shnum: u64::from(shnum),
        shstrndx: u64::from(shstrndx),
    })
}

fn table<T>(
    data: &[u8],
    offset: u64,
    count: u64,
    size: u64,
    read: fn(&[u8]) -> Option<T>,
) -> Result<Vec<T>> {
    let bytes = crate::bytes::range(data, offset, mul(count, size)?).ok_or_else(|| {
        Error::new(
            ErrorKind::SectionTableOutOfBounds {
                offset,
                count,
                len: to_u64(data.len()),
            },
            offset,
        )
    })?;
    let step = usize::try_from(size).map_err(|_| overflow(offset))?;
    bytes
        .chunks_exact(step)
        .map(|chunk| read(chunk).ok_or_else(|| overflow(offset)))
        .collect()
}

fn name_at(strtab: &[u8], at: u32) -> Vec<u8> {
    let rest = usize::try_from(at)
        .ok()
        .and_then(|at| strtab.get(at..))
        .unwrap_or_default();
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    rest.get(..end).unwrap_or_default().to_vec()
}

/// A relocation with addend.
#[derive(Debug, Clone, Copy)]
struct Rela {
    /// Its file offset.
    at: u64,
    address: u64,
    info: u64,
    addend: u64,
}

fn relocations(data: &[u8], shdrs: &[Shdr]) -> Result<Vec<Rela>> {
    let mut out = Vec::new();
    for s in shdrs.iter().filter(|s| s.kind == SHT_RELA) {
        let step = if s.entsize == 0 { RELA_SIZE } else { s.entsize };
        let mut at = s.offset;
        let end = add(s.offset, s.size)?;
        while at < end {
            let bytes = crate::bytes::range(data, at, RELA_SIZE).ok_or_else(|| {
                Error::new(
                    ErrorKind::SectionOutOfBounds {
                        offset: s.offset,
                        size: s.size,
                        len: to_u64(data.len()),
                    },
                    at,
                )
            })?;
            let word = |i: usize| {
                bytes
                    .get(i..i.saturating_add(8))
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, u64::from_le_bytes)
            };
            out.push(Rela {
                at,
                address: word(0),
                info: word(8),
                addend: word(16),
            });
            at = add(at, step)?;
        }
    }
    Ok(out)
}

/// The code objects of `host`'s `.hip_fatbin`, keyed by `rule`.
fn plan_code_objects<'data>(
    data: &'data [u8],
    fatbin: &Shdr,
    kernel_name: &[u8],
    rule: KeyRule,
    options: &DecompressOptions,
) -> Result<(Vec<SplitUnit<'data>>, Vec<SplitCodeObject>)> {
    let bytes = crate::bytes::range(data, fatbin.offset, fatbin.size).ok_or_else(|| {
        Error::new(
            ErrorKind::SectionOutOfBounds {
                offset: fatbin.offset,
                size: fatbin.size,
                len: to_u64(data.len()),
            },
            fatbin.offset,
        )
    })?;
    let mut units = Vec::new();
    let mut objects = Vec::new();
    let mut counters: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut conflict: Option<(u64, ShortName, u64, u64)> = None;
    let mut conflicts = 0u64;
    for found in Containers::new(bytes) {
        let (at, container) = found.map_err(|e| e.shifted(fatbin.offset))?;
        let offset = add(fatbin.offset, at)?;
        let record = to_u64(units.len());
        let table;
        let bundle = match &container {
            Container::Bundle(bundle) => *bundle,
            Container::Compressed(compressed) => {
                table = compressed
                    .decompress_table(options)
                    .map_err(|e| e.shifted(offset))?;
                Bundle::parse_table(&table, compressed.uncompressed_size())
                    .map_err(|e| e.shifted(offset))?
            }
            Container::OffloadBinary(_) => return Err(fail(SplitFault::NotBundle, offset)),
        };
        for entry in bundle.entries() {
            let entry = entry.map_err(|e| e.shifted(offset))?;
            let id = entry.id();
            let Some(dashes) = id.windows(2).rposition(|w| w == b"--") else {
                continue; // the host entry: no architecture
            };
            let arch_at = dashes.saturating_add(2);
            let arch = id.get(arch_at..).unwrap_or_default();
            let counter = counters.entry(arch.to_vec()).or_insert(0);
            let n = *counter;
            *counter = counter.saturating_add(1);
            if n != record {
                conflicts = conflicts.saturating_add(1);
                if conflict.is_none() {
                    let at = add(offset, entry.descriptor_offset())?;
                    conflict = Some((record, ShortName::new(arch), n, at));
                }
            }
            let index = match rule {
                KeyRule::PerArch => n,
                KeyRule::Strict | KeyRule::Record => record,
            };
            let mut key = kernel_name.to_vec();
            key.extend_from_slice(alloc::format!("#{index}").as_bytes());
            objects.push(SplitCodeObject {
                record,
                id: id.to_vec(),
                arch_at,
                key,
                offset: entry.offset(),
                size: entry.size(),
            });
        }
        units.push(SplitUnit { offset, container });
    }
    if let (KeyRule::Strict, Some((record, arch, counter, at))) = (rule, conflict) {
        let fault = SplitFault::KeyConflict {
            record,
            arch,
            counter,
            conflicts,
        };
        return Err(fail(fault, at));
    }
    Ok((units, objects))
}

/// Splits `data`, a host (x86-64 ELF shared object or executable) whose
/// `.hip_fatbin` holds one bundle per `HIPF` record of
/// `.hipFatBinSegment`: its code objects as the archives store them, and
/// the host as rocm-kpack rewrites it. `data` itself is never changed.
pub fn split_host<'data>(
    data: &'data [u8],
    options: &SplitOptions<'_>,
    decompress: &DecompressOptions,
) -> Result<HostSplit<'data>> {
    let header = read_header(data)?;
    let phdrs = table(data, header.phoff, header.phnum, PHDR_SIZE, Phdr::read)?;
    let shdrs = table(data, header.shoff, header.shnum, SHDR_SIZE, Shdr::read)?;
    let strtab_header = shdrs
        .get(usize::try_from(header.shstrndx).map_err(|_| overflow(62))?)
        .copied()
        .unwrap_or_default();
    let strtab =
        crate::bytes::range(data, strtab_header.offset, strtab_header.size).ok_or_else(|| {
            Error::new(
                ErrorKind::BadNameTableIndex {
                    index: u32::try_from(header.shstrndx).unwrap_or(u32::MAX),
                    count: u32::try_from(header.shnum).unwrap_or(u32::MAX),
                },
                62,
            )
        })?;
    let names: Vec<Vec<u8>> = shdrs.iter().map(|s| name_at(strtab, s.name)).collect();
    let mut surgery = Surgery {
        image: Image {
            input: data,
            patches: Vec::new(),
            tail: Vec::new(),
            removed: None,
        },
        header,
        phdrs,
        shdrs,
        names,
    };
    let section = |surgery: &Surgery<'_>, name: &'static str| {
        surgery
            .find(name.as_bytes())
            .and_then(|i| surgery.shdrs.get(i).copied().map(|s| (i, s)))
            .ok_or_else(|| fail(SplitFault::MissingSection { name }, header.shoff))
    };
    let (fatbin_index, fatbin) = section(&surgery, ".hip_fatbin")?;
    let (_, segment) = section(&surgery, ".hipFatBinSegment")?;
    let shdr_at = |index: usize| {
        header
            .shoff
            .saturating_add(to_u64(index).saturating_mul(SHDR_SIZE))
    };
    if fatbin.kind == SHT_NOBITS || surgery.find(MARKER_SECTION).is_some() {
        return Err(fail(SplitFault::AlreadySplit, shdr_at(fatbin_index)));
    }
    if segment.size % RECORD != 0 {
        return Err(fail(
            SplitFault::RecordSize { size: segment.size },
            segment.offset,
        ));
    }
    let count = segment.size / RECORD;

    // The records, and the bundle each points at.
    let (units, code_objects) =
        plan_code_objects(data, &fatbin, options.kernel_name, options.keys, decompress)?;
    if to_u64(units.len()) != count {
        return Err(fail(
            SplitFault::RecordCount {
                records: count,
                bundles: to_u64(units.len()),
            },
            segment.offset,
        ));
    }
    let relas = relocations(data, &surgery.shdrs)?;
    let first_rela = |address: u64| relas.iter().find(|r| r.address == address).copied();
    let seg_offset = surgery.offset_of(segment.addr)?;
    for (k, unit) in units.iter().enumerate() {
        let k = to_u64(k);
        let at = add(seg_offset, mul(k, RECORD)?)?;
        let magic = surgery.image.read_u32(at)?;
        if magic == HIPK {
            return Err(fail(SplitFault::AlreadySplit, at));
        }
        if magic != HIPF {
            return Err(fail(SplitFault::RecordMagic { record: k, magic }, at));
        }
        let pointer = add(add(segment.addr, mul(k, RECORD)?)?, 8)?;
        let address = if header.kind == ET_DYN {
            match first_rela(pointer) {
                Some(rela) => rela.addend,
                None => return Err(fail(SplitFault::NoRelocation { record: k }, at)),
            }
        } else {
            let bytes = surgery.image.read(add(at, 8)?, 8)?;
            <[u8; 8]>::try_from(bytes.as_slice()).map_or(0, u64::from_le_bytes)
        };
        let bundle = add(fatbin.addr, sub(unit.offset, fatbin.offset)?)?;
        if address != bundle {
            return Err(fail(
                SplitFault::RecordTarget {
                    record: k,
                    address,
                    bundle,
                },
                at,
            ));
        }
    }

    // 1. The marker section, the name table and the section headers appended.
    let marker = marker_bytes(options.kernel_name, options.search_paths);
    let content_offset = surgery.image.append(&marker)?;
    let strndx = usize::try_from(header.shstrndx).map_err(|_| overflow(62))?;
    let strtab_shdr = *surgery.shdrs.get(strndx).ok_or_else(|| overflow(62))?;
    let name_offset = u32::try_from(strtab_shdr.size).map_err(|_| overflow(strtab_shdr.offset))?;
    let mut names_table = surgery.image.read(strtab_shdr.offset, strtab_shdr.size)?;
    names_table.extend_from_slice(MARKER_SECTION);
    names_table.push(0);
    let names_offset = surgery.image.append(&names_table)?;
    if let Some(s) = surgery.shdrs.get_mut(strndx) {
        s.offset = names_offset;
        s.size = to_u64(names_table.len());
    }
    surgery.shdrs.push(Shdr {
        name: name_offset,
        kind: SHT_PROGBITS,
        addralign: 1,
        offset: content_offset,
        size: to_u64(marker.len()),
        ..Shdr::default()
    });
    surgery.names.push(MARKER_SECTION.to_vec());
    let marker_index = surgery.shdrs.len().saturating_sub(1);
    let mut table_bytes = Vec::new();
    for s in &surgery.shdrs {
        table_bytes.extend_from_slice(&s.bytes());
    }
    surgery.header.shoff = surgery.image.append(&table_bytes)?;
    surgery.header.shnum = to_u64(surgery.shdrs.len());
    surgery.write_header()?;

    // 2. The marker in a PT_LOAD of its own.
    let mut list = surgery.phdrs.clone();
    let marker_address = round_up(max_load_end(&list))?;
    let mut marker_offset = content_offset;
    if content_offset % PAGE != marker_address % PAGE {
        let aligned = page_align_offset(surgery.image.len(), marker_address)?;
        surgery.image.pad_to(aligned)?;
        marker_offset = surgery.image.append(&marker)?;
    }
    list.push(Phdr::load(
        PF_R,
        marker_offset,
        marker_address,
        to_u64(marker.len()),
        PAGE,
    ));
    surgery.apply_phdrs(list)?;
    if let Some(s) = surgery.shdrs.get_mut(marker_index) {
        s.flags |= SHF_ALLOC;
        s.addr = marker_address;
        s.offset = marker_offset;
    }
    surgery.write_shdr(marker_index)?;

    // 3. The records: HIPK, the pointer at the marker, the index.
    let mut rewritten = Vec::new();
    for k in 0..count {
        let pointer = add(add(segment.addr, mul(k, RECORD)?)?, 8)?;
        let at = surgery.offset_of(pointer)?;
        surgery.image.write(at, &marker_address.to_le_bytes())?;
        if header.kind == ET_DYN {
            let rela = first_rela(pointer)
                .ok_or_else(|| fail(SplitFault::NoRelocation { record: k }, at))?;
            let mut entry = Vec::with_capacity(24);
            entry.extend_from_slice(&rela.address.to_le_bytes());
            entry.extend_from_slice(&R_X86_64_RELATIVE.to_le_bytes());
            entry.extend_from_slice(&marker_address.to_le_bytes());
            surgery.image.write(rela.at, &entry)?;
            rewritten.push(rela.at);
        }
    }
    let seg_offset = surgery.offset_of(segment.addr)?;
    for k in 0..count {
        let at = add(seg_offset, mul(k, RECORD)?)?;
        surgery.image.write(at, &HIPK.to_le_bytes())?;
        // rocm-kpack zeroes the pointer here; in a position-dependent
        // executable nothing fills it again, so the marker's address stays.
        let pointer = if header.kind == ET_EXEC {
            marker_address
        } else {
            0
        };
        surgery.image.write(add(at, 8)?, &pointer.to_le_bytes())?;
        let index = u32::try_from(k).map_err(|_| overflow(at))?;
        surgery.image.write(add(at, 16)?, &index.to_le_bytes())?;
    }
    let fatbin_end = add(fatbin.addr, fatbin.size)?;
    for rela in &relas {
        if rela.info & 0xffff_ffff == R_X86_64_RELATIVE
            && (fatbin.addr..fatbin_end).contains(&rela.addend)
            && !rewritten.contains(&rela.at)
        {
            return Err(fail(
                SplitFault::StaleRelocation {
                    address: rela.address,
                    target: rela.addend,
                },
                rela.at,
            ));
        }
    }

    // 4. .hip_fatbin's whole pages cut.
    let removed = zero_page(&mut surgery, fatbin_index)?;
    let host = surgery.image.finish()?;
    Ok(HostSplit {
        host,
        units,
        code_objects,
        marker_address,
        marker,
        removed,
    })
}

/// rocm-kpack's `conservative_zero_page` of section `index`: the bytes
/// removed.
fn zero_page(surgery: &mut Surgery<'_>, index: usize) -> Result<u64> {
    let section = *surgery.shdrs.get(index).ok_or_else(|| overflow(0))?;
    let end = add(section.addr, section.size)?;
    let (start, stop) = (round_up(section.addr)?, round_down(end));
    if start >= stop {
        return Ok(0);
    }
    let mut size = stop.saturating_sub(start);
    if end == round_down(end) {
        // Ending on a page: one page stays, so that the segments after it
        // keep offsets of their own.
        size = size.saturating_sub(PAGE);
        if size == 0 {
            return Ok(0);
        }
    }
    let cut = add(section.offset, sub(start, section.addr)?)?;
    let (target_index, target) = surgery
        .phdr_at(section.addr)
        .filter(|(_, p)| p.kind == PT_LOAD)
        .ok_or_else(|| {
            fail(
                SplitFault::Unmapped {
                    address: section.addr,
                },
                section.offset,
            )
        })?;
    surgery.image.remove(cut, size)?;
    if surgery.header.phoff > cut {
        surgery.header.phoff = sub(surgery.header.phoff, size)?;
    }
    if surgery.header.shoff > cut {
        surgery.header.shoff = sub(surgery.header.shoff, size)?;
    }
    // The segment split around the section.
    let mut pieces = Vec::new();
    if target.vaddr < section.addr {
        let memsz = sub(section.addr, target.vaddr)?;
        pieces.push((target.vaddr, memsz, target.offset, memsz.min(target.filesz)));
    }
    if section.addr < start {
        let prefix = sub(start, section.addr)?;
        pieces.push((section.addr, prefix, section.offset, prefix));
    }
    pieces.push((start, sub(end, start)?, cut, 0));
    let target_end = add(target.vaddr, target.memsz)?;
    if end < target_end {
        let section_file_end = add(section.offset, section.size)?;
        let file_end = add(target.offset, target.filesz)?;
        if file_end > section_file_end {
            pieces.push((
                end,
                sub(target_end, end)?,
                sub(section_file_end, size)?,
                sub(file_end, section_file_end)?,
            ));
        }
    }
    let mut list = Vec::new();
    for (i, p) in surgery.phdrs.iter().enumerate() {
        if i == target_index {
            for &(vaddr, memsz, offset, filesz) in &pieces {
                list.push(Phdr {
                    kind: PT_LOAD,
                    flags: target.flags,
                    offset,
                    vaddr,
                    paddr: vaddr,
                    filesz,
                    memsz,
                    align: target.align,
                });
            }
        } else if p.offset > cut {
            list.push(Phdr {
                offset: sub(p.offset, size)?,
                ..*p
            });
        } else {
            list.push(*p);
        }
    }
    surgery.phdrs = list.clone();
    surgery.header.phnum = to_u64(list.len());
    surgery.apply_phdrs(list)?;
    for i in 0..surgery.shdrs.len() {
        let Some(s) = surgery.shdrs.get_mut(i) else {
            continue;
        };
        if i == index {
            s.kind = SHT_NOBITS;
        } else if s.offset > cut {
            s.offset = sub(s.offset, size)?;
        } else {
            continue;
        }
        surgery.write_shdr(i)?;
    }
    surgery.write_header()?;
    Ok(size)
}
