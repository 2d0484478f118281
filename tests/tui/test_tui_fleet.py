"""The fleet view, driven through the TUI: every agent of the history with its latest verdict,
where it is, signature, last change, churn (runs whose verdict is churn) and changes (runs that
changed from the one before: tests/tui/test_tui_change_kinds.py has a card only signed again);
sort, verdict filter and find; enter opens the
latest interview; a live sweep of a seeded crowd fills it as runs finish; ten thousand agents
sort, filter and find. Runs another process records are in tests/tui/test_tui_history_depth.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from explorer.demo.crowd import Crowd
from explorer.demo.ratelimit import RateLimit
from explorer.store.sqlite import FleetSummary, History
from explorer.tui.app import ExplorerApp, Start
from explorer.tui.demo_agents import demo_keys
from explorer.tui.fleet_model import PENDING, Finished, FleetModel
from explorer.tui.screens.fleet import FleetScreen, FleetTable
from tests.support.tui import make_app, plain, screen_text, wait_for, wait_for_interview

SIZE = (160, 50)


def rows(table: FleetTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.fixture(scope="module")
def runs(fleet: Any) -> dict[str, Any]:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview

    async def interview(name: str) -> Any:
        return await run_interview(
            fleet.agents[name].card_url, Options(keys=demo_keys(fleet), runner="tester")
        )

    return {key: asyncio.run(interview(key.rstrip("2"))) for key in ("steady", "drifting", "flaky", "flaky2")}


async def open_fleet(pilot: Any) -> FleetScreen:
    await pilot.press("f3")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetScreen) and pilot.app.screen.loaded)
    await pilot.pause()
    return pilot.app.screen


def test_the_model_counts_changes_and_sorts_worst_first() -> None:
    fleet = FleetModel()
    fleet.expect(["http://a/", "http://b/"])
    assert {e.verdict for e in fleet.all()} == {PENDING}
    first = Finished("http://a/card", "A", "conformant", "claim", "verified", "c1", "x1")
    fleet.finish("http://a/", first, run_id=1, at="T1")
    assert [e.key for e in fleet.all()] == ["http://a/card", "http://b/"]
    again = Finished("http://a/card", "A", "conformant", "claim", "verified", "c1", "x1")
    assert fleet.finish("http://a/", again, run_id=2, at="T2").changes == 0
    moved = Finished("http://a/card", "A", "nonconformant", "claim", "verified", "c1", "x2")
    entry = fleet.finish("http://a/", moved, run_id=3, at="T3")
    # A change, not churn: churn counts the runs whose verdict is churn.
    assert (entry.churn, entry.changes, entry.last_change_at) == (0, 1, "T3")
    assert (entry.runs, entry.last_run_id) == (3, 3)
    assert entry.kinds == ("answers", "verdict")
    churned = Finished("http://a/card", "A", "churn", "claim", "verified", "c1", "x2")
    entry = fleet.finish("http://a/", churned, run_id=4, at="T4")
    assert (entry.churn, entry.changes) == (1, 2)
    b = Finished("http://b/card", "B", "conformant", "claim", "unsigned", "c9", "x9")
    fleet.finish("http://b/", b, run_id=5, at="T5")
    assert [e.name for e in fleet.view("verdict")] == ["A", "B"]
    assert [e.name for e in fleet.view("name", "conformant")] == ["B"]
    assert [e.name for e in fleet.view("churn")] == ["A", "B"]
    assert [e.name for e in fleet.view("changes")] == ["A", "B"]


@pytest.mark.slow  # TUI (Pilot)
async def test_the_fleet_lists_every_agent_with_churn_and_opens_its_latest_run(
    fleet: Any, runs: dict[str, Any], tmp_path: Path
) -> None:
    with History.open() as history:
        ids = [history.record(runs[key]) for key in ("steady", "drifting", "flaky", "flaky2")]
        history.record(runs["steady"])
    app = make_app(fleet, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_fleet(pilot)
        table = screen.query_one(FleetTable)
        shown = rows(table)
        assert len(shown) == 3
        by_name = {row[1]: row for row in shown}
        flaky = next(row for name, row in by_name.items() if "Flaky" in name)
        steady = next(row for name, row in by_name.items() if "Steady" in name)
        # churn, changes, runs: flaky's answers changed (a change), and no run's verdict is churn
        assert flaky[0] == "✗ nonconformant" and flaky[3:6] == ["0", "1", "2"]
        assert flaky[6] != "-"
        assert steady[0] == "✓ conformant" and steady[3:6] == ["0", "0", "2"]
        assert steady[7] == "claim"  # an unsigned run read back; its card signature read under your keys
        await wait_for(pilot, lambda: all(row[8] != "unchecked" for row in rows(table)))
        steady = next(row for row in rows(table) if "Steady" in row[1])
        assert steady[8] == "verified"
        port = fleet.agents["steady"].card_url.split("/")[2]
        assert steady[2] == port and steady[9] == fleet.agents["steady"].card_url  # where: host:port
        assert shown[0][0].endswith("nonconformant")  # worst first
        title = plain(screen.query_one("#fleet-title"))
        assert "3 agents" in title and "2 nonconformant" in title and "1 conformant" in title

        await pilot.press("v")  # only nonconformant
        await pilot.pause()
        assert {row[0] for row in rows(table)} == {"✗ nonconformant"}
        await pilot.press("v")  # only churn: none here
        await pilot.pause()
        assert rows(table) == []
        assert plain(screen.query_one("#fleet-status")) == "no agent here matches; v shows another verdict"
        for _ in range(5):
            await pilot.press("v")
        await pilot.pause()
        assert len(rows(table)) == 3 and "every verdict" in plain(screen.query_one("#fleet-title"))
        await pilot.press("s", "s")  # by churn, then by changes
        await pilot.pause()
        assert "Flaky" in rows(table)[0][1] and "sort: changes" in plain(screen.query_one("#fleet-title"))

        with History.open() as other:  # another process's sweep records a run: it shows up
            other.record(runs["drifting"])
        await wait_for(pilot, lambda: any("Drifting" in r[1] and r[5] == "2" for r in rows(table)), 15)

        table.move_cursor(row=next(i for i, r in enumerate(rows(table)) if "Flaky" in r[1]))
        await pilot.press("enter")
        interview = await wait_for_interview(pilot)
        assert interview.run_id == ids[3]  # flaky's latest run


@pytest.mark.slow  # TUI (Pilot)
async def test_the_fleet_shows_each_latest_run_as_it_reads_under_your_keys_not_as_recorded(
    fleet: Any, runs: dict[str, Any], tmp_path: Path
) -> None:
    """Recorded with the agents' keys, so recorded as verified. A reader without those keys sees
    what the bytes give them: unverifiable, never the recorder's verified."""
    with History.open() as history:
        for key in ("steady", "drifting"):
            history.record(runs[key])
    for keys, expected in (((), "unverifiable"), (demo_keys(fleet), "verified")):
        app = make_app(None, tmp_path, settings={"keys": keys, "runner": "reader"})
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_fleet(pilot)
            table = screen.query_one(FleetTable)
            assert {row[8] for row in rows(table)} <= {"unchecked", expected}
            await wait_for(pilot, lambda t=table, e=expected: {row[8] for row in rows(t)} == {e})
            assert {row[7] for row in rows(table)} == {"claim"}
            assert screen.settled
        app.context.close()


