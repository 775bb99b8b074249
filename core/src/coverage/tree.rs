//! Coverage of many inputs (files, wheels) for one list of devices: those
//! given, or the current GPUs and every device some file's code targets.
//! Growing the list as files are read, instead of reading every file twice
//! (once to learn the devices, once to cover them), each input is read
//! once, and again only where a later file brought a device of a vendor
//! whose code an earlier one holds, and then only the members that need
//! it.

use alloc::string::String;
use alloc::vec::Vec;

use super::{absent, cover_with, Covered, Reading, Verdict, CURRENT_GPUS};
use crate::bundler::Decoding;
use crate::select::Device;
use crate::IdError;

/// Coverage of many inputs: [`add`](Tree::add) each, then, while
/// [`pending`](Tree::pending) names one, [`add_again`](Tree::add_again)
/// it; [`files`](Tree::files) then holds a verdict for every file and
/// device.
pub struct Tree {
    devices: Vec<String>,
    /// Whether each file's own targets join the list (no list was given).
    grows: bool,
    decoding: Decoding,
    verify: bool,
    inputs: usize,
    files: Vec<File>,
}

/// One file of device code, with which of its verdicts are known.
struct File {
    input: usize,
    /// A kpack split host's: its verdicts come from its archives, not from
    /// reading it again.
    split: bool,
    covered: Covered,
    /// Per device: whether its verdict is known (an unreadable file has
    /// no verdicts and needs none).
    known: Vec<bool>,
}

impl Tree {
    /// A tree for `devices` (AMD target IDs or ISA names, `sm_XX`), or,
    /// with `None`, for [`CURRENT_GPUS`] and every device some file's code
    /// targets. Every compressed bundle or member is decoded to at most
    /// `decoding`'s limit; `verify` checks compressed bundles' hashes. The
    /// error names the first device no rule knows, with its place.
    pub fn new(
        devices: Option<&[&str]>,
        decoding: Decoding,
        verify: bool,
    ) -> Result<Tree, (usize, IdError)> {
        let grows = devices.is_none();
        let names = devices.unwrap_or(CURRENT_GPUS);
        for (index, name) in names.iter().enumerate() {
            Device::parse(name).map_err(|error| (index, error))?;
        }
        Ok(Tree {
            devices: names.iter().map(|n| String::from(*n)).collect(),
            grows,
            decoding,
            verify,
            inputs: 0,
            files: Vec::new(),
        })
    }

    /// The devices, in the order their verdicts are kept: those given,
    /// or the current GPUs, then each device first targeted by a file, in
    /// the order the files were added.
    pub fn devices(&self) -> &[String] {
        &self.devices
    }

    /// Covers the input `data` named `name` (a file, or a wheel member by
    /// member, `done_with` told of its stored bytes as [`super::cover`]
    /// says) for every device of the list, and, when the list grows, for
    /// the devices its files target beyond it, which join the list.
    /// Returns the input's number (0 for the first added, and so on).
    pub fn add(&mut self, data: &[u8], name: &str, done_with: &dyn Fn(&[u8])) -> usize {
        let input = self.inputs;
        self.inputs = self.inputs.saturating_add(1);
        let covered = self.read(data, name, done_with, &|_| true);
        for mut covered in covered {
            let mut known = alloc::vec![covered.error.is_none(); covered.verdicts.len()];
            for (device, verdict) in core::mem::take(&mut covered.own) {
                let index = match self.devices.iter().position(|d| *d == device) {
                    Some(index) => index,
                    None => {
                        self.devices.push(device);
                        self.devices.len().saturating_sub(1)
                    }
                };
                place(&mut covered.verdicts, &mut known, index, verdict);
            }
            self.files.push(File {
                input,
                split: false,
                covered,
                known,
            });
        }
        input
    }

