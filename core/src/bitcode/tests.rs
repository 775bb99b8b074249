use alloc::vec::Vec;

use super::irsymtab::storage::Symbol as RawSymbol;
use super::irsymtab::Reader;
use super::*;

/// clang 22's bitcode for `tests/fixtures/archive/src/k.cl`, and the
/// symbols `llvm-nm -g --defined-only` gave for it.
const K_BC: &[u8] = include_bytes!("../../../tests/fixtures/archive/inputs/k-gfx906.bc");
const K_SYMBOLS: [&[u8]; 3] = [b"scale", b"__clang_ocl_kern_imp_scale", b"helper_value"];

fn kind(data: &[u8]) -> (ErrorKind, u64) {
    let e = BitcodeFileContents::parse(data).unwrap_err();
    (e.kind(), e.offset())
}

fn fault(data: &[u8]) -> (BitcodeFault, u64) {
    match kind(data) {
        (ErrorKind::MalformedBitcode { fault }, offset) => (fault, offset),
        other => panic!("{other:?}"),
    }
}

/// Writes bitstreams bit by bit, as LLVM's BitstreamWriter does.
struct Writer {
    bytes: Vec<u8>,
    bit: usize,
}

impl Writer {
    fn new() -> Self {
        Writer {
            bytes: BITCODE_MAGIC.to_vec(),
            bit: 32,
        }
    }

    fn fixed(&mut self, value: u64, width: u32) -> &mut Self {
        for i in 0..width {
            if self.bit / 8 == self.bytes.len() {
                self.bytes.push(0);
            }
            self.bytes[self.bit / 8] |= u8::from((value >> i) & 1 == 1) << (self.bit % 8);
            self.bit += 1;
        }
        self
    }

    fn vbr(&mut self, mut value: u64, width: u32) -> &mut Self {
        let more = 1u64 << (width - 1);
        while value >= more {
            self.fixed(value & (more - 1) | more, width);
            value >>= width - 1;
        }
        self.fixed(value, width)
    }

    fn align32(&mut self) -> &mut Self {
        while !self.bit.is_multiple_of(32) {
            self.fixed(0, 1);
        }
        self
    }

    fn bytes(&mut self, data: &[u8]) -> &mut Self {
        for &b in data {
            self.fixed(u64::from(b), 8);
        }
        self
    }

    /// A block with abbreviation width `width`, entered from a scope of
    /// width `outer`; `words` overrides the length written.
    fn block(
        &mut self,
        outer: u32,
        id: u64,
        width: u32,
        words: Option<u32>,
        body: impl FnOnce(&mut Writer),
    ) -> &mut Self {
        self.fixed(1, outer)
            .vbr(id, 8)
            .vbr(u64::from(width), 4)
            .align32();
        let length_at = self.bit / 8;
        self.fixed(0, 32);
        body(self);
        self.fixed(0, width).align32();
        let measured = u32::try_from((self.bit / 8 - length_at - 4) / 4).unwrap();
        let words = words.unwrap_or(measured);
        self.bytes[length_at..length_at + 4].copy_from_slice(&words.to_le_bytes());
        self
    }

    /// DEFINE_ABBREV [literal 1, blob] in a block of width 3.
    fn blob_abbrev(&mut self) -> &mut Self {
        self.fixed(2, 3).vbr(2, 5);
        self.fixed(1, 1).vbr(1, 8);
        self.fixed(0, 1).fixed(5, 3)
    }

    /// A record of abbreviation `id`, [literal, blob] shaped.
    fn blob_record(&mut self, id: u64, data: &[u8]) -> &mut Self {
        self.fixed(id, 3).vbr(data.len() as u64, 6).align32();
        self.bytes(data).align32()
    }

    /// A SYMTAB or STRTAB block holding `data` as LLVM writes it.
    fn blob_block(&mut self, id: u64, data: &[u8]) -> &mut Self {
        self.block(2, id, 3, None, |w| {
            w.blob_abbrev().blob_record(4, data);
        })
    }

    fn module(&mut self) -> &mut Self {
        self.block(2, IDENTIFICATION_BLOCK_ID, 5, None, |w| {
            w.fixed(3, 5).vbr(1, 6).vbr(1, 6).vbr(22, 6);
        })
        .block(2, MODULE_BLOCK_ID, 3, None, |w| {
            w.fixed(3, 3).vbr(1, 6).vbr(1, 6).vbr(2, 6);
        })
    }

