"""`interview-explorer URL` starts the interview before the TUI is built (`explorer.tui.early`).

The user's path: the explorer launched on an agent served by another process (`demo --serve`).
When the interview has finished by the time the app picks its first screen, that screen is the
interview itself (no load or progress screen built first), recorded once; when it has not, the
progress screen takes over the running interview (its steps so far replayed, Esc still cancels)
and nothing is asked twice. Drawn at 80x24 and at full size. bench/open_to_verdict.py measures
the time this saves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.tui import app as app_module
from explorer.tui.early import EarlyInterview
from explorer.tui.launch import build_app
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from explorer.tui.screens.progress import ProgressScreen
from tests.support.demo_serve import DemoServe, demo_serve
from tests.support.paths import REPO
from tests.support.tui import screen_text, wait_for, wait_for_interview

SIZES = [(80, 24), (150, 50)]


@pytest.fixture(scope="module")
def served() -> Iterator[DemoServe]:
    with demo_serve("--port", "0", "--only", "steady") as agents:
        yield agents


def _args(url: str, home: Path) -> argparse.Namespace:
    return argparse.Namespace(
        target=url, home=str(home), keys=[], allow_jku=True, header=[], role=None, runner=None, openclasp=None
    )


def _runs(app: Any) -> int:
    return len(app.context.rows())


@pytest.mark.parametrize("size", SIZES)
async def test_a_finished_early_interview_is_the_first_screen(
    served: DemoServe, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = build_app(_args(served.url("steady"), tmp_path), early=True, cursor_blink=False)
    early = app.context._early
    assert early is not None, "the launch target's interview did not start before the app"
    deadline = time.monotonic() + 30
    while not early.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_interview(pilot)
        assert [type(s) for s in app.screen_stack] == [InterviewScreen]  # nothing built before it
        assert "conformant" in screen_text(app)
        assert screen.run_id == 1 and _runs(app) == 1  # recorded once
        await pilot.press("escape")  # back goes to the load screen, installed now
        await wait_for(pilot, lambda: isinstance(app.screen, LoadScreen))
    app.context.close()


@pytest.mark.parametrize("size", SIZES)
async def test_the_progress_screen_takes_over_a_running_early_interview(
    served: DemoServe, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The early interview is held back until the app is up: the progress screen shows it, with
    the steps said before it existed, and the run is recorded once."""
    app = build_app(_args(served.url("steady"), tmp_path), cursor_blink=False)
    go = threading.Event()
    planner = app.context._planner
    asked = []

    def held(target: str) -> Any:
        asked.append(target)
        planned = type(planner).planned(planner, target)

        async def interview(progress: Any) -> Any:
            progress(_Step("card", "said before the progress screen existed"))
            await asyncio.to_thread(go.wait, 30)
            return await planned(progress)

        return interview

    planner.planned = held  # type: ignore[method-assign]
    app.context.start_early(served.url("steady"))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen) and app.screen.is_mounted)
        await wait_for(pilot, lambda: "said before the progress screen existed" in screen_text(app))
        go.set()
        await wait_for_interview(pilot)
        assert asked == [served.url("steady")] and _runs(app) == 1
    app.context.close()


