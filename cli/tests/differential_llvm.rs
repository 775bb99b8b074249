//! A differential tester against LLVM 22 (issue 20): the LLVM-made fixtures
//! under `tests/fixtures/`, mutated structurally (header fields, IDs,
//! markers, member headers, section headers, truncations at field
//! boundaries, concatenations, containers rebuilt with changed IDs), go
//! through LLVM 22's clang-offload-bundler, llvm-offload-binary and
//! `llvm-objdump --offloading` and through ours with the same argv, each run
//! in a fresh directory with a deadline; exit status, stdout (`-list` as a
//! set of lines) and every output file are compared.
//!
//! A difference that `docs/differences.md` documents is explained by a rule
//! in `differential_llvm/rules.rs`; any other fails the test, minimised and
//! written with its argv to a directory. The default run is bounded and
//! deterministic; `differential_llvm/README.md` says how to run a long
//! campaign (`CLANGOFFLOAD_DIFF_INPUTS`, `CLANGOFFLOAD_DIFF_SEED`,
//! `CLANGOFFLOAD_DIFF_OUT`, ...). Skipped, with a NOTICE, without LLVM 22.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

/// The tester's parts, in `differential_llvm/`.
mod differential_llvm {
    pub mod exec;
    pub mod fields;
    pub mod mutate;
    pub mod rng;
    pub mod rules;
    pub mod seeds;
}
use differential_llvm::{exec, fields, mutate, rng, rules, seeds};

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use exec::{Class, Cmd, RunResult, Tool};
use mutate::Edit;
use seeds::Seed;

/// Inputs in the default (CI) run: about a minute in the debug profile.
const DEFAULT_INPUTS: u64 = 600;
const DEFAULT_SEED: u64 = 20;

struct Config {
    inputs: u64,
    seed: u64,
    out: PathBuf,
    jobs: usize,
    timeout: Duration,
    deadline: Option<Duration>,
    /// At most this many distinct differences are minimised and written.
    max_reproducers: usize,
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value}: not a number")),
    )
}

impl Config {
    fn from_env() -> Config {
        Config {
            inputs: env_u64("CLANGOFFLOAD_DIFF_INPUTS").unwrap_or(DEFAULT_INPUTS),
            seed: env_u64("CLANGOFFLOAD_DIFF_SEED").unwrap_or(DEFAULT_SEED),
            out: std::env::var_os("CLANGOFFLOAD_DIFF_OUT")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential_llvm")
                }),
            jobs: env_u64("CLANGOFFLOAD_DIFF_JOBS").unwrap_or(2).max(1) as usize,
            timeout: Duration::from_secs(env_u64("CLANGOFFLOAD_DIFF_TIMEOUT").unwrap_or(10)),
            deadline: env_u64("CLANGOFFLOAD_DIFF_MINUTES").map(|m| Duration::from_secs(60 * m)),
            max_reproducers: env_u64("CLANGOFFLOAD_DIFF_MAX_REPRODUCERS").unwrap_or(40) as usize,
        }
    }
}

/// Our binary under LLVM's tool names.
struct Ours {
    dir: tempfile::TempDir,
}

impl Ours {
    fn new() -> Ours {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "clang-offload-bundler",
            "llvm-offload-binary",
            "clangoffload",
        ] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_clangoffload"), dir.path().join(name))
                .unwrap();
        }
        Ours { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// One command's verdict on one input.
struct Verdict {
    label: String,
    class: Class,
    /// The rule that explains a difference.
    rule: Option<&'static rules::Rule>,
}

/// One input's verdicts and unexplained differences.
type InputOutcome = (u64, Vec<Verdict>, Vec<Finding>);

/// A difference no rule explains.
struct Finding {
    index: u64,
    seed: usize,
    edits: Vec<Edit>,
    cmd: Cmd,
    class: Class,
    signature: String,
}

struct Campaign<'a> {
    config: &'a Config,
    seeds: &'a [Seed],
    ours: &'a Ours,
}

/// The first line of `stderr` that says what is wrong, with numbers
/// blotted out: what tells one difference from another.
fn gist(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains("error") || l.contains("PLEASE") || l.contains("Stack dump"))
        .or_else(|| stderr.lines().next())
        .unwrap_or("");
    // From the message on: not the program's (temporary) path.
    let line = ["error: ", "warning: "]
        .iter()
        .find_map(|w| line.find(w).map(|i| &line[i..]))
        .unwrap_or(line);
    let mut out = String::new();
    let mut last_hash = false;
    for c in line.chars().take(100) {
        let digit = c.is_ascii_hexdigit() && (c.is_ascii_digit() || last_hash);
        if digit && last_hash {
            continue;
        }
        out.push(if digit { '#' } else { c });
        last_hash = digit;
    }
    out
}

