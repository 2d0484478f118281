"""What the screens say about a report beyond the core's words: tab states, badges, jumps, spans.

A report is read once, tolerantly, into `explorer.core.view.ReportView` (a missing or mistyped
member is a neutral value, never an exception), and the screens read its typed fields: the
marks, the verdict and standing sentences, the agent's name are the core's, the same in the CLI
and the exports. What stays here is what only the screens say: a question tab's state in words
("usage (1 mismatch)"), the signature badge, whether a member is covered by a signature, the
clause grade and proposal a terms projection cites, where a finding jumps, the first problem,
the probes in words, and the differing span of two strings. Keeping these rules out of the
widgets means the wording a user relies on is decided in one place, tested without a terminal,
and shared by every screen that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from explorer.core.findings import EXPECTED_OUTCOME
from explorer.core.findings import QUESTIONS as QUESTIONS  # the one list, in question order
from explorer.core.text import safe_text
from explorer.core.view import Finding, Probe, Projection, ReportView


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    return f"{n} {word}es" if word.endswith(("ch", "sh", "s", "x")) else f"{n} {word}s"


class QuestionState(NamedTuple):
    """How one question went, in words: the tab label and whether it needs attention."""

    name: str
    summary: str  # "all match", "1 mismatch", "not declared", ...
    problem: bool  # True when something is wrong (drives a marker, never only a colour)

    @property
    def label(self) -> str:
        mark = "✗ " if self.problem else ""
        return f"{mark}{self.name} ({self.summary})"

    def short_label(self, tight: bool = False) -> str:
        """The label for a narrow terminal: the mark and the name (`tight`: its first five
        letters); the pane's own first line still says the summary in words."""
        mark = "✗ " if self.problem else ""
        return f"{mark}{self.name[:5] if tight else self.name}"


def tab_labels(full: Sequence[str], short: Sequence[str], tight: Sequence[str], width: int) -> list[str]:
    """The first of the three label sets whose tab strip fits `width` columns (each tab is padded
    one column each side), else the tightest: never a strip cut at both ends."""
    for labels in (full, short):
        if sum(len(label) + 2 for label in labels) <= width:
            return list(labels)
    return list(tight)


def question_state(report: ReportView, name: str) -> QuestionState:
    q = report.questions[name]  # counted as the CLI summary counts them
    if q.status == "not_asked" or not q.raw:
        return QuestionState(name, "not asked", False)
    if q.status == "error":
        return QuestionState(name, "error", True)
    if q.status == "refused":
        return QuestionState(name, "refused", True)
    if name == "terms" and q.declared is False and not q.has_projections():
        problem = _question_errors(report, name) > 0
        return QuestionState(name, "not declared", problem)
    counts = q.counts() if q.has_projections() else {}
    parts = []
    if counts.get("mismatch"):
        parts.append(plural(counts["mismatch"], "mismatch"))
    if counts.get("unresolved"):
        parts.append(f"{counts['unresolved']} unresolved")
    if counts.get("unverifiable"):
        parts.append(f"{counts['unverifiable']} unverifiable")
    errors = _question_errors(report, name)
    if parts:
        return QuestionState(name, ", ".join(parts), True)
    if errors:
        return QuestionState(name, plural(errors, "error"), True)
    if not counts:
        return QuestionState(name, "no projections", False)
    return QuestionState(name, "all match", False)


def _question_errors(report: ReportView, name: str) -> int:
    return sum(1 for f in report.findings if f.question == name and f.severity == "error")


def signature_badge(report: ReportView) -> tuple[str, bool]:
    """`("✓ verified · sdk-normalized · kid demo-1", ok)`: the words carry the state."""
    sig = report.card.signature
    parts = [f"{sig.mark} {sig.status}"]
    if sig.form:
        parts.append(f"form {sig.form}")
    if sig.alg:
        parts.append(sig.alg)
    if sig.kid:
        parts.append(f"kid {sig.kid}")
    if sig.key_source == "jku":
        parts.append("key from the card's own jku")
    return " · ".join(parts), sig.status == "verified"


