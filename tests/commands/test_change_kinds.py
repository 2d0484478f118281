"""What changed, in three kinds, wherever the CLI shows a change, on each history backend.

One reference agent on one address (`tests.support.restarts`), restarted as deployments restart
it, its runs recorded in the SQLite file and in a PostgreSQL database alike (`store_url`):

1. a first run;
2. a restart, which signs the card again (ES256: other bytes, the same declarations under the
   same key): `resigned`, shown as "signed again", never a change: `watch` raises no alarm,
   `history --changed` leaves it out, `compare` exits 0 saying "signed again";
3. a restart under another card key: `key`, a change named "key changed";
4. a restart with another description: `declarations`, a change.

And the sweep line of `watch --from` read from the same real reports, and the exports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.store.location import open_store
from tests.support.restarts import Restarts

pytestmark = pytest.mark.slow  # the CLI against a reference agent restarted four times, on both backends


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.timeout(240)
def test_signed_again_key_changed_and_declarations_changed_are_told_apart(
    capsys: pytest.CaptureFixture[str], store_url: str, tmp_path: Path
) -> None:
    agent = Restarts(tmp_path / "agent")
    at = ["--history", store_url, "--home", str(tmp_path / "home")]
    keys = ["--keys", str(agent.jwks_file)]

    with agent.session() as url:
        code, out, err = _run(capsys, "verify", url, *keys, "--json", *at)
        assert code == 0, err
        assert json.loads(out)["card"]["signers"]  # the card's signature verified
    with agent.session() as url:  # a restart: the card is signed again
        code, out, err = _run(capsys, "watch", url, *keys, "--every", "0.1", "--count", "1", *at)
        assert code == 0, err
        assert "run 2  conformant" in out and "no change since run 1: signed again" in out, out
        assert "CHANGED" not in out
    with agent.session(rotated=True) as url:
        code, _, err = _run(capsys, "verify", url, *keys, *at)
        assert code == 0, err
    with agent.session(rotated=True, description="Reconciles statements, now also invoices") as url:
        code, _, err = _run(capsys, "verify", url, *keys, *at)
        assert code == 0, err

    code, out, _ = _run(capsys, "history", "--json", *at)
    rows = {row["id"]: row for row in map(json.loads, out.splitlines())}
    assert sorted(rows) == [1, 2, 3, 4]
    assert (rows[1]["kinds"], rows[1]["changed"]) == ([], False)
    assert (rows[2]["kinds"], rows[2]["changed"]) == (["resigned"], False)
    assert rows[2]["declarations_sha256"] == rows[1]["declarations_sha256"]
    assert rows[2]["signers"] == rows[1]["signers"] and rows[2]["card_sha256"] != rows[1]["card_sha256"]
    assert "key" in rows[3]["kinds"] and "declarations" not in rows[3]["kinds"] and rows[3]["changed"]
    assert rows[3]["signers"] != rows[2]["signers"]
    assert "declarations" in rows[4]["kinds"] and "key" not in rows[4]["kinds"] and rows[4]["changed"]

    code, out, _ = _run(capsys, "history", "--changed", "--json", *at)
    assert [json.loads(line)["id"] for line in out.splitlines()] == [4, 3]
    code, out, _ = _run(capsys, "history", *at)
    lines = {int(line.split()[0].rstrip("*~")): line for line in out.splitlines()[1:5]}
    assert lines[2].split()[0] == "2~" and "signed again" in lines[2]
    assert lines[3].split()[0] == "3*" and " key" in lines[3]
    assert lines[4].split()[0] == "4*" and " declarations " in lines[4]
    assert "~ signed again: the card was signed again over the same declarations" in out

    code, out, _ = _run(capsys, "compare", "1", "2", *keys, *at)
    assert code == 0, out
    assert "no change, signed again" in out and "signed again card /signatures" in out
    code, out, _ = _run(capsys, "compare", "1", "2", *keys, "--json", *at)
    data = json.loads(out)
    assert code == 0 and (data["kinds"], data["changed"], data["identical"]) == (["resigned"], False, False)
    code, out, _ = _run(capsys, "compare", "2", "3", *keys, *at)
    assert code == 1 and out.count("changed: ") >= 1 and "key changed" in out, out
    assert "card.signers: " in out
    code, out, _ = _run(capsys, "compare", "3", "4", *keys, *at)
    assert code == 1 and "declarations changed" in out and "key changed" not in out, out

    code, out, _ = _run(capsys, "export", "2", "--format", "md", *keys, *at)
    assert code == 0 and "**Change:** none since run 1: signed again" in out, out
    code, out, _ = _run(capsys, "export", "3", "--format", "html", *keys, *at)
    assert code == 0 and "since run 2: key changed" in out
    code, out, _ = _run(capsys, "export", "4", "--format", "json", *keys, *at)
    change = json.loads(out)["summary"]["change"]
    assert change["previous_run"] == 3 and "declarations" in change["kinds"] and change["changed"]

    with open_store(store_url) as history:
        [row] = history.fleet()
        assert (row.runs, row.changes, row.churn) == (4, 2, 0)
        assert "declarations" in row.kinds and row.last_change_at == history.summary(4).recorded_at
        reports = {run_id: history.load(run_id).report for run_id in (1, 2, 3)}
    _sweep_lines_say_the_same(reports)


def _sweep_lines_say_the_same(reports: dict[int, Any]) -> None:
    """`watch --from` judges two sweeps of one agent by the same kinds, from its real reports."""
    from explorer.commands.watch_many import state_of, sweep_line

    first, again, rotated = ({"agent": state_of(reports[n], "agent")} for n in (1, 2, 3))
    line = sweep_line("T", 2, again, first, 1.0, "1 conformant")
    assert line.endswith("no change (1 signed again, not a change)"), line
    line = sweep_line("T", 3, rotated, again, 1.0, "1 conformant")
    assert "CHANGED 1: Stonework Books (Steady) (key changed" in line, line
    assert "declarations" not in line
