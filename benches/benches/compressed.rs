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
//! * `compressed/select/*`: the runtime's path, choosing gfx90a's code
//!   object from the 47.2 MB `clangoffload_benches::fatbin_bundle` (zstd 3,
//!   gfx90a from 40% to 60% of the bundle) through the C ABI:
//!   `capi_*` is `clangoffload_fatbin_select_for_device`'s two calls (the
//!   size, then the code object into a buffer of that size), without the
//!   hash check (`no_hash`: decoding stops at the end of gfx90a) and with
//!   it (`hash`: the rest streamed through MD5); `full_decode_*` is what
//!   that call did before, through the C ABI's whole decoding
//!   (`clangoffload_compressed_decompress` into a buffer of the bundle's
//!   size, then `clangoffload_bundle_select_entry_for_device` in it).
//!   `fresh`: the buffer is allocated for each call, as a loader does, so
//!   its pages are faulted in by the call; `reused`: kept and already
//!   touched. libzstd, the decoder the C library uses.
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
    compress, truncated_md5, truncated_md5s, CompressOptions, CompressedBundle, CompressionMethod,
    DecompressOptions, Limits, ZstdDecoder,
};
use clangoffload::id::{select_for_device, TargetId};
use clangoffload::Bundle;
use clangoffload_benches::{fatbin_bundle, realistic_bundle};
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
    // The same bytes as two, four and eight messages hashed side by side
    // (`extract` hashes eight bundles read back so): the gain of running
    // several chains of MD5 steps at once.
    for parts in [2, 4, 8] {
        let messages: Vec<&[u8]> = inputs
            .bundle
            .chunks(inputs.bundle.len().div_ceil(parts))
            .collect();
        group.bench_function(BenchmarkId::new("md5_side_by_side", parts), |b| {
            b.iter(|| truncated_md5s(black_box(&messages)))
        });
    }
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

/// Where a call's buffer comes from: new for each call, as a loader
/// allocates it for each code object (its pages faulted in by the call), or
/// kept and already touched.
#[derive(Clone, Copy)]
enum Buffer {
    Fresh,
    Reused,
}

/// A buffer of `len` bytes: `kept`, grown if needed, or a new one.
fn buffer(kept: &mut Vec<u8>, len: usize, how: Buffer) -> &mut [u8] {
    match how {
        Buffer::Fresh => *kept = vec![0u8; len],
        Buffer::Reused if kept.len() < len => kept.resize(len, 0),
        Buffer::Reused => {}
    }
    &mut kept[..len]
}

