"""The explorer's screens with agents that require authentication.

Under `demo` the guarded reference agents get their demo credentials through the environment
(as `env:` references, the way a user would pass them) and show conformant. An interview that
ends in `auth_required` says which scheme the card declares and offers to sign in (`a`): the
secret is typed into a password field, kept in memory, used at once for the interview again and
for the rest of the session, and found in no file afterwards (history, config, exports). The
dialog can also save a config entry holding only `env:` references for next time; a later
session without that variable still interviews, and signs in the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Checkbox, Input, OptionList, Static
from textual.widgets._footer import FooterKey

from explorer.tui.context import AppContext
from explorer.tui.screens.auth import SecretInput, SignInScreen
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from tests.support.tui import TUI_SIZE, Tui, interview_ready, plain, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # the reference fleet and Pilot


async def test_demo_hands_the_guarded_agents_their_credentials(fleet: Any) -> None:
    context = AppContext(settings={"runner": "tester"})
    saved = dict(os.environ)
    try:
        context.adopt_fleet(fleet, owned=False)
        for name in ("guarded-bearer", "guarded-apikey", "guarded-oauth2"):
            run = await context.interview(name)
            assert run.report["verdict"] == "conformant", (name, run.report["findings"])
    finally:
        os.environ.clear()
        os.environ.update(saved)


SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}
GUARDED = ("guarded-bearer", "guarded-apikey", "guarded-oauth2")


def files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under `root` (the history database and its journal included) holding `secret`."""
    needle = secret.encode()
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def toasted(app: Any, words: str) -> bool:
    """Whether a toast on show says `words`."""
    return any(words in n.message for n in app._notifications)


def footer_text(screen: Any) -> str:
    return " ".join(f"{key.key_display} {key.description}" for key in screen.query(FooterKey))


async def sign_in(pilot: Any, agent: Any, *, save_as: str | None = None) -> SignInScreen:
    """On an auth_required interview: press a, type what the card's scheme needs, and (with
    `save_as`) tick "save a config entry" under that name. Returns the dialog, not yet submitted."""
    app = pilot.app
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(app.screen, SignInScreen) and app.screen.is_mounted)
    dialog = app.screen
    assert isinstance(dialog, SignInScreen)
    if agent.guard.kind == "oauth2":
        assert dialog.query_one("#auth-client", Input).has_focus
        await pilot.press(*agent.guard.client_id, "tab")
    field = dialog.query_one(SecretInput)
    assert field.has_focus and field.password
    await pilot.press(*agent.guard.secret)
    if save_as is not None:
        dialog.query_one("#auth-save", Checkbox).value = True
        await pilot.pause()
        name = dialog.query_one("#auth-name", Input)
        name.value = save_as
        await pilot.pause()
    return dialog


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("name", GUARDED)
async def test_a_secret_typed_into_the_sign_in_dialog_is_used_at_once_and_written_nowhere(
    tui: Tui, fleet: Any, _isolated_home: Path, tmp_path: Path, name: str, size: tuple[int, int]
) -> None:
    agent = fleet.agents[name]
    secret = agent.guard.secret
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(agent.card_url)  # no credentials given: the agent refuses
        screen = await wait_for_interview(pilot)
        assert screen.report["verdict"] == "unreachable"
        note = plain(screen.query_one("#auth-note", Static))
        assert "authentication required" in note and "press a to sign in" in note
        footer = footer_text(screen)
        assert "a Sign in" in footer and "^q Quit" in footer and "f1 Help" in footer, footer

        dialog = await sign_in(pilot, agent)
        shown = app.export_screenshot()  # what a screenshot of the dialog would keep
        assert secret not in shown and "•" * len(secret) in shown
        assert "^q Quit" in footer_text(dialog)
        await pilot.press("enter")

        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not screen)
        again = app.screen
        assert isinstance(again, InterviewScreen)
        assert again.report["verdict"] == "conformant", again.report["findings"]
        assert not again.query("#auth-note")
        assert all(not field.value for field in dialog.query(SecretInput))  # the dialog let go of it

        # Replaying again (r) keeps using it for the rest of the session.
        await pilot.press("r")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not again)
        assert app.screen.report["verdict"] == "conformant"  # type: ignore[attr-defined]
        exported = app.context.export(app.screen.run, "json", None)  # type: ignore[attr-defined]

    assert exported.is_relative_to(tmp_path) and exported.stat().st_size > 0  # searched below
    assert files_holding(_isolated_home, secret) == []
    assert files_holding(tmp_path, secret) == []
    assert secret not in os.environ.values()
    assert not (_isolated_home / "config.toml").exists()  # nothing saved unless asked


