"""Benchmark: the history at a million runs, on SQLite and on PostgreSQL.

    .venv/bin/python bench/history_scale.py [--runs 1000000] [--agents 10000]
        [--backend sqlite|postgresql|both] [--postgres URL] [--writers 4] [--writer-runs 1000]
        [--crowd 1000] [--home DIR] [--json]

For each backend, a fresh history is seeded with `--runs` runs over `--agents` agents, and the
seeding is timed: one real run of the steady reference agent (interviewed once on 127.0.0.1)
is recorded through `HistoryStore.record` once per agent (each agent its own card URL), then the
remaining runs are generated in SQL from those rows, every agent's runs in turn, with every
hundredth run of an agent nonconformant (so 2% of runs are `changed`, the run and the one after
it), and the agents' counters are set from the runs. Then, medians of repeated measurements:

- the newest page of 100 through `HistoryStore.query` against a bare SELECT of the same rows
  (the same statement, same connection): target at most 3x;
- one agent's newest 100 (`RunQuery(agents=...)`, which also looks the agent up) against the
  bare statement joined on the agent's URL: target at most 3x;
- the newest 100 changed runs (`RunQuery(changed=True)`) against a bare SELECT of those rows by
  their ids: target at most 5x;
- the fleet rows (`fleet()`, one per agent) and the change mark (`mark()`), no target.

On PostgreSQL, also: `--writers` processes each recording `--writer-runs` runs at once through
`record` (every run its own transaction), against a floor of the same run rows sent as bare
INSERTs, one per transaction, from as many connections: target at least 0.5x the floor's runs
per second. The floor's rows are prepared before its clock starts; a second floor builds each
row from its run while timed, as `record` does (`encode_run`), to show what is the database's
share and what is the client's. The three alternate for `--writer-rounds` rounds (medians).
And a `--crowd`-agent seeded crowd sweep (`verify --from LIST --jobs 8`, the crowd in its own
process) recording into a fresh PostgreSQL history against the same sweep recording into a fresh
SQLite file: target at least 0.8x SQLite's agents per second.

Without `--postgres URL` (a server where the benchmark may create databases), a PostgreSQL
server of the benchmark's own is started from the server programs the tests use
(tests/support/postgres.py) with fsync on and `synchronous_commit=off`: a commit returns before its
WAL is flushed, as SQLite's `synchronous=NORMAL` in WAL mode does; an OS crash can lose the last
commits of either, a killed process none. Everything talks to 127.0.0.1 or a unix socket.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from explorer.core.run import Run  # noqa: E402
from explorer.store.base import HistoryStore, RunQuery  # noqa: E402
from explorer.store.location import open_store  # noqa: E402
from explorer.store.sql import LATEST_OF_AGENTS  # noqa: E402

TARGETS = {"newest": 3.0, "agent": 3.0, "changed": 5.0, "writers": 0.5, "crowd": 0.8}
EPOCH = 1_700_000_000  # seconds: the seeded runs' recorded_at start here, one second apart
COLUMNS = """r.id, r.recorded_at, a.address, a.name, r.verdict, r.standing, r.role, r.runner,
    r.card_sha256, r.answers_sha256, r.changed"""
BARE_NEWEST = f"SELECT {COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id ORDER BY r.id DESC LIMIT 100"
BARE_AGENT = f"""SELECT {COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id WHERE a.address = ?
    ORDER BY r.id DESC LIMIT 100"""
BARE_BY_IDS = f"SELECT {COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.id IN ({{marks}})"


def steady_run() -> Run:
    """One real interview of the steady reference agent."""
    from explorer.demo.fleet import Fleet
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync

    with Fleet(["steady"]) as fleet:
        fleet.wait_ready(timeout=60)
        agent = fleet.agents["steady"]
        run = run_interview_sync(agent.base_url, Options(keys=(agent.jwks,), runner="bench"))
    if run.verdict != "conformant":
        raise SystemExit(f"the steady agent was not conformant ({run.verdict}); is the demo broken?")
    return run


def agent_url(run: Run, i: int) -> str:
    base = str(run.report["card"]["url"]).rsplit("/.well-known", 1)[0]
    return f"{base}/agent-{i}/.well-known/agent-card.json"


def as_agent(run: Run, i: int, n: int = 0) -> Run:
    """The run as agent i's, its n-th repetition: its own card URL and name (one signed card at
    many URLs would be one agent), new times."""
    report = dict(run.report)
    report["card"] = {**report["card"], "url": agent_url(run, i), "name": f"{report['card']['name']} {i}"}
    report["started_at"] = report["finished_at"] = f"2025-01-01T00:00:{n % 60:02d}.{n % 1000:03d}Z"
    exchanges = tuple(
        replace(ex, elapsed_ms=round(1.0 + (n * 7919 + k) % 5000 / 100, 3))
        for k, ex in enumerate(run.exchanges)
    )
    return Run(report=report, exchanges=exchanges, keys=run.keys)


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm caches (and PostgreSQL's prepared statements) once
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# --- seeding ---------------------------------------------------------------------------------------


def _series(kind: str) -> str:
    """Rows n = 0 .. ?-1 (the parameter), in SQL each backend runs."""
    if kind == "sqlite":
        return "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n + 1 < ?) "
    return "WITH g(n) AS (SELECT generate_series(0, ? - 1)) "


def _stamp_sql(kind: str) -> str:
    if kind == "sqlite":
        return f"strftime('%Y-%m-%dT%H:%M:%S.000Z', {EPOCH} + ? + g.n, 'unixepoch')"
    return (
        f"""to_char(to_timestamp({EPOCH} + ? + g.n) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"')"""
    )


