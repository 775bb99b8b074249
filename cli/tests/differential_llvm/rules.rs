//! The documented differences: each rule recognises one row of
//! `docs/differences.md` (quoted in `row`) in a pair of results, so that the
//! campaign prints only what no row explains. A rule marked `open` stands
//! for a difference found by this campaign and reported, not yet fixed or
//! documented; it is listed in every run so it stays visible.

use super::exec::{Class, Cmd, RunResult, Tool};
use super::mutate::Edit;
use super::seeds::{Kind, Seed};

/// What a rule sees of one difference.
pub struct Ctx<'a> {
    pub seed: &'a Seed,
    pub cmd: &'a Cmd,
    pub edits: &'a [Edit],
    pub class: Class,
    pub llvm: &'a RunResult,
    pub ours: &'a RunResult,
    pub llvm_err: String,
    pub ours_err: String,
}

impl Ctx<'_> {
    fn ours_says(&self, words: &str) -> bool {
        self.ours_err.contains(words)
    }

    fn llvm_says(&self, words: &str) -> bool {
        self.llvm_err.contains(words)
    }
}

pub struct Rule {
    pub name: &'static str,
    /// The row of docs/differences.md this rule stands for (its first
    /// column's words), or for an open rule what was reported.
    pub row: &'static str,
    pub open: bool,
    pub applies: fn(&Ctx) -> bool,
}

/// A refusal (ours) where LLVM succeeds or crashes.
fn we_refuse(ctx: &Ctx) -> bool {
    matches!(
        ctx.class,
        Class::OnlyLlvmSucceeds | Class::LlvmCrashOursRefuse
    )
}

fn bundler(ctx: &Ctx) -> bool {
    ctx.cmd.tool == Tool::Bundler
}

/// The bundler, or llvm-objdump reading the bundles of a `.hip_fatbin`.
fn bundle_reader(ctx: &Ctx) -> bool {
    matches!(ctx.cmd.tool, Tool::Bundler | Tool::Objdump)
}

fn edited(ctx: &Ctx, field: &str) -> bool {
    ctx.edits.iter().any(|e| e.describe().contains(field))
}

/// `-list`: both succeed, and we list everything LLVM lists, and more.
fn list_is_superset(ctx: &Ctx) -> bool {
    bundler(ctx) && ctx.cmd.is_list() && ctx.class == Class::BothSucceedDiffer && {
        let ours: Vec<&[u8]> = ctx.ours.stdout.split(|&b| b == b'\n').collect();
        ctx.llvm
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .all(|l| ours.contains(&l))
    }
}

fn offload_tool(ctx: &Ctx) -> bool {
    matches!(ctx.cmd.tool, Tool::Packager | Tool::Objdump)
}

