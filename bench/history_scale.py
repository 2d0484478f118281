"""Benchmark: how the history scales with many runs of an unchanged agent.

    .venv/bin/python bench/history_scale.py [--runs 10000] [--home DIR] [--json]

Interviews the steady reference agent once (on 127.0.0.1), then records that run N times into a
fresh database, each copy with fresh timestamps, elapsed times and `Date` headers, exactly the
parts that differ between two real runs of an unchanged agent. It prints:

- bytes per additional unchanged run (file growth after a checkpoint; target under 2 KB);
- the time to list the newest 100 runs of that agent through `History.runs` against a bare
  SELECT of the same rows on the same connection (ratio; target at most 3);
- the time to compare two runs (load both from the database, then `compare_reports`);
- the time to record one run.

Timings are medians of repeated measurements, so one slow scheduling slice does not decide them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from explorer.core.compare import compare_reports  # noqa: E402
from explorer.core.run import Run  # noqa: E402
from explorer.store.history import HISTORY_FILE, History, agent_of  # noqa: E402

BARE_SELECT = """
    SELECT r.id, r.recorded_at, a.agent, a.name, r.verdict, r.standing, r.role, r.runner,
           r.card_sha256, r.answers_sha256
    FROM runs r JOIN agents a ON a.id = r.agent_id
    WHERE a.agent = ? ORDER BY r.id DESC LIMIT 100"""


def steady_run() -> Run:
    """One real interview of the steady reference agent."""
    from explorer.demo.fleet import Fleet
    from explorer.procedure import Options, run_interview_sync

    with Fleet(["steady"]) as fleet:
        fleet.wait_ready(timeout=60)
        agent = fleet.agents["steady"]
        run = run_interview_sync(agent.base_url, Options(keys=(agent.jwks,), runner="bench"))
    if run.verdict != "conformant":
        raise SystemExit(f"the steady agent was not conformant ({run.verdict}); is the demo broken?")
    return run


def _stamp(n: int) -> str:
    day, hour, minute, second = 1 + n // 86400 % 28, n // 3600 % 24, n // 60 % 60, n % 60
    return f"2025-01-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{n % 1000:03d}Z"


def variant(run: Run, n: int) -> Run:
    """The run as it would look on its n-th repetition: same content, new times."""
    report = dict(run.report)
    for key in ("started_at", "finished_at"):
        if key in report:
            report[key] = _stamp(n)
    date = f"Wed, 01 Jan 2025 {n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d} GMT"
    exchanges = tuple(
        replace(
            ex,
            started_at=_stamp(n),
            elapsed_ms=round(1.0 + (n * 7919 + i * 104729) % 5000 / 100, 3),
            response_headers=tuple((k, date if k.lower() == "date" else v) for k, v in ex.response_headers),
        )
        for i, ex in enumerate(run.exchanges)
    )
    return Run(report=report, exchanges=exchanges, keys=run.keys)


def file_bytes(history: History) -> int:
    conn = history._conn  # the benchmark measures the file itself
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm caches once
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000, help="how many runs to record (default 10000)")
    parser.add_argument(
        "--home", default=None, help="where to create the database (default: a temporary folder)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs must be at least 2")

    run = steady_run()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(args.home or scratch)
        if (home / HISTORY_FILE).exists():
            parser.error(f"{home / HISTORY_FILE} exists; the benchmark needs a fresh database")
        with History.open(home) as history:
            first_id = history.record(variant(run, 0))
            size_one = file_bytes(history)
            copies = [variant(run, n) for n in range(1, args.runs)]
            start = time.perf_counter()
            for copy in copies:
                last_id = history.record(copy)
            record_seconds = (time.perf_counter() - start) / len(copies)
            size_all = file_bytes(history)
            agent = agent_of(run.report)

            listed = history.runs(agent, limit=100)
            assert len(listed) == 100 and listed[0].id == last_id
            list_seconds = median_seconds(lambda: history.runs(agent, limit=100), 200)
            bare_seconds = median_seconds(
                lambda: history._conn.execute(BARE_SELECT, (agent,)).fetchall(), 200
            )
            compare_seconds = median_seconds(
                lambda: compare_reports(history.load(first_id).report, history.load(last_id).report), 20
            )
            stats = history.stats()

    figures = {
        "runs": args.runs,
        "exchanges_per_run": len(run.exchanges),
        "documents": stats["documents"],
        "first_run_bytes": size_one,
        "database_bytes": size_all,
        "bytes_per_additional_run": round((size_all - size_one) / (args.runs - 1), 1),
        "record_ms": round(record_seconds * 1000, 3),
        "list_100_ms": round(list_seconds * 1000, 3),
        "bare_select_100_ms": round(bare_seconds * 1000, 3),
        "list_over_bare_ratio": round(list_seconds / bare_seconds, 2),
        "compare_two_runs_ms": round(compare_seconds * 1000, 3),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"recorded {args.runs} runs of the steady agent ({len(run.exchanges)} exchanges each) "
        f"in {record_seconds * 1000:.2f} ms per run"
    )
    print(f"database: {size_all:,} bytes, {stats['documents']} distinct documents")
    print(f"bytes per additional unchanged run: {figures['bytes_per_additional_run']:.0f} (target < 2048)")
    print(
        f"list newest 100 runs of the agent: {list_seconds * 1000:.3f} ms; bare SELECT: "
        f"{bare_seconds * 1000:.3f} ms; ratio {figures['list_over_bare_ratio']:.2f} (target <= 3)"
    )
    print(f"compare two runs (load both + compare_reports): {compare_seconds * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
