"""A history spec is read as what it is (issue 29 item 5): never a file name it only looks like.

`--history 'host=... password=PW dbname=...'` (libpq's keyword form) and a mistyped PostgreSQL
URL (`postgresql:user:PW@host/db`, `postgres//...`, `postgresq://...`, `user:PW@host/db`) used to
become a SQLite file whose name held the password, in the working directory, and messages printed
it. Each is run here through the command line as a user runs it (a subprocess, in an empty
working directory): a literal password is a usage error (2) that never repeats it, a typo says
"did you mean postgresql://", and no file appears. A keyword string without a password is a
PostgreSQL history like its URL form, proven against a real server (`tests/support/postgres.py`),
with its password named by reference (`password=env:VAR`) too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from explorer.store.location import StoreUrlError, parse_location
from tests.support.paths import DATA

PW = "Pw-s3cr3t-9q"


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty working directory: whatever a command creates in it shows."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


WITH_PASSWORD = [
    f"host=db.example port=5432 password={PW} dbname=evidence user=runner",
    f"host=db.example dbname=evidence password='{PW} x'",
    f"dbname=evidence sslpassword={PW}",
    f"postgresql:runner:{PW}@db.example/evidence",
    f"postgres//runner:{PW}@db.example:5432/evidence",
    f"postgresq://runner:{PW}@db.example/evidence",
    f"postgre://runner@db.example/evidence?password={PW}",
    f"runner:{PW}@db.example/evidence",
]


@pytest.mark.slow  # a subprocess each
@pytest.mark.parametrize("spec", WITH_PASSWORD)
def test_a_literal_password_in_any_form_is_refused_unrepeated_and_no_file_appears(
    work: Path, spec: str
) -> None:
    card = str(DATA / "steady-card.json")
    for command in (["history", "--history", spec], ["verify", card, "--history", spec]):
        code, out, err = _cli(work, *command)
        assert code == 2, (command, err)
        assert PW not in out + err, err
        assert "password" in err and "never written there" in err
        assert list(work.iterdir()) == [], list(work.iterdir())


TYPOS = {
    "postgresql:runner@db.example/evidence": "postgresql://runner@db.example/evidence",
    "postgres//db.example:5433/evidence": "postgresql://db.example:5433/evidence",
    "postgresq://runner@db.example/evidence": "postgresql://runner@db.example/evidence",
    "runner@db.example:5432/evidence": "postgresql://runner@db.example:5432/evidence",
}


@pytest.mark.slow  # a subprocess each
@pytest.mark.parametrize("spec", TYPOS)
def test_a_mistyped_scheme_is_a_usage_error_that_says_what_was_meant(work: Path, spec: str) -> None:
    code, out, err = _cli(work, "history", "--history", spec)
    assert code == 2 and out == "", err
    assert f"did you mean {TYPOS[spec]}" in err
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("spec", WITH_PASSWORD)
def test_the_store_refuses_them_too_and_says_nothing_of_the_password(spec: str) -> None:
    with pytest.raises(StoreUrlError) as refused:
        parse_location(spec)
    assert PW not in str(refused.value) and "env:VAR" in str(refused.value)


def test_a_keyword_string_without_a_password_is_a_postgresql_location() -> None:
    plain = parse_location("host=db.example port=5433 dbname=evidence user=runner sslmode=require")
    assert plain.kind == "postgresql" and plain.path is None
    assert plain.shown == "postgresql://runner@db.example:5433/evidence"
    assert plain.conninfo == "host=db.example port=5433 dbname=evidence user=runner sslmode=require"
    named = parse_location("host=db dbname='my history' user=runner password=env:IE_PG")
    assert named.password_ref == "env:IE_PG" and "password" not in (named.conninfo or "")
    assert named.conninfo == "host=db dbname='my history' user=runner"
    for broken in ("host=db 'dbname'=x", "host=db dbname='unclosed", "host=db nonsense=1"):
        with pytest.raises(StoreUrlError, match="postgresql://"):
            parse_location(broken)


def test_paths_that_only_look_odd_are_still_paths(tmp_path: Path) -> None:
    for path in ("C:/h/h.sqlite3", "data/history.sqlite3", "me@work/h.sqlite3", str(tmp_path / "x=y")):
        assert parse_location(path).kind == "sqlite", path


def _record(server: Any, work: Path, spec: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One run recorded into `spec` (a card file whose interface is down), then listed from it."""
    code, out, err = _cli(
        work,
        "verify",
        str(DATA / "steady-card.json"),
        "--timeout",
        "1",
        "--reruns",
        "0",
        "--history",
        spec,
        env=env,
    )
    assert code == 3, err  # the card's interface is not reachable from here: unreachable, and recorded
    code, out, err = _cli(work, "history", "--history", spec, "--json", env=env)
    assert code == 0, err
    return {"runs": [json.loads(line) for line in out.splitlines() if line.strip()], "stderr": err}


@pytest.mark.slow  # a PostgreSQL server and subprocesses
def test_a_keyword_string_reaches_a_real_postgresql_and_names_its_password_by_reference(
    postgres_server: Any, work: Path
) -> None:
    name = urlsplit(postgres_server.fresh_database()).path.lstrip("/")
    server = postgres_server
    spec = f"host={server.sockets} port={server.port} dbname={name} user={server.user}"
    listed = _record(postgres_server, work, spec)
    assert len(listed["runs"]) == 1, listed
    assert list(work.iterdir()) == []

    postgres_server.role("ie_keyword_role", PW)
    owned = urlsplit(postgres_server.fresh_database(owner="ie_keyword_role")).path.lstrip("/")
    spec = (
        f"host=127.0.0.1 port={postgres_server.port} dbname={owned} user=ie_keyword_role "
        "password=env:IE_KEYWORD_PW"
    )
    listed = _record(postgres_server, work, spec, env={"IE_KEYWORD_PW": PW})
    assert len(listed["runs"]) == 1, listed
    assert PW not in json.dumps(listed)
    assert list(work.iterdir()) == []
