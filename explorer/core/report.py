"""Helpers shared by everything that prints or checks a report (the CONTRACT.md JSON object).

`explorer.core.evaluate` builds the report; this module reads it. `lookup`, `projection_source`
and `projection_canonical` are the tolerant readers that compare, export and the screens share: a
report may come from an old or hand-edited transcript, so a missing or mistyped member reads as
None instead of raising, and a value is shown and compared by its canonical text, recomputed
when the report does not carry it. `summary_lines` is the human summary the headless `verify`
prints (and the exports reuse): every agent-supplied string goes through `safe_text`, and the
standing is spelled out with who ran the interview, because the interview extension's sections 8
and 9 make the claim/evidence distinction mandatory in any display. `validate_report` lists what
a report lacks against the CONTRACT's required members, so tests and `--offline` replays can
assert the contract instead of re-describing it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any, Literal

from explorer.core.canonical import CanonicalError, canonical_text
from explorer.core.findings import CODES, QUESTIONS
from explorer.core.text import safe_text
from explorer.core.verdict import ROLES, VERDICTS, standing

REQUIRED_MEMBERS: tuple[str, ...] = (
    "verdict", "ran_by", "standing", "card", "questions", "probes", "findings", "extensions", "attempts",
)
REQUIRED_CARD_MEMBERS: tuple[str, ...] = ("url", "layout", "sha256", "signature")
REQUIRED_SIGNATURE_MEMBERS: tuple[str, ...] = ("status", "form", "alg", "kid")

SIGNATURE_STATUSES = ("verified", "invalid", "unverifiable", "unsigned")
RUN_ATTESTATION_STATUSES = ("verified", "invalid", "unknown_signer", "unsigned")
LAYOUTS = ("v0.3", "v1.0", "mixed", None)
QUESTION_STATUSES = ("answered", "refused", "error", "not_asked")
PROJECTION_STATUSES = ("match", "mismatch", "unresolved", "unverifiable")
SEVERITIES = ("error", "warning", "info")

STANDING_WORDS: dict[str, str] = {
    "self": "claim: run by the agent's operator",
    "independent": "evidence: run by an independent party",
    "platform": "evidence: recorded by a platform",
}

_VERDICT_WORDS: dict[str, str] = {
    "conformant": "the live answers match the declared documents",
    "nonconformant": "a conflict with the declared documents survived the re-run",
    "churn": "a conflict on the first attempt did not survive the re-run",
    "not_offered": "the card does not declare the interview; absence says nothing about the agent",
    "unreachable": "no usable card, or the questions could not be put",
}


def _s(value: Any, limit: int = 200) -> str:
    return safe_text(value, limit=limit)


def lookup(data: Any, *path: str) -> Any:
    """`data[path[0]][path[1]]...`, or None as soon as a step is missing or not an object."""
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def canonical_or_json(value: Any) -> str:
    """A value's RFC 8785 text; one JCS cannot encode (an integer beyond a double, say) falls
    back to sorted JSON, so it can still be shown and compared."""
    try:
        return canonical_text(value)
    except CanonicalError:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def projection_canonical(
    projection: Mapping[str, Any], which: Literal["value", "source"] = "value"
) -> str | None:
    """The canonical text of a projection's answered value, or of its source member's value:
    the report's own string when present, else recomputed. None for a source that resolved to
    nothing."""
    given = projection.get(f"{which}_canonical")
    if isinstance(given, str):
        return given
    if which == "value":
        return canonical_or_json(projection.get("value"))
    found, value = projection_source(projection)
    if not found or (value is None and "source_value" in projection):
        return None
    return canonical_or_json(value)


def projection_source(projection: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the source member was read, its value). A match carries its value once, as
    `value` (the member holds the same); other statuses carry `source_value` when it was read,
    and an unresolved member has none."""
    if projection.get("status") == "unresolved":
        return False, None
    if "source_value" in projection:
        return True, projection["source_value"]
    if projection.get("status") == "match":
        return True, projection.get("value")
    return False, None


