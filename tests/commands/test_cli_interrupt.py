"""Ctrl+C (SIGINT) stops `verify`, a sweep and `watch`, also when the process inherits SIGINT
ignored: a shell without job control starts background jobs that way, and so do some CI runners,
which then cancel a job with SIGINT. Each case runs the command in a subprocess against a server
that accepts the connection and never answers, sends SIGINT once the request is on the wire, and
expects exit status 130 with a line that says the run was interrupted."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.http_server import silent_listener
from tests.support.paths import REPO

pytestmark = [
    pytest.mark.slow,  # subprocesses interrupted half way
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal dispositions"),
]

# The parent a CI runner or `sh -c 'cmd &'` is: SIGINT ignored, then exec, which keeps it ignored.
IGNORING_PARENT = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"]


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    with silent_listener() as listener:
        yield listener


def _interrupted(listener: socket.socket, *argv: str, ignoring: bool, tmp_path: Path) -> tuple[int, str, str]:
    """Run `interview-explorer ARGV`, wait until it has connected, send SIGINT, collect."""
    command = [sys.executable, "-m", "explorer", *argv]
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [*IGNORING_PARENT, *command] if ignoring else command,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    held: socket.socket | None = None
    try:
        held, _ = listener.accept()  # the request is on its way: the command is running
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if held is not None:
            held.close()
    return proc.returncode, out, err


@pytest.mark.parametrize("ignoring", [False, True], ids=["sigint-default", "sigint-inherited-ignored"])
def test_ctrl_c_stops_a_single_verify_and_says_so(
    silent: socket.socket, ignoring: bool, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
    status, out, err = _interrupted(silent, "verify", url, "--json", "--timeout", "60", ignoring=ignoring,
                                    tmp_path=tmp_path)  # fmt: skip
    assert status == 130, err
    assert out == "" and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "(interrupted)" in last and url in last, err


def test_ctrl_c_stops_a_sweep_when_sigint_is_inherited_ignored(silent: socket.socket, tmp_path: Path) -> None:
    port = silent.getsockname()[1]
    urls = [f"http://127.0.0.1:{port}/a/", f"http://127.0.0.1:{port}/b/"]
    status, _, err = _interrupted(silent, "verify", *urls, "--json", "--timeout", "60", ignoring=True,
                                  tmp_path=tmp_path)  # fmt: skip
    assert status == 130, err
    assert "swept 0/2 agents" in err and "(interrupted)" in err and "Traceback" not in err


def test_ctrl_c_stops_watch_when_sigint_is_inherited_ignored(silent: socket.socket, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
    status, _, err = _interrupted(silent, "watch", url, "--every", "60", "--timeout", "60", ignoring=True,
                                  tmp_path=tmp_path)  # fmt: skip
    assert status == 130, err
    assert "stopped after 0 runs" in err and "Traceback" not in err
