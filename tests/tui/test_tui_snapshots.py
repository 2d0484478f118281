"""Snapshot tests (pytest-textual-snapshot) of the screens whose layout matters.

The scenes are the ones `scripts/screenshots.py` draws for the README (`explorer.tui.pictures`):
live interviews of the reference agents with ports, keys, digests and times fixed, no cursor
blink, the fixed clock and no user config. Each screen is drawn at the README's size and at
80x24, the smallest terminal the explorer supports (`sizes`; a screen added here gets both).
Update the SVGs after an intended change with `pytest tests/tui/test_tui_snapshots.py
--snapshot-update` and look at them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from explorer.tui.pictures import SIZE, SMALL, collect_runs, record_history, scene

pytestmark = pytest.mark.slow  # renders whole screens to SVG

Pictures = dict[str, Any]
Size = tuple[int, int]
SIZES = {f"{SIZE[0]}x{SIZE[1]}": SIZE, "80x24": SMALL}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())


@pytest.fixture(scope="module")
def pictures(fleet: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from explorer.demo.fleet import Fleet

    home = tmp_path_factory.mktemp("pictures")
    with Fleet(names=["churning"]) as churn_fleet:
        runs = asyncio.run(collect_runs(fleet, churn_fleet))
    ids = record_history(runs, home)
    return {"fleet": fleet, "home": Path(home), "runs": runs, "ids": ids}


def _compare(snap_compare: Any, pictures: dict[str, Any], name: str, size: tuple[int, int] = SIZE) -> bool:
    app, before = scene(name, pictures["fleet"], pictures["home"], pictures["runs"], pictures["ids"])
    return snap_compare(app, terminal_size=size, run_before=before)


@sizes
def test_load_screen_lists_the_reference_agents(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "load", size)


@sizes
def test_interview_on_steady(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "steady", size)


@sizes
def test_interview_on_drifting_opens_on_the_mismatch(
    snap_compare: Any, pictures: Pictures, size: Size
) -> None:
    assert _compare(snap_compare, pictures, "drifting", size)


@sizes
def test_compare_two_runs_of_a_churning_agent(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "compare", size)


def test_history_screen(snap_compare: Any, pictures: dict[str, Any]) -> None:
    assert _compare(snap_compare, pictures, "history")


def test_fleet_screen(snap_compare: Any, pictures: dict[str, Any]) -> None:
    assert _compare(snap_compare, pictures, "fleet")


def test_history_screen_at_80x24(snap_compare: Any, pictures: dict[str, Any]) -> None:
    assert _compare(snap_compare, pictures, "history", (80, 24))


def test_fleet_screen_at_80x24(snap_compare: Any, pictures: dict[str, Any]) -> None:
    assert _compare(snap_compare, pictures, "fleet", (80, 24))


@sizes
def test_hostile_agent(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "hostile", size)


@sizes
def test_f1_help_over_the_drifting_interview(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "help", size)


@sizes
def test_sign_in_dialog_on_an_agent_that_refused(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "sign-in", size)


@sizes
def test_churned_tab_of_a_churning_agent(snap_compare: Any, pictures: Pictures, size: Size) -> None:
    assert _compare(snap_compare, pictures, "churned", size)


@sizes
def test_a_question_an_agent_without_the_interview_did_not_answer_read_from_its_card(
    snap_compare: Any, pictures: Pictures, size: Size
) -> None:
    assert _compare(snap_compare, pictures, "declared", size)


@sizes
def test_card_screen_of_an_agent_without_the_interview(
    snap_compare: Any, pictures: Pictures, size: Size
) -> None:
    assert _compare(snap_compare, pictures, "card", size)
