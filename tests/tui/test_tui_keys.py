"""Keys a newcomer presses: quitting, and the hints Textual itself gives about it.

Ctrl+C does not quit a Textual app; Textual answers it with a toast naming the quit key. That
toast is Textual's own markup and must read as formatted text ("Press ctrl+q to quit"), not as
"Press [b]ctrl+q[/b]", while every toast quoting agent text stays plain (tests/tui/test_tui_errors.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cards import agent_card
from tests.support.tui import make_app, screen_lines, wait_for

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot


async def test_ctrl_c_names_the_quit_key_without_showing_markup(tmp_path: Path) -> None:
    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        app.set_focus(None)  # ctrl+c in an input copies; elsewhere it is Textual's quit hint
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any("to quit" in n.message for n in app._notifications))
        await pilot.pause(0.3)
        shown = "\n".join(screen_lines(app))
        assert "Press ctrl+q to quit the app" in shown, shown
        assert "[b]" not in shown


async def test_enter_on_an_empty_target_does_nothing_and_a_typo_is_said_in_place(tmp_path: Path) -> None:
    from textual.widgets import Input, Static

    from explorer.tui.screens.load import LoadScreen
    from tests.support.tui import plain

    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.focus()
        await pilot.press("enter")
        await pilot.pause()
        error = app.screen.query_one("#load-error", Static)
        assert isinstance(app.screen, LoadScreen) and not error.display  # no "could not interview (nothing)"
        field.value = "stedy"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, LoadScreen)  # nothing fetched, no progress screen
        assert error.display and "did you mean the reference agent steady" in plain(error)
        field.value = ""
        await pilot.press("enter")
        await pilot.pause()
        assert not error.display  # and an empty enter clears it


async def test_the_target_key_replaces_the_last_target_instead_of_appending_to_it(tmp_path: Path) -> None:
    from textual.screen import Screen
    from textual.widgets import Input

    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.focus()
        await pilot.press(*"steady")
        await pilot.press("ctrl+l")  # the field has focus already
        await pilot.press(*"drifting")
        assert field.value == "drifting"
        app.set_focus(None)
        await pilot.press("ctrl+l", *"legacy")
        assert field.value == "legacy"
        app.push_screen(Screen())  # an interview's screen, say; then back on the load screen
        await pilot.pause()
        app.pop_screen()
        await pilot.pause()
        assert app.focused is field
        await pilot.press(*"chatty")
        assert field.value == "chatty"  # the last target was selected: typing replaced it


async def test_typing_on_a_list_types_the_target(tmp_path: Path) -> None:
    from textual.widgets import Input, OptionList

    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.value = "an old target"
        await pilot.press("down")
        assert app.focused is app.screen.query_one("#demo", OptionList)
        await pilot.press(*"drifting")  # the first keys land on the list, the rest in the field
        await pilot.pause()
        assert field.value == "drifting" and app.focused is field
        await pilot.press("backspace", "backspace", "backspace")
        assert field.value == "drift"  # the cursor is at the end, nothing selected
        await pilot.press("down")  # and back on the list, arrows and enter are the list's again
        assert app.focused is app.screen.query_one("#demo", OptionList)


async def test_a_recorded_agents_card_name_is_a_target(tmp_path: Path) -> None:
    """The load screen takes a card name the history knows, as `history NAME` does."""
    from textual.widgets import Input, Static

    from explorer.store.sqlite import History
    from tests.support.runs import CARD_URL, make_run
    from tests.support.tui import plain

    with History.open(tmp_path / "home") as history:
        history.record(make_run(name="Steady Agent"))
    app = make_app(None, tmp_path, home=tmp_path / "home")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.focus()
        field.value = "steady agent"
        await pilot.press("enter")
        error = app.screen.query_one("#load-error", Static)
        await wait_for(pilot, lambda: app.screen.query_one("#load-error", Static).display)
        text = plain(app.screen.query_one("#load-error", Static))
        assert "is not a URL" not in text and CARD_URL in text, text  # interviewed at its card URL
        assert error.display


async def test_quit_is_in_the_footer_and_the_palette_and_lists_start_highlighted(tmp_path: Path) -> None:
    from textual.command import CommandPalette
    from textual.widgets import OptionList

    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = {key for key, b in app.screen.active_bindings.items() if b.binding.show and b.enabled}
        assert {"ctrl+q", "ctrl+r"} <= shown, shown  # quit, and start the reference agents
        demo = app.screen.query_one("#demo", OptionList)
        assert demo.highlighted == 0  # "start the reference agents": Down Enter, or ctrl+r
        assert app.focused is app.screen.query_one("#target")
        await pilot.press("down")
        assert app.focused is demo
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"quit")
        await pilot.pause(0.5)
        hits = [str(o.prompt) for o in app.screen.query_one(OptionList)._options]
        assert any("app: quit" in h for h in hits), hits
        await pilot.press("enter")
        await pilot.pause(0.3)
    assert app.return_code is not None or not app.is_running  # the palette's quit quits


async def test_a_question_that_got_no_answer_says_why(tmp_path: Path) -> None:
    """An agent whose JSON-RPC endpoint refuses connections: the screen opens on the reason for
    the verdict (how each call was answered), and each question tab says no answer came and the
    cause, instead of "answered with an error:" followed by nothing."""
    import json
    import socket

    from textual.widgets import Static

    from tests.support.tui import plain, wait_for, wait_for_interview

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    card = agent_card("Closed", url=f"http://127.0.0.1:{port}/rpc")
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    app = make_app(None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.start_interview(str(path))
        screen = await wait_for_interview(pilot)
        reason = " ".join(plain(line) for line in screen.query_one("#pane-reason").query(Static))
        assert "✗ interview/identity: transport: ConnectError" in reason and "Connection refused" in reason
        await pilot.press("1")
        await wait_for(pilot, lambda: bool(screen.query("#pane-identity")))
        await pilot.pause()
        summary = plain(screen.query_one("#pane-identity").query(Static).first())
        assert "answered with an error: \n" not in summary + "\n"
        assert "no answer was received" in summary and "Connection refused" in summary, summary


async def test_ctrl_l_and_a_name_typed_at_once_put_the_name_in_the_target(tmp_path: Path) -> None:
    """ctrl+l and a name read in one burst (a fast hand, a password manager) with focus elsewhere:
    the name replaces what the target held, and the target has focus."""
    from textual import events
    from textual.widgets import Input

    app = make_app(None, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.value = "old"
        app.set_focus(None)
        for key in ("ctrl+l", "x", "y"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(pilot, lambda: field.value == "xy")
        assert app.focused is field
