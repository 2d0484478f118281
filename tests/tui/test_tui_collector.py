"""The garbage collector around live interviews: off while a run arrives, back on after.

A live run's screen is frozen out of the cyclic collector's sight while it is shown (so a large
run never stalls the screen, `explorer.tui.collector`); these tests hold the promises that make
that safe: the collector always comes back on (shown, failed, cancelled), and what was frozen is
handed back when the screen goes, so repeated interviews never pile up frozen objects.
"""

from __future__ import annotations

import gc
import socket
from typing import Any

import pytest

from explorer.tui import collector
from explorer.tui.screens.load import LoadScreen
from tests.support.tui import Tui, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot against the reference agents


def _on_load(app: Any) -> bool:
    return isinstance(app.screen, LoadScreen)


async def test_repeated_live_interviews_freeze_nothing_for_good(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        url = app.context.demo[0].url
        frozen = []
        for _ in range(3):
            app.start_interview(url)
            await wait_for_interview(pilot)
            await wait_for(pilot, lambda: collector.held() and gc.isenabled())
            frozen.append(gc.get_freeze_count())  # the run and its screen, out of sight
            await pilot.press("2", "3")  # panes built on the held screen are frozen with it
            await wait_for(pilot, lambda: not collector.paused() and gc.isenabled())
            app.pop_screen()
            await wait_for(pilot, lambda: _on_load(app) and not collector.held())  # screen removed
            assert not collector.held() and gc.get_freeze_count() == 0 and gc.isenabled()
        assert all(count > 0 for count in frozen)


async def test_the_collector_comes_back_on_after_a_failed_or_cancelled_interview(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        app.start_interview("http://127.0.0.1:9/")  # nothing listens there
        await wait_for(pilot, lambda: _on_load(app) and app.screen.query_one("#load-error").display)
        assert gc.isenabled() and not collector.paused() and not collector.held()

        with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
            app.start_interview(f"http://127.0.0.1:{silent.getsockname()[1]}/")
            await wait_for(pilot, lambda: collector.paused() and app.screen.query("#step"))
            assert not gc.isenabled()
            await pilot.press("escape")
        await wait_for(pilot, lambda: _on_load(app))
        assert gc.isenabled() and not collector.paused() and not collector.held()
