"""Where a history is: the URL `--history` takes, read, checked and opened.

- `sqlite:///PATH` or a plain path: the embedded SQLite file (`explorer.store.sqlite`). As in
  SQLAlchemy, three slashes start a relative path and four an absolute one
  (`sqlite:////var/lib/ie/history.sqlite3`); a plain path is simply that path, and an existing
  folder means the history file inside it.
- `postgresql://USER@HOST:PORT/DB?OPTIONS` (or `postgres://`): a PostgreSQL database
  (`explorer.store.postgres`, the `postgres` extra), with libpq's own query options (`sslmode`,
  `options`, `host=/run/postgresql` for a socket, ...).

- `host=HOST dbname=DB user=USER ...`: libpq's own keyword form of a PostgreSQL connection
  string (a value in single quotes may hold spaces), read as what it is, never as a file name.

A password is a secret, so it is never written in the URL: it is a reference (`env:VAR` or
`file:PATH`, in the password's place, `postgresql://USER:env:PGPASS@HOST/DB`, or as
`?password=file:/run/secrets/pg`, or `password=env:PGPASS` in the keyword form), or libpq finds it
itself (PGPASSWORD, PGPASSFILE, ~/.pgpass). A literal password is a `StoreUrlError` (a usage
error) whose message does not repeat the URL. The reference is resolved by the caller (the secret
rules live above the store) and handed to `open_store` as `password`. `StoreLocation.shown` is
what may be printed: scheme, user, host, port and database, never a password and never the query.

A PostgreSQL URL mistyped (`postgresql:user:PW@host/db`, `postgres//host/db`, `postgresq://...`,
`user:PW@host/db` with no scheme at all) is not a file name either: it is a `StoreUrlError` that
says "did you mean postgresql://..." (naming only what `shown` would), and refuses a literal
password in it the same way. Nothing the person wrote is repeated in a message beyond what
`shown` holds, so no message prints a password.

Nothing here connects anywhere until `open_store`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from explorer.core.when import utc_now
from explorer.store.base import HistoryError, HistoryStore

INSTALL_POSTGRES = "pip install 'interview-explorer[postgres]'"
_POSTGRES_SCHEMES = ("postgresql", "postgres")
_POSTGRES_FORM = "postgresql://USER@HOST:PORT/DB"
# libpq's connection keywords (PostgreSQL 17, "Parameter Key Words"): a history that starts with
# one of them and `=` is a keyword connection string, not a file name.
_LIBPQ_KEYWORDS = frozenset(
    {
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "require_auth",
        "channel_binding",
        "connect_timeout",
        "client_encoding",
        "options",
        "application_name",
        "fallback_application_name",
        "keepalives",
        "keepalives_idle",
        "keepalives_interval",
        "keepalives_count",
        "tcp_user_timeout",
        "replication",
        "gssencmode",
        "sslmode",
        "requiressl",
        "sslcompression",
        "sslcert",
        "sslkey",
        "sslpassword",
        "sslcertmode",
        "sslrootcert",
        "sslcrl",
        "sslcrldir",
        "sslsni",
        "requirepeer",
        "ssl_min_protocol_version",
        "ssl_max_protocol_version",
        "krbsrvname",
        "gsslib",
        "gssdelegation",
        "service",
        "target_session_attrs",
        "load_balance_hosts",
    }
)
_SECRET_KEYWORDS = ("password", "sslpassword")
_KEYWORD_START = re.compile(r"\s*([A-Za-z_]+)\s*=")
_KEYWORD = re.compile(r"([A-Za-z_]+)\s*=\s*")
# `word:` (a slash or none after it) or `word//`, where a URL's scheme would be: a mistyped one
# when the word is close to a scheme the history takes. Two letters at least: `C:/x` is a path.
_SCHEME_TYPO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+)(?::/?(?!/)|//)(.+)", re.DOTALL)
# `USER:PASSWORD@HOST...` or `USER@HOST:PORT...`: a PostgreSQL URL without its scheme.
_NO_SCHEME = re.compile(r"[^/@\s]*:[^/@\s]*@|[^/@:\s]+@[^/@:\s]+:\d+(?:/|$)")
_POSTGRES_NAMES = frozenset({"postgresql", "postgres", "postgre", "pgsql", "psql", "pg"})


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


_NAME_IT = "it is never written there (it would land in shell history, process listings and config files)"


def _literal_password() -> StoreUrlError:
    return StoreUrlError(
        f"the history URL holds a password; {_NAME_IT}. Name it instead: USER:env:VAR@HOST or "
        "?password=file:PATH in the URL, or libpq's PGPASSWORD / PGPASSFILE / ~/.pgpass"
    )


def parse_location(text: str) -> StoreLocation:
    """Read a history URL, keyword connection string or path; StoreUrlError when it cannot be one."""
    given = text.strip()
    if not given:
        raise StoreUrlError("the history URL is empty")
    start = _KEYWORD_START.match(given)
    if start is not None and start.group(1).lower() in _LIBPQ_KEYWORDS:
        return _keywords(given)
    scheme = given.split("://", 1)[0].lower() if "://" in given else ""
    if not scheme:
        _refuse_mistyped(given)
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
    _refuse_mistyped(given)
    raise StoreUrlError(
        f"a history URL starts with sqlite:/// or postgresql://, not {scheme[:20]}:// (or give a plain path)"
    )


def _meant(word: str) -> str | None:
    """The scheme a mistyped `word` was probably meant to be: "postgresql", "sqlite" or None."""
    lowered = word.lower()
    if lowered in _POSTGRES_NAMES or difflib.get_close_matches(lowered, _POSTGRES_SCHEMES, n=1, cutoff=0.75):
        return "postgresql"
    if lowered in ("sqlite", "sqlite3") or difflib.get_close_matches(lowered, ("sqlite",), n=1, cutoff=0.8):
        return "sqlite"
    return None


def _refuse_mistyped(given: str) -> None:
    """StoreUrlError for a history URL whose scheme is mistyped or missing (see the module
    docstring); nothing for anything else."""
    if "://" in given:
        word, rest = given.split("://", 1)
    else:
        typo = _SCHEME_TYPO.fullmatch(given)
        word, rest = (typo.group(1), typo.group(2)) if typo is not None else ("", given)
    meant = _meant(word) if word else None
    if meant == "sqlite":
        raise StoreUrlError(
            "the history URL's scheme is mistyped; did you mean sqlite:///PATH "
            "(sqlite:////ABSOLUTE/PATH), or a plain path? (what was given is not repeated)"
        )
    if meant is None:
        if "://" in given or not _NO_SCHEME.match(given):
            return
        rest = given  # `USER:PASSWORD@HOST/DB`: the scheme left out
    candidate = "postgresql://" + rest.lstrip("/")
    if _holds_literal_password(candidate):
        raise StoreUrlError(
            f"the history URL is mistyped (did you mean {_POSTGRES_FORM}?) and holds a password; "
            f"{_NAME_IT}. Name it instead: USER:env:VAR@HOST or ?password=file:PATH in the URL, or "
            "libpq's PGPASSWORD / PGPASSFILE / ~/.pgpass"
        )
    try:
        shown = _postgres(candidate).shown
    except StoreUrlError:
        shown = _POSTGRES_FORM
    raise StoreUrlError(
        f"the history URL is mistyped; did you mean {shown} ? (a PostgreSQL history is {_POSTGRES_FORM}; "
        "what was given is not repeated)"
    )


def _holds_literal_password(url: str) -> bool:
    """True when a postgresql:// URL carries a password that is not a reference (as userinfo,
    or as `password` / `sslpassword` in its query), or cannot be read well enough to tell."""
    try:
        parts = urlsplit(url)
        password = parts.password
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return "@" in url and ":" in url.split("@", 1)[0].split("//", 1)[-1]
    if password is not None and not _is_reference(unquote(password)):
        return True
    return any(key in _SECRET_KEYWORDS and not _is_reference(value) for key, value in query)


def _keywords(given: str) -> StoreLocation:
    """libpq's keyword form (`host=db dbname=evidence user=runner`) as a PostgreSQL location: a
    literal password refused as in a URL, a `password=env:VAR` / `file:PATH` taken as the
    reference, the rest handed to libpq as written."""
    pairs = _keyword_pairs(given)
    reference = None
    kept: list[tuple[str, str]] = []
    for key, value in pairs:
        if key == "password" and value:
            if not _is_reference(value):
                raise _keyword_password()
            reference = value
        elif key == "sslpassword" and value and not _is_reference(value):
            raise _keyword_password()
        elif key != "password":
            kept.append((key, value))
    conninfo = " ".join(f"{key}={_keyword_value(value)}" for key, value in kept)
    found = dict(kept)
    user, host, port = found.get("user"), found.get("host") or found.get("hostaddr") or "", found.get("port")
    netloc = quote(user, safe="") + "@" if user else ""
    netloc += quote(host, safe="") + (f":{quote(port, safe='')}" if port else "")
    shown = urlunsplit(("postgresql", netloc, "/" + quote(found.get("dbname") or "", safe=""), "", ""))
    return StoreLocation("postgresql", shown, conninfo=conninfo, password_ref=reference)


def _keyword_password() -> StoreUrlError:
    return StoreUrlError(
        f"the history's connection string holds a password; {_NAME_IT}. Name it instead: "
        "password=env:VAR or password=file:PATH in the string, or libpq's PGPASSWORD / PGPASSFILE / "
        "~/.pgpass"
    )


def _keyword_pairs(given: str) -> list[tuple[str, str]]:
    """The (keyword, value) pairs of a libpq keyword string, read by libpq's own rules (a value
    in single quotes, `\\` escaping the next character); StoreUrlError, repeating nothing, when
    it is not one."""
    malformed = StoreUrlError(
        "the history reads as libpq's keyword form (host=HOST dbname=DB user=USER) but is not one "
        "(what was given is not repeated: it may hold a password); give it as keyword=value pairs "
        f"of libpq's keywords, or as {_POSTGRES_FORM}"
    )
    pairs: list[tuple[str, str]] = []
    at, size = 0, len(given)
    while True:
        while at < size and given[at].isspace():
            at += 1
        if at == size:
            return pairs
        match = _KEYWORD.match(given, at)
        if match is None or match.group(1) not in _LIBPQ_KEYWORDS:
            raise malformed
        at = match.end()
        value: list[str] = []
        quoted = at < size and given[at] == "'"
        at += quoted
        while at < size and (quoted or not given[at].isspace()):
            char = given[at]
            if char == "\\" and at + 1 < size:
                value.append(given[at + 1])
                at += 2
                continue
            if quoted and char == "'":
                break
            value.append(char)
            at += 1
        if quoted:
            if at >= size:
                raise malformed  # an unclosed quote
            at += 1
        pairs.append((match.group(1), "".join(value)))


def _keyword_value(value: str) -> str:
    """A value as libpq's keyword form writes it (quoted when empty or holding a space, a quote
    or a backslash)."""
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


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