async def test_sign_in_can_save_a_config_entry_for_next_time_with_env_references_only(
    tui: Tui, fleet: Any, _isolated_home: Path, tmp_path: Path
) -> None:
    agent = fleet.agents["guarded-bearer"]
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(agent.card_url)
        screen = await wait_for_interview(pilot)
        dialog = await sign_in(pilot, agent, save_as="guarded-bearer")
        preview = plain(dialog.query_one("#auth-preview", Static))
        # The variable is named after the agent, without saying "bearer" twice.
        assert 'bearer = "env:GUARDED_BEARER_TOKEN"' in preview, preview
        assert "export GUARDED_BEARER_TOKEN" in preview and "BEARER_BEARER" not in preview
        await pilot.press("enter")
        # The toast says what to export next time (read before it times out on a loaded machine).
        await wait_for(pilot, lambda: toasted(app, "export GUARDED_BEARER_TOKEN"))
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not screen)
        assert app.screen.report["verdict"] == "conformant"  # type: ignore[attr-defined]
        text = (_isolated_home / "config.toml").read_text(encoding="utf-8")
        assert '[agents."guarded-bearer"]' in text and 'bearer = "env:GUARDED_BEARER_TOKEN"' in text
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LoadScreen))
        await pilot.pause()
        listing = app.screen.query_one("#configured", OptionList)
        rows = [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert any(r.startswith("guarded-bearer  credentials: bearer token") for r in rows), rows
    assert files_holding(_isolated_home, agent.guard.secret) == []
    assert files_holding(tmp_path, agent.guard.secret) == []


async def test_next_session_without_the_variable_interviews_without_it_and_signs_in(
    tui: Tui, fleet: Any, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The saved entry names a variable this session never exported: the interview still runs
    (a warning says why without credentials), the agent asks, and the sign-in dialog answers."""
    from explorer.config.file import load_config

    agent = fleet.agents["guarded-apikey"]
    monkeypatch.delenv("GUARDED_API_KEY", raising=False)
    (_isolated_home / "config.toml").write_text(
        f'[agents."guarded-apikey"]\nurl = "{agent.card_url}"\napi_key = "env:GUARDED_API_KEY"\n',
        encoding="utf-8",
    )
    async with tui(config=load_config(_isolated_home)) as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview("guarded-apikey")
        screen = await wait_for_interview(pilot)
        assert screen.report["verdict"] == "unreachable"
        warning = "GUARDED_API_KEY is not set; interviewing without credentials"
        await wait_for(pilot, lambda: toasted(app, warning))
        await sign_in(pilot, agent)
        await pilot.press("enter")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not screen)
        assert app.screen.report["verdict"] == "conformant"  # type: ignore[attr-defined]
    assert files_holding(_isolated_home, agent.guard.secret) == []


async def test_a_wrong_secret_is_refused_and_can_be_typed_again(tui: Tui, fleet: Any) -> None:
    agent = fleet.agents["guarded-oauth2"]
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(agent.card_url)
        first = await wait_for_interview(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, SignInScreen) and app.screen.is_mounted)
        await pilot.press(*agent.guard.client_id, "tab", *"not-the-secret", "enter")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not first)
        refused = app.screen
        assert isinstance(refused, InterviewScreen)
        assert any(f["code"] == "auth_failed" for f in refused.report["findings"])
        assert refused.check_action("sign_in", ()) is True  # a refused secret can be typed again
        await sign_in(pilot, agent)
        await pilot.press("enter")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is not refused)
        assert app.screen.report["verdict"] == "conformant"  # type: ignore[attr-defined]


async def test_a_conformant_interview_offers_nothing(tui: Tui, fleet: Any) -> None:
    async with tui() as pilot:
        pilot.app.start_interview(fleet.agents["steady"].card_url)
        screen = await wait_for_interview(pilot)
        assert not screen.query("#auth-note")
        assert screen.check_action("sign_in", ()) is False
        assert "Sign in" not in footer_text(screen)
