"""The history and fleet screens at depth, at 80x24 and at a large size, on real stores.

A history of 450 runs over three agents (two of them share a card name) in a real SQLite file:
the history screen reads it a page at a time by keyset as the last rows come into view, filters
by verdict, by changed-only and by agent (found by typing), says what changed in each row even
when the run before is filtered out, and jumps to a date. Every store read of both screens
happens off the event loop. Runs that another process records (`verify` in a subprocess, into
the same SQLite file or the same PostgreSQL database) show up on both screens without a key.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from explorer.config.history_choice import choose_history
from explorer.store.sqlite import HISTORY_FILE, History
from explorer.tui.screens.fleet import FleetScreen, FleetTable
from explorer.tui.screens.history import PAGE, HistoryScreen, RunTable
from tests.support.runs import CARD_URL, make_run
from tests.support.tui import make_app, plain, screen_text, wait_for

pytestmark = pytest.mark.slow  # the TUI under Pilot, subprocesses

SIZES = {"80x24": (80, 24), "160x50": (160, 50)}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
OTHER = "http://127.0.0.1:10/.well-known/agent-card.json"
TWIN = "http://127.0.0.1:11/.well-known/agent-card.json"  # another agent with CARD_URL's card name
START = datetime(2026, 1, 1, tzinfo=UTC)
RUNS = 450


class Clock:
    """One hour later for every run recorded: run n (from 1) at START + (n - 1) hours."""

    def __init__(self) -> None:
        self.now = START - timedelta(hours=1)

    def __call__(self) -> datetime:
        self.now += timedelta(hours=1)
        return self.now


def _run(n: int) -> Any:
    """Run n+1: agents in turn; every tenth steady run answers another name (nonconformant)."""
    tick = {"started_at": f"2025-01-01T00:00:{n % 60:02d}.000Z", "elapsed_ms": 1.0 + n}
    if n % 3 == 0:
        odd = n % 30 == 27
        return make_run(
            answered_name="Impostor" if odd else None,
            verdict="nonconformant" if odd else "conformant",
            **tick,
        )
    if n % 3 == 1:
        verdict = "churn" if n % 21 == 1 else "conformant"
        return make_run(card_url=OTHER, name="Other", verdict=verdict, **tick)
    return make_run(card_url=TWIN, **tick)


@pytest.fixture(scope="module")
def deep_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 450-run history file, made once and copied into each test's home."""
    folder = tmp_path_factory.mktemp("deep")
    with History.open(folder, clock=Clock()) as history:
        for n in range(RUNS):
            history.record(_run(n))
    return folder / HISTORY_FILE


@pytest.fixture
def deep(deep_file: Path, _isolated_home: Path) -> Path:
    shutil.copy(deep_file, _isolated_home / HISTORY_FILE)
    return _isolated_home


class StoreReads:
    """Every use the app makes of its history store, with the screen on show when it was made on
    the event loop's thread; and every page the history screen asked for."""

    MINE = ("HistoryScreen", "FleetScreen")

    def __init__(self, app: Any) -> None:
        self.loop_reads: list[str] = []
        self.pages: list[tuple[Any, int | None, int]] = []
        context = app.context
        opened, paged = context.history, context.page

        def history() -> Any:
            if threading.current_thread() is threading.main_thread():
                self.loop_reads.append(type(app.screen).__name__)
            return opened()

        def page(which: Any, before: int | None = None, limit: int = PAGE) -> Any:
            self.pages.append((which, before, limit))
            return paged(which, before, limit)

        context.history = history
        context.page = page

    @property
    def on_loop(self) -> list[str]:
        """Reads made on the event loop while the history or the fleet screen was on show."""
        return [name for name in self.loop_reads if name in self.MINE]


def app_for(tmp_path: Path, **overrides: Any) -> tuple[Any, StoreReads]:
    app = make_app(None, tmp_path, **overrides)
    return app, StoreReads(app)


def runs_table(screen: HistoryScreen) -> RunTable:
    return screen.query_one("#runs", RunTable)


