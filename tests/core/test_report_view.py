"""The typed report view: read once, tolerantly, and worded the same on every surface.

A report may come from an old history row or a hand-edited transcript, so the view must read
anything without raising; and the facts a person reads (the projection marks, the verdict, the
standing) must come out the same in the CLI summary, the exports and the TUI, because they are
decided once in `explorer.core.view`.
"""

from __future__ import annotations

from typing import Any

import pytest

from explorer.core.report import summary_lines
from explorer.core.run import Run
from explorer.core.view import (
    PROJECTION_MARKS,
    SIGN_HOW,
    UNSIGNED_EVIDENCE,
    Projection,
    ReportView,
    projection_label,
    verdict_label,
)
from explorer.store.export import export
from explorer.tui.widgets.header import InterviewHeader
from explorer.tui.widgets.projections import projection_prompt


def _report(**overrides: Any) -> dict[str, Any]:
    projections = [
        {"index": i, "member": f"/m{i}", "document": "card", "status": status, "value": i, "source_value": i}
        for i, status in enumerate(("match", "mismatch", "unresolved", "unverifiable"))
    ]
    projections[1]["source_value"] = "other"
    report: dict[str, Any] = {
        "verdict": "nonconformant",
        "ran_by": {"name": "auditor", "role": "independent"},
        "standing": "evidence",
        "target": "http://127.0.0.1:9/",
        "card": {
            "url": "http://127.0.0.1:9/card.json",
            "name": "Shown",
            "layout": "v1.0",
            "sha256": "ab" * 32,
            "signature": {"status": "verified", "form": "served", "alg": "ES256", "kid": "k1"},
        },
        "questions": {
            q: {"status": "not_asked", "answer": None, "projections": []}
            for q in ("identity", "capabilities", "usage", "terms", "refusals")
        },
        "probes": [{"name": "undefined_method", "outcome": "refused"}],
        "findings": [
            {
                "code": "projection_mismatch",
                "severity": "error",
                "question": "identity",
                "member": "/m1",
                "detail": "differs",
            }
        ],
        "extensions": [],
        "attempts": 2,
    }
    report["questions"]["identity"] = {
        "status": "answered",
        "answer": {},
        "declared": True,
        "projections": projections,
    }
    report.update(overrides)
    return report


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        [],
        "text",
        {},
        {"card": [], "questions": "no", "findings": {"a": 1}, "ran_by": 3, "attempts": True},
        {"questions": {"identity": {"projections": [1, None, {"status": 5}]}}, "probes": [None, {"name": 1}]},
    ],
)
def test_anything_reads_without_raising_as_a_neutral_report(garbage: Any) -> None:
    view = ReportView.of(garbage)
    assert view.verdict == "unknown" and view.standing == "claim" and view.role == "self"
    assert set(view.questions) == {"identity", "capabilities", "usage", "terms", "refusals"}
    assert view.card.signature.status == "unknown"
    assert summary_lines(garbage if isinstance(garbage, dict) else {})[0].startswith("verdict:")
    assert view.attempts is None


def test_the_view_types_what_the_contract_requires_and_keeps_the_rest() -> None:
    view = ReportView.of(_report(run_attestation={"status": "unsigned"}, churn_explained="later"))
    assert (view.verdict, view.standing, view.runner, view.role, view.attempts) == (
        "nonconformant",
        "evidence",
        "auditor",
        "independent",
        2,
    )
    identity = view.questions["identity"]
    assert [p.status for p in identity.projections] == ["match", "mismatch", "unresolved", "unverifiable"]
    assert identity.counts() == {"match": 1, "mismatch": 1, "unresolved": 1, "unverifiable": 1}
    assert identity.projections[1].canonical("source") == '"other"'
    assert view.findings[0].code == "projection_mismatch" and view.findings[0].mark == "✗"
    assert view.member("churn_explained") == "later"  # a member the view does not type yet
    assert view.member("card", "signature", "kid") == "k1" and view.member("card", "nope", "x") is None


