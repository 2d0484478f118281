"""What the screens say about a report beyond the core's words: tab states, badges, jumps, spans.

A report is read once, tolerantly, into `explorer.core.view.ReportView` (a missing or mistyped
member is a neutral value, never an exception), and the screens read its typed fields: the
marks, the verdict and standing sentences, the agent's name are the core's, the same in the CLI
and the exports. What stays here is what only the screens say: a question tab's state in words
("usage (1 mismatch)"), the signature badge, whether a member is covered by a signature, the
clause grade and proposal a terms projection cites, where a finding jumps, the first problem,
the probes in words, the differing span of two strings, what changed since a run before (in the
kinds of CONTRACT "Signatures are proofs": a card only signed again is no change), the findings
grouped under the root cause that explains them, and, when no answer conflicts, what decided the
verdict (`verdict_reason`: the signature, the calls' statuses, the root cause, or for an agent
that does not offer the interview, what its card does declare), which the interview screen
opens on. Keeping these rules out of the widgets means the wording a user relies on is decided
in one place, tested without a terminal, and shared by every screen that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from explorer.core.findings import EXPECTED_OUTCOME, LEADING
from explorer.core.findings import QUESTIONS as QUESTIONS  # the one list, in question order
from explorer.core.text import safe_text
from explorer.core.view import SEVERITY_MARKS, Finding, Probe, Projection, ReportView


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
            return (
                "yes, except empty members the signer's canonical form drops: " + ", ".join(empties)
            ), True
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


def change_words(kinds: Sequence[str], *, first: bool = False) -> str:
    """What changed since the agent's run before, as the history says it per run: `first`, `= same`,
    the changes by kind (`≠ key+answers`: declarations, key, answers, verdict), `~ signed again` for
    a card only signed again over the same declarations under the same key (shown, never a change),
    or a change with that beside it (`≠ answers · signed again`). A kind this explorer does not
    know is left out."""
    # Imported here, as below: explorer.core.compare brings the signature checks with it, which
    # the first paint of a screen does not need.
    from explorer.core.compare import CHANGE_KINDS, KIND_WORDS, RESIGNED

    if first:
        return "first"
    changes = [kind for kind in CHANGE_KINDS if kind in kinds]
    again = RESIGNED in kinds
    if changes:
        return "≠ " + "+".join(changes) + (f" · {KIND_WORDS[RESIGNED]}" if again else "")
    return f"~ {KIND_WORDS[RESIGNED]}" if again else "= same"


def churn_markers(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per run (newest first), what changed since the previous run of the same agent (`change_words`).

    `summaries` are dicts with at least agent, verdict, card_sha256, answers_sha256, in the
    order shown, and `declarations_sha256` and `signers` where known (without them a card whose
    bytes differ reads as changed declarations: nothing shows it was only signed again).
    """
    from explorer.core.compare import RunMarks, change_kinds, signers_tuple

    def marks(row: Mapping[str, Any]) -> RunMarks:
        declarations = row.get("declarations_sha256")
        return RunMarks(
            verdict=_str(row.get("verdict")) or None,
            card_sha256=_str(row.get("card_sha256")) or None,
            declarations_sha256=declarations if isinstance(declarations, str) else None,
            signers=signers_tuple(row.get("signers")),
            answers_sha256=_str(row.get("answers_sha256")) or None,
        )

    markers = [""] * len(summaries)
    last_seen: dict[str, int] = {}
    for position in range(len(summaries) - 1, -1, -1):  # oldest first
        row = summaries[position]
        agent = _str(row.get("agent"))
        previous = last_seen.get(agent)
        if previous is None:
            markers[position] = change_words((), first=True)
        else:
            markers[position] = change_words(change_kinds(marks(summaries[previous]), marks(row)))
        last_seen[agent] = position
    return markers


# --- the findings, root causes first ---------------------------------------------------------------


def grouped_findings(findings: Sequence[Finding]) -> list[tuple[int, bool]]:
    """The findings list's order, as (position in the report, follows from the one above): a root
    cause (a finding whose code others name as their `cause`, CONTRACT `interview_not_implemented`)
    with every finding it explains right beneath it, in the report's order; every other finding
    where the report has it. A finding naming a cause the run does not have stays in its place."""
    roots = {f.code for f in findings} & {f.cause for f in findings if f.cause}
    out: list[tuple[int, bool]] = []
    placed: set[int] = set()
    for position, item in enumerate(findings):
        if position in placed or item.cause in roots:
            continue  # shown under its root cause
        out.append((position, False))
        placed.add(position)
        if item.code in roots:
            for beneath, explained in enumerate(findings):
                if explained.cause == item.code and beneath not in placed:
                    out.append((beneath, True))
                    placed.add(beneath)
    return out