def standing_words(report: Mapping[str, Any]) -> str:
    """"claim: run by the agent's operator" and the like, with the runner's name when known, and
    for a signed or checked result who signed it with which key, or why it is only a claim."""
    ran_by = report.get("ran_by") if isinstance(report.get("ran_by"), Mapping) else {}
    role = ran_by.get("role") if ran_by.get("role") in ROLES else "self"
    name = ran_by.get("name")
    run_att = report.get("run_attestation") if isinstance(report.get("run_attestation"), Mapping) else {}
    reason = run_att.get("reason")
    if report.get("standing") == "claim" and role != "self" and isinstance(reason, str):
        return f"claim, {_s(reason, 40)}: {_claim_reason(run_att, reason, name)}"
    words = STANDING_WORDS[role]
    if report.get("standing") == "claim" and role != "self":  # never print evidence for a claim
        words = STANDING_WORDS["self"]
    if run_att.get("status") == "verified" and report.get("standing") == "evidence":
        signer = _s(run_att.get("runner") or name or "an unnamed runner", 80)
        how = words.split(": ", 1)[1]
        return f"evidence: signed by {signer} ({_key(run_att.get('keyid'))}, trusted); {how}"
    return f"{words} ({_s(name, 80)})" if name else words


def attestation_words(report: Mapping[str, Any]) -> str:
    """A report's `run_attestation` in words: `verified (key <thumbprint>, runner ci)`."""
    run_att = report.get("run_attestation")
    if not isinstance(run_att, Mapping):
        return "not recorded (a run from before signed evidence)"
    status = _s(run_att.get("status", "unknown"), 40).replace("_", " ")
    parts = [f"key {_s(run_att['keyid'], 80)}"] if run_att.get("keyid") else []
    if run_att.get("runner"):
        parts.append(f"runner {_s(run_att['runner'], 80)}")
    if run_att.get("reason"):
        parts.append(f"evidence unverified: {_s(run_att['reason'], 40)}")
    return status + (f" ({', '.join(parts)})" if parts else "")


def _key(keyid: Any) -> str:
    return f"key {_s(keyid[:6], 12)}…" if isinstance(keyid, str) and keyid else "no key id"


def _claim_reason(run_att: Mapping[str, Any], reason: str, name: Any) -> str:
    signer = _s(run_att.get("runner") or name or "an unnamed runner", 80)
    key = _key(run_att.get("keyid"))
    said = f"{_s(name, 80)} says it ran this as {_ROLE_NOUNS.get(str(run_att.get('role')), 'an outsider')}"
    reasons = {
        "unsigned": f"{said}, but the result is not signed, so that is only a label",
        "unknown signer": f"signed by {signer} ({key}, not a runner key you trust)",
        "bad signature": f"the signature does not verify ({key}), so who ran it is unknown",
        "altered transcript": f"signed by {signer} ({key}), but the transcript changed after signing",
        "self-attested": f"signed by {signer} ({key}), the same key that signs the agent's own card",
    }
    return reasons.get(reason, f"{said}, but its evidence cannot be checked")


_ROLE_NOUNS = {"independent": "an independent party", "platform": "a platform"}


def signature_words(sig: Mapping[str, Any]) -> str:
    """A report's `card.signature` in words: `verified (form served, alg ES256, kid k1)`, naming
    a key that came from the card's own jku as such."""
    parts = [f"{key} {_s(sig[key], 80)}" for key in ("form", "alg", "kid") if sig.get(key)]
    if sig.get("key_source") == "jku":
        parts.append("key from the card's own jku")
    status = _s(sig.get("status", "unknown"), 40)
    return status + (f" ({', '.join(parts)})" if parts else "")


