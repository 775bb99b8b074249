//! What each fuzz target checks, one module per target, each with one
//! `check` function: libFuzzer runs them from `fuzz_targets/`, and
//! `core/tests/fuzz_replay.rs` replays every seed and every finding of
//! `artifacts-found/` through them on stable Rust.

pub mod archive_parse;
pub mod archive_unbundle;
pub mod bitcode_symtab;
pub mod bundle_parse;
pub mod bundle_roundtrip;
pub mod coff_locate;
pub mod coff_object_bundle;
pub mod compressed_decompress;
pub mod compressed_parse;
pub mod containers_walk;
pub mod cuda_fatbin;
pub mod cuda_lz4;
pub mod cuda_writer;
pub mod elf_locate;
pub mod elf_object_bundle;
pub mod entry_id_parse;
pub mod extract_stream;
pub mod inspect;
pub mod kpack;
pub mod kpack_resolve;
pub mod offload_binary;
pub mod packager_extract;
pub mod registration;
pub mod scan;
pub mod select;
pub mod target_id_compat;
pub mod text_bundle;
pub mod within;
pub mod zip;
