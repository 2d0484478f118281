"""The explorer's screens with agents that require authentication.

Under `demo` the guarded reference agents get their demo credentials through the environment
(as `env:` references, the way a user would pass them) and show conformant. An interview that
ends in `auth_required` says which scheme the card declares and offers to save a config agent
entry holding only `env:` references; the load screen then lists that agent with the kind of
credential its entry carries. The secret itself is never written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static
from tui_support import Tui, plain, wait_for, wait_for_interview

from explorer.tui.context import AppContext
from explorer.tui.screens.auth import AuthEntryScreen
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen

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


async def test_auth_required_offers_a_config_entry_with_env_references(
    tui: Tui, fleet: Any, _isolated_home: Path
) -> None:
    agent = fleet.agents["guarded-bearer"]
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        app.start_interview(agent.card_url)  # no credentials given
        screen = await wait_for_interview(pilot)
        note = plain(screen.query_one("#auth-note", Static))
        assert "authentication required" in note and "HTTP bearer token" in note
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AuthEntryScreen))
        name = app.screen.query_one("#auth-name", Input)
        name.value = "locked"
        await pilot.pause()
        preview = plain(app.screen.query_one("#auth-preview", Static))
        assert 'bearer = "env:LOCKED_BEARER"' in preview and "export LOCKED_BEARER" in preview
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InterviewScreen))
        text = (_isolated_home / "config.toml").read_text(encoding="utf-8")
        assert '[agents."locked"]' in text and 'bearer = "env:LOCKED_BEARER"' in text
        assert agent.guard.secret not in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LoadScreen))
        await pilot.pause()
        listing = app.screen.query_one("#configured", OptionList)
        rows = [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert any(r.startswith("locked  credentials: bearer token") for r in rows), rows


async def test_a_conformant_interview_offers_nothing(tui: Tui, fleet: Any) -> None:
    async with tui() as pilot:
        pilot.app.start_interview(fleet.agents["steady"].card_url)
        screen = await wait_for_interview(pilot)
        assert not screen.query("#auth-note")
        assert screen.check_action("save_credentials", ()) is False