def layout_text(report: ReportView) -> str:
    """`v1.0 · A2A 1.0 over JSON-RPC`: the card's layout, and the A2A protocol version its JSON-RPC
    interface is spoken to in (it read as a JSON-RPC version when it said `(JSON-RPC 1.0)`)."""
    layout = report.card.layout or "unknown layout"
    version = report.card.protocol_version
    return f"{layout}" + (f" · A2A {version} over JSON-RPC" if version else "")


def short_digest(value: Any, width: int = 12) -> str:
    text = _str(value)
    if text.startswith("sha256:"):
        text = text[7:]
    return text[:width] if text else "–"


def signed_text(report: ReportView, projection: Projection) -> tuple[str, bool]:
    """Whether the projection's source member is covered by a signature, in words."""
    if projection.document == "proposal":
        proposal = proposal_for(report, projection)
        status = _str((proposal or {}).get("status"), "unknown")
        if status == "verified":
            return "yes: covered by the proposal's provider signature", True
        return f"no: the proposal is {status.replace('_', ' ')}", False
    signature = report.card.signature
    form = signature.form
    if projection.signed is True:
        return "yes: covered by the card signature" + (f" ({form} payload)" if form else ""), True
    if projection.signed is False:
        empties = [safe_text(m, limit=120) for m in projection.unsigned_empty]
        if signature.status == "verified" and empties:
            return ("yes, except empty members the signer's canonical form drops: "
                    + ", ".join(empties)), True
        if signature.status == "verified":
            return f"NO: this member is outside the signed payload ({form or 'matched form'})", False
        return f"NO: the card signature is {signature.status}", False
    return "unknown", False


def proposal_for(report: ReportView, projection: Projection) -> Mapping[str, Any] | None:
    """The proposal (as the report checked it) a terms projection cites, by its url and digest."""
    for proposal in report.card.proposals:
        if proposal.get("url") == projection.url and proposal.get("digest") == projection.digest:
            return proposal
    return None


def proposal_name(proposal: Mapping[str, Any], url: object = None) -> str:
    """A short name for a proposal: its offering, else its file name (from `url` or its own)."""
    offering = proposal.get("offering")
    if isinstance(offering, str) and offering:
        return offering
    url = _str(url if url is not None else proposal.get("url"))
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


def proposal_label(report: ReportView, projection: Projection) -> str:
    """A short name for the proposal a projection cites: its offering, else its file name."""
    return proposal_name(proposal_for(report, projection) or {}, projection.url)


def clause_grade(report: ReportView, projection: Projection) -> str | None:
    """The grade of the clause a terms projection shows: from the proposal, else from the value."""
    proposal = proposal_for(report, projection) or {}
    clauses = proposal.get("clauses")
    for clause in clauses if isinstance(clauses, (list, tuple)) else ():
        if isinstance(clause, Mapping) and clause.get("member") == projection.member and clause.get("grade"):
            return str(clause["grade"])
    for value in (projection.source()[1], projection.value):
        if isinstance(value, Mapping) and isinstance(value.get("grade"), str):
            return value["grade"]
    return None


def finding_target(report: ReportView, finding: Finding) -> tuple[str, int | None] | None:
    """Where selecting a finding should jump: (question, projection position or None)."""
    if finding.probe:
        return ("refusals", None)
    name = finding.question
    if name not in QUESTIONS:
        return None
    member = finding.member
    for position, projection in enumerate(report.questions[name].projections):
        if member is not None and projection.member == member:
            return (name, position)
    return (name, None)


def first_problem(report: ReportView) -> tuple[str, int] | None:
    """The first mismatching (else unresolved) projection, in question order. A question is
    counted before its projections are typed, so a large answer with nothing wrong costs a scan."""
    counted = {name: report.questions[name].counts() for name in QUESTIONS}
    for wanted in ("mismatch", "unresolved"):
        for name in QUESTIONS:
            if counted[name][wanted]:
                projections = report.questions[name].projections
                return (name, next(i for i, p in enumerate(projections) if p.status == wanted))
    return None


