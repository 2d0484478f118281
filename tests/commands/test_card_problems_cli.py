"""`card` and `verify` show a card's problems against the A2A definitions, from the outside.

Each runs in a process of its own, as a user runs it: on a crafted card file with one problem of
each kind, and on the reference `steady` agent served by `demo --serve` on loopback, whose card
has none. `card` prints every problem (pointer, layout, detail) and `--json` the objects; `verify`
prints a count and the first few as warnings, and its verdict and exit status do not move.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.demo_serve import DemoServe, demo_serve
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # subprocesses, one against `demo --serve`

BAD_CARD: dict[str, Any] = {
    "name": "Ledger [b]bold[/b]",
    "description": "Reconciles ledgers.",
    "url": "/a2a",
    "version": "1.0.0",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text"],
    "defaultOutputModes": ["application/json"],
    "skills": [{"id": "reconcile", "name": "Reconcile", "description": "Matches lines.", "tags": ["books"]}],
    "provider": "Stonework",
}
EXPECTED = [
    ("/defaultInputModes/0", "v0.3", "mode_not_media_type"),
    ("/protocolVersion", "v0.3", "member_missing"),
    ("/provider", "v0.3", "wrong_type"),
    ("/url", "v0.3", "url_not_absolute"),
]


def explorer(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args, "--home", str(home)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def bad_card(tmp_path: Path) -> Path:
    path = tmp_path / "agent-card.json"
    path.write_text(json.dumps(BAD_CARD), encoding="utf-8")
    return path


def test_card_prints_each_problem_with_its_pointer_and_layout(bad_card: Path, tmp_path: Path) -> None:
    done = explorer("card", str(bad_card), home=tmp_path)
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("\nProblems (4; warnings against the A2A definitions", 1)[1]
    for member, layout, code in EXPECTED:
        assert f"\n  {member} [{layout} {code}]\n" in section, member
    assert '      /defaultInputModes/0 is "text", not a media type' in section
    assert "      /protocolVersion is required by the v0.3 Agent Card" in section


def test_card_json_lists_the_problem_objects(bad_card: Path, tmp_path: Path) -> None:
    done = explorer("card", str(bad_card), "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    problems = json.loads(done.stdout)["card"]["problems"]
    assert [(p["member"], p["layout"], p["code"]) for p in problems] == EXPECTED
    assert all(set(p) == {"code", "member", "layout", "detail"} for p in problems)


def test_verify_mentions_them_as_warnings_and_keeps_its_verdict(bad_card: Path, tmp_path: Path) -> None:
    done = explorer("verify", str(bad_card), "--no-history", home=tmp_path)
    assert done.returncode == 4, done.stderr  # not_offered's status: the card declares no interview
    out = done.stdout
    assert "verdict: not_offered" in out
    assert "card problems: 4 warnings against the A2A definitions (never change the verdict" in out
    assert "  warning mode_not_media_type [v0.3 /defaultInputModes/0]: " in out
    assert "  ... 1 more" in out
    report = json.loads(explorer("verify", str(bad_card), "--no-history", "--json", home=tmp_path).stdout)
    assert [(p["member"], p["layout"], p["code"]) for p in report["card"]["problems"]] == EXPECTED
    assert report["verdict"] == "not_offered"
    assert all(f["code"] not in {p[2] for p in EXPECTED} for f in report["findings"])


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServe]:
    home = tmp_path_factory.mktemp("home")
    with demo_serve("--only", "steady", "--home", str(home)) as running:
        yield running


def test_a_reference_agents_card_has_no_problems(steady: DemoServe, tmp_path: Path) -> None:
    card = explorer("card", steady.url("steady"), home=tmp_path)
    assert card.returncode == 0, card.stderr
    assert "Problems   none against the A2A definitions of its layout" in card.stdout
    report = json.loads(
        explorer("verify", steady.url("steady"), "--no-history", "--json", home=tmp_path).stdout
    )
    assert report["card"]["problems"] == []
    assert report["verdict"] == "conformant"