    fn finish(&mut self) -> Vec<u8> {
        self.align32();
        core::mem::take(&mut self.bytes)
    }
}

/// A version 3 symbol table: (symtab, strtab).
fn irsymtab(
    version: u32,
    producer: &str,
    modules: u32,
    symbols: &[(&str, u32)],
) -> (Vec<u8>, Vec<u8>) {
    let mut strtab = producer.as_bytes().to_vec();
    let module_at = 76u32;
    let symbols_at = module_at + 12 * modules;
    let mut out = Vec::new();
    let word = |out: &mut Vec<u8>, w: u32| out.extend_from_slice(&w.to_le_bytes());
    for w in [
        version,
        0,
        producer.len() as u32,
        module_at,
        modules,
        symbols_at,
        0,
    ] {
        word(&mut out, w);
    }
    for w in [
        symbols_at,
        symbols.len() as u32,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ] {
        word(&mut out, w);
    }
    for _ in 0..modules {
        for w in [0, symbols.len() as u32, 0] {
            word(&mut out, w);
        }
    }
    for (name, flags) in symbols {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(name.as_bytes());
        for w in [
            at,
            name.len() as u32,
            at,
            name.len() as u32,
            u32::MAX,
            *flags,
        ] {
            word(&mut out, w);
        }
    }
    assert_eq!(out.len(), symbols_at as usize + 24 * symbols.len());
    (out, strtab)
}

fn file(modules: usize, symtab: &[u8], strtab: &[u8]) -> Vec<u8> {
    let mut w = Writer::new();
    for _ in 0..modules {
        w.module();
    }
    w.blob_block(SYMTAB_BLOCK_ID, symtab)
        .blob_block(STRTAB_BLOCK_ID, strtab)
        .finish()
}

const DEFINED: u32 = 1 << RawSymbol::FB_GLOBAL;
const UNDEFINED: u32 = DEFINED | 1 << RawSymbol::FB_UNDEFINED;
const LOCAL: u32 = 1 << RawSymbol::FB_EXECUTABLE;
const FORMAT_SPECIFIC: u32 = DEFINED | 1 << RawSymbol::FB_FORMAT_SPECIFIC;
const WEAK: u32 = DEFINED | 1 << RawSymbol::FB_WEAK;

fn indexed(data: &[u8]) -> Option<Vec<&[u8]>> {
    let contents = BitcodeFileContents::parse(data).unwrap();
    let table = contents.current_symtab().unwrap()?;
    Some(table.defined_global_symbols().collect())
}

#[test]
fn clang_22_bitcode() {
    let contents = BitcodeFileContents::parse(K_BC).unwrap();
    assert_eq!(contents.module_count(), 1);
    assert_eq!(contents.symtab().len(), 184);
    assert_eq!(
        &K_BC[contents.symtab_offset() as usize..][..184],
        contents.symtab()
    );
    let table = contents.current_symtab().unwrap().unwrap();
    assert_eq!(table.version(), 3);
    assert_eq!(table.producer(), b"22.1.8");
    assert!(table.is_current());
    assert_eq!(table.module_count(), 1);
    let all: Vec<_> = table.symbols().map(|s| s.name()).collect();
    assert_eq!(
        all,
        [
            &b"scale"[..],
            b"__clang_ocl_kern_imp_scale",
            b"_Z13get_global_idj",
            b"helper_value"
        ]
    );
    let get_global_id = table.symbols().nth(2).unwrap();
    assert!(get_global_id.is_undefined() && get_global_id.is_executable());
    assert_eq!(
        table.defined_global_symbols().collect::<Vec<_>>(),
        K_SYMBOLS
    );
    assert_eq!(indexed(K_BC).unwrap(), K_SYMBOLS);
}

