"""The reference agents as data: one table of variants, each a name, a promise and a few switches.

Every demo agent runs the same server code (`explorer.demo.agent`, `explorer.demo.app`); what
makes `drifting` drift or `leaky` leak is a switch on its `Variant`, never a copy of the server.
The table also states what a correct verifier must conclude about each agent
(`expected_verdict`, `expected_codes`), so the tests, the TUI's demo list and the docs all read
one source of truth. `VARIANTS` keeps insertion order, which is the display order.

What the expectations assume: the verifier trusts the fleet's keys (it is given the agent's
`jwks_url` with `--keys`, or `--allow-jku`), fetches the card at the start of every attempt and
asks every question twice, as the procedure in docs/ARCHITECTURE.md does. `expected_codes` lists
the codes that MUST appear in the report's `findings`; every error-severity code the verifier
reports must be among them. `expected_extension_codes` MUST appear in its `extensions` list.

The switches; each defaults to the conformant behaviour (a Variant with only a name, a
description and a verdict is a steady v1.0 agent):

- `layout`: "v1.0" (`supportedInterfaces`) or "v0.3" (`url` + `preferredTransport`).
- `sdk`: card built, signed and served by the official a2a-sdk (`explorer.demo.sdk_agent`).
- `signed` / `forge_signature`: JWS card signature present / present but not verifying.
- `stacks_agree`: a signed card also carries a signature over each official SDK's payload form
  that differs from the served one, so every client stack accepts it (`card.signature.accepted_by`);
  off for `legacy`, kept to show which stacks reject a served-form signature and why.
- `interview` / `interview_required`: the interview entry is declared / declared `required: true`.
- `terms`: the terms extension with two standing proposals is declared.
- `proposal_fault`: one committed proposal is "tampered" (served bytes differ from the committed
  digest), "wrong_key" (signed by a key other than its provider's), "unsigned", or
  "not_standing" (offered to a named party).
- `faults`: answer faults applied after honest projection (see `explorer.demo.faults`).
- `closure`: "standard" refusals, "leaky" (helpful answers instead), or "as_error" (the refusal
  inside a JSON-RPC error).
- `needs_activation` / `echo`: answer only under activation / echo the activated URI.
- `gates_paramless`: with `needs_activation`, also refuse an unactivated call that omits `params`
  (off for `paramless`, which only checks the activation of calls carrying params).
- `churn`: the card and answers change between a verifier's first attempt and its re-run.
- `hostile`: names, descriptions and values full of markup, escapes and huge or deep values.
- `openclasp`: "valid" or "forged" OpenClasp trust extension and public card.
- `reputation`: a reputation extension pointer in the card.
- `huge`: 5,000 skills (`content.huge_skills`), so the card is a catalogue of about 2.9 MB.
- `outage`: the JSON-RPC endpoint is "down" (HTTP 503 with `Retry-After: 3600` to every call,
  longer than any verifier waits) or "throttled" (HTTP 429 with `Retry-After: 1` to every call,
  retried or not); the card is still served. Either is `unreachable`, never `nonconformant`.
- `selectors`: "exact" (a selector is matched against the declared ids, the interview extension,
  section 4 rule 3) or "refused" (every selector gets the standard refusal, even a declared id).
- `unimplemented`: the card declares the interview, but the server implements none of it: every
  `interview/*` call, activated or not, gets JSON-RPC -32601 (method not found) in this HTTP
  status (400: a stack that sends errors with a 4xx). On an `sdk` agent every call goes to the
  SDK's own JSON-RPC route, which answers -32601 in HTTP 200 (so 200 is the one status it takes).
- `guard`: the JSON-RPC endpoint requires authentication ("bearer", "apikey" or "oauth2", see
  `explorer.demo.guard`); the expectations then assume the verifier is given the agent's demo
  credentials (`RunningAgent.credentials`, whose secrets are in `RunningAgent.env`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["conformant", "nonconformant", "churn", "not_offered", "unreachable"]

# Answer faults understood by explorer.demo.faults.
FAULTS: frozenset[str] = frozenset(
    {"drift", "misquote", "fabricate", "extra_member", "alternate_order", "narrow_boundary"}
)


@dataclass(frozen=True)
class Variant:
    """One reference agent: what it is, what a verifier must conclude, and how it behaves."""

    name: str
    description: str
    expected_verdict: Verdict
    expected_codes: frozenset[str] = frozenset()
    expected_extension_codes: frozenset[str] = frozenset()
    signature_form: str | None = "served"  # the payload form a verifier should report, if signed
    layout: Literal["v1.0", "v0.3"] = "v1.0"
    sdk: bool = False
    signed: bool = True
    forge_signature: bool = False
    stacks_agree: bool = True
    interview: bool = True
    interview_required: bool = False
    terms: bool = True
    proposal_fault: Literal["tampered", "wrong_key", "unsigned", "not_standing"] | None = None
    faults: frozenset[str] = field(default_factory=frozenset)
    closure: Literal["standard", "leaky", "as_error"] = "standard"
    needs_activation: bool = True
    gates_paramless: bool = True
    echo: bool = True
    churn: bool = False
    hostile: bool = False
    openclasp: Literal["valid", "forged"] | None = None
    reputation: bool = False
    huge: bool = False
    guard: Literal["bearer", "apikey", "oauth2"] | None = None
    outage: Literal["down", "throttled"] | None = None
    selectors: Literal["exact", "refused"] = "exact"
    unimplemented: int | None = None

    def __post_init__(self) -> None:
        unknown = self.faults - FAULTS
        if unknown:
            raise ValueError(f"variant {self.name}: unknown faults {sorted(unknown)}")
        if self.sdk and self.unimplemented not in (None, 200):
            raise ValueError(f"variant {self.name}: the a2a-sdk answers an unknown method in HTTP 200")


def _v(
    name: str, description: str, verdict: Verdict, codes: tuple[str, ...] = (), **switches: Any
) -> Variant:
    return Variant(name, description, verdict, frozenset(codes), **switches)


# What a verifier reports of an agent that declares the interview and implements none of it: the
# root cause, and the findings it explains (each marked with it).
_UNIMPLEMENTED = (
    "interview_not_implemented",
    "method_error",
    "closure_method_not_refused",
    "closure_selector_not_refused",
)

_TABLE: tuple[Variant, ...] = (
    _v("steady", "v1.0 card, ES256, terms with two proposals, everything consistent", "conformant"),
    _v(
        "legacy",
        "v0.3 card, consistent; the official SDKs reject its signature",
        "conformant",
        layout="v0.3",
        stacks_agree=False,
    ),
    _v(
        "sdk-built",
        "built on the official a2a-sdk server and signer; interview methods in front of its JSON-RPC route",
        "conformant",
        sdk=True,
        signature_form="sdk-normalized",
    ),
    _v(
        "unsigned",
        "consistent answers, card without signatures",
        "conformant",
        ("card_unsigned",),
        signed=False,
        signature_form=None,
    ),
    _v(
        "no-terms",
        "no terms extension; terms answered declared: false with no projections",
        "conformant",
        ("terms_not_declared",),
        terms=False,
    ),
    _v(
        "drifting",
        "one usage projection and one terms projection differ from their members",
        "nonconformant",
        ("projection_mismatch",),
        faults=frozenset({"drift"}),
    ),
    _v(
        "misquoting",
        "a projection points at a member that does not exist",
        "nonconformant",
        ("pointer_unresolved",),
        faults=frozenset({"misquote"}),
    ),
    _v(
        "fabricating",
        "terms cite a proposal the card never committed to",
        "nonconformant",
        ("proposal_not_committed",),
        faults=frozenset({"fabricate"}),
    ),
    _v(
        "chatty",
        "answers carry an extra free-text member",
        "nonconformant",
        ("answer_extra_member",),
        faults=frozenset({"extra_member"}),
    ),
    _v(
        "leaky",
        "an undefined method gets a helpful answer; an unmatched selector gets the full usage",
        "nonconformant",
        ("closure_method_not_refused", "closure_selector_not_refused"),
        closure="leaky",
    ),
    _v(
        "forged",
        "card signature does not verify",
        "nonconformant",
        ("card_signature_invalid",),
        forge_signature=True,
        signature_form=None,
    ),
    _v(
        "tampered-terms",
        "a proposal's served bytes differ from the committed digest (re-signed, card not updated)",
        "nonconformant",
        ("proposal_digest_mismatch",),
        proposal_fault="tampered",
    ),
    _v(
        "imposing",
        "the interview entry has required: true",
        "nonconformant",
        ("interview_required_true",),
        interview_required=True,
    ),
    _v(
        "churning",
        "card and answers change once between the first attempt and the re-run",
        "churn",
        ("churn",),
        churn=True,
    ),
    _v(
        "flaky",
        "answers differ between two identical asks (projection order changes every ask)",
        "nonconformant",
        ("nondeterministic_answer",),
        faults=frozenset({"alternate_order"}),
    ),
    _v(
        "silent",
        "card without the interview extension",
        "not_offered",
        ("interview_not_declared",),
        interview=False,
    ),
    _v(
        "hostile",
        "markup, ANSI escapes, control and bidi characters, a 1 MB description, deep "
        "nesting, integers beyond 2^53; answers consistent",
        "conformant",
        ("lossy_number",),
        hostile=True,
    ),
    Variant(
        "openclasp",
        "OpenClasp-published card (signatures: []) with the trust extension, public "
        "card and attestation; interview consistent",
        "conformant",
        frozenset({"card_unsigned"}),
        frozenset({"openclasp_verified"}),
        signature_form=None,
        signed=False,
        openclasp="valid",
    ),
    Variant(
        "openclasp-forged",
        "as openclasp, but the platform attestation does not verify",
        "conformant",
        frozenset({"card_unsigned"}),
        frozenset({"openclasp_attestation_invalid"}),
        signature_form=None,
        signed=False,
        openclasp="forged",
    ),
    Variant(
        "reputation",
        "carries a reputation extension pointer; otherwise steady",
        "conformant",
        frozenset(),
        frozenset({"reputation_declared"}),
        reputation=True,
    ),
    _v(
        "wrong-key",
        "a committed proposal is signed by a key other than its provider's",
        "nonconformant",
        ("proposal_signature_invalid",),
        proposal_fault="wrong_key",
    ),
    _v(
        "unsigned-terms",
        "a committed proposal carries no provider signature",
        "nonconformant",
        ("proposal_unsigned",),
        proposal_fault="unsigned",
    ),
    _v(
        "offered",
        "a committed proposal is offered to a named party, so it is not standing",
        "conformant",
        ("proposal_not_standing",),
        proposal_fault="not_standing",
    ),
    _v(
        "eager",
        "answers interview calls even without the activation header",
        "nonconformant",
        ("unactivated_call_answered",),
        needs_activation=False,
    ),
    _v(
        "paramless",
        "checks the activation header only on calls that carry params; an unactivated "
        "call without params is answered",
        "nonconformant",
        ("unactivated_call_answered",),
        gates_paramless=False,
    ),
    _v(
        "quiet",
        "consistent, but does not echo the activated URI",
        "conformant",
        ("activation_not_echoed",),
        echo=False,
    ),
    _v(
        "refusing-by-error",
        "delivers the standard refusal inside a JSON-RPC error",
        "conformant",
        ("refusal_as_error",),
        closure="as_error",
    ),
    _v(
        "narrow",
        "the refusals answer leaves one declared skill out of the boundary",
        "nonconformant",
        ("refusals_boundary_mismatch",),
        faults=frozenset({"narrow_boundary"}),
    ),
    _v(
        "huge",
        "5,000 skills with descriptions and modes (a 2.9 MB signed card), two proposals; answers consistent",
        "conformant",
        huge=True,
    ),
    _v(
        "guarded-bearer",
        "answers interview calls only with its bearer token (HTTP bearer scheme); honest once admitted",
        "conformant",
        guard="bearer",
    ),
    _v(
        "guarded-apikey",
        "v0.3 card; answers only with its API key in X-Api-Key; honest once admitted",
        "conformant",
        layout="v0.3",
        guard="apikey",
    ),
    _v(
        "guarded-oauth2",
        "answers only with an OAuth 2.0 access token from its own token endpoint "
        "(client credentials, scope interview:read, short-lived tokens); honest once admitted",
        "conformant",
        guard="oauth2",
    ),
    _v(
        "down",
        "serves its card, but answers every interview call HTTP 503 (down for maintenance, "
        "Retry-After an hour): the questions cannot be put",
        "unreachable",
        ("http_status",),
        outage="down",
    ),
    _v(
        "throttled",
        "serves its card, but answers every interview call HTTP 429 with Retry-After: 1, the retry too",
        "unreachable",
        ("http_status", "rate_limited"),
        outage="throttled",
    ),
    _v(
        "selector-refusing",
        "refuses every skill selector, even one equal to a declared skill id "
        "(only a selector matching no id may be refused)",
        "nonconformant",
        ("selector_refused",),
        selectors="refused",
    ),
    _v(
        "unimplemented",
        "declares the interview but implements none of it: every interview call gets "
        "JSON-RPC -32601 (method not found) inside HTTP 400",
        "nonconformant",
        _UNIMPLEMENTED,
        unimplemented=400,
    ),
    _v(
        "sdk-unimplemented",
        "built on the official a2a-sdk, whose card declares the interview while its "
        "server implements none of it: the SDK answers every interview call -32601 in HTTP 200",
        "nonconformant",
        _UNIMPLEMENTED,
        sdk=True,
        signature_form="sdk-normalized",
        unimplemented=200,
    ),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in _TABLE}
