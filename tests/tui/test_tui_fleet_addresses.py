"""The fleet says where an agent was seen, and what its row cannot hold, at 80x24 (issue 28, item 3).

One agent across addresses is one row (`explorer.store.identity`); the row says where its latest
run was and how many addresses more (`127.0.0.1:PORT +1`), and the selected agent's detail under
the table lists every address, the latest first, with its standing, signature and what its latest
run changed: the columns an 80-column terminal cannot show beside the verdict, churn and changes
(issue 31 item 7: "the fleet's last columns only reachable with →"). The agent is the steady
reference agent restarted on another port and back (`tests.support.restarts`), its card signed
again at each start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.core.run import Run
from explorer.store.sqlite import History
from explorer.tui.screens.fleet import FleetScreen, FleetTable, fleet_columns
from explorer.tui.widgets.rowtable import PADDING
from tests.support.restarts import Restarts
from tests.support.tui import TUI_SIZE, make_app, plain, screen_text, wait_for

SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())


def drawn_width(columns: list, upto: int) -> int:
    return sum(column.width + 2 * PADDING for column in columns[:upto])


def test_the_counts_always_fit_and_the_rest_come_into_view_as_the_width_allows() -> None:
    where = len("127.0.0.1:40001 +2")
    narrow = fleet_columns(77, where)
    labels = [column.label for column in narrow]
    assert labels[:6] == ["verdict", "agent", "where", "churn", "changes", "runs"]
    assert drawn_width(narrow, 6) <= 77 and narrow[2].width == where
    # the last change, standing and signature each come into view whole once there is room for
    # them beside an agent name of its least width, before the name grows
    for width, last in ((100, "last change"), (112, "standing"), (126, "signature")):
        columns = fleet_columns(width, where)
        shown = next(i for i, column in enumerate(columns) if column.label == last) + 1
        assert drawn_width(columns, shown) <= width, (width, last)
    wide = fleet_columns(220, where)
    assert wide[1].width == 40 and drawn_width(wide, len(wide)) <= 220  # the card URL too


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Restarts, list[Run], list[str]]]:
    """Three runs of one signed agent: on its port, on another one, and back."""
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview

    restarts = Restarts(tmp_path_factory.mktemp("moved"))
    runs, urls = [], []
    for elsewhere in (False, True, False):
        with restarts.session(moved=elsewhere) as url:
            urls.append(url)
            runs.append(asyncio.run(run_interview(url, Options(keys=(restarts.jwks,), runner="tester"))))
    assert urls[0] == urls[2] != urls[1]
    yield restarts, runs, urls


@pytest.mark.slow  # TUI (Pilot)
@sizes
async def test_the_row_counts_the_other_addresses_and_the_detail_lists_them(
    moved: tuple[Restarts, list[Run], list[str]], tmp_path: Path, size: tuple[int, int]
) -> None:
    restarts, runs, urls = moved
    app = make_app(None, tmp_path, settings={"keys": (restarts.jwks,), "runner": "tester"})
    with History.open() as history:
        for run in runs:
            history.record(run)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetScreen) and pilot.app.screen.loaded)
        screen = pilot.app.screen
        table = screen.query_one(FleetTable)
        await wait_for(pilot, lambda: table.row_count == 1 and str(table.get_row_at(0)[8]) != "unchecked")
        row = [str(cell) for cell in table.get_row_at(0)]
        port = urls[2].split("/")[2]
        assert row[0] == "✓ conformant" and row[2] == f"{port} +1" and row[3:6] == ["0", "2", "3"]
        detail = plain(screen.query_one("#fleet-detail"))
        lines = detail.splitlines()
        assert lines[0] == "Stonework Books (Steady)"
        assert lines[1] == "✓ conformant · standing claim · signature verified · 3 runs"
        # back on its port, its card names its endpoint again: changed declarations
        assert lines[2].startswith("since the run before: ≠ declarations")
        assert lines[3:] == [f"seen at {urls[2]} (latest)", f"{'':8}{urls[1]}"]
        drawn = screen_text(pilot.app)
        for line in (f"{port} +1", *lines):  # every line whole on screen, at 80x24 too
            assert line in drawn, line
        assert "changes" in drawn and "churn" in drawn
