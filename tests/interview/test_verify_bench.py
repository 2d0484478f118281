"""The verification and TUI benchmarks keep running against their honest floors.

Each is run once (`--quick` / `--runs 1`) with its agents served by another process; the test
checks that every figure is there and is a ratio of the two medians it prints, never a timing
target (timings belong to the benchmark, not to the tests).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # benchmarks


def _run(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, *args, "--json"], cwd=REPO, capture_output=True, text=True, timeout=560
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.timeout(600)
def test_the_verification_benchmark_measures_every_pair_against_its_floor() -> None:
    figures = _run(str(REPO / "bench" / "verify_overhead.py"), "--quick")
    labels = [pair["label"] for pair in figures["pairs"]]
    assert any(label.startswith("steady: run_interview") for label in labels)
    assert any(label.startswith("sdk-built: run_interview") for label in labels)
    assert any(label.startswith("huge: evaluate / CPU floor") for label in labels)
    for pair in figures["pairs"]:
        assert pair["median_s"] > 0 and pair["floor_median_s"] > 0
        assert pair["ratio"] == pytest.approx(pair["median_s"] / pair["floor_median_s"])
    assert figures["rss"]["huge_kib"] > figures["rss"]["steady_kib"] > 0
    assert figures["report"]["received_bytes"] > 2_000_000 and figures["report"]["report_bytes"] > 0


@pytest.mark.timeout(600)
def test_the_tui_benchmark_interviews_the_huge_agent_and_cancels_one() -> None:
    figures = _run(str(REPO / "bench" / "tui_responsiveness.py"), "--runs", "1")
    assert figures["runs"] == 1
    assert figures["interview_s"] > 0 and figures["longest_gap_ms"] >= 20 * 0.5
    assert figures["esc_ms"] > 0


@pytest.mark.timeout(300)
def test_the_deadline_benchmark_times_every_shape_against_one_answer() -> None:
    figures = _run(str(REPO / "bench" / "deadline.py"), "--timeout", "0.5", "--delay", "0.4")
    assert [shape["shape"] for shape in figures["shapes"]] == ["answers", "schemes", "proposals", "jku"]
    assert figures["deadline_s"] == 3.0 and figures["floor_median_s"] > 0
    for shape in figures["shapes"]:
        assert shape["median_s"] > 0 and shape["requests"] > 0
        assert shape["ratio"] == pytest.approx(shape["median_s"] / shape["floor_median_s"])
        assert shape["deadline_ratio"] == pytest.approx(figures["deadline_s"] / figures["floor_median_s"])
