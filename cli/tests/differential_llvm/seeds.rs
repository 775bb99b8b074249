//! The seeds (LLVM-made fixtures), what each holds (its entry IDs, its
//! images), and the commands a mutated copy of each is run through.

use std::path::Path;
use std::time::Duration;

use clangoffload::archive::Archive;

use super::exec::{self, Cmd, Tool};
use super::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A binary bundle: `-type=o` and `-type=bc`.
    Binary,
    /// A compressed bundle (or several): `-type=o` and `-type=bc`.
    Compressed,
    /// A text bundle of this `-type`.
    Text(&'static str),
    /// An `ar` archive of bundles: `-type=a`.
    Archive,
    /// A host object with bundle sections: `-type=o`.
    HostObject,
    /// OffloadBinaries, raw or in an object or archive: the packager and
    /// `llvm-objdump --offloading`.
    Offload,
}

/// One OffloadBinary image, as llvm-objdump prints it.
#[derive(Clone, Debug, Default)]
pub struct Image {
    pub triple: String,
    pub arch: String,
    pub producer: String,
}

pub struct Seed {
    /// Path under `tests/fixtures`.
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub kind: Kind,
    /// Entry IDs of the unmutated input, as LLVM 22 lists them (for an
    /// archive: its members' device entries).
    pub ids: Vec<String>,
    pub images: Vec<Image>,
}

const SEEDS: &[(&str, Kind)] = &[
    ("llvm22/hip-4096.bundle", Kind::Binary),
    ("llvm22/openmp.bundle", Kind::Binary),
    ("llvm22/align3.bundle", Kind::Binary),
    ("llvm22/duplicate-ids.bundle", Kind::Binary),
    ("llvm22/normalized.bundle", Kind::Binary),
    ("llvm22/hip-only.bundle", Kind::Binary),
    ("llvm22/clang-hip.fatbin", Kind::Binary),
    ("llvm16/clang-hip.fatbin", Kind::Binary),
    ("compressed/llvm22/hip.v3.ccob", Kind::Compressed),
    ("compressed/llvm22/tu2.v2.ccob", Kind::Compressed),
    ("compressed/llvm19/hip.v2.ccob", Kind::Compressed),
    ("compressed/synthetic/hip.v1.ccob", Kind::Compressed),
    ("compressed/synthetic/hip.zlib-v2.ccob", Kind::Compressed),
    ("compressed/synthetic/hip.zlib-v3.ccob", Kind::Compressed),
    ("compressed/concat/hip.hip_fatbin", Kind::Compressed),
    ("text/s.bundle", Kind::Text("s")),
    ("text/i.bundle", Kind::Text("i")),
    ("text/ll.bundle", Kind::Text("ll")),
    ("text/cui.bundle", Kind::Text("cui")),
    ("archive/gnu-bundles.a", Kind::Archive),
    ("archive/gnu-compressed.a", Kind::Archive),
    ("archive/gnu-objects.a", Kind::Archive),
    ("archive/bsd.a", Kind::Archive),
    ("archive/gnu-sym64.a", Kind::Archive),
    ("archive/darwin-sym64.a", Kind::Archive),
    ("object/bundled-x86_64.o", Kind::HostObject),
    ("object/bundled-i386.o", Kind::HostObject),
    ("object/bundled-amdgcn.o", Kind::HostObject),
    ("object/bundled-groups.o", Kind::HostObject),
    ("offload/single.offbin", Kind::Offload),
    ("offload/multi.offbin", Kind::Offload),
    ("offload/keys.offbin", Kind::Offload),
    ("offload/sizes.offbin", Kind::Offload),
    ("offload/empty-image.offbin", Kind::Offload),
    ("offload/cuda-ptx.offbin", Kind::Offload),
    ("offload/omp.o", Kind::Offload),
    ("offload/embed.o", Kind::Offload),
    ("offload/cuda.o", Kind::Offload),
    ("offload/hip.o", Kind::Offload),
    ("offload/offload.a", Kind::Offload),
];

const ABSENT: &[&str] = &[
    "hip-amdgcn-amd-amdhsa--gfx1030",
    "openmp-nvptx64-nvidia-cuda--sm_90",
];

impl Seed {
    /// The input's file name in a run directory.
    pub fn file_name(&self) -> String {
        let ext = Path::new(self.name)
            .extension()
            .map_or("bin".into(), |e| e.to_string_lossy().into_owned());
        format!("input.{ext}")
    }

