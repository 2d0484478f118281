"""The package's annotations hold: mypy, configured in pyproject.toml's `[tool.mypy]`, finds nothing.

Run as a test so CI and the README command check the types as they check ruff and the import
contracts. mypy is the test extra's, run by this interpreter (the project's virtualenv), so it sees
the same installed packages the code runs with. Slow: a run without mypy's cache takes ~15 s.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mypy_clean() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it is part of the test extra)")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