    /// Covers the kpack split host `data` named `name` for every device of
    /// the list ([`super::cover_split_host`], its archives found and read
    /// as `lookup` says) as one more input: its number, or `None` when it
    /// is no split host. Its code targets no device of its own, so the list
    /// does not grow: add it once every other input is added and none is
    /// pending, for a verdict on every device.
    pub fn add_split_host(
        &mut self,
        data: &[u8],
        name: &str,
        lookup: super::Lookup<'_, '_>,
    ) -> Option<usize> {
        let names: Vec<&str> = self.devices.iter().map(String::as_str).collect();
        let covered = super::cover_split_host(data, name, &names, lookup)?;
        let input = self.inputs;
        self.inputs = self.inputs.saturating_add(1);
        self.files.push(File {
            input,
            split: true,
            known: alloc::vec![true; covered.verdicts.len()],
            covered,
        });
        Some(input)
    }

    /// The first input that must be read again (with
    /// [`add_again`](Tree::add_again)) for verdicts only its code can
    /// give: a device that joined the list after it was read, of a vendor
    /// whose code one of its files holds. Verdicts that need no reading
    /// (a file without code of the device's vendor) are settled here.
    /// `None` once every verdict is known.
    pub fn pending(&mut self) -> Option<usize> {
        let parsed: Vec<Option<Device<'_>>> =
            self.devices.iter().map(|d| Device::parse(d).ok()).collect();
        let mut first = None;
        for file in &mut self.files {
            if file.covered.error.is_some() {
                continue;
            }
            for (index, device) in parsed.iter().enumerate() {
                if file.known.get(index).copied().unwrap_or(false) {
                    continue;
                }
                let Some(device) = device else { continue };
                if holds_none_of(file, &parsed, device) {
                    place(
                        &mut file.covered.verdicts,
                        &mut file.known,
                        index,
                        absent(device),
                    );
                } else if file.split {
                    let late = Verdict {
                        reason: "the kpack split host was covered before this device joined \
                                 the list"
                            .into(),
                        ..unknown()
                    };
                    place(&mut file.covered.verdicts, &mut file.known, index, late);
                } else {
                    first = Some(first.map_or(file.input, |f: usize| f.min(file.input)));
                }
            }
        }
        first
    }

    /// Reads input `input` again (its `data` and `name` as first added)
    /// for the verdicts [`pending`](Tree::pending) says it lacks, decoding
    /// only the members that lack some. A verdict it still cannot give (the
    /// input changed between the readings) says so.
    pub fn add_again(&mut self, input: usize, data: &[u8], name: &str, done_with: &dyn Fn(&[u8])) {
        let count = self.devices.len();
        let lacking = |file: &File| {
            file.input == input
                && file.covered.error.is_none()
                && (file.known.len() < count || file.known.iter().any(|k| !k))
        };
        let wanted: Vec<String> = self
            .files
            .iter()
            .filter(|f| lacking(f))
            .map(|f| f.covered.name.clone())
            .collect();
        let again = self.read(data, name, done_with, &|n| wanted.iter().any(|w| w == n));
        for file in self.files.iter_mut().filter(|f| lacking(f)) {
            let found = again.iter().find(|c| c.name == file.covered.name);
            for index in 0..count {
                if file.known.get(index).copied().unwrap_or(false) {
                    continue;
                }
                let verdict = match found.and_then(|c| c.verdicts.get(index)) {
                    Some(verdict) => verdict.clone(),
                    None => changed(),
                };
                place(&mut file.covered.verdicts, &mut file.known, index, verdict);
            }
        }
    }

    /// Every file of device code, in the order read, with the number of
    /// the input it came from; its verdicts are one per device of
    /// [`devices`](Tree::devices) once [`pending`](Tree::pending) gives
    /// `None` (before, a verdict not yet known says so).
    pub fn files(&self) -> impl Iterator<Item = (usize, &Covered)> {
        self.files.iter().map(|f| (f.input, &f.covered))
    }

    /// How many inputs were added.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// How many files of device code it holds.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// File `index` of [`files`](Tree::files).
    pub fn file(&self, index: usize) -> Option<(usize, &Covered)> {
        self.files.get(index).map(|f| (f.input, &f.covered))
    }