def seed(store: HistoryStore, run: Run, runs: int, agents: int) -> dict[str, float]:
    """`agents` runs recorded, then `runs - agents` generated from them; the seconds each took."""
    began = time.perf_counter()
    first_ids = [store.record(as_agent(run, i)) for i in range(agents)]
    recorded = time.perf_counter() - began
    began = time.perf_counter()
    generated = runs - agents
    kind = store.kind
    chunk = 200_000

    def work(conn: Any) -> None:
        conn.execute("CREATE TEMP TABLE seed_map (i INTEGER PRIMARY KEY, run_id BIGINT NOT NULL)")
        for start in range(0, agents, 500):
            part = first_ids[start : start + 500]
            marks = ",".join("(?, ?)" for _ in part)
            conn.execute(
                f"INSERT INTO seed_map(i, run_id) VALUES {marks}",
                [v for k, rid in enumerate(part, start) for v in (k, rid)],
            )
        for offset in range(0, generated, chunk):
            size = min(chunk, generated - offset)
            # run n of the whole seed is agent (n % agents)'s k-th, k = n // agents + 1
            conn.execute(
                _series(kind)
                + f"""INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
                          answers_sha256, report_doc, exchanges_doc, keys_doc, volatile, changed, signature,
                          address)
                    SELECT s.agent_id, {_stamp_sql(kind)},
                           CASE WHEN ((? + g.n) / ? + 1) % 100 = 50 THEN 'nonconformant' ELSE s.verdict END,
                           s.standing, s.role, s.runner, s.card_sha256, s.answers_sha256, s.report_doc,
                           s.exchanges_doc, s.keys_doc, s.volatile,
                           CASE WHEN ((? + g.n) / ? + 1) % 100 IN (50, 51) THEN 1 ELSE 0 END, s.signature,
                           s.address
                    FROM g JOIN seed_map m ON m.i = (? + g.n) % ? JOIN runs s ON s.id = m.run_id
                    ORDER BY g.n""",
                (size, offset, offset, agents, offset, agents, offset, agents),
            )
        conn.execute(
            """UPDATE agents SET runs = c.n, last_run = c.last, churn = c.churn, last_change_at = c.changed_at
               FROM (SELECT agent_id, COUNT(*) AS n, MAX(id) AS last, SUM(changed) AS churn,
                            MAX(CASE WHEN changed = 1 THEN recorded_at END) AS changed_at
                     FROM runs GROUP BY agent_id) c
               WHERE agents.id = c.agent_id"""
        )
        conn.execute(LATEST_OF_AGENTS)
        conn.execute("DROP TABLE seed_map")

    store._transaction(work, what="could not seed the benchmark's history")  # noqa: SLF001
    with store._reading() as conn:  # noqa: SLF001 - the planner's statistics, as after a bulk load
        conn.execute("ANALYZE")
    return {"record_s": recorded, "generate_s": time.perf_counter() - began}


