//! ZIP archives (wheels) and their coverage from arbitrary bytes.
//!
//! Invariants checked:
//! - `Zip::parse` never panics; its error lies in the input;
//! - the central directory walk ends, after at most one item per 46 bytes
//!   of the input plus one (an error ends it); every name is a view of the
//!   input, and a member's stored bytes too;
//! - `contents` (under a 64 KiB limit) never panics, gives the declared
//!   size when it succeeds, a view of the input when stored;
//! - `each_piece` gives, piece by piece, the bytes `contents` gives;
//! - `coverage::cover` of the bytes as a file named `input.whl` never
//!   panics and gives one verdict per device for each readable file, and
//!   neither does its sparse reading of every deflated ELF member
//!   (`cover_sparsest`; its reports are held to `cover`'s on real-shaped
//!   files by core's coverage tests, not here: a crafted file can point a
//!   reader inside a payload it does not keep);
//! - the bytes as a file read range by range (`SparseElf::sparsest`, in
//!   pieces of 4 to 64 KiB as the input picks, as the CLI reads in 1 MiB
//!   ones) ask only for ranges inside the file, end (libFuzzer's timeout
//!   catches a reading that does not), give an image of the file's size,
//!   and cover without panicking.

use clangoffload::bundler::Decoding;
use clangoffload::coverage::{cover, cover_sparsest, SparseElf, Tree};
use clangoffload::select::Device;
use clangoffload::zip::Zip;

use super::within::within;

pub fn check(data: &[u8]) {
    match Zip::parse(data) {
        Ok(zip) => {
            let mut count = 0usize;
            for member in zip.members() {
                count += 1;
                assert!(count <= data.len() / 46 + 1, "the walk does not end");
                let Ok(member) = member else { break };
                within(data, member.name);
                if let Ok(stored) = member.stored() {
                    within(data, stored);
                }
                if let Ok(bytes) = member.contents(1 << 16) {
                    assert_eq!(bytes.len() as u64, member.size);
                    let mut pieces = Vec::new();
                    let whole = member.each_piece(1 << 16, &|_| {}, &mut |p| {
                        pieces.extend_from_slice(p);
                        true
                    });
                    assert!(whole.is_ok(), "{whole:?}");
                    assert_eq!(pieces, &bytes[..]);
                    if let std::borrow::Cow::Borrowed(b) = bytes {
                        within(data, b);
                    }
                }
            }
        }
        Err(e) => assert!(e.offset <= data.len() as u64, "{e:?}"),
    }
    let devices = [
        Device::parse("gfx90a:xnack+").unwrap(),
        Device::parse("sm_86").unwrap(),
    ];
    let decoding = Decoding {
        max_size: 1 << 16,
        verify_hash: false,
        verbose: false,
    };
    let within_input = |part: &[u8]| {
        within(data, part);
    };
    let whole = cover(data, "input.whl", &devices, decoding, true, &within_input);
    let sparse = cover_sparsest(data, "input.whl", &devices, decoding, true, &within_input);
    for covered in whole.iter().chain(&sparse) {
        if covered.error.is_none() {
            assert_eq!(covered.verdicts.len(), devices.len());
        }
    }
    // The default list growing: the input added twice (the second brings
    // nothing new), every input pending given again once at most, then
    // every readable file has a verdict for every device.
    let mut tree = Tree::new(None, decoding, false).unwrap();
    tree.add(data, "a.whl", &within_input);
    tree.add(data, "b.whl", &within_input);
    let mut again = 0;
    while let Some(input) = tree.pending() {
        assert!(input < 2 && again < 2, "{input} {again}");
        again += 1;
        tree.add_again(input, data, ["a.whl", "b.whl"][input], &within_input);
    }
    for (_, covered) in tree.files() {
        if covered.error.is_none() {
            assert_eq!(covered.verdicts.len(), tree.devices().len());
        }
    }
    let piece = 4096 * (1 + usize::from(data.first().copied().unwrap_or(0) % 16));
    let mut sparse = SparseElf::sparsest(data.len() as u64);
    while let Some(range) = sparse.missing() {
        assert!(
            range.start < range.end && range.end <= data.len() as u64,
            "{range:?}"
        );
        let end = (range.start as usize + piece).min(range.end as usize);
        sparse.give(range.start, &data[range.start as usize..end]);
    }
    if let Some(image) = sparse.image() {
        assert_eq!(image.len(), data.len());
        cover(&image, "input", &devices, decoding, true, &|_| {});
    }
}
