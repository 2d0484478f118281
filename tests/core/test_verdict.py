"""The verdict rule table, standing, and the churn finding.

See docs/CONTRACT.md and the interview extension, section 7 rule 3 and sections 8 and 9.
"""

from __future__ import annotations

import pytest

from explorer.core.findings import finding
from explorer.core.verdict import churn_finding, decide_verdict, standing

ERR = finding("projection_mismatch", "x", question="identity", member="/name")
ERR2 = finding("nondeterministic_answer", "y", question="usage")
WARN = finding("card_unsigned", "no signatures")
INFO = finding("activation_not_echoed", "no echo")


@pytest.mark.parametrize(
    ("attempts", "offered", "reachable", "verdict"),
    [
        ([[]], True, True, "conformant"),
        ([[WARN, INFO]], True, True, "conformant"),
        ([[ERR]], True, True, "nonconformant"),
        ([[ERR], [ERR]], True, True, "nonconformant"),
        ([[], [ERR]], True, True, "nonconformant"),
        ([[ERR], []], True, True, "churn"),
        ([[ERR, WARN], [WARN]], True, True, "churn"),
        ([[ERR], [WARN], []], True, True, "churn"),
        ([[ERR]], False, True, "not_offered"),
        ([[]], False, True, "not_offered"),
        ([[ERR]], True, False, "unreachable"),
        ([[]], False, False, "unreachable"),
        ([], True, True, "unreachable"),
    ],
)
def test_verdict_rule_table(attempts: list, offered: bool, reachable: bool, verdict: str) -> None:
    assert decide_verdict(attempts, offered=offered, reachable=reachable) == verdict


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("self", "claim"),
        (None, "claim"),
        ("operator", "claim"),
        ("independent", "evidence"),
        ("platform", "evidence"),
    ],
)
def test_standing_never_presents_a_claim_as_evidence(role: str | None, expected: str) -> None:
    assert standing(role) == expected


def test_churn_finding_names_the_codes_and_members_that_vanished() -> None:
    churn = churn_finding([ERR2, ERR, WARN, ERR], [WARN])
    assert churn is not None
    assert (churn.code, churn.severity) == ("churn", "info")
    assert "re-run: nondeterministic_answer (usage); projection_mismatch (identity /name) (" in churn.detail


@pytest.mark.parametrize(("first", "last"), [([], []), ([ERR], [ERR]), ([WARN], []), ([], [ERR])])
def test_no_churn_finding_otherwise(first: list, last: list) -> None:
    assert churn_finding(first, last) is None


@pytest.mark.parametrize(
    ("attempts", "offered", "card_read", "verdict"),
    [
        ([[]], True, True, "unreachable"),  # a clean but unfinished run is not conformant
        ([[ERR]], True, True, "unreachable"),  # nor is a conflict its re-run could not check
        ([[ERR], []], True, True, "unreachable"),  # nor churn
        ([[]], False, True, "not_offered"),  # the card alone decides that
        ([[]], False, False, "unreachable"),
    ],
)
def test_a_run_the_deadline_cut_short_says_nothing_about_conformance(
    attempts: list, offered: bool, card_read: bool, verdict: str
) -> None:
    assert decide_verdict(attempts, offered=offered, reachable=True, cut=True, card_read=card_read) == verdict
