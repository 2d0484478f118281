"""`-q` means the same on `verify`, `replay` and `watch` (`watch --from` too): nothing on stderr but
warnings and errors. And without it, `verify` keeps its per-request progress to a terminal: a CI
log (stderr a pipe) gets the notes of a run, not twenty-odd `ask: ... HTTP 200 in 7 ms` lines per
agent; a terminal gets them on one status line, rewritten in place and cleared before the report.

Every command runs as a user runs it, in its own process, against the reference agents served by
another process (`demo --serve`), with a home of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.demo_serve import DemoServe, demo_serve
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # a process per command, and the agents in another

REQUEST_LINE = "HTTP 200 in"  # how a request's outcome reads: `[1] ask: identity#1: HTTP 200 in 7 ms`


@pytest.fixture(scope="module")
def served() -> Iterator[DemoServe]:
    with demo_serve("--port", "0", "--only", "steady", "drifting") as agents:
        yield agents


def _cli(home: Path, *argv: str, stderr: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=60,
    )  # fmt: skip


def test_verify_writes_no_request_lines_to_a_log(served: DemoServe, tmp_path: Path) -> None:
    """stderr a pipe: the notes of the run and where it was recorded, a handful of lines, no
    status line's control characters."""
    done = _cli(tmp_path, "verify", served.url("steady"), "--allow-jku", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["verdict"] == "conformant"
    lines = done.stderr.splitlines()
    assert REQUEST_LINE not in done.stderr and "\x1b" not in done.stderr and "\r" not in done.stderr
    assert any(line.startswith("[1] card: card from ") for line in lines), done.stderr
    assert lines[-1] == "interview-explorer verify: recorded as run 1"
    assert len(lines) <= 5, done.stderr


def test_verify_shows_the_requests_on_one_terminal_line(served: DemoServe, tmp_path: Path) -> None:
    """stderr a terminal (stdout still a pipe): each request's outcome rewrites one status line,
    which is cleared before anything else is said; the notes stay as lines."""
    import pty

    controller, terminal = pty.openpty()
    try:
        done = _cli(tmp_path, "verify", served.url("steady"), "--allow-jku", "--json", stderr=terminal)
        os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end is closed and everything was read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(controller)
    text = said.decode("utf-8", errors="replace")
    assert done.returncode == 0 and json.loads(done.stdout)["verdict"] == "conformant"
    status_updates = text.count("\r\x1b[K[1] ")
    assert status_updates >= 15, text  # ten asks, five probes, the key set, the proposals
    assert "\r\x1b[K[1] ask: identity#1: HTTP 200 in" in text
    # Cleared before the next note or message: the last line said is whole, at column 0.
    assert text.rstrip("\r\n").endswith("\r\x1b[Kinterview-explorer verify: recorded as run 1"), text[-200:]
    permanent = [line.rsplit("\x1b[K", 1)[-1] for line in text.replace("\r\n", "\n").split("\n") if line]
    assert not any(REQUEST_LINE in line for line in permanent), permanent


def test_quiet_is_the_same_on_replay_and_watch(served: DemoServe, tmp_path: Path) -> None:
    steady = served.url("steady")
    first = _cli(tmp_path, "verify", steady, "--allow-jku", "-q")
    assert first.returncode == 0 and first.stderr == "", first.stderr

    loud = _cli(tmp_path, "replay", "1", "--allow-jku")
    assert loud.returncode == 0 and "replaying run 1" in loud.stderr and "recorded as run 2" in loud.stderr
    for flag in ("-q", "--quiet"):
        quiet = _cli(tmp_path, "replay", "1", "--allow-jku", flag)
        assert quiet.returncode == 0, quiet.stderr
        assert quiet.stderr == "" and "since run 1" in quiet.stdout

    watch_loud = _cli(tmp_path, "watch", steady, "--every", "0.1", "--count", "1", "--allow-jku")
    assert watch_loud.returncode == 0 and watch_loud.stderr.startswith("watching "), watch_loud.stderr
    watched = _cli(tmp_path, "watch", steady, "--every", "0.1", "--count", "1", "--allow-jku", "-q")
    assert watched.returncode == 0 and watched.stderr == "", watched.stderr
    assert len(watched.stdout.splitlines()) == 1  # the tick's line, on stdout as without -q

    by_run = _cli(
        tmp_path, "watch", "1", "--every", "0.1", "--count", "1", "--allow-jku", "-q", "--no-history"
    )
    assert by_run.returncode == 0 and by_run.stderr == "", by_run.stderr

    listed = tmp_path / "agents.txt"
    listed.write_text(f"{steady}\n{served.url('drifting')}\n", encoding="utf-8")
    swept = _cli(
        tmp_path, "watch", "--from", str(listed), "--every", "0.1", "--count", "1", "--allow-jku", "-q"
    )
    assert swept.returncode == 1 and "sweep 1: 2 agents" in swept.stdout  # drifting is nonconformant
    assert swept.stderr == "", swept.stderr


def test_quiet_still_says_what_went_wrong(served: DemoServe, tmp_path: Path) -> None:
    """A replay of a run that does not exist, a watch whose history is a file: said under -q."""
    missing = _cli(tmp_path, "replay", "7", "-q")
    assert missing.returncode == 6 and "7" in missing.stderr
    unusable = tmp_path / "home-is-a-file"
    unusable.write_text("", encoding="utf-8")
    refused = _cli(unusable, "watch", served.url("steady"), "--every", "0.1", "--count", "1", "-q")
    assert refused.returncode == 6 and "the history cannot be used" in refused.stderr
