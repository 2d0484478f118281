"""The history under faults: a TUI killed at random moments, and a disk that fills up.

`tests/store/test_history_crash.py` kills a process that only records. Here the process is the TUI
itself, interviewing a loopback agent and recording through the path it always uses (the
progress screen hands the run to `AppContext.record`), killed with SIGKILL at random moments,
several times over one history. Afterwards the file must pass `PRAGMA integrity_check` and every
run the TUI reported as recorded must load whole.

The killed TUI runs on both backends (the `store_url` of tests/conftest.py). The full-disk tests
are the SQLite file's only: a PostgreSQL history's disk is the server's, on another machine, and
a server out of space fails the statement with an error the store reports like any other (a
`HistoryError` naming the history), which the many-writers and refusal tests already cover.

A full disk is simulated three ways, from the most real to the most portable: a tiny tmpfs
(when this process may mount one), SQLite's own page quota (`PRAGMA max_page_count`), and a file
size limit (`RLIMIT_FSIZE`) on the `verify` command. Each time the write must fail with a
sentence a person can act on (never a traceback), and every earlier run must still load; `verify`
refuses a history it cannot open before asking anything, and a run it could not record has its
verdict printed all the same, with exit status 6.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from explorer.core.run import Run
from explorer.demo.hostile import HostileServer
from explorer.demo.hostile_cases import HOSTILE_CASES
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview_sync
from explorer.store.base import HistoryError
from explorer.store.location import open_store
from explorer.store.sqlite import HISTORY_FILE, History
from tests.support.paths import REPO

CASES = ["honest", "big-int-equal", "big-int-differs"]  # one recorded run differs from the next

pytestmark = [
    pytest.mark.slow,  # fills disks and kills processes
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals and resource limits"),
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with HostileServer(CASES) as started:
        yield started


@pytest.fixture(scope="module")
def runs(server: HostileServer) -> list[Run]:
    """Real runs to record: one per case, verified over loopback."""
    options = Options(keys=(server.jwks,), timeout=5.0, runner="faults")
    return [run_interview_sync(server.case_url(name), options) for name in CASES]


def integrity(home: Path) -> list[int]:
    """Check the file the way SQLite itself would, load every run whole; the run ids."""
    with History.open(home) as history:
        conn = history._conn  # the test inspects the file the way SQLite itself would
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        ids = [summary.id for summary in history.runs(limit=1_000_000)]
        for run_id in ids:
            history.load(run_id)
        return ids


# --- SIGKILL of the TUI ------------------------------------------------------------------------------

_TUI = """
import asyncio, os, sys
from pathlib import Path
from explorer.config.history_choice import choose_history
from explorer.tui.app import ExplorerApp, Start
from explorer.tui.context import AppContext
from explorer.tui.screens.interview import InterviewScreen

home, url, keys, *targets = sys.argv[1:]

def say(line):
    # straight to the pipe: under the app, print() goes to a buffered stdout whose flush Textual
    # ignores, so a SIGKILL would lose lines the test must read as reported
    os.write(1, (line + "\\n").encode())

async def main():
    context = AppContext(
        home=Path(home), settings={"keys": (keys,), "runner": "killed-tui"}, export_dir=Path(home),
        history_choice=choose_history(url),
    )
    app = ExplorerApp(context, Start())
    async with app.run_test(size=(120, 40)) as pilot:
        say("ready")
        n = 0
        previous = None
        while True:
            target = targets[n % len(targets)]
            app.start_interview(target)
            # this interview's own screen: under load the last one may not have closed yet
            while not isinstance(app.screen, InterviewScreen) or app.screen is previous:
                await pilot.pause(0.01)
            screen = previous = app.screen
            say(f"{screen.run_id} {n % len(targets)}")  # recorded by the progress screen
            for _ in range(10):  # and again through the same call, to widen the window for a kill
                say(f"{context.record(screen.run)} {n % len(targets)}")
            await pilot.press("escape")
            while app.screen is screen:  # closed before the next interview starts
                await pilot.pause(0.01)
            n += 1

