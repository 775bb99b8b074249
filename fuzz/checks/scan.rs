//! Scanning arbitrary bytes for containers and CUDA fat binaries.
//!
//! Invariants checked:
//! - no panic, and the scan ends;
//! - hits come in increasing offset order, each at a magic, inside the
//!   input; a reported container parses again from its own bytes to the
//!   same extent, and a reported fat binary likewise (`Fatbin::parse`);
//! - no hit lies in bytes the scan skips: a compressed bundle's, or a fat
//!   binary's from its magic to the end of its last compressed entry, each
//!   as far as the container holding it reaches (a model of the rule,
//!   written from the module's documentation);
//! - every container the back-to-back walker finds from offset 0 is among
//!   the hits (scan misses nothing the walker sees, block boundaries
//!   included), and so is every fat binary the fat binary walker
//!   (`cuda_fatbin::fatbins`) finds from offset 0.

use clangoffload::container::{parse_container, Container, Containers};
use clangoffload::cuda_fatbin::{fatbins, Compression, Fatbin};
use clangoffload::scan::{scan, Found};

/// How many bytes of `fatbin` from its start run to the end of its last
/// compressed entry (0 with none).
fn compressed_part(fatbin: &Fatbin<'_>) -> usize {
    fatbin
        .entries()
        .filter(|e| e.compression() != Compression::None)
        .map(|e| e.offset() as usize + e.header_bytes().len() + e.payload().len())
        .max()
        .unwrap_or(0)
}

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let mut last = None;
    let mut containers = Vec::new();
    let mut fat_binaries = Vec::new();
    // The model: the end of the last hit outside every other one, and the
    // end of the bytes not searched.
    let (mut outer_end, mut skip_until) = (0usize, 0usize);
    for found in scan(data) {
        let offset = match found {
            Found::Container(offset, _)
            | Found::CudaFatbin(offset, _)
            | Found::Rejected(offset, _) => offset,
        };
        let at = offset as usize;
        assert!(
            at >= skip_until,
            "hit {at} in skipped bytes (to {skip_until})"
        );
        let (len, skip) = match found {
            Found::Container(_, container) => {
                assert_eq!(container.data().as_ptr(), data[at..].as_ptr());
                let again = parse_container(&data[at..]).expect("hit parses again");
                assert_eq!(again.data().len(), container.data().len());
                containers.push(offset);
                let len = container.data().len();
                let skip = if let Container::Compressed(_) = container {
                    len
                } else {
                    0
                };
                (Some(len), skip)
            }
            Found::CudaFatbin(_, fatbin) => {
                assert_eq!(fatbin.data().as_ptr(), data[at..].as_ptr());
                assert!(Fatbin::is_fatbin(fatbin.data()));
                let again = Fatbin::parse(&data[at..]).expect("fat binary parses again");
                assert_eq!(again.data().len(), fatbin.data().len());
                fat_binaries.push(offset);
                let skip = compressed_part(&fatbin);
                assert!(skip <= fatbin.data().len());
                (Some(fatbin.data().len()), skip)
            }
            Found::Rejected(..) => (None, 0),
        };
        if let Some(len) = len {
            if at >= outer_end {
                outer_end = at + len;
            }
            if skip != 0 {
                skip_until = (at + skip).min(outer_end);
            }
        }
        assert!(last.is_none_or(|l| offset > l), "hits out of order");
        assert!((offset as usize) < data.len());
        last = Some(offset);
    }
    let mut inside_compressed = 0u64;
    for found in Containers::new(data) {
        let Ok((offset, container)) = found else {
            break;
        };
        if offset < inside_compressed {
            continue;
        }
        assert!(
            containers.contains(&offset),
            "walker found {offset} that scan missed"
        );
        if let Container::Compressed(c) = container {
            inside_compressed = offset + c.data().len() as u64;
        }
    }
    for found in fatbins(data) {
        let Ok((offset, _)) = found else {
            break;
        };
        assert!(
            fat_binaries.contains(&offset),
            "fat binary walker found {offset} that scan missed"
        );
    }
}
