"""`serve` takes the explorer's interview options, and each browser session interviews with them.

`serve TARGET --timeout SECONDS` (as `interview-explorer TARGET --timeout SECONDS` in a terminal:
tests/tui/test_tui_options.py) hands its options to every session's process
(`explorer.web.handover.Launch`), which starts the app on TARGET. The agent answers every request
half a second late: with `--timeout 0.2` the session's interview meets the timeout, and with
`--reruns 0` it asks once. Read from the session's screen, over a real WebSocket to the real
server, and from the history the session recorded into.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.demo.slow import SlowAgent
from tests.support.http_server import base_url, serving
from tests.support.web import Served, has_proc, wait_until

pytestmark = [
    pytest.mark.slow,  # a server process, a session process, a slow agent
    pytest.mark.timeout(240),
    pytest.mark.skipif(not has_proc(), reason="reads child processes from /proc (Linux)"),
]


@pytest.fixture
def slow_card() -> Iterator[str]:
    SlowAgent.seen = []
    SlowAgent.delay = 0.5
    with serving(SlowAgent) as server:
        SlowAgent.prepare(base_url(server))
        yield f"{base_url(server)}/answers/.well-known/agent-card.json"


def test_a_served_session_interviews_with_the_timeout_serve_was_given(slow_card: str, tmp_path: Path) -> None:
    served = Served.start([slow_card, "--timeout", "0.2", "--home", str(tmp_path / "home")], cwd=tmp_path)
    try:

        async def session() -> None:
            async with served.session(size=(160, 45)) as terminal:
                wait_until(served.children, what="a session process")
                await terminal.wait_for("could not interview")
                await terminal.wait_for("(timeout)")

        asyncio.run(session())
    finally:
        assert served.stop() == 0, served.stderr()


def test_a_served_session_records_the_run_its_options_shaped(slow_card: str, tmp_path: Path) -> None:
    from explorer.store.sqlite import History

    home = tmp_path / "home"
    served = Served.start([slow_card, "--reruns", "0", "--deadline", "30", "--home", str(home)], cwd=tmp_path)
    try:

        def recorded() -> list[int]:
            if not (home / "history.sqlite3").exists():
                return []
            with History.open(home) as history:
                return [run.id for run in history.runs()]

        async def session() -> None:
            async with served.session(size=(160, 45)) as terminal:
                await terminal.wait_for("Interview Explorer")
                wait_until(recorded, timeout=90, what="the session's interview to be recorded")

        asyncio.run(session())
        with History.open(home) as history:
            (run_id,) = recorded()
            report = history.load(run_id).report
        assert report.get("attempts") == 1, report.get("attempts")  # --reruns 0: asked once
    finally:
        assert served.stop() == 0, served.stderr()
