"""After churn, the explorer names what churned: in the JSON report, in `show`, in the TUI.

The churning reference agent changes its card and answers once, between the first attempt and
the re-run, so every question tab of the final report says "all match". The report's
`first_attempt` member keeps each conflict of the first attempt with both canonical values, the
churn finding names the members, `show` prints them, and the interview screen has a tab that
marks where the values differed. Each test gets a churning agent of its own (it flips once).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from explorer.cli import main
from explorer.demo.fleet import Fleet
from tests.support.tui import make_app, screen_lines, wait_for_interview

pytestmark = pytest.mark.slow  # a reference agent of its own, the CLI and the TUI


@pytest.fixture
def churning(tmp_path: Path) -> Iterator[tuple[Any, str]]:
    with Fleet(["churning"]) as fleet:
        agent = fleet.agents["churning"]
        keys = tmp_path / "keys.jwks"
        keys.write_text(json.dumps(agent.jwks), encoding="utf-8")
        yield agent, str(keys)


def test_the_report_and_show_name_what_churned(
    capsys: pytest.CaptureFixture[str], churning: tuple[Any, str], tmp_path: Path
) -> None:
    agent, keys = churning
    home = str(tmp_path / "home")
    assert main(["verify", agent.base_url, "--json", "--keys", keys, "--home", home]) == 5
    report = json.loads(capsys.readouterr().out)
    conflicts = report["first_attempt"]["conflicts"]
    version = next(c for c in conflicts if c["member"] == "/version")
    assert (version["question"], version["value_canonical"], version["source_canonical"]) == (
        "identity",
        '"1.5.0"',
        '"1.4.0"',
    )
    churn = next(f for f in report["findings"] if f["code"] == "churn")
    assert "projection_mismatch (identity /version" in churn["detail"]
    assert all(p["status"] == "match" for q in report["questions"].values() for p in q["projections"])

    assert main(["show", "1", "--home", home]) == 0
    out = capsys.readouterr().out
    first = out[out.index("first attempt (before the re-run) found:") :]
    assert "projection_mismatch [identity /version]" in first and '"1.5.0"' in first and '"1.4.0"' in first


async def test_the_interview_screen_has_a_churned_tab_with_both_values_marked(
    churning: tuple[Any, str], tmp_path: Path
) -> None:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview

    agent, keys = churning
    run = await run_interview(agent.card_url, Options(keys=(keys,)))
    app = make_app(None, tmp_path)
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.pause()
        app.show_run(run, None)
        await wait_for_interview(pilot)
        shown = "\n".join(screen_lines(app))
        assert "churned (3)" in shown  # the tab is there, beside "all match" on every question
        app.screen.query_one(TabbedContent).active = "tab-first-attempt"
        await pilot.pause(0.3)
        shown = "\n".join(screen_lines(app))
        assert "these conflicts of the first attempt were gone on the re-run (churn)" in shown
        assert "identity /version" in shown
        assert 'answer  "1.«5».0"' in shown and 'source  "1.«4».0"' in shown
