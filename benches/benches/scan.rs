//! `clangoffload::scan::scan`: finding every container anywhere in a buffer
//! (a memory image, a core dump, a file of unknown format), against a plain
//! `memchr::memmem` search for one magic and a memory-bandwidth reference.
//!
//! Inputs, each searched by every function of its group:
//!
//! * `scan/random_256MiB`: 256 MiB of xorshift bytes with 21 real containers
//!   planted at scattered (some odd) offsets: `single.offbin` (an
//!   OffloadBinary), `hip-4096.bundle` (a bundle) and `hip.v3.ccob` (a
//!   compressed bundle), 7 of each.
//! * `scan/fixtures_256MiB`: the host files of `tests/fixtures/offload`
//!   (`hip-exe`, `libhip*.so`, the `.o` files) concatenated over and over to
//!   256 MiB. Real ELF bytes, but dense with containers (a few per 25 KB).
//! * `scan/libLLVM`: `libLLVM.so.22.1` (150 MB of x86-64 code and data, no
//!   container), when found (see `clangoffload_benches::payload_source`).
//!
//! Functions:
//!
//! * `scan`: `scan(data).count()`, every magic parsed (rejected ones
//!   included).
//! * `memmem_bundle`: `memmem::find_iter(data, "__CLANG_OFFLOAD_BUNDLE__")
//!   .count()`, one magic, one pass.
//! * `memmem_3_passes`: the three magics searched one after the other over
//!   the whole buffer (what three separate searches cost, each reading the
//!   buffer from memory).
//! * `xor_fold`: XOR of the buffer as `u64` words, the memory-bandwidth
//!   reference.
//!
//! `scan/file_256MiB` is the tool's file path on the random buffer written
//! to a file (in the system's temporary directory, read once so that it is
//! in the page cache): `read_1MiB` reads it through a reused 1 MiB buffer
//! (what `dd bs=1M of=/dev/null` does, the reference), `mapped_faulting`
//! maps it and scans (each page is faulted in by the scan), `read_through`
//! is `clangoffload scan FILE`: `clangoffload_cli::io::Input::read_through`,
//! which maps the pages ahead of the scan on a second thread. Each iteration
//! opens and maps the file afresh, as a run of the tool does.
//!
//! `scan/in_cache_128KiB` runs each magic's finder, and `scan`, over one
//! 128 KiB block of the random buffer (held in L2): the search speed without
//! main memory.
//!
//! Before timing, the bench checks that `scan` reports a container at every
//! planted offset, and prints what it finds in each buffer.
//!
//! Note: `scan` runs one pass for the four magics (the three above and the
//! CUDA fat binary's; `clangoffload::scan`'s `search`), with the core's
//! `std` feature here as in the CLI and the C library, so it takes its AVX2
//! copy where the CPU has one; the `memmem` rows are memchr's, also with
//! AVX2 at run time.

// Benchmark code: a panic is a failed run, and the sizes are known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use clangoffload::container::Container;
use clangoffload::scan::{scan, Found};
use clangoffload_benches::{fill_pseudo_random, payload_source, size_label, MIB};
use clangoffload_cli::io::Input;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const COMPRESSED_MAGIC: &[u8] = b"CCOB";
const OFFLOAD_BINARY_MAGIC: &[u8] = b"\x10\xff\x10\xad";
const FATBIN_MAGIC: &[u8] = b"\x50\xed\x55\xba";

const PLANTED: [(&str, &[u8]); 3] = [
    (
        "single.offbin",
        include_bytes!("../../tests/fixtures/offload/single.offbin"),
    ),
    (
        "hip-4096.bundle",
        include_bytes!("../../tests/fixtures/llvm22/hip-4096.bundle"),
    ),
    (
        "hip.v3.ccob",
        include_bytes!("../../tests/fixtures/compressed/llvm22/hip.v3.ccob"),
    ),
];

/// Host files concatenated for `fixtures_256MiB`.
const HOST_FILES: [&str; 14] = [
    "hip-exe",
    "libhip.so",
    "libhip2.so",
    "libhip-mixed.so",
    "hip.o",
    "hip-new-driver.o",
    "hip-rdc-new-driver.o",
    "hip-rdc.o",
    "hip-compress.o",
    "embed.o",
    "embed2.o",
    "omp.o",
    "cuda.o",
    "cuda-rdc-new-driver.o",
];