    fn bundler_type(&self, rng: &mut Rng) -> &'static str {
        match self.kind {
            Kind::Binary | Kind::Compressed => ["o", "bc"][rng.below(2)],
            Kind::Text(t) => t,
            Kind::Archive => "a",
            Kind::HostObject | Kind::Offload => "o",
        }
    }

    /// The commands a mutated copy of this seed goes through.
    pub fn commands(&self, rng: &mut Rng) -> Vec<Cmd> {
        let input = self.file_name();
        match self.kind {
            Kind::Offload => vec![
                self.packager(rng),
                Cmd {
                    tool: Tool::Objdump,
                    args: vec!["--offloading".into(), input.clone()],
                    input,
                },
            ],
            Kind::Archive => vec![self.unbundle(rng, "a")],
            _ => {
                let ty = self.bundler_type(rng);
                vec![
                    Cmd {
                        tool: Tool::Bundler,
                        args: vec![
                            "-list".into(),
                            format!("-type={ty}"),
                            format!("-input={input}"),
                        ],
                        input,
                    },
                    self.unbundle(rng, ty),
                ]
            }
        }
    }

    fn unbundle(&self, rng: &mut Rng, ty: &str) -> Cmd {
        let mut pool = self.ids.clone();
        let mut targets = Vec::new();
        let want = 1 + rng.below(pool.len().clamp(1, 3));
        while targets.len() < want && !pool.is_empty() {
            targets.push(pool.remove(rng.below(pool.len())));
        }
        if targets.is_empty() || rng.one_in(3) {
            let absent: Vec<&&str> = ABSENT
                .iter()
                .filter(|a| !self.ids.iter().any(|i| i == **a))
                .collect();
            targets.push((**rng.pick(&absent)).to_owned());
        }
        let input = self.file_name();
        let mut args = vec![
            "-unbundle".to_owned(),
            format!("-type={ty}"),
            format!("-input={input}"),
            format!("-targets={}", targets.join(",")),
        ];
        for i in 0..targets.len() {
            args.push(if ty == "a" {
                format!("-output=out{i}.a")
            } else {
                format!("-output=out{i}")
            });
        }
        if rng.one_in(2) {
            args.push("-allow-missing-bundles".into());
        }
        if rng.one_in(4) {
            args.push("-hip-openmp-compatible".into());
        }
        if ty == "a" && rng.one_in(3) {
            args.push("-check-input-archive".into());
        }
        Cmd {
            tool: Tool::Bundler,
            args,
            input,
        }
    }

    fn packager(&self, rng: &mut Rng) -> Cmd {
        let input = self.file_name();
        let archive = rng.one_in(3);
        let mut args = vec![input.clone()];
        if archive {
            args.push("--archive".into());
        }
        for i in 0..1 + rng.below(2) {
            let file = if archive {
                format!("out{i}.a")
            } else {
                format!("out{i}")
            };
            let filter = if self.images.is_empty() || rng.one_in(5) {
                "triple=x86_64-absent-none".to_owned()
            } else {
                let image = rng.pick(&self.images);
                match rng.below(4) {
                    0 => format!("triple={},arch={}", image.triple, image.arch),
                    1 => format!("triple={}", image.triple),
                    2 => format!("kind={}", image.producer),
                    _ => format!("arch={}", image.arch),
                }
            };
            args.push(format!("--image=file={file},{filter}"));
        }
        Cmd {
            tool: Tool::Packager,
            args,
            input,
        }
    }
}

/// Every seed, with its IDs and images as LLVM 22 reports them.
pub fn load(fixtures: &Path, ours: &Path) -> Vec<Seed> {
    SEEDS
        .iter()
        .filter_map(|&(name, kind)| {
            let bytes = std::fs::read(fixtures.join(name)).ok()?;
            let mut seed = Seed {
                name,
                bytes,
                kind,
                ids: Vec::new(),
                images: Vec::new(),
            };
            match kind {
                Kind::Offload => seed.images = images(&seed, ours),
                Kind::Archive => {
                    let archive = Archive::parse(&seed.bytes).ok()?;
                    for member in archive.members().flatten() {
                        for id in list(member.data(), "o", ours) {
                            if !id.starts_with("host-") && !seed.ids.contains(&id) {
                                seed.ids.push(id);
                            }
                        }
                    }
                }
                _ => {
                    let mut rng = Rng::new(0);
                    seed.ids = list(&seed.bytes, seed.bundler_type(&mut rng), ours);
                }
            }
            Some(seed)
        })
        .collect()
}

fn list(bytes: &[u8], ty: &str, ours: &Path) -> Vec<String> {
    let cmd = Cmd {
        tool: Tool::Bundler,
        args: vec!["-list".into(), format!("-type={ty}"), "-input=input".into()],
        input: "input".into(),
    };
    let out = exec::run(&cmd, bytes, true, ours, Duration::from_secs(10));
    let mut ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

fn images(seed: &Seed, ours: &Path) -> Vec<Image> {
    let cmd = Cmd {
        tool: Tool::Objdump,
        args: vec!["--offloading".into(), seed.file_name()],
        input: seed.file_name(),
    };
    let out = exec::run(&cmd, &seed.bytes, true, ours, Duration::from_secs(10));
    let mut images: Vec<Image> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if line.starts_with("OFFLOADING IMAGE") {
            images.push(Image::default());
        } else if let (Some(image), Some((key, value))) = (images.last_mut(), line.split_once(' '))
        {
            let value = value.trim().to_owned();
            match key {
                "triple" => image.triple = value,
                "arch" => image.arch = value,
                "producer" => image.producer = value,
                _ => {}
            }
        }
    }
    images
}
