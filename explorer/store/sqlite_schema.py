"""The history file's format: how it is recognised, opened and migrated (stdlib `sqlite3`).

This is the part of the history that must never change behind a released database's back, so it
lives apart from the code that reads and writes runs (`history`) and from the document codec
(`codec`):

- The file is identified by `PRAGMA application_id` and versioned by `PRAGMA user_version`.
- Migrations are data: `MIGRATIONS[v]` turns version v-1 into v, applied forward in one
  transaction, so a failing step changes nothing. A step is a statement, or a function of the
  connection where rows must be rewritten from their documents. Add a schema change as
  `MIGRATIONS[n + 1]`; never edit a released version's statements.
- A file that is not SQLite, another application's database, or a history written by a newer
  explorer is refused with a `HistoryError` before anything is written to it.
- Every connection runs in WAL with `synchronous=NORMAL` (crash-safe for a killed process; only an
  OS crash can lose the last few commits), foreign keys on and `secure_delete` on.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from explorer.store.base import HistoryError

HISTORY_FILE = "history.sqlite3"
APPLICATION_ID = 0x49455848  # "IEXH": marks the file as an Interview Explorer history
BUSY_TIMEOUT_MS = 15_000


__all__ = ["HISTORY_FILE", "MIGRATIONS", "SCHEMA_VERSION", "HistoryError", "connect", "migrate", "rollback"]

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

# Version 2: a signed run keeps its runner's DSSE envelope (zlib JSON), NULL for an unsigned run.
SCHEMA_V2: tuple[str, ...] = ("ALTER TABLE runs ADD COLUMN attestation BLOB",)


def _signatures_from_reports(conn: sqlite3.Connection) -> None:
    """Version 3's `runs.signature`, read once from each distinct stored report."""
    from explorer.store.base import signature_of_report
    from explorer.store.codec import decode_document

    for (doc_id,) in conn.execute("SELECT DISTINCT report_doc FROM runs").fetchall():
        row = conn.execute(
            "SELECT sha256, size, encoding, body FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        try:
            status = None if row is None else signature_of_report(decode_document(*row))
        except ValueError:
            status = None  # a damaged report is reported when the run is loaded, not here
        conn.execute("UPDATE runs SET signature = ? WHERE report_doc = ?", (status, doc_id))


# Version 3: what listing at any depth and the fleet view read without a scan. A run keeps whether
# it changed (verdict, card or answers against the agent's previous run) and its card signature
# status; an agent keeps its counters and what the fleet view shows of its latest run; a transcript
# recorded once is unique by `imported_key`; a forget is counted, so a reader polling `counters`
# and `agents` sees every change.
SCHEMA_V3: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    "ALTER TABLE runs ADD COLUMN changed INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN signature TEXT",
    "ALTER TABLE runs ADD COLUMN imported_key BLOB",
    "ALTER TABLE agents ADD COLUMN runs INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE agents ADD COLUMN last_run INTEGER",
    "ALTER TABLE agents ADD COLUMN churn INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE agents ADD COLUMN last_change_at TEXT",
    "ALTER TABLE agents ADD COLUMN last_verdict TEXT",
    "ALTER TABLE agents ADD COLUMN last_card TEXT",
    "ALTER TABLE agents ADD COLUMN last_answers TEXT",
    "ALTER TABLE agents ADD COLUMN last_changed INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE agents ADD COLUMN last_recorded_at TEXT",
    "ALTER TABLE agents ADD COLUMN last_standing TEXT",
    "ALTER TABLE agents ADD COLUMN last_signature TEXT",
    "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT INTO counters(name, value) VALUES ('forgotten', 0)",
    """UPDATE runs SET changed = 1 WHERE id IN (
        SELECT id FROM (
            SELECT id, LAG(id) OVER w AS previous,
                   LAG(verdict) OVER w IS NOT verdict OR LAG(card_sha256) OVER w IS NOT card_sha256
                     OR LAG(answers_sha256) OVER w IS NOT answers_sha256 AS differs
            FROM runs WINDOW w AS (PARTITION BY agent_id ORDER BY id))
        WHERE previous IS NOT NULL AND differs)""",
    """UPDATE agents SET
        runs = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id),
        last_run = (SELECT MAX(id) FROM runs WHERE agent_id = agents.id),
        churn = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id AND changed = 1),
        last_change_at = (SELECT MAX(recorded_at) FROM runs WHERE agent_id = agents.id AND changed = 1)""",
    "DELETE FROM agents WHERE runs = 0",
    _signatures_from_reports,
    """UPDATE agents SET (last_verdict, last_card, last_answers, last_changed, last_recorded_at,
            last_standing, last_signature)
        = (SELECT verdict, card_sha256, answers_sha256, changed, recorded_at, standing, signature
           FROM runs WHERE id = agents.last_run)""",
    "CREATE UNIQUE INDEX runs_imported ON runs(imported_key)",
    "CREATE INDEX runs_changed ON runs(id) WHERE changed = 1",
    "CREATE INDEX runs_verdict_id ON runs(verdict, id)",
    "CREATE INDEX runs_recorded_at ON runs(recorded_at)",
    "CREATE INDEX agents_last_run ON agents(last_run)",
)


