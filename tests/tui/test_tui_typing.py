"""Keys land where they are aimed, however fast they come: the sign-in dialog and the load screen.

A terminal hands the app a burst of keys in one read (a paste, a password manager's auto-type, a
fast typist, one WebSocket frame of a browser session). Textual hands each key to the widget
focused when the app reads it, and that widget handles it later: a key that moves focus (tab, a
letter typed on the load screen's list) used to move it only after the keys behind it had gone to
the old widget. A client secret typed right after tab landed in the client id field, drawn in
clear; a name typed on the list of reference agents reached the field shuffled ("drinftig"), or
Enter went to the list. `ExplorerApp.on_event` now moves focus as it reads such a key.

`burst` posts every key to the app at once, as the driver does with one read, before the app
handles any (Pilot's `press` waits for the app to be idle after each key, so it cannot show the
race; it is used too, with no pause after tab). Both terminal sizes the screens are drawn at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from explorer.config.credentials import TypedSecrets
from explorer.core.security import read_security
from explorer.tui.app import ExplorerApp
from explorer.tui.demo_agents import DemoAgent
from explorer.tui.screens.auth import SecretInput, SignIn, SignInScreen
from tests.support.tui import make_app, screen_lines, wait_for

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
CLIENT_ID = "explorer-client"
SECRET = "s3cret-Value-9f2"  # what must never be drawn
OAUTH2_CARD = {  # the card's one way in: OAuth 2.0 client credentials (a client id, then a secret)
    "securitySchemes": {
        "cc": {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": "http://127.0.0.1:9/token", "scopes": {}}},
        },
    },
    "security": [{"cc": []}],
}
AGENTS = (
    DemoAgent("steady", "answers as its card says", "conformant", "http://127.0.0.1:9/steady/card.json"),
    DemoAgent(
        "drifting", "answers what it never signed", "nonconformant", "http://127.0.0.1:9/drifting/card.json"
    ),
)


def burst(app: ExplorerApp, *keys: str | events.Event) -> None:
    """Post every key (or paste) to the app at once, as one read of the terminal does."""
    for key in keys:
        event = key if isinstance(key, events.Event) else events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app.post_message(event)


async def open_dialog(app: ExplorerApp, results: list[SignIn | None]) -> SignInScreen:
    dialog = SignInScreen(read_security(OAUTH2_CARD), "http://127.0.0.1:9/", "agent")
    assert dialog.way is not None and "oauth2_client_id" in dialog.way.settings()
    app.push_screen(dialog, results.append)
    return dialog


def fields(dialog: SignInScreen) -> tuple[str, str]:
    return dialog.query_one("#auth-client", Input).value, dialog.query_one(SecretInput).value


def secret_drawn(app: ExplorerApp) -> bool:
    return any(SECRET[:4] in line for line in screen_lines(app))


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_a_secret_typed_right_after_tab_lands_in_the_password_field(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(None, tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        dialog = await open_dialog(app, [])
        await wait_for(pilot, lambda: dialog.is_mounted)
        burst(app, *CLIENT_ID, "tab", *SECRET)
        await wait_for(pilot, lambda: len(fields(dialog)[1]) == len(SECRET), timeout=10)
        await pilot.pause()
        assert fields(dialog) == (CLIENT_ID, SECRET)
        assert not secret_drawn(app)


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_a_secret_pasted_right_after_tab_lands_in_the_password_field(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(None, tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        dialog = await open_dialog(app, [])
        await wait_for(pilot, lambda: dialog.is_mounted)
        burst(app, events.Paste(CLIENT_ID), "tab", events.Paste(SECRET))
        await wait_for(pilot, lambda: fields(dialog)[1] != "", timeout=10)
        await pilot.pause()
        assert fields(dialog) == (CLIENT_ID, SECRET)
        assert not secret_drawn(app)


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_enter_right_after_the_last_character_signs_in_with_what_was_typed(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Typed as the dialog opens, before it has mounted (the keys wait for it), then Enter at once."""
    app = make_app(None, tmp_path)
    results: list[SignIn | None] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await open_dialog(app, results)
        burst(app, *CLIENT_ID, "tab", *SECRET, "enter")
        await wait_for(pilot, lambda: bool(results), timeout=10)
        assert not isinstance(app.screen, SignInScreen)
    (signed,) = results
    assert signed is not None
    assert signed.secrets == TypedSecrets(oauth2_client_id=CLIENT_ID, oauth2_client_secret=SECRET)


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_pilot_keys_with_no_pause_after_tab(tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(None, tmp_path)
    results: list[SignIn | None] = []
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await open_dialog(app, results)
        await pilot.press(*CLIENT_ID, "tab", *SECRET, "enter")
        await wait_for(pilot, lambda: bool(results), timeout=10)
    assert results[0] is not None
    assert results[0].secrets == TypedSecrets(oauth2_client_id=CLIENT_ID, oauth2_client_secret=SECRET)


# --- the load screen: a name typed on the list of reference agents, then Enter ------------------------


def load_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ExplorerApp, list[str]]:
    """The app on the load screen with two reference agents listed (the list has focus); what
    Enter starts is kept instead of interviewed."""
    app = make_app(None, tmp_path, demo=AGENTS)
    started: list[str] = []
    monkeypatch.setattr(app, "start_interview", lambda target, **_: started.append(target))
    return app, started


TYPED: dict[str, Any] = {
    "keys": lambda: [*"drifting", "enter"],
    "a paste": lambda: [events.Paste("drifting"), "enter"],
    "keys then a paste": lambda: [*"dri", events.Paste("fting"), "enter"],
}


@pytest.mark.parametrize("typed", TYPED.values(), ids=list(TYPED))
@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_a_name_typed_on_the_list_and_enter_interviews_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], typed: Any
) -> None:
    app, started = load_app(tmp_path, monkeypatch)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.focused is app.screen.query_one("#demo")  # where the first key lands
        burst(app, *typed())
        await wait_for(pilot, lambda: bool(started), timeout=10)
        await pilot.pause()
        assert started == ["drifting"]  # not the highlighted agent, not a shuffled name
        assert app.screen.query_one("#target", Input).value == "drifting"


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
async def test_a_name_typed_on_the_list_with_pilot_and_enter_interviews_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    app, started = load_app(tmp_path, monkeypatch)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press(*"drifting", "enter")
        await wait_for(pilot, lambda: bool(started), timeout=10)
    assert started == ["drifting"]
