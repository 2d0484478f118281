"""Crash safety and concurrency of the history, with real processes and a real SQLite file.

A writer process records runs in a loop and says which ones committed; it is killed with SIGKILL
at random moments (while opening, creating the schema, or in the middle of a transaction), many
times over the same file. Afterwards the database must pass `PRAGMA integrity_check`, every run
reported committed must load complete and equal to what was recorded, and nothing else may be
half there. Two processes recording at once must both succeed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_history_support import make_run

from explorer.store.history import HISTORY_FILE, History

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

pytestmark = [
    pytest.mark.slow,  # kills writer processes mid-run
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)"),
]

# Run n is built from n alone, so the parent can rebuild what the child recorded and compare.
_WRITER = """
import sys
sys.path[:0] = [sys.argv[3], sys.argv[4]]
from test_history_support import make_run
from explorer.store.history import History

def build(n):
    # Every third run changes its answers, so many transactions insert new documents too.
    return make_run(answered_name=f"name {n}" if n % 3 == 0 else None,
                    started_at=f"2025-01-01T00:00:{n % 60:02d}.000Z", elapsed_ms=n / 7)

history = History.open(sys.argv[1])
start, count = map(int, sys.argv[2].split(":"))
print("ready", flush=True)
for n in range(start, start + count):
    run_id = history.record(build(n))
    print(f"{run_id} {n}", flush=True)
"""


def _expected(n: int):
    return make_run(
        answered_name=f"name {n}" if n % 3 == 0 else None,
        started_at=f"2025-01-01T00:00:{n % 60:02d}.000Z",
        elapsed_ms=n / 7,
    )


def _writer(home: Path, start: int, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(home), f"{start}:{count}", str(TESTS), str(REPO)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _committed(output: str) -> dict[int, int]:
    """run id -> n, for every line the writer finished printing before it died."""
    out = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            out[int(parts[0])] = int(parts[1])
    return out


def _check_database(home: Path) -> int:
    with History.open(home) as history:
        conn = history._conn  # the test inspects the file the way SQLite itself would
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        # every link and run points at a document that exists
        assert conn.execute(
            "SELECT COUNT(*) FROM doc_links WHERE child NOT IN (SELECT id FROM documents)"
        ).fetchone() == (0,)
        assert conn.execute(
            """SELECT COUNT(*) FROM runs WHERE report_doc NOT IN (SELECT id FROM documents)
               OR exchanges_doc NOT IN (SELECT id FROM documents)
               OR keys_doc NOT IN (SELECT id FROM documents)"""
        ).fetchone() == (0,)
        ids = [r.id for r in history.runs(limit=1_000_000)]
        for run_id in ids:
            history.load(run_id)  # complete: raises if any part is missing or damaged
        return len(ids)


@pytest.mark.timeout(120)
def test_sigkill_at_random_moments_never_loses_or_damages_a_committed_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rng = random.Random(20251130)
    reported: dict[int, int] = {}
    kills = 0
    next_n = 0
    deadline = time.monotonic() + 60
    while kills < 30 and time.monotonic() < deadline:
        proc = _writer(home, next_n, 100_000)
        next_n += 100_000
        time.sleep(rng.uniform(0.0, 0.6))  # sometimes during start-up or schema creation
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        out, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err
        reported.update(_committed(out))
    assert kills >= 10, "the writer never lived long enough to be killed"
    assert len(reported) >= 30, "too few runs were committed for the test to mean anything"

    stored = _check_database(home)
    # a kill can cost at most the one run that committed but was not yet reported
    assert len(reported) <= stored <= len(reported) + kills
    with History.open(home) as history:
        for run_id, n in sorted(reported.items()):
            loaded = history.load(run_id)
            expected = _expected(n)
            assert loaded.report == expected.report
            assert [e.response_body for e in loaded.exchanges] == [
                e.response_body for e in expected.exchanges
            ]


@pytest.mark.timeout(120)
def test_two_processes_recording_at_once_both_succeed(tmp_path: Path) -> None:
    home = tmp_path / "home"  # neither process finds a database: both race to create it
    procs = [_writer(home, 0, 40), _writer(home, 1000, 40)]
    outputs = [p.communicate(timeout=90) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    ids = [set(_committed(out)) for out, _ in outputs]
    assert len(ids[0]) == len(ids[1]) == 40
    assert not ids[0] & ids[1]
    assert _check_database(home) == 80
    assert (home / HISTORY_FILE).exists()


def test_a_reader_sees_whole_runs_while_a_writer_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with History.open(home) as history:
        history.record(make_run())
    proc = _writer(home, 0, 60)
    try:
        with History.open(home) as reader:
            seen = 0
            while proc.poll() is None or seen == 0:
                for summary in reader.runs(limit=5):
                    reader.load(summary.id)
                    seen += 1
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(_committed(out)) == 60


@pytest.mark.timeout(120)
def test_processes_creating_a_new_history_at_once_all_succeed(tmp_path: Path) -> None:
    for attempt in range(6):
        home = tmp_path / f"home{attempt}"
        procs = [_writer(home, k * 10, 1) for k in range(3)]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        assert _check_database(home) == 3
