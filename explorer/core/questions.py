"""The five questions of one attempt, judged (a part of `explorer.core.evaluate`).

Each question is asked twice; the last exchange of each ask is its answer (a 429 waited out and
retried is reported as `rate_limited`). The first answer is checked for its shape, diffed against
the declared bytes (section 7, through `DiffContext`), and compared with the second for
determinism; together they make the report's `questions` and `answers_sha256`. Each question's
`declared` (what its declared documents say, `explorer.core.declared`) is filled before it is
asked and left as it is: the answer's own `declared` boolean stays in `answer`. What an interview
call sent and how its reply reads (`sent_request`, `read_reply`) and what the answers are diffed
against (`DiffContext`) are shared with the closure probes (`explorer.core.probes`), whose
valid-selector answer is diffed like a question's.

A signature is a proof, not a declaration (`explorer.core.declarations`): two asks whose answers
differ only in signatures equivalent to the card's (replicas and restarts sign again) are the
same answer, and `answers_sha256` hashes the card's own signatures, or equivalent ones, as one
stand-in, so it does not change when an honest agent signs its card again.

Reading of the texts where they are silent: a refusal returned for one of the five questions (no
selector) is not the answer section 4 requires; it is reported as `answer_shape_invalid` after its
own shape is checked. An HTTP 4xx whose body is a JSON-RPC error response is read as that error
(`reads_as_answer`): its code and message are the answer, kept in the question's entry, and the
status is named in the finding; a 4xx with any other body is an `http_status` problem of the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.core.answers import ANY_ID, RpcOutcome, check_answer, check_refusal, is_refusal, read_jsonrpc
from explorer.core.attempt import Attempt, last_of, parse_body, report_transport, show
from explorer.core.auth_findings import refused_for_auth, required_finding
from explorer.core.canonical import CanonicalError, canonicalize, sha256_hex
from explorer.core.card import INTERVIEW_URI
from explorer.core.declarations import Equivalence, projects_signatures
from explorer.core.diff import CardPair, ProjectionResult, diff_question
from explorer.core.findings import QUESTIONS, Finding, finding
from explorer.core.outage import down_answer
from explorer.core.run import Exchange
from explorer.core.sow import ProposalCheck


def _canonical_bytes(value: Any) -> bytes | None:
    try:
        return canonicalize(value)
    except CanonicalError:
        return None


def _answers_sha(parts: Mapping[str, bytes | None]) -> str | None:
    """The SHA-256 of the JCS bytes of {question: answer}, assembled from each answer's own JCS
    bytes (question names are ASCII, so their sorted order is RFC 8785's); None if one has none."""
    members: list[bytes] = []
    for q in sorted(parts):
        part = parts[q]
        if part is None:
            return None
        members.append(b'"' + q.encode("ascii") + b'":' + part)
    return sha256_hex(b"{" + b",".join(members) + b"}")


def _header_lists(headers: Sequence[tuple[str, str]], uri: str) -> bool:
    """Whether an A2A-Extensions (or X-A2A-Extensions) header lists exactly this URI."""
    for name, value in headers:
        if name.lower() in ("a2a-extensions", "x-a2a-extensions"):
            if uri in (part.strip() for part in value.split(",")):
                return True
    return False


@dataclass(frozen=True)
class DiffContext:
    """What the card checks found that every answer is diffed against (section 7)."""

    card_doc: dict[str, Any]  # the card the answers are compared with (`card_checks.compared_card`)
    unsigned_members: tuple[str, ...]
    card_signed: bool | None
    proposals: Mapping[tuple[str, str], ProposalCheck]
    committed: set[tuple[str, str]]
    terms_declared: bool
    skill_ids: tuple[str, ...]
    pair: CardPair | None = None  # the card fetched for its signatures, when it is another
    # The judge of signatures against the card fetched for them (CONTRACT.md "Signatures are proofs").
    equivalence: Equivalence | None = None

    def diff(self, question: str, result: Any) -> tuple[list[ProjectionResult], list[Finding]]:
        """Every projection of one answer against the declared bytes (section 7)."""
        return diff_question(
            question,
            result,
            card_doc=self.card_doc,
            unsigned_members=self.unsigned_members,
            card_signed=self.card_signed,
            proposals=self.proposals,
            committed=self.committed,
            terms_declared=self.terms_declared,
            skill_ids=self.skill_ids,
            pair=self.pair,
            equivalence=self.equivalence,
        )


def sent_request(ex: Exchange) -> dict[str, Any]:
    """What was sent: method, params, and whether the interview was activated."""
    body = parse_body(ex.request_body)
    body = body if isinstance(body, dict) else {}
    return {
        "method": body.get("method"),
        "params": body.get("params"),
        "activated": _header_lists(ex.request_headers, INTERVIEW_URI),
        "id": body.get("id", ANY_ID),
    }


def read_reply(ex: Exchange) -> RpcOutcome:
    """The JSON-RPC reply of an interview call, read against the id its request carried."""
    return read_jsonrpc(ex.response_body, expected_id=sent_request(ex)["id"])


def reads_as_answer(ex: Exchange) -> bool:
    """Whether an interview call's reply is read as the agent's answer: a 2xx, or a 4xx (not 401
    or 403, which ask for a credential, nor a final 429) whose body is a JSON-RPC error response,
    read as that error (some stacks send -32601 inside HTTP 400)."""
    if ex.usable:
        return True
    return (
        ex.error is None
        and not ex.truncated
        and ex.status is not None
        and 400 <= ex.status < 500
        and not refused_for_auth(ex)
        and not down_answer(ex)
        and read_reply(ex).kind == "error"
    )


def _in_status(ex: Exchange) -> str:
    """` (in HTTP 400)` for an answer read from an error status (`reads_as_answer`), else ``."""
    return "" if ex.usable else f" (in HTTP {ex.status})"


def judge_questions(a: Attempt, exs: Sequence[Exchange], ctx: DiffContext) -> None:
    """The five questions, each asked twice: the report's `questions`, `answers_sha256` and findings."""
    asked = 0
    delivered = 0
    answered = 0
    refused: list[tuple[str, Exchange]] = []
    read: list[tuple[str, RpcOutcome, Exchange]] = []
    results: dict[str, bytes | None] = {}  # canonical bytes of each answer that is a result
    echoed = False
    responded = False
    for q in QUESTIONS:
        first, tries1 = last_of(exs, f"ask:{q}#1")
        second, tries2 = last_of(exs, f"ask:{q}#2")
        # Only a 429 that was followed by another try was answered by waiting; a final 429
        # (an absurd Retry-After is never waited for) is an http_status problem of the call.
        for ex in tries1[:-1] + tries2[:-1]:
            if ex.status == 429:
                a.add(
                    "rate_limited",
                    f"the agent answered HTTP 429 to {show(ex.url)}; the call was retried after waiting",
                    question=q,
                )
        finals = [e for e in (first, second) if e is not None]
        asked += len(finals)
        for ex in finals:
            if ex.error is None:
                delivered += 1
            if ex.status is not None and not refused_for_auth(ex) and not down_answer(ex):
                responded = True
                echoed = echoed or _header_lists(ex.response_headers, INTERVIEW_URI)
        usable = [e for e in finals if reads_as_answer(e)]
        answered += len(usable)
        for ex in finals:
            if refused_for_auth(ex):
                refused.append((q, ex))
            elif not reads_as_answer(ex):
                report_transport(a, ex, question=q)  # the same trouble twice is reported once
        if not finals:
            continue
        if not usable:
            a.questions[q]["status"] = "error"
            continue
        reply = read_reply(usable[0])
        reply_bytes = None if reply.kind == "malformed" else _canonical_bytes(reply.payload)
        if len(usable) == 2:
            _determinism(a, q, (reply, reply_bytes), read_reply(usable[1]), usable, ctx.equivalence)
        read.append((q, reply, usable[0]))
        if reply.kind == "result":  # exactly the questions `_answer` keeps in `a.answers`
            results[q] = _digested(reply, reply_bytes, ctx.equivalence)
    # Projections are drawn once every second ask has been read and let go, and the answers'
    # canonical bytes hashed and let go: a large agent's answers are then never held twice
    # beside the projections (peak memory, not just time).
    a.answers_sha = _answers_sha(results) if results else None
    results.clear()  # let the bytes go before the projections are drawn
    for q, reply, ex in read:
        _answer(a, q, reply, ctx, _in_status(ex))
    required = required_finding(refused, ctx.card_doc)
    if required is not None:
        a.findings.append(required)
    if asked == 0 or delivered == 0 or (refused and answered == 0):
        a.reachable = False  # the questions could not be put (authentication is not conformance)
    if responded and not echoed:
        a.findings.append(
            finding(
                "activation_not_echoed",
                "no interview response listed the interview URI "
                "in A2A-Extensions (an echo is evidence of activation; its absence is not "
                "a violation)",
            )
        )


def _answer(a: Attempt, q: str, out: RpcOutcome, ctx: DiffContext, in_status: str = "") -> None:
    entry = a.questions[q]
    if out.kind == "malformed":
        entry.update(status="error", answer=out.body)
        a.add("answer_malformed", f"the JSON-RPC response is malformed: {show(out.problem, 300)}", question=q)
        return
    if out.kind == "error":
        entry["answer"] = out.error
        if is_refusal(out.data):
            a.add(
                "refusal_as_error",
                "a refusal arrived inside a JSON-RPC error (error.data); it is read as the refusal",
                question=q,
            )
            _refused(a, q, out.data, ctx.skill_ids)
            return
        entry["status"] = "error"
        a.add(
            "method_error",
            f"interview/{q} answered a JSON-RPC error {out.code}: {show(out.message, 200)}{in_status}",
            question=q,
        )
        return
    result = out.result
    entry["answer"] = result
    a.answers[q] = result
    if is_refusal(result):
        _refused(a, q, result, ctx.skill_ids)
        return
    entry["status"] = "answered"  # `entry["declared"]` is the card's (`core.declared`); the answer's is in it
    a.findings.extend(check_answer(q, result))
    projections, found = ctx.diff(q, result)
    entry["projections"] = [p.to_json() for p in projections]
    a.findings.extend(found)


def _refused(a: Attempt, q: str, refusal: Any, skill_ids: tuple[str, ...]) -> None:
    a.questions[q]["status"] = "refused"
    a.findings.extend(check_refusal(refusal, skill_ids, question=q))
    a.add(
        "answer_shape_invalid",
        f"interview/{q} was refused, but it is one of the five questions and must "
        "be answered (interview extension, section 4); refusals are for what lies outside them",
        question=q,
    )


def _fingerprint(out: RpcOutcome, ex: Exchange, canonical: bytes | None) -> tuple[str, Any]:
    if out.kind == "malformed":
        return out.kind, ex.response_body
    return out.kind, canonical


def _digested(reply: RpcOutcome, reply_bytes: bytes | None, equivalence: Equivalence | None) -> bytes | None:
    """The bytes an answer adds to `answers_sha256`: its canonical bytes, with the card's own
    signatures (or equivalent ones) read as a stand-in (`Equivalence.settled`), so that an agent
    signing its card again answers the same digest. Most answers project no signature: their
    bytes, already made."""
    if equivalence is None or not projects_signatures(reply.result):
        return reply_bytes
    return _canonical_bytes(equivalence.settled(reply.result))


def _resigned_only(one: RpcOutcome, two: RpcOutcome, equivalence: Equivalence | None) -> bool:
    """Whether two answers differ only in signatures equivalent to the card's, each of them."""
    if equivalence is None or equivalence.proofs is None or one.kind != "result" or two.kind != "result":
        return False
    if not (projects_signatures(one.result) and projects_signatures(two.result)):
        return False
    settled = _canonical_bytes(equivalence.settled(one.result))
    return settled is not None and settled == _canonical_bytes(equivalence.settled(two.result))


def _determinism(
    a: Attempt,
    q: str,
    first: tuple[RpcOutcome, bytes | None],
    two: RpcOutcome,
    exs: list[Exchange],
    equivalence: Equivalence | None = None,
) -> None:
    """Both asks compared by their canonical bytes, the first ask's computed once by the caller;
    answers that differ only in signatures equivalent to the card's are the same answer."""
    one, one_bytes = first
    if one.kind == "malformed" and two.kind == "malformed":
        return  # already answer_malformed; raw bytes echo each ask's own id, so they always differ
    two_bytes = None if two.kind == "malformed" else _canonical_bytes(two.payload)
    if _fingerprint(one, exs[0], one_bytes) != _fingerprint(two, exs[1], two_bytes) and not _resigned_only(
        one, two, equivalence
    ):
        a.add(
            "nondeterministic_answer",
            f"two asks of interview/{q} gave different canonical bytes; answers "
            "are lookups and must be identical on every ask (interview extension 4.1)",
            question=q,
        )
