"""The load screen's recent agents: one entry per agent, however many ports it had, and no typos.

Before reference agents kept their ports, three demo sessions left three "Stonework Books
(Drifting)" in the list, and a mistyped URL that never answered took a row of its own. Here two
fleets serve drifting on two ports (the same card name and signing key id), a third URL never
answers, and an impostor signs a card of steady's name with another key: the list shows drifting
once, naming its other address, leaves the typo out, and keeps the two "steady" cards apart.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList

from explorer.demo.fleet import Fleet
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from explorer.store.sqlite import History
from explorer.tui.demo_agents import demo_keys
from tests.support.tui import TUI_SIZE, Tui, plain, wait_for_interview

pytestmark = pytest.mark.slow  # reference agents of their own and the TUI

SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/.well-known/agent-card.json"  # nothing listens there now


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A history with drifting at two URLs (an older session first), a URL that never answered,
    and steady beside a card of the same name signed by another key."""
    home = tmp_path_factory.mktemp("recents")
    with Fleet(["drifting"]) as older, Fleet(["drifting", "steady"]) as newer:

        async def runs() -> list[Any]:
            out = []
            for fleet, name in ((older, "drifting"), (newer, "steady"), (newer, "drifting")):
                options = Options(keys=demo_keys(fleet), timeout=2.0)
                out.append(await run_interview(fleet.agents[name].card_url, options))
            out.append(await run_interview(closed_port_url(), Options(timeout=2.0)))
            return out

        done = asyncio.run(runs())
        urls = {"older": older.agents["drifting"].card_url, "newer": newer.agents["drifting"].card_url,
                "steady": newer.agents["steady"].card_url}
    impostor = _renamed_key(done[1])  # steady's name and card, another key id
    with History.open(home) as history:
        for run in (done[0], done[1], impostor, done[2], done[3]):
            history.record(run)
    assert done[3].report["verdict"] == "unreachable" and not done[3].report["card"].get("sha256")
    return {"home": home, "typo": done[3].report["target"], **urls}


def _renamed_key(run: Any) -> Any:
    """The same card name at another URL, signed by a key with another id."""
    import copy
    from dataclasses import replace

    report = copy.deepcopy(dict(run.report))
    report["card"]["url"] = report["target"] = "http://127.0.0.1:9/.well-known/agent-card.json"
    report["card"]["signature"]["kid"] = "someone-else-1"
    return replace(run, report=report)


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
async def test_recent_agents_show_each_agent_once_and_no_typo(
    tui: Tui, recorded: dict[str, Any], size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(recorded["home"]))
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        listing = app.screen.query_one("#recent", OptionList)
        rows = [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        drifting = [r for r in rows if r.startswith("Stonework Books (Drifting)")]
        assert len(drifting) == 1, rows
        older_port = recorded["older"].split("/")[2]
        assert recorded["newer"] in drifting[0]  # the newest URL is the one offered
        assert f"same card and key also at {older_port}" in drifting[0], drifting[0]
        assert not any(recorded["typo"] in r for r in rows), rows  # it never answered
        steady = [r for r in rows if r.startswith("Stonework Books (Steady)")]
        assert len(steady) == 2 and not any("also at" in r for r in steady), steady  # another key
        # enter on the grouped entry interviews its newest URL (nothing listens: a message, in place)
        listing.focus()
        await pilot.press("home", "enter")
        await pilot.pause(0.5)
        assert app.last_progress is not None and app.last_progress.target == recorded["newer"]


async def test_a_typo_that_never_answered_is_still_in_the_history(
    tui: Tui, recorded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the load screen leaves it out; the history keeps every run."""
    with History.open(Path(recorded["home"])) as history:
        assert recorded["typo"] in {s.agent for s in history.runs()}
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(recorded["home"]))
    async with tui(agents=False) as pilot:
        await pilot.pause()
        pilot.app.open_stored(5)
        screen = await wait_for_interview(pilot)
        assert screen.report["target"] == recorded["typo"]
