//! The registration reader behind `clangoffload wrap` and the C ABI's
//! `clangoffload_wrap_*` on arbitrary bytes: which bytes a wrapper
//! registers (`first_image_range`), the device images of a binary
//! (`device_images`), and the image as initializer text (`write_hex`).
//!
//! Invariants checked:
//! - no panic;
//! - the registered range lies inside the input: the whole input when it
//!   starts with no OffloadBinary, else the first device image's bytes;
//! - `write_hex` writes exactly `hex_len` bytes, refuses a buffer one byte
//!   short, and pieces of whole lines written one after the other give the
//!   text of the whole.

use clangoffload::registration::{
    device_images, first_image_range, hex_len, write_hex, HEX_BYTES_PER_LINE,
};
use clangoffload::OffloadBinary;

/// The checks, on one input.
pub fn check(data: &[u8]) {
    match first_image_range(data) {
        Ok(range) => {
            assert!(range.start <= range.end && range.end <= data.len());
            if !OffloadBinary::is_offload_binary(data) {
                assert_eq!(range, 0..data.len());
            } else {
                let binary = OffloadBinary::parse(data).expect("a registered binary parses");
                let first = device_images(&binary).next().expect("a registered image");
                assert_eq!(&data[range], first.image());
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let sample = &data[..data.len().min(4096)];
    let len = hex_len(sample.len()).expect("hex length");
    let mut whole = vec![0u8; len];
    assert_eq!(write_hex(sample, &mut whole), Some(len));
    if len > 0 {
        assert_eq!(write_hex(sample, &mut vec![0u8; len - 1]), None);
    }
    let mut pieces = Vec::new();
    for piece in sample.chunks(3 * HEX_BYTES_PER_LINE) {
        let mut text = vec![0u8; hex_len(piece.len()).expect("piece length")];
        assert_eq!(write_hex(piece, &mut text), Some(text.len()));
        pieces.extend(text);
    }
    assert_eq!(pieces, whole);
}
