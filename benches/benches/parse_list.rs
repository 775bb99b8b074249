//! Strict `Bundle::parse` plus a walk over every entry's ID, the work behind
//! `clang-offload-bundler -list`.
//!
//! * `parse_list/payload/*`: a 3-entry bundle whose payloads total 1 KiB to
//!   1 GiB. Parsing reads only the header, so the time must not grow with the
//!   payload size. The inputs are lazily zeroed buffers with only the header
//!   written (see `clangoffload_benches::lazy_bundle`), so even the 1 GiB case
//!   costs a few pages of memory and no setup time.
//! * `parse_list/entries/*`: 1, 100 and 10 000 entries, to show the cost is
//!   linear in the number of entries.

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
use clangoffload_benches::{
    many_entry_bundle, many_ids, size_label, three_entry_bundle, GIB, KIB, MIB,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// What `-list` does: check the whole header, then print each ID. Returns the
/// sum of the ID lengths so nothing can be optimised away.
fn parse_and_list(data: &[u8]) -> usize {
    let bundle = Bundle::parse(data).expect("valid bundle");
    let mut total = 0usize;
    for entry in bundle.entries() {
        let entry = entry.expect("checked by parse");
        total += black_box(entry.id()).len();
    }
    total
}

fn by_payload_size(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_list/payload");
    for total in [KIB, MIB, 64 * MIB, GIB] {
        let data = three_entry_bundle(total);
        group.bench_with_input(
            BenchmarkId::from_parameter(size_label(total)),
            &data,
            |b, data| b.iter(|| parse_and_list(black_box(data))),
        );
    }
    group.finish();
}

fn by_entry_count(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_list/entries");
    for n in [1usize, 100, 10_000] {
        let ids = many_ids(n);
        let data = many_entry_bundle(&ids, 64);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &data, |b, data| {
            b.iter(|| parse_and_list(black_box(data)))
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = by_payload_size, by_entry_count
}
criterion_main!(benches);