#[test]
fn wrapped_bitcode_is_read_at_its_offset() {
    let mut wrapped = Vec::new();
    for w in [0x0B17_C0DE_u32, 0, 20, K_BC.len() as u32, 0] {
        wrapped.extend_from_slice(&w.to_le_bytes());
    }
    wrapped.extend_from_slice(K_BC);
    let plain = BitcodeFileContents::parse(K_BC).unwrap();
    let contents = BitcodeFileContents::parse(&wrapped).unwrap();
    assert_eq!(contents.symtab(), plain.symtab());
    assert_eq!(contents.symtab_offset(), plain.symtab_offset() + 20);
    assert_eq!(indexed(&wrapped).unwrap(), K_SYMBOLS);
    // What the wrapper holds must be a bitstream, inside the file.
    let mut inner = wrapped.clone();
    inner[20] = b'X';
    assert_eq!(kind(&inner), (ErrorKind::NotBitcode, 20));
    let mut outside = wrapped.clone();
    outside[12..16].copy_from_slice(&(K_BC.len() as u32 + 4).to_le_bytes());
    let (f, at) = fault(&outside);
    assert!(matches!(
        f,
        BitcodeFault::WrapperOutOfBounds { offset: 20, .. }
    ));
    assert_eq!(at, 8);
    let mut empty = wrapped[..24].to_vec();
    empty[12..16].copy_from_slice(&2u32.to_le_bytes());
    let e = BitcodeFileContents::parse(&empty).unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::Truncated {
            field: Field::BitcodeMagic,
            needed: 4,
            available: 2
        }
    ));
    assert!(matches!(
        kind(&wrapped[..12]).0,
        ErrorKind::Truncated {
            field: Field::BitcodeWrapper,
            needed: 16,
            available: 12
        }
    ));
}

#[test]
fn what_is_not_bitcode() {
    assert!(!is_bitcode(b"\x7fELF") && is_bitcode(b"BC\xC0\xDE") && is_bitcode(WRAPPER_MAGIC));
    assert_eq!(kind(b"\x7fELF\0\0\0\0"), (ErrorKind::NotBitcode, 0));
    assert_eq!(kind(b""), (ErrorKind::NotBitcode, 0));
    // LLVM reads no bitcode whose length is not a multiple of 4.
    let mut odd = K_BC.to_vec();
    odd.push(0);
    assert_eq!(
        fault(&odd),
        (BitcodeFault::LengthNotMultipleOf4 { len: 4905 }, 0)
    );
}

#[test]
fn symbols_are_filtered_as_llvm_s_archive_writer_does() {
    let symbols = [
        ("b_first", DEFINED | LOCAL),
        ("llvm.used", FORMAT_SPECIFIC),
        ("undefined", UNDEFINED),
        ("local", LOCAL),
        ("weak", WEAK),
        ("a_last", DEFINED),
    ];
    let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &symbols);
    let data = file(1, &symtab, &strtab);
    assert_eq!(
        indexed(&data).unwrap(),
        [&b"b_first"[..], b"weak", b"a_last"]
    );
    let table = Reader::parse(&symtab, &strtab).unwrap();
    assert_eq!(table.symbols().len(), 6);
    assert!(table.symbols().nth(4).unwrap().is_weak());
    // Any LLVM 22 release's table is current.
    let (symtab, strtab) = irsymtab(3, "22.0.0git abcdef", 1, &symbols);
    assert_eq!(indexed(&file(1, &symtab, &strtab)).unwrap().len(), 3);
}

#[test]
fn tables_llvm_would_rebuild_give_none() {
    let symbols = [("f", DEFINED)];
    let cases = [
        // Another version or producer: LLVM reads the IR instead.
        (irsymtab(2, "22.1.8", 1, &symbols), 1),
        (irsymtab(3, "21.1.8", 1, &symbols), 1),
        (irsymtab(3, "", 1, &symbols), 1),
        // Two modules, a table of one (binary concatenation).
        (irsymtab(3, "22.1.8", 1, &symbols), 2),
        (irsymtab(3, "22.1.8", 2, &symbols), 1),
        // No module at all.
        (irsymtab(3, "22.1.8", 1, &symbols), 0),
    ];
    for ((symtab, strtab), modules) in cases {
        assert_eq!(indexed(&file(modules, &symtab, &strtab)), None);
    }
    // A table shorter than the header, or no string table.
    let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &symbols);
    assert_eq!(indexed(&file(1, &symtab[..72], &strtab)), None);
    let data = Writer::new()
        .module()
        .blob_block(SYMTAB_BLOCK_ID, &symtab)
        .finish();
    assert_eq!(indexed(&data), None);
    // A string table before the symbol table does not serve it.
    let data = Writer::new()
        .module()
        .blob_block(STRTAB_BLOCK_ID, &strtab)
        .blob_block(SYMTAB_BLOCK_ID, &symtab)
        .finish();
    assert_eq!(indexed(&data), None);
    let data = Writer::new()
        .module()
        .blob_block(STRTAB_BLOCK_ID, b"other")
        .blob_block(SYMTAB_BLOCK_ID, &symtab)
        .blob_block(STRTAB_BLOCK_ID, &strtab)
        .blob_block(SYMTAB_BLOCK_ID, b"second table, ignored")
        .blob_block(STRTAB_BLOCK_ID, b"second strtab, ignored")
        .finish();
    assert_eq!(indexed(&data).unwrap(), [b"f"]);
}

