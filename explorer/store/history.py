"""The persistent history of runs: one SQLite file (stdlib `sqlite3`, WAL) under the explorer home.

Shape, and why:

- Content-addressed documents. Every body that was sent or received, every report and every
  exchange list is a row of `documents`, keyed by the SHA-256 of its bytes and stored once
  (zlib-compressed when that helps). A run of an unchanged agent differs from the previous one
  only in timestamps, elapsed times and `Date`-like headers, so those volatile values are split
  out into the run row (a small compressed blob) and everything else dedupes: a thousand replays
  cost a thousand small rows, not a thousand copies.
- One transaction per run (`BEGIN IMMEDIATE` with a busy timeout), so a process killed at any
  moment leaves either the whole run or none of it, and two processes recording at once simply
  take turns. WAL with `synchronous=NORMAL`: in WAL mode that is crash-safe and consistent for a
  killed process (a committed transaction is already in the WAL file when COMMIT returns), and only
  an OS crash or power cut can lose the last few commits, never corrupt earlier ones; FULL would
  add an fsync per run for a guarantee a history of replayable interviews does not need.
- The file is identified by `PRAGMA application_id` and versioned by `PRAGMA user_version`.
  Migrations are data (`MIGRATIONS[v]` turns version v-1 into v) applied forward in one
  transaction. A file that is not SQLite, another application's database, or a history written
  by a newer explorer is refused with a `HistoryError` and never written to.
- Secrets never reach disk: request and response headers pass through `redact_headers` again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from explorer.core.run import Exchange, Run
from explorer.store.redact import redact_headers

HISTORY_FILE = "history.sqlite3"
APPLICATION_ID = 0x49455848  # "IEXH": marks the file as an Interview Explorer history
SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 15_000

# Top-level report members that differ between runs of an unchanged agent.
VOLATILE_REPORT_MEMBERS: tuple[str, ...] = ("started_at", "finished_at", "elapsed_ms", "duration_ms")
# Response/request headers whose values change per request without the content changing.
VOLATILE_HEADERS = frozenset(
    {
        "date",
        "age",
        "expires",
        "x-request-id",
        "request-id",
        "traceparent",
        "server-timing",
        "x-response-time",
        "x-runtime",
        "cf-ray",
    }
)

_RAW, _ZLIB = 0, 1
_AGENT_NAME_CAP = 200

# The first schema, exactly as released. Never edit a released version's statements: databases
# created by it exist; change the schema by adding MIGRATIONS[n + 1] instead.
SCHEMA_V1: tuple[str, ...] = (
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        sha256 BLOB NOT NULL UNIQUE,        -- SHA-256 of the original bytes
        size INTEGER NOT NULL,              -- length of the original bytes
        encoding INTEGER NOT NULL,          -- 0 stored as is, 1 zlib
        body BLOB NOT NULL
    )""",
    # Which body documents an exchange-list document points at (for loading and for forgetting).
    """CREATE TABLE doc_links (
        parent INTEGER NOT NULL,
        child INTEGER NOT NULL,
        PRIMARY KEY (parent, child)
    ) WITHOUT ROWID""",
    "CREATE INDEX doc_links_child ON doc_links(child)",
    """CREATE TABLE agents (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL UNIQUE,         -- the card URL, or the target when no card was found
        name TEXT                           -- the card's name at the latest run
    )""",
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused, even after forget
        agent_id INTEGER NOT NULL REFERENCES agents(id),
        recorded_at TEXT NOT NULL,
        verdict TEXT NOT NULL,
        standing TEXT,
        role TEXT,
        runner TEXT,
        card_sha256 TEXT,
        answers_sha256 TEXT,
        report_doc INTEGER NOT NULL,        -- the report with volatile members nulled
        exchanges_doc INTEGER NOT NULL,     -- the exchanges with bodies as digests, volatile values nulled
        keys_doc INTEGER NOT NULL,          -- the public JWKS used
        volatile BLOB NOT NULL              -- zlib JSON: the nulled values, put back on load
    )""",
    "CREATE INDEX runs_by_agent ON runs(agent_id, id)",
)

# MIGRATIONS[v] takes a version v-1 database to version v (version 0 is an empty file).
MIGRATIONS: dict[int, tuple[str, ...]] = {1: SCHEMA_V1}
SCHEMA_VERSION = max(MIGRATIONS)


_SUMMARY_COLUMNS = """r.id, r.recorded_at, a.agent, a.name, r.verdict, r.standing, r.role, r.runner,
    r.card_sha256, r.answers_sha256"""
_RUNS_OF_AGENT = f"""SELECT {_SUMMARY_COLUMNS} FROM runs r JOIN agents a ON a.id = r.agent_id
    WHERE a.agent = ? ORDER BY r.id DESC LIMIT ?"""


class HistoryError(Exception):
    """The history cannot do what was asked; str() is a sentence a person can act on."""


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


@dataclass(frozen=True)
class _Doc:
    digest: bytes
    raw: bytes


def _doc(raw: bytes) -> _Doc:
    return _Doc(hashlib.sha256(raw).digest(), raw)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


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


# --- splitting a Run into deduplicated documents plus a small volatile part ---------------------


def _split_headers(headers: Sequence[tuple[str, str]], volatile: list[str]) -> list[list[str | None]]:
    out: list[list[str | None]] = []
    for name, value in redact_headers(headers):
        if name.lower() in VOLATILE_HEADERS:
            volatile.append(value)
            out.append([name, None])
        else:
            out.append([name, value])
    return out


def _join_headers(headers: Sequence[Sequence[Any]], volatile: Iterator[str]) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), next(volatile) if value is None else str(value)) for name, value in headers)


def _split_exchanges(exchanges: Sequence[Exchange]) -> tuple[_Doc, list[_Doc], list[Any]]:
    """The exchange list as one document (bodies by digest), its body documents, and the volatile values."""
    skeleton: list[dict[str, Any]] = []
    bodies: dict[bytes, _Doc] = {}
    volatile: list[Any] = []

    def body_ref(data: bytes | None) -> str | None:
        if data is None:
            return None
        doc = _doc(bytes(data))
        bodies.setdefault(doc.digest, doc)
        return doc.digest.hex()

    for ex in exchanges:
        header_values: list[str] = []
        skeleton.append(
            {
                "purpose": ex.purpose,
                "attempt": ex.attempt,
                "method": ex.method,
                "url": ex.url,
                "request_headers": _split_headers(ex.request_headers, header_values),
                "request_body": body_ref(ex.request_body),
                "status": ex.status,
                "response_headers": _split_headers(ex.response_headers, header_values),
                "response_body": body_ref(ex.response_body),
                "truncated": ex.truncated,
                "error": ex.error,
            }
        )
        volatile.append([ex.started_at, ex.elapsed_ms, header_values])
    return _doc(_dumps(skeleton)), list(bodies.values()), volatile


def _join_exchanges(
    skeleton: list[Any], bodies: Mapping[str, bytes], volatile: list[Any]
) -> tuple[Exchange, ...]:
    out = []
    for item, (started_at, elapsed_ms, header_values) in zip(skeleton, volatile, strict=True):
        values = iter(header_values)
        req_ref, resp_ref = item["request_body"], item["response_body"]
        out.append(
            Exchange(
                purpose=item["purpose"],
                attempt=item["attempt"],
                method=item["method"],
                url=item["url"],
                request_headers=_join_headers(item["request_headers"], values),
                request_body=None if req_ref is None else bodies[req_ref],
                status=item["status"],
                response_headers=_join_headers(item["response_headers"], values),
                response_body=b"" if resp_ref is None else bodies[resp_ref],
                truncated=item["truncated"],
                error=item["error"],
                started_at=started_at,
                elapsed_ms=elapsed_ms,
            )
        )
    return tuple(out)


def _split_report(report: Mapping[str, Any]) -> tuple[_Doc, dict[str, Any]]:
    """The report with volatile members nulled in place (so key order survives), and their values."""
    stable = dict(report)
    volatile = {}
    for key in VOLATILE_REPORT_MEMBERS:
        if key in stable:
            volatile[key] = stable[key]
            stable[key] = None
    return _doc(_dumps(stable)), volatile


class History:
    """The run history in one SQLite file. Open with `History.open(home)`; safe to share between threads."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._clock = clock  # when a run is recorded (tests and pictures pass a fixed one)

    # --- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(cls, home: Path | str | None = None, clock: Callable[[], datetime] = utc_now) -> History:
        """Open (creating or migrating as needed) the history under `home` (default: the explorer home)."""
        from explorer.config import home_dir

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
        _check_header(path)
        try:
            conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
            )
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot open the history at {path}: {exc}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _prepare(conn, path)
        except HistoryError:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _disk_is_full(path, exc):
                raise HistoryError(
                    f"the disk holding {path} is full, so the history cannot be opened (SQLite needs "
                    "room for its write-ahead files); free some space and try again. Earlier runs are "
                    "intact."
                ) from None
            raise HistoryError(
                f"{path} is not a usable history database ({exc}); it was left untouched"
            ) from None
        return cls(conn, path, clock)

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
                _rollback(conn)
                raise HistoryError(f"could not change the history at {self.path}: {exc}") from None
            except BaseException:
                _rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(conn)
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
        if not isinstance(run.report, Mapping):
            raise HistoryError("cannot record a run whose report is not an object")
        try:
            report_doc, report_volatile = _split_report(run.report)
            skeleton, bodies, ex_volatile = _split_exchanges(run.exchanges)
            keys_doc = _doc(_dumps(dict(run.keys)))
            volatile = zlib.compress(_dumps({"report": report_volatile, "exchanges": ex_volatile}), 9)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"cannot record this run: it holds a value that is not JSON ({exc})") from None
        fields = _summary_fields(run.report)
        agent = agent_of(run.report)
        try:
            with self._write() as conn:
                skeleton_id, new_skeleton = _put(conn, skeleton)
                if new_skeleton:
                    child_ids = [_put(conn, body)[0] for body in bodies]
                    conn.executemany(
                        "INSERT OR IGNORE INTO doc_links(parent, child) VALUES (?, ?)",
                        [(skeleton_id, child) for child in child_ids],
                    )
                report_id = _put(conn, report_doc)[0]
                keys_id = _put(conn, keys_doc)[0]
                agent_id = _agent_id(conn, agent, fields.pop("name"))
                cur = conn.execute(
                    """INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
                           answers_sha256, report_doc, exchanges_doc, keys_doc, volatile)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
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
                        volatile,
                    ),
                )
                return int(cur.lastrowid or 0)
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

    def match_agents(self, text: str) -> list[str]:
        """Agents a person may mean by `text`: that agent, else the ones under that base URL, else by name."""
        with self._query() as conn:
            if conn.execute("SELECT 1 FROM agents WHERE agent = ?", (text,)).fetchone():
                return [text]
            base = text.rstrip("/") + "/"
            rows = conn.execute(
                "SELECT agent FROM agents WHERE substr(agent, 1, ?) = ? ORDER BY agent", (len(base), base)
            ).fetchall()
            if not rows:
                rows = conn.execute(
                    "SELECT agent FROM agents WHERE name = ? ORDER BY agent", (text,)
                ).fetchall()
        return [r[0] for r in rows]

    def load(self, run_id: int) -> Run:
        """The run exactly as recorded (bodies byte for byte); HistoryError if unknown or damaged."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT report_doc, exchanges_doc, keys_doc, volatile FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise HistoryError(f"there is no run {run_id} in the history")
            report_id, skeleton_id, keys_id, volatile_blob = row
            try:
                report = json.loads(_get(conn, report_id))
                skeleton = json.loads(_get(conn, skeleton_id))
                keys = json.loads(_get(conn, keys_id))
                volatile = json.loads(zlib.decompress(volatile_blob))
                bodies = {
                    digest.hex(): _decode(digest, size, encoding, body)
                    for digest, size, encoding, body in conn.execute(
                        """SELECT d.sha256, d.size, d.encoding, d.body FROM doc_links l
                           JOIN documents d ON d.id = l.child WHERE l.parent = ?""",
                        (skeleton_id,),
                    )
                }
                report.update(volatile["report"])
                exchanges = _join_exchanges(skeleton, bodies, volatile["exchanges"])
            except (ValueError, KeyError, TypeError, RuntimeError, StopIteration, zlib.error) as exc:
                raise HistoryError(
                    f"run {run_id} in {self.path} is damaged and cannot be read ({exc})"
                ) from None
        return Run(report=report, exchanges=exchanges, keys=keys)

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


def _put(conn: sqlite3.Connection, doc: _Doc) -> tuple[int, bool]:
    """The id of the document with these bytes, inserting it when new; (id, inserted)."""
    row = conn.execute("SELECT id FROM documents WHERE sha256 = ?", (doc.digest,)).fetchone()
    if row is not None:
        return int(row[0]), False
    body, encoding = doc.raw, _RAW
    if len(doc.raw) > 64:
        packed = zlib.compress(doc.raw, 6)
        if len(packed) < len(doc.raw) * 0.9:
            body, encoding = packed, _ZLIB
    cur = conn.execute(
        "INSERT INTO documents(sha256, size, encoding, body) VALUES (?, ?, ?, ?)",
        (doc.digest, len(doc.raw), encoding, body),
    )
    return int(cur.lastrowid or 0), True


def _decode(digest: bytes, size: int, encoding: int, body: bytes) -> bytes:
    raw = zlib.decompress(body) if encoding == _ZLIB else bytes(body)
    if len(raw) != size or hashlib.sha256(raw).digest() != digest:
        raise ValueError(f"document sha256:{digest.hex()} does not match its digest")
    return raw


def _get(conn: sqlite3.Connection, doc_id: int) -> bytes:
    row = conn.execute(
        "SELECT sha256, size, encoding, body FROM documents WHERE id = ?", (doc_id,)
    ).fetchone()
    if row is None:
        raise KeyError(f"document {doc_id} is missing")
    return _decode(*row)


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


def _prepare(conn: sqlite3.Connection, path: Path) -> None:
    """Check ownership, switch to WAL, set the connection's pragmas, migrate.

    While another process is creating the file or switching it to WAL, SQLite can answer
    "database is locked" without waiting on the busy timeout; that is retried, briefly.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            _check_owner(conn, path)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA secure_delete=ON")  # forgotten runs do not linger in free pages
            migrate(conn, path)
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _check_header(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is not a SQLite database at all."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise HistoryError(f"{path} is a folder, not a history database") from None
    except OSError as exc:
        raise HistoryError(f"cannot read the history at {path}: {exc}") from None
    if head and head != SQLITE_MAGIC:
        raise HistoryError(
            f"{path} is not an Interview Explorer history (not a SQLite database); it was left untouched. "
            "Move it away or choose another --home."
        )


def _check_owner(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse another application's database, and a history from a newer explorer."""
    # One statement, so one snapshot: another process may be creating the schema right now.
    app_id, version, tables = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT COUNT(*) FROM sqlite_master)"
    ).fetchone()
    has_tables = tables > 0
    if app_id == 0 and version == 0 and not has_tables:
        return  # a new, empty file: ours to create
    if app_id != APPLICATION_ID:
        raise HistoryError(
            f"{path} is a SQLite database of another application, not an Interview Explorer history; "
            "it was left untouched. Move it away or choose another --home."
        )
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{path} was written by a newer Interview Explorer (history version {version}, this one reads "
            f"up to {SCHEMA_VERSION}); upgrade, or choose another --home."
        )


