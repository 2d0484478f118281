"""The embedded history: one SQLite file under the explorer home (`History`, the default store).

Shape, and why:

- What a history does is written once, in `explorer.store.sql` (the `HistoryStore` interface of
  `explorer.store.base`); this module says how SQLite connects and runs a transaction. The file
  format and its migrations are `explorer.store.sqlite_schema`; the document codec is `codec`.
- One transaction per run (`BEGIN IMMEDIATE` with a busy timeout), so a process killed at any
  moment leaves either the whole run or none of it, and two processes recording at once simply
  take turns. The connection is shared between threads behind one lock; a query being consumed
  holds it only while it fetches a page.
- Every SQLite error becomes a `HistoryError` whose text a person can act on.

SQLite's own rule applies: every process using one file must be on one host. A history shared
by several machines is a PostgreSQL store (`explorer.store.postgres`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from explorer.core.when import utc_now
from explorer.store.base import (
    AgentSummary,
    ChangeMark,
    FleetSummary,
    HistoryError,
    HistoryStore,
    RunQuery,
    RunSummary,
    agent_of,
)
from explorer.store.sql import Conn, SqlHistory
from explorer.store.sqlite_schema import HISTORY_FILE, connect, rollback

__all__ = [
    "HISTORY_FILE",
    "AgentSummary",
    "ChangeMark",
    "FleetSummary",
    "History",
    "HistoryStore",
    "RunQuery",
    "RunSummary",
    "SqliteHistory",
    "agent_of",
]

T = TypeVar("T")


class SqliteHistory(SqlHistory):
    """The run history in one SQLite file. Open with `History.open(home)`; safe to share between threads."""

    kind = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: Path, clock: Callable[[], datetime] = utc_now) -> None:
        super().__init__(str(path), clock)
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()

    # --- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(cls, home: Path | str | None = None, clock: Callable[[], datetime] = utc_now) -> SqliteHistory:
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
    def open_file(cls, path: Path | str, clock: Callable[[], datetime] = utc_now) -> SqliteHistory:
        """Open the history database at exactly this path (its folder is created if needed, private
        to the user: `explorer.home.private_folder`)."""
        from explorer.home import private_folder

        path = Path(path).expanduser()
        try:
            private_folder(path.parent)
        except OSError as exc:
            raise HistoryError(f"cannot use {path.parent} as the history folder: {exc}") from None
        return cls(connect(path), path, clock)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- transactions ----------------------------------------------------------------------------

    def _transaction(self, work: Callable[[Conn], T], *, what: str, strict: bool = False) -> T:
        # One writer at a time holds the whole file, so every transaction is already `strict`.
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise HistoryError(f"the history at {self.path} is busy or read-only: {exc}") from None
            try:
                result = work(conn)
            except sqlite3.Error as exc:
                rollback(conn)
                raise HistoryError(f"{what}: {exc}") from None
            except BaseException:
                rollback(conn)
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                rollback(conn)
                raise HistoryError(f"could not save to the history at {self.path}: {exc}") from None
        if strict:
            self._checkpoint()
        return result

    def _checkpoint(self) -> None:
        """Move forgotten pages out of the WAL too (best effort: a concurrent reader may hold it)."""
        with self._lock:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass

    @contextmanager
    def _reading(self) -> Iterator[Conn]:
        """The connection for reading, with SQLite's errors turned into a readable HistoryError."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise HistoryError(f"the history at {self.path} cannot be read: {exc}") from None

    @contextmanager
    def _snapshot(self) -> Iterator[Conn]:
        with self._reading() as conn:
            self._conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("COMMIT")

    def _sequence(self, conn: Conn) -> int:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").fetchone()
        return 0 if row is None else int(row[0])

    def _raise_sequence(self, conn: Conn, high_water: int) -> None:
        if conn.execute("SELECT 1 FROM sqlite_sequence WHERE name = 'runs'").fetchone() is None:
            conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('runs', ?)", (high_water,))
        else:
            conn.execute("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'runs'", (high_water,))

    def _file_bytes(self, conn: Conn) -> int:
        return int(
            conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        )


# The name every caller has used since the first release: the embedded store.
History = SqliteHistory