def test_each_projection_state_has_its_own_mark_and_every_surface_uses_it() -> None:
    assert len(set(PROJECTION_MARKS.values())) == 4
    labels = [projection_label(s) for s in ("match", "mismatch", "unresolved", "unverifiable")]
    assert labels == ["✓ match", "✗ MISMATCH", "? UNRESOLVED", "~ unverifiable"]
    states = ("match", "mismatch", "unresolved", "unverifiable")
    rows = [projection_prompt(Projection.of({"member": "/m", "status": s})).plain for s in states]
    assert [row.split()[0] for row in rows] == [PROJECTION_MARKS[s] for s in states]  # the TUI's rows
    run = Run(report=_report())
    markdown, html = export(run, "md"), export(run, "html")
    for label in labels:
        assert label in markdown and label in html
    assert "\x1b" not in projection_label("\x1b[2Jodd")  # an agent's word is shown, never obeyed


UNDECLARED = "claim: run by op, no independent role declared (--as independent declares one)"


@pytest.mark.parametrize(
    ("ran_by", "standing", "words"),
    [
        ({"name": "op", "role": "self"}, "claim", UNDECLARED),
        ({"name": "op", "role": "self"}, "evidence", UNDECLARED),
        (
            {"name": "ci", "role": "platform"},
            "evidence",
            f"evidence: recorded by a platform (ci); {UNSIGNED_EVIDENCE} ({SIGN_HOW})",
        ),
        (
            {"name": "au", "role": "independent"},
            "evidence",
            f"evidence: run by an independent party (au); {UNSIGNED_EVIDENCE} ({SIGN_HOW})",
        ),
        (
            {"name": "au", "role": "independent"},
            None,
            "claim: au says it ran this as an independent party, but that cannot be checked",
        ),
    ],
)
def test_the_standing_reads_the_same_in_the_summary_the_exports_and_the_tui(
    ran_by: dict[str, str], standing: str | None, words: str
) -> None:
    report = _report(ran_by=ran_by, standing=standing)
    assert ReportView.of(report).standing_words() == words
    assert f"standing: {words}" in summary_lines(report)
    assert words in InterviewHeader(ReportView.of(report)).render_header().plain  # the TUI's header
    # An export is a file that travels: an unsigned independent or platform role in it is a label.
    travels = words if ran_by["role"] == "self" else f"claim, unsigned: {ran_by['name']} says it ran this"
    assert travels in export(Run(report=report), "md")
    assert export(Run(report=report), "json").count(travels) >= 1


def test_the_verdict_reads_the_same_everywhere() -> None:
    report = _report()
    assert verdict_label("nonconformant") == "✗ nonconformant" == ReportView.of(report).verdict_label
    lines = summary_lines(report)
    assert lines[0] == "verdict: nonconformant (2 attempts)"
    assert lines[1] == "  a conflict with the declared documents survived the re-run"
    assert verdict_label("made-up") == "? made-up" and verdict_label(None) == "? unknown"


def test_a_nonconformant_verdict_says_what_made_it_so() -> None:
    assert summary_lines(_report(attempts=1))[1] == "  a conflict with the declared documents (asked once)"
    agreeing = _report(attempts=1, findings=[
        {"code": "card_signature_invalid", "severity": "error", "detail": "does not verify"},
        {"code": "member_unsigned", "severity": "warning", "detail": "not covered"},
    ])  # fmt: skip
    for question in agreeing["questions"].values():
        for projection in question["projections"]:
            projection["status"] = "match"
    assert summary_lines(agreeing)[1] == "  error finding: card_signature_invalid"


def test_the_heading_facts_do_not_type_every_projection() -> None:
    """A list of many runs asks each only for its verdict and standing: the questions, probes and
    findings are typed when first read, then kept."""
    view = ReportView.of(_report())
    assert view.standing_words() and view.verdict_label
    assert not {"questions", "probes", "findings", "extensions"} & set(vars(view))
    identity = view.questions["identity"]
    assert identity.counts()["mismatch"] == 1 and "projections" not in vars(identity)
    assert view.questions is view.questions and identity.projections is identity.projections


def test_an_unverifiable_signature_says_what_the_recorded_keys_found() -> None:
    signature = {"status": "unverifiable", "alg": "ES256", "kid": "k1",
                 "with_recorded_keys": {"status": "invalid", "kid": "k1", "key_source": "user"}}  # fmt: skip
    lines = summary_lines(_report(card={"url": "http://127.0.0.1:9/c", "signature": signature}))
    hint = lines[lines.index("signature: unverifiable (alg ES256, kid k1)") + 1]
    assert hint.startswith("  the keys recorded with this run found the signature invalid, but keys")
    assert "to check it: --keys JWKS_FILE_OR_URL with the signer's public key (kid k1)" in hint
