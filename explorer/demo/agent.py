"""One reference agent's behaviour, independent of HTTP: the interview endpoint as a function.

`Agent.handle_rpc(body, client=..., activated=...)` takes the raw request body and returns a
`Reply` (status, body bytes, headers); `Agent.card_fetched()` is called for every card GET. The
web layer (`explorer.demo.app`, or the a2a-sdk front in `explorer.demo.sdk_agent`) only moves
bytes and headers in and out, so both serve identical interview behaviour.

The order of checks is the security argument of the interview extension, sections 6 and 10, in code:

1. rate limit per client (429 + Retry-After) before anything is parsed;
2. strict JSON-RPC framing (-32700, -32600; notifications get 204 and no body);
3. without activation, every interview method is a method that does not exist (-32601);
4. under activation, the five methods are answered and everything else gets the standard refusal;
5. params are validated by exact key and type (-32602), and the `skill` selector is only ever
   compared byte for byte with declared ids: a miss gets the standard refusal.

Answers are computed once per declaration state and kept as serialised bytes (`_answer_bytes`),
so answering is a dict lookup: the cache key is (state, question, matched skill index), never
anything the client wrote.

Two variants carry state across calls, and both are deterministic:

- churning: the agent flips between two declaration states on the first interview call after a
  card fetch, when that card fetch followed a round of calls with no flip (or is the very first).
  A verifier fetching the card (state A) and then asking sees answers from state B: a conflict.
  Its re-run fetches the card (B), and since a flip happened since the previous fetch nothing is
  armed, so B answers: consistent, i.e. churn. Extra card fetches with no calls in between change
  nothing, so every fresh verifier run sees exactly one change.
- flaky: each question keeps an ask counter; the faulted question answers in the next of its
  forms on every ask (`faults.ask_forms`, a cycle of seventeen), so asks #1 and #2 of one run always
  differ, and so does the answer a verifier keeps from one run to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.core.card import INTERVIEW_URI
from explorer.demo import faults, projection
from explorer.demo.documents import Documents
from explorer.demo.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    RpcError,
    dumps,
    error_body,
    parse_request,
    result_body,
)
from explorer.demo.ratelimit import RateLimiter
from explorer.demo.variants import Variant

PREFIX = "interview/"
METHODS: dict[str, str] = {PREFIX + q: q for q in projection.QUESTIONS}
OUTAGE_RETRY = 3600  # seconds a down agent asks to be left alone: longer than any verifier waits
LEAKY_HINT = {
    "hint": "That is not one of my methods, but happy to help: try interview/usage or message/send.",
    "methods": sorted(METHODS),
}


@dataclass(frozen=True)
class Reply:
    """What the web layer sends back: an HTTP status, the body bytes, extra headers."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class Agent:
    """The interview endpoint of one reference agent, over one or two declaration states."""

    def __init__(self, variant: Variant, states: Sequence[Documents], limiter: RateLimiter) -> None:
        if not states:
            raise ValueError("an agent needs at least one declaration state")
        self.variant = variant
        self.states = tuple(states)
        self.limiter = limiter
        self.generation = 0
        self.calls = 0  # calls of the five methods that got past validation, for tests and the TUI
        self._cache: dict[tuple[int, str, int | None], tuple[bytes, ...]] = {}
        self._asks: dict[str, int] = {}
        self._armed = True
        self._flipped_since_fetch = False
        self._calls_since_fetch = 0

    @property
    def documents(self) -> Documents:
        return self.states[self.generation]

    # --- card fetches and the churn trigger ------------------------------------------------------

    def card_fetched(self) -> bytes:
        """The card bytes to serve now; also advances the churning agent's trigger."""
        if len(self.states) > 1 and self._calls_since_fetch > 0:
            self._armed = not self._flipped_since_fetch
            self._flipped_since_fetch = False
            self._calls_since_fetch = 0
        return self.documents.card_bytes

    def _interview_called(self) -> None:
        self.calls += 1
        if len(self.states) > 1:
            if self._armed:
                self.generation = (self.generation + 1) % len(self.states)
                self._armed = False
                self._flipped_since_fetch = True
            self._calls_since_fetch += 1

    # --- JSON-RPC --------------------------------------------------------------------------------

    def echo_headers(self) -> dict[str, str]:
        if not self.variant.echo:
            return {}
        headers = {"A2A-Extensions": INTERVIEW_URI}
        if self.variant.layout == "v0.3":
            headers["X-A2A-Extensions"] = INTERVIEW_URI
        return headers

    def handle_rpc(self, body: bytes, *, client: str, activated: bool) -> Reply:
        """Answer one JSON-RPC request body. `activated`: the interview URI was in the header."""
        outage = self._outage()
        if outage is not None:
            return outage
        wait = self.limiter.check(client)
        if wait is not None:
            message = f"Too many interview calls from this client; retry after {wait} s"
            return Reply(429, error_body(None, SERVER_ERROR, message), {"Retry-After": str(wait)})
        activated = activated and self.variant.interview
        headers = self.echo_headers() if activated else {}
        try:
            request = parse_request(body)
        except RpcError as exc:
            return Reply(200, error_body(exc.request_id, exc.code, exc.message), headers)
        if request.is_notification:
            return Reply(204, b"", headers)
        unimplemented = self.variant.unimplemented
        if unimplemented is not None and request.method.startswith(PREFIX):  # declared, never built
            return Reply(unimplemented, error_body(request.request_id, METHOD_NOT_FOUND, "Method not found"))
        try:
            result = self._dispatch(request.method, request.params, activated)
        except RpcError as exc:
            return Reply(200, error_body(request.request_id, exc.code, exc.message), headers)
        if isinstance(result, _Refusal):
            if self.variant.closure == "as_error":
                body_bytes = error_body(
                    request.request_id, SERVER_ERROR, "out_of_scope", result.refusal, with_data=True
                )
                return Reply(200, body_bytes, headers)
            result = dumps(result.refusal)
        return Reply(200, result_body(request.request_id, result), headers)

    def _outage(self) -> Reply | None:
        """The answer of an agent that is down or throttling every call, before anything is read."""
        if self.variant.outage == "down":
            message = "The interview is down for maintenance; retry later"
            return Reply(503, error_body(None, SERVER_ERROR, message), {"Retry-After": str(OUTAGE_RETRY)})
        if self.variant.outage == "throttled":
            message = "Too many interview calls; retry after 1 s"
            return Reply(429, error_body(None, SERVER_ERROR, message), {"Retry-After": "1"})
        return None

    def _dispatch(self, method: str, params: Any, activated: bool) -> bytes | _Refusal:
        question = METHODS.get(method)
        if not self.variant.interview:
            raise RpcError(METHOD_NOT_FOUND, "Method not found")
        if not activated and (question is None or self._gated(params)):
            raise RpcError(METHOD_NOT_FOUND, "Method not found")
        if question is None:
            if self.variant.closure == "leaky":
                return dumps(LEAKY_HINT)
            return self._refusal()
        selector = _selector(method, question, params)
        self._interview_called()
        skill: int | None = None
        if selector is not None:
            skill = projection.skill_index(self.documents.card, selector)
            if self.variant.selectors == "refused":
                return self._refusal()
            if skill is None:
                if self.variant.closure == "leaky":
                    return self._answer_bytes("usage", None)
                return self._refusal()
        return self._answer_bytes(question, skill)

    def _gated(self, params: Any) -> bool:
        """Whether an unactivated call with these params is refused (`paramless` misses one form)."""
        if not self.variant.needs_activation:
            return False
        return params is not None or self.variant.gates_paramless

    def _refusal(self) -> _Refusal:
        return _Refusal(projection.standard_refusal(self.documents.card))

    # --- answers, computed once per state --------------------------------------------------------

    def prepare(self) -> None:
        """Compute every state's answers now (without a selector), so the first asks are lookups.

        The fleet calls it while building a large agent in the background; otherwise answers are
        computed on first ask.
        """
        for generation in range(len(self.states)):
            for question in projection.QUESTIONS:
                self._forms(generation, question, None)

    def _forms(self, generation: int, question: str, skill: int | None) -> tuple[bytes, ...]:
        key = (generation, question, skill)
        if key not in self._cache:
            docs = self.states[generation]
            honest = projection.answer(question, docs.card, docs.committed, skill)
            answer = faults.apply(self.variant.faults, question, honest, docs.uncommitted)
            forms = faults.ask_forms(self.variant.faults, question, answer) or [answer]
            self._cache[key] = tuple(dumps(form) for form in forms)
        return self._cache[key]

    def _answer_bytes(self, question: str, skill: int | None) -> bytes:
        forms = self._forms(self.generation, question, skill)
        if len(forms) == 1:
            return forms[0]
        asks = self._asks.get(question, 0)
        self._asks[question] = asks + 1
        return forms[asks % len(forms)]


@dataclass(frozen=True)
class _Refusal:
    refusal: dict[str, Any]


def _selector(method: str, question: str, params: Any) -> str | None:
    """The `skill` selector of a well-formed params object, or None; RpcError(-32602) otherwise."""
    if params is None:
        return None
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {method} takes its params by name, as an object")
    allowed = {"skill"} if question in projection.SELECTABLE else set()
    if set(params) - allowed:
        takes = "only the optional parameter 'skill'" if allowed else "no parameters"
        raise RpcError(INVALID_PARAMS, f"Invalid params: unknown parameter; {method} takes {takes}")
    skill = params.get("skill")
    if "skill" in params and not isinstance(skill, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: skill must be a string (an exact skill id)")
    return skill
