"""What the screens say about a report, as plain data: labels, badges, states, spans.

The report (docs/ARCHITECTURE.md, "The report") is JSON that may come from an old history row
or a hand-edited transcript, so every accessor here is defensive: a missing or mistyped member
gives a neutral answer, never an exception. Keeping these rules out of the widgets means the
wording a user relies on ("usage (1 mismatch)", "claim, self-run by ...") is decided in one
place, tested without a terminal, and shared by every screen that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from explorer.core import view
from explorer.core.findings import EXPECTED_OUTCOME
from explorer.core.findings import QUESTIONS as QUESTIONS  # the one list, in question order
from explorer.core.text import safe_text

# Symbol + word for each state, so nothing is told by colour alone: defined once, in the core's
# report view, for the TUI, the exports and the CLI alike.
PROJECTION_MARK = view.PROJECTION_MARKS
VERDICT_MARK = view.VERDICT_MARKS
SEVERITY_MARK = view.SEVERITY_MARKS
projection_label = view.projection_label  # "✗ MISMATCH", "? UNRESOLVED", "~ unverifiable", "✓ match"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def card(report: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(report.get("card"))


def question(report: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return _map(_map(report.get("questions")).get(name))


def projections(report: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    items = _list(question(report, name).get("projections"))
    return [p for p in items if type(p) is dict or isinstance(p, Mapping)]


def findings(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [f for f in _list(report.get("findings")) if isinstance(f, Mapping)]


def extension_findings(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [f for f in _list(report.get("extensions")) if isinstance(f, Mapping)]


def probes(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p for p in _list(report.get("probes")) if isinstance(p, Mapping)]


def agent_name(report: Mapping[str, Any]) -> str:
    return _str(card(report).get("name")) or _str(report.get("target"), "(unnamed agent)")


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


def question_state(report: Mapping[str, Any], name: str) -> QuestionState:
    q = view.Question.of(name, question(report, name))  # counted as the CLI summary counts them
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


def _question_errors(report: Mapping[str, Any], name: str) -> int:
    return sum(1 for f in findings(report) if f.get("question") == name and f.get("severity") == "error")


def verdict_text(report: Mapping[str, Any]) -> str:
    return view.verdict_label(report.get("verdict") or "unknown")


def projection_canonical(
    projection: Mapping[str, Any], which: Literal["value", "source"] = "value"
) -> str | None:
    """The canonical text of a projection's answered value or source member (`view.Projection`)."""
    return view.Projection.of(projection).canonical(which)


def projection_source(projection: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the source member was read, its value) (`view.Projection.source`)."""
    return view.Projection.of(projection).source()


def standing_text(report: Mapping[str, Any], *, how_to_declare: bool = True) -> str:
    """The core's standing sentence: a self-run result is a claim and never reads as evidence
    (interview extension, sections 8 and 9), with who ran it and who signed it (and, unless
    told not to, how to declare an independent role)."""
    return view.ReportView.of(report).standing_words(how_to_declare=how_to_declare)


def standing_mark(report: Mapping[str, Any]) -> str:
    """The history and compare screens' short mark: `✓ evidence · signed`, `claim · unknown signer`."""
    return view.ReportView.of(report).standing_mark()


def signature_badge(report: Mapping[str, Any]) -> tuple[str, bool]:
    """`("✓ verified · sdk-normalized · kid demo-1", ok)`: the words carry the state."""
    sig = view.Signature.of(card(report).get("signature"))
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


def layout_text(report: Mapping[str, Any]) -> str:
    """`v1.0 · A2A 1.0 over JSON-RPC`: the card's layout, and the A2A protocol version its JSON-RPC
    interface is spoken to in (it read as a JSON-RPC version when it said `(JSON-RPC 1.0)`)."""
    c = card(report)
    layout = _str(c.get("layout")) or "unknown layout"
    version = _str(c.get("protocol_version"))
    return f"{layout}" + (f" · A2A {version} over JSON-RPC" if version else "")


def short_digest(value: Any, width: int = 12) -> str:
    text = _str(value)
    if text.startswith("sha256:"):
        text = text[7:]
    return text[:width] if text else "–"


def signed_text(report: Mapping[str, Any], projection: Mapping[str, Any]) -> tuple[str, bool]:
    """Whether the projection's source member is covered by a signature, in words."""
    signed = projection.get("signed")
    if projection.get("document") == "proposal":
        proposal = proposal_for(report, projection)
        status = _str(_map(proposal).get("status"), "unknown")
        if status == "verified":
            return "yes: covered by the proposal's provider signature", True
        return f"no: the proposal is {status.replace('_', ' ')}", False
    form = _str(_map(card(report).get("signature")).get("form"))
    if signed is True:
        return "yes: covered by the card signature" + (f" ({form} payload)" if form else ""), True
    if signed is False:
        status = _str(_map(card(report).get("signature")).get("status"), "unknown")
        empties = [safe_text(m, limit=120) for m in _list(projection.get("unsigned_empty"))]
        if status == "verified" and empties:
            return ("yes, except empty members the signer's canonical form drops: "
                    + ", ".join(empties)), True
        if status == "verified":
            return f"NO: this member is outside the signed payload ({form or 'matched form'})", False
        return f"NO: the card signature is {status}", False
    return "unknown", False