asyncio.run(main())
"""


def _recorded(output: str) -> dict[int, int]:
    """run id -> case index, for every line the TUI finished printing before it died."""
    out: dict[int, int] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            out[int(parts[0])] = int(parts[1])
    return out


class _Reported:
    """Every line a TUI writes to stdout, read by a thread as it is written (and its stderr).

    The lines are read off the pipe and nowhere else. Reading some with `readline()` and the rest
    with `communicate()` loses lines: `readline()` fills a buffer with all the pipe holds, and
    `communicate()` reads the pipe itself, never that buffer. On a loaded machine the TUI writes
    several lines before this process reads the first, and every line left in the buffer was a
    run reported as recorded that the test did not count (so the stored runs outnumbered the
    reported ones by more than one per kill, or too few were counted).
    """

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._stderr: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._read_lines, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self._read_all, args=(proc.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_lines(self, stream: IO[bytes]) -> None:
        for raw in stream:
            with self._changed:
                self.lines.append(raw.decode("utf-8", "replace"))
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # end of output
            self._changed.notify_all()

    def _read_all(self, stream: IO[bytes]) -> None:
        self._stderr.append(stream.read())

    def wait(self, lines: int, timeout: float = 120.0) -> None:
        """Until `lines` lines have been written, or the output ended (then the test says why)."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.lines) >= lines or "" in self.lines, timeout)

    def finish(self) -> tuple[str, str]:
        """Everything written, once the process has ended: (stdout, stderr)."""
        for thread in self._threads:
            thread.join(timeout=30)
        with self._changed:
            return "".join(self.lines), b"".join(self._stderr).decode("utf-8", "replace")


def test_a_tui_killed_at_random_moments_keeps_every_recorded_run(
    server: HostileServer, tmp_path: Path, store_url: str
) -> None:
    from tests.store.test_history_crash import check_whole

    home = tmp_path / "home"
    home.mkdir()
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(server.jwks), encoding="utf-8")
    targets = [server.case_url(name) for name in CASES]
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    rng = random.Random(20260811)
    reported: dict[int, int] = {}
    kills = 0
    for attempt in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", _TUI, str(home), store_url, str(keys), *targets],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        output = _Reported(proc)
        output.wait(1)  # "ready"
        if attempt % 3 == 0:
            time.sleep(rng.uniform(0.0, 1.0))  # while starting up or in the first interview
        else:
            # Once some runs are reported (how many is drawn, not left to how fast this machine is
            # now), then a moment more: mid-record, mid-interview.
            output.wait(1 + rng.randint(3, 12))
            time.sleep(rng.uniform(0.0, 0.5))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
        out, err = output.finish()
        assert out.startswith("ready"), err
        assert "Traceback" not in err, err
        reported.update(_recorded(out))
    assert kills >= 4, "the TUI did not live long enough to be killed"
    assert len(reported) >= 10, "too few runs were recorded for the test to mean anything"

    stored = check_whole(store_url)
    assert set(reported) <= set(stored)
    assert len(stored) <= len(reported) + kills  # at most one committed-but-unreported run per kill
    with open_store(store_url) as history:
        for run_id, index in reported.items():
            report = history.load(run_id).report
            assert report["target"] == targets[index]
            assert report["verdict"] == HOSTILE_CASES[CASES[index]].expected_verdict


# --- a full disk ---------------------------------------------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, if this process may mount one (root on Linux); skipped otherwise."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=10)


def fill(directory: Path) -> Path:
    """Write a file until the filesystem says it is full; the file, to free the space later."""
    filler = directory / "filler.bin"
    with filler.open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def test_a_full_tiny_filesystem_gives_a_clear_error_and_keeps_earlier_runs(
    tiny_fs: Path, runs: list[Run]
) -> None:
    home = tiny_fs / "home"
    with History.open(home) as history:  # open before the disk fills, as a running TUI has it
        earlier = [history.record(run) for run in runs]
        filler = fill(tiny_fs)
        with pytest.raises(HistoryError) as caught:
            for _ in range(50):  # new documents each time: the answers differ from run to run
                history.record(runs[2])
                history.record(runs[0])
        message = str(caught.value)
        assert str(home) in message and "disk is full" in message, message
        for run_id, run in zip(earlier, runs, strict=True):  # still readable, right there
            assert history.load(run_id).report == run.report
    filler.unlink()  # space again: nothing was lost, and recording simply works again
    assert set(earlier) <= set(integrity(home))
    with History.open(home) as history:
        assert history.record(runs[1]) > max(earlier)


def test_opening_the_history_on_a_full_disk_lists_earlier_runs_or_says_the_disk_is_full(
    tiny_fs: Path, runs: list[Run]
) -> None:
    home = tiny_fs / "home"
    with History.open(home) as history:
        earlier = history.record(runs[0])
    fill(tiny_fs)
    try:
        with History.open(home) as history:
            assert history.load(earlier).report == runs[0].report
    except HistoryError as exc:
        assert "full" in str(exc) or "no space" in str(exc).lower(), str(exc)


