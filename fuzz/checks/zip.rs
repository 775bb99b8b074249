//! ZIP archives (wheels) and their coverage from arbitrary bytes.
//!
//! Invariants checked:
//! - `Zip::parse` never panics; its error lies in the input;
//! - the central directory walk ends, after at most one item per 46 bytes
//!   of the input plus one (an error ends it); every name is a view of the
//!   input, and a member's stored bytes too;
//! - `contents` (under a 64 KiB limit) never panics, gives the declared
//!   size when it succeeds, a view of the input when stored;
//! - `coverage::cover` of the bytes as a file named `input.whl` never
//!   panics and gives one verdict per device for each readable file.

use clangoffload::bundler::Decoding;
use clangoffload::coverage::cover;
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
    for covered in cover(data, "input.whl", &devices, decoding, true, &|part| {
        within(data, part);
    }) {
        if covered.error.is_none() {
            assert_eq!(covered.verdicts.len(), devices.len());
        }
    }
}
