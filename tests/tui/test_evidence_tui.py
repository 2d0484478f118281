"""Signed evidence in the TUI: a transcript file opens offline as a target, and the header, the
history list and the compare screen say in words whether a run is evidence (signed by whom, with
which key, trusted) or a claim and why. Real keys, a real agent on 127.0.0.1, real SQLite."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from explorer.evidence import runner_keys, signing, standing
from explorer.store.export import transcript
from explorer.store.sqlite import History
from explorer.tui.demo_agents import demo_keys
from explorer.tui.launch import LaunchError, build_app
from explorer.tui.pictures import fixed_clock
from explorer.tui.screens.compare import CompareScreen
from explorer.tui.screens.history import COLUMNS, HistoryScreen
from tests.support.tui import plain, wait_for, wait_for_interview

SIZE = (200, 50)


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> runner_keys.RunnerKey:
    return runner_keys.generate(tmp_path_factory.mktemp("keys") / "runner.pem")


@pytest.fixture(scope="module")
def runs(fleet: Any, key: runner_keys.RunnerKey) -> dict[str, Any]:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview

    async def interview() -> Any:
        options = Options(keys=demo_keys(fleet), runner="ci@example.org", role="independent")
        return await run_interview(fleet.agents["steady"].card_url, options)

    unsigned = asyncio.run(interview())
    return {"unsigned": unsigned, "signed": signing.sign_run(asyncio.run(interview()), key)}


def _home(tmp_path: Path, key: runner_keys.RunnerKey, *, trusted: bool) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    if trusted:
        (tmp_path / "ci.jwks").write_text(json.dumps(key.jwks()))
        (home / "config.toml").write_text(f'trusted_runners = ["{tmp_path / "ci.jwks"}"]\n')
    return home


def _app(home: Path, target: str | None = None) -> Any:
    args = argparse.Namespace(target=target, home=str(home))
    return build_app(args, cursor_blink=False, clock=fixed_clock, export_dir=home / "exports")


@pytest.mark.parametrize("trusted", [True, False])
async def test_a_transcript_file_opens_offline_and_the_header_says_who_signed_it(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path, trusted: bool
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(transcript(runs["signed"])))
    app = _app(_home(tmp_path, key, trusted=trusted), str(path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "transcript file (offline, nothing fetched)" in header and "✓ conformant" in header
        if trusted:
            assert f"evidence: signed by ci@example.org (key {key.keyid[:6]}…, trusted)" in header
        else:
            assert "claim, unknown signer: signed by ci@example.org" in header
            assert "evidence" not in header.split("claim", 1)[0]


def test_a_broken_transcript_file_is_a_message(tmp_path: Path, key: runner_keys.RunnerKey) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"transcript_version": 99, "exchanges": []}')
    with pytest.raises(LaunchError, match="not a usable transcript"):
        _app(_home(tmp_path, key, trusted=False), str(path))


async def test_history_and_compare_mark_each_run(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    home = _home(tmp_path, key, trusted=True)
    with History.open(home) as history:
        history.record(runs["unsigned"])
        history.record(runs["signed"])
    app = _app(home)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        await pilot.pause()
        table = app.screen.query_one("#runs")
        column = COLUMNS.index("standing")

        def marks() -> list[str]:
            return [str(table.get_row_at(i)[column]) for i in range(table.row_count)]

        await wait_for(pilot, lambda: "✓ evidence · signed" in marks())  # checked off the event loop
        assert marks() == ["✓ evidence · signed", "claim · unsigned"]  # newest (#2, signed) first
        await pilot.press("enter")
        await wait_for_interview(pilot)
        assert "evidence: signed by ci@example.org" in plain(app.screen.query_one("#header", Static))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press("space", "down", "space", "c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause()
        facts = plain(app.screen.query_one("#compare-facts", Static))
        assert "A standing claim · unsigned" in facts and "B standing ✓ evidence · signed" in facts
        # the mark says claim and why in short; the sentence after it says the rest, once
        assert "claim · unsigned  ci@example.org says it ran this as an independent party" in facts


def test_a_signed_run_exported_from_the_screens_still_verifies(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    home = _home(tmp_path, key, trusted=False)  # shown here as a claim: the export must not care
    with History.open(home) as history:
        run_id = history.record(runs["signed"])
    app = _app(home)
    shown = app.context.load(run_id)
    assert shown.report["standing"] == "claim"
    path = app.context.export(shown, "json", run_id)
    data = json.loads(path.read_text())
    report = standing.assess_transcript(data, data["report"], runner_keys.trusted_set(key.jwks()))
    assert report["standing"] == "evidence"
    app.context.close()


async def test_a_live_run_is_signed_with_the_configs_key_and_reads_as_evidence_here(
    fleet: Any, key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    keys = tmp_path / "agents.jwks"
    keys.write_text(json.dumps(demo_keys(fleet)[0]))
    (home / "config.toml").write_text(
        f'sign_key = "{key.path}"\nrunner = "ci@example.org"\nrole = "independent"\nkeys = ["{keys}"]\n'
    )
    app = _app(home, fleet.agents["steady"].card_url)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "✓ conformant" in header and "run #1" in header
        assert f"evidence: signed by ci@example.org (key {key.keyid[:6]}…, trusted)" in header
    with History.open(home) as history:
        stored = history.load(1)
    assert stored.attestation is not None
    assert stored.report["run_attestation"]["keyid"] == key.keyid


def test_the_fleet_view_never_shows_an_unchecked_run_as_evidence(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    home = _home(tmp_path, key, trusted=True)
    app = _app(home)
    with History.open(home) as history:
        history.record(runs["unsigned"])
    assert [e.standing for e in app.context.fleet()] == ["claim"]  # recorded "evidence", unsigned
    with History.open(home) as history:
        run_id = history.record(runs["signed"])
    assert [e.standing for e in app.context.fleet()] == ["unchecked"]
    assert app.context.check_signed([run_id]) == {run_id: "✓ evidence · signed"}
    assert [e.standing for e in app.context.fleet()] == ["evidence"]
    app.context.close()


def test_a_signed_runs_attestation_is_offered_as_an_export(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    app = _app(_home(tmp_path, key, trusted=False))
    assert "intoto" not in dict(app.context.export_formats(runs["unsigned"]))
    assert dict(app.context.export_formats(runs["signed"]))["intoto"] == "Signed attestation"
    path = app.context.export(runs["signed"], "intoto", 7)
    assert path.name.endswith("-run7.intoto.json")
    assert json.loads(path.read_text()) == dict(runs["signed"].attestation)


async def test_a_transcript_file_typed_on_the_load_screen_opens_offline(
    runs: dict[str, Any], key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    from textual.widgets import Input

    path = tmp_path / "run.json"
    path.write_text(json.dumps(transcript(runs["signed"])))
    app = _app(_home(tmp_path, key, trusted=True))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target", Input)
        field.focus()
        field.value = str(path)
        await pilot.press("enter")
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "transcript file (offline, nothing fetched)" in header
        assert f"evidence: signed by ci@example.org (key {key.keyid[:6]}…, trusted)" in header
