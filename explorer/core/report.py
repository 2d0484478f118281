"""Helpers shared by everything that prints or checks a report (the CONTRACT.md JSON object).

`explorer.core.evaluate` builds the report; `explorer.core.view` reads it into typed data and
holds the words and marks every surface uses. This module builds on that: `summary_lines` is the
human summary the headless `verify` prints (every agent-supplied string through `safe_text`, the
standing spelled out with who ran the interview, because the interview extension's sections 8
and 9 make the claim/evidence distinction mandatory in any display). `validate_report` lists what
a report lacks against the CONTRACT's required members, so tests and `--offline` replays can
assert the contract instead of re-describing it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from explorer.core.card_schema import LAYOUTS as CARD_LAYOUTS
from explorer.core.card_schema import PROBLEM_CODES, CardProblem, problem_pointer_ok
from explorer.core.findings import CODES, QUESTIONS
from explorer.core.text import safe_text
from explorer.core.verdict import ROLES, VERDICTS, standing
from explorer.core.view import STANDING_WORDS as STANDING_WORDS  # re-exported: the view holds the words
from explorer.core.view import Finding, Question, ReportView
from explorer.core.view import canonical_or_json as canonical_or_json

REQUIRED_MEMBERS: tuple[str, ...] = (
    "verdict",
    "ran_by",
    "standing",
    "card",
    "questions",
    "probes",
    "findings",
    "extensions",
    "attempts",
)
REQUIRED_CARD_MEMBERS: tuple[str, ...] = ("url", "layout", "sha256", "signature")
REQUIRED_SIGNATURE_MEMBERS: tuple[str, ...] = ("status", "form", "alg", "kid")

SIGNATURE_STATUSES = ("verified", "invalid", "unverifiable", "unsigned")
RUN_ATTESTATION_STATUSES = ("verified", "invalid", "unknown_signer", "unsigned")
LAYOUTS = ("v0.3", "v1.0", "mixed", None)
QUESTION_STATUSES = ("answered", "refused", "error", "not_asked")
PROJECTION_STATUSES = ("match", "mismatch", "unresolved", "unverifiable")
SEVERITIES = ("error", "warning", "info")


def _s(value: Any, limit: int = 200) -> str:
    return safe_text(value, limit=limit)


def _question_line(q: Question) -> str:
    if q.status == "answered":
        if q.name == "terms" and q.declared is False and not q.has_projections():
            return f"  {q.name}: no terms declared (declared false)"
        return f"  {q.name}: " + ", ".join(f"{n} {s}" for s, n in q.counts().items())
    return f"  {q.name}: {_s(q.status, 40).replace('_', ' ')}"


def _finding_line(item: Finding) -> str:
    where = [w for w in (item.question, item.probe) if w]
    if item.member is not None:
        where.append(_s(item.member, 120))
    place = f" [{' '.join(where)}]" if where else ""
    cause = f" (follows from {_s(item.cause, 60)})" if item.cause else ""
    return f"  {_s(item.severity, 20)} {_s(item.code, 60)}{place}{cause}: {_s(item.detail, 300)}"


def summary_lines(report: Mapping[str, Any] | ReportView) -> list[str]:
    """The human summary of a report, one line per item, safe to print on a terminal."""
    view = report if isinstance(report, ReportView) else ReportView.of(report)
    attempts = f" ({view.attempts} attempts)" if view.attempts and view.attempts > 1 else ""
    lines = [f"verdict: {_s(view.verdict, 40)}{attempts}"]
    if view.verdict_words:
        lines.append(f"  {view.verdict_words}")
    lines.append(f"standing: {view.standing_words()}")
    card = view.card
    if card.url:
        facts = [f"layout {_s(card.layout, 20)}"] if card.layout else []
        if card.name:
            facts.insert(0, _s(card.name, 80))
        lines.append(f"card: {_s(card.url, 300)}" + (f" ({', '.join(facts)})" if facts else ""))
    if isinstance(card.raw.get("signature"), Mapping):
        lines.append(f"signature: {card.signature.words()}")
        hint = card.signature.hint()
        if hint:
            lines.append(f"  {hint}")
    lines.extend(card_problem_lines(card.problems))
    questions = [view.questions[q] for q in QUESTIONS if isinstance(view.member("questions", q), Mapping)]
    if any(q.status != "not_asked" for q in questions):
        lines.append("questions:")
        lines.extend(_question_line(q) for q in questions)
    declared = [(q.name, len(q.declared_members)) for q in questions]
    if view.verdict == "not_offered" and any(count for _, count in declared):
        counts = ", ".join(f"{name} {count}" for name, count in declared)
        lines.append(f"declared, not asked (members per question): {counts}; `card TARGET` prints them")
    if view.probes:
        lines.append("probes: " + ", ".join(f"{_s(p.name, 40)} {_s(p.outcome, 40)}" for p in view.probes))
    sections = (("findings", view.findings), ("other extensions (never change the verdict)", view.extensions))
    for title, items in sections:
        if items:
            lines.append(f"{title}:")
            lines.extend(_finding_line(f) for f in items)
    conflicts = first_attempt_conflicts(view.raw) if view.verdict == "churn" else []
    if conflicts:  # the questions above are the clean re-run's: say what churned
        lines.append("first attempt (before the re-run) found:")
        lines.extend(_finding_line(f) for f in conflicts)
    return lines


SHOWN_CARD_PROBLEMS = 3  # in the summary; `card TARGET` and the JSON report list every one


def card_problem_lines(problems: Sequence[CardProblem], shown: int = SHOWN_CARD_PROBLEMS) -> list[str]:
    """The card's problems in brief: how many, and the first `shown` (warnings; never the verdict)."""
    if not problems:
        return []
    count = len(problems)
    lines = [
        f"card problems: {count} warning{'s' if count != 1 else ''} against the A2A definitions "
        "(never change the verdict; `card TARGET` lists them)"
    ]
    for problem in problems[:shown]:
        where = f" {_s(problem.member, 120)}" if problem.member else ""
        lines.append(
            f"  warning {_s(problem.code, 40)} [{_s(problem.layout, 10)}{where}]: {_s(problem.detail, 240)}"
        )
    if count > shown:
        lines.append(f"  ... {count - shown} more")
    return lines


