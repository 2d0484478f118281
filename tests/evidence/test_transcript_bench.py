"""The transcript digest benchmark keeps running (a small size here; 30 million elements by hand)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # a benchmark


@pytest.mark.timeout(300)
def test_the_benchmark_runs_and_the_large_signed_transcript_still_verifies() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "transcript_digest.py"), "--elements", "300000", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["elements"] == 300_000 and figures["megabytes"] > 0.6
    for key in ("floor_s", "read_s", "digest_s", "verify_offline_cpu_s", "digest_ratio"):
        assert figures[key] >= 0, key
    assert (figures["attestation"], figures["standing"]) == ("verified", "evidence")
