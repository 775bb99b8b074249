"""The hand-written stubs (_native.pyi) name exactly what the native module
has: every class, function, method and property, both ways. A new Rust
method without a stub, or a stub for a name that is gone, fails here."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import clangoffload
from clangoffload import _native

STUB = Path(clangoffload.__file__).with_name("_native.pyi")
EXCEPTION_FIELDS = {"kind", "offset", "entry"}  # set on each raised instance


def stubbed() -> tuple[set[str], dict[str, set[str]]]:
    tree = ast.parse(STUB.read_text())
    functions, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("__"):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            classes[node.name] = members
    return functions, classes


def test_stubs_name_what_the_module_has() -> None:
    functions, classes = stubbed()
    native = {n: getattr(_native, n) for n in dir(_native) if not n.startswith("__")}
    assert functions == {n for n, v in native.items() if callable(v) and not inspect.isclass(v)}
    assert set(classes) == {n for n, v in native.items() if inspect.isclass(v)}
    for name, members in classes.items():
        cls = getattr(_native, name)
        if issubclass(cls, BaseException):
            # The fields are declared once, on Error; subclasses inherit them.
            assert members == (EXCEPTION_FIELDS if cls is _native.Error else set()), name
            continue
        actual = {m for m in vars(cls) if not m.startswith("__")}
        assert members == actual, name


def test_the_package_exports_what_it_lists() -> None:
    for name in clangoffload.__all__:
        assert hasattr(clangoffload, name), name


def test_stubtest_agrees_with_the_module() -> None:
    """mypy's stubtest compares signatures too (where mypy is installed:
    .ci/run installs it)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy not installed: signatures not compared")
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "clangoffload._native"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
