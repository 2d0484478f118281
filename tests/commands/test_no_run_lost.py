"""No run is silently lost: a history that cannot be used stops a command before anything is asked.

`verify` (one target and a sweep), `watch` (one target and a list) and `replay` open the history
they record into before the agent is asked, and a SQLite file is proven writable then too. Each
kind of history that cannot be used is made for real here: a file that is not SQLite, another
application's SQLite database, a history written by a newer version, a folder that cannot be
created, an immutable file, a PostgreSQL database holding another application's tables, and a
PostgreSQL server that does not answer. Each is refused with exit status 6, nothing on stdout, and
the agent (a real server on 127.0.0.1 that counts what it is asked) is never asked anything.

After the interview, a history that goes away (the PostgreSQL server stopped while the agent
answers slowly; a file size limit that lets the history open but not grow) costs the run, never
silently: the verdict is printed, the loss is said, and the status is 6; a sweep says how many of
its runs were not recorded.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from explorer.cli import main
from explorer.store.sqlite import History
from explorer.store.sqlite_schema import HISTORY_FILE, SCHEMA_VERSION
from tests.support.http_server import base_url, serving
from tests.support.paths import REPO
from tests.support.runs import make_run

pytestmark = pytest.mark.slow  # the commands against real servers, some in subprocesses

VERDICTS = {"conformant", "nonconformant", "unreachable", "not_offered", "churn"}


class Counting(BaseHTTPRequestHandler):
    """An agent that must not be asked: counts every request and answers 404."""

    asked: ClassVar[list[str]] = []

    def _count(self) -> None:
        Counting.asked.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _count

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def agent() -> Iterator[str]:
    Counting.asked = []
    with serving(Counting) as server:
        yield base_url(server) + "/"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _commands(agent: str, history: str, home: Path, run_id: int = 1) -> dict[str, list[str]]:
    """Every command that records runs, each pointed at `history`."""
    listed = home / "agents.txt"
    listed.write_text(f"{agent}\n{agent}other\n", encoding="utf-8")
    where = ["--history", history, "--home", str(home)]
    return {
        "verify": ["verify", agent, "--timeout", "2", *where],
        "verify, a sweep": ["verify", agent, agent + "other", "--timeout", "2", *where],
        "watch": ["watch", agent, "--every", "1", "--count", "1", "--timeout", "2", *where],
        "watch --from": [
            "watch",
            "--from",
            str(listed),
            "--every",
            "1",
            "--count",
            "1",
            "--timeout",
            "2",
            *where,
        ],
        "replay": ["replay", str(run_id), "--timeout", "2", *where],
    }


def _refused_before_anything_is_asked(
    capsys: pytest.CaptureFixture[str], agent: str, history: str, home: Path, why: str
) -> None:
    for name, argv in _commands(agent, history, home).items():
        code, out, err = _cli(capsys, *argv)
        assert code == 6, (name, code, err)
        assert out == "", (name, out)
        # replay reads the run it repeats first, so a history file that is not there is that
        assert why in err or (name == "replay" and "does not exist" in err), (name, err)
        assert "Traceback" not in err
        assert Counting.asked == [], (name, Counting.asked)


# --- SQLite files that cannot be used ------------------------------------------------------------


def _not_sqlite(path: Path) -> str:
    path.write_bytes(b"these are somebody's notes, not a database\n" * 20)
    return "not a SQLite database"


def _another_application(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('precious')")
    conn.close()
    return "another application"


def _newer_version(path: Path) -> str:
    with History.open_file(path) as history:
        history.record(make_run())
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    return "newer Interview Explorer"


def _folder_in_the_way(path: Path) -> str:
    path.parent.rmdir()
    path.parent.write_text("a file where the history's folder would be", encoding="utf-8")
    return "cannot use"


UNUSABLE: dict[str, Callable[[Path], str]] = {
    "not SQLite": _not_sqlite,
    "another application's database": _another_application,
    "a newer version's history": _newer_version,
    "a file where its folder would be": _folder_in_the_way,
}


@pytest.mark.parametrize("make", UNUSABLE.values(), ids=list(UNUSABLE))
def test_a_sqlite_history_that_cannot_be_used_is_refused_before_anything_is_asked(
    make: Callable[[Path], str], agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "histories"
    folder.mkdir()
    path = folder / HISTORY_FILE
    why = make(path)
    before = path.read_bytes() if path.is_file() else None
    _refused_before_anything_is_asked(capsys, agent, str(path), tmp_path, why)
    if before is not None:
        assert path.read_bytes() == before  # left untouched


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """`chattr +i` on a file (undone at the end): not even root may write it. Skipped where the
    filesystem or the process cannot set the flag."""
    marked: list[Path] = []

    def mark(path: Path) -> None:
        try:
            done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, timeout=10)
        except OSError as exc:
            pytest.skip(f"chattr is not available: {exc}")
        if done.returncode != 0:
            pytest.skip(f"cannot make a file immutable here: {done.stderr.strip()}")
        marked.append(path)

    yield mark
    for path in marked:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, timeout=10)


def test_a_history_file_that_cannot_be_written_is_refused_before_anything_is_asked(
    agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], immutable: Callable[[Path], None]
) -> None:
    """It opens and reads as ever (its runs are listed), so only a write finds it out; the first
    run would have been lost after its interview."""
    path = tmp_path / HISTORY_FILE
    with History.open_file(path) as history:
        history.record(make_run())
    immutable(path)
    code, out, _ = _cli(capsys, "history", "--history", str(path))
    assert code == 0 and len(out.splitlines()) >= 1  # readable
    _refused_before_anything_is_asked(capsys, agent, str(path), tmp_path, "cannot be written")


# --- PostgreSQL ---------------------------------------------------------------------------------------


def test_a_postgresql_database_that_is_not_a_history_is_refused_before_anything_is_asked(
    postgres_server: Any, agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = postgres_server.fresh_database()
    database = url.split("?")[0].rsplit("/", 1)[1]
    postgres_server.psql("CREATE TABLE notes (text text); INSERT INTO notes VALUES ('precious')", database)
    _refused_before_anything_is_asked(capsys, agent, url, tmp_path, "not an Interview Explorer history")
    assert postgres_server.psql("SELECT text FROM notes", database).strip() == "precious"


def test_a_postgresql_server_that_does_not_answer_is_refused_before_anything_is_asked(
    agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    url = f"postgresql://runner@127.0.0.1:{port}/history"
    _refused_before_anything_is_asked(capsys, agent, url, tmp_path, "cannot connect to the history")


# --- after the interview: the history went away --------------------------------------------------------


def _verify_process(argv: list[str], *, limit: int | None = None) -> subprocess.Popen[str]:
    def limited() -> None:  # in the child, before exec: files may not grow past `limit` bytes
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.Popen(
        [sys.executable, "-m", "explorer", "verify", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        preexec_fn=limited if limit is not None else None,
    )


def test_a_postgresql_server_stopped_during_the_interview_costs_the_run_with_status_6(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The history opens before the agent is asked; the server is stopped while the agent takes
    its time; the verdict is still printed, the loss said, and the status is 6 (it was 0 before:
    a CI job recording into a team store stayed green while recording nothing)."""
    from explorer.demo.slow import SlowAgent
    from tests.support.postgres import start_server

    server, reason = start_server(tmp_path_factory.mktemp("pg-stopped"))
    if server is None:
        pytest.skip(reason)
    stopped = False
    try:
        url = server.fresh_database()
        SlowAgent.seen = []
        SlowAgent.delay = 0.4
        with serving(SlowAgent) as slow:
            SlowAgent.prepare(base_url(slow))
            target = f"{base_url(slow)}/answers/.well-known/agent-card.json"
            process = _verify_process([target, "--json", "--history", url, "--timeout", "5", "--reruns", "0"])
            deadline = time.monotonic() + 60
            while not SlowAgent.seen and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.02)
            assert SlowAgent.seen, "the agent was never asked"
            server.stop()  # the history opened before the first request; now it is gone
            stopped = True
            out, err = process.communicate(timeout=120)
    finally:
        if not stopped:
            server.stop()
    assert process.returncode == 6, err
    assert json.loads(out)["verdict"] in VERDICTS  # the verdict, printed all the same
    assert "the run was not recorded in the history" in err, err
    assert "Traceback" not in err


# Above the 32 KiB shared-memory file a WAL database needs to be opened, far below the write-ahead
# log a new run needs: the history opens (and passes the write check, a write rolled back), then
# cannot keep a run (tests/store/test_faults_history.py uses the same limit).
WAL_ROOM = 32 * 1024 + 4096


def test_a_sweep_whose_runs_cannot_be_recorded_says_how_many_and_exits_6(agent: str, tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    with History.open_file(path) as history:
        history.record(make_run())
        history._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert path.stat().st_size > WAL_ROOM
    argv = [agent, agent + "other", "--history", str(path), "--timeout", "2"]
    process = _verify_process(argv, limit=WAL_ROOM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 6, err
    assert len(out.splitlines()) == 2 and all(line.startswith("unreachable") for line in out.splitlines())
    assert "2 runs of 2 were not recorded in the history" in err, err
    assert len(Counting.asked) >= 2  # asked, then lost, and said
    with History.open_file(path) as history:
        assert len(history.runs()) == 1  # only the run that was there before
