//! Compressed bundles ("CCOB") on a realistic input: the 37.75 MB HIP-like
//! bundle of `clangoffload_benches::realistic_bundle` (an empty host entry
//! and four 9 MiB slices of real machine code, `-bundle-align=4096`),
//! compressed the way `clang-offload-bundler -compress` does (zstd level 3
//! with long-distance matching, header version 3) and with zlib level 6.
//!
//! * `compressed/parse/*`: `CompressedBundle::parse`, which reads only the
//!   header: a 8 KB LLVM 22 fixture against the 10.9 MB zstd and the zlib
//!   bundle. The time must not depend on the size.
//! * `compressed/check/*`: `parse` plus `check`, every test made before
//!   decoding. For zstd that walks the frame's block headers (one per
//!   128 KiB of output), so it grows with the size, but stays in µs.
//! * `compressed/decompress_zstd/*`: `decompress_into` a preallocated,
//!   already-touched buffer, with libzstd and with ruzstd, each with the
//!   MD5 check on (`hash`: on two cores the hash runs on a second thread
//!   while the decoder produces the output) and off (`no_hash`), and
//!   `hash_after`: decoding, then hashing on the same thread, which is what
//!   `hash` cost before it overlapped; `libzstd/fresh_vec` is
//!   `decompress`, which also allocates and faults in the output. Throughput
//!   is bytes of output. `md5` (the hash alone) and `memcpy` (a copy of the
//!   same size) are the references.
//! * `compressed/decompress_zlib/*`: the same with miniz_oxide.
//! * `compressed/compress/*`: `compress` at zstd 3 and zlib 6; throughput is
//!   bytes of input.
//!
//! The sizes, ratios and hash are printed first, so they can be compared
//! with `compare-llvm-compressed.sh`'s (the hash must be the same: the
//! uncompressed bundle is byte-identical to LLVM's).

// Benchmark code: a panic is a failed run, and the sizes are known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::hint::black_box;
use std::time::Duration;

use clangoffload::compressed::{
    compress, truncated_md5, CompressOptions, CompressedBundle, CompressionMethod,
    DecompressOptions, Limits, ZstdDecoder,
};
use clangoffload_benches::realistic_bundle;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

/// An 8 KB compressed bundle written by LLVM 22 (zstd, version 3).
const SMALL_FIXTURE: &[u8] =
    include_bytes!("../../tests/fixtures/compressed/llvm22/hip-align4096.v3.ccob");

/// Everything the benches share, built once.
struct Inputs {
    bundle: Vec<u8>,
    zstd: Vec<u8>,
    zlib: Vec<u8>,
}

fn options(method: CompressionMethod, level: i32) -> CompressOptions {
    CompressOptions {
        version: 3,
        method,
        level: Some(level),
    }
}

fn decompress_options(decoder: ZstdDecoder, verify_hash: bool) -> DecompressOptions {
    DecompressOptions {
        limits: Limits::default(),
        verify_hash,
        zstd_decoder: decoder,
    }
}

fn inputs() -> Inputs {
    let bundle = realistic_bundle();
    let zstd = compress(&bundle, &options(CompressionMethod::Zstd, 3)).expect("zstd");
    let zlib = compress(&bundle, &options(CompressionMethod::Zlib, 6)).expect("zlib");
    // Every decoder must give the bundle back before anything is timed.
    for (name, data) in [("zstd", &zstd), ("zlib", &zlib)] {
        let parsed = CompressedBundle::parse(data).expect("parse");
        for decoder in [ZstdDecoder::Libzstd, ZstdDecoder::Ruzstd] {
            let out = parsed
                .decompress(&decompress_options(decoder, true))
                .expect("decompress");
            assert!(out == bundle, "{name} with {decoder:?} does not round-trip");
        }
    }
    eprintln!(
        "input: {} bytes uncompressed, truncated MD5 {:#018x}; zstd 3: {} bytes ({:.2}:1); zlib 6: {} bytes ({:.2}:1)",
        bundle.len(),
        truncated_md5(&bundle),
        zstd.len(),
        bundle.len() as f64 / zstd.len() as f64,
        zlib.len(),
        bundle.len() as f64 / zlib.len() as f64,
    );
    Inputs { bundle, zstd, zlib }
}

fn size_name(data: &[u8]) -> String {
    if data.len() >= 1 << 20 {
        format!("{:.1}MB", data.len() as f64 / 1e6)
    } else {
        format!("{:.1}KB", data.len() as f64 / 1e3)
    }
}