def proposals(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The proposals the card's terms entry commits to, as the report checked them."""
    return [p for p in _list(_map(card(report).get("terms")).get("proposals")) if isinstance(p, Mapping)]


def proposal_for(report: Mapping[str, Any], projection: Mapping[str, Any]) -> Mapping[str, Any] | None:
    url, digest = projection.get("url"), projection.get("digest")
    for proposal in proposals(report):
        if proposal.get("url") == url and proposal.get("digest") == digest:
            return proposal
    return None


def proposal_name(proposal: Mapping[str, Any], url: object = None) -> str:
    """A short name for a proposal: its offering, else its file name (from `url` or its own)."""
    offering = proposal.get("offering")
    if isinstance(offering, str) and offering:
        return offering
    url = _str(url if url is not None else proposal.get("url"))
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


def proposal_label(report: Mapping[str, Any], projection: Mapping[str, Any]) -> str:
    """A short name for the proposal a projection cites: its offering, else its file name."""
    return proposal_name(proposal_for(report, projection) or {}, projection.get("url"))


def clause_grade(report: Mapping[str, Any], projection: Mapping[str, Any]) -> str | None:
    """The grade of the clause a terms projection shows: from the proposal, else from the value."""
    proposal = proposal_for(report, projection)
    member = projection.get("member")
    if proposal is not None:
        for clause in _list(proposal.get("clauses")):
            if isinstance(clause, Mapping) and clause.get("member") == member and clause.get("grade"):
                return str(clause["grade"])
    for value in (view.Projection.of(projection).source()[1], projection.get("value")):
        if isinstance(value, Mapping) and isinstance(value.get("grade"), str):
            return value["grade"]
    return None


def finding_target(report: Mapping[str, Any], item: Mapping[str, Any]) -> tuple[str, int | None] | None:
    """Where selecting a finding should jump: (question, projection position or None)."""
    name = item.get("question")
    if item.get("probe"):
        return ("refusals", None)
    if name not in QUESTIONS:
        return None
    member = item.get("member")
    for position, projection in enumerate(projections(report, name)):
        if member is not None and projection.get("member") == member:
            return (name, position)
    return (name, None)


def first_problem(report: Mapping[str, Any]) -> tuple[str, int] | None:
    """The first mismatching (else unresolved) projection, in question order."""
    for wanted in ("mismatch", "unresolved"):
        for name in QUESTIONS:
            for position, projection in enumerate(projections(report, name)):
                if projection.get("status") == wanted:
                    return (name, position)
    return None


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


def refusal_boundary(report: Mapping[str, Any]) -> list[str]:
    """The skill ids the refusals answer states as the boundary (its /skills/N/id projections)."""
    out = []
    for projection in projections(report, "refusals"):
        member = _str(projection.get("member"))
        if member.startswith("/skills/") and member.endswith("/id"):
            value = projection.get("value")
            out.append(value if isinstance(value, str) else repr(value))
    return out


def probe_text(probe: Mapping[str, Any], report: Mapping[str, Any] | None = None) -> tuple[str, bool]:
    """A probe's outcome in words; a correct refusal is a good answer (interview extension 9.3).
    With the `report`, a probe that got the expected kind of reply but has error findings of its
    own (a valid selector answered with values that conflict with the card) is not marked good."""
    name = _str(probe.get("name"), "probe")
    outcome = _str(probe.get("outcome"), "unknown")
    expected = EXPECTED_OUTCOME.get(name, "refused")
    errors = [f for f in findings(report or {}) if f.get("severity") == "error" and f.get("probe") == name]
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
        codes = ", ".join(dict.fromkeys(_str(f.get("code"), "?") for f in errors))
        words += f", but {codes} (see findings)"
    return f"{mark} {name.replace('_', ' ')}: {words}", ok


def probes_text(report: Mapping[str, Any]) -> str:
    """Every closure probe as plain lines (for the probes dialog): its outcome in words, then
    the request it sent. Neutralised text: an agent's words are shown, never obeyed."""
    lines: list[str] = []
    for probe in probes(report):
        words, _ = probe_text(probe, report)
        request = probe.get("request") if isinstance(probe.get("request"), Mapping) else {}
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
