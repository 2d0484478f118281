"""One attempt of an interview as `explorer.core.evaluate` judges it, and the readings all its parts share.

`evaluate` rebuilds the report in sections (`explorer.core.card_checks` for the card and what it
declares, `explorer.core.questions` for the five answers, `explorer.core.probes` for the closure
probes); every section reads the same attempt's exchanges and writes into the one `Attempt`
record defined here, which the last attempt hands to the report. The small readings they all need
(the last exchange of a purpose, a strict parse that may fail, the canonical digest, the finding
code of a transport problem, one `http_status` finding per status however many calls got it)
live here too, so that no section imports another for them and the entry point imports none of
its sections' internals. Pure, like all of `explorer.core`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.core.canonical import CanonicalError, canonicalize, sha256_hex
from explorer.core.declarations import Equivalence
from explorer.core.findings import Finding, finding
from explorer.core.run import DEADLINE, Exchange
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.text import safe_text

_TRANSPORT_CODES = (
    (DEADLINE, "deadline"),
    ("timeout", "timeout"),
    ("body_too_large", "body_too_large"),
    ("redirect_refused", "redirect_refused"),
    ("blocked", "address_blocked"),
    ("transport", "transport_error"),
)


@dataclass(frozen=True)
class StatusCall:
    """An interview call answered with an HTTP error status and nothing to read as an answer.

    Gathered over the attempt rather than reported at once, so that one status repeated across
    calls (a down agent answering 503 to all of them) is one `http_status` finding listing the
    calls (`status_findings`)."""

    status: str  # "HTTP 503", as `Exchange.problem` words it
    url: str
    question: str | None = None
    probe: str | None = None

    @property
    def call(self) -> str:
        """The call as a finding names it: `interview/usage` or `probe undefined_method`."""
        return f"interview/{self.question}" if self.question is not None else f"probe {self.probe}"


@dataclass
class Attempt:
    """Everything judged about one attempt; the last one becomes the report."""

    findings: list[Finding] = field(default_factory=list)
    extensions: list[Finding] = field(default_factory=list)
    extension_results: dict[str, Any] = field(default_factory=lambda: {"openclasp": None, "reputation": None})
    offered: bool = False
    reachable: bool = True
    card: dict[str, Any] = field(default_factory=dict)
    card_sha: str | None = None
    questions: dict[str, Any] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, Any] = field(default_factory=dict)
    # The SHA-256 of the questions answered with a result (`explorer.core.questions`); None: none.
    answers_sha: str | None = None
    # The card's signatures as proofs of its declarations (`card_checks.check_signature`); None
    # until a card was read.
    equivalence: Equivalence | None = None
    # Interview calls answered with an HTTP error status, in the order met (`report_transport`).
    status_calls: list[StatusCall] = field(default_factory=list)

    def add(self, code: str, detail: str, **where: Any) -> None:
        self.findings.append(finding(code, detail, **where))


def show(value: Any, limit: int = 160) -> str:
    """An agent-supplied value made safe to put in a finding's detail."""
    return safe_text(value, limit=limit)


def transport_code(error: str) -> str:
    """The finding code of an exchange's transport problem (its error's prefix)."""
    for prefix, code in _TRANSPORT_CODES:
        if error.startswith(prefix):
            return code
    return "transport_error"


def report_transport(
    a: Attempt, ex: Exchange, *, question: str | None = None, probe: str | None = None
) -> None:
    """What an interview call that got no answer tells: its transport problem as a finding now, or
    its HTTP status kept for `status_findings` (the same call and status twice is kept once)."""
    problem = ex.problem() or ""
    if ex.error is None and not ex.truncated:
        call = StatusCall(problem, ex.url, question, probe)
        if call not in a.status_calls:
            a.status_calls.append(call)
    else:
        a.add(
            transport_code(problem), f"{show(ex.url)}: {show(problem, 300)}", question=question, probe=probe
        )


def status_findings(calls: Sequence[StatusCall]) -> list[Finding]:
    """One `http_status` finding per status and address, naming every call that got it, in the
    order met; it keeps `question` (or `probe`) when that one question (or probe) is all it
    concerns."""
    groups: dict[tuple[str, str], list[StatusCall]] = {}
    for call in calls:
        groups.setdefault((call.status, call.url), []).append(call)
    out = []
    for (status, url), same in groups.items():
        questions = {c.question for c in same if c.question is not None}
        probes = {c.probe for c in same if c.probe is not None}
        named = ", ".join(dict.fromkeys(c.call for c in same))
        out.append(finding(
            "http_status", f"{show(url)} answered {status} to {show(named, 600)}",
            question=questions.pop() if len(questions) == 1 and not probes else None,
            probe=probes.pop() if len(probes) == 1 and not questions else None,
        ))  # fmt: skip
    return out


def parse_body(data: bytes | None) -> Any:
    """A body parsed strictly, or None when it is absent or not JSON."""
    if not data:
        return None
    try:
        return strict_parse(data)
    except StrictJsonError:
        return None


def canonical_sha(value: Any) -> str | None:
    """The SHA-256 hex of the value's JCS bytes, or None when it has none."""
    try:
        return sha256_hex(canonicalize(value))
    except CanonicalError:
        return None


def last_of(exchanges: Sequence[Exchange], purpose: str) -> tuple[Exchange | None, list[Exchange]]:
    """The last exchange of a purpose (the answer, after any retries) and every one of that purpose."""
    same = [e for e in exchanges if e.purpose == purpose]
    return (same[-1] if same else None), same
