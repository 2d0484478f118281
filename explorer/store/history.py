"""The persistent history of runs: one SQLite file under the explorer home, and the `History` class.

Shape, and why:

- Three modules, one job each. `schema` owns the file format (recognising the file, the opening
  pragmas, migrations); `codec` turns a Run into content-addressed documents and back; this module
  holds the `History` class that records, lists, loads and forgets runs, in SQL.
- Content-addressed documents (`codec`): every body, report and exchange list is stored once,
  keyed by its SHA-256, with the volatile values of a run (timestamps, elapsed times, `Date`-like
  headers) in the run row, so a thousand replays of an unchanged agent cost a thousand small rows.
- One transaction per run (`BEGIN IMMEDIATE` with a busy timeout), so a process killed at any
  moment leaves either the whole run or none of it, and two processes recording at once simply
  take turns. The connection is shared between threads behind one lock.
- Every SQLite error becomes a `HistoryError` whose text a person can act on.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from explorer.core.run import Run
from explorer.store.codec import (
    EncodedRun,
    decode_document,
    decode_run,
    encode_run,
    get_document,
    put_document,
)
from explorer.store.schema import HISTORY_FILE, HistoryError, connect, rollback

__all__ = [
    "HISTORY_FILE",
    "AgentSummary",
    "FleetSummary",
    "History",
    "HistoryError",
    "RunSummary",
    "agent_of",
    "utc_now",
]

_AGENT_NAME_CAP = 200

_SUMMARY_COLUMNS = """r.id, r.recorded_at, a.agent, a.name, r.verdict, r.standing, r.role, r.runner,
    r.card_sha256, r.answers_sha256"""
_RUNS_OF_AGENT = f"""SELECT {_SUMMARY_COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id
    WHERE a.agent = ? ORDER BY r.id DESC LIMIT ?"""


class RunSummary(NamedTuple):
    """One line of the history list (a named tuple: lists of thousands are built cheaply)."""

    id: int
    recorded_at: str
    agent: str
    name: str | None
    verdict: str
    standing: str | None
    role: str | None
    runner: str | None
    card_sha256: str | None
    answers_sha256: str | None
    changed: bool  # card or answers digest differs from the previous run of the same agent

    def to_json(self) -> dict[str, Any]:
        return self._asdict()


class FleetSummary(NamedTuple):
    """One agent of the fleet view: its latest run, and how often its runs changed."""

    agent: str
    name: str | None
    runs: int
    last_run_id: int
    last_recorded_at: str
    verdict: str
    standing: str | None
    churn: int  # runs whose verdict, card or answers differ from the agent's previous run
    last_change_at: str | None  # when the latest such run was recorded
    card_sha256: str | None  # of the latest run
    answers_sha256: str | None
    signature: str | None  # the card signature status of the latest run


@dataclass(frozen=True)
class AgentSummary:
    """An agent that has runs in the history, most recently run first."""

    agent: str
    name: str | None
    runs: int
    last_run_id: int
    last_recorded_at: str
    last_verdict: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.agent


def utc_now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    """`2026-11-30T12:00:00.000Z`: the form `recorded_at` is stored in (UTC, milliseconds)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def agent_of(report: Mapping[str, Any]) -> str:
    """Which agent a report is about: its card URL, else the target it was run against."""
    card = report.get("card")
    url = card.get("url") if isinstance(card, Mapping) else None
    if isinstance(url, str) and url:
        return url
    target = report.get("target")
    return str(target) if target else "(unknown agent)"


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _summary_fields(report: Mapping[str, Any]) -> dict[str, Any]:
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    ran_by = report.get("ran_by") if isinstance(report.get("ran_by"), Mapping) else {}
    name = _text_or_none(card.get("name"))
    return {
        "verdict": str(report.get("verdict") or "unknown"),
        "standing": _text_or_none(report.get("standing")),
        "role": _text_or_none(ran_by.get("role")),
        "runner": _text_or_none(ran_by.get("name")),
        "card_sha256": _text_or_none(card.get("sha256")),
        "answers_sha256": _text_or_none(report.get("answers_sha256")),
        "name": name[:_AGENT_NAME_CAP] if name else None,
    }


class History:
    """The run history in one SQLite file. Open with `History.open(home)`; safe to share between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path, clock: Callable[[], datetime] = utc_now) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._clock = clock  # when a run is recorded (tests and pictures pass a fixed one)

    # --- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(cls, home: Path | str | None = None, clock: Callable[[], datetime] = utc_now) -> History:
        """Open (creating or migrating as needed) the history under `home` (default: the explorer home)."""
        from explorer.home import home_dir

        try:
            path = home_dir(home) / HISTORY_FILE
        except OSError as exc:
            raise HistoryError(
                f"cannot use {home or 'the explorer home'} as the history folder: {exc}"
            ) from None
        return cls.open_file(path, clock)

    @classmethod
    def open_file(cls, path: Path | str, clock: Callable[[], datetime] = utc_now) -> History:
        """Open the history database at exactly this path."""
        path = Path(path)
        return cls(connect(path), path, clock)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise HistoryError(f"the history at {self.path} is busy or read-only: {exc}") from None
            try:
                yield conn
            except sqlite3.Error as exc:
                rollback(conn)
                raise HistoryError(f"could not change the history at {self.path}: {exc}") from None
            except BaseException:
                rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                rollback(conn)
                raise HistoryError(f"could not save to the history at {self.path}: {exc}") from None

    @contextmanager
    def _query(self) -> Iterator[sqlite3.Connection]:
        """The connection for reading, with SQLite's errors turned into a readable HistoryError."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise HistoryError(f"the history at {self.path} cannot be read: {exc}") from None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot for a multi-statement read."""
        with self._query() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    # --- writing ---------------------------------------------------------------------------------

    def record(self, run: Run) -> int:
        """Store a run in one transaction and return its id."""
        return self._record(run, once=False)[0]

    def record_once(self, run: Run) -> tuple[int, bool]:
        """Store a run unless a copy of this very run is already stored; (its id, True when it was
        stored now). What `history import` uses, so importing a transcript twice, or one of a run
        this history recorded itself, records it once.

        A copy is the same agent, exchanges, keys and times (the report is not compared: what a
        reader may change in it, the standing and `run_attestation`, says nothing about which run
        it is, and `history import` has checked the rest against the exchanges). A signed run is
        a copy only of a stored run carrying the same envelope, so a signed transcript imported
        after a copy stripped of its signature is recorded (as a new run: ids are never reused),
        and its signature is kept."""
        return self._record(run, once=True)

    def _record(self, run: Run, *, once: bool) -> tuple[int, bool]:
        if not isinstance(run.report, Mapping):
            raise HistoryError("cannot record a run whose report is not an object")
        try:
            encoded = encode_run(run)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"cannot record this run: it holds a value that is not JSON ({exc})") from None
        # Listed by the report as read here (a signed import's is re-derived from its bytes); the
        # report kept is the one recorded (as signed, so the signature still covers it).
        fields = _summary_fields(run.report)
        agent = agent_of(run.report)
        try:
            with self._write() as conn:
                if once:
                    found = _same_run(conn, agent, encoded)
                    if found is not None:
                        return found, False
                skeleton_id, new_skeleton = put_document(conn, encoded.exchanges)
                if new_skeleton:
                    child_ids = [put_document(conn, body)[0] for body in encoded.bodies]
                    conn.executemany(
                        "INSERT OR IGNORE INTO doc_links(parent, child) VALUES (?, ?)",
                        [(skeleton_id, child) for child in child_ids],
                    )
                report_id = put_document(conn, encoded.report)[0]
                keys_id = put_document(conn, encoded.keys)[0]
                agent_id = _agent_id(conn, agent, fields.pop("name"))
                cur = conn.execute(
                    """INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
                           answers_sha256, report_doc, exchanges_doc, keys_doc, volatile, attestation)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        agent_id,
                        _stamp(self._clock()),
                        fields["verdict"],
                        fields["standing"],
                        fields["role"],
                        fields["runner"],
                        fields["card_sha256"],
                        fields["answers_sha256"],
                        report_id,
                        skeleton_id,
                        keys_id,
                        encoded.volatile,
                        encoded.attestation,
                    ),
                )
                return int(cur.lastrowid or 0), True
        except sqlite3.Error as exc:
            raise HistoryError(f"could not save the run to {self.path}: {exc}") from None

    def forget_run(self, run_id: int) -> None:
        """Delete one run (and every document no other run uses)."""
        with self._write() as conn:
            row = conn.execute("SELECT agent_id FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise HistoryError(f"there is no run {run_id} in the history")
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            _collect_garbage(conn)
        self._checkpoint()

    def forget_agent(self, agent: str) -> int:
        """Delete every run of an agent; returns how many were deleted (0 when it had none)."""
        with self._write() as conn:
            row = conn.execute("SELECT id FROM agents WHERE agent = ?", (agent,)).fetchone()
            if row is None:
                return 0
            count = conn.execute("DELETE FROM runs WHERE agent_id = ?", (row[0],)).rowcount
            _collect_garbage(conn)
        self._checkpoint()
        return int(count)

    def _checkpoint(self) -> None:
        """Move forgotten pages out of the WAL too (best effort: a concurrent reader may hold it)."""
        with self._lock:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass

    # --- reading ---------------------------------------------------------------------------------

    def runs(self, agent: str | None = None, limit: int = 100) -> list[RunSummary]:
        """Runs newest first, of one agent or of all; `changed` compares with that agent's previous run."""
        limit = max(0, limit)
        if agent is None:
            return self._all_runs(limit)
        # One agent: one more row than asked for, so every row has its predecessor at hand.
        with self._query() as conn:
            rows = conn.execute(_RUNS_OF_AGENT, (agent, limit + 1)).fetchall()
        return [
            RunSummary(*row, i + 1 < len(rows) and (row[8], row[9]) != (rows[i + 1][8], rows[i + 1][9]))
            for i, row in enumerate(rows[:limit])
        ]

    def _all_runs(self, limit: int) -> list[RunSummary]:
        sql = f"""
            SELECT {_SUMMARY_COLUMNS},
                   (SELECT p.card_sha256 IS NOT r.card_sha256 OR p.answers_sha256 IS NOT r.answers_sha256
                      FROM runs p WHERE p.agent_id = r.agent_id AND p.id < r.id
                      ORDER BY p.id DESC LIMIT 1)
            FROM runs r JOIN agents a ON a.id = r.agent_id
            ORDER BY r.id DESC LIMIT ?"""
        with self._query() as conn:
            rows = conn.execute(sql, (limit,)).fetchall()
        return [RunSummary(*row[:10], bool(row[10])) for row in rows]

    def signed(self, run_ids: list[int]) -> set[int]:
        """Which of these runs carry a runner's signed attestation (cheap: no document is read)."""
        wanted = [int(i) for i in run_ids]
        found: set[int] = set()
        with self._query() as conn:
            for start in range(0, len(wanted), 500):  # within SQLite's smallest variable limit
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT id FROM runs WHERE attestation IS NOT NULL AND id IN ({marks})"
                found.update(int(row[0]) for row in conn.execute(sql, chunk))
        return found

    def summary(self, run_id: int) -> RunSummary:
        """The history line of one run; HistoryError when there is no such run."""
        with self._read() as conn:
            row = conn.execute("SELECT agent_id FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise HistoryError(f"there is no run {run_id} in the history")
            rows = conn.execute(
                f"""SELECT {_SUMMARY_COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id
                    WHERE r.agent_id = ? AND r.id <= ? ORDER BY r.id DESC LIMIT 2""",
                (row[0], run_id),
            ).fetchall()
        this = rows[0]
        changed = len(rows) == 2 and (rows[1][8], rows[1][9]) != (this[8], this[9])
        return RunSummary(*this, changed)

    def agents(self) -> list[AgentSummary]:
        """Every agent with runs, the most recently run first."""
        with self._query() as conn:
            rows = conn.execute(
                """SELECT a.agent, a.name, s.n, s.last, r.recorded_at, r.verdict
                   FROM (SELECT agent_id, COUNT(*) AS n, MAX(id) AS last FROM runs GROUP BY agent_id) s
                   JOIN agents a ON a.id = s.agent_id JOIN runs r ON r.id = s.last
                   ORDER BY s.last DESC"""
            ).fetchall()
        return [AgentSummary(*row) for row in rows]

    def fleet(self) -> list[FleetSummary]:
        """Every agent with its latest run and how often it changed (the fleet view's rows).

        A run "changed" when its verdict, card digest or answers digest differs from the agent's
        previous run; `churn` counts those runs and `last_change_at` is when the latest of them
        was recorded. The signature status is read from each latest report (one document per
        agent, no exchanges), so a thousand agents cost a thousand small reads, not a thousand runs.
        """
        sql = """
            WITH ordered AS (
                SELECT r.id, r.agent_id, r.recorded_at,
                       CASE WHEN LAG(r.id) OVER w IS NULL THEN 0
                            WHEN LAG(r.verdict) OVER w IS NOT r.verdict
                              OR LAG(r.card_sha256) OVER w IS NOT r.card_sha256
                              OR LAG(r.answers_sha256) OVER w IS NOT r.answers_sha256 THEN 1
                            ELSE 0 END AS changed
                FROM runs r WINDOW w AS (PARTITION BY r.agent_id ORDER BY r.id)
            ), per_agent AS (
                SELECT agent_id, COUNT(*) AS n, MAX(id) AS last, SUM(changed) AS churn,
                       MAX(CASE WHEN changed THEN recorded_at END) AS last_change
                FROM ordered GROUP BY agent_id
            )
            SELECT a.agent, a.name, p.n, p.last, r.recorded_at, r.verdict, r.standing, p.churn,
                   p.last_change, r.card_sha256, r.answers_sha256, r.report_doc
            FROM per_agent p JOIN agents a ON a.id = p.agent_id JOIN runs r ON r.id = p.last
            ORDER BY p.last DESC"""
        out: list[FleetSummary] = []
        with self._read() as conn:
            for *fields, report_doc in conn.execute(sql).fetchall():
                out.append(FleetSummary(*fields, _signature_status(conn, report_doc)))
        return out

    def match_agents(self, text: str) -> list[str]:
        """Agents a person may mean by `text`: that agent, else the ones under that base URL, else
        by card name (exactly, then in any case), else the reference agents of that name (`churning`
        is any run of "Stonework Books (Churning)", whatever port its demo had)."""
        with self._query() as conn:
            if conn.execute("SELECT 1 FROM agents WHERE agent = ?", (text,)).fetchone():
                return [text]
            base = text.rstrip("/") + "/"
            rows = conn.execute(
                "SELECT agent FROM agents WHERE substr(agent, 1, ?) = ? ORDER BY agent", (len(base), base)
            ).fetchall()
            if rows:
                return [r[0] for r in rows]
            named = conn.execute("SELECT agent, name FROM agents ORDER BY agent").fetchall()
        wanted = text.strip().casefold()
        for same in (
            lambda name: name == text,
            lambda name: name.casefold() == wanted,
            lambda name: name.casefold().endswith(f"({wanted})"),
        ):
            found = [agent for agent, name in named if isinstance(name, str) and wanted and same(name)]
            if found:
                return found
        return []

    def load(self, run_id: int) -> Run:
        """The run exactly as recorded (bodies byte for byte); HistoryError if unknown or damaged."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT report_doc, exchanges_doc, keys_doc, volatile, attestation FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise HistoryError(f"there is no run {run_id} in the history")
            report_id, skeleton_id, keys_id, volatile_blob, attestation_blob = row
            try:
                bodies = {
                    digest.hex(): decode_document(digest, size, encoding, body)
                    for digest, size, encoding, body in conn.execute(
                        """SELECT d.sha256, d.size, d.encoding, d.body FROM doc_links l
                           JOIN documents d ON d.id = l.child WHERE l.parent = ?""",
                        (skeleton_id,),
                    )
                }
                run = decode_run(
                    get_document(conn, report_id),
                    get_document(conn, skeleton_id),
                    get_document(conn, keys_id),
                    volatile_blob,
                    bodies,
                    attestation_blob,
                )
            except (ValueError, KeyError) as exc:  # a document or its parts do not fit
                raise HistoryError(
                    f"run {run_id} in {self.path} is damaged and cannot be read ({exc})"
                ) from None
        return run

    def stats(self) -> dict[str, int]:
        """Counts and sizes, for the benchmark and for curious users."""
        with self._query() as conn:
            runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            docs, stored, original = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(length(body)), 0), COALESCE(SUM(size), 0) FROM documents"
            ).fetchone()
            pages = (
                conn.execute("PRAGMA page_count").fetchone()[0]
                * conn.execute("PRAGMA page_size").fetchone()[0]
            )
        return {
            "runs": runs,
            "documents": docs,
            "document_bytes": stored,
            "original_bytes": original,
            "file_bytes": pages,
        }


# --- module-level helpers (all run inside a transaction the caller holds) ------------------------


def _same_run(conn: sqlite3.Connection, agent: str, encoded: EncodedRun) -> int | None:
    """The id of a stored copy of this run (`History.record_once`): the same agent, exchanges and
    keys documents and volatile values, and for a signed run the same envelope; or None."""
    rows = conn.execute(
        """SELECT r.id, r.attestation FROM runs r JOIN agents a ON a.id = r.agent_id
             JOIN documents xd ON xd.id = r.exchanges_doc JOIN documents kd ON kd.id = r.keys_doc
           WHERE a.agent = ? AND xd.sha256 = ? AND kd.sha256 = ? AND r.volatile = ?
           ORDER BY r.id""",
        (agent, encoded.exchanges.digest, encoded.keys.digest, encoded.volatile),
    ).fetchall()
    for run_id, attestation in rows:
        if encoded.attestation is None or attestation == encoded.attestation:
            return int(run_id)
    return None


def _signature_status(conn: sqlite3.Connection, report_doc: int) -> str | None:
    """The card signature status in a stored report, None when it cannot be read."""
    try:
        report = json.loads(get_document(conn, report_doc))
    except (ValueError, KeyError):
        return None
    card = report.get("card") if isinstance(report, dict) else None
    signature = card.get("signature") if isinstance(card, dict) else None
    status = signature.get("status") if isinstance(signature, dict) else None
    return status if isinstance(status, str) else None


def _agent_id(conn: sqlite3.Connection, agent: str, name: str | None) -> int:
    row = conn.execute("SELECT id, name FROM agents WHERE agent = ?", (agent,)).fetchone()
    if row is None:
        return int(
            conn.execute("INSERT INTO agents(agent, name) VALUES (?, ?)", (agent, name)).lastrowid or 0
        )
    if name is not None and row[1] != name:
        conn.execute("UPDATE agents SET name = ? WHERE id = ?", (name, row[0]))
    return int(row[0])


def _collect_garbage(conn: sqlite3.Connection) -> None:
    """Drop agents without runs and documents no remaining run reaches."""
    conn.execute("DELETE FROM agents WHERE id NOT IN (SELECT agent_id FROM runs)")
    conn.execute("DELETE FROM doc_links WHERE parent NOT IN (SELECT exchanges_doc FROM runs)")
    conn.execute(
        """DELETE FROM documents WHERE id NOT IN (SELECT report_doc FROM runs)
             AND id NOT IN (SELECT exchanges_doc FROM runs)
             AND id NOT IN (SELECT keys_doc FROM runs)
             AND id NOT IN (SELECT child FROM doc_links)"""
    )