def migrate(conn: sqlite3.Connection, path: Path | str = "the history") -> int:
    """Bring the database to SCHEMA_VERSION in one transaction; returns the version it started at."""
    target = SCHEMA_VERSION
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == target:
        return version  # the common case takes no write lock
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        if version == target:
            conn.execute("COMMIT")
            return version
        if version == 0:
            if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
                raise HistoryError(f"{path} is not an empty database; it was left untouched")
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        for step in range(version + 1, target + 1):
            for statement in MIGRATIONS[step]:
                try:
                    conn.execute(statement)
                except sqlite3.Error as exc:
                    raise HistoryError(
                        f"could not upgrade {path} from history version {step - 1} to {step}: {exc}; "
                        "nothing was changed"
                    ) from None
        conn.execute(f"PRAGMA user_version={target}")
        conn.execute("COMMIT")
        return version
    except BaseException:
        _rollback(conn)
        raise


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (SQLite ends some on its own, e.g. on a full disk)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the original error is the one worth reporting


def _disk_is_full(path: Path, exc: sqlite3.DatabaseError) -> bool:
    """An I/O error while opening is most often a full disk (no room for the -wal/-shm files)."""
    text = str(exc).lower()
    if "disk is full" in text:
        return True
    if "disk i/o error" not in text:
        return False
    try:
        import shutil

        return shutil.disk_usage(path.parent).free < 256 * 1024
    except OSError:
        return False