def _changes_of_runs(conn: sqlite3.Connection) -> None:
    """Version 4's change kinds and marks for the runs already there (`backfill_changes` says
    what old runs keep)."""
    from explorer.store.sql import backfill_changes

    backfill_changes(conn)


# Version 4: what tells the kinds of change apart (CONTRACT "Signatures are proofs"). A run keeps
# its declarations digest and signers (the JSON array of the thumbprints that verified its card)
# and its change kinds against its agent's run before (`declarations`, `key`, `answers`,
# `verdict`, `resigned`; `changed` is any but `resigned`); an agent keeps its latest run's, and
# counts changes apart from churn (which now counts churn verdicts only).
SCHEMA_V4: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    "ALTER TABLE runs ADD COLUMN declarations_sha256 TEXT",
    "ALTER TABLE runs ADD COLUMN signers TEXT",
    "ALTER TABLE runs ADD COLUMN kinds TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE agents ADD COLUMN changes INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE agents ADD COLUMN last_declarations TEXT",
    "ALTER TABLE agents ADD COLUMN last_signers TEXT",
    "ALTER TABLE agents ADD COLUMN last_kinds TEXT NOT NULL DEFAULT ''",
    _changes_of_runs,
)


def _agents_across_addresses(conn: sqlite3.Connection) -> None:
    """Version 5's agents: those of one signing key and name merged (`merge_agents` says how)."""
    from explorer.store.identity import merge_agents

    merge_agents(conn)


# Version 5: one agent across addresses (CONTRACT "Signatures are proofs", `explorer.store.identity`).
# `agents.agent` is the identity an agent was first recorded under (its signing key and name, or
# its address); a run keeps its own address, an agent the address of its latest run, every
# address it was seen on (`addresses`) and every signing identity it was recorded under
# (`agent_keys`).
SCHEMA_V5: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    "ALTER TABLE runs ADD COLUMN address TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE agents ADD COLUMN address TEXT",
    """CREATE TABLE agent_keys (
        key TEXT PRIMARY KEY,               -- 'key THUMBPRINT NAME'
        agent_id INTEGER NOT NULL REFERENCES agents(id)
    ) WITHOUT ROWID""",
    "CREATE INDEX agent_keys_agent ON agent_keys(agent_id)",
    """CREATE TABLE addresses (
        agent_id INTEGER NOT NULL REFERENCES agents(id),
        address TEXT NOT NULL,
        runs INTEGER NOT NULL,
        last_run INTEGER NOT NULL,
        PRIMARY KEY (agent_id, address)
    ) WITHOUT ROWID""",
    "CREATE INDEX addresses_address ON addresses(address)",
    _agents_across_addresses,
    "CREATE INDEX agents_address ON agents(address)",
)

# MIGRATIONS[v] takes a version v-1 database to version v (version 0 is an empty file).
MIGRATIONS: dict[int, tuple[str | Callable[[sqlite3.Connection], None], ...]] = {
    1: SCHEMA_V1,
    2: SCHEMA_V2,
    3: SCHEMA_V3,
    4: SCHEMA_V4,
    5: SCHEMA_V5,
}
SCHEMA_VERSION = max(MIGRATIONS)


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the history database at `path`, created or migrated as needed.

    Raises `HistoryError` (and leaves the file untouched) for anything that is not an Interview
    Explorer history this version can read, and says so plainly when the disk is full.
    """
    if path.is_dir():
        raise HistoryError(f"{path} is a folder, not a history database")
    try:
        _create_private(path)
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except (sqlite3.Error, OSError) as exc:
        raise HistoryError(f"cannot open the history at {path}: {exc}") from None
    try:
        _check_header(conn, path)
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
    return conn


def _create_private(path: Path) -> None:
    """A new history file is created empty and private, 0600, before SQLite opens it: it holds
    every agent's raw answers. SQLite gives its -wal and -shm files the database file's mode. A
    file already there is left as it is."""
    import os

    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(handle, 0o600)  # the mode given to open() is masked by the umask
    finally:
        os.close(handle)


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


def _check_header(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written, a file that is not a SQLite database at all.

    SQLite reads the header itself: reading a header writes nothing (no journal, no WAL), and the
    file is never opened by other means. Opening and closing it with plain file I/O would drop
    every POSIX lock this process's other connections hold on it (the locks belong to the
    process, and any close releases them), after which another process's connection closing
    as it believes the last one checkpoints and deletes the WAL under them: they would read a
    frozen snapshot, never seeing another runner's runs, or a malformed file."""
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        if "not a database" not in str(exc):
            raise
        raise HistoryError(
            f"{path} is not an Interview Explorer history (not a SQLite database); it was left untouched. "
            "Move it away or choose another --home."
        ) from None


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
                    if callable(statement):
                        statement(conn)
                    else:
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
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
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