pub static RULES: &[Rule] = &[
    // ---- clang-offload-bundler: binary bundles
    Rule {
        name: "entry-count",
        row: "An entry count that cannot fit in the file is walked until a crash",
        open: false,
        applies: |c| bundle_reader(c) && we_refuse(c) && c.ours_says("cannot fit in the input"),
    },
    Rule {
        name: "payload-overflow",
        row: "`offset + size` wrapping past 2^64 writes heap memory into the output",
        open: false,
        applies: |c| bundle_reader(c) && we_refuse(c) && c.ours_says("overflows"),
    },
    Rule {
        name: "bad-descriptor",
        row: "A bad descriptor (truncated, `offset == 0`, payload past the end) silently ends the header: \
              the rest of the bundle is dropped and the run succeeds; some malformed headers crash it (SIGSEGV)",
        open: false,
        applies: |c| bundle_reader(c) && we_refuse(c) && c.ours_says("malformed bundle"),
    },
    // ---- compressed bundles
    Rule {
        name: "ccob-version-0",
        row: "A compressed bundle of version 0 reaches `llvm_unreachable`",
        open: false,
        applies: |c| bundler(c) && we_refuse(c) && c.ours_says("unsupported compressed bundle version 0"),
    },
    Rule {
        name: "ccob-hash",
        row: "A compressed bundle's hash is never checked",
        open: false,
        applies: |c| bundler(c) && we_refuse(c) && c.ours_says("hash mismatch"),
    },
    Rule {
        name: "ccob-limit",
        row: "A declared size of 2^40 aborts (\"LLVM ERROR: out of memory\"); a bomb inflates fully",
        open: false,
        applies: |c| bundler(c) && we_refuse(c) && c.ours_says("exceeds the limit of"),
    },
    Rule {
        name: "ccob-declared-size",
        row: "A declared size larger than the stream's output is accepted",
        open: false,
        applies: |c| {
            bundler(c)
                && we_refuse(c)
                && (c.ours_says("not the declared")
                    || c.ours_says("uncompressed bytes, the zstd frame")
                    || c.ours_says("stream ends early"))
        },
    },
    Rule {
        name: "ccob-total-size",
        row: "A compressed bundle's total size is ignored; several back to back fail (\"Src size is incorrect\")",
        open: false,
        applies: |c| {
            bundler(c)
                && (we_refuse(c)
                    && (c.ours_says("truncated compressed data")
                        || c.ours_says("total size")
                        || c.ours_says("corrupt") && edited(c, "CCOB total size"))
                    || matches!(c.class, Class::OnlyOursSucceeds | Class::BothSucceedDiffer)
                        && c.llvm_says("Src size is incorrect"))
        },
    },
    Rule {
        name: "ccob-short",
        row: "A compressed bundle that decompresses to something other than a bundle (or to another `CCOB`), \
              or a file of fewer than 8 bytes starting with `CCOB`: read as a file with no entries",
        open: false,
        applies: |c| {
            bundler(c)
                && we_refuse(c)
                && (c.ours_says("truncated compression method")
                    || c.ours_says("truncated compressed bundle version")
                    || c.ours_says("decompresses to"))
        },
    },
    Rule {
        name: "bytes-after",
        row: "Non-container bytes after a plain bundle are ignored; after a zlib compressed bundle too, \
              after a zstd one they fail (\"Src size is incorrect\"); an OffloadBinary after a bundle is ignored",
        open: false,
        applies: |c| bundler(c) && c.class == Class::OnlyOursSucceeds && c.ours_says("start no known container"),
    },
    Rule {
        name: "back-to-back",
        row: "Unbundling several containers back to back: not possible",
        open: false,
        applies: |c| {
            bundler(c)
                && matches!(c.class, Class::OnlyOursSucceeds | Class::BothSucceedDiffer)
                && c.ours_says("is also in the container")
        },
    },
    Rule {
        name: "invalid-id-luck",
        row: "`-unbundle` stops reading entries once every target is found, and fails with `invalid bundle id \
              read from the bundle` if it meets an invalid ID before. Binary bundles are read in hash order, \
              so whether it meets one is luck",
        open: false,
        applies: |c| {
            bundler(c)
                && matches!(c.class, Class::OnlyOursSucceeds | Class::OnlyLlvmSucceeds)
                && (c.llvm_says("invalid bundle id read from the bundle")
                    || c.ours_says("invalid bundle id read from the bundle"))
        },
    },
    Rule {
        name: "which-entry",
        row: "`-unbundle` visits entries and requested targets in hash order; each entry goes to the first \
              compatible open target (and: an entry whose ID is exactly a requested target's can lose to a \
              merely compatible one that comes first in hash order)",
        open: false,
        applies: |c| {
            bundler(c)
                && !c.cmd.is_list()
                && c.cmd.label() != "bundler -unbundle -type=a"
                && c.class == Class::BothSucceedDiffer
                && c.llvm.files.keys().eq(c.ours.files.keys())
                && c.llvm.stdout == c.ours.stdout
                && edited(c, "ID")
        },
    },
    Rule {
        name: "list-back-to-back-compressed",
        row: "A compressed bundle's total size is ignored; several back to back fail (\"Src size is incorrect\") \
              (after a zlib one LLVM lists the first only; we list every container)",
        open: false,
        applies: |c| c.seed.kind == Kind::Compressed && list_is_superset(c),
    },
    // ---- text bundles
    Rule {
        name: "text-markers",
        row: "Text bundle: an end marker with no start, a start with no end, a nested start, a mismatched end \
              marker are accepted or misread (one hangs `-list`)",
        open: false,
        applies: |c| bundler(c) && we_refuse(c) && c.ours_says("malformed text bundle"),
    },
    // ---- archives
    Rule {
        name: "archive-member",
        row: "Archive: a damaged member aborts (`std::length_error`, out of memory) or crashes",
        open: false,
        applies: |c| bundler(c) && c.class == Class::LlvmCrashOursRefuse && c.ours_says("'input.a': member '"),
    },
    Rule {
        name: "archive-header",
        row: "Archive: a damaged member header (a size that is not decimal, eight zero bytes at the end) \
              ends the walk silently: exit 0 without the members after it",
        open: false,
        applies: |c| {
            bundler(c)
                && we_refuse(c)
                && c.seed.kind == Kind::Archive
                && [
                    "member data",
                    "archive member header",
                    "long name",
                    "long-name table",
                    "member name length",
                    "not a decimal number",
                ]
                    .iter()
                    .any(|w| c.ours_says(w))
        },
    },
    Rule {
        name: "archive-name-line-break",
        row: "`-type=a`: an output member name holding a line break (from the input member's name) is written, \
              and the output archive cannot be read back",
        open: false,
        applies: |c| {
            bundler(c)
                && c.class == Class::OnlyLlvmSucceeds
                && c.seed.kind == Kind::Archive
                && c.ours_says("member name is empty or contains a line break")
        },
    },
    // ---- llvm-offload-binary and llvm-objdump
    Rule {
        name: "offload-bounds",
        row: "A string count, key or value offset past the binary crashes llvm-objdump and llvm-offload-binary \
              (SIGSEGV); an image past the end crashes extraction; a key without NUL is read until some NUL",
        open: false,
        applies: |c| {
            offload_tool(c)
                && we_refuse(c)
                && ["string entries at offset", "lies outside the", "has no NUL"]
                    .iter()
                    .any(|w| c.ours_says(w))
        },
    },
    Rule {
        name: "offload-padding",
        row: "Zero padding after the last binary in a section is an error (\"Invalid data…\"); so is zero \
              padding before the next binary when a binary's size leaves out its own padding",
        open: false,
        applies: |c| {
            offload_tool(c)
                && matches!(c.class, Class::OnlyOursSucceeds)
                && c.llvm_says("Invalid data")
                && (edited(c, "OffloadBinary size")
                    || c.edits.iter().any(|e| match e {
                    // Zeros before a binary, or a binary shifted off its
                    // place by a longer or shorter field before it.
                    Edit::Append { bytes, .. } => bytes.first() == Some(&0),
                    Edit::Splice { remove, insert, .. } => *remove != insert.len(),
                    Edit::Truncate { .. } => false,
                }))
        },
    },
    Rule {
        name: "objdump-back-to-back",
        row: "`llvm-objdump --offloading` refuses a file that is a bundle followed by an OffloadBinary \
              (inspection reads containers back to back: here a binary followed by another container)",
        open: false,
        applies: |c| {
            c.cmd.tool == Tool::Objdump
                && c.class == Class::OnlyOursSucceeds
                && c.llvm_says("Invalid data")
                && c.edits.iter().any(|e| matches!(e, Edit::Append { .. }))
        },
    },
    Rule {
        name: "objdump-bundle-files",
        row: "`llvm-objdump --offloading` writes each bundle entry to a file (and fails, \"while extracting \
              offload Bundle Entries: File exists\", when two entries would go to one file name)",
        open: false,
        applies: |c| {
            c.cmd.tool == Tool::Objdump
                && c.class == Class::OnlyOursSucceeds
                && c.llvm_says("while extracting offload Bundle Entries: File exists")
                || c.cmd.tool == Tool::Objdump && c.class == Class::BothSucceedDiffer && {
                let llvm: Vec<&[u8]> = c
                    .llvm
                    .stdout
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.starts_with(b"Extracting offload bundle: "))
                    .collect();
                llvm == c.ours.stdout.split(|&b| b == b'\n').collect::<Vec<_>>()
            }
        },
    },
    Rule {
        name: "archive-symbols",
        row: "`--archive` fails when an extracted image looks like a COFF object (its first two bytes a machine type) or bitcode but is not one it can read",
        open: false,
        // An image taken for ELF fails both tools since 2026-11-25.
        applies: |c| {
            c.cmd.tool == Tool::Packager
                && c.cmd.has("--archive")
                && c.class == Class::OnlyOursSucceeds
                && ["MaxChunkData", "bitcode", "The end of the file"]
                    .iter()
                    .any(|w| c.llvm_says(w))
        },
    },
    // ---- host objects
    Rule {
        name: "section-alignment",
        row: "A host object with a section alignment of 2^59 makes llvm-objcopy pad the output to that size",
        open: false,
        applies: |c| bundler(c) && we_refuse(c) && c.ours_says("unsupported: section alignment"),
    },
    // ---- found by this tester, then documented
    Rule {
        name: "packager-damaged-section-table",
        row: "An object whose section table is damaged (contents past the end, a bad name table) is read as holding no OffloadBinaries",
        open: false,
        applies: |c| {
            c.cmd.tool == Tool::Packager
                && c.class == Class::OnlyLlvmSucceeds
                && ["section contents [", "section name table", "section header table", "section index"]
                    .iter()
                    .any(|w| c.ours_says(w))
        },
    },
    Rule {
        name: "plain-bundles-back-to-back",
        row: "`-list` of plain bundles back to back lists the first one only",
        open: false,
        applies: list_is_superset,
    },
    Rule {
        name: "ccob-header-values",
        row: "A compressed bundle with an unknown method or version, or a version 1 header with nothing after it, lists nothing and succeeds",
        open: false,
        applies: |c| {
            bundler(c)
                && we_refuse(c)
                && (c.ours_says("unknown compression method") || c.ours_says("unsupported compressed bundle version"))
        },
    },
    Rule {
        name: "objdump-damaged",
        row: "`llvm-objdump --offloading` reads a damaged container (a `.hip_fatbin` bundle, an OffloadBinary) partially or skips it, exit 0",
        open: false,
        applies: |c| {
            c.cmd.tool == Tool::Objdump
                && matches!(c.class, Class::OnlyLlvmSucceeds | Class::LlvmCrashOursRefuse)
                && c.ours_says("damaged containers")
        },
    },
    Rule {
        name: "packager-crash",
        row: "A damaged archive member header or object crashes llvm-offload-binary (SIGSEGV)",
        open: false,
        applies: |c| c.cmd.tool == Tool::Packager && c.class == Class::LlvmCrashOursRefuse,
    },
];

/// The rule that explains this difference, if any.
pub fn explain(ctx: &Ctx) -> Option<&'static Rule> {
    RULES.iter().find(|r| (r.applies)(ctx))
}