#[test]
fn damaged_tables_are_located_errors() {
    let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &[("f", DEFINED), ("g", DEFINED)]);
    let at = BitcodeFileContents::parse(&file(1, &symtab, &strtab))
        .unwrap()
        .symtab_offset();
    let damaged = |patch: &dyn Fn(&mut Vec<u8>), strtab: &[u8]| {
        let mut symtab = symtab.clone();
        patch(&mut symtab);
        let data = file(1, &symtab, strtab);
        let contents = BitcodeFileContents::parse(&data).unwrap();
        let e = contents.current_symtab().unwrap_err();
        let direct = Reader::parse(contents.symtab(), contents.strtab_for_symtab());
        assert_eq!(direct.unwrap_err().shifted(at), e);
        match e.kind() {
            ErrorKind::MalformedBitcode { fault } => (fault, e.offset() - at),
            other => panic!("{other:?}"),
        }
    };
    let set = |at: usize, value: u32| {
        move |s: &mut Vec<u8>| s[at..at + 4].copy_from_slice(&value.to_le_bytes())
    };
    assert_eq!(
        damaged(&set(4, 3), &strtab),
        (
            BitcodeFault::StringOutOfBounds {
                offset: 3,
                size: 6,
                strtab_size: 8
            },
            4
        )
    );
    assert_eq!(
        damaged(&set(32, 3), &strtab),
        (
            BitcodeFault::RangeOutOfBounds {
                offset: 88,
                count: 3,
                size: 136
            },
            28
        )
    );
    assert_eq!(
        damaged(&set(32, u32::MAX), &strtab).1,
        28,
        "a count whose size overflows"
    );
    assert!(matches!(
        damaged(&set(16, 6), &strtab),
        (BitcodeFault::RangeOutOfBounds { count: 6, .. }, 12)
    ));
    // The second symbol's name.
    assert_eq!(
        damaged(&set(88 + 24, 100), &strtab),
        (
            BitcodeFault::StringOutOfBounds {
                offset: 100,
                size: 1,
                strtab_size: 8
            },
            88 + 24
        )
    );
    // The reader alone: a header cut short.
    let e = Reader::parse(&symtab[..75], &strtab).unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::Truncated {
            field: Field::IrSymtabHeader,
            needed: 76,
            available: 75
        }
    );
}

#[test]
fn the_top_level_walk_follows_llvm() {
    let (symtab, strtab) = irsymtab(3, "22.1.8", 2, &[("f", DEFINED)]);
    // Top-level abbreviations and records, unknown blocks, a bare
    // module block and up to 8 trailing bytes are passed over.
    let mut w = Writer::new();
    w.fixed(2, 2).vbr(1, 5).fixed(0, 1).fixed(4, 3);
    w.fixed(3, 2).vbr(7, 6).vbr(2, 6).vbr(1000, 6).vbr(0, 6);
    w.block(2, 99, 4, None, |w| {
        w.fixed(3, 4).vbr(1, 6).vbr(0, 6);
    });
    w.module();
    w.block(2, MODULE_BLOCK_ID, 2, None, |_| {});
    w.blob_block(SYMTAB_BLOCK_ID, &symtab)
        .blob_block(STRTAB_BLOCK_ID, &strtab);
    let data = w.finish();
    let garbage = [&data[..], &[0xff; 8]].concat();
    let contents = BitcodeFileContents::parse(&garbage).unwrap();
    assert_eq!(contents.module_count(), 2);
    assert_eq!(indexed(&garbage).unwrap(), [b"f"]);
    // Twelve are read, and here end the stream.
    let zeros = [&data[..], &[0; 12]].concat();
    let at = data.len() as u64;
    assert_eq!(fault(&zeros), (BitcodeFault::EndBlockAtTopLevel, at));
    // The magic and nothing else: no modules.
    let contents = BitcodeFileContents::parse(&K_BC[..12]).unwrap();
    assert_eq!(contents.module_count(), 0);
    assert_eq!(contents.current_symtab(), Ok(None));
}

