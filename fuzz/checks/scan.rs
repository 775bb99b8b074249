//! Scanning arbitrary bytes for containers.
//!
//! Invariants checked:
//! - no panic, and the scan ends;
//! - hits come in increasing offset order, each at a magic, inside the
//!   input; a reported container parses again from its own bytes to the
//!   same extent;
//! - every container the back-to-back walker finds from offset 0 is among
//!   the hits (scan misses nothing the walker sees, block boundaries
//!   included).

use clangoffload::container::{parse_container, Containers};
use clangoffload::scan::{scan, Found};

/// The checks, on one input.
pub fn check(data: &[u8]) {
    let mut last = None;
    let mut containers = Vec::new();
    for found in scan(data) {
        let offset = match found {
            Found::Container(offset, container) => {
                let at = offset as usize;
                assert_eq!(container.data().as_ptr(), data[at..].as_ptr());
                let again = parse_container(&data[at..]).expect("hit parses again");
                assert_eq!(again.data().len(), container.data().len());
                containers.push(offset);
                offset
            }
            Found::Rejected(offset, _) => offset,
        };
        assert!(last.map_or(true, |l| offset > l), "hits out of order");
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
        if let clangoffload::Container::Compressed(c) = container {
            inside_compressed = offset + c.data().len() as u64;
        }
    }
}
