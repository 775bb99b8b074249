//! Copying one entry's payload out of a bundle held in memory, against a
//! plain `memcpy` of the same size, so the ratio to memory bandwidth shows.
//!
//! Per size (1, 64, 256 MiB), in group `extract/<size>`:
//! * `extend_fresh`: parse, find the entry by ID, `Vec::new()` +
//!   `extend_from_slice(payload)`. This is what a library caller that wants an
//!   owned copy pays, including allocating and faulting in the new pages.
//! * `extend_reused`: the same into a `Vec` whose capacity is kept between
//!   iterations (`clear()` first): the copy alone.
//! * `memcpy`: `copy_from_slice` of the same payload into a preallocated,
//!   already-touched buffer: the machine's memory bandwidth.
//!
//! The payload is filled with pseudo-random bytes so it is real memory.

// Benchmark code: a panic is a failed run, and the sizes are known.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::hint::black_box;
use std::time::Duration;

use clangoffload::Bundle;
use clangoffload_benches::{filled_device_bundle, size_label, MIB};
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

fn find_payload<'a>(data: &'a [u8], id: &str) -> &'a [u8] {
    Bundle::parse(data)
        .expect("valid bundle")
        .entries()
        .map(|e| e.expect("checked by parse"))
        .find(|e| e.id() == id.as_bytes())
        .expect("device entry present")
        .payload()
}

fn extract(c: &mut Criterion) {
    for size in [MIB, 64 * MIB, 256 * MIB] {
        let (data, id) = filled_device_bundle(size);
        let len = usize::try_from(size).expect("fits usize");
        let mut group = c.benchmark_group(format!("extract/{}", size_label(size)));
        group.throughput(Throughput::Bytes(size));
        if size >= 64 * MIB {
            // One long iteration per sample: don't ramp iteration counts.
            group.sampling_mode(SamplingMode::Flat);
        }

        group.bench_function(BenchmarkId::from_parameter("extend_fresh"), |b| {
            b.iter(|| {
                let payload = find_payload(black_box(&data), id);
                let mut out = Vec::new();
                out.extend_from_slice(payload);
                out
            })
        });

        let mut reused: Vec<u8> = Vec::with_capacity(len);
        group.bench_function(BenchmarkId::from_parameter("extend_reused"), |b| {
            b.iter(|| {
                let payload = find_payload(black_box(&data), id);
                reused.clear();
                reused.extend_from_slice(payload);
                black_box(reused.as_ptr());
            })
        });

        let payload = find_payload(&data, id);
        let mut dst = vec![1u8; len];
        group.bench_function(BenchmarkId::from_parameter("memcpy"), |b| {
            b.iter(|| {
                dst.copy_from_slice(black_box(payload));
                black_box(dst.as_ptr());
            })
        });
        group.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = extract
}
criterion_main!(benches);
