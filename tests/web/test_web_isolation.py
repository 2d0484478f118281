"""A served session runs the explorer and nothing else, wherever `serve` is started from.

Each browser session is a Python process of its own. Started as `python -m ...` from the folder
`serve` was started in, it put that folder first on its import path: a `textual/` (or
`explorer/`, or `sitecustomize.py`) planted there ran inside every session, with the session's
credentials in its environment; `PYTHONPATH` did the same from anywhere. The served tests plant
such code, each piece appending to a marker file when imported, start the real `serve` there (as
a user does, through the installed `interview-explorer` script, so the server itself is not what
imports them), open a session over the WebSocket and prove that it works and that no session
imported any of it. Paths given relative to where `serve` was started still mean what they say.
The fast tests check the pieces: the command a session starts with, its environment, the options
made absolute.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.commands.serve import anchored_options
from explorer.config.file import AgentConfig, Config
from explorer.store.location import open_store
from explorer.web import session_process
from explorer.web.environment import session_environment
from explorer.web.session_process import session_command
from tests.support.paths import DATA, REPO
from tests.support.web import Served, environ, has_proc, wait_until

SERVED = (
    pytest.mark.slow,  # a server process, and a Python process per session
    pytest.mark.timeout(240),
    pytest.mark.skipif(not has_proc(), reason="reads child processes from /proc (Linux)"),
)


def served(test: object) -> object:
    """The marks of a test against a running `serve`."""
    for mark in SERVED:
        test = mark(test)
    return test


SCRIPT = Path(sys.executable).parent / "interview-explorer"
SESSION_ENV = "INTERVIEW_EXPLORER_SESSION"


def _planting(marker: Path, name: str) -> str:
    """Code that appends who imported it to `marker`: a session (the launch in its environment)
    or another process."""
    return (
        "import os\n"
        f"with open({str(marker)!r}, 'a') as _f:\n"
        f"    _f.write({name!r} + (' session' if {SESSION_ENV!r} in os.environ else ' other') + "
        "' ' + str(os.getpid()) + '\\n')\n"
    )


def _plant(folder: Path, marker: Path, packages: tuple[str, ...] = ("textual", "explorer")) -> None:
    """`packages` and a `sitecustomize.py` in `folder`, each writing to `marker` when imported."""
    folder.mkdir(parents=True)
    for package in packages:
        (folder / package).mkdir()
        (folder / package / "__init__.py").write_text(_planting(marker, package))
    (folder / "sitecustomize.py").write_text(_planting(marker, "sitecustomize"))


def _start(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> Served:
    """`interview-explorer serve --port 0 ARGV` started in `cwd` as a user starts it (the script,
    whose import path does not hold `cwd`); the URL it printed."""
    process = subprocess.Popen(
        [str(SCRIPT), "serve", "--port", "0", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(cwd / "serve-stderr.txt").open("wb"),
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode().strip()
    if not line.startswith("http://"):
        process.kill()
        process.wait()
        raise AssertionError(f"no URL printed: {line!r}\n{(cwd / 'serve-stderr.txt').read_text()}")
    return Served(process, line, cwd / "serve-stderr.txt")


@pytest.fixture
def started() -> Iterator[list[Served]]:
    servers: list[Served] = []
    yield servers
    for served in servers:
        assert served.stop() == 0, served.stderr()


def _open_session(served: Served, wanted: str = "Interview Explorer") -> dict[str, object]:
    """Open one session, wait until the explorer has drawn `wanted`; what its process was."""

    async def look() -> dict[str, object]:
        async with served.session() as terminal:
            await terminal.wait_for(wanted)
            (pid,) = wait_until(served.children, what="a session process")
            return {
                "environment": environ(pid),
                "cwd": os.readlink(f"/proc/{pid}/cwd"),
                "argv": Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"),
            }

    seen = asyncio.run(look())
    wait_until(lambda: served.children() == [], what="the session to end")
    return seen


@served
@pytest.mark.skipif(not SCRIPT.is_file(), reason="the interview-explorer script is not installed here")
def test_code_planted_where_serve_starts_or_on_pythonpath_never_runs_in_a_session(
    tmp_path: Path, started: list[Served]
) -> None:
    here, elsewhere, marker = tmp_path / "here", tmp_path / "on-pythonpath", tmp_path / "imported.txt"
    _plant(here, marker)
    _plant(elsewhere, marker, packages=())  # the server, which obeys PYTHONPATH, imports it too
    hostile = {
        "PYTHONPATH": str(elsewhere),
        "PYTHONSTARTUP": str(elsewhere / "sitecustomize.py"),
        "PYTHONUSERBASE": str(elsewhere),
    }
    # The server obeys the environment it was given (it is the user's); a session must not.
    served = _start(here, env=hostile)
    started.append(served)
    seen = _open_session(served)

    written = marker.read_text().splitlines() if marker.exists() else []
    assert not [line for line in written if " session " in line], written
    environment = seen["environment"]
    assert isinstance(environment, dict)
    assert not [name for name in environment if name.startswith("PYTHON")], sorted(environment)
    assert Path(str(seen["cwd"])).resolve() != here.resolve()
    assert not (Path(str(seen["cwd"])) / "textual").exists()  # a folder of its own, with nothing planted


@served
def test_a_session_started_from_the_explorer_s_own_checkout_works(
    tmp_path: Path, started: list[Served]
) -> None:
    """The folder holding an (editable) clone of the explorer: a session imports the installed
    explorer and its dependencies, not whatever that folder holds."""
    served = _start_in(REPO, tmp_path)
    started.append(served)
    seen = _open_session(served)
    assert Path(str(seen["cwd"])).resolve() != REPO.resolve()


def _start_in(cwd: Path, scratch: Path) -> Served:
    """`serve` started in `cwd` (which this test must not write to: its stderr goes to `scratch`)."""
    process = subprocess.Popen(
        [sys.executable, "-P", "-m", "explorer", "serve", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(scratch / "serve-stderr.txt").open("wb"),
        cwd=cwd,
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode().strip()
    assert line.startswith("http://"), (scratch / "serve-stderr.txt").read_text()
    return Served(process, line, scratch / "serve-stderr.txt")


@served
def test_relative_paths_given_to_serve_are_read_from_where_it_was_started(
    tmp_path: Path, started: list[Served]
) -> None:
    """The session runs in a folder of its own, so what `serve` was given relative to its own
    folder (a card file, a key file, a history file, `--home`, a `file:` secret) is handed over as
    the absolute path it named."""
    here = tmp_path / "here"
    (here / "cards").mkdir(parents=True)
    shutil.copy(DATA / "steady-card.json", here / "cards" / "steady-card.json")
    shutil.copy(DATA / "steady-keys.jwks", here / "keys.jwks")
    (here / "token.txt").write_text("a-bearer-token-from-a-file\n")
    (here / "home").mkdir()
    (here / "home" / "config.toml").write_text('runner = "runner-of-the-relative-home"\n')
    served = _start(
        here,
        "cards/steady-card.json",
        "--keys",
        "keys.jwks",
        "--history",
        "kept/history.sqlite3",
        "--home",
        "home",
        "--bearer",
        "file:token.txt",
    )
    started.append(served)
    _open_session(served, "steady")
    with open_store(str(here / "kept" / "history.sqlite3")) as history:
        runs = history.runs()
    assert [run.runner for run in runs] == ["runner-of-the-relative-home"], runs


# --- the pieces, without a server ------------------------------------------------------------------


def test_a_session_starts_an_isolated_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_process, "_user_site_in_use", lambda: None)
    assert session_command("explorer.tui.served") == (sys.executable, "-I", "-m", "explorer.tui.served")


@pytest.mark.slow  # a Python process
def test_an_explorer_in_the_user_site_packages_is_found_and_nothing_else_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pip install --user`: `-I` leaves the user's site-packages out, so the session adds the one
    this process uses (its `.pth` files included), and still not its working folder."""
    user_site, here = tmp_path / "user-site", tmp_path / "here"
    (user_site / "installed").mkdir(parents=True)
    (user_site / "installed.pth").write_text(str(user_site / "installed") + "\n")
    (user_site / "installed" / "probe_module.py").write_text(
        "import sys\nprint(repr(sys.argv[1:]), '' in sys.path, any('here' in p for p in sys.path))\n"
    )
    here.mkdir()
    (here / "probe_module.py").write_text("print('the working folder was imported')\n")
    monkeypatch.setattr(session_process, "_user_site_in_use", lambda: str(user_site))
    command = session_command("probe_module")
    assert command[:3] == (sys.executable, "-I", "-c")
    done = subprocess.run(
        [*command, "--check"],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(here)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['--check']", "False", "False"]


def test_no_variable_python_reads_reaches_a_session_even_when_a_setting_names_it() -> None:
    server = {
        "PATH": "/usr/bin",
        "PYTHONPATH": "/planted",
        "PYTHONHOME": "/planted",
        "PYTHONSTARTUP": "/planted/x.py",
        "PYTHONSAFEPATH": "1",
        "PYTHONUSERBASE": "/planted",
        "pythonpath": "/planted",
        "TOKEN": "kept",
    }
    env = session_environment(server, {"PYTHONPATH", "TOKEN"}, {"PYTHONHOME": "/planted"})
    assert env == {"PATH": "/usr/bin", "TOKEN": "kept"}


def test_relative_paths_are_made_absolute_and_urls_and_names_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "card.json").write_text("{}")
    (tmp_path / "stonework").write_text("{}")  # a file named like a configured agent
    config = Config(agents={"stonework": AgentConfig("stonework", "https://stonework.example")})
    options = {
        "target": "card.json",
        "home": "home",
        "from_": "list.txt",
        "history": "kept/h.sqlite3",
        "keys": ["keys.jwks", "https://keys.example/jwks.json", "/etc/abs.jwks"],
        "bearer": "file:token.txt",
        "api_key": "env:API_KEY",
        "oauth2_client_secret": "file:/abs/secret",
        "runner": "me",
    }
    out = anchored_options(options, config)
    assert out == {
        "target": str(tmp_path / "card.json"),
        "home": str(tmp_path / "home"),
        "from_": str(tmp_path / "list.txt"),
        "history": str(tmp_path / "kept" / "h.sqlite3"),
        "keys": [str(tmp_path / "keys.jwks"), "https://keys.example/jwks.json", "/etc/abs.jwks"],
        "bearer": f"file:{tmp_path / 'token.txt'}",
        "api_key": "env:API_KEY",
        "oauth2_client_secret": "file:/abs/secret",
        "runner": "me",
    }
    for kept in ("stonework", "https://agent.example", "12", "missing-card.json"):
        assert anchored_options({"target": kept}, config)["target"] == kept
    for history in ("postgresql://u@db/h", f"sqlite:///{tmp_path}/abs.sqlite3", "sqlite:///rel.sqlite3"):
        expected = str(tmp_path / "rel.sqlite3") if history.endswith("/rel.sqlite3") else history
        assert anchored_options({"history": history}, config)["history"] == expected
