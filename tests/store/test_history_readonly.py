"""A PostgreSQL history that can be read but not written is refused before the interview (issue 29).

The contract's "no run silently lost": a history that cannot be used is exit status 6 before
anything is asked. A PostgreSQL history a role may only read (CONNECT and SELECT, no INSERT or
UPDATE), or one whose transactions are read-only by default (`ALTER DATABASE ... SET
default_transaction_read_only = on`, as a replica or a locked-down reporting database is), opens
and lists its runs like any other: only the first run recorded would fail, after its interview.
Against the test session's real server (tests/support/postgres.py): `verify --history URL` says
why, asks the agent nothing and exits 6; reading the same history still works; once writable
again, the same command records.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

from explorer.store.location import open_store
from tests.support.http_server import serving
from tests.support.paths import REPO
from tests.support.runs import make_run

pytestmark = pytest.mark.slow  # a PostgreSQL server, subprocesses

_names = itertools.count(1)


class _Counted(BaseHTTPRequestHandler):
    """An agent that counts what it is asked and has nothing (404)."""

    asked = 0

    def do_GET(self) -> None:
        type(self).asked += 1
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def agent() -> Iterator[tuple[str, type[_Counted]]]:
    handler = type("Counted", (_Counted,), {"asked": 0})
    with serving(handler) as server:
        server_: ThreadingHTTPServer = server
        yield f"http://127.0.0.1:{server_.server_address[1]}/", handler


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def _history(postgres_server: Any) -> tuple[str, str]:
    """A history with one run in it, created by the server's superuser: (URL, database name)."""
    url = postgres_server.fresh_database()
    with open_store(url) as history:
        history.record(make_run())
    return url, urlsplit(url).path.lstrip("/")


def _as_role(url: str, role: str) -> str:
    """The same database as `role` (the unix socket trusts every role of the test cluster)."""
    parts = urlsplit(url)
    return parts._replace(netloc=f"{role}@{parts.hostname or ''}").geturl()


def _refused(done: subprocess.CompletedProcess[str], asked: int) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 6, done.stderr
    assert done.stdout == ""
    assert asked == 0  # refused before the agent was asked anything
    assert "cannot be written" in done.stderr and "nothing was asked" in done.stderr, done.stderr


def test_a_role_that_may_only_read_is_refused_before_the_interview(
    postgres_server: Any, agent: tuple[str, type[_Counted]]
) -> None:
    target, counted = agent
    url, database = _history(postgres_server)
    role = f"reader{os.getpid()}_{next(_names)}"
    postgres_server.psql(f'CREATE ROLE "{role}" LOGIN')
    postgres_server.psql(f'GRANT CONNECT ON DATABASE "{database}" TO "{role}"')
    postgres_server.psql(f'GRANT USAGE ON SCHEMA public TO "{role}"', database)
    postgres_server.psql(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"', database)
    reader = _as_role(url, role)

    done = _cli("verify", target, "--timeout", "5", "--history", reader)
    _refused(done, counted.asked)
    assert "permission denied" in done.stderr, done.stderr
    assert "--history" in done.stderr  # what to do about it

    listed = _cli("history", "--json", "--history", reader)  # reading is what this role may do
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 1

    postgres_server.psql(
        f'GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO "{role}"; '
        f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "{role}"',
        database,
    )
    done = _cli("verify", target, "--timeout", "5", "--history", reader, "--json")
    assert done.returncode == 3, done.stderr  # unreachable, and recorded
    assert json.loads(done.stdout)["verdict"] == "unreachable"
    with open_store(url) as history:
        assert len(history.runs()) == 2


def test_a_role_that_may_write_but_not_draw_a_run_id_is_refused(
    postgres_server: Any, agent: tuple[str, type[_Counted]]
) -> None:
    target, counted = agent
    url, database = _history(postgres_server)
    role = f"nosequence{os.getpid()}_{next(_names)}"
    postgres_server.psql(f'CREATE ROLE "{role}" LOGIN')
    postgres_server.psql(
        f'GRANT USAGE ON SCHEMA public TO "{role}"; '
        f'GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO "{role}"',
        database,
    )
    done = _cli("verify", target, "--timeout", "5", "--history", _as_role(url, role))
    _refused(done, counted.asked)
    assert "run id sequence" in done.stderr, done.stderr


def test_a_database_read_only_by_default_is_refused_before_the_interview(
    postgres_server: Any, agent: tuple[str, type[_Counted]]
) -> None:
    target, counted = agent
    url, database = _history(postgres_server)
    postgres_server.psql(f'ALTER DATABASE "{database}" SET default_transaction_read_only = on')

    done = _cli("verify", target, "--timeout", "5", "--history", url)
    _refused(done, counted.asked)
    assert "read-only transaction" in done.stderr, done.stderr

    sweep = _cli("verify", target, target + "again", "--timeout", "5", "--history", url)  # a sweep too
    _refused(sweep, counted.asked)

    postgres_server.psql(f'ALTER DATABASE "{database}" RESET default_transaction_read_only')
    done = _cli("verify", target, "--timeout", "5", "--history", url)
    assert done.returncode == 3, done.stderr
    with open_store(url) as history:
        assert len(history.runs()) == 2
