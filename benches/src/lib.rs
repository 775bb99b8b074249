//! Shared input builders for the Criterion benchmarks in `benches/`; see
//! README.md for how to run them and the numbers measured.

// Benchmark inputs: a size that does not fit is a failed run, so these
// builders index and compute freely.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use clangoffload::bundle::BundleLayout;

/// A KiB.
pub const KIB: u64 = 1 << 10;
/// A MiB.
pub const MIB: u64 = 1 << 20;
/// A GiB.
pub const GIB: u64 = 1 << 30;

/// The alignment clang's HIP driver asks for (`-bundle-align=4096`).
pub const ALIGN: u64 = 4096;

/// `1KiB`, `64MiB`, `1GiB`, ... for benchmark IDs.
pub fn size_label(bytes: u64) -> String {
    for (unit, name) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes.checked_rem(unit) == Some(0) {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// The IDs of a typical HIP bundle: the host and two GPUs.
pub const THREE_IDS: [&str; 3] = [
    "host-x86_64-unknown-linux-gnu-",
    "hipv4-amdgcn-amd-amdhsa--gfx90a",
    "hipv4-amdgcn-amd-amdhsa--gfx942",
];

/// Splits `total` payload bytes over `n` entries (the remainder goes to the
/// last one).
pub fn split(total: u64, n: u64) -> Vec<u64> {
    let each = total / n;
    let mut sizes = vec![each; usize::try_from(n).expect("entry count fits usize")];
    if let Some(last) = sizes.last_mut() {
        *last += total - each * n;
    }
    sizes
}

/// A bundle with the given entries whose payloads are all zero, built without
/// touching the payload bytes: the buffer comes from `vec![0u8; n]`
/// (`calloc`, i.e. fresh zero pages the OS maps lazily) and only the header
/// is written. A 1 GiB bundle therefore costs a few pages of real memory.
pub fn lazy_bundle(entries: &[(&[u8], u64)], align: u64) -> Vec<u8> {
    let layout = BundleLayout::new(entries.iter().copied(), align).expect("layout");
    let total = usize::try_from(layout.total_size()).expect("bundle fits in memory");
    let mut data = vec![0u8; total];
    let header = layout.header();
    data[..header.len()].copy_from_slice(header);
    data
}

/// The 3-entry HIP-like bundle with `total` payload bytes, lazily zeroed.
pub fn three_entry_bundle(total: u64) -> Vec<u8> {
    let sizes = split(total, 3);
    let entries: Vec<(&[u8], u64)> = THREE_IDS
        .iter()
        .zip(&sizes)
        .map(|(id, &size)| (id.as_bytes(), size))
        .collect();
    lazy_bundle(&entries, ALIGN)
}

/// IDs for a bundle with many entries: distinct, of realistic length.
pub fn many_ids(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("openmp-amdgcn-amd-amdhsa--gfx{:06}", i))
        .collect()
}

/// A bundle with `ids.len()` entries of `payload` bytes each (no padding).
pub fn many_entry_bundle(ids: &[String], payload: u64) -> Vec<u8> {
    let entries: Vec<(&[u8], u64)> = ids.iter().map(|id| (id.as_bytes(), payload)).collect();
    lazy_bundle(&entries, 1)
}

/// A host entry of 4 KiB and one device entry of `size` bytes whose payload
/// is filled with a non-zero pseudo-random pattern, so that reading it really
/// reads memory (an untouched zero page would be served from the shared zero
/// page and look faster than RAM).
pub fn filled_device_bundle(size: u64) -> (Vec<u8>, &'static str) {
    let device = THREE_IDS[1];
    let entries: [(&[u8], u64); 2] = [
        (THREE_IDS[0].as_bytes(), 4 * KIB),
        (device.as_bytes(), size),
    ];
    let layout = BundleLayout::new(entries.iter().copied(), ALIGN).expect("layout");
    let mut data = lazy_bundle(&entries, ALIGN);
    let start = usize::try_from(layout.offsets()[1]).expect("offset fits usize");
    fill_pseudo_random(&mut data[start..], 0x9e37_79b9_7f4a_7c15);
    (data, device)
}

/// xorshift64* over `buf`, 8 bytes at a time.
pub fn fill_pseudo_random(buf: &mut [u8], seed: u64) {
    let mut state = seed | 1;
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        chunk.copy_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    for b in chunks.into_remainder() {
        *b = 0xa5;
    }
}

/// The bundle `compare-llvm-compressed.sh` makes and the `compressed` bench
/// rebuilds in memory: a HIP fat binary as `clang -x hip --offload-compress`
/// writes it, i.e. an empty host entry and four device code objects with
/// `-bundle-align=4096`, in this order.
pub const HIP_IDS: [&str; 5] = [
    "host-x86_64-unknown-linux-gnu-",
    "hipv4-amdgcn-amd-amdhsa--gfx906",
    "hipv4-amdgcn-amd-amdhsa--gfx90a",
    "hipv4-amdgcn-amd-amdhsa--gfx942",
    "hipv4-amdgcn-amd-amdhsa--gfx1100",
];

/// Where the four device payloads come from in the source file: (offset,
/// length) in bytes. Each is a 9 MiB slice of real machine code, shortened
/// by 123·i bytes so no size is a multiple of 4096 (the script cuts the same
/// slices with `dd`). Together with the empty host entry the bundle is
/// 37.75 MB, about 3.5:1 under zstd level 3.
pub const DEVICE_SLICES: [(u64, u64); 4] = [
    (8 * MIB, 9 * MIB - 123),
    (40 * MIB, 9 * MIB - 2 * 123),
    (72 * MIB, 9 * MIB - 3 * 123),
    (104 * MIB, 9 * MIB - 4 * 123),
];

/// Files the device payloads are cut from, first found wins; the
/// `CLANGOFFLOAD_BENCH_SOURCE` environment variable overrides them. LLVM's
/// shared library (150 MB of x86-64 code and data) stands in for GPU code
/// objects, which compress about as well; the fixture code objects are only
/// 15 KB each, far too small to repeat without the repeats compressing away.
pub const SOURCE_CANDIDATES: [&str; 2] = [
    "/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1",
    "/usr/lib/llvm-22/lib/libLLVM.so.22.1",
];

/// The source file for [`DEVICE_SLICES`]: `CLANGOFFLOAD_BENCH_SOURCE`, else
/// the first of [`SOURCE_CANDIDATES`], else the running executable (real
/// code too, but smaller, so the slices wrap around and compress better
/// than real bundles).
pub fn payload_source() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("CLANGOFFLOAD_BENCH_SOURCE") {
        return path.into();
    }
    for candidate in SOURCE_CANDIDATES {
        if std::path::Path::new(candidate).is_file() {
            return candidate.into();
        }
    }
    let exe = std::env::current_exe().expect("current executable");
    eprintln!(
        "note: no libLLVM.so.22.1 found; cutting payloads from {} instead \
         (set CLANGOFFLOAD_BENCH_SOURCE to choose a file)",
        exe.display()
    );
    exe
}

