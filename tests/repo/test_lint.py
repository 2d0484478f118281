"""The codebase stays ruff clean and ruff formatted: checked by the test suite, so CI checks it too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is part of the test extra)")
    paths = [p for p in ("explorer", "tests", "bench", "scripts") if (REPO / p).exists()]
    result = subprocess.run([ruff, "check", *paths], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_formatted() -> None:
    """`ruff format` is the one layout (applied in one commit, listed in .git-blame-ignore-revs)."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is part of the test extra)")
    paths = [p for p in ("explorer", "tests", "bench", "scripts") if (REPO / p).exists()]
    result = subprocess.run([ruff, "format", "--check", *paths], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, "run `ruff format` on:\n" + result.stdout + result.stderr
