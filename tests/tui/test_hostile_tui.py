"""The TUI under hostile agents: agent text is drawn literally, nothing it says runs, keys still work.

Each hostile case that names text a screen must show (`HostileCase.shows`), and the fleet's own
`hostile` reference agent, is opened in the real app with `App.run_test()`. The test reads the
screen back from an SVG screenshot as a grid of characters, finds the agent's text (markup such
as `[@click=app.quit]` must appear as those very characters, ESC bytes as a visible `\\x1b`),
clicks on it, then checks that no action was run (the app records every action in
`actions_run`), that the app is still running, and that it still answers a key. A control test
first proves the audit catches an action run from markup, so "nothing ran" means something.
The agents with markup in every string also get every tab drawn (a stray `[/]` parsed as markup
would crash the app there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from explorer.demo.hostile import HostileServer
from explorer.demo.hostile_cases import HOSTILE_CASES, TRAP
from explorer.tui.app import ExplorerApp, Start
from explorer.tui.context import AppContext
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from tests.support.tui import screen_lines, wait_for

SIZE = (160, 50)
SHOWN = [name for name, case in HOSTILE_CASES.items() if case.shows]
TABS = ("1", "2", "3", "4", "5", "f")  # the five questions, then the findings

pytestmark = [
    pytest.mark.slow,  # draws every hostile case with Pilot
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with HostileServer(SHOWN) as started:
        yield started


@pytest.fixture(scope="module")
def hostile_agent() -> Iterator[Any]:
    """The fleet's `hostile` reference agent (1 MB description, bidi, deep values), on its own."""
    from explorer.demo.fleet import Fleet

    with Fleet(["hostile"]) as fleet:
        assert fleet.wait_ready(60), fleet.errors
        yield fleet.agents["hostile"]


def make_app(target: str, keys: tuple[str, ...], tmp_path: Path) -> ExplorerApp:
    context = AppContext(
        settings={"keys": keys, "runner": "hostile-tui"}, use_history=False, export_dir=tmp_path
    )
    return ExplorerApp(context, Start(target=target))


# --- reading the screen back ---------------------------------------------------------------------


def find(lines: list[str], text: str) -> list[tuple[int, int]]:
    """(column, row) of the first character of every occurrence of `text` on screen."""
    pattern = re.compile(re.escape(text))
    return [(match.start(), row) for row, line in enumerate(lines) for match in pattern.finditer(line)]


def settled(app: ExplorerApp) -> bool:
    """The interview is painted, or the load screen shows why there is nothing to show."""
    if isinstance(app.screen, InterviewScreen):
        return bool(find(screen_lines(app), "verdict "))
    return isinstance(app.screen, LoadScreen) and bool(find(screen_lines(app), "could not interview"))


async def locate(pilot: Any, text: str) -> list[tuple[int, int]]:
    """Find `text` on the screen as shown, else on each question tab and the findings."""
    await pilot.pause()
    where = find(screen_lines(pilot.app), text)
    if where or not isinstance(pilot.app.screen, InterviewScreen):
        return where
    for key in TABS:
        await pilot.press(key)
        await pilot.pause()
        where = find(screen_lines(pilot.app), text)
        if where:
            return where
    return []


async def click_over(pilot: Any, places: list[tuple[int, int]], length: int) -> None:
    """Click the first and last cell of (at most two) occurrences of a text: a live `@click`
    span would answer on any of its cells."""
    for column, row in places[:2]:
        for offset in sorted({0, length - 1}):
            await pilot.click(offset=(column + offset, row))
    await pilot.pause()


async def still_answers_a_key(pilot: Any) -> None:
    app = pilot.app
    beneath = app.screen
    await pilot.press("f1")
    await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", 10)
    await pilot.press("f1")
    await wait_for(pilot, lambda: app.screen is beneath, 10)


def nothing_ran(app: ExplorerApp) -> None:
    assert app.is_running and app.return_code is None
    assert not [action for action in app.actions_run if "quit" in action or "link" in action], app.actions_run


# --- the control: the audit sees an action that markup runs ----------------------------------------


async def test_the_audit_catches_an_action_run_from_markup(tmp_path: Path) -> None:
    app = ExplorerApp(AppContext(use_history=False, export_dir=tmp_path), Start())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.screen.mount(Static("[@click=app.bell]RING-RING[/]", id="canary"))
        await pilot.pause()
        (place,) = find(screen_lines(app), "RING-RING")
        await click_over(pilot, [place], 3)
        assert "app.bell" in " ".join(app.actions_run)


# --- every case whose text reaches a screen ---------------------------------------------------------


@pytest.mark.parametrize("name", SHOWN)
async def test_hostile_text_is_drawn_literally_and_runs_nothing(
    server: HostileServer, tmp_path: Path, name: str
) -> None:
    case = HOSTILE_CASES[name]
    assert case.shows is not None
    app = make_app(server.case_url(name), (server.jwks_url,), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app))
        expected_screen = LoadScreen if case.expected_verdict == "unreachable" else InterviewScreen
        assert isinstance(app.screen, expected_screen)
        if isinstance(app.screen, InterviewScreen):
            assert app.screen.report["verdict"] == case.expected_verdict

        places = await locate(pilot, case.shows)
        assert places, f"{case.shows!r} is not on screen:\n" + "\n".join(screen_lines(app))
        assert "\x1b" not in "".join(screen_lines(app))
        await click_over(pilot, places, len(case.shows))
        nothing_ran(app)
        assert any(isinstance(screen, expected_screen) for screen in app.screen_stack)
        await still_answers_a_key(pilot)
        if name == "markup-everywhere":
            for key in TABS:  # every tab draws this agent's text without crashing
                await pilot.press(key)
            await pilot.pause()
            nothing_ran(app)


async def test_the_fleet_hostile_agent(hostile_agent: Any, tmp_path: Path) -> None:
    app = make_app(hostile_agent.card_url, (hostile_agent.jwks_url,), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: settled(app), 120)
        assert isinstance(app.screen, InterviewScreen), "\n".join(screen_lines(app))
        assert app.screen.report["verdict"] == hostile_agent.variant.expected_verdict
        lines = screen_lines(app)
        assert "\x1b" not in "".join(lines)
        assert "\\x1b" in "".join(lines)  # the agent's escapes, made visible
        places = find(lines, TRAP)
        assert places, "\n".join(lines)
        await click_over(pilot, places, len(TRAP))
        nothing_ran(app)
        for key in TABS:  # every tab draws this agent's text without crashing
            await pilot.press(key)
        await pilot.pause()
        await click_over(pilot, find(screen_lines(app), TRAP), len(TRAP))  # the findings, if shown
        nothing_ran(app)
        await still_answers_a_key(pilot)