/// `len` bytes of `file` from `offset`, wrapping to the start when the file
/// is shorter.
fn read_wrapping(file: &mut std::fs::File, file_len: u64, offset: u64, len: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    assert!(file_len > 0, "payload source is empty");
    let mut out = vec![0u8; usize::try_from(len).expect("slice fits usize")];
    let mut filled = 0usize;
    let mut at = offset % file_len;
    while filled < out.len() {
        let chunk = usize::try_from((file_len - at).min(len)).expect("fits usize");
        let end = out.len().min(filled + chunk);
        file.seek(SeekFrom::Start(at)).expect("seek payload source");
        file.read_exact(&mut out[filled..end])
            .expect("read payload source");
        filled = end;
        at = 0;
    }
    out
}

/// The uncompressed HIP-like bundle of [`HIP_IDS`] with the
/// [`DEVICE_SLICES`] of [`payload_source`] as payloads, byte-identical to
/// what `clang-offload-bundler -type=o -bundle-align=4096` writes for the
/// same inputs (the host input being `/dev/null`).
pub fn realistic_bundle() -> Vec<u8> {
    bundle_of_slices(&HIP_IDS, &DEVICE_SLICES)
}

/// The IDs of [`fatbin_bundle`]: an empty host entry and five devices, so
/// that the middle one (gfx90a) lies in the middle of the bundle.
pub const FATBIN_IDS: [&str; 6] = [
    "host-x86_64-unknown-linux-gnu-",
    "hipv4-amdgcn-amd-amdhsa--gfx906",
    "hipv4-amdgcn-amd-amdhsa--gfx908",
    "hipv4-amdgcn-amd-amdhsa--gfx90a",
    "hipv4-amdgcn-amd-amdhsa--gfx942",
    "hipv4-amdgcn-amd-amdhsa--gfx1100",
];

/// The device payloads of [`fatbin_bundle`]: [`DEVICE_SLICES`] and a fifth
/// slice cut the same way.
pub const FATBIN_SLICES: [(u64, u64); 5] = [
    DEVICE_SLICES[0],
    DEVICE_SLICES[1],
    DEVICE_SLICES[2],
    DEVICE_SLICES[3],
    (136 * MIB, 9 * MIB - 5 * 123),
];

/// A 47.2 MB HIP fat binary for choosing a device's code object: the host
/// and the five device slices of [`FATBIN_SLICES`] under [`FATBIN_IDS`]
/// (gfx90a from 40% to 60% of the bundle), laid out as
/// [`realistic_bundle`] is.
pub fn fatbin_bundle() -> Vec<u8> {
    bundle_of_slices(&FATBIN_IDS, &FATBIN_SLICES)
}

/// A bundle of an empty first entry and, under the other `ids`, the
/// `slices` of [`payload_source`], with `-bundle-align=4096`.
fn bundle_of_slices(ids: &[&str], slices: &[(u64, u64)]) -> Vec<u8> {
    let source = payload_source();
    let mut file =
        std::fs::File::open(&source).unwrap_or_else(|e| panic!("open {}: {e}", source.display()));
    let file_len = file.metadata().expect("stat payload source").len();
    let payloads: Vec<Vec<u8>> = slices
        .iter()
        .map(|&(offset, len)| read_wrapping(&mut file, file_len, offset, len))
        .collect();
    let sizes = std::iter::once(0u64).chain(
        payloads
            .iter()
            .map(|p| u64::try_from(p.len()).expect("fits u64")),
    );
    let entries: Vec<(&[u8], u64)> = ids.iter().map(|id| id.as_bytes()).zip(sizes).collect();
    let layout = BundleLayout::new(entries.iter().copied(), ALIGN).expect("layout");
    let mut data = lazy_bundle(&entries, ALIGN);
    for (payload, &offset) in payloads.iter().zip(&layout.offsets()[1..]) {
        let start = usize::try_from(offset).expect("offset fits usize");
        data[start..start + payload.len()].copy_from_slice(payload);
    }
    data
}
