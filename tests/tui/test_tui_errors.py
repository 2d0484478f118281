"""What goes wrong, drawn right: errors in place, cancelling, and the hostile agent.

A target that is unreachable, not JSON, or JSON that is not a card gets its reason under the
input on the load screen, never a traceback. An interview against an agent that never answers
can be cancelled and leaves nothing running. The hostile reference agent (markup, ANSI escapes,
bidi overrides, a 1 MB description) renders as inert text: clicking all over it runs no action
and the terminal never receives its control characters. The mouse selects projections.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static

from explorer.tui import collector
from explorer.tui.app import ExplorerApp
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from explorer.tui.screens.progress import ProgressScreen
from explorer.tui.widgets.question import QuestionPane
from tests.support.paths import REPO
from tests.support.tui import Tui, plain, screen_text, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot


async def submit(pilot: Any, target: str) -> None:
    app = pilot.app
    field = app.screen.query_one("#target", Input)
    field.focus()
    field.value = target
    await pilot.press("enter")


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


def closed_port() -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("unreachable", "card_unreachable: no card at http://127.0.0.1:"),
        ("not json", "card_malformed: the card at"),
        ("not a card", "not an A2A Agent Card: /name is missing"),
        ("nonsense", "'no such thing' is not a URL, a card file or a configured agent; a target is"),
    ],
)
async def test_errors_are_shown_in_place_on_the_load_screen(
    tmp_path: Path, kind: str, expected: str, tui: Tui
) -> None:
    targets = {
        "unreachable": f"http://127.0.0.1:{closed_port()}/",
        "not json": str(tmp_path / "broken.json"),
        "not a card": str(tmp_path / "hello.json"),
        "nonsense": "no such thing",
    }
    (tmp_path / "broken.json").write_text("{ not json")
    (tmp_path / "hello.json").write_text('{"hello": "[b]world[/b]"}')
    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        await submit(pilot, targets[kind])
        error = app.screen.query_one("#load-error", Static)
        await wait_for(pilot, lambda: error.display and isinstance(app.screen, LoadScreen))
        text = plain(error)
        assert text.startswith("✗ could not interview " + targets[kind])
        assert expected in text
        assert app.is_running and isinstance(app.screen, LoadScreen)
        await submit(pilot, "")
        assert not error.display  # an empty target does nothing, and clears the message


async def test_a_silent_agent_can_be_cancelled(silent_port: int, tui: Tui) -> None:
    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        await submit(pilot, f"http://127.0.0.1:{silent_port}/")
        progress = app.screen
        assert isinstance(progress, ProgressScreen)
        await wait_for(pilot, lambda: progress.events >= 1)
        assert "step " in plain(progress.query_one("#step", Static))
        await pilot.pause(0.3)
        assert app.screen is progress, "still waiting on the agent, and the screen still answers"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, LoadScreen)
        assert any(n.message == "interview cancelled" for n in app._notifications)
        await pilot.pause(0.2)
        assert not [w for w in app.workers if w.group == "interview" and w.is_running]
        assert not any(isinstance(s, InterviewScreen) for s in app.screen_stack)


async def test_esc_before_the_progress_screen_is_drawn_cancels_cleanly(silent_port: int, tui: Tui) -> None:
    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(f"http://127.0.0.1:{silent_port}/")
        progress = app.last_progress
        assert isinstance(progress, ProgressScreen) and not progress.is_mounted
        progress.action_cancel()  # what Esc does, before the screen has mounted
        await pilot.pause(0.3)
        assert app.is_running and isinstance(app.screen, LoadScreen)
        assert any(n.message == "interview cancelled" for n in app._notifications)
        assert not [w for w in app.workers if w.group == "interview"], "no interview starts once cancelled"
        assert not collector.paused(), "the garbage collector is not left off"


def clickable_cells(app: ExplorerApp) -> list[tuple[int, str]]:
    """Every drawn segment whose style carries a click action (what markup would create)."""
    update = app.screen._compositor.render_update(full=True)
    found = []
    for y, line in enumerate(update.strips[:-1]):  # the footer's keys are our own bindings
        for strip in line:
            for segment in strip:
                meta = segment.style.meta if segment.style else None
                if meta and "@click" in meta:
                    found.append((y, str(meta["@click"])))
    return found


async def test_hostile_agent_renders_as_text_and_clicks_trigger_nothing(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        names = [agent.name for agent in app.context.demo]
        await pilot.press("home", *["down"] * names.index("hostile"), "enter")
        await wait_for_interview(pilot)
        screen = app.screen
        header = plain(screen.query_one("#header", Static))
        assert header.startswith("[@click=app.quit]Hostile[/] [bold red]Agent[/]")
        assert "\\x1b" in header and "<U+202E>" in header
        drawn = screen_text(app)
        for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00"):
            assert raw not in drawn
        assert "[@click=app.quit]" in drawn

        for tab in ("1", "2", "3", "4", "5", "f"):  # every tab, every cell: no click action anywhere
            await pilot.press(tab)
            await pilot.pause()
            assert clickable_cells(app) == [], tab

        # And real clicks where the hostile text is: the name, its rows, the detail, the findings.
        await pilot.press("1")
        before = list(app.actions_run)
        for x in range(1, 60, 4):
            await pilot.click(offset=(x, 0))
        listing = screen.query_one("#list-identity", OptionList)
        for row in range(listing.option_count):
            await pilot.click(listing, offset=(6, row))
        await pilot.click("#detail-identity .info", offset=(12, 0))
        await pilot.click("#detail-identity .answer", offset=(4, 2))
        await pilot.pause()
        assert app.actions_run == before, app.actions_run[len(before) :]
        await pilot.press("f")
        before = list(app.actions_run)
        for row in range(0, 6, 2):
            await pilot.click("#findings", offset=(10, row))
        await pilot.pause()
        assert app.actions_run == before, app.actions_run[len(before) :]
        assert app.is_running and any(isinstance(s, InterviewScreen) for s in app.screen_stack)


async def test_the_mouse_selects_projections(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        names = [agent.name for agent in app.context.demo]
        await pilot.press("home", *["down"] * names.index("drifting"), "enter")
        await wait_for_interview(pilot)
        pane = app.screen.query_one("#pane-usage", QuestionPane)
        listing = pane.query_one(OptionList)
        await pilot.click(listing, offset=(4, 0))
        await pilot.pause()
        assert pane.selected is not None and pane.selected.member == "/supportedInterfaces"
        assert "pointer  /supportedInterfaces   ✓ match" in plain(pane.query_one(".info", Static))


async def test_a_run_that_cannot_be_recorded_says_why_in_its_header(
    fleet: Any, monkeypatch: pytest.MonkeyPatch, tui: Tui
) -> None:
    from explorer.store.base import HistoryError
    from explorer.store.sqlite import History

    def full(self: Any, run: Any) -> int:
        raise HistoryError("cannot record the run: the disk is full")

    monkeypatch.setattr(History, "record", full)
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(fleet.agents["steady"].card_url)
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "run not recorded" in header
        assert "✗ run not recorded: cannot record the run: the disk is full" in header
        assert "✓ conformant" in header  # the verdict stands; only the history failed


async def test_every_toast_is_plain_text_whoever_raises_it(tui: Tui) -> None:
    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        app.screen.notify("[@click=app.quit]boom[/] \x1b[31mred", title="\x1b]0;title\x07", markup=True)
        await pilot.pause()
        toast = list(app._notifications)[-1]
        assert toast.message == "[@click=app.quit]boom[/] \\x1b[31mred"
        assert "\x1b" not in toast.title and toast.markup is False
        assert app.is_running and "app.quit" not in app.actions_run


def test_every_toast_that_quotes_anything_is_plain_text() -> None:
    """The app's notify honours `markup` (Textual's own hints are markup). A call in the explorer
    whose message is not a fixed string quotes exceptions or agent text, so it must say
    markup=False."""
    import ast

    root = REPO / "explorer"
    missing = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "notify"):
                continue
            if isinstance(node.func.value, ast.Call):  # super().notify: the override itself
                continue
            fixed = bool(node.args) and isinstance(node.args[0], ast.Constant)
            markup = [k.value for k in node.keywords if k.arg == "markup"]
            plain = bool(markup) and isinstance(markup[0], ast.Constant) and markup[0].value is False
            if not (fixed or plain):
                missing.append(f"{path.relative_to(root)}:{node.lineno}")
    assert missing == []


async def test_a_toast_that_asks_for_markup_styles_words_but_never_runs_an_action(tui: Tui) -> None:
    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        app.notify("Press [b]ctrl+q[/b] to quit")
        app.notify("[@click=app.quit]boom[/]")
        app.notify("[/] unbalanced")
        await pilot.pause()
        assert [n.markup for n in app._notifications] == [True, False, False]
        assert app.is_running and "app.quit" not in app.actions_run
