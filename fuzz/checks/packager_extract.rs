//! llvm-offload-binary's extraction on arbitrary bytes, through core's own
//! plan (`packager::extract`, the code the tool and the C ABI run), and its
//! listing (`packager::list`).
//!
//! The first byte picks the filter: 0 none (every image, nested binaries
//! opened), else one of a few `--image` filters, with `--archive` when its
//! top bit is set; the rest is the input (a raw binary, an ELF file or an
//! archive).
//!
//! Invariants checked:
//! - no panic, and every walk ends (nested images cannot loop or multiply
//!   without end);
//! - an input piece lies inside the input, a made piece inside its buffer;
//! - output names hold no `/` and no NUL;
//! - with no filter, the images written together are no larger than the
//!   input and the decompression budget (1 GiB): nesting cannot amplify.

use clangoffload::bundler::Piece;
use clangoffload::packager;

const FILTERS: [&[u8]; 4] = [
    b"kind=openmp",
    b"triple=amdgcn-amd-amdhsa,arch=gfx90a",
    b"file=out,arch=sm_70",
    b"member=a.o,file=m",
];

/// The checks, on one input.
pub fn check(input: &[u8]) {
    let Some((&choice, data)) = input.split_first() else {
        return;
    };
    let images = packager::list(data);
    let filters: Vec<&[u8]> = match choice & 0x7f {
        0 => Vec::new(),
        n => vec![FILTERS[usize::from(n) % FILTERS.len()]],
    };
    let archive = choice & 0x80 != 0;
    let Ok(plan) = packager::extract(data, b"dir/in.bin", &filters, archive, &mut ()) else {
        return;
    };
    assert!(images.is_ok(), "extract read what list refused");
    let mut written = 0u64;
    for output in 0..plan.output_count() {
        let name = plan.output_name(output);
        assert!(!name.contains(&b'/') && !name.contains(&0), "{name:?}");
        for piece in plan.output(output) {
            match piece {
                Piece::Input { offset, bytes, .. } => {
                    let start = usize::try_from(*offset).unwrap();
                    assert_eq!(&data[start..start + bytes.len()], *bytes);
                }
                made => assert!(plan.bytes(made).is_some()),
            }
        }
        written += plan.output_size(output);
    }
    if filters.is_empty() {
        // The input and what its binaries decompress to (1 GiB at most).
        assert!(written <= data.len() as u64 + (1 << 30), "{written}");
    }
}
