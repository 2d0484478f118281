"""One standing, said the same way: an unsigned `--as independent` run against a reference agent.

Live, the runner is the one speaking, so the standing stays `evidence` (CONTRACT.md "Signed
evidence"); the report says whether a signature stands behind it (`standing_signed`, in every
report), and every line that says `evidence` for an unsigned run says, on that line, that it is
unsigned, a claim to anyone else until signed, and how to sign it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _err = capsys.readouterr()
    return code, out


def test_an_unsigned_independent_run_is_evidence_live_and_says_it_is_unsigned(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = fleet.agents["steady"]
    argv = ["verify", "--no-history", "--keys", agent.jwks_url, "--as", "independent", "--runner", "ci",
            agent.card_url]  # fmt: skip
    code, out = _run(capsys, *argv, "--json")
    report = json.loads(out)
    assert code == 0 and report["standing"] == "evidence" and report["standing_signed"] is False
    code, out = _run(capsys, *argv)
    [line] = [line for line in out.splitlines() if "evidence" in line]
    assert line.startswith("standing: evidence: run by an independent party (ci); ")
    for said in ("unsigned", "a claim to anyone else until signed", "--sign-key", "keygen"):
        assert said in line, said


def test_a_self_run_and_a_signed_run_say_whether_they_are_signed(
    fleet: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    code, out = _run(capsys, "verify", "--json", "--no-history", "--keys", agent.jwks_url, agent.card_url)
    assert json.loads(out)["standing_signed"] is False and json.loads(out)["standing"] == "claim"
    key = tmp_path / "runner.pem"
    assert _run(capsys, "keygen", "--out", str(key))[0] == 0
    argv = ["verify", "--home", str(tmp_path / "home"), "--keys", agent.jwks_url, "--sign-key", str(key),
            "--as", "platform", "--runner", "ci", agent.card_url]  # fmt: skip
    code, out = _run(capsys, *argv, "--json")
    report = json.loads(out)
    assert code == 0 and report["standing"] == "evidence" and report["standing_signed"] is True
    code, out = _run(capsys, *argv)
    [line] = [line for line in out.splitlines() if line.startswith("standing: ")]
    assert line.startswith("standing: evidence: signed by ci") and "unsigned" not in line
