"""What the TUI tests share: the app as the tests build it, waiting for a screen, reading it back.

Waiting matters more than it looks. A screen becomes `app.screen` when it is pushed, before its
children have mounted; a test that reads it, or ends, at that moment races Textual's mounting
(seen under load as `No Tab with id ...` from a tab strip still mounting while the app shut down).
`wait_for_interview` therefore waits until the interview screen's first question pane is mounted
and the app is idle, which is what a user looking at the screen sees.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from textual.content import Content
from textual.pilot import Pilot

from explorer.tui.app import ExplorerApp
from explorer.tui.context import AppContext
from explorer.tui.demo_agents import demo_agents, demo_keys
from explorer.tui.pictures import fixed_clock
from explorer.tui.pictures import screen_text as screen_text  # re-exported for the tests
from explorer.tui.screens.interview import InterviewScreen

TUI_SIZE = (150, 50)  # the terminal most screen tests draw in (columns, rows)
# What the `tui` fixture (conftest.py) gives a test: `async with tui(**settings) as pilot:`.
Tui = Callable[..., AbstractAsyncContextManager[Pilot[Any]]]
CELL_WIDTH = 12.2  # Rich's SVG export: 0.61 of a 20 px font per terminal column
_TEXT = re.compile(
    r'<text[^>]*\bx="([\d.]+)"[^>]*clip-path="url\(#[^)]*-line-(\d+)\)"[^>]*>(.*?)</text>', re.S
)


def make_app(fleet: Any | None, tmp_path: Path, **overrides: Any) -> ExplorerApp:
    """The app on the reference agents (or on none), with a fixed clock and no cursor blink."""
    context = AppContext(
        demo=tuple(demo_agents(fleet)) if fleet is not None else (),
        settings={"keys": demo_keys(fleet) if fleet is not None else (), "runner": "tester"},
        clock=fixed_clock,
        export_dir=tmp_path / "exports",
        cursor_blink=False,
    )
    for name, value in overrides.items():
        setattr(context, name, value)
    return ExplorerApp(context)


def plain(widget: Any) -> str:
    """A widget's content as plain text (a Static, or anything with a `content`)."""
    content = getattr(widget, "content", widget)
    return content.plain if isinstance(content, Content) else str(content)


def screen_lines(app: ExplorerApp) -> list[str]:
    """The screen as lines of characters, rebuilt from the SVG screenshot's text runs."""
    width, height = app.size
    grid = [[" "] * width for _ in range(height)]
    for x, line, raw in _TEXT.findall(app.export_screenshot()):
        row, col = int(line), round(float(x) / CELL_WIDTH)
        for offset, char in enumerate(html.unescape(raw).replace("\xa0", " ")):
            if 0 <= row < height and 0 <= col + offset < width:
                grid[row][col + offset] = char
    return ["".join(row) for row in grid]


async def wait_for(pilot: Any, predicate: Any, timeout: float = 60.0) -> None:
    """Poll `predicate` between short pauses; fail naming the screen on show."""
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting; the screen is {type(pilot.app.screen).__name__}")


def interview_ready(app: ExplorerApp) -> bool:
    """The interview screen is on show with the pane it opened on (a question, or the reason for
    the verdict) mounted."""
    screen = app.screen
    if not isinstance(screen, InterviewScreen) or not screen.is_mounted or not screen.ready:
        return False
    pane = screen.opened
    return pane is not None and pane.is_mounted


async def wait_for_interview(pilot: Any, timeout: float = 60.0) -> InterviewScreen:
    """Wait until an interview screen is fully drawn; returns it."""
    await wait_for(pilot, lambda: interview_ready(pilot.app), timeout)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, InterviewScreen)
    return screen
