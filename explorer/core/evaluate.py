"""The whole report, rebuilt from recorded exchanges: the interview extension's section 8, pure.

`evaluate` never touches the network. It reads the `Exchange` records the procedure made (or a
stored transcript holds), groups them by attempt, and for each attempt redoes every judgement:
strict parse of the card, its layout and signature, the declared extensions, each committed
proposal, the five answers (asked twice), the closure probes and the section 7 diff. The verdict
comes from the attempts in order; the report's card, questions and probes come from the last
attempt, because that is the state the verdict describes. Keeping this pure is what lets
`verify --offline` reach the same verdict from a transcript, byte for byte.

This module is the entry point: `evaluate`, the run-level findings (deadline, churn, a changed
card), the order in which one attempt is judged, and the names the procedure shares with it
(`FAMILY_CARD`, `UNDEFINED_METHOD`, `UNMATCHED_SELECTOR`). The judging itself is in one module
per part of the report, each writing into the attempt's record (`explorer.core.attempt`):
`explorer.core.card_checks` (the card, its signature and what it declares),
`explorer.core.questions` (the five answers and their diff) and `explorer.core.probes` (the
closure probes); each module states the readings of the texts it makes where they are silent.

Exchanges are found by their purpose (the fixed vocabulary of docs/ARCHITECTURE.md). When a
purpose occurs more than once in an attempt (a 429 waited out, then retried), the last exchange
is the answer and any 429 among the others is reported as `rate_limited`.

An attempt in which every interview call got nothing from the agent (transport failures, 5xx, a
final 429) is `unreachable`: an agent that is down is not an agent that lies
(`explorer.core.outage`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from explorer import __version__
from explorer.core import nogc
from explorer.core.attempt import Attempt, last_of, show, status_findings
from explorer.core.auth_findings import scheme_findings, token_findings
from explorer.core.card import parse_card
from explorer.core.card_checks import (
    FAMILY_CARD,
    card_section,
    check_openclasp,
    check_reputation,
    check_signature,
    check_terms,
    compared_card,
    read_card,
    unsigned_compared,
)
from explorer.core.card_schema import card_problems
from explorer.core.declarations import card_digests
from explorer.core.declared import declared_projections
from explorer.core.findings import QUESTIONS, Finding, finding, ordered
from explorer.core.outage import all_down
from explorer.core.probes import judge_probes
from explorer.core.questions import DiffContext, judge_questions
from explorer.core.run import DEADLINE, Exchange
from explorer.core.sow import ProposalCheck
from explorer.core.unimplemented import explain_unimplemented
from explorer.core.verdict import ROLES, churn_finding, decide_verdict, standing

__all__ = ["FAMILY_CARD", "REPORT_VERSION", "UNDEFINED_METHOD", "UNMATCHED_SELECTOR", "evaluate"]

UNMATCHED_SELECTOR = "interview-explorer/no-such-skill"  # the unmatched-selector probe's skill id
UNDEFINED_METHOD = "interview/undefined"  # the undefined-method probe's method
REPORT_VERSION = 1


@nogc.paused()
def evaluate(
    exchanges: Sequence[Exchange],
    keys: Mapping[str, Any] | None,
    *,
    target: str,
    ran_by: Mapping[str, Any],
    started_at: str,
    finished_at: str,
    explorer_version: str = __version__,
    discovered_via: str | None = None,
) -> dict[str, Any]:
    """The CONTRACT.md report from the exchanges of every attempt and the trusted keys (a JWKS).

    `ran_by` is `{"name", "role"}` (an unknown or missing role is `self`); `discovered_via`
    overrides how the card was found when the caller knows better than the exchanges tell.
    Runs with the cyclic garbage collector paused (`explorer.core.nogc`; each call enters the
    pause afresh).
    """
    groups: dict[int, list[Exchange]] = {}
    for ex in exchanges:
        groups.setdefault(ex.attempt, []).append(ex)
    ordered_groups = [groups[n] for n in sorted(groups)] or [[]]
    attempts = [_evaluate_attempt(group, keys, discovered_via) for group in ordered_groups]
    cut = [ex for ex in exchanges if ex.error is not None and ex.error.startswith(DEADLINE)]
    last = attempts[-1]
    if cut and len(attempts) > 1 and last.card_sha is None:
        last = attempts[-2]  # a re-run the deadline stopped before its card: the report shows the one before
    findings = list(last.findings)
    churn = churn_finding(attempts[0].findings, last.findings) if len(attempts) > 1 and not cut else None
    if churn is not None:
        findings.append(churn)
    card_change = _card_change([a for a in attempts if a.card_sha is not None])
    if card_change is not None:
        findings.append(card_change)
    if cut:
        findings.append(_deadline_finding(cut))  # what was seen is still shown and diffed
    verdict = decide_verdict(
        [a.findings for a in attempts],
        offered=last.offered,
        reachable=last.reachable,
        cut=bool(cut),
        card_read=last.card_sha is not None,
    )
    role = ran_by.get("role") if ran_by.get("role") in ROLES else "self"
    name = ran_by.get("name")
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "explorer_version": explorer_version,
        "target": target,
        "started_at": started_at,
        "finished_at": finished_at,
        "verdict": verdict,
        "ran_by": {"name": name if isinstance(name, str) else None, "role": role},
        "standing": standing(role),
        "standing_signed": False,  # a run is signed after it is judged (`explorer.core.attestation.apply`)
        "attempts": len(attempts),
        "card": last.card,
        "questions": last.questions,
        "probes": last.probes,
        "findings": [f.to_json() for f in ordered(findings)],
        "extensions": [f.to_json() for f in ordered(last.extensions)],
        "extension_results": last.extension_results,
        "answers_sha256": last.answers_sha,
    }
    if len(attempts) > 1:
        report["first_attempt"] = _first_attempt(attempts[0])
    return report


def _card_change(read: Sequence[Attempt]) -> Finding | None:
    """`card_changed` when the cards of the attempts differ, or `card_resigned` when they differ
    only by signatures that prove the same declarations under the same keys (CONTRACT.md
    "Signatures are proofs, not declarations")."""
    shas = [a.card_sha for a in read]
    if len(set(shas)) < 2:
        return None
    changes = " -> ".join(dict.fromkeys(str(s)[:12] for s in shas))
    proven = {(a.equivalence.declarations, a.equivalence.proofs) if a.equivalence else None for a in read}
    shared = proven.pop() if len(proven) == 1 else None  # one card's declarations, proven by one set of keys
    declared, proofs = shared if shared is not None else (None, None)
    if declared is None or not proofs:
        return finding(
            "card_changed", f"the card's canonical bytes changed between attempts (sha256 {changes})"
        )
    keys = ", ".join(f"{p.alg} key {p.thumbprint}" for p in sorted(proofs))
    return finding(
        "card_resigned",
        f"the card was signed again between attempts (sha256 {changes}); its "
        f"declarations (sha256 {declared[:12]}) are unchanged and every signature proves them "
        f"under the same key ({keys}): not a change",
    )


def _deadline_finding(cut: Sequence[Exchange]) -> Finding:
    """The one run-level `deadline` finding: what the run's deadline cut, and what it kept from
    being sent."""
    unsent = [ex for ex in cut if "not sent" in (ex.error or "")]
    bound = re.search(r"\(([^()]*)\)", cut[0].error or "")
    names = list(
        dict.fromkeys(ex.purpose + (f" (attempt {ex.attempt})" if ex.attempt > 1 else "") for ex in cut)
    )
    shown = ", ".join(show(n, 80) for n in names[:8])
    shown += f" and {len(names) - 8} more" if len(names) > 8 else ""
    return finding(
        "deadline",
        f"the run's deadline{f' ({bound.group(1)})' if bound else ''} cut it short: "
        f"{len(cut) - len(unsent)} request(s) cut, {len(unsent)} not sent ({shown}); an interview "
        "that could not be finished says nothing about the agent's conformance",
    )


def _first_attempt(a: Attempt) -> dict[str, Any]:
    """What the first attempt found, so a re-run's outcome (churn above all) can name what
    changed: each error-severity finding with, for a projection, both canonical values it saw
    then (the report's projections are the last attempt's, which may all match)."""
    conflicts = []
    for f in ordered(a.findings):
        if f.severity != "error":
            continue
        entry = f.to_json()
        question = a.questions.get(f.question) if f.question else None
        for proj in (question or {}).get("projections") or []:
            if proj.get("member") == f.member and proj.get("status") != "match":
                entry.update(
                    {
                        k: proj.get(k)
                        for k in (
                            "document",
                            "status",
                            "value_canonical",
                            "source_canonical",
                            "diff",
                            "source_diff",
                        )
                    }
                )
                break
        conflicts.append(entry)
    return {
        "card_sha256": a.card_sha,
        "answers_sha256": a.answers_sha,
        "conflicts": conflicts,
    }


def _empty_questions() -> dict[str, Any]:
    return {q: {"status": "not_asked", "answer": None, "declared": [], "projections": []} for q in QUESTIONS}


def _declare(
    a: Attempt,
    card: dict[str, Any],
    proposals: Mapping[tuple[str, str], ProposalCheck],
    sig: Mapping[str, Any],
    signed_card: dict[str, Any] | None = None,
) -> None:
    """Each question's `declared`: what its declared documents say, asked or not (`core.declared`)."""
    status = sig.get("status")
    declared = declared_projections(
        card,
        proposals.values(),
        card_signed=True if status == "verified" else None if status == "unverifiable" else False,
        unsigned_members=tuple(sig.get("unsigned_members") or ()),
        signed_card=signed_card,
    )
    for question, entries in declared.items():
        a.questions[question]["declared"] = entries