def cells(table: RunTable | FleetTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def title(screen: Any) -> str:
    return plain(screen.query_one("#history-title" if isinstance(screen, HistoryScreen) else "#fleet-title"))


async def open_history(pilot: Any) -> HistoryScreen:
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.loaded)
    await pilot.pause()
    return pilot.app.screen


async def type_into(pilot: Any, text: str) -> None:
    await pilot.press(*("space" if ch == " " else ch for ch in text))


@sizes
async def test_the_history_pages_through_every_run_by_keyset(deep: Path, tmp_path: Path, size: Any) -> None:
    app, reads = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = await open_history(pilot)
        table = runs_table(screen)
        assert table.row_count == PAGE and f"{PAGE} runs shown, older below" in title(screen)
        await pilot.press("end")  # the last rows in view: the next page is read
        await wait_for(pilot, lambda: table.row_count == 2 * PAGE)
        await pilot.press("end")
        await wait_for(pilot, lambda: table.row_count == RUNS)
        assert [row.run_id for row in screen.rows] == list(range(RUNS, 0, -1))  # each run once, in order
        assert f"{RUNS} runs ·" in title(screen) and "older below" not in title(screen)
        assert table.cursor_row == 2 * PAGE - 1  # the cursor stayed where end put it
        # Keyset: each page asks for the runs before the last one shown (never an offset).
        befores = [before for _which, before, _limit in reads.pages]
        assert befores == [None, RUNS - PAGE + 1, RUNS - 2 * PAGE + 1]
        await pilot.press("end")
        await pilot.pause(0.3)
        assert len(reads.pages) == 3  # nothing older: no more reads
        assert reads.on_loop == [], f"store reads on the event loop: {reads.on_loop}"


@sizes
async def test_filters_narrow_what_is_read_and_each_row_says_what_changed(
    deep: Path, tmp_path: Path, size: Any
) -> None:
    app, reads = app_for(tmp_path)
    with History.open() as history:
        impostors = [r.id for r in history.runs(CARD_URL, limit=1000) if r.verdict == "nonconformant"]
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = await open_history(pilot)
        table = runs_table(screen)
        await pilot.press("v")  # only nonconformant
        await wait_for(pilot, lambda: screen.loaded and table.row_count == len(impostors))
        assert [row.run_id for row in screen.rows] == impostors
        # The run before each is filtered out, and still each row says what changed since it.
        assert {row[3] for row in cells(table)} == {"≠ answers+verdict"}
        assert "only nonconformant" in title(screen)
        for _ in range(5):  # back round to every verdict
            await pilot.press("v")
        await wait_for(pilot, lambda: screen.loaded and "every verdict" in title(screen))
        await pilot.press("o")  # only runs that changed from their agent's run before
        await wait_for(pilot, lambda: screen.loaded and "only runs that changed" in title(screen))
        changed = [row.run_id for row in screen.rows]
        with History.open() as history:
            from explorer.store.base import RunQuery

            assert changed == [r.id for r in history.query(RunQuery(changed=True))]
        assert changed and all(row[3].startswith("≠ ") for row in cells(table))
        assert reads.pages[-1][0].changed and reads.pages[-1][0].verdict is None
        await pilot.press("o")
        await wait_for(pilot, lambda: screen.loaded and table.row_count == PAGE)
        assert reads.on_loop == [], f"store reads on the event loop: {reads.on_loop}"


@sizes
async def test_a_jump_to_a_date_starts_the_list_there(deep: Path, tmp_path: Path, size: Any) -> None:
    app, _reads = app_for(tmp_path, clock=lambda: START + timedelta(days=30))
    app.NOTIFICATION_TIMEOUT = 600
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = await open_history(pilot)
        table = runs_table(screen)
        await pilot.press("t")
        await type_into(pilot, "2026-01-05")
        await pilot.press("enter")
        # The runs recorded up to the end of that day: run n was recorded at hour n - 1.
        await wait_for(pilot, lambda: screen.loaded and screen.rows and screen.rows[0].run_id == 120)
        assert "recorded before 2026-01-06 00:00 UTC" in title(screen)
        assert table.row_count == 120 and "older below" not in title(screen)
        assert "#120" in screen_text(app)
        await pilot.press("t")
        await type_into(pilot, "next tuesday")
        await pilot.press("enter")
        await pilot.pause()
        assert any("is not a moment" in n.message for n in app._notifications)
        assert screen.query_one("#history-date").display  # still open to correct
        await pilot.press("escape")
        assert not screen.query_one("#history-date").display and isinstance(app.screen, HistoryScreen)
        await pilot.press("t")
        await type_into(pilot, "1d")  # an age: a day before the (fixed) clock's now, day 30
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.loaded and screen.rows and screen.rows[0].run_id == RUNS)
        assert "recorded before 2026-01-30 00:00 UTC" in title(screen)


