"""What a newcomer tripped on in the TUI (issue 31), walked the way they walked it, at 80x24 and large.

Each test drives the app with keys under Pilot, at 80x24 and at 160x45, on the reference agents
over real loopback HTTP, and reads back what is drawn: the whole value read by scrolling down
alone, the reference agents reached with Down and Tab when every usual port is taken, the
sign-in banner after a refused credential, ctrl+l on the interview screen, the export dialog's
folder, the sign-in dialog's checkbox, the words of the header and the findings list, and the
columns of history and compare.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, TextArea

from explorer.demo.fleet import Fleet
from explorer.demo.ports import stable_ports
from explorer.demo.variants import VARIANTS
from explorer.tui.jsonview import neutralise, pretty
from explorer.tui.screens.auth import SignInScreen
from explorer.tui.screens.load import AgentList, LoadScreen
from explorer.tui.screens.value import ValueScreen
from tests.support.tui import (
    Tui,
    interview_ready,
    make_app,
    plain,
    screen_lines,
    wait_for,
    wait_for_interview,
)

pytestmark = pytest.mark.slow  # the TUI under Pilot

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())


def squeezed(text: str) -> str:
    """Text without its whitespace: what is left to compare once a line has been wrapped."""
    return "".join(text.split())


# --- 1. the whole value ------------------------------------------------------------------------------


async def read_whole_value(pilot: Any) -> str:
    """Every row the whole-value view draws, scrolled down page by page with the keys, inside its
    text area (and right of any line numbers), in the order of the document."""
    app = pilot.app
    whole = app.screen.query_one("#whole", TextArea)
    region = whole.content_region
    left = region.x + whole.gutter_width
    right = region.x + region.width - whole.styles.scrollbar_size_vertical
    rows: dict[int, str] = {}
    for _ in range(200):
        lines = screen_lines(app)
        top = round(whole.scroll_y)
        for offset in range(region.height):
            rows[top + offset] = lines[region.y + offset][left:right]
        if whole.scroll_y >= whole.max_scroll_y:
            break
        await pilot.press("pagedown")
        await pilot.pause()
    return "".join(rows[row] for row in sorted(rows))


@sizes
async def test_the_whole_value_is_read_by_scrolling_down_at_any_size(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    """The hostile agent's terms `/disputes` (580 characters on one line) is drawn whole within
    the box: no row of the view is wider than the box, and every character of the value is on
    some row, reached with page down (the rows used to be 160 columns, cut at the box's edge)."""
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.show_run(demo_runs["hostile"], 1)
        screen = await wait_for_interview(pilot)
        await pilot.press("4")  # the terms tab
        await wait_for(pilot, lambda: screen.selected_projection() is not None)
        for _ in range(20):
            chosen = screen.selected_projection()
            if chosen is not None and chosen.member == "/disputes" and len(pretty(chosen.value)) > 400:
                break
            await pilot.press("down")
            await pilot.pause()
        projection = screen.selected_projection()
        assert projection is not None and projection.member == "/disputes"
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueScreen))
        await pilot.pause()
        whole = app.screen.query_one("#whole", TextArea)
        assert whole.virtual_size.width <= whole.scrollable_content_region.width  # nothing off to the right
        drawn = squeezed(await read_whole_value(pilot))
        value = squeezed(neutralise(pretty(projection.value)))
        assert len(value) > whole.scrollable_content_region.width  # longer than a row: it had to wrap
        assert value in drawn


# --- 2. the load screen when every usual port is taken -------------------------------------------------


