"""The history benchmark keeps running (a small size here; the full 10,000 runs is run by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a benchmark

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(120)
def test_the_benchmark_runs_and_an_unchanged_run_stays_small(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "history_scale.py"),
            "--runs",
            "200",
            "--json",
            "--home",
            str(tmp_path / "bench-home"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["runs"] == 200
    assert figures["bytes_per_additional_run"] < 2048
    for key in (
        "list_100_ms",
        "bare_select_100_ms",
        "list_over_bare_ratio",
        "compare_two_runs_ms",
        "record_ms",
    ):
        assert figures[key] > 0