    /// Covers `data` for every device of the list, the files `wanted`
    /// says.
    fn read(
        &self,
        data: &[u8],
        name: &str,
        done_with: &dyn Fn(&[u8]),
        wanted: &dyn Fn(&str) -> bool,
    ) -> Vec<Covered> {
        let names: Vec<&str> = self.devices.iter().map(String::as_str).collect();
        let devices: Vec<Device<'_>> = names.iter().filter_map(|n| Device::parse(n).ok()).collect();
        let reading = Reading {
            own_beyond: self.grows.then_some(&names[..]),
            wanted,
            ..Reading::new(self.decoding, self.verify)
        };
        let mut covered = cover_with(data, name, &devices, &reading, done_with);
        for file in &mut covered {
            if file.error.is_none() {
                file.verdicts.resize_with(self.devices.len(), unknown);
            }
        }
        covered
    }
}

/// Whether `file` holds no code of `device`'s vendor, as a known verdict
/// for another device of that vendor shows.
fn holds_none_of(file: &File, parsed: &[Option<Device<'_>>], device: &Device<'_>) -> bool {
    let cuda = matches!(device, Device::Cuda(_));
    parsed.iter().enumerate().any(|(index, other)| {
        other
            .as_ref()
            .is_some_and(|o| matches!(o, Device::Cuda(_)) == cuda)
            && file.known.get(index).copied().unwrap_or(false)
            && file.covered.verdicts.get(index).is_some_and(|v| !v.applies)
    })
}

/// Puts `verdict` at `index`, growing both lists as needed.
fn place(verdicts: &mut Vec<Verdict>, known: &mut Vec<bool>, index: usize, verdict: Verdict) {
    let len = index.saturating_add(1);
    if verdicts.len() < len {
        verdicts.resize_with(len, unknown);
    }
    if known.len() < len {
        known.resize(len, false);
    }
    if let (Some(v), Some(k)) = (verdicts.get_mut(index), known.get_mut(index)) {
        *v = verdict;
        *k = true;
    }
}

/// A verdict not yet known.
fn unknown() -> Verdict {
    Verdict {
        applies: false,
        loads: false,
        entries: Vec::new(),
        how: None,
        reason: "not yet read for this device".into(),
    }
}

/// A verdict the second reading could not give.
fn changed() -> Verdict {
    Verdict {
        reason: "the file changed between its two readings".into(),
        ..unknown()
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    extern crate std;
    use std::cell::Cell;
    use std::string::String;
    use std::vec::Vec;

    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/");

    fn read(name: &str) -> Vec<u8> {
        std::fs::read(alloc::format!("{FIXTURES}{name}")).unwrap()
    }

    /// A default tree over `inputs`, each input given again as `pending`
    /// asks; the inputs given again, in order.
    fn grow(inputs: &[&str]) -> (Tree, Vec<usize>) {
        let mut tree = Tree::new(None, Decoding::default(), false).unwrap();
        for name in inputs {
            tree.add(&read(name), name, &|_| {});
        }
        let mut again = Vec::new();
        while let Some(input) = tree.pending() {
            assert!(again.len() <= inputs.len(), "{again:?}");
            again.push(input);
            tree.add_again(input, &read(inputs[input]), inputs[input], &|_| {});
        }
        (tree, again)
    }

    /// Every verdict of `tree` is the one covering its input once for the
    /// final list gives.
    fn check_against_cover(tree: &Tree, inputs: &[&str]) {
        let devices: Vec<Device<'_>> = tree
            .devices()
            .iter()
            .map(|d| Device::parse(d).unwrap())
            .collect();
        let once: Vec<Vec<Covered>> = inputs
            .iter()
            .map(|name| {
                let data = read(name);
                super::super::cover(&data, name, &devices, Decoding::default(), false, &|_| {})
            })
            .collect();
        for (input, covered) in tree.files() {
            let same = once[input].iter().find(|c| c.name == covered.name).unwrap();
            assert_eq!(same.verdicts, covered.verdicts, "{}", covered.name);
            assert_eq!(same.targets, covered.targets, "{}", covered.name);
        }
        let count: usize = once.iter().map(Vec::len).sum();
        assert_eq!(count, tree.file_count());
    }

    #[test]
    fn a_device_a_later_file_brings_is_asked_of_earlier_files_of_its_vendor() {
        let inputs = [
            "cuda/clang-sm80.o",
            "llvm22/clang-hip.fatbin",
            "cuda/clang-sm70-sm80.o",
        ];
        let (tree, again) = grow(&inputs);
        let tail: Vec<&str> = tree.devices()[CURRENT_GPUS.len()..]
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(tail, ["gfx906", "gfx90a:xnack+", "sm_70"]);
        // The sm_80 file is read again for gfx906, gfx90a:xnack+ (no: it
        // holds no AMD code) and sm_70 (yes); the HIP file never (no
        // NVIDIA code); the last file asked about its own sm_70 at once.
        assert_eq!(again, [0]);
        check_against_cover(&tree, &inputs);
        let hip = tree.file(1).unwrap().1;
        let sm70 = tree.devices().iter().position(|d| d == "sm_70").unwrap();
        assert!(!hip.verdicts[sm70].applies);
        assert_eq!(hip.verdicts[sm70].reason, "no NVIDIA code in the file");
    }

    #[test]
    fn a_wheel_is_read_again_only_for_the_members_that_need_it() {
        let inputs = ["coverage/every-elf-0.1-py3-none-linux_x86_64.whl"];
        let (tree, again) = grow(&inputs);
        check_against_cover(&tree, &inputs);
        // Given again, only members lacking a verdict are decoded: the
        // stored bytes told of are fewer than the first reading's.
        let data = read(inputs[0]);
        let mut fresh = Tree::new(None, Decoding::default(), false).unwrap();
        let first = Cell::new(0usize);
        fresh.add(&data, inputs[0], &|b| first.set(first.get() + b.len()));
        // Its members target devices the current list lacks, one after
        // another: earlier members need them.
        assert_eq!(again, [0]);
        assert_eq!(fresh.pending(), Some(0));
        let second = Cell::new(0usize);
        fresh.add_again(0, &data, inputs[0], &|b| second.set(second.get() + b.len()));
        assert!(
            second.get() < first.get(),
            "{} {}",
            second.get(),
            first.get()
        );
        assert_eq!(fresh.pending(), None);
    }

    #[test]
    fn devices_given_do_not_grow_and_need_no_second_reading() {
        let names = ["sm_70", "gfx90a"];
        let mut tree = Tree::new(Some(&names), Decoding::default(), false).unwrap();
        tree.add(&read("cuda/clang-sm80.o"), "a", &|_| {});
        tree.add(&read("llvm22/clang-hip.fatbin"), "b", &|_| {});
        assert_eq!(tree.devices(), names);
        assert_eq!(tree.pending(), None);
        assert_eq!(tree.file_count(), 2);
        assert!(matches!(
            Tree::new(Some(&["sm_80", "gfx9999"]), Decoding::default(), false),
            Err((1, _))
        ));
    }

    #[test]
    fn an_input_gone_when_read_again_says_so_and_ends_the_pending() {
        let inputs = ["cuda/clang-sm80.o", "cuda/clang-sm70-sm80.o"];
        let mut tree = Tree::new(None, Decoding::default(), false).unwrap();
        for name in inputs {
            tree.add(&read(name), name, &|_| {});
        }
        assert_eq!(tree.pending(), Some(0));
        tree.add_again(0, &[], inputs[0], &|_| {});
        assert_eq!(tree.pending(), None);
        let sm70 = tree.devices().iter().position(|d| d == "sm_70").unwrap();
        let verdict = &tree.file(0).unwrap().1.verdicts[sm70];
        assert!(!verdict.loads);
        assert!(verdict.reason.contains("changed"), "{}", verdict.reason);
        // Every other verdict was kept.
        assert!(tree.file(0).unwrap().1.verdicts.iter().any(|v| v.loads));
    }
}