def first_attempt_conflicts(report: Mapping[str, Any]) -> list[Finding]:
    """The error findings of a re-run report's first attempt (`first_attempt.conflicts`): what
    churned, with both values in each projection's detail; empty for a single attempt."""
    items = ReportView.of(report).member("first_attempt", "conflicts")
    return [Finding.of(c) for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def _unverified(report: Mapping[str, Any]) -> bool:
    """A result presented as evidence that is only a claim says why (`evidence_unverified`)."""
    findings = report.get("findings")
    return report.get("standing") == "claim" and any(
        isinstance(f, Mapping) and f.get("code") == "evidence_unverified"
        for f in (findings if isinstance(findings, list) else [])
    )


def _require(obj: Mapping[str, Any], names: tuple[str, ...], where: str) -> list[str]:
    return [f"{where}{name} is missing" for name in names if name not in obj]


def _one_of(obj: Mapping[str, Any], key: str, allowed: Collection[Any], where: str, words: str) -> list[str]:
    """A present member whose value is outside `allowed` ("... is not <words>"); [] otherwise."""
    if key in obj and obj[key] not in allowed:
        return [f"{where}{key} {obj[key]!r} is not {words}"]
    return []


def validate_report(report: Any) -> list[str]:
    """Problems with a report against CONTRACT.md's required members; [] when it conforms."""
    if not isinstance(report, Mapping):
        return ["the report is not a JSON object"]
    problems = _require(report, REQUIRED_MEMBERS, "")
    problems += _one_of(report, "verdict", VERDICTS, "", f"one of {', '.join(VERDICTS)}")
    ran_by = report.get("ran_by")
    if "ran_by" in report:
        if not isinstance(ran_by, Mapping) or "name" not in ran_by or ran_by.get("role") not in ROLES:
            problems.append("ran_by must be {name, role} with role self, independent or platform")
        elif report.get("standing", standing(ran_by["role"])) != standing(ran_by["role"]) and not _unverified(
            report
        ):
            problems.append(f"standing {report['standing']!r} does not follow from role {ran_by['role']!r}")
    attestation = report.get("run_attestation")
    if "run_attestation" in report and (
        not isinstance(attestation, Mapping) or attestation.get("status") not in RUN_ATTESTATION_STATUSES
    ):
        problems.append("run_attestation must be {status, keyid, runner, role} with a known status")
    attempts = report.get("attempts")
    if "attempts" in report and (isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1):
        problems.append("attempts must be a positive integer")
    problems.extend(_validate_card(report.get("card")) if "card" in report else [])
    problems.extend(_validate_questions(report.get("questions")) if "questions" in report else [])
    for key in ("probes", "findings", "extensions"):
        if key in report and not isinstance(report[key], list):
            problems.append(f"{key} must be a list")
    for key in ("findings", "extensions"):
        for i, item in enumerate(report.get(key) or [] if isinstance(report.get(key), list) else []):
            problems.extend(_validate_finding(item, f"{key}[{i}]"))
    return problems


def _validate_card(card: Any) -> list[str]:
    if not isinstance(card, Mapping):
        return ["card must be an object"]
    problems = _require(card, REQUIRED_CARD_MEMBERS, "card.")
    problems += _one_of(card, "layout", LAYOUTS, "card.", "v0.3, v1.0, mixed or null")
    sig = card.get("signature")
    if "signature" in card:
        if not isinstance(sig, Mapping):
            problems.append("card.signature must be an object")
        else:
            problems.extend(_require(sig, REQUIRED_SIGNATURE_MEMBERS, "card.signature."))
            problems += _one_of(sig, "status", SIGNATURE_STATUSES, "card.signature.", "a known status")
    if "problems" in card:
        problems.extend(_validate_card_problems(card["problems"]))
    return problems


def _validate_card_problems(items: Any) -> list[str]:
    """`card.problems`: a list of `{code, member, layout, detail}` (CONTRACT "Card checks and
    declared answers"), `member` an RFC 6901 pointer, `layout` v0.3 or v1.0, a known code."""
    if not isinstance(items, list):
        return ["card.problems must be a list"]
    problems: list[str] = []
    for i, item in enumerate(items):
        at = f"card.problems[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{at} must be an object {{code, member, layout, detail}}")
            continue
        problems.extend(_require(item, ("code", "member", "layout", "detail"), at + "."))
        problems += _one_of(item, "code", PROBLEM_CODES, at + ".", "a known card problem code")
        problems += _one_of(item, "layout", CARD_LAYOUTS, at + ".", "v0.3 or v1.0")
        if "member" in item and not (isinstance(item["member"], str) and problem_pointer_ok(item["member"])):
            problems.append(f"{at}.member is not an RFC 6901 pointer")
    return problems


