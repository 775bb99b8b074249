//! Running one command under LLVM 22 and under ours, each in a fresh
//! temporary directory with a deadline and memory and file-size limits, and
//! classifying the pair of results.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Bundler,
    Packager,
    Objdump,
    /// `clangoffload inspect FILE` (ours only): why `inspect --objdump`
    /// refused a file, for the rules.
    Inspect,
}

/// One command: the same argv for both tools (our objdump stand-in is
/// `clangoffload inspect --objdump`, given the input file alone).
#[derive(Clone, Debug)]
pub struct Cmd {
    pub tool: Tool,
    pub args: Vec<String>,
    /// The input's file name in the run directory.
    pub input: String,
}

impl Cmd {
    pub fn is_list(&self) -> bool {
        self.args.iter().any(|a| a == "-list")
    }

    pub fn has(&self, flag: &str) -> bool {
        self.args
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    }

    /// `bundler -unbundle -type=o`, `packager --archive`, `objdump`: what
    /// kind of command this is, for counts and signatures.
    pub fn label(&self) -> String {
        match self.tool {
            Tool::Bundler => {
                let ty = self
                    .args
                    .iter()
                    .find(|a| a.starts_with("-type="))
                    .cloned()
                    .unwrap_or_default();
                let verb = if self.is_list() { "-list" } else { "-unbundle" };
                format!("bundler {verb} {ty}")
            }
            Tool::Packager if self.has("--archive") => "packager --archive".into(),
            Tool::Packager => "packager --image".into(),
            Tool::Objdump => "objdump --offloading".into(),
            Tool::Inspect => "inspect".into(),
        }
    }

