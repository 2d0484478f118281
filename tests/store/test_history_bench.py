"""The history benchmark keeps running on both backends (small sizes here; the million runs by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # a benchmark


def _bench(*argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "history_scale.py"), "--runs", "3000", "--agents", "30",
         "--repeat", "3", "--json", *argv],
        cwd=REPO, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _check_reading(figures: dict[str, Any]) -> None:
    seeded = figures["seed"]
    assert seeded["record_s"] > 0 and seeded["generate_s"] > 0
    assert figures["stats"]["runs"] == 3000 and figures["fleet_rows"] == 30
    for name in ("newest", "agent", "changed"):
        assert figures[name]["api_ms"] > 0 and figures[name]["bare_ms"] > 0 and figures[name]["ratio"] > 0
    assert figures["bytes_per_run"] < 4096


@pytest.mark.timeout(300)
def test_the_benchmark_runs_on_sqlite(tmp_path: Path) -> None:
    figures = _bench("--backend", "sqlite", "--crowd", "0", "--home", str(tmp_path / "bench-home"))
    _check_reading(figures["sqlite"])


@pytest.mark.timeout(300)
def test_the_benchmark_runs_on_postgresql_with_writers_and_a_crowd(postgres_server: Any) -> None:
    figures = _bench("--backend", "postgresql", "--postgres", postgres_server.url(), "--writers", "2",
                     "--writer-runs", "20", "--crowd", "6")  # fmt: skip
    _check_reading(figures["postgresql"])
    writers = figures["postgresql"]["many_writers"]
    assert writers["record_runs_per_s"] > 0 and writers["floor_runs_per_s"] > 0
    crowd = figures["crowd"]
    assert crowd["agents"] == 6 and crowd["sqlite_s"] > 0 and crowd["postgresql_s"] > 0
