"""Crash safety and concurrency of the history, with real processes, on both backends.

A writer process records runs in a loop and says which ones committed; it is killed with SIGKILL
at random moments (while opening, creating the schema, or in the middle of a transaction), many
times over the same history. Afterwards the history must be whole (SQLite's `integrity_check`;
on both, every link and run pointing at documents that exist and every agent's kept counters
equal to its runs), every run reported committed must load complete and equal to what was
recorded, and nothing else may be half there. Several processes recording at once must all
succeed, with nothing lost and nothing recorded twice; on PostgreSQL they are many runners on
one server, writing the same agents at once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from explorer.core.compare import change_kinds, is_change
from explorer.store.location import open_store
from tests.support.paths import REPO
from tests.support.runs import make_run

pytestmark = [
    pytest.mark.slow,  # kills writer processes mid-run
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)"),
]

# Run n is built from n alone, so the parent can rebuild what the child recorded and compare.
_WRITER = """
import sys
sys.path.insert(0, sys.argv[3])  # the repository, for tests.support
from tests.support.runs import make_run
from explorer.store.location import open_store

def build(n):
    # Every third run changes its answers, so many transactions insert new documents too; runs
    # alternate between a few agents, so writers meet on the same agents' rows.
    return make_run(answered_name=f"name {n}" if n % 3 == 0 else None,
                    card_url=f"http://127.0.0.1:9/a{n % 4}/.well-known/agent-card.json",
                    started_at=f"2025-01-01T00:00:{n % 60:02d}.000Z", elapsed_ms=n / 7)

history = open_store(sys.argv[1])
start, count = map(int, sys.argv[2].split(":"))
print("ready", flush=True)
for n in range(start, start + count):
    run_id = history.record(build(n))
    print(f"{run_id} {n}", flush=True)
