#!/usr/bin/env python3
"""How many CPU-minutes each fuzz target has run against the code it tests
as it is now, from the runs table of README.md.

A target's code under test is every file of this repository that has code
in its built binary (fuzz/target/.../release/<target>, as `cargo fuzz build`
leaves it): the files named by the rows of the binary's line tables that the
linker kept (llvm-dwarfdump, whose sequences for dropped functions start at
address 0). That is the core modules it reaches (through inlining and
generics too), the C ABI or the CLI where it runs them, its check and its
libFuzzer entry point. A run counts when it found no crash and none of those
files differs between the commit it ran at and HEAD; a run at uncommitted
code does not count.

    fuzz/hours.py [TARGET...]        (after `cargo +nightly fuzz build`)

Prints one row per target: the minutes that count, the runs they come from,
and the files that reset the others. LLVM_DWARFDUMP names the tool
(default llvm-dwarfdump-22, else llvm-dwarfdump).
"""
import os
import re
import shutil
import subprocess
import sys

FUZZ = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(FUZZ)
BINARIES = os.path.join(FUZZ, "target", "x86_64-unknown-linux-gnu", "release")


def dwarfdump():
    tool = os.environ.get("LLVM_DWARFDUMP")
    for name in [tool, "llvm-dwarfdump-22", "llvm-dwarfdump"]:
        if name and shutil.which(name):
            return name
    sys.exit("hours.py: no llvm-dwarfdump (set LLVM_DWARFDUMP)")


def dump(flag, binary):
    return subprocess.run([dwarfdump(), flag, binary], capture_output=True, text=True, check=True).stdout


def live_sources(binary):
    """The source files with code in `binary`."""
    comp_dirs, stmt = {}, None
    for line in dump("--debug-info", binary).splitlines():
        m = re.search(r"DW_AT_stmt_list\s+\(0x([0-9a-f]+)\)", line)
        if m:
            stmt = int(m[1], 16)
        m = re.search(r'DW_AT_comp_dir\s+\("(.*)"\)', line)
        if m and stmt is not None:
            comp_dirs[stmt], stmt = m[1], None
    live, dirs, files, current, comp, kept = set(), {}, {}, None, "", None
    for line in dump("--debug-line", binary).splitlines():
        m = re.match(r"debug_line\[0x([0-9a-f]+)\]", line)
        if m:
            dirs, files, current, kept = {}, {}, None, None
            comp = comp_dirs.get(int(m[1], 16), "")
            continue
        m = re.match(r'include_directories\[\s*(\d+)\] = "(.*)"', line)
        if m:
            dirs[int(m[1])] = m[2]
            continue
        m = re.match(r"file_names\[\s*(\d+)\]:", line)
        if m:
            current = int(m[1])
            files[current] = ["", 0]
            continue
        m = re.match(r'\s+name: "(.*)"', line)
        if m and current is not None:
            files[current][0] = m[1]
            continue
        m = re.match(r"\s+dir_index: (\d+)", line)
        if m and current is not None:
            files[current][1] = int(m[1])
            continue
        m = re.match(r"0x([0-9a-f]{16})\s+\d+\s+\d+\s+(\d+)", line)
        if not m:
            continue
        if kept is None:
            kept = int(m[1], 16) != 0
        if line.rstrip().endswith("end_sequence"):
            kept = None
            continue
        entry = files.get(int(m[2]))
        if kept and entry:
            name, directory = entry[0], dirs.get(entry[1], "")
            if not directory.startswith("/"):
                directory = os.path.join(comp, directory)
            live.add(os.path.normpath(os.path.join(directory, name)))
    return live


def code_under_test(target):
    binary = os.path.join(BINARIES, target)
    if not os.path.exists(binary):
        return None
    tracked = set(
        subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    )
    inside = (os.path.relpath(p, REPO) for p in live_sources(binary) if p.startswith(REPO + os.sep))
    return sorted(p for p in inside if p in tracked)


def runs():
    """(target, commit or None, CPU-seconds, clean) per row of the runs table."""
    rows = []
    with open(os.path.join(FUZZ, "README.md")) as readme:
        for line in readme:
            if not re.match(r"\| 20\d\d-", line):
                continue
            cells = [c.strip() for c in line.split("|")]
            target = cells[2].strip("`").split()[0].strip("`")
            commit = re.fullmatch(r"`([0-9a-f]{7,40})`", cells[3])
            m = re.match(r"(?:(\d+) × )?(\d+) s", cells[4])
            seconds = int(m[2]) * int(m[1] or 1) if m else 0
            rows.append((target, commit and commit[1], seconds, cells[11].startswith("no crash")))
    return rows


# Changed lines that are not code: blank, comments, lint attributes, module
# declarations and the `#[path]` attributes that place them (a module is
# code under test only if its own file is, and that file is judged itself).
NOT_CODE = re.compile(
    r"\s*($|//|#!?\[(allow|deny|forbid|warn|expect)\(|#\[path = \"[^\"]*\"\]$|(pub(\(crate\))? )?mod \w+;)"
)


def changed(commit, files):
    """The files whose code differs between `commit` and HEAD."""
    out = subprocess.run(
        ["git", "diff", "-U0", commit, "HEAD", "--"] + files,
        cwd=REPO, capture_output=True, text=True,
    )
    if out.returncode != 0:
        return ["(unknown commit)"]
    differs, current = set(), None
    for line in out.stdout.splitlines():
        if line.startswith("+++ ") or line.startswith("--- "):
            if line.startswith("+++ b/") or (line.startswith("--- a/") and current is None):
                current = line[6:]
            continue
        if line.startswith("diff --git"):
            current = None
            continue
        if line[:1] in "+-" and not NOT_CODE.match(line[1:]):
            differs.add(current or "?")
    return sorted(differs)


def main():
    targets = sys.argv[1:] or sorted(f[:-3] for f in os.listdir(os.path.join(FUZZ, "fuzz_targets")))
    table = runs()
    print("| Target | CPU-min on HEAD's code | From | Reset by (runs not counted) |")
    print("|---|---|---|---|")
    for target in targets:
        files = code_under_test(target)
        if files is None:
            print(f"| `{target}` | ? | not built (`cargo +nightly fuzz build`) | |")
            continue
        counted, resets = [], set()
        for name, commit, seconds, clean in table:
            if name != target or not clean:
                continue
            differs = changed(commit, files) if commit else ["(uncommitted code)"]
            if differs:
                resets.update(differs)
            else:
                counted.append((commit, seconds))
        minutes = sum(s for _, s in counted) / 60
        sources = ", ".join(f"{s // 60} min at `{c}`" for c, s in counted) or "-"
        reset = ", ".join(f"`{f}`" for f in sorted(resets)[:4]) + (" …" if len(resets) > 4 else "")
        print(f"| `{target}` | {minutes:.0f} | {sources} | {reset or '-'} |")


if __name__ == "__main__":
    main()
