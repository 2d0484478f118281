"""The load screen's recent agents: one entry per agent, however many ports it had, and no typos.

Before reference agents kept their ports, three demo sessions left three "Stonework Books
(Drifting)" in the list, and a mistyped URL that never answered took a row of its own; after they
moved to other ports, the list offered URLs that no longer answered. Here two fleets serve
drifting on two ports with the keys `demo` keeps (the same card name and signing key: one agent
of the history), a third URL never answers, an impostor signs a card of steady's name with
another key, and steady stops answering. The list shows drifting once, at its newest address,
naming the other; leaves the typo out; keeps the two "steady" cards apart; and says of each
address that it no longer answers: steady's from its last run there, drifting's from a connect
to its loopback port made in a worker after the list is drawn.
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
    """A history with drifting at two URLs (an older session first), steady beside a card of the
    same name signed by another key, a URL that never answered, and steady's URL gone silent."""
    home = tmp_path_factory.mktemp("recents")
    kept = home / "kept-keys"  # as `demo` keeps them across sessions
    with Fleet(["drifting"], keys_in=kept) as older, Fleet(["drifting", "steady"], keys_in=kept) as newer:

        async def runs() -> list[Any]:
            out = []
            for fleet, name in ((older, "drifting"), (newer, "steady"), (newer, "drifting")):
                options = Options(keys=demo_keys(fleet), timeout=2.0)
                out.append(await run_interview(fleet.agents[name].card_url, options))
            out.append(await run_interview(closed_port_url(), Options(timeout=2.0)))
            return out

        done = asyncio.run(runs())
        urls = {
            "older": older.agents["drifting"].card_url,
            "newer": newer.agents["drifting"].card_url,
            "steady": newer.agents["steady"].card_url,
        }
    silent = asyncio.run(run_interview(urls["steady"], Options(timeout=2.0)))  # its fleet has stopped
    impostor = _renamed_key(done[1])  # steady's name and card, another key
    with History.open(home) as history:
        for run in (done[0], done[1], impostor, done[2], done[3], silent):
            history.record(run)
    assert done[3].report["verdict"] == "unreachable" and not done[3].report["card"].get("sha256")
    assert silent.report["verdict"] == "unreachable"
    return {"home": home, "typo": done[3].report["target"], **urls}


def _renamed_key(run: Any) -> Any:
    """The same card name at another URL, signed by another key (another thumbprint and key id)."""
    import copy
    from dataclasses import replace

    report = copy.deepcopy(dict(run.report))
    report["card"]["url"] = report["target"] = "http://127.0.0.1:9/.well-known/agent-card.json"
    report["card"]["signature"]["kid"] = "someone-else-1"
    report["card"]["signers"] = ["someone-elses-key-thumbprint-0000000000000"]
    return replace(run, report=report)


async def _listed(pilot: Any, until: str = "", timeout: float = 5.0) -> list[str]:
    """The recent agents as listed, once one of them says `until` (the worker's answer)."""
    listing = pilot.app.screen.query_one("#recent", OptionList)
    for _ in range(int(timeout / 0.05)):
        rows = [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        if not until or any(until in row for row in rows):
            return rows
        await pilot.pause(0.05)
    return rows


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
async def test_recent_agents_show_each_agent_once_and_no_typo(
    tui: Tui, recorded: dict[str, Any], size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(recorded["home"]))
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        rows = await _listed(pilot, "nothing listens on")
        drifting = [r for r in rows if r.startswith("Stonework Books (Drifting)")]
        assert len(drifting) == 1, rows
        older_port, newer_port = recorded["older"].split("/")[2], recorded["newer"].split("/")[2]
        assert recorded["newer"] in drifting[0]  # the address that answered last is the one offered
        assert f"the same agent also answered at {older_port}" in drifting[0], drifting[0]
        assert f"✗ no longer answers: nothing listens on {newer_port} now" in drifting[0], drifting[0]
        assert not any(recorded["typo"] in r for r in rows), rows  # it never answered
        steady = [r for r in rows if r.startswith("Stonework Books (Steady)")]
        assert len(steady) == 2 and not any("also answered at" in r for r in steady), steady  # another key
        [real] = [r for r in steady if recorded["steady"] in r]
        assert "✗ no longer answers: its last run there got no card (unreachable, run #6)" in real, real
        assert rows.index(real) == 0  # the agent run last comes first
        # enter on the grouped entry interviews its newest URL (nothing listens: a message, in place)
        listing = app.screen.query_one("#recent", OptionList)
        listing.focus()
        listing.highlighted = rows.index(drifting[0])
        await pilot.press("enter")
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


async def test_an_agent_that_still_answers_is_offered_plainly_and_pictures_probe_nothing(
    tui: Tui, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's connect finds steady listening: its entry says nothing more. A picture
    (`read_stored` off) shows the recents as recorded, and connects to nothing."""
    home = tmp_path / "home"
    with Fleet(["steady"], keys_in=tmp_path / "keys") as fleet:
        url = fleet.agents["steady"].card_url
        run = await run_interview(url, Options(keys=demo_keys(fleet), timeout=2.0))
        with History.open(home) as history:
            history.record(run)
        monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(home))
        async with tui(agents=False) as pilot:
            await pilot.pause()
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            [row] = await _listed(pilot)
            assert url in row and "no longer answers" not in row, row
    with socket.socket() as probe:  # steady's port is closed now
        assert probe.connect_ex(("127.0.0.1", int(url.split("/")[2].rsplit(":", 1)[1]))) != 0
    async with tui(agents=False, read_stored=False) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        [row] = await _listed(pilot)
        assert "no longer answers" not in row, row