impl Campaign<'_> {
    /// Both tools on `input`: the class and the rule that explains it.
    fn judge(
        &self,
        seed: &Seed,
        cmd: &Cmd,
        edits: &[Edit],
        input: &[u8],
    ) -> (Class, Option<&'static rules::Rule>, RunResult, RunResult) {
        let llvm = exec::run(cmd, input, true, self.ours.path(), self.config.timeout);
        let ours = exec::run(cmd, input, false, self.ours.path(), self.config.timeout);
        let class = exec::classify(cmd, &llvm, &ours);
        let rule = if class.is_difference() {
            let mut ours_err = ours.stderr();
            if cmd.tool == Tool::Objdump && !ours.status.ok() {
                // `inspect --objdump` says only "damaged containers"; the
                // plain report says what is damaged.
                let inspect = Cmd {
                    tool: Tool::Inspect,
                    args: Vec::new(),
                    input: cmd.input.clone(),
                };
                let detail = exec::run(
                    &inspect,
                    input,
                    false,
                    self.ours.path(),
                    self.config.timeout,
                );
                ours_err.push_str(&String::from_utf8_lossy(&detail.stdout));
                ours_err.push_str(&detail.stderr());
            }
            let ctx = rules::Ctx {
                seed,
                cmd,
                edits,
                class,
                llvm_err: llvm.stderr(),
                ours_err,
                llvm: &llvm,
                ours: &ours,
            };
            rules::explain(&ctx)
        } else {
            None
        };
        (class, rule, llvm, ours)
    }

    fn input(&self, index: u64) -> (usize, Vec<Edit>, Vec<u8>, Vec<Cmd>) {
        let mut rng = rng::for_input(self.config.seed, index);
        let which = (index % self.seeds.len() as u64) as usize;
        let seed = &self.seeds[which];
        let map = fields::map(&seed.bytes);
        let others: Vec<&[u8]> = self.seeds.iter().map(|s| s.bytes.as_slice()).collect();
        let edits = mutate::generate(&mut rng, &seed.bytes, &map, &others, &seed.ids);
        let input = mutate::apply(&seed.bytes, &edits);
        let cmds = seed.commands(&mut rng);
        (which, edits, input, cmds)
    }

    fn run_input(&self, index: u64) -> (Vec<Verdict>, Vec<Finding>) {
        let (which, edits, input, cmds) = self.input(index);
        let seed = &self.seeds[which];
        let mut verdicts = Vec::new();
        let mut findings = Vec::new();
        for cmd in cmds {
            let (class, rule, llvm, ours) = self.judge(seed, &cmd, &edits, &input);
            if class.is_difference() && rule.is_none() {
                if std::env::var_os("CLANGOFFLOAD_DIFF_VERBOSE").is_some() {
                    let edits: Vec<String> = edits.iter().map(Edit::describe).collect();
                    eprintln!(
                        "== input {index} {} {:?}\n   edits: {}\n   LLVM {}: {}\n   ours {}: {}",
                        seed.name,
                        cmd.args,
                        edits.join("; "),
                        llvm.status,
                        llvm.stderr()
                            .lines()
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" / "),
                        ours.status,
                        ours.stderr()
                            .lines()
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" / "),
                    );
                }
                let signature = format!(
                    "{} | {} | ours: {} | llvm: {}",
                    class.name(),
                    cmd.label(),
                    gist(&ours.stderr()),
                    gist(&llvm.stderr())
                );
                findings.push(Finding {
                    index,
                    seed: which,
                    edits: edits.clone(),
                    cmd: cmd.clone(),
                    class,
                    signature,
                });
            }
            verdicts.push(Verdict {
                label: cmd.label(),
                class,
                rule,
            });
        }
        (verdicts, findings)
    }

    /// Whether `input` still shows an unexplained difference of `class`.
    fn reproduces(&self, finding: &Finding, edits: &[Edit], input: &[u8]) -> bool {
        let seed = &self.seeds[finding.seed];
        let (class, rule, _, _) = self.judge(seed, &finding.cmd, edits, input);
        class == finding.class && rule.is_none()
    }

    /// Fewer edits, then a shorter input, while the difference remains.
    fn shrink(&self, finding: &Finding) -> (Vec<Edit>, Vec<u8>) {
        let base = &self.seeds[finding.seed].bytes;
        let mut edits = finding.edits.clone();
        let mut i = edits.len();
        while i > 0 && edits.len() > 1 {
            i -= 1;
            let mut fewer = edits.clone();
            fewer.remove(i);
            if self.reproduces(finding, &fewer, &mutate::apply(base, &fewer)) {
                edits = fewer;
            }
        }
        let mut input = mutate::apply(base, &edits);
        let (mut lo, mut hi) = (0usize, input.len());
        for _ in 0..12 {
            if hi - lo <= 1 {
                break;
            }
            let mid = lo + (hi - lo) / 2;
            if self.reproduces(finding, &edits, &input[..mid]) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        if hi < input.len() {
            edits.push(Edit::Truncate {
                len: hi,
                what: "shrunk".into(),
            });
            input.truncate(hi);
        }
        (edits, input)
    }

    fn write_reproducer(&self, n: usize, finding: &Finding, count: usize) -> PathBuf {
        let (edits, input) = self.shrink(finding);
        let seed = &self.seeds[finding.seed];
        let slug: String = finding
            .class
            .name()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let base = Path::new(seed.name)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let dir = self.config.out.join(format!("{n:03}-{slug}-{base}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(&finding.cmd.input), &input).unwrap();
        let (_, _, llvm, ours) = self.judge(seed, &finding.cmd, &edits, &input);
        let mut text = String::new();
        let _ = writeln!(text, "{}", finding.signature);
        let _ = writeln!(
            text,
            "seen {count} times; first as input {} of seed {} (CLANGOFFLOAD_DIFF_SEED={})",
            finding.index, self.config.seed, self.config.seed
        );
        let _ = writeln!(
            text,
            "\nseed: tests/fixtures/{}\nedits (minimised):",
            seed.name
        );
        for e in &edits {
            let _ = writeln!(text, "  {}", e.describe());
        }
        let _ = writeln!(
            text,
            "\nreplay, from this directory (see replay.sh):\n  LLVM: {}\n  ours: {}",
            replay_argv(&finding.cmd, true),
            replay_argv(&finding.cmd, false)
        );
        for (who, r) in [("LLVM 22", &llvm), ("ours", &ours)] {
            let _ = writeln!(text, "\n== {who}: {}", r.status);
            let _ = writeln!(
                text,
                "stdout: {}",
                String::from_utf8_lossy(&r.stdout[..r.stdout.len().min(2000)])
            );
            let _ = writeln!(
                text,
                "stderr: {}",
                String::from_utf8_lossy(&r.stderr[..r.stderr.len().min(2000)])
            );
            for (name, bytes) in &r.files {
                let _ = writeln!(text, "file {name}: {} bytes", bytes.len());
            }
        }
        std::fs::write(dir.join("README.txt"), text).unwrap();
        let script = format!(
            "#!/bin/sh\n# Runs LLVM 22 and ours on the input, each in its own directory.\n\
             cd \"$(dirname \"$0\")\"\nCLANGOFFLOAD=\"${{CLANGOFFLOAD:-{}}}\"\nexport OFFLOAD_BUNDLER_IGNORE_ENV_VAR=1\n\
             rm -rf llvm ours && mkdir llvm ours && cp {input} llvm/ && cp {input} ours/\n\
             (cd llvm && {}; echo \"LLVM 22: exit $?\")\n(cd ours && {}; echo \"ours: exit $?\")\n",
            env!("CARGO_BIN_EXE_clangoffload"),
            replay_argv(&finding.cmd, true),
            replay_argv(&finding.cmd, false),
            input = finding.cmd.input,
        );
        std::fs::write(dir.join("replay.sh"), script).unwrap();
        dir
    }
}

/// The argv of `cmd` as a shell line; ours through `$CLANGOFFLOAD`.
fn replay_argv(cmd: &Cmd, llvm: bool) -> String {
    let (program, args): (String, Vec<String>) = match (cmd.tool, llvm) {
        (Tool::Bundler, true) => (
            format!("{}/clang-offload-bundler", exec::LLVM_BIN),
            cmd.args.clone(),
        ),
        (Tool::Packager, true) => (
            format!("{}/llvm-offload-binary", exec::LLVM_BIN),
            cmd.args.clone(),
        ),
        (Tool::Objdump, true) => (format!("{}/llvm-objdump", exec::LLVM_BIN), cmd.args.clone()),
        (Tool::Inspect, _) => ("\"$CLANGOFFLOAD\" inspect".into(), vec![cmd.input.clone()]),
        (Tool::Bundler, false) => ("\"$CLANGOFFLOAD\" bundler".into(), cmd.args.clone()),
        (Tool::Packager, false) => ("\"$CLANGOFFLOAD\" packager".into(), cmd.args.clone()),
        (Tool::Objdump, false) => (
            "\"$CLANGOFFLOAD\" inspect --objdump".into(),
            vec![cmd.input.clone()],
        ),
    };
    let mut line = program;
    for a in args {
        line.push(' ');
        line.push('\'');
        line.push_str(&a.replace('\'', "'\\''"));
        line.push('\'');
    }
    line
}

#[test]
fn differential_against_llvm22() {
    let bundler = Path::new(exec::LLVM_BIN).join("clang-offload-bundler");
    let tools = [
        "clang-offload-bundler",
        "llvm-offload-binary",
        "llvm-objdump",
    ];
    if !tools
        .iter()
        .all(|t| Path::new(exec::LLVM_BIN).join(t).exists())
    {
        eprintln!(
            "NOTICE: {} (and llvm-offload-binary, llvm-objdump) not found; differential test against LLVM 22 skipped (apt-get install -y clang-22 llvm-22)",
            bundler.display()
        );
        return;
    }
    let config = Config::from_env();
    let started = Instant::now();
    let ours = Ours::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let seeds = seeds::load(&fixtures, ours.path());
    let campaign = Campaign {
        config: &config,
        seeds: &seeds,
        ours: &ours,
    };
    eprintln!(
        "differential_llvm: {} seeds, {} inputs, seed {}, {} jobs",
        seeds.len(),
        config.inputs,
        config.seed,
        config.jobs
    );

    let next = AtomicU64::new(0);
    let results: Mutex<Vec<InputOutcome>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..config.jobs {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= config.inputs || config.deadline.is_some_and(|d| started.elapsed() > d)
                {
                    break;
                }
                let (verdicts, findings) = campaign.run_input(index);
                let mut all = results.lock().unwrap();
                all.push((index, verdicts, findings));
                if all.len().is_multiple_of(500) {
                    eprintln!(
                        "differential_llvm: {} inputs in {:.0?}",
                        all.len(),
                        started.elapsed()
                    );
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);

    // Counts per class, per command, per rule.
    let mut classes: BTreeMap<Class, u64> = BTreeMap::new();
    let mut by_label: BTreeMap<String, BTreeMap<Class, u64>> = BTreeMap::new();
    let mut by_rule: BTreeMap<&'static str, (bool, &'static str, u64)> = BTreeMap::new();
    let mut findings: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for (_, verdicts, found) in results.iter_mut() {
        for v in verdicts.iter() {
            *classes.entry(v.class).or_default() += 1;
            *by_label
                .entry(v.label.clone())
                .or_default()
                .entry(v.class)
                .or_default() += 1;
            if let Some(rule) = v.rule {
                by_rule
                    .entry(rule.name)
                    .or_insert((rule.open, rule.row, 0))
                    .2 += 1;
            }
        }
        for f in found.drain(..) {
            findings.entry(f.signature.clone()).or_default().push(f);
        }
    }
    let runs: u64 = classes.values().sum();
    eprintln!(
        "differential_llvm: {} inputs, {runs} command pairs in {:.1?}",
        results.len(),
        started.elapsed()
    );
    for class in Class::ALL {
        eprintln!(
            "  {:>7}  {}",
            classes.get(&class).copied().unwrap_or(0),
            class.name()
        );
    }
    eprintln!("per command (same / both refuse / LLVM crash, we refuse / only LLVM ok / only ours ok / differ / we crash):");
    for (label, counts) in &by_label {
        let row: Vec<String> = Class::ALL
            .iter()
            .map(|c| counts.get(c).copied().unwrap_or(0).to_string())
            .collect();
        eprintln!("  {label:<32} {}", row.join(" / "));
    }
    eprintln!("differences explained by a rule:");
    for (name, (open, row, count)) in &by_rule {
        let open = if *open { " [open: reported]" } else { "" };
        eprintln!("  {count:>7}  {name}{open}: {row}");
    }

    if findings.is_empty() {
        eprintln!("differential_llvm: no undocumented difference");
        return;
    }
    std::fs::create_dir_all(&config.out).unwrap();
    eprintln!(
        "UNDOCUMENTED DIFFERENCES ({} kinds), reproducers in {}:",
        findings.len(),
        config.out.display()
    );
    for (n, (signature, list)) in findings.iter().enumerate() {
        eprintln!("  {:>5}x  {signature}", list.len());
        if n < config.max_reproducers {
            let dir = campaign.write_reproducer(n, &list[0], list.len());
            eprintln!("          {}", dir.display());
        }
    }
    panic!(
        "{} kinds of undocumented difference from LLVM 22 (see above)",
        findings.len()
    );
}