def finding_line(item: Finding) -> str:
    """`✗ method_error identity: interview/identity answered ...`: one finding in one line of words."""
    where = " ".join(w for w in (item.question, item.probe, item.member) if w)
    mark = SEVERITY_MARKS.get(item.severity, "?")
    return safe_text(f"{mark} {item.code}" + (f" [{where}]" if where else "") + f": {item.detail}", limit=600)


# --- what decided the verdict, when no answer conflicts ---------------------------------------------


class ReasonLine(NamedTuple):
    """One line of a verdict's reason: words, whether it marks a problem, how far it is indented."""

    text: str
    problem: bool = False
    depth: int = 0


class VerdictReason(NamedTuple):
    """What decided a verdict that no conflicting answer explains: what the interview screen opens on."""

    kind: str  # root cause | statuses | not offered | signature
    summary: str  # the tab's words: "interview not implemented", "unreachable", ...
    heading: str  # the sentence that says it
    lines: tuple[ReasonLine, ...]


REASON_TAB = "reason"  # the interview screen's tab (and pane) for a `VerdictReason`
_CARD_PURPOSES = ("card", "card-discovery")
_SHOWN_SKILLS = 20  # skills listed by name on the not-offered reason; the rest are counted


def served_card(exchanges: Sequence[Any]) -> Mapping[str, Any] | None:
    """The card document the run fetched last (a JSON object), or None (a record without its
    exchanges, a card that never came, a body that is not an object)."""
    from explorer.core.strict_json import StrictJsonError
    from explorer.core.strict_json import parse as strict_parse

    for ex in reversed(exchanges):
        if ex.purpose not in _CARD_PURPOSES or not ex.response_body or ex.problem() is not None:
            continue
        try:
            doc = strict_parse(ex.response_body)
        except StrictJsonError:
            continue
        if isinstance(doc, Mapping):
            return doc
    return None


def call_statuses(exchanges: Sequence[Any]) -> list[tuple[str, str, bool]]:
    """Each kind of call the run made, with how it was last answered: (what, `HTTP 503` or the
    transport's problem, answered fine), in the order first made (`interview/identity` for every
    ask of identity, `probe undefined_method`, `card`, `proposal NAME`)."""
    found: dict[str, tuple[str, bool]] = {}
    for ex in exchanges:
        purpose = str(ex.purpose)
        if purpose.startswith("ask:"):
            what = "interview/" + purpose[4:].split("#", 1)[0]
        elif purpose.startswith("probe:"):
            what = "probe " + purpose[6:].split("#", 1)[0]
        elif purpose == "proposal":
            what = "proposal " + (str(ex.url).rstrip("/").rsplit("/", 1)[-1] or str(ex.url))
        else:
            what = purpose
        problem = ex.problem()
        if problem:
            found[what] = (problem, False)
        elif ex.status:
            found[what] = (f"HTTP {ex.status}", True)
        else:
            found[what] = ("read from a file" if ex.method == "FILE" else "answered", True)
    return [
        (safe_text(what, limit=200), safe_text(said, limit=200), ok) for what, (said, ok) in found.items()
    ]


def verdict_reason(report: ReportView, exchanges: Sequence[Any] = ()) -> VerdictReason | None:
    """What decided the verdict when no answer conflicts with its document (`first_problem` finds
    nothing), or None when nothing else did: the root cause (a `LEADING` finding) with the findings
    it explains; for an unreachable agent, how each call was answered (from the run's `exchanges`:
    `call_statuses`) and the error findings; for one that does not offer the interview, that
    absence says nothing, and what its card (`served_card`) does declare; for an invalid card
    signature, each signature and why it fails. A record without its exchanges gives the
    questions' statuses and the card's name instead."""
    if first_problem(report) is not None:
        return None
    findings = report.findings
    root = next((f for f in findings if f.code in LEADING), None)
    if root is not None:
        beneath = [f for f in findings if f.cause == root.code and f is not root]
        explained = [ReasonLine("what follows from it:")] if beneath else []
        explained += [ReasonLine("↳ " + finding_line(f), f.severity == "error", 1) for f in beneath]
        summary = root.code.replace("_", " ")
        return VerdictReason("root cause", summary, safe_text(root.detail, limit=600), tuple(explained))
    if report.verdict == "unreachable":
        summary = "questions not answered" if report.card.sha256 else "no usable card"
        statuses = _status_lines(report, call_statuses(exchanges))
        return VerdictReason("statuses", summary, report.verdict_words or "", statuses)
    if report.verdict == "not_offered":
        said = next((f.detail for f in findings if f.code == "interview_not_declared"), None)
        heading = safe_text(said, limit=600) if said else report.verdict_words or ""
        declared = _declared_lines(report, served_card(exchanges))
        return VerdictReason("not offered", "interview not declared", heading, declared)
    if report.card.signature.status == "invalid":
        return VerdictReason("signature", "signature invalid", _SIGNATURE_INVALID, _signature_lines(report))
    return None


