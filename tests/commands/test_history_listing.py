"""`history` at any depth, as a user types it: filters, keyset pages, NDJSON for any number of runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.store.sqlite import History
from tests.support.runs import CARD_URL, make_run

OTHER = "http://127.0.0.1:10/.well-known/agent-card.json"
START = datetime(2020, 1, 1, tzinfo=UTC)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _ndjson(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def home(tmp_path: Path) -> str:
    """Twelve runs, one a day from 2020-01-01: the steady agent (runs 4 and 10 answer wrongly),
    another agent every third run."""
    days = iter(START + timedelta(days=n) for n in range(100))
    where = str(tmp_path / "home")
    with History.open(where, clock=lambda: next(days)) as history:
        for n in range(12):
            if n % 3 == 2:
                started = f"2025-01-01T00:00:{n:02d}Z"
                history.record(make_run(card_url=OTHER, name="Other", started_at=started))
            elif n in (3, 9):
                history.record(make_run(answered_name="Impostor", verdict="nonconformant"))
            else:
                history.record(make_run(started_at=f"2025-01-01T00:00:{n:02d}Z"))
    return where


def test_filters_combine_as_the_query_does(capsys, home) -> None:
    def ids(*argv: str) -> list[int]:
        code, out, err = _cli(capsys, "history", *argv, "--json", "--home", home)
        assert code == 0, err
        return [r["id"] for r in _ndjson(out)]

    assert ids() == list(range(12, 0, -1))
    assert ids("--verdict", "nonconformant") == [10, 4]
    assert ids("--verdict", "nonconformant", "--verdict", "conformant", "--limit", "3") == [12, 11, 10]
    assert ids("--changed") == [11, 10, 5, 4]
    assert ids("--changed", OTHER) == []
    assert ids(OTHER) == [12, 9, 6, 3]
    assert ids("--since", "2020-01-10") == [12, 11, 10]
    assert ids("--until", "2020-01-02") == [2, 1]  # a date alone: up to the end of that day
    assert ids("--since", "2020-01-03T00:00:00Z", "--until", "2020-01-05T00:00") == [4, 3]
    assert ids("--before", "5", "--limit", "2") == [4, 3]
    assert ids("--since", "1d") == []  # every run is years old by the clock of this test
    assert ids(CARD_URL, OTHER, "--before", "4") == [3, 2, 1]


def test_ndjson_streams_every_run_with_its_standing(capsys, home) -> None:
    code, out, _ = _cli(capsys, "history", "--json", "--home", home)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 12
    first = json.loads(lines[0])
    assert first["standing"] == "claim" and first["run_attestation"]["status"] == "unsigned"
    assert first["recorded_at"] == "2020-01-12T00:00:00.000Z" and first["agent"] == OTHER


def test_text_pages_say_how_to_see_older_runs(capsys, home) -> None:
    code, out, _ = _cli(capsys, "history", "--limit", "5", "--home", home)
    assert code == 0
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r.split()[0].rstrip("*") for r in rows] == ["12", "11", "10", "9", "8"]
    assert out.splitlines()[-1] == "older runs: the same command with --before 8"
    code, out, _ = _cli(capsys, "history", "--before", "8", "--limit", "5", "--home", home)
    assert out.splitlines()[-1] == "older runs: the same command with --before 3"
    code, out, _ = _cli(capsys, "history", "--before", "3", "--limit", "5", "--home", home)
    assert "older runs" not in out
    code, out, _ = _cli(capsys, "history", "--verdict", "churn", "--home", home)
    assert code == 0 and out.strip() == "no recorded runs match"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--since", "last tuesday"), "is not a moment"),
        (("--until", "2026-02-30"), "not a date"),
        (("--verdict", "great"), "invalid choice"),
        (("--before", "0"), "positive"),
        (("--limit", "0"), "--limit"),
    ],
)
def test_a_filter_that_cannot_be_read_is_a_usage_error(capsys, home, argv, message) -> None:
    code, out, err = _cli(capsys, "history", *argv, "--home", home)
    assert code == 2 and message in err and out == ""


def test_an_unknown_agent_among_several_is_named(capsys, home) -> None:
    code, _, err = _cli(capsys, "history", CARD_URL, "http://nobody.example/", "--home", home)
    assert code == 6 and "no runs recorded for http://nobody.example/" in err
