"""Down is not dishonest: an agent that answers every interview call with HTTP 5xx or 429 is
`unreachable` (exit 3), never `nonconformant`, and its `http_status` findings name each status:
one finding per status, listing the calls that got it, not one per call.

Against the reference fleet's `down` (503, Retry-After an hour) and `throttled` (429,
Retry-After 1 s, the retry too) agents, through the real `verify` command over loopback.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from explorer.cli import main
from explorer.core.findings import QUESTIONS


def _verify(capsys: pytest.CaptureFixture[str], agent: Any) -> tuple[int, dict[str, Any]]:
    code = main(["verify", "--json", "--no-history", "--keys", agent.jwks_url, agent.card_url])
    out, _err = capsys.readouterr()
    return code, json.loads(out)


def test_an_agent_answering_503_to_every_call_is_unreachable(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _verify(capsys, fleet.agents["down"])
    assert (code, report["verdict"]) == (3, "unreachable")
    assert report["card"]["signature"]["status"] == "verified"  # the card itself was fine
    [status] = [f for f in report["findings"] if f["code"] == "http_status"]  # one, not five
    assert "question" not in status and "probe" not in status  # it concerns every question
    calls = ", ".join(f"interview/{q}" for q in QUESTIONS)
    assert status["detail"] == f"{fleet.agents['down'].jsonrpc_url} answered HTTP 503 to {calls}"
    # Retry-After: 3600 is beyond any wait: nothing was waited for, and a down agent is asked once.
    assert not [f for f in report["findings"] if f["code"] == "rate_limited"]
    assert report["attempts"] == 1 and report["probes"] == []


def test_an_agent_answering_429_for_good_is_unreachable_after_the_wait(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _verify(capsys, fleet.agents["throttled"])
    assert (code, report["verdict"]) == (3, "unreachable")
    by_code: dict[str, set[str | None]] = {}
    for f in report["findings"]:
        by_code.setdefault(f["code"], set()).add(f.get("question"))
    assert by_code == {"http_status": {None}, "rate_limited": set(QUESTIONS)}
    [status] = [f for f in report["findings"] if f["code"] == "http_status"]
    assert status["detail"].endswith("answered HTTP 429 to " + ", ".join(f"interview/{q}" for q in QUESTIONS))