fn parse(c: &mut Criterion, inputs: &Inputs) {
    let cases = [
        ("zstd_fixture", SMALL_FIXTURE),
        ("zstd", &inputs.zstd[..]),
        ("zlib", &inputs.zlib[..]),
    ];
    let mut group = c.benchmark_group("compressed/parse");
    group.sample_size(20);
    for (name, data) in cases {
        let id = BenchmarkId::new(name, size_name(data));
        group.bench_with_input(id, data, |b, data| {
            b.iter(|| {
                let parsed = CompressedBundle::parse(black_box(data)).expect("parse");
                parsed.uncompressed_size()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("compressed/check");
    group.sample_size(20);
    for (name, data) in cases {
        let id = BenchmarkId::new(name, size_name(data));
        let limits = Limits::default();
        group.bench_with_input(id, data, |b, data| {
            b.iter(|| {
                let parsed = CompressedBundle::parse(black_box(data)).expect("parse");
                parsed.check(&limits).expect("check")
            })
        });
    }
    group.finish();
}

fn decompress(c: &mut Criterion, inputs: &Inputs) {
    let size = inputs.bundle.len();
    let mut out = vec![1u8; size];

    let mut group = c.benchmark_group("compressed/decompress_zstd");
    group.throughput(Throughput::Bytes(size as u64));
    group.sampling_mode(SamplingMode::Flat);
    // ruzstd with the hash takes about 0.25 s per iteration.
    group.measurement_time(Duration::from_secs(3));
    let zstd = CompressedBundle::parse(&inputs.zstd).expect("parse");
    for (decoder, name) in [
        (ZstdDecoder::Libzstd, "libzstd"),
        (ZstdDecoder::Ruzstd, "ruzstd"),
    ] {
        for (verify, hash) in [(false, "no_hash"), (true, "hash")] {
            let options = decompress_options(decoder, verify);
            group.bench_function(BenchmarkId::new(name, hash), |b| {
                b.iter(|| zstd.decompress_into(&mut out, &options).expect("decode"))
            });
        }
        // What `hash` cost before it overlapped: decode, then hash.
        let options = decompress_options(decoder, false);
        group.bench_function(BenchmarkId::new(name, "hash_after"), |b| {
            b.iter(|| {
                let n = zstd.decompress_into(&mut out, &options).expect("decode");
                truncated_md5(&out[..n])
            })
        });
    }
    let options = decompress_options(ZstdDecoder::Libzstd, true);
    group.bench_function(BenchmarkId::new("libzstd", "fresh_vec"), |b| {
        b.iter(|| zstd.decompress(&options).expect("decode"))
    });
    group.bench_function("md5", |b| {
        b.iter(|| truncated_md5(black_box(&inputs.bundle)))
    });
    // The md5 crate (no_std builds) against the core's own rounds (std).
    group.bench_function("md5_crate", |b| {
        b.iter(|| md5::compute(black_box(&inputs.bundle)))
    });
    group.bench_function("memcpy", |b| {
        b.iter(|| {
            out.copy_from_slice(black_box(&inputs.bundle));
            black_box(out.as_ptr());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("compressed/decompress_zlib");
    group.throughput(Throughput::Bytes(size as u64));
    group.sampling_mode(SamplingMode::Flat);
    let zlib = CompressedBundle::parse(&inputs.zlib).expect("parse");
    for (verify, hash) in [(false, "no_hash"), (true, "hash")] {
        let options = decompress_options(ZstdDecoder::Libzstd, verify);
        group.bench_function(BenchmarkId::new("miniz_oxide", hash), |b| {
            b.iter(|| zlib.decompress_into(&mut out, &options).expect("decode"))
        });
    }
    group.finish();
}

fn compress_bench(c: &mut Criterion, inputs: &Inputs) {
    let mut group = c.benchmark_group("compressed/compress");
    group.throughput(Throughput::Bytes(inputs.bundle.len() as u64));
    group.sampling_mode(SamplingMode::Flat);
    // 10 samples of one iteration each: about 0.3 s (zstd) and 1.6 s (zlib).
    for (name, method, level, seconds) in [
        ("zstd_level3", CompressionMethod::Zstd, 3, 4),
        ("zlib_level6", CompressionMethod::Zlib, 6, 18),
    ] {
        group.measurement_time(Duration::from_secs(seconds));
        let options = options(method, level);
        group.bench_function(name, |b| {
            b.iter(|| compress(black_box(&inputs.bundle), &options).expect("compress"))
        });
    }
    group.finish();
}

fn all(c: &mut Criterion) {
    let inputs = inputs();
    parse(c, &inputs);
    decompress(c, &inputs);
    compress_bench(c, &inputs);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = all
}
criterion_main!(benches);