def _validate_questions(questions: Any) -> list[str]:
    if not isinstance(questions, Mapping):
        return ["questions must be an object"]
    problems = []
    if set(questions) != set(QUESTIONS):
        problems.append("questions must have exactly the keys " + ", ".join(QUESTIONS))
    for q in QUESTIONS:
        entry = questions.get(q)
        if not isinstance(entry, Mapping):
            continue
        if entry.get("status") not in QUESTION_STATUSES:
            problems.append(f"questions.{q}.status {entry.get('status')!r} is not a known status")
        if "answer" not in entry:
            problems.append(f"questions.{q}.answer is missing")
        problems.extend(_validate_declared(entry.get("declared", _MISSING), f"questions.{q}.declared"))
        projections = entry.get("projections")
        if not isinstance(projections, list):
            problems.append(f"questions.{q}.projections must be a list")
            continue
        for i, proj in enumerate(projections):
            where = f"questions.{q}.projections[{i}]"
            if not isinstance(proj, Mapping):
                problems.append(f"{where} must be an object")
                continue
            problems.extend(_require(proj, ("member", "document", "status"), where + "."))
            if proj.get("status") not in PROJECTION_STATUSES:
                problems.append(f"{where}.status {proj.get('status')!r} is not a known status")
            elif proj["status"] == "mismatch" and not (
                "value_canonical" in proj and "source_canonical" in proj
            ):
                problems.append(f"{where} is a mismatch without both canonical strings")
    return problems


_MISSING: Any = object()
DECLARED_DOCUMENTS = ("card", "proposal")


def _validate_declared(declared: Any, where: str) -> list[str]:
    """`questions.<q>.declared`: a list of `{member, document, value}`, a proposal's also with its
    url and digest (CONTRACT "Card checks and declared answers")."""
    if declared is _MISSING:
        return [f"{where} is missing"]
    if not isinstance(declared, list):
        return [f"{where} must be a list"]
    problems: list[str] = []
    for i, item in enumerate(declared):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{at} must be an object")
            continue
        problems.extend(_require(item, ("member", "document", "value"), at + "."))
        problems += _one_of(item, "document", DECLARED_DOCUMENTS, at + ".", "card or proposal")
        if item.get("document") == "proposal":
            problems.extend(_require(item, ("url", "digest"), at + "."))
    return problems


def _validate_finding(item: Any, where: str) -> list[str]:
    if not isinstance(item, Mapping):
        return [f"{where} must be an object"]
    problems = _require(item, ("code", "severity", "detail"), where + ".")
    problems += _one_of(item, "code", CODES, where + ".", "a known finding code")
    problems += _one_of(item, "severity", SEVERITIES, where + ".", "error, warning or info")
    return problems
