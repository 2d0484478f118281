"""Down is not dishonest: an agent that answers every interview call with HTTP 5xx or 429 is
`unreachable` (exit 3), never `nonconformant`, and its `http_status` findings name each status.

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
    statuses = {f["question"]: f["detail"] for f in report["findings"] if f["code"] == "http_status"}
    assert set(statuses) == set(QUESTIONS)
    assert all(detail.endswith("answered HTTP 503") for detail in statuses.values())
    # Retry-After: 3600 is beyond any wait: nothing was waited for, and a down agent is asked once.
    assert not [f for f in report["findings"] if f["code"] == "rate_limited"]
    assert report["attempts"] == 1 and report["probes"] == []


def test_an_agent_answering_429_for_good_is_unreachable_after_the_wait(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _verify(capsys, fleet.agents["throttled"])
    assert (code, report["verdict"]) == (3, "unreachable")
    by_code: dict[str, set[str]] = {}
    for f in report["findings"]:
        by_code.setdefault(f["code"], set()).add(f["question"])
    assert by_code == {"http_status": set(QUESTIONS), "rate_limited": set(QUESTIONS)}
    assert all("HTTP 429" in f["detail"] for f in report["findings"] if f["code"] == "http_status")
