//! Writing and pruning CUDA fat binaries with the tool: the `fatbinary` and
//! `nvprune` personalities (argv[0] symlinks) and subcommands. Always:
//! `fatbinary` is byte-identical to the fat binaries NVIDIA's `fatbinary`
//! 13.5 made from the same inputs (tests/fixtures/cuda, regenerate.sh), its
//! refusals, `nvprune` on a raw fat binary and in place in a host object.
//! With NVIDIA's tools (`NVIDIA_CUDA`: a CUDA tree with `bin/ptxas` and
//! `bin/fatbinary`, e.g. the `nvidia-cuda-nvcc` wheel's `nvidia/cu13`, or
//! the directory above it; `CUOBJDUMP` or `$NVIDIA_CUDA/bin/cuobjdump`):
//! clang 22's CUDA pipeline run with our tool as `fatbinary` gives the same
//! host object, `.nv_fatbin` byte for byte, as with NVIDIA's, and cuobjdump
//! reads what we write and prune. Without them those checks are skipped,
//! saying why.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fixtures;

fn cuda(name: &str) -> PathBuf {
    fixtures().join("cuda").join(name)
}

/// A temp dir with our binary as `fatbinary` and `nvprune`.
struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for name in ["fatbinary", "nvprune"] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_clangoffload"), dir.path().join(name))
                .unwrap();
        }
        Tools { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, tool: &str, args: &[&str]) -> Output {
        Command::new(self.path(tool)).args(args).output().unwrap()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn image3(kind: &str, sm: &str, file: &str) -> String {
    format!(
        "--image3=kind={kind},sm={sm},file={}",
        cuda(&format!("inputs/{file}")).display()
    )
}

/// `fatbinary -64 --create OUT` with `args`, through the personality.
fn fatbinary(tools: &Tools, args: &[&str]) -> Vec<u8> {
    let out = tools.path("out.fatbin");
    let mut all = vec!["-64", "--create", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = tools.run("fatbinary", &all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    std::fs::read(out).unwrap()
}

#[test]
fn fatbinary_is_byte_identical_to_nvidias() {
    let tools = Tools::new();
    let (elf, ptx) = (
        image3("elf", "80", "k80.cubin"),
        image3("ptx", "80", "k80.ptx"),
    );
    let cases: &[(&str, &[&str])] = &[
        ("raw-stored.fatbin", &["--compress-mode=none"]),
        ("raw-default.fatbin", &[]),
        ("raw-zstd.fatbin", &["--compress-all"]),
        (
            "raw-lz4.fatbin",
            &["--compress-all", "--compress-mode=speed"],
        ),
        (
            "raw-ident-opts-debug.fatbin",
            &[
                "--ident=myident.cu",
                "--cmdline=-O3 -v",
                "-g",
                "--compress=false",
            ],
        ),
    ];
    for (fixture, options) in cases {
        let mut args = vec![elf.as_str(), ptx.as_str()];
        args.extend_from_slice(options);
        assert!(
            fatbinary(&tools, &args) == std::fs::read(cuda(fixture)).unwrap(),
            "{fixture}"
        );
    }
    // The 32-bit PTX one, and three images with a and f variants; the
    // subcommand writes the same as the personality.
    let out = tools.path("sub.fatbin");
    let o = Command::new(env!("CARGO_BIN_EXE_clangoffload"))
        .args(["fatbinary", "-32", "--create", out.to_str().unwrap(), &ptx])
        .arg("--compress=false")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(out).unwrap() == std::fs::read(cuda("raw-32bit-ptx.fatbin")).unwrap());
    // fatbinary 13.5 takes the value of --compress and --create apart too.
    let written = fatbinary(
        &tools,
        &[
            &image3("elf", "90a", "k90a.cubin"),
            &image3("ptx", "80", "k80.ptx"),
            &image3("elf", "100f", "k100f.cubin"),
            "--compress",
            "false",
        ],
    );
    // raw-writer-three stores PTX fatbinary had rewritten: the same bytes.
    assert!(written == std::fs::read(cuda("raw-writer-three.fatbin")).unwrap());
}

#[test]
fn fatbinary_refuses_what_it_does_not_do() {
    let tools = Tools::new();
    let ptx = image3("ptx", "80", "k80.ptx");
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "Unknown command line argument '--bogus'"),
        (&["--concat"], "'--concat' is not supported"),
        (&["--image2=kind=elf,file=x"], "'--image2' is not supported"),
        (
            &["--embedded-fatbin=x.c"],
            "'--embedded-fatbin' is not supported",
        ),
        (&[&ptx], "no output file"),
        (
            &["--create=x", "--image3=kind=elf,file=y"],
            "Missing sm in image3",
        ),
        (
            &["--create=x", "--image3=kind=elf,sm=80,sm=90,file=y"],
            "redefinition of keyword 'sm'",
        ),
        (
            &["--create=x", "--image3=kind=nvvm,sm=80,file=y"],
            "image kind 'nvvm' is not supported",
        ),
        (&["--create=x", "--compress-mode=fast"], "--compress-mode"),
        (&["--create=x", "--compress=maybe"], "--compress"),
        (&["--create=x", "-32", "-64"], "exclude each other"),
        (
            &["--create=x", "--image3=kind=elf,sm=80,file=/nonexistent"],
            "Could not open input file '/nonexistent'",
        ),
    ];
    for (args, message) in cases {
        let o = tools.run("fatbinary", args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with("fatbinary fatal   : "), "{err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    // No image: an empty fat binary, as fatbinary writes.
    assert_eq!(fatbinary(&tools, &[]).len(), 16);
    assert!(tools.run("fatbinary", &["--help"]).status.success());
    assert!(tools.run("fatbinary", &["-V"]).status.success());
}

/// The (kind, SM) of every entry `clangoffload list` shows of `file`.
fn listed(file: &Path) -> Vec<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_clangoffload"))
        .arg("list")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.rsplit('.').take(2).collect::<Vec<_>>().join("<"))
        .collect()
}

