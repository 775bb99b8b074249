//! Benchmarks live in `benches/`; see README.md.