#[test]
fn malformed_bitstreams_are_located_errors() {
    let block_at = 4;
    // An identification block must come with a module.
    let data = Writer::new()
        .block(2, IDENTIFICATION_BLOCK_ID, 5, None, |_| {})
        .block(2, 99, 3, None, |_| {})
        .finish();
    assert_eq!(
        fault(&data),
        (BitcodeFault::IdentificationWithoutModule, 16)
    );
    // A block longer than the stream, skipped or read.
    let data = Writer::new()
        .block(2, 99, 3, Some(3), |_| {})
        .fixed(0, 32)
        .finish();
    assert_eq!(
        fault(&data),
        (BitcodeFault::BlockOutOfBounds { words: 3 }, 8)
    );
    // A table block that the stream ends in.
    let mut w = Writer::new();
    w.fixed(1, 2)
        .vbr(SYMTAB_BLOCK_ID, 8)
        .vbr(3, 4)
        .align32()
        .fixed(100, 32);
    w.blob_abbrev();
    for _ in 0..4 {
        w.fixed(3, 3).vbr(2, 6).vbr(1, 6).vbr(63, 6);
    }
    // A record of three operands, cut in the first.
    w.fixed(3, 3).vbr(2, 6).vbr(3, 6);
    while !w.bit.is_multiple_of(32) {
        w.fixed(1, 1);
    }
    assert_eq!(fault(&w.finish()).0, BitcodeFault::UnexpectedEnd);
    // Abbreviation widths of 0 and 33.
    for width in [0, 33] {
        let data = Writer::new()
            .fixed(1, 2)
            .vbr(SYMTAB_BLOCK_ID, 8)
            .vbr(width, 4)
            .align32()
            .fixed(1, 32)
            .fixed(0, 64)
            .finish();
        assert_eq!(
            fault(&data),
            (BitcodeFault::BadAbbrevWidth { width }, block_at + 1)
        );
    }
    // A block ID whose VBR never ends.
    let data = Writer::new().fixed(1, 2).fixed(u64::MAX, 62).finish();
    assert_eq!(
        fault(&[&data[..], &[0xff; 8]].concat()),
        (BitcodeFault::UnterminatedVbr, 4)
    );
    // Abbreviations: no operands, encoding 0 and 6, a fixed field of
    // 33 bits, an undefined ID, a blob as the code, an array last, an
    // array of blobs, and one too many.
    let in_symtab = |body: &dyn Fn(&mut Writer)| {
        let mut w = Writer::new();
        w.block(2, SYMTAB_BLOCK_ID, 3, None, body);
        w.fixed(0, 64);
        fault(&w.finish())
    };
    let body_at = 12;
    assert_eq!(
        in_symtab(&|w| {
            w.fixed(2, 3).vbr(0, 5);
        }),
        (BitcodeFault::EmptyAbbrev, body_at)
    );
    for encoding in [0, 6] {
        assert_eq!(
            in_symtab(&|w| {
                w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(encoding, 3);
            }),
            (BitcodeFault::InvalidEncoding { encoding }, body_at + 1)
        );
    }
    assert_eq!(
        in_symtab(&|w| {
            w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(1, 3).vbr(33, 5);
        }),
        (BitcodeFault::OperandTooWide { width: 33 }, body_at + 1)
    );
    assert_eq!(
        in_symtab(&|w| {
            w.blob_abbrev().fixed(5, 3);
        }),
        (BitcodeFault::UnknownAbbrev { id: 5 }, body_at + 2)
    );
    assert_eq!(
        in_symtab(&|w| {
            w.fixed(2, 3).vbr(1, 5).fixed(0, 1).fixed(5, 3).fixed(4, 3);
        }),
        (BitcodeFault::ArrayOrBlobCode, body_at + 1)
    );
    assert_eq!(
        in_symtab(&|w| {
            w.fixed(2, 3)
                .vbr(2, 5)
                .fixed(1, 1)
                .vbr(1, 8)
                .fixed(0, 1)
                .fixed(3, 3);
            w.fixed(4, 3).vbr(0, 6);
        }),
        (BitcodeFault::BadArray, body_at + 2)
    );
    assert_eq!(
        in_symtab(&|w| {
            w.fixed(2, 3).vbr(3, 5).fixed(1, 1).vbr(1, 8);
            w.fixed(0, 1).fixed(3, 3).fixed(0, 1).fixed(5, 3);
            w.fixed(4, 3).vbr(0, 6);
        }),
        (BitcodeFault::BadArray, body_at + 3)
    );
    let (f, _) = in_symtab(&|w| {
        for _ in 0..=MAX_ABBREVS {
            w.blob_abbrev();
        }
    });
    assert_eq!(f, BitcodeFault::TooManyAbbrevs);
    // A blob past the end.
    let data = Writer::new()
        .block(2, SYMTAB_BLOCK_ID, 3, None, |w| {
            w.blob_abbrev()
                .fixed(4, 3)
                .vbr(20, 6)
                .align32()
                .bytes(b"12345678");
        })
        .finish();
    assert_eq!(
        fault(&data),
        (BitcodeFault::BlobOutOfBounds { size: 20 }, 16)
    );
}