#[test]
fn nvprune_prunes_fat_binaries_and_host_objects() {
    let tools = Tools::new();
    // A raw file of three fat binaries: each keeps its sm_80 cubin.
    let out = tools.path("pruned.fatbin");
    let input = cuda("raw-three-concatenated.fatbin");
    let o = tools.run(
        "nvprune",
        &[
            "-arch",
            "sm_80",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(&out), ["cubin<sm_80"; 3]);
    // A host object, in place: same length, the sm_90 cubin and the PTX
    // kept (one -gencode naming both).
    let object = cuda("clang-multi-ptx.o");
    let out = tools.path("pruned.o");
    let o = tools.run(
        "nvprune",
        &[
            "-gencode",
            "arch=compute_80,code=[sm_90,compute_80]",
            object.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (before, after) = (
        std::fs::read(&object).unwrap(),
        std::fs::read(&out).unwrap(),
    );
    assert_eq!(before.len(), after.len());
    assert_eq!(listed(&out), ["ptx<sm_80", "cubin<sm_90"]);
    // The output may be the input.
    let copy = tools.path("copy.o");
    std::fs::copy(&object, &copy).unwrap();
    let copy = copy.to_str().unwrap();
    let o = tools.run("nvprune", &["--arch=sm_75", copy, "-o", copy]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(Path::new(copy)), ["cubin<sm_75"]);
    // Refusals.
    for (args, message) in [
        (vec![copy, "-o", "x"], "no architecture"),
        (vec!["-arch=sm_80", copy], "no output file"),
        (
            vec!["-arch=gfx90a", copy, "-o", "x"],
            "invalid architecture 'gfx90a'",
        ),
        (
            vec!["-arch=sm_80", "--no-relocatable-elf", copy, "-o", "x"],
            "not supported",
        ),
    ] {
        let o = tools.run("nvprune", &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
}

/// NVIDIA's CUDA tree (bin/ptxas, bin/fatbinary), from `NVIDIA_CUDA`.
fn nvidia_cuda() -> Option<PathBuf> {
    let Some(root) = std::env::var_os("NVIDIA_CUDA").map(PathBuf::from) else {
        eprintln!("NOTICE: NVIDIA_CUDA not set: clang's CUDA pipeline with NVIDIA's tools skipped");
        return None;
    };
    let tree = [root.clone(), root.join("cu13")]
        .into_iter()
        .find(|t| t.join("bin/ptxas").is_file() && t.join("bin/fatbinary").is_file());
    if tree.is_none() {
        eprintln!(
            "NOTICE: no bin/ptxas and bin/fatbinary under NVIDIA_CUDA={}: pipeline checks skipped",
            root.display()
        );
    }
    tree
}

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";

/// A CUDA tree for clang's `--cuda-path`: NVIDIA's ptxas, `fatbinary`
/// (NVIDIA's or ours), and the one header clang reads the version from.
fn cuda_path(dir: &Path, nvidia: &Path, fatbinary: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::os::unix::fs::symlink(nvidia.join("bin/ptxas"), dir.join("bin/ptxas")).unwrap();
    std::os::unix::fs::symlink(fatbinary, dir.join("bin/fatbinary")).unwrap();
    std::fs::write(dir.join("include/cuda.h"), "#define CUDA_VERSION 13050\n").unwrap();
    dir.to_path_buf()
}

/// A kernel that needs no CUDA header.
const KERNEL: &str = r#"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
struct dim3 { unsigned x, y, z; };
typedef struct CUstream_st *cudaStream_t;
extern "C" int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, cudaStream_t);
__device__ int dev_counter;
__global__ void add_one(int *p, int n) {
  int i = __nvvm_read_ptx_sreg_tid_x() + __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x();
  if (i < n) p[i] += 1;
}
"#;

/// The `.nv_fatbin` section of an ELF object.
fn nv_fatbin(object: &Path) -> Vec<u8> {
    let out = object.with_extension("nv_fatbin");
    let o = Command::new("/usr/lib/llvm-22/bin/llvm-objcopy")
        .arg(format!("--dump-section=.nv_fatbin={}", out.display()))
        .arg(object)
        .arg("/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read(out).unwrap()
}

fn cuobjdump(nvidia: &Path) -> Option<PathBuf> {
    std::env::var_os("CUOBJDUMP")
        .map(PathBuf::from)
        .or_else(|| Some(nvidia.join("bin/cuobjdump")))
        .filter(|p| Command::new(p).arg("--version").output().is_ok())
}

/// `cuobjdump -all -lelf -lptx` of a file: its listing lines.
fn cuobjdump_lists(tool: &Path, file: &Path) -> Vec<String> {
    let o = Command::new(tool)
        .args(["-all", "-lelf", "-lptx"])
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", file.display(), stderr(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn clang_cuda_pipeline_with_our_fatbinary_matches_nvidias() {
    let Some(nvidia) = nvidia_cuda() else { return };
    if !Path::new(CLANG).exists() {
        eprintln!("NOTICE: {CLANG} not found: pipeline checks skipped");
        return;
    }
    let tools = Tools::new();
    let work = tempfile::tempdir().unwrap();
    let theirs = cuda_path(
        &work.path().join("theirs"),
        &nvidia,
        &nvidia.join("bin/fatbinary"),
    );
    let ours = cuda_path(&work.path().join("ours"), &nvidia, &tools.path("fatbinary"));
    let source = work.path().join("k.cu");
    std::fs::write(&source, KERNEL).unwrap();
    let cuobjdump = cuobjdump(&nvidia);
    if cuobjdump.is_none() {
        eprintln!("NOTICE: no cuobjdump (CUOBJDUMP or $NVIDIA_CUDA/bin): its reading skipped");
    }
    let cases: &[&[&str]] = &[
        &["--offload-arch=sm_80"],
        &[
            "--offload-arch=sm_80",
            "--offload-arch=sm_90",
            "--cuda-include-ptx=sm_80",
        ],
        &[
            "--offload-arch=sm_90a",
            "--offload-arch=sm_100",
            "--cuda-include-ptx=sm_100",
        ],
        &[
            "--offload-arch=sm_80",
            "--cuda-include-ptx=sm_80",
            "-Xcuda-fatbinary",
            "--compress-all",
        ],
        &[
            "--offload-arch=sm_80",
            "--offload-arch=sm_120",
            "--cuda-include-ptx=sm_120",
            "-Xcuda-fatbinary",
            "--compress-all",
            "-Xcuda-fatbinary",
            "--compress-mode=speed",
        ],
    ];
    for (n, args) in cases.iter().enumerate() {
        let mut objects = Vec::new();
        for (name, tree) in [("theirs", &theirs), ("ours", &ours)] {
            // The same file name for both: cuobjdump names images after it.
            let dir = work.path().join(format!("{name}-objects"));
            std::fs::create_dir_all(&dir).unwrap();
            let object = dir.join(format!("k{n}.o"));
            let o = Command::new(CLANG)
                .args([
                    "-x",
                    "cuda",
                    "-nocudainc",
                    "-nocudalib",
                    "-Wno-unknown-cuda-version",
                ])
                .arg(format!("--cuda-path={}", tree.display()))
                .args(*args)
                .arg("-c")
                .arg(&source)
                .arg("-o")
                .arg(&object)
                .output()
                .unwrap();
            assert!(o.status.success(), "{name} {args:?}: {}", stderr(&o));
            objects.push(object);
        }
        let (a, b) = (nv_fatbin(&objects[0]), nv_fatbin(&objects[1]));
        assert!(a == b, "{args:?}: .nv_fatbin differs");
        assert!(
            std::fs::read(&objects[0]).unwrap() == std::fs::read(&objects[1]).unwrap(),
            "{args:?}: host objects differ"
        );
        if let Some(tool) = &cuobjdump {
            assert_eq!(
                cuobjdump_lists(tool, &objects[1]),
                cuobjdump_lists(tool, &objects[0]),
                "{args:?}"
            );
        }
    }
    // cuobjdump reads what nvprune left of the last object, in place.
    if let Some(tool) = &cuobjdump {
        let object = work
            .path()
            .join(format!("ours-objects/k{}.o", cases.len() - 1));
        let pruned = work.path().join("pruned.o");
        let o = tools.run(
            "nvprune",
            &[
                "-arch=sm_120,compute_120",
                object.to_str().unwrap(),
                "-o",
                pruned.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let lines = cuobjdump_lists(tool, &pruned);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.contains("sm_120")), "{lines:?}");
    }
}

/// `fatbinary`'s rewriting of PTX (comments, blanks, strings, backslashes)
/// against NVIDIA's on 200 pseudo-random texts of the characters that
/// matter, each with its own mix (the rule in core/src/cuda_fatbin/ptx.rs
/// was worked out this way, on 550 such texts).
#[test]
fn ptx_rewriting_matches_nvidias_on_random_text() {
    let Some(nvidia) = nvidia_cuda() else { return };
    let tools = Tools::new();
    let alphabet = b" \t/*\"\n\rab\\\x0c\x0b.;";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (text, theirs, ours) = (
        tools.path("r.ptx"),
        tools.path("theirs.fatbin"),
        tools.path("ours.fatbin"),
    );
    for case in 0..200 {
        let weights: Vec<u64> = alphabet.iter().map(|_| next() % 8).collect();
        let total: u64 = weights.iter().sum::<u64>().max(1);
        let mut body = b".version 8.8\n.target sm_80\n.address_size 64\n".to_vec();
        for _ in 0..10 + next() % 400 {
            let mut pick = next() % total;
            let at = weights.iter().position(|&w| {
                let hit = pick < w;
                pick = pick.saturating_sub(w);
                hit
            });
            body.push(alphabet[at.unwrap_or(0)]);
        }
        std::fs::write(&text, &body).unwrap();
        let image = format!("--image3=kind=ptx,sm=80,file={}", text.display());
        for (tool, out) in [
            (nvidia.join("bin/fatbinary"), &theirs),
            (tools.path("fatbinary"), &ours),
        ] {
            let o = Command::new(tool)
                .args(["-64", "--compress=false", &image, "--create"])
                .arg(out)
                .output()
                .unwrap();
            assert!(o.status.success(), "case {case}: {}", stderr(&o));
        }
        assert!(
            std::fs::read(&theirs).unwrap() == std::fs::read(&ours).unwrap(),
            "case {case}: {:?}",
            String::from_utf8_lossy(&body)
        );
    }
}
