"""The verdict rule and a result's standing (docs/CONTRACT.md; the interview extension, sections 7-9).

Kept apart from the diff so the rule reads as the table it is: the verdict depends only on
whether a card and the questions could be reached, whether the interview is offered, which
attempts carried error-severity findings, and whether the run's deadline cut it short. A conflict
that survives the re-run is non-conformance; one that vanished is churn, reported with the codes
that vanished.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from explorer.core.findings import Finding, finding, has_errors
from explorer.core.text import safe_text

Verdict = Literal["conformant", "nonconformant", "churn", "not_offered", "unreachable"]
Standing = Literal["claim", "evidence"]

VERDICTS: tuple[str, ...] = ("conformant", "nonconformant", "churn", "not_offered", "unreachable")
ROLES: tuple[str, ...] = ("self", "independent", "platform")


def standing(role: str | None) -> Standing:
    """`claim` for a self-run result, `evidence` for an independent party or a platform.

    An unknown or missing role is read as `self`: a surface must never present a claim as
    evidence (the interview extension, section 9 rule 4), so doubt falls on the side of claim.
    """
    return "evidence" if role in ("independent", "platform") else "claim"


def decide_verdict(
    attempt_findings: Sequence[Sequence[Finding]],
    *,
    offered: bool,
    reachable: bool,
    cut: bool = False,
    card_read: bool = True,
) -> Verdict:
    """The CONTRACT verdict from the findings of each attempt, first to last.

    A run the deadline cut short (`cut`) is not_offered when its card was read and declares no
    interview, else unreachable: the procedure was not finished, so it says nothing about
    conformance (a slow agent is not a dishonest one, and an unfinished re-run neither confirms
    nor clears a conflict). Otherwise: unreachable (no usable card or no question could be put;
    also when nothing ran at all), then not_offered, then nonconformant when the last attempt has
    an error finding, churn when only the first had, conformant otherwise.
    """
    if cut:
        return "not_offered" if card_read and not offered else "unreachable"
    if not reachable or not attempt_findings:
        return "unreachable"
    if not offered:
        return "not_offered"
    if has_errors(attempt_findings[-1]):
        return "nonconformant"
    if has_errors(attempt_findings[0]):
        return "churn"
    return "conformant"


def churn_finding(first: Sequence[Finding], last: Sequence[Finding]) -> Finding | None:
    """The `churn` info finding when the first attempt had errors and the last has none."""
    if not has_errors(first) or has_errors(last):
        return None
    places: dict[str, list[str]] = {}
    for f in first:
        if f.severity == "error":
            where = safe_text(" ".join(str(w) for w in (f.question or f.probe, f.member) if w), limit=160)
            listed = places.setdefault(f.code, [])
            if where and where not in listed:
                listed.append(where)
    named = [
        f"{code} ({', '.join(places[code][:5])}{', ...' if len(places[code]) > 5 else ''})"
        if places[code]
        else code
        for code in sorted(places)
    ]
    return finding(
        "churn",
        "conflicts of the first attempt did not survive the re-run: "
        + "; ".join(named)
        + " (the report's first_attempt holds both values of each)",
    )