_SIGNATURE_INVALID = (
    "the card's signature does not verify: nothing the card declares is proven to be its signer's, "
    "so answers that match it prove nothing either"
)


def _status_lines(report: ReportView, calls: Sequence[tuple[str, str, bool]]) -> tuple[ReasonLine, ...]:
    lines: list[ReasonLine] = []
    if calls:
        lines.append(ReasonLine("how each call was answered:"))
        lines += [ReasonLine(f"{'✓' if ok else '✗'} {what}: {words}", not ok, 1) for what, words, ok in calls]
    else:  # a record without its exchanges: the statuses of the questions that were put
        asked = [(name, _str(report.questions[name].status, "not_asked")) for name in QUESTIONS]
        asked = [(name, status) for name, status in asked if status != "not_asked"]
        if asked:
            lines.append(ReasonLine("each question:"))
        for name, status in asked:
            words = safe_text(status.replace("_", " "), limit=40)
            lines.append(ReasonLine(f"{name}: {words}", status == "error", 1))
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        lines.append(ReasonLine("what the verifier found:"))
        lines += [ReasonLine(finding_line(f), True, 1) for f in errors]
    return tuple(lines)


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The JSON objects of a list (anything else: none)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _declared_lines(report: ReportView, card: Mapping[str, Any] | None) -> tuple[ReasonLine, ...]:
    """What a card declares, for an agent that does not offer the interview: its name, description
    and version, its skills (id and name), its extensions (URI, and whether required)."""
    if card is None:
        name = report.card.name
        named = f"; its name: {safe_text(name, limit=120)}" if name else ""
        return (ReasonLine(f"what the card declares is not in this record{named}"),)
    lines = [ReasonLine("what the card does declare:")]
    for label in ("name", "description", "version"):
        value = card.get(label)
        if isinstance(value, str) and value:
            lines.append(ReasonLine(f"{label}: {safe_text(value, limit=300)}", depth=1))
    skills = _objects(card.get("skills"))
    lines.append(ReasonLine(f"skills: {len(skills)}" if skills else "skills: none declared", depth=1))
    for skill in skills[:_SHOWN_SKILLS]:
        said = [safe_text(skill[key], limit=120) for key in ("id", "name") if isinstance(skill.get(key), str)]
        lines.append(ReasonLine(" · ".join(said) or "(a skill without id or name)", depth=2))
    if len(skills) > _SHOWN_SKILLS:
        lines.append(ReasonLine(f"… {len(skills) - _SHOWN_SKILLS} more", depth=2))
    capabilities = card.get("capabilities")
    extensions = _objects(capabilities.get("extensions")) if isinstance(capabilities, Mapping) else []
    words = f"extensions: {len(extensions)}" if extensions else "extensions: none declared"
    lines.append(ReasonLine(words, depth=1))
    for extension in extensions:
        required = " (required)" if extension.get("required") is True else ""
        lines.append(ReasonLine(safe_text(extension.get("uri") or "(no uri)", limit=300) + required, depth=2))
    return tuple(lines)


def _signature_lines(report: ReportView) -> tuple[ReasonLine, ...]:
    """An invalid card signature: the status, each signature and why it fails, what would check
    it, how the answers compared with the card, and any other error finding."""
    signature = report.card.signature
    lines = [ReasonLine(f"{signature.mark} signature {signature.words()}", True)]
    for item in _objects(report.member("card", "signature", "signatures")):
        named = [safe_text(item[key], limit=80) for key in ("alg", "kid") if isinstance(item.get(key), str)]
        status = _str(item.get("status"), "?")
        detail = _str(item.get("detail"))
        words = f"signature {item.get('index', '?')}" + (f" ({' · '.join(named)})" if named else "")
        words += f": {status}" + (f", {detail}" if detail else "")
        lines.append(ReasonLine(safe_text(words, limit=600), status != "verified", 1))
    hint = signature.hint()
    if hint:
        lines.append(ReasonLine(safe_text(hint, limit=400), depth=1))
    counted = [report.questions[name].counts() for name in QUESTIONS]
    total, matching = sum(sum(c.values()) for c in counted), sum(c["match"] for c in counted)
    if total:
        lines.append(
            ReasonLine(
                f"the answers: {matching} of {plural(total, 'projection')} match the card "
                "as served (1-5 show them), a card nobody is shown to have signed"
            )
        )
    others = [f for f in report.findings if f.severity == "error" and f.code != "card_signature_invalid"]
    if others:
        lines.append(ReasonLine("other error findings:"))
        lines += [ReasonLine(finding_line(f), True, 1) for f in others]
    return tuple(lines)