"""


def _expected(n: int):
    return make_run(
        answered_name=f"name {n}" if n % 3 == 0 else None,
        card_url=f"http://127.0.0.1:9/a{n % 4}/.well-known/agent-card.json",
        started_at=f"2025-01-01T00:00:{n % 60:02d}.000Z",
        elapsed_ms=n / 7,
    )


def _writer(url: str, start: int, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, url, f"{start}:{count}", str(REPO)],
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


def check_whole(url: str) -> list[int]:
    """The history as its own database would check it, every run loaded whole; the run ids."""
    with open_store(url) as history:
        with history._reading() as conn:  # the test inspects the tables themselves
            if history.kind == "sqlite":
                assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
                assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            assert (
                conn.execute(
                    "SELECT COUNT(*) FROM doc_links WHERE child NOT IN (SELECT id FROM documents)"
                ).fetchone()[0]
                == 0
            )
            assert (
                conn.execute(
                    """SELECT COUNT(*) FROM runs WHERE report_doc NOT IN (SELECT id FROM documents)
                   OR exchanges_doc NOT IN (SELECT id FROM documents)
                   OR keys_doc NOT IN (SELECT id FROM documents)"""
                ).fetchone()[0]
                == 0
            )
            kept = conn.execute(
                """SELECT id, runs, last_run, churn, changes, last_verdict, last_recorded_at, last_signature,
                          last_kinds
                   FROM agents ORDER BY id"""
            ).fetchall()
            counted = conn.execute(
                """SELECT c.agent_id, c.n, c.last, c.churn, c.changes, r.verdict, r.recorded_at, r.signature,
                          r.kinds
                   FROM (SELECT agent_id, COUNT(*) AS n, MAX(id) AS last,
                                SUM(CASE WHEN verdict = 'churn' THEN 1 ELSE 0 END) AS churn,
                                SUM(changed) AS changes
                         FROM runs GROUP BY agent_id) c JOIN runs r ON r.id = c.last
                   ORDER BY c.agent_id"""
            ).fetchall()
            assert [(*map(int, row[:5]), *row[5:]) for row in kept] == [
                (*map(int, row[:5]), *row[5:]) for row in counted
            ]
        ids = [r.id for r in history.runs(limit=1_000_000)]
        by_agent: dict[str, list] = {}
        for summary in reversed(history.runs(limit=1_000_000)):
            by_agent.setdefault(summary.agent, []).append(summary)
        for runs in by_agent.values():  # the change kinds are right after every kill
            for before, after in zip(runs, runs[1:], strict=False):
                kinds = change_kinds(before.marks(), after.marks())
                assert (after.kinds, after.changed) == (kinds, is_change(kinds))
        for run_id in ids:
            history.load(run_id)  # complete: raises if any part is missing or damaged
        return ids


@pytest.mark.timeout(240)
def test_sigkill_at_random_moments_never_loses_or_damages_a_committed_run(store_url: str) -> None:
    rng = random.Random(20251130)
    reported: dict[int, int] = {}
    kills = 0
    next_n = 0
    deadline = time.monotonic() + 90
    while kills < 30 and time.monotonic() < deadline:
        proc = _writer(store_url, next_n, 100_000)
        next_n += 100_000
        seen = ""
        if kills % 4 == 0:
            time.sleep(rng.uniform(0.0, 0.8))  # during start-up or schema creation
        else:  # once it records: mid-transaction, between runs
            assert proc.stdout is not None
            seen = proc.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.5))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        out, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err
        reported.update(_committed(seen + out))
    assert kills >= 10, "the writer never lived long enough to be killed"
    assert len(reported) >= 30, "too few runs were committed for the test to mean anything"

    stored = check_whole(store_url)
    # a kill can cost at most the one run that committed but was not yet reported
    assert set(reported) <= set(stored)
    assert len(stored) <= len(reported) + kills
    with open_store(store_url) as history:
        for run_id, n in sorted(reported.items()):
            loaded = history.load(run_id)
            expected = _expected(n)
            assert loaded.report == expected.report
            assert [e.response_body for e in loaded.exchanges] == [
                e.response_body for e in expected.exchanges
            ]


@pytest.mark.timeout(300)
def test_several_processes_recording_at_once_lose_and_duplicate_nothing(store_url: str) -> None:
    # None finds a history: all race to create it; then they write the same four agents, so
    # runs of one agent are recorded at the same moment all the time.
    procs = [_writer(store_url, k * 1000, 60) for k in range(4)]
    outputs = [p.communicate(timeout=200) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "deadlock" not in err.lower(), err
    ids = [_committed(out) for out, _ in outputs]
    assert [len(i) for i in ids] == [60, 60, 60, 60]
    every = {run_id for each in ids for run_id in each}
    assert len(every) == 240  # no id given twice
    assert sorted(check_whole(store_url)) == sorted(every)
    with open_store(store_url) as history:
        for each in ids:
            for run_id, n in list(each.items())[::7]:
                assert history.load(run_id).report == _expected(n).report


def test_a_reader_sees_whole_runs_while_a_writer_records(store_url: str) -> None:
    with open_store(store_url) as history:
        history.record(make_run())
    proc = _writer(store_url, 0, 60)
    try:
        with open_store(store_url) as reader:
            seen = 0
            while proc.poll() is None or seen == 0:
                for summary in reader.runs(limit=5):
                    reader.load(summary.id)
                    seen += 1
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(_committed(out)) == 60


@pytest.mark.timeout(240)
def test_processes_creating_a_new_history_at_once_all_succeed(fresh_store_url) -> None:
    for _ in range(4):
        url = fresh_store_url()
        procs = [_writer(url, k * 10, 1) for k in range(3)]
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        assert len(check_whole(url)) == 3


_IMPORTER = """
import sys
sys.path.insert(0, sys.argv[2])  # the repository, for tests.support
from tests.support.runs import make_run
from explorer.store.location import open_store

history = open_store(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()  # every importer starts at the same moment
for n in range(10):
    run_id, new = history.record_once(make_run(elapsed_ms=1000 + n))
    print(run_id, int(new), flush=True)
"""


@pytest.mark.timeout(240)
def test_runners_importing_the_same_transcripts_at_once_record_each_once(store_url: str) -> None:
    with open_store(store_url):
        pass  # created before the race, which is about the runs
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _IMPORTER, store_url, str(REPO)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [proc.communicate(timeout=200) for proc in procs]
    answers = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        answers.append([tuple(map(int, line.split())) for line in out.splitlines()])
    for n in range(10):
        ids = {answer[n][0] for answer in answers}
        assert len(ids) == 1, f"transcript {n} was recorded as {sorted(ids)}"
        assert sum(answer[n][1] for answer in answers) == 1  # exactly one runner recorded it
    assert len(check_whole(store_url)) == 10