/// The runtime's path: both calls of `clangoffload_fatbin_select_for_device`
/// for `device` (the size, then the code object into a buffer of that
/// size); returns the code object's length.
fn select_through_c(
    data: &[u8],
    device: &str,
    flags: u32,
    kept: &mut Vec<u8>,
    how: Buffer,
) -> usize {
    use clangoffload_capi as c;
    let mut needed = 0usize;
    let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
    let mut matched = std::mem::MaybeUninit::<c::clangoffload_device_match>::uninit();
    let mut call = |scratch: &mut [u8], needed: &mut usize| {
        // SAFETY: every buffer is live and writable for the call; `scratch`
        // is NULL exactly when empty.
        unsafe {
            c::clangoffload_fatbin_select_for_device(
                data.as_ptr(),
                data.len(),
                device.as_ptr().cast(),
                device.len(),
                flags,
                if scratch.is_empty() {
                    std::ptr::null_mut()
                } else {
                    scratch.as_mut_ptr()
                },
                scratch.len(),
                needed,
                entry.as_mut_ptr(),
                matched.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    };
    let status = call(&mut [], &mut needed);
    assert_eq!(status, c::clangoffload_status::BufferTooSmall);
    let status = call(buffer(kept, needed, how), &mut needed);
    assert_eq!(status, c::clangoffload_status::Ok);
    // SAFETY: written on OK.
    unsafe { entry.assume_init() }.payload.len
}

/// The same through the C ABI's whole decoding, as the call worked before:
/// the decompressed size, the whole bundle into a buffer of that size, then
/// the runtime's choice in it; returns the code object's length.
fn full_decode_through_c(
    data: &[u8],
    device: &str,
    flags: u32,
    kept: &mut Vec<u8>,
    how: Buffer,
) -> usize {
    use clangoffload_capi as c;
    let mut size = 0usize;
    let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
    let mut matched = std::mem::MaybeUninit::<c::clangoffload_device_match>::uninit();
    // SAFETY: `data` is live for the call; `size` is a writable local.
    let status = unsafe {
        c::clangoffload_compressed_decompressed_size(
            data.as_ptr(),
            data.len(),
            0,
            &mut size,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, c::clangoffload_status::Ok);
    let out = buffer(kept, size, how);
    // SAFETY: `data` is live for the call; `out` is writable for its
    // length; `size` is a writable local.
    let status = unsafe {
        c::clangoffload_compressed_decompress(
            data.as_ptr(),
            data.len(),
            0,
            flags,
            out.as_mut_ptr(),
            out.len(),
            &mut size,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, c::clangoffload_status::Ok);
    // SAFETY: the first `size` bytes of `out` (the decoded bundle) and
    // `device` are live for the call; `entry` and `matched` are writable
    // records.
    let status = unsafe {
        c::clangoffload_bundle_select_entry_for_device(
            out.as_ptr(),
            size,
            device.as_ptr().cast(),
            device.len(),
            entry.as_mut_ptr(),
            matched.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, c::clangoffload_status::Ok);
    // SAFETY: written whole on OK, asserted just above.
    unsafe { entry.assume_init() }.payload.len
}

fn select(c: &mut Criterion) {
    let bundle = fatbin_bundle();
    let zstd = compress(&bundle, &options(CompressionMethod::Zstd, 3)).expect("zstd");
    let device = "gfx90a";
    let target = TargetId::parse(device).expect("device");
    let (_, entry) =
        select_for_device(&Bundle::parse(&bundle).expect("bundle"), &target).expect("gfx90a");
    eprintln!(
        "select: {} bytes uncompressed, zstd 3: {} bytes; gfx90a: {} bytes from {} ({:.0}% to {:.0}%)",
        bundle.len(),
        zstd.len(),
        entry.size(),
        entry.offset(),
        entry.offset() as f64 * 100.0 / bundle.len() as f64,
        (entry.offset() + entry.size()) as f64 * 100.0 / bundle.len() as f64,
    );
    let skip = clangoffload_capi::CLANGOFFLOAD_SKIP_HASH_CHECK;
    let mut kept = Vec::new();
    for flags in [0, skip] {
        let len = select_through_c(&zstd, device, flags, &mut kept, Buffer::Reused);
        assert!(
            kept[..len] == *entry.payload(),
            "the C ABI chose other code"
        );
        let len = full_decode_through_c(&zstd, device, flags, &mut kept, Buffer::Reused);
        assert_eq!(len, entry.payload().len());
    }

    let mut group = c.benchmark_group("compressed/select");
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(3));
    type Path = fn(&[u8], &str, u32, &mut Vec<u8>, Buffer) -> usize;
    let paths: [(&str, Path); 2] = [
        ("capi", select_through_c),
        ("full_decode", full_decode_through_c),
    ];
    for (buffer, how) in [("fresh", Buffer::Fresh), ("reused", Buffer::Reused)] {
        for (path, run) in paths {
            for (flags, hash) in [(skip, "no_hash"), (0, "hash")] {
                if matches!(how, Buffer::Reused) && flags == 0 {
                    continue;
                }
                let id = BenchmarkId::new(format!("{path}_{hash}"), buffer);
                group.bench_function(id, |b| b.iter(|| run(&zstd, device, flags, &mut kept, how)));
            }
        }
    }
    group.finish();
}

fn all(c: &mut Criterion) {
    let inputs = inputs();
    parse(c, &inputs);
    decompress(c, &inputs);
    compress_bench(c, &inputs);
    select(c);
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