@pytest.mark.slow  # TUI (Pilot)
async def test_a_live_sweep_of_a_seeded_crowd_fills_the_fleet(tmp_path: Path) -> None:
    with Crowd(12, seed=3, rate_limit=RateLimit(calls=100_000, per_seconds=60.0)) as crowd:
        targets = [a.card_url for a in crowd.agents.values()]
        expected = {a.card_url: a.variant.expected_verdict for a in crowd.agents.values()}
        app = make_app(None, tmp_path, allow_jku=True)
        app.start = Start(fleet=tuple(targets))
        async with app.run_test(size=SIZE) as pilot:
            screen = pilot.app.screen
            assert isinstance(screen, FleetScreen)
            await wait_for(pilot, lambda: screen.done == len(targets) and not screen.sweeping, timeout=90)
            await pilot.pause(0.5)
            shown = {row[9]: row[0].split(" ", 1)[1] for row in rows(screen.query_one(FleetTable))}
            assert shown == expected
            assert "sweep done: 12/12 agents" in plain(screen.query_one("#fleet-status"))
    with History.open() as history:
        assert {s.agent for s in history.fleet()} == set(targets)


def _summary(i: int) -> FleetSummary:
    verdicts = ("conformant", "nonconformant", "churn", "not_offered", "unreachable")
    return FleetSummary(
        agent=f"http://127.0.0.1:{20000 + i}/.well-known/agent-card.json",
        name=f"Agent {i:05d} \x1b[31m[b]red[/b]",
        runs=3,
        last_run_id=i + 1,
        last_recorded_at="2026-12-01T12:00:00.000Z",
        verdict=verdicts[i % 5],
        standing="claim",
        churn=i % 4,
        changes=i % 3,
        last_change_at="2026-12-01T11:00:00.000Z" if i % 3 else None,
        card_sha256="c",
        answers_sha256="a",
        signature="verified",
    )


