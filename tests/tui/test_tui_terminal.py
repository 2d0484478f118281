"""The README's main command in a real (pseudo-)terminal, driven by keystrokes.

Pilot tests drive the app headless; this one runs `interview-explorer demo` as a user does, in
a 120x40 pty with Textual's own Linux driver, types `ctrl+l`, `drifting`, enter, waits for the
mismatch to be drawn, then quits with `ctrl+q` and expects exit status 0 and a restored
terminal (the alternate screen left). It proves the path the issue says will be tried by hand:
the fleet starts, the screen paints, keys reach it, and quitting is clean.
"""

from __future__ import annotations

import os
import re
import select
import sys
import time
from pathlib import Path

import pytest

pty = pytest.importorskip("pty")
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

SCRIPT = Path(sys.executable).parent / "interview-explorer"
CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]")

pytestmark = [
    pytest.mark.slow,  # runs the console script in a pseudo-terminal
    pytest.mark.timeout(120),
    pytest.mark.skipif(not SCRIPT.exists(), reason="the console script is not installed"),
]


class Terminal:
    """A child process on a pty, with everything it wrote kept."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 40, cols: int = 120) -> None:
        import struct

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: size its terminal, then become the program
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
                os.environ.update(env)
                os.execv(argv[0], argv)
            finally:
                os._exit(127)  # never run the test process's code in the child
        self.output = bytearray()
        self.reaped = False

    def text(self, since: int = 0) -> str:
        return CSI.sub(b"", bytes(self.output[since:])).decode("utf-8", "replace")

    def wait_for(self, needle: str, since: int = 0, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text(since):
            if time.monotonic() > deadline or not self._read(0.1):
                raise AssertionError(f"{needle!r} never appeared; last output:\n{self.text(since)[-2000:]}")

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], wait)
        if ready:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # the child closed the pty
                return False
            if not data:
                return False
            self.output.extend(data)
        return True

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def exit_status(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.1)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.reaped = True
                return os.waitstatus_to_exitcode(status)
        raise AssertionError("the explorer did not exit after ctrl+q")

    def close(self) -> None:
        if not self.reaped:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
            self.reaped = True
        os.close(self.fd)


def test_demo_in_a_terminal_reaches_driftings_mismatch_by_keys_and_quits_cleanly(tmp_path: Path) -> None:
    env = {"INTERVIEW_EXPLORER_HOME": str(tmp_path), "TERM": "xterm-256color"}
    terminal = Terminal([str(SCRIPT), "demo"], env)
    try:
        terminal.wait_for("Reference agents")
        terminal.wait_for("steady  expected: conformant")
        mark = len(terminal.output)
        terminal.type(b"\x0c")  # ctrl+l: the target input
        time.sleep(0.3)
        terminal.type(b"drifting\r")
        terminal.wait_for("MISMATCH", since=mark)
        shown = terminal.text(mark)
        assert "/defaultOutputModes" in shown and "✗ nonconformant" in shown
        terminal.type(b"\x11")  # ctrl+q
        assert terminal.exit_status() == 0
    finally:
        terminal.close()
    assert b"\x1b[?1049l" in terminal.output  # the alternate screen was left: the terminal is restored