@pytest.fixture
def moved_fleet(monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    """The reference agents started as `demo` starts them, on their usual ports, while something
    else (a second `demo`, here plain sockets) holds every one of those ports: each agent moves."""
    base = 23_000
    monkeypatch.setenv("INTERVIEW_EXPLORER_DEMO_PORTS", str(base))
    held: list[socket.socket] = []
    for port in stable_ports(VARIANTS, base).values():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            sock.close()  # taken already: by something else, which serves the test as well
            continue
        held.append(sock)
    try:
        with Fleet(stable=True) as fleet:
            yield fleet
    finally:
        for sock in held:
            sock.close()


@sizes
async def test_moved_agents_take_one_line_and_down_and_tab_reach_the_list(
    moved_fleet: Fleet, tmp_path: Path, size: tuple[int, int]
) -> None:
    assert len(moved_fleet.moved) == len(moved_fleet.agents)  # every agent moved
    app = make_app(moved_fleet, tmp_path, demo_moved=dict(moved_fleet.moved))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LoadScreen)
        text = "\n".join(screen_lines(app))
        assert f"{len(moved_fleet.moved)} reference agents moved to other ports" in text
        assert "its usual port" not in text
        listing = screen.query_one("#demo", AgentList)

        def list_on_show() -> bool:
            region = listing.region
            return region.height >= 4 and region.bottom <= size[1] - 1  # above the footer

        await pilot.press("ctrl+l")
        assert screen.focused is screen.query_one("#target")
        await pilot.press("down")
        assert screen.focused is listing and list_on_show()
        await pilot.press("down", "down")
        assert listing.highlighted == 2
        highlighted_row = listing.region.y + listing.highlighted * 2  # two rows an agent
        assert highlighted_row < listing.region.bottom
        drawn = screen_lines(app)
        third = list(moved_fleet.agents)[2]
        assert any(third in line for line in drawn)
        await pilot.press("ctrl+l", "tab", "tab")  # the target, the Interview button, the list
        assert screen.focused is listing and list_on_show()


# --- 3. a refused credential changes the banner ------------------------------------------------------


def banner(app: Any) -> str:
    return " ".join(plain(app.screen.query_one("#auth-note")).split())


@sizes
@pytest.mark.parametrize(
    ("agent", "typed"),
    [
        ("guarded-bearer", ["not-the-token"]),
        ("guarded-oauth2", ["interview-explorer-demo", "not-the-secret"]),
    ],
    ids=["bearer", "oauth2"],
)
async def test_a_refused_credential_says_so_in_the_banner(
    tui: Tui, fleet: Fleet, agent: str, typed: list[str], size: tuple[int, int]
) -> None:
    """Over real HTTP: the guarded agent refuses the questions, the banner asks to sign in; a wrong
    token (or client secret) typed in the dialog is sent and refused, and the banner of the
    replayed run says it was refused, not "authentication required" again."""
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(fleet.agents[agent].card_url)
        first = await wait_for_interview(pilot)
        assert banner(app).startswith("authentication required:")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, SignInScreen))
        await pilot.pause()
        for index, text in enumerate(typed):
            if index:
                await pilot.press("tab")
            await pilot.press(*text)
        await pilot.press("enter")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not first)
        words = banner(app)
        assert words.startswith("✗ sign-in refused:"), words
        assert "authentication required" not in words
        assert "press a to sign in again" in words
        drawn = " ".join("\n".join(screen_lines(app)).split())
        assert "sign-in refused" in drawn  # on show at this size, not only in the widget


# --- 4. keys: ctrl+l on the interview screen -------------------------------------------------------


@sizes
async def test_ctrl_l_on_the_interview_screen_types_the_next_target(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    """ctrl+l does what it does on the load screen: the target field, focused, its text selected;
    a URL typed then goes into the field, and its letters run no command (`h` opened History)."""
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        load = app.screen
        load.query_one("#target", Input).value = "the last target"
        app.show_run(demo_runs["drifting"], 1)
        await wait_for_interview(pilot)
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app.screen is load and load.focused is load.query_one("#target"))
        await pilot.press(*"http://h.example/")
        await pilot.pause()
        assert load.query_one("#target", Input).value == "http://h.example/"  # replaced, not appended
        assert app.screen is load and len(app.screen_stack) == 1


async def test_ctrl_l_on_an_interview_opened_first_brings_up_the_load_screen(
    tui: Tui, demo_runs: dict[str, Any], tmp_path: Path
) -> None:
    """Started on a stored run (no load screen below it), ctrl+l puts one up, its field focused."""
    from explorer.tui.app import ExplorerApp, Start

    context = make_app(None, tmp_path).context
    app = ExplorerApp(context, Start(run=demo_runs["steady"], run_id=1, origin="test"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_interview(pilot)
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, LoadScreen) and app.screen.is_mounted)
        await pilot.pause()
        assert app.screen.focused is app.screen.query_one("#target")
        await pilot.press(*"hostile")
        assert app.screen.query_one("#target", Input).value == "hostile"