async def test_the_first_screen_waits_for_an_early_interview_about_to_finish(
    served: DemoServe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interview still running when the app picks its first screen gets a moment to finish
    (`EARLY_GRACE`, widened here so that a slow machine tests the rule, not its speed): the
    first screen is then the interview, not a progress screen built and torn down before it."""
    monkeypatch.setattr(app_module, "EARLY_GRACE", 30.0)
    app = build_app(_args(served.url("steady"), tmp_path), cursor_blink=False)
    planner = app.context._planner
    asked_to_wait = threading.Event()

    def held(target: str) -> Any:
        planned = type(planner).planned(planner, target)

        async def interview(progress: Any) -> Any:
            await asyncio.to_thread(asked_to_wait.wait, 30)  # running until the app waits for it
            return await planned(progress)

        return interview

    planner.planned = held  # type: ignore[method-assign]
    app.context.start_early(served.url("steady"))
    early = app.context._early
    real_wait = early.wait

    def wait(timeout: float) -> bool:
        asked_to_wait.set()
        return real_wait(timeout)

    early.wait = wait
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_interview(pilot)
        assert asked_to_wait.is_set(), "the app picked its first screen without waiting"
        assert [type(s) for s in app.screen_stack] == [InterviewScreen]
        assert screen.run_id == 1 and _runs(app) == 1
    app.context.close()


class _Step:
    def __init__(self, step: str, message: str) -> None:
        self.step, self.message, self.question, self.attempt = step, message, None, 1


async def test_claiming_replays_the_steps_in_order_and_cancelling_stops_it() -> None:
    release = threading.Event()
    started = threading.Event()

    async def interview(progress: Any) -> Any:
        progress("one")
        started.set()
        await asyncio.to_thread(release.wait, 10)
        progress("three")
        return "the run"

    early = EarlyInterview("t", interview).start()
    assert await asyncio.to_thread(started.wait, 10)
    heard: list[str] = []
    claimed = asyncio.ensure_future(early.claim(heard.append))
    await asyncio.sleep(0.05)
    assert heard == ["one"] and not claimed.done()
    release.set()
    assert await asyncio.wait_for(claimed, 10) == "the run"
    assert heard == ["one", "three"]
    assert early.finished_run(lambda run: True) is None  # claimed once only

    forever = threading.Event()

    async def slow(progress: Any) -> Any:
        await asyncio.sleep(30)
        forever.set()

    stopped = EarlyInterview("t", slow).start()
    await asyncio.sleep(0.05)
    waiting = asyncio.ensure_future(stopped.claim(None))
    await asyncio.sleep(0.05)
    waiting.cancel()  # Esc on the progress screen cancels its own task: the interview goes too
    with pytest.raises(asyncio.CancelledError):
        await waiting
    deadline = time.monotonic() + 5
    while not stopped.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert stopped.done() and not forever.is_set()


# ---- in a child process: the command line's case ---------------------------------------------
# `interview-explorer URL` starts the early interview in a process that has one thread and no
# event loop, so it forks (`explorer.tui.early.can_fork`); inside pytest's async tests above it
# runs on a thread. These run the launch's own code in a fresh interpreter, as the command does.

LAUNCH = """
import argparse, asyncio, json, os, sys
from explorer.tui.launch import build_context
url, home = sys.argv[1], sys.argv[2]
args = argparse.Namespace(target=url, home=home, keys=[], allow_jku=True, header=[], role=None,
                          runner=None, openclasp=None)
if len(sys.argv) > 3:  # a history that cannot be opened: a folder where its file belongs
    os.makedirs(os.path.join(home, "history.sqlite3"))
context = build_context(args)
context.start_early(url)
early = context._early
steps = []
run = asyncio.run(context.interview(url, lambda step: steps.append(step.step)))  # as the progress screen asks
asked_here = sorted(m for m in ("explorer.interview.procedure", "explorer.core.evaluate", "explorer.net.auth",
                                "h11", "explorer.store.sqlite") if m in sys.modules)
recorded_as = context.record(run)  # what the progress screen does with the run it claimed
print(json.dumps({
    "child": early.pid is not None and early.pid != os.getpid(),
    "verdict": run.report["verdict"],
    "exchanges": len(run.exchanges),
    "steps": steps,
    "asked_here": asked_here,
    "child_recorded": early.recorded,
    "recorded_as": recorded_as,
    "record_error": context.record_error,
    "warnings": context.warnings,
    "runs": None if len(sys.argv) > 3 else len(context.rows()),
}))
"""

READ = """
import argparse, json, os, sys
from explorer.tui.errors import ExplorerError
from explorer.tui.launch import build_app
home, run_id = sys.argv[1], sys.argv[2]
args = argparse.Namespace(target=run_id, home=home, keys=[], allow_jku=True, header=[], role=None,
                          runner=None, openclasp=None)
app = build_app(args, early=True)
early = app.context._early
out = {"child": early is not None and early.pid not in (None, os.getpid())}
try:
    run = app.context.load(int(run_id))  # what the first screen does
    out["verdict"] = run.report["verdict"]
    out["remembered"] = app.context.read_latest([int(run_id)])[int(run_id)][0]
except ExplorerError as exc:
    out["error"] = str(exc)
derived = ("explorer.core.evaluate", "explorer.store.sqlite")
out["derived_here"] = sorted(m for m in derived if m in sys.modules)
print(json.dumps(out))
"""

SHAPES = """
import asyncio, json, os, socket, sys, time
from explorer.tui import app as app_module
from explorer.tui.early import EarlyInterview
from explorer.tui.errors import ExplorerError

class Step:
    def __init__(self, step):
        self.step = step

out = {}
carried = ["from before"]

async def answers(progress):
    progress(Step("one"))
    progress(Step("two"))
    carried.append("run not signed: the key file is missing")
    return {"the": "run"}

early = EarlyInterview("t", answers, carried=carried).start()
heard = []
out["run"] = asyncio.run(early.claim(lambda step: heard.append(step.step)))
out["heard"], out["carried"], out["child"] = heard, carried, early.pid is not None

async def refuses(progress):
    raise ExplorerError("the agent's URL names no agent")

try:
    asyncio.run(EarlyInterview("t", refuses).start().claim(None))
except ExplorerError as exc:
    out["refused"] = str(exc)

class Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")

async def breaks(progress):
    raise Unpicklable("this", "that")

try:
    asyncio.run(EarlyInterview("t", breaks).start().claim(None))
except RuntimeError as exc:
    out["broke"] = str(exc)

# An agent that accepts the connection and never answers: the child waits on it until cancelled.
silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(8)
port = silent.getsockname()[1]

async def waits(progress):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    progress(Step("connected"))
    await reader.read(1)
    return "never"

stuck = EarlyInterview("t", waits).start()
connected = []

async def cancel_it():
    claim = asyncio.ensure_future(stuck.claim(lambda step: connected.append(step.step)))
    while not connected:
        await asyncio.sleep(0.01)
    claim.cancel()  # Esc on the progress screen
    try:
        await claim
    except asyncio.CancelledError:
        return "cancelled"

out["cancel"] = asyncio.run(cancel_it())
deadline = time.monotonic() + 10
while not stuck.done() and time.monotonic() < deadline:
    time.sleep(0.01)
try:
    os.kill(stuck.pid, 0)
    out["child_after_cancel"] = "still there"
except ProcessLookupError:
    out["child_after_cancel"] = "gone"
print(json.dumps(out))
"""


def _fresh_python(code: str, *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_the_command_lines_early_interview_runs_in_a_child_and_hands_back_the_run(
    served: DemoServe, tmp_path: Path
) -> None:
    said = _fresh_python(LAUNCH, served.url("steady"), str(tmp_path))
    assert said["child"], "the launch interviewed on a thread, sharing the textual import's interpreter"
    assert said["verdict"] == "conformant" and said["exchanges"] > 5
    assert said["steps"][0] == "card" and "ask" in said["steps"], said["steps"]
    assert said["asked_here"] == [], "the launching process imported the interview's or the store's modules"
    # The child recorded its run; the parent hands out that id and records nothing again.
    assert said["child_recorded"] == [1, None] and said["recorded_as"] == 1 and said["runs"] == 1
    assert said["record_error"] is None and said["warnings"] == []


def test_a_run_the_child_could_not_record_is_said_once_by_the_parent(
    served: DemoServe, tmp_path: Path
) -> None:
    said = _fresh_python(LAUNCH, served.url("steady"), str(tmp_path), "broken history")
    assert said["child"] and said["verdict"] == "conformant"
    run_id, why = said["child_recorded"]
    assert run_id is None and why and said["recorded_as"] is None and said["record_error"] == why
    assert said["warnings"] == [f"run not recorded: {why}"]  # said once, by the parent


def test_a_child_carries_back_steps_warnings_errors_and_ends_when_cancelled() -> None:
    said = _fresh_python(SHAPES)
    assert said["child"] and said["run"] == {"the": "run"}
    assert said["heard"] == ["one", "two"]
    assert said["carried"] == ["from before", "run not signed: the key file is missing"]
    assert said["refused"] == "the agent's URL names no agent"
    assert said["broke"] == "Unpicklable: this and that"
    assert said["cancel"] == "cancelled" and said["child_after_cancel"] == "gone"


def test_a_stored_run_opened_from_the_command_line_is_read_by_a_child(
    served: DemoServe, tmp_path: Path
) -> None:
    """`interview-explorer 1`: the run is read from the history and its report derived again in a
    forked child while textual is imported; the first screen gets it, and the lists remember
    how it read. A run that is not there is the same message as without the child."""
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync
    from explorer.store.sqlite import History

    run = run_interview_sync(served.url("steady"), Options(allow_jku=True, runner="tester"))
    with History.open(tmp_path) as history:
        run_id = history.record(run)
    said = _fresh_python(READ, str(tmp_path), str(run_id))
    assert said["child"] and said["verdict"] == "conformant" and said["remembered"] == "conformant"
    assert said["derived_here"] == [], "the launching process read the history or derived the report itself"
    missing = _fresh_python(READ, str(tmp_path), "99")
    assert missing["child"] and missing["error"].startswith("cannot load run 99"), missing