const SIZE: usize = 256 << 20;
const PLANT_COUNT: usize = 21;

/// What `scan` found: (containers by kind [bundle, compressed, offload
/// binary, CUDA fat binary], rejected magics).
fn census(data: &[u8]) -> ([usize; 4], usize) {
    let mut kinds = [0usize; 4];
    let mut rejected = 0;
    for found in scan(data) {
        match found {
            Found::Container(_, Container::Bundle(_)) => kinds[0] += 1,
            Found::Container(_, Container::Compressed(_)) => kinds[1] += 1,
            Found::Container(_, Container::OffloadBinary(_)) => kinds[2] += 1,
            Found::CudaFatbin(..) => kinds[3] += 1,
            Found::Rejected(..) => rejected += 1,
        }
    }
    (kinds, rejected)
}

fn report(name: &str, data: &[u8]) {
    let (kinds, rejected) = census(data);
    let magics: Vec<usize> = [
        BUNDLE_MAGIC,
        COMPRESSED_MAGIC,
        OFFLOAD_BINARY_MAGIC,
        FATBIN_MAGIC,
    ]
    .iter()
    .map(|m| memchr::memmem::find_iter(data, m).count())
    .collect();
    eprintln!(
        "{name}: {} bytes; scan: {} bundles, {} compressed, {} OffloadBinaries, \
         {} CUDA fat binaries, {} rejected; magic occurrences (bundle, CCOB, \
         OffloadBinary, fat binary): {magics:?}",
        data.len(),
        kinds[0],
        kinds[1],
        kinds[2],
        kinds[3],
        rejected
    );
}

/// 256 MiB of xorshift bytes with [`PLANT_COUNT`] containers planted; checks
/// that `scan` finds each one.
fn random_with_containers() -> Vec<u8> {
    let mut data = vec![0u8; SIZE];
    fill_pseudo_random(&mut data, 0x5ca1_ab1e);
    let stride = SIZE / PLANT_COUNT;
    let mut planted = Vec::new();
    for i in 0..PLANT_COUNT {
        let (name, bytes) = PLANTED[i % PLANTED.len()];
        // Scattered: a different distance into each stride, odd for every
        // other one.
        let at = i * stride + (i * 7919 * 4099) % (stride - 64 * 1024) + (i & 1);
        data[at..at + bytes.len()].copy_from_slice(bytes);
        planted.push((at, name));
    }
    let found: Vec<(u64, &'static str)> = scan(&data)
        .containers()
        .map(|(offset, c)| {
            let kind = match c {
                Container::Bundle(_) => "hip-4096.bundle",
                Container::Compressed(_) => "hip.v3.ccob",
                Container::OffloadBinary(_) => "single.offbin",
            };
            (offset, kind)
        })
        .collect();
    for (at, name) in &planted {
        assert!(
            found.contains(&(*at as u64, *name)),
            "scan missed {name} planted at {at}"
        );
    }
    assert_eq!(
        found.len(),
        planted.len(),
        "scan found containers that were not planted: {found:?}"
    );
    data
}

/// The fixture host files concatenated to 256 MiB.
fn fixture_hosts() -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/offload");
    let files: Vec<Vec<u8>> = HOST_FILES
        .iter()
        .map(|name| {
            std::fs::read(format!("{dir}/{name}")).unwrap_or_else(|e| panic!("read {name}: {e}"))
        })
        .collect();
    let mut data = Vec::with_capacity(SIZE);
    'fill: loop {
        for file in &files {
            let take = file.len().min(SIZE - data.len());
            data.extend_from_slice(&file[..take]);
            if data.len() == SIZE {
                break 'fill;
            }
        }
    }
    data
}

/// LLVM's shared library, if there is one.
fn libllvm() -> Option<Vec<u8>> {
    let path = payload_source();
    let name = path.file_name()?.to_string_lossy().into_owned();
    if !name.starts_with("libLLVM") {
        return None;
    }
    std::fs::read(&path).ok()
}