# --- 4. the sign-in dialog's checkbox --------------------------------------------------------------


def checkbox(app: Any) -> str:
    """The box drawn before "also save a config entry" (`▐X▌` or `▐ ▌`)."""
    row = next(line for line in screen_lines(app) if "also save a config entry" in line)
    return row.split("also save")[0].rstrip()[-3:]


@sizes
async def test_the_save_checkbox_is_empty_until_ticked_and_ticked_it_saves_and_says_where(
    tui: Tui, fleet: Fleet, size: tuple[int, int], _isolated_home: Path
) -> None:
    """Without colour (NO_COLOR, as here) the box drew an X ticked or not, so "also save a config
    entry" read as ticked and nothing was saved. Unticked it is now empty; ticked (with space, as
    a user does) it shows the X, the dialog says which file the entry goes to, and Sign in
    writes it there."""
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(fleet.agents["guarded-bearer"].card_url)
        await wait_for_interview(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, SignInScreen))
        await pilot.pause()
        assert checkbox(app) == "▐ ▌"
        await pilot.press(*"a-token", "tab", "space")
        await pilot.pause()
        assert checkbox(app) == "▐X▌"
        config = _isolated_home / "config.toml"
        drawn = " ".join("".join(screen_lines(app)).split())
        assert f"added to {config} on Sign in" in drawn
        await pilot.press("tab", "enter")  # the name field (filled in), then Sign in
        await wait_for(pilot, lambda: config.exists())
        assert "[agents." in config.read_text(encoding="utf-8")


# --- 4. the export dialog's folder ----------------------------------------------------------------


async def test_the_export_dialog_starts_in_the_folder_chosen_last_this_session_and_the_next(
    tui: Tui, demo_runs: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from explorer.tui.export_folder import starting_folder, usual_folder
    from explorer.tui.launch import build_context
    from explorer.tui.screens.export import ExportScreen

    monkeypatch.chdir(tmp_path)
    assert usual_folder() != Path.cwd() and starting_folder() == usual_folder()  # never the clone
    chosen = tmp_path / "my exports"
    chosen.mkdir()
    async with tui(agents=False, size=(80, 24)) as pilot:
        app = pilot.app
        app.show_run(demo_runs["steady"], 1)
        await wait_for_interview(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen))
        await pilot.pause()
        field = app.screen.query_one("#export-dir", Input)
        field.value = str(chosen)
        await pilot.click("#export-json")
        await wait_for(pilot, lambda: not isinstance(app.screen, ExportScreen))
        assert list(chosen.glob("*.json"))
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen))
        await pilot.pause()
        assert app.screen.query_one("#export-dir", Input).value == str(chosen)  # this session
    import argparse

    assert build_context(argparse.Namespace()).export_dir == chosen  # the next session


# --- 4. the browser's first frame --------------------------------------------------------------------