# --- reading ---------------------------------------------------------------------------------------


def reading(store: HistoryStore, run: Run, agents: int, repeat: int) -> dict[str, Any]:
    agent = agent_url(run, agents // 2)
    newest = list(store.query(RunQuery(limit=100)))
    mine = list(store.query(RunQuery(agents=(agent,), limit=100)))
    changed = list(store.query(RunQuery(changed=True, limit=100)))
    assert len(newest) == 100 and mine and changed
    assert all(r.changed for r in changed) and all(r.agent == agent for r in mine)
    ids = [r.id for r in changed]
    by_ids = BARE_BY_IDS.format(marks=",".join("?" * len(ids)))

    def bare(sql: str, params: list[Any]) -> Callable[[], Any]:
        def go() -> Any:
            with store._reading() as conn:  # noqa: SLF001 - the same connection the store reads on
                return conn.execute(sql, params).fetchall()

        return go

    assert len(bare(by_ids, ids)()) == len(ids) and len(bare(BARE_AGENT, [agent])()) == len(mine)
    figures = {}
    for name, api, floor in (
        ("newest", lambda: list(store.query(RunQuery(limit=100))), bare(BARE_NEWEST, [])),
        ("agent", lambda: list(store.query(RunQuery(agents=(agent,), limit=100))), bare(BARE_AGENT, [agent])),
        ("changed", lambda: list(store.query(RunQuery(changed=True, limit=100))), bare(by_ids, ids)),
    ):
        api_s, floor_s = median_seconds(api, repeat), median_seconds(floor, repeat)
        figures[name] = {
            "api_ms": api_s * 1000,
            "bare_ms": floor_s * 1000,
            "ratio": api_s / floor_s,
            "target": TARGETS[name],
        }
    figures["fleet_ms"] = median_seconds(store.fleet, 5) * 1000
    figures["fleet_rows"] = len(store.fleet())
    figures["mark_ms"] = median_seconds(store.mark, repeat) * 1000
    return figures


# --- many writers (PostgreSQL) ---------------------------------------------------------------------

_WRITER = """
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
mode, url, first, count, agents, n = sys.argv[2], sys.argv[3], *map(int, sys.argv[4:8])
run = pickle.loads(bytes.fromhex(sys.stdin.readline()))
from bench.history_scale import FLOOR_INSERT, as_agent, floor_ids, floor_row
from explorer.store.location import open_store
store = open_store(url)
runs = [as_agent(run, (first + j) % agents, n + first + j) for j in range(count)]
ids = floor_ids(store, runs) if mode != "record" else None
rows = [floor_row(one, ids) for one in runs] if mode == "floor" else None
print("ready", flush=True)
sys.stdin.readline()
began, cpu = time.perf_counter(), time.process_time()
if mode == "record":
    for one in runs:
        store.record(one)
else:
    with store._pool.connection() as raw:
        for one, row in zip(runs, rows or runs):
            # autocommit: one transaction each; "encoded" builds each row from its run meanwhile
            raw.execute(FLOOR_INSERT, row if mode == "floor" else floor_row(one, ids))
print(json.dumps({"seconds": time.perf_counter() - began, "cpu": time.process_time() - cpu}), flush=True)
store.close()
"""


FLOOR_INSERT = (
    "INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256, answers_sha256,"
    " report_doc, exchanges_doc, keys_doc, volatile, attestation, changed, signature)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def floor_ids(store: Any, runs: list[Run]) -> dict[Any, int]:
    """The ids the floor's rows refer to: each run's agent (by URL) and documents (by digest)."""
    from explorer.store.base import agent_of
    from explorer.store.codec import encode_run

    ids: dict[Any, int] = {}
    with store._reading() as conn:  # noqa: SLF001
        for run in runs:
            encoded = encode_run(run)
            agent = agent_of(run.report)
            ids[agent] = conn.execute("SELECT id FROM agents WHERE address = ?", (agent,)).fetchone()[0]
            for doc in (encoded.report, encoded.exchanges, encoded.keys):
                ids[doc.digest] = conn.execute(
                    "SELECT id FROM documents WHERE sha256 = ?", (doc.digest,)
                ).fetchone()[0]
    return ids


def floor_row(run: Run, ids: dict[Any, int]) -> tuple[Any, ...]:
    """The run row `record` inserts for this run, built the way it builds it (`encode_run`)."""
    from explorer.core.when import stamp
    from explorer.store.base import agent_of, summary_fields
    from explorer.store.codec import encode_run

    encoded = encode_run(run)
    fields = summary_fields(run.report)
    return (
        ids[agent_of(run.report)], stamp(), fields["verdict"], fields["standing"], fields["role"],
        fields["runner"], fields["card_sha256"], fields["answers_sha256"], ids[encoded.report.digest],
        ids[encoded.exchanges.digest], ids[encoded.keys.digest], encoded.volatile, None, 0,
        fields["signature"],
    )  # fmt: skip


def _server_cpu(postmaster: int | None) -> float | None:
    """CPU seconds the server has used: the postmaster, its live processes, and the backends it has
    reaped (its children's times); None when the server is not ours to see (a `--postgres` URL)."""
    if postmaster is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def times(pid: int, reaped: bool) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0  # a backend that ended meanwhile: counted in the postmaster's children
        own = int(fields[11]) + int(fields[12])
        return (own + (int(fields[13]) + int(fields[14]) if reaped else 0)) / tick

    children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    return times(postmaster, True) + sum(times(int(pid), False) for pid in children)


def writers(
    url: str, run: Run, agents: int, count: int, runs_each: int, rounds: int, postmaster: int | None = None
) -> dict[str, Any]:
    """`count` processes recording `runs_each` runs each at once, against the same rows sent as
    bare INSERTs (prepared beforehand: "floor"; built from each run as `record` builds them:
    "encoded"), in alternating rounds so that a change in the machine's load hits all three.

    Besides seconds, each mode's CPU seconds per run are measured while timed, the writer
    processes' (each its own) and the server's (when the benchmark started it, from /proc):
    on a machine with fewer cores than writers plus server, runs per second is bounded by CPU per
    run, and these say on which side it is spent, whatever else the machine was doing."""
    import pickle

    blob = pickle.dumps(run).hex()
    sequence = [0]
    cpu: dict[str, dict[str, list[float]]] = {
        mode: {"client": [], "server": []} for mode in ("floor", "encoded", "record")
    }

    def once(mode: str) -> float:
        sequence[0] += 1
        first_n = 100_000 * sequence[0]  # every round's runs are new runs
        argv = [sys.executable, "-c", _WRITER, str(REPO), mode, url]
        procs = [
            subprocess.Popen([*argv, str(k * runs_each), str(runs_each), str(agents), str(first_n)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for k in range(count)
        ]  # fmt: skip
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(blob + "\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        server_before = _server_cpu(postmaster)
        began = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        said = [json.loads(proc.stdout.readline()) for proc in procs]  # type: ignore[union-attr]
        seconds = time.perf_counter() - began
        server_after = _server_cpu(postmaster)
        for proc in procs:
            proc.communicate(timeout=3600)
            assert proc.returncode == 0
        total = count * runs_each
        cpu[mode]["client"].append(sum(one["cpu"] for one in said) / total)
        if server_before is not None and server_after is not None:
            cpu[mode]["server"].append((server_after - server_before) / total)
        return seconds

    def floor(mode: str) -> float:
        with open_store(url) as store:
            before = store.last_run_id()
        seconds = once(mode)
        with open_store(url) as store:  # the floor's rows go again: they are not the store's
            store._transaction(  # noqa: SLF001
                lambda conn: conn.execute("DELETE FROM runs WHERE id > ?", (before,)),
                what="could not remove the floor's rows",
            )
        return seconds

    with open_store(url) as store:
        runs_before = store.stats()["runs"]
    samples: dict[str, list[float]] = {"floor": [], "encoded": [], "record": []}
    for _ in range(rounds):
        samples["floor"].append(floor("floor"))
        samples["encoded"].append(floor("encoded"))
        samples["record"].append(once("record"))
    total = count * runs_each
    with open_store(url) as store:
        assert store.stats()["runs"] == runs_before + total * rounds
    record_s, floor_s = statistics.median(samples["record"]), statistics.median(samples["floor"])
    encoded_s = statistics.median(samples["encoded"])
    return {
        "writers": count, "runs_each": runs_each, "rounds": rounds, "samples": samples,
        "record_runs_per_s": total / record_s, "floor_runs_per_s": total / floor_s,
        "encoded_floor_runs_per_s": total / encoded_s, "ratio": floor_s / record_s,
        "ratio_to_encoded_floor": encoded_s / record_s, "target": TARGETS["writers"],
        "cpu_ms_per_run": {
            mode: {side: statistics.median(v) * 1000 if v else None for side, v in sides.items()}
            for mode, sides in cpu.items()
        },
    }  # fmt: skip


# --- a crowd sweep into each store -------------------------------------------------------------------


def crowd_sweep(size: int, urls: dict[str, Callable[[], str]], repeat: int) -> dict[str, Any]:
    argv = [
        sys.executable,
        "-m",
        "explorer",
        "demo",
        "--serve",
        "--crowd",
        str(size),
        "--seed",
        "7",
        "--crowd-only",
    ]
    crowd = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    try:
        assert crowd.stdout is not None
        members = [crowd.stdout.readline().rstrip("\n").split("\t")[1] for _ in range(size)]
        with tempfile.TemporaryDirectory(prefix="bench-history-crowd-") as tmp:
            listing = Path(tmp) / "crowd.txt"
            listing.write_text("\n".join(members) + "\n")
            seconds: dict[str, list[float]] = {kind: [] for kind in urls}
            for _ in range(repeat):
                for kind, fresh in urls.items():
                    target = fresh()
                    began = time.perf_counter()
                    done = subprocess.run(
                        [
                            sys.executable,
                            "-m",
                            "explorer",
                            "verify",
                            "--from",
                            str(listing),
                            "--jobs",
                            "8",
                            "--json",
                            "--history",
                            target,
                            "--home",
                            tmp,
                        ],
                        cwd=REPO,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE,
                        text=True,
                        timeout=3600,
                    )
                    seconds[kind].append(time.perf_counter() - began)
                    assert "not recorded" not in done.stderr, done.stderr[-500:]
                    with open_store(target) as store:
                        assert store.stats()["runs"] == size, (kind, store.stats())
    finally:
        crowd.terminate()
        crowd.wait(timeout=30)
    sqlite_s, pg_s = statistics.median(seconds["sqlite"]), statistics.median(seconds["postgresql"])
    return {
        "agents": size,
        "sqlite_s": sqlite_s,
        "postgresql_s": pg_s,
        "sqlite_agents_per_s": size / sqlite_s,
        "postgresql_agents_per_s": size / pg_s,
        "ratio": sqlite_s / pg_s,
        "target": TARGETS["crowd"],
        "samples": seconds,
    }


# --- the whole benchmark -----------------------------------------------------------------------------


def _seed_clock(agents: int) -> Callable[[], Any]:
    """The recorded runs' times: one second apart, just before the generated ones."""
    from datetime import UTC, datetime

    moments = iter(range(EPOCH - agents, EPOCH))
    return lambda: datetime.fromtimestamp(next(moments, EPOCH), UTC)


class _Server:
    """A PostgreSQL server to create databases on: the one given, or one started here."""

    def __init__(self, url: str | None, folder: Path) -> None:
        self._started = None
        self._count = 0
        if url is None:
            sys.path.insert(0, str(REPO))
            from tests.support.postgres import start_server

            self._started, why = start_server(folder, durable=True)
            if self._started is None:
                raise SystemExit(f"no PostgreSQL server: {why}")
            url = self._started.url()
        self.url = url

    def fresh(self) -> str:
        import psycopg

        self._count += 1
        name = f"bench_{os.getpid()}_{self._count}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        base, _, query = self.url.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")

    @property
    def postmaster(self) -> int | None:
        """The process id of the server started here (None for a given URL's)."""
        if self._started is None:
            return None
        return int((self._started.data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        if self._started is not None:
            self._started.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--postgres", metavar="URL", help="a server where databases may be created")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--writer-rounds", type=int, default=3, help="alternating rounds (medians)")
    parser.add_argument("--writer-runs", type=int, default=1000)
    parser.add_argument("--crowd", type=int, default=1000, help="agents in the crowd sweep (0: none)")
    parser.add_argument("--crowd-repeat", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=50, help="samples per query timing")
    parser.add_argument("--home", help="where the SQLite file goes (default: a temporary folder)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.agents <= args.runs:
        parser.error("need 1 <= --agents <= --runs")
    kinds = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    run = steady_run()
    figures: dict[str, Any] = {"runs": args.runs, "agents": args.agents, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-history-") as scratch:
        folder = Path(args.home or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        server = _Server(args.postgres, Path(scratch) / "pg") if "postgresql" in kinds or args.crowd else None
        sqlite_count = [0]

        def fresh_sqlite() -> str:
            sqlite_count[0] += 1
            return str(folder / f"history-{sqlite_count[0]}.sqlite3")

        try:
            for kind in kinds:
                url = fresh_sqlite() if kind == "sqlite" else server.fresh()  # type: ignore[union-attr]
                with open_store(url, clock=_seed_clock(args.agents)) as store:
                    seeded = seed(store, run, args.runs, args.agents)
                    stats = store.stats()
                    figures[kind] = {
                        "seed": seeded,
                        "stats": stats,
                        "bytes_per_run": round(stats["file_bytes"] / max(1, stats["runs"]), 1),
                        **reading(store, run, args.agents, args.repeat),
                    }
                if kind == "postgresql" and args.writers:
                    figures[kind]["many_writers"] = writers(
                        url,
                        run,
                        args.agents,
                        args.writers,
                        args.writer_runs,
                        args.writer_rounds,
                        server.postmaster,  # type: ignore[union-attr]
                    )
            if args.crowd and server is not None:
                figures["crowd"] = crowd_sweep(
                    args.crowd, {"sqlite": fresh_sqlite, "postgresql": server.fresh}, args.crowd_repeat
                )
        finally:
            if server is not None:
                server.stop()
    figures["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    else:
        print(report(figures))
    return 0


def report(f: dict[str, Any]) -> str:
    lines = [
        f"history at {f['runs']:,} runs over {f['agents']:,} agents "
        f"(load average before {f['load_before'][0]:.1f}, after {f['load_after'][0]:.1f})"
    ]
    for kind in ("sqlite", "postgresql"):
        if kind not in f:
            continue
        k = f[kind]
        s = k["seed"]
        lines.append(
            f"{kind}: seeded in {s['record_s'] + s['generate_s']:.1f} s ({f['agents']:,} runs recorded "
            f"through record() in {s['record_s']:.1f} s, the rest generated in SQL in "
            f"{s['generate_s']:.1f} s); {k['stats']['file_bytes'] / 2**20:,.0f} MiB, "
            f"{k['bytes_per_run']:.0f} bytes per run"
        )
        for name, label in (
            ("newest", "newest 100"),
            ("agent", "one agent's newest 100"),
            ("changed", "--changed newest 100"),
        ):
            q = k[name]
            lines.append(
                f"  {label}: {q['api_ms']:.2f} ms vs bare SELECT {q['bare_ms']:.2f} ms = "
                f"{q['ratio']:.2f}x (target <= {q['target']:g}x)"
            )
        lines.append(
            f"  fleet(): {k['fleet_rows']:,} rows in {k['fleet_ms']:.1f} ms; mark(): {k['mark_ms']:.2f} ms"
        )
        if "many_writers" in k:
            w = k["many_writers"]
            spent = "; ".join(
                f"{mode} {c['client']:.2f} client"
                + (f" + {c['server']:.2f} server" if c["server"] is not None else "")
                for mode, c in w["cpu_ms_per_run"].items()
            )
            lines.append(
                f"  {w['writers']} writers x {w['runs_each']} runs (median of {w['rounds']} rounds): "
                f"{w['record_runs_per_s']:.0f} runs/s; rows built the same way then bare INSERTs "
                f"{w['encoded_floor_runs_per_s']:.0f} runs/s = {w['ratio_to_encoded_floor']:.2f}x; vs "
                f"bare INSERT floor {w['floor_runs_per_s']:.0f} runs/s = {w['ratio']:.2f}x "
                f"(target >= {w['target']:g}x); CPU ms per run: {spent}"
            )
    if "crowd" in f:
        c = f["crowd"]
        lines.append(
            f"crowd sweep of {c['agents']} agents recording: PostgreSQL {c['postgresql_s']:.1f} s "
            f"({c['postgresql_agents_per_s']:.1f}/s) vs SQLite {c['sqlite_s']:.1f} s "
            f"({c['sqlite_agents_per_s']:.1f}/s) = {c['ratio']:.2f}x (target >= {c['target']:g}x)"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
