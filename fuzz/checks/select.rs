//! `select` over arbitrary bytes: what each container gives a device, for an
//! AMD target ID and an NVIDIA SM chosen by the first byte.
//!
//! Invariants checked:
//! - `select` never panics; it fails only where the file holds no
//!   container, and then with an error whose offset lies in the input;
//! - containers are reported in file order, each inside the input;
//! - a choice has an output name (what `extract` would write) that is a
//!   file name (no `/`, not starting with `.`), an ID, and a reason; a
//!   container that gives nothing says why;
//! - the chosen code reads (under a 1 MiB limit) or fails with an error,
//!   never a panic; stored code is a view of the input.

use clangoffload::bundler::Decoding;
use clangoffload::select::{select, Device, Outcome};
use clangoffload::{DecompressOptions, Limits};

use super::within::within;

const DEVICES: &[&str] = &[
    "gfx906:xnack-",
    "gfx90a:sramecc+:xnack+",
    "gfx1100",
    "gfx942",
    "sm_80",
    "sm_90",
    "sm_100",
    "sm_52",
];

pub fn check(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = DEVICES[usize::from(pick) % DEVICES.len()];
    let device = Device::parse(text).unwrap();
    let decoding = Decoding {
        max_size: 1 << 20,
        verify_hash: false,
        verbose: false,
    };
    let selection = match select(rest, b"input.bin", &device, decoding, &mut ()) {
        Ok(selection) => selection,
        Err(e) => {
            if let Some(error) = e.core_error() {
                assert!(error.offset() <= rest.len() as u64 + 64, "{e:?}");
            }
            return;
        }
    };
    let options = DecompressOptions {
        limits: Limits {
            max_uncompressed_size: 1 << 20,
        },
        ..DecompressOptions::default()
    };
    let mut last = 0;
    for container in &selection.containers {
        assert!(container.offset >= last, "out of order");
        assert!(container.offset <= rest.len() as u64);
        last = container.offset;
        match &container.outcome {
            Outcome::Loads(chosen) => {
                let name = String::from_utf8_lossy(&chosen.output_name);
                assert!(
                    !name.is_empty() && !name.contains('/') && !name.starts_with('.'),
                    "{name}"
                );
                assert!(!chosen.id.is_empty());
                assert!(!chosen.reason.is_empty());
                if let Ok(std::borrow::Cow::Borrowed(code)) = chosen.code(&options) {
                    within(rest, code);
                }
            }
            Outcome::Nothing(why) => assert!(!why.is_empty()),
            Outcome::Failed(_) => {}
        }
    }
}
