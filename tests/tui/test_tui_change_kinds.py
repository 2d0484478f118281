"""What changed, in kinds, everywhere the TUI shows a change (issue 28, item 2 on screen).

One reference agent on one address, restarted as deployments restart it
(`tests.support.restarts`): a first run; a restart, which signs the card again (other bytes, the
same declarations under the same key: `signed again`, never a change); a restart under another
card key (`key changed`, a change named as such); a restart with another description
(`declarations`). The history screen's marker and its changed-only filter, the compare screen,
the watch timeline and the fleet (its churn column beside a changes column, for a live sweep's
rows too) each say it so, at 80x24 and at full size. Before, a card signed again read as a
changed card everywhere: `≠ card`, "differences marked", a watch alarm, churn in the fleet.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from explorer.core.run import Run
from explorer.store.sqlite import History
from explorer.tui.app import ExplorerApp, Start
from explorer.tui.context import AppContext
from explorer.tui.fleet_model import Finished, FleetEntry, FleetModel
from explorer.tui.screens.compare import CompareScreen
from explorer.tui.screens.fleet import FleetScreen, FleetTable
from explorer.tui.screens.history import CHANGED_ONLY, HistoryScreen, RunTable
from explorer.tui.screens.watch import Timeline, WatchScreen
from tests.support.restarts import Restarts
from tests.support.tui import TUI_SIZE, make_app, plain, screen_text, wait_for

SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
NEW_DESCRIPTION = "Reconciles statements, now also invoices"


def cells(table: DataTable | RunTable | FleetTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def words(text: str) -> str:
    return " ".join(text.split())


def compared(app: ExplorerApp) -> bool:
    """A compare screen is on show with its rows laid out."""
    return isinstance(app.screen, CompareScreen) and bool(app.screen.rows)


# --- a live sweep's row counts as the history counts, without a terminal -----------------------------


def test_a_sweep_row_counts_churn_verdicts_as_churn_and_only_changes_as_changes() -> None:
    fleet = FleetModel()
    first = Finished("http://a/card", "A", "conformant", "claim", "verified", "c1", "x1", "d1", ("k1",))
    fleet.finish("http://a/", first, run_id=None, at="T1")
    again = Finished("http://a/card", "A", "conformant", "claim", "verified", "c2", "x1", "d1", ("k1",))
    entry = fleet.finish("http://a/", again, run_id=None, at="T2")  # signed again, as compared here
    assert (entry.churn, entry.changes, entry.kinds, entry.last_change_at) == (0, 0, ("resigned",), None)
    rotated = Finished("http://a/card", "A", "conformant", "claim", "verified", "c3", "x1", "d1", ("k2",))
    entry = fleet.finish("http://a/", rotated, run_id=None, at="T3")
    assert (entry.churn, entry.changes, entry.kinds, entry.last_change_at) == (0, 1, ("key",), "T3")
    churned = Finished(
        "http://a/card", "A", "churn", "claim", "verified", "c3", "x1", "d1", ("k2",), kinds=("verdict",)
    )  # as the history recorded it
    entry = fleet.finish("http://a/", churned, run_id=4, at="T4")
    assert (entry.churn, entry.changes, entry.runs) == (1, 2, 4)
    assert [e.name for e in fleet.view("changes")] == ["A"]


# --- on screen, against the restarted agent ------------------------------------------------------------


class Agent:
    """The restarted agent and its four runs, made once for the module."""

    def __init__(self, restarts: Restarts, runs: list[Run]) -> None:
        self.restarts = restarts
        self.runs = runs

    def record(self, count: int = 4) -> list[int]:
        """The first `count` runs recorded, in order, into this test's own history."""
        with History.open() as history:
            return [history.record(run) for run in self.runs[:count]]

    def app(self, tmp_path: Path) -> ExplorerApp:
        return make_app(None, tmp_path, settings={"keys": (self.restarts.jwks,), "runner": "tester"})


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview

    restarts = Restarts(tmp_path_factory.mktemp("restarted"))
    runs = []
    for changed in ({}, {}, {"rotated": True}, {"rotated": True, "description": NEW_DESCRIPTION}):
        with restarts.session(**changed) as url:
            options = Options(keys=(restarts.jwks,), runner="tester")
            runs.append(asyncio.run(run_interview(url, options)))
    assert [run.report["verdict"] for run in runs] == ["conformant"] * 4
    yield Agent(restarts, runs)


@sizes
async def test_history_marks_each_kind_and_changed_only_leaves_signed_again_out(
    agent: Agent, tmp_path: Path, size: tuple[int, int]
) -> None:
    ids = agent.record()
    async with agent.app(tmp_path).run_test(size=size) as pilot:
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.loaded)
        await pilot.pause()
        screen = pilot.app.screen
        table = screen.query_one("#runs", RunTable)
        since = {row.run_id: row.since for row in screen.rows}
        assert since == {ids[3]: "≠ declarations", ids[2]: "≠ key", ids[1]: "~ signed again", ids[0]: "first"}
        assert [row[3] for row in cells(table)] == ["≠ declarations", "≠ key", "~ signed again", "first"]
        assert "~ signed again" in screen_text(pilot.app)  # in view at 80x24 too
        await pilot.press("o")
        title = screen.query_one("#history-title")
        await wait_for(pilot, lambda: screen.loaded and CHANGED_ONLY in plain(title))
        assert [row.run_id for row in screen.rows] == [ids[3], ids[2]]  # signed again is no change


