"""The sweep benchmark keeps running: a tiny crowd in its own process, both sides of the
throughput ratio and both sweeps of the memory ratio. The ratios themselves are not asserted
(timings belong to the benchmark, not to the tests); that the figures are there and consistent is."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO


@pytest.mark.timeout(240)
@pytest.mark.slow  # benchmark
def test_the_sweep_benchmark_measures_both_ratios() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "sweep.py"),
            "--runs",
            "1",
            "--agents",
            "12",
            "--big",
            "20",
            "--small",
            "10",
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=230,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: over a target on a loaded machine
    figures = json.loads(done.stdout)
    assert figures["agents"] == 12 and figures["jobs"] == 8
    assert figures["verify_s"] > 0 and figures["plain_httpx_s"] > 0
    assert figures["throughput_ratio"] == pytest.approx(
        figures["plain_httpx_s"] / figures["verify_s"], rel=0.01
    )
    assert figures["transport_floor_s"] > 0  # the explorer's own client, nothing verified
    floor, verify = figures["transport_floor_s"], figures["verify_s"]
    assert figures["transport_ratio"] == pytest.approx(floor / verify, rel=0.01)
    assert figures["rss_big_mib"] > 10 and figures["rss_small_mib"] > 10
    assert figures["ok"] is (figures["throughput_ratio"] >= 0.5 and figures["rss_ratio"] <= 1.3)