@pytest.mark.slow  # TUI (Pilot)
@pytest.mark.parametrize("size", [(80, 24), SIZE], ids=["80x24", "160x50"])
async def test_ten_thousand_agents_sort_filter_and_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    summaries = [_summary(i) for i in range(10_000)]
    app: ExplorerApp = make_app(None, tmp_path)
    monkeypatch.setattr(type(app.context), "fleet", lambda self: summaries)
    async with app.run_test(size=size) as pilot:
        screen = await open_fleet(pilot)
        table = screen.query_one(FleetTable)
        assert table.row_count == 10_000
        await pilot.press("s", "s", "v", "v")
        await pilot.press("end", "up", "home", "down")
        await pilot.pause()
        assert table.row_count == 2_000  # churn only
        text = " ".join(row[1] for row in rows(table)[:5])
        # shown as text, never as markup (at 80x24 cut in the middle: `Agent 000…]red[/b]`)
        assert "\x1b" not in text and "red[/b]" in text
        await pilot.press("slash", *"04212")
        await pilot.pause()
        assert [entry.name.split(" \x1b")[0] for entry in screen.rows] == ["Agent 04212"]  # a churn one
        assert "Agent 04212" in screen_text(app)  # the row, or the detail under it at 80x24
        await pilot.press("escape")  # clears the search; a second escape leaves
        await pilot.pause()
        assert table.row_count == 2_000 and isinstance(app.screen, FleetScreen)


def test_from_file_opens_the_fleet_first_and_bad_lists_are_usage_errors(tmp_path: Path) -> None:
    from explorer.cli import _tui_parser
    from explorer.tui.launch import LaunchError, build_app

    listed = tmp_path / "agents.txt"
    listed.write_text("# fleet\nhttp://127.0.0.1:9/a\n\nhttp://127.0.0.1:9/b\n")
    app = build_app(_tui_parser().parse_args(["--from", str(listed)]))
    assert app.start.fleet == ("http://127.0.0.1:9/a", "http://127.0.0.1:9/b")
    assert isinstance(app.get_default_screen(), FleetScreen)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    for argv, message in (
        (["--from", str(empty)], "lists no targets"),
        (["--from", "-"], "give the list as a file"),
        (["--from", str(tmp_path / "missing.txt")], "cannot read"),
        (["http://x/", "--from", str(listed)], "not both"),
    ):
        with pytest.raises(LaunchError, match=message):
            build_app(_tui_parser().parse_args(argv))


@pytest.mark.slow  # TUI (Pilot)
async def test_demo_with_a_crowd_opens_on_the_fleet_sweeping_it_with_its_keys_trusted(tmp_path: Path) -> None:
    from explorer.cli import _parser
    from explorer.demo.fleet import Fleet
    from explorer.tui.launch import demo_app

    args = _parser("demo").parse_args(
        ["demo", "--crowd", "6", "--seed", "2", "--crowd-only", "--home", str(tmp_path)]
    )
    with Fleet([]) as fleet, Crowd(6, seed=2, rate_limit=RateLimit(calls=100_000, per_seconds=60.0)) as crowd:
        app = demo_app(fleet, args, crowd)
        async with app.run_test(size=SIZE) as pilot:
            screen = pilot.app.screen
            assert isinstance(screen, FleetScreen) and len(screen.targets) == 6
            await wait_for(pilot, lambda: screen.done == 6 and not screen.sweeping, timeout=90)
            await pilot.pause(0.5)
            shown = {row[9]: row for row in rows(screen.query_one(FleetTable))}
            for agent in crowd.agents.values():
                row = shown[agent.card_url]
                assert row[0].split(" ", 1)[1] == agent.variant.expected_verdict
                if agent.variant.signed and agent.variant.expected_verdict != "unreachable":
                    assert row[8] == "verified"  # the crowd's keys are trusted