def signature_hint(sig: Mapping[str, Any]) -> str | None:
    """What would make an unverifiable signature checkable, in words (None for other statuses):
    the signer's public key given with `--keys`, or `--allow-jku` for the key set the card names."""
    if sig.get("status") != "unverifiable":
        return None
    kid = f" (kid {_s(sig['kid'], 80)})" if sig.get("kid") else ""
    return (f"to check it: --keys JWKS_FILE_OR_URL with the signer's public key{kid}, "
            "or --allow-jku to trust the key set the card names")


def _question_line(question: str, entry: Mapping[str, Any]) -> str:
    status = entry.get("status")
    projections = entry.get("projections") or []
    if status == "answered":
        counts = {s: 0 for s in PROJECTION_STATUSES}
        for proj in projections:
            if isinstance(proj, Mapping) and proj.get("status") in counts:
                counts[proj["status"]] += 1
        text = ", ".join(f"{n} {s}" for s, n in counts.items())
        if question == "terms" and entry.get("declared") is False and not projections:
            text = "no terms declared (declared false)"
        return f"  {question}: {text}"
    return f"  {question}: {_s(status or 'not asked', 40).replace('_', ' ')}"


def _finding_line(item: Mapping[str, Any]) -> str:
    where = [str(item[k]) for k in ("question", "probe") if item.get(k)]
    if item.get("member") is not None:
        where.append(_s(item["member"], 120))
    place = f" [{' '.join(where)}]" if where else ""
    code = _s(item.get("code", "?"), 60)
    return f"  {item.get('severity', '?')} {code}{place}: {_s(item.get('detail', ''), 300)}"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The human summary of a report, one line per item, safe to print on a terminal."""
    verdict = str(report.get("verdict", "?"))
    attempts = report.get("attempts")
    lines = [f"verdict: {_s(verdict, 40)}" + (f" ({attempts} attempts)" if isinstance(attempts, int)
                                               and attempts > 1 else "")]
    if verdict in _VERDICT_WORDS:
        lines.append(f"  {_VERDICT_WORDS[verdict]}")
    lines.append(f"standing: {standing_words(report)}")
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    if card.get("url"):
        facts = [f"layout {_s(card['layout'], 20)}"] if card.get("layout") else []
        if card.get("name"):
            facts.insert(0, _s(card["name"], 80))
        lines.append(f"card: {_s(card['url'], 300)}" + (f" ({', '.join(facts)})" if facts else ""))
    sig = card.get("signature")
    if isinstance(sig, Mapping):
        lines.append(f"signature: {signature_words(sig)}")
        hint = signature_hint(sig)
        if hint:
            lines.append(f"  {hint}")
    questions = report.get("questions") if isinstance(report.get("questions"), Mapping) else {}
    if any(isinstance(questions.get(q), Mapping) and questions[q].get("status") != "not_asked"
           for q in QUESTIONS):
        lines.append("questions:")
        lines.extend(_question_line(q, questions[q]) for q in QUESTIONS
                     if isinstance(questions.get(q), Mapping))
    probes = [p for p in report.get("probes") or [] if isinstance(p, Mapping)]
    if probes:
        lines.append("probes: " + ", ".join(f"{_s(p.get('name'), 40)} {_s(p.get('outcome'), 40)}"
                                            for p in probes))
    sections = (("findings", "findings"), ("other extensions (never change the verdict)", "extensions"))
    for title, key in sections:
        items = [f for f in report.get(key) or [] if isinstance(f, Mapping)]
        if items:
            lines.append(f"{title}:")
            lines.extend(_finding_line(f) for f in items)
    return lines


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


def _validate_finding(item: Any, where: str) -> list[str]:
    if not isinstance(item, Mapping):
        return [f"{where} must be an object"]
    problems = _require(item, ("code", "severity", "detail"), where + ".")
    problems += _one_of(item, "code", CODES, where + ".", "a known finding code")
    problems += _one_of(item, "severity", SEVERITIES, where + ".", "error, warning or info")
    return problems