@sizes
async def test_compare_says_signed_again_is_no_change_and_names_a_key_change(
    agent: Agent, tmp_path: Path, size: tuple[int, int]
) -> None:
    first, again, rotated, _ = agent.runs
    async with agent.app(tmp_path).run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.app.push_screen(CompareScreen(first, 1, again, 2))
        await wait_for(pilot, lambda: compared(pilot.app))
        await pilot.pause()
        screen = pilot.app.screen
        title = plain(screen.query_one("#compare-title", Static))
        assert title.endswith("no change: signed again"), title
        facts = plain(screen.query_one("#compare-facts", Static))
        assert facts.startswith("~ signed again: the card was signed again over the same declarations")
        assert "~ card.sha256: " in facts and "≠ card.sha256" not in facts
        marks = {row[0] for row in cells(screen.query_one(DataTable))}
        assert "~ signed again" in marks and "≠ changed" not in marks
        assert "no change: signed again" in screen_text(pilot.app)

        pilot.app.pop_screen()
        await pilot.app.push_screen(CompareScreen(again, 2, rotated, 3))
        await wait_for(pilot, lambda: compared(pilot.app))
        await pilot.pause()
        screen = pilot.app.screen
        title = plain(screen.query_one("#compare-title", Static))
        assert title.endswith("changed: key changed"), title
        assert "≠ card.signers" in plain(screen.query_one("#compare-facts", Static))


@sizes
async def test_watch_raises_no_change_when_the_card_is_only_signed_again(
    agent: Agent, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = agent.app(tmp_path)
    with agent.restarts.session() as url:  # another restart: the first run's key, signed again
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.app.push_screen(WatchScreen(url, first=agent.runs[0], interval=3600))
            screen = pilot.app.screen
            await wait_for(pilot, lambda: screen.ticks == 1 and not screen.busy)
            await pilot.pause()
            timeline = screen.query_one(Timeline)
            line = timeline.get_option_at_index(timeline.option_count - 1).prompt.plain
            assert "~ " in line and line.endswith("no change: signed again"), line
            assert screen.changes == 0
            assert "1 replay · 0 with changes" in words(screen_text(pilot.app))


@sizes
async def test_the_fleet_counts_churn_verdicts_as_churn_and_changes_apart(
    agent: Agent, tmp_path: Path, size: tuple[int, int]
) -> None:
    agent.record()
    async with agent.app(tmp_path).run_test(size=size) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetScreen) and pilot.app.screen.loaded)
        await pilot.pause()
        screen = pilot.app.screen
        table = screen.query_one(FleetTable)
        assert [column.label for column in table.columns[3:6]] == ["churn", "changes", "runs"]
        [row] = cells(table)
        assert row[3:6] == ["0", "2", "4"]  # no churn verdict; a key change and a declarations change
        drawn = screen_text(pilot.app)
        assert "churn" in drawn and "changes" in drawn  # both in view at 80x24 too


@sizes
async def test_a_live_sweep_of_an_agent_signed_again_counts_no_change_and_no_churn(
    agent: Agent, tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent.record(1)
    app = agent.app(tmp_path)
    # The sweep waits until the fleet has read the history, so its run lands on the history's row
    # of the agent (before, that row's next run was compared by card digest: a churn).
    loaded = threading.Event()
    sweep = AppContext.sweep

    def sweep_once_loaded(self: AppContext, *args: Any, **kwargs: Any) -> None:
        assert loaded.wait(30)
        sweep(self, *args, **kwargs)

    monkeypatch.setattr(AppContext, "sweep", sweep_once_loaded)
    with agent.restarts.session() as url:
        app.start = Start(fleet=(url,))
        async with app.run_test(size=size) as pilot:
            screen = pilot.app.screen
            assert isinstance(screen, FleetScreen)
            await wait_for(pilot, lambda: screen.loaded)
            assert [e.runs for e in screen.fleet.entries.values()] == [1]
            live: list[FleetEntry] = []  # the sweep's row as it finished (the history is read again after)
            finish = screen.fleet.finish

            def finished(*args: Any, **kwargs: Any) -> FleetEntry:
                live.append(finish(*args, **kwargs))
                return live[-1]

            monkeypatch.setattr(screen.fleet, "finish", finished)
            loaded.set()
            await wait_for(pilot, lambda: bool(live), timeout=90)
            [entry] = live
            assert entry.live and entry.kinds == ("resigned",)
            assert [str(cell) for cell in screen._cells(entry)][3:6] == ["0", "0", "2"]
            await wait_for(pilot, lambda: not screen.sweeping and screen.reads > 1, timeout=30)
            await pilot.pause(0.5)
            [row] = cells(screen.query_one(FleetTable))
            assert row[3:6] == ["0", "0", "2"], row  # the history's row says the same
