//! The inspection handle: what core's walk found, and the texts the C
//! records point at (messages, target IDs), made once with the handle.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use clangoffload::inspect::{InspectedEntry, InspectedImage, Inspection, StringPair};

/// What `clangoffload_inspect` found in a file. Borrows the file's bytes.
pub struct clangoffload_inspection {
    pub(super) found: Inspection<'static>,
    /// Each container's error message (empty if it was read whole).
    pub(super) container_errors: Vec<String>,
    /// Each error's message.
    pub(super) error_messages: Vec<String>,
    /// The target ID of each code object, by (container, entry).
    pub(super) targets: BTreeMap<(usize, usize), String>,
}

impl clangoffload_inspection {
    /// Keeps the texts the records point at: messages and target IDs.
    pub(super) fn new(found: Inspection<'static>) -> Self {
        let container_errors = found
            .containers
            .iter()
            .map(|c| {
                c.error
                    .as_ref()
                    .map(|e| alloc::format!("{e}"))
                    .unwrap_or_default()
            })
            .collect();
        let error_messages = found
            .errors
            .iter()
            .map(|e| alloc::format!("{}", e.error))
            .collect();
        let targets = found
            .containers
            .iter()
            .enumerate()
            .flat_map(|(c, container)| {
                container
                    .entries
                    .iter()
                    .enumerate()
                    .filter_map(move |(e, entry)| {
                        let target = entry.code_object?.target;
                        Some(((c, e), alloc::format!("{target}")))
                    })
            })
            .collect();
        clangoffload_inspection {
            found,
            container_errors,
            error_messages,
            targets,
        }
    }

    /// The entries of container `container`; none past the last container
    /// (so that reading one is `IndexOutOfRange`, and counting them 0).
    pub(super) fn entries(&self, container: usize) -> &[InspectedEntry<'static>] {
        self.found
            .containers
            .get(container)
            .map_or(&[], |c| &c.entries)
    }

    /// The images of container `container`, as [`entries`](Self::entries).
    pub(super) fn images(&self, container: usize) -> &[InspectedImage<'static>] {
        self.found
            .containers
            .get(container)
            .map_or(&[], |c| &c.images)
    }

    /// The strings of image `image` of container `container`, as
    /// [`entries`](Self::entries).
    pub(super) fn strings(&self, container: usize, image: usize) -> &[StringPair<'static>] {
        self.images(container)
            .get(image)
            .map_or(&[], |image| &image.strings)
    }
}