fn xor_fold(data: &[u8]) -> u64 {
    let chunks = data.chunks_exact(8);
    let tail = chunks
        .remainder()
        .iter()
        .fold(0u64, |acc, &b| acc ^ u64::from(b));
    chunks.fold(tail, |acc, c| {
        acc ^ u64::from_le_bytes(c.try_into().expect("8 bytes"))
    })
}

fn bench_buffer(c: &mut Criterion, name: &str, data: &[u8]) {
    report(name, data);
    let mut group = c.benchmark_group(format!("scan/{name}"));
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function("scan", |b| b.iter(|| scan(black_box(data)).count()));
    let bundle = memchr::memmem::Finder::new(BUNDLE_MAGIC);
    group.bench_function("memmem_bundle", |b| {
        b.iter(|| bundle.find_iter(black_box(data)).count())
    });
    let all = [
        memchr::memmem::Finder::new(BUNDLE_MAGIC),
        memchr::memmem::Finder::new(COMPRESSED_MAGIC),
        memchr::memmem::Finder::new(OFFLOAD_BINARY_MAGIC),
    ];
    group.bench_function("memmem_3_passes", |b| {
        b.iter(|| {
            all.iter()
                .map(|f| f.find_iter(black_box(data)).count())
                .sum::<usize>()
        })
    });
    group.bench_function("xor_fold", |b| b.iter(|| xor_fold(black_box(data))));
    group.finish();
}

/// Each magic's finder alone over one 128 KiB block (scan's block size),
/// which stays in the L2 cache: the search speed without the memory.
fn in_cache(c: &mut Criterion, random: &[u8]) {
    let block = &random[..128 * 1024];
    let mut group = c.benchmark_group("scan/in_cache_128KiB");
    group.throughput(Throughput::Bytes(block.len() as u64));
    for (name, magic) in [
        ("memmem_bundle", BUNDLE_MAGIC),
        ("memmem_ccob", COMPRESSED_MAGIC),
        ("memmem_offload_binary", OFFLOAD_BINARY_MAGIC),
    ] {
        let finder = memchr::memmem::Finder::new(magic);
        group.bench_function(name, |b| {
            b.iter(|| finder.find_iter(black_box(block)).count())
        });
    }
    group.bench_function("scan", |b| b.iter(|| scan(black_box(block)).count()));
    group.finish();
}

/// The tool's file path: `random` in a file, mapped and scanned.
fn file(c: &mut Criterion, random: &[u8]) {
    let mut file = tempfile_in_tmp();
    file.1.write_all(random).expect("write the scan file");
    drop(file.1);
    let path = file.0.as_path();
    let expected = scan(random).count();
    let mut buffer = vec![0u8; MIB as usize];
    let mut group = c.benchmark_group(format!("scan/file_{}", size_label(random.len() as u64)));
    group.throughput(Throughput::Bytes(random.len() as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function("read_1MiB", |b| {
        b.iter(|| {
            let mut f = std::fs::File::open(path).expect("open");
            while f.read(&mut buffer).expect("read") > 0 {}
        })
    });
    let open = |path: &Path| Input::open(path, false).expect("map");
    group.bench_function("mapped_faulting", |b| {
        b.iter(|| assert_eq!(scan(open(path).data()).count(), expected))
    });
    group.bench_function("read_through", |b| {
        b.iter(|| assert_eq!(open(path).read_through(|data| scan(data).count()), expected))
    });
    group.finish();
    let _ = std::fs::remove_file(path);
}

/// A new file in the temporary directory, and its path.
fn tempfile_in_tmp() -> (std::path::PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("clangoffload-scan-bench-{}", std::process::id()));
    let file = std::fs::File::create(&path).expect("create the scan file");
    (path, file)
}

fn all(c: &mut Criterion) {
    let random = random_with_containers();
    file(c, &random);
    in_cache(c, &random);
    bench_buffer(c, &format!("random_{}", size_label(SIZE as u64)), &random);
    drop(random);
    let hosts = fixture_hosts();
    bench_buffer(c, &format!("fixtures_{}", size_label(SIZE as u64)), &hosts);
    drop(hosts);
    if let Some(llvm) = libllvm() {
        eprintln!("libLLVM: {:.1} MiB", llvm.len() as f64 / MIB as f64);
        bench_buffer(c, "libLLVM", &llvm);
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = all
}
criterion_main!(benches);
