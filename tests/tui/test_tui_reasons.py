"""The interview screen opens on what decided the verdict, and puts a root cause first.

Issue 28, items 4 and 5 on screen. When no answer conflicts with the card, the screen used to
open on "identity: all match" even for a forged card, and on five empty panes for an agent that
does not offer the interview; an agent that declares the interview and implements none of it
showed ten findings with nothing saying they are one. Now a reason tab comes first and the
screen opens on it: the signature for an invalid card, how each call was answered for an
unreachable agent, the root cause (`interview_not_implemented`) with the findings that follow
from it, and for `not_offered` that absence says nothing plus what the card does declare. The
findings list puts the root cause first with the findings it explains beneath it, marked `↳`.
Driven against the reference agents at 80x24 and at full size; the rules are tested without a
terminal first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList, TabbedContent, TabPane

from explorer.core.run import Exchange, Run
from explorer.core.view import Finding, ReportView
from explorer.tui import model
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.widgets.findings import FindingsList
from explorer.tui.widgets.reason import ReasonPane
from tests.support.tui import TUI_SIZE, make_app, screen_text, wait_for, wait_for_interview

SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
CAUSE = "interview_not_implemented"


def words(text: str) -> str:
    """The words drawn, one space apart (a sentence wrapped over lines reads as written)."""
    return " ".join(text.replace("▎", " ").replace("▊", " ").split())


# --- the rules, without a terminal -----------------------------------------------------------------


def _finding(code: str, severity: str = "error", **where: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "detail": f"{code} detail", **where}


def test_a_root_cause_comes_first_with_the_findings_it_explains_beneath_it() -> None:
    findings = [
        Finding.of(f)
        for f in (
            _finding("card_unsigned", "warning"),
            _finding("method_error", question="identity", cause=CAUSE),
            _finding(CAUSE),  # where a report ordered another way would put it
            _finding("lossy_number", "info", question="usage"),
            _finding("closure_method_not_refused", probe="undefined_method", cause=CAUSE),
            _finding("method_error", question="usage", cause="a_cause_this_run_does_not_have"),
        )
    ]
    assert model.grouped_findings(findings) == [
        (0, False),
        (2, False),
        (1, True),
        (4, True),
        (3, False),
        (5, False),
    ]
    assert model.grouped_findings(findings[:1]) == [(0, False)]


def test_what_changed_is_said_in_kinds_and_signed_again_is_no_change() -> None:
    assert model.change_words((), first=True) == "first"
    assert model.change_words(()) == "= same"
    assert model.change_words(("resigned",)) == "~ signed again"
    assert model.change_words(("key",)) == "≠ key"
    both = model.change_words(("declarations", "answers", "resigned"))
    assert both == "≠ declarations+answers · signed again"
    assert model.change_words(("verdict", "answers", "a-kind-from-the-future")) == "≠ answers+verdict"
    rows = [  # newest first; the same declarations and signers under other card bytes: signed again
        {
            "agent": "a",
            "card_sha256": "c3",
            "declarations_sha256": "d1",
            "signers": ["k2"],
            "answers_sha256": "x",
            "verdict": "conformant",
        },
        {
            "agent": "a",
            "card_sha256": "c2",
            "declarations_sha256": "d1",
            "signers": ["k1"],
            "answers_sha256": "x",
            "verdict": "conformant",
        },
        {
            "agent": "a",
            "card_sha256": "c1",
            "declarations_sha256": "d1",
            "signers": ["k1"],
            "answers_sha256": "x",
            "verdict": "conformant",
        },
    ]
    assert model.churn_markers(rows) == ["≠ key", "~ signed again", "first"]


def _report(
    verdict: str,
    *,
    findings: tuple[dict[str, Any], ...] = (),
    signature: str = "verified",
    questions: str = "answered",
) -> dict[str, Any]:
    projection = {"source": {"document": "card", "member": "/name"}, "status": "match", "value": "A"}
    return {
        "verdict": verdict,
        "card": {
            "name": "Agent A",
            "url": "http://a.example/.well-known/agent-card.json",
            "sha256": "c1",
            "signature": {
                "status": signature,
                "alg": "ES256",
                "kid": "k1",
                "signatures": [
                    {
                        "index": 0,
                        "alg": "ES256",
                        "kid": "k1",
                        "status": signature,
                        "detail": "does not verify with the key for kid 'k1'",
                    }
                ],
            },
        },
        "questions": {
            name: (
                {"status": "answered", "projections": [projection]}
                if questions == "answered"
                else {"status": questions}
            )
            for name in model.QUESTIONS
        },
        "findings": list(findings),
    }


def _exchange(purpose: str, status: int | None, body: bytes = b"", error: str | None = None) -> Exchange:
    return Exchange(
        purpose=purpose,
        attempt=1,
        method="POST",
        url="http://a.example/rpc",
        status=status,
        response_body=body,
        error=error,
    )


def test_the_reason_is_what_decided_the_verdict_when_no_answer_conflicts() -> None:
    forged = ReportView.of(
        _report(
            "nonconformant",
            signature="invalid",
            findings=(_finding("card_signature_invalid", member="/signatures"),),
        )
    )
    reason = model.verdict_reason(forged)
    assert reason is not None and (reason.kind, reason.summary) == ("signature", "signature invalid")
    said = "\n".join(line.text for line in reason.lines)
    assert "signature 0 (ES256 · k1): invalid, does not verify with the key for kid 'k1'" in said
    assert "5 of 5 projections match the card" in said

    down = ReportView.of(
        _report(
            "unreachable", questions="error", findings=(_finding("http_status", detail="answered HTTP 503"),)
        )
    )
    calls = [
        _exchange("card", 200),
        _exchange("ask:identity#1", 503),
        _exchange("ask:identity#2", 503),
        _exchange("probe:undefined_method", None, error="ConnectError: refused"),
    ]
    reason = model.verdict_reason(down, calls)
    assert reason is not None and reason.kind == "statuses"
    lines = [line.text for line in reason.lines]
    assert "✓ card: HTTP 200" in lines and "✗ interview/identity: HTTP 503" in lines
    assert any(line.startswith("✗ probe undefined_method: ") for line in lines)
    without = model.verdict_reason(down)  # a record without its exchanges: the questions' statuses
    assert without is not None and "identity: error" in [line.text for line in without.lines]

    unimplemented = ReportView.of(
        _report(
            "nonconformant",
            questions="error",
            findings=(_finding(CAUSE), _finding("method_error", question="identity", cause=CAUSE)),
        )
    )
    reason = model.verdict_reason(unimplemented)
    assert reason is not None and (reason.kind, reason.summary) == ("root cause", "interview not implemented")
    assert reason.heading == f"{CAUSE} detail"
    assert reason.lines[-1].text.startswith("↳ ✗ method_error [identity]: ") and reason.lines[-1].depth == 1

    card = (
        b'{"name": "Agent A", "skills": [{"id": "s1", "name": "Skill one"}], "capabilities": '
        b'{"extensions": [{"uri": "https://example.com/ext", "required": true}]}}'
    )
    silent = ReportView.of(
        _report(
            "not_offered",
            questions="not_asked",
            findings=(
                _finding("interview_not_declared", "info", detail="absence says nothing about the agent"),
            ),
        )
    )
    reason = model.verdict_reason(silent, [_exchange("card", 200, card)])
    assert reason is not None and reason.heading == "absence says nothing about the agent"
    lines = [line.text for line in reason.lines]
    assert "name: Agent A" in lines and "s1 · Skill one" in lines
    assert "https://example.com/ext (required)" in lines

    conformant = ReportView.of(_report("conformant"))
    assert model.verdict_reason(conformant) is None
    drifting = _report("nonconformant", signature="invalid")
    drifting["questions"]["usage"]["projections"][0]["status"] = "mismatch"  # a conflict explains it
    assert model.verdict_reason(ReportView.of(drifting)) is None


# --- on screen, against the reference agents ---------------------------------------------------------

REASONS = {  # agent: (the reason tab's summary, what is on screen without a keystroke, at 80x24 too)
    "forged": (
        "signature invalid",
        ("the card's signature does not verify", "signature 0 (ES256 · forged-card-1): invalid"),
    ),
    "down": (
        "questions not answered",
        ("✓ card: HTTP 200", "✗ interview/identity: HTTP 503", "✗ interview/refusals: HTTP 503"),
    ),
    "unimplemented": (
        "interview not implemented",
        (
            "every interview call (5 questions and 5 probes) was answered JSON-RPC error -32601",
            "what follows from it:",
            "↳ · activation_not_echoed",
        ),
    ),
    "silent": (
        "interview not declared",
        (
            "absence says nothing about the agent",
            "what the card does declare:",
            "reconcile-statement · Reconcile a statement",
            "flag-exceptions · Flag exceptions",
            "https://agentsow.com/extensions/a2a-terms/v1",
        ),
    ),
}


@pytest.fixture(scope="module")
def runs(fleet: Any) -> dict[str, Run]:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview
    from explorer.tui.demo_agents import demo_keys

    async def interview(name: str) -> Run:
        options = Options(keys=demo_keys(fleet), runner="tester")
        return await run_interview(fleet.agents[name].card_url, options)

    return {name: asyncio.run(interview(name)) for name in (*REASONS, "steady", "drifting")}


async def opened(pilot: Any, run: Run) -> InterviewScreen:
    pilot.app.show_run(run, 1)
    screen = await wait_for_interview(pilot)
    await pilot.pause(0.1)
    return screen


@sizes
@pytest.mark.parametrize("agent", REASONS)
async def test_the_screen_opens_on_what_decided_the_verdict(
    runs: dict[str, Run], tmp_path: Path, agent: str, size: tuple[int, int]
) -> None:
    summary, shown = REASONS[agent]
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs[agent])
        assert screen.query_one(TabbedContent).active == "tab-reason"
        assert isinstance(pilot.app.focused, ReasonPane)  # up/down scroll it at once
        drawn = words(screen_text(pilot.app))
        verdict = ReportView.of(runs[agent].report).verdict_label.replace("_", " ")  # in words
        assert f"why {verdict}: {summary}" in drawn
        for text in shown:
            assert text in drawn, (text, drawn)
        assert "all match" not in drawn.split(f"why {verdict}: ", 1)[1]  # the pane is the reason
        tabs = [pane.id for pane in screen.query_one(TabbedContent).query(TabPane)]
        assert tabs[:2] == ["tab-reason", "tab-identity"]  # the reason first, then the questions
        await pilot.press("1")  # the questions are a key away
        await pilot.pause()
        assert screen.query_one(TabbedContent).active == "tab-identity"


@sizes
async def test_an_agent_whose_answers_explain_the_verdict_opens_on_them(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs["drifting"])
        assert screen.query_one(TabbedContent).active == "tab-usage" and screen.reason is None
        assert not screen.query("#tab-reason")
        pilot.app.pop_screen()
        screen = await opened(pilot, runs["steady"])
        assert screen.query_one(TabbedContent).active == "tab-identity" and screen.reason is None


@sizes
async def test_findings_put_the_root_cause_first_with_what_follows_from_it_beneath(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    report = ReportView.of(runs["unimplemented"].report)
    explained = [i for i, f in enumerate(report.findings) if f.cause == CAUSE]
    assert len(explained) == 9
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs["unimplemented"])
        await pilot.press("f")
        await wait_for(pilot, lambda: bool(screen.query(FindingsList)))
        await pilot.pause()
        listing = screen.query_one(FindingsList)
        prompts = [listing.get_option_at_index(i) for i in range(listing.option_count)]
        assert prompts[0].id == "f0" and listing.highlighted == 0
        head = prompts[0].prompt.plain
        assert CAUSE in head and "root cause: the 9 findings below follow from it" in head
        beneath = prompts[1:10]
        assert [int(option.id[1:]) for option in beneath] == explained
        assert all(option.prompt.plain.startswith("  ↳ ") for option in beneath)
        drawn = words(screen_text(pilot.app))
        assert "interview_not_implemented root cause:" in drawn and "↳ · info activation_not_echoed" in drawn
        # Enter on one jumps where it is about, as before.
        identity = next(i for i, o in enumerate(prompts) if "method_error  identity" in o.prompt.plain)
        await pilot.press(*["down"] * identity, "enter")
        await wait_for(pilot, lambda: screen.query_one(TabbedContent).active == "tab-identity")
        assert isinstance(pilot.app.focused, OptionList)