    fn program(&self, llvm: bool, ours: &Path) -> (PathBuf, Vec<String>) {
        match (self.tool, llvm) {
            (Tool::Bundler, true) => (
                Path::new(LLVM_BIN).join("clang-offload-bundler"),
                self.args.clone(),
            ),
            (Tool::Bundler, false) => (ours.join("clang-offload-bundler"), self.args.clone()),
            (Tool::Packager, true) => (
                Path::new(LLVM_BIN).join("llvm-offload-binary"),
                self.args.clone(),
            ),
            (Tool::Packager, false) => (ours.join("llvm-offload-binary"), self.args.clone()),
            (Tool::Objdump, true) => (Path::new(LLVM_BIN).join("llvm-objdump"), self.args.clone()),
            (Tool::Objdump, false) => (
                ours.join("clangoffload"),
                vec!["inspect".into(), "--objdump".into(), self.input.clone()],
            ),
            (Tool::Inspect, _) => (
                ours.join("clangoffload"),
                vec!["inspect".into(), self.input.clone()],
            ),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Exit(i32),
    Signal(i32),
    Timeout,
}

impl Status {
    pub fn ok(self) -> bool {
        self == Status::Exit(0)
    }

    pub fn crashed(self) -> bool {
        matches!(self, Status::Signal(_) | Status::Timeout)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Exit(c) => write!(f, "exit {c}"),
            Status::Signal(s) => write!(f, "signal {s}"),
            Status::Timeout => write!(f, "timeout"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Every file the run left in its directory but the input.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl RunResult {
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs `cmd` on `input` with LLVM's tool (`llvm`) or ours (whose
/// symlinks are in `ours`), in a fresh directory.
pub fn run(cmd: &Cmd, input: &[u8], llvm: bool, ours: &Path, timeout: Duration) -> RunResult {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("w");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join(&cmd.input), input).unwrap();
    let (program, args) = cmd.program(llvm, ours);
    // 4 GiB of address space, 256 MiB per file: a hostile header must not
    // take the machine with it.
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 4194304; ulimit -f 524288; exec \"$0\" \"$@\"")
        .arg(&program)
        .args(&args)
        .current_dir(&work)
        .env("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1")
        .env_remove("CLANGOFFLOAD_SKIP_HASH_CHECK")
        .env_remove("CLANGOFFLOAD_MAX_DECOMPRESSED_SIZE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(root.path().join("stdout")).unwrap())
        .stderr(std::fs::File::create(root.path().join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            use std::os::unix::process::ExitStatusExt;
            break match (s.code(), s.signal()) {
                (Some(c), _) => Status::Exit(c),
                (None, Some(sig)) => Status::Signal(sig),
                _ => Status::Exit(-1),
            };
        }
        if start.elapsed() > timeout {
            child.kill().ok();
            child.wait().ok();
            break Status::Timeout;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let mut files = BTreeMap::new();
    collect(&work, &work, &cmd.input, &mut files);
    RunResult {
        status,
        stdout: std::fs::read(root.path().join("stdout")).unwrap_or_default(),
        stderr: std::fs::read(root.path().join("stderr")).unwrap_or_default(),
        files,
    }
}

fn collect(root: &Path, dir: &Path, input: &str, files: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            collect(root, &path, input, files);
        } else if name != input {
            files.insert(name, std::fs::read(&path).unwrap_or_default());
        }
    }
}

/// How the two results of one command compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Same,
    BothRefuse,
    LlvmCrashOursRefuse,
    OnlyLlvmSucceeds,
    OnlyOursSucceeds,
    BothSucceedDiffer,
    OursCrash,
}

impl Class {
    pub const ALL: [Class; 7] = [
        Class::Same,
        Class::BothRefuse,
        Class::LlvmCrashOursRefuse,
        Class::OnlyLlvmSucceeds,
        Class::OnlyOursSucceeds,
        Class::BothSucceedDiffer,
        Class::OursCrash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Same => "same result",
            Class::BothRefuse => "both refuse",
            Class::LlvmCrashOursRefuse => "LLVM crashes or hangs, we refuse",
            Class::OnlyLlvmSucceeds => "only LLVM succeeds",
            Class::OnlyOursSucceeds => "only we succeed",
            Class::BothSucceedDiffer => "both succeed, outputs differ",
            Class::OursCrash => "we crash or hang",
        }
    }

    /// A difference someone must look at (or a rule must explain).
    pub fn is_difference(self) -> bool {
        !matches!(self, Class::Same | Class::BothRefuse)
    }
}

fn lines(bytes: &[u8]) -> BTreeSet<Vec<u8>> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// Whether two successful runs gave the same output.
pub fn same_output(cmd: &Cmd, llvm: &RunResult, ours: &RunResult) -> bool {
    let stdout = if cmd.is_list() {
        lines(&llvm.stdout) == lines(&ours.stdout)
    } else {
        llvm.stdout == ours.stdout
    };
    stdout && (cmd.tool == Tool::Objdump || llvm.files == ours.files)
}

pub fn classify(cmd: &Cmd, llvm: &RunResult, ours: &RunResult) -> Class {
    if ours.status.crashed() {
        return Class::OursCrash;
    }
    if cmd.tool == Tool::Objdump {
        // stdout only; a crash is still a crash.
        if llvm.status.crashed() {
            return if ours.status.ok() {
                Class::OnlyOursSucceeds
            } else {
                Class::LlvmCrashOursRefuse
            };
        }
        return if same_output(cmd, llvm, ours) {
            if llvm.status.ok() || ours.status.ok() {
                Class::Same
            } else {
                Class::BothRefuse
            }
        } else {
            match (llvm.status.ok(), ours.status.ok()) {
                (true, false) => Class::OnlyLlvmSucceeds,
                (false, true) => Class::OnlyOursSucceeds,
                (false, false) => Class::BothRefuse,
                (true, true) => Class::BothSucceedDiffer,
            }
        };
    }
    match (llvm.status, ours.status.ok()) {
        (Status::Signal(_) | Status::Timeout, false) => Class::LlvmCrashOursRefuse,
        (Status::Signal(_) | Status::Timeout, true) => Class::OnlyOursSucceeds,
        (Status::Exit(0), true) if same_output(cmd, llvm, ours) => Class::Same,
        (Status::Exit(0), true) => Class::BothSucceedDiffer,
        (Status::Exit(0), false) => Class::OnlyLlvmSucceeds,
        (Status::Exit(_), true) => Class::OnlyOursSucceeds,
        (Status::Exit(_), false) => Class::BothRefuse,
    }
}
