"""Where a history is: the URL `--history` takes, read, checked and opened.

- `sqlite:///PATH` or a plain path: the embedded SQLite file (`explorer.store.sqlite`). As in
  SQLAlchemy, three slashes start a relative path and four an absolute one
  (`sqlite:////var/lib/ie/history.sqlite3`); a plain path is simply that path, and an existing
  folder means the history file inside it.
- `postgresql://USER@HOST:PORT/DB?OPTIONS` (or `postgres://`): a PostgreSQL database
  (`explorer.store.postgres`, the `postgres` extra), with libpq's own query options (`sslmode`,
  `options`, `host=/run/postgresql` for a socket, ...).

A password is a secret, so it is never written in the URL: it is a reference (`env:VAR` or
`file:PATH`, in the password's place, `postgresql://USER:env:PGPASS@HOST/DB`, or as
`?password=file:/run/secrets/pg`), or libpq finds it itself (PGPASSWORD, PGPASSFILE, ~/.pgpass).
A literal password is a `StoreUrlError` (a usage error) whose message does not repeat the URL.
The reference is resolved by the caller (the secret rules live above the store) and handed to
`open_store` as `password`. `StoreLocation.shown` is what may be printed: scheme, user, host,
port and database, never a password and never the query.

Nothing here connects anywhere until `open_store`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from explorer.core.when import utc_now
from explorer.store.base import HistoryError, HistoryStore

INSTALL_POSTGRES = "pip install 'interview-explorer[postgres]'"
_POSTGRES_SCHEMES = ("postgresql", "postgres")


class StoreUrlError(ValueError):
    """A history URL that cannot be used as written (a usage error); str() says why."""


@dataclass(frozen=True)
class StoreLocation:
    kind: str  # "sqlite" or "postgresql"
    shown: str  # safe to print
    path: Path | None = None  # sqlite: the file
    conninfo: str | None = None  # postgresql: the URL without any password
    password_ref: str | None = None  # postgresql: env:VAR or file:PATH, resolved by the caller


def _is_reference(text: str) -> bool:
    kind, sep, rest = text.partition(":")
    return bool(sep) and kind in ("env", "file") and bool(rest)


def _literal_password() -> StoreUrlError:
    return StoreUrlError(
        "the history URL holds a password; it is never written there (it would land in shell "
        "history, process listings and config files). Name it instead: USER:env:VAR@HOST or "
        "?password=file:PATH in the URL, or libpq's PGPASSWORD / PGPASSFILE / ~/.pgpass"
    )


def parse_location(text: str) -> StoreLocation:
    """Read a history URL or path; StoreUrlError when it cannot be one."""
    given = text.strip()
    if not given:
        raise StoreUrlError("the history URL is empty")
    scheme = given.split("://", 1)[0].lower() if "://" in given else ""
    if not scheme:
        path = Path(given).expanduser()
        if path.is_dir():
            from explorer.store.sqlite_schema import HISTORY_FILE

            path = path / HISTORY_FILE
        return StoreLocation("sqlite", str(path), path=path)
    if scheme == "sqlite":
        rest = given.split("://", 1)[1]
        if not rest.startswith("/") or rest == "/":
            raise StoreUrlError("a SQLite history URL is sqlite:///RELATIVE/PATH or sqlite:////ABSOLUTE/PATH")
        path = Path(unquote(rest[1:])).expanduser()
        return StoreLocation("sqlite", str(path), path=path)
    if scheme in _POSTGRES_SCHEMES:
        return _postgres(given)
    raise StoreUrlError(
        f"a history URL starts with sqlite:/// or postgresql://, not {scheme[:20]}:// (or give a plain path)"
    )


def _postgres(given: str) -> StoreLocation:
    try:
        parts = urlsplit(given)
        port = parts.port
    except ValueError:
        raise StoreUrlError(
            "the PostgreSQL history URL is malformed (postgresql://USER@HOST:PORT/DB)"
        ) from None
    reference = None
    if parts.password is not None:
        password = unquote(parts.password)
        if not _is_reference(password):
            raise _literal_password()
        reference = password
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = []
    for key, value in query:
        if key == "password":
            if not _is_reference(value):
                raise _literal_password()
            reference = value
        elif key == "sslpassword" and not _is_reference(value):
            raise _literal_password()
        else:
            kept.append((key, value))
    user = unquote(parts.username) if parts.username else None
    host = parts.hostname or ""
    netloc = quote(user, safe="") + "@" if user else ""
    netloc += f"[{host}]" if ":" in host else quote(host, safe="")
    if port is not None:
        netloc += f":{port}"
    conninfo = urlunsplit(("postgresql", netloc, parts.path, urlencode(kept), ""))
    shown = urlunsplit(("postgresql", netloc, parts.path, "", ""))
    return StoreLocation("postgresql", shown, conninfo=conninfo, password_ref=reference)


def postgres_available() -> bool:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return False
    return True


def open_store(
    where: str | StoreLocation | None = None,
    *,
    home: str | Path | None = None,
    clock: Callable[[], datetime] = utc_now,
    password: str | None = None,
) -> HistoryStore:
    """Open the history `where` names (None: the SQLite file in the explorer home), creating or
    migrating it as needed. `password`: the resolved `password_ref`. Raises StoreUrlError (a
    usage error) or HistoryError (a history that cannot be used, exit 6)."""
    from explorer.store.sqlite import SqliteHistory

    if where is None:
        return SqliteHistory.open(home, clock)
    location = where if isinstance(where, StoreLocation) else parse_location(where)
    if location.kind == "sqlite":
        assert location.path is not None
        return SqliteHistory.open_file(location.path, clock)
    if not postgres_available():
        raise StoreUrlError(f"a PostgreSQL history needs the postgres extra: {INSTALL_POSTGRES}")
    if location.password_ref is not None and password is None:
        raise HistoryError(f"the password of {location.shown} ({location.password_ref}) was not resolved")
    from explorer.store.postgres import PostgresHistory

    assert location.conninfo is not None
    return PostgresHistory(location.conninfo, location.shown, password=password, clock=clock)
