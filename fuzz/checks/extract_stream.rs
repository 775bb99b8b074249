//! `Extraction::stream` (what `clangoffload extract` writes, a stretch at a
//! time, compressed bundles walked side by side) against `Extraction::plan`
//! (each container decoded whole), on arbitrary bytes, under a 1 MiB limit.
//!
//! Invariants checked, with 1, 2 and 4 lanes, and with a sink that reads
//! back what it wrote (one bundle decoded at a time, hashes checked
//! afterwards from what it reads back) with 1, 3 and 8:
//! - every container handed out is `done` exactly once, and nothing else;
//! - a container's stream succeeds exactly when its plan does (both check
//!   the hash), and then every output of it got exactly the plan's bytes,
//!   in order (no gap, no excess);
//! - a sink that stops a container at the first bytes of one of its
//!   outputs hears nothing more of that container (no `done`, no bytes);
//!   the others are still extracted as above;
//! - no write is empty.

use std::ops::ControlFlow;

use clangoffload::bundler::{BundlerError, Decoding};
use clangoffload::extract::{Extraction, ExtractionSink};

struct Gathered {
    count: usize,
    asked: usize,
    outputs: Vec<Vec<u8>>,
    done: Vec<(usize, bool)>,
    /// Stop the container of this output at its first bytes.
    stop_at: Option<usize>,
    stopped: Option<usize>,
    /// Which container each output belongs to.
    owner: Vec<usize>,
    /// Reads back what was written.
    reads_back: bool,
}

impl ExtractionSink for Gathered {
    fn next(&mut self) -> Option<usize> {
        (self.asked < self.count).then(|| {
            self.asked += 1;
            self.asked - 1
        })
    }

    fn write(&mut self, output: usize, bytes: &[u8]) -> ControlFlow<()> {
        let container = self.owner[output];
        assert_ne!(self.stopped, Some(container), "bytes after a stop");
        assert!(!bytes.is_empty(), "a write of no bytes");
        if self.stop_at == Some(output) {
            self.stopped = Some(container);
            return ControlFlow::Break(());
        }
        self.outputs[output].extend_from_slice(bytes);
        ControlFlow::Continue(())
    }

    fn done(&mut self, container: usize, result: Result<(), BundlerError>) {
        assert_ne!(self.stopped, Some(container), "done after a stop");
        assert!(self.done.iter().all(|(c, _)| *c != container), "done twice");
        self.done.push((container, result.is_ok()));
    }

    fn reads_back(&self) -> bool {
        self.reads_back
    }

    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
        let from = usize::try_from(offset).unwrap();
        let written = &self.outputs[output];
        assert!(
            from + bytes.len() <= written.len(),
            "read back past what was written"
        );
        bytes.copy_from_slice(&written[from..from + bytes.len()]);
        true
    }
}

pub fn check(data: &[u8]) {
    let decoding = Decoding {
        max_size: 1 << 20,
        ..Decoding::default()
    };
    let Ok(extraction) = Extraction::new(data, b"f", decoding, &mut ()) else {
        return;
    };
    let count = extraction.container_count();
    let mut owner = vec![0; extraction.output_count()];
    for c in 0..count {
        for o in extraction.container(c).unwrap().outputs {
            owner[o] = c;
        }
    }
    let plans: Vec<_> = (0..count)
        .map(|c| extraction.plan(c, &mut ()).ok())
        .collect();
    let stop_at =
        (data.len().is_multiple_of(7) && !owner.is_empty()).then(|| data.len() % owner.len());
    for (lanes, reads_back) in [
        (1, false),
        (2, false),
        (4, false),
        (1, true),
        (3, true),
        (8, true),
    ] {
        for stop_at in [None, stop_at] {
            let mut gathered = Gathered {
                count,
                asked: 0,
                outputs: vec![Vec::new(); owner.len()],
                done: Vec::new(),
                stop_at,
                stopped: None,
                owner: owner.clone(),
                reads_back,
            };
            extraction.stream(lanes, &mut gathered, &mut ());
            let mut done: Vec<usize> = gathered.done.iter().map(|(c, _)| *c).collect();
            done.sort_unstable();
            let expected: Vec<usize> = (0..count)
                .filter(|&c| Some(c) != gathered.stopped)
                .collect();
            assert_eq!(done, expected, "every container done once ({lanes} lanes)");
            for (container, ok) in &gathered.done {
                let plan = &plans[*container];
                assert_eq!(
                    *ok,
                    plan.is_some(),
                    "container {container}: stream and plan disagree"
                );
                let Some(plan) = plan else { continue };
                let outputs = extraction.container(*container).unwrap().outputs;
                for (i, output) in outputs.enumerate() {
                    assert_eq!(
                        gathered.outputs[output],
                        plan.output_bytes(i).unwrap(),
                        "output {output} ({lanes} lanes)"
                    );
                }
            }
        }
    }
}