def _evaluate_attempt(exs: Sequence[Exchange], keys: Mapping[str, Any] | None, via: str | None) -> Attempt:
    a = Attempt(questions=_empty_questions())
    card_ex, _ = last_of(exs, "card")
    a.card = card_section(exs, card_ex, via)
    doc = read_card(a, exs, card_ex)
    if doc is None:
        a.reachable = False
        return a
    a.card_sha, declared = card_digests(doc)
    card = parse_card(doc)
    a.card.update(
        sha256=a.card_sha,
        declarations_sha256=declared,
        layout=card.layout,
        name=card.name,
        jsonrpc_url=card.jsonrpc.url if card.jsonrpc else None,
        protocol_version=card.jsonrpc.family if card.jsonrpc else None,
        problems=[problem.to_json() for problem in card_problems(card)],  # warnings, never the verdict
    )
    sig = check_signature(a, exs, doc, keys)
    interview = card.interview
    a.offered = interview is not None
    a.card["interview"] = {"declared": a.offered, "required": interview.required if interview else None}
    committed, proposals, terms_declared = check_terms(a, exs, card)
    _declare(a, doc, proposals, sig)
    check_reputation(a, doc, card)
    check_openclasp(a, exs, doc, card, card_ex, sig.get("status"))
    if interview is None:
        a.add(
            "interview_not_declared",
            "the card does not declare the interview extension, so nothing is "
            "asked; absence says nothing about the agent (interview extension 9.2)",
        )
        return a
    if interview.required is True:
        a.add(
            "interview_required_true",
            "the interview entry says required: true; it must never be required (interview extension 3.1)",
            member=interview.pointer + "/required",
        )
    a.findings.extend(scheme_findings(doc))
    a.findings.extend(token_findings(exs))
    if card.jsonrpc is None:
        a.add(
            "no_jsonrpc_interface",
            "the card declares the interview but offers no JSON-RPC interface to "
            "ask it over (the interview extension defines no other binding)",
        )
        a.reachable = False
        return a
    status = sig.get("status")
    signed = True if status == "verified" else None if status == "unverifiable" else False
    compared, pair = compared_card(a, exs, doc, card_ex)
    if pair is not None:  # the answers are compared with the card served to the calls' version
        _declare(a, compared, proposals, sig, signed_card=pair.signed_doc)
    context = DiffContext(
        compared,
        tuple(sig.get("unsigned_members") or ()),
        signed,
        proposals,
        committed,
        terms_declared,
        card.skill_ids,
        pair,
        a.equivalence,
    )
    judge_questions(a, exs, context)
    judge_probes(a, exs, doc, context)
    a.findings.extend(status_findings(a.status_calls))  # one finding per status, listing its calls
    unsigned_compared(a)
    calls = _final_calls(exs)
    explain_unimplemented(a, calls)
    if all_down(calls):
        a.reachable = False  # an agent that is down is not an agent that lies (explorer.core.outage)
    return a


def _final_calls(exs: Sequence[Exchange]) -> list[Exchange]:
    """The last exchange of every interview call (question or probe) of one attempt."""
    last: dict[str, Exchange] = {}
    for ex in exs:
        if ex.purpose.startswith(("ask:", "probe:")):
            last[ex.purpose] = ex
    return list(last.values())
