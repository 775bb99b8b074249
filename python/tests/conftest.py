"""Shared helpers: the repository's fixtures (made by LLVM's own tools,
tests/fixtures/regenerate.sh) and LLVM 22's clang-offload-bundler, when
installed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"

BUNDLER = os.environ.get(
    "CLANG_OFFLOAD_BUNDLER", "/usr/lib/llvm-22/bin/clang-offload-bundler"
)


def fixture(relative: str) -> Path:
    return FIXTURES / relative


def read(relative: str) -> bytes:
    return fixture(relative).read_bytes()


@pytest.fixture
def bundler() -> str:
    """LLVM 22's clang-offload-bundler; the test is skipped, with a notice,
    where it is not installed."""
    if not (os.access(BUNDLER, os.X_OK) or shutil.which(BUNDLER)):
        pytest.skip(f"LLVM 22's clang-offload-bundler not found at {BUNDLER}")
    return BUNDLER
