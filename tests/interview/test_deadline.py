"""One deadline per run: whatever an agent does, a whole interview, re-runs included, ends by the
deadline (default six times `--timeout`, or `--deadline SECONDS`), and a run it cuts short is
`unreachable` with a `deadline` finding.

Each shape is a real loopback agent (`explorer.demo.slow`, a stdlib server on 127.0.0.1) that
answers every request just under the timeout, driven through the real `verify` command in a
subprocess: slow answers
with re-runs to spare, forty OpenID Connect schemes, many proposals answering 429 with a long
`Retry-After`, four `jku` key sets. The elapsed time is asserted only as a generous upper bound
that still proves the cut: each shape took several times that before (the figure in each test's
docstring); how fast a run really is belongs in bench/.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from explorer.core.run import Run
from explorer.demo.slow import SlowAgent
from explorer.interview.options import Options
from explorer.interview.procedure import reverify_offline, run_interview
from tests.support.http_server import base_url, serving

pytestmark = pytest.mark.slow  # real servers that answer slowly, on purpose

TIMEOUT = 1.5
DELAY = 1.0  # every answer, under the timeout with room for a loaded machine
DEADLINE = 6 * TIMEOUT  # the default: six times --timeout
SLACK = 6.0  # process start-up and judging, generously: each shape took far longer before


@pytest.fixture
def agent() -> Iterator[str]:
    """The slow agent's base URL; each shape's card is under `{base}/{shape}`."""
    SlowAgent.seen = []
    SlowAgent.delay = DELAY
    SlowAgent.retry_after = "5"
    with serving(SlowAgent) as server:
        SlowAgent.prepare(base_url(server))
        yield base_url(server)


_said: list[str] = []  # each verify's stderr, last one last


def _verify(
    base: str, shape: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "verify",
            "--json",
            "--no-history",
            "--timeout",
            str(TIMEOUT),
            *args,
            f"{base}/{shape}/.well-known/agent-card.json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, **(env or {})},
    )
    elapsed = time.monotonic() - started
    assert proc.stdout, proc.stderr
    _said.append(proc.stderr)
    return proc.returncode, json.loads(proc.stdout), elapsed


def _span(report: dict[str, Any]) -> float:
    """Seconds from the run's start to its end, as the report states them."""

    def at(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    return (at(report["finished_at"]) - at(report["started_at"])).total_seconds()


def _cut(code: int, report: dict[str, Any], bound: float, elapsed: float) -> None:
    assert (code, report["verdict"]) == (3, "unreachable"), report["findings"]
    (summary,) = [
        f for f in report["findings"] if f["code"] == "deadline" and "question" not in f and "probe" not in f
    ]
    assert summary["severity"] == "error" and f"({bound:g} s)" in summary["detail"]
    assert _span(report) < bound + 1.5
    assert elapsed < bound + SLACK


def test_slow_answers_with_re_runs_to_spare_are_cut_at_the_deadline(agent: str) -> None:
    """Before: six attempts of card, first round and second round, each answer 1 s: about 20 s."""
    code, report, elapsed = _verify(agent, "answers", "--reruns", "5")
    _cut(code, report, DEADLINE, elapsed)
    assert 2 <= report["attempts"] <= 3
    # Cut calls say so where they were asked, and the card and questions shown are a real attempt's.
    assert report["card"]["name"] == "Slow Agent (answers)"
    assert report["questions"]["identity"]["status"] in ("error", "answered")


def test_the_deadline_option_sets_the_bound(agent: str) -> None:
    code, report, elapsed = _verify(agent, "answers", "--reruns", "5", "--deadline", "2.5")
    _cut(code, report, 2.5, elapsed)
    assert report["attempts"] == 1
    cut = {f.get("question") or f.get("probe") for f in report["findings"] if f["code"] == "deadline"}
    assert cut & {"identity", "undefined_method"}  # the calls the deadline reached name themselves
    said = _said[-1]
    assert "the run's deadline, 2.5 s, cut it short" in said and "--deadline SECONDS" in said


def test_forty_openid_connect_schemes_cost_one_discovery_not_forty(agent: str) -> None:
    """Before: forty discovery documents one after another, 1 s each, per attempt: 80 s and more."""
    code, report, elapsed = _verify(
        agent,
        "schemes",
        "--oauth2-client-id",
        "slow-client",
        "--oauth2-client-secret",
        "env:SLOW_SECRET",
        env={"SLOW_SECRET": "slow-secret-value-42"},
    )
    assert code in (1, 3), report["findings"]  # re-run cut or not: bounded either way
    assert elapsed < DEADLINE + SLACK and _span(report) < DEADLINE + 1.5
    discoveries = [s for s in SlowAgent.seen if s.startswith("GET /schemes/oidc/")]
    assert 1 <= len(discoveries) <= 2  # the one scheme the credentials are used with, once per attempt
    assert "POST /schemes/token" in SlowAgent.seen


def test_many_proposals_answering_429_are_waited_for_only_as_far_as_the_deadline_allows(agent: str) -> None:
    """Before: sixteen proposals each waiting out Retry-After 5 s between two slow answers, in
    every attempt: 8 s an attempt, six attempts."""
    code, report, elapsed = _verify(agent, "proposals", "--reruns", "5")
    _cut(code, report, DEADLINE, elapsed)
    assert len(report["card"]["terms"]["proposals"]) == 16
    # With less left of the run than the Retry-After asks, the 429 is the answer: not waited for.
    SlowAgent.seen.clear()
    code, report, elapsed = _verify(agent, "proposals", "--reruns", "5", "--deadline", "4")
    assert elapsed < 4 + SLACK and _span(report) < 4 + 1.5
    attempts = SlowAgent.seen.count("GET /proposals/.well-known/agent-card.json")
    asked = [SlowAgent.seen.count(f"GET /proposals/terms/{n}.sow.json") for n in range(16)]
    assert 1 <= max(asked) <= attempts


def test_four_jku_key_sets_are_fetched_at_once(agent: str) -> None:
    """Before: four key sets one after another beside the first round, six attempts: about 30 s."""
    code, report, elapsed = _verify(agent, "jku", "--reruns", "5", "--allow-jku")
    _cut(code, report, DEADLINE, elapsed)
    assert len([s for s in SlowAgent.seen if s.startswith("GET /jku/jwks/")]) >= 4


def test_a_cut_run_re_derives_offline_to_the_same_report(agent: str) -> None:
    run = asyncio.run(
        run_interview(
            agent + "/answers/.well-known/agent-card.json",
            Options(timeout=TIMEOUT, reruns=5, deadline=3.0, runner="tests"),
        )
    )
    assert run.report["verdict"] == "unreachable"
    assert any(e.error and e.error.startswith("deadline") for e in run.exchanges)
    again = reverify_offline(Run.from_transcript(json.loads(json.dumps(run.to_transcript()))))
    assert again.report["verdict"] == "unreachable"
    assert again.report["findings"] == run.report["findings"]
