"""`interview-explorer demo --serve` in a subprocess, as a script uses it: started, read, stopped.

`demo_serve(*args)` runs `python -m explorer demo --serve ARGS` and returns once every agent is
listening: it reads stderr up to the `demo: N agents listening ...` line, then the N
`name<TAB>card URL<TAB>expected verdict[<TAB>VAR=value...]` lines on stdout, in order. From then on
a thread keeps reading stderr (so the pipe never fills), and `wait_for_stderr` waits for a line
that comes later (the keys file, the copy-paste verify lines). `stop()` sends a signal and returns
the exit status and everything the process wrote on stderr; leaving the `with` block stops it (and
kills it when it does not stop in time).

No module of the explorer is imported here: the command is met from the outside, as the contract
audit needs it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tests.support.paths import REPO

START_WAIT = 60.0  # seconds for every agent to listen: one Python start-up and the fleet's
STOP_WAIT = 20.0


@dataclass(frozen=True)
class ServedAgent:
    """One line `demo --serve` printed for an agent."""

    name: str
    card_url: str
    verdict: str  # the verdict the reference table expects
    env: dict[str, str] = field(default_factory=dict)  # a guarded agent's demo secret(s)


class DemoServe:
    """A running `demo --serve` process and what it printed."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.agents: dict[str, ServedAgent] = {}
        self._said: list[str] = []
        self._heard = threading.Condition()
        self._reader: threading.Thread | None = None

    def url(self, name: str) -> str:
        """The card URL of agent `name`."""
        return self.agents[name].card_url

    def _start(self, deadline: float) -> None:
        out, err = self.process.stdout, self.process.stderr
        assert out is not None and err is not None
        while "listening" not in (line := err.readline()):
            self._said.append(line)
            assert line and time.monotonic() < deadline, f"demo --serve did not start: {''.join(self._said)}"
        self._said.append(line)
        count = int(line.split("demo: ", 1)[1].split()[0])
        while len(self.agents) < count:
            row = out.readline()
            assert row, f"demo --serve ended early: {''.join(self._said)}"
            name, url, verdict, *rest = row.rstrip("\n").split("\t")
            self.agents[name] = ServedAgent(name, url, verdict, dict(item.split("=", 1) for item in rest))
        self._reader = threading.Thread(target=self._read_stderr, args=(err,), daemon=True)
        self._reader.start()

    def _read_stderr(self, err: IO[str]) -> None:
        for line in err:
            with self._heard:
                self._said.append(line)
                self._heard.notify_all()
        with self._heard:
            self._said.append("")  # end of stream
            self._heard.notify_all()

    def wait_for_stderr(self, text: str, timeout: float = START_WAIT) -> list[str]:
        """Every stderr line so far, up to and including the first that contains `text`."""
        deadline = time.monotonic() + timeout
        with self._heard:
            while True:
                for index, line in enumerate(self._said):
                    if text in line:
                        return [said.rstrip("\n") for said in self._said[: index + 1]]
                remaining = deadline - time.monotonic()
                ended = self._said[-1:] == [""]
                assert not ended and remaining > 0, f"no {text!r} on stderr: {''.join(self._said)}"
                self._heard.wait(remaining)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_WAIT) -> tuple[int, str]:
        """Send `sig`, wait for the exit; the exit status and all of stderr."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        if self._reader is not None:
            self._reader.join(timeout=timeout)
        elif self.process.stderr is not None:
            self._said.append(self.process.stderr.read())
        return code, "".join(self._said)


@contextmanager
def demo_serve(
    *args: str,
    env: Mapping[str, str] | None = None,
    python_flags: Sequence[str] = (),
    cwd: Path = REPO,
) -> Iterator[DemoServe]:
    """`demo --serve ARGS` with every agent listening; stopped (SIGTERM, else killed) at the end.

    `env` is added to this process's environment; `python_flags` go to the interpreter
    (`-X importtime`, say)."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, *python_flags, "-m", "explorer", "demo", "--serve", *args],
        cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    served = DemoServe(process)
    try:
        served._start(time.monotonic() + START_WAIT)
        yield served
    finally:
        if process.poll() is None:
            try:
                served.stop()
            except subprocess.TimeoutExpired:
                pass  # killed by stop(); the test's own failure, if any, is the one to report
        if served._reader is not None:
            served._reader.join(timeout=STOP_WAIT)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