#[test]
fn records_in_the_table_blocks_are_read_as_llvm_reads_them() {
    let (symtab, strtab) = irsymtab(3, "22.1.8", 1, &[("f", DEFINED)]);
    // Fields, arrays and a nested block before the blob; the last
    // record with the blob's code wins, even an unabbreviated one
    // (which has no blob: the table is then empty).
    let data = Writer::new()
        .module()
        .block(2, SYMTAB_BLOCK_ID, 4, None, |w| {
            // [literal 1, fixed 7, vbr 3, char6, array of vbr 2]
            w.fixed(2, 4).vbr(6, 5);
            w.fixed(1, 1).vbr(1, 8);
            w.fixed(0, 1).fixed(1, 3).vbr(7, 5);
            w.fixed(0, 1).fixed(2, 3).vbr(3, 5);
            w.fixed(0, 1).fixed(4, 3);
            w.fixed(0, 1).fixed(3, 3).fixed(0, 1).fixed(2, 3).vbr(2, 5);
            w.fixed(4, 4).fixed(99, 7).vbr(1000, 3).fixed(5, 6);
            w.vbr(3, 6).vbr(1, 2).vbr(2, 2).vbr(7, 2);
            // [vbr 6 code, blob]: code 2 is not the table.
            w.fixed(2, 4).vbr(2, 5).fixed(0, 1).fixed(2, 3).vbr(6, 5);
            w.fixed(0, 1).fixed(5, 3);
            w.fixed(5, 4)
                .vbr(1, 6)
                .vbr(b"garbage".len() as u64, 6)
                .align32();
            w.bytes(b"garbage").align32();
            w.block(4, 77, 2, None, |w| {
                w.fixed(3, 2).vbr(1, 6).vbr(0, 6);
            });
            w.fixed(5, 4)
                .vbr(2, 6)
                .vbr(4, 6)
                .align32()
                .bytes(b"nope")
                .align32();
        })
        .blob_block(STRTAB_BLOCK_ID, &strtab)
        .finish();
    let contents = BitcodeFileContents::parse(&data).unwrap();
    assert_eq!(contents.symtab(), b"garbage");
    let with_table = |last_unabbreviated: bool| {
        let mut w = Writer::new();
        w.module().block(2, SYMTAB_BLOCK_ID, 3, None, |w| {
            w.blob_abbrev()
                .blob_record(4, b"first")
                .blob_record(4, &symtab);
            if last_unabbreviated {
                w.fixed(3, 3).vbr(1, 6).vbr(0, 6);
            }
        });
        w.blob_block(STRTAB_BLOCK_ID, &strtab).finish()
    };
    assert_eq!(indexed(&with_table(false)).unwrap(), [b"f"]);
    let data = with_table(true);
    let contents = BitcodeFileContents::parse(&data).unwrap();
    assert!(contents.symtab().is_empty());
    assert_eq!(contents.current_symtab(), Ok(None));
}

#[test]
fn cut_or_damaged_bitcode_never_panics() {
    let check = |data: &[u8]| match BitcodeFileContents::parse(data) {
        Ok(contents) => {
            assert!(contents.symtab().len() <= data.len());
            if let Ok(Some(table)) = contents.current_symtab() {
                assert!(table.defined_global_symbols().count() <= data.len());
            }
        }
        Err(e) => {
            assert!(e.offset() <= data.len() as u64, "{e}");
            let _ = alloc::format!("{e}");
        }
    };
    for len in (0..K_BC.len()).step_by(4) {
        check(&K_BC[..len]);
    }
    let mut data = K_BC.to_vec();
    for at in 0..data.len() {
        for flip in [0x01, 0x80, 0xff] {
            data[at] ^= flip;
            check(&data);
            data[at] ^= flip;
        }
    }
}
