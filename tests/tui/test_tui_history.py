"""History, compare, replay, watch, export and delete, driven through the TUI.

Runs are real interviews of the reference agents, recorded in a real SQLite history in the
test's own home; the assertions are what a user reads: the rows and their churn markers, the
aligned compare rows with the differing span marked, the replay toast, the watch timeline, the
exported file and its toast, and that delete asks first. Paging, filters, the jump to a date
and runs recorded by another process are in tests/tui/test_tui_history_depth.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, DataTable, OptionList, Static, TabbedContent

from explorer.store.sqlite import History
from explorer.tui.screens.compare import CompareScreen
from explorer.tui.screens.confirm import ConfirmScreen
from explorer.tui.screens.history import HistoryScreen, RunTable
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.watch import WatchScreen
from tests.support.tui import Tui, plain, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot

SIZE = (160, 50)


@pytest.fixture
def recorded(demo_runs: dict[str, Any]) -> list[int]:
    """steady (#1), drifting (#2), steady again (#3), in this test's own history."""
    with History.open() as history:
        return [history.record(demo_runs[name]) for name in ("steady", "drifting", "steady")]


def table_rows(table: DataTable | RunTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def runs_table(screen: HistoryScreen) -> RunTable:
    return screen.query_one("#runs", RunTable)


async def open_history(pilot: Any) -> HistoryScreen:
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.loaded)
    await pilot.pause()
    return pilot.app.screen


async def test_history_lists_runs_with_churn_markers_and_opens_one_offline(
    recorded: list[int], tui: Tui
) -> None:
    async with tui(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = await open_history(pilot)
        rows = table_rows(runs_table(screen))
        assert [row[0] for row in rows] == ["  #3", "  #2", "  #1"]
        assert rows[0][2] == "Stonework Books (Steady)" and rows[0][1] == "✓ conformant"
        assert rows[1][1] == "✗ nonconformant"
        assert [row[3] for row in rows] == ["= same", "first", "first"]
        assert rows[0][5] == rows[2][5] and len(rows[0][5]) == 8  # short card digest, same card
        agents = screen.query_one("#agents", OptionList)
        assert agents.get_option_at_index(0).prompt.plain == "all agents (2)"

        await pilot.press("down", "enter")  # run #2, drifting
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "run #2 · from history (offline)" in header and "nonconformant" in header


async def test_marking_two_runs_compares_them_side_by_side(recorded: list[int], tui: Tui) -> None:
    async with tui(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = await open_history(pilot)
        await pilot.press("c")
        assert any("mark two runs" in n.message for n in app._notifications)
        await pilot.press("down", "space", "down", "space")  # #2 and #1
        assert table_rows(runs_table(screen))[1][0] == "● #2"
        assert "marked: #2, #1" in plain(screen.query_one("#history-title", Static))
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause()
        compare = app.screen
        assert "A run #1 (earlier)  vs  B run #2 (later)" in plain(
            compare.query_one("#compare-title", Static)
        )
        facts = plain(compare.query_one("#compare-facts", Static))
        assert "≠ verdict: conformant → nonconformant" in facts
        rows = table_rows(compare.query_one(DataTable))
        by_pointer = {(row[1], row[2]): row for row in rows}
        assert by_pointer[("usage", "/defaultOutputModes · card")][0] == "≠ changed (match→mismatch)"
        assert by_pointer[("usage", "/defaultInputModes · card")][0] == "= same"
        assert by_pointer[("refusals", "/skills/0/id · card")][0] == "= same"
        # Each row names its document: a proposal by its file name, so two proposals differ.
        terms = [row[2] for row in rows if row[1] == "terms"]
        assert terms[0].startswith("/parties · proposal reconcile-statement"), terms
        # A changed value's cell shows where it changes, not a prefix.
        assert "«" in by_pointer[("usage", "/defaultOutputModes · card")][4]
        # The first change is selected and shown whole, the differing span marked.
        first = next(i for i, row in enumerate(rows) if row[0] != "= same")
        assert compare.query_one(DataTable).cursor_row == first
        table = compare.query_one(DataTable)
        target = next(i for i, row in enumerate(rows) if row[2] == "/defaultOutputModes · card")
        table.move_cursor(row=target)
        await pilot.pause()
        values = plain(compare.query_one("#compare-values", Static)).split("\n")
        assert values[0].startswith("≠ changed  usage  /defaultOutputModes")
        assert 'A run #1  ["application/json"«»]' in values
        assert 'B run #2  ["application/json"«,"text/html"»]' in values
        await pilot.press("escape")
        assert app.screen is screen


async def test_delete_asks_first_and_export_names_the_file(
    recorded: list[int], tmp_path: Path, tui: Tui
) -> None:
    async with tui(size=SIZE) as pilot:
        app = pilot.app
        app.NOTIFICATION_TIMEOUT = 600  # the toasts are read after a loaded machine's seconds
        await pilot.pause()
        screen = await open_history(pilot)
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Delete run #3 of Stonework Books (Steady)" in plain(app.screen.query_one("#question", Static))
        await pilot.press("n")
        assert app.screen is screen and runs_table(screen).row_count == 3
        await pilot.press("d", "y")
        await wait_for(pilot, lambda: [row[0] for row in table_rows(runs_table(screen))] == ["  #2", "  #1"])
        assert any(n.message == "deleted run #3" for n in app._notifications)
        with History.open() as history:
            assert [r.id for r in history.runs()] == [2, 1]

        await pilot.press("x")
        await pilot.pause()
        app.screen.query_one("#export-json", Button).press()
        await pilot.pause()
        path = tmp_path / "exports" / "stonework-books-drifting-run2.json"
        assert path.exists() and '"transcript_version": 1' in path.read_text(encoding="utf-8")
        assert any(n.message == f"exported to {path}" for n in app._notifications)


async def test_replay_runs_the_interview_again_and_says_what_changed(recorded: list[int], tui: Tui) -> None:
    async with tui(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        await open_history(pilot)
        app.NOTIFICATION_TIMEOUT = 600  # a loaded machine takes seconds to draw the interview
        await pilot.press("r")  # the newest run: steady #3
        await wait_for_interview(pilot)
        assert "run #4 · live" in plain(app.screen.query_one("#header", Static))
        assert any(
            n.message == "replayed run #3: conformant -> conformant; no change" for n in app._notifications
        ), [n.message for n in app._notifications]


async def test_watch_replays_on_an_interval_with_a_timeline(demo_runs: dict[str, Any], tui: Tui) -> None:
    async with tui(size=SIZE, watch_interval=0.2) as pilot:
        app = pilot.app
        await pilot.pause()
        app.show_run(demo_runs["drifting"], None)
        await wait_for_interview(pilot)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen))
        watch = app.screen
        await wait_for(pilot, lambda: watch.ticks >= 3)
        timeline = watch.query_one(OptionList)
        lines = [timeline.get_option_at_index(i).prompt.plain for i in range(3)]
        for line in lines:
            assert line.startswith("12:00:00  = ✗ nonconformant")
            assert line.endswith("no change")
        assert "run #1" in lines[0] and "run #3" in lines[2]
        assert plain(watch.query_one("#watch-status", Static)).startswith(
            f"{watch.ticks} replays · 0 with changes"
        )
        await pilot.press("space")
        paused_at = watch.ticks
        await pilot.pause(0.8)
        assert watch.ticks <= paused_at + 1  # at most the replay already under way
        await wait_for(pilot, lambda: not watch.busy)
        before = watch.ticks
        await pilot.press("r")  # paused stops the schedule, not a replay asked for
        await wait_for(pilot, lambda: watch.ticks == before + 1 and not watch.busy)
        await pilot.pause(0.8)
        assert watch.ticks == before + 1 and "paused" in plain(watch.query_one("#watch-status", Static))
        await pilot.press("escape")
        assert isinstance(app.screen, InterviewScreen)


async def test_load_screen_offers_recent_agents_and_suggests_from_history(
    fleet: Any, recorded: list[int], tui: Tui
) -> None:
    from textual.widgets import Input

    async with tui(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        recent = app.screen.query_one("#recent", OptionList)
        rows = [recent.get_option_at_index(i).prompt.plain for i in range(recent.option_count)]
        assert rows[0].startswith("Stonework Books (Steady)  last: conformant") and "run #3" in rows[0]
        assert rows[1].startswith("Stonework Books (Drifting)  last: nonconformant")
        field = app.screen.query_one("#target", Input)
        field.focus()
        steady = fleet.agents["steady"].card_url
        await pilot.press(*steady[:-12])
        await pilot.pause(0.3)
        await pilot.press("right")  # accept the suggestion
        assert field.value == steady
        recent.focus()
        await pilot.press("home", "enter")
        await wait_for_interview(pilot)
        assert "Stonework Books (Steady)" in plain(app.screen.query_one("#header", Static))


async def test_keys_work_where_they_are_shown(recorded: list[int], tui: Tui) -> None:
    """Space in the agents sidebar picks the agent (it silently marked a run before); the
    findings list starts on its first finding so enter jumps at once; the interview footer
    shows quit, export, replay, watch and history."""
    async with tui(size=SIZE) as pilot:
        app = pilot.app
        await pilot.pause()
        screen = await open_history(pilot)
        sidebar = screen.query_one("#agents", OptionList)
        sidebar.focus()
        await pilot.pause()
        assert sidebar.highlighted == 0
        await pilot.press("down", "space")
        await pilot.pause()
        assert screen.agent is not None and not screen.marked  # filtered, nothing marked
        await wait_for(pilot, lambda: screen.loaded and 0 < runs_table(screen).row_count < 3)

        await pilot.press("escape")
        await pilot.pause()
        app.open_stored(recorded[1])  # drifting
        interview = await wait_for_interview(pilot)
        keys = {key for key, b in interview.active_bindings.items() if b.binding.show and b.enabled}
        assert {"ctrl+q", "x", "r", "w", "h"} <= keys, keys
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("enter")  # no Down first
        await pilot.pause(0.3)
        assert interview.query_one(TabbedContent).active != "tab-findings"  # jumped to a projection