def test_verify_on_a_full_disk_is_refused_before_anything_is_asked(
    tiny_fs: Path, tmp_path: Path, server: HostileServer, runs: list[Run]
) -> None:
    home = tiny_fs / "home"
    with History.open(home) as history:
        earlier = history.record(runs[0])
    filler = fill(tiny_fs)
    done = _verify_cli(server, "big-int-differs", home, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 6  # the history cannot be used: said before the agent is asked
    assert done.stdout == ""
    assert "nothing was asked" in done.stderr and "full" in done.stderr, done.stderr
    filler.unlink()
    with History.open(home) as history:
        assert history.load(earlier).report == runs[0].report


async def test_the_tui_on_a_full_disk_says_why_the_run_was_not_recorded(
    tiny_fs: Path, server: HostileServer, runs: list[Run]
) -> None:
    from explorer.tui.app import ExplorerApp, Start
    from explorer.tui.context import AppContext
    from tests.support.tui import screen_lines, wait_for_interview

    home = tiny_fs / "home"
    with History.open(home) as history:
        history.record(runs[0])
    context = AppContext(
        home=home, settings={"keys": (server.jwks_url,), "runner": "full-disk"}, export_dir=tiny_fs
    )
    app = ExplorerApp(context, Start())
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        context.history()  # open (the load screen lists recent runs from it), then the disk fills
        fill(tiny_fs)
        app.start_interview(server.case_url("big-int-differs"))
        await wait_for_interview(pilot)
        await pilot.pause(0.3)
        assert app.is_running
        shown = "\n".join(screen_lines(app))
        assert "run not recorded" in shown
        # The reason, in a toast: its words, wherever a long temporary path makes the toast wrap.
        toasts = [" ".join(n.message.split()) for n in app._notifications]
        assert any("disk is full" in toast for toast in toasts), toasts
        assert {"disk", "full"} <= set(re.findall(r"\w+", shown)), shown


# --- portable simulations: SQLite's page quota, and a file size limit ----------------------------------


def test_a_page_quota_gives_a_clear_error_and_keeps_earlier_runs(tmp_path: Path, runs: list[Run]) -> None:
    home = tmp_path / "home"
    with History.open(home) as history:
        earlier = [history.record(run) for run in runs[:2]]
        pages = history._conn.execute("PRAGMA page_count").fetchone()[0]
        history._conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow
        with pytest.raises(HistoryError) as caught:
            for _ in range(20):
                history.record(runs[2])
        message = str(caught.value)
        assert str(home) in message and "disk is full" in message, message
        assert [history.load(i).report for i in earlier] == [r.report for r in runs[:2]]
    assert set(earlier) <= set(integrity(home))


# A file size limit above the 32 KiB shared-memory file a WAL database needs to be opened, but far
# below the write-ahead log a new run needs: opening works, recording cannot.
WAL_ROOM = 32 * 1024 + 4096


def _verify_cli(
    server: HostileServer, name: str, home: Path, keys_dir: Path, limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    keys = keys_dir / "jwks.json"
    if not keys.exists():
        keys.write_text(json.dumps(server.jwks), encoding="utf-8")

    def limited() -> None:  # in the child, before exec: files may not grow past `limit` bytes
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    argv = [
        sys.executable,
        "-m",
        "explorer",
        "verify",
        server.case_url(name),
        "--json",
        "--timeout",
        "5",
        "--keys",
        str(keys),
        "--home",
        str(home),
        "--runner",
        "faults",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
        preexec_fn=limited if limit is not None else None,
    )


def test_a_file_size_limit_on_verify_prints_the_verdict_says_it_was_not_recorded_and_exits_6(
    tmp_path: Path, server: HostileServer, runs: list[Run]
) -> None:
    home = tmp_path / "home"
    keys = tmp_path / "keys"
    keys.mkdir()
    with History.open(home) as history:
        earlier = history.record(runs[0])
        history._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert (home / HISTORY_FILE).stat().st_size > WAL_ROOM  # reading needs no write
    done = _verify_cli(server, "big-int-differs", home, keys, limit=WAL_ROOM)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 6  # the run is lost, and the status says so
    assert json.loads(done.stdout)["verdict"] == "nonconformant"  # printed all the same
    assert "not recorded" in done.stderr, done.stderr
    assert integrity(home) == [earlier]