async def test_the_first_frame_without_focus_has_a_footer_and_typing_goes_where_it_shows(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served to a browser the app starts without focus (the tab has not been clicked): the footer
    is drawn anyway, and the widget that looks focused is the one typing goes to, the field."""
    from explorer.tui.app import ExplorerApp

    monkeypatch.setattr(ExplorerApp, "is_web", property(lambda _app: True))
    app = make_app(fleet, tmp_path)
    app.set_reactive(ExplorerApp.app_focus, False)  # a browser tab not clicked yet
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LoadScreen) and app.screen.is_mounted)
        await pilot.pause(0.3)
        assert not app.app_focus
        footer = screen_lines(app)[-1]
        assert "Quit" in footer and "Help" in footer, footer
        assert app.screen.focused is app.screen.query_one("#target")
        await pilot.press(*"drifting")
        assert app.screen.query_one("#target", Input).value == "drifting"


# --- 8. words ---------------------------------------------------------------------------------------------


@sizes
async def test_the_header_says_the_verdict_in_words_and_who_ran_it(
    tui: Tui, fleet: Fleet, size: tuple[int, int]
) -> None:
    import getpass

    async with tui(size=size, settings={"keys": (), "runner": getpass.getuser()}) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(fleet.agents["silent"].card_url)
        await wait_for_interview(pilot)
        drawn = " ".join("\n".join(screen_lines(app)).split())
        assert "verdict – not offered" in drawn
        assert "NOT_OFFERED" not in drawn
        assert "not_offered" not in plain(app.screen.query_one("#header"))
        assert f"run by you (user {getpass.getuser()}), no independent role declared" in drawn
        assert f"{getpass.getuser()} declared" not in drawn


@sizes
async def test_findings_count_projections_from_one_in_natural_order(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    """The hostile agent's lossy numbers are in terms projections 2 and 10 (indexes 1 and 9):
    listed as projection 3, then 11, not "projection 10" before "projection 2"."""
    report = demo_runs["hostile"].report
    details = [
        f["detail"] for f in report["findings"] if f["code"] == "lossy_number" and f["member"] == "/price"
    ]
    assert [d.split(":")[0] for d in details] == ["projection 10", "projection 2"]  # as the report has them
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.show_run(demo_runs["hostile"], 1)
        await wait_for_interview(pilot)
        await pilot.press("f")
        await pilot.pause()
        drawn = "\n".join(screen_lines(app))
        assert "projection 3:" in drawn and "projection 11:" in drawn and "projection 10:" not in drawn
        assert drawn.index("projection 3:") < drawn.index("projection 11:")
        assert "projection 2:" in drawn  # identity's projection 1 (index 1), counted from one


# --- 7. the history's columns at 80x24 -------------------------------------------------------------------


async def test_no_history_column_is_drawn_cut_to_a_letter(tui: Tui, demo_runs: dict[str, Any]) -> None:
    from explorer.tui.screens.history import HistoryScreen

    async with tui(agents=False, size=(80, 24)) as pilot:
        app = pilot.app
        context = app.context
        for name in ("steady", "drifting", "hostile"):
            context.record(demo_runs[name])
        app.action_history()
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.is_mounted)
        await pilot.pause(0.5)
        header = next(line for line in screen_lines(app) if line.split()[:2] == ["run", "verdict"])
        labels = header.split()
        assert labels[-1] != "t" and "since previous" in header, header
        for label in ("time (UTC)", "card", "answers", "standing"):
            assert label in header or label.split()[0] not in labels, header
        await pilot.press("right", "right")  # a column at a time
        await pilot.pause()
        assert "time (UTC)" in "\n".join(screen_lines(app))


# --- 7. compare at 80x24: both runs' columns, both differing spans -----------------------------------


@sizes
async def test_compare_shows_both_runs_and_where_each_differs(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    """Steady against drifting, on the changed value that is longest (the card's `/signatures`,
    500 characters): the later run's column is on show (a long change mark pushed it off 80
    columns), and the detail shows each run's differing span with its carets within the lines on
    show (the later run's came below them)."""
    from explorer.tui.screens.compare import CompareScreen

    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.push_screen(CompareScreen(demo_runs["steady"], 1, demo_runs["drifting"], 2))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and bool(app.screen.rows))
        screen = app.screen
        changed = [r for r in screen.rows if r.kind == "changed" and r.before and r.after]
        longest = max(changed, key=lambda r: len(r.before or ""))
        assert len(longest.before or "") > 400
        table = screen.query_one("#compare-table")
        for _ in range(len(screen.rows)):
            if screen.rows[table.cursor_row] is longest:
                break
            await pilot.press("n")
            await pilot.pause()
        row = screen.rows[table.cursor_row]
        assert row is longest
        await pilot.pause(0.3)
        lines = screen_lines(app)
        heading = next(line for line in lines if "pointer · document" in line)
        assert "A run #1" in heading and "B run #2" in heading, heading
        a_row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("A run #1  "))
        b_row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("B run #2  "))
        below_a = "\n".join(lines[a_row:b_row])
        below_b = "\n".join(lines[b_row : len(lines) - 1])  # above the footer
        assert "«" in below_a and "^" in below_a
        assert "«" in below_b and "^" in below_b, below_b
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueScreen))
        assert row.before in app.screen.text and row.after in app.screen.text
