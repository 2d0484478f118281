"""The whole report, rebuilt from recorded exchanges: the interview extension's section 8, pure.

`evaluate` never touches the network. It reads the `Exchange` records the procedure made (or a
stored transcript holds), groups them by attempt, and for each attempt redoes every judgement:
strict parse of the card, its layout and signature, the declared extensions, each committed
proposal, the five answers (asked twice), the closure probes and the section 7 diff. The verdict
comes from the attempts in order; the report's card, questions and probes come from the last
attempt, because that is the state the verdict describes. Keeping this pure is what lets
`verify --offline` reach the same verdict from a transcript, byte for byte.

Exchanges are found by their purpose (the fixed vocabulary of docs/ARCHITECTURE.md). When a
purpose occurs more than once in an attempt (a 429 waited out, then retried), the last exchange
is the answer and any 429 among the others is reported as `rate_limited`.

Reading of the texts where they are silent:

- A refusal returned for one of the five questions (no selector) is not the answer section 4
  requires; it is reported as `answer_shape_invalid` after its own shape is checked.
- A closure probe must draw the refusal with reason `out_of_scope` (the interview extension,
  section 4 rule 3 and section 6 rule 1); any other outcome, including a well-formed
  `not_declared` refusal, fails the probe.
- The unactivated call is judged by its JSON-RPC body whatever the 4xx status, since only
  -32601 is acceptable and some servers send it with a 4xx status. A probe answered with HTTP
  5xx or a final 429 got no answer at all: `http_status`, like a question.
- An attempt in which every interview call got nothing from the agent (transport failures, 5xx,
  a final 429) is `unreachable`: an agent that is down is not an agent that lies
  (`explorer.core.outage`).
- Terms entries that are malformed commit to nothing, but the card still *carries* terms, so a
  `declared: false` terms answer is still `terms_declared_wrong`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from explorer import __version__
from explorer.core import nogc
from explorer.core import pointer as jp
from explorer.core.answers import ANY_ID, RpcOutcome, check_answer, check_refusal, is_refusal, read_jsonrpc
from explorer.core.auth_findings import refused_for_auth, required_finding, scheme_findings, token_findings
from explorer.core.canonical import CanonicalError, canonicalize, sha256_hex
from explorer.core.card import INTERVIEW_URI, WELL_KNOWN, Card, Extension, parse_card
from explorer.core.diff import CardPair, ProjectionResult, diff_question
from explorer.core.findings import PROBES, QUESTIONS, UNACTIVATED_PROBES, Finding, finding, ordered
from explorer.core.openclasp import consistency_problems, verify_attestation
from explorer.core.outage import all_down, down_answer
from explorer.core.run import DEADLINE, REDACTED, Exchange
from explorer.core.signatures import verify_card
from explorer.core.sow import ProposalCheck, check_proposal
from explorer.core.strict_json import StrictJsonError, describe_type
from explorer.core.strict_json import parse as strict_parse
from explorer.core.text import safe_text
from explorer.core.token_trust import fetched_key_sets
from explorer.core.verdict import ROLES, churn_finding, decide_verdict, standing

# The card served to the protocol version the interview calls speak, when that is not the version
# the card was fetched with for its signatures (docs/CONTRACT.md, "Which card the answers are
# compared with").
FAMILY_CARD = "card:family"
UNMATCHED_SELECTOR = "interview-explorer/no-such-skill"
UNDEFINED_METHOD = "interview/undefined"
REPORT_VERSION = 1
METHOD_NOT_FOUND = -32601

_CLOSURE_CODES = {
    "undefined_method": "closure_method_not_refused",
    "unmatched_selector": "closure_selector_not_refused",
}
_TRANSPORT_CODES = (
    (DEADLINE, "deadline"),
    ("timeout", "timeout"),
    ("body_too_large", "body_too_large"),
    ("redirect_refused", "redirect_refused"),
    ("blocked", "address_blocked"),
    ("transport", "transport_error"),
)


def _show(value: Any, limit: int = 160) -> str:
    return safe_text(value, limit=limit)


def _transport_code(error: str) -> str:
    for prefix, code in _TRANSPORT_CODES:
        if error.startswith(prefix):
            return code
    return "transport_error"


def _parse(data: bytes | None) -> Any:
    """A body parsed strictly, or None when it is absent or not JSON."""
    if not data:
        return None
    try:
        return strict_parse(data)
    except StrictJsonError:
        return None


def _canon_hex(value: Any) -> str | None:
    try:
        return sha256_hex(canonicalize(value))
    except CanonicalError:
        return None


def _canonical_bytes(value: Any) -> bytes | None:
    try:
        return canonicalize(value)
    except CanonicalError:
        return None


def _answers_sha(parts: Mapping[str, bytes | None]) -> str | None:
    """The SHA-256 of the JCS bytes of {question: answer}, assembled from each answer's own JCS
    bytes (question names are ASCII, so their sorted order is RFC 8785's); None if one has none."""
    if any(part is None for part in parts.values()):
        return None
    members = [b'"' + q.encode("ascii") + b'":' + parts[q] for q in sorted(parts)]  # type: ignore[operator]
    return sha256_hex(b"{" + b",".join(members) + b"}")


def _header_lists(headers: Sequence[tuple[str, str]], uri: str) -> bool:
    """Whether an A2A-Extensions (or X-A2A-Extensions) header lists exactly this URI."""
    for name, value in headers:
        if name.lower() in ("a2a-extensions", "x-a2a-extensions"):
            if uri in (part.strip() for part in value.split(",")):
                return True
    return False


def _last(exchanges: Sequence[Exchange], purpose: str) -> tuple[Exchange | None, list[Exchange]]:
    same = [e for e in exchanges if e.purpose == purpose]
    return (same[-1] if same else None), same


@dataclass
class _Attempt:
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
    answers_sha: str | None = None  # `_answers_sha` of the questions answered with a result; None: none

    def add(self, code: str, detail: str, **where: Any) -> None:
        self.findings.append(finding(code, detail, **where))


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
    shas = [a.card_sha for a in attempts if a.card_sha is not None]
    if len(set(shas)) > 1:
        changes = " -> ".join(dict.fromkeys(s[:12] for s in shas))
        findings.append(finding("card_changed", f"the card's canonical bytes changed between attempts "
                                f"(sha256 {changes})"))
    if cut:
        findings.append(_deadline_finding(cut))  # what was seen is still shown and diffed
    verdict = decide_verdict([a.findings for a in attempts], offered=last.offered, reachable=last.reachable,
                             cut=bool(cut), card_read=last.card_sha is not None)
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


def _deadline_finding(cut: Sequence[Exchange]) -> Finding:
    """The one run-level `deadline` finding: what the run's deadline cut, and what it kept from
    being sent."""
    unsent = [ex for ex in cut if "not sent" in (ex.error or "")]
    bound = re.search(r"\(([^()]*)\)", cut[0].error or "")
    names = list(dict.fromkeys(ex.purpose + (f" (attempt {ex.attempt})" if ex.attempt > 1 else "")
                               for ex in cut))
    shown = ", ".join(_show(n, 80) for n in names[:8])
    shown += f" and {len(names) - 8} more" if len(names) > 8 else ""
    return finding("deadline", f"the run's deadline{f' ({bound.group(1)})' if bound else ''} cut it short: "
                   f"{len(cut) - len(unsent)} request(s) cut, {len(unsent)} not sent ({shown}); an interview "
                   "that could not be finished says nothing about the agent's conformance")


def _first_attempt(a: _Attempt) -> dict[str, Any]:
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
                entry.update({k: proj.get(k) for k in ("document", "status", "value_canonical",
                                                          "source_canonical", "diff", "source_diff")})
                break
        conflicts.append(entry)
    return {
        "card_sha256": a.card_sha,
        "answers_sha256": a.answers_sha,
        "conflicts": conflicts,
    }


def _empty_questions() -> dict[str, Any]:
    return {q: {"status": "not_asked", "answer": None, "declared": None, "projections": []}
            for q in QUESTIONS}


def _evaluate_attempt(exs: Sequence[Exchange], keys: Mapping[str, Any] | None, via: str | None) -> _Attempt:
    a = _Attempt(questions=_empty_questions())
    card_ex, _ = _last(exs, "card")
    a.card = _card_section(exs, card_ex, via)
    doc = _read_card(a, exs, card_ex)
    if doc is None:
        a.reachable = False
        return a
    a.card_sha = _canon_hex(doc)
    card = parse_card(doc)
    a.card.update(
        sha256=a.card_sha, layout=card.layout, name=card.name,
        jsonrpc_url=card.jsonrpc.url if card.jsonrpc else None,
        protocol_version=card.jsonrpc.family if card.jsonrpc else None,
        problems=list(card.problems),
    )
    sig = _signature(a, exs, doc, keys)
    interview = card.interview
    a.offered = interview is not None
    a.card["interview"] = {"declared": a.offered, "required": interview.required if interview else None}
    committed, proposals, terms_declared = _terms(a, exs, card)
    _reputation(a, doc, card)
    _openclasp(a, exs, doc, card, card_ex, sig.get("status"))
    if interview is None:
        a.add("interview_not_declared", "the card does not declare the interview extension, so nothing is "
              "asked; absence says nothing about the agent (interview extension 9.2)")
        return a
    if interview.required is True:
        a.add("interview_required_true", "the interview entry says required: true; it must never be "
              "required (interview extension 3.1)", member=interview.pointer + "/required")
    a.findings.extend(scheme_findings(doc))
    a.findings.extend(token_findings(exs))
    if card.jsonrpc is None:
        a.add("no_jsonrpc_interface", "the card declares the interview but offers no JSON-RPC interface to "
              "ask it over (the interview extension defines no other binding)")
        a.reachable = False
        return a
    status = sig.get("status")
    signed = True if status == "verified" else None if status == "unverifiable" else False
    compared, pair = _compared_card(a, exs, doc, card_ex)
    context = _DiffContext(compared, tuple(sig.get("unsigned_members") or ()), signed, proposals, committed,
                           terms_declared, card.skill_ids, pair)
    _questions(a, exs, context)
    _probes(a, exs, doc, context)
    if all_down(_final_calls(exs)):
        a.reachable = False  # an agent that is down is not an agent that lies (explorer.core.outage)
    return a


def _final_calls(exs: Sequence[Exchange]) -> list[Exchange]:
    """The last exchange of every interview call (question or probe) of one attempt."""
    last: dict[str, Exchange] = {}
    for ex in exs:
        if ex.purpose.startswith(("ask:", "probe:")):
            last[ex.purpose] = ex
    return list(last.values())


# --- the card --------------------------------------------------------------------------------


def _discovered_via(exs: Sequence[Exchange], card_ex: Exchange | None) -> str | None:
    if card_ex is None:
        return None
    if card_ex.method == "FILE":
        return "file"
    if any(e.purpose == "openclasp:resolve" for e in exs):
        return "openclasp"
    path = urlsplit(card_ex.url).path
    for known in WELL_KNOWN:
        if path.endswith(known):
            return known
    return "card-url"


def _card_section(exs: Sequence[Exchange], card_ex: Exchange | None, via: str | None) -> dict[str, Any]:
    return {
        "url": card_ex.url if card_ex is not None else None,
        "discovered_via": via or _discovered_via(exs, card_ex),
        "layout": None, "sha256": None, "name": None, "jsonrpc_url": None, "protocol_version": None,
        "compared_layout": None, "compared_sha256": None, "compared_served_to": None,
        "signature": {"status": "unverifiable", "form": None, "alg": None, "kid": None, "key_source": None,
                      "signatures": [], "unsigned_members": []},
        "interview": {"declared": False, "required": None},
        "terms": {"declared": False, "proposals": []},
        "reputation": None,
        "problems": [],
    }


def _read_card(a: _Attempt, exs: Sequence[Exchange], card_ex: Exchange | None) -> dict[str, Any] | None:
    """The card document, or None after reporting why there is no usable card."""
    if card_ex is None:
        tried = [f"{_show(e.url)} ({e.problem() or 'no card'})" for e in exs
                 if e.purpose == "card-discovery"]
        a.add("card_unreachable", "no card was fetched" + (": tried " + ", ".join(tried) if tried else ""))
        return None
    tried = [f"{_show(e.url)} ({e.problem()})" for e in exs if e.purpose == "card-discovery"]
    earlier = f" (also tried {', '.join(tried)})" if tried else ""
    problem = card_ex.problem()
    where = _show(card_ex.url)
    # One cause, one message: a refused connection or an HTTP error is said once, by
    # card_unreachable; a more specific cause (timeout, refused redirect, blocked address, size
    # cap) keeps its own code with the detail, and card_unreachable only names it.
    if problem is not None and (card_ex.error is not None or card_ex.truncated):
        code = _transport_code(problem)
        if code == "transport_error":
            a.add("card_unreachable", f"no card at {where}: {_show(problem, 300)}{earlier}")
            return None
        a.add(code, f"card {where}: {_show(problem, 300)}")
        if code == "body_too_large":
            a.add("card_malformed", f"the card at {where} exceeds the size cap")
        else:
            a.add("card_unreachable", f"no card at {where} ({code}){earlier}")
        return None
    if problem is not None:
        a.add("card_unreachable", f"no card at {where}: {problem}{earlier}")
        return None
    try:
        doc = strict_parse(card_ex.response_body)
    except StrictJsonError as exc:
        a.add("card_malformed", f"the card at {where} is refused: {exc} ({exc.reason})")
        return None
    if not isinstance(doc, dict):
        a.add("card_malformed", f"the card at {where} is a JSON {describe_type(doc)}, not an object")
        return None
    return doc


def _version_sent(ex: Exchange | None) -> str | None:
    """The `A2A-Version` a card request announced (None for a card read from a file)."""
    if ex is None or ex.method == "FILE":
        return None
    return next((value for name, value in ex.request_headers if name.lower() == "a2a-version"), None)


def _compared_card(
    a: _Attempt, exs: Sequence[Exchange], doc: dict[str, Any], card_ex: Exchange | None
) -> tuple[dict[str, Any], CardPair | None]:
    """The card the answers are compared with: the card served to the protocol version the
    interview calls speak (`FAMILY_CARD`, fetched when that is not the version the card was
    fetched with), and the signed card beside it when the two differ (docs/CONTRACT.md, "Which
    card the answers are compared with"). The report's card says which (`compared_*`)."""
    a.card.update(compared_layout=a.card.get("layout"), compared_sha256=a.card_sha,
                  compared_served_to=_version_sent(card_ex))
    family_ex, _ = _last(exs, FAMILY_CARD)
    if family_ex is None:
        return doc, None
    version = _version_sent(family_ex) or "0.3"
    problem = family_ex.problem()
    family: Any = None
    if problem is None:
        try:
            family = strict_parse(family_ex.response_body)
        except StrictJsonError as exc:
            problem = f"refused: {exc}"
    if problem is None and not isinstance(family, dict):
        problem = f"a JSON {describe_type(family)}, not an object"
    if problem is not None:
        a.card["problems"].append(f"the card served to A2A-Version {version} could not be read "
                                  f"({_show(problem, 300)}); the answers are compared with the card fetched "
                                  "for its signatures")
        return doc, None
    sha = _canon_hex(family)
    a.card["compared_served_to"] = version
    if sha is None or sha == a.card_sha:
        return doc, None  # the same card whoever asks
    a.card.update(compared_layout=parse_card(family).layout, compared_sha256=sha)
    return family, CardPair(doc, version, _version_sent(card_ex) or "1.0")


def _signature(
    a: _Attempt, exs: Sequence[Exchange], doc: dict[str, Any], keys: Mapping[str, Any] | None
) -> dict[str, Any]:
    sig = verify_card(doc, keys or {}, jku_keys=fetched_key_sets(exs)).to_json()
    a.card["signature"] = sig
    status = sig.get("status")
    why = _signature_detail(sig)
    if status == "unsigned":
        a.add("card_unsigned", "the card carries no signatures; every card projection is compared with "
              "unsigned bytes")
    elif status == "invalid":
        a.add("card_signature_invalid", "a card signature fails with a known key under every payload form"
              + why + _scrubbed_note(exs), member="/signatures")
    elif status == "unverifiable":
        a.add("card_signature_unverifiable", "the card signature cannot be checked (no key for its kid, or "
              "an algorithm outside the allow-list)" + why, member="/signatures")
    return sig


def _scrubbed_note(exs: Sequence[Exchange]) -> str:
    """Why a signature may fail over the recorded card: a secret of the run was replaced in it."""
    card_ex, _ = _last(exs, "card")
    if card_ex is None or REDACTED.encode() not in card_ex.response_body:
        return ""
    return (f"; the card as recorded holds {REDACTED} where a secret of this run was replaced (an agent "
            "that echoes one, or a header value that also occurs in the card): the bytes signed did not")


def _signature_detail(sig: Mapping[str, Any]) -> str:
    detail = sig.get("detail")
    return f" ({_show(detail, 300)})" if detail else ""


# --- declared extensions -----------------------------------------------------------------------


def _terms(
    a: _Attempt, exs: Sequence[Exchange], card: Card
) -> tuple[set[tuple[str, str]], dict[tuple[str, str], ProposalCheck], bool]:
    entries = card.terms
    committed: list[tuple[str, str, Any, Any]] = []
    for entry in entries:
        for problem in entry.problems:
            a.add("terms_entry_invalid", _show(problem, 300), member=entry.extension.pointer)
        for ref in entry.proposals:
            for problem in ref.problems:
                a.add("terms_entry_invalid", _show(problem, 300), member=ref.pointer)
            if not entry.problems and not ref.problems and ref.url and ref.digest:
                committed.append((ref.url, ref.digest, ref.sow, ref.offering))
    if card.interview is not None and not entries:
        a.add("terms_not_declared", "the interview is declared but the terms extension is not; the terms "
              "answer must then say declared: false (interview extension 3.3 and 4.4)")
    proposals: dict[tuple[str, str], ProposalCheck] = {}
    for url, digest, sow, offering in committed:
        if (url, digest) in proposals:
            continue
        ex = _proposal_exchange(exs, url)
        if ex is None and card.interview is None:
            continue  # nothing is asked, so the proposals were never needed
        problem = "not fetched" if ex is None else ex.problem()
        body = ex.response_body if ex is not None and problem is None else None
        check = check_proposal(body, url=url, committed_digest=digest, fetch_error=problem, sow=sow,
                               offering=offering)
        proposals[(url, digest)] = check
        a.findings.extend(check.findings)
    a.card["terms"] = {"declared": bool(entries), "proposals": [c.to_json() for c in proposals.values()]}
    return {(u, d) for u, d, _, _ in committed}, proposals, bool(entries)


def _proposal_exchange(exs: Sequence[Exchange], url: str) -> Exchange | None:
    found = [e for e in exs if e.purpose == "proposal" and e.url == url]
    return found[-1] if found else None


def _raw_entry(doc: Mapping[str, Any], ext: Extension) -> Any:
    resolution = jp.resolve(doc, ext.pointer)
    return resolution.value if resolution.found else None


def _reputation(a: _Attempt, doc: Mapping[str, Any], card: Card) -> None:
    ext = card.reputation
    if ext is None:
        return
    entry = _raw_entry(doc, ext)
    a.card["reputation"] = entry
    a.extension_results["reputation"] = entry
    a.extensions.append(finding(
        "reputation_declared",
        "the card points at a reputation record (shown verbatim; nothing is fetched). An interview "
        "measures consistency with declarations, not conduct: what counterparties concluded about the "
        "agent is the reputation record's business (interview extension 9.1)",
        member=ext.pointer,
    ))


def _openclasp(
    a: _Attempt, exs: Sequence[Exchange], doc: dict[str, Any], card: Card, card_ex: Exchange | None,
    sig_status: Any,
) -> None:
    ext = card.openclasp
    if ext is None:
        return
    params = ext.params if isinstance(ext.params, Mapping) else {}
    result: dict[str, Any] = {
        "uri": ext.uri, "agent_id": params.get("agentId"), "card_url": params.get("openClaspCardUrl"),
        "public_card_url": None, "key_url": None, "attestation": None, "consistent": None, "problems": [],
        "verified": False,
    }
    a.extension_results["openclasp"] = result

    def add(code: str, detail: str) -> None:
        a.extensions.append(finding(code, detail, member=ext.pointer))

    if sig_status == "unsigned":
        add("openclasp_unsigned_card", "the A2A card carries no signatures; its trust comes from the "
            "platform attestation")
    public_ex, _ = _last(exs, "openclasp:public_card")
    if public_ex is None or public_ex.problem() is not None:
        why = "not fetched" if public_ex is None else public_ex.problem()
        add("openclasp_card_unreachable", f"the OpenClasp public card could not be read: {_show(why, 300)}")
        return
    result["public_card_url"] = public_ex.url
    public_card = _parse(public_ex.response_body)
    if not isinstance(public_card, dict):
        add("openclasp_card_unreachable", f"the OpenClasp public card at {_show(public_ex.url)} is not a "
            "JSON object")
        return
    key_ex, _ = _last(exs, "openclasp:key")
    key_doc: Any = None
    if key_ex is not None:
        result["key_url"] = key_ex.url
    if "platformAttestation" not in public_card:
        add("openclasp_attestation_missing", "the OpenClasp public card carries no platformAttestation")
    elif key_ex is None or key_ex.problem() is not None:
        why = "not fetched" if key_ex is None else key_ex.problem()
        add("openclasp_key_unreachable", f"the platform's verification key could not be read: "
            f"{_show(why, 300)}")
    else:
        key_doc = _parse(key_ex.response_body)
        att = verify_attestation(public_card, key_doc)
        result["attestation"] = att.to_json()
        if att.status == "verified":
            result["verified"] = True
            add("openclasp_verified", f"the OpenClasp public card is attested by the platform: "
                f"{_show(att.detail, 300)}")
        elif att.status == "bad_key":
            add("openclasp_key_unreachable", f"the platform's verification key is unusable: "
                f"{_show(att.detail, 300)}")
        elif att.status == "missing":
            add("openclasp_attestation_missing", _show(att.detail, 300))
        else:
            add("openclasp_attestation_invalid", _show(att.detail, 300))
    a2a_url = card_ex.url if card_ex is not None and card_ex.method != "FILE" else None
    problems = consistency_problems(doc, ext.params, public_card, a2a_card_url=a2a_url)
    result["problems"] = problems
    result["consistent"] = not problems
    for problem in problems:
        add("openclasp_inconsistent", _show(problem, 300))


# --- the five questions ------------------------------------------------------------------------


@dataclass(frozen=True)
class _DiffContext:
    card_doc: dict[str, Any]  # the card the answers are compared with (see `_compared_card`)
    unsigned_members: tuple[str, ...]
    card_signed: bool | None
    proposals: Mapping[tuple[str, str], ProposalCheck]
    committed: set[tuple[str, str]]
    terms_declared: bool
    skill_ids: tuple[str, ...]
    pair: CardPair | None = None  # the card fetched for its signatures, when it is another

    def diff(self, question: str, result: Any) -> tuple[list[ProjectionResult], list[Finding]]:
        """Every projection of one answer against the declared bytes (section 7)."""
        return diff_question(
            question, result, card_doc=self.card_doc, unsigned_members=self.unsigned_members,
            card_signed=self.card_signed, proposals=self.proposals, committed=self.committed,
            terms_declared=self.terms_declared, skill_ids=self.skill_ids, pair=self.pair,
        )


def _request(ex: Exchange) -> dict[str, Any]:
    """What was sent: method, params, and whether the interview was activated."""
    body = _parse(ex.request_body)
    body = body if isinstance(body, dict) else {}
    return {"method": body.get("method"), "params": body.get("params"),
            "activated": _header_lists(ex.request_headers, INTERVIEW_URI), "id": body.get("id", ANY_ID)}


def _read(ex: Exchange) -> RpcOutcome:
    return read_jsonrpc(ex.response_body, expected_id=_request(ex)["id"])


def _questions(a: _Attempt, exs: Sequence[Exchange], ctx: _DiffContext) -> None:
    asked = 0
    delivered = 0
    answered = 0
    refused: list[tuple[str, Exchange]] = []
    read: list[tuple[str, RpcOutcome]] = []
    results: dict[str, bytes | None] = {}  # canonical bytes of each answer that is a result
    echoed = False
    responded = False
    for q in QUESTIONS:
        first, tries1 = _last(exs, f"ask:{q}#1")
        second, tries2 = _last(exs, f"ask:{q}#2")
        # Only a 429 that was followed by another try was answered by waiting; a final 429
        # (an absurd Retry-After is never waited for) is an http_status problem of the call.
        for ex in tries1[:-1] + tries2[:-1]:
            if ex.status == 429:
                a.add("rate_limited", f"the agent answered HTTP 429 to {_show(ex.url)}; the call was retried "
                      "after waiting", question=q)
        finals = [e for e in (first, second) if e is not None]
        asked += len(finals)
        for ex in finals:
            if ex.error is None:
                delivered += 1
            if ex.status is not None and not refused_for_auth(ex) and not down_answer(ex):
                responded = True
                echoed = echoed or _header_lists(ex.response_headers, INTERVIEW_URI)
        usable = [e for e in finals if e.problem() is None]
        answered += len(usable)
        for ex in finals:
            if refused_for_auth(ex):
                refused.append((q, ex))
            elif ex.problem() is not None:
                _report_transport(a, ex, question=q)  # the same trouble twice is reported once
        if not finals:
            continue
        if not usable:
            a.questions[q]["status"] = "error"
            continue
        first = _read(usable[0])
        first_bytes = None if first.kind == "malformed" else _canonical_bytes(first.payload)
        if len(usable) == 2:
            _determinism(a, q, (first, first_bytes), _read(usable[1]), usable)
        read.append((q, first))
        if first.kind == "result":  # exactly the questions `_answer` keeps in `a.answers`
            results[q] = first_bytes
    # Projections are drawn once every second ask has been read and let go, and the answers'
    # canonical bytes hashed and let go: a large agent's answers are then never held twice
    # beside the projections (peak memory, not just time).
    a.answers_sha = _answers_sha(results) if results else None
    results.clear()  # let the bytes go before the projections are drawn
    for q, first in read:
        _answer(a, q, first, ctx)
    required = required_finding(refused, ctx.card_doc)
    if required is not None:
        a.findings.append(required)
    if asked == 0 or delivered == 0 or (refused and answered == 0):
        a.reachable = False  # the questions could not be put (authentication is not conformance)
    if responded and not echoed:
        a.findings.append(finding("activation_not_echoed", "no interview response listed the interview URI "
                                  "in A2A-Extensions (an echo is evidence of activation; its absence is not "
                                  "a violation)"))


def _report_transport(
    a: _Attempt, ex: Exchange, *, question: str | None = None, probe: str | None = None
) -> None:
    problem = ex.problem() or ""
    if ex.error is None and not ex.truncated:
        a.add("http_status", f"{_show(ex.url)} answered {problem}", question=question, probe=probe)
    else:
        a.add(_transport_code(problem), f"{_show(ex.url)}: {_show(problem, 300)}", question=question,
              probe=probe)


def _answer(a: _Attempt, q: str, out: RpcOutcome, ctx: _DiffContext) -> None:
    entry = a.questions[q]
    if out.kind == "malformed":
        entry.update(status="error", answer=out.body)
        a.add("answer_malformed", f"the JSON-RPC response is malformed: {_show(out.problem, 300)}",
              question=q)
        return
    if out.kind == "error":
        entry["answer"] = out.error
        if is_refusal(out.data):
            a.add("refusal_as_error", "a refusal arrived inside a JSON-RPC error (error.data); it is read as "
                  "the refusal", question=q)
            _refused(a, q, out.data, ctx.skill_ids)
            return
        entry["status"] = "error"
        a.add("method_error", f"interview/{q} answered a JSON-RPC error {out.code}: "
              f"{_show(out.message, 200)}", question=q)
        return
    result = out.result
    entry["answer"] = result
    a.answers[q] = result
    if is_refusal(result):
        _refused(a, q, result, ctx.skill_ids)
        return
    entry["status"] = "answered"
    declared = result.get("declared") if isinstance(result, dict) else None
    entry["declared"] = declared if isinstance(declared, bool) else None
    a.findings.extend(check_answer(q, result))
    projections, found = ctx.diff(q, result)
    entry["projections"] = [p.to_json() for p in projections]
    a.findings.extend(found)


def _refused(a: _Attempt, q: str, refusal: Any, skill_ids: tuple[str, ...]) -> None:
    a.questions[q]["status"] = "refused"
    a.findings.extend(check_refusal(refusal, skill_ids, question=q))
    a.add("answer_shape_invalid", f"interview/{q} was refused, but it is one of the five questions and must "
          "be answered (interview extension, section 4); refusals are for what lies outside them", question=q)


def _fingerprint(out: RpcOutcome, ex: Exchange, canonical: bytes | None) -> tuple[str, Any]:
    if out.kind == "malformed":
        return out.kind, ex.response_body
    return out.kind, canonical


def _determinism(
    a: _Attempt, q: str, first: tuple[RpcOutcome, bytes | None], two: RpcOutcome, exs: list[Exchange]
) -> None:
    """Both asks compared by their canonical bytes, the first ask's computed once by the caller."""
    one, one_bytes = first
    if one.kind == "malformed" and two.kind == "malformed":
        return  # already answer_malformed; raw bytes echo each ask's own id, so they always differ
    two_bytes = None if two.kind == "malformed" else _canonical_bytes(two.payload)
    if _fingerprint(one, exs[0], one_bytes) != _fingerprint(two, exs[1], two_bytes):
        a.add("nondeterministic_answer", f"two asks of interview/{q} gave different canonical bytes; answers "
              "are lookups and must be identical on every ask (interview extension 4.1)", question=q)


# --- the closure probes ------------------------------------------------------------------------


def _probe_outcome(out: RpcOutcome) -> tuple[str, Any]:
    """(outcome, the refusal object if any)."""
    if out.kind == "result" and is_refusal(out.result):
        return "refused", out.result
    if out.kind == "error" and is_refusal(out.data):
        return "refused", out.data
    if out.kind == "error" and out.code == METHOD_NOT_FOUND:
        return "method_not_found", None
    if out.kind == "result":
        return "answered", None
    return "error", None


def _probes(a: _Attempt, exs: Sequence[Exchange], doc: Mapping[str, Any], ctx: _DiffContext) -> None:
    skill_ids = ctx.skill_ids
    for name in PROBES:
        ex, _ = _last(exs, f"probe:{name}")
        if ex is None:
            continue
        request = _request(ex)
        sent = _parse(ex.request_body)
        keys = ("method", "params", "activated") if isinstance(sent, dict) and "params" in sent else (
            "method", "activated")  # a probe sent without params says so by leaving the member out
        entry: dict[str, Any] = {
            "name": name,
            "request": {k: request[k] for k in keys},
            "response": _parse(ex.response_body),
            "status": ex.status,
            "outcome": "error",
        }
        a.probes.append(entry)
        if ex.error is not None or ex.truncated or down_answer(ex):
            _report_transport(a, ex, probe=name)  # a server error or a 429 is no answer to judge
            continue
        if refused_for_auth(ex) and name != "unactivated_call":
            a.findings.append(required_finding([(f"the {name} probe", ex)], doc, probe=name))
            continue
        out = _read(ex)
        outcome, refusal = _probe_outcome(out)
        entry["outcome"] = outcome
        status = f" (HTTP {ex.status})" if not ex.usable else ""
        got = _describe(out, outcome) + status
        if name == "valid_selector":
            _valid_selector(a, ex, entry, out, got, ctx)
            continue
        if name in UNACTIVATED_PROBES:
            if outcome != "method_not_found":
                how = "with no params" if name == "unactivated_call_no_params" else "with params {}"
                a.add("unactivated_call_answered", f"an interview call without the activation header ({how}) "
                      f"must get JSON-RPC error -32601 (method not found); it got {got}", probe=name)
            continue
        if outcome != "refused":
            a.add(_CLOSURE_CODES[name], f"expected the standard refusal (reason out_of_scope); got {got}",
                  probe=name)
            continue
        if out.kind == "error":
            a.add("refusal_as_error", "the refusal arrived inside a JSON-RPC error (error.data); it is "
                  "read as the refusal", probe=name)
        a.findings.extend(check_refusal(refusal, skill_ids, probe=name))
        reason = refusal.get("reason") if isinstance(refusal, dict) else None
        if reason == "not_declared":
            a.add(_CLOSURE_CODES[name], "refused with reason not_declared; the closure's reason is "
                  "out_of_scope (interview extension 4.3 and 6.1)", probe=name)


def _valid_selector(
    a: _Attempt, ex: Exchange, entry: dict[str, Any], out: RpcOutcome, got: str, ctx: _DiffContext
) -> None:
    """A selector equal to a declared skill id must be answered (only a selector matching no id
    is refused, section 4 rule 3), and the answer is diffed like any other (section 7)."""
    name = "valid_selector"
    selector = (entry["request"].get("params") or {}).get("skill") if isinstance(
        entry["request"].get("params"), dict) else None
    shown = _show(repr(selector), 120)
    if entry["outcome"] == "refused":
        a.add("selector_refused", f"interview/usage with the selector {shown}, a declared skill id, got "
              f"{got}; only a selector that matches no declared id is refused (interview extension 4.3)",
              probe=name)
        return
    if not ex.usable:
        _report_transport(a, ex, probe=name)  # an HTTP error status: no answer to diff
        return
    if out.kind == "malformed":
        a.add("answer_malformed", f"the JSON-RPC response is malformed: {_show(out.problem, 300)}",
              probe=name)
        return
    if out.kind == "error":
        a.add("method_error", f"interview/usage with the selector {shown} answered a JSON-RPC error "
              f"{out.code}: {_show(out.message, 200)}", probe=name)
        return
    found = check_answer("usage", out.result)
    projections, diffed = ctx.diff("usage", out.result)
    entry["projections"] = [p.to_json() for p in projections]
    a.findings.extend(replace(f, question=None, probe=name) for f in (*found, *diffed))


def _describe(out: RpcOutcome, outcome: str) -> str:
    if out.kind == "malformed":
        return f"a malformed response ({_show(out.problem, 200)})"
    if out.kind == "error":
        return f"JSON-RPC error {out.code} ({_show(out.message, 120)})"
    return "a refusal" if outcome == "refused" else "an answer"
