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
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.tui.early import EarlyInterview
from explorer.tui.launch import build_app
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from explorer.tui.screens.progress import ProgressScreen
from tests.support.demo_serve import DemoServe, demo_serve
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

    async def held(target: str, progress: Any) -> Any:
        asked.append(target)
        progress(_Step("card", "said before the progress screen existed"))
        await asyncio.to_thread(go.wait, 30)
        return await type(planner).interview(planner, target, progress)

    planner.interview = held  # type: ignore[method-assign,assignment]
    app.context.start_early(served.url("steady"))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen) and app.screen.is_mounted)
        await wait_for(pilot, lambda: "said before the progress screen existed" in screen_text(app))
        go.set()
        await wait_for_interview(pilot)
        assert asked == [served.url("steady")] and _runs(app) == 1
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