def problems(report: ReportView) -> list[tuple[str, int]]:
    """Every projection that does not match, as (question, position), in question order (what
    `n` walks through); questions whose answer all matches are counted, never typed."""
    found: list[tuple[str, int]] = []
    for name in QUESTIONS:
        question = report.questions[name]
        counts = question.counts()
        if sum(counts.values()) > counts["match"]:
            found += [(name, position) for position, p in enumerate(question.projections) if p.problem]
    return found


def diff_spans(a: str, b: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The differing span of each string: after the common prefix, before the common suffix."""
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start] == b[start]:
        start += 1
    tail = 0
    while tail < limit - start and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return (start, len(a) - tail), (start, len(b) - tail)


def refusal_boundary(report: ReportView) -> list[str]:
    """The skill ids the refusals answer states as the boundary (its /skills/N/id projections)."""
    out = []
    for projection in report.questions["refusals"].projections:
        member = projection.member or ""
        if member.startswith("/skills/") and member.endswith("/id"):
            value = projection.value
            out.append(value if isinstance(value, str) else repr(value))
    return out


def probe_text(probe: Probe, report: ReportView | None = None) -> tuple[str, bool]:
    """A probe's outcome in words; a correct refusal is a good answer (interview extension 9.3).
    With the `report`, a probe that got the expected kind of reply but has error findings of its
    own (a valid selector answered with values that conflict with the card) is not marked good."""
    name, outcome = probe.name, probe.outcome
    expected = EXPECTED_OUTCOME.get(name, "refused")
    found = report.findings if report is not None else ()
    errors = [f for f in found if f.severity == "error" and f.probe == name]
    ok = outcome == expected and not errors
    mark = "✓" if ok else "✗"
    words = {
        "refused": "got the standard refusal",
        "method_not_found": "got -32601 method not found",
        "not_refused": "was NOT refused",
        "answered": "was answered",
        "error": "failed",
    }.get(outcome, outcome)
    if errors:
        codes = ", ".join(dict.fromkeys(f.code for f in errors))
        words += f", but {codes} (see findings)"
    return f"{mark} {name.replace('_', ' ')}: {words}", ok


def probes_text(report: ReportView) -> str:
    """Every closure probe as plain lines (for the probes dialog): its outcome in words, then
    the request it sent. Neutralised text: an agent's words are shown, never obeyed."""
    lines: list[str] = []
    for probe in report.probes:
        words, _ = probe_text(probe, report)
        request = probe.request
        params = safe_text(request["params"], limit=200) if "params" in request else "(no params)"
        method = safe_text(request.get("method", "?"), limit=100)
        lines += [safe_text(words, limit=300), f"    sent {method} {params}"]
    return "\n".join(lines) if lines else "(no probes were run)"


def churn_markers(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per run (newest first), what changed since the previous run of the same agent.

    `summaries` are dicts with at least agent, verdict, card_sha256, answers_sha256, in the
    order shown. The marker says it in words: "card+answers changed", "answers changed", ...
    """
    markers = [""] * len(summaries)
    last_seen: dict[str, int] = {}
    for position in range(len(summaries) - 1, -1, -1):  # oldest first
        row = summaries[position]
        agent = _str(row.get("agent"))
        previous = last_seen.get(agent)
        if previous is None:
            markers[position] = "first"
        else:
            before = summaries[previous]
            changed = [
                word
                for word, key in (
                    ("card", "card_sha256"),
                    ("answers", "answers_sha256"),
                    ("verdict", "verdict"),
                )
                if row.get(key) != before.get(key)
            ]
            markers[position] = ("≠ " + "+".join(changed)) if changed else "= same"
        last_seen[agent] = position
    return markers