@sizes
async def test_every_agent_is_told_apart_and_one_is_found_by_typing(
    deep: Path, tmp_path: Path, size: Any
) -> None:
    app, reads = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = await open_history(pilot)
        text = screen_text(app)
        # The agent column is in view at 80x24; the two "Steady Agent"s say which is which.
        assert "Steady Agent :9" in text and "Steady Agent :11" in text and "Other" in text
        newest = cells(runs_table(screen))[:3]
        assert [row[2] for row in newest] == ["Steady Agent :11", "Other", "Steady Agent :9"]
        await pilot.press("a")
        await type_into(pilot, "other")
        await pilot.press("enter", "down", "enter")  # to the list, the one agent found, pick it
        await wait_for(pilot, lambda: screen.loaded and screen.agent == OTHER)
        assert title(screen).startswith("History  Other  127.0.0.1:10")
        assert len(screen.rows) == RUNS // 3 and all(row.agent == OTHER for row in screen.rows)
        assert "agent" not in [c.label for c in runs_table(screen).columns]  # the title names it
        assert isinstance(app.screen.focused, RunTable)
        assert reads.on_loop == [], f"store reads on the event loop: {reads.on_loop}"


def _verify(url: str, history: str) -> None:
    """Another runner: `verify` in a process of its own, recording into the same history."""
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "verify", url, "--history", history, "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "not recorded" not in done.stderr, done.stderr


def newest_id(url: str) -> int:
    from explorer.store.location import open_store

    with open_store(url) as store:
        return store.last_run_id()


@sizes
async def test_runs_another_process_records_show_up_without_a_key(
    fleet: Any, store_url: str, store_factory: Any, tmp_path: Path, size: Any
) -> None:
    store = store_factory()
    first = [
        store.record(make_run(started_at=f"2025-01-01T00:00:0{n}.000Z", elapsed_ms=1.0 + n)) for n in range(3)
    ]
    steady = fleet.agents["steady"].card_url
    app, reads = app_for(tmp_path, history_choice=choose_history(store_url))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.loaded)
        fleet_screen = app.screen
        table = fleet_screen.query_one(FleetTable)
        assert table.row_count == 1
        await asyncio.to_thread(_verify, steady, store_url)
        await wait_for(pilot, lambda: table.row_count == 2, timeout=30)  # no key pressed
        assert "2 agents" in title(fleet_screen)
        assert steady.split("/")[2] in screen_text(app)  # where it is, in view at 80x24 too
        fourth = newest_id(store_url)

        await pilot.press("escape")
        screen = await open_history(pilot)
        table = runs_table(screen)
        assert [row.run_id for row in screen.rows] == [fourth, *first[::-1]]
        await pilot.press("down", "down")  # the third run highlighted
        await asyncio.to_thread(_verify, steady, store_url)
        fifth = newest_id(store_url)
        await wait_for(pilot, lambda: bool(screen.rows) and screen.rows[0].run_id == fifth, timeout=30)
        assert [row.run_id for row in screen.rows] == [fifth, fourth, *first[::-1]]
        assert table.current.run_id == first[1]  # the highlighted run stays highlighted
        assert "5 runs" in title(screen)
        store.forget_run(first[0])  # forgotten elsewhere: gone from the list too
        await wait_for(
            pilot, lambda: [r.run_id for r in screen.rows] == [fifth, fourth, first[2], first[1]], timeout=30
        )
        assert table.current.run_id == first[1]
    assert reads.on_loop == [], f"store reads on the event loop: {reads.on_loop}"
