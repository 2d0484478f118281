"""The explorer takes the interview options `verify` takes, and they reach the interview.

`interview-explorer [TARGET]` (and `serve`, whose sessions are built from the same options:
tests/web/test_web_options.py) accepts `--timeout`, `--deadline`, `--reruns` and `--public-only`.
Each is proven by what it does to a real interview of a slow agent on 127.0.0.1 (every answer
half a second late, every JSON-RPC call an error, so the procedure would re-run): a request
timeout shorter than the delay is met, a deadline cuts the run, `--reruns 0` asks once, and
`--public-only` refuses a loopback agent before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.demo.slow import SlowAgent
from tests.support.http_server import base_url, serving
from tests.support.tui import wait_for_interview

pytestmark = pytest.mark.slow  # a slow agent and the Textual app under Pilot


@pytest.fixture
def slow_card() -> Iterator[str]:
    SlowAgent.seen = []
    SlowAgent.delay = 0.5
    with serving(SlowAgent) as server:
        SlowAgent.prepare(base_url(server))
        yield f"{base_url(server)}/answers/.well-known/agent-card.json"


def explorer_on(card: str, home: Path, *argv: str) -> Any:
    """The app as `interview-explorer CARD ARGV...` builds it (it interviews CARD as it starts)."""
    from explorer.cli import _tui_parser
    from explorer.tui.launch import build_app

    return build_app(_tui_parser().parse_args([card, *argv, "--home", str(home)]))


REPORTED: dict[str, tuple[list[str], Any]] = {
    "--deadline": (["--timeout", "5", "--deadline", "0.8"], lambda report, codes: "deadline" in codes),
    "--reruns": (["--reruns", "0"], lambda report, codes: report.get("attempts") == 1),
}


@pytest.mark.parametrize("option", REPORTED, ids=list(REPORTED))
async def test_the_deadline_and_the_reruns_reach_the_interview(
    option: str, slow_card: str, tmp_path: Path
) -> None:
    argv, holds = REPORTED[option]
    app = explorer_on(slow_card, tmp_path / "home", *argv)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            screen = await wait_for_interview(pilot, timeout=90)
            report = screen.run.report
    finally:
        app.context.close()
    codes = {f.get("code") for f in report.get("findings") or []}
    assert holds(report, codes), (option, report.get("verdict"), report.get("attempts"), sorted(codes))


REFUSED: dict[str, tuple[list[str], str]] = {
    "--timeout": (["--timeout", "0.2"], "(timeout)"),  # the card took 0.5 s
    "--public-only": (["--public-only"], "address_blocked"),  # http on 127.0.0.1
}


@pytest.mark.parametrize("option", REFUSED, ids=list(REFUSED))
async def test_a_short_timeout_and_public_only_reach_the_interview(
    option: str, slow_card: str, tmp_path: Path
) -> None:
    """The card cannot be had under either, which the load screen says in place."""
    from textual.widgets import Static

    from tests.support.tui import plain, wait_for

    argv, said = REFUSED[option]
    app = explorer_on(slow_card, tmp_path / "home", *argv)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_for(
                pilot,
                lambda: (
                    bool(app.screen.query("#load-error"))
                    and app.screen.query_one("#load-error", Static).display
                ),
                timeout=60,
            )
            error = plain(app.screen.query_one("#load-error", Static))
    finally:
        app.context.close()
    assert "could not interview" in error and said in error, error
    if option == "--public-only":
        assert SlowAgent.seen == []  # refused before anything was sent
